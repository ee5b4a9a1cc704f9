"""Joint trajectories as plain data, and their interpolation.

``JointTrajectory``/``TrajectoryPoint`` mirror trajectory_msgs (times in
seconds, ``start_time`` = header stamp, 0 = "start when received"), so tests
and the model-based controllers need no ROS; the node converts messages.

:class:`TrajectorySpline` samples a trajectory that starts from an *implicit
first point*: the desired state (position, velocity, acceleration) at the
moment the trajectory is taken over. Every trajectory therefore begins exactly
where the previous command was -- activation and replacement never jump.

Per segment the polynomial follows what both end points provide (as in
ros2_controllers): positions only -> linear, + velocities -> cubic,
+ accelerations -> quintic. The implicit first point always has all three.
``method="none"`` does not interpolate: before the first point the start state
is held, inside a segment the segment's end point is forwarded. After the last
point the last positions are held with zero velocity and acceleration.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

INTERPOLATION_METHODS = ("splines", "none")


@dataclass
class TrajectoryPoint:
    positions: Sequence[float] = ()
    velocities: Sequence[float] = ()
    accelerations: Sequence[float] = ()
    effort: Sequence[float] = ()
    time_from_start: float = 0.0


@dataclass
class JointTrajectory:
    joint_names: list[str]
    points: list[TrajectoryPoint] = field(default_factory=list)
    start_time: float = 0.0


@dataclass
class JointSample:
    """A desired or measured joint state; arrays in the controller's joint order."""

    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray

    @staticmethod
    def at_rest(positions: Sequence[float] | np.ndarray) -> JointSample:
        q = np.array(positions, dtype=float)
        return JointSample(q, np.zeros_like(q), np.zeros_like(q))

    def copy(self) -> JointSample:
        return JointSample(self.positions.copy(), self.velocities.copy(), self.accelerations.copy())


def quintic_coefficients(p0: np.ndarray, v0: np.ndarray, a0: np.ndarray, p1: np.ndarray, v1: np.ndarray,
                         a1: np.ndarray, T: float) -> np.ndarray:
    """(6, n) coefficients c0..c5 of p(tau) = sum c_k tau^k meeting position/velocity/acceleration at both ends."""
    T2, T3 = T * T, T * T * T
    dp = p1 - p0
    c3 = (20.0 * dp - (8.0 * v1 + 12.0 * v0) * T - (3.0 * a0 - a1) * T2) / (2.0 * T3)
    c4 = (-30.0 * dp + (14.0 * v1 + 16.0 * v0) * T + (3.0 * a0 - 2.0 * a1) * T2) / (2.0 * T3 * T)
    c5 = (12.0 * dp - 6.0 * (v1 + v0) * T - (a0 - a1) * T2) / (2.0 * T3 * T2)
    return np.stack([p0, v0, 0.5 * a0, c3, c4, c5])


def cubic_coefficients(p0: np.ndarray, v0: np.ndarray, p1: np.ndarray, v1: np.ndarray, T: float) -> np.ndarray:
    z = np.zeros_like(p0)
    c2 = (3.0 * (p1 - p0) - (2.0 * v0 + v1) * T) / (T * T)
    c3 = (2.0 * (p0 - p1) + (v0 + v1) * T) / (T * T * T)
    return np.stack([p0, v0, c2, c3, z, z])


def linear_coefficients(p0: np.ndarray, p1: np.ndarray, T: float) -> np.ndarray:
    z = np.zeros_like(p0)
    return np.stack([p0, (p1 - p0) / T, z, z, z, z])


