"""ROS-free mirrors of the messages the controller manager node publishes or receives.

The control core produces and consumes these plain dataclasses; the rclpy node
converts them field by field to ``sensor_msgs``, ``control_msgs`` and
``controller_manager_msgs`` messages. Field names follow the ROS messages so the
conversion is mechanical. Arrays are numpy float64 arrays or lists of floats.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from robot_core.control.lifecycle import State


@dataclass
class JointStateData:
    """sensor_msgs/JointState without the header (``stamp`` is seconds)."""

    name: list[str]
    position: np.ndarray | list[float] = field(default_factory=list)
    velocity: np.ndarray | list[float] = field(default_factory=list)
    effort: np.ndarray | list[float] = field(default_factory=list)
    stamp: float = 0.0


@dataclass
class InterfaceValueData:
    """control_msgs/InterfaceValue."""

    interface_names: list[str]
    values: list[float]


@dataclass
class DynamicJointStateData:
    """control_msgs/DynamicJointState (``stamp`` is seconds)."""

    joint_names: list[str]
    interface_values: list[InterfaceValueData]
    stamp: float = 0.0


@dataclass
class SingleDofStateData:
    """control_msgs/SingleDOFState."""

    name: str
    reference: float
    feedback: float
    feedback_dot: float
    error: float
    error_dot: float
    time_step: float
    output: float


@dataclass
class MultiDofStateData:
    """control_msgs/MultiDOFStateStamped (``stamp`` is seconds)."""

    dof_states: list[SingleDofStateData]
    stamp: float = 0.0


@dataclass
class ChainConnectionData:
    name: str
    reference_interfaces: list[str] = field(default_factory=list)


@dataclass
class ControllerStateData:
    """controller_manager_msgs/ControllerState."""

    name: str
    state: State
    type: str
    is_async: bool = False
    update_rate: int = 0
    claimed_interfaces: list[str] = field(default_factory=list)
    required_command_interfaces: list[str] = field(default_factory=list)
    required_state_interfaces: list[str] = field(default_factory=list)
    is_chainable: bool = False
    is_chained: bool = False
    exported_state_interfaces: list[str] = field(default_factory=list)
    reference_interfaces: list[str] = field(default_factory=list)
    chain_connections: list[ChainConnectionData] = field(default_factory=list)


@dataclass
class HardwareInterfaceData:
    """controller_manager_msgs/HardwareInterface."""

    name: str
    data_type: str = "double"
    is_available: bool = False
    is_claimed: bool = False


@dataclass
class HardwareComponentStateData:
    """controller_manager_msgs/HardwareComponentState plus robot_core's failure flag.

    ``failed``/``failure_reason`` have no field in the ROS message; the node
    logs them (the lifecycle ``state`` stays the component's primary state).
    """

    name: str
    type: str
    plugin_name: str
    state: State
    is_async: bool = False
    rw_rate: int = 0
    command_interfaces: list[HardwareInterfaceData] = field(default_factory=list)
    state_interfaces: list[HardwareInterfaceData] = field(default_factory=list)
    failed: bool = False
    failure_reason: str = ""


@dataclass
class ActivityData:
    """controller_manager_msgs/ControllerManagerActivity: (name, state) pairs."""

    controllers: list[tuple[str, State]]
    hardware_components: list[tuple[str, State]]
    stamp: float = 0.0


@dataclass
class WrenchData:
    """geometry_msgs/WrenchStamped: force and torque (x, y, z each) in ``frame_id``."""

    frame_id: str
    force: list[float]
    torque: list[float]
    stamp: float = 0.0


@dataclass
class ImuData:
    """sensor_msgs/Imu: orientation (x, y, z, w), rates, accelerations and their 3x3 covariances (row-major)."""

    frame_id: str
    orientation: list[float]
    angular_velocity: list[float]
    linear_acceleration: list[float]
    orientation_covariance: list[float]
    angular_velocity_covariance: list[float]
    linear_acceleration_covariance: list[float]
    stamp: float = 0.0


@dataclass
class RangeData:
    """sensor_msgs/Range."""

    frame_id: str
    radiation_type: int
    field_of_view: float
    min_range: float
    max_range: float
    range: float
    variance: float
    stamp: float = 0.0


@dataclass
class PoseData:
    """geometry_msgs/PoseStamped: position (x, y, z) and orientation (x, y, z, w) in ``frame_id``;
    ``child_frame_id`` names the frame when the pose also goes out as a transform."""

    frame_id: str
    position: list[float]
    orientation: list[float]
    child_frame_id: str = ""
    stamp: float = 0.0
