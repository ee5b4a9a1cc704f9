"""A latest-value outbox: the control loop hands over data, a helper thread converts and publishes it.

The update loop must not spend its period building ROS messages, so controllers' outputs (joint states,
controller state, /clock) are parked here, one slot per key, and a background thread publishes them. When
the thread falls behind, older values are overwritten instead of queued: subscribers always get the newest
state, and the loop never blocks (the same trade-off as ros2_control's realtime publishers).

Building messages in Python is expensive (a 1 kHz broadcaster alone can take a whole core), so the thread
keeps to a duty cycle: after a batch that took ``d`` seconds it rests ``d * (1 - duty) / duty``. Publishing
then slows down gracefully under load (newest value still wins) instead of starving the control loop.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any, Protocol

Handler = Callable[[Any], None]


class Gate(Protocol):
    def helper(self) -> contextlib.AbstractContextManager[None]: ...

    def wake_after_cycle(self, event: threading.Event) -> None: ...


class Outbox:
    """Slots keyed by anything hashable; ``post`` is O(1) and never blocks on publishing."""

    def __init__(self, name: str = "outbox", logger: Callable[[str], None] | None = None, gate: Gate | None = None,
                 duty: float = 1.0):
        if not 0.0 < duty <= 1.0:
            raise ValueError(f"duty must be in (0, 1], got {duty}")
        self.gate = gate  # see robot_core.ros.control_loop.CycleGate
        self._wake_after_cycle = getattr(gate, "wake_after_cycle", None)
        self.duty = duty
        self._slots: dict[Hashable, tuple[Handler, Any]] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = False
        self._log = logger or logging.getLogger("robot_core.outbox").error
        self.posted = 0
        self.delivered = 0
        self.overwritten = 0
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def post(self, key: Hashable, handler: Handler, data: Any) -> None:
        """Deliver ``handler(data)`` soon on the outbox thread; replaces an undelivered value under ``key``."""
        with self._lock:
            if key in self._slots:
                self.overwritten += 1
            self._slots[key] = (handler, data)
            self.posted += 1
        if self._wake_after_cycle is not None:
            self._wake_after_cycle(self._wake)  # posted from inside a control cycle: woken when the cycle ends
        else:
            self._wake.set()

    def discard(self, predicate: Callable[[Hashable], bool]) -> None:
        """Drop undelivered values whose key matches (e.g. of a controller being unloaded)."""
        with self._lock:
            for key in [k for k in self._slots if predicate(k)]:
                del self._slots[key]

    def flush(self, timeout: float = 1.0) -> bool:
        """Wait until every posted value was delivered (tests, shutdown)."""
        done = threading.Event()
        self.post(("__flush__", id(done)), lambda _: done.set(), None)
        return done.wait(timeout)

    def _run(self) -> None:
        perf = time.perf_counter
        while True:
            self._wake.wait()
            t0 = perf()
            with self._lock:
                self._wake.clear()
                if self._stop:
                    return
                items = list(self._slots.values())
                self._slots.clear()
            for handler, data in items:
                try:
                    if self.gate is not None:
                        with self.gate.helper():
                            handler(data)
                    else:
                        handler(data)
                except Exception as exc:  # a broken conversion must not stop other publishers
                    self._log(f"publishing failed: {type(exc).__name__}: {exc}")
                self.delivered += 1
            if self.duty < 1.0:
                time.sleep((perf() - t0) * (1.0 - self.duty) / self.duty)

    def close(self, timeout: float = 2.0) -> bool:
        """Stop and join the publisher thread; False if it is still running after ``timeout``."""
        with self._lock:
            self._stop = True
        self._wake.set()
        self._thread.join(timeout)
        return not self._thread.is_alive()
