"""Whether this process's Fast DDS threads are deadlocked, seen from the kernel, so a shutdown can skip the destroy
calls that would block on them for good.

Fast DDS 3.2 (the middleware of the ROS 2 wheels) has a lock-order deadlock, eProsima/Fast-DDS#6502 (open): a
receive thread removing a remote writer (a peer deleted a publisher or left) holds the participant's discovery
(PDP) mutex while it waits for the event thread to finish its timer pass; if that pass reaches the announcement or a
lease-check timer, the event thread waits for the same mutex. Both stay blocked; every later call that unregisters a
timer of that participant (destroying any of its publishers, subscriptions, clients, services, the participant
itself) waits for the event thread too, inside rclpy, holding the interpreter lock. Our test suite met it in two of
five clean-clone runs, always in a teardown right after a peer process exited.

The signature is read from ``/proc/self/task/*/syscall``: a ``dds.*`` thread waiting on a contended mutex (``futex``
with ``FUTEX_WAIT`` and the value 2 that glibc's lock uses; condition-variable and semaphore waits use another
operation) on the same address for a confirmation time. A mutex of Fast DDS is held for micro- to milliseconds; a
thread still waiting on one after a second and a half is not coming back. A false alarm costs a leaked participant.
"""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path
from typing import Any

# futex's syscall number: the syscall file names the call by number
_FUTEX = {"x86_64": 202, "aarch64": 98}.get(platform.machine())
_FUTEX_CMD_MASK = 0x7F  # without FUTEX_PRIVATE_FLAG (128) and FUTEX_CLOCK_REALTIME (256)
_FUTEX_WAIT = 0
_CONTENDED = 2  # glibc's lock word when a waiter sleeps: lll_lock_wait passes it as the expected value
CONFIRM_S = 1.5


def _mutex_waits(task_dir: Path = Path("/proc/self/task")) -> dict[int, tuple[str, str]]:
    """Middleware threads waiting on a contended mutex now: thread id -> (thread name, futex address)."""
    waits: dict[int, tuple[str, str]] = {}
    if _FUTEX is None:
        return waits
    try:
        tasks = list(task_dir.iterdir())
    except OSError:
        return waits
    for task in tasks:
        try:
            name = (task / "comm").read_text().strip()
            if not name.startswith("dds."):
                continue
            fields = (task / "syscall").read_text().split()
        except OSError:  # the thread ended, or this kernel does not show syscalls
            continue
        if len(fields) < 4 or fields[0] != str(_FUTEX):
            continue
        if int(fields[2], 16) & _FUTEX_CMD_MASK == _FUTEX_WAIT and int(fields[3], 16) == _CONTENDED:
            waits[int(task.name)] = (name, fields[1])
    return waits


def deadlocked_middleware_threads(confirm_s: float = CONFIRM_S, period_s: float = 0.1) -> list[str]:
    """Names of the middleware threads that waited on the same mutex throughout ``confirm_s`` (empty at once when
    none waits on a mutex now, the usual case), e.g. ``["dds.ev.0 (tid 10407)"]``."""
    suspects = _mutex_waits()
    deadline = time.monotonic() + confirm_s
    while suspects and time.monotonic() < deadline:
        time.sleep(period_s)
        now = _mutex_waits()
        suspects = {tid: wait for tid, wait in suspects.items() if now.get(tid) == wait}
    return [f"{name} (tid {tid})" for tid, (name, _) in sorted(suspects.items())]


def describe(threads: list[str]) -> str:
    """The log line for a deadlock found at shutdown."""
    return (f"the DDS middleware of process {os.getpid()} is deadlocked ({', '.join(threads)} blocked on a mutex; "
            "Fast DDS issue eProsima/Fast-DDS#6502): leaving its participant undestroyed, as destroying it would "
            "block for good")


_FOUND: list[str] = []  # what middleware_deadlocked found in this process; it stays found


def middleware_deadlocked(log: Any) -> bool:
    """True (and said on ``log``, a logger with ``warning``) when this process must not destroy its ROS entities;
    a node script then leaves with ``os._exit`` as usual (:func:`robot_core.ros.node_main.finish`). Called once
    as a shutdown begins; later destroy calls ask :func:`may_destroy`."""
    if not _FOUND:
        threads = deadlocked_middleware_threads()
        if not threads:
            return False
        _FOUND[:] = threads
        log.warning(describe(threads))
    return True


def may_destroy() -> bool:
    """False once :func:`middleware_deadlocked` found this process's middleware deadlocked."""
    return not _FOUND
