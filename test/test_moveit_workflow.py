"""MoveIt 2's ros2_control integration, replayed over DDS against our controller manager.

MoveIt cannot be installed here (no ROS distribution, PyPI only), yet issue 5 requires that it works against
robot_core's controller manager unchanged. So this test does, with our own rclpy code, what MoveIt's pieces do on
the wire, in the order they do it, against the real manager with the in-process simulator:

- ``moveit_ros_control_interface``'s Ros2ControlMultiManager finds managers by a service whose name contains
  ``controller_manager/list_controllers``; Ros2ControlManager lists the controllers, keeps those whose type has a
  MoveIt handle (the JTC), takes their joints from ``required_command_interfaces`` (also while inactive), folds
  chained controllers in via ``chain_connections`` / ``reference_interfaces``, and switches STRICT with a
  deactivate list grown by every active controller whose ``claimed_interfaces`` share a joint with the ones to
  activate, judging by ``ok``;
- the TrajectoryExecutionManager waits for a ``/joint_states`` message stamped no earlier than its (sim) clock,
  checks the trajectory's first point is within ``allowed_start_tolerance`` (0.01 rad) of it, sends the
  trajectory stamped 0 ("start now") through the FollowJointTrajectory handle on
  ``<controller>/follow_joint_trajectory``, and cancels with ``async_cancel_goal``; it then waits for the robot to
  stop.

If our manager or JTC differed from ros2_control in any of these, MoveIt would fail at that step, and so does this
test.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any

import pytest
from cm_helpers import ARM_JOINTS, RC_ARM, CmClient, run_spawner, start_controller_manager, wait_goal_service
from ros_harness import REPO, wait_for, wait_future

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

DEFAULT_CONTROLLERS = REPO / "config" / "controllers.yaml"  # the shipped configuration, as a user would start it
JTC = "joint_trajectory_controller"
JTC_TYPE = "joint_trajectory_controller/JointTrajectoryController"
FORWARD = "forward_position_controller"
# Controller types with a MoveIt handle plugin (moveit_ros_control_interface_plugins.xml) and their action suffix;
# the others (broadcasters, forward command controllers) are not MoveIt's to switch or execute on.
MOVEIT_HANDLES = {
    JTC_TYPE: "follow_joint_trajectory",
    "position_controllers/GripperActionController": "gripper_cmd",
    "effort_controllers/GripperActionController": "gripper_cmd",
    "parallel_gripper_action_controller/GripperActionController": "gripper_cmd",
    "admittance_controller/AdmittanceController": "",
}
STRICT = 2  # SwitchController.Request.STRICT
SUCCEEDED, CANCELED = 4, 5  # action_msgs/GoalStatus
ALLOWED_START_TOLERANCE = 0.01  # rad, TrajectoryExecutionManager's default
GOAL_TOLERANCE = 0.02  # rad, the JTC's goal tolerance in config/controllers.yaml
STOPPED_VELOCITY = 0.02  # rad/s: below the JTC's stopped_velocity_tolerance (0.05)
HOLD_BAND = 0.005  # rad: how far a holding joint may wander over HOLD_WINDOW
HOLD_WINDOW = 0.5  # s of simulated time (joint state stamps)
TARGET = [0.4, 0.55, -0.2, 1.6, 0.25, 1.2, 0.3]  # rad, joint1..7; 0.25..0.4 rad from the URDF's initial pose
SECOND_TARGET = [-0.4, 0.2, 0.3, 2.2, -0.3, 0.8, -0.5]


def joint_of(resource: str) -> str:
    """MoveIt's parseJointNameFromResource: "joint1/position" -> "joint1" (up to the first '/')."""
    return resource.split("/", 1)[0]


@dataclass
class ControllerInfo:
    """What Ros2ControlManager keeps of one list_controllers entry."""

    name: str
    type: str
    active: bool
    joints: list[str]  # from required_command_interfaces (+ chained controllers' reference interfaces)
    claimed_joints: list[str]  # from claimed_interfaces
    chain_connections: list[str] = field(default_factory=list)


