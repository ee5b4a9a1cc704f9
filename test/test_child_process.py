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
