"""The controller manager's update loop thread and the three ways it can be paced.

* :class:`WallPacing` -- ``update_rate`` in wall-clock time (a real robot, or a simulator without sim time).
* :class:`SimClockPacing` -- with ``use_sim_time`` the loop follows ``/clock``: a cycle happens whenever
  simulated time passed one period, so the control rate is a rate in *simulated* seconds, and a paused
  simulator pauses control (while services keep answering).
* :class:`LockstepPacing` -- the embedded simulator: the loop itself advances simulated time by exactly one
  period per cycle (the engine steps in ``write``), paced against the wall clock by a real-time factor
  (0 = as fast as possible), and can be paused. Identical inputs give identical runs.

The loop measures each cycle's execution time into :class:`robot_core.control.loop_stats.LoopStats` and
keeps the achieved rate; it knows nothing about ROS.
"""

from __future__ import annotations

import contextlib
import faulthandler
import math
import os
import threading
import time
from collections.abc import Callable, Iterator

from robot_core.control.loop_stats import LoopStats

Tick = tuple[float, float]  # (time, period) handed to read/update/write
STALL_DUMP_ENV = "ROBOT_CORE_STALL_DUMP"
_IDLE: Tick = (math.nan, math.nan)  # SimClockPacing: no cycle due for a while


