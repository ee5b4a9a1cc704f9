"""rbc node glue without DDS: GetVars selections, command inputs, goal/feedback/result and derived conversions."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sensor_msgs.msg import JointState

from robot_core.model import load_robot
from robot_core.physics.frame_prefix import FramePrefix
from robot_core.rbc.coupler import Coupler
from robot_core.rbc.errors import RbcGoalError
from robot_core.rbc.rotations import quat_xyzw_to_matrix
from robot_core.ros.rbc_messages import (
    SelectionError,
    actions_for,
    apply_wrench_request,
    contact_goal,
    derived_messages,
    documented_joint_goal,
    documented_pose_goal,
    expand_selection,
    joint_goal,
    joint_state_values,
    jsonable,
    pose_goal,
    transform_from_pose,
)

ROOT = Path(__file__).resolve().parents[1]
ARM = [f"joint{i}" for i in range(1, 8)]


@pytest.fixture(scope="module")
def table():
    return Coupler(load_robot(str(ROOT / "urdf" / "rc_arm.urdf"))).table


def test_selection_empty_means_everything(table):
    pairs = expand_selection(table, [], [])
    assert len(pairs) == len(table.entries()) and ("joint1", "q_desired") in pairs
    assert expand_selection(table, [], ["q"]) == [(j, "q") for j in table.aggregate("q").joints]
    joint1 = expand_selection(table, ["joint1"], [])
    assert {v for _, v in joint1} == {"q", "qd", "tau", "q_ref", "qd_ref", "q_desired"}


def test_selection_pairs_and_broadcasts(table):
    assert expand_selection(table, ["joint1", "joint2"], ["q", "qd"]) == [("joint1", "q"), ("joint2", "qd")]
    assert expand_selection(table, ARM[:3], ["q"]) == [(j, "q") for j in ARM[:3]]
    assert expand_selection(table, ["joint4"], ["q", "tau"]) == [("joint4", "q"), ("joint4", "tau")]
    with pytest.raises(SelectionError, match="3 joints but 2 vars"):
        expand_selection(table, ARM[:3], ["q", "qd"])
    with pytest.raises(SelectionError, match="no joint has var 'nope'"):
        expand_selection(table, [], ["nope"])
    with pytest.raises(SelectionError, match="joint 'elbow' has no rbc vars"):
        expand_selection(table, ["elbow"], [])


def test_command_input_takes_the_first_non_empty_array():
    assert joint_state_values(JointState(name=["a", "b"], position=[1.0, 2.0]), "q_ref") == (["a", "b"], [1.0, 2.0])
    assert joint_state_values(JointState(name=["a"], velocity=[0.5]), "qd_ref") == (["a"], [0.5])
    with pytest.raises(SelectionError, match="2 names but 1 position values"):
        joint_state_values(JointState(name=["a", "b"], position=[1.0]), "q_ref")
    with pytest.raises(SelectionError, match="no names"):
        joint_state_values(JointState(position=[1.0]), "q_ref")
    with pytest.raises(SelectionError, match="all empty"):
        joint_state_values(JointState(name=["a"]), "q_ref")


def test_goals_from_action_messages():
    from robot_core_interfaces.action import ApplyContact, CartesianReach, JointReach

    g = joint_goal(JointReach.Goal(joint_names=["joint1", "joint2"], positions=[0.1, 0.2], precision=0.01,
                                   timeout=3.0))
    assert g.positions == {"joint1": 0.1, "joint2": 0.2} and g.precision == 0.01 and g.timeout == 3.0
    with pytest.raises(SelectionError, match="2 joint_names but 1 positions"):
        joint_goal(JointReach.Goal(joint_names=["joint1", "joint2"], positions=[0.1]))
    with pytest.raises(RbcGoalError, match="twice"):
        joint_goal(JointReach.Goal(joint_names=["joint1", "joint1"], positions=[0.1, 0.2]))

    msg = CartesianReach.Goal(linear_precision=0.002, timeout=5.0)
    msg.pose.position.x, msg.pose.orientation.w, msg.pose.orientation.z = 0.3, 0.0, 1.0
    p = pose_goal(msg)
    assert list(p.position) == [0.3, 0.0, 0.0] and list(p.orientation) == [0.0, 0.0, 1.0, 0.0]
    assert (p.linear_precision, p.angular_precision, p.timeout) == (0.002, 0.0, 5.0)

    c = ApplyContact.Goal(link_name="link7", duration=0.5)
    c.point.z, c.wrench.force.x, c.wrench.torque.y = 0.05, 3.0, -1.0
    cg = contact_goal(c)
    assert cg.link == "link7" and cg.point == [0.0, 0.0, 0.05] and cg.duration == 0.5
    assert list(cg.force) == [3.0, 0.0, 0.0] and list(cg.torque) == [0.0, -1.0, 0.0]
    assert contact_goal(ApplyContact.Goal()).point is None  # no link: the instance's link and point


def test_feedback_and_result_messages():
    jr = actions_for("JR")[0]
    assert jr.suffix == "reach" and actions_for("TC") == ()
    fb = jr.feedback({"joint_names": ["joint1"], "error": [0.25]})
    assert list(fb.joint_names) == ["joint1"] and list(fb.error) == [0.25]
    res = jr.result(True, "ok", {"final_error": [0.001, -0.002]})
    assert res.success and res.message == "ok" and list(res.final_error) == [0.001, -0.002]
    vf = actions_for("VF")[0]
    aborted = vf.result(False, "preempted", {})
    assert not aborted.success and math.isnan(aborted.linear_error) and math.isnan(aborted.angular_error)
    assert vf.result(True, "", {"linear_error": 0.0005, "angular_error": 0.002}).linear_error == 0.0005
    (cs,) = actions_for("CS")
    assert cs.suffix == "apply"
    assert list(cs.feedback({"joint_torques": np.array([1.0, 2.0])}).joint_torques) == [1.0, 2.0]


def test_derived_contact_data_to_tf_and_wrenches():
    from builtin_interfaces.msg import Time

    r = quat_xyzw_to_matrix(np.array([0.0, 0.0, math.sin(0.3), math.cos(0.3)]))
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = r, [0.1, 0.2, 0.3]
    stamp = Time(sec=3, nanosec=5)
    t = transform_from_pose(pose, "base_link", "TC0_contact", stamp)
    assert (t.header.frame_id, t.child_frame_id, t.header.stamp.sec) == ("base_link", "TC0_contact", 3)
    q = t.transform.rotation
    np.testing.assert_allclose(quat_xyzw_to_matrix(np.array([q.x, q.y, q.z, q.w])), r, atol=1e-12)
    assert (t.transform.translation.x, t.transform.translation.z) == (0.1, 0.3)

    w = np.array([1.0, 2.0, 3.0, 0.1, 0.2, 0.3])
    out = derived_messages({"contact_pose": pose, "frame_id": "F", "base_link": "base_link", "wrench": w,
                            "wrench_in_contact_frame": np.concatenate([r.T @ w[:3], r.T @ w[3:]])}, stamp)
    assert out.transform is not None and out.wrench_base is not None and out.wrench_contact is not None
    assert out.wrench_base.header.frame_id == "base_link" and out.wrench_contact.header.frame_id == "F"
    assert out.wrench_base.wrench.force.z == 3.0 and out.wrench_base.wrench.torque.x == 0.1
    fc = out.wrench_contact.wrench.force
    np.testing.assert_allclose(r @ [fc.x, fc.y, fc.z], w[:3], atol=1e-12)
    assert derived_messages({"stale_joints": ["joint1"]}, stamp).transform is None  # nothing to publish
    # under a namespace the robot's frames carry its prefix, as the robot's own tf (FramePrefix)
    out = derived_messages({"contact_pose": pose, "frame_id": "F", "base_link": "base_link", "wrench": w,
                            "wrench_in_contact_frame": w}, stamp, FramePrefix("arm1/"))
    assert (out.transform.header.frame_id, out.transform.child_frame_id) == ("arm1/base_link", "arm1/F")
    assert (out.wrench_base.header.frame_id, out.wrench_contact.header.frame_id) == ("arm1/base_link", "arm1/F")


def test_apply_wrench_request_and_json():
    req = apply_wrench_request({"link_name": "hand", "reference_point": [0.0, 0.0, 0.08], "force": [3.0, -9.0, 4.0],
                                "torque": [0.0, 0.1, 0.0], "duration": 1.25})
    assert req.link_name == "hand" and req.reference_point.z == 0.08
    assert (req.wrench.force.y, req.wrench.torque.y) == (-9.0, 0.1)
    assert (req.duration.sec, req.duration.nanosec) == (1, 250_000_000)
    assert jsonable({"a": np.array([[1.0, 2.0]]), "b": np.float64(0.5), "c": (np.int64(2),)}) == {
        "a": [[1.0, 2.0]], "b": 0.5, "c": [2]}


def test_documented_goals_zero_precision_is_default_and_zero_timeout_none():
    pytest.importorskip("rbc_actions")
    from rbc_actions.action import VF, JointReacher
    from rbc_actions.msg import JointValue

    vf = VF.Goal()
    vf.goal.position.x, vf.goal.orientation.y, vf.goal.orientation.w = 0.18, 0.7, 0.7
    g = documented_pose_goal(vf)
    assert g.position == [0.18, 0.0, 0.0] and g.orientation == [0.0, 0.7, 0.0, 0.7]
    assert g.timeout == math.inf and g.linear_tolerance == [0.0, 0.0, 0.0]  # all zero: the reacher's defaults
    vf.precision.linear.z, vf.timeout.sec, vf.timeout.nanosec = 0.004, 2, 500_000_000
    g = documented_pose_goal(vf)
    assert g.linear_tolerance == [0.0, 0.0, 0.004] and g.timeout == 2.5
    vf.timeout.sec = -1
    with pytest.raises(ValueError, match="timeout must not be negative"):
        documented_pose_goal(vf)

    jr = JointReacher.Goal(goal=[JointValue(joint="aplator_j1", value=1.0), JointValue(joint="aplator_j2", value=0.7)])
    j = documented_joint_goal(jr)
    assert j.positions == {"aplator_j1": 1.0, "aplator_j2": 0.7} and j.precision == 0.0 and j.timeout == math.inf
    jr.goal.append(JointValue(joint="aplator_j1", value=0.0))
    with pytest.raises(ValueError, match="appears twice"):
        documented_joint_goal(jr)


def test_documented_feedback_and_results():
    pytest.importorskip("rbc_actions")
    jr, vf = actions_for("JR")[1], actions_for("VF")[1]
    assert (jr.suffix, jr.type_name, vf.suffix, vf.type_name) == ("action", "JointReacher", "action", "VF")
    fb = jr.feedback({"joint_names": ["j0", "j1"], "error": [0.25, -0.5]})
    assert [(e.joint, e.value) for e in fb.error] == [("j0", 0.25), ("j1", -0.5)]
    res = jr.result(False, "timeout", {"joint_names": ["j0"], "final_error": [0.1]})
    assert not res.success and res.message == "timeout" and res.error[0].value == 0.1
    fb = vf.feedback({"position": [0.1, 0.2, 0.3], "orientation": [0.0, 0.0, 0.0, 1.0],
                      "error_vector": [0.01, 0.0, 0.0, 0.0, 0.02, 0.0]})
    assert fb.pose.position.y == 0.2 and fb.pose.orientation.w == 1.0
    assert fb.error.linear.x == 0.01 and fb.error.angular.y == 0.02
    aborted = vf.result(False, "destroyed", {})
    assert math.isnan(aborted.pose.position.x) and math.isnan(aborted.error.angular.z)
