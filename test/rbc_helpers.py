"""Shared pieces of the rbc node tests: test URDFs, a user-side client of the rbc node, action goals, oracles.

Nothing here stands in for the thing under test; it is what a user program would do over DDS.
"""

from __future__ import annotations

import math
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from ros_harness import REPO, NodeProcess, answered_eventually, wait_for, wait_future

RC_ARM = REPO / "urdf" / "rc_arm.urdf"
PLANAR2 = REPO / "urdf" / "planar2.urdf"
ARM = [f"joint{i}" for i in range(1, 8)]
STATES = "/robot_joint_states"
FORWARD_POSITION = "/forward_position_controller/commands"
FORWARD_VELOCITY = "/forward_velocity_controller/commands"
FAKE_DRIVER = "/fake_driver/joint_states"  # planar2's q when the test plays its driver (Servo)
# The rbc nodes' stale_timeout in tests not about staleness: hog runs starved a state publisher past 1 s (a reacher
# then rightly aborted on its stale q, 1.06 s without states seen); the staleness tests set their own.
TEST_STALE_TIMEOUT = 3.0


def load_rc_arm() -> Any:
    from robot_core.model import load_robot

    return load_robot(str(RC_ARM))


def rc_arm_loop(model: Any, gripper: bool = False) -> Any:
    """rc_arm's coupler closed on the real MuJoCo engine through the forward controllers' command topics (and the
    gripper position controller's, with ``gripper``), its first state published: the set-up of the ROS-free reacher
    tests."""
    from robot_core.physics.engine import PhysicsEngine
    from robot_core.rbc.coupler import Coupler
    from robot_core.rbc.engine_loop import CommandRoute, EngineLoop, forward_routes

    routes = forward_routes(FORWARD_POSITION, FORWARD_VELOCITY, ARM)
    if gripper:
        routes["/gripper_position_controller/commands"] = CommandRoute("position", ("finger_left_joint",))
    loop = EngineLoop(Coupler(model), PhysicsEngine(model, include_visuals=False), routes)
    loop.publish_state()
    return loop
COMMANDS = "/robot_joint_commands"


def _add_var(rbc: ET.Element, name: str, topic: str, kind: str, msg_type: str, field: str, index: int) -> None:
    v = ET.SubElement(rbc, "var", name=name, init="0.0", topic=topic, type=kind)
    ET.SubElement(v, "msg", type=msg_type, field=field, field_array="true", index=str(index), index_type="float")


def arm_urdf(path: Path) -> Path:
    """rc_arm with q/qd/tau from the simulator's states and q_ref into its JointState commands."""
    root = ET.parse(RC_ARM).getroot()
    joints = [*ARM, "finger_left_joint"]
    for j in root.findall("joint"):
        for r in j.findall("rbc"):
            j.remove(r)
        if j.get("name") not in joints:
            continue
        i = joints.index(j.get("name"))
        drv = ET.SubElement(j, "rbc", node="simulator")
        for name, field in (("q", "position"), ("qd", "velocity"), ("tau", "effort")):
            _add_var(drv, name, STATES, "state", "sensor_msgs.msg.JointState", field, i)
        _add_var(ET.SubElement(j, "rbc", node="simulator_commands"), "q_ref", COMMANDS, "cmd",
                 "sensor_msgs/msg/JointState", "position", i)
    path.write_text(ET.tostring(root, encoding="unicode"))
    return path


def fake_driver_urdf(path: Path, topic: str) -> Path:
    """planar2 whose q comes from ``topic`` (a driver the test plays) and q_ref goes to a topic nobody reads."""
    root = ET.parse(PLANAR2).getroot()
    for i, name in enumerate(("joint1", "joint2")):
        j = next(e for e in root.findall("joint") if e.get("name") == name)
        for r in j.findall("rbc"):
            j.remove(r)
        rbc = ET.SubElement(j, "rbc", node="fake_driver")
        _add_var(rbc, "q", topic, "state", "sensor_msgs/msg/JointState", "position", i)
        _add_var(rbc, "q_ref", "/fake_driver/commands", "cmd", "std_msgs/msg/Float64MultiArray", "data", i)
    path.write_text(ET.tostring(root, encoding="unicode"))
    return path


