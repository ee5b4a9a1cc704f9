"""The controller_manager node over DDS: services with upstream semantics, lifecycle refusals, activity,
hardware listing and state, controllers' topics -- against the simulator node in another process
(topic-based hardware)."""

from __future__ import annotations

import math

import pytest
from cm_helpers import ARM_JOINTS, HOME, CmClient, JointStateRecorder, start_controller_manager, start_simulator
from ros_harness import NodeProcess, wait_for

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

STRICT, BEST_EFFORT = 2, 1


@pytest.fixture(scope="module")
def graph():
    """One simulator and one controller manager for the whole module (each test leaves no controller behind)."""
    procs: list[NodeProcess] = []
    try:
        start_simulator(procs)
        cm = start_controller_manager(procs)
        yield cm
    finally:
        for p in procs:
            p.stop()


@pytest.fixture
def cm(ros, graph):
    client = CmClient(ros.node("cm_test_client"))
    yield client
    client.remove_all()


def test_lifecycle_and_refusals(cm, graph):
    types = cm.call("list_controller_types")
    for t in ("joint_state_broadcaster/JointStateBroadcaster", "joint_trajectory_controller/JointTrajectoryController",
              "position_controllers/JointGroupPositionController", "pid_controller/PidController",
              "robot_core/GravityCompensationController"):
        assert t in types.types
    assert len(types.base_classes) == len(types.types)

    assert cm.load("joint_trajectory_controller")
    assert cm.state("joint_trajectory_controller") == "unconfigured"
    assert not cm.load("joint_trajectory_controller"), "double load must be refused"
    assert not cm.load("not_in_yaml"), "a controller without a type must be refused"
    assert not cm.load("broken_controller"), "an unknown type must be refused"
    res = cm.switch(["joint_trajectory_controller"])
    assert not res.ok, "an unconfigured controller cannot be activated (STRICT)"
    assert cm.configure("joint_trajectory_controller")
    assert cm.state("joint_trajectory_controller") == "inactive"
    res = cm.switch(["joint_trajectory_controller"])
    assert res.ok, res.message
    jtc = cm.controllers()["joint_trajectory_controller"]
    assert jtc.state == "active"
    assert jtc.type == "joint_trajectory_controller/JointTrajectoryController"
    assert sorted(jtc.claimed_interfaces) == sorted(f"{j}/position" for j in ARM_JOINTS)
    assert jtc.update_rate == 100

    assert not cm.unload("joint_trajectory_controller"), "unload while active must be refused"
    assert not cm.cleanup("joint_trajectory_controller"), "cleanup while active must be refused"
    assert not cm.configure("joint_trajectory_controller"), "configure while active must be refused"

    # interface conflict: joint1/position is claimed by the JTC
    assert cm.load("joint1_position_controller") and cm.configure("joint1_position_controller")
    res = cm.switch(["joint1_position_controller"], strictness=STRICT)
    assert not res.ok
    assert "joint1/position" in res.message
    assert cm.state("joint1_position_controller") == "inactive"
    res = cm.switch(["joint1_position_controller"], strictness=BEST_EFFORT)
    assert cm.state("joint1_position_controller") == "inactive"
    # deactivating the holder and activating the other in one switch is fine
    res = cm.switch(["joint1_position_controller"], ["joint_trajectory_controller"])
    assert res.ok, res.message
    states = cm.controllers()
    assert states["joint1_position_controller"].state == "active"
    assert states["joint_trajectory_controller"].state == "inactive"
    assert states["joint_trajectory_controller"].claimed_interfaces == []

    assert cm.cleanup("joint_trajectory_controller")
    assert cm.state("joint_trajectory_controller") == "unconfigured"
    assert cm.unload("joint_trajectory_controller")
    assert "joint_trajectory_controller" not in cm.controllers()
    assert not cm.unload("joint_trajectory_controller"), "unloading twice must be refused"
    assert not cm.call("reload_controller_libraries", force_kill=False).ok, "a controller is still active"
    assert "Resource conflict" in graph.output() or "claimed" in graph.output()


