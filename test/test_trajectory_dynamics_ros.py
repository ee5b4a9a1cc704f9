"""A TrajectoryDynamics plan sent over DDS: the planar2 arm (vertical plane, gravity loads both joints) in the
embedded simulator, the computed-torque controller taking the plan as a FollowJointTrajectory goal with positions,
velocities, accelerations and effort, and the arm following it to the planned end."""

from __future__ import annotations

import numpy as np
import pytest
from cm_helpers import DATA, CmClient, JointStateRecorder, start_controller_manager, wait_goal_service
from ros_harness import REPO, wait_for, wait_future

from robot_core.kinematics import SerialKinematicChain, TrajectoryDynamics
from robot_core.model import load_robot

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

JOINTS = ["joint1", "joint2"]
URDF = REPO / "urdf" / "planar2.urdf"


def test_a_plan_is_a_computed_torque_goal(ros, processes):
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    from robot_core.ros.action_client import ActionClient

    start_controller_manager(processes, "hardware_mode:=embedded", f"robot_description_file:={URDF}",
                             yaml=DATA / "planar2_trajectory_dynamics.yaml")
    node = ros.node("trajectory_dynamics_client")
    cm = CmClient(node)
    rec = JointStateRecorder(node)
    cm.spawn("joint_state_broadcaster", "gravity_compensation")
    assert cm.load("computed_torque") and cm.configure("computed_torque")
    res = cm.switch(["computed_torque"], ["gravity_compensation"])
    assert res.ok, res.message
    client = ActionClient(node, FollowJointTrajectory, "/computed_torque/follow_joint_trajectory")
    assert client.wait_for_server(timeout_sec=20)
    wait_goal_service(client, JOINTS)
    wait_for(lambda: rec.positions(JOINTS) is not None, 20, "joint states")

    chain = SerialKinematicChain(load_robot(str(URDF)), "base_link", "tip")
    assert chain.joint_names == JOINTS
    td = TrajectoryDynamics(chain, dt=0.002, q_start=rec.positions(JOINTS), joint_damping=True)
    plan = td.solve(chain.forward_kinematics(np.array([0.4, -0.6])), 1.5)
    assert plan.success
    msg = plan.to_joint_trajectory(stride=25)
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = msg["joint_names"]
    goal.trajectory.points = [JointTrajectoryPoint(positions=p["positions"], velocities=p["velocities"],
                                                   accelerations=p["accelerations"], effort=p["effort"],
                                                   time_from_start=Duration(**p["time_from_start"]))
                              for p in msg["points"]]
    assert len(goal.trajectory.points) == 30 and all(len(p.effort) == 2 for p in goal.trajectory.points)
    handle = wait_future(client.send_goal_async(goal), 20, "goal response")
    assert handle.accepted
    result = wait_future(handle.get_result_async(), 60, "goal result")
    # SUCCESSFUL: within the path tolerance (0.05 rad) all the way and the goal tolerance (0.02 rad) at the end
    assert result.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL, result.result.error_string
    assert rec.positions(JOINTS) == pytest.approx(plan.q[-1].tolist(), abs=0.02)
