"""A robot read from MJCF is simulated from its file as written, not from a URDF round trip (doc/mjcf.md).

The spec starts from ``MjSpec.from_file`` (or the text with its base directory): geoms, meshes, materials,
contacts, options, equality constraints, sensors, cameras, lights and the world's other bodies stay as
written. Only the joint drive changes: the file's actuators on the robot's joints are removed and the engine
adds its own servo per joint (:mod:`robot_core.physics.actuation`), so the command protocol, clamping, the
watchdog, mode switches and gravity compensation behave as for any robot. The actuators' kp/kv/gear/forcerange/
ctrlrange reach that servo through the RobotModel (:func:`mjcf_gains` and the joints' limits, set by
:mod:`robot_core.model.mjcf_reader`). The engine's ``timestep`` wins over the file's ``<option timestep>``
(the node paces and reports time by it); a different value in the file is warned about.

A body with several joints is the one change to the file's tree: its links are a chain (``<body>:<joint>``
frames between the joints), and every link needs a body, so the body's joints but the last move, as written, into
new bodies of those names that wrap it (MuJoCo applies a body's joints one after the other, exactly like such a
chain). Each new body carries :data:`SPLIT_MASS` kg, as MuJoCo refuses massless moving bodies. This is done on
the file's XML text (numbers stay exactly as written), so the body and its joints must be named in the file
(main or included) that writes them; otherwise :func:`prepare_mjcf_spec` returns None with a warning and the
builder makes the robot from its links and joints (without the file's world).

A ball joint of the robot is first rewritten on the same text into its three hinges
(:mod:`robot_core.model.mjcf_ball`), which the split then gives bodies; the file's actuators and sensors on the
ball go, and its keyframes get hinge angles and rates (:func:`_ball_references`).
"""

from __future__ import annotations

import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np

from robot_core.model.mjcf_ball import angles_from_quat, rates_from_angular_velocity, rewrite_ball_joint
from robot_core.model.mjcf_reader import included_texts, load_spec, mujoco_error, name_unnamed
from robot_core.model.robot_model import MjcfSource, RobotModel, RobotModelError, RobotModelWarning, SourceRef

# Mass (kg) and principal moments (kg m^2) of a body added between two joints of one MJCF body.
SPLIT_MASS = 1e-6
SPLIT_INERTIA = 1e-9
_PLACEMENT = ("pos", "quat", "euler", "axisangle", "xyaxes", "zaxis")
# (qpos, qvel) sizes by joint type: free, ball, slide, hinge
_SIZES = {int(mujoco.mjtJoint.mjJNT_FREE): (7, 6), int(mujoco.mjtJoint.mjJNT_BALL): (4, 3),
          int(mujoco.mjtJoint.mjJNT_SLIDE): (1, 1), int(mujoco.mjtJoint.mjJNT_HINGE): (1, 1)}


def _warn(robot: RobotModel, message: str) -> None:
    warnings.warn(RobotModelWarning(f"{SourceRef(robot.source_file)}: {message}"), stacklevel=4)


class _UnsplittableError(Exception):
    """The files do not name the body or its joints as the split needs."""


def _find_body(root: ET.Element, name: str, moved: list[str]) -> ET.Element | None:
    """The ``<body>`` named ``name``, or (an unnamed body, which the reader named ``body<N>``) the body whose first
    joints are ``moved``, which then gets that name written."""
    for body in root.iter("body"):
        if body.get("name") == name:
            return body
    for body in root.iter("body"):
        joints = [c.get("name") for c in body if c.tag == "joint"]
        if body.get("name") is None and joints[: len(moved)] == moved:
            body.set("name", name)
            return body
    return None