def start(script: str, *args: str) -> NodeProcess:
    return NodeProcess.console_script(script, "--ros-args", *args)


class Services:
    """The service clients of one test node: each made once per type and name, warmed up once with a request that
    changes nothing (Fast DDS may drop the first answer to a fresh client), then called with a deadline."""

    def __init__(self, node: Any):
        self.node = node
        self._clients: dict[tuple[Any, str], Any] = {}
        self._warm: set[Any] = set()

    def client(self, srv: Any, name: str) -> Any:
        key = (srv, name)
        if key not in self._clients:
            self._clients[key] = self.node.create_client(srv, name)
        return self._clients[key]

    def call(self, client: Any, request: Any, timeout: float = 15.0) -> Any:
        assert client.wait_for_service(timeout_sec=30), f"service {client.srv_name} not available"
        if client not in self._warm:
            harmless = harmless_request(client.srv_type)
            if harmless is not None:
                answered_eventually(client.call_async, harmless, f"an answer of {client.srv_name}")
            self._warm.add(client)
        return wait_future(client.call_async(request), timeout, f"answer of {client.srv_name}")

    def forget(self, srv: Any, name: str) -> None:
        """The server behind ``name`` was replaced: the next call gets a new client, warmed against the new one."""
        client = self._clients.pop((srv, name), None)
        if client is not None:
            self._warm.discard(client)
            self.node.destroy_client(client)


