"""Plain-data robot description shared by every layer of robot_core.

A RobotModel is what a URDF, a xacro or a rai ``.g`` file turns into. It holds
no ROS and no physics objects, so the simulator, the controllers, the Robot
Body Coupler and the kinematics library can all be built from the same value,
and writers can turn it back into any of the supported formats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
# Joints with one scalar coordinate (position, velocity, effort).
SCALAR_JOINT_TYPES = ("revolute", "continuous", "prismatic")


@dataclass
class SourceRef:
    """Where an element came from, so errors can name file, line and element."""

    file: str = "<string>"
    line: int | None = None
    element: str = ""

    def __str__(self) -> str:
        loc = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{loc}: {self.element}" if self.element else loc


class RobotModelError(ValueError):
    """A robot description that cannot be used; the message names where."""

    def __init__(self, message: str, source: SourceRef | None = None):
        self.source = source
        super().__init__(f"{source}: {message}" if source else message)


class RobotModelWarning(UserWarning):
    """A physically suspicious but loadable value (e.g. a tiny mass)."""


def rpy_to_matrix(rpy: np.ndarray) -> np.ndarray:
    """URDF fixed-axis roll-pitch-yaw (R = Rz(y) Ry(p) Rx(r)) to a rotation matrix."""
    r, p, y = (float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def matrix_to_rpy(rot: np.ndarray) -> np.ndarray:
    """Inverse of :func:`rpy_to_matrix`, accurate to rounding also close to pitch = +-pi/2.

    (asin of one entry loses half the digits near the poles; atan2 of the column norm does not.)
    """
    r = np.asarray(rot, dtype=float)
    cp = math.hypot(r[0, 0], r[1, 0])
    pitch = math.atan2(-r[2, 0], cp)
    if cp < 1e-15:  # gimbal lock: roll and yaw turn about the same axis; put it all into yaw
        return np.array([0.0, pitch, math.atan2(-r[0, 1], r[1, 1])])
    return np.array([math.atan2(r[2, 1], r[2, 2]), pitch, math.atan2(r[1, 0], r[0, 0])])


@dataclass
class Pose:
    """A URDF ``<origin xyz rpy>``: translation then fixed-axis rpy rotation."""

    xyz: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rpy: np.ndarray = field(default_factory=lambda: np.zeros(3))

    def matrix(self) -> np.ndarray:
        m = np.eye(4)
        m[:3, :3] = rpy_to_matrix(self.rpy)
        m[:3, 3] = self.xyz
        return m

    @staticmethod
    def from_matrix(m: np.ndarray) -> Pose:
        return Pose(np.array(m[:3, 3], dtype=float), matrix_to_rpy(m[:3, :3]))

    def is_identity(self, tol: float = 0.0) -> bool:
        return bool(np.all(np.abs(self.xyz) <= tol) and np.all(np.abs(self.rpy) <= tol))


@dataclass
class Inertial:
    """Mass properties in the link frame; ``inertia`` is the full symmetric 3x3 about the COM."""

    mass: float = 0.0
    origin: Pose = field(default_factory=Pose)
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))
    source: SourceRef = field(default_factory=SourceRef)

    @staticmethod
    def inertia_matrix(ixx: float, ixy: float, ixz: float, iyy: float, iyz: float, izz: float) -> np.ndarray:
        return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)


@dataclass
class Geometry:
    """One shape. ``kind`` is box, cylinder, sphere, capsule or mesh.

    box: ``size`` (3,) full edge lengths; cylinder/capsule: ``radius``, ``length``;
    sphere: ``radius``; mesh: ``filename`` (as written) and ``scale`` (3,), with
    ``resolved_filename`` the absolute path when it could be resolved.
    """

    kind: str
    size: np.ndarray | None = None
    radius: float = 0.0
    length: float = 0.0
    filename: str = ""
    resolved_filename: str | None = None
    scale: np.ndarray = field(default_factory=lambda: np.ones(3))


@dataclass
class Material:
    name: str = ""
    rgba: np.ndarray | None = None
    texture: str = ""


@dataclass
class Visual:
    geometry: Geometry
    name: str = ""
    origin: Pose = field(default_factory=Pose)
    material: Material | None = None


@dataclass
class Collision:
    geometry: Geometry
    name: str = ""
    origin: Pose = field(default_factory=Pose)


@dataclass
class Link:
    name: str
    inertial: Inertial | None = None
    visuals: list[Visual] = field(default_factory=list)
    collisions: list[Collision] = field(default_factory=list)
    source: SourceRef = field(default_factory=SourceRef)


@dataclass
class Limit:
    """URDF ``<limit>``; lower/upper are None for continuous joints or when absent."""

    lower: float | None = None
    upper: float | None = None
    effort: float = 0.0
    velocity: float = 0.0


@dataclass
class Dynamics:
    damping: float = 0.0
    friction: float = 0.0


@dataclass
class Mimic:
    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass
class SafetyController:
    soft_lower_limit: float = 0.0
    soft_upper_limit: float = 0.0
    k_position: float = 0.0
    k_velocity: float = 0.0


@dataclass
class Calibration:
    rising: float | None = None
    falling: float | None = None
    reference_position: float | None = None


@dataclass
class RbcMsg:
    """``<msg type field field_array index index_type>`` of an ``<rbc>`` var."""

    type: str  # as written: pkg.msg.Type or pkg/msg/Type
    field: str  # dotted path into the message, e.g. "pose.position.x"
    field_array: bool = False
    index: int = 0
    index_type: str = "float"


@dataclass
class RbcVar:
    name: str
    topic: str
    type: str  # "state" or "cmd"
    msg: RbcMsg
    init: float = 0.0
    source: SourceRef = field(default_factory=SourceRef)


@dataclass
class RbcNode:
    """One ``<rbc node=...>`` block inside a joint: the driver and its vars."""

    node: str
    joint: str
    vars: list[RbcVar] = field(default_factory=list)
    source: SourceRef = field(default_factory=SourceRef)


@dataclass
class Joint:
    name: str
    type: str
    parent: str
    child: str
    origin: Pose = field(default_factory=Pose)
    axis: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    limit: Limit | None = None
    dynamics: Dynamics | None = None
    mimic: Mimic | None = None
    safety_controller: SafetyController | None = None
    calibration: Calibration | None = None
    # Initial position: from a .g file's q:, or a <ros2_control> initial_value.
    initial_position: float | None = None
    rbc: list[RbcNode] = field(default_factory=list)
    source: SourceRef = field(default_factory=SourceRef)

    @property
    def is_movable(self) -> bool:
        return self.type != "fixed"

    @property
    def is_scalar(self) -> bool:
        """True for joints with one coordinate (revolute, continuous, prismatic)."""
        return self.type in SCALAR_JOINT_TYPES

    @property
    def is_actuated(self) -> bool:
        """A scalar joint that is not a mimic (mimic joints follow another joint)."""
        return self.is_scalar and self.mimic is None


@dataclass
class TransmissionJoint:
    """A joint of a transmission; ``offset`` comes from the ``<ros2_control>`` form only. ``role`` is ros2_control's
    (``joint1``) or the PR2 element's (``flex``, ``roll``, ``gap``, ``passive``); ``mechanical_reduction`` is the
    joint-side reduction of a differential or PR2 wrist."""

    name: str
    hardware_interfaces: list[str] = field(default_factory=list)
    offset: float = 0.0
    role: str = ""
    mechanical_reduction: float = 1.0


@dataclass
class TransmissionActuator:
    name: str
    mechanical_reduction: float = 1.0
    hardware_interfaces: list[str] = field(default_factory=list)
    role: str = ""


@dataclass
class Transmission:
    """A ``<transmission>``: the ROS 1 form at the top of the URDF, or ros2_control's form inside a
    ``<ros2_control>`` block (then ``ros2_control`` names that block). Either way the reduction that applies is
    ``actuators[0].mechanical_reduction``."""

    name: str
    type: str = "transmission_interface/SimpleTransmission"
    joints: list[TransmissionJoint] = field(default_factory=list)
    actuators: list[TransmissionActuator] = field(default_factory=list)
    source: SourceRef = field(default_factory=SourceRef)
    ros2_control: str = ""
    # type-specific attributes: the PR2 gripper's linkage geometry (its <gap_joint>'s a, b, r, L0, ...)
    params: dict[str, str] = field(default_factory=dict)


@dataclass
class Ros2ControlInterface:
    """A ``<command_interface>`` or ``<state_interface>`` with its params."""

    name: str
    params: dict[str, str] = field(default_factory=dict)
    min: float | None = None
    max: float | None = None
    initial_value: float | None = None
    data_type: str = "double"


@dataclass
class Ros2ControlJoint:
    name: str
    command_interfaces: list[Ros2ControlInterface] = field(default_factory=list)
    state_interfaces: list[Ros2ControlInterface] = field(default_factory=list)
    params: dict[str, str] = field(default_factory=dict)


@dataclass
class Ros2ControlSensor:
    """A ``<sensor>`` or ``<gpio>``; only gpios use ``command_interfaces``."""

    name: str
    state_interfaces: list[Ros2ControlInterface] = field(default_factory=list)
    params: dict[str, str] = field(default_factory=dict)
    command_interfaces: list[Ros2ControlInterface] = field(default_factory=list)
    source: SourceRef = field(default_factory=SourceRef)


@dataclass
class Ros2Control:
    """One ``<ros2_control name type>`` block: a hardware component."""

    name: str
    type: str = "system"
    plugin: str = ""
    hardware_params: dict[str, str] = field(default_factory=dict)
    joints: list[Ros2ControlJoint] = field(default_factory=list)
    sensors: list[Ros2ControlSensor] = field(default_factory=list)
    gpios: list[Ros2ControlSensor] = field(default_factory=list)
    source: SourceRef = field(default_factory=SourceRef)


@dataclass
class MjcfServo:
    """What one MJCF actuator offers its joint, in joint units (gear folded in; see doc/mjcf.md).

    ``interface`` is the ros2_control command interface (position, velocity or effort); the gains are those of
    the actuator (None where it has none): the simulator's servo of that joint uses them.
    """

    joint: str
    actuator: str
    interface: str
    kp: float | None = None
    kd: float | None = None
    kv: float | None = None


@dataclass
class MjcfSource:
    """The MJCF a model was read from, so the simulator can use the file as written (doc/mjcf.md).

    ``path`` or ``text`` (+ ``base_dir`` for its relative asset paths); ``link_bodies`` maps each link to the
    MuJoCo body it rides on and ``link_offsets`` (4x4, row-major lists) places the link frame in that body's
    frame (non-identity where the joint's anchor is off the body origin); ``split_bodies`` names the bodies
    with several joints and the joints (all but the last) that the simulator moves into bodies of their own,
    named like the intermediate links ``<body>:<joint>``; ``world_bodies`` are the bodies that are not part of
    the robot; ``ball_joints`` are the robot's ball joints, each three hinges ``<ball>:x|y|z``
    (:mod:`robot_core.model.mjcf_ball`), with the cone's half-angle in the file's angle unit (None: unlimited);
    ``not_carried`` lists what a URDF of the robot cannot say.
    """

    path: str | None = None
    text: str | None = None
    base_dir: str | None = None
    link_bodies: dict[str, str] = field(default_factory=dict)
    link_offsets: dict[str, list[list[float]]] = field(default_factory=dict)
    split_bodies: dict[str, list[str]] = field(default_factory=dict)
    world_bodies: list[str] = field(default_factory=list)
    ball_joints: dict[str, float | None] = field(default_factory=dict)
    servos: dict[str, MjcfServo] = field(default_factory=dict)
    not_carried: list[str] = field(default_factory=list)
    timestep: float | None = None  # <option timestep> when the file sets it


@dataclass
class RobotModel:
    """The whole robot: a tree of links connected by joints, plus extras.

    ``links`` and ``joints`` keep document order (dicts are ordered), which is
    the order users expect for joint lists ("URDF order").
    """

    name: str
    links: dict[str, Link] = field(default_factory=dict)
    joints: dict[str, Joint] = field(default_factory=dict)
    materials: dict[str, Material] = field(default_factory=dict)
    transmissions: list[Transmission] = field(default_factory=list)
    ros2_control: list[Ros2Control] = field(default_factory=list)
    # True: the root link is welded to the world; False: it floats (free joint).
    fixed_base: bool = True
    source_file: str = "<string>"
    # The original XML text, when the model was read from URDF/xacro.
    urdf_xml: str | None = None
    # The MJCF source, when the model was read from MJCF (the simulator then uses that file as written).
    mjcf: MjcfSource | None = None
    # A robot group's MJCF robots (model/robot_group.py), by prefix ("arm1/"): their links and joints are in this
    # model under the prefix, and the simulator attaches each one's file as written below its root link.
    mjcf_members: dict[str, RobotModel] = field(default_factory=dict)
    # Gazebo <sensor>s: model/sensors.py SensorSpec (not imported here: sensors.py builds on this module).
    sensors: list = field(default_factory=list)

    # --- tree queries -----------------------------------------------------
    @property
    def root_link(self) -> str:
        children = {j.child for j in self.joints.values()}
        roots = [name for name in self.links if name not in children]
        if len(roots) != 1:
            raise RobotModelError(f"robot '{self.name}' must have exactly one root link, found {roots}",
                                  SourceRef(self.source_file))
        return roots[0]

    def parent_joint(self, link: str) -> Joint | None:
        for j in self.joints.values():
            if j.child == link:
                return j
        return None

    def child_joints(self, link: str) -> list[Joint]:
        return [j for j in self.joints.values() if j.parent == link]

    def leaf_links(self) -> list[str]:
        parents = {j.parent for j in self.joints.values()}
        return [name for name in self.links if name not in parents]

    def chain(self, base_link: str, tip_link: str) -> list[Joint]:
        """Joints (all types, fixed included) from base_link down to tip_link.

        Raises RobotModelError if tip_link is not below base_link.
        """
        for name in (base_link, tip_link):
            if name not in self.links:
                raise RobotModelError(f"unknown link '{name}' in robot '{self.name}'", SourceRef(self.source_file))
        out: list[Joint] = []
        link = tip_link
        while link != base_link:
            j = self.parent_joint(link)
            if j is None:
                raise RobotModelError(
                    f"link '{tip_link}' is not a descendant of '{base_link}' in robot '{self.name}'",
                    SourceRef(self.source_file),
                )
            out.append(j)
            link = j.parent
        out.reverse()
        return out

    def movable_joints(self) -> list[Joint]:
        """Non-fixed joints in document order."""
        return [j for j in self.joints.values() if j.is_movable]

    def scalar_joint_names(self) -> list[str]:
        """Names of revolute/continuous/prismatic joints (mimic included), document order."""
        return [j.name for j in self.joints.values() if j.is_scalar]

    def actuated_joint_names(self) -> list[str]:
        """Scalar joints that are not mimics: the robot's independent DOFs."""
        return [j.name for j in self.joints.values() if j.is_actuated]

    def total_mass(self) -> float:
        return float(sum(link.inertial.mass for link in self.links.values() if link.inertial))

    def rbc_nodes(self) -> list[RbcNode]:
        return [n for j in self.joints.values() for n in j.rbc]