def _wrap_body(root: ET.Element, body: ET.Element, moved: list[str]) -> None:
    """Move the body's leading joints ``moved`` into wrapping bodies (module docstring), in place."""
    name = body.get("name")
    parent_of = {child: parent for parent in root.iter() for child in parent}
    joints = [c for c in body if c.tag == "joint"]
    if [j.get("name") for j in joints[: len(moved)]] != moved:
        raise _UnsplittableError(f"the joints {moved} of body '{name}' are not named where it is written")
    for k, joint in enumerate(joints[len(moved):], start=len(moved)):
        if joint.get("name") is None:  # the reader's name (mjcf_reader.name_unnamed): counted among all its joints
            joint.set("name", f"{name}:joint{k}")
    parent = parent_of[body]
    index = list(parent).index(body)
    outer = holder = None
    for joint_name, joint in zip(moved, joints, strict=False):
        wrapper = ET.Element("body", {"name": f"{name}:{joint_name}"})
        if body.get("childclass"):
            wrapper.set("childclass", body.get("childclass"))
        if outer is None:
            outer = wrapper
            for key in _PLACEMENT:
                if key in body.attrib:
                    wrapper.set(key, body.attrib.pop(key))
        else:
            holder.append(wrapper)
        ET.SubElement(wrapper, "inertial", {"pos": "0 0 0", "mass": repr(SPLIT_MASS),
                                             "diaginertia": " ".join([repr(SPLIT_INERTIA)] * 3)})
        # (a compiler with inertiafromgeom="true" ignores <inertial>; this invisible, contact-free geom then gives
        # the same mass)
        ET.SubElement(wrapper, "geom", {"type": "sphere", "size": "0.001", "mass": repr(SPLIT_MASS),
                                         "contype": "0", "conaffinity": "0", "group": "5", "rgba": "0 0 0 0"})
        body.remove(joint)
        wrapper.append(joint)
        holder = wrapper
    assert outer is not None and holder is not None
    parent.remove(body)
    holder.append(body)
    parent.insert(index, outer)


def _wrap_joints(texts: dict[str, str], splits: dict[str, list[str]],
                 balls: dict[str, float | None]) -> dict[str, str]:
    """The MJCF texts (the main file under "", its includes by name) with every ball joint of the robot rewritten
    into its three hinges (:func:`robot_core.model.mjcf_ball.rewrite_ball_joint`) and every split body's leading
    joints moved into wrapping bodies, each in the text that holds the element."""
    out = dict(texts)
    remaining = dict(splits)
    balls_left = dict(balls)
    for key, text in texts.items():
        root = ET.fromstring(text)
        changed = [ball for ball, half in balls_left.items() if rewrite_ball_joint(root, ball, half)]
        for ball in changed:
            del balls_left[ball]
        for name in list(remaining):
            body = _find_body(root, name, remaining[name])
            if body is not None:
                _wrap_body(root, body, remaining.pop(name))
                changed.append(name)
        if changed:
            out[key] = ET.tostring(root, encoding="unicode")
    if balls_left:
        raise _UnsplittableError(f"ball joints {sorted(balls_left)} are not named in the files")
    if remaining:
        raise _UnsplittableError(f"bodies {sorted(remaining)} are not named in the files")
    return out


def _split_spec(robot: RobotModel) -> mujoco.MjSpec:
    source = robot.mjcf
    assert source is not None
    text = source.text if source.path is None else Path(source.path).read_text(errors="replace")
    base = Path(source.base_dir or ".")
    try:
        texts = _wrap_joints({"": text or "", **included_texts(text or "", base)}, source.split_bodies,
                             source.ball_joints)
    except (ET.ParseError, OSError) as exc:
        raise _UnsplittableError(str(exc)) from None
    main = texts.pop("")
    try:
        spec = mujoco.MjSpec.from_string(main, include={k: v.encode() for k, v in texts.items()} or None)
    except ValueError as exc:
        raise mujoco_error(exc, robot.source_file) from None
    spec.modelfiledir = str(base.resolve()) + "/"
    wrappers = {f"{body}:{joint}" for body, joints in source.split_bodies.items() for joint in joints}
    name_unnamed(spec, skip=wrappers)
    if source.ball_joints:
        _ball_references(robot, spec)
    return spec


