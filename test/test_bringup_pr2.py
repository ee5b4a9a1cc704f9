"""`robot-core bringup --robot pr2`: the whole PR2 of example-robot-data comes up in topic mode with every controller
of config/pr2_controllers.yaml active, the actuator interfaces of its transmissions listed, and an arm's trajectory
goal succeeds. Prints the simulator's achieved real-time factor (the full PR2 costs CPU on a 2-core machine).
"""

from __future__ import annotations

import signal
import statistics
import uuid

import pytest
from ros_harness import NodeProcess, wait_for, wait_future

from robot_core.bringup.run import READY_PREFIX
from robot_core.bringup.supervisor import MARKER_ENV, processes_with_marker

pytest.importorskip("rclpy")
pytestmark = [pytest.mark.ros, pytest.mark.slow]

ACTIVE = ["joint_state_broadcaster", "r_arm_controller", "l_arm_controller", "torso_controller", "head_controller",
          "r_gripper_controller", "l_gripper_controller"]


def test_pr2_bringup_all_controllers_active_and_an_arm_goal_succeeds(ros, processes, erd_robots):
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from controller_manager_msgs.srv import ListControllers, ListHardwareInterfaces
    from robot_core_interfaces.msg import SimulatorStatus
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectoryPoint

    from robot_core.ros.action_client import ActionClient

    marker = f"test-bringup-pr2-{uuid.uuid4().hex}"
    proc = NodeProcess.console_script("robot-core", "bringup", "--robot", "pr2", "--no-rbc", "--headless",
                                      env={MARKER_ENV: marker})
    processes.append(proc)
    proc.wait_for_output(READY_PREFIX, timeout=240)
    node = ros.node("pr2_client")

    lister = node.create_client(ListControllers, "/controller_manager/list_controllers")
    assert lister.wait_for_service(timeout_sec=30)
    states = {c.name: c.state for c in wait_future(lister.call_async(ListControllers.Request()), 30).controller}
    assert states == dict.fromkeys(ACTIVE, "active")

    hw = node.create_client(ListHardwareInterfaces, "/controller_manager/list_hardware_interfaces")
    assert hw.wait_for_service(timeout_sec=30)
    reply = wait_future(hw.call_async(ListHardwareInterfaces.Request()), 30)
    commands = {i.name: i.is_claimed for i in reply.command_interfaces}
    assert commands["r_wrist_flex_joint/position"] and not commands["r_wrist_r_motor/position"]
    assert "r_gripper_motor/position" in commands and "l_wrist_l_motor/effort" in {i.name for i in
                                                                                   reply.state_interfaces}

    status: list[SimulatorStatus] = []
    node.create_subscription(SimulatorStatus, "/simulator/status", status.append, 10)
    seen: list[JointState] = []
    node.create_subscription(JointState, "/joint_states", seen.append, 10)
    wait_for(lambda: seen, 30, "/joint_states")
    names = list(seen[-1].name)
    # config/pr2_simulator.yaml starts the arms lowered, where the shoulders' 30 N m hold them
    lift = names.index("r_shoulder_lift_joint")
    assert abs(seen[-1].position[lift] - 1.1) < 0.05, seen[-1].position[lift]
    joint = "r_shoulder_pan_joint"
    start = seen[-1].position[names.index(joint)]
    target = start - 0.4
    client = ActionClient(node, FollowJointTrajectory, "/r_arm_controller/follow_joint_trajectory")
    assert client.wait_for_server(timeout_sec=30)
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = [joint, "r_elbow_flex_joint"]
    goal.trajectory.points = [JointTrajectoryPoint(positions=[target, -0.5], time_from_start=Duration(sec=2))]
    handle = wait_future(client.send_goal_async(goal), 30, "goal acceptance")
    assert handle.accepted
    result = wait_future(handle.get_result_async(), 120, "trajectory result").result
    assert result.error_code == FollowJointTrajectory.Result.SUCCESSFUL, result.error_string
    wait_for(lambda: abs(seen[-1].position[names.index(joint)] - target) < 0.03, 20, f"{joint} at the goal")
    wait_for(lambda: len(status) >= 5, 30, "simulator status")
    rtf = [s.real_time_factor for s in status[-10:]]
    print(f"PR2 topic mode (sim dt 1 ms, manager 100 Hz): achieved real-time factor median "
          f"{statistics.median(rtf):.2f} (min {min(rtf):.2f}, max {max(rtf):.2f}) over {len(rtf)} status messages")

    proc.proc.send_signal(signal.SIGINT)
    assert proc.proc.wait(timeout=60) == 0, proc.output()[-3000:]
    wait_for(lambda: not processes_with_marker(marker), 10, "every bringup process to be gone")
