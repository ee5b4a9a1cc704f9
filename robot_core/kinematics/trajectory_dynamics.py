"""Inverse dynamics over a planned motion: joint torques for every control frame of a move to a tool pose.

Mirrors the idea of AGX Dynamics' robotics ``InverseDynamics`` (plan a motion of a serial chain towards a
target pose and hand back the joint forces that produce it, frame by frame), computed here analytically on
the chain's MuJoCo model instead of by a constrained simulation:

- :meth:`TrajectoryDynamics.solve`: joint-space move to an IK solution of the target. Every joint follows the
  same quintic time scaling, so each joint is monotone and starts and ends with zero velocity and acceleration.
- :meth:`TrajectoryDynamics.solve_linear`: the tool origin follows the straight line to the target while its
  orientation is slerped, both with the quintic scaling; IK every frame, seeded from the previous frame. Frames
  where IK cannot keep the tool on the line within the move's thresholds (the line leaves the workspace or
  runs into joint limits) are reported in :attr:`MoveOutcome.failed_frames`, never silently bent.
- :meth:`TrajectoryDynamics.solve_linear_n`: a list of :class:`Move`, each with its own target, duration,
  thresholds and kind (linear or joint), one after the other, each starting and ending at rest.
- Adaptive mode: :meth:`~TrajectoryDynamics.start` plans, :meth:`~TrajectoryDynamics.step` takes the measured
  state each control period and returns the next reference and torque (feed-forward on the measured state
  plus a PD on the tracking error, the computed-torque law), :meth:`~TrajectoryDynamics.update` re-plans from
  the current reference, :meth:`~TrajectoryDynamics.finish` returns what was commanded.
- :meth:`TrajectoryDynamics.gravity_compensation`: torques holding the arm and payload still.

Torques are tau = ID(q, qd, qdd) of the chain (rigid body, as SerialKinematicChain.inverse_dynamics) plus the
load of a payload point mass rigidly attached to the tool (its weight and inertial force) and of a constant
external wrench the environment applies at the tool. Velocities and accelerations of linear moves are finite
differences of the IK positions (central, second order), those of joint moves are the quintic's own.
Poses are 4x4 in the chain's base frame. Not thread-safe (it uses the chain's private MuJoCo data).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from robot_core.kinematics.chain import SerialKinematicChain
from robot_core.kinematics.ik import orientation_error_vector

# IK tolerances along a line: tight, because q is differentiated twice (noise / dt^2 lands in the torques).
LINE_IK_POSITION_TOLERANCE = 1e-10
LINE_IK_ORIENTATION_TOLERANCE = 1e-9
# A reference moving slower than this (rad/s, every joint) counts as at rest for update().
AT_REST = 1e-9


class UnreachableTargetError(ValueError):
    """A move's target has no IK solution from the current state (even after random restarts)."""


@dataclass
class Move:
    """One move of a plan: where the tool goes, in how long, how closely, and along which path."""

    target: np.ndarray  # 4x4 tool pose in the base frame
    duration: float  # s
    linear: bool = True  # straight tool line (solve_linear) or joint-space (solve)
    translation_threshold: float = 5e-4  # m, largest tool deviation counted as success
    rotation_threshold: float = 1e-3  # rad


@dataclass
class MoveOutcome:
    """How one move of a plan went against its thresholds."""

    index: int
    linear: bool
    first_frame: int
    last_frame: int
    max_translation_error: float  # m: linear moves, worst frame off the line; joint moves, the end pose
    max_rotation_error: float  # rad
    failed_frames: list[int] = field(default_factory=list)  # frames beyond a threshold (global frame indices)

    @property
    def success(self) -> bool:
        return not self.failed_frames


