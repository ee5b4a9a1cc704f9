"""Foundation: the interface packages built by the set-up carry real traffic between two processes."""

from __future__ import annotations

from pathlib import Path

import pytest
from ros_harness import NodeProcess, wait_for, wait_future

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

PEER = Path(__file__).parent / "peers" / "interface_peer.py"


@pytest.fixture
def peer(processes):
    proc = NodeProcess.python(PEER)
    processes.append(proc)
    proc.wait_for_output("interface peer ready", timeout=30)
    return proc


def test_follow_joint_trajectory_goal_feedback_and_result(ros, peer):
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    from robot_core.ros.action_client import ActionClient

    node = ros.node("fjt_client")
    client = ActionClient(node, FollowJointTrajectory, "/peer/follow_joint_trajectory")
    assert client.wait_for_server(timeout_sec=20), "peer action server not discovered"

    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = ["joint1", "joint2"]
    for k in range(3):
        goal.trajectory.points.append(
            JointTrajectoryPoint(positions=[0.1 * k, -0.1 * k], time_from_start=Duration(sec=k + 1)))
    feedback: list[FollowJointTrajectory.Feedback] = []
    handle = wait_future(client.send_goal_async(goal, feedback_callback=lambda f: feedback.append(f.feedback)),
                         10, "goal acceptance")
    assert handle.accepted
    result = wait_future(handle.get_result_async(), 10, "goal result").result
    assert result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    assert result.error_string == "followed 3 points"
    indices = [f.index for f in feedback]
    assert sorted(set(indices)) == [0, 1, 2] and indices == sorted(indices), indices
    last = next(f for f in feedback if f.index == 2)
    assert list(last.desired.positions) == pytest.approx([0.2, -0.2])

    empty = FollowJointTrajectory.Goal()
    empty.trajectory.joint_names = ["joint1"]
    rejected = wait_future(client.send_goal_async(empty), 10, "rejection")
    assert not rejected.accepted


def test_switch_controller_service(ros, peer):
    from controller_manager_msgs.srv import SwitchController

    node = ros.node("switch_client")
    client = node.create_client(SwitchController, "/peer/switch_controller")
    assert client.wait_for_service(timeout_sec=20)
    req = SwitchController.Request(activate_controllers=["jtc"], deactivate_controllers=["fwd"],
                                   strictness=SwitchController.Request.STRICT)
    res = wait_future(client.call_async(req), 10, "switch response")
    assert res.ok and "activate ['jtc']" in res.message
    req.deactivate_controllers = ["jtc"]
    res = wait_future(client.call_async(req), 10, "switch response")
    assert not res.ok and "overlap ['jtc']" in res.message


def test_tf_message_pub_sub(ros, peer):
    from geometry_msgs.msg import TransformStamped
    from tf2_msgs.msg import TFMessage

    node = ros.node("tf_client")
    received: list[TFMessage] = []
    node.create_subscription(TFMessage, "/peer/tf_out", received.append, 10)
    pub = node.create_publisher(TFMessage, "/peer/tf_in", 10)
    wait_for(lambda: pub.get_subscription_count() > 0 and node.count_publishers("/peer/tf_out") > 0, 20,
             "peer tf topics")
    t = TransformStamped()
    t.header.frame_id = "base_link"
    t.child_frame_id = "tool0"
    t.transform.translation.x = 0.5
    t.transform.rotation.w = 1.0

    def sent_and_echoed():
        pub.publish(TFMessage(transforms=[t]))
        return received

    wait_for(sent_and_echoed, 10, "echoed TFMessage", poll=0.1)
    echoed = received[0].transforms[0]
    assert echoed.child_frame_id == "tool0_echo"
    assert echoed.transform.translation.x == pytest.approx(0.5)


def test_robot_core_interfaces_service(ros, peer):
    from robot_core_interfaces.srv import StepSimulation

    node = ros.node("step_client")
    client = node.create_client(StepSimulation, "/peer/step")
    assert client.wait_for_service(timeout_sec=20)
    wait_future(client.call_async(StepSimulation.Request(steps=1500)), 10)
    res = wait_future(client.call_async(StepSimulation.Request(steps=500)), 10)
    assert res.success and res.step_count == 2000
    assert (res.sim_time.sec, res.sim_time.nanosec) == (2, 0)
