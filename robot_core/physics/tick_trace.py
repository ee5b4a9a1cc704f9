"""Where a command's time goes inside the simulator node: wall-clock stamps along its path, for benchmarks only.

The round-trip benchmark (``bench/control_loop.py --round-trip-only``) needs to split "command published ->
reacting state received" into the DDS hops, the wait for the next paced step, the step and our own handling.
The simulator node records, per command message, when DDS received it, when the simulation thread's tick began
(before it takes the queued commands), when the message had been taken and when it was decoded, when the
applying began, when the step began (commands applied) and ended, and when the state of that step had been
published (the states go out first in a tick, before /clock and /tf).

Off unless the environment variable :data:`ENV_VAR` names a file: then the node keeps the stamps of the last
:data:`CAPACITY` commands and writes them there (JSON) when it shuts down. The stamps are ``time.perf_counter``,
which on Linux is ``CLOCK_MONOTONIC``, the same clock in every process, so the benchmark can subtract its own
publish time from the node's receive time. When off the node does not create a trace and pays nothing per step
beyond one ``is None`` test per tick and per command message.
"""

from __future__ import annotations

import json
import os
import time
from collections import deque
from pathlib import Path

ENV_VAR = "ROBOT_CORE_TICK_TRACE"
CAPACITY = 100_000
FIELDS = ("arrived", "began", "received", "parsed", "tick", "stepping", "stepped", "published")


class TickTrace:
    """Stamps of command messages through the simulator: DDS arrival, tick begun, taken, parse done, applying,
    step start and end, state published.

    ``received``/``parsed`` come from the executor thread, the rest from the simulation thread; the hand-over is
    a deque of pending records (append and popleft are atomic), so no lock is taken."""

    def __init__(self, path: str | Path, capacity: int = CAPACITY, clock=time.perf_counter):
        self.path = Path(path)
        self.clock = clock
        self._pending: deque[list[float]] = deque()
        self._applied: list[list[float]] = []  # applied in the current tick, waiting for its step and publish
        self._began = float("nan")  # the current tick's start
        self._states_out = float("nan")  # when the current tick's joint states had been published
        self.records: deque[list[float]] = deque(maxlen=capacity)

    @classmethod
    def from_environment(cls) -> TickTrace | None:
        """A trace writing to ``$ROBOT_CORE_TICK_TRACE``, or None (the normal case) when it is unset or empty."""
        path = os.environ.get(ENV_VAR, "")
        return cls(path) if path else None

    def began(self) -> None:
        """A tick begins (before it takes commands): the end of the wait for the step."""
        self._began = self.clock()
        self._states_out = float("nan")

    def received(self) -> float:
        """The command callback started; returns the stamp to hand to :meth:`parsed`."""
        return self.clock()

    def parsed(self, received: float, arrived: float = float("nan")) -> None:
        """The message was decoded and queued for the simulation thread; ``arrived``: when DDS had received it
        (NaN: unknown)."""
        self._pending.append([arrived, self._began, received, self.clock()] + [float("nan")] * 4)

    def tick(self) -> None:
        """The simulation thread starts a tick that applies every command queued so far."""
        now = self.clock()
        while self._pending:
            rec = self._pending.popleft()
            rec[4] = now
            self._applied.append(rec)

    def stepping(self) -> None:
        """The commands are applied; the step begins."""
        now = self.clock()
        for rec in self._applied:
            rec[5] = now

    def stepped(self) -> None:
        """The step that used the applied commands has ended."""
        now = self.clock()
        for rec in self._applied:
            rec[6] = now

    def states_published(self) -> None:
        """The joint states of this tick's step are out (the stamp the round trip's hop out starts from)."""
        self._states_out = self.clock()

    def published(self) -> None:
        """End of the tick: its commands' records are complete (published NaN: no states in this tick)."""
        for rec in self._applied:
            rec[7] = self._states_out
            self.records.append(rec)
        self._applied = []

    def dropped(self) -> None:
        """The commands of this tick were thrown away (a divergence reset)."""
        self._applied = []

    def write(self) -> None:
        """Write the records as JSON: {"fields": [...], "records": [[...], ...]} (NaN: did not happen)."""
        data = {"fields": list(FIELDS), "records": [[None if v != v else v for v in r] for r in self.records]}
        self.path.write_text(json.dumps(data))


def read_trace(path: str | Path) -> list[dict[str, float | None]]:
    """The records :meth:`TickTrace.write` wrote, one dict per command (None: that stage did not happen)."""
    data = json.loads(Path(path).read_text())
    return [dict(zip(data["fields"], r, strict=True)) for r in data["records"]]
