"""SerialKinematicChain: FK, Jacobian, IK and inverse dynamics of one base->tip chain of a RobotModel.

The queries run on a private MuJoCo model of the *whole* robot (built by robot_core.physics.builder
without geometry, base welded to the world), so the dynamics include every body the chain's joints carry
-- links past the tip, side branches, fixed frames -- and equal the simulator's rigid-body model.

Conventions:
- Joint order: the chain's movable scalar joints (revolute, continuous, prismatic) from base to tip.
  Fixed joints in the chain are allowed; planar/floating joints inside a chain are rejected.
- Frames: every pose, Jacobian and wrench is expressed in the **base_link frame**. The base need not be
  the root; it is fixed in space because only joints *above* it could move it and those are held.
- Held joints: robot joints not in the chain are held at ``hold_positions[name]`` if given, else the
  joint's ``initial_position`` (from ``<ros2_control>`` initial_value or a ``.g`` q), else 0; mimic
  joints outside the chain follow their master's held value. Mimic relations are *not* enforced between
  chain coordinates: every chain joint is an independent input.
- A floating-base robot is treated as fixed at its root (gravity along -z of the root frame).
- Dynamics are rigid-body only (no joint damping/friction, no rotor inertia), like Pinocchio's RNEA.
- Not thread-safe: one private MjData per chain. Use one chain per thread.
"""

from __future__ import annotations

import itertools
import math

import mujoco
import numpy as np

from robot_core.kinematics.chain_model import build_chain_model
from robot_core.kinematics.ik import (
    LIBRARY_SEEDS,
    LIBRARY_SIZE,
    RECOVERY_ATTEMPTS,
    ROTATION_WEIGHT,
    IKResult,
    SeedLibrary,
    orientation_error_vector,
    solve_ik,
    solve_ik_with_restarts,
    uniform_seeds,
)
from robot_core.model.robot_model import Joint, RobotModel, RobotModelError, SourceRef
from robot_core.physics.builder import BuiltModel, build_model

# Bound once: the per-call queries below cost a few microseconds, so attribute lookups on the mujoco module and
# on self are a visible share of them (see doc/benchmarks.md, "Kinematics: where the time goes").
_mj_kinematics = mujoco.mj_kinematics
# mj_kinematics + mj_comPos (+ cameras, lights, flexes, tendons: none or few in a query model) in one binding call:
# each call through the bindings costs ~0.15 µs before MuJoCo does any work.
_mj_fwd_kinematics = mujoco.mj_fwdKinematics
_mj_com_vel = mujoco.mj_comVel
_mj_jac_body = mujoco.mj_jacBody
_mj_rne = mujoco.mj_rne
_ndarray = np.ndarray
_float64 = np.dtype(np.float64)
_IK_OPTIONS = {"position_tolerance", "orientation_tolerance", "max_iterations", "position_only", "joint_weights",
               "recovery_attempts"}


def build_query_model(model: RobotModel) -> BuiltModel:
    """Geometry-free, fixed-base MuJoCo model used for kinematics and dynamics queries."""
    return build_model(model, fixed_base=True, include_visuals=False, include_collisions=False)


def held_qpos(built: BuiltModel, hold_positions: dict[str, float] | None = None) -> np.ndarray:
    """qpos with every joint at its held value (see module docstring)."""
    robot = built.robot
    q = built.initial_qpos()
    for name, value in (hold_positions or {}).items():
        ji = built.joints.get(name)
        if ji is None:
            raise RobotModelError(f"hold_positions names unknown joint '{name}' of robot '{robot.name}'",
                                  SourceRef(robot.source_file))
        q[ji.qpos_adr : ji.qpos_adr + ji.nq] = value
    for j in robot.joints.values():
        if j.mimic is not None and j.is_scalar and j.name not in (hold_positions or {}):
            master = built.joints.get(j.mimic.joint)
            if master is not None and master.nq == 1:
                q[built.joints[j.name].qpos_adr] = j.mimic.offset + j.mimic.multiplier * q[master.qpos_adr]
    return q


def _as_slice(idx: np.ndarray) -> slice | np.ndarray:
    """A slice when indices are contiguous ascending (numpy slicing is a view and much cheaper)."""
    if len(idx) and np.array_equal(idx, np.arange(idx[0], idx[0] + len(idx))):
        return slice(int(idx[0]), int(idx[0]) + len(idx))
    return idx


