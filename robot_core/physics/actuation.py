"""Per-joint actuation of the simulated robot: a position servo, a velocity servo or a pure effort, per joint.

Every actuated (non-mimic, scalar) joint gets one MuJoCo ``general`` actuator with an affine gain and bias.
Which command the joint obeys is decided by what was last commanded, and switching only rewrites that
actuator's gain/bias parameters, so the servo itself runs inside MuJoCo's C step (and, with the
``implicitfast`` integrator, its damping term is integrated implicitly, which keeps stiff servos stable):

==========  ==========================  ============================================================
mode        ``ctrl`` (joint units)      joint effort produced (before the effort limit)
==========  ==========================  ============================================================
position    servo reference r [rad|m]   ``kp (r - q) - kd qd + kd v_ff + losses(v_ff) + tau_ff + g(q)``
velocity    velocity reference [/s]     ``kv (v - qd) + tau_ff + g(q) + losses(v)``
effort      effort [N m | N]            ``tau``
==========  ==========================  ============================================================

``g(q)`` is gravity compensation done by MuJoCo itself (``body gravcomp`` on the robot's links, routed to the
joints' actuator force with ``actuatorgravcomp``), exact at every step and costing no Python, so a servo
holds and tracks without sagging. An effort-commanded joint must feel plain physics, so compensation is
switched off for every link it carries (its subtree, and its mimic joints' subtrees); a servo above such a
joint then holds that part of the load with its stiffness alone (a small steady-state error). On joints
without an actuator -- a floating base's free joint, a non-root floating joint -- the compensation's share is
cancelled every step (from the previous step's value; for a free joint the total weight part is exact), so a
floating robot as a whole still falls. ``losses(v)`` is the joint's own URDF
damping and friction at the commanded velocity, so a velocity servo tracks exactly in steady state, and so does
a position servo given a velocity feed-forward (a trajectory controller claiming position and velocity): else
the wrist joints of a light arm, whose inertia-based gains are small, lag by (damping v + friction) / kp.

Limits: the total joint effort (servo + compensation) is clamped to the URDF ``<limit effort>`` by the
joint's actuator-force range (a joint without an effort limit is unclamped, with a warning), and so is every
effort command and feed-forward before it reaches MuJoCo's controls (which MuJoCo zeroes, all of them, when one is
huge). Velocity
references are clamped to ``<limit velocity>``; a position servo's reference moves towards its target along a
time-optimal profile within the velocity limit and an acceleration limit (a share of what the effort limit
can give), so a step command neither exceeds the velocity limit nor saturates the motor, and because the
servo damps the joint's own velocity the joint approaches the target from one side (no overshoot) unless the
caller gives a velocity feed-forward. Effort-commanded joints faster than their velocity limit are braked
(within the effort limit) like a drive's velocity limiter. Position targets are clamped into the joint range.

Coordinates: every scalar joint is one coordinate named after it; a planar joint is three, named like the
builder's MuJoCo joints ``<joint>:u``, ``<joint>:v`` (translations in the plane) and ``<joint>:rot`` (rotation
about the plane normal), each actuated like a scalar joint with the planar joint's effort and velocity limits
(no position range). Floating joints other than the base stay unactuated (passive).

Idle joints: after a reset every actuated coordinate holds its position in position mode, except a joint whose
``<ros2_control>`` command interfaces include effort but neither position nor velocity: such a joint has
nothing to hold a position with, so it idles in effort mode at zero effort until commanded.

Transmissions: a ``SimpleTransmission`` with ``mechanical_reduction`` n means actuator effort * n = joint
effort and joint position * n = actuator position. A transmission coupling several joints or actuators
(differential, PR2 wrist and gripper) leaves its joints at reduction 1 here: the simulation is joint space, and
the controller manager's hardware components propagate actuator-side interfaces through it
(control/transmissions.py). All commands, gains, limits and measured efforts here
are in *joint* space; the reduction is the actuator's ``gear`` (= n), so the motor-side effort is the joint
effort / n.

Default gains come from the inertia each joint sees at the initial pose (the mass-matrix diagonal, a master
joint's mimics included): with a bandwidth w, ``kp = I w^2``, ``kd = 2 zeta I w`` (zeta = 1: critically
damped) and the velocity loop ``kv = I w``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum

import mujoco
import numpy as np

from robot_core.model.robot_model import Joint, RobotModel, RobotModelWarning
from robot_core.physics.mjcf_spec import mjcf_source_of

ACTUATOR_PREFIX = "rc_actuator/"
GAIN_KEYS = ("kp", "kd", "kv")
# Stand-in for "no acceleration limit" that keeps the reference profile's arithmetic finite.
UNLIMITED_ACCEL = 1e9
POSITION, VELOCITY, EFFORT = 0, 1, 2
PLANAR_COORDINATES = ("u", "v", "rot")


class CommandMode(IntEnum):
    POSITION = POSITION
    VELOCITY = VELOCITY
    EFFORT = EFFORT


@dataclass(frozen=True)
class JointActuatorLimits:
    """Joint-space limits of one actuated joint; ``inf`` where the URDF gives none."""

    joint: str
    reduction: float
    effort: float
    velocity: float
    lower: float
    upper: float


@dataclass(frozen=True)
class ServoTuning:
    """How default gains are chosen: servo bandwidth and damping ratio."""

    bandwidth_hz: float = 10.0
    damping_ratio: float = 1.0
    # Keep w * dt below this so the explicit part of the servo (the P term) stays accurate and stable.
    max_omega_dt: float = 0.2
    # Share of the effort limit a position servo's reference may ask for as acceleration (the rest is left
    # for gravity, coupling and tracking); this is what keeps large steps from saturating and overshooting.
    effort_share: float = 0.5


def joint_coordinates(robot: RobotModel) -> dict[str, Joint]:
    """Coordinate name -> its URDF joint, document order: scalar joints (mimic included) and planar joints'
    three coordinates (see the module docstring)."""
    out: dict[str, Joint] = {}
    for j in robot.joints.values():
        if j.is_scalar:
            out[j.name] = j
        elif j.type == "planar":
            for suffix in PLANAR_COORDINATES:
                out[f"{j.name}:{suffix}"] = j
    return out


def actuated_coordinates(robot: RobotModel) -> list[str]:
    """The coordinates that get an actuator: non-mimic scalar joints and planar coordinates, document order."""
    return [n for n, j in joint_coordinates(robot).items() if not (j.is_scalar and j.mimic is not None)]


def idles_in_effort(robot: RobotModel, coordinate: str) -> bool:
    """Whether the joint's ros2_control command interfaces are effort only (see the module docstring), or it is
    a joint of an MJCF robot that the file does not actuate."""
    joint = joint_coordinates(robot).get(coordinate)
    if joint is None:
        return False
    source, own_name = mjcf_source_of(robot, joint.name)
    if source is not None and own_name not in source.servos:
        return True  # an MJCF joint without an actuator is passive, as in the file
    names = {i.name for block in robot.ros2_control for rj in block.joints if rj.name == joint.name
             for i in rj.command_interfaces}
    return "effort" in names and not names & {"position", "velocity"}


def transmission_reductions(robot: RobotModel) -> dict[str, float]:
    """Joint name -> mechanical reduction from the robot's one-joint-one-actuator transmissions (joints not
    listed: 1). Coupling transmissions (differential, PR2 wrist and gripper) leave their joints at 1: the
    controller manager propagates them (control/transmissions.py), the simulation stays in joint space."""
    out: dict[str, float] = {}
    for tr in robot.transmissions:
        if len(tr.joints) != 1 or len(tr.actuators) != 1 or tr.joints[0].role in ("gap", "passive"):
            continue
        reduction = float(tr.actuators[0].mechanical_reduction)
        joint = tr.joints[0].name
        if not math.isfinite(reduction) or reduction == 0.0:
            raise ValueError(f"{tr.source}: transmission '{tr.name}' of joint '{joint}' has mechanical_reduction "
                             f"{reduction}; it must be finite and non-zero")
        if joint in robot.joints:
            out[joint] = reduction
    return out


def joint_actuator_limits(robot: RobotModel, joint_names: list[str]) -> list[JointActuatorLimits]:
    """Limits of the actuated coordinates, warning once per joint that has no usable effort limit."""
    reductions = transmission_reductions(robot)
    coordinates = joint_coordinates(robot)
    out: list[JointActuatorLimits] = []
    warned: set[str] = set()
    for name in joint_names:
        joint = coordinates[name]
        lim = joint.limit
        effort = float(lim.effort) if lim is not None and lim.effort and lim.effort > 0 else math.inf
        velocity = float(lim.velocity) if lim is not None and lim.velocity and lim.velocity > 0 else math.inf
        if math.isinf(effort) and joint.name not in warned:
            warned.add(joint.name)
            warnings.warn(
                RobotModelWarning(f"{joint.source}: joint '{joint.name}' has no effort limit; its actuator is "
                                  "unclamped"),
                stacklevel=2,
            )
        lower, upper = -math.inf, math.inf
        if (joint.is_scalar and joint.type != "continuous" and lim is not None and lim.lower is not None
                and lim.upper is not None and lim.upper > lim.lower):
            lower, upper = float(lim.lower), float(lim.upper)
        out.append(JointActuatorLimits(name, reductions.get(name, 1.0), effort, velocity, lower, upper))
    return out


def add_actuators(spec: mujoco.MjSpec, limits: list[JointActuatorLimits], robot: RobotModel, *,
                  gravity_compensation: bool = True) -> None:
    """One affine ``general`` actuator per actuated joint (``rc_actuator/<joint>``, gains set at run time);
    the joint's total actuator force limited to its effort limit; gravity compensation on the robot's links,
    routed to the actuated and mimic joints."""
    for lim in limits:
        act = spec.add_actuator(name=ACTUATOR_PREFIX + lim.joint, target=lim.joint)
        act.trntype = mujoco.mjtTrn.mjTRN_JOINT
        act.gear[0] = lim.reduction
        act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
        act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_FALSE
        joint = spec.joint(lim.joint)
        if math.isfinite(lim.effort):
            joint.actfrclimited = mujoco.mjtLimited.mjLIMITED_TRUE
            joint.actfrcrange = [-lim.effort, lim.effort]
        else:
            joint.actfrclimited = mujoco.mjtLimited.mjLIMITED_FALSE
        joint.actgravcomp = gravity_compensation
    if not gravity_compensation:
        return
    for name, j in robot.joints.items():
        if j.is_scalar and j.mimic is not None:
            spec.joint(name).actgravcomp = True
    for name in robot.links:
        body = spec.body(name)
        if body is not None and name != "world":
            body.gravcomp = 1.0


@dataclass(frozen=True)
class MimicCoupling:
    """Mimic dofs driven through a master's actuator: ``act[k]`` drives dof ``dof[k]`` with ``multiplier[k]``."""

    act: np.ndarray
    dof: np.ndarray
    multiplier: np.ndarray

    @staticmethod
    def empty() -> MimicCoupling:
        return MimicCoupling(np.zeros(0, dtype=int), np.zeros(0, dtype=int), np.zeros(0))