class Ros2ControlManagerLike:
    """MoveIt's Ros2ControlManager for one controller manager namespace: discovery and switching."""

    def __init__(self, node: Any, namespace: str, handle_types: dict[str, str] = MOVEIT_HANDLES):
        self.namespace = namespace  # "/" or "/robot/", as Ros2ControlMultiManager cuts it from the service name
        self.handle_types = handle_types
        self.cm = CmClient(node, manager=f"{namespace}controller_manager")
        self.managed: dict[str, ControllerInfo] = {}  # absolute name ("/joint_trajectory_controller") -> info
        self.active: dict[str, ControllerInfo] = {}  # plain name -> info
        self.last_request: dict[str, list[str]] = {}

    def abs_name(self, name: str) -> str:
        return f"{self.namespace.rstrip('/')}/{name}"

    def discover(self) -> dict[str, ControllerInfo]:
        """list_controllers, chained controllers folded in; returns every controller by plain name."""
        listed = self.cm.call("list_controllers").controller
        by_name = {c.name: c for c in listed}
        infos: dict[str, ControllerInfo] = {}
        for c in listed:
            if c.state == "active" and len(c.chain_connections) > 1:
                raise AssertionError(f"MoveIt refuses '{c.name}': it chains to more than one controller")
            required = list(c.required_command_interfaces)
            for link in c.chain_connections:  # fixChainedControllers
                required += list(by_name[link.name].reference_interfaces)
            # each joint once, in the order of its first interface: a JTC that claims position and velocity names
            # every joint twice in its interfaces (MoveIt keeps the joint names unique)
            infos[c.name] = ControllerInfo(c.name, c.type, c.state == "active",
                                           list(dict.fromkeys(joint_of(r) for r in required)),
                                           list(dict.fromkeys(joint_of(r) for r in c.claimed_interfaces)),
                                           [link.name for link in c.chain_connections])
        self.active = {n: i for n, i in infos.items() if i.active}
        self.managed = {self.abs_name(n): i for n, i in infos.items() if i.type in self.handle_types}
        return infos

    def switch(self, activate: list[str], deactivate: list[str]) -> bool:
        """switchControllers: names are absolute; only managed ones are sent, plus the active controllers that hold
        a joint of a controller to activate; STRICT; the answer is ``ok``."""
        self.discover()
        claimed: dict[str, str] = {}  # joint -> active controller (a bimap in MoveIt: the first claim counts)
        for info in self.active.values():
            for joint in info.claimed_joints:
                claimed.setdefault(joint, info.name)
        to_activate: list[str] = []
        to_deactivate: list[str] = []
        for name in deactivate:
            if name in self.managed:
                to_deactivate.append(self.managed[name].name)
                claimed = {j: c for j, c in claimed.items() if c != self.managed[name].name}
        for name in activate:
            if name not in self.managed:
                continue
            to_activate.append(self.managed[name].name)
            for joint in self.managed[name].joints:
                holder = claimed.get(joint)
                if holder is not None:
                    if holder not in to_deactivate:
                        to_deactivate.append(holder)
                    claimed = {j: c for j, c in claimed.items() if c != holder}
        both = set(to_activate) & set(to_deactivate)  # deconflictControllerActivationLists
        to_activate = [n for n in to_activate if n not in both]
        to_deactivate = [n for n in to_deactivate if n not in both]
        self.last_request = {"activate": to_activate, "deactivate": to_deactivate}
        if not to_activate and not to_deactivate:
            return True
        # MoveIt leaves activate_asap and timeout at their defaults (false, 0)
        response = self.cm.call("switch_controller", activate_controllers=to_activate,
                                deactivate_controllers=to_deactivate, strictness=STRICT)
        self.discover()
        return bool(response.ok)


def discover_managers(node: Any, timeout: float = 30.0) -> list[str]:
    """Ros2ControlMultiManager::discover: the namespaces of every '.../controller_manager/list_controllers'."""
    key = "controller_manager/list_controllers"

    def namespaces() -> list[str]:
        return sorted({name[:name.find(key)] for name, _ in node.get_service_names_and_types() if key in name})

    return wait_for(namespaces, timeout, f"a service named '*{key}' in the ROS graph")


