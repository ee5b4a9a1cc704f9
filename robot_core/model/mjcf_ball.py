"""An MJCF ball joint of the robot as three hinges, the way rai maps its ``quatBall`` (doc/mjcf.md).

A RobotModel (and URDF, and ros2_control) has scalar joints only, so a ball joint ``B`` becomes the hinges
``B:x``, ``B:y``, ``B:z`` about the joint frame's (the body frame's) x, y and z axes through the ball's anchor,
applied in that order: R = Rx(a) Ry(b) Rz(c). That chain reaches every orientation, and its dynamics equal the
ball's except at the gimbal singularity b = +-90 deg (the x and z axes line up), where a ball has none. The reader
builds the chain in the RobotModel (:mod:`robot_core.model.mjcf_reader`); the simulator rewrites the ball's
``<joint>`` on the file's text into the same three hinges (:func:`rewrite_ball_joint`, called from
:mod:`robot_core.physics.mjcf_spec`), so both sides agree joint by joint. This module holds what both need:
names, the rewrite, and the conversion of a ball's quaternion and angular velocity to hinge coordinates.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import mujoco
import numpy as np

from robot_core.model.rai_joint_types import rotation_to_xyz_angles

# Hinge name suffixes and axes (joint frame), in the order MuJoCo applies them.
AXES: tuple[tuple[str, tuple[float, float, float]], ...] = (
    ("x", (1.0, 0.0, 0.0)), ("y", (0.0, 1.0, 0.0)), ("z", (0.0, 0.0, 1.0)))
# Attributes of the ball's <joint> that the hinges must not take over (each hinge writes its own, or they mean
# something else for a hinge).
_REPLACED = ("name", "type", "axis", "range", "limited", "ref", "springref")


def hinge_names(ball: str) -> list[str]:
    """The three hinges that stand for ball joint ``ball``."""
    return [f"{ball}:{suffix}" for suffix, _ in AXES]


def _axis_rotation(axis: tuple[float, float, float], angle: float) -> np.ndarray:
    q = np.zeros(4)
    mujoco.mju_axisAngle2Quat(q, np.asarray(axis, dtype=float), float(angle))
    r = np.zeros(9)
    mujoco.mju_quat2Mat(r, q)
    return r.reshape(3, 3)


def rotation(angles) -> np.ndarray:
    """The rotation the three hinges make at ``angles`` (a, b, c): Rx(a) Ry(b) Rz(c)."""
    out = np.eye(3)
    for (_, axis), angle in zip(AXES, angles, strict=True):
        out = out @ _axis_rotation(axis, float(angle))
    return out


def angles_from_quat(quat) -> np.ndarray:
    """Hinge angles (a, b, c) giving the ball's rotation ``quat`` (w x y z, MuJoCo's order), b in [-pi/2, pi/2]."""
    q = np.asarray(quat, dtype=float)
    norm = float(np.linalg.norm(q))
    r = np.zeros(9)
    mujoco.mju_quat2Mat(r, q / norm if norm > 0 else np.array([1.0, 0.0, 0.0, 0.0]))
    return rotation_to_xyz_angles(r.reshape(3, 3)) + 0.0  # (no -0.0)


def rate_matrix(angles) -> np.ndarray:
    """E with omega = E @ (a', b', c'): the angular velocity in the joint's child frame (a ball's qvel) that the
    hinge rates make. Its determinant is cos(b): the gimbal singularity."""
    _, b, c = (float(v) for v in angles)
    rz_t = _axis_rotation(AXES[2][1], c).T
    ry_t = _axis_rotation(AXES[1][1], b).T
    columns = (rz_t @ ry_t @ np.array(AXES[0][1]), rz_t @ np.array(AXES[1][1]), np.array(AXES[2][1]))
    return np.column_stack(columns)


def rates_from_angular_velocity(angles, omega) -> np.ndarray:
    """Hinge rates for a ball's qvel ``omega`` at hinge ``angles`` (least squares at the singularity)."""
    return np.linalg.lstsq(rate_matrix(angles), np.asarray(omega, dtype=float), rcond=None)[0]


def range_text(half_angle: float) -> str:
    """A hinge's ``range`` attribute for a ball's cone half-angle, in the file's own angle unit."""
    return f"{-half_angle!r} {half_angle!r}"


def rewrite_ball_joint(root: ET.Element, ball: str, half_angle: float | None) -> bool:
    """Replace the ``<joint name=ball>`` under ``root`` by its three hinges, in place; False when no joint of that
    name is written there.

    Each hinge keeps the ball's other attributes (anchor ``pos``, class, damping, armature, frictionloss,
    stiffness, solver parameters), so per-DOF properties stay per hinge; ``ref`` and ``springref`` are 0 (the
    ball's reference is its identity quaternion) and ``limited``/``range`` are written out: a cone of
    ``half_angle`` (the file's angle unit) becomes [-half_angle, half_angle] on each hinge, None: unlimited.
    """
    for parent in root.iter():
        for index, joint in enumerate(list(parent)):
            if joint.tag != "joint" or joint.get("name") != ball:
                continue
            parent.remove(joint)
            kept = {k: v for k, v in joint.attrib.items() if k not in _REPLACED}
            for offset, ((_, axis), name) in enumerate(zip(AXES, hinge_names(ball), strict=True)):
                attrib = {"name": name, "type": "hinge", "axis": " ".join(f"{v:g}" for v in axis), **kept,
                          "ref": "0", "springref": "0", "limited": "false" if half_angle is None else "true"}
                if half_angle is not None:
                    attrib["range"] = range_text(half_angle)
                hinge = ET.Element("joint", attrib)
                hinge.tail = joint.tail
                parent.insert(index + offset, hinge)
            return True
    return False

