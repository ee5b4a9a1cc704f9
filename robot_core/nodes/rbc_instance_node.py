"""One reacher/extender of the ``rbc`` node as its own ROS node: parameters, an action and a status service.

Created by ``~/l2_ctrl create_re`` (robot_core.nodes.rbc) around a core instance
(:class:`robot_core.rbc.instance.RbcInstance`) and spun by the rbc process's instance executor (a
multi-threaded one: a running goal holds one of its threads while it waits, so it never blocks the coupler's
cycle, which runs on another executor). Every touch of the core happens under the coupler's lock. For an
instance run as a process (``create_re`` with ``data: "JR process"``, or the rbc node's ``instance_processes``),
the same class serves the instance in a process of its own (robot_core.nodes.rbc_instance_process), with that
process's lock.

* **Parameters** are the instance's ``PARAMS`` (JR: joints, weight, kp, ki, kd, ...; VF: base_link, end_link,
  weight, gains ...; CS/TC: link, point, ...). They can be set at any time (``ros2 param set /JR0 kp 3.0``);
  the set-parameters callback validates them in the core and applies all or none, and a refusal's reason
  names the instance and the parameter. Number parameters accept integers (``weight 1``).
* **Actions** (types with goals; robot_core.ros.rbc_goals, served here for an instance in the rbc process, by
  the rbc node for an instance process so that they outlive it): JR ``/<name>/reach``
  (robot_core_interfaces/action/JointReach), VF
  ``/<name>/reach`` (CartesianReach), CS ``/<name>/apply`` (ApplyContact); and, under the names and types of the
  RBC's own documentation, JR ``/<name>/action`` (rbc_actions/action/JointReacher) and VF ``/<name>/action``
  (rbc_actions/action/VF). Both actions of an instance drive the same core, so a goal on one pre-empts a goal
  running on the other. A goal the core refuses (joints
  outside ``joints``, pose with a bad quaternion, no chain configured, ...) is rejected and the reason logged and
  kept in ``~/status``. A new goal pre-empts the running one (which aborts). Cancel stops the reacher; the
  coupler then holds position / zeroes velocities. The goal, cancel and result services hold GOAL_QUEUE_DEPTH
  requests (robot_core.ros.action_qos), so a burst of goals is answered in full.
* **Parameter topics**: a parameter the instance lists in ``TOPIC_PARAMS`` (VF: ``obstacle_spheres``,
  ``obstacle_planes``) can also be set by publishing its numbers on ``~/<parameter>`` (std_msgs/Float64MultiArray);
  the value goes through the same checks as ``ros2 param set``, and a refusal is logged with its reason.
* ``~/status`` (std_srvs/Trigger): JSON with type, kind, goal state and message, parameters and the latest
  derived data (e.g. TouchContact's wrench, rank and unobservable directions).
* Contact types (CS, TC) publish ``~/wrench`` (geometry_msgs/WrenchStamped in the contact frame, for RViz) and
  ``~/wrench_base`` (same wrench in base_link, torque about the contact point); their contact frame goes to
  ``/tf`` through the rbc node.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from geometry_msgs.msg import TransformStamped, WrenchStamped
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.parameter import Parameter
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from robot_core.physics.frame_prefix import FramePrefix
from robot_core.rbc.errors import RbcError
from robot_core.rbc.instance import ParamSpec, RbcInstance
from robot_core.ros.rbc_goals import GoalServer
from robot_core.ros.rbc_messages import derived_messages, jsonable

CONTACT_TYPES = ("CS", "TC")
_ARRAY_TYPES = {"str_list": Parameter.Type.STRING_ARRAY, "float_list": Parameter.Type.DOUBLE_ARRAY}


class InstanceNode(Node):
    """ROS face of one RbcInstance; see the module docstring."""

    def __init__(self, inst: RbcInstance, lock: threading.Lock, derived: dict[str, Any], *,
                 namespace: str = "", context: Any = None, feedback_period: float = 0.05,
                 use_sim_time: bool = False, frame_prefix: str = "", serve_actions: bool = True):
        super().__init__(inst.name, namespace=namespace, context=context, use_global_arguments=False,
                         parameter_overrides=[Parameter("use_sim_time", value=use_sim_time)])
        self.inst = inst
        self._lock = lock
        self._derived = derived  # the coupler's name -> derived data (read under the lock)
        self._period = feedback_period
        self._frames = FramePrefix(frame_prefix)  # the robot's tf frames under a namespace: arm1/<frame>
        self._group = ReentrantCallbackGroup()
        self._specs = {p.name: p for p in inst.param_specs()}
        self._declare_parameters()
        self.add_on_set_parameters_callback(self._on_set_parameters)
        # Actions: here for an instance in the rbc process; for an instance process the rbc node serves them.
        self.goals = GoalServer(self, inst, lock, "~", feedback_period) if serve_actions else None
        self._rejected = ""  # the latest goal rejection when the rbc node serves the actions (set_rejection)
        for name in inst.TOPIC_PARAMS:
            self.create_subscription(Float64MultiArray, f"~/{name}",
                                     lambda msg, name=name: self._on_param_topic(name, msg), 10,
                                     callback_group=self._group)
        self.create_service(Trigger, "~/status", self._on_status, callback_group=self._group)
        self._wrench_pub = self._wrench_base_pub = None
        if inst.TYPE_NAME in CONTACT_TYPES:
            self._wrench_pub = self.create_publisher(WrenchStamped, "~/wrench", 10)
            self._wrench_base_pub = self.create_publisher(WrenchStamped, "~/wrench_base", 10)

    # --- parameters -------------------------------------------------------------------------------------------
    def _declare_parameters(self) -> None:
        """Declare every core parameter with its current value; lists are typed, numbers accept int or float."""
        for spec in self._specs.values():
            value = self.inst.params[spec.name]
            desc = ParameterDescriptor(description=_describe(spec), additional_constraints=_constraints(spec))
            if spec.kind in _ARRAY_TYPES:
                self.declare_parameter(spec.name, _ARRAY_TYPES[spec.kind], desc)
                self.set_parameters([Parameter(spec.name, _ARRAY_TYPES[spec.kind], list(value))])
            elif spec.kind in ("float", "int"):
                desc.dynamic_typing = True
                self.declare_parameter(spec.name, value, desc)
            else:
                self.declare_parameter(spec.name, value, desc)

    def _on_set_parameters(self, params: list[Parameter]) -> SetParametersResult:
        updates = {p.name: p.value for p in params if p.name in self._specs}
        if not updates:
            return SetParametersResult(successful=True)
        for name, value in updates.items():
            if value is None:
                return SetParametersResult(successful=False,
                                           reason=f"{self.inst.label()}: parameter '{name}' needs a value")
        try:
            with self._lock:
                self.inst.configure(updates)
        except RbcError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        except Exception as exc:  # a core bug must not kill the node; report it as a refusal
            names = ", ".join(f"'{n}'" for n in updates)
            return SetParametersResult(successful=False,
                                       reason=f"{self.inst.label()}: parameter {names}: {type(exc).__name__}: {exc}")
        return SetParametersResult(successful=True)

    def _on_param_topic(self, name: str, msg: Float64MultiArray) -> None:
        """A number-list parameter from its topic: set as ``ros2 param set`` would (same checks, all or nothing)."""
        result = self.set_parameters([Parameter(name, Parameter.Type.DOUBLE_ARRAY, [float(v) for v in msg.data])])[0]
        if not result.successful:
            self.get_logger().warning(f"'~/{name}' message refused: {result.reason}")

    # --- goals ------------------------------------------------------------------------------------------------
    @property
    def executing(self) -> int:
        return 0 if self.goals is None else self.goals.executing

    @property
    def last_rejection(self) -> str:
        return self._rejected if self.goals is None else self.goals.last_rejection

    def set_rejection(self, reason: str) -> None:
        """The latest goal rejection, when the goals are served elsewhere (the rbc node, for a process)."""
        self._rejected = reason

    # --- status and outputs -----------------------------------------------------------------------------------
    def _on_status(self, _request: Any, response: Any) -> Any:
        with self._lock:
            st = self.inst.status()
            info = {
                "name": self.inst.name, "type": self.inst.TYPE_NAME, "kind": self.inst.KIND,
                "state": st.state, "goal_id": st.goal_id, "message": st.message,
                "feedback": st.feedback, "result": st.result, "params": dict(self.inst.params),
                "last_rejection": self.last_rejection, "derived": self._derived.get(self.inst.name, {}),
            }
            text = json.dumps(jsonable(info))
        response.success = True
        response.message = text
        return response

    def publish_derived(self, derived: dict[str, Any], stamp: Any) -> TransformStamped | None:
        """Publish the wrenches of this cycle's derived data; returns the contact frame's tf edge, if any."""
        if self._wrench_pub is None or not derived:
            return None
        out = derived_messages(derived, stamp, self._frames)
        if out.wrench_contact is not None:
            self._wrench_pub.publish(out.wrench_contact)
        if out.wrench_base is not None and self._wrench_base_pub is not None:
            self._wrench_base_pub.publish(out.wrench_base)
        return out.transform

    def close(self) -> None:
        """Stop serving: running goals abort with "destroyed", new goals are rejected."""
        if self.goals is not None:
            self.goals.close()

    def destroy_node(self) -> None:
        # Node.destroy_node leaves waitables alone, and the action server keeps the node alive (still in the graph).
        if self.goals is not None:
            self.goals.destroy()
        super().destroy_node()


def _constraints(spec: ParamSpec) -> str:
    """The range or choices as ``ros2 param describe`` shows them (checked by the core on set)."""
    if spec.choices:
        return "one of " + ", ".join(repr(c) for c in spec.choices)
    return f">= {spec.minimum:g}" if spec.minimum is not None else ""


def _describe(spec: ParamSpec) -> str:
    text = f"{spec.doc} [{spec.kind}]"
    if spec.choices:
        text += f" one of {', '.join(spec.choices)}"
    if spec.minimum is not None:
        text += f" >= {spec.minimum:g}"
    return text
