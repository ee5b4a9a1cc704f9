"""Trajectory interpolation: boundary conditions, continuity, the implicit start point, the "none" method."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robot_core.control.trajectory import (
    JointSample,
    TrajectorySpline,
    cubic_coefficients,
    quintic_coefficients,
)

finite = st.floats(-5.0, 5.0, allow_nan=False)


def poly(c: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k = np.arange(6)
    p = sum(c[i] * tau**i for i in k)
    v = sum(i * c[i] * tau ** (i - 1) for i in k[1:])
    a = sum(i * (i - 1) * c[i] * tau ** (i - 2) for i in k[2:])
    return p, v, a


@settings(max_examples=60, deadline=None)
@given(p0=finite, v0=finite, a0=finite, p1=finite, v1=finite, a1=finite, T=st.floats(0.05, 5.0))
def test_quintic_meets_all_boundary_conditions(p0, v0, a0, p1, v1, a1, T):
    c = quintic_coefficients(*(np.array([x]) for x in (p0, v0, a0, p1, v1, a1)), T)
    for tau, (p, v, a) in ((0.0, (p0, v0, a0)), (T, (p1, v1, a1))):
        got = poly(c, tau)
        scale = 1.0 + abs(p0) + abs(p1) + abs(v0) + abs(v1) + abs(a0) + abs(a1)
        assert got[0][0] == pytest.approx(p, abs=1e-9 * scale / min(T, 1.0) ** 2)
        assert got[1][0] == pytest.approx(v, abs=1e-8 * scale / min(T, 1.0) ** 3)
        assert got[2][0] == pytest.approx(a, abs=1e-7 * scale / min(T, 1.0) ** 4)


@settings(max_examples=60, deadline=None)
@given(p0=finite, v0=finite, p1=finite, v1=finite, T=st.floats(0.05, 5.0))
def test_cubic_meets_position_and_velocity(p0, v0, p1, v1, T):
    c = cubic_coefficients(*(np.array([x]) for x in (p0, v0, p1, v1)), T)
    p, v, _ = poly(c, T)
    assert p[0] == pytest.approx(p1, abs=1e-9 * (1 + abs(p0) + abs(p1) + abs(v0) + abs(v1)) / min(T, 1) ** 2)
    assert v[0] == pytest.approx(v1, abs=1e-8 * (1 + abs(p0) + abs(p1) + abs(v0) + abs(v1)) / min(T, 1) ** 3)
    p, v, _ = poly(c, 0.0)
    assert (p[0], v[0]) == (p0, v0)


def spline(start: JointSample, times, pos, vel=None, acc=None, method="splines") -> TrajectorySpline:
    n = len(times)
    return TrajectorySpline(0.0, start, times, np.array(pos, dtype=float), vel or [None] * n, acc or [None] * n,
                            method)


def test_starts_exactly_at_the_start_state_and_is_continuous():
    start = JointSample(np.array([0.2, -0.1]), np.array([0.5, 0.0]), np.array([1.0, -2.0]))
    times = [0.5, 1.0, 2.0]
    pos = [[0.4, 0.0], [0.9, 0.3], [1.0, 0.3]]
    vel = [np.array([0.8, 0.4]), np.array([0.3, 0.1]), np.zeros(2)]
    acc = [np.zeros(2), np.array([-1.0, 0.0]), np.zeros(2)]
    s = spline(start, times, pos, vel, acc)
    s0, k = s.sample(1e-12)
    assert k == 0
    assert np.allclose(s0.positions, start.positions) and np.allclose(s0.velocities, start.velocities)
    assert np.allclose(s0.accelerations, start.accelerations, atol=1e-6)
    # waypoints are met, and position/velocity/acceleration are continuous across them
    for t, p, v, a in zip(times, pos, vel, acc, strict=True):
        before, _ = s.sample(t - 1e-9)
        after, _ = s.sample(t + 1e-9)
        assert np.allclose(before.positions, p, atol=1e-7) and np.allclose(after.positions, p, atol=1e-7)
        assert np.allclose(before.velocities, v, atol=1e-6) and np.allclose(after.velocities, v, atol=1e-6)
        if t < times[-1]:
            assert np.allclose(before.accelerations, a, atol=1e-5) and np.allclose(after.accelerations, a, atol=1e-5)
    end, k = s.sample(5.0)
    assert k == 3 and np.allclose(end.positions, pos[-1]) and not end.velocities.any()
    # numerical derivative of the sampled position equals the sampled velocity
    ts = np.linspace(0.01, 1.99, 50)
    for t in ts:
        a, _ = s.sample(t - 1e-6)
        b, _ = s.sample(t + 1e-6)
        mid, _ = s.sample(t)
        assert np.allclose((b.positions - a.positions) / 2e-6, mid.velocities, atol=1e-4)


def test_segment_degree_follows_what_points_provide():
    start = JointSample.at_rest([0.0])
    lin = spline(start, [1.0, 2.0], [[0.0], [1.0]])
    mid, _ = lin.sample(1.5)
    assert mid.positions[0] == pytest.approx(0.5) and mid.velocities[0] == pytest.approx(1.0)
    cub = spline(start, [1.0], [[1.0]], [np.zeros(1)])
    mid, _ = cub.sample(0.5)
    assert mid.positions[0] == pytest.approx(0.5) and mid.velocities[0] == pytest.approx(1.5)  # 3/2 * dp/T


def test_none_method_steps():
    start = JointSample.at_rest([0.0])
    s = spline(start, [1.0, 2.0], [[1.0], [3.0]], method="none")
    assert s.sample(0.5)[0].positions[0] == 0.0  # before the first point: the start state
    assert s.sample(1.5)[0].positions[0] == 3.0  # inside a segment: its end point is forwarded
    assert s.sample(2.5)[0].positions[0] == 3.0


def test_rejects_bad_times():
    start = JointSample.at_rest([0.0])
    with pytest.raises(ValueError, match="increase strictly"):
        spline(start, [1.0, 1.0], [[0.0], [1.0]])
    with pytest.raises(ValueError, match="follow the start time"):
        spline(start, [0.0], [[0.0]])


def test_all_segments_at_once_equal_the_per_segment_polynomials():
    """The spline computes every segment in one pass; each must equal the polynomial of its own end points."""
    rng = np.random.default_rng(7)
    n, N = 3, 9
    start = JointSample(rng.normal(size=n), rng.normal(size=n), rng.normal(size=n))
    times = np.cumsum(rng.uniform(0.1, 0.8, N))
    pos = rng.normal(size=(N, n))
    vel = [rng.normal(size=n) if k % 3 != 1 else None for k in range(N)]  # gaps make linear / cubic segments
    acc = [rng.normal(size=n) if k % 2 == 0 else None for k in range(N)]
    s = TrajectorySpline(0.0, start, times, pos, vel, acc)
    p0, v0, a0, t0 = start.positions, start.velocities, start.accelerations, 0.0
    kinds = set()
    for k in range(N):
        T = times[k] - t0
        if vel[k] is not None and acc[k] is not None and v0 is not None and a0 is not None:
            expected, kind = quintic_coefficients(p0, v0, a0, pos[k], vel[k], acc[k], T), "quintic"
        elif vel[k] is not None and v0 is not None:
            expected, kind = cubic_coefficients(p0, v0, pos[k], vel[k], T), "cubic"
        else:
            expected, kind = np.stack([p0, (pos[k] - p0) / T, *([np.zeros(n)] * 4)]), "linear"
        kinds.add(kind)
        np.testing.assert_allclose(s.coeffs[k], expected, rtol=1e-12, atol=1e-12)
        p0, v0, a0, t0 = pos[k], vel[k], acc[k], times[k]
    assert kinds == {"quintic", "cubic", "linear"}
    # the same from arrays with masks
    has_v = np.array([v is not None for v in vel])
    has_a = np.array([a is not None for a in acc])
    V = np.array([v if v is not None else np.zeros(n) for v in vel])
    A = np.array([a if a is not None else np.zeros(n) for a in acc])
    s2 = TrajectorySpline(0.0, start, times, pos, V, A, has_velocities=has_v, has_accelerations=has_a)
    np.testing.assert_array_equal(s2.coeffs, s.coeffs)
