"""Numerical inverse kinematics: damped least squares with Levenberg-Marquardt step control.

Why this shape: the serial chains we serve are redundant (Panda) or not (UR5), with hard joint limits
and continuous joints. Levenberg-Marquardt with a gain-ratio controlled damping (Nielsen's update) gives
Gauss-Newton speed near a solution and stays stable near singularities. Joint limits are handled by
clamping plus limit-aware weighting in the form of an active set: a joint pinned at a limit that the
step pushes further out gets zero mobility and the step is re-solved, so the other joints (the
redundancy, when there is one) do the work. (A smooth weighted-least-norm weighting after Chan & Dubey
was tried and lowered the success rate on Panda; it is not used.) Steps are capped so the result
stays on the seed's branch: angles are never wrapped, so continuous joints do not jump by 2π.

When a solve stalls the solver retries a few times (deterministic). After a stall in a local minimum it
starts from the seed perturbed by at most ``RECOVERY_SPREAD``, which keeps the result near the seed. After a
stall against joint limits (the common failure from a random seed: on the Panda 27 of 60 such solves ended
there) a small perturbation falls into the same trap, so the joints sitting at a limit restart from a uniform
draw within their range while the others keep the stalled configuration: from uniformly random seeds this
raised one call's success on the Panda from ~60 % to ~90 %, and an earlier give-up of stalled attempts (5
iterations) with up to 10 of them to 92-96 % (doc/benchmarks.md).

Restarts (``solve_ik_with_restarts``) want any solution fast: after a short try from the caller's seed they start
from the stored configurations (``SeedLibrary``) whose tips lie nearest the target.

The solver works in any fixed frame; :class:`robot_core.kinematics.chain.SerialKinematicChain` feeds it
world-frame residuals and Jacobians from MuJoCo.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

import mujoco
import numpy as np

# q -> (error e (m,), Jacobian of the pose (m, n), position error norm, orientation error norm).
# e is target minus current: position difference, then the rotation vector of R_target R^T.
Residual = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, float, float]]

LAMBDA_INIT = 1e-6
LAMBDA_MIN = 1e-12
LAMBDA_MAX = 1e4
MAX_STEP = 0.5  # rad (or m) per iteration, largest joint
LIMIT_EPS = 1e-10
RECOVERY_ATTEMPTS = 10
RECOVERY_SPREAD = 0.3
STALL_WINDOW = 5  # iterations
STALL_RELATIVE = 1e-4  # cost reduction over the window below which the solve has stalled
SEED_BUDGET = 5  # iterations for the caller's seed before restarts from library seeds take over
LIBRARY_SIZE = 1000  # stored configurations of a chain's SeedLibrary
LIBRARY_SEEDS = 3  # library seeds tried (nearest first) before uniform random ones
ROTATION_WEIGHT = 0.05  # m^2 per unit of (1 - cos angle) x 2 in SeedLibrary's distance: ~0.2 m per 1 rad


_chol_factor = mujoco.mju_cholFactor
_chol_solve = mujoco.mju_cholSolve
_mul_mat_mat_t = mujoco.mju_mulMatMatT
_mul_mat_t_vec = mujoco.mju_mulMatTVec
_mul_mat_vec = mujoco.mju_mulMatVec
_dot = mujoco.mju_dot


class IKStatus(enum.Enum):
    """Outcome of an IK solve; anything but CONVERGED means ``q`` does not reach the target."""

    CONVERGED = "converged"
    ITERATION_LIMIT = "iteration_limit"  # still improving when the budget ran out
    UNREACHABLE = "unreachable"  # stuck at a least-squares point: outside the workspace, or not from this seed
    JOINT_LIMITS = "joint_limits"  # stuck because joints sit at their limits and would need to go past them


@dataclass
class IKResult:
    q: np.ndarray
    status: IKStatus
    position_error: float  # m, |p_target - p|
    orientation_error: float  # rad, angle of R_target R^T (0 for position-only targets)
    iterations: int

    @property
    def success(self) -> bool:
        return self.status is IKStatus.CONVERGED


def orientation_error_vector(r_target: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Rotation vector (axis * angle, angle in [0, π]) taking ``r`` to ``r_target``, in the common frame."""
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, (r_target @ r.T).reshape(9))
    w = np.empty(3)
    mujoco.mju_quat2Vel(w, quat, 1.0)
    return w


