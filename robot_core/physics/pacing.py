"""Running a simulation against the wall clock: pacing, real-time-factor measurement and publish scheduling.

ROS-free so the simulator node's timing logic is unit tested with a fake clock. The node steps the physics in
*ticks*: each tick runs as many steps as fit before the next output is due (:class:`PublishSchedule`), then
waits for the wall-clock deadline of the simulated time it reached (:class:`Pacer`); :class:`PublishPlan` is
the schedule as a table the tick reads. Deadlines are absolute,
so sleep overshoot does not accumulate; when the simulation cannot keep up, the lag is dropped after
``max_lag`` seconds instead of being caught up in a burst. :class:`RtfMeter` measures what was achieved.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Generic, TypeVar

T = TypeVar("T")


class Pacer:
    """Holds simulated time to ``real_time_factor`` x wall time (0: as fast as possible).

    Args:
        real_time_factor: simulated seconds per wall second; 0 (or less) disables pacing.
        max_lag: how far (wall seconds) the simulation may fall behind before the schedule is re-anchored.
        clock: monotonic wall clock.
        sleep: waits for a number of seconds; pass an ``Event.wait`` so a shutdown interrupts long waits.
    """

    def __init__(self, real_time_factor: float = 1.0, max_lag: float = 0.25,
                 clock: Callable[[], float] = time.perf_counter,
                 sleep: Callable[[float], object] = time.sleep):
        if not math.isfinite(real_time_factor):
            raise ValueError(f"real_time_factor must be finite, got {real_time_factor}")
        if not (math.isfinite(max_lag) and max_lag > 0):
            raise ValueError(f"max_lag must be a positive number of seconds, got {max_lag}")
        self._rtf = max(0.0, float(real_time_factor))
        self.max_lag = float(max_lag)
        self._clock = clock
        self._sleep = sleep
        self._wall0: float | None = None
        self._sim0 = 0.0
        self.lag_resets = 0

    @property
    def real_time_factor(self) -> float:
        return self._rtf

    @real_time_factor.setter
    def real_time_factor(self, value: float) -> None:
        if not math.isfinite(value):
            raise ValueError(f"real_time_factor must be finite, got {value}")
        self._rtf = max(0.0, float(value))
        self._wall0 = None  # re-anchor at the next wait

    def rebase(self, sim_time: float) -> None:
        """Anchor the schedule: ``sim_time`` is now (after a pause, a reset or a rate change)."""
        self._wall0 = self._clock()
        self._sim0 = sim_time

    def deadline(self, sim_time: float) -> float | None:
        """Wall time at which ``sim_time`` is due (None when unpaced)."""
        if self._rtf <= 0.0:
            return None
        if self._wall0 is None:
            self.rebase(sim_time)
        assert self._wall0 is not None
        return self._wall0 + (sim_time - self._sim0) / self._rtf

    def remaining(self, sim_time: float) -> float:
        """Wall seconds until ``sim_time`` is due (<= 0: due now; always 0 when unpaced).

        More than ``max_lag`` late re-anchors the schedule, so a stall (a slow service, a loaded machine) is
        not followed by a burst of catch-up steps.
        """
        due = self.deadline(sim_time)
        if due is None:
            return 0.0
        ahead = due - self._clock()
        if -ahead > self.max_lag:
            self.lag_resets += 1
            self.rebase(sim_time)
            return 0.0
        return ahead

    def wait(self, sim_time: float) -> float:
        """Sleep until ``sim_time`` is due; returns the seconds it was ahead (negative: late)."""
        ahead = self.remaining(sim_time)
        if ahead > 0.0:
            self._sleep(ahead)
        return ahead


class RtfMeter:
    """Achieved real-time factor over a sliding wall-clock window."""

    def __init__(self, window: float = 1.0, clock: Callable[[], float] = time.perf_counter):
        if not (math.isfinite(window) and window > 0):
            raise ValueError(f"window must be a positive number of seconds, got {window}")
        self.window = float(window)
        self._clock = clock
        self._samples: deque[tuple[float, float]] = deque()

    def clear(self) -> None:
        """Forget the history (the simulated clock jumped or stood still on purpose)."""
        self._samples.clear()

    def sample(self, sim_time: float) -> None:
        now = self._clock()
        s = self._samples
        # The newest slot is overwritten until it is 1/100 window newer than the one before it, so a 1 kHz
        # loop keeps about a hundred samples.
        if len(s) > 1 and now - s[-2][0] < self.window / 100.0:
            s[-1] = (now, sim_time)
        else:
            s.append((now, sim_time))
        while len(s) > 2 and now - s[1][0] >= self.window:
            s.popleft()

    @property
    def value(self) -> float:
        """Simulated seconds per wall second over the window; 0 without two samples."""
        s = self._samples
        if len(s) < 2:
            return 0.0
        wall = s[-1][0] - s[0][0]
        return (s[-1][1] - s[0][1]) / wall if wall > 0 else 0.0


def steps_per_period(rate_hz: float, timestep: float) -> int:
    """Steps between two outputs at ``rate_hz`` of simulated time (at least 1: every step)."""
    if not (math.isfinite(rate_hz) and rate_hz > 0):
        raise ValueError(f"rate must be a positive number of Hz, got {rate_hz}")
    return max(1, round(1.0 / (rate_hz * timestep)))


class PublishSchedule:
    """Which outputs are due at which step count, each at its own simulated-time rate.

    Outputs are due when ``step_count`` is a multiple of their period (in steps), so they stay aligned with
    simulated time across pauses and single steps, and restart cleanly when a reset sets the count to 0.

    Args:
        timestep: physics step (s).
        rates: output name -> rate in Hz of simulated time; None or <= 0 disables that output.
        max_steps: longest tick, in steps, when nothing is due sooner.
    """

    def __init__(self, timestep: float, rates: Mapping[str, float | None], max_steps: int = 10):
        self.periods: dict[str, int] = {name: steps_per_period(r, timestep)
                                        for name, r in rates.items() if r is not None and r > 0}
        self.max_steps = max(1, int(max_steps))

    def steps_to_next(self, step_count: int) -> int:
        """Steps to run before the next output is due (at least 1)."""
        n = self.max_steps
        for p in self.periods.values():
            n = min(n, p - step_count % p)
        return max(1, n)

    def due(self, step_count: int) -> list[str]:
        return [name for name, p in self.periods.items() if step_count % p == 0]

    def is_due(self, name: str, step_count: int) -> bool:
        p = self.periods.get(name)
        return p is not None and step_count % p == 0


class PublishPlan(Generic[T]):
    """A :class:`PublishSchedule` unrolled over the steps after which its pattern repeats (the least common
    multiple of its periods), for a loop that asks at every tick: per phase of the step count, the steps to the
    next output and the actions due there are two table look-ups instead of a pass over every period (the
    simulator's tick, up to 1 kHz of wall time as fast as possible, pays for each microsecond).

    ``actions``: output name -> what the caller does when it is due, kept in the mapping's order (the simulator
    publishes its joint states first); outputs of the schedule without an action only shape the steps. Patterns
    longer than :attr:`MAX_TABLE` steps (periods with no common multiple nearby) are computed per call instead.
    """

    MAX_TABLE = 10_000

    def __init__(self, schedule: PublishSchedule, actions: Mapping[str, T]):
        self._schedule = schedule
        periods = schedule.periods
        self._actions = [(periods[name], action) for name, action in actions.items() if name in periods]
        self.period = math.lcm(*periods.values()) if periods else 1
        self._steps: list[int] | None = None
        self._due: list[tuple[T, ...]] | None = None
        if self.period <= self.MAX_TABLE:
            self._steps = [schedule.steps_to_next(c) for c in range(self.period)]
            self._due = [self._due_at(c) for c in range(self.period)]

    def _due_at(self, step_count: int) -> tuple[T, ...]:
        return tuple(action for p, action in self._actions if step_count % p == 0)

    def steps_to_next(self, step_count: int) -> int:
        """As :meth:`PublishSchedule.steps_to_next`."""
        if self._steps is not None:
            return self._steps[step_count % self.period]
        return self._schedule.steps_to_next(step_count)

    def due(self, step_count: int) -> tuple[T, ...]:
        """The actions of the outputs due at ``step_count``, in the order they were given (empty: none)."""
        if self._due is not None:
            return self._due[step_count % self.period]
        return self._due_at(step_count)

