"""Mechanical transmissions between actuator space and joint space.

Every transmission maps the positions, velocities and efforts of its actuators to those of its joints
(``actuator_to_joint``) and back (``joint_to_actuator``), preserving power (actuator effort . actuator
velocity == joint effort . joint velocity). Kinds:

* **Simple** (``transmission_interface/SimpleTransmission``, ROS 1 ``SimpleTransmission``,
  ``pr2_mechanism_model/SimpleTransmission``): a gear of ratio ``reduction`` (actuator turns per joint turn) and
  a joint ``offset``::

      joint position = actuator position / reduction + offset
      joint velocity = actuator velocity / reduction
      joint effort   = actuator effort * reduction

* **Differential** (``transmission_interface/DifferentialTransmission``), ros2_control's convention with actuator
  reductions ``ar``, joint reductions ``jr`` and joint offsets ``off``::

      joint1 position = (a1 / ar1 + a2 / ar2) / (2 jr1) + off1
      joint2 position = (a1 / ar1 - a2 / ar2) / (2 jr2) + off2
      joint1 effort   = jr1 (e1 ar1 + e2 ar2),   joint2 effort = jr2 (e1 ar1 - e2 ar2)

* **PR2 wrist** (``pr2_mechanism_model/WristTransmission``): right and left motor drive flex and roll as
  ``flex = (r / ar_r - l / ar_l) / (2 jr_flex)``, ``roll = -(r / ar_r + l / ar_l) / (2 jr_roll)``; that is the
  differential above with actuators (right, left), joints (flex, roll), actuator reductions
  ``(ar_r, -ar_l)`` and joint reductions ``(jr_flex, -jr_roll)`` (:func:`wrist_transmission`).

* **PR2 gripper** (``pr2_mechanism_model/PR2GripperTransmission``): one motor turns a screw that opens a
  linkage. Motor revolutions ``MR = position / (2 pi reduction)`` give the screw length
  ``L = L0 + MR screw_reduction / gear_ratio``; the finger angle ``theta`` solves the linkage's triangle
  ``a^2 + b^2 - h^2 - L^2 = 2 a b cos(theta - theta0 + phi0)``; every finger (passive) joint is at
  ``theta - theta0`` and the gap joint at ``2 (t0 + r (sin theta - sin theta0))`` (pr2_mechanism_model's
  geometry). Velocities and efforts go through the linkage's Jacobian (power preserving; pr2_mechanism_model
  divides the motor torque by the reduction instead of multiplying, the same for the PR2's reduction 1).
  A mimic finger joint is given the drive finger's angle (as pr2_mechanism_model does); the simulator moves
  mimic joints by their own ``<mimic>`` anyway.

TransmissionSet holds the transmissions of one hardware component and converts all of them at once: the linear
kinds (simple, differential, wrist) as one matrix product, the gripper's linkage per gripper.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from robot_core.control.errors import ControlError

SIMPLE_TRANSMISSION_TYPES = ("transmission_interface/SimpleTransmission", "SimpleTransmission",
                             "pr2_mechanism_model/SimpleTransmission")
DIFFERENTIAL_TRANSMISSION_TYPES = ("transmission_interface/DifferentialTransmission", "DifferentialTransmission")
WRIST_TRANSMISSION_TYPES = ("pr2_mechanism_model/WristTransmission", "WristTransmission")
GRIPPER_TRANSMISSION_TYPES = ("pr2_mechanism_model/PR2GripperTransmission", "PR2GripperTransmission")
FOUR_BAR_TRANSMISSION_TYPES = ("transmission_interface/FourBarLinkageTransmission",)

Triple = tuple[np.ndarray, np.ndarray, np.ndarray]


def _nonzero(value: float, what: str) -> float:
    value = float(value)
    if value == 0.0 or not math.isfinite(value):
        raise ControlError(f"{what}: mechanical reduction must be finite and non-zero, got {value}")
    return value


@dataclass(frozen=True)
class SimpleTransmission:
    joint: str
    actuator: str
    reduction: float = 1.0
    offset: float = 0.0
    name: str = ""

    def __post_init__(self) -> None:
        _nonzero(self.reduction, f"transmission for joint '{self.joint}'")

    @property
    def joints(self) -> tuple[str, ...]:
        return (self.joint,)

    @property
    def actuators(self) -> tuple[str, ...]:
        return (self.actuator,)

    @property
    def matrix(self) -> np.ndarray:
        """joint position = matrix @ actuator position + offsets."""
        return np.array([[1.0 / self.reduction]])

    @property
    def offsets(self) -> np.ndarray:
        return np.array([self.offset])

    def actuator_to_joint(self, position: float, velocity: float, effort: float) -> tuple[float, float, float]:
        return position / self.reduction + self.offset, velocity / self.reduction, effort * self.reduction

    def joint_to_actuator(self, position: float, velocity: float, effort: float) -> tuple[float, float, float]:
        return (position - self.offset) * self.reduction, velocity * self.reduction, effort / self.reduction


@dataclass(frozen=True)
class DifferentialTransmission:
    """Two actuators, two joints, ros2_control's ``DifferentialTransmission`` formulas (module docstring)."""

    name: str
    joints: tuple[str, str]
    actuators: tuple[str, str]
    actuator_reduction: tuple[float, float] = (1.0, 1.0)
    joint_reduction: tuple[float, float] = (1.0, 1.0)
    joint_offset: tuple[float, float] = (0.0, 0.0)

    def __post_init__(self) -> None:
        if len(self.joints) != 2 or len(self.actuators) != 2:
            raise ControlError(f"transmission '{self.name}': a differential needs exactly two joints and two "
                               f"actuators, got joints {list(self.joints)} and actuators {list(self.actuators)}")
        for k in range(2):
            _nonzero(self.actuator_reduction[k], f"transmission '{self.name}' actuator '{self.actuators[k]}'")
            _nonzero(self.joint_reduction[k], f"transmission '{self.name}' joint '{self.joints[k]}'")

    @property
    def matrix(self) -> np.ndarray:
        ar, jr = self.actuator_reduction, self.joint_reduction
        return np.array([[1.0 / (2.0 * jr[0] * ar[0]), 1.0 / (2.0 * jr[0] * ar[1])],
                         [1.0 / (2.0 * jr[1] * ar[0]), -1.0 / (2.0 * jr[1] * ar[1])]])

    @property
    def offsets(self) -> np.ndarray:
        return np.array(self.joint_offset, dtype=float)

    def actuator_to_joint(self, position: Sequence[float], velocity: Sequence[float],
                          effort: Sequence[float]) -> Triple:
        return _linear_to_joint(self.matrix, self.offsets, position, velocity, effort)

    def joint_to_actuator(self, position: Sequence[float], velocity: Sequence[float],
                          effort: Sequence[float]) -> Triple:
        return _linear_to_actuator(self.matrix, self.offsets, position, velocity, effort)


