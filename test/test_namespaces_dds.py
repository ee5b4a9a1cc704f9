"""Two robots side by side in one ROS graph: `robot-core bringup --namespace arm1` and `--namespace arm2` (each its
own simulator and controller manager, topic mode) run at the same time without a name clash, and both arms follow
a trajectory goal sent to each at the same moment; the unspawner's `-c /arm1/controller_manager` reaches one manager."""

from __future__ import annotations

import signal
import uuid

import pytest
from ros_harness import REPO, NodeProcess, wait_for, wait_future

from robot_core.bringup.run import READY_PREFIX, rbc_available
from robot_core.bringup.supervisor import MARKER_ENV, processes_with_marker

pytest.importorskip("rclpy")
pytestmark = [pytest.mark.ros, pytest.mark.slow]

ROBOTS = {"arm1": 0.3, "arm2": -0.25}  # namespace -> joint1 target relative to its start


def test_two_namespaced_arms_follow_goals_at_the_same_time(ros, processes):
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from controller_manager_msgs.srv import ListControllers
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage
    from trajectory_msgs.msg import JointTrajectoryPoint

    from robot_core.ros.action_client import ActionClient

    marker = f"test-namespaces-{uuid.uuid4().hex}"
    procs = {}
    for ns in ROBOTS:
        procs[ns] = NodeProcess.console_script("robot-core", "bringup", "--namespace", ns, "--headless",
                                               env={MARKER_ENV: marker}, cwd=REPO)
        processes.append(procs[ns])
    for proc in procs.values():
        proc.wait_for_output(READY_PREFIX, timeout=240)
    node = ros.node("namespaces_client")

    # the graph: every node and topic of a robot under its namespace, none left in the root namespace
    def graph_complete() -> bool:
        nodes = set(node.get_node_names_and_namespaces())
        return all((name, f"/{ns}") in nodes for ns in ROBOTS for name in ("simulator", "controller_manager",
                                                                          "joint_trajectory_controller", "rbc"))
    wait_for(graph_complete, 30, "both robots' nodes in the graph")
    nodes = set(node.get_node_names_and_namespaces())
    in_root = {("simulator", "/"), ("controller_manager", "/"), ("joint_state_broadcaster", "/"), ("rbc", "/")}
    assert not in_root & nodes, nodes
    wanted = {f"/{ns}/{t}" for ns in ROBOTS
              for t in ("robot_joint_states", "robot_joint_commands", "joint_states", "clock", "robot_description")}
    # topics are discovered after their nodes (a quiet CI run listed the graph before /arm1/robot_description)
    wait_for(lambda: wanted <= {name for name, _ in node.get_topic_names_and_types()}, 30,
             f"the namespaced topics {sorted(wanted)} in the graph")
    topics = {name for name, _ in node.get_topic_names_and_types()}
    root = {"/robot_joint_states", "/robot_joint_commands", "/joint_states", "/robot_description",
            "/forward_position_controller/commands", "/joint_trajectory_controller/controller_state"} & topics
    assert not root, {t: [(i.node_namespace, i.node_name) for i in node.get_publishers_info_by_topic(t)
                          + node.get_subscriptions_info_by_topic(t)] for t in root}
    assert not node.get_publishers_info_by_topic("/clock")  # each simulator's time is its own: /<ns>/clock

    # /tf and /tf_static are shared, with each robot's frames under its prefix
    frames: set[tuple[str, str]] = set()
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(TFMessage, "/tf", lambda m: frames.update(
        (t.header.frame_id, t.child_frame_id) for t in m.transforms), 50)
    node.create_subscription(TFMessage, "/tf_static", lambda m: frames.update(
        (t.header.frame_id, t.child_frame_id) for t in m.transforms), latched)
    wait_for(lambda: all((f"{ns}/link1", f"{ns}/link2") in frames and (f"{ns}/base_link", f"{ns}/link1") in frames
                         for ns in ROBOTS), 30, "both robots' prefixed frames on /tf")
    assert not any(parent == "base_link" or child == "link1" for parent, child in frames), frames

    # the controller manager of each, as `ros2 control list_controllers -c /<ns>/controller_manager`
    for ns in ROBOTS:
        lister = node.create_client(ListControllers, f"/{ns}/controller_manager/list_controllers")
        assert lister.wait_for_service(timeout_sec=30)
        states = {c.name: c.state for c in wait_future(lister.call_async(ListControllers.Request()), 30).controller}
        assert states["joint_trajectory_controller"] == "active", (ns, states)

    # each robot's RBC in its namespace, its state vars fed from its own robot (the <rbc> tags' absolute topics
    # remapped into the namespace): `ros2 service call /<ns>/rbc/l2_ctrl ...`, `ros2 topic echo /<ns>/rbc/q`
    if rbc_available():
        from robot_core_interfaces.srv import L2Control

        outputs: dict[str, list[JointState]] = {ns: [] for ns in ROBOTS}
        for ns in ROBOTS:
            l2 = node.create_client(L2Control, f"/{ns}/rbc/l2_ctrl")
            assert l2.wait_for_service(timeout_sec=30)
            types = wait_future(l2.call_async(L2Control.Request(cmd="list_re", data="types")), 30)
            assert types.success and "JR" in types.names
            node.create_subscription(JointState, f"/{ns}/rbc/q", outputs[ns].append, 10)
        wait_for(lambda: all(any(m.position and m.position[0] == m.position[0] for m in out)
                             for out in outputs.values()), 30, "/<ns>/rbc/q fed from each robot's states")

    # both goals at the same time
    seen: dict[str, list[JointState]] = {ns: [] for ns in ROBOTS}
    for ns in ROBOTS:
        node.create_subscription(JointState, f"/{ns}/joint_states", seen[ns].append, 10)
    wait_for(lambda: all(seen.values()), 30, "/<ns>/joint_states of both")

    def joint1(ns: str) -> float:
        msg = seen[ns][-1]
        return msg.position[list(msg.name).index("joint1")]

    targets = {ns: joint1(ns) + delta for ns, delta in ROBOTS.items()}
    clients = {ns: ActionClient(node, FollowJointTrajectory, f"/{ns}/joint_trajectory_controller/"
                                "follow_joint_trajectory") for ns in ROBOTS}
    for client in clients.values():
        assert client.wait_for_server(timeout_sec=30)
    sent = {}
    for ns, client in clients.items():
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = ["joint1"]
        goal.trajectory.points = [JointTrajectoryPoint(positions=[targets[ns]], time_from_start=Duration(sec=2))]
        sent[ns] = client.send_goal_async(goal)
    handles = {ns: wait_future(f, 30, f"{ns} goal acceptance") for ns, f in sent.items()}
    assert all(h.accepted for h in handles.values())
    results = {ns: h.get_result_async() for ns, h in handles.items()}
    for ns, future in results.items():
        result = wait_future(future, 90, f"{ns} trajectory result").result
        assert result.error_code == FollowJointTrajectory.Result.SUCCESSFUL, (ns, result.error_string)
    for ns in ROBOTS:
        wait_for(lambda ns=ns: abs(joint1(ns) - targets[ns]) < 0.03, 15, f"{ns} joint1 at its own goal")

    # `unspawner ... -c /arm1/controller_manager` reaches arm1's manager only
    unspawn = NodeProcess.console_script("unspawner", "gripper_controller", "-c", "/arm1/controller_manager")
    processes.append(unspawn)
    assert unspawn.proc.wait(timeout=60) == 0, unspawn.output()
    loaded = {}
    for ns in ROBOTS:
        lister = node.create_client(ListControllers, f"/{ns}/controller_manager/list_controllers")
        loaded[ns] = {c.name for c in wait_future(lister.call_async(ListControllers.Request()), 30).controller}
    assert "gripper_controller" not in loaded["arm1"] and "gripper_controller" in loaded["arm2"]

    for proc in procs.values():
        proc.proc.send_signal(signal.SIGINT)
    for proc in procs.values():
        assert proc.proc.wait(timeout=60) == 0, proc.output()[-3000:]
    wait_for(lambda: not processes_with_marker(marker), 15, "every bringup process to be gone")
