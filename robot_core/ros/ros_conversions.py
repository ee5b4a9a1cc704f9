"""Field-by-field conversion between the control core's plain dataclasses and ROS messages.

Kept in one place so the node and every controller adapter convert the same way. Float arrays go
through ``array.array('d')``: the generated message setters accept it without checking every element,
which keeps a 1 kHz publisher cheap.
"""

from __future__ import annotations

import array
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from robot_core.control.lifecycle import State
from robot_core.control.messages import (
    ActivityData,
    ControllerStateData,
    DynamicJointStateData,
    HardwareComponentStateData,
    HardwareInterfaceData,
    ImuData,
    JointStateData,
    MultiDofStateData,
    PoseData,
    RangeData,
    WrenchData,
)


def float_array(values: Sequence[float] | np.ndarray | None) -> array.array:
    """A float64 array.array from a numpy array or a sequence (empty for None)."""
    if values is None:
        return array.array("d")
    if isinstance(values, np.ndarray):
        out = array.array("d")
        out.frombytes(np.ascontiguousarray(values, dtype=np.float64).tobytes())
        return out
    return array.array("d", values)


def stamp_parts(seconds: float) -> tuple[int, int]:
    """(sec, nanosec) of a stamp; non-finite or negative times become 0."""
    if not math.isfinite(seconds) or seconds < 0.0:
        seconds = 0.0
    sec = int(seconds)
    nanosec = round((seconds - sec) * 1e9)
    if nanosec >= 1_000_000_000:
        sec, nanosec = sec + 1, nanosec - 1_000_000_000
    return sec, nanosec


def to_time(seconds: float) -> Any:
    from builtin_interfaces.msg import Time

    sec, nanosec = stamp_parts(seconds)
    return Time(sec=sec, nanosec=nanosec)


def to_duration(seconds: float) -> Any:
    from builtin_interfaces.msg import Duration

    total = round(seconds * 1e9)
    sec, nanosec = divmod(total, 1_000_000_000)
    return Duration(sec=sec, nanosec=nanosec)


def time_to_seconds(stamp: Any) -> float:
    """builtin_interfaces Time or Duration -> seconds."""
    return float(stamp.sec) + float(stamp.nanosec) * 1e-9


def lifecycle_state(state: State) -> Any:
    from lifecycle_msgs.msg import State as StateMsg

    return StateMsg(id=state.id, label=state.label)


def joint_state(data: JointStateData, frame_id: str = "") -> Any:
    from sensor_msgs.msg import JointState

    msg = JointState()
    msg.header.stamp = to_time(data.stamp)
    msg.header.frame_id = frame_id
    msg.name = list(data.name)
    msg.position = float_array(data.position)
    msg.velocity = float_array(data.velocity)
    msg.effort = float_array(data.effort)
    return msg


def dynamic_joint_state(data: DynamicJointStateData) -> Any:
    from control_msgs.msg import DynamicJointState, InterfaceValue

    msg = DynamicJointState()
    msg.header.stamp = to_time(data.stamp)
    msg.joint_names = list(data.joint_names)
    msg.interface_values = [InterfaceValue(interface_names=list(v.interface_names), values=float_array(v.values))
                            for v in data.interface_values]
    return msg


def multi_dof_state(data: MultiDofStateData) -> Any:
    from control_msgs.msg import MultiDOFStateStamped, SingleDOFState

    msg = MultiDOFStateStamped()
    msg.header.stamp = to_time(data.stamp)
    msg.dof_states = [SingleDOFState(name=d.name, reference=float(d.reference), feedback=float(d.feedback),
                                     feedback_dot=float(d.feedback_dot), error=float(d.error),
                                     error_dot=float(d.error_dot), time_step=float(d.time_step),
                                     output=float(d.output)) for d in data.dof_states]
    return msg


def controller_state(data: ControllerStateData) -> Any:
    from controller_manager_msgs.msg import ChainConnection, ControllerState

    return ControllerState(
        name=data.name, state=data.state.label, type=data.type, is_async=bool(data.is_async),
        update_rate=max(0, min(65535, int(data.update_rate))),
        claimed_interfaces=list(data.claimed_interfaces),
        required_command_interfaces=list(data.required_command_interfaces),
        required_state_interfaces=list(data.required_state_interfaces),
        is_chainable=bool(data.is_chainable), is_chained=bool(data.is_chained),
        exported_state_interfaces=list(data.exported_state_interfaces),
        reference_interfaces=list(data.reference_interfaces),
        chain_connections=[ChainConnection(name=c.name, reference_interfaces=list(c.reference_interfaces))
                           for c in data.chain_connections])