class Client:
    """What a user program does with the rbc node: service calls, parameters, actions, topics."""

    def __init__(self, ros: Any, rbc: str = "/rbc"):
        from rcl_interfaces.srv import SetParameters
        from robot_core_interfaces.srv import GetVars, L2Control, ResetSimulation, SetVars
        from sensor_msgs.msg import JointState
        from std_srvs.srv import Trigger

        self.ros = ros
        self.node = ros.node(f"rbc_test_client_{id(self)}")
        self.services = Services(self.node)
        self.rbc = rbc
        self._lock = threading.Lock()
        self.joint_states: list[Any] = []
        self.recorded: list[np.ndarray] = []
        self._recorder: Any = None
        self.node.create_subscription(JointState, STATES, self._on_states, 10)
        self.l2 = self._client(L2Control, f"{rbc}/l2_ctrl")
        self.get = self._client(GetVars, f"{rbc}/get_vars")
        self.set = self._client(SetVars, f"{rbc}/set_vars")
        self.release = self._client(Trigger, f"{rbc}/release")
        self.reset = self._client(ResetSimulation, "/simulator/reset")
        self._set_parameters = SetParameters

    def _client(self, srv: Any, name: str) -> Any:
        return self.services.client(srv, name)

    def call(self, client: Any, request: Any, timeout: float = 15.0) -> Any:
        return self.services.call(client, request, timeout)

    # --- simulator truth ---
    def _on_states(self, msg: Any) -> None:
        if not set(ARM) <= set(msg.name):
            return  # not our simulator (another test session sharing the domain): ignore
        with self._lock:
            self.joint_states.append(msg)
            del self.joint_states[:-250]

    def start_recording(self) -> None:
        """Record every arm state from now on. A subscription of its own, deep enough that a starved test process
        loses nothing of a move (250 Hz); the latest-state one stays shallow so that arm_q is never far behind."""
        from sensor_msgs.msg import JointState

        self.recorded, self._recorded_until = [], -1.0

        def record(msg: Any) -> None:
            if set(ARM) <= set(msg.name):
                self.recorded.append(np.array([msg.position[msg.name.index(j)] for j in ARM]))
                self._recorded_until = _stamp(msg)

        self._recorder = self.node.create_subscription(JointState, STATES, record, 2000)
        # A first recorded state, not only a match seen from the reader's side: the simulator's writer discovers
        # the new reader on its own, under load later, and a move started before that was recorded from halfway.
        wait_for(lambda: self.recorded, 30, "the recorder's first state from the simulator")

    def stop_recording(self) -> np.ndarray:
        """Stop once the recording has caught up with the newest state seen so far; returns the states, in order."""
        wait_for(lambda: self.joint_states, 20, "simulator joint states")
        with self._lock:
            until = _stamp(self.joint_states[-1])
        wait_for(lambda: self._recorded_until >= until, 30, "the recording to catch up")
        self.node.destroy_subscription(self._recorder)
        return np.array(self.recorded)

    def arm_q(self) -> np.ndarray:
        """Latest measured arm positions, straight from the simulator."""
        wait_for(lambda: self.joint_states, 20, "simulator joint states")
        with self._lock:
            msg = self.joint_states[-1]
        return np.array([msg.position[msg.name.index(j)] for j in ARM])

    def wait_still(self, timeout: float = 20.0, window: float = 0.4) -> None:
        """Until the simulated arm has been at rest for ``window`` s of simulated time (a single slow sample at
        the turning point of an overshoot does not count)."""
        def still() -> bool:
            with self._lock:
                msgs = list(self.joint_states)
            if not msgs:
                return False
            stamp = [m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in msgs]
            recent = [m for m, t in zip(msgs, stamp, strict=True) if t >= stamp[-1] - window]
            if stamp[-1] - stamp[0] < window:
                return False
            q = np.array([m.position for m in recent])
            return (max(max(abs(v) for v in m.velocity) for m in recent) < 5e-4
                    and float(np.max(np.ptp(q, axis=0))) < 2e-4)
        wait_for(still, timeout, "the arm to come to rest")

    # --- rbc ---
    def l2_ctrl(self, cmd: str, data: str = "", name: str = "") -> Any:
        from robot_core_interfaces.srv import L2Control

        # With instance_processes, create_re answers once the new process's node exists: an interpreter, the model
        # and rclpy starting, 12-19 s on a 2-core machine at load 25-30 (main's own test_rbc_processes timed out
        # at 15 s there).
        timeout = 60.0 if cmd == "create_re" else 15.0
        return self.call(self.l2, L2Control.Request(cmd=cmd, data=data, name=name), timeout)

    def create(self, type_name: str, name: str, **params: Any) -> None:
        res = self.l2_ctrl("create_re", type_name, name)
        assert res.success, res.message
        if params:
            results = self.set_params(name, **params)
            assert all(r.successful for r in results), [r.reason for r in results]

    def set_params(self, node: str, **params: Any) -> list[Any]:
        """``ros2 param set`` equivalent: one SetParameters call on the instance node."""
        from rclpy.parameter import Parameter

        client = self._client(self._set_parameters, f"/{node}/set_parameters")
        req = self._set_parameters.Request(parameters=[Parameter(k, value=v).to_parameter_msg()
                                                       for k, v in params.items()])
        return list(self.call(client, req).results)

    def forget_node(self, node: str) -> None:
        """The instance node ``node`` was re-created (a new process serves the name): the next set_params gets a
        new client, warmed against the new server. The old client's requests may go to the old server's lingering
        reader, or out before the new server's reader matched, and be lost (Fast DDS does not keep them)."""
        self.services.forget(self._set_parameters, f"/{node}/set_parameters")

    def get_vars(self, joints: list[str] | None = None, vars_: list[str] | None = None) -> Any:
        from robot_core_interfaces.srv import GetVars

        return self.call(self.get, GetVars.Request(joints=joints or [], vars=vars_ or []))

    def set_vars(self, joints: list[str], vars_: list[str], values: list[float]) -> Any:
        from robot_core_interfaces.srv import SetVars

        return self.call(self.set, SetVars.Request(joints=joints, vars=vars_, values=values))

    def cleanup(self) -> None:
        """Leave the stack as found: no instances, cmd topics released, simulation reset to its home pose."""
        from robot_core_interfaces.srv import ResetSimulation
        from std_srvs.srv import Trigger

        for name in self.l2_ctrl("list_re").names:
            self.l2_ctrl("destroy_re", name=name)
        assert self.call(self.release, Trigger.Request()).success
        assert self.call(self.reset, ResetSimulation.Request()).success


