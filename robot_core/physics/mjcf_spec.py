"""A robot read from MJCF is simulated from its file as written, not from a URDF round trip (doc/mjcf.md).

The spec starts from ``MjSpec.from_file`` (or the text with its base directory): geoms, meshes, materials,
contacts, options, equality constraints, sensors, cameras, lights and the world's other bodies stay as
written. Only the joint drive changes: the file's actuators on the robot's joints are removed and the engine
adds its own servo per joint (:mod:`robot_core.physics.actuation`), so the command protocol, clamping, the
watchdog, mode switches and gravity compensation behave as for any robot. The actuators' kp/kv/gear/forcerange/
ctrlrange reach that servo through the RobotModel (:func:`mjcf_gains` and the joints' limits, set by
:mod:`robot_core.model.mjcf_reader`). The engine's ``timestep`` wins over the file's ``<option timestep>``
(the node paces and reports time by it); a different value in the file is warned about.
"""

from __future__ import annotations

import warnings

import mujoco
import numpy as np

from robot_core.model.mjcf_reader import load_spec
from robot_core.model.robot_model import RobotModel, RobotModelWarning, SourceRef


def split_bodies(robot: RobotModel) -> list[str]:
    """Links that are intermediate frames of a body with several joints (no MuJoCo body of their own)."""
    if robot.mjcf is None:
        return []
    return [link for link, body in robot.mjcf.link_bodies.items() if not body]


def simulates_file(robot: RobotModel) -> bool:
    """Whether the simulator can use the robot's MJCF as written (it has one, and no body has several
    joints: those become a chain of links, which only the RobotModel builder can give bodies)."""
    return robot.mjcf is not None and not split_bodies(robot)


def prepare_mjcf_spec(robot: RobotModel, timestep: float) -> mujoco.MjSpec:
    """The robot's MJCF as an uncompiled spec, without the actuators of the robot's joints (see the module
    docstring), with the engine's timestep."""
    assert robot.mjcf is not None
    spec = load_spec(robot.mjcf, robot.source_file)
    file_dt = robot.mjcf.timestep
    if file_dt is not None and abs(file_dt - float(timestep)) > 1e-12:
        warnings.warn(RobotModelWarning(f"{SourceRef(robot.source_file, None, '<option timestep>')}: the file "
                                        f"asks for {file_dt:g} s, the simulator steps at {float(timestep):g} s "
                                        "(its timestep parameter wins)"), stacklevel=3)
    spec.option.timestep = float(timestep)
    robot_joints = {j.name for j in robot.joints.values() if j.is_scalar}
    for act in list(spec.actuators):
        if act.trntype in (mujoco.mjtTrn.mjTRN_JOINT, mujoco.mjtTrn.mjTRN_JOINTINPARENT) and act.target in robot_joints:
            spec.delete(act)
    return spec


def link_offsets(robot: RobotModel) -> dict[str, np.ndarray]:
    """Link -> its frame in its body's frame (identity unless the joint's anchor is off the body origin)."""
    assert robot.mjcf is not None
    return {name: np.asarray(m, dtype=float) for name, m in robot.mjcf.link_offsets.items()}


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