def joint_inertia(model: mujoco.MjModel, data: mujoco.MjData, dof_ids: np.ndarray,
                  mimics: MimicCoupling | None = None) -> np.ndarray:
    """Inertia each actuated joint sees with the other joints held, at ``data``'s current pose.

    That is the mass-matrix diagonal, except that a master joint also moves its mimic joints: with c the
    master's column (1 on its dof, the multiplier on each mimic dof) it sees c^T M c.
    """
    mujoco.mj_forward(model, data)
    full = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, full)
    c = np.zeros((model.nv, len(dof_ids)))
    c[dof_ids, np.arange(len(dof_ids))] = 1.0
    if mimics is not None:
        c[mimics.dof, mimics.act] += mimics.multiplier
    return np.maximum(np.einsum("ij,ik,kj->j", c, full, c), 1e-9)


def default_gains(inertia: np.ndarray, timestep: float, tuning: ServoTuning) -> tuple[np.ndarray, ...]:
    """(kp, kd, kv) per joint: a critically damped servo of the tuned bandwidth on each joint's inertia."""
    omega = min(2.0 * math.pi * tuning.bandwidth_hz, tuning.max_omega_dt / timestep)
    kp = inertia * omega**2
    kd = 2.0 * tuning.damping_ratio * inertia * omega
    kv = inertia * omega
    return kp, kd, kv


