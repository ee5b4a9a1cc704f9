"""How many malloc arenas a node process may have: glibc's default lets its resident memory creep for minutes.

glibc gives each thread that allocates an arena of its own, up to 8 per CPU. A node process has some 25 threads
(the middleware's, the executor's, the control loop), so it ends up with 16 arenas on a 2-CPU machine, each
keeping the pages its freed blocks leave behind. Under the steady load of bench/soak.py the controller manager's
RSS then kept rising after the warm-up by ~19-21 kB/min; with two arenas by ~6-9 kB/min, in steps of a few pages
(doc/benchmarks.md has the runs), and ended 0.8-0.9 MB smaller.

:func:`cap_malloc_arenas` sets the cap with ``mallopt(M_ARENA_MAX, n)`` (through ctypes, no new dependency); the
node scripts call it first thing (:func:`robot_core.ros.node_main.guard_start_up`), before any thread exists,
so every thread shares the capped arenas. A user's own choice wins: ``MALLOC_ARENA_MAX`` or a
``glibc.malloc.arena_max`` in ``GLIBC_TUNABLES`` in the environment leaves glibc's setting alone
(``MALLOC_ARENA_MAX=0`` gives glibc's default back). On a C library other than glibc (musl, macOS) nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Mapping

DEFAULT_ARENA_MAX = 2  # malloc arenas of a node process (the main one and one more shared by all threads)
M_ARENA_MAX = -8  # glibc's <malloc.h> parameter number for mallopt

# Outcomes of cap_malloc_arenas
CAPPED = "capped"
USER_SETTING = "left to the environment"
NOT_GLIBC = "not glibc"


def user_setting(environ: Mapping[str, str]) -> str | None:
    """The user's own arena setting in ``environ`` (as ``NAME=value``), or None when there is none."""
    if "MALLOC_ARENA_MAX" in environ:
        return f"MALLOC_ARENA_MAX={environ['MALLOC_ARENA_MAX']}"
    for item in environ.get("GLIBC_TUNABLES", "").split(":"):
        if item.startswith("glibc.malloc.arena_max="):
            return item
    return None


def glibc() -> ctypes.CDLL | None:
    """This process's C library when it is glibc (it has gnu_get_libc_version and mallopt), else None."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):
        return None
    return libc


def cap_malloc_arenas(limit: int = DEFAULT_ARENA_MAX, environ: Mapping[str, str] | None = None) -> str:
    """Cap this process's malloc arenas at ``limit`` unless the environment already chose; returns the outcome
    (:data:`CAPPED`, :data:`USER_SETTING` or :data:`NOT_GLIBC`).

    Arenas made before the call stay: call it before the process starts threads."""
    if limit < 1:
        raise ValueError(f"malloc arena limit must be at least 1, got {limit}")
    if user_setting(os.environ if environ is None else environ) is not None:
        return USER_SETTING
    libc = glibc()
    if libc is None:
        return NOT_GLIBC
    libc.mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    libc.mallopt.restype = ctypes.c_int
    if libc.mallopt(M_ARENA_MAX, limit) != 1:  # glibc returns 1 on success
        raise OSError(f"mallopt(M_ARENA_MAX, {limit}) refused by glibc")
    return CAPPED
