"""Scheduling of the control loop thread, as ros2_control's ``ros2_control_node`` sets it up.

Upstream runs the update loop in a thread with the ``SCHED_FIFO`` policy at ``thread_priority`` (default 50),
optionally pinned to ``cpu_affinity``, and locks the process's memory (``lock_memory``, default: only on a
real-time kernel). Each step that the operating system refuses (no ``CAP_SYS_NICE`` / rtprio limit, no such
CPU) is reported and the loop runs anyway with normal scheduling, as upstream does.

Why it matters here: with normal scheduling a 1 kHz cycle that wakes up while other threads of the process
(services, publishers, DDS) or other processes are runnable waits in the run queue behind them; a FIFO thread
preempts them at once. It cannot help with the interpreter lock, which the loop still shares with the other
Python threads (robot_core.ros.control_loop.CycleGate keeps those out of a running cycle).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Sequence
from pathlib import Path

from robot_core.control.errors import ControlError

DEFAULT_THREAD_PRIORITY = 50
_MCL_CURRENT, _MCL_FUTURE = 1, 2
PM_QOS_DEVICE = "/dev/cpu_dma_latency"


def has_realtime_kernel() -> bool:
    """A PREEMPT_RT kernel says so in ``/sys/kernel/realtime``."""
    try:
        return Path("/sys/kernel/realtime").read_text().strip() == "1"
    except OSError:
        return False


def lock_memory() -> str | None:
    """``mlockall`` of current and future pages (no page fault stalls the loop); the error text, or None."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    if libc.mlockall(_MCL_CURRENT | _MCL_FUTURE) != 0:
        err = ctypes.get_errno()
        return f"mlockall failed: {os.strerror(err)} (errno {err})"
    return None


def hold_cpu_dma_latency(microseconds: int, device: str = PM_QOS_DEVICE) -> tuple[int | None, str | None]:
    """Ask the kernel to keep every CPU's wake-up latency at most ``microseconds`` (0: idle CPUs poll instead of
    sleeping), as cyclictest does. The request holds while the returned descriptor stays open (close it to drop
    it; the process exiting drops it too). Returns (descriptor, None) or (None, why not).

    Why: a 1 kHz loop sleeps most of each period; a CPU that went to a deep idle state (or a virtual CPU that
    halted and handed its core to the host) wakes late and with cold caches. Measured on a 2-vCPU VM, the same
    paced MuJoCo step took 44 -> 21 us on average and 137 -> 49 us at p99. It costs power (idle CPUs spin), so
    it is opt-in."""
    import struct

    try:
        fd = os.open(device, os.O_WRONLY)
    except OSError as exc:
        return None, f"Unable to request a CPU wake-up latency of {microseconds} us: {device}: {exc.strerror}"
    try:
        os.write(fd, struct.pack("i", int(microseconds)))
    except OSError as exc:
        os.close(fd)
        return None, f"Unable to request a CPU wake-up latency of {microseconds} us: {device}: {exc.strerror}"
    return fd, None


def configure_current_thread(priority: int, cpus: Sequence[int] = ()) -> list[str]:
    """Pin the calling thread to ``cpus`` (if any) and give it SCHED_FIFO at ``priority`` (0 = leave the normal
    policy). Returns what could not be done, one message each; an empty list means all of it took effect."""
    problems: list[str] = []
    if cpus:
        try:
            os.sched_setaffinity(0, {int(c) for c in cpus})
        except (OSError, ValueError, OverflowError) as exc:
            problems.append(f"Unable to set the CPU affinity to {sorted(set(cpus))}: {exc}")
    if priority:
        lo, hi = os.sched_get_priority_min(os.SCHED_FIFO), os.sched_get_priority_max(os.SCHED_FIFO)
        if not lo <= priority <= hi:
            problems.append(f"Could not enable FIFO RT scheduling policy: thread_priority {priority} is outside "
                            f"[{lo}, {hi}]")
        else:
            try:
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
            except OSError as exc:
                problems.append(f"Could not enable FIFO RT scheduling policy: with error number <{exc.errno}>"
                                f"({exc.strerror}). See https://control.ros.org/master/doc/ros2_control/"
                                f"controller_manager/doc/userdoc.html for details on how to enable realtime "
                                f"scheduling.")
    return problems


def cpu_list(value: object, where: str) -> list[int]:
    """``cpu_affinity`` as upstream accepts it: one integer or a list of them; empty / unset = no pinning."""
    if value is None or value == "" or (isinstance(value, (list, tuple)) and not value):
        return []
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in items):
        raise ControlError(f"{where}: cpu_affinity must be a CPU index or a list of them, got {value!r}")
    return [int(c) for c in items]
