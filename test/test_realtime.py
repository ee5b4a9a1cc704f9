"""The control loop thread's scheduling (upstream's thread_priority / cpu_affinity): the policy really changes
for that thread only, what the system refuses is reported, and the manager runs either way."""

from __future__ import annotations

import json
import os
import struct
import threading
from pathlib import Path

import pytest

from robot_core.control.errors import ControlError
from robot_core.ros import realtime

SCHED_FIFO = 1  # the policy field of /proc/<pid>/task/<tid>/stat


def _in_thread(fn):
    out = {}

    def run() -> None:
        out["result"] = fn()
        out["policy"] = os.sched_getscheduler(0)
        out["affinity"] = os.sched_getaffinity(0)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    return out


def _fifo_allowed() -> bool:
    return not _in_thread(lambda: realtime.configure_current_thread(1))["result"]


def test_fifo_applies_to_the_calling_thread_only_or_is_reported():
    out = _in_thread(lambda: realtime.configure_current_thread(50))
    if out["result"]:
        assert "Could not enable FIFO RT scheduling policy" in out["result"][0]
        assert out["policy"] == os.SCHED_OTHER
    else:
        assert out["policy"] == os.SCHED_FIFO
    assert os.sched_getscheduler(0) == os.SCHED_OTHER  # the test's own thread is untouched


def test_priority_zero_keeps_normal_scheduling_and_out_of_range_is_reported():
    assert _in_thread(lambda: realtime.configure_current_thread(0))["policy"] == os.SCHED_OTHER
    out = _in_thread(lambda: realtime.configure_current_thread(500))
    assert out["policy"] == os.SCHED_OTHER
    assert "thread_priority 500 is outside" in out["result"][0]


def test_cpu_affinity_pins_the_thread_and_a_missing_cpu_is_reported():
    first = min(os.sched_getaffinity(0))
    out = _in_thread(lambda: realtime.configure_current_thread(0, [first]))
    assert out["result"] == [] and out["affinity"] == {first}
    out = _in_thread(lambda: realtime.configure_current_thread(0, [4096]))
    assert "Unable to set the CPU affinity to [4096]" in out["result"][0]
    assert out["affinity"] == os.sched_getaffinity(0)


def test_cpu_affinity_parameter_shapes():
    assert realtime.cpu_list(None, "cm") == [] and realtime.cpu_list([], "cm") == []
    assert realtime.cpu_list(1, "cm") == [1] and realtime.cpu_list([0, 1], "cm") == [0, 1]
    for bad in ("0", [0.5], [-1], True):
        with pytest.raises(ControlError, match="cm: cpu_affinity must be"):
            realtime.cpu_list(bad, "cm")


def _system_latency() -> int | None:
    try:
        fd = os.open(realtime.PM_QOS_DEVICE, os.O_RDONLY)
    except OSError:
        return None
    try:
        return struct.unpack("i", os.read(fd, 4))[0]
    finally:
        os.close(fd)


def test_cpu_dma_latency_request_holds_while_open_or_is_reported(tmp_path):
    fd, problem = realtime.hold_cpu_dma_latency(0, str(tmp_path / "missing" / "device"))
    assert fd is None and "Unable to request a CPU wake-up latency of 0 us" in problem
    before = _system_latency()
    fd, problem = realtime.hold_cpu_dma_latency(0)
    if fd is None:
        assert "Unable to request" in problem
        return
    try:
        assert _system_latency() == 0  # the kernel's aggregate request: ours is the strictest possible
    finally:
        os.close(fd)
    if before is not None and before > 0:
        assert _system_latency() == before  # closing dropped it (unless another process asks for 0 too)


def _fifo_threads(pid: int) -> int:
    count = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[38]) == SCHED_FIFO:  # field 41 of the whole line: policy
            count += 1
    return count


@pytest.mark.ros
def test_manager_loop_thread_gets_fifo_like_upstream_and_runs_without_it(monkeypatch):
    from cm_helpers import RC_ARM, CmClient, start_controller_manager
    from ros_harness import NodeProcess, RosTestContext, wait_for

    # the harness's stall dump arms faulthandler's watchdog thread from the loop's thread, which then shares its
    # FIFO policy (doc/nodes/controller_manager.md): off here, where the FIFO threads are counted
    monkeypatch.setenv("ROBOT_CORE_STALL_DUMP", "0")
    allowed = _fifo_allowed()
    procs: list[NodeProcess] = []
    ros = RosTestContext()
    try:
        cm = start_controller_manager(procs, "hardware_mode:=embedded", f"robot_description_file:={RC_ARM}",
                                      "publish_clock:=false")
        if allowed:
            wait_for(lambda: "Successful set up FIFO RT scheduling policy with priority 50." in cm.output(), 10,
                     "the FIFO set-up message")
            assert _fifo_threads(cm.proc.pid) == 1  # the loop thread, nothing else
        else:
            wait_for(lambda: "Could not enable FIFO RT scheduling policy" in cm.output(), 10, "the FIFO warning")
        cm.stop()
        cm2 = start_controller_manager(procs, "hardware_mode:=embedded", f"robot_description_file:={RC_ARM}",
                                       "publish_clock:=false", "thread_priority:=0", "cpu_affinity:=[4096]",
                                       "cpu_dma_latency:=0")
        wait_for(lambda: "Unable to set the CPU affinity to [4096]" in cm2.output(), 10, "the affinity warning")
        assert ("CPU wake-up latency held at 0 us" in cm2.output()) == (_system_latency() == 0), cm2.output()
        assert _fifo_threads(cm2.proc.pid) == 0
        client = CmClient(ros.node("realtime_probe"))
        wait_for(lambda: json.loads(client.call("loop_statistics").message)["cycles"] > 0, 10,
                 "control cycles without real-time scheduling")
    finally:
        for p in procs:
            p.stop()
        ros.shutdown()