def test_activity_is_published_on_every_change(ros, cm):
    from controller_manager_msgs.msg import ControllerManagerActivity
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    node = ros.node("activity_listener")
    got: list[ControllerManagerActivity] = []
    qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
    node.create_subscription(ControllerManagerActivity, "/controller_manager/activity", got.append, qos)
    wait_for(lambda: got, 20, "the latched activity message")
    assert [h.name for h in got[-1].hardware_components] == ["RcArmSystem"]
    assert got[-1].hardware_components[0].state.label == "active"

    def jsb_state() -> str | None:
        for c in got[-1].controllers:
            if c.name == "joint_state_broadcaster":
                return c.state.label
        return None

    assert cm.load("joint_state_broadcaster")
    wait_for(lambda: jsb_state() == "unconfigured", 10, "activity after load")
    assert cm.configure("joint_state_broadcaster")
    wait_for(lambda: jsb_state() == "inactive", 10, "activity after configure")
    assert cm.switch(["joint_state_broadcaster"]).ok
    wait_for(lambda: jsb_state() == "active", 10, "activity after activate")
    assert cm.switch([], ["joint_state_broadcaster"]).ok
    assert cm.unload("joint_state_broadcaster")
    wait_for(lambda: jsb_state() is None, 10, "activity after unload")


def test_hardware_listing_and_state(cm):
    comps = cm.call("list_hardware_components").component
    assert [c.name for c in comps] == ["RcArmSystem"]
    comp = comps[0]
    assert comp.plugin_name == "topic_based_ros2_control/TopicBasedSystem"
    assert comp.state.label == "active"
    commands = {i.name for i in comp.command_interfaces}
    assert {f"{j}/position" for j in ARM_JOINTS} <= commands and "finger_left_joint/position" in commands
    ifaces = cm.call("list_hardware_interfaces")
    assert {i.name for i in ifaces.state_interfaces} >= {f"{j}/{k}" for j in ARM_JOINTS
                                                          for k in ("position", "velocity", "effort")}
    assert all(i.is_available and not i.is_claimed for i in ifaces.command_interfaces)

    cm.spawn("joint_trajectory_controller")
    claimed = {i.name for i in cm.call("list_hardware_interfaces").command_interfaces if i.is_claimed}
    assert claimed == {f"{j}/position" for j in ARM_JOINTS}

    from lifecycle_msgs.msg import State

    # taking the hardware to inactive deactivates the controllers commanding it
    res = cm.call("set_hardware_component_state", name="RcArmSystem", target_state=State(id=2, label="inactive"))
    assert res.ok and res.state.label == "inactive"
    assert cm.state("joint_trajectory_controller") == "inactive"
    assert not cm.switch(["joint_trajectory_controller"]).ok, "command interfaces of inactive hardware"
    res = cm.call("set_hardware_component_state", name="RcArmSystem", target_state=State(id=3, label="active"))
    assert res.ok and res.state.label == "active"
    assert cm.switch(["joint_trajectory_controller"]).ok
    res = cm.call("set_hardware_component_state", name="NoSuchSystem", target_state=State(id=3, label="active"))
    assert not res.ok


def test_joint_state_broadcaster_topics(ros, cm):
    from control_msgs.msg import DynamicJointState

    node = ros.node("jsb_listener")
    rec = JointStateRecorder(node)
    dyn: list[DynamicJointState] = []
    node.create_subscription(DynamicJointState, "/dynamic_joint_states", dyn.append, 10)
    cm.spawn("joint_state_broadcaster")
    wait_for(lambda: rec.latest() is not None and dyn, 20, "/joint_states and /dynamic_joint_states")
    msg = rec.latest()
    # every joint of the ros2_control block, in URDF order (the mimic finger is not a hardware joint here)
    assert list(msg.name) == [*ARM_JOINTS, "finger_left_joint"]
    assert list(msg.position[:7]) == pytest.approx(HOME, abs=0.05)
    assert msg.header.stamp.sec > 0 or msg.header.stamp.nanosec > 0
    d = dyn[-1]
    assert d.joint_names[0] == "joint1"
    assert list(d.interface_values[0].interface_names) == ["position", "velocity", "effort"]


def test_forward_command_controller_moves_the_arm_and_drops_bad_commands(ros, cm, graph):
    from std_msgs.msg import Float64MultiArray

    node = ros.node("fwd_commander")
    rec = JointStateRecorder(node)
    cm.spawn("joint_state_broadcaster", "forward_position_controller")
    pub = node.create_publisher(Float64MultiArray, "/forward_position_controller/commands", 10)
    wait_for(lambda: pub.get_subscription_count() > 0, 20, "forward controller subscription")
    target = [0.3, 0.5, -0.2, 1.6, 0.1, 1.0, 0.2]

    def reached() -> bool:
        pub.publish(Float64MultiArray(data=target))
        q = rec.positions(ARM_JOINTS)
        return q is not None and all(abs(a - b) < 0.01 for a, b in zip(q, target, strict=True))

    wait_for(reached, 30, "the arm at the commanded position", poll=0.1)
    pub.publish(Float64MultiArray(data=[0.0, 0.0]))  # wrong size
    pub.publish(Float64MultiArray(data=[math.nan] * 7))  # non-finite
    wait_for(lambda: "dropped a command" in graph.output(), 10, "the drop warning")
    rec.clear()
    wait_for(lambda: rec.latest() is not None, 10, "fresh joint states")
    assert rec.positions(ARM_JOINTS) == pytest.approx(target, abs=0.01), "bad commands must not move the arm"
    assert cm.state("forward_position_controller") == "active"


