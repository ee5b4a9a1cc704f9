"""``ros2 run robot_core simulator``: a MuJoCo simulation of any URDF robot behind the topic-based hardware protocol.

A thin rclpy adapter: physics is :class:`robot_core.physics.engine.PhysicsEngine`, command decoding is
:mod:`robot_core.physics.command_protocol`, timing is :mod:`robot_core.physics.pacing`, tf edges are
:mod:`robot_core.physics.link_transforms`.

Threads: the rclpy executor (main thread) receives service calls; one *simulation thread* owns the engine. It
takes the command messages itself at the start of each tick (:mod:`robot_core.ros.polled_subscription`: no
executor hop, no hand-over of the interpreter lock; taken as bytes and read by
:mod:`robot_core.ros.joint_state_reader`; a robots file's per-robot topics still come through the executor),
decodes them and applies them before the step.
Services hand a job to the simulation thread and wait for it, so no lock is ever held across a physics step and
a service cannot be starved by a simulation running as fast as possible. The streamed messages (states, /clock,
/tf) are serialized once and then published as patched bytes (:mod:`robot_core.ros.serialized_template`),
which keeps a 1 kHz loop cheap.

Parameters (node ``simulator``): declared from ``SIMULATOR_PARAMS`` (robot_core.nodes.node_params), with
type, default, range, description and read-only in their descriptors; the table is in doc/nodes/simulator.md
(generated). All are read at start except ``real_time_factor``.

Topics: joint states (sensor_msgs/JointState, every scalar joint incl. mimic, URDF order, stamped with simulated
time; reliable, keep-last 10, so both sensor-data (best-effort) and default subscribers connect); joint commands
(sensor_msgs/JointState, reliable keep-last 10 -- upstream publishes reliable; protocol in command_protocol);
``/clock`` (rosgraph_msgs/Clock, reliable keep-last 1, which also serves best-effort TimeSource subscribers);
``/tf`` (tf2_msgs/TFMessage, one transform per non-fixed joint, parent link -> child link, plus world_frame ->
root for a floating base); ``/tf_static`` (every fixed joint, transient local); the robot description
(std_msgs/String, transient local); ``~/status`` (robot_core_interfaces/SimulatorStatus: time, steps, real-time
factor, paused, and the divergence resets so far, the sim time of the last one and the newest event line); ``~/events``
(std_msgs/String, reliable, transient local, depth 10: one line per event a client must not miss -- a divergence
and its automatic reset, the command watchdog stopping joints -- also logged); with a world
(:mod:`robot_core.physics.world`, parameter ``world``): ``~/object_states`` (ObjectStates: free objects' poses and
twists, at ``tf_rate``, also on /tf as world_frame -> object), ``~/world_markers``
(visualization_msgs/MarkerArray, latched: the objects' shapes in their frames, for rviz2 and robot-core view),
fixed objects and the placed robot's root on /tf_static, and ``~/contacts`` (Contacts, at ``contacts_rate``, off
by default). The description's camera and
laser sensors: ``<name>/image_raw``, ``<name>/depth/image_raw``, ``<name>/camera_info``, ``<name>/scan``
(:mod:`robot_core.ros.sim_sensors`, doc/sensors.md; parameters ``cameras``, ``lasers``, ``sensors``,
``sensor_rates.<name>``).

Services: ``~/reset`` (ResetSimulation: back to t = 0 at the initial positions, updated by the given ones; clears
commands and wrenches, every joint holds its reset position), ``~/pause``, ``~/resume`` (std_srvs/Trigger),
``~/step`` (StepSimulation: only while paused; at most ``max_step_request`` steps; runs them as fast as possible
in slices, publishing on schedule, and answers when they are done; other services are answered meanwhile, and a
reset, pause or resume interrupts it: success=false, "interrupted by reset after N of M steps"),
``~/set_joint_state`` (SetJointState: teleport positions and/or velocities; the joints then hold there),
``~/apply_wrench`` (ApplyWrench: world-frame force/torque at a point of a link for a duration of simulated time,
0 = until replaced; a new wrench on the same link replaces the old one), ``~/set_object_state``,
``~/spawn_object``, ``~/remove_object`` (the world's objects; a spawn or removal keeps everything else's state), and
``~/reset`` takes an optional keyframe (world file or ``keyframes`` parameter).

A robot group (parameter ``robots``) runs in this one node, whose own services take the group's prefixed names
(``arm1/joint1``, ``arm1/link2``: one world). Each robot also gets what a user of that robot alone knows, under its
namespace: ``/<ns>/robot_description`` (its own description as written, latched, as robot_state_publisher gives
it) and ``/<ns>/simulator/set_joint_state``, ``/<ns>/simulator/apply_wrench`` and ``/<ns>/simulator/reset`` taking
its own joint and link names (``joint1``, ``link2``), the names a ``--namespace`` bringup's simulator answers to
(that reset puts only its robot back, a free base included; time is the world's). An MJCF robot with a free base
gets its ground truth on ``/<ns>/simulator/base_state`` (as ``~/base_state``). Its cameras and lasers
publish under its namespace (``/<ns>/<sensor>/image_raw``) in its prefixed frames (robot_core.model.robot_group).

A reset sets simulated time back to 0, as Gazebo's reset does; /clock jumps backwards. While paused, clock,
states and tf are repeated (same stamp) at ``status_rate``, so a controller manager or spawner started against a
paused simulator finds its first state and a valid time. Bad commands never stop the simulation: the message is
dropped with a warning (throttled per reason) and the robot keeps its last commands. Commands are clamped to the
joint's limits; absurd magnitudes (see :mod:`robot_core.physics.engine`) and wrenches beyond the engine's bound are
refused with a warning. MuJoCo's own warnings go to this node's log (not to MUJOCO_LOG.TXT in the working
directory). Exit code 0 on SIGINT or SIGTERM, 1 when the robot description or a parameter is unusable (the log
says which).
"""

from __future__ import annotations

import math
import sys
import threading
import time
import traceback
import warnings
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger

from robot_core.control.messages import DynamicJointStateData, InterfaceValueData
from robot_core.model import RobotModel, RobotModelError, load_robot
from robot_core.model.robot_group import RobotGroup, group_summary, merge_robots, read_robots_file
from robot_core.nodes.node_params import SIMULATOR_PARAMS
from robot_core.physics.command_protocol import CommandRejectedError, DropReporter, JointCommand, JointCommandProtocol
from robot_core.physics.engine import CommandError, PhysicsDivergedError, PhysicsEngine, route_mujoco_warnings
from robot_core.physics.frame_prefix import FramePrefix
from robot_core.physics.link_transforms import LinkTransforms
from robot_core.physics.pacing import Pacer, PublishPlan, PublishSchedule, RtfMeter
from robot_core.physics.scene import Scene, SceneSettings
from robot_core.physics.tick_trace import TickTrace
from robot_core.physics.world import WorldSim
from robot_core.ros.joint_state_reader import read_joint_state
from robot_core.ros.message_templates import DynamicJointStateBytes, bytes_publisher, retrying, stamped_template
from robot_core.ros.namespaces import absolute_names_warning
from robot_core.ros.parameters import ReadOnlyReasons, check_set, declare_overrides, declare_specs
from robot_core.ros.polled_subscription import PolledSubscription
from robot_core.ros.refused_publish import RefusedPublishes, publish_error
from robot_core.ros.serialized_template import SerializedTemplate, sentinels
from robot_core.ros.sim_sensors import SimSensors
from robot_core.ros.sim_world import WorldServices, WorldTopics, answer, contacts_message
from robot_core.text import clip

