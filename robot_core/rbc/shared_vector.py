"""A float64 vector in shared memory that one process writes and others read whole, never torn (a seqlock).

The first brick of reachers as processes (issue 19): the var table's values, and each reacher's outputs, cross
process boundaries through blocks like this one. Layout: an 8-byte sequence counter, then the values. The
writer makes the counter odd, writes, makes it even again; a reader copies the values between two reads of the
counter and retries when the counter was odd or changed, so it never returns a half-written vector and never
blocks the writer. One writer per vector. Stores are ordered on x86 (total store order), which this relies on.
ROS-free; numpy views on ``multiprocessing.shared_memory``.
"""

from __future__ import annotations

import time
from multiprocessing import shared_memory

import numpy as np

HEADER = 8  # bytes of the sequence counter


class TornReadError(RuntimeError):
    """A reader gave up: the writer kept writing through every attempt."""


class SharedVector:
    """``n`` float64 values in a shared-memory block named ``name`` (created when ``create``)."""

    def __init__(self, n: int, name: str | None = None, create: bool = True, untrack: bool = False):
        """``untrack``: a process that only attaches (``create`` False) and was not started by multiprocessing
        tells its own resource tracker to leave the block alone; otherwise that tracker would unlink the
        creator's block when this process exits."""
        if n < 0:
            raise ValueError(f"a shared vector needs n >= 0 values, got {n}")
        self.n = int(n)
        size = HEADER + 8 * max(self.n, 1)
        self._shm = shared_memory.SharedMemory(name=name, create=create, size=size if create else 0)
        if self._shm.size < HEADER + 8 * self.n:
            raise ValueError(f"shared block '{self._shm.name}' holds {self._shm.size} bytes, too small for {n} values")
        self._owner = create
        if untrack and not create:
            from multiprocessing import resource_tracker

            resource_tracker.unregister(self._shm._name, "shared_memory")  # type: ignore[attr-defined]
        self._seq = np.ndarray((1,), dtype=np.uint64, buffer=self._shm.buf, offset=0)
        self._data = np.ndarray((self.n,), dtype=np.float64, buffer=self._shm.buf, offset=HEADER)
        if create:
            self._seq[0] = 0
            self._data[:] = np.nan

    @property
    def name(self) -> str:
        return self._shm.name

    @property
    def sequence(self) -> int:
        """Even: number of completed writes times two; odd: a write is under way."""
        return int(self._seq[0])

    def write(self, values: np.ndarray | list[float]) -> None:
        v = np.asarray(values, dtype=np.float64)
        if v.shape != (self.n,):
            raise ValueError(f"shared vector '{self.name}' holds {self.n} values, got shape {v.shape}")
        self._seq[0] += 1  # odd: readers retry
        self._data[:] = v
        self._seq[0] += 1

    def read(self, out: np.ndarray | None = None, timeout: float = 1.0) -> np.ndarray:
        """A consistent copy of the values (into ``out`` when given). A writer caught mid-write (it may have been
        preempted there) gets the CPU offered back; TornReadError after ``timeout`` s without a consistent copy."""
        buf = np.empty(self.n) if out is None else out
        deadline = time.monotonic() + timeout
        while True:
            before = self._seq[0]
            if not before & 1:
                buf[:] = self._data
                if self._seq[0] == before:
                    return buf
            if time.monotonic() > deadline:
                raise TornReadError(f"shared vector '{self.name}': no consistent read within {timeout:g} s")
            time.sleep(0)

    def close(self) -> None:
        """Detach; the creator also frees the block."""
        del self._seq, self._data
        self._shm.close()
        if self._owner:
            self._shm.unlink()
