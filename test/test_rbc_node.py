"""The ``rbc`` node end to end over DDS: real simulator process, real rbc process, clients in the test.

The arm is rc_arm with test-only ``<rbc>`` tags (written by :func:`arm_urdf` from urdf/rc_arm.urdf) whose
``q_ref`` goes straight to the simulator's ``/robot_joint_commands`` (sensor_msgs/JointState, the coupler fills
``name``), so these tests depend on the simulator only. The example arm's own tags (through the forward
position controller) are exercised with the controller manager in test_rbc_node_controllers.py.

Independent oracles: joint positions come from the simulator's own ``/robot_joint_states``, Cartesian poses
from Pinocchio on the same URDF, applied wrenches from what the test asked the simulator to apply.
"""

from __future__ import annotations

import json
import math
import threading
import time
import xml.etree.ElementTree as ET
from typing import Any

import numpy as np
import pytest
from rbc_helpers import (
    ARM,
    PLANAR2,
    RC_ARM,
    TEST_STALE_TIMEOUT,
    Client,
    Goal,
    WrenchWatch,
    arm_urdf,
    fake_driver_urdf,
    joint_goal,
    pin_fk,
    refused_goal,
    rel_err,
    rotation_angle,
    start,
)
from ros_harness import NodeProcess, answered_eventually, wait_for, wait_future

pytest.importorskip("rclpy")
pytest.importorskip("robot_core_interfaces")
pytestmark = pytest.mark.ros


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """simulator + rbc on the test arm, shared by the tests of this module (each test cleans up after itself)."""
    urdf = arm_urdf(tmp_path_factory.mktemp("rbc") / "rc_arm_rbc.urdf")
    procs = [start("simulator", "-p", f"urdf_path:={urdf}", "-p", "tf_rate:=20.0")]
    try:
        procs.append(start("rbc", "-p", f"urdf_path:={urdf}", "-p", "rate:=100.0", "-p",
                           f"stale_timeout:={TEST_STALE_TIMEOUT}"))
        procs[0].wait_for_output("simulator ready", 60)
        procs[1].wait_for_output("rbc ready", 60)
        yield {"urdf": urdf, "sim": procs[0], "rbc": procs[1]}
        code = procs[1].stop()
        assert code == 0, f"rbc exited with {code} on SIGINT:\n{procs[1].log_path.read_text()[-3000:]}"
    finally:
        for p in procs:
            p.stop()


@pytest.fixture
def client(ros, stack):
    c = Client(ros)
    wait_for(lambda: not any(c.get_vars(vars_=["q"]).stale), 30, "fresh q from the simulator")
    try:
        yield c
    finally:
        c.cleanup()


