"""The var table in shared memory: what the coupler publishes to instance processes and what they send back.

Two kinds of block, each a :class:`~robot_core.rbc.shared_vector.SharedVector` (a seqlock, so nobody reads a
half-written vector), each with exactly one writer:

Blocks are created (and unlinked) by the coupler; an instance process attaches with ``untrack`` so its own
resource tracker does not unlink them when it exits.

* **state** (written by the coupler once per cycle, read by every instance process): ``[cycle, now, values of
  every var in VarTable.entries() order..., stale flags (1.0 / 0.0) of the same vars...]``. An instance process
  copies it into its own VarTable, built from the same URDF, so reachers run on the very code they run on
  in-process.
* **outputs** (one per instance process, written by it once per step, read by the coupler): ``[beat, weight,
  one rate per cmd var (NaN = no output)..., shared outputs...]``. ``beat`` counts steps (0 = not ready yet).
  Rates are what a reacher computes, joint velocities or torques: the coupler, not the process, turns a rate
  into a position increment with its own cycle time, so a process that is one cycle late still moves the
  robot at the speed it asked for. The shared outputs are an extender's declared results
  (``RbcInstance.SHARED_OUTPUTS``, e.g. TouchContact's ``wrench``), readable by every other instance: the
  coupler names the blocks in a process's start spec and announces later ones over its goal channel; an
  in-process extender gets such a block too, filled by the coupler, once processes exist.
ROS-free.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from robot_core.rbc.shared_vector import SharedVector, TornReadError
from robot_core.rbc.var_table import VarEntry, VarTable

STATE_HEADER = 2  # cycle, now
OUTPUT_HEADER = 2  # beat, weight
SHARED_READ_WAIT = 0.002  # s a reader of shared outputs waits for a writer caught mid-write (then: last copy)


def shared_output_layout(outputs: Mapping[str, int]) -> dict[str, tuple[int, int]]:
    """Declared shared outputs (name -> length) as name -> (offset after the rates, length)."""
    layout, offset = {}, 0
    for key, n in outputs.items():
        layout[key] = (offset, int(n))
        offset += int(n)
    return layout


class SharedState:
    """The state block: the coupler writes it (``publish``), instance processes read it (``load``)."""

    def __init__(self, table: VarTable, name: str | None = None, create: bool = True, untrack: bool = False):
        self.entries: list[VarEntry] = table.entries()
        n = len(self.entries)
        self.vector = SharedVector(STATE_HEADER + 2 * n, name=name, create=create, untrack=untrack)
        self._buf = np.empty(STATE_HEADER + 2 * n)
        self._cycle = 0

    @property
    def name(self) -> str:
        return self.vector.name

    def publish(self, now: float) -> None:
        n = len(self.entries)
        buf = self._buf
        self._cycle += 1
        buf[0] = self._cycle
        buf[1] = now
        buf[STATE_HEADER:STATE_HEADER + n] = [e.value for e in self.entries]
        buf[STATE_HEADER + n:] = [1.0 if e.stale else 0.0 for e in self.entries]
        self.vector.write(buf)

    def load(self) -> tuple[int, float]:
        """Copy the latest published state into this side's table entries; returns (cycle, coupler time)."""
        buf = self.vector.read(self._buf)
        n = len(self.entries)
        values, stale = buf[STATE_HEADER:STATE_HEADER + n].tolist(), buf[STATE_HEADER + n:].tolist()
        for e, v, s in zip(self.entries, values, stale, strict=True):
            e.value = v
            e.stale = s != 0.0
        return int(buf[0]), float(buf[1])

    def close(self) -> None:
        self.vector.close()


class SharedOutputs:
    """One instance process's outputs block: written by the process (``write``), read by the coupler."""

    def __init__(self, cmd_keys: list[tuple[str, str]], shared: Mapping[str, int], name: str | None = None,
                 create: bool = True, untrack: bool = False):
        self.cmd_keys = list(cmd_keys)
        self.index = {k: i for i, k in enumerate(self.cmd_keys)}
        self.layout = shared_output_layout(shared)
        self.n_shared = sum(n for _, n in self.layout.values())
        self.size = OUTPUT_HEADER + len(self.cmd_keys) + self.n_shared
        self.vector = SharedVector(self.size, name=name, create=create, untrack=untrack)
        if create:
            buf = np.full(self.size, math.nan)
            buf[0], buf[1] = 0.0, 0.0
            self.vector.write(buf)
        self._buf = np.empty(self.size)
        self._beat = 0
        self._last_shared: np.ndarray | None = None  # the last consistent copy shared() read

    @property
    def name(self) -> str:
        return self.vector.name

    def write(self, weight: float, commands: Mapping[tuple[str, str], float], derived: Mapping[str, Any]) -> None:
        """One step's outputs; commands not in the table's cmd vars raise KeyError naming them."""
        buf = self._buf
        self._beat += 1
        buf[:] = math.nan
        buf[0], buf[1] = self._beat, weight
        for key, v in commands.items():
            i = self.index.get(key)
            if i is None:
                raise KeyError(f"joint '{key[0]}', var '{key[1]}' is not a cmd var of the coupler")
            buf[OUTPUT_HEADER + i] = v
        base = OUTPUT_HEADER + len(self.cmd_keys)
        for key, (off, n) in self.layout.items():
            if key in derived:
                value = np.asarray(derived[key], dtype=float).ravel()
                if value.shape == (n,):
                    buf[base + off:base + off + n] = value
        self.vector.write(buf)

    def read(self, timeout: float = 1.0) -> tuple[int, float, np.ndarray]:
        """(beat, weight, rates); the rates array is reused by the next read. TornReadError after ``timeout`` s
        of the writer caught mid-write."""
        buf = self.vector.read(self._buf, timeout)
        return int(buf[0]), float(buf[1]), buf[OUTPUT_HEADER:OUTPUT_HEADER + len(self.cmd_keys)]

    def shared(self, key: str, timeout: float = SHARED_READ_WAIT) -> np.ndarray:
        """A copy of one shared output (NaN until the writer produced it); KeyError naming the declared ones.

        Never stalls its reader (a coupler cycle, a reacher's step): a writer caught mid-write for ``timeout`` s
        (preempted, stopped or killed there) leaves the reader with the last consistent copy this block gave it
        (NaN before the first one), instead of waiting for the writer."""
        if key not in self.layout:
            raise KeyError(f"no shared output '{key}' (declared: {', '.join(self.layout) or 'none'})")
        off, n = self.layout[key]
        base = OUTPUT_HEADER + len(self.cmd_keys) + off
        try:
            self._last_shared = self.vector.read(np.empty(self.size), timeout)
        except TornReadError:
            if self._last_shared is None:
                return np.full(n, math.nan)
        assert self._last_shared is not None
        return self._last_shared[base:base + n].copy()

    def close(self) -> None:
        self.vector.close()


def cmd_keys(table: VarTable) -> list[tuple[str, str]]:
    """The cmd vars in the order both sides use for the rates."""
    return [e.key for e in table.entries() if e.kind == "cmd"]