def _stamp(msg: Any) -> float:
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def harmless_request(srv: Any) -> Any:
    """A request that changes nothing, for the services a test calls on a fresh client; None: none known."""
    names = {"GetVars": {}, "L2Control": {"cmd": "list_re"}, "RbcL2Ctrl": {"cmd": "list_re"}, "SetParameters": {},
             "Trigger": {}}
    fields = names.get(srv.__name__)
    return None if fields is None else srv.Request(**fields)


def refused_goal(action: Any) -> Any:
    """A goal every reacher refuses at once (not finite), for warming up its goal service."""
    goal = action.Goal()
    name = action.__name__
    if name == "JointReach":
        goal.joint_names, goal.positions, goal.precision = ["joint1"], [math.nan], math.nan
    elif name == "CartesianReach":
        goal.pose.position.x = math.nan
    elif name == "ApplyContact":
        goal.wrench.force.x, goal.duration = math.nan, math.nan
    elif name == "VF":  # rbc_actions, the RBC documentation's types
        goal.goal.position.x = math.nan
    elif name == "JointReacher":
        from rbc_actions.msg import JointValue

        goal.goal = [JointValue(joint="no_such_joint", value=0.0)]
    else:
        return None
    return goal


def warm_goal_service(ac: Any, action: Any, name: str) -> None:
    """Send a goal the reacher refuses until it is answered: the goal service of a fresh client then answers."""
    refused = refused_goal(action)
    if refused is not None:
        answered_eventually(ac.send_goal_async, refused, f"an answer from the goal service of {name}")


class Goal:
    """One action goal: acceptance, feedback, result."""

    def __init__(self, client: Client, action: Any, name: str, goal: Any):
        from robot_core.ros.action_client import ActionClient

        self.ac = ActionClient(client.node, action, name)
        assert self.ac.wait_for_server(timeout_sec=30), f"action {name} not available"
        warm_goal_service(self.ac, action, name)
        self.feedback: list[Any] = []
        self.handle = wait_future(self.ac.send_goal_async(goal, feedback_callback=lambda f: self.feedback.append(
            f.feedback)), 15, f"acceptance by {name}")
        self._result = self.handle.get_result_async() if self.handle.accepted else None

    @property
    def accepted(self) -> bool:
        return bool(self.handle.accepted)

    def result(self, timeout: float) -> Any:
        assert self._result is not None, "goal was rejected"
        return wait_future(self._result, timeout, "action result").result

    def cancel(self) -> None:
        wait_future(self.handle.cancel_goal_async(), 15, "cancel answer")


def joint_goal(joints: list[str], positions: list[float], precision: float = 0.005, timeout: float = 20.0) -> Any:
    from robot_core_interfaces.action import JointReach

    return JointReach.Goal(joint_names=joints, positions=positions, precision=precision, timeout=timeout)


def pin_fk(urdf: Path, joints: list[str], q: np.ndarray, frame: str = "tcp") -> np.ndarray:
    """4x4 pose of ``frame`` from Pinocchio (an implementation independent of robot_core's kinematics)."""
    import pinocchio as pin

    model = pin.buildModelFromUrdf(str(urdf))
    data = model.createData()
    qv = pin.neutral(model)
    for j, v in zip(joints, q, strict=True):
        qv[model.idx_qs[model.getJointId(j)]] = v
    pin.framesForwardKinematics(model, data, qv)
    return np.asarray(data.oMf[model.getFrameId(frame)].homogeneous)