def _solve_once(residual: Residual, q0: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                mobility: np.ndarray | None, position_tolerance: float, orientation_tolerance: float,
                max_iterations: int) -> IKResult:
    # Written with few numpy calls per iteration: on 6x7 problems the call overhead dominates. Each iteration
    # evaluates the residual and its Jacobian once, solves (J W J^T + lambda' I) y = e in place in a preallocated
    # matrix with MuJoCo's Cholesky, and clips with ufuncs into preallocated arrays (ndarray.clip's wrapper costs
    # more than the clipping). Reductions go through np.count_nonzero and ufunc.reduce: ndarray.all/any/max/sum
    # pass through a Python wrapper that costs more than the 7 numbers they reduce. Products and dot products go
    # through MuJoCo's mju_* into preallocated arrays: half the cost of numpy's on these sizes.
    maximum, minimum, chol_factor, chol_solve = np.maximum, np.minimum, _chol_factor, _chol_solve
    count_nonzero, add_reduce, max_reduce, absolute = np.count_nonzero, np.add.reduce, np.maximum.reduce, np.abs
    mul_mat_mat_t, mul_mat_t_vec, mul_mat_vec, dot = _mul_mat_mat_t, _mul_mat_t_vec, _mul_mat_vec, _dot
    q = minimum(maximum(q0, lower), upper)
    e, jac, perr, oerr = residual(q)
    m = len(e)
    cost = dot(e, e)
    lam = LAMBDA_INIT
    nu = 2.0
    it = 0
    stalled = False
    uniform = mobility is None  # (every joint equally mobile: J W = J)
    if uniform:
        mobility = np.ones(len(q))
    a = np.empty((m, m))
    y = np.empty(m)
    jdq = np.empty(m)
    step = np.empty(len(q))
    a_diag = a.reshape(-1)[:: m + 1]
    q_new = np.empty_like(q)
    at_lower = at_upper = None
    ref_cost, ref_it = cost, 0
    while it < max_iterations:
        if perr <= position_tolerance and oerr <= orientation_tolerance:
            return IKResult(q, IKStatus.CONVERGED, perr, oerr, it)
        it += 1
        free = mobility
        for _ in range(3):
            jw = jac if uniform and free is mobility else jac * free
            mul_mat_mat_t(a, jw, jac)
            a_diag += lam * (1.0 + add_reduce(a_diag) / m)
            chol_factor(a, 1e-15)
            chol_solve(y, a, e)
            dq = step
            mul_mat_t_vec(dq, jw, y)
            big = max_reduce(absolute(dq))
            if big > MAX_STEP:
                dq *= MAX_STEP / big
            np.add(q, dq, out=q_new)
            q_clip = minimum(maximum(q_new, lower), upper)
            if not count_nonzero(q_clip != q_new):
                break
            # Joints already at a limit that the step pushes further out: freeze them and re-solve.
            if at_lower is None:
                at_lower, at_upper = lower + LIMIT_EPS, upper - LIMIT_EPS
            pinned = ((q_new < lower) & (q <= at_lower)) | ((q_new > upper) & (q >= at_upper))
            if not count_nonzero(pinned):
                break
            free = np.where(pinned, 0.0, free)
        np.subtract(q_clip, q, out=step)
        mul_mat_vec(jdq, jac, step)
        predicted = 2.0 * dot(e, jdq) - dot(jdq, jdq)
        e_new, jac_new, perr_new, oerr_new = residual(q_clip)
        cost_new = dot(e_new, e_new)
        actual = cost - cost_new
        if actual > 0.0:
            rho = actual / predicted if predicted > 0.0 else 0.0
            lam = max(lam * max(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3), LAMBDA_MIN)
            nu = 2.0
            q, e, jac, perr, oerr, cost = q_clip, e_new, jac_new, perr_new, oerr_new, cost_new
            if it - ref_it >= STALL_WINDOW:
                # Barely moving for a while (e.g. stretched towards an unreachable target): give up.
                if ref_cost - cost < STALL_RELATIVE * ref_cost:
                    stalled = True
                    break
                ref_cost, ref_it = cost, it
        else:
            lam *= nu
            nu *= 2.0
            if lam > LAMBDA_MAX:
                stalled = True
                break
    if perr <= position_tolerance and oerr <= orientation_tolerance:
        return IKResult(q, IKStatus.CONVERGED, perr, oerr, it)
    if not stalled:
        return IKResult(q, IKStatus.ITERATION_LIMIT, perr, oerr, it)
    return IKResult(q, _stuck_status(q, e, jac, mobility, lower, upper), perr, oerr, it)


