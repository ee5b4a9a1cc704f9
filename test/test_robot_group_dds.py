"""Many robots in one simulator: a robots file puts two rc_arms into one MuJoCo world (robot_core.model.robot_group),
each with its namespace, base pose and topic pair; two controller managers (`-r __ns:=/arm1`, `/arm2`) drive them
through their own topics, and both follow a trajectory goal sent at the same moment."""

from __future__ import annotations

import pytest
import yaml
from ros_harness import REPO, NodeProcess, wait_for, wait_future

from robot_core.bringup.plan import namespaced_parameters

pytest.importorskip("rclpy")
pytestmark = [pytest.mark.ros, pytest.mark.slow]

TARGETS = {"arm1": 0.3, "arm2": -0.25}


def test_two_arms_in_one_simulator_follow_goals_at_the_same_time(ros, processes, tmp_path):
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage
    from trajectory_msgs.msg import JointTrajectoryPoint

    from robot_core.ros.action_client import ActionClient

    robots = tmp_path / "robots.yaml"
    robots.write_text(yaml.safe_dump({"robots": [
        {"namespace": "arm1", "description": str(REPO / "urdf" / "rc_arm.urdf"), "base_pose": [0.0, -0.6, 0.0]},
        {"namespace": "arm2", "description": str(REPO / "urdf" / "rc_arm.urdf"),
         "base_pose": [0.0, 0.6, 0.0, 0.0, 0.0, 3.14159]}]}))
    sim = NodeProcess.console_script("simulator", "--ros-args", "-p", f"robots:={robots}", "-p", "cameras:=false")
    processes.append(sim)
    sim.wait_for_output("robot group from", timeout=120)
    controllers = yaml.safe_load((REPO / "config" / "controllers.yaml").read_text())
    for ns in TARGETS:
        params = tmp_path / f"{ns}_controllers.yaml"
        params.write_text(yaml.safe_dump(namespaced_parameters(controllers, f"/{ns}")))
        processes.append(NodeProcess.console_script(
            "controller_manager", "--ros-args", "-r", f"__ns:=/{ns}", "--params-file", str(params),
            "-p", f"robot_description_file:={REPO / 'urdf' / 'rc_arm.urdf'}", "-p", "hardware_mode:=topic",
            "-p", "use_sim_time:=true", "-p", "publish_robot_description:=false"))
    spawners = [NodeProcess.console_script("spawner", "joint_state_broadcaster", "joint_trajectory_controller",
                                           "-c", f"/{ns}/controller_manager", "--controller-manager-timeout", "120")
                for ns in TARGETS]
    processes.extend(spawners)
    for spawner in spawners:
        assert spawner.proc.wait(timeout=180) == 0, spawner.output()[-3000:]

    node = ros.node("robot_group_client")
    seen: dict[str, list[JointState]] = {ns: [] for ns in TARGETS}
    for ns in TARGETS:
        node.create_subscription(JointState, f"/{ns}/joint_states", seen[ns].append, 10)
    frames: set[tuple[str, str]] = set()
    node.create_subscription(TFMessage, "/tf", lambda m: frames.update(
        (t.header.frame_id, t.child_frame_id) for t in m.transforms), 50)
    wait_for(lambda: all(seen.values()), 30, "/<ns>/joint_states of both")
    # each robot's own joint names on its own topics; one tf tree with both robots' prefixed frames
    assert sorted(seen["arm1"][-1].name) == sorted(seen["arm2"][-1].name) and "joint1" in seen["arm1"][-1].name
    wait_for(lambda: {("arm1/base_link", "arm1/link1"), ("arm2/base_link", "arm2/link1")} <= frames, 30,
             "both robots' frames on /tf")
    topics = {name for name, _ in node.get_topic_names_and_types()}
    assert not {"/robot_joint_states", "/robot_joint_commands"} & topics

    def joint1(ns: str) -> float:
        msg = seen[ns][-1]
        return msg.position[list(msg.name).index("joint1")]

    targets = {ns: joint1(ns) + delta for ns, delta in TARGETS.items()}
    handles = {}
    for ns in TARGETS:
        client = ActionClient(node, FollowJointTrajectory, f"/{ns}/joint_trajectory_controller/follow_joint_trajectory")
        assert client.wait_for_server(timeout_sec=30)
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = ["joint1"]
        goal.trajectory.points = [JointTrajectoryPoint(positions=[targets[ns]], time_from_start=Duration(sec=2))]
        handles[ns] = client.send_goal_async(goal)
    results = {}
    for ns, future in handles.items():
        handle = wait_future(future, 30, f"{ns} goal acceptance")
        assert handle.accepted
        results[ns] = handle.get_result_async()
    for ns, future in results.items():
        result = wait_future(future, 90, f"{ns} result").result
        assert result.error_code == FollowJointTrajectory.Result.SUCCESSFUL, (ns, result.error_string)
    for ns in TARGETS:
        wait_for(lambda ns=ns: abs(joint1(ns) - targets[ns]) < 0.03, 15, f"{ns} joint1 at its own goal")
    assert abs(targets["arm1"] - targets["arm2"]) > 0.3  # different goals, each reached by its own arm
