"""Overrun and timing accounting for the control loop.

The node measures how long each read/update/write cycle took (wall clock) and
records it here; an overrun is a cycle that took longer than the period, like
ros2_control's "Overrun detected!" warning. Keeps a bounded window of samples
for mean / p99 / max so a long run does not grow memory.
"""

from __future__ import annotations

import math

import numpy as np


class LoopStats:
    def __init__(self, period: float, window: int = 10000):
        if not period > 0.0:
            raise ValueError(f"period must be > 0, got {period}")
        self.period = float(period)
        self._buf = np.zeros(int(window))
        self._n = 0
        self.cycles = 0
        self.overruns = 0
        self.missed_cycles = 0
        self.max_exec = 0.0

    def record(self, exec_time: float) -> bool:
        """Add one cycle's execution time (s); returns True if it overran the period."""
        self._buf[self._n % len(self._buf)] = exec_time
        self._n += 1
        self.cycles += 1
        self.max_exec = max(self.max_exec, exec_time)
        if exec_time > self.period:
            self.overruns += 1
            self.missed_cycles += math.floor(exec_time / self.period)
            return True
        return False

    def _window(self) -> np.ndarray:
        return self._buf[: min(self._n, len(self._buf))]

    @property
    def overrun_ratio(self) -> float:
        return self.overruns / self.cycles if self.cycles else 0.0

    def mean(self) -> float:
        w = self._window()
        return float(w.mean()) if len(w) else 0.0

    def percentile(self, q: float) -> float:
        w = self._window()
        return float(np.percentile(w, q)) if len(w) else 0.0

    def summary(self) -> dict[str, float]:
        return {"cycles": float(self.cycles), "overruns": float(self.overruns), "overrun_ratio": self.overrun_ratio,
                "mean": self.mean(), "p99": self.percentile(99.0), "max": self.max_exec}

    def reset(self) -> None:
        self._n = 0
        self.cycles = self.overruns = self.missed_cycles = 0
        self.max_exec = 0.0