class CycleGate:
    """Keeps helper threads' Python work (publishing) out of a running control cycle.

    Python runs one thread at a time; a publisher thread that holds the interpreter when a cycle starts makes
    the cycle wait, and CPython hands the interpreter back and forth every switch interval during the cycle.
    Helpers wrap each piece of work in :meth:`helper`; the loop wraps each cycle in :meth:`cycle`. A helper
    never starts work while a cycle runs or waits, so a cycle waits at most for one piece already under way.

    Waking a helper thread *during* a cycle costs the cycle too: the woken thread asks for the interpreter,
    which forces the loop to hand it over at the next switch interval just so the helper can find the gate
    closed. So wake-ups requested while a cycle runs (:meth:`wake_after_cycle`) are delivered when it ends.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cycle_waiting = False
        self.in_cycle = False
        self._wakes: list[threading.Event] = []

    @contextlib.contextmanager
    def cycle(self) -> Iterator[None]:
        self._cycle_waiting = True
        with self._lock:
            self._cycle_waiting = False
            self.in_cycle = True
            try:
                yield
            finally:
                self.in_cycle = False
        wakes, self._wakes = self._wakes, []
        for event in wakes:
            event.set()

    def wake_after_cycle(self, event: threading.Event) -> None:
        """Set ``event`` now, or when the running cycle ends."""
        if self.in_cycle:
            self._wakes.append(event)
            if self.in_cycle:  # still running: the cycle's end will set it
                return
        event.set()

    @contextlib.contextmanager
    def helper(self) -> Iterator[None]:
        while self._cycle_waiting:
            time.sleep(0)  # let the cycle take the gate first
        with self._lock:
            yield


class WallPacing:
    """Absolute deadlines on the monotonic clock; ``now`` supplies the time stamped on data (ROS time)."""

    def __init__(self, rate: float, now: Callable[[], float], max_lag_periods: int = 10):
        self.period = 1.0 / rate
        self.now = now
        self.max_lag = max_lag_periods * self.period
        self.skipped = 0
        self._next: float | None = None
        self._last: float | None = None

    def wait_next(self, stop: threading.Event) -> Tick | None:
        mono = time.monotonic()
        if self._next is None:
            self._next = mono
        else:
            self._next += self.period
            delay = self._next - mono
            if delay > 0.0:
                if stop.wait(delay):
                    return None
            elif -delay > self.max_lag:
                # Far behind (machine stalled): skip the missed cycles instead of running them back to back.
                self.skipped += int(-delay / self.period)
                self._next = mono
        if stop.is_set():
            return None
        t = self.now()
        period = self.period if self._last is None or t <= self._last else t - self._last
        self._last = t
        return t, period


class SimClockPacing:
    """Cycles driven by ``/clock``: feed every clock message to :meth:`on_clock`.

    A backwards jump of the clock (simulator reset, the engine's automatic reset after a divergence, a
    restarted simulator) re-arms the deadline at the new time at once: keeping the old deadline would stop
    control for as long as the simulation had run before the jump.

    ``on_idle`` (optional) is called from the waiting thread every ``idle_period`` wall seconds while no cycle
    is due: a stopped clock (dead or paused simulator) stops the cycles, and whatever must still be judged on
    wall time (staleness of the robot's states) is judged there.
    """

    def __init__(self, rate: float, on_idle: Callable[[], None] | None = None, idle_period: float = 0.02):
        self.period = 1.0 / rate
        self.on_idle = on_idle
        self.idle_period = float(idle_period)
        self._cond = threading.Condition()
        self._sim: float | None = None
        self._last: float | None = None
        self._next = 0.0
        self._jumped = False
        self.jumps = 0  # backwards jumps seen

    @property
    def sim_time(self) -> float | None:
        return self._sim

    def on_clock(self, t: float) -> None:
        with self._cond:
            prev = self._sim
            self._sim = t
            if prev is not None and t < prev:
                self._jumped = True  # remembered even if time passes the old value before the loop looks
            if self._jumped or t >= self._next:
                self._cond.notify_all()

    def wait_next(self, stop: threading.Event) -> Tick | None:
        idle_at = time.monotonic() + self.idle_period
        while True:
            tick = self._wait_due(stop, idle_at)
            if tick is not _IDLE:
                return tick
            self.on_idle()  # type: ignore[misc]  (only _IDLE with an on_idle)
            idle_at = time.monotonic() + self.idle_period

    def _wait_due(self, stop: threading.Event, idle_at: float) -> Tick | None:
        """The next tick, None when stopped, or _IDLE when ``idle_at`` (monotonic) passed with no cycle due."""
        with self._cond:
            while True:
                if stop.is_set():
                    return None
                sim = self._sim
                if sim is not None:
                    if self._jumped or (self._last is not None and sim < self._last):
                        self._jumped = False
                        self.jumps += 1
                        self._last = None
                        self._next = sim  # re-armed at the new time: this cycle runs now
                    if self._last is None or sim >= self._next - 1e-12:
                        break
                wait = 0.1
                if self.on_idle is not None:
                    wait = idle_at - time.monotonic()
                    if wait <= 0.0:
                        return _IDLE
                self._cond.wait(min(wait, 0.1))
            period = self.period if self._last is None else sim - self._last
            self._last = sim
            # next deadline on the grid of periods; if the simulator ran ahead, continue from now
            nxt = self._next + self.period
            self._next = nxt if nxt > sim else sim + self.period
            return sim, period

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()


class LockstepPacing:
    """Simulated time advanced by the loop itself; ``sim_time`` reads the engine's clock."""

    def __init__(self, rate: float, sim_time: Callable[[], float], real_time_factor: float = 1.0,
                 paused: bool = False):
        self.period = 1.0 / rate
        self.sim_time = sim_time
        self.real_time_factor = float(real_time_factor)
        self._cond = threading.Condition()
        self._running = not paused
        self._pending = 0  # cycles requested by step() while paused
        self._unfinished = 0  # cycles handed out and not yet reported done
        self._wall_start: float | None = None
        self._cycles = 0  # cycles paced since _wall_start

    @property
    def paused(self) -> bool:
        return not self._running

    def pause(self) -> None:
        with self._cond:
            self._running = False

    def resume(self) -> None:
        with self._cond:
            self._wall_start = None
            self._running = True
            self._cond.notify_all()

    def step(self, cycles: int, timeout: float = 10.0) -> bool:
        """While paused, run exactly ``cycles`` more cycles; returns when they are done (False on timeout)."""
        with self._cond:
            if self._running:
                return False
            self._pending += int(cycles)
            self._cond.notify_all()
            return self._cond.wait_for(lambda: self._pending == 0 and self._unfinished == 0, timeout)

    def cycle_done(self) -> None:
        with self._cond:
            if self._unfinished:
                self._unfinished -= 1
                self._cond.notify_all()

    def wait_next(self, stop: threading.Event) -> Tick | None:
        with self._cond:
            while not self._running:
                if stop.is_set():
                    return None
                if self._pending > 0:
                    self._pending -= 1
                    self._unfinished += 1
                    return self.sim_time(), self.period
                self._cond.wait(0.05)
        if self.real_time_factor > 0.0:
            # Paced by cycles handed out, not by the engine's clock: a cycle normally advances simulated time by
            # one period, but an inactive simulator does not step, and pacing on its clock would spin the loop.
            mono = time.monotonic()
            if self._wall_start is None:
                self._wall_start, self._cycles = mono, 0
            target = self._wall_start + self._cycles * self.period / self.real_time_factor
            delay = target - mono
            if delay > 0.0:
                if stop.wait(delay):
                    return None
            elif delay < -10 * self.period / self.real_time_factor:
                self._wall_start, self._cycles = mono, 0  # fell behind: do not try to catch up
            self._cycles += 1
        if stop.is_set():
            return None
        return self.sim_time(), self.period


def stall_dump_seconds() -> float:
    """``ROBOT_CORE_STALL_DUMP`` (seconds; unset, 0 or not a number: off): a cycle still running after that long
    prints every thread's Python stack to stderr. A diagnostic for cycles that stall for seconds on a loaded
    machine: where they stand can only be seen while they stand, and faulthandler's own thread prints it even when
    the stalled thread holds the interpreter. Costs about 70 us a cycle, so it is off unless asked for."""
    try:
        seconds = float(os.environ.get(STALL_DUMP_ENV, "0"))
    except ValueError:
        return 0.0
    return seconds if math.isfinite(seconds) and seconds > 0.0 else 0.0


class ControlLoop:
    """A thread calling ``cycle(time, period)`` as paced, recording execution times."""

    def __init__(self, cycle: Callable[[float, float], None], pacing: WallPacing | SimClockPacing | LockstepPacing,
                 rate: float, on_overrun: Callable[[float], None] | None = None, name: str = "control_loop",
                 gate: CycleGate | None = None, on_start: Callable[[], None] | None = None):
        """``on_start`` runs first thing in the loop's thread (scheduling policy, CPU affinity)."""
        self.cycle = cycle
        self.on_start = on_start
        self.gate = gate or CycleGate()
        self.pacing = pacing
        self.rate = float(rate)
        self.stats = LoopStats(1.0 / self.rate)
        self.on_overrun = on_overrun
        self._stop = threading.Event()
        self._wall_start = time.monotonic()
        self._stats_lock = threading.Lock()
        self.last_time = math.nan
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._wall_start = time.monotonic()
        self._thread.start()

    def _run(self) -> None:
        if self.on_start is not None:
            self.on_start()
        perf = time.perf_counter
        done = getattr(self.pacing, "cycle_done", None)
        stall = stall_dump_seconds()
        while True:
            tick = self.pacing.wait_next(self._stop)
            if tick is None:
                return
            t, period = tick
            with self.gate.cycle():
                if stall:
                    try:
                        faulthandler.dump_traceback_later(stall)
                    except (OSError, ValueError, RuntimeError):  # stderr is no file (in-process use)
                        stall = 0.0
                t0 = perf()
                try:
                    self.cycle(t, period)
                finally:
                    if stall:
                        faulthandler.cancel_dump_traceback_later()
                dt = perf() - t0
            self.last_time = t
            if done is not None:
                done()
            with self._stats_lock:
                overran = self.stats.record(dt)
            if overran and self.on_overrun is not None:
                self.on_overrun(dt)

    def statistics(self) -> dict[str, float]:
        """Counters plus mean/p99/max execution time (s) and the achieved rate (cycles per wall second)."""
        with self._stats_lock:
            out = self.stats.summary()
            elapsed = time.monotonic() - self._wall_start
        out["achieved_rate"] = out["cycles"] / elapsed if elapsed > 0 else 0.0
        out["target_rate"] = self.rate
        out["elapsed"] = elapsed
        out["skipped_cycles"] = float(getattr(self.pacing, "skipped", 0))
        return out

    def reset_statistics(self) -> None:
        with self._stats_lock:
            self.stats.reset()
            self._wall_start = time.monotonic()

    def stop(self, timeout: float = 2.0) -> bool:
        """Stop and join the thread; False if it is still running after ``timeout`` (a cycle that hangs)."""
        self._stop.set()
        if isinstance(self.pacing, SimClockPacing):
            self.pacing.wake()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        return not self._thread.is_alive()