class CurrentStateMonitor:
    """The newest /joint_states as MoveIt's CurrentStateMonitor sees it (system-default QoS, i.e. reliable)."""

    def __init__(self, node: Any):
        from rclpy.qos import qos_profile_system_default
        from sensor_msgs.msg import JointState

        self.node = node
        self._lock = threading.Lock()
        self._latest: Any = None
        self.history: list[Any] = []
        node.create_subscription(JointState, "/joint_states", self._on_msg, qos_profile_system_default)

    def _on_msg(self, msg: Any) -> None:
        with self._lock:
            self._latest = msg
            self.history.append(msg)

    @staticmethod
    def stamp(msg: Any) -> int:
        return msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec

    def now(self) -> int:
        return self.node.get_clock().now().nanoseconds

    def wait_for_current_state(self, timeout: float = 20.0) -> Any:
        """waitForCurrentState(now): a state stamped no earlier than the node's (sim) clock now. MoveIt gives up
        after 1 s; the deadline here is longer only for a loaded test machine."""
        wait_for(lambda: self.now() > 0, timeout, "/clock (the node runs on sim time)")
        t = self.now()

        def fresh() -> Any:
            with self._lock:
                msg = self._latest
            return msg if msg is not None and self.stamp(msg) >= t else None

        return wait_for(fresh, timeout, f"a /joint_states message stamped at or after {t * 1e-9:.3f} s")

    @staticmethod
    def positions(msg: Any, joints: list[str]) -> list[float]:
        index = {n: i for i, n in enumerate(msg.name)}
        missing = [j for j in joints if j not in index]
        assert not missing, f"/joint_states lacks {missing}: MoveIt's state would be incomplete"
        return [msg.position[index[j]] for j in joints]

    @staticmethod
    def velocities(msg: Any, joints: list[str]) -> list[float]:
        index = {n: i for i, n in enumerate(msg.name)}
        return [msg.velocity[index[j]] for j in joints]

    def since(self, t: int) -> list[Any]:
        with self._lock:
            return [m for m in self.history if self.stamp(m) >= t]


def validate_start(trajectory: Any, state: Any) -> None:
    """TrajectoryExecutionManager::validate: the first point within allowed_start_tolerance of the current state."""
    first = trajectory.points[0].positions
    assert len(first) == len(trajectory.joint_names), "Wrong trajectory: #joints != #positions"
    current = CurrentStateMonitor.positions(state, list(trajectory.joint_names))
    for joint, want, have in zip(trajectory.joint_names, first, current, strict=True):
        assert abs(want - have) <= ALLOWED_START_TOLERANCE, (
            f"Invalid Trajectory: start point deviates from current robot state more than {ALLOWED_START_TOLERANCE} "
            f"at joint '{joint}' ({want} vs {have})")


def smooth_trajectory(joints: list[str], start: list[float], end: list[float], duration: float,
                      points: int) -> Any:
    """A time-parameterised trajectory as a planner hands it over: a minimum-jerk profile sampled at ``points``
    instants, positions / velocities / accelerations from the same quintic, the first point the start state at
    time 0, at rest at both ends; header stamp 0 (the controller starts it on arrival)."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    trajectory = JointTrajectory(joint_names=list(joints))
    for k in range(points):
        t = duration * k / (points - 1)
        tau = t / duration
        s = 10 * tau**3 - 15 * tau**4 + 6 * tau**5
        ds = (30 * tau**2 - 60 * tau**3 + 30 * tau**4) / duration
        dds = (60 * tau - 180 * tau**2 + 120 * tau**3) / duration**2
        delta = [b - a for a, b in zip(start, end, strict=True)]
        trajectory.points.append(JointTrajectoryPoint(
            positions=list(start) if k == 0 else [a + d * s for a, d in zip(start, delta, strict=True)],
            velocities=[d * ds for d in delta], accelerations=[d * dds for d in delta],
            time_from_start=Duration(sec=int(t), nanosec=round((t % 1) * 1e9))))
    return trajectory


class FollowJointTrajectoryHandle:
    """MoveIt's FollowJointTrajectoryControllerHandle: one action client on ``<controller>/follow_joint_trajectory``
    (created at discovery, while the controller may still be inactive)."""

    def __init__(self, node: Any, controller: str, action_ns: str):
        from control_msgs.action import FollowJointTrajectory

        from robot_core.ros.action_client import ActionClient

        self.action_name = f"{controller}/{action_ns}"
        self.client = ActionClient(node, FollowJointTrajectory, self.action_name)
        self.goal_handle: Any = None

    def send_trajectory(self, trajectory: Any) -> None:
        from control_msgs.action import FollowJointTrajectory

        assert self.client.server_is_ready(), f"Action client not connected to action server: {self.action_name}"
        goal = FollowJointTrajectory.Goal(trajectory=trajectory)
        self.goal_handle = wait_future(self.client.send_goal_async(goal), 20, "goal response")
        assert self.goal_handle.accepted, "Goal was rejected by server"

    def wait_for_execution(self, timeout: float) -> Any:
        return wait_future(self.goal_handle.get_result_async(), timeout, f"the result from {self.action_name}")

    def cancel_execution(self) -> Any:
        return wait_future(self.goal_handle.cancel_goal_async(), 20, f"the cancel response from {self.action_name}")


def wait_until_stopped(csm: CurrentStateMonitor, joints: list[str], timeout: float = 30.0) -> Any:
    """The robot at rest: every joint's reported velocity below STOPPED_VELOCITY."""
    def stopped() -> Any:
        msg = csm.wait_for_current_state()
        return msg if max(abs(v) for v in csm.velocities(msg, joints)) < STOPPED_VELOCITY else None

    return wait_for(stopped, timeout, "the arm at rest on /joint_states", poll=0.05)


