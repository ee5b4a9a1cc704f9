"""A thread named like one of Fast DDS's, blocked in glibc's ``pthread_mutex_lock`` on a mutex held elsewhere: the
kernel-level state of the event thread in eProsima/Fast-DDS#6502, made on purpose (see
robot_core/ros/middleware_deadlock.py)."""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from collections.abc import Iterator
from contextlib import contextmanager

LIBC = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)  # CDLL: calls release the interpreter lock
PR_SET_NAME = 15


def name_this_thread(name: str) -> None:
    """The kernel's name of the calling thread (what ``/proc/<tid>/comm`` shows)."""
    LIBC.prctl(PR_SET_NAME, name.encode(), 0, 0, 0)


@contextmanager
def thread_blocked_on_a_mutex(name: str = "dds.ev.test") -> Iterator[threading.Thread]:
    """While inside: a thread called ``name`` waits on a held mutex. On leaving, the mutex is released and the
    thread ends."""
    mutex = ctypes.create_string_buffer(64)  # zeroed: PTHREAD_MUTEX_INITIALIZER
    assert LIBC.pthread_mutex_lock(mutex) == 0
    named = threading.Event()

    def blocked() -> None:
        name_this_thread(name)
        named.set()
        LIBC.pthread_mutex_lock(mutex)
        LIBC.pthread_mutex_unlock(mutex)

    waiter = threading.Thread(target=blocked, daemon=True)
    waiter.start()
    try:
        assert named.wait(10)
        yield waiter
    finally:
        LIBC.pthread_mutex_unlock(mutex)
        waiter.join(10)