def _ball_references(robot: RobotModel, spec: mujoco.MjSpec) -> None:
    """What of the file still names a ball joint that became three hinges: its actuators (the reader mapped a
    motor to the hinges, the engine drives them) and sensors go, with a warning for the sensors; keyframes get
    the hinges' angles and rates in place of the ball's quaternion and angular velocity."""
    balls = robot.mjcf.ball_joints
    for sensor in list(spec.sensors):
        if sensor.objtype == mujoco.mjtObj.mjOBJ_JOINT and sensor.objname in balls:
            line = re.search(r"line (\d+)", sensor.info or "")
            where = SourceRef(robot.source_file, int(line.group(1)) if line else None,
                              f"sensor '{sensor.name}'" if sensor.name else "sensor")
            warnings.warn(RobotModelWarning(f"{where}: on ball joint '{sensor.objname}', which is simulated as "
                                            "three hinges: not simulated"), stacklevel=4)
            spec.delete(sensor)
    for act in list(spec.actuators):
        if act.trntype in (mujoco.mjtTrn.mjTRN_JOINT, mujoco.mjtTrn.mjTRN_JOINTINPARENT) and act.target in balls:
            spec.delete(act)
    keys = [key for key in spec.keys if len(key.qpos) or len(key.qvel)]
    if not keys:
        return
    original = load_spec(robot.mjcf, robot.source_file).compile()
    for key in keys:
        qpos = np.asarray(key.qpos, dtype=float)
        qvel = np.asarray(key.qvel, dtype=float)
        new_qpos: list[float] = []
        new_qvel: list[float] = []
        for j in range(original.njnt):
            adr, dof = int(original.jnt_qposadr[j]), int(original.jnt_dofadr[j])
            nq, nv = _SIZES[int(original.jnt_type[j])]
            if original.joint(j).name in balls:
                angles = angles_from_quat(qpos[adr:adr + 4]) if len(qpos) else np.zeros(3)
                new_qpos.extend(angles)
                if len(qvel):
                    new_qvel.extend(rates_from_angular_velocity(angles, qvel[dof:dof + 3]))
            else:
                new_qpos.extend(qpos[adr:adr + nq])
                new_qvel.extend(qvel[dof:dof + nv])
        if len(qpos):
            key.qpos = new_qpos
        if len(qvel):
            key.qvel = new_qvel


def prepare_mjcf_spec(robot: RobotModel, timestep: float) -> mujoco.MjSpec | None:
    """The robot's MJCF as an uncompiled spec, without the actuators of the robot's joints and with the engine's
    timestep (see the module docstring); None, with a warning, when a body with several joints cannot be
    split in the file."""
    assert robot.mjcf is not None
    if robot.mjcf.split_bodies:
        try:
            spec = _split_spec(robot)
        except _UnsplittableError as exc:
            _warn(robot, f"bodies {sorted(robot.mjcf.split_bodies)} have several joints and cannot be split in "
                         f"the file ({exc}); the simulator builds the robot from its links and joints instead "
                         "of the file as written (the file's world bodies, sensors, cameras, contacts and options "
                         "are not simulated)")
            return None
    else:
        spec = load_spec(robot.mjcf, robot.source_file)
    file_dt = robot.mjcf.timestep
    if file_dt is not None and abs(file_dt - float(timestep)) > 1e-12:
        _warn(robot, f"<option timestep>: the file asks for {file_dt:g} s, the simulator steps at "
                     f"{float(timestep):g} s (its timestep parameter wins)")
    spec.option.timestep = float(timestep)
    robot_joints = {j.name for j in robot.joints.values() if j.is_scalar}
    # (a robot with a ball joint always goes through _split_spec: its three hinges need two wrapping bodies)
    for act in list(spec.actuators):
        if act.trntype in (mujoco.mjtTrn.mjTRN_JOINT, mujoco.mjtTrn.mjTRN_JOINTINPARENT) and act.target in robot_joints:
            spec.delete(act)
    return spec


