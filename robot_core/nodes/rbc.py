"""``ros2 run robot_core rbc``: the Robot Body Coupler node, a thin rclpy adapter over robot_core.rbc.Coupler.

It reads the robot's URDF, builds the coupler from the ``<rbc>`` tags, subscribes to every state topic once,
publishes every cmd topic once per cycle, exposes the middle layer (aggregated per-var topics, get/set
services) and creates reachers/extenders at run time, each as its own node (robot_core.nodes.rbc_instance_node)
or as its own process on the shared-memory var table (robot_core.nodes.rbc_instance_process,
robot_core.rbc.instance_process), whose actions this process serves (robot_core.ros.rbc_goals over
robot_core.rbc.goal_channel) so that a killed reacher's goal is answered. Which way is chosen per instance at
``create_re`` (``data: "VF process"`` / ``"VF in-process"``); ``instance_processes`` is the way of a bare type.

Parameters (node ``rbc``; read at start, read-only): declared from ``RBC_PARAMS``
(robot_core.nodes.node_params); the table is in doc/nodes/rbc.md (generated).

Coupler time is steady (wall) time: staleness, reacher dt and goal timeouts are wall seconds, so a paused or
dead driver makes vars stale instead of freezing time. Every stamp the node writes comes from the node clock
(sim time with ``use_sim_time``), whether an output goes out on message arrival or in the cycle.

Topics: every cmd topic of the tags (an assembled message per topic per cycle, **only once a var of that topic
has been written** by a reacher or a user, so an idle coupler never fights a controller; afterwards the
topic is published every cycle: written values are held, position references of never-written joints take
their measured position, never-written velocity-like vars stay ``init``); every state topic (subscribed
once, best-effort so any publisher matches); ``~/<var>`` for every var name (sensor_msgs/JointState over all
joints having the var, values in ``position``, NaN when stale); ``~/<var>/cmd`` for every cmd var
(sensor_msgs/JointState by name, values from the first non-empty of position / velocity / effort; a bad
message is logged and ignored); ``~/stale`` (std_msgs/String, JSON ``{"stale_topics": [...], "stale_vars":
["joint/var", ...]}``, transient local, on change); ``/tf`` (contact frames of CS/TC instances).

Services: ``~/get_vars`` (robot_core_interfaces/GetVars; empty lists = all, stale flags per value),
``/rbc_l2_ctrl`` (rbc_msgs_srvs/RbcL2Ctrl, the RBC documentation's name and type for ``~/l2_ctrl``: same
handler; parameter ``documented_l2_service``),
``~/set_vars`` (SetVars; cmd vars only, all or nothing), ``~/l2_ctrl`` (L2Control: ``create_re`` with
``data`` = JR / VF / CS / TC (or JointReacher, VectorField, ContactSimulation, TouchContact), optionally
followed by ``process`` or ``in-process``, and ``name`` = the instance = its node name; ``destroy_re``;
``list_re``, ``data: types`` lists the creatable types),
``~/release`` (std_srvs/Trigger: stop publishing cmd topics until a var is written again; answers once the
drivers acknowledged every command sent before, or after 0.5 s).

The robot's file may also be given as the one argument (``ros2 run robot_core rbc robot.urdf``, as the RBC
documentation starts its rbc.py): it sets ``urdf_path``.

Start-up errors (no URDF, bad ``<rbc>`` tags naming joint, var and field, no tags at all) are logged and the
process exits with code 2: the coupler cannot run without a valid coupling. At run time nothing a user sends
(bad service requests, goals, parameters, command messages) stops the node; it answers with the reason. On
shutdown every reacher is cancelled and one last cycle is published, so velocity commands end at zero and
position references hold.
"""

from __future__ import annotations

import array
import contextlib
import json
import math
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.duration import Duration as RclDuration
from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.validate_node_name import validate_node_name
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger

from robot_core.model import RobotModel, RobotModelError, load_robot
from robot_core.nodes.node_params import RBC_PARAMS
from robot_core.nodes.rbc_instance_node import InstanceNode
from robot_core.parameter_spec import ParamError
from robot_core.physics.frame_prefix import FramePrefix
from robot_core.rbc.coupler import Coupler
from robot_core.rbc.errors import RbcConfigError, RbcError
from robot_core.rbc.instance import ACTIVE
from robot_core.rbc.naming import graph_clash
from robot_core.rbc.registry import instance_way
from robot_core.ros.apply_wrench_caller import ApplyWrenchCaller
from robot_core.ros.middleware_deadlock import middleware_deadlocked
from robot_core.ros.parameters import ReadOnlyReasons, declare_specs
from robot_core.ros.rbc_goals import GoalServer
from robot_core.ros.rbc_messages import SelectionError, expand_selection, joint_state_values
from robot_core.text import clip

NODE_NAME = "rbc"
EXIT_CONFIG_ERROR = 2
STATE_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
COMMAND_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE)
OUTPUT_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE)
LATCHED_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
TF_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100, reliability=ReliabilityPolicy.RELIABLE)
READY_TIMEOUT = 60.0  # s an instance process may take to start (imports, kinematics) before create_re fails
RETIRE_GRACE = 1.0  # s a destroyed instance's node lives on so its aborted goals' results reach the clients
NEVER_WARN_AFTER = 5.0  # s after start before a state topic that never spoke is reported
STALE_EVENT = " is stale (no update for "  # the core's stale-var events; summarised per topic instead

