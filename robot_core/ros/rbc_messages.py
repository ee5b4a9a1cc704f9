"""Conversions between the RBC core's plain data and ROS messages, kept free of rclpy so they are unit tested.

The ``rbc`` node (robot_core.nodes.rbc) and its instance nodes (robot_core.nodes.rbc_instance_node) only move
these messages over DDS; every rule about what goes where is here:

* GetVars selections (empty lists mean "all") -> (joint, var) pairs;
* aggregated command inputs (sensor_msgs/JointState by name) -> values;
* per reacher type: which actions it serves (ours, and the RBC documentation's rbc_actions/VF and
  rbc_actions/JointReacher on ``/<name>/action``), goal message -> core goal, core feedback/result -> messages;
* derived data of reachers/extenders (contact pose, wrenches, apply-wrench requests) -> tf / WrenchStamped /
  robot_core_interfaces/srv/ApplyWrench requests.

robot_core_interfaces and rbc_actions are imported lazily (only when a reacher type that needs them is used).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from geometry_msgs.msg import TransformStamped, WrenchStamped
from sensor_msgs.msg import JointState

from robot_core.rbc.reachers.contact_simulation import ContactGoal
from robot_core.rbc.reachers.joint_reacher import JointGoal
from robot_core.rbc.reachers.vector_field import PoseGoal
from robot_core.rbc.rotations import matrix_to_quat_xyzw
from robot_core.rbc.var_table import VarTable
from robot_core.text import clip


class SelectionError(ValueError):
    """A GetVars/SetVars/aggregated-input request that names unknown things or has mismatched lengths."""


# --- vars -----------------------------------------------------------------------------------------------------
def expand_selection(table: VarTable, joints: Sequence[str], vars_: Sequence[str]) -> list[tuple[str, str]]:
    """(joint, var) pairs a GetVars request asks for.

    Both empty: every var of every joint (URDF joint order). Only ``vars``: every joint having each var. Only
    ``joints``: every var of each joint. Both given: pairs ``joints[i]``/``vars[i]``; a single var applies to
    all joints and a single joint to all vars.
    """
    joints, vars_ = list(joints), list(vars_)
    known_vars = table.var_names()
    if not joints and not vars_:
        return [(e.joint, e.name) for e in table.entries()]
    if not joints:
        out: list[tuple[str, str]] = []
        for v in vars_:
            if v not in known_vars:
                raise SelectionError(f"no joint has var '{v}' (vars: {', '.join(known_vars)})")
            out.extend((e.joint, v) for e in table.entries(v))
        return out
    if not vars_:
        out = []
        for j in joints:
            es = [e for e in table.entries() if e.joint == j]
            if not es:
                raise SelectionError(f"joint '{clip(j)}' has no rbc vars (joints: {', '.join(table.joints())})")
            out.extend((j, e.name) for e in es)
        return out
    if len(vars_) == 1 and len(joints) > 1:
        vars_ = vars_ * len(joints)
    elif len(joints) == 1 and len(vars_) > 1:
        joints = joints * len(vars_)
    if len(joints) != len(vars_):
        raise SelectionError(f"{len(joints)} joints but {len(vars_)} vars (give equal lengths, or one of either)")
    return list(zip(joints, vars_, strict=True))


def joint_state_values(msg: JointState, var: str) -> tuple[list[str], list[float]]:
    """Names and values of an aggregated command input (``~/<var>/cmd``).

    The values are taken from the first non-empty array of ``position``, ``velocity``, ``effort`` (the
    ``~/<var>`` outputs carry their values in ``position``, so echoing one back works), one per name.
    """
    names = list(msg.name)
    if not names:
        raise SelectionError(f"'{var}' command: the JointState has no names (joints are matched by name)")
    for field in ("position", "velocity", "effort"):
        values = list(getattr(msg, field))
        if values:
            if len(values) != len(names):
                raise SelectionError(f"'{var}' command: {len(names)} names but {len(values)} {field} values")
            return names, [float(v) for v in values]
    raise SelectionError(f"'{var}' command: position, velocity and effort are all empty")


# --- derived data -----------------------------------------------------------------------------------------------
def transform_from_pose(pose: np.ndarray, parent: str, child: str, stamp: Any) -> TransformStamped:
    """A 4x4 pose of ``child`` in ``parent`` as a tf edge."""
    t = TransformStamped()
    t.header.stamp = stamp
    t.header.frame_id = parent
    t.child_frame_id = child
    p = np.asarray(pose, dtype=float)
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = (float(v) for v in p[:3, 3])
    q = matrix_to_quat_xyzw(p[:3, :3])
    t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z, t.transform.rotation.w = (
        float(v) for v in q)
    return t


def wrench_stamped(wrench: Sequence[float] | np.ndarray, frame_id: str, stamp: Any) -> WrenchStamped:
    """Six numbers (force, torque) as a WrenchStamped in ``frame_id``."""
    w = [float(v) for v in np.asarray(wrench, dtype=float).reshape(-1)]
    if len(w) != 6:
        raise ValueError(f"a wrench needs 6 numbers, got {len(w)}")
    msg = WrenchStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = frame_id
    f, m = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, m.x, m.y, m.z = w
    return msg


@dataclass
class DerivedMessages:
    """What one cycle of a contact instance publishes."""

    transform: TransformStamped | None = None
    wrench_contact: WrenchStamped | None = None  # in the contact frame (RViz draws it at the point)
    wrench_base: WrenchStamped | None = None  # in base_link, torque about the contact point


def derived_messages(derived: dict[str, Any], stamp: Any,
                     frames: Callable[[str], str] = lambda name: name) -> DerivedMessages:
    """tf + wrenches from a ContactSimulation/TouchContact ``derived`` dict (empty when it has no estimate).

    ``frames`` renames the robot's frames (the contact frame and the base link) as the robot's tf does, e.g. a
    :class:`robot_core.physics.frame_prefix.FramePrefix` ``arm1/`` under a namespace."""
    out = DerivedMessages()
    pose, frame, base = derived.get("contact_pose"), derived.get("frame_id"), derived.get("base_link")
    if pose is None or not frame or not base:
        return out
    frame, base = frames(str(frame)), frames(str(base))
    out.transform = transform_from_pose(pose, base, frame, stamp)
    if derived.get("wrench_in_contact_frame") is not None:
        out.wrench_contact = wrench_stamped(derived["wrench_in_contact_frame"], frame, stamp)
    if derived.get("wrench") is not None:
        out.wrench_base = wrench_stamped(derived["wrench"], base, stamp)
    return out


def apply_wrench_request(req: dict[str, Any]) -> Any:
    """ContactSimulation's ``apply_wrench_request`` dict -> robot_core_interfaces/srv/ApplyWrench request."""
    from robot_core_interfaces.srv import ApplyWrench

    r = ApplyWrench.Request()
    r.link_name = str(req["link_name"])
    r.reference_point.x, r.reference_point.y, r.reference_point.z = (float(v) for v in req["reference_point"])
    f, m = r.wrench.force, r.wrench.torque
    f.x, f.y, f.z = (float(v) for v in req["force"])
    m.x, m.y, m.z = (float(v) for v in req["torque"])
    d = float(req.get("duration", 0.0) or 0.0)
    sec = math.floor(d)
    r.duration.sec = int(sec)
    r.duration.nanosec = min(round((d - sec) * 1e9), 999_999_999)
    return r


