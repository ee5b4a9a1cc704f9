"""The simulator node over DDS: a separate process, driven and observed like a controller manager would.

Most tests share one simulator process of the 2-DOF planar arm (each test starts with a reset); the rc_arm test
checks upstream topic_based_ros2_control's message shape on a robot with a gripper and a mimic joint.
"""

from __future__ import annotations

import math
import os
import signal
from typing import Any

import pytest
from conftest import URDF_DIR
from ros_harness import NodeProcess, wait_for, wait_future
from sim_helpers import DT, HOME, SimClient, near, sec, start_simulator

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

NAN = math.nan


class TestSharedPlanarSimulator:
    """Tests sharing one planar2 simulator process (torn down before the tests that start their own)."""

    def test_publishes_states_clock_tf_description_and_status(self, fresh: SimClient):
        sim = fresh
        msg = sim.latest()
        assert list(msg.name) == ["joint1", "joint2"]
        assert len(msg.position) == len(msg.velocity) == len(msg.effort) == 2
        t0 = sim.stamp()
        wait_for(lambda: sim.stamp() > t0 + 0.1, 10, "joint state stamps advancing with sim time")
        c0 = sim.clock[-1]
        wait_for(lambda: sim.clock[-1] > c0 + 0.1, 10, "/clock advancing")
        # every link is the child of exactly one tf edge
        wait_for(lambda: ("base_link", "link1") in sim.tf and ("link1", "link2") in sim.tf, 10, "/tf edges")
        wait_for(lambda: ("link2", "tip") in sim.tf_static, 10, "/tf_static edge")
        assert set(sim.tf) == {("base_link", "link1"), ("link1", "link2")}
        tip = sim.tf_static[("link2", "tip")].transform
        assert (tip.translation.x, tip.translation.y, tip.translation.z) == pytest.approx((0.4, 0.0, 0.0))
        # link1 -> link2 is the 0.5 m offset rotated by joint2 about y
        wait_for(lambda: abs(sec(sim.tf[("link1", "link2")].header.stamp) - sim.stamp()) < 0.5, 10, "fresh /tf")
        e = sim.tf[("link1", "link2")].transform
        q2 = sim.positions()["joint2"]
        assert (e.translation.x, e.translation.z) == pytest.approx((0.5, 0.0), abs=1e-9)
        assert e.rotation.y == pytest.approx(math.sin(q2 / 2), abs=2e-3)
        wait_for(lambda: sim.description, 10, "latched /robot_description")
        assert '<robot name="planar2"' in sim.description[0]
        wait_for(lambda: sim.status[-1].step_count > 100, 10, "status")
        st = sim.status[-1]
        assert not st.paused and st.target_real_time_factor == 1.0
        assert sec(st.sim_time) == pytest.approx(st.step_count * DT, abs=1e-9)


    def test_position_and_velocity_commands_converge(self, fresh: SimClient):
        sim = fresh
        # joint1 by position, joint2 by velocity, in one message (NaN = that interface not commanded); sent every
        # poll, as a controller does every cycle: the simulator's command watchdog stops a velocity command that
        # is not renewed within command_timeout (0.5 s)
        def moving() -> bool:
            sim.send(["joint1", "joint2"], position=[0.2, NAN], velocity=[NAN, 0.4])
            q, qd = sim.positions(), sim.velocities()
            return abs(q["joint1"] - 0.2) < 0.01 and abs(qd["joint2"] - 0.4) < 0.02

        wait_for(moving, 15, "joint1 at 0.2 and joint2 moving at 0.4 rad/s", poll=0.01)
        # then joint2 by position (a subset message), joint1 keeps its command
        sim.send(["joint2"], position=[1.2])
        q = sim.wait_state(lambda q, qd: abs(q["joint2"] - 1.2) < 0.01 and abs(qd["joint2"]) < 0.01, 15,
                           "joint2 back at 1.2 and still")
        assert q["joint1"] == pytest.approx(0.2, abs=0.01)


    def test_bad_commands_are_dropped_with_a_reason_and_the_robot_holds(self, fresh: SimClient,
                                                                        planar_sim: NodeProcess):
        sim = fresh
        bad = [
            (["joint1", "bogus"], [1.0, 1.0], [], [], "unknown joint 'bogus'"),
            (["joint1", "joint2"], [1.0], [], [], "'position' has 1 values for 2 joints"),
            (["joint1", "joint2"], [1.0, math.inf], [], [], "'position' of joint 'joint2' is inf"),
            (["joint1", "joint1"], [1.0, 1.0], [], [], "joint 'joint1' is named twice"),
        ]
        for names, pos, vel, eff, _ in bad:
            sim.send(names, pos, vel, eff)
        sim.send(["joint1", "joint2"], [NAN, NAN], [NAN, NAN])  # valid, but commands nothing
        for *_, reason in bad:
            planar_sim.wait_for_output(reason, timeout=10)
        t0, s0 = sim.stamp(), sim.status[-1].step_count
        wait_for(lambda: sim.stamp() > t0 + 0.3 and sim.status[-1].step_count > s0, 10,
                 "the simulation going on after bad commands")
        assert near(sim.positions(), HOME, 2e-3), sim.positions()
        # and it still obeys a good one
        sim.send(["joint1"], [-0.2])
        sim.wait_state(lambda q, _: abs(q["joint1"] + 0.2) < 0.01, 15, "joint1 at -0.2")


    def test_reset_with_and_without_positions(self, fresh: SimClient):
        sim = fresh
        sim.send(["joint1"], [0.3])
        sim.wait_state(lambda q, _: abs(q["joint1"] - 0.3) < 0.01, 15, "joint1 at 0.3")
        # A state stamped before t_before that arrives after the call is the reset's (one writer's messages come
        # in order, pre-reset stamps only grow). Count from the call, not from the response: topics and services
        # are not ordered, and a response processed late would otherwise miss every such state; and run long
        # enough first that a starved test process still sees one.
        t0 = sim.stamp()
        wait_for(lambda: sim.stamp() > t0 + 1.0, 10, "a second of simulated time before the reset")
        t_before, since = sim.stamp(), sim.state_count
        assert sim.reset().success
        msg = wait_for(lambda: next((m for m in sim.received_since(since) if sec(m.header.stamp) < t_before), None),
                       10, "a state stamped after the reset (time went back)")
        assert near(dict(zip(msg.name, msg.position, strict=True)), HOME, 1e-3)
        # the old command is gone: it stays home
        t0 = sim.stamp()
        wait_for(lambda: sim.stamp() > t0 + 0.3, 10, "time passing after reset")
        assert near(sim.positions(), HOME, 2e-3)

        res = sim.reset(joint1=0.5)
        assert res.success, res.message
        # (states in flight from before the reset may still arrive after the response: topics and services
        # are not ordered with respect to each other)
        sim.wait_state(lambda q, _: near(q, {"joint1": 0.5, "joint2": HOME["joint2"]}, 1e-6), 10,
                       "the state of the reset to joint1=0.5")
        t0 = sim.stamp()
        wait_for(lambda: sim.stamp() > t0 + 0.3, 10, "time passing")
        assert near(sim.positions(), {"joint1": 0.5, "joint2": HOME["joint2"]}, 2e-3)

        res = sim.reset(joint9=0.5)
        assert not res.success and "joint9" in res.message


    def test_a_reset_after_a_long_run_streams_at_once(self, fresh: SimClient):
        """After time jumps back, nothing may wait for the pre-reset time (a pacer or a publish schedule keeping
        its old deadline would stall the stream for as long as the simulation had run)."""
        import time

        from rclpy.parameter import Parameter
        from rclpy.parameter_client import AsyncParameterClient

        sim = fresh
        params = AsyncParameterClient(sim.node, "simulator")
        assert params.wait_for_services(timeout_sec=20)

        def set_rtf(value: float) -> None:
            res = wait_future(params.set_parameters([Parameter("real_time_factor", Parameter.Type.DOUBLE, value)]),
                              10)
            assert res.results[0].successful, res.results[0].reason

        try:
            set_rtf(0.0)  # as fast as possible: a long run in little wall time
            wait_for(lambda: sim.stamp() > 8.0, 120, "8 s of simulated time")
        finally:
            set_rtf(1.0)
        t_before, since = sim.stamp(), sim.state_count
        start = time.monotonic()
        assert sim.reset().success
        # A stall on the old deadline would last t_before of simulated time (as much wall time at RTF 1): half of
        # that is a deadline a loaded machine meets (the first state comes within tenths of a second) and a
        # stall does not.
        msg = wait_for(lambda: next((m for m in sim.received_since(since) if sec(m.header.stamp) < 1.0), None),
                       t_before / 2, "a state stamped after the reset")
        print(f"reset after {t_before:.1f} s of simulated time: first state of the new run after "
              f"{time.monotonic() - start:.3f} s (wall)")
        assert near(dict(zip(msg.name, msg.position, strict=True)), HOME, 1e-3)
        t0 = sec(msg.header.stamp)
        wait_for(lambda: sim.stamp() < 10.0 and sim.stamp() > t0 + 0.5, 10, "time running on from the reset")
        wait_for(lambda: sim.status[-1].step_count < 10_000 and not sim.status[-1].paused, 10, "status after reset")


    def test_pause_step_resume(self, fresh: SimClient):
        sim = fresh
        assert sim.trigger("pause").success
        res = sim.step(0)
        assert res.success, res.message
        count0, t0 = res.step_count, sec(res.sim_time)
        # paused: several status messages later, simulated time has not moved. Messages sent before the pause
        # can still be arriving (a loaded test process drains its readers late), so the paused ones are judged:
        # the first paused message ends the running ones, and every one after it says the same step.
        n = len(sim.status)

        def paused_run() -> list[Any]:
            since = sim.status[n:]
            first = next((i for i, s in enumerate(since) if s.paused), None)
            return [] if first is None else since[first:]

        wait_for(lambda: len(paused_run()) >= 3, 30, "three status messages while paused")
        judged = [(s.paused, s.step_count) for s in paused_run()]
        assert judged == [(True, count0)] * len(judged)
        wait_for(lambda: sim.clock[-1] == pytest.approx(t0, abs=1e-9), 30, "/clock at the paused time")

        res = sim.step(250)
        assert res.success, res.message
        assert res.step_count == count0 + 250
        assert sec(res.sim_time) == pytest.approx(t0 + 250 * DT, abs=1e-9)
        wait_for(lambda: sim.clock and sim.clock[-1] == pytest.approx(t0 + 0.25, abs=1e-9), 10, "/clock after step")

        assert sim.trigger("resume").success
        res = sim.step(10)
        assert not res.success and "paused" in res.message
        wait_for(lambda: sim.status[-1].step_count > count0 + 500 and not sim.status[-1].paused, 10,
                 "time running again after resume")


    def test_set_joint_state_teleports_and_holds(self, fresh: SimClient):
        from robot_core_interfaces.srv import SetJointState
        from sensor_msgs.msg import JointState

        sim = fresh
        target = {"joint1": 0.6, "joint2": -0.9}
        res = sim.call("set_joint_state", SetJointState.Request(state=JointState(name=list(target),
                                                                                  position=list(target.values()))))
        assert res.success, res.message
        sim.wait_state(lambda q, _: near(q, target, 1e-3), 10, "teleported pose")
        t0 = sim.stamp()
        wait_for(lambda: sim.stamp() > t0 + 0.3, 10, "time passing")
        assert near(sim.positions(), target, 2e-3)

        bad = SetJointState.Request(state=JointState(name=["joint1", "joint2"], position=[0.1]))
        res = sim.call("set_joint_state", bad)
        assert not res.success and "1 values for 2 names" in res.message
        res = sim.call("set_joint_state", SetJointState.Request(state=JointState(name=["nope"], position=[0.1])))
        assert not res.success and "nope" in res.message


    def test_apply_wrench_moves_a_link_for_its_duration(self, fresh: SimClient):
        from builtin_interfaces.msg import Duration
        from robot_core_interfaces.srv import ApplyWrench

        sim = fresh
        assert sim.trigger("pause").success
        home = sim.step_and_state(200)  # settled
        req = ApplyWrench.Request(link_name="link2", duration=Duration(sec=0, nanosec=300_000_000))
        req.reference_point.x = 0.4  # the tip of link2
        req.wrench.force.z = 20.0  # upwards, against gravity
        res = sim.call("apply_wrench", req)
        assert res.success, res.message
        pushed = sim.step_and_state(300)
        assert abs(pushed["joint2"] - home["joint2"]) > 0.02, (home, pushed)
        after = sim.step_and_state(2000)  # the wrench ended; the servos bring the arm back
        assert near(after, home, 2e-3), (home, after)

        req.link_name = "no_such_link"
        res = sim.call("apply_wrench", req)
        assert not res.success and "no_such_link" in res.message
        assert sim.trigger("resume").success

    def test_real_time_factor_changes_at_run_time_other_parameters_do_not(self, fresh: SimClient):
        from rclpy.parameter import Parameter
        from rclpy.parameter_client import AsyncParameterClient

        sim = fresh
        params = AsyncParameterClient(sim.node, "simulator")
        assert params.wait_for_services(timeout_sec=20)
        try:
            res = wait_future(params.set_parameters([Parameter("real_time_factor", Parameter.Type.DOUBLE, 3.0)]), 10)
            assert res.results[0].successful, res.results[0].reason
            wait_for(lambda: sim.status[-1].target_real_time_factor == 3.0, 10, "status showing the new target")
            res = wait_future(params.set_parameters([Parameter("timestep", Parameter.Type.DOUBLE, 0.002)]), 10)
            assert not res.results[0].successful and "only real_time_factor" in res.results[0].reason
            res = wait_future(params.set_parameters([Parameter("real_time_factor", Parameter.Type.DOUBLE, -1.0)]), 10)
            assert not res.results[0].successful
        finally:
            wait_future(params.set_parameters([Parameter("real_time_factor", Parameter.Type.DOUBLE, 1.0)]), 10)
        wait_for(lambda: sim.status[-1].target_real_time_factor == 1.0, 10, "target back to 1")