DEFAULTS: dict[str, Any] = {s.name: s.default for s in RBC_PARAMS}  # declared and documented from RBC_PARAMS


class AggregateOutput:
    """``~/<var>``: one reused JointState over every joint having the var, values in ``position``.

    Same content as ``Coupler.aggregate_joint_state`` (NaN for stale values when ``stale_as_nan``), built from
    the table's entries directly: about seven times cheaper per message, which matters at kHz input rates.
    ``fill`` runs under the coupler's lock, ``publish`` outside it (both in the coupler's executor thread).
    """

    __slots__ = ("entries", "has_cmd", "last_publish", "msg", "pub", "stale_as_nan")

    def __init__(self, entries: list[Any], pub: Any, stale_as_nan: bool):
        self.entries = entries
        self.pub = pub
        self.stale_as_nan = stale_as_nan
        self.has_cmd = any(e.kind == "cmd" for e in entries)
        self.last_publish = -math.inf
        self.msg = JointState(name=[e.joint for e in entries])

    def fill(self) -> None:
        if self.stale_as_nan:
            nan = math.nan
            self.msg.position = array.array("d", [nan if e.stale else e.value for e in self.entries])
        else:
            self.msg.position = array.array("d", [e.value for e in self.entries])

    def publish(self, stamp: Any, now: float) -> None:
        self.msg.header.stamp = stamp
        self.pub.publish(self.msg)
        self.last_publish = now


class StartupError(Exception):
    """The coupler cannot be built (no description, bad tags); the process exits with EXIT_CONFIG_ERROR."""