# --- actions ----------------------------------------------------------------------------------------------------
def _vec3(v: Any) -> list[float]:
    return [float(v.x), float(v.y), float(v.z)]


def joint_goal(msg: Any) -> JointGoal:
    """robot_core_interfaces/action/JointReach goal -> JointGoal (precision/timeout 0 = reacher default)."""
    names, positions = list(msg.joint_names), [float(p) for p in msg.positions]
    if len(names) != len(positions):
        raise SelectionError(f"goal has {len(names)} joint_names but {len(positions)} positions")
    return JointGoal.from_pairs(zip(names, positions, strict=True), float(msg.precision), float(msg.timeout))


def pose_goal(msg: Any) -> PoseGoal:
    """CartesianReach goal -> PoseGoal (pose in the reacher's base_link)."""
    p, o = msg.pose.position, msg.pose.orientation
    return PoseGoal([p.x, p.y, p.z], [o.x, o.y, o.z, o.w], float(msg.linear_precision),
                    float(msg.angular_precision), float(msg.timeout))


def contact_goal(msg: Any) -> ContactGoal:
    """ApplyContact goal -> ContactGoal. An empty ``link_name`` uses the instance's ``link`` and ``point``."""
    link = msg.link_name.strip()
    return ContactGoal(force=_vec3(msg.wrench.force), torque=_vec3(msg.wrench.torque), link=link,
                       point=_vec3(msg.point) if link else None, duration=float(msg.duration))


def _fill(cls: Any, values: dict[str, Any]) -> Any:
    msg = cls()
    fields = cls.get_fields_and_field_types()
    for name, value in values.items():
        if name not in fields or value is None:
            continue
        kind = fields[name]
        if kind.startswith("sequence<double"):
            value = [float(v) for v in value]
        elif kind.startswith("sequence<string"):
            value = [str(v) for v in value]
        elif kind == "double":
            value = float(value)
        setattr(msg, name, value)
    return msg


# --- the RBC documentation's actions (rbc_actions) -------------------------------------------------------------
def _timeout(duration: Any, what: str) -> float:
    """builtin_interfaces/Duration -> seconds; zero means no timeout (``math.inf``), as documented."""
    seconds = float(duration.sec) + 1e-9 * float(duration.nanosec)
    if seconds < 0:
        raise SelectionError(f"{what}: timeout must not be negative, got {seconds:g} s (0 = no timeout)")
    return seconds if seconds > 0 else math.inf