# --- tests ------------------------------------------------------------------------------------------------------
def test_joint_reacher_created_configured_and_driven_over_dds(client):
    from robot_core_interfaces.action import JointReach
    from std_srvs.srv import Trigger

    res = client.l2_ctrl("create_re", "JR", "JR0")
    assert res.success and list(res.names) == ["JR0"] and list(res.types) == ["JR"]
    # Parameters, as `ros2 param set` would: joints, gains and weight (an integer is fine for a number).
    results = client.set_params("JR0", joints=["joint1", "joint2", "joint4"], kp=3, weight=1.0)
    assert all(r.successful for r in results), [r.reason for r in results]
    bad = client.set_params("JR0", kp=-1.0)[0]
    assert not bad.successful and "JR 'JR0'" in bad.reason and "'kp'" in bad.reason
    bad = client.set_params("JR0", joints=["joint1", "no_such_joint"])[0]
    assert not bad.successful and "'joints'" in bad.reason and "no_such_joint" in bad.reason

    targets = [0.5, 0.6, 1.5]
    goal = Goal(client, JointReach, "/JR0/reach", joint_goal(["joint1", "joint2", "joint4"], targets, 0.005))
    assert goal.accepted
    result = goal.result(40)
    assert result.success, result.message
    assert len(result.final_error) == 3 and max(abs(e) for e in result.final_error) <= 0.005
    assert goal.feedback and list(goal.feedback[0].joint_names) == ["joint1", "joint2", "joint4"]
    # JR declares success the first time every joint is within precision and keeps holding the target, so once
    # the arm has come to rest the simulator's own measurement is at the targets.
    client.wait_still()
    q = client.arm_q()
    assert np.abs(q[[0, 1, 3]] - targets).max() <= 0.005, q
    # The aggregated state output agrees with the simulator.
    got = client.get_vars(["joint1", "joint2", "joint4"], ["q"])
    assert got.success and np.allclose(got.values, q[[0, 1, 3]], atol=0.01) and not any(got.stale)

    # A goal naming a joint outside `joints` is rejected; the reason is kept in the status.
    assert not Goal(client, JointReach, "/JR0/reach", joint_goal(["joint1", "joint5"], [0.0, 0.1])).accepted
    status = json.loads(client.call(client._client(Trigger, "/JR0/status"), Trigger.Request()).message)
    assert "joint5" in status["last_rejection"] and status["params"]["kp"] == 3.0
    # A goal that cannot be reached in time aborts with a timeout.
    slow = Goal(client, JointReach, "/JR0/reach", joint_goal(["joint1"], [-2.0], 0.001, timeout=0.3))
    result = slow.result(20)
    assert not result.success and "timeout" in result.message
    assert abs(client.arm_q()[0] - (-2.0)) > 0.5

    listed = client.l2_ctrl("list_re")
    assert list(listed.names) == ["JR0"] and list(listed.types) == ["JR"]
    assert client.l2_ctrl("destroy_re", name="JR0").success
    assert list(client.l2_ctrl("list_re").names) == []
    wait_for(lambda: "JR0" not in [n for n, _ in client.node.get_node_names_and_namespaces()], 20,
             "node /JR0 to disappear")
    again = client.l2_ctrl("destroy_re", name="JR0")
    assert not again.success and "JR0" in again.message


def test_a_burst_of_reach_goals_is_answered_in_full(client, ros):
    """rclpy's default goal service keeps 10 requests: of 30 goals sent back-to-back most were lost unanswered
    and their clients waited forever. Every goal gets an answer; each accepted one preempts the one before."""
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from robot_core_interfaces.action import JointReach

    from robot_core.ros.action_client import ActionClient

    client.create("JR", "JRB", joints=["joint1"], kp=3.0)
    # Deep queues on the client side too, so only the server can lose a goal. The action client is built
    # before the executor spins its node (rclpy registers it before its constructor has finished).
    node = rclpy.create_node("rbc_burst_client", context=ros.context)
    deep = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    action = ActionClient(node, JointReach, "/JRB/reach", goal_service_qos_profile=deep,
                          result_service_qos_profile=deep, cancel_service_qos_profile=deep)
    ros.add(node)
    assert action.wait_for_server(timeout_sec=30), "action /JRB/reach not available"
    answered_eventually(action.send_goal_async, refused_goal(JointReach), "an answer from /JRB/reach")

    n = 30
    futures = [action.send_goal_async(joint_goal(["joint1"], [0.1 + 0.01 * k], 0.005, timeout=60.0))
               for k in range(n)]
    t0 = time.monotonic()
    try:
        wait_for(lambda: all(f.done() for f in futures), 60, "an answer to every goal of the burst")
    finally:
        print(f"reach goal burst: {sum(f.done() for f in futures)}/{n} answered in {time.monotonic() - t0:.3f} s")
    handles = [f.result() for f in futures]
    assert all(h.accepted for h in handles), "valid goals are accepted (each preempts the one before)"
    last = wait_future(handles[-1].get_result_async(), 60, "the last goal's result").result
    assert last.success, last.message
    earlier = [wait_future(h.get_result_async(), 30, "a preempted goal's result").result for h in handles[:-1]]
    assert not any(r.success for r in earlier)
    assert sum("preempted" in r.message for r in earlier) >= n - 2, [r.message for r in earlier]


