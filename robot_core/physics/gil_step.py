"""``mj_step`` that keeps Python's interpreter lock, for a control loop that must not hand it to other threads.

MuJoCo's Python binding releases the lock (GIL) for every step so that other threads can run meanwhile. Inside
the controller manager that is the wrong trade: the update loop runs at real-time priority, the other threads
(executor, publishers) are ordinary ones, and whichever of them takes the lock during the 15-30 us step keeps
it until it reaches a switch point -- or until the operating system schedules it again, which can take
milliseconds (a priority inversion). Measured with the embedded 1 kHz benchmark on a 2-vCPU VM: 4-13 overruns
per 10 000 cycles through the binding, 0-3 when the step keeps the lock.

The C function is called through ``ctypes.PyDLL``, which keeps the lock. The binding also turns ``mju_error``
into ``mujoco.FatalError``; called this way an error would end the process instead. For a model that compiled,
the error ``mj_step`` can raise is running out of arena memory, so a step takes this path only while MuJoCo's
own high-water marks stay below :data:`ARENA_LIMIT` of the arena (a robot arm uses kilobytes of megabytes);
past it, and wherever the library cannot be loaded, the binding's ``mj_step`` is used.
"""

from __future__ import annotations

import ctypes
import glob
import os
from collections.abc import Callable
from typing import Any

import mujoco

ARENA_LIMIT = 0.1  # share of the arena the high-water marks may reach before steps go through the binding

_loaded: tuple[Callable[..., None] | None, str] | None = None


def _c_mj_step() -> tuple[Callable[..., None] | None, str]:
    """The library's ``mj_step`` called with the lock held, or None and why not (once per process)."""
    global _loaded
    if _loaded is None:
        _loaded = _load()
    return _loaded


def _load() -> tuple[Callable[..., None] | None, str]:
    here = os.path.dirname(mujoco.__file__)
    candidates = sorted(glob.glob(os.path.join(here, "libmujoco.so*")) +
                        glob.glob(os.path.join(here, "libmujoco*.dylib")))
    if not candidates:
        return None, f"no libmujoco shared library next to {mujoco.__file__}"
    try:
        lib = ctypes.PyDLL(candidates[0])
        lib.mj_version.restype = ctypes.c_int
        if lib.mj_version() != mujoco.mj_version():
            return None, f"{candidates[0]} is MuJoCo {lib.mj_version()}, the binding {mujoco.mj_version()}"
        step = lib.mj_step
    except (OSError, AttributeError) as exc:
        return None, f"{candidates[0]}: {exc}"
    step.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    step.restype = None
    return step, ""


class GilHoldingStep:
    """``step(n)``: ``n`` physics steps of ``model`` / ``data`` with the interpreter lock held when it is safe."""

    def __init__(self, model: Any, data: Any):
        self._model = model
        self._data = data
        self._c_step = _c_mj_step()[0]  # None: the binding steps (the reason is in _c_mj_step()[1])
        self._limit = ARENA_LIMIT * float(data.narena)

    @property
    def holds_lock(self) -> bool:
        """Whether the next step keeps the lock (False: the binding's step, which releases it)."""
        d = self._data
        return self._c_step is not None and d.maxuse_arena + d.maxuse_stack < self._limit

    def __call__(self, n: int) -> None:
        m, d = self._model, self._data
        for k in range(n):
            if not self.holds_lock:
                mujoco.mj_step(m, d, nstep=n - k)
                return
            self._c_step(m._address, d._address)  # the binding's pointers to the C structs (a private attribute)
