"""joint_trajectory_controller over DDS with command interfaces other than position only: [position, velocity],
[velocity] with PID and [effort] with PID, each driving the simulated rc_arm through the topic-based hardware
(simulator node in another process, controller manager in a third, both on sim time).

[position, velocity] is here for a regression: the topic-based hardware once sent a joint's position and its
velocity in two JointState messages, and the velocity-only one switched the simulator's joint to velocity
control, so the arm no longer held its position. Two checks catch that: every command on the wire carries
both arrays for the same joints, and a joint pushed aside after the goal comes back by itself (a velocity servo
told "0 rad/s" stays about where it was pushed). With [velocity] the same push must be undone by the JTC's own
PID, which is how this test tells a closed loop from plain velocity feed-forward; with [effort] (on the pitch
joints 2, 4 and 6) the PID holds the arm against gravity, which the simulator does not compensate on
effort-driven joints.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import yaml
from cm_helpers import (
    ARM_JOINTS,
    HOME,
    CmClient,
    JointStateRecorder,
    start_controller_manager,
    start_simulator,
    wait_goal_service,
)
from ros_harness import NodeProcess, wait_for, wait_future

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

SUCCEEDED = 4  # action_msgs/GoalStatus
GOAL_TOL = 0.02  # rad, every joint's goal tolerance in the controllers below
MOVE_SECONDS = 3.0
TARGET = dict(zip(ARM_JOINTS, [0.5, 0.5, 0.2, 1.6, -0.2, 1.1, 0.4], strict=True))  # each joint moves 0.16..0.5 rad
PUSH_LINK = "link1"  # a torque about the vertical axis on link1 acts on joint1 only
PUSH_TORQUE = 60.0  # N m (joint1's actuator gives at most 87 N m, so the servos can hold against it)
PUSH_SECONDS = 0.3

# PID gains, chosen by running this test. Velocity: the simulator's velocity servo tracks exactly, so a plain
# 5 1/s position loop on top of the feed-forward is enough. Effort: the JTC's PID is decentralised and sees states
# a few ms late at 100 Hz, so it runs on the shoulder, elbow and wrist pitch joints only, whose inertias couple
# weakly (joints 1 and 3 turn about nearly parallel axes, which makes a fast mode no 100 Hz PID can damp); the
# others stay position servoed by the simulator. The loop is about 1.5 Hz with an integral that takes up
# gravity (18 N m on joint2, 10 N m on joint4 at home); a linearised model stays stable with over 40 ms of
# extra delay. ff_velocity_scale 0.5 feeds forward the joints' URDF damping (0.5 N m s/rad).
VELOCITY_GAINS = {"p": 5.0, "i": 0.0, "d": 0.0, "ff_velocity_scale": 1.0}
EFFORT_JOINTS = ["joint2", "joint4", "joint6"]
EFFORT_GAINS = {
    "joint2": {"p": 80.0, "i": 80.0, "d": 10.0, "ff_velocity_scale": 0.5},
    "joint4": {"p": 40.0, "i": 40.0, "d": 3.0, "ff_velocity_scale": 0.5},
    "joint6": {"p": 4.0, "i": 8.0, "d": 0.0, "ff_velocity_scale": 0.5},
}


def _jtc_params(joints: list[str], command_interfaces: list[str],
                gains: dict[str, dict[str, float]] | None = None) -> dict:
    params: dict = {
        "joints": joints,
        "command_interfaces": command_interfaces,
        "state_interfaces": ["position", "velocity"],
        "constraints": {"stopped_velocity_tolerance": 0.05, "goal_time": 3.0,
                        **{j: {"trajectory": 0.3, "goal": GOAL_TOL} for j in joints}},
    }
    if gains is not None:
        params["gains"] = gains
    return {"ros__parameters": params}


CONTROLLERS = {
    "jtc_position_velocity": _jtc_params(ARM_JOINTS, ["position", "velocity"]),
    "jtc_velocity_pid": _jtc_params(ARM_JOINTS, ["velocity"], {j: dict(VELOCITY_GAINS) for j in ARM_JOINTS}),
    "jtc_effort_pid": _jtc_params(EFFORT_JOINTS, ["effort"], EFFORT_GAINS),
}


def _write_config(folder: Path) -> Path:
    manager: dict = {"update_rate": 100,
                     "joint_state_broadcaster": {"type": "joint_state_broadcaster/JointStateBroadcaster"}}
    for name in CONTROLLERS:
        manager[name] = {"type": "joint_trajectory_controller/JointTrajectoryController"}
    path = folder / "jtc_command_interfaces.yaml"
    # rcl's YAML parser refuses anchors and aliases, which PyYAML writes for an object used twice
    dumper = type("NoAliasDumper", (yaml.SafeDumper,), {"ignore_aliases": lambda self, data: True})
    path.write_text(yaml.dump({"controller_manager": {"ros__parameters": manager}, **CONTROLLERS}, Dumper=dumper))
    return path


def _graph(folder: Path, *simulator_params: str):
    """A fresh simulator and controller manager per test: each test puts the arm's joints in other modes."""
    procs: list[NodeProcess] = []
    try:
        start_simulator(procs, *simulator_params)
        cm = start_controller_manager(procs, "use_sim_time:=true", yaml=_write_config(folder))
        yield cm
    finally:
        for p in procs:
            p.stop()