def test_controller_parameters_live_on_the_controller_node(ros, cm):
    from rcl_interfaces.srv import GetParameters

    assert cm.load("joint_trajectory_controller")
    node = ros.node("param_reader")
    client = node.create_client(GetParameters, "/joint_trajectory_controller/get_parameters")
    assert client.wait_for_service(timeout_sec=20)
    from ros_harness import wait_future

    res = wait_future(client.call_async(GetParameters.Request(names=["joints", "constraints.goal_time"])), 10)
    assert list(res.values[0].string_array_value) == ARM_JOINTS
    assert res.values[1].double_value == 1.0


def test_parameters_left_at_their_defaults_are_declared_at_configure(ros, cm):
    """As upstream, every parameter a controller uses is on its node, not only those the YAML set: ``ros2 param
    get`` shows the value in force and ``ros2 param set`` works on it (taking effect at the next configure)."""
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import GetParameters, ListParameters, SetParameters
    from ros_harness import wait_future

    node = ros.node("param_lister")
    prefix = "/joint_trajectory_controller"
    lister = node.create_client(ListParameters, f"{prefix}/list_parameters")
    getter = node.create_client(GetParameters, f"{prefix}/get_parameters")
    setter = node.create_client(SetParameters, f"{prefix}/set_parameters")
    assert cm.load("joint_trajectory_controller")
    assert lister.wait_for_service(timeout_sec=20) and getter.wait_for_service(timeout_sec=20)

    def names() -> set[str]:
        return set(wait_future(lister.call_async(ListParameters.Request()), 10).result.names)

    assert "interpolation_method" not in names()  # loaded: only what the YAML gave
    assert cm.configure("joint_trajectory_controller")
    listed = names()
    for name in ("interpolation_method", "allow_nonzero_velocity_at_trajectory_end", "gains.joint1.p",
                 "constraints.joint7.goal"):
        assert name in listed, (name, sorted(listed))
    res = wait_future(getter.call_async(GetParameters.Request(names=["interpolation_method", "gains.joint1.p"])), 10)
    assert res.values[0].type == ParameterType.PARAMETER_STRING and res.values[0].string_value == "splines"
    assert res.values[1].type == ParameterType.PARAMETER_DOUBLE
    value = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=5.0)
    req = SetParameters.Request(parameters=[Parameter(name="gains.joint1.p", value=value)])
    assert setter.wait_for_service(timeout_sec=20)
    assert wait_future(setter.call_async(req), 10).results[0].successful
    # an empty list default keeps its element type (the broadcaster's joints: [] = every joint)
    assert cm.load("joint_state_broadcaster") and cm.configure("joint_state_broadcaster")
    jsb = node.create_client(GetParameters, "/joint_state_broadcaster/get_parameters")
    assert jsb.wait_for_service(timeout_sec=20)
    res = wait_future(jsb.call_async(GetParameters.Request(names=["joints", "interfaces"])), 10)
    assert [v.type for v in res.values] == [ParameterType.PARAMETER_STRING_ARRAY] * 2
    assert [list(v.string_array_value) for v in res.values] == [[], []]


def test_read_only_parameters_are_refused(ros, cm):
    """As upstream (read_only: true), instead of accepting a change that has no effect."""
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters
    from ros_harness import wait_future

    assert cm.load("joint_trajectory_controller")
    node = ros.node("param_writer")

    def set_param(target: str, name: str, value: ParameterValue):
        client = node.create_client(SetParameters, f"/{target}/set_parameters")
        assert client.wait_for_service(timeout_sec=20)
        res = wait_future(client.call_async(SetParameters.Request(parameters=[Parameter(name=name, value=value)])),
                          10)
        return res.results[0]

    joints = ParameterValue(type=ParameterType.PARAMETER_STRING_ARRAY, string_array_value=["joint1"])
    res = set_param("joint_trajectory_controller", "joints", joints)
    assert not res.successful and "read-only" in res.reason
    goal_time = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=2.0)
    assert set_param("joint_trajectory_controller", "constraints.goal_time", goal_time).successful
    rate = ParameterValue(type=ParameterType.PARAMETER_INTEGER, integer_value=250)
    res = set_param("controller_manager", "update_rate", rate)
    assert not res.successful and "read once at start-up" in res.reason


