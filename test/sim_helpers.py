"""The planar2 simulator the simulator tests share: its start, a client that watches everything it publishes
and calls its services, and small helpers. The fixtures built on them are in conftest.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from robot_files import URDF_DIR
from ros_harness import NodeProcess, RosTestContext, wait_for, wait_future, wait_ready

HOME = {"joint1": -0.4, "joint2": 0.8}  # planar2's ros2_control initial values
DT = 0.001


def start_simulator(urdf: str | None, *params: str, cwd: Path | None = None) -> NodeProcess:
    """Start a simulator process with the robot file ``urdf`` (of urdf/; None: no description) and
    ``name:=value`` parameters, in the working directory ``cwd`` (None: this one)."""
    args = ["--ros-args"]
    if urdf:
        args += ["-p", f"urdf_path:={URDF_DIR / urdf}"]
    if urdf == "rc_arm.urdf" and not any(p.startswith(("cameras:=", "sensors:=")) for p in params):
        params = ("cameras:=false", *params)  # its scene camera would render in every simulator of the suite
    for p in params:
        args += ["-p", p]
    return NodeProcess.console_script("simulator", *args, cwd=cwd)


class SimClient:
    """A client node that watches everything the simulator publishes and calls its services."""

    def __init__(self, ros: RosTestContext, name: str):
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
        from robot_core_interfaces.msg import SimulatorStatus
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String
        from tf2_msgs.msg import TFMessage

        self.node = ros.node(name)
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.states: list[Any] = []
        self.state_count = 0
        self.clock: list[float] = []
        self.status: list[Any] = []
        self.tf: dict[tuple[str, str], Any] = {}
        self.tf_static: dict[tuple[str, str], Any] = {}
        self.description: list[str] = []
        n = self.node
        # Best-effort (sensor data) like upstream's states subscriber: must connect to the simulator's publisher.
        n.create_subscription(JointState, "/robot_joint_states", self._on_state, qos_profile_sensor_data)
        n.create_subscription(Clock, "/clock", lambda m: self._append(self.clock, sec(m.clock)), 10)
        n.create_subscription(SimulatorStatus, "/simulator/status", self._keep(self.status), 10)
        n.create_subscription(TFMessage, "/tf", lambda m: self._store_tf(self.tf, m), 10)
        n.create_subscription(TFMessage, "/tf_static", lambda m: self._store_tf(self.tf_static, m), latched)
        n.create_subscription(String, "/robot_description", lambda m: self.description.append(m.data), latched)
        self.commands = n.create_publisher(JointState, "/robot_joint_commands", 10)
        self._clients: dict[str, Any] = {}

    @staticmethod
    def _append(store: list, value: Any, cap: int = 2000) -> None:
        store.append(value)
        if len(store) > cap:
            del store[: len(store) - cap]

    def _on_state(self, msg: Any) -> None:
        self._append(self.states, msg)
        self.state_count += 1

    def _keep(self, store: list):
        return lambda m: self._append(store, m)

    @staticmethod
    def _store_tf(store: dict, msg: Any) -> None:
        for t in msg.transforms:
            store[(t.header.frame_id, t.child_frame_id)] = t

    def wait_connected(self, timeout: float = 30.0) -> None:
        wait_for(lambda: self.states and self.status and self.commands.get_subscription_count() > 0, timeout,
                 "simulator joint states, status and command subscription")

    # --- services ------------------------------------------------------------
    def call(self, name: str, request: Any, timeout: float = 20.0) -> Any:
        if name not in self._clients:
            from robot_core_interfaces.srv import ApplyWrench, ResetSimulation, SetJointState, StepSimulation
            from std_srvs.srv import Trigger

            types = {"reset": ResetSimulation, "pause": Trigger, "resume": Trigger, "step": StepSimulation,
                     "set_joint_state": SetJointState, "apply_wrench": ApplyWrench}
            client = self.node.create_client(types[name], f"/simulator/{name}")
            assert wait_ready(client, timeout), f"service /simulator/{name} not available"
            self._clients[name] = client
        return wait_future(self._clients[name].call_async(request), timeout, f"/simulator/{name} response")

    def trigger(self, name: str) -> Any:
        from std_srvs.srv import Trigger

        return self.call(name, Trigger.Request())

    def reset(self, **positions: float) -> Any:
        from robot_core_interfaces.srv import ResetSimulation

        return self.call("reset", ResetSimulation.Request(joint_names=list(positions),
                                                          positions=list(positions.values())))

    def step(self, steps: int) -> Any:
        from robot_core_interfaces.srv import StepSimulation

        return self.call("step", StepSimulation.Request(steps=steps))

    # --- topics ----------------------------------------------------------------
    def send(self, names: list[str], position=(), velocity=(), effort=()) -> None:
        from sensor_msgs.msg import JointState

        self.commands.publish(JointState(name=names, position=[float(v) for v in position],
                                         velocity=[float(v) for v in velocity],
                                         effort=[float(v) for v in effort]))

    def latest(self) -> Any:
        return self.states[-1]

    def positions(self) -> dict[str, float]:
        m = self.latest()
        return dict(zip(m.name, m.position, strict=True))

    def velocities(self) -> dict[str, float]:
        m = self.latest()
        return dict(zip(m.name, m.velocity, strict=True))

    def stamp(self) -> float:
        return sec(self.latest().header.stamp)

    def wait_state(self, cond, timeout: float = 15.0, what: str = "joint state") -> dict[str, float]:
        """Wait for a state message that arrives after this call and satisfies cond(positions, velocities)."""
        start = self.state_count
        try:
            wait_for(lambda: self.state_count > start and cond(self.positions(), self.velocities()), timeout, what)
        except TimeoutError:
            raise TimeoutError(f"timed out waiting for {what}; last positions {self.positions()}, "
                               f"velocities {self.velocities()}") from None
        return self.positions()


    def received_since(self, count: int) -> list[Any]:
        """State messages received after ``state_count`` was ``count`` (as many as are still kept)."""
        n = self.state_count - count
        return self.states[-n:] if n > 0 else []

    def state_at(self, stamp: float, since: int, timeout: float = 10.0) -> dict[str, float]:
        """Positions of the state message stamped ``stamp`` (after a step while paused) among those received after
        ``state_count`` was ``since``. A reset sends time back, so an older message may carry the same stamp; one
        writer's messages arrive in order, so counting from a moment after the reset excludes them."""
        def find():
            for m in reversed(self.received_since(since)):
                if abs(sec(m.header.stamp) - stamp) < 1e-9:
                    return dict(zip(m.name, m.position, strict=True))
            return None

        return wait_for(find, timeout, f"joint state stamped {stamp:.6f}")

    def step_and_state(self, steps: int) -> dict[str, float]:
        """Step the paused simulation and return the state at the time it reached."""
        since = self.state_count
        res = self.step(steps)
        assert res.success, res.message
        return self.state_at(sec(res.sim_time), since)