def test_bad_l2_requests_and_var_writes_are_answered_not_fatal(client, stack):
    from sensor_msgs.msg import JointState

    bad = client.l2_ctrl("create_re", "XYZ", "X0")
    assert not bad.success and "XYZ" in bad.message and "JR" in bad.message
    bad = client.l2_ctrl("create_re", "JR", "0bad name")
    assert not bad.success and "not a valid ROS node name" in bad.message
    assert not client.l2_ctrl("explode").success
    types = client.l2_ctrl("list_re", "types")
    assert {"JR", "VF", "CS", "TC"} <= set(types.names)

    everything = client.get_vars()
    assert everything.success and len(everything.values) == 8 * 4
    assert {"q", "qd", "tau", "q_ref"} == set(everything.var_names)
    unknown = client.get_vars(["joint1"], ["nope"])
    assert not unknown.success and "nope" in unknown.message
    state_write = client.set_vars(["joint1"], ["q"], [0.1])
    assert not state_write.success and "state var" in state_write.message

    # Writing a cmd var arms the command topic: joint7 goes there, the other joints hold where they are.
    q0 = client.arm_q()
    assert client.set_vars(["joint7"], ["q_ref"], [0.4]).success
    wait_for(lambda: abs(client.arm_q()[6] - 0.4) < 0.01, 20, "joint7 at 0.4")
    assert np.abs(client.arm_q()[:6] - q0[:6]).max() < 0.02
    # The aggregated command input takes a JointState by name.
    pub = client.node.create_publisher(JointState, "/rbc/q_ref/cmd", 10)
    wait_for(lambda: pub.get_subscription_count() > 0, 20, "rbc's q_ref/cmd subscription")
    pub.publish(JointState(name=["joint6"], position=[1.2]))
    wait_for(lambda: abs(client.arm_q()[5] - 1.2) < 0.01, 20, "joint6 at 1.2")
    pub.publish(JointState(name=["joint6", "joint5"], position=[0.3]))  # malformed: ignored
    pub.publish(JointState(name=["nope"], position=[0.3]))  # unknown joint: ignored
    assert client.l2_ctrl("list_re").success  # still answering
    assert stack["rbc"].alive()
    wait_for(lambda: "q_ref/cmd message ignored" in stack["rbc"].output(), 10, "the warning about the bad message")


def test_vector_field_reaches_a_cartesian_pose_without_passing_joint_limits(client, stack):
    from geometry_msgs.msg import Pose
    from robot_core_interfaces.action import CartesianReach

    from robot_core.rbc.rotations import matrix_to_quat_xyzw

    target = pin_fk(RC_ARM, ARM, np.array([0.4, 0.6, -0.3, 1.2, 0.3, 1.5, 0.5]))
    q_start = client.arm_q()
    start = pin_fk(RC_ARM, ARM, q_start)
    assert np.linalg.norm(start[:3, 3] - target[:3, 3]) > 0.05  # a real move
    client.create("VF", "VF0", base_link="base_link", end_link="tcp", weight=1.0)
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = (float(v) for v in target[:3, 3])
    q = matrix_to_quat_xyzw(target[:3, :3])
    pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = (float(v) for v in q)
    client.start_recording()
    goal = Goal(client, CartesianReach, "/VF0/reach", CartesianReach.Goal(
        pose=pose, linear_precision=0.001, angular_precision=0.01, timeout=40.0))
    result = goal.result(60)
    recorded = client.stop_recording()
    assert result.success, result.message
    assert result.linear_error <= 0.001 and result.angular_error <= 0.01
    assert goal.feedback and goal.feedback[-1].linear_error >= 0.0
    # Independent check: Pinocchio's pose of the tcp at the simulator's measured joint positions.
    reached = pin_fk(RC_ARM, ARM, client.arm_q())
    assert np.linalg.norm(reached[:3, 3] - target[:3, 3]) <= 0.0011
    assert rotation_angle(reached[:3, :3], target[:3, :3]) <= 0.011
    # No joint passed its limit at any recorded instant.
    from robot_core.model import load_robot

    robot = load_robot(str(RC_ARM))
    lo = np.array([robot.joints[j].limit.lower for j in ARM])
    hi = np.array([robot.joints[j].limit.upper for j in ARM])
    # The limit check below means something only if the recording covers the whole move densely: from where the
    # arm started to where it ended, with no sample far from the one before it (a passage beyond a limit could
    # hide in a gap).
    assert len(recorded) > 1 and np.abs(recorded[0] - q_start).max() < 0.02
    assert np.abs(recorded[-1] - client.arm_q()).max() < 0.02
    assert np.abs(np.diff(recorded, axis=0)).max() < 0.05, "the recording has gaps"
    assert np.all(recorded >= lo) and np.all(recorded <= hi), "a joint passed its limit"
    travelled = np.abs(recorded[-1] - recorded[0])
    assert travelled.max() > 0.2