def documented_pose_goal(msg: Any) -> PoseGoal:
    """rbc_actions/VF goal -> PoseGoal: ``precision`` per axis (all zero = the reacher's defaults), zero
    ``timeout`` = none."""
    p, o = msg.goal.position, msg.goal.orientation
    lin, ang = msg.precision.linear, msg.precision.angular
    return PoseGoal([p.x, p.y, p.z], [o.x, o.y, o.z, o.w], timeout=_timeout(msg.timeout, "VF goal"),
                    linear_tolerance=_vec3(lin), angular_tolerance=_vec3(ang))


def documented_joint_goal(msg: Any) -> JointGoal:
    """rbc_actions/JointReacher goal -> JointGoal (zero precision = the reacher's default, zero timeout = none)."""
    return JointGoal.from_pairs(((jv.joint, float(jv.value)) for jv in msg.goal), float(msg.precision),
                                _timeout(msg.timeout, "JointReacher goal"))


def _joint_values(names: Sequence[str] | None, values: Sequence[float] | None) -> list[Any]:
    from rbc_actions.msg import JointValue

    return [JointValue(joint=str(j), value=float(v)) for j, v in zip(names or [], values or [], strict=False)]


def _pose_and_error(msg: Any, data: dict[str, Any]) -> Any:
    """Fill ``pose`` and ``error`` of a VF feedback/result from the core's dict; NaN where it has none."""
    pos = data.get("position") or [math.nan] * 3
    quat = data.get("orientation") or [math.nan] * 4
    err = data.get("error_vector") or [math.nan] * 6
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = (float(v) for v in pos)
    o = msg.pose.orientation
    o.x, o.y, o.z, o.w = (float(v) for v in quat)
    lin, ang = msg.error.linear, msg.error.angular
    lin.x, lin.y, lin.z, ang.x, ang.y, ang.z = (float(v) for v in err)
    return msg


def _vf_feedback(cls: Any, data: dict[str, Any]) -> Any:
    return _pose_and_error(cls(), data)


def _vf_result(cls: Any, data: dict[str, Any]) -> Any:
    return _pose_and_error(cls(), data)


def _jr_feedback(cls: Any, data: dict[str, Any]) -> Any:
    return cls(error=_joint_values(data.get("joint_names"), data.get("error")))


def _jr_result(cls: Any, data: dict[str, Any]) -> Any:
    return cls(error=_joint_values(data.get("joint_names"), data.get("final_error")))


@dataclass(frozen=True)
class ActionSpec:
    """How one reacher type is served as a ROS action (a type may serve several)."""

    module: str  # robot_core_interfaces.action
    type_name: str  # e.g. JointReach
    suffix: str  # action name below the instance node: /<instance>/<suffix>
    to_goal: Callable[[Any], Any]
    # Builders of feedback / result messages from the core's dicts; None: fields filled by name.
    make_feedback: Callable[[Any, dict[str, Any]], Any] | None = None
    make_result: Callable[[Any, dict[str, Any]], Any] | None = None

    def action_type(self) -> Any:
        return getattr(importlib.import_module(self.module), self.type_name)

    def feedback(self, feedback: dict[str, Any]) -> Any:
        cls = self.action_type().Feedback
        return self.make_feedback(cls, feedback) if self.make_feedback else _fill(cls, feedback)

    def result(self, success: bool, message: str, result: dict[str, Any]) -> Any:
        """Result message; numeric fields the core did not report are NaN (never a fake 0 error)."""
        cls = self.action_type().Result
        msg = self.make_result(cls, result) if self.make_result else _fill(cls, result)
        for name, kind in cls.get_fields_and_field_types().items():
            if kind == "double" and result.get(name) is None:
                setattr(msg, name, math.nan)
        msg.success = bool(success)
        msg.message = str(message)
        return msg


ACTIONS: dict[str, tuple[ActionSpec, ...]] = {
    "JR": (ActionSpec("robot_core_interfaces.action", "JointReach", "reach", joint_goal),
           ActionSpec("rbc_actions.action", "JointReacher", "action", documented_joint_goal, _jr_feedback,
                      _jr_result)),
    "VF": (ActionSpec("robot_core_interfaces.action", "CartesianReach", "reach", pose_goal),
           ActionSpec("rbc_actions.action", "VF", "action", documented_pose_goal, _vf_feedback, _vf_result)),
    "CS": (ActionSpec("robot_core_interfaces.action", "ApplyContact", "apply", contact_goal),),
}


def jsonable(value: Any) -> Any:
    """Plain JSON-able copy of core data (numpy arrays and scalars become lists and floats)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value


def actions_for(type_name: str) -> tuple[ActionSpec, ...]:
    """The actions an instance of ``type_name`` (its class's TYPE_NAME) serves; none for goal-less types (TC)."""
    return ACTIONS.get(type_name, ())
