"""Several robots as one model, so one MuJoCo world holds them all (they touch each other and share objects).

Each member keeps its own names under a prefix ``<namespace>/`` -- links, joints, ros2_control blocks,
transmissions, Gazebo sensors (cameras and lasers, their frames and topics) -- and hangs from one common root link
(the world frame) by a fixed joint at its base pose. The prefixed link names are at the same time the robot's tf
frames under the frame prefix of its namespace (``arm1/base_link``), so the merged tree is the tf tree the robots
would publish apart. Plain data; the simulator node splits the joint states and commands back per member (its topic
pair) with :attr:`RobotGroup.members`.

The members come from a robots file (YAML)::

    robots:
      - namespace: arm1
        description: urdf/rc_arm.urdf        # relative paths: to the robots file
        base_pose: [0.0, -0.5, 0.0, 0, 0, 0]   # x y z roll pitch yaw in the world; default: the origin
      - namespace: arm2
        description: urdf/rc_arm.urdf
        base_pose: [0.0, 0.5, 0.0, 0, 0, 3.1416]
        # joint_states_topic / joint_commands_topic: default /<namespace>/robot_joint_states, .../robot_joint_commands
        # controllers: its controllers YAML for `robot-core bringup --robots` (the simulator does not read it)
"""

from __future__ import annotations

import copy
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from robot_core.model.robot_model import (
    Joint,
    Link,
    Pose,
    RobotModel,
    RobotModelError,
    RobotModelWarning,
    SourceRef,
)
from robot_core.model.sensors import CAMERA_KINDS, SensorSpec, description_topics

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class GroupMember:
    """One robot of the group: its namespace, description file, base pose and topic pair."""

    namespace: str
    description: str
    base_pose: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    joint_states_topic: str = ""
    joint_commands_topic: str = ""
    controllers: str = ""  # its controllers YAML (robot-core bringup --robots); '' -> the bringup's default
    joints: list[str] = field(default_factory=list)  # its joints, unprefixed, in the member's own order
    # An MJCF robot with a free base: its free joint and the link it carries, unprefixed ('' for a welded robot).
    free_joint: str = ""
    base_link: str = ""

    @property
    def prefix(self) -> str:
        return f"{self.namespace}/"

    def __post_init__(self) -> None:
        self.joint_states_topic = self.joint_states_topic or f"/{self.namespace}/robot_joint_states"
        self.joint_commands_topic = self.joint_commands_topic or f"/{self.namespace}/robot_joint_commands"


@dataclass
class RobotGroup:
    model: RobotModel
    members: list[GroupMember]


def read_robots_file(path: str | Path) -> list[GroupMember]:
    """The members of a robots file; RobotModelError naming the file and the entry for anything wrong."""
    import yaml

    from robot_core.yaml_guard import YamlLimitError, safe_load_checked

    path = Path(path)
    src = SourceRef(str(path), None, "robots")
    try:
        data = safe_load_checked(path.read_text(encoding="utf-8"), str(path))
    except (OSError, yaml.YAMLError, YamlLimitError) as exc:
        raise RobotModelError(f"cannot read the robots file: {exc}", src) from None
    entries = data.get("robots") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise RobotModelError("a robots file needs a non-empty 'robots:' list", src)
    members: list[GroupMember] = []
    for k, entry in enumerate(entries):
        where = SourceRef(str(path), None, f"robots[{k}]")
        if not isinstance(entry, dict):
            raise RobotModelError("each entry is a mapping with namespace and description", where)
        unknown = set(entry) - {"namespace", "description", "base_pose", "joint_states_topic", "joint_commands_topic",
                                "controllers"}
        if unknown:
            raise RobotModelError(f"unknown keys {sorted(unknown)}", where)
        ns = str(entry.get("namespace", "")).strip().strip("/")
        if not ns or not all(_NAME.fullmatch(part) for part in ns.split("/")):
            raise RobotModelError(f"namespace '{entry.get('namespace', '')}' is not a ROS namespace (e.g. arm1)", where)
        if ns in {m.namespace for m in members}:
            raise RobotModelError(f"namespace '{ns}' is used twice", where)
        description = entry.get("description")
        if not isinstance(description, str) or not description:
            raise RobotModelError("description (a robot file) is missing", where)
        file = Path(description).expanduser()
        file = file if file.is_absolute() else path.parent / file
        controllers = entry.get("controllers", "")
        if not isinstance(controllers, str):
            raise RobotModelError(f"controllers must be a file name, got {controllers!r}", where)
        if controllers:
            cfile = Path(controllers).expanduser()
            controllers = str(cfile if cfile.is_absolute() else path.parent / cfile)
        pose = entry.get("base_pose", [0.0] * 6)
        if (not isinstance(pose, list) or len(pose) not in (3, 6)
                or not all(isinstance(v, (int, float)) and np.isfinite(v) for v in pose)):
            raise RobotModelError(f"base_pose must be [x, y, z] or [x, y, z, roll, pitch, yaw], got {pose!r}", where)
        members.append(GroupMember(ns, str(file), tuple(float(v) for v in [*pose, 0.0, 0.0, 0.0][:6]),
                                   str(entry.get("joint_states_topic", "")),
                                   str(entry.get("joint_commands_topic", "")), controllers))
    return members


