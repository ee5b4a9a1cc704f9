"""Two robots side by side in one ROS graph: `robot-core bringup --namespace arm1` and `--namespace arm2` (each its
own simulator and controller manager, topic mode) run at the same time without a name clash, and both arms follow
a trajectory goal sent to each at the same moment; the unspawner's `-c /arm1/controller_manager` reaches one manager."""

from __future__ import annotations

import signal
import uuid

import pytest
from ros_harness import REPO, NodeProcess, wait_for, wait_future
from sim_helpers import joint1_goals_at_once

from robot_core.bringup.run import READY_PREFIX, rbc_available
from robot_core.bringup.supervisor import MARKER_ENV, processes_with_marker

pytest.importorskip("rclpy")
pytestmark = [pytest.mark.ros, pytest.mark.slow]

ROBOTS = {"arm1": 0.3, "arm2": -0.25}  # namespace -> joint1 target relative to its start


def test_two_namespaced_arms_follow_goals_at_the_same_time(ros, processes):
    from controller_manager_msgs.srv import ListControllers
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage


    marker = f"test-namespaces-{uuid.uuid4().hex}"
    procs = {}
    for ns in ROBOTS:
        procs[ns] = NodeProcess.console_script("robot-core", "bringup", "--namespace", ns, "--headless",
                                               "--ready-timeout", "230",
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

    joint1_goals_at_once(node, seen, ROBOTS)

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