@pytest.fixture
def graph(tmp_path):
    yield from _graph(tmp_path)


@pytest.fixture
def half_speed_graph(tmp_path):
    """The graph with the simulator at half real time: the effort PID closes the loop over DDS, and a hog run
    stalled the loaded manager long enough for the arm to leave the 0.3 rad path tolerance mid-move; at half speed
    the arm moves half as far in the same wall-clock stall (sim time paces the manager, so nothing else changes)."""
    yield from _graph(tmp_path, "real_time_factor:=0.5")


def stamp(msg) -> float:
    """A message's header stamp in seconds (sim time here)."""
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


class CommandRecorder:
    """Every JointState the controller manager sends to the simulator, as (names, position, velocity, effort)."""

    def __init__(self, node, topic: str = "/robot_joint_commands"):
        from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState

        self.messages: list[tuple[list[str], list[float], list[float], list[float]]] = []
        self._lock = threading.Lock()
        qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100, reliability=ReliabilityPolicy.RELIABLE)
        self.sub = node.create_subscription(JointState, topic, self._on_msg, qos)

    def _on_msg(self, msg) -> None:
        with self._lock:
            self.messages.append((list(msg.name), list(msg.position), list(msg.velocity), list(msg.effort)))

    def snapshot(self) -> list[tuple[list[str], list[float], list[float], list[float]]]:
        with self._lock:
            return list(self.messages)