def test_two_reachers_with_half_weights_mix_to_the_weighted_mean(client):
    from robot_core_interfaces.action import JointReach

    joints = ["joint2", "joint3"]
    client.create("JR", "JRA", joints=joints, weight=0.5, kp=2.0)
    client.create("JR", "JRB", joints=joints, weight=0.5, kp=2.0)
    a_target, b_target = [0.2, 0.3], [0.8, -0.3]
    a = Goal(client, JointReach, "/JRA/reach", joint_goal(joints, a_target, 0.005, timeout=60.0))
    b = Goal(client, JointReach, "/JRB/reach", joint_goal(joints, b_target, 0.0001, timeout=60.0))
    assert a.accepted and b.accepted
    # Core rule (robot_core.rbc.mixer): position refs get q_ref += sum(w_i * increment_i), so two reachers pulling
    # to different targets settle at the weighted mean (w1*T1 + w2*T2) / (w1 + w2).
    mean = (0.5 * np.array(a_target) + 0.5 * np.array(b_target)) / 1.0
    wait_for(lambda: np.abs(client.arm_q()[[1, 2]] - mean).max() < 0.005, 40, "the arm at the weighted mean")
    client.wait_still()
    assert np.abs(client.arm_q()[[1, 2]] - mean).max() < 0.005
    assert not a._result.done() and not b._result.done()  # both still pulling
    # Weights are parameters, changed while the goals run: 0.5/0.25 settles at (0.5*A + 0.25*B) / 0.75.
    assert client.set_params("JRB", weight=0.25)[0].successful
    mean = (0.5 * np.array(a_target) + 0.25 * np.array(b_target)) / 0.75
    wait_for(lambda: np.abs(client.arm_q()[[1, 2]] - mean).max() < 0.005, 40, "the arm at the new weighted mean")
    client.wait_still()
    assert np.abs(client.arm_q()[[1, 2]] - mean).max() < 0.005
    # Without B, A alone takes the joints to its own target and succeeds.
    b.cancel()
    assert not b.result(15).success
    result = a.result(40)
    assert result.success, result.message
    assert np.abs(client.arm_q()[[1, 2]] - a_target).max() < 0.01