def test_moveit_discovers_switches_executes_and_cancels(ros, processes):
    from rclpy.parameter import Parameter

    # 1. The manager as a user starts it: embedded simulator, the shipped controllers.yaml; the arm held by
    #    forward_position_controller, the JTC loaded and configured but inactive.
    start_controller_manager(processes, "hardware_mode:=embedded", f"robot_description_file:={RC_ARM}",
                             yaml=DEFAULT_CONTROLLERS)
    code, out = run_spawner("joint_state_broadcaster", FORWARD)
    assert code == 0, out
    code, out = run_spawner("--inactive", JTC)
    assert code == 0, out

    # move_group runs on the simulator's clock (use_sim_time), as with any simulated robot
    node = ros.node("moveit_workflow_move_group", parameter_overrides=[Parameter("use_sim_time", value=True)])
    csm = CurrentStateMonitor(node)

    # 2. Discovery: the manager through the graph, the JTC as the one controller MoveIt can drive, its joints from
    #    required_command_interfaces although it is inactive, no chaining.
    namespaces = discover_managers(node)
    assert namespaces == ["/"], namespaces
    plugin = Ros2ControlManagerLike(node, namespaces[0])
    infos = plugin.discover()
    assert set(infos) == {"joint_state_broadcaster", FORWARD, JTC}, sorted(infos)
    assert list(plugin.managed) == [f"/{JTC}"], "MoveIt would manage exactly the JTC"
    jtc = plugin.managed[f"/{JTC}"]
    assert jtc.type == JTC_TYPE and not jtc.active
    assert jtc.joints == ARM_JOINTS, f"joints MoveIt derives for the inactive JTC: {jtc.joints}"
    assert not jtc.claimed_joints, "an inactive controller claims nothing"
    assert all(not i.chain_connections for i in infos.values()), "no controller is chained here"
    assert infos[FORWARD].active and infos[FORWARD].claimed_joints == ARM_JOINTS
    handle = FollowJointTrajectoryHandle(node, f"/{JTC}", MOVEIT_HANDLES[jtc.type])
    assert handle.action_name == "/joint_trajectory_controller/follow_joint_trajectory"
    # The action server exists from configure on (upstream creates it in on_configure), so the handle connects
    # while the JTC is still inactive; goals are refused until it is active.
    assert wait_for(handle.client.server_is_ready, 30, f"{handle.action_name} ready while the JTC is inactive")
    wait_goal_service(handle.client, ARM_JOINTS)  # test harness: the first goal response must not be lost (DDS)

    # The state MoveIt plans from, taken before it switches controllers for the execution.
    planned_from = csm.positions(wait_until_stopped(csm, ARM_JOINTS), ARM_JOINTS)

    # 3. ensureActiveControllers -> switchControllers: activate the JTC; the forward controller holds the same
    #    joints, so it joins the deactivate list (the broadcaster claims nothing and stays).
    assert plugin.switch([f"/{JTC}"], []), f"switch refused: {plugin.last_request}"
    assert plugin.last_request == {"activate": [JTC], "deactivate": [FORWARD]}
    states = {n: i.active for n, i in plugin.discover().items()}
    assert states == {"joint_state_broadcaster": True, FORWARD: False, JTC: True}
    assert plugin.active[JTC].claimed_joints == ARM_JOINTS

    # 4. Execution, right after the switch returned (as executePart does): validate the start against a fresh
    #    state, send, wait, check the arm reached the target.
    state = csm.wait_for_current_state()
    # switching took over without a jump: the trajectory planned before the switch is still valid
    validate_start(smooth_trajectory(ARM_JOINTS, planned_from, TARGET, 2.5, 11), state)
    start = csm.positions(state, ARM_JOINTS)
    trajectory = smooth_trajectory(ARM_JOINTS, start, TARGET, 2.5, 11)
    validate_start(trajectory, csm.wait_for_current_state())
    handle.send_trajectory(trajectory)
    result = handle.wait_for_execution(60)
    assert result.status == SUCCEEDED, (result.status, result.result.error_string)
    assert result.result.error_code == 0, result.result.error_string
    reached = csm.positions(csm.wait_for_current_state(), ARM_JOINTS)
    assert reached == pytest.approx(TARGET, abs=GOAL_TOLERANCE)
    wait_until_stopped(csm, ARM_JOINTS)  # waitForRobotToStop before the next execution

    # 5. cancelExecution: a longer motion, cancelled once the arm is under way; the goal ends CANCELED and the arm
    #    stops and holds where it is, far from where that motion would have taken it.
    state = csm.wait_for_current_state()
    start = csm.positions(state, ARM_JOINTS)
    trajectory = smooth_trajectory(ARM_JOINTS, start, SECOND_TARGET, 6.0, 15)
    validate_start(trajectory, state)
    handle.send_trajectory(trajectory)

    def under_way() -> bool:
        q = csm.positions(csm.wait_for_current_state(), ARM_JOINTS)
        return max(abs(a - b) for a, b in zip(q, start, strict=True)) > 0.05

    wait_for(under_way, 30, "the arm moving along the second trajectory", poll=0.02)
    cancel = handle.cancel_execution()
    assert cancel.return_code == 0, f"cancel refused (return code {cancel.return_code})"
    assert [bytes(g.goal_id.uuid) for g in cancel.goals_canceling] == [bytes(handle.goal_handle.goal_id.uuid)]
    result = handle.wait_for_execution(30)
    assert result.status == CANCELED, (result.status, result.result.error_string)

    rest_msg = wait_until_stopped(csm, ARM_JOINTS)
    rest = csm.positions(rest_msg, ARM_JOINTS)
    window_end = csm.stamp(rest_msg) + int(HOLD_WINDOW * 1e9)
    wait_for(lambda: csm.stamp(csm.wait_for_current_state()) >= window_end, 30,
             f"{HOLD_WINDOW} s of simulated time after the arm stopped", poll=0.02)
    held = [csm.positions(m, ARM_JOINTS) for m in csm.since(csm.stamp(rest_msg))]
    drift = max(abs(a - b) for q in held for a, b in zip(q, rest, strict=True))
    # /joint_states is newest-value-wins (fewer messages on a loaded machine), so only a few are required
    assert len(held) >= 3 and drift < HOLD_BAND, f"the arm did not hold after cancel: {drift:.4f} rad over {len(held)}"
    remaining = max(abs(a - b) for a, b in zip(rest, SECOND_TARGET, strict=True))
    assert remaining > 0.2, "the arm went (almost) all the way: the cancel did not stop it"
    assert all(math.isfinite(v) for v in rest)

    # 6. Back to the forward controller, computed the same way. MoveIt only activates types it has a handle for,
    #    so this is its conflict rule run by a client that also manages JointGroupPositionController (as
    #    rqt_controller_manager / `ros2 control switch_controllers` users do by hand): activating the forward
    #    controller must take the JTC out, STRICT.
    releasing = Ros2ControlManagerLike(node, namespaces[0], {
        **MOVEIT_HANDLES, "position_controllers/JointGroupPositionController": ""})
    releasing.discover()
    assert releasing.switch([f"/{FORWARD}"], []), f"switch refused: {releasing.last_request}"
    assert releasing.last_request == {"activate": [FORWARD], "deactivate": [JTC]}
    states = {n: i.active for n, i in releasing.discover().items()}
    assert states == {"joint_state_broadcaster": True, FORWARD: True, JTC: False}
    assert releasing.active[FORWARD].claimed_joints == ARM_JOINTS
    # the forward controller took over where the JTC left the arm (no jump on activation either)
    after = csm.positions(wait_until_stopped(csm, ARM_JOINTS), ARM_JOINTS)
    assert after == pytest.approx(rest, abs=ALLOWED_START_TOLERANCE)