@dataclass
class Trajectory:
    """A planned motion sampled every ``dt``: arrays with one row per frame, joints in ``joint_names`` order."""

    joint_names: list[str]
    dt: float
    time: np.ndarray  # (N,)
    q: np.ndarray  # (N, n)
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray  # joint torques/forces producing the motion (payload and external wrench included)
    tool_positions: np.ndarray  # (N, 3) where the tool actually is at q (FK), base frame
    moves: list[MoveOutcome]

    @property
    def success(self) -> bool:
        return all(m.success for m in self.moves)

    @property
    def failed_frames(self) -> list[int]:
        return [f for m in self.moves for f in m.failed_frames]

    def to_joint_trajectory(self, stride: int = 1) -> dict:
        """A trajectory_msgs/JointTrajectory-shaped dict of plain lists (every ``stride``-th frame, last kept).

        Keys: ``joint_names``, ``points`` (each ``positions``, ``velocities``, ``accelerations``, ``effort``,
        ``time_from_start`` as ``{"sec", "nanosec"}``). The first frame (time 0, the current state) is left
        out, as a FollowJointTrajectory goal's points lie in the future.
        """
        if stride < 1:
            raise ValueError(f"stride must be >= 1, got {stride}")
        idx = list(range(stride, len(self.time), stride))
        if not idx or idx[-1] != len(self.time) - 1:
            idx.append(len(self.time) - 1)
        points = []
        for k in idx:
            t = float(self.time[k])
            sec = math.floor(t)
            points.append({
                "positions": self.q[k].tolist(), "velocities": self.qd[k].tolist(),
                "accelerations": self.qdd[k].tolist(), "effort": self.tau[k].tolist(),
                "time_from_start": {"sec": sec, "nanosec": round((t - sec) * 1e9)},
            })
        return {"joint_names": list(self.joint_names), "points": points}


@dataclass
class AdaptiveCommand:
    """What :meth:`TrajectoryDynamics.step` returns for one control period."""

    time: float
    q: np.ndarray  # reference
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray  # torque to apply now
    move_index: int  # move the reference is in (the last one once done)
    done: bool  # the reference reached the plan's end


