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
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np

from robot_core.model.mjcf_reader import included_texts, load_spec, mujoco_error, name_unnamed
from robot_core.model.robot_model import MjcfSource, RobotModel, RobotModelError, RobotModelWarning, SourceRef

# Mass (kg) and principal moments (kg m^2) of a body added between two joints of one MJCF body.
SPLIT_MASS = 1e-6
SPLIT_INERTIA = 1e-9
_PLACEMENT = ("pos", "quat", "euler", "axisangle", "xyaxes", "zaxis")


def _warn(robot: RobotModel, message: str) -> None:
    warnings.warn(RobotModelWarning(f"{SourceRef(robot.source_file)}: {message}"), stacklevel=4)


class _UnsplittableError(Exception):
    """The files do not name the body or its joints as the split needs."""


def _wrap_body(root: ET.Element, name: str, moved: list[str]) -> None:
    """Move the body's leading joints ``moved`` into wrapping bodies (module docstring), in place."""
    parent_of = {child: parent for parent in root.iter() for child in parent}
    body = next(b for b in root.iter("body") if b.get("name") == name)
    joints = [c for c in body if c.tag == "joint"]
    if [j.get("name") for j in joints[: len(moved)]] != moved:
        raise _UnsplittableError(f"the joints {moved} of body '{name}' are not named where it is written")
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


def _wrap_joints(texts: dict[str, str], splits: dict[str, list[str]]) -> dict[str, str]:
    """The MJCF texts (the main file under "", its includes by name) with every split body's leading joints
    moved into wrapping bodies, each in the text that holds the body."""
    out = dict(texts)
    remaining = dict(splits)
    for key, text in texts.items():
        root = ET.fromstring(text)
        here = {b.get("name") for b in root.iter("body")}
        mine = [name for name in remaining if name in here]
        for name in mine:
            _wrap_body(root, name, remaining.pop(name))
        if mine:
            out[key] = ET.tostring(root, encoding="unicode")
    if remaining:
        raise _UnsplittableError(f"bodies {sorted(remaining)} are not named in the files")
    return out


def _split_spec(robot: RobotModel) -> mujoco.MjSpec:
    source = robot.mjcf
    assert source is not None
    text = source.text if source.path is None else Path(source.path).read_text(errors="replace")
    base = Path(source.base_dir or ".")
    try:
        texts = _wrap_joints({"": text or "", **included_texts(text or "", base)}, source.split_bodies)
    except (ET.ParseError, OSError) as exc:
        raise _UnsplittableError(str(exc)) from None
    main = texts.pop("")
    try:
        spec = mujoco.MjSpec.from_string(main, include={k: v.encode() for k, v in texts.items()} or None)
    except ValueError as exc:
        raise mujoco_error(exc, robot.source_file) from None
    spec.modelfiledir = str(base.resolve()) + "/"
    name_unnamed(spec)
    return spec


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
    if robot.mjcf is None:
        return {}
    out: dict[str, dict[str, float]] = {}
    for name in actuated:
        servo = robot.mjcf.servos.get(name)
        if servo is None:
            continue
        gains = {k: v for k, v in (("kp", servo.kp), ("kd", servo.kd), ("kv", servo.kv)) if v is not None}
        if gains:
            out[name] = gains
    return out