def acceleration_limits(inertia: np.ndarray, effort_limit: np.ndarray, tuning: ServoTuning) -> np.ndarray:
    """Acceleration allowed to a position servo's reference: a share of what the effort limit can give."""
    return tuning.effort_share * effort_limit / inertia


def apply_gain_overrides(
    gains: Mapping[str, Mapping[str, float]] | None,
    joint_names: list[str],
    kp: np.ndarray,
    kd: np.ndarray,
    kv: np.ndarray,
) -> None:
    """Overwrite defaults in place from ``{joint: {"kp": .., "kd": .., "kv": ..}}`` (any subset of keys)."""
    if not gains:
        return
    index = {n: i for i, n in enumerate(joint_names)}
    for joint, values in gains.items():
        if joint not in index:
            raise ValueError(f"gains given for '{joint}', which is not an actuated joint (actuated: {joint_names})")
        if not isinstance(values, Mapping):
            raise ValueError(f"gains of joint '{joint}' must be a mapping with keys {GAIN_KEYS}, got {values!r}")
        for key, value in values.items():
            if key not in GAIN_KEYS:
                raise ValueError(f"unknown gain '{key}' for joint '{joint}' (expected {', '.join(GAIN_KEYS)})")
            v = float(value)
            if not math.isfinite(v) or v < 0.0:
                raise ValueError(f"gain '{key}' of joint '{joint}' must be finite and >= 0, got {value!r}")
            {"kp": kp, "kd": kd, "kv": kv}[key][index[joint]] = v