# -- time scaling and rotations ----------------------------------------------------------------------------
def quintic(tau: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """s, ds/dtau, d2s/dtau2 of the rest-to-rest quintic 10t^3 - 15t^4 + 6t^5 (monotone on [0, 1])."""
    t = np.clip(tau, 0.0, 1.0)
    s = t**3 * (10.0 - 15.0 * t + 6.0 * t**2)
    ds = 30.0 * t**2 * (1.0 - t) ** 2
    dds = 60.0 * t * (1.0 - t) * (1.0 - 2.0 * t)
    return s, ds, dds


def _rotvec_to_matrix(w: np.ndarray) -> np.ndarray:
    angle = float(np.linalg.norm(w))
    if angle < 1e-15:
        return np.eye(3)
    k = w / angle
    kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + math.sin(angle) * kx + (1.0 - math.cos(angle)) * kx @ kx


def slerp(r0: np.ndarray, r1: np.ndarray, s: float) -> np.ndarray:
    """Rotation a fraction ``s`` of the way from r0 to r1 about their fixed relative axis (shortest way)."""
    return _rotvec_to_matrix(s * orientation_error_vector(r1, r0)) @ r0


def pose_errors(t_actual: np.ndarray, t_desired: np.ndarray) -> tuple[float, float]:
    """(translation error m, rotation error rad) between two 4x4 poses."""
    dp = float(np.linalg.norm(t_actual[:3, 3] - t_desired[:3, 3]))
    dr = float(np.linalg.norm(orientation_error_vector(t_desired[:3, :3], t_actual[:3, :3])))
    return dp, dr


def _central_derivatives(q: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """qd, qdd of a rest-to-rest sample sequence: central differences, mirrored at both (resting) ends."""
    padded = np.vstack((q[1:2], q, q[-2:-1])) if len(q) > 1 else np.vstack((q, q, q))
    qd = (padded[2:] - padded[:-2]) / (2.0 * dt)
    qdd = (padded[2:] - 2.0 * padded[1:-1] + padded[:-2]) / (dt * dt)
    qd[0] = 0.0
    qd[-1] = 0.0
    return qd, qdd


# -- the planner ---------------------------------------------------------------------------------------------
class TrajectoryDynamics:
    """Plans tool moves of one serial chain and computes the joint torques of every frame.

    Args:
        chain: the arm; its tip link is the tool.
        dt: frame period (s), e.g. the simulation or control step.
        q_start: the current joint state (default: the chain's held/initial positions clamped into the limits).
        payload_mass: kg of a point mass rigidly attached to the tool, at ``payload_com`` (tool frame, m).
        external_wrench: [fx, fy, fz, tx, ty, tz] the environment applies to the tool (base frame, at the tool
            origin), constant over the motion.
        joint_damping: add the joints' viscous damping (URDF ``<dynamics damping>``) times the velocity, as the
            simulator applies it (off: rigid-body torques only, as Pinocchio's RNEA).
        kp, kd: adaptive mode's PD gains on the tracking error (1/s^2, 1/s).
        restarts: random IK restarts for a joint move's target when IK from the current state fails.
    """

    def __init__(self, chain: SerialKinematicChain, dt: float = 1e-3, *, q_start=None, payload_mass: float = 0.0,
                 payload_com: Sequence[float] = (0.0, 0.0, 0.0), external_wrench: Sequence[float] | None = None,
                 joint_damping: bool = False, kp: float = 400.0, kd: float = 40.0, restarts: int = 20):
        if not (math.isfinite(dt) and dt > 0.0):
            raise ValueError(f"dt must be a positive number of seconds, got {dt!r}")
        if not (math.isfinite(payload_mass) and payload_mass >= 0.0):
            raise ValueError(f"payload_mass must be >= 0 kg, got {payload_mass!r}")
        com = np.asarray(payload_com, dtype=float)
        if com.shape != (3,) or not np.all(np.isfinite(com)):
            raise ValueError(f"payload_com must be 3 finite numbers (tool frame, m), got {payload_com!r}")
        wrench = None
        if external_wrench is not None:
            wrench = np.asarray(external_wrench, dtype=float)
            if wrench.shape != (6,) or not np.all(np.isfinite(wrench)):
                raise ValueError(f"external_wrench must be 6 finite numbers [force, torque], got {external_wrench!r}")
        self.chain = chain
        self.dt = float(dt)
        self.payload_mass = float(payload_mass)
        self.payload_com = com
        self.external_wrench = wrench
        self.damping = np.zeros(chain.n)
        if joint_damping:
            for k, name in enumerate(chain.joint_names):
                dyn = chain.model.joints[name].dynamics
                self.damping[k] = dyn.damping if dyn is not None and dyn.damping is not None else 0.0
        if not (math.isfinite(kp) and kp >= 0.0 and math.isfinite(kd) and kd >= 0.0):
            raise ValueError(f"kp and kd must be finite and >= 0, got kp={kp!r}, kd={kd!r}")
        self.kp = float(kp)
        self.kd = float(kd)
        self.restarts = int(restarts)
        held = np.array([chain.held_qpos[chain.built.joints[n].qpos_adr] for n in chain.joint_names])
        self.q = chain.clamp(held) if q_start is None else chain.clamp(chain.check_q(q_start, "q_start"))
        self._gravity = chain.gravity
        self._plan: Trajectory | None = None
        self._k = 0
        self._t0 = 0.0
        self._issued: list[AdaptiveCommand] = []

    def __repr__(self) -> str:
        return f"TrajectoryDynamics({self.chain!r}, dt={self.dt})"

    # -- torques -------------------------------------------------------------------------------------------
    def _tool_load(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray | None:
        """Wrench (base frame, at the tool origin) that payload and environment apply to the tool, or None."""
        w = np.zeros(6)
        if self.external_wrench is not None:
            w += self.external_wrench
        if self.payload_mass > 0.0:
            # the payload point is fixed to the tool: a = a_o + alpha x r + w x (w x r)
            r_c = self.chain.forward_kinematics(q)[:3, :3] @ self.payload_com  # tool origin -> payload, base frame
            a_o, w_t, alpha = self.chain.tip_acceleration(q, qd, qdd)
            a_c = a_o + np.cross(alpha, r_c) + np.cross(w_t, np.cross(w_t, r_c))
            f = self.payload_mass * (self._gravity - a_c)
            w[:3] += f
            w[3:] += np.cross(r_c, f)
        return w if (self.payload_mass > 0.0 or self.external_wrench is not None) else None

    def torques(self, q, qd, qdd) -> np.ndarray:
        """Joint torques producing (q, qd, qdd) with the payload and the external wrench on the tool."""
        ch = self.chain
        q = ch.check_q(q)
        qd = ch.check_q(qd, "qd")
        qdd = ch.check_q(qdd, "qdd")
        load = self._tool_load(q, qd, qdd)
        return ch.inverse_dynamics(q, qd, qdd, None if load is None else {ch.tip_link: load}) + self.damping * qd

    def gravity_compensation(self, q=None) -> np.ndarray:
        """Torques holding the arm (and payload, against the external wrench) still at q (default: the state)."""
        q = self.q if q is None else q
        z = np.zeros(self.chain.n)
        return self.torques(q, z, z)

    # -- planning ------------------------------------------------------------------------------------------
    def _frames(self, duration: float, what: str) -> int:
        if not (math.isfinite(duration) and duration > 0.0):
            raise ValueError(f"{what}: duration must be a positive number of seconds, got {duration!r}")
        return max(1, round(duration / self.dt))

    def _check_target(self, target, what: str) -> np.ndarray:
        t = np.asarray(target, dtype=float)
        if t.shape != (4, 4) or not np.all(np.isfinite(t)):
            raise ValueError(f"{what}: target must be a finite 4x4 pose (base frame), got shape {t.shape}")
        r = t[:3, :3]
        if np.abs(r.T @ r - np.eye(3)).max() > 1e-6 or np.linalg.det(r) <= 0.0:
            raise ValueError(f"{what}: the target's 3x3 block is not a rotation matrix")
        return t

    def _goal_q(self, target: np.ndarray, q0: np.ndarray, move: Move, what: str) -> np.ndarray:
        ch = self.chain
        sol = ch.inverse_kinematics(target, q0)
        if not sol.success:
            sol = ch.inverse_kinematics_with_restarts(target, q0, restarts=self.restarts, seed=0)
        if not sol.success or sol.position_error > move.translation_threshold \
                or sol.orientation_error > move.rotation_threshold:
            p = np.round(target[:3, 3], 4).tolist()
            raise UnreachableTargetError(
                f"{what}: target at {p} (frame '{ch.base_link}') is unreachable for chain {ch.base_link}->"
                f"{ch.tip_link}: IK {sol.status.name}, {sol.position_error:.3g} m / {sol.orientation_error:.3g} rad "
                f"short after {self.restarts} restarts")
        return sol.q

    def _joint_move(self, q0: np.ndarray, v0: np.ndarray, a0: np.ndarray, move: Move, first: int,
                    index: int, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, MoveOutcome]:
        n_frames = self._frames(move.duration, what)
        q1 = self._goal_q(move.target, q0, move, what)
        big_t = n_frames * self.dt
        tau = np.arange(n_frames + 1) / n_frames
        if np.any(v0 != 0.0) or np.any(a0 != 0.0):
            q, qd, qdd = _quintic_from_state(q0, v0, a0, q1, big_t, tau)
        else:
            s, ds, dds = quintic(tau)
            dq = q1 - q0
            q = q0 + np.outer(s, dq)
            qd = np.outer(ds / big_t, dq)
            qdd = np.outer(dds / big_t**2, dq)
        ep, er = pose_errors(self.chain.forward_kinematics(q[-1]), move.target)
        failed = [] if (ep <= move.translation_threshold and er <= move.rotation_threshold) else [first + n_frames]
        return q, qd, qdd, MoveOutcome(index, False, first, first + n_frames, ep, er, failed)

    def _linear_move(self, q0: np.ndarray, move: Move, first: int, index: int,
                     what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, MoveOutcome]:
        ch = self.chain
        n_frames = self._frames(move.duration, what)
        t0 = ch.forward_kinematics(q0)
        p0, r0 = t0[:3, 3], t0[:3, :3]
        p1, r1 = move.target[:3, 3], move.target[:3, :3]
        s, _, _ = quintic(np.arange(n_frames + 1) / n_frames)
        q = np.empty((n_frames + 1, ch.n))
        q[0] = q0
        desired = np.eye(4)
        worst_p = worst_r = 0.0
        failed: list[int] = []
        seed = q0
        for k in range(1, n_frames + 1):
            desired[:3, 3] = p0 + s[k] * (p1 - p0)
            desired[:3, :3] = slerp(r0, r1, float(s[k]))
            sol = ch.inverse_kinematics(desired, seed, position_tolerance=LINE_IK_POSITION_TOLERANCE,
                                        orientation_tolerance=LINE_IK_ORIENTATION_TOLERANCE, max_iterations=50)
            q[k] = sol.q
            seed = sol.q
            ep, er = sol.position_error, sol.orientation_error
            worst_p, worst_r = max(worst_p, ep), max(worst_r, er)
            if ep > move.translation_threshold or er > move.rotation_threshold:
                failed.append(first + k)
        qd, qdd = _central_derivatives(q, self.dt)
        return q, qd, qdd, MoveOutcome(index, True, first, first + n_frames, worst_p, worst_r, failed)

    def _plan_moves_from(self, moves: Sequence[Move], q0: np.ndarray, v0: np.ndarray, a0: np.ndarray,
                         caller: str | None = None) -> Trajectory:
        """Plan the moves one after the other from (q0, v0, a0); ``caller`` names a single move in errors."""
        if not moves:
            raise ValueError("a plan needs at least one move")
        qs, qds, qdds, outcomes = [q0[None]], [v0[None]], [a0[None]], []
        first = 0
        for i, mv in enumerate(moves):
            what = caller or f"move {i}"
            if not isinstance(mv, Move):
                raise TypeError(f"{what} must be a Move, got {type(mv).__name__}")
            mv = replace(mv, target=self._check_target(mv.target, what))  # the caller's Move stays as given
            if not (mv.translation_threshold > 0.0 and mv.rotation_threshold > 0.0):
                raise ValueError(f"{what}: thresholds must be > 0, got {mv.translation_threshold}, "
                                 f"{mv.rotation_threshold}")
            moving = np.any(np.abs(v0) > AT_REST) or np.any(np.abs(a0) > AT_REST)
            if mv.linear:
                if moving:
                    raise ValueError(f"{what} is linear but the arm is moving: a straight tool line starts at "
                                     f"rest (make it a joint move, or update once the current move has ended)")
                q, qd, qdd, out = self._linear_move(q0, mv, first, i, what)
            else:
                q, qd, qdd, out = self._joint_move(q0, v0, a0, mv, first, i, what)
            qs.append(q[1:])
            qds.append(qd[1:])
            qdds.append(qdd[1:])
            outcomes.append(out)
            first = out.last_frame
            q0, v0, a0 = q[-1], np.zeros_like(q0), np.zeros_like(q0)
        q_all = np.vstack(qs)
        qd_all = np.vstack(qds)
        qdd_all = np.vstack(qdds)
        tau = np.array([self.torques(q, v, a) for q, v, a in zip(q_all, qd_all, qdd_all, strict=True)])
        tool = np.array([self.chain.forward_kinematics(q)[:3, 3] for q in q_all])
        time = np.arange(len(q_all)) * self.dt
        return Trajectory(list(self.chain.joint_names), self.dt, time, q_all, qd_all, qdd_all, tau, tool, outcomes)

    def solve(self, target_pose, duration: float, translation_threshold: float = 5e-4,
              rotation_threshold: float = 1e-3) -> Trajectory:
        """Joint-space move from the current state to an IK solution of ``target_pose``; state moves to the end.

        Raises UnreachableTargetError (one line, naming the target and IK status) when IK finds no solution.
        """
        move = Move(target_pose, duration, False, translation_threshold, rotation_threshold)
        return self._solve([move], "solve")

    def solve_linear(self, target_pose, duration: float, translation_threshold: float = 5e-4,
                     rotation_threshold: float = 1e-3) -> Trajectory:
        """Straight tool line (slerped orientation) from the current pose; check ``result.success``."""
        move = Move(target_pose, duration, True, translation_threshold, rotation_threshold)
        return self._solve([move], "solve_linear")

    def solve_linear_n(self, moves: Sequence[Move]) -> Trajectory:
        """The moves one after another from the current state; the state moves to the plan's end."""
        return self._solve(list(moves), None)

    def _solve(self, moves: list[Move], caller: str | None) -> Trajectory:
        z = np.zeros(self.chain.n)
        plan = self._plan_moves_from(moves, self.q.copy(), z, z.copy(), caller)
        self.q = plan.q[-1].copy()
        return plan

    # -- adaptive mode -------------------------------------------------------------------------------------
    def start(self, moves: Sequence[Move], q_measured=None) -> Trajectory:
        """Plan ``moves`` from the measured state (default: the current one) for step-by-step execution."""
        if q_measured is not None:
            self.q = self.chain.clamp(self.chain.check_q(q_measured, "q_measured"))
        z = np.zeros(self.chain.n)
        self._plan = self._plan_moves_from(list(moves), self.q.copy(), z, z.copy())
        self._k = 0
        self._t0 = 0.0
        self._issued = []
        return self._plan

    def _require_plan(self, what: str) -> Trajectory:
        if self._plan is None:
            raise RuntimeError(f"{what}() needs a plan: call start(moves) first")
        return self._plan

    def step(self, q_measured, qd_measured) -> AdaptiveCommand:
        """The next frame's reference and the torque for the measured state (computed torque: feed-forward on
        the measured state with the reference acceleration corrected by PD on the tracking error)."""
        plan = self._require_plan("step")
        ch = self.chain
        q_m = ch.check_q(q_measured, "q_measured")
        qd_m = ch.check_q(qd_measured, "qd_measured")
        k = min(self._k, len(plan.time) - 1)
        q_r, qd_r, qdd_r = plan.q[k], plan.qd[k], plan.qdd[k]
        qdd_cmd = qdd_r + self.kp * (q_r - q_m) + self.kd * (qd_r - qd_m)
        tau = self.torques(q_m, qd_m, qdd_cmd)
        idx = next((m.index for m in plan.moves if k <= m.last_frame), plan.moves[-1].index)
        cmd = AdaptiveCommand(self._t0 + self._k * self.dt, q_r.copy(), qd_r.copy(), qdd_r.copy(), tau, idx,
                              self._k >= len(plan.time) - 1)
        self._issued.append(cmd)
        self._k += 1
        return cmd

    def update(self, moves: Sequence[Move]) -> Trajectory:
        """Re-plan from the current reference (position, velocity, acceleration) to new moves mid-way.

        A joint move starts from the moving reference (a quintic matching its velocity and acceleration); a
        linear move needs the reference at rest and is refused otherwise.
        """
        plan = self._require_plan("update")
        k = min(self._k, len(plan.time) - 1)
        t_now = self._t0 + self._k * self.dt
        new = self._plan_moves_from(list(moves), plan.q[k].copy(), plan.qd[k].copy(), plan.qdd[k].copy())
        self._plan = new
        self._t0 = t_now
        self._k = 0
        return new

    def finish(self) -> list[AdaptiveCommand]:
        """End adaptive mode: the commands issued; the state becomes the last reference."""
        plan = self._require_plan("finish")
        issued = self._issued
        if issued:
            self.q = issued[-1].q.copy()
        else:
            self.q = plan.q[0].copy()
        self._plan = None
        self._issued = []
        return issued


def _quintic_from_state(q0: np.ndarray, v0: np.ndarray, a0: np.ndarray, q1: np.ndarray, big_t: float,
                        tau: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-joint quintic from (q0, v0, a0) at t=0 to (q1, 0, 0) at t=big_t, sampled at t = tau * big_t."""
    t = tau[:, None] * big_t
    c0, c1, c2 = q0, v0, a0 / 2.0
    h = q1 - q0 - v0 * big_t - c2 * big_t**2
    hv = -v0 - a0 * big_t
    ha = -a0
    tt = big_t
    c3 = (10 * h - 4 * hv * tt + 0.5 * ha * tt**2) / tt**3
    c4 = (-15 * h + 7 * hv * tt - ha * tt**2) / tt**4
    c5 = (6 * h - 3 * hv * tt + 0.5 * ha * tt**2) / tt**5
    q = c0 + c1 * t + c2 * t**2 + c3 * t**3 + c4 * t**4 + c5 * t**5
    qd = c1 + 2 * c2 * t + 3 * c3 * t**2 + 4 * c4 * t**3 + 5 * c5 * t**4
    qdd = 2 * c2 + 6 * c3 * t + 12 * c4 * t**2 + 20 * c5 * t**3
    return q, qd, qdd
