"""rai joint types and how each one maps onto URDF joints.

URDF joints have at most one coordinate (or are fixed / floating / planar), rai joints can have
several. A multi-DOF rai joint ``J`` becomes a chain of scalar URDF joints named ``J_<suffix>``
joined by massless links ``J_<suffix>_link``, in the order rai composes them:

=============  =====================================================  ===========================
rai type       URDF                                                   rai q (values in the file)
=============  =====================================================  ===========================
hingeX/Y/Z     revolute (continuous when no limits), axis x/y/z       angle
transX/Y/Z     prismatic, axis x/y/z                                  offset
transXY        prismatic x (J_x), prismatic y (J_y)                   x y
trans3         prismatic x, y, z (J_x, J_y, J_z)                      x y z
transXYPhi     prismatic x, prismatic y, revolute z (J_x, J_y, J_phi) x y phi (translate, then turn)
phiTransXY     revolute z, prismatic x, prismatic y (J_phi, J_x, J_y)  phi x y (turn, then translate)
universal      revolute x, revolute y (J_x, J_y)                      a b  (R = Rx(a) Ry(b))
quatBall       revolute x, y, z (J_x, J_y, J_z), see below           qw qx qy qz
free, XBall    floating                                               x y z qw qx qy qz
rigid          fixed                                                  -
=============  =====================================================  ===========================

quatBall has no URDF counterpart; it becomes three revolute joints R = Rx(a) Ry(b) Rz(c), which
reach every orientation but are singular (gimbal lock) at b = +-pi/2, i.e. when the middle axis
has turned the first and last axes onto each other. The initial quaternion is converted to
(a, b, c) with b in [-pi/2, pi/2]. ``tau`` (a time coordinate with no motion) cannot be mapped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robot_core.model.rai_transform import axis_angle_matrix, matrix_to_quat, quat_to_matrix

X = (1.0, 0.0, 0.0)
Y = (0.0, 1.0, 0.0)
Z = (0.0, 0.0, 1.0)

# A transform from a file matches a joint type when it differs by at most this much.
POSE_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Dof:
    suffix: str  # name suffix of the scalar joint ('' for one-DOF types)
    kind: str  # 'revolute' or 'prismatic'
    axis: tuple[float, float, float]


@dataclass(frozen=True)
class RaiJointType:
    name: str
    dofs: tuple[Dof, ...] = ()
    floating: bool = False

    @property
    def is_fixed(self) -> bool:
        return not self.dofs and not self.floating

    @property
    def q_size(self) -> int:
        """Number of values in the file's ``q:`` for this type."""
        if self.floating:
            return 7
        if self.name == "quatBall":
            return 4
        return len(self.dofs)

    def transform(self, dof_values) -> np.ndarray:
        """Relative transform the joint produces for scalar DOF values (URDF coordinates)."""
        m = np.eye(4)
        for dof, v in zip(self.dofs, dof_values, strict=True):
            step = np.eye(4)
            if dof.kind == "revolute":
                step[:3, :3] = axis_angle_matrix(dof.axis, float(v))
            else:
                step[:3, 3] = np.asarray(dof.axis) * float(v)
            m = m @ step
        return m

    def dofs_from_q(self, q) -> np.ndarray:
        """The file's q values to scalar DOF values (only quatBall differs)."""
        q = np.asarray(q, dtype=float)
        if self.name == "quatBall":
            return rotation_to_xyz_angles(quat_to_matrix(q))
        return q

    def q_from_dofs(self, dofs) -> np.ndarray:
        if self.name == "quatBall":
            return matrix_to_quat(self.transform(dofs)[:3, :3])
        return np.asarray(dofs, dtype=float)

    def dofs_from_transform(self, m: np.ndarray) -> np.ndarray | None:
        """Scalar DOF values producing ``m``, or None when this joint type cannot produce ``m``."""
        r, p = m[:3, :3], m[:3, 3]
        names = [d.suffix for d in self.dofs]
        if len(self.dofs) == 1:
            d = self.dofs[0]
            k = int(np.argmax(d.axis))
            if d.kind == "prismatic":
                vals = [p[k]]
            else:
                i, j = (k + 1) % 3, (k + 2) % 3
                vals = [math.atan2(r[j, i], r[i, i])]
        elif self.name in ("transXY", "trans3"):
            vals = list(p[: len(self.dofs)])
        elif self.name == "transXYPhi":
            vals = [p[0], p[1], math.atan2(r[1, 0], r[0, 0])]
        elif self.name == "phiTransXY":
            phi = math.atan2(r[1, 0], r[0, 0])
            local = axis_angle_matrix(Z, phi).T @ p
            vals = [phi, local[0], local[1]]
        elif self.name == "universal":
            vals = [math.atan2(r[2, 1], r[1, 1]), math.atan2(r[0, 2], r[0, 0])]
        elif names == ["x", "y", "z"] and self.name == "quatBall":
            vals = list(rotation_to_xyz_angles(r))
        else:  # pragma: no cover - every multi-DOF type is listed above
            raise AssertionError(self.name)
        vals_arr = np.array(vals, dtype=float)
        if np.max(np.abs(self.transform(vals_arr) - m)) > POSE_TOLERANCE:
            return None
        return vals_arr


