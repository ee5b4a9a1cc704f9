"""The middleware-deadlock probe reads a real kernel state: a thread named like Fast DDS's, blocked in glibc's
``pthread_mutex_lock`` on a mutex another thread holds, as the event thread is in eProsima/Fast-DDS#6502."""

from __future__ import annotations

import platform
import threading

import pytest
from blocked_thread import name_this_thread, thread_blocked_on_a_mutex

from robot_core.ros.middleware_deadlock import deadlocked_middleware_threads

pytestmark = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() not in ("x86_64", "aarch64"),
                                reason="reads Linux's /proc/<tid>/syscall")


def found_within(deadline_tries: int = 50) -> list[str]:
    """The probe's answer once the blocked thread has reached its kernel wait (a moment after it named itself)."""
    found: list[str] = []
    for _ in range(deadline_tries):
        found = deadlocked_middleware_threads(confirm_s=0.5)
        if found:
            break
    return found


def test_a_dds_thread_blocked_on_a_held_mutex_is_found_and_a_released_one_is_not():
    with thread_blocked_on_a_mutex("dds.ev.test") as waiter:
        found = found_within()
        assert len(found) == 1 and found[0].startswith("dds.ev.test (tid "), found
    assert not waiter.is_alive()
    assert deadlocked_middleware_threads(confirm_s=0.5) == []


def test_idle_dds_threads_and_other_threads_blocked_on_a_mutex_are_not_deadlocks():
    """An idle middleware thread waits on a condition variable or a semaphore (another futex operation); a thread
    not named ``dds.*`` is not the middleware's."""
    stop = threading.Event()
    idle_named = threading.Event()

    def idle() -> None:
        name_this_thread("dds.udp.test")
        idle_named.set()
        stop.wait(30)

    idler = threading.Thread(target=idle, daemon=True)
    idler.start()
    try:
        with thread_blocked_on_a_mutex("not_middleware"):
            assert idle_named.wait(10)
            assert deadlocked_middleware_threads(confirm_s=0.5) == []
            with thread_blocked_on_a_mutex("dds.shm.test"):  # the probe itself still sees a real one meanwhile
                assert found_within()
    finally:
        stop.set()
        idler.join(10)


def test_a_shutdown_that_finds_the_deadlock_says_so_and_stops_destroying():
    import logging

    from robot_core.ros import middleware_deadlock as md

    log = logging.getLogger("deadlock_probe_test")
    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())  # type: ignore[method-assign]
    log.addHandler(handler)
    try:
        assert not md.middleware_deadlocked(log) and md.may_destroy()
        with thread_blocked_on_a_mutex("dds.ev.test"):
            found_within()
            assert md.middleware_deadlocked(log)
        assert not md.may_destroy()  # found once, it stays found: the participant is not coming back
        assert md.middleware_deadlocked(log)
        assert len(records) == 1 and "dds.ev.test" in records[0] and "Fast-DDS#6502" in records[0], records
    finally:
        md._FOUND.clear()  # this test's stand-in is gone; the pytest process goes on destroying
        log.removeHandler(handler)