NODE_NAME = "simulator"
BUILTIN_PARAMETERS = ("use_sim_time", "start_type_description_service")
PARAMETER_PREFIXES = ("initial_positions.", "gains.", "sensor_rates.", "qos_overrides.")

STATE_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE)
COMMAND_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE)
# Commands taken by the simulation thread itself (PolledSubscription): it takes them every tick, but while paused
# only every status period, so the reader keeps more of them than an executor's would need to.
POLLED_COMMAND_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100, reliability=ReliabilityPolicy.RELIABLE)
CLOCK_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE)
TF_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100, reliability=ReliabilityPolicy.RELIABLE)
LATCHED_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
EVENTS_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)
# A step request runs in slices of at most this much wall time, so queued services run in between.
STEP_SLICE_SECONDS = 0.02
# Commands are taken at the start of a tick, but at most this often (wall seconds): an empty take costs ~3 us,
# which is a tenth of a step when running as fast as possible; paced at 1 kHz every tick takes.
COMMAND_POLL_INTERVAL = 1e-4


def _time_msg(ns: int) -> Time:
    sec, nanosec = divmod(int(ns), 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def _duration_seconds(d: Any) -> float:
    return float(d.sec) + float(d.nanosec) * 1e-9


class _Job:
    """Work handed to the simulation thread; the caller waits for ``done``."""

    def __init__(self, fn: Callable[[], Any]):
        self.fn = fn
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None


class _StepRequest:
    """A ``~/step`` request the simulation thread works through in slices; ``future`` gets (success, message)."""

    def __init__(self, steps: int, future: Future):
        self.steps = steps
        self.left = steps
        self.future = future

    @property
    def done_steps(self) -> int:
        return self.steps - self.left

    def finish(self, success: bool, message: str) -> None:
        if not self.future.done():
            self.future.set_result((success, message))


class SimulatorNode(ReadOnlyReasons, Node):
    """The ``simulator`` node; see the module docstring for its parameters, topics and services."""

    def __init__(self, **node_kwargs: Any):
        super().__init__(NODE_NAME, **node_kwargs)
        self._log = self.get_logger()
        p = self._read_parameters()
        self.params = p
        self._frames = FramePrefix(p["frame_prefix"])  # a bad prefix stops the start, naming the parameter
        self.engine: PhysicsEngine | None = None
        self.robot: RobotModel | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._jobs: deque[_Job] = deque()
        self._commands: deque[JointCommand] = deque()
        self._thread: threading.Thread | None = None
        self._paused = bool(p["start_paused"])
        self._meter = RtfMeter(window=1.0)
        self._pacer = Pacer(p["real_time_factor"], sleep=self._wake.wait)
        self._snapshot = (0, 0)  # (step_count, sim time ns), written by the simulation thread only
        self._drops = DropReporter(self._log.warning)
        self._refused = RefusedPublishes(self._log.warning, self.context)
        self._publish_error = publish_error()
        self._step_request: _StepRequest | None = None
        self._last_command = time.monotonic()  # wall time of the last accepted command message (executor thread)
        self._watchdog_tripped = False  # simulation thread: stopped joints since the last command
        # for ~/status: (divergence resets so far, sim time ns of the last one), replaced whole by the simulation
        # thread so the status timer never sees half an update; and the newest ~/events line
        self._divergences = (0, 0)
        self._last_event = ""
        self._trace = TickTrace.from_environment()  # bench-only stamps of each command's path (None: off)
        self.ready = threading.Event()

        self._group: RobotGroup | None = None  # a robots file: several robots in this one world (_start_group)
        self._members: list[_MemberIo] = []
        self._member_descriptions: list[Any] = []  # /<ns>/robot_description publishers, kept alive
        self._js_pub = (self.create_publisher(JointState, p["joint_states_topic"], STATE_QOS)
                        if not p["robots"] else None)
        self._sensor_pub = None  # created at start for a robot with ros2_control sensors
        self._clock_pub = self.create_publisher(ClockMsg, "/clock", CLOCK_QOS)
        self._tf_pub = self.create_publisher(_tf_message_type(), "/tf", TF_QOS) if p["publish_tf"] else None
        self._tf_static_pub = (self.create_publisher(_tf_message_type(), "/tf_static", LATCHED_QOS)
                               if p["publish_tf"] else None)
        from robot_core_interfaces.msg import SimulatorStatus

        self._status_pub = self.create_publisher(SimulatorStatus, "~/status", 10)
        self._world: WorldSim | None = None
        self._sensors: SimSensors | None = None  # cameras and lasers (section "camera and laser sensors")
        self._make_world_publishers()
        self._events_pub = self.create_publisher(String, "~/events", EVENTS_QOS)
        self._status_msg = SimulatorStatus()
        self._cmd_sub = self._cmd_poll = None
        self._next_poll = 0.0  # perf_counter time of the next take of commands (simulation thread)
        if not p["robots"]:  # taken by the simulation thread before each tick (no executor hop), if rclpy can
            try:
                self._cmd_poll = PolledSubscription(self, JointState, p["joint_commands_topic"], POLLED_COMMAND_QOS,
                                                    self._on_command, read=read_joint_state)
            except RuntimeError:
                self._cmd_sub = self.create_subscription(JointState, p["joint_commands_topic"], self._on_command,
                                                         COMMAND_QOS)
        warning = absolute_names_warning(self.get_namespace(), {k: p[k] for k in (
            "joint_states_topic", "joint_commands_topic", "sensor_states_topic", "robot_description_topic")},
            "simulator parameters")
        if warning:
            self._log.warning(warning)
        self._make_services()
        self._status_timer = self.create_timer(1.0 / p["status_rate"], self._publish_status,
                                               clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._description_sub = None
        self._description_pub = None

        description, source = p["robot_description"], "parameter robot_description"
        if not description and p["urdf_path"]:
            description, source = p["urdf_path"], p["urdf_path"]
        if p["robots"]:
            self._start_group(p["robots"])
        elif description:
            robot = self._load(description, source)
            if p["publish_robot_description"]:
                self._description_pub = self.create_publisher(String, p["robot_description_topic"], LATCHED_QOS)
                self._description_pub.publish(String(data=robot.urdf_xml or _urdf_text(robot)))
            self._start(robot)
        else:
            self._log.info(f"no robot_description or urdf_path parameter: waiting for the robot description on "
                           f"'{self.resolve_topic_name(p['robot_description_topic'])}'")
            self._description_sub = self.create_subscription(String, p["robot_description_topic"],
                                                             self._on_description, LATCHED_QOS)
        self.add_on_set_parameters_callback(self._on_set_parameters)

    # ------------------------------------------------------------------ parameters
    def _read_parameters(self) -> dict[str, Any]:
        """Declare SIMULATOR_PARAMS (descriptors: description, range, read-only) and validate them; then the
        families initial_positions.* and gains.* and anything else a parameter file gave."""
        p = declare_specs(self, SIMULATOR_PARAMS, NODE_NAME)
        declare_overrides(self)
        p["initial_positions"] = {k: self._number(f"initial_positions.{k}", v.value)
                                  for k, v in self.get_parameters_by_prefix("initial_positions").items()}
        gains: dict[str, dict[str, float]] = {}
        for key, v in self.get_parameters_by_prefix("gains").items():
            joint, _, gain = key.rpartition(".")
            if not joint:
                raise ValueError(f"parameter 'gains.{key}' must be named gains.<joint>.<kp|kd|kv>")
            gains.setdefault(joint, {})[gain] = self._number(f"gains.{key}", v.value)
        p["gains"] = gains
        p["sensor_rates"] = {k: self._number(f"sensor_rates.{k}", v.value)
                             for k, v in self.get_parameters_by_prefix("sensor_rates").items()}
        plain = sorted(s.name for s in SIMULATOR_PARAMS if not s.family)
        known = set(plain) | set(BUILTIN_PARAMETERS)
        for name in sorted(self._parameters):
            if name not in known and not name.startswith(PARAMETER_PREFIXES):
                self._log.warning(f"unknown parameter '{name}' is ignored (known: {', '.join(plain)}, "
                                  "initial_positions.<joint>, gains.<joint>.<kp|kd|kv>, sensor_rates.<sensor>)")
        return p

    @staticmethod
    def _number(name: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"parameter '{name}' = {value!r} must be a finite number")
        return float(value)

    def read_only_reason(self, name: str) -> str:
        """Our reason for rclpy's refusal of a read-only parameter (the descriptors say read_only)."""
        return f"'{name}' is read at start; only real_time_factor can change"

    def _on_set_parameters(self, params: list[Any]) -> SetParametersResult:
        for prm in params:
            if prm.name != "real_time_factor":  # families and unknown names have no read-only descriptor
                return SetParametersResult(successful=False, reason=self.read_only_reason(prm.name))
        reason = check_set(SIMULATOR_PARAMS, params, NODE_NAME)
        if reason:
            return SetParametersResult(successful=False, reason=reason)
        for prm in params:
            rtf = float(prm.value)
            if self._thread is not None:
                self._submit_nowait(lambda r=rtf: self._set_rtf(r))
            else:
                self._pacer.real_time_factor = rtf
        return SetParametersResult(successful=True)

    def _set_rtf(self, rtf: float) -> None:
        self._pacer.real_time_factor = rtf
        self._meter.clear()

    # ------------------------------------------------------------------ start-up
    def _load(self, description: str, source: str) -> RobotModel:
        p = self.params
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            robot = load_robot(description, p["package_dirs"] or None, fixed_base=p["fixed_base"])
        for w in caught:
            self._log.warning(f"{source}: {w.message}")
        return robot

    def _on_description(self, msg: String) -> None:
        if self.engine is not None:
            self._log.warning("a new robot description arrived; the simulator keeps its robot (restart it to "
                              "simulate another one)", throttle_duration_sec=10.0)
            return
        try:
            robot = self._load(msg.data, f"topic {self.resolve_topic_name(self.params['robot_description_topic'])}")
            self._start(robot)
        except (RobotModelError, ValueError) as exc:
            self._log.error(f"cannot simulate the robot description received on "
                            f"'{self.resolve_topic_name(self.params['robot_description_topic'])}': {exc}")

    def _start(self, robot: RobotModel) -> None:
        p = self.params
        route_mujoco_warnings(self._mujoco_warning)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scene = Scene(SceneSettings.from_params(p))
            scene.select_sensors(robot)
            engine = PhysicsEngine(robot, timestep=p["timestep"], fixed_base=p["fixed_base"],
                                   initial_positions=p["initial_positions"] or None, gains=p["gains"] or None,
                                   **scene.engine_options(robot, engine_fixed(robot, p)))
            self._world = scene.world_sim(engine)
            scene.add_model_cameras(robot, engine, p["world_frame"])
            self._frames = FramePrefix(p["frame_prefix"], {p["world_frame"], *self._world.objects})
        for w in caught:
            self._log.warning(str(w.message))
        self.robot, self.engine = robot, engine
        self._placed = scene.placed  # the robot's root gets a frame in the world
        self._dt_ns = round(engine.timestep * 1e9)
        self._paused_period = 1.0 / p["status_rate"]
        self._command_timeout = float(p["command_timeout"])
        self._protocol = JointCommandProtocol.for_robot(robot, engine.actuated_joint_names)
        self._start_sensors(robot, engine)
        self._schedule = PublishSchedule(engine.timestep, {
            "joint_states": p["publish_rate"], "clock": p["clock_rate"],
            "tf": p["tf_rate"] if p["publish_tf"] else None, "objects": p["tf_rate"],
            "contacts": p["contacts_rate"], **(self._sensors.rates() if self._sensors else {}),
        }, max_steps=max(1, round(0.01 / engine.timestep)))
        periods = self._schedule.periods
        self._clock_period = periods["clock"]
        self._states_period = periods["joint_states"]
        self._tf_period = periods.get("tf", 0)
        self._objects_period = periods["objects"]
        # Streamed messages are serialized once and then only their numbers are rewritten (see
        # serialized_template); _set_stamp writes the stamp of all of them (simulation thread only).
        self._js_tpl = _joint_state_template(engine.joint_names)
        self._sensor_layout: list[tuple[str, list[str]]] = []
        if engine.sensor_names:
            from control_msgs.msg import DynamicJointState

            for name in engine.sensor_names:
                sensor, _, iface = name.rpartition("/")
                if not self._sensor_layout or self._sensor_layout[-1][0] != sensor:
                    self._sensor_layout.append((sensor, []))
                self._sensor_layout[-1][1].append(iface)
            self._sensor_bytes = DynamicJointStateBytes()
            if self._sensor_pub is None and not p["robots"]:  # a group: per robot (_start_group)
                self._sensor_pub = self.create_publisher(DynamicJointState, p["sensor_states_topic"], STATE_QOS)
        self._clock_tpl = _clock_template()
        self._stamp_sec, self._stamp_nanosec = 0, 0
        self._clock_sec, self._clock_nanosec = self._clock_tpl.setter("sec"), self._clock_tpl.setter("nanosec")
        self._clock_out = bytes_publisher(self._clock_pub)
        self._js_sec, self._js_nanosec = self._js_tpl.setter("sec"), self._js_tpl.setter("nanosec")
        self._js_out = bytes_publisher(self._js_pub) if self._js_pub is not None else None
        if p["publish_tf"]:
            self._transforms = LinkTransforms(robot, engine.joint_names, engine.link_names,
                                              None if engine.fixed_base else p["world_frame"])
            self._tf_tpl = _tf_template(self._frames.edges(self._transforms.moving_edges))
            self._tf_out = bytes_publisher(self._tf_pub)
            self._publish_tf_static()
        # What _tick publishes at which step, as a table; the joint states first, so that a controller manager
        # paced by /clock finds the state of that instant already there, and the round trip does not wait for
        # /clock's publish.
        self._plan = PublishPlan(self._schedule, {
            "joint_states": self._publish_joint_states, "clock": self._publish_clock, "tf": self._publish_tf,
            "objects": self._publish_objects, "contacts": self._publish_contacts})
        self._publish_all()
        self._world_topics.publish_markers(self._world, _time_msg(0))
        objects = self._world.objects
        if objects or self._world.keyframes:
            self._log.info(f"world {p['world'] or '(none)'}: objects {', '.join(objects) or 'none'}; keyframes "
                           f"{', '.join(self._world.keyframes) or 'none'}")
        self._thread = threading.Thread(target=self._run, name="simulation", daemon=True)
        self._thread.start()
        geared = [f"{lim.joint} {lim.reduction:g}" for lim in engine.limits if lim.reduction != 1.0]
        if geared:
            self._log.info(f"transmission reductions (motor effort = joint effort / reduction; commands and states "
                           f"stay in joint space): {', '.join(geared)}")
        if engine.description_gains:
            self._log.info(f"servo gains from the description: {engine.description_gains}")
        self._log.info(
            f"simulator ready: robot '{robot.name}' with {len(engine.joint_names)} joints "
            f"({len(engine.actuated_joint_names)} actuated), {len(engine.link_names)} links, "
            f"dt={engine.timestep:g} s, real_time_factor={self._pacer.real_time_factor:g}"
            f"{', paused' if self._paused else ''}; states on '{p['joint_states_topic']}', commands on "
            f"'{p['joint_commands_topic']}'")
        self.ready.set()

    # ------------------------------------------------------------------ simulation thread
    def _run(self) -> None:
        self._pacer.rebase(self._sim_seconds())
        self._next_paused_publish = 0.0
        while not self._stop.is_set():
            try:
                self._iterate()
            except Exception:  # keep the node up; the robot is paused in a safe state
                # SIGINT/SIGTERM shut the context down under us: publishing fails, nothing is wrong. The failed
                # publish can come a moment before the context says so (seen while stepping at full speed).
                if self._stop.wait(0.2) or not self.context.ok():
                    break
                self._paused = True
                self._log.error(f"simulation step failed; the simulation is paused:\n{traceback.format_exc()}")
        self._stop.set()  # releases services waiting for a job

    def _iterate(self) -> None:
        """One pass of the simulation thread: run queued jobs, or a slice of a step request, or idle while
        paused, or wait, or tick."""
        if self._jobs:
            self._run_jobs()
            return
        if self._step_request is not None:
            self._step_slice()
            return
        if self._paused:
            # Keep clock and states flowing (same stamp) so late joiners -- a controller manager waiting for
            # its first state, a spawner waiting for time -- work against a paused simulation.
            if self._cmd_poll is not None:  # queued, applied when it resumes
                self._cmd_poll.poll()
            now = time.monotonic()
            if now >= self._next_paused_publish:
                self._publish_all()
                self._next_paused_publish = now + self._paused_period
            self._wake.wait(min(0.1, max(0.0, self._next_paused_publish - now)))
            self._wake.clear()
            return
        if self._members and self._command_timeout > 0.0:
            self._check_member_watchdogs()
        elif not self._watchdog_tripped and self._command_timeout > 0.0:
            self._check_watchdog()
        ahead = self._pacer.remaining(self._sim_seconds())
        if ahead > 0.0:
            self._wake.wait(ahead)
            self._wake.clear()
            return
        self._tick()
        self._meter.sample(self._sim_seconds())

    def _check_watchdog(self) -> None:
        """A dead or stalled commander must not leave the robot running into its limits: after
        ``command_timeout`` wall seconds without a command, velocity commands become 0 and effort commands a
        position hold (once; the next command re-arms it)."""
        idle = time.monotonic() - self._last_command
        if idle < self._command_timeout:
            return
        self._watchdog_tripped = True
        stopped = self.engine.stop_motion_commands()
        if stopped:
            self._event(f"no command for {idle:.2f} s (command_timeout {self._command_timeout:g} s): joints "
                        f"{', '.join(clip(n) for n in stopped[:12])}{' ...' if len(stopped) > 12 else ''} held "
                        "(velocity commands set to 0, effort commands replaced by a position hold); the next "
                        "command takes over", warning=True)

    def _check_member_watchdogs(self) -> None:
        """The watchdog of a robot group, robot by robot: a silent controller manager stops its own robot while the
        others' keep theirs moving."""
        now = time.monotonic()
        for io in self._members:
            idle = now - io.last_command
            if io.tripped or idle < self._command_timeout:
                continue
            io.tripped = True
            stopped = self.engine.stop_motion_commands([io.prefix + j for j in io.joints])
            if stopped:
                self._event(f"robot {io.namespace}: no command for {idle:.2f} s (command_timeout "
                            f"{self._command_timeout:g} s): joints {', '.join(clip(n) for n in stopped[:12])}"
                            f"{' ...' if len(stopped) > 12 else ''} held; its next command takes over", warning=True)

    def _step_slice(self) -> None:
        """Work on the step request for at most STEP_SLICE_SECONDS, so jobs (a reset, a pause) get in between."""
        req = self._step_request
        end = time.monotonic() + STEP_SLICE_SECONDS
        while req.left > 0 and not self._stop.is_set():
            req.left -= self._tick(max_steps=req.left)
            if self._step_request is not req or time.monotonic() >= end:
                return  # interrupted (a divergence) or the slice is used up
        if req.left <= 0:
            self._publish_unpublished()
            self._step_request = None
            req.finish(True, f"stepped {req.steps} steps")

    def _interrupt_step(self, reason: str) -> None:
        req = self._step_request
        if req is not None:
            self._step_request = None
            req.finish(False, f"interrupted by {reason} after {req.done_steps} of {req.steps} steps")

    def _event(self, text: str, warning: bool = False) -> None:
        """Something a client must not miss: logged and published on ~/events (latched, last 10)."""
        if warning:  # (rclpy refuses two severities from one call site)
            self._log.warning(text)
        else:
            self._log.error(text)
        self._last_event = text
        self._events_pub.publish(String(data=text))

    def _mujoco_warning(self, text: str) -> None:
        """MuJoCo's warnings (it reports each kind once until the next reset) go to the node's log."""
        self._log.warning(f"MuJoCo: {text.strip()}")

    def _sim_seconds(self) -> float:
        return self._snapshot[1] * 1e-9

    def _run_jobs(self) -> None:
        while self._jobs:
            job = self._jobs.popleft()
            try:
                job.result = job.fn()
            except BaseException as exc:  # handed back to the waiting service
                job.error = exc
            job.done.set()

    def _submit_nowait(self, fn: Callable[[], Any]) -> _Job:
        job = _Job(fn)
        self._jobs.append(job)
        self._wake.set()
        return job

    def _call(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` on the simulation thread between two ticks and return its result."""
        if self._thread is None or not self._thread.is_alive():
            raise RuntimeError("the simulation is not running yet (no robot description)")
        job = self._submit_nowait(fn)
        while not job.done.wait(0.1):
            if self._stop.is_set():
                raise RuntimeError("the simulator is shutting down")
        if job.error is not None:
            raise job.error
        return job.result

    def _apply_commands(self) -> None:
        engine = self.engine
        self._watchdog_tripped = False  # a command arrived: the watchdog watches again
        while self._commands:
            cmd = self._commands.popleft()
            try:
                cmd.apply(engine)
            except CommandError as exc:  # validated already; the engine may still refuse (e.g. limits)
                self._drops.report(str(exc))

    def _tick(self, max_steps: int | None = None) -> int:
        """Apply queued commands, step until the next output is due, publish what is due; returns the steps run.
        Runs at up to 1 kHz (and as fast as the physics allows at real_time_factor 0), so what is due comes from
        a table (PublishPlan) and publishing only patches numbers into pre-serialized messages."""
        engine, trace = self.engine, self._trace
        if trace is not None:
            trace.began()
        poll = self._cmd_poll
        if poll is not None:
            now = time.perf_counter()
            if now >= self._next_poll:
                self._next_poll = now + COMMAND_POLL_INTERVAL
                poll.poll()
        traced = False
        if self._commands:
            if trace is not None:
                trace.tick()
                traced = True
            self._apply_commands()
            if traced:
                trace.stepping()
        count = engine.step_count
        n = self._plan.steps_to_next(count)
        if max_steps is not None and max_steps < n:
            n = max_steps
        try:
            engine.step(n)
        except PhysicsDivergedError as exc:
            if traced:
                trace.dropped()
            at_ns = round(exc.time * 1e9) if math.isfinite(exc.time) else self._snapshot[1]
            self._divergences = (self._divergences[0] + 1, at_ns)
            self._commands.clear()
            self._after_jump()
            self._interrupt_step("a divergence")
            self._event(f"diverged at t={exc.time:.3f} s: reset to the initial state ({exc})")
            return n
        if traced:
            trace.stepped()
        count += n
        ns = count * self._dt_ns
        self._snapshot = (count, ns)
        due = self._plan.due(count)
        if due:
            self._stamp_sec, self._stamp_nanosec = divmod(ns, 1_000_000_000)
            for publish in due:
                try:
                    publish()
                except self._publish_error as exc:  # a refused message is dropped; the simulation runs on
                    self._refused.refused(_output_name(publish), exc)
        if traced:
            trace.published()
        if self._sensors:
            try:
                self._sensors.on_tick(engine.model, engine.data, count, ns)
            except self._publish_error as exc:
                self._refused.refused("sensor outputs", exc)
        return n

    def _set_stamp(self, ns: int) -> None:
        """The stamp of what is published next; each publisher writes it into its template."""
        self._stamp_sec, self._stamp_nanosec = divmod(ns, 1_000_000_000)

    def _publish_clock(self) -> None:
        self._clock_sec(self._stamp_sec)
        self._clock_nanosec(self._stamp_nanosec)
        self._clock_out(self._clock_tpl.tobytes())

    def _after_jump(self) -> None:
        """Simulated time or state changed outside the normal flow: re-anchor and tell everyone."""
        engine = self.engine
        self._snapshot = (engine.step_count, engine.step_count * self._dt_ns)
        self._pacer.rebase(self._sim_seconds())
        self._meter.clear()
        self._publish_all()

    # ------------------------------------------------------------------ publishing
    def _publish_all(self) -> None:
        """States, clock and tf at the current time, whatever the schedule says."""
        self._set_stamp(self.engine.step_count * self._dt_ns)
        self._emit(self._publish_joint_states)
        self._emit(self._publish_clock)
        if self._tf_period:
            self._emit(self._publish_tf)
        self._emit(self._publish_objects)

    def _publish_unpublished(self) -> None:
        """After single-stepping: make the final state visible even if no output was due at this step."""
        count, ns = self._snapshot
        self._set_stamp(ns)
        if count % self._states_period:
            self._emit(self._publish_joint_states)
        if count % self._clock_period:
            self._emit(self._publish_clock)
        if self._tf_period and count % self._tf_period:
            self._emit(self._publish_tf)
        if count % self._objects_period:
            self._emit(self._publish_objects)

    def _emit(self, publish: Callable[[], None]) -> None:
        """``publish()``; a message the middleware refused is dropped and reported (robot_core.ros.refused_publish)."""
        try:
            publish()
        except self._publish_error as exc:
            self._refused.refused(_output_name(publish), exc)

    def _publish_joint_states(self) -> None:
        if self._group is not None:  # several robots: per robot (none before _start_group has set them up)
            self._publish_member_states()
            return
        engine, tpl = self.engine, self._js_tpl
        self._js_sec(self._stamp_sec)
        self._js_nanosec(self._stamp_nanosec)
        tpl.set("position", engine.positions())
        tpl.set("velocity", engine.velocities())
        tpl.set("effort", engine.efforts())
        self._js_out(tpl.tobytes())
        if self._trace is not None:
            self._trace.states_published()
        if self._sensor_pub is not None:
            self._publish_sensor_states()

    # ------------------------------------------------------------------ several robots in one world
    def _start_group(self, path: str) -> None:
        """The robots of a robots file (robot_core.model.robot_group) as one model in this world, each with its
        own topic pair: states split per robot under its own joint names, its commands taken under its prefix."""
        loaded: dict[str, RobotModel] = {}

        def load(file: str) -> RobotModel:
            loaded[file] = self._load(file, file)
            return loaded[file]

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            group = merge_robots(read_robots_file(path), load, self.params["world_frame"])
        for w in caught:
            self._log.warning(str(w.message))
        self._group = group
        self._start(group.model)
        engine = self.engine
        assert engine is not None
        from control_msgs.msg import DynamicJointState

        members = []
        for m in group.members:
            joints = [j for j in m.joints if m.prefix + j in engine.joint_names]
            sensors = [(name[len(m.prefix):], ifaces) for name, ifaces in self._sensor_layout
                       if name.startswith(m.prefix)]
            io = _MemberIo(m.namespace, m.prefix, joints,
                           np.array([engine.joint_names.index(m.prefix + j) for j in joints], dtype=int),
                           _joint_state_template(joints),
                           self.create_publisher(JointState, m.joint_states_topic, STATE_QOS), sensors,
                           self.create_publisher(DynamicJointState, f"/{m.namespace}/robot_sensor_states", STATE_QOS)
                           if sensors else None, m.prefix + m.free_joint if m.free_joint else "",
                           m.prefix + m.base_link if m.free_joint else "")
            members.append(io)
            self.create_subscription(JointState, m.joint_commands_topic,
                                     lambda msg, io=io, topic=m.joint_commands_topic: self._on_member_command(
                                         io, topic, msg), COMMAND_QOS)
            self._make_member_services(m.namespace, m.prefix, joints, io.free_joint)
            if self.params["publish_robot_description"]:
                robot = loaded[m.description]
                pub = self.create_publisher(String, f"/{m.namespace}/robot_description", LATCHED_QOS)
                pub.publish(String(data=robot.urdf_xml or _urdf_text(robot)))
                self._member_descriptions.append(pub)
        self._members = members  # one assignment: the simulation thread publishes from it
        self._log.info(f"robot group from {path}: {group_summary(group)}")

    def _publish_member_states(self) -> None:
        engine = self.engine
        pos, vel, eff = engine.positions(), engine.velocities(), engine.efforts()
        values = engine.sensor_values().tolist() if self._sensor_layout else []
        offsets, start = {}, 0
        for name, ifaces in self._sensor_layout:
            offsets[name] = start
            start += len(ifaces)
        stamp = self._stamp_sec + self._stamp_nanosec * 1e-9
        for io in self._members:
            tpl = io.template
            tpl.set("sec", self._stamp_sec)
            tpl.set("nanosec", self._stamp_nanosec)
            tpl.set("position", pos[io.index])
            tpl.set("velocity", vel[io.index])
            tpl.set("effort", eff[io.index])
            io.states_pub.publish(tpl.tobytes())
            if io.sensor_pub is not None:
                groups = [InterfaceValueData(ifaces, values[offsets[io.prefix + name]:
                                                            offsets[io.prefix + name] + len(ifaces)])
                          for name, ifaces in io.sensors]
                data = DynamicJointStateData([name for name, _ in io.sensors], groups, stamp)
                io.sensor_pub.publish(self._sensor_bytes(data))

    def _on_member_command(self, io: _MemberIo, topic: str, msg: JointState) -> None:
        """A command of one robot of the group: its joint names under its prefix, then as any command."""
        if self.engine is None:
            return
        try:
            cmd = self._protocol.parse([io.prefix + n for n in msg.name], msg.position, msg.velocity, msg.effort)
        except CommandRejectedError as exc:
            self._drops.report(f"{exc} (message on '{topic}' ignored)")
            return
        if cmd.groups():
            self._last_command = io.last_command = time.monotonic()
            io.tripped = False  # this robot's watchdog watches again
            self._commands.append(cmd)

    def _publish_sensor_states(self) -> None:
        """The sensors' values with the joint states, same stamp (doc/topic_protocol.md)."""
        values = self.engine.sensor_values().tolist()
        groups, start = [], 0
        for _, ifaces in self._sensor_layout:
            groups.append(InterfaceValueData(ifaces, values[start:start + len(ifaces)]))
            start += len(ifaces)
        stamp = self._stamp_sec + self._stamp_nanosec * 1e-9
        data = DynamicJointStateData([name for name, _ in self._sensor_layout], groups, stamp)
        self._sensor_pub.publish(self._sensor_bytes(data))

    def _publish_tf(self) -> None:
        tfs, engine, tpl = self._transforms, self.engine, self._tf_tpl
        trans, quat = tfs.moving(engine.positions(), engine.link_pose_array() if tfs.needs_poses else None)
        tpl.set("sec", self._stamp_sec)
        tpl.set("nanosec", self._stamp_nanosec)
        tpl.set("translation", trans.reshape(-1))
        tpl.set("rotation", quat.reshape(-1))
        self._tf_out(tpl.tobytes())

    def _publish_tf_static(self) -> None:
        stamp = _time_msg(0)
        out = []
        for s in self._transforms.static:
            tf = _transform(s.parent, s.child)
            tf.header.stamp = stamp
            tf.transform.translation.x, tf.transform.translation.y, tf.transform.translation.z = \
                (float(v) for v in s.translation)
            r = tf.transform.rotation
            r.x, r.y, r.z, r.w = (float(v) for v in s.rotation)
            out.append(tf)
        if self._world is not None:
            out += self._world_topics.static_transforms(self._world, self._placed, stamp)
        if self._sensors:
            out += self._sensors.static_transforms(stamp)
        self._tf_static_pub.publish(_tf_message_type()(transforms=self._frames.apply(out)))

    def _publish_status(self) -> None:
        if self.engine is None:
            return
        # paused first: a tick between reading the step and the flag would report a stale step as paused
        paused = bool(self._paused)
        count, ns = self._snapshot
        msg = self._status_msg
        msg.sim_time = _time_msg(ns)
        msg.step_count = int(count)
        try:
            msg.real_time_factor = 0.0 if paused else float(self._meter.value)
        except IndexError:  # the simulation thread trimmed the window meanwhile
            msg.real_time_factor = 0.0
        msg.target_real_time_factor = float(self._pacer.real_time_factor)
        msg.paused = paused
        divergences, divergence_ns = self._divergences
        msg.divergence_count = divergences
        msg.last_divergence_time = _time_msg(divergence_ns)
        msg.last_event = self._last_event
        self._status_pub.publish(msg)

    # ------------------------------------------------------------------ commands
    def _on_command(self, msg: Any, arrived: float = math.nan) -> None:
        """A command message (a JointStateFields from the simulation thread's poll, or a JointState from the
        executor where rclpy cannot poll);
        ``arrived``: when DDS received it (perf_counter clock), for the trace."""
        if self.engine is None:
            return
        trace = self._trace
        received = trace.received() if trace is not None else 0.0
        try:
            cmd = self._protocol.parse(msg.name, msg.position, msg.velocity, msg.effort)
        except CommandRejectedError as exc:
            self._drops.report(f"{exc} (message on '{self.params['joint_commands_topic']}' ignored)")
            return
        if cmd.groups():
            self._last_command = time.monotonic()
            if trace is not None:
                trace.parsed(received, arrived)
            self._commands.append(cmd)

    # ------------------------------------------------------------------ services
    def _make_services(self) -> None:
        from robot_core_interfaces.srv import ApplyWrench, SetJointState, StepSimulation

        self.create_service(Trigger, "~/pause", self._srv_pause)
        self.create_service(Trigger, "~/resume", self._srv_resume)
        # Its own callback group: while a step request waits for the simulation thread, the executor answers the
        # other services (whose reset/pause/resume interrupt it).
        self.create_service(StepSimulation, "~/step", self._srv_step,
                            callback_group=MutuallyExclusiveCallbackGroup())
        self.create_service(SetJointState, "~/set_joint_state", self._srv_set_joint_state)
        self.create_service(ApplyWrench, "~/apply_wrench", self._srv_apply_wrench)
        self._make_world_services()

    def _make_member_services(self, namespace: str, prefix: str, joints: list[str], free_joint: str = "") -> None:
        """One robot of a group: set_joint_state, apply_wrench and reset under its namespace, in its own names
        (what ``--namespace``'s simulator answers to); ``free_joint``: its free base (prefixed), which its reset
        puts back too."""
        from robot_core_interfaces.srv import ApplyWrench, ResetSimulation, SetJointState

        base = f"/{namespace}/{self.get_name()}"
        self.create_service(SetJointState, f"{base}/set_joint_state",
                            lambda req, res: self._srv_set_joint_state(req, res, prefix))
        self.create_service(ApplyWrench, f"{base}/apply_wrench",
                            lambda req, res: self._srv_apply_wrench(req, res, prefix))
        self.create_service(ResetSimulation, f"{base}/reset",
                            lambda req, res: self._srv_member_reset(req, res, namespace, prefix, joints, free_joint))

    def _srv_member_reset(self, request: Any, response: Any, namespace: str, prefix: str, joints: list[str],
                          free_joint: str = "") -> Any:
        """One robot of a group back to its initial positions (or a keyframe's for its joints), at rest, the given
        joints (its own names) overriding them, and a free base to its start pose at rest; time, the other robots
        and the world's objects go on (the world's ``~/reset`` takes them all back to t = 0)."""
        names = [prefix + n for n in request.joint_names]
        positions, keyframe = list(request.positions), str(request.keyframe)

        def reset() -> str:
            if len(names) != len(positions):
                raise ValueError(f"reset: {len(positions)} positions for {len(names)} joint_names")
            start: dict[str, float] = {}
            if keyframe:
                known = self._world.keyframes if self._world is not None else {}
                if keyframe not in known:
                    raise ValueError(f"reset: unknown keyframe '{keyframe}' (keyframes: {sorted(known) or 'none'})")
                start = {n: v for n, v in known[keyframe].joints.items() if n.startswith(prefix)}
            mine = [prefix + j for j in joints]
            self.engine.reset_joints(mine, {**start, **dict(zip(names, positions, strict=True))},
                                     [free_joint] if free_joint else [])
            self._after_jump()
            source = f"keyframe '{keyframe}'" if keyframe else "its initial positions"
            given = f" with {', '.join(request.joint_names)} set" if names else ""
            return f"robot '{namespace}' reset to {source}{given} (time and the other robots go on)"

        return self._answer(response, reset, "reset")

    def _answer(self, response: Any, fn: Callable[[], str], what: str) -> Any:
        """Run a service body on the simulation thread; errors become success=false with the reason."""
        return answer(response, self._call, fn, what, self._log)

    def _srv_pause(self, request: Any, response: Any) -> Any:
        def pause() -> str:
            self._interrupt_step("pause")
            was = self._paused
            self._paused = True
            self._meter.clear()
            return "already paused" if was else f"paused at t={self._sim_seconds():.6f} s"

        return self._answer(response, pause, "pause")

    def _srv_resume(self, request: Any, response: Any) -> Any:
        def resume() -> str:
            self._interrupt_step("resume")
            was = self._paused
            self._paused = False
            self._pacer.rebase(self._sim_seconds())
            self._meter.clear()
            return f"resumed at t={self._sim_seconds():.6f} s" if was else "already running"

        return self._answer(response, resume, "resume")

    async def _srv_step(self, request: Any, response: Any) -> Any:
        """A coroutine: it hands the request to the simulation thread and yields the executor until the steps
        are done, so a long request neither blocks other services nor is uninterruptible."""
        steps = int(request.steps)
        done: Future = Future(executor=self.executor)
        done.add_done_callback(lambda _f: None)  # completing it from the simulation thread wakes the executor

        def begin() -> str:
            if not self._paused:
                raise RuntimeError("step is only allowed while paused (call ~/pause first)")
            limit = self.params["max_step_request"]
            if steps > limit:
                raise ValueError(f"step: {steps} steps requested, at most {limit} per request (parameter "
                                 "max_step_request)")
            if self._step_request is not None:
                raise RuntimeError("step: another step request is running")
            req = _StepRequest(steps, done)
            if steps == 0:
                self._publish_unpublished()
                req.finish(True, "stepped 0 steps")
            else:
                self._step_request = req
            return ""

        self._answer(response, begin, "step")
        if response.success:
            response.success, response.message = await done
            if not response.success:
                self._log.warning(f"step: {response.message}")
        count, ns = self._snapshot
        response.step_count = int(count)
        response.sim_time = _time_msg(ns)
        return response

    def _srv_set_joint_state(self, request: Any, response: Any, prefix: str = "") -> Any:
        """``prefix``: a robot of a group, whose own joint names the request gives (``joint1`` -> ``arm1/joint1``)."""
        st = request.state
        names, pos, vel = [prefix + n for n in st.name], list(st.position), list(st.velocity)

        def set_state() -> str:
            for label, values in (("position", pos), ("velocity", vel)):
                if values and len(values) != len(names):
                    raise ValueError(f"set_joint_state: {label} has {len(values)} values for {len(names)} names")
            if not pos and not vel:
                raise ValueError("set_joint_state: give positions and/or velocities")
            self.engine.set_joint_state(dict(zip(names, pos, strict=True)) if pos else {},
                                        dict(zip(names, vel, strict=True)) if vel else None)
            self._after_jump()
            extra = " (effort ignored)" if len(st.effort) else ""
            return f"set {len(names)} joints{extra}"

        return self._answer(response, set_state, "set_joint_state")

    def _srv_apply_wrench(self, request: Any, response: Any, prefix: str = "") -> Any:
        link = prefix + request.link_name
        w = request.wrench
        force = (w.force.x, w.force.y, w.force.z)
        torque = (w.torque.x, w.torque.y, w.torque.z)
        point = (request.reference_point.x, request.reference_point.y, request.reference_point.z)
        duration = _duration_seconds(request.duration)

        def apply() -> str:
            self.engine.apply_wrench(link, force, torque, point, duration or None)
            return f"wrench on '{link}' " + (f"for {duration:g} s" if duration else "until replaced")

        return self._answer(response, apply, "apply_wrench")

    # ------------------------------------------------------------------ world (robot_core.physics.world)
    def _make_world_publishers(self) -> None:
        from robot_core_interfaces.msg import Contacts

        self._world_topics = WorldTopics(self, self.params["world_frame"], self._tf_pub)
        self._contacts_pub = (self.create_publisher(Contacts, "~/contacts", STATE_QOS)
                              if self.params["contacts_rate"] > 0 else None)

    def _make_world_services(self) -> None:
        """~/set_object_state, ~/spawn_object, ~/remove_object and ~/reset (robot_core.ros.sim_world), run on the
        simulation thread between two steps."""
        WorldServices(self, lambda: self._world, self._call, self._world_changed)

    def _world_changed(self, kind: str) -> None:
        """Simulation thread, after a world service changed the engine: tell everyone at once."""
        if kind == "static" and self._tf_static_pub is not None:
            self._publish_tf_static()
        if kind in ("static", "model"):
            self._world_topics.publish_markers(self._world, _time_msg(self.engine.step_count * self._dt_ns))
        if kind == "reset":
            self._commands.clear()
            self._interrupt_step("reset")
        self._after_jump()

    def _publish_objects(self) -> None:
        """Free objects' poses on /tf (world_frame -> object) and with their twists on ~/object_states."""
        stamp = Time(sec=self._stamp_sec, nanosec=self._stamp_nanosec)
        if self._world is not None:
            self._world_topics.publish_objects(self._world.states(), stamp)
        engine = self.engine
        if not engine.fixed_base:
            self._world_topics.publish_base(self._frames(engine.robot.root_link), engine.base_pose(),
                                            engine.base_velocity(), stamp)
        for io in self._members:  # a group's free-based robots: each its own ground truth, as a floating base's
            if io.free_joint:
                pose, twist = engine.floating_state(io.free_joint)
                self._world_topics.publish_base(io.base_link, pose, twist, stamp,
                                                f"/{io.namespace}/{self.get_name()}/base_state")

    def _publish_contacts(self) -> None:
        stamp = Time(sec=self._stamp_sec, nanosec=self._stamp_nanosec)
        self._contacts_pub.publish(contacts_message(self.engine.contacts(), stamp, self.params["world_frame"]))

    # ------------------------------------------------------------------ shutdown
    def shutdown(self) -> None:
        """Stop the simulation thread (idempotent)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)
        req, self._step_request = self._step_request, None
        if req is not None:
            req.finish(False, f"the simulator is shutting down ({req.done_steps} of {req.steps} steps done)")
        if self.engine is not None:
            route_mujoco_warnings(None)
        if self._sensors is not None:
            self._sensors.shutdown()
        if self._trace is not None:
            self._trace.write()
        if self._cmd_poll is not None and (self._thread is None or not self._thread.is_alive()):
            self._cmd_poll.destroy()
            self._cmd_poll = None

    # ------------------------------------------------------------------ camera and laser sensors
    def _start_sensors(self, robot: RobotModel, engine: PhysicsEngine) -> None:
        """Cameras and lasers of the description (robot_core.ros.sim_sensors), switched by ``cameras``/``lasers``."""
        p = self.params
        sensors = SimSensors(self, robot, engine.model, engine.timestep, cameras=p["cameras"], lasers=p["lasers"],
                             log_error=lambda text: self._event(text, warning=True),
                             seed=p["noise_seed"] if p["noise_seed"] >= 0 else None, topics=p["sensor_topics"],
                             frame_prefix=self._frames.prefix)
        if sensors:
            self._sensors = sensors
            self._log.info(f"sensors: {sensors.describe()}")


@dataclass
class _MemberIo:
    """One robot of a group: its joints (unprefixed) and their indices in the engine, its topics."""

    namespace: str
    prefix: str
    joints: list[str]
    index: np.ndarray
    template: SerializedTemplate
    states_pub: Any
    sensors: list[tuple[str, list[str]]]
    sensor_pub: Any
    free_joint: str = ""  # its free base (an MJCF robot's free joint, prefixed), '' when welded
    base_link: str = ""  # the link that free joint carries (prefixed: its tf frame)
    last_command: float = field(default_factory=time.monotonic)  # wall time of its last accepted command
    tripped: bool = False  # its watchdog stopped it since that command


def _tf_message_type() -> Any:
    from tf2_msgs.msg import TFMessage

    return TFMessage


def _transform(parent: str, child: str) -> TransformStamped:
    tf = TransformStamped()
    tf.header.frame_id = parent
    tf.child_frame_id = child
    tf.transform.rotation.w = 1.0
    return tf


def engine_fixed(robot: RobotModel, params: dict[str, Any]) -> bool:
    """Whether the engine will weld the root (a root link named "world" is always welded)."""
    return bool(params["fixed_base"]) or robot.root_link == "world"


def _joint_state_template(names: list[str]) -> SerializedTemplate:
    def build(salt: int) -> SerializedTemplate:
        n = len(names)
        groups = {f: sentinels(n, "float64", salt=salt + 3 + k)
                  for k, f in enumerate(("position", "velocity", "effort"))}
        msg = JointState(name=list(names), position=groups["position"].tolist(),
                         velocity=groups["velocity"].tolist(), effort=groups["effort"].tolist())
        return stamped_template(msg, [msg.header.stamp], groups, salt)

    return retrying(build)


def _clock_template() -> SerializedTemplate:
    def build(salt: int) -> SerializedTemplate:
        msg = ClockMsg()
        return stamped_template(msg, [msg.clock], {}, salt)

    return retrying(build)


def _tf_template(edges: list[tuple[str, str]]) -> SerializedTemplate:
    def build(salt: int) -> SerializedTemplate:
        m = len(edges)
        translation = sentinels(3 * m, "float64", salt=salt + 10)
        rotation = sentinels(4 * m, "float64", salt=salt + 11)
        transforms = [_transform(parent, child) for parent, child in edges]
        for k, tf in enumerate(transforms):
            t, r = tf.transform.translation, tf.transform.rotation
            t.x, t.y, t.z = translation[3 * k: 3 * k + 3].tolist()
            r.x, r.y, r.z, r.w = rotation[4 * k: 4 * k + 4].tolist()
        msg = _tf_message_type()(transforms=transforms)
        return stamped_template(msg, [tf.header.stamp for tf in transforms],
                                {"translation": translation, "rotation": rotation}, salt)

    return retrying(build)


def _urdf_text(robot: RobotModel) -> str:
    from robot_core.model.urdf_writer import write_urdf

    return write_urdf(robot)


def _output_name(publish: Callable[[], None]) -> str:
    """What a ``_publish_<output>`` method sends, for the refused-message report ("tf", "clock", ...)."""
    return getattr(publish, "__name__", "an output").removeprefix("_publish_")


def main(args: list[str] | None = None) -> int:
    """Console script entry point; exit code 0 on SIGINT/SIGTERM, 1 when the robot cannot be simulated."""
    from robot_core.ros.node_main import finish, run_node

    code = run_node(NODE_NAME, SimulatorNode, args=args, stop=lambda node: node.shutdown(),
                    startup_errors=(RobotModelError, CommandError, ValueError, OSError))
    return finish(code)


if __name__ == "__main__":
    sys.exit(main())