class Arm:
    """The test's side: controller manager services, one JTC's action, joint states, commands, the push."""

    def __init__(self, ros, controller: str):
        from control_msgs.action import FollowJointTrajectory
        from robot_core_interfaces.srv import ApplyWrench

        from robot_core.ros.action_client import ActionClient

        self.node = ros.node("jtc_command_interfaces_client")
        self.joints = list(CONTROLLERS[controller]["ros__parameters"]["joints"])
        self.commands = CommandRecorder(self.node)
        self.states = JointStateRecorder(self.node)
        # the simulator's own states (every one it publishes, reliable): a push's excursion lasts a few tenths of a
        # second, and the broadcaster's newest-value-wins /joint_states on a loaded machine can miss all of it
        self.raw = JointStateRecorder(self.node, "/robot_joint_states", qos=100)
        self.action = ActionClient(self.node, FollowJointTrajectory, f"/{controller}/follow_joint_trajectory")
        self.wrench = self.node.create_client(ApplyWrench, "/simulator/apply_wrench")
        CmClient(self.node).spawn("joint_state_broadcaster", controller)
        assert self.action.wait_for_server(timeout_sec=30), f"{controller}'s action server not discovered"
        wait_goal_service(self.action, self.joints)
        assert self.wrench.wait_for_service(timeout_sec=30), "/simulator/apply_wrench not available"
        wait_for(lambda: self.q() is not None, 20, "/joint_states")

    def q(self, joints: list[str] | None = None) -> list[float] | None:
        return self.states.positions(joints or self.joints)

    def move_to_target(self, with_velocities: bool) -> object:
        """A smooth move of the controller's joints from where they are to TARGET in MOVE_SECONDS; returns the
        action result. With velocities: a via point at half time with the velocity a smooth move has there
        (1.5 x the mean), and zero at the end (cubic splines); without: positions only (linear interpolation)."""
        from builtin_interfaces.msg import Duration
        from control_msgs.action import FollowJointTrajectory
        from trajectory_msgs.msg import JointTrajectoryPoint

        def point(t: float, q: list[float], v: list[float] | None) -> JointTrajectoryPoint:
            return JointTrajectoryPoint(positions=q, velocities=v or [],
                                        time_from_start=Duration(sec=int(t), nanosec=round((t % 1) * 1e9)))

        start, end = self.q(), [TARGET[j] for j in self.joints]
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = list(self.joints)
        if with_velocities:
            mid = [(a + b) / 2 for a, b in zip(start, end, strict=True)]
            mid_v = [1.5 * (b - a) / MOVE_SECONDS for a, b in zip(start, end, strict=True)]
            goal.trajectory.points = [point(MOVE_SECONDS / 2, mid, mid_v), point(MOVE_SECONDS, end, [0.0] * len(end))]
        else:
            goal.trajectory.points = [point(MOVE_SECONDS, end, None)]
        handle = wait_future(self.action.send_goal_async(goal), 20, "goal response")
        assert handle.accepted
        return wait_future(handle.get_result_async(), 40, "goal result")

    def reach_target(self, with_velocities: bool) -> list:
        """move_to_target, which must succeed with the arm settling at TARGET within the goal tolerance; returns
        the commands sent to the simulator on the way."""
        res = self.move_to_target(with_velocities=with_velocities)
        assert res.status == SUCCEEDED, res.result.error_string
        assert res.result.error_code == 0
        target = [TARGET[j] for j in ARM_JOINTS]
        assert wait_for(self.settled, 20, "the arm at rest at the goal") == pytest.approx(target, abs=GOAL_TOL)
        sent = self.commands.snapshot()
        assert sent, "no command reached /robot_joint_commands"
        return sent
    def settled(self, samples: int = 5, dt: float = 0.2, tol: float = 0.002) -> list[float] | None:
        """The arm's position (all joints) if it moved less than ``tol`` over ``samples`` readings ``dt`` apart."""
        first = self.q(ARM_JOINTS)
        for _ in range(samples - 1):
            time.sleep(dt)
            last = self.q(ARM_JOINTS)
            if max(abs(a - b) for a, b in zip(first, last, strict=True)) > tol:
                return None
        return last

    def push_joint1(self) -> tuple[float, float]:
        """Twist link1 about the vertical axis for PUSH_SECONDS of sim time; returns (joint1 where it was held,
        joint1's largest excursion from there seen in the joint states during and after the push)."""
        from geometry_msgs.msg import Wrench
        from robot_core_interfaces.srv import ApplyWrench

        held = wait_for(self.settled, 20, "the arm at rest before the push")[0]
        wait_for(self.raw.latest, 20, "the simulator's joint states")
        before = len(self.raw.snapshot())
        req = ApplyWrench.Request(link_name=PUSH_LINK, wrench=Wrench())
        req.wrench.torque.z = PUSH_TORQUE
        req.duration.nanosec = int(PUSH_SECONDS * 1e9)
        res = wait_future(self.wrench.call_async(req), 10, "apply_wrench")
        assert res.success, res.message
        # The push's whole duration in the recorded states, judged on their sim-time stamps: ``settled`` samples
        # on wall time, and on a loaded machine the states may stand still for a while and look settled before
        # the push shows (an excursion of 0.0005 rad was recorded so).
        pushed_until = stamp(self.raw.latest()) + PUSH_SECONDS + 1.0
        wait_for(lambda: stamp(self.raw.latest()) >= pushed_until, 60, "joint states past the push's end")
        wait_for(self.settled, 30, "the arm at rest after the push")
        return held, max(abs(m.position[list(m.name).index("joint1")] - held) for m in self.raw.snapshot()[before:])


