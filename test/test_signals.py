"""Ctrl-C and SIGTERM never leave a traceback or a non-zero exit code behind (issue 13, fault 8).

A terminal Ctrl-C reaches the whole process group and ``ros2 launch`` forwards it again, so a node gets SIGINT
twice within milliseconds, sometimes while it is still starting or already shutting down. Every node is started
as its real console script and signalled the ways that happen; it must exit 0 and print no "Traceback".
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest
from cm_helpers import CONTROLLERS_YAML
from rbc_helpers import Client, Goal, arm_urdf, joint_goal
from ros_harness import REPO, NodeProcess, stack_dumps, wait_for

from robot_core.bringup.supervisor import Supervisor
from robot_core.ros.node_main import ShutdownRequest, params_files

RC_ARM = REPO / "urdf" / "rc_arm.urdf"
SIGINT, SIGTERM = signal.SIGINT, signal.SIGTERM
# (signal, then this one 20 ms later or None): one Ctrl-C, a Ctrl-C forwarded twice, SIGTERM, Ctrl-C then SIGTERM
PATTERNS = {"sigint": (SIGINT, None), "sigint_twice": (SIGINT, SIGINT), "sigterm": (SIGTERM, None),
            "sigint_then_sigterm": (SIGINT, SIGTERM)}


# ------------------------------------------------------------------------------------------------ ROS-free
def test_shutdown_request_takes_the_first_signal_and_ignores_the_rest():
    request = ShutdownRequest()
    saved = {sig: signal.getsignal(sig) for sig in (SIGINT, SIGTERM)}
    try:
        request.install()
        os.kill(os.getpid(), SIGTERM)
        os.kill(os.getpid(), SIGINT)  # no KeyboardInterrupt: the shutdown is already under way
        os.kill(os.getpid(), SIGINT)
        assert request.wait(5.0)
        assert request.signum == SIGTERM and request.describe() == "SIGTERM"
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def test_params_files_are_found_in_both_spellings():
    argv = ["cm", "--ros-args", "--params-file", "a.yaml", "-p", "x:=1", "--params-file=b.yaml", "--", "c"]
    assert params_files(argv) == ["a.yaml", "b.yaml"]


# ----------------------------------------------------------------------------------------- node processes
def _node_args(script: str, tmp_path: Path) -> list[str]:
    if script == "simulator":
        return ["--ros-args", "-p", f"urdf_path:={RC_ARM}"]
    if script == "controller_manager":
        return ["--ros-args", "--params-file", str(CONTROLLERS_YAML), "-p", f"robot_description_file:={RC_ARM}"]
    if script == "controller_manager_embedded":  # its physics and scene-camera threads must end cleanly too
        return ["--ros-args", "--params-file", str(CONTROLLERS_YAML), "-p", f"robot_description_file:={RC_ARM}",
                "-p", "hardware_mode:=embedded"]
    if script == "rbc":
        return ["--ros-args", "-p", f"urdf_path:={arm_urdf(tmp_path / 'arm.urdf')}"]
    # a spawner waiting for a manager that is not there (yet): what it does during a whole bringup start-up
    return ["some_controller", "-c", "/no_manager_here", "--controller-manager-timeout", "0"]


READY = {"simulator": "simulator ready", "controller_manager": "controller manager ready",
         "controller_manager_embedded": "controller manager ready", "rbc": "rbc ready"}


def _signal(proc: NodeProcess, first: int, second: int | None) -> None:
    """What a terminal does: the signal goes to the whole process group."""
    os.killpg(proc.proc.pid, first)
    if second is not None:
        time.sleep(0.02)  # not a synchronisation: the gap between two deliveries being tested
        os.killpg(proc.proc.pid, second)


def _assert_clean_exit(proc: NodeProcess, timeout: float = 60.0) -> None:
    try:
        code = proc.proc.wait(timeout=timeout)
    except Exception:
        raise AssertionError(f"{proc.name} did not exit within {timeout:g} s:\n{proc.output()[-3000:]}") from None
    out = proc.output()
    assert code == 0, f"{proc.name} exited with {code}:\n{out[-3000:]}"
    assert "Traceback" not in out, out[-3000:]
    assert "terminate called" not in out, out[-3000:]


@pytest.mark.ros
@pytest.mark.parametrize("pattern", list(PATTERNS))
@pytest.mark.parametrize("script", ["simulator", "controller_manager", "controller_manager_embedded", "rbc", "spawner"])
def test_running_node_exits_0_without_traceback(ros, processes, tmp_path, script, pattern):
    proc = NodeProcess.console_script(script.removesuffix("_embedded"), *_node_args(script, tmp_path))
    processes.append(proc)
    if script in READY:
        proc.wait_for_output(READY[script], timeout=90)
    else:
        probe = ros.node("signal_test_probe")
        wait_for(lambda: "spawner_some_controller" in probe.get_node_names(), 60, "the spawner on the graph")
    _signal(proc, *PATTERNS[pattern])
    _assert_clean_exit(proc)


@pytest.mark.ros
def test_sigusr1_prints_every_thread_of_a_running_node_which_runs_on(processes):
    """robot_core.ros.stack_dumps: where a live node's threads stand, into ROBOT_CORE_STACKS_DIR (the harness sets it),
    and the node carries on; a SIGTERM still ends it cleanly."""
    proc = NodeProcess.console_script("simulator", "--ros-args", "-p", f"urdf_path:={REPO / 'urdf' / 'planar2.urdf'}")
    processes.append(proc)
    proc.wait_for_output(READY["simulator"], timeout=90)
    stacks = stack_dumps(proc)
    assert "Thread 0x" in stacks and "most recent call first" in stacks and "simulator" in stacks, stacks
    assert "Thread 0x" not in proc.output()  # in the dump file, not in the node's own log
    assert proc.alive()
    _signal(proc, SIGTERM, None)
    _assert_clean_exit(proc)


@pytest.mark.ros
def test_rbc_with_a_reacher_and_a_running_goal_exits_0(ros, processes, tmp_path):
    """The reacher instance nodes live in the rbc process: a goal in flight must not turn Ctrl-C into a crash."""
    from robot_core_interfaces.action import JointReach

    urdf = arm_urdf(tmp_path / "arm.urdf")
    proc = NodeProcess.console_script("rbc", "--ros-args", "-p", f"urdf_path:={urdf}")
    processes.append(proc)
    proc.wait_for_output("rbc ready", timeout=90)
    client = Client(ros)
    client.create("JR", "JR0", joints=["joint1", "joint2"])
    goal = Goal(client, JointReach, "/JR0/reach", joint_goal(["joint1"], [0.5], precision=0.001, timeout=60.0))
    print("goal accepted:", goal.accepted)
    _signal(proc, SIGINT, SIGINT)
    _assert_clean_exit(proc)


@pytest.mark.ros
@pytest.mark.parametrize("script", ["simulator", "controller_manager", "rbc", "spawner"])
def test_node_stopped_during_its_start_up_by_the_supervisor_exits_0(tmp_path, script):
    """What ``robot-core bringup`` does to the other nodes when one fails at once (e.g. a bad URDF): the siblings
    are stopped while they are still importing. Two SIGINTs right after the start, as a double Ctrl-C."""
    lines: list[str] = []
    sup = Supervisor(sink=lambda _n, line: lines.append(line))
    exe = Path(sys.executable).parent / script
    try:
        child = sup.start(script, [str(exe), *_node_args(script, tmp_path)])
        os.killpg(child.pid, SIGINT)
        time.sleep(0.02)  # the gap between two deliveries being tested
        os.killpg(child.pid, SIGINT)
        code = child.popen.wait(timeout=60)
    finally:
        sup.stop_all(timeout=10)
    out = "\n".join(lines)
    assert code == 0, f"{script} exited with {code}:\n{out[-3000:]}"
    assert "Traceback" not in out, out[-3000:]


@pytest.mark.ros
def test_bringup_with_a_bad_urdf_prints_no_sibling_traceback(processes, tmp_path):
    """The simulator exits 1 on a robot it cannot build; bringup then stops its siblings mid start-up."""
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="bad"><link name="a"/><joint name="j" type="revolute"><parent link="a"/>'
                   '<child link="missing"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>\n')
    proc = NodeProcess.console_script("robot-core", "bringup", "--robot", str(bad), "--headless")
    processes.append(proc)
    code = proc.proc.wait(timeout=150)
    out = proc.output()
    assert code == 1, out[-3000:]
    assert "FAILED" in out and "'missing'" in out, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