def _linear_to_joint(m: np.ndarray, off: np.ndarray, p: Sequence[float], v: Sequence[float],
                     e: Sequence[float]) -> Triple:
    """joint = M a + off; velocities by M; efforts by M^-T (power preserving)."""
    return m @ np.asarray(p, float) + off, m @ np.asarray(v, float), np.linalg.solve(m.T, np.asarray(e, float))


def _linear_to_actuator(m: np.ndarray, off: np.ndarray, p: Sequence[float], v: Sequence[float],
                        e: Sequence[float]) -> Triple:
    return (np.linalg.solve(m, np.asarray(p, float) - off), np.linalg.solve(m, np.asarray(v, float)),
            m.T @ np.asarray(e, float))


def wrist_transmission(name: str, right: str, left: str, flex: str, roll: str, right_reduction: float,
                       left_reduction: float, flex_reduction: float, roll_reduction: float) -> DifferentialTransmission:
    """pr2_mechanism_model's WristTransmission as a differential (signs: module docstring)."""
    return DifferentialTransmission(name, (flex, roll), (right, left), (right_reduction, -left_reduction),
                                    (flex_reduction, -roll_reduction))


# pr2_mechanism_model's defaults for a PR2 gripper whose <gap_joint> omits them (alpha2 values)
GRIPPER_DEFAULTS = {"screw_reduction": 0.002, "gear_ratio": 29.16, "theta0": 2.97571 * math.pi / 180.0,
                    "phi0": 29.98717 * math.pi / 180.0, "t0": -0.19543e-3, "L0": 34.70821e-3, "h": 5.2e-3,
                    "a": 67.56801e-3, "b": 48.97193e-3, "r": 91.5e-3, "mechanical_reduction": 1.0}