def link_frames(robot: RobotModel) -> dict[str, tuple[str, np.ndarray]]:
    """Link -> (its MuJoCo body, the link frame in that body's frame)."""
    source: MjcfSource | None = robot.mjcf
    if source is None:
        raise RobotModelError("not an MJCF robot", SourceRef(robot.source_file))
    return {name: (body, np.asarray(source.link_offsets.get(name, np.eye(4)), dtype=float))
            for name, body in source.link_bodies.items()}


def mjcf_gains(robot: RobotModel, actuated: list[str]) -> dict[str, dict[str, float]]:
    """The MJCF actuators' servo gains in joint space, as ``PhysicsEngine`` gain overrides."""
    out: dict[str, dict[str, float]] = {}
    for name in actuated:
        source, own_name = mjcf_source_of(robot, name)
        servo = source.servos.get(own_name) if source is not None else None
        if servo is None:
            continue
        gains = {k: v for k, v in (("kp", servo.kp), ("kd", servo.kd), ("kv", servo.kv)) if v is not None}
        if gains:
            out[name] = gains
    return out


def mjcf_source_of(robot: RobotModel, joint: str) -> tuple[MjcfSource | None, str]:
    """The MJCF a joint of ``robot`` was read from and the joint's name in it: the robot's own file, a robot
    group's MJCF member (``arm1/j1`` -> ``j1`` of that member's file), or (None, joint) for a URDF joint."""
    if robot.mjcf is not None:
        return robot.mjcf, joint
    for prefix, member in robot.mjcf_members.items():
        if joint.startswith(prefix):
            return member.mjcf, joint[len(prefix):]
    return None, joint


def _option_fields(option: object) -> list[str]:
    return [a for a in dir(option) if not a.startswith("_") and not callable(getattr(option, a))]


def attach_mjcf_member(spec: mujoco.MjSpec, prefix: str, member: RobotModel, child: mujoco.MjSpec,
                       pose: np.ndarray) -> dict[str, tuple[str, np.ndarray]]:
    """Attach an MJCF robot of a robot group (``child``: its :func:`prepare_mjcf_spec`) as written, every name
    under ``prefix``, at ``pose`` (4x4 in the world: the base pose where the builder welded its prefixed root
    link); returns the member's link frames under their prefixed names.

    The file goes into a frame of the world body, not into the root link's body: MuJoCo allows a free joint on a
    top-level body only, so a free base (a menagerie quadruped) and the free props of the file's scenery stay
    free, their initial poses composed with ``pose``; the file's welded bodies end up exactly where they would
    below the root link.

    One world has one set of ``<option>``s: the group's (the builder's) win, and a member whose file sets others
    is warned about, naming them (MuJoCo would only keep the parent's with a warning of its own)."""
    root = prefix + member.root_link
    if spec.body(root) is None:
        raise RobotModelError(f"robot group: the root link '{root}' of the MJCF robot is not in the world",
                              SourceRef(member.source_file))
    differ = []
    for name in _option_fields(child.option):
        mine, theirs = getattr(spec.option, name), getattr(child.option, name)
        if not np.array_equal(np.asarray(mine), np.asarray(theirs)):
            differ.append(name)
            setattr(child.option, name, mine)
    if differ:
        _warn(member, f"<option> {', '.join(differ)}: one world has one set of options, the robot group's are "
                      "used (a robot of a group keeps its bodies, joints, actuators' gains, contacts, equalities "
                      "and sensors as written)")
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(pose[:3, :3], dtype=float).reshape(9))
    spec.attach(child, prefix=prefix, frame=spec.worldbody.add_frame(pos=np.asarray(pose[:3, 3], dtype=float),
                                                                     quat=quat))
    return {prefix + link: (root if mj_body == "world" else prefix + mj_body, offset)
            for link, (mj_body, offset) in link_frames(member).items()}