def test_rc_arm_with_upstream_packed_commands(processes, ros):
    """upstream TopicBasedSystem's message for rc_arm: 8 names, 8 positions, 7 velocities (the gripper has no
    velocity interface), unclaimed velocities NaN; states report the mimic finger too."""
    proc = start_simulator("rc_arm.urdf", "real_time_factor:=2.0", "initial_positions.joint1:=0.5",
                           "initial_positions.finger_left_joint:=0.01", "gains.joint7.kp:=50.0", "timestep_typo:=1",
                           "cameras:=true")  # the scene camera's frames are checked below
    processes.append(proc)
    proc.wait_for_output("simulator ready", timeout=60)
    assert "unknown parameter 'timestep_typo' is ignored" in proc.output()
    sim = SimClient(ros, "rc_arm_client")
    sim.wait_connected()
    names = [f"joint{i}" for i in range(1, 8)] + ["finger_left_joint"]
    msg = sim.latest()
    assert list(msg.name) == [*names, "finger_right_joint"]
    q0 = sim.positions()
    assert q0["joint1"] == pytest.approx(0.5, abs=1e-3)  # initial_positions.<joint> parameters
    assert q0["finger_left_joint"] == pytest.approx(0.01, abs=1e-3)
    assert q0["finger_right_joint"] == pytest.approx(0.01, abs=1e-3)  # mimic follows
    target = [0.2, 0.5, -0.2, 1.5, 0.1, 1.0, 0.3, 0.035]
    sim.send(names, position=target, velocity=[NAN] * 7)
    goal = dict(zip(names, target, strict=True))
    q = sim.wait_state(lambda q, _: near(q, goal, 0.01), 20, "rc_arm at the commanded pose")
    assert q["finger_right_joint"] == pytest.approx(q["finger_left_joint"], abs=1e-3)
    camera = ("scene_camera_link", "scene_camera_optical_frame")  # the scene camera's optical frame (sim_sensors)
    wait_for(lambda: {("link7", "hand"), camera} <= set(sim.tf_static), 10, "rc_arm /tf_static")
    wait_for(lambda: {("hand", "finger_right"), ("link6", "link7")} <= set(sim.tf), 10, "rc_arm /tf")
    children = {c for _, c in sim.tf} | {c for _, c in sim.tf_static}
    assert children == {"link1", "link2", "link3", "link4", "link5", "link6", "link7", "hand", "finger_left",
                        "finger_right", "tcp", "scene_camera_link", "scene_camera_optical_frame"}