def test_controller_parameters_are_described_by_their_spec(ros, cm):
    """``ros2 param describe /joint_trajectory_controller ...``: the description, read_only and range of the
    controller's spec table, for a parameter from the YAML, a family member, a default and a node-only one."""
    from rclpy.parameter_client import AsyncParameterClient
    from ros_harness import wait_future

    from robot_core.control.controllers.joint_trajectory import JointTrajectoryController

    assert cm.load("joint_trajectory_controller") and cm.configure("joint_trajectory_controller")
    client = AsyncParameterClient(ros.node("controller_describer"), "joint_trajectory_controller")
    assert client.wait_for_services(timeout_sec=30)
    names = ["joints", "constraints.goal_time", "gains.joint1.p", "constraints.joint7.goal", "interpolation_method",
             "reject_invalid_goals"]
    res = wait_future(client.describe_parameters(names), 20, "describe_parameters")
    described = dict(zip(names, res.descriptors, strict=True))
    for name, d in described.items():
        spec = JointTrajectoryController.param_spec(name)
        assert spec is not None, name
        assert d.description.startswith(spec.description), (name, d.description)
        assert d.read_only == spec.read_only, (name, d.read_only)
    assert described["joints"].read_only and not described["gains.joint1.p"].read_only
    goal = described["constraints.joint7.goal"]
    assert goal.floating_point_range and goal.floating_point_range[0].from_value == 0.0
    assert described["interpolation_method"].additional_constraints == "one of 'splines', 'none'"
    # the descriptor's read_only refuses a set, in words naming the controller (not rclpy's bare text)
    from rclpy.parameter import Parameter

    refused = wait_future(client.set_parameters([Parameter("joints", value=["joint1"])]), 20, "set_parameters")
    reason = refused.results[0].reason
    assert not refused.results[0].successful and "of controller 'joint_trajectory_controller' is read-only" in reason


def test_loop_statistics_service(cm):
    import json

    stats = json.loads(cm.call("loop_statistics").message)
    assert stats["target_rate"] == 100.0
    assert stats["cycles"] > 0
    assert 0.0 <= stats["overrun_ratio"] <= 1.0
    assert stats["max"] >= stats["mean"] > 0.0


def test_pid_controller_tracks_a_reference(ros, cm):
    from control_msgs.msg import MultiDOFCommand, MultiDOFStateStamped

    node = ros.node("pid_commander")
    rec = JointStateRecorder(node)
    states: list[MultiDOFStateStamped] = []
    node.create_subscription(MultiDOFStateStamped, "/joint1_pid_controller/controller_state", states.append, 10)
    cm.spawn("joint_state_broadcaster", "joint1_pid_controller")
    assert cm.controllers()["joint1_pid_controller"].claimed_interfaces == ["joint1/velocity"]
    pub = node.create_publisher(MultiDOFCommand, "/joint1_pid_controller/reference", 10)
    wait_for(lambda: pub.get_subscription_count() > 0 and states, 20, "the PID's reference topic and state")
    start = rec.positions(ARM_JOINTS)[0]
    target = start + 0.4

    def tracked() -> bool:
        pub.publish(MultiDOFCommand(dof_names=["joint1"], values=[target]))
        q = rec.positions(ARM_JOINTS)
        return q is not None and abs(q[0] - target) < 0.01

    wait_for(tracked, 30, "joint1 at the PID reference", poll=0.1)
    s = states[-1].dof_states[0]
    assert s.name == "joint1" and s.reference == pytest.approx(target)
    assert abs(s.error) < 0.02 and s.output == pytest.approx(4.0 * s.error, abs=1e-9)


def test_velocity_command_times_out_to_zero(ros, cm):
    from std_msgs.msg import Float64MultiArray

    node = ros.node("velocity_commander")
    rec = JointStateRecorder(node)
    cm.spawn("joint_state_broadcaster", "forward_velocity_controller")
    pub = node.create_publisher(Float64MultiArray, "/forward_velocity_controller/commands", 10)
    wait_for(lambda: pub.get_subscription_count() > 0 and rec.latest() is not None, 20, "velocity controller")
    start = rec.positions(ARM_JOINTS)[0]
    pub.publish(Float64MultiArray(data=[0.4, 0, 0, 0, 0, 0, 0]))  # once: command_timeout is 0.5 s

    def stopped_after_moving() -> bool:
        msg = rec.latest()
        return abs(msg.position[0] - start) > 0.05 and abs(msg.velocity[0]) < 1e-3

    wait_for(stopped_after_moving, 20, "joint1 moved, then stopped by the command timeout", poll=0.05)
    moved = rec.latest().position[0] - start
    assert 0.05 < moved < 0.4, "about 0.5 s at 0.4 rad/s, not a run-away"