class SerialKinematicChain:
    """An open serial chain base_link -> tip_link (see module docstring for frames and conventions)."""

    def __init__(self, model: RobotModel, base_link: str, tip_link: str, *,
                 hold_positions: dict[str, float] | None = None, built: BuiltModel | None = None):
        joints = model.chain(base_link, tip_link)
        self._init(model, base_link, tip_link, joints, hold_positions, built)

    @classmethod
    def from_joint_list(cls, model: RobotModel, joint_names: list[str], links: list[str] | None = None, *,
                        hold_positions: dict[str, float] | None = None,
                        built: BuiltModel | None = None) -> SerialKinematicChain:
        """The second AGX constructor: joints in order, joint[i] connecting links[i] -> links[i+1].

        ``joint_names`` may include fixed joints. ``links`` (len = len(joint_names) + 1) is optional and,
        when given, is checked against the joints.
        """
        src = SourceRef(model.source_file)
        if not joint_names:
            raise RobotModelError("a serial chain needs at least one joint", src)
        joints: list[Joint] = []
        for name in joint_names:
            if name not in model.joints:
                raise RobotModelError(f"unknown joint '{name}' in robot '{model.name}'", src)
            joints.append(model.joints[name])
        for a, b in itertools.pairwise(joints):
            if a.child != b.parent:
                raise RobotModelError(f"joints '{a.name}' (child '{a.child}') and '{b.name}' (parent '{b.parent}') "
                                      f"are not connected", src)
        if links is not None:
            if len(links) != len(joints) + 1:
                raise RobotModelError(f"{len(joints)} joints need {len(joints) + 1} links, got {len(links)}", src)
            for i, j in enumerate(joints):
                if (j.parent, j.child) != (links[i], links[i + 1]):
                    raise RobotModelError(f"joint '{j.name}' connects '{j.parent}' -> '{j.child}', not "
                                          f"'{links[i]}' -> '{links[i + 1]}'", src)
        self = cls.__new__(cls)
        self._init(model, joints[0].parent, joints[-1].child, joints, hold_positions, built)
        return self

    def _init(self, model: RobotModel, base_link: str, tip_link: str, joints: list[Joint],
              hold_positions: dict[str, float] | None, built: BuiltModel | None) -> None:
        for j in joints:
            if j.type in ("planar", "floating"):
                raise RobotModelError(f"joint '{j.name}' ({j.type}) cannot be part of a serial chain", j.source)
        self.model = model
        self.base_link = base_link
        self.tip_link = tip_link
        self.joints = joints
        self.joint_names = [j.name for j in joints if j.is_scalar]
        self.link_names = [base_link] + [j.child for j in joints]
        self.n = len(self.joint_names)
        self._shape = (self.n,)
        lower, upper = [], []
        for j in joints:
            if not j.is_scalar:
                continue
            lim = j.limit
            limited = (j.type != "continuous" and lim is not None and lim.lower is not None
                       and lim.upper is not None and lim.lower < lim.upper)
            lower.append(lim.lower if limited else -np.inf)
            upper.append(lim.upper if limited else np.inf)
        self.lower = np.array(lower, dtype=float)
        self.upper = np.array(upper, dtype=float)

        self.built = built if built is not None else build_query_model(model)
        full = self.built.model
        self.held_qpos = held_qpos(self.built, hold_positions)
        # The whole robot's model: every link's pose, wrenches on any link, the mass matrix.
        self._full_m = full
        self._full_d = mujoco.MjData(full)
        self._full_d.qpos[:] = self.held_qpos
        self._full_qadr = _as_slice(self.built.qpos_indices(self.joint_names))
        self._full_dadr = self.built.dof_indices(self.joint_names)
        frames = [self.built.link_frame(name) for name in self.link_names]
        self._full_bodies = np.array([f.body_id for f in frames], dtype=np.int64)
        self._full_offsets = [None if f.offset_is_identity else f.offset for f in frames]
        self._full_jac = np.zeros((6, full.nv))
        self._mfull = np.zeros((full.nv, full.nv))
        # The base is still while the chain moves: compute its world pose once.
        mujoco.mj_kinematics(full, self._full_d)
        t_wb = self.built.link_pose(self._full_d, base_link)
        self._full_base_is_world = bool(np.allclose(t_wb, np.eye(4), rtol=0.0, atol=0.0))
        self._full_r_wb = t_wb[:3, :3].copy()
        self._full_t_base_world = np.linalg.inv(t_wb)
        # The hot queries (FK, Jacobian, dynamics, IK) run on the chain's own model where it applies.
        base, tip = frames[0], frames[-1]
        chain_model = build_chain_model(full, self.held_qpos, base.body_id, base.offset, tip.body_id, tip.offset,
                                        [self.built.joints[name].joint_id for name in self.joint_names])
        self.uses_chain_model = chain_model is not None
        if chain_model is not None:
            self._bind_queries(chain_model.model, np.arange(self.n), np.arange(self.n), chain_model.tip_body, None,
                               np.eye(4))
        else:
            self._bind_queries(full, self.built.qpos_indices(self.joint_names),
                               self.built.dof_indices(self.joint_names), tip.body_id,
                               None if tip.offset_is_identity else tip.offset, t_wb)
            self._d.qpos[:] = self.held_qpos
        self._seed_library: SeedLibrary | None = None

    def _bind_queries(self, m: mujoco.MjModel, qadr: np.ndarray, dadr: np.ndarray, tip_body: int,
                      tip_offset: np.ndarray | None, t_wb: np.ndarray) -> None:
        """The model, data, indices and views the hot queries use (the chain model, or the whole model)."""
        self._m = m
        self._d = mujoco.MjData(m)
        self._qadr = _as_slice(qadr)
        self._dadr = _as_slice(dadr)
        self._dadr_arr = dadr
        self._dadr_is_slice = isinstance(self._dadr, slice)
        self._qpos = self._d.qpos
        self._qvel = self._d.qvel
        self._qacc = self._d.qacc
        self._xpos = self._d.xpos
        self._xmat = self._d.xmat
        self._tip_body = tip_body
        self._tip_offset = tip_offset
        self._jac = np.zeros((6, m.nv))
        self._jacdot = np.zeros((6, m.nv))
        self._jacp = self._jac[:3]
        self._jacr = self._jac[3:]
        self._rne = np.zeros(m.nv)
        # Views into the private MjData (valid for its lifetime) so the hot queries index nothing per call.
        self._xpos_tip = self._xpos[tip_body]
        self._xmat_tip = self._xmat[tip_body].reshape(3, 3)
        self._rne_chain = self._rne[self._dadr]
        self._jac_chain = self._jac[:, self._dadr]
        self._fk_fast = tip_offset is None
        self._jac_fast = tip_offset is None and self._dadr_is_slice
        self._r_wb = t_wb[:3, :3].copy()
        self._p_wb = t_wb[:3, 3].copy()
        self._base_is_world = bool(np.allclose(t_wb, np.eye(4), rtol=0.0, atol=0.0))
        self._t_base_world = np.linalg.inv(t_wb)

    # -- helpers ----------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return (f"SerialKinematicChain({self.model.name}: {self.base_link} -> {self.tip_link}, "
                f"joints={self.joint_names})")

    def _check_q(self, q, what: str = "q") -> np.ndarray:
        if q.__class__ is not _ndarray or q.dtype is not _float64:
            q = np.asarray(q, dtype=float)
        if q.shape != self._shape:
            raise ValueError(f"chain {self.base_link}->{self.tip_link}: {what} must have shape ({self.n},) "
                             f"for joints {self.joint_names}, got {q.shape}")
        return q

    def check_q(self, q, what: str = "q") -> np.ndarray:
        """``q`` as a float array of the chain's length; ValueError naming the chain, its joints and ``what``."""
        return self._check_q(q, what)

    def clamp(self, q) -> np.ndarray:
        """q clipped into the joint limits (continuous joints untouched)."""
        return np.clip(self._check_q(q), self.lower, self.upper)

    def within_limits(self, q, tolerance: float = 0.0) -> bool:
        q = self._check_q(q)
        return bool(np.all(q >= self.lower - tolerance) and np.all(q <= self.upper + tolerance))

    def _set_q(self, q: np.ndarray) -> None:
        self._qpos[self._qadr] = q
        mujoco.mj_kinematics(self._m, self._d)

    def _tip_world(self) -> tuple[np.ndarray, np.ndarray]:
        p = self._xpos[self._tip_body]
        r = self._xmat[self._tip_body].reshape(3, 3)
        if self._tip_offset is not None:
            p = p + r @ self._tip_offset[:3, 3]
            r = r @ self._tip_offset[:3, :3]
        return p, r

    # -- kinematics -------------------------------------------------------------------------------------
    def forward_kinematics(self, q, respect_limits: bool = False) -> np.ndarray:
        """4x4 pose of the tip in the base frame; ``respect_limits`` clamps q into the limits first."""
        if q.__class__ is not _ndarray or q.dtype is not _float64 or q.shape != self._shape:
            q = self._check_q(q)
        if respect_limits:
            q = q.clip(self.lower, self.upper)
        self._qpos[self._qadr] = q
        _mj_kinematics(self._m, self._d)
        out = np.empty((4, 4))
        if self._fk_fast:
            out[:3, :3] = self._xmat_tip
            out[:3, 3] = self._xpos_tip
        else:
            p, r = self._tip_world()
            out[:3, :3] = r
            out[:3, 3] = p
        out[3] = (0.0, 0.0, 0.0, 1.0)
        return out if self._base_is_world else self._t_base_world @ out

    def forward_kinematics_all(self, q, respect_limits: bool = False) -> list[np.ndarray]:
        """Poses (base frame) of every link of the chain, base first: ``link_names`` order."""
        q = self._check_q(q)
        if respect_limits:
            q = q.clip(self.lower, self.upper)
        d = self._full_d
        d.qpos[self._full_qadr] = q
        mujoco.mj_kinematics(self._full_m, d)
        b = self._full_bodies
        t = np.zeros((len(b), 4, 4))
        t[:, :3, :3] = d.xmat[b].reshape(-1, 3, 3)
        t[:, :3, 3] = d.xpos[b]
        t[:, 3, 3] = 1.0
        for i, off in enumerate(self._full_offsets):
            if off is not None:
                t[i] = t[i] @ off
        if not self._full_base_is_world:
            t = self._full_t_base_world @ t
        return list(t)

    def jacobian(self, q) -> np.ndarray:
        """6xn geometric Jacobian in the base frame: rows = tip-origin linear velocity, then angular velocity."""
        if q.__class__ is not _ndarray or q.dtype is not _float64 or q.shape != self._shape:
            q = self._check_q(q)
        m, d = self._m, self._d
        self._qpos[self._qadr] = q
        _mj_fwd_kinematics(m, d)
        if self._jac_fast:
            _mj_jac_body(m, d, self._jacp, self._jacr, self._tip_body)
            if self._base_is_world:
                return self._jac_chain.copy()
            jac = self._jac_chain
        else:
            if self._tip_offset is None:
                _mj_jac_body(m, d, self._jacp, self._jacr, self._tip_body)
            else:
                mujoco.mj_jac(m, d, self._jacp, self._jacr, self._tip_world()[0], self._tip_body)
            jac = self._jac[:, self._dadr]
            if self._base_is_world:
                return jac
        rt = self._r_wb.T
        return np.vstack((rt @ jac[:3], rt @ jac[3:]))

    def _make_residual(self, p_t: np.ndarray, r_t: np.ndarray | None):
        """IK residual closure (world frame) over the private MjData; see ik.Residual.

        Written for the LM loop's hot path: everything it indexes is bound once here, MuJoCo does the kinematics
        and the quaternion error, and norms are taken as Python floats by mju_norm (numpy's cost more).
        """
        m, d = self._m, self._d
        qpos, qadr, dadr = self._qpos, self._qadr, self._dadr
        jac, jacp, jacr = self._jac, self._jacp, self._jacr
        tip = self._tip_body
        xpos_tip = self._xpos[tip]
        xquat_tip = d.xquat[tip]
        rows = slice(0, 3) if r_t is None else slice(0, 6)
        generic = self._tip_offset is not None
        chain_view = jac[rows, dadr] if isinstance(dadr, slice) else None  # a view: copied per call
        quat_t = np.empty(4)
        if r_t is not None:
            mujoco.mju_mat2Quat(quat_t, np.ascontiguousarray(r_t).reshape(9))
        qneg = np.empty(4)
        qerr = np.empty(4)
        fwd_kinematics, jac_body, neg_quat, mul_quat, quat2vel, norm = (
            _mj_fwd_kinematics, _mj_jac_body, mujoco.mju_negQuat, mujoco.mju_mulQuat, mujoco.mju_quat2Vel,
            mujoco.mju_norm)

        def residual(q: np.ndarray):
            qpos[qadr] = q
            fwd_kinematics(m, d)
            if generic:
                p, r = self._tip_world()
                mujoco.mj_jac(m, d, jacp, jacr, p, tip)
            else:
                p = xpos_tip
                jac_body(m, d, jacp, jacr, tip)
            j = chain_view.copy() if chain_view is not None else jac[rows, dadr]
            if r_t is None:
                e = p_t - p
                return e, j, norm(e), 0.0
            e = np.empty(6)
            ep, eo = e[:3], e[3:]
            np.subtract(p_t, p, out=ep)
            if generic:
                eo[:] = orientation_error_vector(r_t, r)
            else:
                neg_quat(qneg, xquat_tip)
                mul_quat(qerr, quat_t, qneg)
                quat2vel(eo, qerr, 1.0)
            return e, j, norm(ep), norm(eo)

        return residual

    def inverse_kinematics(self, target, q_seed, position_tolerance: float = 1e-6,
                           orientation_tolerance: float = 1e-5, max_iterations: int = 200,
                           position_only: bool = False, joint_weights=None,
                           recovery_attempts: int = RECOVERY_ATTEMPTS) -> IKResult:
        """Joint positions putting the tip at ``target`` (base frame): a 4x4 pose or a 3-vector (position only).

        Always check ``result.status``. The solution respects the limits and stays on the seed's branch, except
        that after a stall against joint limits the joints at a limit restart anywhere in range (see ik.py).
        ``joint_weights`` (n,) > 0: cost of moving each joint (higher = moves less).
        """
        p_t, r_t = self._target_world(target, position_only)
        return solve_ik(self._make_residual(p_t, r_t), self._checked_seed(q_seed), self.lower, self.upper,
                        position_tolerance=position_tolerance, orientation_tolerance=orientation_tolerance,
                        max_iterations=max_iterations, joint_weights=self._checked_weights(joint_weights),
                        recovery_attempts=recovery_attempts)

    def _checked_seed(self, q_seed) -> np.ndarray:
        q_seed = self._check_q(q_seed, "q_seed")
        # (one cheap reduction; a sum that overflowed from finite values is looked at closer)
        if not math.isfinite(np.add.reduce(q_seed)) and not np.all(np.isfinite(q_seed)):
            raise ValueError(f"chain {self.base_link}->{self.tip_link}: q_seed is not finite: {q_seed}")
        return q_seed

    def _checked_weights(self, joint_weights) -> np.ndarray | None:
        if joint_weights is None:
            return None
        weights = self._check_q(joint_weights, "joint_weights")
        if not np.all(weights > 0) or not np.all(np.isfinite(weights)):
            raise ValueError(f"joint_weights must be finite and > 0, got {weights}")
        return weights

    def inverse_kinematics_with_restarts(self, target, q_seed=None, restarts: int = 20, seed: int | None = None,
                                         **kwargs) -> IKResult:
        """Any solution, fast: IK from ``q_seed`` (if given; cut short after ``SEED_BUDGET`` iterations) and from the
        ``LIBRARY_SEEDS`` configurations of :meth:`seed_library` whose tips lie nearest the target, the seed first
        when its tip is at least as near; then from up to ``restarts`` uniformly random seeds in the limits. The
        result may be far from ``q_seed``. ``kwargs``: those of :meth:`inverse_kinematics`."""
        # Target, seed and options are checked once and one residual serves every attempt: in the common case
        # (a library seed converging in a handful of iterations) this set-up is a large share of the call.
        unknown = sorted(set(kwargs) - _IK_OPTIONS)
        if unknown:
            raise TypeError(f"inverse_kinematics_with_restarts() got unexpected keyword arguments {unknown}")
        options = dict(kwargs)
        p_t, r_t = self._target_world(target, bool(options.pop("position_only", False)))
        options["joint_weights"] = self._checked_weights(options.get("joint_weights"))
        residual = self._make_residual(p_t, r_t)
        lower, upper = self.lower, self.upper
        lib = self.seed_library()
        library, scores = lib.nearest(p_t, r_t, LIBRARY_SEEDS)
        seed_first = True
        if q_seed is not None:
            q_seed = self._checked_seed(q_seed)
            self._set_q(np.minimum(np.maximum(q_seed, lower), upper))
            p, r = self._tip_world()
            diff = p - p_t
            score = float(diff @ diff)
            if r_t is not None:
                score += ROTATION_WEIGHT * (3.0 - float(r.reshape(9) @ r_t.reshape(9)))
            seed_first = bool(score <= scores[0])

        def solve(s: np.ndarray, **overrides) -> IKResult:
            return solve_ik(residual, s, lower, upper, **{**options, **overrides})

        return solve_ik_with_restarts(solve, lower, upper, q_seed, restarts, lambda: np.random.default_rng(seed),
                                      library, seed_first)

    def seed_library(self) -> SeedLibrary:
        """The chain's restart seeds (built on first use, ~LIBRARY_SIZE FK calls, deterministic)."""
        if self._seed_library is None:
            rng = np.random.default_rng(0)
            qs = uniform_seeds(self.lower, self.upper, LIBRARY_SIZE, rng)
            positions = np.empty((len(qs), 3))
            rotations = np.empty((len(qs), 9))
            for i, q in enumerate(qs):
                self._set_q(q)
                p, r = self._tip_world()
                positions[i] = p
                rotations[i] = r.reshape(9)
            self._seed_library = SeedLibrary(qs, positions, rotations)
        return self._seed_library

    def _target_world(self, target, position_only: bool) -> tuple[np.ndarray, np.ndarray | None]:
        t = np.asarray(target, dtype=float)
        if t.shape == (3,):
            p_b, r_b = t, None
        elif t.shape == (4, 4):
            p_b, r_b = t[:3, 3], (None if position_only else t[:3, :3])
        else:
            raise ValueError(f"chain {self.base_link}->{self.tip_link}: IK target must be a 4x4 pose or a "
                             f"3-vector, got shape {t.shape}")
        if not np.all(np.isfinite(t)):
            raise ValueError(f"chain {self.base_link}->{self.tip_link}: IK target is not finite")
        if r_b is not None:
            (a, b, c), (d, e, f), (g, h, i) = r_b.tolist()
            det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
            if np.abs(r_b.T @ r_b - np.eye(3)).max() > 1e-6 or det <= 0.0:
                raise ValueError(f"chain {self.base_link}->{self.tip_link}: IK target rotation is not a rotation")
        if self._base_is_world:
            return p_b.copy(), (None if r_b is None else r_b.copy())
        return self._r_wb @ p_b + self._p_wb, (None if r_b is None else self._r_wb @ r_b)

    # -- dynamics ---------------------------------------------------------------------------------------
    def inverse_dynamics(self, q, qd, qdd, external_wrenches: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """Joint torques/forces tau = M(q) qdd + C(q, qd) qd + g(q) - sum_k J_k(q)^T w_k.

        ``external_wrenches``: link name -> [fx, fy, fz, tx, ty, tz], the wrench the environment applies *to*
        that link, expressed in the base frame, force acting at the link origin and torque about it. Links
        not carried by the chain's joints contribute nothing. Held joints have zero velocity/acceleration.
        """
        shape = self._shape
        if q.__class__ is not _ndarray or q.dtype is not _float64 or q.shape != shape:
            q = self._check_q(q)
        if qd.__class__ is not _ndarray or qd.dtype is not _float64 or qd.shape != shape:
            qd = self._check_q(qd, "qd")
        if qdd.__class__ is not _ndarray or qdd.dtype is not _float64 or qdd.shape != shape:
            qdd = self._check_q(qdd, "qdd")
        dadr = self._dadr
        self._qpos[self._qadr] = q
        self._qvel[dadr] = qd
        self._qacc[dadr] = qdd
        m, d = self._m, self._d
        _mj_fwd_kinematics(m, d)
        _mj_com_vel(m, d)
        _mj_rne(m, d, 1, self._rne)
        tau = self._rne_chain.copy() if self._dadr_is_slice else self._rne[dadr]
        if external_wrenches:
            tau -= self._wrench_torques(q, external_wrenches)
        return tau

    def _wrench_torques(self, q: np.ndarray, wrenches: dict[str, np.ndarray]) -> np.ndarray:
        """sum_k J_k^T w_k at q for wrenches (base frame) at link origins, on the whole robot's model."""
        m, d = self._full_m, self._full_d
        d.qpos[self._full_qadr] = q
        mujoco.mj_fwdKinematics(m, d)
        jac = self._full_jac
        out = np.zeros(self.n)
        for link, w in wrenches.items():
            w = np.asarray(w, dtype=float)
            if w.shape != (6,) or not np.all(np.isfinite(w)):
                raise ValueError(f"external wrench on link '{link}' must be 6 finite numbers [force, torque], "
                                 f"got {w}")
            try:
                lf = self.built.link_frame(link)
            except KeyError:
                raise ValueError(f"external wrench names unknown link '{link}' of robot '{self.model.name}'") from None
            p = d.xpos[lf.body_id]
            if not lf.offset_is_identity:
                p = p + d.xmat[lf.body_id].reshape(3, 3) @ lf.offset[:3, 3]
            mujoco.mj_jac(m, d, jac[:3], jac[3:], p, lf.body_id)
            chain_jac = jac[:, self._full_dadr]
            f, t = w[:3], w[3:]
            if not self._full_base_is_world:
                f, t = self._full_r_wb @ f, self._full_r_wb @ t
            out += chain_jac[:3].T @ f + chain_jac[3:].T @ t
        return out

    @property
    def gravity(self) -> np.ndarray:
        """Gravity's acceleration in the base frame (m/s^2)."""
        return self._r_wb.T @ np.asarray(self._m.opt.gravity, dtype=float)

    def tip_acceleration(self, q, qd, qdd) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(linear acceleration of the tip origin, angular velocity, angular acceleration) in the base frame.

        J qdd + Jdot qd with MuJoCo's Jacobian time derivative: the classical acceleration of the origin, what a
        point mass held at it feels (a payload's inertial force).
        """
        q = self._check_q(q)
        qd = self._check_q(qd, "qd")
        qdd = self._check_q(qdd, "qdd")
        m, d = self._m, self._d
        self._qpos[self._qadr] = q
        self._qvel[:] = 0.0
        self._qvel[self._dadr] = qd
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        mujoco.mj_comVel(m, d)
        p = self._tip_world()[0] if self._tip_offset is not None else self._xpos[self._tip_body]
        mujoco.mj_jac(m, d, self._jacp, self._jacr, p, self._tip_body)
        mujoco.mj_jacDot(m, d, self._jacdot[:3], self._jacdot[3:], p, self._tip_body)
        jac = self._jac[:, self._dadr]
        jdot = self._jacdot[:, self._dadr]
        lin = jac[:3] @ qdd + jdot[:3] @ qd
        omega = jac[3:] @ qd
        alpha = jac[3:] @ qdd + jdot[3:] @ qd
        if self._base_is_world:
            return lin, omega, alpha
        rt = self._r_wb.T
        return rt @ lin, rt @ omega, rt @ alpha

    def gravity_torques(self, q) -> np.ndarray:
        """Torques that hold the chain still against gravity at q (held joints included as loads)."""
        q = self._check_q(q)
        self._qpos[self._qadr] = q
        self._qvel[:] = 0.0
        m, d = self._m, self._d
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        mujoco.mj_comVel(m, d)
        mujoco.mj_rne(m, d, 0, self._rne)
        return self._rne[self._dadr].copy()

    def mass_matrix(self, q) -> np.ndarray:
        """nxn joint-space inertia matrix of the chain's joints at q."""
        q = self._check_q(q)
        m, d = self._full_m, self._full_d
        d.qpos[self._full_qadr] = q
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        mujoco.mj_crb(m, d)
        mujoco.mj_fullM(m, d, self._mfull)
        idx = self._full_dadr
        return self._mfull[np.ix_(idx, idx)]