def test_description_from_topic_and_sigterm_exit(processes, ros):
    """No urdf parameter: the simulator waits for a latched robot_description (as robot_state_publisher
    offers it), then simulates it; SIGTERM ends it cleanly."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String

    proc = start_simulator(None, "start_paused:=true")
    processes.append(proc)
    proc.wait_for_output("waiting for the robot description", timeout=60)
    node = ros.node("description_publisher")
    pub = node.create_publisher(String, "/robot_description",
                                QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                                           durability=DurabilityPolicy.TRANSIENT_LOCAL))
    pub.publish(String(data=(URDF_DIR / "planar2.urdf").read_text()))
    proc.wait_for_output("simulator ready: robot 'planar2'", timeout=30)
    # The publisher stays until the simulator has gone. Deleting it here, right after the acknowledgements, once
    # froze the simulator (it ignored the SIGTERM below): its reader of this writer is where Fast DDS's discovery
    # deadlock can catch a process (eProsima/Fast-DDS#6502, robot_core/ros/middleware_deadlock.py).
    sim = SimClient(ros, "topic_client")
    sim.wait_connected()
    assert sim.status[-1].paused
    assert sim.step(5).step_count == 5
    code = proc.stop(signal.SIGTERM)
    out = proc.log_path.read_text()  # the log is closed once stopped
    assert code == 0, out[-3000:]
    assert "Traceback" not in out


def test_sigint_exits_zero_and_leaves_no_process(processes):
    proc = start_simulator("planar2.urdf")
    processes.append(proc)
    proc.wait_for_output("simulator ready", timeout=60)
    code = proc.stop(signal.SIGINT)
    out = proc.log_path.read_text()  # the log is closed once stopped
    assert code == 0, out[-3000:]
    assert "Traceback" not in out
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.proc.pid, 0)


@pytest.mark.parametrize("case", ["broken_urdf", "bad_parameter"])
def test_unusable_start_exits_one_with_the_reason(processes, tmp_path, case):
    broken = tmp_path / "broken.urdf"
    broken.write_text('<robot name="b"><link name="a"/><joint name="j" type="revolute"><parent link="a"/>'
                      '<child link="missing"/></joint></robot>')
    if case == "broken_urdf":
        args, expected = ["-p", f"urdf_path:={broken}"], "broken.urdf"
    else:
        args, expected = ["-p", f"urdf_path:={URDF_DIR / 'planar2.urdf'}", "-p", "timestep:=-0.001"], \
            "parameter 'timestep' = -0.001 must be > 0"
    proc = NodeProcess.console_script("simulator", "--ros-args", *args)
    processes.append(proc)
    wait_for(lambda: not proc.alive(), 60, "the simulator to give up")
    assert proc.proc.returncode == 1
    out = proc.output()
    assert "cannot start the simulator" in out and expected in out, out
    assert "Traceback" not in out