def solve_ik(residual: Residual, q_seed: np.ndarray, lower: np.ndarray, upper: np.ndarray, *,
             position_tolerance: float = 1e-6, orientation_tolerance: float = 1e-5, max_iterations: int = 200,
             joint_weights: np.ndarray | None = None, recovery_attempts: int = RECOVERY_ATTEMPTS) -> IKResult:
    """Solve residual(q) = 0 within the limits, starting at ``q_seed``.

    ``joint_weights`` (n,), all > 0: the cost of moving each joint (mobility 1/w); default all ones.
    ``max_iterations`` bounds each attempt; the reported ``iterations`` is the total over attempts.
    """
    n = len(q_seed)
    mobility = None if joint_weights is None else 1.0 / np.asarray(joint_weights, dtype=float)
    seed = np.asarray(q_seed, dtype=float)
    best = _solve_once(residual, seed, lower, upper, mobility, position_tolerance, orientation_tolerance,
                       max_iterations)
    total = best.iterations
    if best.success or recovery_attempts <= 0:
        return best
    rng = np.random.default_rng(0)
    lo = np.where(np.isfinite(lower), lower, seed - np.pi)
    hi = np.where(np.isfinite(upper), upper, seed + np.pi)
    for _ in range(recovery_attempts):
        if best.status is IKStatus.JOINT_LIMITS:
            # Pinned at limits: a small perturbation lands in the same trap, so the joints sitting at a limit
            # restart anywhere in their range and the others where the stall left them.
            at_limit = (best.q <= lower + 1e-6) | (best.q >= upper - 1e-6)
            start = np.where(at_limit, rng.uniform(lo, hi), best.q)
        else:
            start = seed + rng.uniform(-RECOVERY_SPREAD, RECOVERY_SPREAD, n)
        res = _solve_once(residual, start, lower, upper, mobility, position_tolerance, orientation_tolerance,
                          max_iterations)
        total += res.iterations
        if res.success:
            res.iterations = total
            return res
        if res.position_error + res.orientation_error < best.position_error + best.orientation_error:
            best = res
    best.iterations = total
    return best


def _stuck_status(q: np.ndarray, e: np.ndarray, jac: np.ndarray, mobility: np.ndarray | None, lower: np.ndarray,
                  upper: np.ndarray) -> IKStatus:
    """At a stall: blame the limits if the error gradient points past a limit a joint is sitting on."""
    grad = jac.T @ e if mobility is None else (jac.T @ e) * mobility  # direction that reduces the error
    scale = float(np.max(np.abs(grad))) if grad.size else 0.0
    at_low = q <= lower + 1e-9
    at_high = q >= upper - 1e-9
    blocked = (at_low & (grad < -1e-6 * scale)) | (at_high & (grad > 1e-6 * scale))
    if blocked.any() and scale > 1e-12:
        return IKStatus.JOINT_LIMITS
    return IKStatus.UNREACHABLE


def uniform_seeds(lower: np.ndarray, upper: np.ndarray, count: int, rng: np.random.Generator,
                  centre: np.ndarray | None = None) -> np.ndarray:
    """Uniform samples inside the limits; unlimited joints sample ±π around ``centre`` (or 0)."""
    lo = np.where(np.isfinite(lower), lower, -np.pi)
    hi = np.where(np.isfinite(upper), upper, np.pi)
    if centre is not None:
        c = np.asarray(centre, dtype=float)
        unlimited = ~(np.isfinite(lower) & np.isfinite(upper))
        lo = np.where(unlimited, c - np.pi, lo)
        hi = np.where(unlimited, c + np.pi, hi)
    return rng.uniform(lo, hi, size=(count, len(lo)))