def test_position_velocity_goal_keeps_the_joints_position_servoed(ros, graph):
    arm = Arm(ros, "jtc_position_velocity")
    assert arm.q() == pytest.approx(HOME, abs=0.02)
    sent = arm.reach_target(with_velocities=True)
    # On the wire: every command names the arm's joints with a position AND a velocity each, never one alone.
    for names, position, velocity, effort in sent:
        assert sorted(names) == sorted(ARM_JOINTS), names
        assert len(position) == len(velocity) == len(names), (names, position, velocity)
        assert not effort
    assert max(abs(v) for _, _, vs, _ in sent for v in vs) > 0.1, "the velocity interface never carried a velocity"

    # In the simulator: joint1 is position servoed, so after a push it goes back exactly to where it was held.
    held, excursion = arm.push_joint1()
    assert excursion > 0.01, "the push did not move joint1; the check below would prove nothing"
    assert held == pytest.approx(TARGET["joint1"], abs=GOAL_TOL)
    assert arm.q()[0] == pytest.approx(held, abs=1e-3)


def test_velocity_pid_goal_succeeds_and_the_pid_holds(ros, graph):
    arm = Arm(ros, "jtc_velocity_pid")
    sent = arm.reach_target(with_velocities=False)
    for names, position, velocity, effort in sent:
        assert sorted(names) == sorted(ARM_JOINTS) and len(velocity) == len(names) and not position and not effort

    # The simulator's velocity servo holds no position: only the JTC's PID brings joint1 back after a push.
    held, excursion = arm.push_joint1()
    assert excursion > 0.05, "the push did not move joint1; the check below would prove nothing"
    assert arm.q()[0] == pytest.approx(held, abs=0.005)


def test_effort_pid_goal_succeeds_and_holds_against_gravity(ros, half_speed_graph):
    arm = Arm(ros, "jtc_effort_pid")
    # At activation the efforts start at zero and the arm sags until the PID's integral carries its weight.
    wait_for(arm.settled, 30, "the effort-controlled arm at rest after activation")
    res = arm.move_to_target(with_velocities=True)
    assert res.status == SUCCEEDED, res.result.error_string
    assert res.result.error_code == 0
    target = [TARGET[j] for j in EFFORT_JOINTS]
    # It stays there: a second of readings near the goal (success is declared the moment the joints are within
    # the tolerance, so a PID may still swing a little past it), then at rest within the goal tolerance.
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        assert arm.q() == pytest.approx(target, abs=2 * GOAL_TOL)
        time.sleep(0.05)
    rest = wait_for(arm.settled, 20, "the arm at rest at the goal")
    assert [rest[ARM_JOINTS.index(j)] for j in EFFORT_JOINTS] == pytest.approx(target, abs=GOAL_TOL)
    sent = arm.commands.snapshot()
    assert sent
    for names, position, velocity, effort in sent:
        assert names == EFFORT_JOINTS and len(effort) == len(names) and not position and not velocity
    # the joints left out of the controller stay where the simulator's position servos hold them
    others = [j for j in ARM_JOINTS if j not in EFFORT_JOINTS]
    assert arm.q(others) == pytest.approx([HOME[ARM_JOINTS.index(j)] for j in others], abs=0.005)