@dataclass(frozen=True)
class GripperTransmission:
    """PR2 gripper linkage: one motor -> gap joint (optional) and finger joints (module docstring)."""

    name: str
    actuator: str
    gap_joint: str | None
    finger_joints: tuple[str, ...]
    params: dict[str, float] = field(default_factory=lambda: dict(GRIPPER_DEFAULTS))

    def __post_init__(self) -> None:
        if not self.finger_joints and self.gap_joint is None:
            raise ControlError(f"transmission '{self.name}': a PR2 gripper needs a gap joint or finger joints")
        _nonzero(self.params["mechanical_reduction"], f"transmission '{self.name}' gap joint")

    @property
    def joints(self) -> tuple[str, ...]:
        return ((self.gap_joint,) if self.gap_joint else ()) + self.finger_joints

    @property
    def actuators(self) -> tuple[str, ...]:
        return (self.actuator,)

    def _p(self, key: str) -> float:
        return float(self.params[key])

    def _revs_per_rad(self) -> float:
        """Motor revolutions per actuator radian."""
        return 1.0 / (2.0 * math.pi * self._p("mechanical_reduction"))

    def theta(self, motor_position: float) -> tuple[float, float]:
        """(linkage angle theta, d theta / d motor position)."""
        a, b, h = self._p("a"), self._p("b"), self._p("h")
        k = self._p("screw_reduction") / self._p("gear_ratio")
        length = self._p("L0") + motor_position * self._revs_per_rad() * k
        u = min(1.0, max(-1.0, (a * a + b * b - h * h - length * length) / (2.0 * a * b)))
        theta = self._p("theta0") - self._p("phi0") + math.acos(u)
        du = -2.0 * length * k * self._revs_per_rad() / (2.0 * a * b)
        return theta, -du / math.sqrt(max(1.0 - u * u, 1e-10))

    def motor_position(self, finger_angle: float) -> tuple[float, float]:
        """(motor position, d motor position / d finger angle) for a finger joint angle."""
        a, b, h = self._p("a"), self._p("b"), self._p("h")
        k = self._p("screw_reduction") / self._p("gear_ratio")
        arg = a * a + b * b - h * h - 2.0 * a * b * math.cos(finger_angle + self._p("phi0"))
        length = math.sqrt(max(arg, 1e-12))
        dlength = a * b * math.sin(finger_angle + self._p("phi0")) / length
        scale = 1.0 / (k * self._revs_per_rad())
        return (length - self._p("L0")) * scale, dlength * scale

    def _gap(self, theta: float) -> tuple[float, float]:
        """(gap, d gap / d theta)."""
        r = self._p("r")
        return 2.0 * (self._p("t0") + r * (math.sin(theta) - math.sin(self._p("theta0")))), 2.0 * r * math.cos(theta)

    def actuator_to_joint(self, position: Sequence[float], velocity: Sequence[float],
                          effort: Sequence[float]) -> Triple:
        p, v, e = float(position[0]), float(velocity[0]), float(effort[0])
        theta, dtheta = self.theta(p)
        pos, vel, eff = [], [], []
        if self.gap_joint:
            gap, dgap = self._gap(theta)
            jac = dgap * dtheta  # d gap / d motor
            pos.append(gap)
            vel.append(jac * v)
            eff.append(e / jac if jac != 0.0 else math.nan)
        for _ in self.finger_joints:
            pos.append(theta - self._p("theta0"))
            vel.append(dtheta * v)
            eff.append(e / dtheta if dtheta != 0.0 else math.nan)
        return np.array(pos), np.array(vel), np.array(eff)

    def joint_to_actuator(self, position: Sequence[float], velocity: Sequence[float],
                          effort: Sequence[float]) -> Triple:
        """From the first finger joint with a finite position (else the gap joint)."""
        joints = self.joints
        start = 1 if self.gap_joint else 0
        for k in [*range(start, len(joints)), *([0] if self.gap_joint else [])]:
            if math.isfinite(position[k]):
                break
        else:
            return np.full(1, math.nan), np.full(1, math.nan), np.full(1, math.nan)
        if self.gap_joint and k == 0:
            r = self._p("r")
            s = min(1.0, max(-1.0, (position[0] / 2.0 - self._p("t0")) / r + math.sin(self._p("theta0"))))
            angle = math.asin(s) - self._p("theta0")
            motor, dmotor = self.motor_position(angle)
            dgap = self._gap(angle + self._p("theta0"))[1]
            jac = dmotor / dgap if dgap != 0.0 else math.nan  # d motor / d gap
        else:
            motor, jac = self.motor_position(float(position[k]))
        return np.array([motor]), np.array([jac * float(velocity[k])]), np.array(
            [float(effort[k]) / jac if jac else math.nan])


