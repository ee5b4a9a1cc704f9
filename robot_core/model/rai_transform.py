"""rai transform notation: ``<t(..) q(..) r(..) d(..) E(..)>`` chains and 3/4/7-vectors as 4x4 matrices.

rai writes poses either as vectors ``[x y z qw qx qy qz]`` (or only the position / only the
quaternion) or as a chain of small turtle-like steps applied left to right, each one relative to
the frame the previous steps produced (``T = T_1 @ T_2 @ ...``). Quaternions are (w x y z).
``E(r p y)`` uses the URDF roll-pitch-yaw convention R = Rz(y) Ry(p) Rx(r).
"""

from __future__ import annotations

import math
import re

import numpy as np

from robot_core.model.robot_model import Pose, RobotModelError, SourceRef, matrix_to_rpy, rpy_to_matrix

# Operators of the chain notation and how many numbers each takes.
_OPERATOR_ARITY = {"t": 3, "q": 4, "r": 4, "d": 4, "E": 3}
_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_STEP = re.compile(r"\s*([A-Za-z])\s*\(([^()]*)\)")


def translation(xyz) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = np.asarray(xyz, dtype=float)
    return m


def rotation(rot: np.ndarray) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = rot
    return m


def quat_to_matrix(quat) -> np.ndarray:
    """Unit quaternion (w x y z) to a rotation matrix; the caller guarantees a non-zero norm."""
    w, x, y, z = np.asarray(quat, dtype=float) / np.linalg.norm(quat)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_quat(rot: np.ndarray) -> np.ndarray:
    """Rotation matrix to a unit quaternion (w x y z) with w >= 0."""
    r = np.asarray(rot, dtype=float)
    tr = r[0, 0] + r[1, 1] + r[2, 2]
    if tr > 0:
        s = 2.0 * math.sqrt(tr + 1.0)
        q = [0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s]
    elif r[0, 0] > r[1, 1] and r[0, 0] > r[2, 2]:
        s = 2.0 * math.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2])
        q = [(r[2, 1] - r[1, 2]) / s, 0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s]
    elif r[1, 1] > r[2, 2]:
        s = 2.0 * math.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2])
        q = [(r[0, 2] - r[2, 0]) / s, (r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1])
        q = [(r[1, 0] - r[0, 1]) / s, (r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s]
    out = np.array(q)
    out /= np.linalg.norm(out)
    return -out if out[0] < 0 else out


def axis_angle_matrix(axis, angle: float) -> np.ndarray:
    """Rotation by ``angle`` radians about ``axis`` (normalised here; must be non-zero)."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * (k @ k)


def rotation_between(a, b) -> np.ndarray:
    """A rotation taking unit vector ``a`` onto unit vector ``b`` (the smallest one)."""
    a = np.asarray(a, dtype=float) / np.linalg.norm(a)
    b = np.asarray(b, dtype=float) / np.linalg.norm(b)
    c = float(np.dot(a, b))
    axis = np.cross(a, b)
    s = float(np.linalg.norm(axis))
    if s < 1e-300:
        if c > 0:
            return np.eye(3)
        # Opposite: a half turn about any axis perpendicular to a.
        perp = np.cross(a, [1.0, 0.0, 0.0])
        if np.linalg.norm(perp) < 1e-6:
            perp = np.cross(a, [0.0, 1.0, 0.0])
        return axis_angle_matrix(perp, math.pi)
    return axis_angle_matrix(axis, math.atan2(s, c))


def inverse(m: np.ndarray) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = m[:3, :3].T
    out[:3, 3] = -m[:3, :3].T @ m[:3, 3]
    return out


def _numbers(text: str, source: SourceRef, what: str) -> list[float]:
    parts = text.replace(",", " ").split()
    out = []
    for p in parts:
        if not re.fullmatch(_NUMBER, p):
            raise RobotModelError(f"{what}: '{p}' is not a number", source)
        out.append(float(p))
    return out


def vector_to_transform(values, source: SourceRef, what: str = "pose") -> np.ndarray:
    """A 3-vector (position), 4-vector (quaternion w x y z) or 7-vector (both) as a 4x4; [] is the identity."""
    v = [float(x) for x in values]
    m = np.eye(4)
    if not v:
        return m  # rai reads an empty pose as the identity
    if len(v) == 3:
        m[:3, 3] = v
    elif len(v) in (4, 7):
        quat = v[-4:]
        if np.linalg.norm(quat) < 1e-12:
            raise RobotModelError(f"{what}: the quaternion {quat} has zero length", source)
        m[:3, :3] = quat_to_matrix(quat)
        if len(v) == 7:
            m[:3, 3] = v[:3]
    else:
        raise RobotModelError(
            f"{what}: a pose vector needs 3 (x y z), 4 (qw qx qy qz) or 7 (x y z qw qx qy qz) numbers, got {len(v)}",
            source,
        )
    return m


def parse_transform(text: str, source: SourceRef, what: str = "pose") -> np.ndarray:
    """Parse a chain like ``t(0 0 .5) d(90 1 0 0)`` (or plain 3/4/7 numbers, bracketed or not) into a 4x4 matrix.

    ``source.line`` is the line the text starts on; errors report the line of the offending step.
    """
    body = re.sub(r"^(\s*)T(?=\s|$)", r"\1 ", text)  # old rai files mark transforms as <T ...>
    if not body.strip():
        return np.eye(4)
    bracketed = re.fullmatch(r"\s*\[(.*)\]\s*", body, re.DOTALL)  # rai also writes Q: "[x y z qw qx qy qz]"
    if bracketed:
        body = bracketed.group(1)
    if re.fullmatch(rf"\s*(?:{_NUMBER}[\s,]*)+", body):
        return vector_to_transform(_numbers(body, source, what), source, what)
    m = np.eye(4)
    pos = 0
    while body[pos:].strip():
        start = pos + len(body[pos:]) - len(body[pos:].lstrip())
        line = None if source.line is None else source.line + body.count("\n", 0, start)
        where = SourceRef(source.file, line, source.element)
        match = _STEP.match(body, pos)
        if not match:
            snippet = body[start:].split()[0]
            raise RobotModelError(
                f"{what}: cannot read transform step '{snippet}' in '{text.strip()}'; expected t(x y z), "
                "q(w x y z), r(rad x y z), d(deg x y z) or E(roll pitch yaw)",
                where,
            )
        op, args = match.group(1), match.group(2)
        if op not in _OPERATOR_ARITY:
            raise RobotModelError(f"{what}: unknown transform step '{op}(...)'; known: t, q, r, d, E", where)
        nums = _numbers(args, where, what)
        if len(nums) != _OPERATOR_ARITY[op]:
            raise RobotModelError(f"{what}: {op}(...) takes {_OPERATOR_ARITY[op]} numbers, got {len(nums)}", where)
        m = m @ _step_matrix(op, nums, where, what)
        pos = match.end()
    return m


def _step_matrix(op: str, nums: list[float], source: SourceRef, what: str) -> np.ndarray:
    if op == "t":
        return translation(nums)
    if op == "q":
        if np.linalg.norm(nums) < 1e-12:
            raise RobotModelError(f"{what}: q(...) has zero length", source)
        return rotation(quat_to_matrix(nums))
    if op == "E":
        return rotation(rpy_to_matrix(np.array(nums)))
    angle = nums[0] if op == "r" else math.radians(nums[0])
    axis = nums[1:]
    if np.linalg.norm(axis) < 1e-12:
        if abs(angle) < 1e-15:
            return np.eye(4)
        raise RobotModelError(f"{what}: {op}(...) rotates about a zero axis", source)
    return rotation(axis_angle_matrix(axis, angle))


def format_number(v: float) -> str:
    """Shortest text that reads back to the same float (and no '-0')."""
    v = float(v)
    if v == 0.0:
        return "0"
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def pose_from_matrix(m: np.ndarray) -> Pose:
    return Pose(np.array(m[:3, 3], dtype=float), matrix_to_rpy(m[:3, :3]))


def format_transform(m: np.ndarray, rpy: np.ndarray | None = None) -> str:
    """A 4x4 as a chain ``t(x y z) E(roll pitch yaw)``; identity parts are left out.

    ``rpy`` gives the angles to write when the caller has them (they then read back unchanged).
    """
    parts = []
    p = m[:3, 3]
    if np.any(p != 0):
        parts.append("t(" + " ".join(format_number(x) for x in p) + ")")
    if rpy is None and np.any(m[:3, :3] != np.eye(3)):
        rpy = matrix_to_rpy(m[:3, :3])
    if rpy is not None and np.any(np.asarray(rpy) != 0):
        parts.append("E(" + " ".join(format_number(x) for x in rpy) + ")")
    return "<" + " ".join(parts) + ">"
