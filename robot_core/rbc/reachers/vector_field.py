"""VectorField ("VF"): brings a link (``end_link``) to a Cartesian pose along an attractor field.

The field: the commanded twist is ``k * error`` (position error in m, orientation error as a rotation vector),
each part clipped to its maximum speed. Far from the goal the end link moves at the maximum speed; near it the
speed shrinks in proportion to the distance, so it arrives softly and never overshoots in the ideal case.

The twist becomes joint velocities by weighted damped least squares on the chain Jacobian,
``qdot = W J^T (J W J^T + lambda^2 I)^-1 xdot``, with ``W = diag(w)``. Each joint's weight falls linearly from 1
to 0 over the last ``limit_margin`` before a limit, but only for the limit it is moving towards: the direction
comes from the unweighted solution and is re-checked after weighting, so a joint sitting at a limit still moves
freely away from it. As a last guard no joint velocity may carry the joint past its limit within one cycle.

Poses are in the ``base_link`` frame (goal position + quaternion x, y, z, w as in geometry_msgs/Pose); the chain
is every movable joint from ``base_link`` down to ``end_link``, found by walking the tree.

Obstacles (spheres and planes in ``base_link``, parameters ``obstacle_spheres`` / ``obstacle_planes``) bend the
linear part of the field around them (robot_core.rbc.obstacles); the bodies of ``obstacle_links`` (e.g. the
forearm: capsules bounding its collision shapes, or the segment to the next link's origin,
robot_core.rbc.link_capsules) keep out of them too, the end link's field then followed in the freedom left
(``_guard_links``).
A goal's precision is either the length of the error (``linear_precision`` / ``angular_precision``) or, when
``linear_tolerance`` / ``angular_tolerance`` are given, a bound per base_link axis; a timeout of ``math.inf``
means none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from robot_core.rbc.errors import RbcGoalError
from robot_core.rbc.instance import ABORTED, ACTIVE, SUCCEEDED, ParamSpec, UpdateResult
from robot_core.rbc.link_capsules import Capsule, link_capsules
from robot_core.rbc.obstacles import (
    Obstacle,
    avoid,
    blocked_goal,
    obstacle_names,
    planes_from_list,
    segment_clearance,
    spheres_from_list,
)
from robot_core.rbc.reachers.reacher import WEIGHT, Reacher
from robot_core.rbc.rotations import matrix_to_quat_xyzw, orientation_error, quat_xyzw_to_matrix
from robot_core.rbc.var_table import VarView


@dataclass
class PoseGoal:
    """Target pose of ``end_link`` in ``base_link``; precisions/timeout <= 0 mean "use the parameter", a timeout of
    ``math.inf`` none. ``linear_tolerance`` / ``angular_tolerance`` (3 numbers, base_link axes) replace the
    precision by per-axis bounds; a zero component takes the precision parameter's value for that axis."""

    position: tuple[float, float, float] | list[float] | np.ndarray
    orientation: tuple[float, float, float, float] | list[float] | np.ndarray = (0.0, 0.0, 0.0, 1.0)
    linear_precision: float = 0.0
    angular_precision: float = 0.0
    timeout: float = 0.0
    linear_tolerance: tuple[float, float, float] | list[float] | None = None
    angular_tolerance: tuple[float, float, float] | list[float] | None = None


def limit_weights(q: np.ndarray, direction: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                  margin: float) -> np.ndarray:
    """Per-joint WDLS weights in [0, 1]: distance to the limit being approached / margin (1 when moving away).

    A joint with zero ``direction`` counts as approaching neither limit.
    """
    w = np.ones_like(q)
    if margin <= 0:
        return w
    towards_upper = direction > 0
    towards_lower = direction < 0
    dist = np.full_like(q, np.inf)
    dist[towards_upper] = upper[towards_upper] - q[towards_upper]
    dist[towards_lower] = q[towards_lower] - lower[towards_lower]
    finite = np.isfinite(dist)
    w[finite] = np.clip(dist[finite] / margin, 0.0, 1.0)
    return w