Transmission = SimpleTransmission | DifferentialTransmission | GripperTransmission


def _param_float(raw: str, what: str) -> float:
    try:
        return float(raw)
    except ValueError:
        raise ControlError(f"{what}: '{raw}' is not a number") from None


def transmission_from_model(tr: object, block_joints: set[str] | None = None) -> Transmission:
    """One RobotModel ``Transmission`` (either URDF form) -> its runtime transmission; ControlError naming the
    transmission (and its file and line) when it cannot work."""
    ttype = tr.type  # type: ignore[attr-defined]
    src = getattr(tr, "source", None)
    where = f"transmission '{tr.name}'"  # type: ignore[attr-defined]
    if src is not None and getattr(src, "line", None) is not None:
        where += f" ({src.file}:{src.line})"
    joints, actuators = list(tr.joints), list(tr.actuators)  # type: ignore[attr-defined]
    if ttype in SIMPLE_TRANSMISSION_TYPES:
        if len(joints) != 1 or len(actuators) != 1:
            raise ControlError(f"{where}: a SimpleTransmission needs exactly one joint and one actuator, got "
                               f"joints {[j.name for j in joints]} and actuators {[a.name for a in actuators]}")
        return SimpleTransmission(joints[0].name, actuators[0].name,
                                  _nonzero(actuators[0].mechanical_reduction, where),
                                  float(getattr(joints[0], "offset", 0.0)), tr.name)  # type: ignore[attr-defined]
    if ttype in DIFFERENTIAL_TRANSMISSION_TYPES + WRIST_TRANSMISSION_TYPES:
        if len(joints) != 2 or len(actuators) != 2:
            raise ControlError(f"{where} of type '{ttype}' needs exactly two joints and two actuators, got joints "
                               f"{[j.name for j in joints]} and actuators {[a.name for a in actuators]}")
        joints = _by_role(joints, ("joint1", "joint2") if ttype in DIFFERENTIAL_TRANSMISSION_TYPES
                          else ("flex", "roll"), where)
        actuators = _by_role(actuators, ("actuator1", "actuator2") if ttype in DIFFERENTIAL_TRANSMISSION_TYPES
                             else ("right", "left"), where)
        jr = tuple(_nonzero(getattr(j, "mechanical_reduction", 1.0), f"{where} joint '{j.name}'") for j in joints)
        ar = tuple(_nonzero(a.mechanical_reduction, f"{where} actuator '{a.name}'") for a in actuators)
        if ttype in WRIST_TRANSMISSION_TYPES:
            return wrist_transmission(tr.name, actuators[0].name, actuators[1].name,  # type: ignore[attr-defined]
                                      joints[0].name, joints[1].name, ar[0], ar[1], jr[0], jr[1])
        return DifferentialTransmission(tr.name, (joints[0].name, joints[1].name),  # type: ignore[attr-defined]
                                        (actuators[0].name, actuators[1].name), (ar[0], ar[1]), (jr[0], jr[1]),
                                        (float(joints[0].offset), float(joints[1].offset)))
    if ttype in GRIPPER_TRANSMISSION_TYPES:
        if len(actuators) != 1:
            raise ControlError(f"{where}: a PR2 gripper transmission needs exactly one actuator, got "
                               f"{[a.name for a in actuators]}")
        gap = [j for j in joints if j.role == "gap"]
        params = dict(GRIPPER_DEFAULTS)
        for key in GRIPPER_DEFAULTS:
            raw = getattr(tr, "params", {}).get(key)
            if raw is not None:
                params[key] = _param_float(raw, f"{where} <gap_joint> attribute '{key}'")
        fingers = tuple(j.name for j in joints if j.role != "gap")
        gap_name = gap[0].name if gap else None
        if block_joints is not None and gap_name is not None and gap_name not in block_joints:
            gap_name = None
        return GripperTransmission(tr.name, actuators[0].name, gap_name, fingers, params)  # type: ignore[attr-defined]
    known = SIMPLE_TRANSMISSION_TYPES + DIFFERENTIAL_TRANSMISSION_TYPES + WRIST_TRANSMISSION_TYPES + \
        GRIPPER_TRANSMISSION_TYPES
    raise ControlError(f"{where}: type '{ttype}' is not supported (supported: {', '.join(known)})")