def merge_robots(members: Sequence[GroupMember], load: Callable[[str], RobotModel],
                 world_frame: str = "world") -> RobotGroup:
    """One model of ``members`` (loaded with ``load``), each under its prefix and welded to ``world_frame``.

    An MJCF robot's links and joints are merged the same way and the robot is kept in ``mjcf_members``, so the
    physics builder attaches its file as written below its prefixed root link (``MjSpec.attach`` with the
    prefix; :mod:`robot_core.physics.mjcf_spec`). The descriptions' Gazebo sensors (cameras, lasers) come along
    under the prefix (:func:`_prefixed_sensor`)."""
    merged = RobotModel(name="+".join(m.namespace for m in members), source_file=members[0].description
                        if members else "<robots>")
    merged.links[world_frame] = Link(world_frame)
    for member in members:
        robot = load(member.description)
        if robot.mjcf is not None:
            member.free_joint, member.base_link = _free_base(member, robot)
            merged.mjcf_members[member.prefix] = robot
        elif not robot.fixed_base:
            warnings.warn(RobotModelWarning(f"{member.description}: robot '{member.namespace}' has a free base; in a "
                                            "robot group it is welded at its base_pose"), stacklevel=2)
        pre = member.prefix
        root = robot.root_link
        for link in robot.links.values():
            moved = copy.deepcopy(link)
            moved.name = pre + link.name
            merged.links[moved.name] = moved
        member.joints = []
        for joint in robot.joints.values():
            moved = copy.deepcopy(joint)
            moved.name, moved.parent, moved.child = pre + joint.name, pre + joint.parent, pre + joint.child
            if moved.mimic is not None:
                moved.mimic.joint = pre + moved.mimic.joint
            moved.rbc = []
            merged.joints[moved.name] = moved
            if joint.type not in ("fixed", "floating"):  # a free base is no joint of its states and commands
                member.joints.append(joint.name)
        x, y, z, r, p, yaw = member.base_pose
        merged.joints[pre + "base_joint"] = Joint(pre + "base_joint", "fixed", world_frame, pre + root,
                                                  Pose(np.array([x, y, z]), np.array([r, p, yaw])),
                                                  source=SourceRef(member.description, None, "base_pose"))
        merged.sensors.extend(_prefixed_sensor(sensor, member) for sensor in robot.sensors)
        for name, material in robot.materials.items():
            merged.materials.setdefault(name, material)
        for block in robot.ros2_control:
            moved_block = copy.deepcopy(block)
            moved_block.name = pre + block.name
            for j in moved_block.joints:
                j.name = pre + j.name
            for s in [*moved_block.sensors, *moved_block.gpios]:
                s.name = pre + s.name
                if s.params.get("frame_id", "").strip():
                    s.params["frame_id"] = pre + s.params["frame_id"].strip()
            merged.ros2_control.append(moved_block)
        for tr in robot.transmissions:
            moved_tr = copy.deepcopy(tr)
            moved_tr.name = pre + tr.name
            moved_tr.ros2_control = pre + tr.ros2_control if tr.ros2_control else ""
            for tj in moved_tr.joints:
                tj.name = pre + tj.name
            for ta in moved_tr.actuators:
                ta.name = pre + ta.name
            merged.transmissions.append(moved_tr)
    return RobotGroup(merged, list(members))


def _free_base(member: GroupMember, robot: RobotModel) -> tuple[str, str]:
    """(free joint, base link) of an MJCF robot whose top-level body floats (a menagerie quadruped, humanoid or
    mobile base), ('', '') for a welded one. The whole file is placed at the entry's base pose, so the free joint
    starts at its own initial pose composed with it. Refused, naming the file and the joint: a second free joint
    among the robot's bodies, since which body is the robot's base (its ground truth, its reset) is then
    ambiguous."""
    free = [j for j in robot.joints.values() if j.type == "floating"]
    if len(free) > 1:
        raise RobotModelError(f"robot '{member.namespace}': the MJCF robot has {len(free)} free joints "
                              f"({', '.join(j.name for j in free)}); a robot of a group has at most one free base",
                              SourceRef(member.description, free[1].source.line,
                                        free[1].source.element or f"joint '{free[1].name}'"))
    return (free[0].name, free[0].child) if free else ("", "")


def _prefixed_sensor(sensor: SensorSpec, member: GroupMember) -> SensorSpec:
    """A Gazebo sensor of one robot in the group: its name, link and frame under the robot's prefix, so its topics
    (``<name>/image_raw`` -> ``arm1/camera/image_raw``, relative: ``/arm1/...`` for a simulator in the root
    namespace) and the frame ids of its messages are the robot's own under its namespace. The plugin's topic names
    (``sensor_topics: description``) go under the namespace too; an absolute one stays where it is."""
    pre = member.prefix
    moved = copy.deepcopy(sensor)
    moved.name, moved.link = pre + sensor.name, pre + sensor.link
    if sensor.frame_id:
        moved.frame_id = pre + sensor.frame_id
    params = moved.params
    if isinstance(params.get("joint"), str) and params["joint"]:
        params["joint"] = pre + str(params["joint"])
    if sensor.kind in (*CAMERA_KINDS, "ray"):  # the plugin's names, relative ones under the prefix
        params["topics"] = {key: t if t.startswith("/") else f"{pre}{t}"
                            for key, t in description_topics(sensor).items()}
    return moved


def group_summary(group: RobotGroup) -> str:
    return "; ".join(f"{m.namespace}: {len(m.joints)} joints at {list(m.base_pose)}"
                     f"{f' (free base {m.base_link})' if m.free_joint else ''}, states {m.joint_states_topic}, "
                     f"commands {m.joint_commands_topic}" for m in group.members)


__all__: list[Any] = ["GroupMember", "RobotGroup", "group_summary", "merge_robots", "read_robots_file"]