def hardware_interface(data: HardwareInterfaceData) -> Any:
    from controller_manager_msgs.msg import HardwareInterface

    return HardwareInterface(name=data.name, data_type=data.data_type, is_available=bool(data.is_available),
                             is_claimed=bool(data.is_claimed))


def hardware_component_state(data: HardwareComponentStateData) -> Any:
    from controller_manager_msgs.msg import HardwareComponentState

    return HardwareComponentState(
        name=data.name, type=data.type, is_async=bool(data.is_async),
        rw_rate=max(0, min(65535, int(data.rw_rate))), plugin_name=data.plugin_name,
        state=lifecycle_state(data.state),
        command_interfaces=[hardware_interface(i) for i in data.command_interfaces],
        state_interfaces=[hardware_interface(i) for i in data.state_interfaces])


def activity(data: ActivityData) -> Any:
    from controller_manager_msgs.msg import ControllerManagerActivity, NamedLifecycleState

    msg = ControllerManagerActivity()
    msg.header.stamp = to_time(data.stamp)
    msg.controllers = [NamedLifecycleState(name=n, state=lifecycle_state(s)) for n, s in data.controllers]
    msg.hardware_components = [NamedLifecycleState(name=n, state=lifecycle_state(s))
                               for n, s in data.hardware_components]
    return msg


def _xyz(target: Any, values: Sequence[float]) -> None:
    target.x, target.y, target.z = (float(v) for v in values[:3])


def _xyzw(target: Any, values: Sequence[float]) -> None:
    target.x, target.y, target.z, target.w = (float(v) for v in values[:4])


def wrench_stamped(data: WrenchData) -> Any:
    from geometry_msgs.msg import WrenchStamped

    msg = WrenchStamped()
    msg.header.stamp = to_time(data.stamp)
    msg.header.frame_id = data.frame_id
    _xyz(msg.wrench.force, data.force)
    _xyz(msg.wrench.torque, data.torque)
    return msg


def imu(data: ImuData) -> Any:
    from sensor_msgs.msg import Imu

    msg = Imu()
    msg.header.stamp = to_time(data.stamp)
    msg.header.frame_id = data.frame_id
    _xyzw(msg.orientation, data.orientation)
    _xyz(msg.angular_velocity, data.angular_velocity)
    _xyz(msg.linear_acceleration, data.linear_acceleration)
    msg.orientation_covariance = float_array(data.orientation_covariance)
    msg.angular_velocity_covariance = float_array(data.angular_velocity_covariance)
    msg.linear_acceleration_covariance = float_array(data.linear_acceleration_covariance)
    return msg


def range_msg(data: RangeData) -> Any:
    from sensor_msgs.msg import Range

    msg = Range()
    msg.header.stamp = to_time(data.stamp)
    msg.header.frame_id = data.frame_id
    msg.radiation_type = int(data.radiation_type)
    msg.field_of_view = float(data.field_of_view)
    msg.min_range = float(data.min_range)
    msg.max_range = float(data.max_range)
    msg.range = float(data.range)
    if hasattr(msg, "variance"):  # sensor_msgs of Jazzy and later
        msg.variance = float(data.variance)
    return msg


def pose_stamped(data: PoseData) -> Any:
    from geometry_msgs.msg import PoseStamped

    msg = PoseStamped()
    msg.header.stamp = to_time(data.stamp)
    msg.header.frame_id = data.frame_id
    _xyz(msg.pose.position, data.position)
    _xyzw(msg.pose.orientation, data.orientation)
    return msg


def pose_transform(data: PoseData) -> Any:
    """A TFMessage with the pose as the transform frame_id -> child_frame_id."""
    from geometry_msgs.msg import TransformStamped
    from tf2_msgs.msg import TFMessage

    tf = TransformStamped()
    tf.header.stamp = to_time(data.stamp)
    tf.header.frame_id = data.frame_id
    tf.child_frame_id = data.child_frame_id
    _xyz(tf.transform.translation, data.position)
    _xyzw(tf.transform.rotation, data.orientation)
    return TFMessage(transforms=[tf])
