"""Shared pieces of the controller manager node tests: processes to start and a service client.

Every test talks to real processes over DDS (the simulator node, the controller manager node, spawners);
these helpers only save repeating the service boilerplate.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ros_harness import REPO, NodeProcess, answered_eventually, wait_for, wait_future, wait_ready

DATA = Path(__file__).parent / "data" / "cm_node"
CONTROLLERS_YAML = DATA / "cm_controllers.yaml"
RC_ARM = REPO / "urdf" / "rc_arm.urdf"
ARM_JOINTS = [f"joint{i}" for i in range(1, 8)]
# rc_arm's initial_value of joint1..7 (URDF <ros2_control>): the pose the simulator starts in
HOME = [0.0, 0.3, 0.0, 1.9, 0.0, 0.94, 0.0]


def start_simulator(processes: list[NodeProcess], *params: str) -> NodeProcess:
    params = with_default(params, TEST_COMMAND_TIMEOUT)
    args = ["--ros-args", "-p", f"urdf_path:={RC_ARM}"]
    if not any(p.startswith(("cameras:=", "sensors:=")) for p in params):
        params = ("cameras:=false", *params)  # rc_arm's scene camera: no test here looks at its images
    for p in params:
        args += ["-p", p]
    sim = NodeProcess.console_script("simulator", *args)
    processes.append(sim)
    sim.wait_for_output("simulator ready", timeout=60)
    return sim


# The manager's state_timeout (1 s by default) tripped in hog runs while a loaded machine starved a live simulator
# (a generated YAML's manager too); tests not about it get 5 s, as config/controllers.yaml gives the bring-up, and
# a test of the timeout passes its own.
TEST_STATE_TIMEOUT = "state_timeout:=5.0"
# The simulator's command watchdog (0.5 s by default) held a gripper's finger in a hog run while the manager's
# commands paused for 0.51 s, and the goal ended "stalled" before the test could cancel it: tests not about the
# watchdog get 2 s; a test of it passes its own.
TEST_COMMAND_TIMEOUT = "command_timeout:=2.0"


def with_default(params: tuple[str, ...], default: str) -> tuple[str, ...]:
    """``params`` plus ``default`` ("name:=value") unless the test gave that parameter itself."""
    name = default.split(":=", 1)[0] + ":="
    return params if any(p.startswith(name) for p in params) else (*params, default)


def start_controller_manager(processes: list[NodeProcess], *params: str, yaml: Path = CONTROLLERS_YAML,
                             extra_args: tuple[str, ...] = ()) -> NodeProcess:
    args = ["--ros-args", "--params-file", str(yaml)]
    params = with_default(params, TEST_STATE_TIMEOUT)
    if "hardware_mode:=embedded" in params and not any(p.startswith(("cameras:=", "sensors:=")) for p in params):
        params = ("cameras:=false", *params)  # rc_arm's scene camera, rendered by the embedded physics otherwise
    for p in params:
        args += ["-p", p]
    cm = NodeProcess.console_script("controller_manager", *args, *extra_args)
    processes.append(cm)
    cm.wait_for_output("controller manager ready", timeout=60)
    return cm


def run_spawner(*args: str, timeout: float = 60.0, script: str = "spawner") -> tuple[int, str]:
    proc = NodeProcess.console_script(script, *args)
    try:
        wait_for(lambda: not proc.alive(), timeout, f"{script} {' '.join(args)} to exit")
        return proc.proc.returncode, proc.output()
    finally:
        proc.stop()


_PROBE = "discovery_probe_not_a_controller"
# Per service a request that changes nothing: refused (unknown name) or empty.
HARMLESS: dict[str, dict[str, Any]] = {
    "list_controllers": {}, "list_controller_types": {}, "list_hardware_components": {},
    "list_hardware_interfaces": {}, "loop_statistics": {}, "switch_controller": {"strictness": 1},
    **{s: {"name": _PROBE} for s in ("load_controller", "configure_controller", "cleanup_controller",
                                     "unload_controller", "set_hardware_component_state")},
}


class CmClient:
    """Blocking calls to the controller manager's services from a node spun by the test executor.

    A service response is dropped (Fast DDS: "client will not receive response") when the server has not yet
    discovered the new client's response reader, which on a loaded machine can take longer than the first
    call. So before its first real call each service gets harmless requests (see HARMLESS) until one is
    answered; only then do calls that change something go out.
    """

    def __init__(self, node: Any, manager: str = "/controller_manager"):
        from controller_manager_msgs import srv
        from std_srvs.srv import Trigger

        self.node = node
        self.manager = manager
        self._types = {
            "list_controllers": srv.ListControllers,
            "list_controller_types": srv.ListControllerTypes,
            "load_controller": srv.LoadController,
            "configure_controller": srv.ConfigureController,
            "switch_controller": srv.SwitchController,
            "cleanup_controller": srv.CleanupController,
            "unload_controller": srv.UnloadController,
            "reload_controller_libraries": srv.ReloadControllerLibraries,
            "list_hardware_components": srv.ListHardwareComponents,
            "list_hardware_interfaces": srv.ListHardwareInterfaces,
            "set_hardware_component_state": srv.SetHardwareComponentState,
            "loop_statistics": Trigger,
            "pause_simulation": Trigger,
            "resume_simulation": Trigger,
        }
        self._clients = {name: node.create_client(t, f"{manager}/{name}") for name, t in self._types.items()}
        self._answering: set[str] = set()
        for name in ("list_controllers", "switch_controller"):
            assert wait_ready(self._clients[name], 30), f"{manager}/{name} not available"

    def _warm_up(self, service: str) -> None:
        assert wait_ready(self._clients[service], 30), f"{self.manager}/{service} not available"
        answered_eventually(self._clients[service].call_async, self._types[service].Request(**HARMLESS[service]),
                            f"an answer from {self.manager}/{service}")
        self._answering.add(service)

    def call(self, service: str, timeout: float = 20.0, **fields: Any) -> Any:
        if service not in self._answering and service in HARMLESS:
            self._warm_up(service)
        request = self._types[service].Request(**fields)
        return wait_future(self._clients[service].call_async(request), timeout, f"{self.manager}/{service}")

    def load(self, name: str) -> bool:
        return self.call("load_controller", name=name).ok

    def configure(self, name: str) -> bool:
        return self.call("configure_controller", name=name).ok

    def cleanup(self, name: str) -> bool:
        return self.call("cleanup_controller", name=name).ok

    def unload(self, name: str) -> bool:
        return self.call("unload_controller", name=name).ok

    def switch(self, activate: list[str] = (), deactivate: list[str] = (), strictness: int = 2) -> Any:
        return self.call("switch_controller", activate_controllers=list(activate),
                         deactivate_controllers=list(deactivate), strictness=strictness, activate_asap=True)

    def controllers(self) -> dict[str, Any]:
        return {c.name: c for c in self.call("list_controllers").controller}

    def state(self, name: str) -> str | None:
        c = self.controllers().get(name)
        return c.state if c else None

    def spawn(self, *names: str) -> None:
        for name in names:
            assert self.load(name), f"load {name}"
            assert self.configure(name), f"configure {name}"
        res = self.switch(list(names))
        assert res.ok, res.message

    def remove_all(self) -> None:
        """Deactivate and unload every controller (test isolation on a shared manager)."""
        ctrls = self.controllers()
        active = [n for n, c in ctrls.items() if c.state == "active"]
        if active:
            assert self.switch([], active).ok
        for n in ctrls:
            assert self.unload(n), f"unload {n}"


def wait_goal_service(client: Any, joints: list[str], timeout: float = 40.0) -> None:
    """Send goals without points until one is answered, before the goals that count: a goal response is lost as
    a service response is (see ros_harness.answered_eventually); the controller refuses these at once."""
    from control_msgs.action import FollowJointTrajectory

    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = list(joints)
    answered_eventually(client.send_goal_async, goal, "an answer from the goal service", timeout)


class JointStateRecorder:
    """Collects sensor_msgs/JointState messages of one topic, thread-safe."""

    def __init__(self, node: Any, topic: str = "/joint_states", qos: Any = None):
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import JointState

        self.messages: list[Any] = []
        self._lock = threading.Lock()
        self.sub = node.create_subscription(JointState, topic, self._on_msg, qos or qos_profile_sensor_data)

    def _on_msg(self, msg: Any) -> None:
        with self._lock:
            self.messages.append(msg)

    def latest(self) -> Any | None:
        with self._lock:
            return self.messages[-1] if self.messages else None

    def positions(self, joints: list[str]) -> list[float] | None:
        msg = self.latest()
        if msg is None:
            return None
        index = {n: i for i, n in enumerate(msg.name)}
        if not all(j in index for j in joints):
            return None
        return [msg.position[index[j]] for j in joints]

    def clear(self) -> None:
        with self._lock:
            self.messages.clear()

    def snapshot(self) -> list[Any]:
        with self._lock:
            return list(self.messages)

    def stamps(self) -> set[int]:
        """Header stamps (ns) of every message received."""
        with self._lock:
            return {m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in self.messages}
