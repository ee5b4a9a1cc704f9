"""Inverse kinematics of SerialKinematicChain: success rates on Panda and UR5 and every status/option."""

from __future__ import annotations

import numpy as np
import pytest
from robot_files import PANDA, UR5, erd_robot

from robot_core.kinematics import IKStatus, SerialKinematicChain
from robot_core.model import load_robot

N_TARGETS = 1000
POS_TOL = 1e-6
ORI_TOL = 1e-5


@pytest.fixture(scope="module")
def panda() -> SerialKinematicChain:
    return SerialKinematicChain(load_robot(erd_robot(PANDA)), "panda_link0",
                                "panda_hand")


@pytest.fixture(scope="module")
def ur5() -> SerialKinematicChain:
    return SerialKinematicChain(load_robot(erd_robot(UR5)), "base_link", "tool0")


def _orientation_error(a: np.ndarray, b: np.ndarray) -> float:
    c = np.clip((np.trace(a[:3, :3].T @ b[:3, :3]) - 1.0) / 2.0, -1.0, 1.0)
    return float(np.arccos(c))


def _check_claim(chain: SerialKinematicChain, res, target: np.ndarray) -> None:
    """A CONVERGED result must really reach the target (re-checked by FK) within the limits."""
    assert chain.within_limits(res.q)
    pose = chain.forward_kinematics(res.q)
    assert np.linalg.norm(pose[:3, 3] - target[:3, 3]) <= POS_TOL * 1.0001
    assert _orientation_error(pose, target) <= ORI_TOL * 1.01


@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_near_seed_success_rate(name, request):
    chain = request.getfixturevalue(name)
    rng = np.random.default_rng(42)
    ok = 0
    ok_without_recovery = 0
    statuses: dict[str, int] = {}
    for _ in range(N_TARGETS):
        q_true = rng.uniform(chain.lower, chain.upper)
        target = chain.forward_kinematics(q_true)
        seed = np.clip(q_true + rng.uniform(-0.5, 0.5, chain.n), chain.lower, chain.upper)
        res = chain.inverse_kinematics(target, seed, position_tolerance=POS_TOL, orientation_tolerance=ORI_TOL)
        statuses[res.status.name] = statuses.get(res.status.name, 0) + 1
        if res.status is IKStatus.CONVERGED:
            _check_claim(chain, res, target)
            ok += 1
        plain = chain.inverse_kinematics(target, seed, recovery_attempts=0)
        ok_without_recovery += plain.status is IKStatus.CONVERGED
    rate = ok / N_TARGETS
    print(f"{name}: near-seed IK success {rate:.1%} ({statuses}); without recovery restarts "
          f"{ok_without_recovery / N_TARGETS:.1%}")
    assert rate >= 0.995


@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_uniform_seed_success_rate_with_restarts(name, request):
    chain = request.getfixturevalue(name)
    rng = np.random.default_rng(7)
    n = 100
    single, restarted = 0, 0
    for k in range(n):
        target = chain.forward_kinematics(rng.uniform(chain.lower, chain.upper))
        seed = rng.uniform(chain.lower, chain.upper)
        one = chain.inverse_kinematics(target, seed)
        single += one.success
        res = chain.inverse_kinematics_with_restarts(target, seed, restarts=20, seed=k)
        if res.success:
            _check_claim(chain, res, target)
            restarted += 1
    print(f"{name}: IK from uniformly random seeds: {single / n:.1%} single attempt, "
          f"{restarted / n:.1%} with up to 20 random restarts")
    # Issue #21 asks >= 90 % in one attempt on the Panda (was 64 % before recovery re-drew the joints stuck at a
    # limit) and >= 99.9 % with restarts; the floors are loose so that a seed change does not fail them, but a
    # return to the old recovery (56-70 % on these seeds) does.
    assert single / n >= 0.8
    assert restarted >= single and restarted / n >= 0.97


def test_position_only_targets(panda):
    rng = np.random.default_rng(3)
    for _ in range(50):
        q_true = rng.uniform(panda.lower, panda.upper)
        pose = panda.forward_kinematics(q_true)
        seed = np.clip(q_true + rng.uniform(-0.5, 0.5, panda.n), panda.lower, panda.upper)
        for target, kwargs in ((pose[:3, 3], {}), (pose, {"position_only": True})):
            res = panda.inverse_kinematics(target, seed, **kwargs)
            assert res.status is IKStatus.CONVERGED, res
            assert res.orientation_error == 0.0
            assert np.linalg.norm(panda.forward_kinematics(res.q)[:3, 3] - pose[:3, 3]) <= POS_TOL
            assert panda.within_limits(res.q)