@dataclass
class TrajectoryArrays:
    """A validated trajectory's points as arrays, made by the thread that stages it so that taking it over in
    the control cycle is a few array operations however many points it has. The joint trajectory controller and
    the web view's goal path (which draws what the controller will follow) both build their spline here."""

    cols: np.ndarray  # controller joint index of each trajectory joint
    time_from_start: np.ndarray  # (N,)
    positions: np.ndarray  # (N, k) in trajectory joint order
    velocities: np.ndarray  # (N, k), zeros where a point has none
    accelerations: np.ndarray
    has_velocities: np.ndarray  # (N,) bool
    has_accelerations: np.ndarray

    @staticmethod
    def of(trajectory: JointTrajectory, joints: Sequence[str]) -> TrajectoryArrays:
        """``joints``: the controller's joints, in its order (each of the trajectory's must be one of them)."""
        pts = trajectory.points
        k = len(trajectory.joint_names)
        joints = list(joints)

        def rows(field: str) -> tuple[np.ndarray, np.ndarray]:
            given = np.array([len(getattr(p, field)) > 0 for p in pts], dtype=bool)
            out = np.zeros((len(pts), k))
            for r, p in enumerate(pts):
                if given[r]:
                    out[r] = np.asarray(getattr(p, field), dtype=float)
            return out, given

        vel, has_v = rows("velocities")
        acc, has_a = rows("accelerations")
        return TrajectoryArrays(np.array([joints.index(j) for j in trajectory.joint_names], dtype=np.intp),
                                np.array([float(p.time_from_start) for p in pts]),
                                np.array([np.asarray(p.positions, dtype=float) for p in pts]).reshape(len(pts), k),
                                vel, acc, has_v, has_a)

    def spline(self, time: float, start: JointSample, start_time: float = 0.0,
               method: str = "splines") -> TrajectorySpline | None:
        """The spline a controller follows when it takes this trajectory over at ``time`` from its desired state
        ``start`` (all its joints, in its order; joints the trajectory does not name hold their position at rest).
        ``start_time``: the trajectory's header stamp (0: it starts at ``time``). Waypoints at or before ``time``
        are dropped; None when that leaves none."""
        times = (start_time if start_time != 0.0 else time) + self.time_from_start
        keep = times > time
        count = int(np.count_nonzero(keep))
        if not count:
            return None
        n, cols = len(start.positions), self.cols
        rows: slice | np.ndarray = slice(None) if count == len(times) else keep
        pos, vel, acc = self.positions[rows], self.velocities[rows], self.accelerations[rows]
        if len(cols) != n or np.any(cols != np.arange(n)):
            full = np.repeat(start.positions[None, :], count, axis=0)
            full[:, cols] = pos
            pos = full
            vel, acc = (np.zeros((count, n)), np.zeros((count, n)))
            vel[:, cols] = self.velocities[rows]
            acc[:, cols] = self.accelerations[rows]
        return TrajectorySpline(time, start.copy(), times[rows], pos, vel, acc, method, self.has_velocities[rows],
                                self.has_accelerations[rows])


class TrajectorySpline:
    """Piecewise polynomial from an implicit start state through absolute-time waypoints.

    Args:
        start_time: when the start state holds (the moment of take-over).
        start: the start state (all of position, velocity, acceleration).
        times: absolute times of the waypoints, strictly increasing and > start_time.
        positions: (N, n) waypoint positions.
        velocities / accelerations: per waypoint an (n,) array or None when that point lacks it; or an (N, n)
            array, with ``has_velocities`` / ``has_accelerations`` (N,) saying which rows are given.
        method: "splines" or "none".

    Built inside the control cycle when a trajectory is taken over, so all segments are computed at once
    (array operations over every segment; a 50-point trajectory costs about what a 1-point one does).
    """

    def __init__(self, start_time: float, start: JointSample, times: Sequence[float], positions: np.ndarray,
                 velocities: Sequence[np.ndarray | None] | np.ndarray,
                 accelerations: Sequence[np.ndarray | None] | np.ndarray,
                 method: str = "splines", has_velocities: np.ndarray | None = None,
                 has_accelerations: np.ndarray | None = None):
        if method not in INTERPOLATION_METHODS:
            raise ValueError(f"interpolation method must be one of {INTERPOLATION_METHODS}, got '{method}'")
        times_a = np.asarray(times, dtype=float)
        if len(times_a) == 0:
            raise ValueError("a trajectory needs at least one point")
        if times_a[0] <= start_time or np.any(np.diff(times_a) <= 0.0):
            raise ValueError("waypoint times must increase strictly and follow the start time")
        self.method = method
        self.start_time = float(start_time)
        self.start = start.copy()
        self.times = times_a
        self.positions = P1 = np.asarray(positions, dtype=float)
        V1, hv = _rows(velocities, has_velocities, P1.shape)
        A1, ha = _rows(accelerations, has_accelerations, P1.shape)
        # Waypoint states for the "none" method and for sampling past the end (zeros where not given).
        self._point_v, self._point_a = V1, A1
        self.seg_start = np.concatenate([[self.start_time], times_a[:-1]])
        # Segment k runs from point k-1 (the start state for k = 0) to point k. Its polynomial follows what both
        # ends provide: velocities and accelerations -> quintic, velocities -> cubic, else linear.
        P0 = np.vstack([start.positions, P1[:-1]])
        V0 = np.vstack([start.velocities, V1[:-1]])
        A0 = np.vstack([start.accelerations, A1[:-1]])
        hv0 = np.concatenate([[True], hv[:-1]])
        ha0 = np.concatenate([[True], ha[:-1]])
        quintic = hv & ha & hv0 & ha0
        cubic = hv & hv0 & ~quintic
        linear = ~(quintic | cubic)
        T = (times_a - self.seg_start)[:, None]
        dp = P1 - P0
        coeffs = np.zeros((len(times_a), 6, P1.shape[1]))
        coeffs[:, 0] = P0
        # each kind only on its own rows (most trajectories are all one kind: a plain slice, no copies)
        for mask, fill in ((linear, _linear), (cubic, _cubic), (quintic, _quintic)):
            if mask.all():
                fill(coeffs, slice(None), dp, T, P0, V0, A0, V1, A1)
            elif mask.any():
                r = np.flatnonzero(mask)
                fill(coeffs, r, dp[r], T[r], P0[r], V0[r], A0[r], V1[r], A1[r])
        self.coeffs = coeffs  # (N, 6, n)
        self._times = self.times.tolist()  # bisect on a list beats numpy's searchsorted on a handful of points
        self._seg_start = self.seg_start.tolist()

    @property
    def end_time(self) -> float:
        return float(self.times[-1])

    @property
    def final_positions(self) -> np.ndarray:
        return self.positions[-1]

    def path(self, per_segment: int = 16) -> np.ndarray:
        """(1 + N * per_segment, n) positions from the start through every waypoint, ``per_segment`` evenly timed
        samples per segment (its end included): the path the reference follows, e.g. for drawing it."""
        out = [self.sample(self.start_time)[0].positions]
        for k, end in enumerate(self._times):
            for t in np.linspace(self._seg_start[k], end, per_segment + 1)[1:]:
                out.append(self.sample(min(float(t), end))[0].positions)
        return np.array(out)

    def segment_index(self, t: float) -> int:
        """Index of the waypoint the segment containing ``t`` ends at (len(times) when past the end)."""
        return bisect.bisect_right(self._times, t)

    def sample(self, t: float) -> tuple[JointSample, int]:
        """Desired state at absolute time ``t`` and the index of the waypoint being approached."""
        if t <= self.start_time:
            return self.start.copy(), 0
        k = self.segment_index(t)
        if k >= len(self.times):
            q = self.positions[-1].copy()
            return JointSample(q, np.zeros_like(q), np.zeros_like(q)), k
        if self.method == "none":
            if k == 0:
                return self.start.copy(), 0
            return JointSample(self.positions[k].copy(), self._point_v[k].copy(), self._point_a[k].copy()), k
        tau = t - self._seg_start[k]
        t2 = tau * tau
        t3 = t2 * tau
        # position, velocity and acceleration rows of the polynomial basis at tau: one small product for all joints
        basis = np.array(((1.0, tau, t2, t3, t3 * tau, t3 * t2),
                          (0.0, 1.0, 2.0 * tau, 3.0 * t2, 4.0 * t3, 5.0 * t3 * tau),
                          (0.0, 0.0, 2.0, 6.0 * tau, 12.0 * t2, 20.0 * t3)))
        qva = basis @ self.coeffs[k]
        return JointSample(qva[0], qva[1], qva[2]), k