def wdls(jac: np.ndarray, xdot: np.ndarray, weights: np.ndarray, damping: float) -> np.ndarray:
    """Weighted damped least squares joint velocities for task velocity ``xdot``."""
    jw = jac * weights  # J W (scales columns)
    a = jw @ jac.T + (damping * damping) * np.eye(jac.shape[0])
    try:
        return jw.T @ np.linalg.solve(a, xdot)
    except np.linalg.LinAlgError:  # undamped and rank deficient (e.g. every joint frozen): least-norm answer
        return jw.T @ (np.linalg.pinv(a) @ xdot)


class VectorField(Reacher):
    TYPE_NAME = "VF"
    PARAMS = (
        ParamSpec("base_link", "str", "", "frame of goal poses and root of the chain ('' = the robot's root link)"),
        ParamSpec("end_link", "str", "", "link brought to the goal pose"),
        WEIGHT,
        ParamSpec("k_linear", "float", 2.0, "position gain of the field (1/s)", minimum=0.0),
        ParamSpec("k_angular", "float", 2.0, "orientation gain of the field (1/s)", minimum=0.0),
        ParamSpec("max_linear_speed", "float", 0.25, "field speed far from the goal (m/s)", minimum=0.0),
        ParamSpec("max_angular_speed", "float", 1.0, "field angular speed far from the goal (rad/s)", minimum=0.0),
        ParamSpec("max_joint_velocity", "float", 1.5, "joint velocities are scaled down to stay below this",
                  minimum=0.0),
        ParamSpec("damping", "float", 0.02, "damping lambda of the least squares (m or rad)", minimum=0.0),
        ParamSpec("limit_margin", "float", 0.3, "distance to a limit over which a joint's weight fades to 0",
                  minimum=0.0),
        ParamSpec("linear_precision", "float", 0.001, "default goal position precision (m)", minimum=0.0),
        ParamSpec("angular_precision", "float", 0.01, "default goal orientation precision (rad)", minimum=0.0),
        ParamSpec("timeout", "float", 30.0, "default goal timeout in s (0 = none)", minimum=0.0),
        ParamSpec("output_var", "str", "q_ref", "cmd var written (q_ref: integrated positions, qd_ref: velocity)"),
        ParamSpec("state_var", "str", "q", "state var holding the measured positions"),
        ParamSpec("hold_after_success", "bool", True, "keep regulating the pose after the goal succeeded"),
        ParamSpec("obstacle_spheres", "float_list", [], "spheres the end link keeps out of: x, y, z, radius per "
                  "sphere (m, base_link)"),
        ParamSpec("obstacle_planes", "float_list", [], "planes the end link stays in front of: nx, ny, nz, offset "
                  "per plane (free side: n.p >= offset; base_link)"),
        ParamSpec("obstacle_clearance", "float", 0.02, "distance to an obstacle's surface the end link keeps (m)",
                  minimum=0.0),
        ParamSpec("obstacle_influence", "float", 0.1, "distance to an obstacle's surface below which the field "
                  "bends around it (m)", minimum=0.0),
        ParamSpec("obstacle_links", "str_list", [], "more links whose bodies keep out of the obstacles (capsules "
                  "around their collision shapes, else the segment to the next link's origin; links moved by the "
                  "first joints of the chain, e.g. the forearm; the end link's origin always does)"),
    )

    TOPIC_PARAMS = ("obstacle_spheres", "obstacle_planes")

    def __init__(self, name: str, context: Any):
        super().__init__(name, context)
        self._chain: Any = None
        self._joints: list[str] = []
        self._lower = np.zeros(0)
        self._upper = np.zeros(0)
        self._goal_p = np.zeros(3)
        self._goal_r = np.eye(3)
        self._lin_prec = self._ang_prec = self._timeout = 0.0
        self._elapsed = 0.0
        self._has_target = False
        self._holding = False
        self.last_error = (math.nan, math.nan)
        self.last_weights = np.zeros(0)
        self._obstacles: list[Obstacle] = []
        self.last_pose = np.full((4, 4), math.nan)
        self.last_error_vector = np.full(6, math.nan)
        self._lin_tol: np.ndarray | None = None
        self._ang_tol: np.ndarray | None = None
        # (obstacle link, its chain, its number of joints, its body's capsules in its frame)
        self._guards: list[tuple[str, Any, int, list[Capsule]]] = []

    # --- parameters -----------------------------------------------------------------------------
    def _base(self, staged: dict[str, Any]) -> str:
        return staged["base_link"] or self.context.model.root_link

    def _check_param(self, name: str, staged: dict[str, Any]) -> None:
        if name == "obstacle_spheres":
            spheres_from_list(staged[name])
        elif name == "obstacle_planes":
            planes_from_list(staged[name])
        if name in ("base_link", "end_link", "output_var", "state_var") and staged["end_link"]:
            base = self._base(staged)
            joints = self.context.chain_joints(base, staged["end_link"])
            if not joints:
                raise ValueError(f"no movable joint between '{base}' and '{staged['end_link']}'")
            self.context.check_joint_vars(joints, staged["state_var"], "state")
            self.context.check_joint_vars(joints, staged["output_var"], "cmd")
        if name in ("base_link", "end_link", "obstacle_links") and staged["end_link"]:
            self._guarded_joints(staged)

    def _guarded_joints(self, staged: dict[str, Any]) -> list[int]:
        """Per obstacle link, how many of the chain's first joints move it; ValueError naming a link that is not
        moved by a first part of the chain base_link -> end_link alone."""
        base = self._base(staged)
        joints = self.context.chain_joints(base, staged["end_link"])
        counts = []
        for link in staged["obstacle_links"]:
            if link not in self.context.model.links:
                raise ValueError(f"unknown link '{link}' in robot '{self.context.model.name}'")
            try:
                own = self.context.chain_joints(base, link)
            except ValueError:
                own = None
            if own is None or not own or own != joints[:len(own)]:
                raise ValueError(f"link '{link}' is not moved by a first part of the chain '{base}' -> "
                                 f"'{staged['end_link']}' (joints {joints}) alone")
            counts.append(len(own))
        return counts

    def _params_changed(self, names: set[str]) -> None:
        if names & {"obstacle_spheres", "obstacle_planes", "obstacle_clearance"}:
            self._obstacles = [*spheres_from_list(self.params["obstacle_spheres"]),
                               *planes_from_list(self.params["obstacle_planes"])]
            blocked = blocked_goal(self._goal_p, self._obstacles, self.params["obstacle_clearance"])
            if self._has_target and blocked:  # the goal can no longer be reached: stop instead of pushing forever
                if self._status.state == ACTIVE:
                    self._finish(ABORTED, f"obstacles changed: {blocked}")
                self._has_target = self._holding = False
        if names & {"base_link", "end_link", "obstacle_links"}:
            self._guards = []
        if names & {"base_link", "end_link"}:
            if self._status.state == ACTIVE:
                self._finish(ABORTED, "chain changed while a goal was active")
            self._has_target = self._holding = False
            self._chain = None

    def _ensure_chain(self) -> None:
        if self._chain is not None:
            return
        if not self.params["end_link"]:
            raise RbcGoalError(f"{self.label()}: parameter 'end_link' is not set")
        base = self._base(self.params)
        self._chain = self.context.chain(base, self.params["end_link"])
        self._joints = list(self._chain.joint_names)
        lims = [self.context.limits(j) for j in self._joints]
        self._lower = np.array([lo for lo, _ in lims])
        self._upper = np.array([hi for _, hi in lims])
        self._ensure_guards()

    def _ensure_guards(self) -> None:
        if self._guards or not self.params["obstacle_links"]:
            return
        base = self._base(self.params)
        chain_links = list(self._chain.link_names)
        self._guards = [(link, self.context.chain(base, link), n, link_capsules(self.context.model, link, chain_links))
                        for link, n in zip(self.params["obstacle_links"], self._guarded_joints(self.params),
                                           strict=True)]

    @property
    def joints(self) -> list[str]:
        self._ensure_chain()
        return list(self._joints)

    # --- goals ----------------------------------------------------------------------------------
    def start_goal(self, goal: PoseGoal) -> int:
        self._ensure_chain()
        p = np.asarray(goal.position, dtype=float).reshape(-1)
        quat = np.asarray(goal.orientation, dtype=float).reshape(-1)
        if p.size != 3 or not np.all(np.isfinite(p)):
            raise RbcGoalError(f"{self.label()}: goal position must be 3 finite numbers, got {goal.position!r}")
        if quat.size != 4 or not np.all(np.isfinite(quat)):
            raise RbcGoalError(f"{self.label()}: goal orientation must be 4 finite numbers (x, y, z, w)")
        try:
            r = quat_xyzw_to_matrix(quat)
        except ValueError as exc:
            raise RbcGoalError(f"{self.label()}: goal orientation: {exc}") from None
        for label, v in (("linear_precision", goal.linear_precision), ("angular_precision", goal.angular_precision)):
            if not math.isfinite(v):
                raise RbcGoalError(f"{self.label()}: goal {label} is not finite")
        if math.isnan(goal.timeout) or goal.timeout == -math.inf:
            raise RbcGoalError(f"{self.label()}: goal timeout is {goal.timeout} (0 = default, inf = none)")
        lin_tol = self._tolerance(goal.linear_tolerance, "linear_tolerance", self.params["linear_precision"])
        ang_tol = self._tolerance(goal.angular_tolerance, "angular_tolerance", self.params["angular_precision"])
        blocked = blocked_goal(p, self._obstacles, self.params["obstacle_clearance"]) or self._guard_blocked(p, r)
        if blocked:
            raise RbcGoalError(f"{self.label()}: {blocked}")
        gid = self._begin()
        self._lin_tol, self._ang_tol = lin_tol, ang_tol
        self._goal_p, self._goal_r = p, r
        self._lin_prec = goal.linear_precision if goal.linear_precision > 0 else self.params["linear_precision"]
        self._ang_prec = goal.angular_precision if goal.angular_precision > 0 else self.params["angular_precision"]
        self._timeout = goal.timeout if goal.timeout > 0 else self.params["timeout"]
        self._elapsed = 0.0
        self._has_target = True
        self._holding = False
        return gid

    def _guard_blocked(self, p: np.ndarray, r: np.ndarray) -> str | None:
        """Why the goal pose needs a guarded link's body (``obstacle_links``) inside an obstacle, so that the
        goal would only time out; None when that is not shown.

        A link moved by every joint of the chain rides with the end link: its pose follows from the goal's, and
        its capsules are checked there (exact). A link moved by fewer joints (an elbow) may take many poses for
        one goal: the goal is refused only when IK from IK_SEEDS fixed seeds finds solutions and every one of them
        puts the link's body inside an obstacle (a redundant arm with a free pose that IK did not find is then
        refused wrongly; one that IK finds is never refused)."""
        if not self._obstacles or not self.params["obstacle_links"]:
            return None
        self._ensure_guards()
        goal = np.eye(4)
        goal[:3, :3], goal[:3, 3] = r, p
        names = obstacle_names(self._obstacles)
        n_all = len(self._joints)
        q0 = np.clip(np.zeros(n_all), self._lower, self._upper)
        end0_inv = np.linalg.inv(self._chain.forward_kinematics(q0))
        partial = []
        for link, chain, n, capsules in self._guards:
            if n < n_all:
                partial.append((link, chain, n, capsules))
                continue
            hit = _capsule_inside(goal @ end0_inv @ chain.forward_kinematics(q0[:n]), capsules, self._obstacles)
            if hit is not None:
                cap, k, s = hit
                end = self.params["end_link"]
                return (f"the goal pose puts link '{link}' ({cap.source}), which moves with '{end}', {-s:.4g} m "
                        f"inside obstacle {names[k]}")
        if not partial:
            return None
        rng = np.random.default_rng(0)
        hits = []
        for _ in range(IK_SEEDS):
            res = self._chain.inverse_kinematics(goal, rng.uniform(self._lower, self._upper), max_iterations=100,
                                                 position_tolerance=1e-4, orientation_tolerance=1e-3)
            if not res.success:
                continue
            hit = next(((link, h) for link, chain, n, capsules in partial
                        if (h := _capsule_inside(chain.forward_kinematics(res.q[:n]), capsules, self._obstacles))
                        is not None), None)
            if hit is None:
                return None  # a pose with every guarded link out of the obstacles
            hits.append(hit)
        if not hits:
            return None  # IK found nothing: no evidence either way; the field tries
        link, (cap, k, s) = hits[0]
        return (f"every one of the {len(hits)} joint solutions found for the goal pose puts a guarded link inside an "
                f"obstacle (e.g. link '{link}' ({cap.source}) {-s:.4g} m inside obstacle {names[k]})")

    def _tolerance(self, values: Any, label: str, default: float) -> np.ndarray | None:
        """Per-axis bounds of a goal (zero components: ``default``); None when not given or all zero."""
        if values is None:
            return None
        t = np.asarray(values, dtype=float).reshape(-1)
        if t.size != 3 or not np.all(np.isfinite(t)) or np.any(t < 0):
            raise RbcGoalError(f"{self.label()}: goal {label} must be 3 finite numbers >= 0, got {values!r}")
        if not np.any(t > 0):
            return None
        return np.where(t > 0, t, default)

    def _reached(self, e_p: np.ndarray, e_r: np.ndarray, lin_err: float, ang_err: float) -> bool:
        lin_ok = (bool(np.all(np.abs(e_p) <= self._lin_tol)) if self._lin_tol is not None
                  else lin_err <= self._lin_prec)
        ang_ok = (bool(np.all(np.abs(e_r) <= self._ang_tol)) if self._ang_tol is not None
                  else ang_err <= self._ang_prec)
        return lin_ok and ang_ok

    def _on_cancel(self) -> None:
        self._has_target = self._holding = False

    # --- cycle ----------------------------------------------------------------------------------
    def joint_velocities(self, q: np.ndarray, dt: float) -> tuple[np.ndarray, float, float]:
        """Field twist at configuration q turned into joint velocities; also returns (linear, angular) error."""
        t = self._chain.forward_kinematics(q)
        e_p = self._goal_p - t[:3, 3]
        e_r = orientation_error(self._goal_r, t[:3, :3])
        self.last_pose, self.last_error_vector = t, np.concatenate([e_p, e_r])
        lin_err, ang_err = float(np.linalg.norm(e_p)), float(np.linalg.norm(e_r))
        v = self.params["k_linear"] * e_p
        w = self.params["k_angular"] * e_r
        vmax, wmax = self.params["max_linear_speed"], self.params["max_angular_speed"]
        if np.linalg.norm(v) > vmax:
            v *= vmax / np.linalg.norm(v)
        if np.linalg.norm(w) > wmax:
            w *= wmax / np.linalg.norm(w)
        if self._obstacles:
            v = avoid(t[:3, 3], v, self._goal_p, self._obstacles, self.params["obstacle_clearance"],
                      self.params["obstacle_influence"])
        xdot = np.concatenate([v, w])
        jac = np.asarray(self._chain.jacobian(q), dtype=float)
        lam = self.params["damping"]
        margin = self.params["limit_margin"]
        direction = wdls(jac, xdot, np.ones(len(q)), lam)
        weights = limit_weights(q, direction, self._lower, self._upper, margin)
        for _ in range(3):
            qdot = wdls(jac, xdot, weights, lam)
            # Joints still free may now head for a limit; frozen joints keep the unweighted direction.
            direction = np.where(weights > 0, qdot, direction)
            new_w = np.minimum(weights, limit_weights(q, direction, self._lower, self._upper, margin))
            if np.array_equal(new_w, weights):
                break
            weights = new_w
        else:
            qdot = wdls(jac, xdot, weights, lam)
        self.last_weights = weights
        if self._obstacles and self.params["obstacle_links"]:
            qdot = self._guard_links(q, qdot, jac, xdot, weights, lam)
        peak = float(np.max(np.abs(qdot))) if qdot.size else 0.0
        qmax = self.params["max_joint_velocity"]
        if peak > qmax > 0:
            qdot *= qmax / peak
        if dt > 0:
            qdot = np.clip(qdot, (self._lower - q) / dt, (self._upper - q) / dt)
        return qdot, lin_err, ang_err

    def _guard_links(self, q: np.ndarray, qdot: np.ndarray, jac: np.ndarray, xdot: np.ndarray,
                     weights: np.ndarray, lam: float) -> np.ndarray:
        """Joint velocities that keep each obstacle link's body out of the obstacles, the end link's task done
        in what freedom is left (a 7-joint arm moves its elbow around a sphere and still reaches the goal).

        Each body is a set of capsules (robot_core.rbc.link_capsules). For each capsule within
        ``obstacle_influence`` of a surface whose nearest point heads into it, that point's velocity along the
        surface normal ``n`` becomes a constraint ``g . qdot = d`` with ``g = J_point^T n`` (``J_point`` the
        link's Jacobian moved to the point): the inward speed scaled down by
        ``(influence - s) / (influence - clearance)`` (to zero at the clearance), plus the push out below the
        clearance. The end link's twist is then met in the constraints' null space."""
        self._ensure_guards()
        clearance, influence = self.params["obstacle_clearance"], self.params["obstacle_influence"]
        influence = max(influence, clearance + 1e-6)
        rows, wanted = [], []
        for _link, chain, n, capsules in self._guards:
            t = chain.forward_kinematics(q[:n])
            r, o = t[:3, :3], t[:3, 3]
            jl = np.asarray(chain.jacobian(q[:n]), dtype=float)
            for cap in capsules:
                a, b = o + r @ cap.a, o + r @ cap.b
                for obs in self._obstacles:
                    s, normal, p = segment_clearance(obs, a, b, cap.radius)
                    if s >= influence:
                        continue
                    arm = p - o  # v_p = v_o + w x arm
                    j_point = jl[:3] - np.cross(arm, jl[3:].T).T
                    g = np.zeros(len(q))
                    g[:n] = j_point.T @ normal
                    inward = float(g @ qdot)
                    push = 2.0 * (clearance - s) if s < clearance else 0.0
                    if inward >= push:
                        continue
                    a_fade = min(1.0, max(0.0, (influence - s) / (influence - clearance)))
                    rows.append(g)
                    wanted.append((1.0 - a_fade) * inward + push)
        if not rows:
            return qdot
        gm = np.array(rows)
        g_pinv = np.linalg.pinv(gm, rcond=1e-6)
        q0 = g_pinv @ np.array(wanted)
        null = np.eye(len(q)) - g_pinv @ gm
        return q0 + null @ wdls(jac @ null, xdot - jac @ q0, weights, lam)

    def _where(self) -> dict[str, Any]:
        """End-link pose (position, quaternion x y z w) and the error vector of the last cycle, for messages."""
        t = self.last_pose
        return {"position": [float(v) for v in t[:3, 3]],
                "orientation": [float(v) for v in matrix_to_quat_xyzw(t[:3, :3])],
                "error_vector": [float(v) for v in self.last_error_vector]}

    def update(self, now: float, dt: float, state: VarView) -> UpdateResult:
        result = UpdateResult()
        active = self._status.state == ACTIVE
        if not self._has_target or not (active or self._holding):
            return result
        sv = self.params["state_var"]
        stale = state.stale_joints(self._joints, sv)
        if stale:
            self._has_target = self._holding = False
            if active:
                self._finish(ABORTED, f"measured '{sv}' of joints {stale} is stale")
            return result
        q = np.array(state.values(self._joints, sv))
        qdot, lin_err, ang_err = self.joint_velocities(q, dt)
        self.last_error = (lin_err, ang_err)
        if active:
            self._elapsed += dt
            where = self._where()
            self._status.feedback = {"linear_error": lin_err, "angular_error": ang_err, **where}
            if self._reached(self.last_error_vector[:3], self.last_error_vector[3:], lin_err, ang_err):
                self._finish(SUCCEEDED, "reached within precision", linear_error=lin_err, angular_error=ang_err,
                             **where)
                self._holding = bool(self.params["hold_after_success"])
                if not self._holding:
                    self._has_target = False
                    return result
            elif self._timeout > 0 and self._elapsed > self._timeout:
                self._finish(ABORTED, f"timeout after {self._timeout:g} s (linear error {lin_err:.4g} m, "
                                      f"angular error {ang_err:.4g} rad)", linear_error=lin_err, angular_error=ang_err,
                             **where)
                self._has_target = False
                return result
        self.emit_velocities(result, self._joints, qdot, dt, self.params["output_var"])
        return result


IK_SEEDS = 8  # IK seeds tried before a goal is refused for a guarded link inside an obstacle


def _capsule_inside(t: np.ndarray, capsules: list[Capsule], obstacles: list[Any]) -> tuple[Capsule, int, float] | None:
    """The first capsule (link frame; the link at pose ``t``) that enters an obstacle: (capsule, obstacle index,
    distance between the surfaces, < 0); None when none does."""
    r, o = t[:3, :3], t[:3, 3]
    for cap in capsules:
        a, b = o + r @ cap.a, o + r @ cap.b
        for k, obs in enumerate(obstacles):
            s, _, _ = segment_clearance(obs, a, b, cap.radius)
            if s < 0.0:
                return cap, k, s
    return None