def sec(t: Any) -> float:
    return t.sec + t.nanosec * 1e-9


def near(values: dict[str, float], target: dict[str, float], tol: float) -> bool:
    return all(abs(values[k] - v) < tol for k, v in target.items())


def joint1_goals_at_once(node: Any, seen: dict[str, list[Any]], deltas: dict[str, float]) -> dict[str, float]:
    """Send each namespace's joint_trajectory_controller a 2 s move of joint1 by its delta, all at once, and wait
    until every goal succeeded and each arm's joint1 (from ``seen[ns]``, its JointState messages) is at its own
    target; returns the targets. Several robots in one graph must not take each other's goals."""
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    from robot_core.ros.action_client import ActionClient

    def joint1(ns: str) -> float:
        msg = seen[ns][-1]
        return msg.position[list(msg.name).index("joint1")]

    targets = {ns: joint1(ns) + delta for ns, delta in deltas.items()}
    clients = {ns: ActionClient(node, FollowJointTrajectory, f"/{ns}/joint_trajectory_controller/"
                                "follow_joint_trajectory") for ns in deltas}
    for client in clients.values():
        assert wait_ready(client, 30), f"{client._action_name} not available"
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
    for ns in deltas:
        wait_for(lambda ns=ns: abs(joint1(ns) - targets[ns]) < 0.03, 15, f"{ns} joint1 at its own goal")
    return targets
