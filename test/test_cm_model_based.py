"""Model-based controllers through the node, on the planar2 arm (a vertical plane, so gravity loads both
joints) in the embedded simulator: gravity compensation holds the arm where it is, and the computed-torque
controller follows a FollowJointTrajectory goal with effort commands only."""

from __future__ import annotations

import pytest
from cm_helpers import DATA, CmClient, JointStateRecorder, start_controller_manager, wait_goal_service
from ros_harness import REPO, wait_for, wait_future

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

JOINTS = ["joint1", "joint2"]


def test_gravity_compensation_holds_and_computed_torque_tracks(ros, processes):
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    from robot_core.ros.action_client import ActionClient

    start_controller_manager(processes, "hardware_mode:=embedded",
                             f"robot_description_file:={REPO / 'urdf' / 'planar2.urdf'}",
                             yaml=DATA / "planar2_model_based.yaml")
    node = ros.node("model_based_client")
    cm = CmClient(node)
    rec = JointStateRecorder(node)
    cm.spawn("joint_state_broadcaster", "gravity_compensation")
    assert sorted(cm.controllers()["gravity_compensation"].claimed_interfaces) == ["joint1/effort",
                                                                                   "joint2/effort"]

    def stamp() -> float:
        m = rec.latest()
        return m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 if m else -1.0

    wait_for(lambda: stamp() > 0, 20, "joint states")
    start_t, start_q = stamp(), rec.positions(JOINTS)
    wait_for(lambda: stamp() > start_t + 2.0, 30, "two seconds of simulated time")
    drift = max(abs(a - b) for a, b in zip(rec.positions(JOINTS), start_q, strict=True))
    assert drift < 2e-3, f"the arm drifted {drift:.4f} rad under gravity compensation"

    assert cm.load("computed_torque") and cm.configure("computed_torque")
    res = cm.switch(["computed_torque"], ["gravity_compensation"])
    assert res.ok, res.message
    client = ActionClient(node, FollowJointTrajectory, "/computed_torque/follow_joint_trajectory")
    assert client.wait_for_server(timeout_sec=20)
    wait_goal_service(client, JOINTS)
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = JOINTS
    target = [0.3, -0.5]
    goal.trajectory.points = [JointTrajectoryPoint(positions=target, time_from_start=Duration(sec=2))]
    handle = wait_future(client.send_goal_async(goal), 20, "goal response")
    assert handle.accepted
    result = wait_future(handle.get_result_async(), 60, "goal result")
    assert result.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL, result.result.error_string
    assert rec.positions(JOINTS) == pytest.approx(target, abs=0.02)