def test_joint_weights_shift_motion(panda):
    rng = np.random.default_rng(4)
    moved_plain, moved_weighted = [], []
    heavy = np.ones(panda.n)
    heavy[0] = 1e3
    for _ in range(100):
        q_true = rng.uniform(panda.lower * 0.8, panda.upper * 0.8)
        target = panda.forward_kinematics(q_true)
        seed = np.clip(q_true + rng.uniform(-0.3, 0.3, panda.n), panda.lower, panda.upper)
        plain = panda.inverse_kinematics(target, seed)
        weighted = panda.inverse_kinematics(target, seed, joint_weights=heavy)
        if plain.success and weighted.success:
            moved_plain.append(abs(plain.q[0] - seed[0]))
            moved_weighted.append(abs(weighted.q[0] - seed[0]))
    assert len(moved_plain) >= 90
    print(f"mean |dq1|: unweighted {np.mean(moved_plain):.4f} rad, weight 1000 on joint 1 "
          f"{np.mean(moved_weighted):.4f} rad")
    assert np.mean(moved_weighted) < 0.3 * np.mean(moved_plain)
    with pytest.raises(ValueError, match="joint_weights"):
        panda.inverse_kinematics(target, seed, joint_weights=np.zeros(panda.n))


CONTINUOUS_ARM = """<robot name="cont3">
  <link name="base"/>
  <link name="l1"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="l2"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="l3"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="tip"/>
  <joint name="j1" type="continuous"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="1"/></joint>
  <joint name="j3" type="continuous"><parent link="l2"/><child link="l3"/><origin xyz="0 0 0.4"/>
    <axis xyz="0 0 1"/></joint>
  <joint name="tipj" type="fixed"><parent link="l3"/><child link="tip"/><origin xyz="0.2 0 0.1"/></joint>
</robot>"""


def test_continuous_joints_stay_on_the_seed_branch():
    chain = SerialKinematicChain(load_robot(CONTINUOUS_ARM), "base", "tip")
    assert np.isinf(chain.lower[0]) and np.isinf(chain.upper[2])
    rng = np.random.default_rng(5)
    for turns in (0, 1, -2):
        for _ in range(20):
            q_true = np.array([3.0, 0.8, -3.0]) + rng.uniform(-0.3, 0.3, 3)
            q_true[[0, 2]] += 2 * np.pi * turns
            target = chain.forward_kinematics(q_true)
            seed = q_true + rng.uniform(-0.3, 0.3, 3)
            res = chain.inverse_kinematics(target, seed)
            assert res.status is IKStatus.CONVERGED, res
            # same branch as the seed: no 2π jump, even across ±π
            assert np.max(np.abs(res.q - seed)) < 1.0, (seed, res.q)


def test_unreachable_target(panda):
    target = np.eye(4)
    target[:3, 3] = [2.0, 0.5, 0.5]  # Panda reaches ~0.85 m
    seed = np.zeros(panda.n)
    seed[3] = -1.5
    res = panda.inverse_kinematics(target, seed)
    assert res.status in (IKStatus.UNREACHABLE, IKStatus.JOINT_LIMITS)
    assert res.status is not IKStatus.CONVERGED and res.position_error > 1.0
    assert panda.within_limits(res.q)
    res = panda.inverse_kinematics(target[:3, 3], seed)
    assert res.status is IKStatus.UNREACHABLE, res
    print(f"unreachable: {res.status.name}, position error {res.position_error:.3f} m after {res.iterations} it")


PLANAR_LIMITED = """<robot name="p2lim">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="b"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="tip"/>
  <joint name="q1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
  <joint name="q2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0.5 0 0"/><axis xyz="0 0 1"/>
    <limit lower="0" upper="1.0" effort="10" velocity="1"/></joint>
  <joint name="t" type="fixed"><parent link="b"/><child link="tip"/><origin xyz="0.4 0 0"/></joint>
</robot>"""