def test_touch_contact_recovers_simulated_wrenches_and_contact_simulation_applies_them(client):
    from geometry_msgs.msg import Point, Wrench
    from robot_core_interfaces.action import ApplyContact
    from robot_core_interfaces.srv import ApplyWrench
    from tf2_msgs.msg import TFMessage

    point = [0.0, 0.0, 0.05]
    client.create("TC", "TC0", end_link="tcp", link="link7", point=point)
    tc = WrenchWatch(client, "/TC0/wrench_base")
    frames: dict[str, Any] = {}
    client.node.create_subscription(TFMessage, "/tf", lambda m: frames.update(
        {t.child_frame_id: t for t in m.transforms}), 100)
    client.wait_still()
    wait_for(lambda: tc.latest() is not None, 20, "TouchContact's wrench")
    wait_for(lambda: np.linalg.norm(tc.latest()[:3]) < 0.3, 20, "no contact force at rest")

    # 1. The simulator applies a wrench; TouchContact recovers it from the joint torques.
    force = np.array([10.0, -5.0, 8.0])
    req = ApplyWrench.Request(link_name="link7", reference_point=Point(x=0.0, y=0.0, z=0.05))
    req.wrench.force.x, req.wrench.force.y, req.wrench.force.z = force
    res = client.call(client._client(ApplyWrench, "/simulator/apply_wrench"), req)
    assert res.success, res.message
    est = tc.settled_force(client, force)
    assert rel_err(est, force) < 0.05
    wait_for(lambda: "TC0_contact" in frames, 20, "TouchContact's contact frame on /tf")
    assert frames["TC0_contact"].header.frame_id == "base_link"
    clear = ApplyWrench.Request(link_name="link7")
    assert client.call(client._client(ApplyWrench, "/simulator/apply_wrench"), clear).success
    wait_for(lambda: np.linalg.norm(tc.latest()[:3]) < 0.3, 30, "the estimate back to zero")

    # 2. ContactSimulation asks the simulator for the wrench (mode 'service': rc_arm has no external-torque var).
    client.create("CS", "CS0", base_link="base_link")
    cs = WrenchWatch(client, "/CS0/wrench_base")
    force2 = np.array([-6.0, 9.0, 4.0])
    goal = ApplyContact.Goal(link_name="link7", point=Point(x=0.0, y=0.0, z=0.05),
                             wrench=Wrench(), duration=0.0)
    goal.wrench.force.x, goal.wrench.force.y, goal.wrench.force.z = force2
    contact = Goal(client, ApplyContact, "/CS0/apply", goal)
    assert contact.accepted
    est = tc.settled_force(client, force2)
    assert rel_err(est, force2) < 0.05
    wait_for(lambda: cs.latest() is not None, 20, "ContactSimulation's wrench")
    np.testing.assert_allclose(cs.latest()[:3], force2, atol=1e-9)
    wait_for(lambda: "CS0_contact" in frames, 20, "ContactSimulation's contact frame on /tf")
    t = frames["CS0_contact"].transform.translation
    tc_t = frames["TC0_contact"].transform.translation
    assert abs(t.x - tc_t.x) + abs(t.y - tc_t.y) + abs(t.z - tc_t.z) < 0.01  # the same point on link7
    wait_for(lambda: contact.feedback, 20, "joint torque feedback")
    assert len(contact.feedback[-1].joint_torques) == 7
    # Cancelling takes the wrench away again.
    contact.cancel()
    result = contact.result(20)
    assert not result.success
    wait_for(lambda: np.linalg.norm(tc.latest()[:3]) < 0.3, 30, "the estimate back to zero after cancel")


def test_the_description_can_come_from_the_robot_description_topic(client, stack):
    from robot_core_interfaces.srv import GetVars

    # No URDF parameter: the node waits for the simulator's /robot_description (transient local).
    proc = start("rbc", "-r", "__node:=rbc_from_topic")
    try:
        proc.wait_for_output("rbc ready", 60)
        assert "from topic /robot_description" in proc.output()
        other = client._client(GetVars, "/rbc_from_topic/get_vars")
        wait_for(lambda: not any(client.call(other, GetVars.Request(vars=["q"])).stale), 30, "fresh q")
        got = client.call(other, GetVars.Request(joints=ARM, vars=["q"]))
        assert np.allclose(got.values, client.arm_q(), atol=0.01)
    finally:
        code = proc.stop()
    assert code == 0, proc.log_path.read_text()


def test_bad_tags_stop_the_node_with_an_error_naming_joint_var_and_field(tmp_path):
    text = RC_ARM.read_text().replace('field="velocity" field_array="true" index="1"',
                                      'field="velocty" field_array="true" index="1"', 1)
    bad = tmp_path / "bad_arm.urdf"
    bad.write_text(text)
    proc = start("rbc", "-p", f"urdf_path:={bad}")
    try:
        wait_for(lambda: not proc.alive(), 60, "rbc to exit on bad tags")
    finally:
        code = proc.stop()
    out = proc.log_path.read_text()
    assert code == 2, out
    for fragment in ("invalid <rbc> tags", "bad_arm.urdf", "joint 'joint2'", "var 'qd'", "field 'velocty'"):
        assert fragment in out, out

    untagged = tmp_path / "untagged.urdf"
    root = ET.parse(PLANAR2).getroot()
    for j in root.findall("joint"):
        for r in j.findall("rbc"):
            j.remove(r)
    untagged.write_text(ET.tostring(root, encoding="unicode"))
    proc = start("rbc", "-p", f"urdf_path:={untagged}")
    try:
        wait_for(lambda: not proc.alive(), 60, "rbc to exit without tags")
    finally:
        code = proc.stop()
    out = proc.log_path.read_text()
    assert code == 2 and "has no <rbc> tags" in out, out

    # The RBC documentation starts its rbc.py with the robot's file: the one argument is urdf_path (read at once:
    # without it the node would wait for a description on its topic).
    proc = NodeProcess.console_script("rbc", str(untagged))
    try:
        wait_for(lambda: not proc.alive(), 60, "rbc to exit on the untagged file given as its argument")
    finally:
        code = proc.stop()
    out = proc.log_path.read_text()
    assert code == 2 and "untagged.urdf" in out and "has no <rbc> tags" in out, out
    proc = NodeProcess.console_script("rbc", str(untagged), "extra.urdf")
    try:
        wait_for(lambda: not proc.alive(), 60, "rbc to exit on two arguments")
    finally:
        code = proc.stop()
    out = proc.log_path.read_text()
    assert code == 2 and "at most one argument" in out, out


