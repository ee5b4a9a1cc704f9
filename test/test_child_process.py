"""The recorder and the view as child processes (robot_core.nodes.child_process, what bringup --record / --view and
the demo start): each comes up in its own session writing to its log, and SIGINT ends it cleanly -- the recorder
with a closed, readable MCAP file, the view with its server down."""

from __future__ import annotations

import os
import urllib.request
from pathlib import Path

import pytest
from browser import free_port
from ros_harness import wait_for

from robot_core.nodes.child_process import RecorderProcess, ViewProcess

pytest.importorskip("rclpy")


def test_recorder_child_closes_its_file_on_stop(tmp_path: Path) -> None:
    from robot_core.ros.recording import scan_recording

    log = tmp_path / "recorder.log"
    with RecorderProcess(tmp_path / "run.mcap", ["/nothing_here"], log=log) as rec:
        assert os.getsid(rec.proc.pid) == rec.proc.pid  # its own session: a terminal's Ctrl-C reaches the parent
        wait_for(lambda: "recording into" in log.read_text(), 60, "the recorder to start")
    assert rec.proc.returncode == 0, log.read_text()
    assert scan_recording(rec.output).messages == 0  # a complete file (summary written), nothing recorded


def test_view_child_serves_until_stopped(tmp_path: Path) -> None:
    pytest.importorskip("viser")
    log = tmp_path / "view.log"
    view = ViewProcess(free_port(), log=log)
    try:
        wait_for(lambda: "robot_core view: http://" in log.read_text(), 60, "the view to serve")
        assert "<html" in urllib.request.urlopen(view.url, timeout=30).read().decode().lower()
    finally:
        code = view.stop()
    assert code == 0, log.read_text()
    with pytest.raises(OSError):
        urllib.request.urlopen(view.url, timeout=5)


# tgkill's number (signal one thread of another process), where known
_TGKILL = {"x86_64": 234, "aarch64": 131}.get(os.uname().machine)


@pytest.mark.skipif(_TGKILL is None, reason="tgkill's syscall number unknown on this machine")
def test_view_stops_on_a_sigint_that_another_thread_receives(tmp_path: Path) -> None:
    """The kernel hands a process's signal to any of its threads; Python runs the handler on the main thread, the
    next time it runs Python code. The view's main thread waited in one untimed wait and ignored such a SIGINT (3 of
    80 stops here, and a CI run). Send it to a thread other than the main one, as the kernel may."""
    import ctypes
    import signal

    pytest.importorskip("viser")
    log = tmp_path / "view.log"
    view = ViewProcess(free_port(), log=log)
    try:
        wait_for(lambda: "robot_core view: http://" in log.read_text(), 60, "the view to serve")
        pid = view.proc.pid
        others = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid)
        assert others, "the view runs more than one thread"
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.syscall(_TGKILL, pid, others[-1], int(signal.SIGINT)) == 0, ctypes.get_errno()
        wait_for(lambda: view.proc.poll() is not None, 15, "the view to stop on the SIGINT")
    finally:
        code = view.stop()
    assert code == 0, log.read_text()