def test_joint_limit_status():
    chain = SerialKinematicChain(load_robot(PLANAR_LIMITED), "base", "tip")
    # Needs an elbow angle of ±1.8 rad, but the elbow stops at [0, 1]: only beyond the limits.
    target = chain.forward_kinematics(np.array([0.3, 1.8]))[:3, 3]
    res = chain.inverse_kinematics(target, np.array([0.3, 0.9]))
    assert res.status is IKStatus.JOINT_LIMITS, res
    assert res.q[1] == pytest.approx(1.0)
    assert chain.within_limits(res.q)
    # the same target is fine once it lies inside the limits
    ok = chain.inverse_kinematics(chain.forward_kinematics(np.array([0.3, 0.8]))[:3, 3], np.array([0.0, 0.5]))
    assert ok.status is IKStatus.CONVERGED


def test_iteration_limit_and_seed_clamping(panda):
    rng = np.random.default_rng(6)
    target = panda.forward_kinematics(rng.uniform(panda.lower, panda.upper))
    res = panda.inverse_kinematics(target, np.zeros(panda.n), max_iterations=1, recovery_attempts=0)
    assert res.status is IKStatus.ITERATION_LIMIT and res.iterations == 1
    outside = panda.upper + 1.0
    res = panda.inverse_kinematics(target, outside)
    assert panda.within_limits(res.q)


def test_bad_input(panda):
    good = panda.forward_kinematics(np.zeros(panda.n))
    with pytest.raises(ValueError, match="shape"):
        panda.inverse_kinematics(good, np.zeros(3))
    with pytest.raises(ValueError, match="4x4 pose or a 3-vector"):
        panda.inverse_kinematics(np.zeros(6), np.zeros(panda.n))
    bad = good.copy()
    bad[:3, :3] *= 2.0
    with pytest.raises(ValueError, match="not a rotation"):
        panda.inverse_kinematics(bad, np.zeros(panda.n))
    with pytest.raises(ValueError, match="not finite"):
        panda.inverse_kinematics(good, np.full(panda.n, np.nan))


def test_restarts_start_from_the_library_configuration_nearest_the_target(panda):
    """Restarts seed from the stored configuration whose tip is nearest the target (issue #21: fewer iterations).

    From uniformly random seeds one attempt needs a median of ~40 LM iterations on the Panda; with restarts the
    nearest library configurations (or the seed, when nearer, for ``SEED_BUDGET`` iterations) need a handful.
    """
    from robot_core.kinematics.ik import ROTATION_WEIGHT

    lib = panda.seed_library()
    rng = np.random.default_rng(11)
    q_goal = rng.uniform(panda.lower, panda.upper)
    target = panda.forward_kinematics(q_goal)
    nearest, _ = lib.nearest(target[:3, 3], target[:3, :3], 3)

    def score(q: np.ndarray) -> float:
        pose = panda.forward_kinematics(q)
        return float(np.sum((pose[:3, 3] - target[:3, 3]) ** 2)
                     + ROTATION_WEIGHT * (3.0 - np.sum(pose[:3, :3] * target[:3, :3])))

    scores = [score(q) for q in nearest]
    assert scores == sorted(scores)
    everyone = [score(q) for q in lib.qs]
    assert np.isclose(scores[0], min(everyone))
    iterations = []
    for k in range(40):
        target = panda.forward_kinematics(rng.uniform(panda.lower, panda.upper))
        res = panda.inverse_kinematics_with_restarts(target, rng.uniform(panda.lower, panda.upper), seed=k)
        assert res.success
        _check_claim(panda, res, target)
        iterations.append(res.iterations)
    print(f"restarts from random seeds: median {np.median(iterations):.0f} iterations")
    assert np.median(iterations) <= 15, iterations  # ~40 without the library


def test_seed_library_nearest_equals_the_direct_scores(panda):
    """nearest() scores every stored pose by one product of expanded terms: same order and values as scores()."""
    lib = panda.seed_library()
    rng = np.random.default_rng(5)
    for _ in range(20):
        target = panda.forward_kinematics(rng.uniform(panda.lower, panda.upper))
        for r_t in (target[:3, :3], None):
            direct = lib.scores(lib.positions, lib.rotations, target[:3, 3], r_t)
            qs, values = lib.nearest(target[:3, 3], r_t, 4)
            order = np.argsort(direct)[:4]
            np.testing.assert_array_equal(qs, lib.qs[order])
            np.testing.assert_allclose(values, direct[order], atol=1e-12)


def test_restarts_refuse_an_unknown_option_before_solving(panda):
    target = panda.forward_kinematics(np.zeros(panda.n))
    with pytest.raises(TypeError, match="position_tolerence"):
        panda.inverse_kinematics_with_restarts(target, position_tolerence=1e-3)