def _by_role(items: list, roles: tuple[str, str], where: str) -> list:
    """Order two joints/actuators by their roles when both carry one; document order otherwise."""
    got = [getattr(i, "role", "") for i in items]
    if all(got):
        if sorted(got) != sorted(roles):
            raise ControlError(f"{where}: roles {got} of {[i.name for i in items]}; expected {list(roles)}")
        return sorted(items, key=lambda i: roles.index(i.role))
    return items


def _masked(matrix: np.ndarray, depends: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``matrix @ x`` where an output fed by a non-finite input is NaN and the others stay finite (the
    matrices are block diagonal: one block per transmission)."""
    bad = ~np.isfinite(x)
    if not bad.any():
        return matrix @ x
    y = matrix @ np.where(bad, 0.0, x)
    y[depends @ bad.astype(float) > 0.0] = np.nan
    return y


class TransmissionSet:
    """The transmissions of one hardware component: names both ways and vectorised conversions."""

    def __init__(self, transmissions: Iterable[Transmission] = ()):
        self.items: list[Transmission] = list(transmissions)
        self.by_joint: dict[str, Transmission] = {}
        self.by_actuator: dict[str, Transmission] = {}
        for t in self.items:
            for j in t.joints:
                if j in self.by_joint:
                    raise ControlError(f"joint '{j}' appears in two transmissions; each joint and each actuator "
                                       "may appear in one transmission only")
                self.by_joint[j] = t
            for a in t.actuators:
                if a in self.by_actuator:
                    raise ControlError(f"actuator '{a}' appears in two transmissions; each joint and each actuator "
                                       "may appear in one transmission only")
                self.by_actuator[a] = t
        self.joint_names = [j for t in self.items for j in t.joints]
        self.actuator_names = [a for t in self.items for a in t.actuators]
        linear = [t for t in self.items if not isinstance(t, GripperTransmission)]
        j_index = {n: k for k, n in enumerate(self.joint_names)}
        a_index = {n: k for k, n in enumerate(self.actuator_names)}
        self._lin_j = np.array([j_index[j] for t in linear for j in t.joints], dtype=np.intp)
        self._lin_a = np.array([a_index[a] for t in linear for a in t.actuators], dtype=np.intp)
        n_j, n_a = len(self._lin_j), len(self._lin_a)
        self._m = np.zeros((n_j, n_a))
        self._off = np.zeros(n_j)
        r = c = 0
        for t in linear:
            m = t.matrix
            self._m[r:r + m.shape[0], c:c + m.shape[1]] = m
            self._off[r:r + m.shape[0]] = t.offsets
            r, c = r + m.shape[0], c + m.shape[1]
        self._m_inv = np.linalg.inv(self._m) if n_j else self._m
        # which outputs depend on which inputs, so a NaN (not commanded) stays inside its own transmission
        self._dep = (self._m != 0.0).astype(float)
        self._dep_t = self._dep.T.copy()
        self._nonlinear = [(t, np.array([j_index[j] for j in t.joints], dtype=np.intp),
                            np.array([a_index[a] for a in t.actuators], dtype=np.intp))
                           for t in self.items if isinstance(t, GripperTransmission)]

    @staticmethod
    def from_robot_transmissions(transmissions: Sequence, block_joints: set[str] | None = None) -> TransmissionSet:
        """Build from RobotModel.transmissions (either URDF form); ControlError naming the one that cannot work."""
        return TransmissionSet(transmission_from_model(tr, block_joints) for tr in transmissions)

    def __bool__(self) -> bool:
        return bool(self.items)

    @property
    def all_simple(self) -> bool:
        return all(isinstance(t, SimpleTransmission) for t in self.items)

    def actuator_name(self, joint: str) -> str:
        t = self.by_joint.get(joint)
        return t.actuator if isinstance(t, SimpleTransmission) else joint

    def joint_name(self, actuator: str) -> str:
        t = self.by_actuator.get(actuator)
        return t.joint if isinstance(t, SimpleTransmission) else actuator

    def arrays(self, joints: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(reduction, offset) per joint of a simple transmission; other joints get (1, 0)."""
        simple = {j: t for j, t in self.by_joint.items() if isinstance(t, SimpleTransmission)}
        red = np.array([simple[j].reduction if j in simple else 1.0 for j in joints])
        off = np.array([simple[j].offset if j in simple else 0.0 for j in joints])
        return red, off

    # --- all transmissions at once (arrays in joint_names / actuator_names order) ---------------------
    def stacked_joint_to_actuator(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The linear transmissions' :meth:`joint_to_actuator` as one product, for a caller converting every
        cycle: (joint indices, actuator indices, matrix, offsets) such that for the joints' stacked positions,
        velocities and efforts ``x`` (each in joint-index order) ``matrix @ (x - offsets)`` is the actuators'
        stacked positions, velocities and efforts. Finite inputs only (NaN handling is joint_to_actuator's)."""
        n_j, n_a = len(self._lin_j), len(self._lin_a)
        matrix = np.zeros((3 * n_a, 3 * n_j))
        for f, m in enumerate((self._m_inv, self._m_inv, self._m.T)):
            matrix[f * n_a:(f + 1) * n_a, f * n_j:(f + 1) * n_j] = m
        offsets = np.concatenate([self._off, np.zeros(2 * n_j)])
        return self._lin_j, self._lin_a, matrix, offsets

    @property
    def nonlinear(self) -> list[tuple[Transmission, np.ndarray, np.ndarray]]:
        """(transmission, joint indices, actuator indices) of each transmission that is not a matrix."""
        return self._nonlinear

    def joint_to_actuator(self, position: np.ndarray, velocity: np.ndarray, effort: np.ndarray) -> Triple:
        n = len(self.actuator_names)
        out = (np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan))
        if len(self._lin_j):
            j, a = self._lin_j, self._lin_a
            out[0][a] = _masked(self._m_inv, self._dep_t, position[j] - self._off)
            out[1][a] = _masked(self._m_inv, self._dep_t, velocity[j])
            out[2][a] = _masked(self._m.T, self._dep_t, effort[j])
        for t, j, a in self._nonlinear:
            p, v, e = t.joint_to_actuator(position[j], velocity[j], effort[j])
            out[0][a], out[1][a], out[2][a] = p, v, e
        return out

    def actuator_to_joint(self, position: np.ndarray, velocity: np.ndarray, effort: np.ndarray) -> Triple:
        n = len(self.joint_names)
        out = (np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan))
        if len(self._lin_j):
            j, a = self._lin_j, self._lin_a
            out[0][j] = _masked(self._m, self._dep, position[a]) + self._off
            out[1][j] = _masked(self._m, self._dep, velocity[a])
            out[2][j] = _masked(self._m_inv.T, self._dep, effort[a])
        for t, j, a in self._nonlinear:
            p, v, e = t.actuator_to_joint(position[a], velocity[a], effort[a])
            out[0][j], out[1][j], out[2][j] = p, v, e
        return out