class SeedLibrary:
    """Configurations spread over the joint limits with their tip poses, to seed restarts near a target.

    Why: from a uniformly random seed a solve needs ~50 LM iterations on the Panda (limits in the way); from the
    stored configuration whose tip lies nearest the target it needs a handful, so restarts start there. The
    distance is linear in the stored poses once expanded (|p|^2 - 2 p.p_t + |p_t|^2 + w (3 - R:R_t)), so all of
    them are scored by one matrix-vector product over a stored feature matrix.
    """

    def __init__(self, qs: np.ndarray, positions: np.ndarray, rotations: np.ndarray | None):
        self.qs = qs  # (k, n) inside the limits
        self.positions = positions  # (k, 3) tip positions, the solver's frame
        self.rotations = rotations  # (k, 9) tip rotations, row-major, or None (position-only chains' use)
        # Rows: p (3), R (9), |p|^2, 1; a target's weights: -2 p_t, -w R_t, 1, |p_t|^2 + 3 w. Stored transposed:
        # a row vector times a C-ordered matrix is the faster product here.
        k = len(qs)
        rot = np.zeros((k, 9)) if rotations is None else rotations
        self._features_t = np.ascontiguousarray(
            np.hstack([positions, rot, np.einsum("ij,ij->i", positions, positions)[:, None], np.ones((k, 1))]).T)
        self._position_features_t = np.ascontiguousarray(self._features_t[[0, 1, 2, 12, 13]])
        self._weights = np.empty(14)
        self._position_weights = np.empty(5)

    def scores(self, positions: np.ndarray, rotations: np.ndarray | None, p_target: np.ndarray,
               r_target: np.ndarray | None) -> np.ndarray:
        """Distance of tip poses (k, 3) / (k, 9) to the target: squared position distance (m^2) plus, for a pose,
        ``ROTATION_WEIGHT`` * ||R - R_target||_F^2 / 2 (= 1 - cos of the angle between them, x 2)."""
        diff = positions - p_target
        score = np.einsum("ij,ij->i", diff, diff)
        if r_target is not None and rotations is not None:
            score += ROTATION_WEIGHT * (3.0 - rotations @ np.ascontiguousarray(r_target).reshape(9))
        return score

    def nearest(self, p_target: np.ndarray, r_target: np.ndarray | None,
                count: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``count`` stored configurations nearest the target, nearest first, and their :meth:`scores`.

        Every stored pose's score is one product (see ``__init__``); the few nearest are found by repeated argmin
        (np.argpartition costs ~20 argmins on 1000 numbers)."""
        pp = float(p_target @ p_target)
        if r_target is not None and self.rotations is not None:
            g, features = self._weights, self._features_t
            g[3:12] = r_target.reshape(9)
            g[3:12] *= -ROTATION_WEIGHT
            g[13] = pp + 3.0 * ROTATION_WEIGHT
        else:
            g, features = self._position_weights, self._position_features_t
            g[4] = pp
        g[:3] = p_target
        g[:3] *= -2.0
        g[-2] = 1.0
        score = g @ features
        count = min(count, len(score))
        best = np.empty(count, dtype=np.intp)
        values = np.empty(count)
        for i in range(count):
            j = score.argmin()
            best[i] = j
            values[i] = score[j]
            score[j] = np.inf
        return self.qs[best], values


def solve_ik_with_restarts(solve: Callable[..., IKResult], lower: np.ndarray, upper: np.ndarray,
                           q_seed: np.ndarray | None, restarts: int, rng: Callable[[], np.random.Generator],
                           library_seeds: np.ndarray | None = None, seed_first: bool = True) -> IKResult:
    """Try the seed and ``library_seeds`` (nearest the target first; the seed first if ``seed_first``), then
    uniform random seeds drawn from ``rng()`` (called only if it comes to that).

    First CONVERGED wins, else the smallest error. With library seeds the given seed's attempt is cut short at
    ``SEED_BUDGET`` iterations without recovery: a seed near a solution converges well within that, a far one
    would spend ~40 iterations where a library seed needs a handful. ``solve(seed, **overrides)``.
    """
    attempts: list[tuple[np.ndarray, dict]] = []
    if q_seed is not None:
        budget = {} if library_seeds is None else {"max_iterations": SEED_BUDGET, "recovery_attempts": 0}
        attempts.append((q_seed, budget))
    if library_seeds is not None:
        library = [(s, {}) for s in library_seeds]
        attempts = attempts + library if seed_first else library + attempts
    best: IKResult | None = None
    total_iterations = 0
    for k in range(len(attempts) + restarts):
        if k == len(attempts):
            attempts.extend((s, {}) for s in uniform_seeds(lower, upper, restarts, rng(), centre=q_seed))
        seed, overrides = attempts[k]
        res = solve(seed, **overrides)
        total_iterations += res.iterations
        if res.success:
            res.iterations = total_iterations
            return res
        if best is None or res.position_error + res.orientation_error < best.position_error + best.orientation_error:
            best = res
    assert best is not None
    best.iterations = total_iterations
    return best
