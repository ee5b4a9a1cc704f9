"""Reachers and extenders as processes on the shared-memory var table, without ROS: real child processes
(``robot_core.rbc.instance_process.main``) stepped by a real Coupler, on planar2 whose joints follow their
position references (the test plays a perfect position servo: q = q_ref)."""

from __future__ import annotations

import math
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from rbc_helpers import fake_driver_urdf
from ros_harness import wait_for
from sensor_msgs.msg import JointState

from robot_core.model import load_robot
from robot_core.rbc import registry
from robot_core.rbc.coupler import Coupler
from robot_core.rbc.instance_process import CHILD_ARGV
from robot_core.rbc.shared_table import SharedOutputs, SharedState, cmd_keys

TOPIC = "/probe/joint_states"
CHILD = [sys.executable, *CHILD_ARGV]
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module", autouse=True)
def _resource_tracker():
    """shared_memory starts a resource-tracker process on first use; end it with the module."""
    yield
    from multiprocessing import resource_tracker

    resource_tracker._resource_tracker._stop()


class Rig:
    """A coupler on planar2, a perfect position servo, and the spec its instance processes need."""

    def __init__(self, tmp: Path):
        urdf = fake_driver_urdf(tmp / "planar2.urdf", TOPIC)
        self.description = tmp / "description.urdf"
        self.description.write_text(urdf.read_text())
        self.coupler = Coupler(load_robot(urdf.read_text()), stale_timeout=0.5)
        self.q = {"joint1": 0.0, "joint2": 0.0}
        self.started = []
        self.trace: list[tuple[float, float]] | None = None  # (time, joint1) per cycle, when recording
        self.env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))

    def create(self, type_name: str, name: str, **spec):
        remote = self.coupler.create_remote(type_name, name, CHILD,
                                            dict(spec, description_file=str(self.description)), env=self.env)
        self.started.append(remote)
        return remote

    def cycle(self) -> None:
        now = time.monotonic()
        self.coupler.on_message(TOPIC, JointState(name=list(self.q), position=list(self.q.values())), now)
        self.coupler.update(now)
        for j in self.q:
            e = self.coupler.table.entry(j, "q_ref")
            if e.written:
                self.q[j] = e.value
        if self.trace is not None:
            self.trace.append((now, self.q["joint1"]))

    def run_until(self, cond, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not cond():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            self.cycle()
            time.sleep(0.01)


@pytest.fixture
def rig(tmp_path):
    r = Rig(tmp_path)
    yield r
    r.coupler.close()
    assert all(remote.proc.poll() is not None for remote in r.started), "an instance process outlived the coupler"


def test_state_and_output_blocks_round_trip(tmp_path):
    r = Rig(tmp_path)
    table = r.coupler.table
    table.on_message(TOPIC, JointState(name=["joint1", "joint2"], position=[0.25, -0.5]), 1.0)
    writer = SharedState(table)
    writer.publish(1.5)
    reader_table = Rig(tmp_path).coupler.table
    reader = SharedState(reader_table, name=writer.name, create=False)  # same process: the tracker stays
    assert reader.load() == (1, 1.5)
    assert reader_table.entry("joint1", "q").value == 0.25 and reader_table.entry("joint2", "q").value == -0.5
    assert not reader_table.entry("joint1", "q").stale
    keys = cmd_keys(table)
    out = SharedOutputs(keys, {"wrench": 6})
    out_reader = SharedOutputs(keys, {"wrench": 6}, name=out.name, create=False)
    assert out_reader.read()[0] == 0  # not ready
    out_reader.write(0.5, {("joint2", "q_ref"): 0.3}, {"wrench": np.arange(6.0)})
    beat, weight, rates = out.read()
    assert (beat, weight) == (1, 0.5)
    assert math.isnan(rates[keys.index(("joint1", "q_ref"))]) and rates[keys.index(("joint2", "q_ref"))] == 0.3
    assert out.shared("wrench").tolist() == list(range(6))
    with pytest.raises(KeyError, match="joint 'joint1', var 'q' is not a cmd var"):
        out_reader.write(1.0, {("joint1", "q"): 1.0}, {})
    with pytest.raises(KeyError, match="no shared output 'force'"):
        out.shared("force")
    for block in (reader, writer, out_reader, out):
        block.close()


def test_joint_reacher_process_reaches_its_goal_and_destroy_ends_it(rig):
    jr = rig.create("JR", "JR0", params={"joints": ["joint1", "joint2"]},
                    goal={"positions": {"joint1": 0.4, "joint2": -0.3}, "precision": 0.001})
    rig.run_until(lambda: jr.ready, 60, "the JR process to be ready")
    assert rig.coupler.l2_ctrl("list_re").names == ["JR0"]
    rig.run_until(lambda: abs(rig.q["joint1"] - 0.4) < 2e-3 and abs(rig.q["joint2"] + 0.3) < 2e-3, 30,
                  "the joints at the goal")
    rig.coupler.l2_ctrl("destroy_re", name="JR0")
    assert rig.coupler.l2_ctrl("list_re").names == []
    rig.run_until(lambda: jr.proc.poll() is not None, 10, "the JR process to exit")
    assert jr.proc.returncode == 0


def test_sigkill_mid_goal_drops_the_reacher_within_a_cycle_and_the_other_keeps_going(rig):
    a = rig.create("JR", "JRa", params={"joints": ["joint1"], "max_velocity": 0.2},
                   goal={"positions": {"joint1": 1.0}, "timeout": 60.0})
    b = rig.create("JR", "JRb", params={"joints": ["joint2"], "max_velocity": 0.2},
                   goal={"positions": {"joint2": 1.0}, "timeout": 60.0})
    rig.run_until(lambda: a.ready and b.ready, 60, "both JR processes to be ready")
    rig.run_until(lambda: rig.q["joint1"] > 0.05 and rig.q["joint2"] > 0.05, 30, "both joints moving")
    rig.trace = []
    os.kill(a.pid, signal.SIGKILL)
    killed = time.monotonic()
    rig.run_until(lambda: rig.coupler.lost, 10, "the coupler to notice")
    noticed = time.monotonic() - killed
    held = rig.q["joint1"]
    assert rig.coupler.l2_ctrl("list_re").names == ["JRb"]
    assert "signal SIGKILL" in rig.coupler.lost[0][1] and "JRa" in rig.coupler.lost[0][1]
    j2 = rig.q["joint2"]
    rig.run_until(lambda: rig.q["joint2"] > j2 + 0.05, 30, "the other reacher to keep moving its joint")
    assert rig.q["joint1"] == held
    moves = [t for (t, q1), (_, prev) in zip(rig.trace[1:], rig.trace, strict=False) if q1 != prev]
    hold = (moves[-1] - killed) if moves else 0.0
    print(f"SIGKILL: joint1 held {hold * 1000:.1f} ms after it ({len(moves)} more moves of the 100 Hz coupler); "
          f"exit seen and the reacher dropped after {noticed * 1000:.1f} ms; held at {held:.4f}")
    assert hold < 0.1, "the robot did not hold within 100 ms of the kill"


def test_a_process_stopped_mid_write_of_its_outputs_holds_its_joint_and_never_stalls_the_coupler(rig):
    """A process preempted, stopped or killed between the two halves of its output write leaves the block odd:
    the coupler neither waits on it (its cycle stays short) nor fails; the joint holds, the process is reported
    quiet, and it counts again once it writes."""
    a = rig.create("JR", "JRa", params={"joints": ["joint1"], "max_velocity": 0.2},
                   goal={"positions": {"joint1": 1.0}, "timeout": 60.0})
    rig.run_until(lambda: a.ready, 60, "the JR process to be ready")
    rig.run_until(lambda: rig.q["joint1"] > 0.05, 30, "joint1 moving")
    os.kill(a.pid, signal.SIGSTOP)
    try:
        seq = a.outputs.vector._seq
        seq[0] += 1  # as if stopped mid-write
        assert not a.ready
        held, slowest = None, 0.0
        quiet_until = time.monotonic() + 0.5
        while time.monotonic() < quiet_until:
            t0 = time.monotonic()
            rig.cycle()  # raises if the torn read escapes
            slowest = max(slowest, time.monotonic() - t0)
            if held is None:
                held = rig.q["joint1"]
            time.sleep(0.01)
        assert rig.q["joint1"] == held and a.quiet
        assert slowest < 0.9, f"a coupler cycle took {slowest:.3f} s waiting on the stopped writer (was 1 s)"
        assert rig.coupler.l2_ctrl("list_re").names == ["JRa"]
        seq[0] += 1  # the write completes
    finally:
        os.kill(a.pid, signal.SIGCONT)
    rig.run_until(lambda: rig.q["joint1"] > held + 0.02, 30, "joint1 moving again once the process steps")


def test_goals_over_the_channel_start_run_and_abort_naming_the_signal_when_the_process_is_killed(rig):
    """The coupler's side of a process's goals (GoalProxy): a bad goal is rejected with the process's reason, a
    good one runs there and its status comes back; SIGKILL mid-goal turns it ABORTED naming process and signal."""
    from robot_core.rbc.errors import RbcGoalError
    from robot_core.rbc.instance import ABORTED, ACTIVE, SUCCEEDED
    from robot_core.rbc.reachers.joint_reacher import JointGoal

    jr = rig.create("JR", "JR0", params={"joints": ["joint1"], "max_velocity": 0.2})
    rig.run_until(lambda: jr.ready, 60, "the JR process to be ready")
    with pytest.raises(RbcGoalError, match="joint2"):
        jr.goals.start_goal(JointGoal({"joint2": 0.3}))
    gid = jr.goals.start_goal(JointGoal({"joint1": 0.1}, precision=0.002))
    assert jr.goals.status().goal_id == gid
    rig.run_until(lambda: jr.goals.status().state == SUCCEEDED, 30, "the goal to succeed in the process")
    assert abs(rig.q["joint1"] - 0.1) < 0.003 and jr.goals.status().result
    gid = jr.goals.start_goal(JointGoal({"joint1": 1.5}, timeout=60.0))
    rig.run_until(lambda: rig.q["joint1"] > 0.15 and jr.goals.status().feedback, 30, "the second goal moving")
    assert jr.goals.status().state == ACTIVE
    os.kill(jr.pid, signal.SIGKILL)
    rig.run_until(lambda: jr.goals.status().state != ACTIVE, 10, "the goal to end with the process")
    st = jr.goals.status()
    assert st.state == ABORTED and st.goal_id == gid, st
    assert "JR 'JR0'" in st.message and f"process {jr.pid}" in st.message and "signal SIGKILL" in st.message, st
    with pytest.raises(RbcGoalError, match="is gone"):
        jr.goals.start_goal(JointGoal({"joint1": 0.0}))


def test_an_extender_output_is_a_shared_var_for_instances_created_after_it(rig):
    registry.register("Probe", "rbc_probe_types:Probe")
    registry.register("ProbeReader", "rbc_probe_types:ProbeReader")
    try:
        probe = rig.create("Probe", "P0", params={"value": [0.5, -2.0]})
        rig.run_until(lambda: probe.ready, 60, "the probe process")
        reader = rig.create("ProbeReader", "R0")
        rig.run_until(lambda: reader.ready and not np.isnan(reader.outputs.shared("seen")[:2]).any(), 60,
                      "the reader process to see the probe's output")
        assert reader.outputs.shared("seen")[:2].tolist() == [0.5, -2.0]
    finally:
        registry.unregister("Probe")
        registry.unregister("ProbeReader")


def test_extenders_created_later_are_announced_and_both_ways_mix_with_in_process_instances(rig):
    """A reader process created before its extender reads it once the coupler announces it (and NaN again once it
    is destroyed); an in-process reader reads a process's shared output, and a process reads an in-process
    extender's (copied into a block of its own each cycle)."""
    registry.register("Probe", "rbc_probe_types:Probe")
    registry.register("ProbeReader", "rbc_probe_types:ProbeReader")
    try:
        early = rig.create("ProbeReader", "R0", params={"source": "P0"})
        other = rig.create("ProbeReader", "R2", params={"source": "P1"})
        rig.run_until(lambda: early.ready and other.ready, 60, "the reader processes")
        assert np.isnan(early.outputs.shared("seen")).all()  # nothing to read yet
        probe = rig.create("Probe", "P0", params={"value": [0.5, -2.0]})
        rig.run_until(lambda: probe.ready and not np.isnan(early.outputs.shared("seen")[:2]).any(), 60,
                      "the earlier reader process to see the later probe's output")
        assert early.outputs.shared("seen")[:2].tolist() == [0.5, -2.0]
        rig.coupler.create("ProbeReader", "R1", {"source": "P0"})  # in-process, reading the process
        rig.run_until(lambda: not np.isnan(rig.coupler.derived.get("R1", {}).get("seen", [np.nan])[0]), 10,
                      "the in-process reader")
        assert list(rig.coupler.derived["R1"]["seen"][:2]) == [0.5, -2.0]
        rig.coupler.create("Probe", "P1", {"value": [3.0, 4.0]})  # in-process, read by a process
        rig.run_until(lambda: not np.isnan(other.outputs.shared("seen")[:2]).any(), 60,
                      "the reader process to see the in-process probe")
        assert other.outputs.shared("seen")[:2].tolist() == [3.0, 4.0]
        rig.coupler.destroy("P0")
        rig.run_until(lambda: np.isnan(early.outputs.shared("seen")).all(), 60,
                      "the reader process to let the destroyed probe go")
        rig.coupler.destroy("P1")
        rig.run_until(lambda: np.isnan(other.outputs.shared("seen")).all(), 60,
                      "the reader process to let the destroyed in-process probe go")
    finally:
        registry.unregister("Probe")
        registry.unregister("ProbeReader")


def test_an_in_process_reader_of_a_process_stopped_mid_write_keeps_its_last_value_and_never_stalls(rig):
    """An in-process instance reads a process's shared output inside the coupler's cycle: a writer stopped between
    the two halves of its write must not hold the cycle (the reader waited 1 s there), the reader keeps the last
    consistent value, and sees new ones once the writer goes on."""
    registry.register("Probe", "rbc_probe_types:Probe")
    registry.register("ProbeReader", "rbc_probe_types:ProbeReader")
    try:
        probe = rig.create("Probe", "P0", params={"value": [0.5, -2.0]})
        rig.run_until(lambda: probe.ready, 60, "the probe process")
        rig.coupler.create("ProbeReader", "R1", {"source": "P0"})
        rig.run_until(lambda: not np.isnan(rig.coupler.derived.get("R1", {}).get("seen", [np.nan])[0]), 10,
                      "the in-process reader")
        os.kill(probe.pid, signal.SIGSTOP)
        try:
            seq = probe.outputs.vector._seq
            seq[0] += 1  # as if stopped mid-write
            slowest = 0.0
            for _ in range(20):
                t0 = time.monotonic()
                rig.cycle()
                slowest = max(slowest, time.monotonic() - t0)
                assert list(rig.coupler.derived["R1"]["seen"][:2]) == [0.5, -2.0]
            print(f"slowest coupler cycle with the in-process reader of a stopped writer: {slowest * 1e3:.1f} ms")
            assert slowest < 0.5, f"a coupler cycle took {slowest:.3f} s waiting on the stopped writer (was 1 s)"
            seq[0] += 1  # the write completes
        finally:
            os.kill(probe.pid, signal.SIGCONT)
    finally:
        registry.unregister("Probe")
        registry.unregister("ProbeReader")


def test_bad_requests_start_no_process(rig):
    with pytest.raises(KeyError, match="unknown reacher/extender type 'XX'"):
        rig.create("XX", "X0")
    first = rig.create("JR", "JR0")
    with pytest.raises(ValueError, match="an instance named 'JR0' already exists"):
        rig.create("JR", "JR0")
    rig.run_until(lambda: first.ready, 60, "the JR process")
    wait_for(lambda: len(rig.coupler.remotes()) == 1, 1, "one process")


def test_touch_contacts_estimated_wrench_is_read_by_a_process_created_after_it(tmp_path):
    """A real TouchContact process on rc_arm estimates a force at link7 from joint torques the test computes with
    Pinocchio (tau = -J^T f); a reader process created after it sees that estimate through shared memory."""
    import pinocchio as pin
    from rbc_helpers import ARM, RC_ARM, STATES, arm_urdf

    urdf = arm_urdf(tmp_path / "rc_arm_rbc.urdf")
    coupler = Coupler(load_robot(urdf.read_text()), stale_timeout=0.5)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    spec = {"description_file": str(urdf)}
    q = np.array([0.1, 0.4, -0.2, -1.2, 0.3, 1.0, 0.2])
    force = np.array([2.0, -1.0, -5.0])
    model = pin.buildModelFromUrdf(str(RC_ARM))
    data = model.createData()
    qv = pin.neutral(model)
    for j, v in zip(ARM, q, strict=True):
        qv[model.idx_qs[model.getJointId(j)]] = v
    jac = pin.computeFrameJacobian(model, data, qv, model.getFrameId("link7"), pin.LOCAL_WORLD_ALIGNED)
    tau = -(jac[:3, [model.idx_vs[model.getJointId(j)] for j in ARM]].T @ force)
    msg = JointState(name=[*ARM, "finger_left_joint"], position=[*q, 0.0], velocity=[0.0] * 8, effort=[*tau, 0.0])
    registry.register("ProbeReader", "rbc_probe_types:ProbeReader")
    started = []
    try:
        tc = coupler.create_remote("TC", "TC0", CHILD, dict(spec, params={
            "end_link": "link7", "gravity_compensation": False}), env=env)
        started.append(tc)

        def cycle_until(cond, what: str) -> None:
            deadline = time.monotonic() + 60
            while not cond():
                assert time.monotonic() < deadline, f"timed out waiting for {what}"
                coupler.on_message(STATES, msg, time.monotonic())
                coupler.update(time.monotonic())
                time.sleep(0.01)

        cycle_until(lambda: tc.ready and not np.isnan(tc.outputs.shared("wrench")).any(), "the TC estimate")
        estimate = tc.outputs.shared("wrench")
        assert np.allclose(estimate[:3], force, atol=1e-3), estimate
        reader = coupler.create_remote("ProbeReader", "R0", CHILD, dict(spec, params={"source": "TC0", "key":
                                                                                       "wrench"}), env=env)
        started.append(reader)
        cycle_until(lambda: reader.ready and not np.isnan(reader.outputs.shared("seen")).any(), "the reader")
        assert np.allclose(reader.outputs.shared("seen"), estimate, atol=1e-9)
        print(f"TouchContact estimate {np.round(estimate[:3], 4).tolist()} N (truth {force.tolist()}), read by a "
              f"later process: {np.round(reader.outputs.shared('seen')[:3], 4).tolist()}")
    finally:
        registry.unregister("ProbeReader")
        coupler.close()
    assert all(r.proc.poll() is not None for r in started)