def _rows(values: Sequence[np.ndarray | None] | np.ndarray, given: np.ndarray | None,
          shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Per-waypoint optional arrays as one (N, n) array (zeros where absent) and the (N,) mask of given rows."""
    if given is not None:
        return np.asarray(values, dtype=float).reshape(shape), np.asarray(given, dtype=bool)
    mask = np.array([v is not None for v in values], dtype=bool)
    out = np.zeros(shape)
    for k, v in enumerate(values):
        if v is not None:
            out[k] = v
    return out, mask


# Coefficients c1..c5 of the segments ``r`` of one kind (c0, the start position, is common); the arguments are
# those segments' rows: position change, duration (column), start position/velocity/acceleration, end
# velocity/acceleration.
def _linear(c: np.ndarray, r: Any, dp: np.ndarray, T: np.ndarray, *_: np.ndarray) -> None:
    c[r, 1] = dp / T


def _cubic(c: np.ndarray, r: Any, dp: np.ndarray, T: np.ndarray, P0: np.ndarray, V0: np.ndarray, A0: np.ndarray,
           V1: np.ndarray, A1: np.ndarray) -> None:
    c[r, 1] = V0
    c[r, 2] = (3.0 * dp - (2.0 * V0 + V1) * T) / (T * T)
    c[r, 3] = (-2.0 * dp + (V0 + V1) * T) / (T * T * T)


def _quintic(c: np.ndarray, r: Any, dp: np.ndarray, T: np.ndarray, P0: np.ndarray, V0: np.ndarray, A0: np.ndarray,
             V1: np.ndarray, A1: np.ndarray) -> None:
    T2 = T * T
    T3 = T2 * T
    c[r, 1] = V0
    c[r, 2] = 0.5 * A0
    c[r, 3] = (20.0 * dp - (8.0 * V1 + 12.0 * V0) * T - (3.0 * A0 - A1) * T2) / (2.0 * T3)
    c[r, 4] = (-30.0 * dp + (14.0 * V1 + 16.0 * V0) * T + (3.0 * A0 - 2.0 * A1) * T2) / (2.0 * T3 * T)
    c[r, 5] = (12.0 * dp - 6.0 * (V1 + V0) * T - (A0 - A1) * T2) / (2.0 * T3 * T2)
