"""The harness's NodeProcess.stop: a process that ignores its stop signal is dumped (C-level, SIGUSR2) into its
log before it is killed, so the failure report says where it was held."""

from __future__ import annotations

import signal
import sys

from ros_harness import NodeProcess

STUBBORN = """
import signal, sys, time
from robot_core.ros.stack_dumps import enable_stack_dumps
enable_stack_dumps()
signal.signal(signal.SIGINT, signal.SIG_IGN)
def held_here():
    print("stubborn up", flush=True)
    time.sleep(120)
held_here()
"""


def test_a_process_ignoring_its_stop_signal_is_dumped_into_its_log_then_killed():
    proc = NodeProcess([sys.executable, "-c", STUBBORN], name="stubborn")
    try:
        proc.wait_for_output("stubborn up", timeout=60)
    finally:
        code = proc.stop(signal.SIGINT, timeout=1.0)
    out = proc.log_path.read_text()
    assert code == -signal.SIGTERM, out
    assert "[test harness] stubborn ignored its stop signal" in out, out
    assert "held_here" in out, out  # the main thread's frame, from faulthandler's dump
