"""Serialized messages for the streams robot_core publishes at control rates, built once per layout.

Building a ROS message in Python and converting it for the middleware costs ~20 us for a 7-joint JointState and
several times that for a trajectory controller's state; at 1 kHz that is a good part of a core, taken from the
control loop's process. These streams keep their shape (same joints, same fields) and change only numbers, so a
:class:`MessageTemplates` serializes one message per *layout* with sentinel numbers
(:mod:`robot_core.ros.serialized_template`) and afterwards only writes numbers into a copy of those bytes,
which ``Publisher.publish`` accepts as they are.

A layout is whatever decides the shape: names, array lengths, anything not patched. Everything patched is a
numeric group (float64, or int32/uint32 for durations) or the stamp(s); every stamp of a message gets the same
time.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from robot_core.ros.ros_conversions import stamp_parts
from robot_core.ros.serialized_template import SerializedTemplate, sentinels

# build(layout, groups) -> (message holding the groups' values, the Time objects inside it to stamp)
Builder = Callable[[Any, dict[str, np.ndarray]], tuple[Any, list[Any]]]


def stamped_template(msg: Any, stamps: list[Any], groups: dict[str, np.ndarray], salt: int) -> SerializedTemplate:
    """Serialize ``msg`` whose ``stamps`` (Time objects inside it) and numeric ``groups`` already hold
    sentinels, and locate them: stamps become the groups "sec" and "nanosec"."""
    from rclpy.serialization import serialize_message

    sec = sentinels(len(stamps), "int32", salt=salt + 1)
    nanosec = sentinels(len(stamps), "uint32", salt=salt + 2)
    for st, s_, n_ in zip(stamps, sec.tolist(), nanosec.tolist(), strict=True):
        st.sec, st.nanosec = s_, n_
    tpl = SerializedTemplate(serialize_message(msg))
    tpl.add_field("sec", sec)
    tpl.add_field("nanosec", nanosec)
    for name, values in groups.items():
        tpl.add_field(name, values)
    tpl.set("sec", 0)
    tpl.set("nanosec", 0)
    return tpl


def bytes_publisher(publisher: Any) -> Callable[[bytes], None]:
    """``publisher.publish`` for serialized bytes without rclpy's per-call type tests: ~4 us instead of ~6 on the
    2-vCPU VM, which the simulator pays for /clock at every step. Falls back to ``publish`` where the handle has
    no ``publish_raw``."""
    handle = getattr(publisher, "handle", None)
    raw = getattr(handle, "publish_raw", None)
    if raw is None:
        return publisher.publish

    def publish(data: bytes) -> None:
        with handle:  # as Publisher.publish: the node cannot destroy it meanwhile
            raw(data)

    return publish


def retrying(build: Callable[[int], SerializedTemplate]) -> SerializedTemplate:
    """A sentinel may, very rarely, also occur elsewhere in the bytes: then try other sentinels."""
    for attempt in range(8):
        try:
            return build(100 * attempt)
        except ValueError:
            if attempt == 7:
                raise
    raise AssertionError("unreachable")


class MessageTemplates:
    """Serialized bytes of messages of a few fixed layouts; ``bytes(layout, groups, stamp)`` per message."""

    def __init__(self, build: Builder, max_layouts: int = 32):
        self._build = build
        self._max = max_layouts
        self._cache: dict[Hashable, SerializedTemplate] = {}

    def _make(self, layout: Hashable, sizes: dict[str, tuple[int, np.dtype]]) -> SerializedTemplate:
        def attempt(salt: int) -> SerializedTemplate:
            groups = {name: sentinels(n, dtype, salt=salt + 3 + k)
                      for k, (name, (n, dtype)) in enumerate(sizes.items())}
            msg, stamps = self._build(layout, groups)
            return stamped_template(msg, stamps, groups, salt)

        if len(self._cache) >= self._max:  # layouts come and go (controllers switched): keep the cache bounded
            self._cache.clear()
        tpl = self._cache[layout] = retrying(attempt)
        return tpl

    def bytes(self, layout: Hashable, groups: dict[str, np.ndarray], stamp: float) -> bytes:
        """``layout`` must determine the size of every group (include the lengths in it); each group keeps the
        dtype of its first message."""
        tpl = self._cache.get(layout)
        if tpl is None:
            tpl = self._make(layout, {name: (len(v), v.dtype) for name, v in groups.items()})
        sec, nanosec = stamp_parts(stamp)
        tpl.set("sec", sec)
        tpl.set("nanosec", nanosec)
        for name, values in groups.items():
            tpl.set(name, values)
        return tpl.tobytes()


_FIELDS = ("position", "velocity", "effort")


def _joint_state(layout: Any, groups: dict[str, np.ndarray]) -> tuple[Any, list[Any]]:
    from sensor_msgs.msg import JointState

    msg = JointState(name=list(layout[0]), position=groups["position"].tolist(),
                     velocity=groups["velocity"].tolist(), effort=groups["effort"].tolist())
    return msg, [msg.header.stamp]


class JointStateBytes:
    """sensor_msgs/JointState bytes from JointStateData (robot_core.control.messages), as conv.joint_state."""

    def __init__(self) -> None:
        self._templates = MessageTemplates(_joint_state)

    def __call__(self, data: Any) -> bytes:
        groups = {f: np.asarray(getattr(data, f), dtype=float).reshape(-1) for f in _FIELDS}
        layout = (tuple(data.name), *(len(groups[f]) for f in _FIELDS))
        return self._templates.bytes(layout, groups, data.stamp)


def _dynamic_joint_state(layout: Any, groups: dict[str, np.ndarray]) -> tuple[Any, list[Any]]:
    from control_msgs.msg import DynamicJointState, InterfaceValue

    joints, ifaces = layout
    values = groups["values"].tolist()
    out, k = [], 0
    for names in ifaces:
        out.append(InterfaceValue(interface_names=list(names), values=values[k:k + len(names)]))
        k += len(names)
    msg = DynamicJointState(joint_names=list(joints), interface_values=out)
    return msg, [msg.header.stamp]


class DynamicJointStateBytes:
    """control_msgs/DynamicJointState bytes from DynamicJointStateData, as conv.dynamic_joint_state."""

    def __init__(self) -> None:
        self._templates = MessageTemplates(_dynamic_joint_state)

    def __call__(self, data: Any) -> bytes:
        ifaces = tuple(tuple(v.interface_names) for v in data.interface_values)
        values = np.array([x for v in data.interface_values for x in v.values], dtype=float)
        return self._templates.bytes((tuple(data.joint_names), ifaces), {"values": values}, data.stamp)


_POINTS = ("reference", "feedback", "error", "output")
_POINT_FIELDS = ("positions", "velocities", "accelerations", "effort")


def _jtc_state(layout: Any, groups: dict[str, np.ndarray]) -> tuple[Any, list[Any]]:
    from builtin_interfaces.msg import Duration
    from control_msgs.msg import JointTrajectoryControllerState
    from trajectory_msgs.msg import JointTrajectoryPoint

    msg = JointTrajectoryControllerState(joint_names=list(layout[0]))
    secs, nanosecs = groups["tfs_sec"].tolist(), groups["tfs_nanosec"].tolist()
    for k, point in enumerate(_POINTS):
        p = JointTrajectoryPoint(time_from_start=Duration(sec=secs[k], nanosec=nanosecs[k]))
        for f in _POINT_FIELDS:
            setattr(p, f, groups[f"{point}.{f}"].tolist())
        setattr(msg, point, p)
    msg.speed_scaling_factor = float(groups["speed_scaling_factor"][0])
    return msg, [msg.header.stamp]


class JtcStateBytes:
    """control_msgs/JointTrajectoryControllerState bytes from JtcStateData, as the JTC adapter's ``state_msg``
    (about six times cheaper: the trajectory controller's state is the costliest stream at 1 kHz)."""

    def __init__(self) -> None:
        self._templates = MessageTemplates(_jtc_state)

    def __call__(self, data: Any) -> bytes:
        groups: dict[str, np.ndarray] = {}
        secs, nanosecs = [], []
        for point in _POINTS:
            p = getattr(data, point)
            for f in _POINT_FIELDS:
                groups[f"{point}.{f}"] = np.asarray(getattr(p, f), dtype=float).reshape(-1)
            sec, nanosec = divmod(round(p.time_from_start * 1e9), 1_000_000_000)  # as ros_conversions.to_duration
            secs.append(sec)
            nanosecs.append(nanosec)
        groups["speed_scaling_factor"] = np.array([data.speed_scaling_factor], dtype=float)
        groups["tfs_sec"] = np.array(secs, dtype=np.int32)
        groups["tfs_nanosec"] = np.array(nanosecs, dtype=np.uint32)
        layout = (tuple(data.joint_names), *(len(v) for v in groups.values()))
        return self._templates.bytes(layout, groups, data.stamp)
