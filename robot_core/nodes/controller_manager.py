"""``controller_manager``: ros2_control's controller manager as an rclpy node over ControllerManagerCore.

Run as ``ros2 run robot_core controller_manager --ros-args --params-file controllers.yaml`` (node name
``controller_manager``). The node only translates: services, parameters and topics to and from
:class:`robot_core.control.manager.ControllerManagerCore`, which holds every rule.

Per controller (as upstream): ``<name>.type``, ``<name>.params_file`` (string or string[]: parameter files
loaded into the controller's node, set by ``spawner -p``), ``<name>.node_options_args`` (ROS arguments of the
controller's node, set by ``spawner --controller-ros-args``).

Parameters: declared from ``CONTROLLER_MANAGER_PARAMS`` (robot_core.nodes.node_params) with type, default,
range, description and read-only in their descriptors; the table is in doc/nodes/controller_manager.md
(generated). All but ``overrun_report_period`` are read once at start-up.

Services (private, controller_manager_msgs): list_controllers, list_controller_types, load_controller,
configure_controller, switch_controller, cleanup_controller, unload_controller, reload_controller_libraries,
list_hardware_components, list_hardware_interfaces, set_hardware_component_state; robot_core's own:
``~/loop_statistics`` and ``~/reset_loop_statistics`` (std_srvs/Trigger; JSON in ``message``), and in embedded
mode ``~/pause_simulation``, ``~/resume_simulation`` (Trigger) and ``~/step_simulation``
(robot_core_interfaces/StepSimulation, ``steps`` control cycles), and the world's ``~/set_object_state``,
``~/spawn_object``, ``~/remove_object`` and ``~/reset`` (robot_core.ros.sim_world.WorldServices, as the simulator
node's; they change the engine between two control cycles).

Topics: ``~/activity`` (ControllerManagerActivity, reliable, transient local, depth 1) on every change;
the topic-based components' command/state topics and ``/clock`` (received, or published in embedded mode) on
a hidden internal node ``_<name>_hardware_io`` (see robot_core.ros.hardware_io for why).

Each controller is its own node, named after the controller, spun by the same executor (see
robot_core.nodes.controllers).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from rclpy.node import Node

from robot_core.control.errors import ControlError
from robot_core.control.hardware import IN_PROCESS_PLUGIN, HardwareInfo, create_component
from robot_core.control.in_process_simulator import InProcessSimulatorComponent
from robot_core.control.lifecycle import State
from robot_core.control.manager import ControllerManagerCore
from robot_core.control.messages import ActivityData
from robot_core.control.topic_based import TopicBasedComponent
from robot_core.nodes.controllers import adapter_class
from robot_core.nodes.controllers.base import ControllerAdapter, controller_node_class
from robot_core.nodes.node_params import CONTROLLER_MANAGER_PARAMS
from robot_core.parameter_spec import ParamError, spec_for, validate
from robot_core.ros import realtime
from robot_core.ros import ros_conversions as conv
from robot_core.ros.control_loop import ControlLoop, CycleGate, LockstepPacing, SimClockPacing, WallPacing
from robot_core.ros.hardware_io import HardwareIo
from robot_core.ros.middleware_deadlock import may_destroy
from robot_core.ros.outbox import Outbox
from robot_core.ros.parameters import (
    ReadOnlyReasons,
    check_set,
    convert_overrides,
    declare_overrides,
    declare_specs,
    describe_declared,
    inheritable_ros_args,
    parameter_value,
    parameters_as_dict,
)

TOPIC_PLUGIN = "topic_based_ros2_control/TopicBasedSystem"
# How long (s) a switch whose request gives no timeout (0) waits for the robot's first states: the spawner's
# default --switch-timeout (a plain `ros2 service call` sends 0 and must not be refused while the robot comes up)
DEFAULT_SWITCH_TIMEOUT = 5.0
# Parameters of this node that are not controller entries: declared, validated and documented from
# CONTROLLER_MANAGER_PARAMS (robot_core.nodes.node_params).
OWN_PARAMETERS: dict[str, Any] = {s.name: s.default for s in CONTROLLER_MANAGER_PARAMS if not s.family}


class RclpyLogAdapter:
    """``logging.Logger``-style calls (``%`` formatting) forwarded to an rclpy logger."""

    def __init__(self, logger: Any):
        self._logger = logger

    @staticmethod
    def _fmt(msg: str, args: tuple[Any, ...]) -> str:
        return msg % args if args else msg

    def debug(self, msg: str, *args: Any) -> None:
        self._logger.debug(self._fmt(msg, args))

    def info(self, msg: str, *args: Any) -> None:
        self._logger.info(self._fmt(msg, args))

    def warning(self, msg: str, *args: Any) -> None:
        self._logger.warning(self._fmt(msg, args))

    def error(self, msg: str, *args: Any) -> None:
        self._logger.error(self._fmt(msg, args))

    def exception(self, msg: str, *args: Any) -> None:
        self._logger.error(self._fmt(msg, args))


class ControllerManagerNode(ReadOnlyReasons, Node):
    """The ``controller_manager`` node. Call :meth:`attach` with the executor that spins it."""

    def __init__(self, node_name: str = "controller_manager", controller_args: Sequence[str] | None = None,
                 **kwargs: Any):
        """``controller_args``: the ROS arguments controller nodes get (default: the parameter part of this
        process's ``--ros-args``, see robot_core.ros.parameters.inheritable_ros_args)."""
        super().__init__(node_name, allow_undeclared_parameters=True, **kwargs)
        self._controller_args = list(inheritable_ros_args(sys.argv) if controller_args is None else controller_args)
        from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup

        self._declared = declare_specs(self, CONTROLLER_MANAGER_PARAMS, node_name)  # values as read at start
        self._package_dirs: list[str] = list(self._declared.get("package_dirs") or [])
        declare_overrides(self)
        self.add_on_set_parameters_callback(self._check_settable)
        self.executor_ref: Any = None
        self.core: ControllerManagerCore | None = None
        self.loop: ControlLoop | None = None
        self.adapters: dict[str, ControllerAdapter] = {}
        self.gate = CycleGate()
        self.outbox = Outbox("cm_outbox", self.get_logger().error, self.gate,
                             duty=float(self.get_parameter("publisher_duty_cycle").value))
        self.embedded: InProcessSimulatorComponent | None = None
        self.embedded_scene: Any = None  # robot_core.ros.embedded_scene.EmbeddedScene in embedded mode
        self._service_group = MutuallyExclusiveCallbackGroup()
        self._io_group = ReentrantCallbackGroup()
        self._init_lock = threading.Lock()
        self._cm_services: list[Any] = []
        self._clock_pub = None
        self._last_overrun_log = -1e9
        self._pm_qos_fd: int | None = None
        self._activity_pub = self._make_activity_publisher()
        self.mode = str(self.get_parameter("hardware_mode").value).strip().lower()
        try:
            validate(spec_for(CONTROLLER_MANAGER_PARAMS, "hardware_mode"), self.mode, node_name)  # type: ignore[arg-type]
        except ParamError as exc:
            raise ControlError(str(exc)) from None
        self.update_rate = float(self.get_parameter("update_rate").value)
        # hidden (leading underscore) like other internal nodes: `ros2 node list` shows only the manager
        self.io = HardwareIo(self.context, f"_{self.get_name()}_hardware_io", self.get_namespace(),
                             clock_from_topic=self.mode != "embedded",
                             clock_topic=self.resolve_topic_name("/clock"))
        self.io.node_clock_period = 1.0 / self.update_rate if self.update_rate > 0 else 0.0
        self.io.share_clock(self)
        self._description_sub = None
        description = self._initial_description()
        if description:
            self._initialize(description)
        else:
            from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
            from std_msgs.msg import String

            qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
            self._description_sub = self.create_subscription(String, "robot_description", self._on_description, qos,
                                                             callback_group=self._service_group)
            self.get_logger().info("Waiting for data on 'robot_description' topic to finish initialization")

    def read_only_reason(self, name: str) -> str:
        """The manager's own parameters are read once at start-up (upstream declares update_rate read-only); their
        descriptors say read_only, and a refused set says why."""
        return f"parameter '{name}' of the controller manager is read-only: it is read once at start-up"

    def _check_settable(self, params: list[Any]) -> Any:
        """The settable own parameters (overrun_report_period) pass their spec; controller entries are free."""
        from rcl_interfaces.msg import SetParametersResult

        reason = check_set(CONTROLLER_MANAGER_PARAMS, params, self.get_name())
        return SetParametersResult(successful=not reason, reason=reason)

    # ------------------------------------------------------------------ set-up
    def attach(self, executor: Any) -> None:
        """The executor that spins this node also spins the controller nodes."""
        self.executor_ref = executor
        executor.add_node(self)
        for adapter in self.adapters.values():
            executor.add_node(adapter.node)

    def _make_activity_publisher(self) -> Any:
        from controller_manager_msgs.msg import ControllerManagerActivity
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

        qos = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
        return self.create_publisher(ControllerManagerActivity, "~/activity", qos)

    def _initial_description(self) -> str:
        text = str(self.get_parameter("robot_description").value or "")
        path = str(self.get_parameter("robot_description_file").value or "")
        if text.strip():
            return text
        if path:
            from pathlib import Path

            return str(Path(path).expanduser())
        return ""

    def _publish_description(self, robot: Any) -> None:
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from std_msgs.msg import String

        from robot_core.model.urdf_writer import write_urdf

        qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
        self._description_pub = self.create_publisher(String, "robot_description", qos)
        self._description_pub.publish(String(data=robot.urdf_xml or write_urdf(robot)))

    def _on_description(self, msg: Any) -> None:
        if self.core is not None:
            self.get_logger().warning("robot_description received again; the controller manager keeps the first "
                                      "one (restart it to change the robot)")
            return
        try:
            self._initialize(msg.data)
        except Exception as exc:
            self.get_logger().error(f"could not initialize from the 'robot_description' topic: {exc}")

    def _initialize(self, description: str) -> None:
        """Robot -> hardware components -> services -> update loop. Runs once."""
        from robot_core.model import load_robot

        with self._init_lock:
            if self.core is not None:
                return
            robot = load_robot(description, self._package_dirs or None)
            core = ControllerManagerCore(robot, self.update_rate, on_activity=self._on_activity,
                                         logger=RclpyLogAdapter(self.get_logger()))
            if robot.ros2_control:
                infos = [HardwareInfo.from_ros2_control(block, robot) for block in robot.ros2_control]
            elif self.mode in ("topic", "embedded"):
                # the simulator (or the embedded engine) is the hardware: every actuated joint, as the simulator
                # serves them (position, velocity, effort), and the actuators of the robot's transmissions
                infos = [HardwareInfo.default_for_robot(robot, TOPIC_PLUGIN if self.mode == "topic"
                                                        else IN_PROCESS_PLUGIN)]
                joints = infos[0].joints
                self.get_logger().info(f"robot '{robot.name}' has no <ros2_control> block: one component with its "
                                       f"{len(joints)} joints ({sum(1 for j in joints if j.command_interfaces)} "
                                       f"commanded) and {len(infos[0].transmissions.actuator_names)} transmission "
                                       "actuator(s)")
            else:
                raise ControlError(f"robot '{robot.name}' has no <ros2_control> block, so there is no hardware to "
                                   f"control (hardware_mode topic or embedded makes one for the simulator)")
            for info in infos:
                self._add_component(core, robot, info)
            self.core = core
            if self.get_parameter("robot_description_file").value and not str(
                    self.get_parameter("robot_description").value or "").strip() and \
                    self.get_parameter("publish_robot_description").value:
                self._publish_description(robot)
            self._create_services()
            self._start_loop()
            self.get_logger().info(
                f"controller manager ready: robot '{robot.name}', {len(core.components)} hardware component(s) "
                f"{list(core.components)}, update_rate {self.update_rate:g} Hz, "
                f"{'embedded simulator' if self.embedded is not None else 'hardware mode ' + (self.mode or 'urdf')}")
            self._on_activity(core.activity())

    def _add_component(self, core: ControllerManagerCore, robot: Any, info: HardwareInfo) -> None:
        plugin = info.plugin
        if self.mode == "embedded":
            plugin = IN_PROCESS_PLUGIN
        elif self.mode == "topic":
            plugin = TOPIC_PLUGIN
        timeout = float(self.get_parameter("state_timeout").value)
        if timeout >= 0.0:
            info.hardware_params["state_timeout"] = str(timeout)
        kwargs: dict[str, Any] = {}
        scene = None
        if plugin == IN_PROCESS_PLUGIN:
            if self.embedded is not None:
                raise ControlError(f"hardware component '{info.name}': only one in-process simulator is supported "
                                   f"(already running '{self.embedded.name}')")
            kwargs["timestep"] = float(self.get_parameter("sim_timestep").value)
            scene = self._scene(robot)
            fixed = bool(self._declared["fixed_base"]) or robot.root_link == "world"
            kwargs["engine_options"] = {**scene.engine_options(robot, fixed), "fixed_base": fixed,
                                        **self._engine_families()}
        component = create_component(info, robot, plugin if plugin != info.plugin else None, **kwargs)
        if isinstance(component, TopicBasedComponent):
            self.io.bridge_topic_component(component)
        elif isinstance(component, InProcessSimulatorComponent):
            self.embedded = component
            assert scene is not None
            self._start_embedded_scene(scene, robot, component)
        core.add_hardware_component(component, self._initial_hardware_state(info.name))

    def _scene_parameters(self) -> dict[str, Any]:
        """The scene parameters (robot_core.nodes.node_params.SCENE_PARAMS) as the simulator node reads them."""
        p = {name: self._declared[name]
             for name in ("world", "keyframes", "base_pose", "floor", "cameras", "sensors", "noise_seed",
                          "mjcf_cameras", "mjcf_camera_width", "mjcf_camera_height", "mjcf_camera_rate",
                          "sensor_topics")}
        rates = {}
        for key, value in self.get_parameters_by_prefix("sensor_rates").items():
            v = value.value
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ControlError(f"parameter 'sensor_rates.{key}' = {v!r} must be a number (Hz)")
            rates[key] = float(v)
        p["sensor_rates"] = rates
        return p

    def _engine_families(self) -> dict[str, Any]:
        """Embedded mode: ``initial_positions.<joint>`` and ``gains.<joint>.<kp|kd|kv>``, as the simulator node
        reads them (PhysicsEngine checks the joints)."""
        def number(name: str, v: Any) -> float:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ControlError(f"parameter '{name}' = {v!r} must be a number")
            return float(v)

        out: dict[str, Any] = {}
        initial = {k: number(f"initial_positions.{k}", v.value)
                   for k, v in self.get_parameters_by_prefix("initial_positions").items()}
        if initial:
            out["initial_positions"] = initial
        gains: dict[str, dict[str, float]] = {}
        for key, v in self.get_parameters_by_prefix("gains").items():
            joint, _, gain = key.rpartition(".")
            if not joint or gain not in ("kp", "kd", "kv"):
                raise ControlError(f"parameter 'gains.{key}' must be named gains.<joint>.<kp|kd|kv>")
            gains.setdefault(joint, {})[gain] = number(f"gains.{key}", v.value)
        if gains:
            out["gains"] = gains
        return out

    def _scene(self, robot: Any) -> Any:
        """The embedded physics' world, placed base and cameras (robot_core.physics.scene), warnings to the log;
        a world or keyframes file that cannot be used stops the start naming file, line and element."""
        import warnings

        from robot_core.model import RobotModelError
        from robot_core.physics.scene import Scene, SceneSettings

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                scene = Scene(SceneSettings.from_params(self._scene_parameters()))
                scene.select_sensors(robot)
            except (RobotModelError, ValueError) as exc:
                raise ControlError(str(exc)) from None
        for w in caught:
            self.get_logger().warning(str(w.message))
        return scene

    def _start_embedded_scene(self, scene: Any, robot: Any, component: InProcessSimulatorComponent) -> None:
        """Build the engine now (its world is published from the first cycle on, whatever the component's
        lifecycle state) and the world, camera and laser topics (robot_core.ros.embedded_scene)."""
        import warnings

        from robot_core.model import RobotModelError
        from robot_core.physics.frame_prefix import FramePrefix
        from robot_core.ros.embedded_scene import EmbeddedScene

        log = self.get_logger()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                engine = component.build_engine()
                world = scene.world_sim(engine)
                scene.add_model_cameras(robot, engine, str(self._declared["world_frame"]))
                FramePrefix(str(self._declared["frame_prefix"]))  # refused here, naming the parameter
            except (RobotModelError, ValueError) as exc:
                raise ControlError(str(exc)) from None
        for w in caught:
            log.warning(str(w.message))
        outputs = EmbeddedScene(self, scene, world, robot, self.outbox.post,
                                world_frame=str(self._declared["world_frame"]),
                                frame_prefix=str(self._declared["frame_prefix"]),
                                tf_rate=float(self._declared["tf_rate"]),
                                lasers=bool(self._declared["lasers"]),
                                contacts_rate=float(self._declared["contacts_rate"]), log_error=log.error,
                                between_cycles=self.gate.helper, after_change=self._engine_changed,
                                callback_group=self._service_group)
        text = outputs.describe()
        if text:
            log.info(f"embedded simulation: {text}")
        self.embedded_scene = outputs

    def _engine_changed(self, kind: str) -> None:
        """Between two cycles, after a world service changed the embedded engine: the component follows; after a
        reset /clock says the new time at once."""
        self.embedded.on_engine_changed(kind)
        if kind == "reset":
            self.outbox.post("clock", self._publish_clock, self.embedded.sim_time)

    def _initial_hardware_state(self, name: str) -> State:
        """Upstream's ``hardware_components_initial_state.{unconfigured,inactive}`` lists; default active."""
        for label, state in (("unconfigured", State.UNCONFIGURED), ("inactive", State.INACTIVE)):
            names = parameter_value(self, f"hardware_components_initial_state.{label}", [])
            if name in ([names] if isinstance(names, str) else list(names)):
                return state
        return State.ACTIVE

    # ------------------------------------------------------------------ the loop
    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def control_time(self) -> float:
        """The time controllers see (sim time in embedded mode or with use_sim_time)."""
        if self.embedded is not None:
            return self.embedded.sim_time
        if self.loop is not None and isinstance(self.loop.pacing, SimClockPacing):
            sim = self.loop.pacing.sim_time
            return sim if sim is not None else 0.0
        return self._now()

    def _start_loop(self) -> None:
        pacing: WallPacing | SimClockPacing | LockstepPacing
        if self.embedded is not None:
            pacing = LockstepPacing(self.update_rate, lambda: self.embedded.sim_time,
                                    float(self.get_parameter("real_time_factor").value),
                                    bool(self.get_parameter("start_paused").value))
            self.io.use_own_clock()
            if self.get_parameter("publish_clock").value:
                from rclpy.qos import QoSProfile, ReliabilityPolicy
                from rosgraph_msgs.msg import Clock

                self._clock_pub = self.io.node.create_publisher(
                    Clock, self.io.clock_topic, QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))
            self._create_sim_services(pacing)
        elif self.get_parameter("use_sim_time").value:
            # A dead simulator stops /clock and so the cycles: the idle hook still takes the robot's states and
            # judges their staleness on wall time.
            pacing = SimClockPacing(self.update_rate, on_idle=self._idle)
            self.io.on_clock(pacing.on_clock)
        else:
            # Without sim time ROS time is the system clock; read it directly (rclpy's Clock.now() costs tens of
            # microseconds, a noticeable share of a 1 kHz cycle).
            pacing = WallPacing(self.update_rate, time.time)
        self.loop = ControlLoop(self._cycle, pacing, self.update_rate, self._on_overrun, gate=self.gate,
                                on_start=self._loop_scheduling(pacing))
        self.loop.start()

    def _loop_scheduling(self, pacing: Any) -> Callable[[], None]:
        """Upstream's real-time set-up of the loop thread: memory lock now, policy and affinity in the thread."""
        log = self.get_logger()
        priority = int(self.get_parameter("thread_priority").value)
        cpus = realtime.cpu_list(parameter_value(self, "cpu_affinity", None), f"controller manager '{self.get_name()}'")
        if parameter_value(self, "lock_memory", realtime.has_realtime_kernel()):
            problem = realtime.lock_memory()
            if problem:
                log.warning(f"Unable to lock the memory: '{problem}'")
        latency = int(self.get_parameter("cpu_dma_latency").value)
        if latency >= 0:
            self._pm_qos_fd, problem = realtime.hold_cpu_dma_latency(latency)
            if problem:
                log.warning(problem)
            else:
                log.info(f"CPU wake-up latency held at {latency} us while the controller manager runs")
        if isinstance(pacing, LockstepPacing) and pacing.real_time_factor <= 0.0 and priority:
            log.info("real_time_factor is 0: the embedded loop runs as fast as it can, so it keeps normal "
                     "scheduling instead of SCHED_FIFO")
            priority = 0

        def configure() -> None:
            problems = realtime.configure_current_thread(priority, cpus)
            for problem in problems:
                log.warning(problem)
            if priority and not any("FIFO" in p for p in problems):
                log.info(f"Successful set up FIFO RT scheduling policy with priority {priority}.")
        return configure

    def _cycle(self, time: float, period: float) -> None:
        core = self.core
        assert core is not None
        self.io.poll()
        core.update(time, period)
        if self.embedded is not None:
            self.outbox.post("clock", self._publish_clock, self.embedded.sim_time)
            if self.embedded_scene is not None:
                self.embedded_scene.after_cycle()

    def _idle(self) -> None:
        """No cycle for a while (the clock stopped): take queued states and let the core judge staleness."""
        self.io.poll()
        self.core.watchdog()

    def _publish_clock(self, t: float) -> None:
        from rosgraph_msgs.msg import Clock

        msg = Clock(clock=conv.to_time(t))
        if self._clock_pub is not None:
            self._clock_pub.publish(msg)
        self.io.deliver_clock(msg)

    def _on_overrun(self, exec_time: float) -> None:
        now = time.monotonic()
        if now - self._last_overrun_log < float(self.get_parameter("overrun_report_period").value):
            return
        self._last_overrun_log = now
        assert self.loop is not None
        s = self.loop.stats
        self.get_logger().warning(
            f"Overrun detected! The control loop took {exec_time * 1e3:.3f} ms, more than the period "
            f"{1e3 / self.update_rate:.3f} ms ({s.overruns} overruns in {s.cycles} cycles)")

    # ------------------------------------------------------------------ activity
    def _on_activity(self, data: ActivityData) -> None:
        data.stamp = self.control_time()
        self._activity_pub.publish(conv.activity(data))
        for name, state in data.controllers:
            adapter = self.adapters.get(name)
            if adapter is not None:
                try:
                    adapter.on_state_change(state)
                except Exception as exc:
                    self.get_logger().error(f"controller '{name}': state change handling failed: {exc}")

    # ------------------------------------------------------------------ services
    def _create_services(self) -> None:
        from controller_manager_msgs import srv
        from std_srvs.srv import Trigger

        table: list[tuple[Any, str, Callable[[Any, Any], Any]]] = [
            (srv.ListControllers, "list_controllers", self._srv_list_controllers),
            (srv.ListControllerTypes, "list_controller_types", self._srv_list_controller_types),
            (srv.LoadController, "load_controller", self._srv_load_controller),
            (srv.ConfigureController, "configure_controller", self._srv_configure_controller),
            (srv.SwitchController, "switch_controller", self._srv_switch_controller),
            (srv.CleanupController, "cleanup_controller", self._srv_cleanup_controller),
            (srv.UnloadController, "unload_controller", self._srv_unload_controller),
            (srv.ReloadControllerLibraries, "reload_controller_libraries", self._srv_reload_libraries),
            (srv.ListHardwareComponents, "list_hardware_components", self._srv_list_hardware_components),
            (srv.ListHardwareInterfaces, "list_hardware_interfaces", self._srv_list_hardware_interfaces),
            (srv.SetHardwareComponentState, "set_hardware_component_state", self._srv_set_hardware_state),
            (Trigger, "loop_statistics", self._srv_loop_statistics),
            (Trigger, "reset_loop_statistics", self._srv_reset_loop_statistics),
        ]
        for srv_type, name, callback in table:
            self._cm_services.append(self.create_service(srv_type, f"~/{name}", callback,
                                                      callback_group=self._service_group))

    def _create_sim_services(self, pacing: LockstepPacing) -> None:
        from robot_core_interfaces.srv import StepSimulation
        from std_srvs.srv import Trigger

        def pause(_req: Any, res: Any) -> Any:
            pacing.pause()
            res.success, res.message = True, f"paused at sim time {self.control_time():.6f} s"
            return res

        def resume(_req: Any, res: Any) -> Any:
            pacing.resume()
            res.success, res.message = True, "resumed"
            return res

        def step(req: Any, res: Any) -> Any:
            if not pacing.paused:
                res.success, res.message = False, "step_simulation needs the simulation paused (~/pause_simulation)"
            else:
                ok = pacing.step(int(req.steps), timeout=max(10.0, req.steps / self.update_rate * 10))
                res.success, res.message = ok, "" if ok else "timed out while stepping"
            res.step_count = self.loop.stats.cycles if self.loop else 0
            res.sim_time = conv.to_time(self.control_time())
            return res

        for srv_type, name, cb in ((Trigger, "pause_simulation", pause), (Trigger, "resume_simulation", resume),
                                   (StepSimulation, "step_simulation", step)):
            self._cm_services.append(self.create_service(srv_type, f"~/{name}", cb, callback_group=self._io_group))

    def _refuse(self, exc: Exception) -> None:
        self.get_logger().error(str(exc))

    def _srv_list_controllers(self, _req: Any, res: Any) -> Any:
        res.controller = [conv.controller_state(c) for c in self.core.list_controllers()]
        return res

    def _srv_list_controller_types(self, _req: Any, res: Any) -> Any:
        types, bases = self.core.list_controller_types()
        res.types, res.base_classes = list(types), list(bases)
        return res

    def _ok_or_refuse(self, res: Any, action: Callable[[], Any]) -> Any:
        """Run a lifecycle request: ok=True, or ok=False with the refusal logged as upstream does."""
        try:
            action()
            res.ok = True
        except ControlError as exc:
            self._refuse(exc)
            res.ok = False
        return res

    def _srv_load_controller(self, req: Any, res: Any) -> Any:
        return self._ok_or_refuse(res, lambda: self.load_controller(req.name))

    def _srv_configure_controller(self, req: Any, res: Any) -> Any:
        return self._ok_or_refuse(res, lambda: self.configure_controller(req.name))

    def _srv_switch_controller(self, req: Any, res: Any) -> Any:
        timeout = conv.time_to_seconds(req.timeout)
        result = self.core.switch_controller(list(req.activate_controllers), list(req.deactivate_controllers),
                                             int(req.strictness), bool(req.activate_asap),
                                             timeout if timeout > 0 else DEFAULT_SWITCH_TIMEOUT)
        res.ok, res.message = bool(result.ok), result.message
        return res

    def _srv_cleanup_controller(self, req: Any, res: Any) -> Any:
        def cleanup() -> None:
            self.core.cleanup_controller(req.name)
            self.adapters[req.name].cleanup()

        return self._ok_or_refuse(res, cleanup)

    def _srv_unload_controller(self, req: Any, res: Any) -> Any:
        return self._ok_or_refuse(res, lambda: self.unload_controller(req.name))

    def _srv_reload_libraries(self, req: Any, res: Any) -> Any:
        try:
            self.core.reload_controller_libraries(bool(req.force_kill))
            res.ok = True
        except ControlError as exc:
            self._refuse(exc)
            res.ok = False
        self._drop_unloaded_adapters()
        return res

    def _srv_list_hardware_components(self, _req: Any, res: Any) -> Any:
        comps = self.core.list_hardware_components()
        for c in comps:
            if c.failed:
                self.get_logger().warning(f"hardware component '{c.name}' is failed: {c.failure_reason}",
                                          throttle_duration_sec=5.0)
        res.component = [conv.hardware_component_state(c) for c in comps]
        return res

    def _srv_list_hardware_interfaces(self, _req: Any, res: Any) -> Any:
        commands, states = self.core.list_hardware_interfaces()
        res.command_interfaces = [conv.hardware_interface(i) for i in commands]
        res.state_interfaces = [conv.hardware_interface(i) for i in states]
        return res

    def _srv_set_hardware_state(self, req: Any, res: Any) -> Any:
        target: int | str = req.target_state.id if req.target_state.id != 0 else req.target_state.label
        try:
            state = self.core.set_hardware_component_state(req.name, target)
            res.ok = True
        except ControlError as exc:
            self._refuse(exc)
            res.ok = False
            comp = self.core.components.get(req.name)
            state = comp.state if comp is not None else State.UNKNOWN
        res.state = conv.lifecycle_state(state)
        return res

    def _srv_loop_statistics(self, _req: Any, res: Any) -> Any:
        stats = self.loop.statistics() if self.loop else {}
        res.success, res.message = True, json.dumps(stats)
        return res

    def _srv_reset_loop_statistics(self, _req: Any, res: Any) -> Any:
        if self.loop:
            self.loop.reset_statistics()
        res.success, res.message = True, "loop statistics reset"
        return res

    # ------------------------------------------------------------------ controller life (also usable in-process)
    def load_controller(self, name: str) -> ControllerAdapter:
        """Create the controller's node and core object; raises ControlError with upstream's wording."""
        from robot_core.text import clip
        from robot_core.yaml_guard import YamlLimitError, check_yaml_file

        core = self.core
        assert core is not None
        if name in core.controller_names():
            raise ControlError(f"A controller named '{name}' was already loaded inside the controller manager")
        type_name = parameter_value(self, f"{name}.type")
        if not type_name:
            raise ControlError(f"The 'type' param was not defined for '{clip(name)}'.")
        if not core.registry.has(str(type_name)):
            raise ControlError(f"Loader for controller '{name}' (type '{type_name}') not found. Available types: "
                               f"{core.registry.types()}")
        params_files = parameter_value(self, f"{name}.params_file", [])
        if isinstance(params_files, str):
            params_files = [params_files] if params_files else []
        # As upstream: no global arguments (a `-r __node:=...` for the manager must not rename controllers), its
        # own params_file(s) and node_options_args, use_sim_time as the manager's; plus the inherited parameters.
        cli_args = ["--ros-args", *self._controller_args]
        for f in params_files:
            try:  # rcl's parser would expand an alias bomb without limit
                check_yaml_file(str(f))
            except (YamlLimitError, OSError) as exc:
                raise ControlError(f"controller '{clip(name)}': params_file refused: {exc}") from None
            cli_args += ["--params-file", str(f)]
        if self.get_parameter("use_sim_time").value:
            cli_args += ["-p", "use_sim_time:=true"]
        node_args = parameter_value(self, f"{name}.node_options_args", [])
        if node_args:
            node_args = [str(a) for a in ([node_args] if isinstance(node_args, str) else node_args)]
            cli_args += node_args  # a repeated --ros-args flag is allowed
        try:
            node = controller_node_class()(name, namespace=self.get_namespace(), context=self.context,
                                           cli_args=cli_args, use_global_arguments=False,
                                           allow_undeclared_parameters=True)
        except Exception as exc:
            raise ControlError(f"Could not create the node of controller '{name}': {exc}") from None
        try:
            specs = core.registry.get(str(type_name)).PARAMS
            convert_overrides(node, specs)
            declare_overrides(node)
            describe_declared(node, specs, list(node.get_parameters_by_prefix("")))
            adapter_cls = adapter_class(str(type_name))
            params = parameters_as_dict(node)
            params.pop("type", None)
            controller = core.load_controller(name, str(type_name), params)
        except Exception as exc:
            node.destroy_node()
            if isinstance(exc, ControlError):
                raise
            raise ControlError(f"Could not load controller '{name}': {type(exc).__name__}: {exc}") from exc
        adapter = adapter_cls(node, controller, self.outbox, self.control_time)
        self.io.share_clock(node)
        self.adapters[name] = adapter
        if self.executor_ref is not None:
            self.executor_ref.add_node(node)
        return adapter

    def configure_controller(self, name: str) -> None:
        core = self.core
        assert core is not None
        controller = core.controller(name) if name in core.controller_names() else None
        if controller is None:
            from robot_core.text import clip

            raise ControlError(f"Could not configure controller with name '{clip(name)}' because no controller "
                               f"with this name exists")
        adapter = self.adapters[name]
        if controller.state == State.INACTIVE:
            core.cleanup_controller(name)  # re-configure from inactive: cleanup first, as ros2_control does
            adapter.cleanup()
        if controller.state == State.UNCONFIGURED:
            params = adapter.read_parameters()
            params.pop("type", None)
            core.set_controller_params(name, params)
        core.configure_controller(name)
        adapter.declare_defaults(controller.params.defaults)
        adapter.configure()

    def unload_controller(self, name: str) -> None:
        core = self.core
        assert core is not None
        core.unload_controller(name)
        self._drop_unloaded_adapters()

    def _drop_unloaded_adapters(self) -> None:
        loaded = set(self.core.controller_names()) if self.core else set()
        for name in [n for n in self.adapters if n not in loaded]:
            adapter = self.adapters.pop(name)
            self.io.forget_clock(adapter.node)
            if self.executor_ref is not None:
                with contextlib.suppress(Exception):
                    self.executor_ref.remove_node(adapter.node)
            if may_destroy():  # a deadlocked middleware would block this for good (middleware_deadlock)
                adapter.destroy()

    # ------------------------------------------------------------------ shutdown
    def shutdown(self) -> list[str]:
        """Stop the loop, let the core bring controllers down (hold commands are written once), clean up.

        Threads are joined in order -- the control loop (it reads the hardware's subscriptions and writes through
        the outbox), then the outbox's publisher, then the /clock executor -- each before what it uses is
        destroyed. A thread still running when the interpreter exits is killed inside rclpy's C++ code, which
        aborts the process ("terminate called without an active exception"). Returns the names of threads that
        did not end (empty: the caller may destroy the nodes and shut rclpy down)."""
        log = self.get_logger()
        stuck: list[str] = []
        if self.loop is not None and not self.loop.stop(timeout=5.0):
            stuck.append("control loop")
            log.error("shutdown: the control loop thread did not end within 5 s (a cycle hangs)")
        if self.core is not None:
            try:
                self.core.shutdown()  # under the core's lock: a stuck cycle, if any, is not run over
            except Exception as exc:
                log.error(f"shutdown: {exc}")
            self._drop_unloaded_adapters()
        if self.embedded_scene is not None:
            self.embedded_scene.shutdown()  # the camera thread, after the loop that feeds it
        self.outbox.flush(0.5)
        if not self.outbox.close():
            stuck.append("outbox publisher")
            log.error("shutdown: the outbox publisher thread did not end")
        if not self.io.shutdown():
            stuck.append("hardware io executor")
            log.error("shutdown: the hardware io executor thread did not end")
        if self._pm_qos_fd is not None:
            os.close(self._pm_qos_fd)  # drops the latency request
            self._pm_qos_fd = None
        return stuck


def main(argv: Sequence[str] | None = None) -> int:
    """Console script entry point (also ``ros2_control_node``); exit code 0 on SIGINT/SIGTERM, 1 when the manager
    cannot start."""
    from rclpy.executors import MultiThreadedExecutor

    from robot_core.ros.node_main import finish, run_node

    # A thread waiting for the GIL gets it after this long at most: keeps the control loop from being starved
    # by Python work on the executor threads (the default, 5 ms, is five 1 kHz periods).
    sys.setswitchinterval(0.0002)

    def freeze() -> None:
        # Everything built so far (modules, the robot, the engine) lives as long as the process: keep it out of
        # the cyclic garbage collector's full passes, which otherwise stall the control loop for milliseconds.
        gc.collect()
        gc.freeze()

    code = run_node("controller_manager", ControllerManagerNode, args=argv,
                    make_executor=lambda: MultiThreadedExecutor(num_threads=6),
                    attach=lambda node, executor: node.attach(executor), stop=lambda node: node.shutdown(),
                    before_spin=freeze, startup_errors=(ParamError, ControlError))
    return finish(code)


if __name__ == "__main__":
    sys.exit(main())