def test_a_driver_that_stops_publishing_makes_its_vars_stale_while_the_node_keeps_running(ros, tmp_path):
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    topic = "/fake_driver/joint_states"
    urdf = fake_driver_urdf(tmp_path / "planar2_fake.urdf", topic)
    proc = start("rbc", "-r", "__node:=rbc_stale", "-p", f"urdf_path:={urdf}", "-p", "stale_timeout:=0.3")
    try:
        proc.wait_for_output("rbc ready", 60)
        c = Client(ros, rbc="/rbc_stale")
        outputs: list[Any] = []
        stale_reports: list[dict[str, Any]] = []
        c.node.create_subscription(JointState, "/rbc_stale/q", outputs.append, 10)
        # ~/stale is latched and published only when the set of stale topics changes: a volatile subscription
        # that the rbc discovers after the change (a loaded machine) would never see it.
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        c.node.create_subscription(String, "/rbc_stale/stale", lambda m: stale_reports.append(json.loads(m.data)),
                                   latched)
        driver = c.node.create_publisher(JointState, topic, 10)
        alive = threading.Event()
        alive.set()
        stop = threading.Event()

        def drive() -> None:
            k = 0
            while not stop.is_set():
                if alive.is_set():
                    driver.publish(JointState(name=["joint1", "joint2"], position=[0.1 + 1e-4 * k, -0.2]))
                    k += 1
                time.sleep(0.02)

        thread = threading.Thread(target=drive, daemon=True)
        thread.start()
        try:
            wait_for(lambda: outputs and outputs[-1].position[0] > 0.09 and outputs[-1].position[1] == -0.2, 30,
                     "fresh q on /rbc_stale/q")
            got = c.get_vars([], ["q"])
            assert got.success and not any(got.stale)
            wait_for(lambda: stale_reports and stale_reports[-1]["stale_topics"] == [], 20, "an empty stale report")

            alive.clear()  # the driver dies
            wait_for(lambda: outputs and all(math.isnan(v) for v in outputs[-1].position), 20, "NaN outputs")
            # polled: a message the driver sent just before it died may still arrive late on a loaded machine and
            # make q fresh again for one stale_timeout
            got = wait_for(lambda: (g := c.get_vars([], ["q"])).success and all(g.stale) and g, 20,
                           "q flagged stale by ~/get_vars", poll=0.1)
            assert got.values[1] == -0.2  # last value kept, flagged stale
            wait_for(lambda: stale_reports and stale_reports[-1]["stale_topics"] == [topic], 20, "stale report")
            assert stale_reports[-1]["stale_vars"] == ["joint1/q", "joint2/q"]
            n = len(outputs)
            wait_for(lambda: len(outputs) > n + 10, 20, "outputs to keep coming while the driver is dead")
            assert c.l2_ctrl("list_re").success and proc.alive()

            alive.set()  # and comes back
            wait_for(lambda: not any(math.isnan(v) for v in outputs[-1].position), 20, "fresh outputs again")
            wait_for(lambda: not any(c.get_vars([], ["q"]).stale), 20, "q fresh again in ~/get_vars", poll=0.1)
        finally:
            stop.set()
            thread.join(timeout=5)
        assert f"state topic '{topic}' stopped" in proc.output()
    finally:
        code = proc.stop()
    assert code == 0, proc.log_path.read_text()