class Actuation:
    """Run-time state of the joint servos: command modes, targets, servo references.

    Arrays are indexed by actuator, in the order of ``limits`` (= the actuated joint order). ``before_step``
    must be called before each ``mj_step``; it does no work unless a position reference is on its way, a joint
    is effort-commanded or the robot has unactuated joints (a floating base). Everything is vectorised over joints.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        data: mujoco.MjData,
        limits: list[JointActuatorLimits],
        qpos_adr: np.ndarray,
        dof_adr: np.ndarray,
        gains: tuple[np.ndarray, np.ndarray, np.ndarray],
        accel_limit: np.ndarray | None = None,
        velocity_guard_gain: np.ndarray | None = None,
        mimics: MimicCoupling | None = None,
        *,
        gravity_compensation: bool = True,
        passive_dofs: np.ndarray | None = None,
    ):
        self.model = model
        self.data = data
        self.joint_names = [lim.joint for lim in limits]
        n = self.n = len(limits)
        self.act_ids = np.array([model.actuator(ACTUATOR_PREFIX + name).id for name in self.joint_names], dtype=int)
        if n and not np.array_equal(self.act_ids, np.arange(n) + self.act_ids[0]):
            raise RuntimeError("robot actuators must be contiguous in the model")
        first = int(self.act_ids[0]) if n else 0
        self._act_slice = slice(first, first + n)
        self.qpos_adr = np.asarray(qpos_adr, dtype=int)
        self.dof_adr = np.asarray(dof_adr, dtype=int)
        self.gear = np.array([lim.reduction for lim in limits], dtype=float)
        self._inv_gear = 1.0 / self.gear
        self.effort_limit = np.array([lim.effort for lim in limits], dtype=float)
        self.velocity_limit = np.array([lim.velocity for lim in limits], dtype=float)
        self.lower = np.array([lim.lower for lim in limits], dtype=float)
        self.upper = np.array([lim.upper for lim in limits], dtype=float)
        self.kp, self.kd, self.kv = (np.array(g, dtype=float) for g in gains)
        self.gravity_compensation = gravity_compensation
        # Passive joint losses a velocity servo feeds forward, so it tracks without a steady-state error.
        self.damping = model.dof_damping[self.dof_adr].copy()
        self.frictionloss = model.dof_frictionloss[self.dof_adr].copy()
        self.guard_gain = np.zeros(n) if velocity_guard_gain is None else np.asarray(velocity_guard_gain, float)
        self.mimics = mimics if mimics is not None else MimicCoupling.empty()
        passive = np.zeros(0, dtype=int) if passive_dofs is None else np.asarray(passive_dofs, dtype=int)
        self._passive_dofs = passive if gravity_compensation and passive.size else None
        self._gravcomp = model.body_gravcomp
        self._robot_bodies = self._gravcomp > 0  # as compiled: the robot's links
        self._carried = self._carried_bodies(model) if gravity_compensation else None
        # Reference profile constants.
        dt = float(model.opt.timestep)
        self._dt = dt
        accel = np.full(n, np.inf) if accel_limit is None else np.asarray(accel_limit, dtype=float)
        self.accel_limit = np.minimum(accel, UNLIMITED_ACCEL)
        self._a_dt = self.accel_limit * dt
        self._two_a = 2.0 * self.accel_limit
        self._half_a_dt = 0.5 * self._a_dt
        self._half_a_dt_sq = self._half_a_dt**2
        self._v_dt = self.velocity_limit * dt
        # State.
        self.mode = np.full(n, POSITION, dtype=int)
        self.target = np.zeros(n)  # position target (after range clamp)
        self.reference = np.zeros(n)  # servo reference, moving towards target
        self.reference_velocity = np.zeros(n)
        self.velocity_cmd = np.zeros(n)  # velocity feed-forward (position mode) / reference (velocity mode)
        self.effort_cmd = np.zeros(n)  # effort (effort mode) / effort feed-forward (servo modes)
        self._moving = np.zeros(n, dtype=bool)  # position-mode joints whose reference is not at rest on target
        self._any_moving = False
        self._feedforward = False  # whether any velocity/effort command or feed-forward may be non-zero
        self._all = np.arange(n)
        # Mode bookkeeping: _mode_version changes whenever any mode changes, so a command repeating the last
        # (joint set, mode) can skip comparing modes.
        self._mode_version = 0
        self._mode_checked: dict[tuple[bytes | None, int], int] = {}
        self._effort_idx = np.zeros(0, dtype=int)
        self._guard_idx = np.zeros(0, dtype=int)
        self._gainprm = model.actuator_gainprm[self._act_slice]
        self._biasprm = model.actuator_biasprm[self._act_slice]
        self._ctrl = data.ctrl[self._act_slice]
        self._build_tables()
        self._write_mode_params(np.arange(n))

    # ------------------------------------------------------------------ commands
    def reset(self, positions: np.ndarray, idle_in_effort: np.ndarray | None = None) -> None:
        """Every joint: position mode holding ``positions`` (those in the mask ``idle_in_effort``: effort mode);
        efforts and feed-forwards zero."""
        self.mode[:] = POSITION
        if idle_in_effort is not None:
            self.mode[idle_in_effort] = EFFORT
        self.target[:] = np.clip(positions, self.lower, self.upper)
        self.reference[:] = positions
        self.reference_velocity[:] = 0.0
        self.velocity_cmd[:] = 0.0
        self.effort_cmd[:] = 0.0
        self._feedforward = False
        self._moving[:] = (self.reference != self.target) & (self.mode == POSITION)
        self._any_moving = bool(self._moving.any())
        self._write_mode_params(np.arange(self.n))

    def command(
        self,
        idx: np.ndarray | slice,
        positions: np.ndarray | None,
        velocities: np.ndarray | None,
        efforts: np.ndarray | None,
    ) -> None:
        """Apply validated commands to actuators ``idx`` (indices, or ``slice(None)`` for all of them, which is
        cheaper); the mode follows from which arrays are given.

        positions given: position servo (velocities, efforts, if given, are feed-forwards);
        else velocities: velocity servo (efforts, if given, feed-forward); else efforts: pure effort.
        """
        if efforts is not None:  # an effort command or feed-forward never asks for more than the motor has
            elim = self.effort_limit[idx]
            efforts = np.minimum(np.maximum(efforts, -elim), elim)
        if positions is not None:
            new = POSITION
        elif velocities is not None:
            new = VELOCITY
        elif efforts is not None:
            new = EFFORT
        else:
            return
        key = (idx.tobytes() if isinstance(idx, np.ndarray) else None, new)
        if self._mode_checked.get(key) != self._mode_version:  # modes may differ: compare
            changed = self.mode[idx] != new
            if changed.any():
                self._switch_mode(self._all[idx][changed], new)
            self._mode_checked[key] = self._mode_version
        if new == POSITION:
            tgt = np.minimum(np.maximum(positions, self.lower[idx]), self.upper[idx])
            self.target[idx] = tgt
            self._start_reference(idx, tgt)
            if velocities is None and efforts is None:
                if self._feedforward:  # clear feed-forwards of earlier commands (skipped while none is set)
                    self.velocity_cmd[idx] = 0.0
                    self.effort_cmd[idx] = 0.0
                    self._biasprm[idx, 0] = 0.0
                    self._feedforward = bool(self.velocity_cmd.any() or self.effort_cmd.any())
                return
            if velocities is None:
                self.velocity_cmd[idx] = 0.0
                extra = efforts
            else:
                vlim = self.velocity_limit[idx]
                v = np.minimum(np.maximum(velocities, -vlim), vlim)
                self.velocity_cmd[idx] = v
                extra = (self.kd[idx] + self.damping[idx]) * v + self.frictionloss[idx] * np.sign(v)
                if efforts is not None:
                    extra = extra + efforts
            self.effort_cmd[idx] = 0.0 if efforts is None else efforts
            self._biasprm[idx, 0] = extra * self._inv_gear[idx]
            self._feedforward = True
        elif new == VELOCITY:
            vlim = self.velocity_limit[idx]
            v = np.minimum(np.maximum(velocities, -vlim), vlim)
            self.velocity_cmd[idx] = v
            self.effort_cmd[idx] = 0.0 if efforts is None else efforts
            extra = self.damping[idx] * v + self.frictionloss[idx] * np.sign(v) + self.effort_cmd[idx]
            self._biasprm[idx, 0] = extra * self._inv_gear[idx]
            self._ctrl[idx] = v
            self._moving[idx] = False
            self._feedforward = True
        else:
            self.effort_cmd[idx] = efforts
            self._ctrl[idx] = efforts
            self._moving[idx] = False
            self._feedforward = True

    def stream_positions(self, idx: np.ndarray | slice, positions: np.ndarray, validated: bool = True) -> bool:
        """:meth:`command` with positions only, for the case a 1 kHz stream hits nearly every time: every joint
        of ``idx`` already in position mode, no feed-forward set, no reference on its way, and each new target
        within one step's travel of its reference. Then the references jump to the targets with a handful of
        numpy calls; returns False, having changed nothing, when the case does not hold (use :meth:`command`).

        ``validated``: the caller proved ``positions`` finite and not absurd; the jump test is then on the clamped
        targets, so a stream pressing beyond a limit qualifies. Otherwise it is on the raw ``positions``, which NaN
        and inf fail wherever one step's travel (:attr:`step_travel`) is finite, and a value beyond a limit by
        more than one step's travel does not qualify. ``idx`` is indices or ``slice(None)``.
        """
        if self._any_moving or self._feedforward:
            return False
        if idx.__class__ is slice:
            key = (None, POSITION)
            lower, upper, v_dt = self.lower, self.upper, self._v_dt
        else:
            key = (idx.tobytes(), POSITION)
            lower, upper, v_dt = self.lower[idx], self.upper[idx], self._v_dt[idx]
        if self._mode_checked.get(key) != self._mode_version:
            return False
        # (np.count_nonzero: ndarray.all's Python wrapper costs more than the test of 8 numbers.)
        n = len(positions)
        if validated:
            tgt = np.minimum(np.maximum(positions, lower), upper)
            if np.count_nonzero(np.abs(tgt - self.reference[idx]) <= v_dt) != n:
                return False
        else:
            if np.count_nonzero(np.abs(positions - self.reference[idx]) <= v_dt) != n:
                return False
            tgt = np.minimum(np.maximum(positions, lower), upper)
        self.target[idx] = tgt
        self.reference[idx] = tgt
        self._ctrl[idx] = tgt
        return True

    def stop_motion(self, only: np.ndarray | None = None) -> np.ndarray:
        """Velocity-mode joints to zero velocity (and no effort feed-forward), effort-mode joints with a non-zero
        effort to a position hold where they are (bumpless); returns the indices changed. What a drive does
        when its command stream stops. ``only``: a boolean mask of the joints concerned (one robot of a group)."""
        mask = np.ones(self.mode.shape, dtype=bool) if only is None else only
        vel = np.flatnonzero(mask & (self.mode == VELOCITY) & ((self.velocity_cmd != 0.0) | (self.effort_cmd != 0.0)))
        eff = np.flatnonzero(mask & (self.mode == EFFORT) & (self.effort_cmd != 0.0))
        if vel.size:
            self.command(vel, None, np.zeros(vel.size), None)
        if eff.size:
            q = self.data.qpos[self.qpos_adr[eff]]
            self.command(eff, np.clip(q, self.lower[eff], self.upper[eff]), None, None)
        return np.concatenate([vel, eff]).astype(int)

    def _switch_mode(self, ch: np.ndarray, new: int) -> None:
        if new == POSITION:  # bumpless: the reference starts where and how fast the joint is
            vlim = self.velocity_limit[ch]
            self.reference[ch] = self.data.qpos[self.qpos_adr[ch]]
            self.reference_velocity[ch] = np.clip(self.data.qvel[self.dof_adr[ch]], -vlim, vlim)
            self._moving[ch] = True
            self._any_moving = True
        self.mode[ch] = new
        self._write_mode_params(ch)

    def _start_reference(self, idx: np.ndarray | slice, tgt: np.ndarray) -> None:
        """A reference at rest within one step's travel of its new target goes there at once (so a trajectory
        streamed every step costs nothing per step); the others follow the profile in ``before_step``."""
        near = np.abs(tgt - self.reference[idx]) <= self._v_dt[idx]
        if self._any_moving:
            near &= ~self._moving[idx]
        if near.all():
            self.reference[idx] = tgt
            self._ctrl[idx] = tgt
            return
        idx = self._all[idx]
        if near.any():
            jump = idx[near]
            self.reference[jump] = tgt[near]
            self._ctrl[jump] = tgt[near]
        self._moving[idx[~near]] = True
        self._any_moving = True

    @property
    def step_travel(self) -> np.ndarray:
        """Per actuator, how far a reference may jump in one step: velocity limit x dt (inf without a limit)."""
        return self._v_dt

    @property
    def per_step_work(self) -> bool:
        """Whether ``before_step`` has anything to do (else steps can run back to back in C)."""
        return self._any_moving or bool(self._guard_idx.size) or self._passive_dofs is not None

    def hold(self, idx: np.ndarray, positions: np.ndarray) -> None:
        """After a teleport: position-mode joints among ``idx`` hold where they were put."""
        sel = self.mode[idx] == POSITION
        pos = idx[sel]
        if pos.size:
            self.target[pos] = np.clip(positions[sel], self.lower[pos], self.upper[pos])
            self.reference[pos] = positions[sel]
            self.reference_velocity[pos] = 0.0
            self.velocity_cmd[pos] = 0.0
            self._biasprm[pos, 0] = self.effort_cmd[pos] * self._inv_gear[pos]
            self._ctrl[pos] = positions[sel]
            self._moving[pos] = True
            self._any_moving = True

    def set_gains(self, idx: int, kp: float | None, kd: float | None, kv: float | None) -> None:
        for arr, value in ((self.kp, kp), (self.kd, kd), (self.kv, kv)):
            if value is not None:
                arr[idx] = value
        self._build_tables()
        self._write_mode_params(np.array([idx]))

    def rebind(self, model: mujoco.MjModel, data: mujoco.MjData, qpos_adr: np.ndarray, dof_adr: np.ndarray,
               passive_dofs: np.ndarray | None = None) -> None:
        """Follow a recompiled model (PhysicsEngine.edit_scene: world objects added or removed): the views into
        its arrays are renewed and the current modes, references and commands written into it."""
        self.model, self.data = model, data
        self.act_ids = np.array([model.actuator(ACTUATOR_PREFIX + name).id for name in self.joint_names], dtype=int)
        first = int(self.act_ids[0]) if self.n else 0
        self._act_slice = slice(first, first + self.n)
        self.qpos_adr = np.asarray(qpos_adr, dtype=int)
        self.dof_adr = np.asarray(dof_adr, dtype=int)
        passive = np.zeros(0, dtype=int) if passive_dofs is None else np.asarray(passive_dofs, dtype=int)
        self._passive_dofs = passive if self.gravity_compensation and passive.size else None
        self._gravcomp = model.body_gravcomp
        self._robot_bodies = self._gravcomp > 0
        self._carried = self._carried_bodies(model) if self.gravity_compensation else None
        self._gainprm = model.actuator_gainprm[self._act_slice]
        self._biasprm = model.actuator_biasprm[self._act_slice]
        self._ctrl = data.ctrl[self._act_slice]
        self._mode_checked.clear()
        self._write_mode_params(np.arange(self.n))

    # ------------------------------------------------------------------ per step
    def before_step(self) -> None:
        """Advance position references on their way and update effort-mode and passive-joint corrections."""
        if self._any_moving:
            self._advance_references()
        if self._guard_idx.size:
            self._guard_velocity()
        if self._passive_dofs is not None:
            self.data.qfrc_applied[self._passive_dofs] = -self.data.qfrc_gravcomp[self._passive_dofs]

    def _advance_references(self) -> None:
        """One step of a time-optimal (bang-bang) profile towards each target under |v| <= vmax, |a| <= amax."""
        dt = self._dt
        r, v, tgt = self.reference, self.reference_velocity, self.target
        err = tgt - r
        dist = np.abs(err)
        # Fastest speed from which the reference can still stop at the target (discrete-time braking curve),
        # no faster than the velocity limit and no further than the target in this step.
        speed = np.sqrt(self._two_a * dist + self._half_a_dt_sq) - self._half_a_dt
        speed = np.minimum(np.minimum(speed, self.velocity_limit), dist / dt)
        v_new = v + np.minimum(np.maximum(np.copysign(speed, err) - v, -self._a_dt), self._a_dt)
        r_new = r + v_new * dt
        # At (or, by rounding, past) the target: stop there, keeping the speed actually travelled this step so
        # a target that keeps moving (a streamed trajectory) is followed without stalling.
        crossed = (tgt - r_new) * err <= 0.0
        if crossed.any():
            r_new = np.where(crossed, tgt, r_new)
            v_new = np.where(crossed, (tgt - r) / dt, v_new)
        moving = self._moving
        np.copyto(r, r_new, where=moving)
        np.copyto(v, v_new, where=moving)
        np.copyto(self._ctrl, r, where=moving)
        moving &= (r != tgt) | (v != 0.0)
        self._any_moving = bool(moving.any())

    def _guard_velocity(self) -> None:
        """Effort-mode joints faster than their velocity limit get ``k (vmax - qd)`` added (implicit in qd under
        the implicit integrators), like a drive's velocity limiter; the total stays within the effort limit."""
        i = self._guard_idx
        vmax = self.velocity_limit[i]
        qd = self.data.qvel[self.dof_adr[i]]
        fast = np.abs(qd) > vmax
        k = np.where(fast, self.guard_gain[i], 0.0)
        g_inv = self._inv_gear[i]
        self._biasprm[i, 0] = k * np.copysign(vmax, qd) * g_inv
        self._biasprm[i, 2] = -k * g_inv * g_inv

    # ------------------------------------------------------------------ internals
    def _build_tables(self) -> None:
        """Per-mode gain/bias parameters (actuator units) for every joint: rows position, velocity, effort."""
        gi = self._inv_gear
        zero = np.zeros(self.n)
        self._gain_tab = np.stack([self.kp * gi, self.kv * gi, gi])
        self._b1_tab = np.stack([-self.kp * gi * gi, zero, zero])
        self._b2_tab = np.stack([-self.kd * gi * gi, -self.kv * gi * gi, zero])

    def _write_mode_params(self, idx: np.ndarray) -> None:
        """Gain/bias/ctrl of actuators ``idx`` for their current mode."""
        if idx.size == 0:
            return
        self._mode_version += 1
        if len(self._mode_checked) > 64:
            self._mode_checked.clear()
        mode = self.mode[idx]
        self._gainprm[idx, 0] = self._gain_tab[mode, idx]
        self._biasprm[idx, 1] = self._b1_tab[mode, idx]
        self._biasprm[idx, 2] = self._b2_tab[mode, idx]
        # Feed-forwards of the current commands in the current modes.
        v, eff, gi = self.velocity_cmd[idx], self.effort_cmd[idx], self._inv_gear[idx]
        losses = self.damping[idx] * v + self.frictionloss[idx] * np.sign(v)
        extra = np.where(mode == POSITION, self.kd[idx] * v + losses + eff,
                         np.where(mode == VELOCITY, losses + eff, 0.0))
        self._biasprm[idx, 0] = extra * gi
        self._ctrl[idx] = np.where(mode == POSITION, self.reference[idx],
                                   np.where(mode == VELOCITY, v, eff))
        eff_idx = np.flatnonzero(self.mode == EFFORT)
        self._effort_idx = eff_idx
        guarded = np.isfinite(self.velocity_limit[eff_idx]) & (self.guard_gain[eff_idx] > 0)
        self._guard_idx = eff_idx[guarded]
        if self._carried is not None:
            plain = self._carried[eff_idx].any(axis=0) if eff_idx.size else np.zeros_like(self._robot_bodies)
            self._gravcomp[:] = np.where(self._robot_bodies & ~plain, 1.0, 0.0)

    def _carried_bodies(self, model: mujoco.MjModel) -> np.ndarray:
        """(n, nbody) mask: bodies each actuated joint moves (its subtree and its mimic joints' subtrees)."""
        nbody = model.nbody
        parent = model.body_parentid
        below = np.zeros((nbody, nbody), dtype=bool)  # below[a, b]: b is in the subtree of a
        for b in range(nbody):
            a = b
            while True:
                below[a, b] = True
                if a == 0:
                    break
                a = int(parent[a])
        dof_body = model.dof_bodyid
        out = below[dof_body[self.dof_adr]].copy()
        mm = self.mimics
        for a, dof in zip(mm.act, mm.dof, strict=True):
            out[a] |= below[dof_body[dof]]
        return out