def rotation_angle(a: np.ndarray, b: np.ndarray) -> float:
    c = (np.trace(a.T @ b) - 1.0) / 2.0
    return float(math.acos(max(-1.0, min(1.0, c))))


class WrenchWatch:
    """Latest WrenchStamped on a topic."""

    def __init__(self, client: Client, topic: str):
        from geometry_msgs.msg import WrenchStamped

        self.msgs: list[Any] = []
        client.node.create_subscription(WrenchStamped, topic, self.msgs.append, 10)

    def latest(self) -> np.ndarray | None:
        if not self.msgs:
            return None
        w = self.msgs[-1].wrench
        return np.array([w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z])

    def settled_force(self, client: Client, truth: np.ndarray, timeout: float = 30.0) -> np.ndarray:
        """Force estimate once the arm is still and the estimate within 5 % (fails with the last estimate)."""
        client.wait_still(timeout)
        last: list[np.ndarray] = []

        def close() -> bool:
            w = self.latest()
            if w is None:
                return False
            last[:] = [w[:3]]
            return rel_err(w[:3], truth) < 0.05
        try:
            wait_for(close, timeout, "a force estimate within 5 %")
        except TimeoutError:
            raise AssertionError(f"estimate {last} vs applied {truth}") from None
        return last[0]


def rel_err(est: np.ndarray, true: np.ndarray) -> float:
    return float(np.linalg.norm(est - true) / np.linalg.norm(true))


class Servo:
    """The driver the test plays: publishes q at 100 Hz and makes it equal to every q_ref received."""

    def __init__(self, ros):
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray

        self.node = ros.node("rbc_process_servo")
        self.lock = threading.Lock()
        self.q = [0.0, 0.0]
        # (when the rbc node published it: the writer's source timestamp, time.time() seconds; q_ref). The
        # sender's stamp, not the arrival: under load commands reach the test in bursts, late.
        self.commands: list[tuple[float, list[float]]] = []
        self.pub = self.node.create_publisher(JointState, FAKE_DRIVER, 10)
        self.node.create_subscription(Float64MultiArray, "/fake_driver/commands", self._on_command, 100)
        self.node.create_timer(0.01, self._publish)
        self._msg = JointState

    def _on_command(self, msg, info) -> None:
        with self.lock:
            self.q = [float(v) for v in msg.data[:2]]
            self.commands.append((info["source_timestamp"] * 1e-9, list(self.q)))
            del self.commands[:-5000]

    def _publish(self) -> None:
        with self.lock:
            q = list(self.q)
        self.pub.publish(self._msg(name=["joint1", "joint2"], position=q))


def created_pid(message: str) -> int:
    """The pid in create_re's answer, e.g. "created JR 'JR0' (process 1234)"."""
    return int(message.rsplit("process ", 1)[1].rstrip(")"))


def parent_pid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def process_gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


def serving_rbc(proc: NodeProcess) -> Iterator[NodeProcess]:
    """A module fixture's body for an rbc node process: yields it once ready; it must then exit 0 on SIGINT."""
    try:
        proc.wait_for_output("rbc ready", 60)
        yield proc
        code = proc.stop()
        assert code == 0, f"rbc exited with {code} on SIGINT:\n{proc.log_path.read_text()[-3000:]}"
    finally:
        proc.stop()


def servoed_client(ros: Any) -> Iterator[Client]:
    """A fixture's body: a Client whose robot is the test's perfect servo (fresh ``q`` first); every instance the
    test created is destroyed afterwards."""
    servo = Servo(ros)
    c = Client(ros)
    c.servo = servo
    wait_for(lambda: not any(c.get_vars(vars_=["q"]).stale), 30, "fresh q from the test's servo")
    try:
        yield c
    finally:
        for name in c.l2_ctrl("list_re").names:
            c.l2_ctrl("destroy_re", name=name)
