"""robot_core.ros.stack_dumps in a plain Python process: the SIGUSR1 dump never harms the process it reads (the
C-level dump it replaced crashed a process whose threads call functions within a few dumps), and SIGUSR2 still
dumps a process whose interpreter is held in one C call, where the SIGUSR1 dump cannot run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="POSIX signals")

CHILD = r"""
import sys, threading
from robot_core.ros.stack_dumps import enable_stack_dumps
enable_stack_dumps()

def deep(n):
    return 0 if n == 0 else deep(n - 1) + 1

def churn():
    while True:
        deep(300)

for _ in range(2):
    threading.Thread(target=churn, name="churn", daemon=True).start()
print("up", flush=True)
if sys.argv[1] == "churn":
    ev = threading.Event()
    while True:
        ev.wait(0.001)
        deep(200)
else:
    print(sum(range(10**15)))  # one C call that never lets go of the interpreter
"""


def _start(mode: str, folder: Path) -> subprocess.Popen:
    env = dict(os.environ, ROBOT_CORE_STACKS_DIR=str(folder))
    proc = subprocess.Popen([sys.executable, "-c", CHILD, mode], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "up"
    return proc


def _dumps(path: Path) -> int:
    """How many dumps the file holds (each starts with the thread that took the signal)."""
    return path.read_text(errors="replace").count("Current thread") if path.exists() else 0


def _wait_for_dumps(proc: subprocess.Popen, path: Path, count: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while _dumps(path) < count:
        assert proc.poll() is None, f"the process died ({proc.returncode}) after {_dumps(path)} dump(s)"
        assert time.monotonic() < deadline, f"{_dumps(path)} of {count} dumps in {timeout:g} s"
        time.sleep(0.005)


def test_sigusr1_dumps_leave_a_busy_process_running(tmp_path):
    proc = _start("churn", tmp_path)
    path = tmp_path / f"{proc.pid}.txt"
    try:
        for i in range(1, 101):
            os.kill(proc.pid, signal.SIGUSR1)
            _wait_for_dumps(proc, path, i)
        text = path.read_text()
        assert text.count("Thread 0x") >= 2 * 100, "both churning threads in every dump"
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait(30)


def test_sigusr2_dumps_a_process_whose_interpreter_is_held(tmp_path):
    proc = _start("held", tmp_path)
    path = tmp_path / f"{proc.pid}.txt"
    try:
        time.sleep(0.2)  # let the main thread enter its endless C call (a dump taken before it is as good)
        os.kill(proc.pid, signal.SIGUSR1)  # waits for Python to run: never, here
        os.kill(proc.pid, signal.SIGUSR2)
        _wait_for_dumps(proc, path, 1)
        assert "Thread 0x" in path.read_text()
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait(30)