def rotation_to_xyz_angles(r: np.ndarray) -> np.ndarray:
    """Angles (a, b, c) with R = Rx(a) Ry(b) Rz(c), b in [-pi/2, pi/2]; a = 0 at gimbal lock."""
    sb = max(-1.0, min(1.0, r[0, 2]))
    cb = math.hypot(r[1, 2], r[2, 2])
    if cb < 1e-12:
        return np.array([0.0, math.copysign(math.pi / 2, sb), math.atan2(r[1, 0], r[1, 1])])
    return np.array([math.atan2(-r[1, 2], r[2, 2]), math.atan2(sb, cb), math.atan2(-r[0, 1], r[0, 0])])


def _t(name: str, *dofs: Dof, floating: bool = False) -> RaiJointType:
    return RaiJointType(name, tuple(dofs), floating)


JOINT_TYPES: dict[str, RaiJointType] = {
    t.name: t
    for t in (
        _t("hingeX", Dof("", "revolute", X)),
        _t("hingeY", Dof("", "revolute", Y)),
        _t("hingeZ", Dof("", "revolute", Z)),
        _t("transX", Dof("", "prismatic", X)),
        _t("transY", Dof("", "prismatic", Y)),
        _t("transZ", Dof("", "prismatic", Z)),
        _t("transXY", Dof("x", "prismatic", X), Dof("y", "prismatic", Y)),
        _t("trans3", Dof("x", "prismatic", X), Dof("y", "prismatic", Y), Dof("z", "prismatic", Z)),
        _t("transXYPhi", Dof("x", "prismatic", X), Dof("y", "prismatic", Y), Dof("phi", "revolute", Z)),
        _t("phiTransXY", Dof("phi", "revolute", Z), Dof("x", "prismatic", X), Dof("y", "prismatic", Y)),
        _t("universal", Dof("x", "revolute", X), Dof("y", "revolute", Y)),
        _t("quatBall", Dof("x", "revolute", X), Dof("y", "revolute", Y), Dof("z", "revolute", Z)),
        _t("free", floating=True),
        _t("XBall", floating=True),
        _t("rigid"),
    )
}

# rai joint types that exist but have no URDF meaning, with the reason given in errors.
UNMAPPABLE = {
    "tau": "a tau joint is a time coordinate that moves nothing; URDF has no such joint",
    "generic": "a generic joint has a run-time defined DOF list that URDF cannot express",
    "circleZ": "a circleZ joint couples rotation and translation in one coordinate; URDF cannot express it",
    "line": "a line joint has no URDF counterpart",
}

# Single-DOF types by (kind, axis index), for the writer.
SCALAR_TYPE_BY_AXIS = {
    ("revolute", 0): "hingeX",
    ("revolute", 1): "hingeY",
    ("revolute", 2): "hingeZ",
    ("prismatic", 0): "transX",
    ("prismatic", 1): "transY",
    ("prismatic", 2): "transZ",
}

# Multi-DOF types, longest first, so a writer that recognises chains tries trans3 before transXY.
MULTI_DOF_TYPES = sorted((t for t in JOINT_TYPES.values() if len(t.dofs) > 1), key=lambda t: -len(t.dofs))


def lookup(name: str) -> RaiJointType | None:
    """Joint type by name; case-insensitive so 'hingex' works too."""
    if name in JOINT_TYPES:
        return JOINT_TYPES[name]
    low = {k.lower(): v for k, v in JOINT_TYPES.items()}
    return low.get(name.lower())