class RbcNode(ReadOnlyReasons, Node):
    """The ``rbc`` node; see the module docstring."""

    def __init__(self, **node_kwargs: Any):
        super().__init__(NODE_NAME, **node_kwargs)
        self._log = self.get_logger()
        self.p = self._read_parameters()
        FramePrefix(self.p["frame_prefix"])  # a bad prefix stops the start, naming the parameter
        # Reachers/extenders are spun here (by spin_instances), apart from the coupler's own callbacks.
        self.instance_executor = MultiThreadedExecutor(num_threads=self.p["instance_threads"], context=self.context)
        self._lock = threading.Lock()
        self.coupler: Coupler | None = None
        self.failed: str | None = None
        self.ready = threading.Event()
        self._instances: dict[str, InstanceNode] = {}
        self._retiring: list[tuple[InstanceNode, float, bool]] = []  # (node, when, removed from executor)
        # _instances and _retiring: level-2 control changes them on the helper node's thread, the cycle reads them
        self._nodes_lock = threading.Lock()
        self._next_output = 0.0
        self._stale_state: tuple[list[str], list[str]] | None = None
        self._warned_stale: set[str] = set()
        self._warned_never: set[str] = set()
        self._started = time.monotonic()
        self._wrench_caller: ApplyWrenchCaller | None = None
        self._description_sub = None
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._description = ""
        self._description_file: str | None = None  # the description for instance processes (instance_processes)
        self._l2_node: Node | None = None
        self._lost: dict[str, str] = {}  # instance process -> why it was dropped
        # The actions of instance processes, served here on the helper node so they outlive the process.
        self._goal_servers: dict[str, GoalServer] = {}
        self._retiring_servers: list[tuple[str, GoalServer, float]] = []  # (name, server, destroy after)
        self._servers_lock = threading.Lock()  # the two above: the cycle and the helper node's threads

        description, source = self.p["robot_description"], "parameter robot_description"
        if not description and self.p["urdf_path"]:
            description, source = self.p["urdf_path"], self.p["urdf_path"]
        if description:
            self._start(self._load(description, source), source)
        else:
            topic = self.resolve_topic_name(self.p["robot_description_topic"])
            self._log.info(f"no robot_description or urdf_path parameter: waiting for the robot description on "
                           f"'{topic}'")
            self._description_sub = self.create_subscription(String, topic, self._on_description, LATCHED_QOS)

    # --- parameters -------------------------------------------------------------------------------------------
    def _read_parameters(self) -> dict[str, Any]:
        """Declare RBC_PARAMS (descriptors: description, type, range, read-only) and validate them."""
        try:
            p = declare_specs(self, RBC_PARAMS, self.get_name())
        except ParamError as exc:
            raise StartupError(str(exc)) from None
        pairs: dict[str, str] = {}
        for item in p["position_vars"]:
            cmd, sep, state = item.partition(":")
            if not sep or not cmd.strip() or not state.strip():
                raise StartupError(f"parameter 'position_vars': '{item}' is not 'cmd_var:state_var'")
            pairs[cmd.strip()] = state.strip()
        p["position_vars"] = pairs
        lead = float(p["max_position_lead"])
        p["max_position_lead"] = lead if lead > 0 else None
        return p

    # --- start-up ---------------------------------------------------------------------------------------------
    def _load(self, description: str, source: str) -> RobotModel:
        self._description = description
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                robot = load_robot(description, self.p["package_dirs"] or None)
        except (RobotModelError, ValueError, OSError) as exc:
            raise StartupError(f"cannot read the robot description from {source}: {exc}") from exc
        for w in caught:
            self._log.warning(f"{source}: {w.message}")
        return robot

    def _on_description(self, msg: String) -> None:
        if self.coupler is not None or self.failed:
            self._log.warning("another robot description arrived; the coupler keeps its robot (restart it to "
                              "couple another one)", throttle_duration_sec=10.0)
            return
        source = f"topic {self.resolve_topic_name(self.p['robot_description_topic'])}"
        try:
            self._start(self._load(msg.data, source), source)
        except StartupError as exc:
            self.failed = str(exc)

    def _start(self, robot: RobotModel, source: str) -> None:
        if not robot.rbc_nodes():
            raise StartupError(f"{source}: robot '{robot.name}' has no <rbc> tags, so there is nothing to couple")
        try:
            coupler = Coupler(robot, stale_timeout=self.p["stale_timeout"],
                              joint_state_match=self.p["joint_state_match"], position_vars=self.p["position_vars"],
                              max_position_lead=self.p["max_position_lead"])
        except RbcConfigError as exc:
            raise StartupError(f"invalid <rbc> tags in {source}: {exc}") from exc
        for w in coupler.warnings:
            self._log.warning(w)
        self.coupler = coupler
        table = coupler.table
        self._feeds = {t: sorted({e.name for e in st.entries}) for t, st in table.state_topics.items()}
        self._outputs_fed: dict[str, list[AggregateOutput]] = {}
        # The hot path (state in, ~/<var> out) gets no QoS-event handlers: each one is an extra entity in every
        # wait of the executor. Command publishers keep them (an incompatible driver is worth a warning).
        self._state_subs = [
            (topic, self.create_subscription(cls, topic, lambda msg, t=topic: self._guarded_state(t, msg), STATE_QOS,
                                             event_callbacks=SubscriptionEventCallbacks(use_default_callbacks=False)))
            for topic, cls in coupler.subscriptions()]
        self._cmd_pubs = {topic: self.create_publisher(cls, topic, COMMAND_QOS)
                          for topic, cls in coupler.publications()}
        self._cmd_header = {t: "header" in cls.get_fields_and_field_types() for t, cls in coupler.publications()}
        self._outputs: dict[str, AggregateOutput] = {}
        self._cmd_subs = []
        cmd_vars = set(coupler.var_names("cmd"))
        for var in coupler.var_names():
            try:
                pub = self.create_publisher(JointState, f"~/{var}", OUTPUT_QOS,
                                            event_callbacks=PublisherEventCallbacks(use_default_callbacks=False))
                self._outputs[var] = AggregateOutput(table.entries(var), pub, self.p["stale_as_nan"])
                if var in cmd_vars:
                    self._cmd_subs.append(self.create_subscription(
                        JointState, f"~/{var}/cmd", lambda msg, v=var: self._on_var_cmd(v, msg), OUTPUT_QOS))
            except Exception as exc:  # an odd var name must not stop the coupling of the others
                self._log.warning(f"var '{var}' gets no aggregated topic: {exc}")
        self._outputs_fed = {t: [self._outputs[v] for v in vs if v in self._outputs] for t, vs in self._feeds.items()}
        self._stale_pub = self.create_publisher(String, "~/stale", LATCHED_QOS)
        self._tf_pub = self.create_publisher(_tf_message_type(), "/tf", TF_QOS)
        self.create_service(_srv("GetVars"), "~/get_vars", self._guard_service("get_vars", self._srv_get_vars))
        self.create_service(_srv("SetVars"), "~/set_vars", self._guard_service("set_vars", self._srv_set_vars))
        self._l2_server().create_service(_srv("L2Control"), f"{self.get_fully_qualified_name()}/l2_ctrl",
                                         self._l2_handler("l2_ctrl"))
        self.create_service(Trigger, "~/release", self._guard_service("release", self._srv_release))
        self._serve_documented_l2()
        self._timer = self.create_timer(1.0 / self.p["rate"], self._guarded_cycle, clock=self._steady)
        n_vars = len(table.entries())
        self._log.info(
            f"rbc ready: robot '{robot.name}' from {source}: {n_vars} vars of {len(table.joints())} joints "
            f"({', '.join(coupler.var_names())}); state topics {sorted(table.state_topics)}; cmd topics "
            f"{sorted(table.cmd_topics)} (published once written); cycle {self.p['rate']:g} Hz")
        if self.p["preload_kinematics"]:
            threading.Thread(target=self._preload_kinematics, name="rbc-preload", daemon=True).start()
        self.ready.set()

    def _serve_documented_l2(self) -> None:
        """``/rbc_l2_ctrl`` (rbc_msgs_srvs/srv/RbcL2Ctrl), as the RBC documentation calls it: same requests and
        answers as ``~/l2_ctrl``, side by side with it."""
        name = self.p["documented_l2_service"].strip()
        if not name:
            return
        try:
            from rbc_msgs_srvs.srv import RbcL2Ctrl
        except ImportError as exc:
            self._log.warning(f"'{name}' (rbc_msgs_srvs/srv/RbcL2Ctrl) not served: {exc}; run the set-up (make "
                              f"setup) to build rbc_msgs_srvs")
            return
        self._l2_server().create_service(RbcL2Ctrl, name, self._l2_handler("rbc_l2_ctrl"))

    def _l2_server(self) -> Node:
        """The node serving level-2 control (and the actions of instance processes): a helper node
        (``<name>_l2``) spun by the instance executor, because ``create_re`` of a process waits there until the
        new process serves its node, while this node's executor keeps running the cycle and the state input."""
        if self._l2_node is None:
            self._l2_node = Node(f"{self.get_name()}_l2", namespace=self.get_namespace(), context=self.context,
                                 use_global_arguments=False)
            self.instance_executor.add_node(self._l2_node)
        return self._l2_node

    def _l2_handler(self, name: str) -> Any:
        return self._guard_service(name, self._srv_l2_ctrl_any)

    def _preload_kinematics(self) -> None:
        """Build the kinematics model now, off the lock: doing it at the first VF/CS/TC goal would stall the
        coupler (no state processed) long enough to make vars stale."""
        assert self.coupler is not None
        model = self.coupler.model
        root = model.root_link
        leaves = [j.child for j in model.joints.values() if not model.child_joints(j.child)]
        try:
            deepest = max(leaves, key=lambda link: len(model.chain(root, link)), default=None)
            if deepest is not None and any(j.is_movable for j in model.chain(root, deepest)):
                self.coupler.context.chain(root, deepest)
        except Exception as exc:  # only an optimisation; instances report real problems themselves
            self._log.debug(f"kinematics not preloaded: {exc}")

    # --- keeping the node up ----------------------------------------------------------------------------------
    # An exception escaping a callback would end the executor's spin and with it the node. Whatever goes wrong
    # inside one callback (a core bug, an odd message) is logged and the node carries on.
    def _guarded_state(self, topic: str, msg: Any) -> None:
        try:
            self._on_state(topic, msg)
        except Exception as exc:
            self._log.error(f"message on '{topic}' not processed: {type(exc).__name__}: {exc}",
                            throttle_duration_sec=5.0)

    def _guarded_cycle(self) -> None:
        try:
            self._cycle()
        except Exception as exc:
            self._log.error(f"coupler cycle failed: {type(exc).__name__}: {exc}", throttle_duration_sec=5.0)

    def _guard_service(self, name: str, callback: Any) -> Any:
        def guarded(request: Any, response: Any) -> Any:
            try:
                return callback(request, response)
            except Exception as exc:
                self._log.error(f"~/{name} failed: {type(exc).__name__}: {exc}")
                response.success = False
                response.message = f"internal error in ~/{name}: {type(exc).__name__}: {exc}"
                return response
        return guarded

    # --- state in, aggregated state out -----------------------------------------------------------------------
    def _on_state(self, topic: str, msg: Any) -> None:
        coupler = self.coupler
        assert coupler is not None
        now = time.monotonic()
        outs = self._outputs_fed[topic] if self.p["publish_state_on_message"] else ()
        with self._lock:
            coupler.on_message(topic, msg, now)
            for out in outs:
                out.fill()
        if not outs:
            return
        stamp = self.get_clock().now().to_msg()
        for out in outs:
            out.publish(stamp, now)

    def _on_var_cmd(self, var: str, msg: JointState) -> None:
        assert self.coupler is not None
        try:
            names, values = joint_state_values(msg, var)
            with self._lock:
                self.coupler.set_many(var, names, values, time.monotonic())
        except (SelectionError, RbcError, ValueError) as exc:
            self._log.warning(f"~/{var}/cmd message ignored: {exc}", throttle_duration_sec=2.0)
        except Exception as exc:  # see _guarded_state
            self._log.error(f"~/{var}/cmd message not processed: {type(exc).__name__}: {exc}",
                            throttle_duration_sec=5.0)

    # --- the cycle --------------------------------------------------------------------------------------------
    def _take_queued_states(self) -> None:
        """Apply the state messages already waiting in DDS before the cycle judges staleness. rclpy's executor
        runs a due timer before the subscriptions that became ready with it, so a process starved for longer than
        ``stale_timeout`` woke to a cycle that called a live driver stale (and aborted the goals on it) with its
        messages still queued. The node's executor is single-threaded: nothing else takes them meanwhile."""
        for topic, sub in self._state_subs:
            handle = getattr(sub, "handle", None)
            if handle is None or not hasattr(handle, "take_message"):
                continue
            while True:
                with handle:
                    got = handle.take_message(sub.msg_type, sub.raw)
                if got is None:
                    break
                self._guarded_state(topic, got[0])

    def _cycle(self) -> None:
        coupler = self.coupler
        assert coupler is not None
        self._take_queued_states()
        now = time.monotonic()
        if self.p["publish_state_on_message"]:
            # Commands change every cycle; state outputs went out on message arrival and are repeated here only
            # when no message refreshed them for a heartbeat period (a dead driver's NaNs still show, at that rate).
            quiet = now - 1.0 / self.p["heartbeat_rate"]
            aggregates = [out for out in self._outputs.values() if out.has_cmd or out.last_publish < quiet]
        else:
            aggregates = list(self._outputs.values())
        with self._lock:
            commands = coupler.step(now)
            events = coupler.drain_events()
            if coupler.lost:
                self._lost.update(coupler.lost)
                for name, _ in coupler.lost:  # its goal aborts naming the exit; the server goes after that
                    self._retire_server(name, now)
                coupler.lost.clear()
            for out in aggregates:
                out.fill()
            requests = [(name, d["apply_wrench_request"], self._goal_id(name))
                        for name, d in coupler.derived.items() if "apply_wrench_request" in d]
            outputs_due = now >= self._next_output
            with self._nodes_lock:
                local = list(self._instances)
            derived = {name: coupler.derived.get(name, {}) for name in local} if outputs_due else {}
            stale = (sorted(coupler.table.stale_topics(now)),
                     [t for t, st in coupler.table.state_topics.items() if st.last_rx is None],
                     [f"{e.joint}/{e.name}" for e in coupler.table.entries() if e.kind == "state" and e.stale]
                     ) if outputs_due else None
        stamp = self.get_clock().now().to_msg()
        for topic, msg in commands.items():
            if self._cmd_header[topic]:
                msg.header.stamp = stamp
            self._cmd_pubs[topic].publish(msg)
        for out in aggregates:
            out.publish(stamp, now)
        for name, request, goal_id in requests:
            self._call_apply_wrench(name, request, goal_id)
        if outputs_due:
            self._next_output = now + 1.0 / self.p["output_rate"]
            self._publish_derived(derived, stamp)
        if stale is not None:
            self._report_stale(now, *stale)
        for event in events:
            if STALE_EVENT not in event:
                self._log.warning(event)
        self._retire(now)

    def _srv_l2_ctrl_any(self, request: Any, response: Any) -> Any:
        """``~/l2_ctrl`` (on the helper node's thread): ``create_re`` of a process starts it and answers once it
        serves its node, it died, or READY_TIMEOUT passed; everything else as in-process."""
        from robot_core.rbc.coupler import L2Result

        assert self.coupler is not None
        cmd, data, name = request.cmd.strip(), request.data.strip(), request.name.strip()
        if cmd != "create_re":
            return self._srv_l2_ctrl(request, response)
        type_name, as_process, refusal = instance_way(data, self.p["instance_processes"])
        if refusal is not None:
            res = L2Result(False, refusal)
        elif not as_process:
            res = self._create_instance(type_name, name)
        else:
            res = self._start_process(type_name, name)
        deadline = time.monotonic() + READY_TIMEOUT
        while res is None:
            with self._lock:  # the cycle drops a dead process under this lock
                remote = self.coupler.remote(name)
                if remote is None:
                    reason = self._lost.get(name) or next((t for n, t in self.coupler.lost if n == name), None)
                    res = L2Result(False, reason or f"instance process '{name}' is gone")
                elif remote.ready:
                    res = L2Result(True, f"created {remote.TYPE_NAME} '{name}' (process {remote.pid})", [name],
                                   [remote.TYPE_NAME])
                    self._serve_process_goals(name)
                elif remote.exit_reason() is not None:
                    res = L2Result(False, f"instance process '{name}' (pid {remote.pid}) ended "
                                          f"({remote.exit_reason()}) before it was ready; see the log")
                    self.coupler.destroy(name)
                elif time.monotonic() > deadline:
                    self.coupler.destroy(name)
                    res = L2Result(False, f"instance process '{name}' (pid {remote.pid}) was not ready within "
                                          f"{READY_TIMEOUT:g} s; ended")
            if res is None:
                time.sleep(0.01)
        response.success, response.message = res.success, res.message
        response.names, response.types = list(res.names), list(res.types)
        if not res.success:
            self._log.warning(f"l2_ctrl create_re '{clip(data)}' '{clip(name)}' refused: {res.message}")
        elif as_process:
            self._log.info(res.message)
        return response

    def _start_process(self, type_name: str, name: str) -> Any:
        """Checks as in-process, then the process; None when it started (the caller waits for it)."""
        from robot_core.nodes.rbc_instance_process import PROCESS_ARGV
        from robot_core.rbc.coupler import L2Result
        from robot_core.rbc.reachers.contact_simulation import torque_var_in

        assert self.coupler is not None
        refusal = self._make_room(name)
        if refusal is not None:
            return refusal
        if self._description_file is None:
            with tempfile.NamedTemporaryFile("w", prefix="rbc_description_", suffix=".txt", delete=False) as f:
                f.write(self._description if "<" in self._description else Path(self._description).read_text())
            self._description_file = f.name
        spec = {"description_file": self._description_file, "package_dirs": list(self.p["package_dirs"]),
                "namespace": self.get_namespace(), "feedback_period": 1.0 / self.p["feedback_rate"],
                "output_rate": self.p["output_rate"], "use_sim_time": bool(self.get_parameter("use_sim_time").value),
                "cs_torque_var": torque_var_in(self.coupler.table), "frame_prefix": self.p["frame_prefix"],
                "apply_wrench_service": self.p["apply_wrench_service"]}
        self._lost.pop(name, None)
        with self._lock:
            try:
                self.coupler.create_remote(type_name, name, [sys.executable, *PROCESS_ARGV], spec)
            except (KeyError, ValueError, OSError) as exc:
                text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
                return L2Result(False, text)
        return None

    def close_processes(self) -> None:
        """End every instance process and remove the description file they read."""
        if self.coupler is not None:
            with self._lock:
                self.coupler.close()
        if self._description_file is not None:
            with contextlib.suppress(OSError):
                Path(self._description_file).unlink()
            self._description_file = None

    def _goal_id(self, name: str) -> int:
        assert self.coupler is not None
        return self.coupler.instance(name).status().goal_id

    def _publish_derived(self, derived: dict[str, dict[str, Any]], stamp: Any) -> None:
        transforms = []
        for name, data in derived.items():
            node = self._instances.get(name)
            if node is None or not data:
                continue
            try:
                t = node.publish_derived(data, stamp)
            except Exception as exc:  # bad derived data of one instance must not stop the cycle
                self._log.warning(f"outputs of '{name}' not published: {exc}", throttle_duration_sec=5.0)
                continue
            if t is not None:
                transforms.append(t)
        if transforms:
            self._tf_pub.publish(_tf_message_type()(transforms=transforms))

    def _report_stale(self, now: float, topics: list[str], never: list[str], vars_: list[str]) -> None:
        """Log stale/alive transitions per state topic and publish ``~/stale`` when the set changes."""
        for t in topics:
            if t in never:
                if t not in self._warned_never and now - self._started > NEVER_WARN_AFTER:
                    self._warned_never.add(t)
                    self._log.warning(f"no message on state topic '{t}' since start (is its driver running?); its "
                                      f"vars stay stale ({', '.join(self._feeds.get(t, []))})")
            elif t not in self._warned_stale:
                self._warned_stale.add(t)
                self._log.warning(f"state topic '{t}' stopped (no message for {self.p['stale_timeout']:g} s): its "
                                  f"vars are stale ({', '.join(self._feeds.get(t, []))})")
        for t in sorted(self._warned_stale - set(topics)):
            self._warned_stale.discard(t)
            self._log.info(f"state topic '{t}' is alive again")
        for t in sorted(self._warned_never - set(never)):
            self._warned_never.discard(t)
            self._log.info(f"first message on state topic '{t}'")
        state = (topics, vars_)
        if state != self._stale_state:
            self._stale_state = state
            self._stale_pub.publish(String(data=json.dumps({"stale_topics": topics, "stale_vars": vars_})))

    # --- ContactSimulation's simulator calls ------------------------------------------------------------------
    def _call_apply_wrench(self, name: str, request: dict[str, Any], goal_id: int) -> None:
        if self._wrench_caller is None:
            self._wrench_caller = ApplyWrenchCaller(self, self.p["apply_wrench_service"])

        def abort(reason: str) -> None:
            assert self.coupler is not None
            with self._lock:
                inst = self.coupler.instances().get(name)
                if inst is not None:
                    inst.abort(goal_id, reason)

        self._wrench_caller.call(name, request, abort)

    # --- services ---------------------------------------------------------------------------------------------
    def _srv_get_vars(self, request: Any, response: Any) -> Any:
        assert self.coupler is not None
        with self._lock:
            try:
                pairs = expand_selection(self.coupler.table, request.joints, request.vars)
            except SelectionError as exc:
                response.success, response.message = False, str(exc)
                return response
            res = self.coupler.get_vars([j for j, _ in pairs], [v for _, v in pairs])
        response.success, response.message = res.success, res.message
        if res.success:
            response.joint_names = [j for j, _ in pairs]
            response.var_names = [v for _, v in pairs]
            response.values = [float(v) for v in res.values]
            response.stale = [bool(s) for s in res.stale]
        return response

    def _srv_set_vars(self, request: Any, response: Any) -> Any:
        assert self.coupler is not None
        with self._lock:
            ok, message = self.coupler.set_vars(list(request.joints), list(request.vars),
                                                [float(v) for v in request.values], time.monotonic())
        response.success, response.message = ok, message or f"set {len(request.joints)} values"
        return response

    def _srv_release(self, _request: Any, response: Any) -> Any:
        assert self.coupler is not None
        with self._lock:
            driving = [n for n, i in self.coupler.instances().items() if i.KIND == "reacher" and
                       i.status().state == ACTIVE]
        with self._servers_lock:
            servers = dict(self._goal_servers)
        driving += [n for n, server in servers.items() if server.active()]  # instance processes
        with self._lock:
            if driving:
                response.success = False
                response.message = f"reachers {driving} are running; cancel their goals first"
                return response
            for e in self.coupler.table.entries():
                if e.kind == "cmd":
                    e.written = False  # core rule: a topic is published only once one of its vars is written
        # The cycle runs on this executor, so nothing more goes out; what went out before must have reached the
        # drivers when we answer: a client that releases and then resets its simulator must not see a command
        # of ours arrive after the reset and move the robot back.
        for pub in self._cmd_pubs.values():
            pub.wait_for_all_acked(RclDuration(seconds=0.5))
        response.success, response.message = True, "cmd topics released until a var is written again"
        return response

    def _srv_l2_ctrl(self, request: Any, response: Any) -> Any:
        assert self.coupler is not None
        cmd, data, name = request.cmd.strip(), request.data.strip(), request.name.strip()
        if cmd == "destroy_re":
            with self._servers_lock:
                server = self._goal_servers.get(name)
            if server is not None:  # an instance process: its running goal aborts "destroyed" before it ends
                server.close()
            with self._lock:
                res = self.coupler.l2_ctrl(cmd, data, name)
            if res.success and server is not None:
                self._retire_server(name, time.monotonic())
            with self._nodes_lock:
                node = self._instances.pop(name, None) if res.success else None
            if node is not None:
                node.close()
                with self._nodes_lock:
                    self._retiring.append((node, time.monotonic() + RETIRE_GRACE, False))
        else:
            with self._lock:
                res = self.coupler.l2_ctrl(cmd, data, name)
        response.success, response.message = res.success, res.message
        response.names, response.types = list(res.names), list(res.types)
        if not res.success:
            self._log.warning(f"l2_ctrl {clip(cmd)} '{clip(data)}' '{clip(name)}' refused: {res.message}")
        return response

    def _create_instance(self, type_name: str, name: str) -> Any:
        from robot_core.rbc.coupler import L2Result

        assert self.coupler is not None
        refusal = self._make_room(name)
        if refusal is not None:
            return refusal
        with self._lock:
            res = self.coupler.l2_ctrl("create_re", type_name, name)
            if not res.success:
                return res
            inst = self.coupler.instance(name)
            if inst.TYPE_NAME == "CS":  # the tags' external-torque var, or none: then the simulator's service
                from robot_core.rbc.reachers.contact_simulation import torque_var_in

                torque_var = torque_var_in(self.coupler.table)
                inst.configure({"mode": "service"} if torque_var is None else {"torque_var": torque_var})
        try:
            node = InstanceNode(inst, self._lock, self.coupler.derived, namespace=self.get_namespace(),
                                context=self.context, feedback_period=1.0 / self.p["feedback_rate"],
                                use_sim_time=bool(self.get_parameter("use_sim_time").value),
                                frame_prefix=self.p["frame_prefix"])
        except Exception as exc:
            with self._lock:
                self.coupler.destroy(name)
            return L2Result(False, f"cannot create the node of '{name}': {type(exc).__name__}: {exc}")
        with self._nodes_lock:
            self._instances[name] = node
        self.instance_executor.add_node(node)
        self._log.info(f"created {inst.TYPE_NAME} '{name}' (node {node.get_fully_qualified_name()}, in-process)")
        return res

    def _make_room(self, name: str) -> Any:
        """Before a new instance ``name`` of either way: an L2Result refusing the name (invalid, or taken on the
        graph by a foreign node), else None once whatever of an instance of that name destroyed just before is
        gone (its lingering in-process node, its process and its node, its process's action server)."""
        assert self.coupler is not None
        with self._lock:
            known = {**self.coupler.instances(), **self.coupler.remotes()}
            stopping = name in self.coupler.stopping()
        with self._nodes_lock:
            retiring = [old for old, _, _ in self._retiring if old.get_name() == name]
        refusal = self._name_refusal(name, known, {name} if stopping or retiring else set())
        if refusal is not None or name in known:
            return refusal  # an existing instance: the coupler refuses it, naming it
        for old in retiring:  # re-created right after destroy_re: finish the old node now
            with self._nodes_lock:
                self._retiring = [e for e in self._retiring if e[0] is not old]
            self._finish_retiring(old)
        if stopping:  # the old process goes first (its node with it)
            self.coupler.finish_stopping(name)
        self._finish_server(name)  # a retiring server of that name: the new process's goals go to a new one
        return None

    def _name_refusal(self, name: str, known: Any, leaving: set[str]) -> Any:
        """Why ``name`` cannot be a new instance's node name (not a valid ROS node name, or taken on the graph by
        a node that is not one of ``known`` instances nor ``leaving``), as an L2Result; None when it can."""
        from robot_core.rbc.coupler import L2Result

        invalid = _valid_node_name(name)
        if invalid is not None:
            return L2Result(False, invalid)
        if name in known:  # an existing instance: the coupler says so
            return None
        # a re-created instance's old node may linger on the graph a while: it excuses itself, not a foreign node
        clash = graph_clash(name, self.get_namespace(), self.get_node_names_and_namespaces(), leaving)
        return L2Result(False, clash) if clash else None

    def _serve_process_goals(self, name: str) -> None:
        """Serve the actions of the new instance process ``name`` here (they outlive the process)."""
        assert self.coupler is not None
        remote = self.coupler.remote(name)
        if remote is None or remote.goals is None or remote.KIND != "reacher":
            return
        ns = self.get_namespace().rstrip("/")
        server = GoalServer(self._l2_server(), remote.goals, threading.Lock(), f"{ns}/{name}",
                            1.0 / self.p["feedback_rate"])
        with self._servers_lock:
            self._goal_servers[name] = server

    def _retire_server(self, name: str, now: float) -> None:
        with self._servers_lock:
            server = self._goal_servers.pop(name, None)
            if server is not None:
                self._retiring_servers.append((name, server, now + RETIRE_GRACE))

    def _finish_server(self, name: str) -> None:
        with self._servers_lock:
            old = [e for e in self._retiring_servers if e[0] == name]
            for entry in old:
                self._retiring_servers.remove(entry)
        for _, server, _ in old:
            server.close()
            server.destroy()

    def _retire(self, now: float) -> None:
        if self._retiring:
            with self._nodes_lock:
                keep, gone = [], []
                for node, when, removed in self._retiring:
                    if now < when:
                        keep.append((node, when, removed))
                    elif not removed:
                        self.instance_executor.remove_node(node)
                        keep.append((node, now + 0.2, True))  # let the executor drop it before destroying
                    else:
                        gone.append(node)
                self._retiring = keep
            for node in gone:
                node.destroy_node()
        if self._retiring_servers:
            with self._servers_lock:
                due = [e for e in self._retiring_servers if now >= e[2] and not e[1].executing]
                self._retiring_servers = [e for e in self._retiring_servers if e not in due]
            for _, server, _ in due:  # their aborted goals' results went out first
                server.destroy()

    def _finish_retiring(self, node: InstanceNode) -> None:
        self.instance_executor.remove_node(node)
        node.destroy_node()

    # --- shutdown ---------------------------------------------------------------------------------------------
    def safe_stop(self) -> None:
        """Cancel every instance and publish one last cycle: velocities end at zero, positions hold."""
        coupler = self.coupler
        if coupler is None:
            return
        for node in list(self._instances.values()):
            node.close()
        for server in list(self._goal_servers.values()):
            server.close()
        now = time.monotonic()
        with self._lock:
            for name in list(coupler.instances()) + list(coupler.remotes()):
                coupler.destroy(name)
            commands = coupler.step(now)
        if not self.context.ok():
            return
        stamp = self.get_clock().now().to_msg()
        for topic, msg in commands.items():
            if self._cmd_header[topic]:
                msg.header.stamp = stamp
            self._cmd_pubs[topic].publish(msg)
        for topic in commands:  # the last word must reach the drivers before the participant goes away
            self._cmd_pubs[topic].wait_for_all_acked(RclDuration(seconds=0.5))

    def drain_goals(self, executor: Any, timeout: float = 2.0) -> None:
        """After safe_stop: give aborted goals the time to finish and their results the time to reach clients."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(
                n.executing for n in [*self._instances.values(), *self._goal_servers.values()]):
            executor.spin_once(timeout_sec=0.02)
        end = min(deadline, time.monotonic() + 0.3)
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.02)

    def destroy_instances(self) -> None:
        if self._wrench_caller is not None:
            self._wrench_caller.close()
        for node in list(self._instances.values()) + [n for n, _, _ in self._retiring]:
            with contextlib.suppress(Exception):
                self.instance_executor.remove_node(node)
            node.destroy_node()
        self._instances.clear()
        self._retiring.clear()
        for server in [*self._goal_servers.values(), *(s for _, s, _ in self._retiring_servers)]:
            with contextlib.suppress(Exception):
                server.destroy()
        self._goal_servers.clear()
        self._retiring_servers.clear()
        if self._l2_node is not None:
            with contextlib.suppress(Exception):
                self.instance_executor.remove_node(self._l2_node)
            self._l2_node.destroy_node()
            self._l2_node = None


def _valid_node_name(name: str) -> str | None:
    """Why ``name`` is not a valid ROS node name (None when it is)."""
    try:
        validate_node_name(name)
    except Exception as exc:
        return (f"instance name '{clip(name)}' is not a valid ROS node name: "
                f"{clip(str(exc).splitlines()[0], 200)}")
    return None


def _srv(name: str) -> Any:
    import robot_core_interfaces.srv as srvs

    return getattr(srvs, name)


def _tf_message_type() -> Any:
    from tf2_msgs.msg import TFMessage

    return TFMessage


def main(args: list[str] | None = None) -> int:
    """Run the coupler until SIGINT/SIGTERM (exit code 0, however many signals); exit code 2 when the coupling
    cannot be built."""
    from robot_core.ros.node_main import finish

    return finish(_run(args))


def description_argument(argv: list[str]) -> list[Any]:
    """``rbc robot.urdf``, as the RBC documentation starts its rbc.py with the robot's file: the one argument
    left after the ROS arguments becomes ``urdf_path``; StartupError when more are given."""
    from rclpy.parameter import Parameter
    from rclpy.utilities import remove_ros_args

    rest = remove_ros_args(list(argv))[1:]
    if len(rest) > 1:
        raise StartupError(f"rbc takes at most one argument, the robot's description file; got {len(rest)}: "
                           f"{clip(' '.join(rest), 200)}")
    return [Parameter("urdf_path", Parameter.Type.STRING, rest[0])] if rest else []


def _run(args: list[str] | None) -> int:
    from robot_core.ros.node_main import SHUTDOWN, NodeStartError, init_rclpy, report_startup_failure, spin_while

    try:
        init_rclpy(args)
    except NodeStartError as exc:
        return report_startup_failure(NODE_NAME, exc)
    stop = threading.Event()  # the spinning threads' own stop: goal results still go out after a signal
    code = 0
    node: RbcNode | None = None
    thread: threading.Thread | None = None
    try:
        try:
            node = RbcNode(parameter_overrides=description_argument(sys.argv if args is None else args))
        except StartupError as exc:
            rclpy.logging.get_logger(NODE_NAME).fatal(str(exc))
            return EXIT_CONFIG_ERROR
        instances = node.instance_executor

        def spin_instances() -> None:
            spin_while(instances, lambda: not stop.is_set() and rclpy.ok(), node.get_logger().error)

        thread = threading.Thread(target=spin_instances, name="rbc-instances", daemon=True)
        thread.start()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        def serving() -> bool:
            return not SHUTDOWN.requested and rclpy.ok() and not node.failed

        spin_while(executor, serving, node.get_logger().error)
        if node.failed:
            node.get_logger().fatal(node.failed)
            code = EXIT_CONFIG_ERROR
        SHUTDOWN.request()  # from here on, further signals change nothing
        node.safe_stop()
        node.drain_goals(executor)
        stop.set()
        thread.join(timeout=5.0)
        executor.remove_node(node)
    finally:
        stop.set()
        if node is not None:
            node.close_processes()
        if not middleware_deadlocked(rclpy.logging.get_logger(NODE_NAME)):
            if node is not None:
                node.destroy_instances()
                node.instance_executor.shutdown(timeout_sec=1.0)
                node.destroy_node()
            rclpy.try_shutdown()
    return code


if __name__ == "__main__":
    sys.exit(main())
