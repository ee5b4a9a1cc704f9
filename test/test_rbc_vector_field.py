"""VectorField reacher on rc_arm closed on the real MuJoCo engine, plus its WDLS/limit-weight rules."""

from __future__ import annotations

import numpy as np
import pytest
from rbc_helpers import ARM, load_rc_arm, rc_arm_loop

from robot_core.kinematics import SerialKinematicChain
from robot_core.rbc.engine_loop import EngineLoop
from robot_core.rbc.errors import RbcGoalError, RbcParamError
from robot_core.rbc.instance import ABORTED, SUCCEEDED
from robot_core.rbc.reachers.vector_field import PoseGoal, limit_weights, wdls
from robot_core.rbc.rotations import matrix_to_quat_xyzw, orientation_error, quat_xyzw_to_matrix


@pytest.fixture(scope="module")
def model():
    return load_rc_arm()


@pytest.fixture
def sim(model):
    return rc_arm_loop(model)


def limits(model):
    lo = np.array([model.joints[j].limit.lower for j in ARM])
    hi = np.array([model.joints[j].limit.upper for j in ARM])
    return lo, hi


def goal_from_q(model, q, **kw) -> tuple[PoseGoal, np.ndarray]:
    t = SerialKinematicChain(model, "base_link", "tcp").forward_kinematics(np.asarray(q, dtype=float))
    return PoseGoal(t[:3, 3], matrix_to_quat_xyzw(t[:3, :3]), **kw), t


class LimitWatch:
    """Records the smallest distance of any arm joint to its limits over a run."""

    def __init__(self, model):
        self.lo, self.hi = limits(model)
        self.worst = np.inf

    def __call__(self, loop: EngineLoop) -> None:
        q = loop.engine.positions()[:7]
        self.worst = min(self.worst, float(np.min(np.minimum(q - self.lo, self.hi - q))))


@pytest.mark.parametrize(("output_var", "q_goal", "max_time"), [
    ("q_ref", [0.4, 0.6, -0.3, 1.2, 0.3, 1.5, 0.5], 20.0),
    ("qd_ref", [0.2, 0.45, -0.1, 1.6, 0.1, 1.2, 0.2], 30.0),
])
def test_vf_reaches_a_cartesian_pose_within_1mm_and_0_01rad(model, sim, output_var, q_goal, max_time):
    vf = sim.coupler.create("VF", "VF0", {"base_link": "base_link", "end_link": "tcp", "output_var": output_var})
    assert vf.joints == ARM  # chain found by scanning the tree (fixed hand/tcp joints skipped)
    goal, target = goal_from_q(model, q_goal, linear_precision=0.001, angular_precision=0.01, timeout=max_time)
    start = sim.engine.link_pose("tcp")
    assert np.linalg.norm(start[:3, 3] - target[:3, 3]) > 0.05  # a real move
    vf.start_goal(goal)
    watch = LimitWatch(model)
    assert sim.run_until(lambda: vf.status().done, max_time + 1.0, each=watch)
    st = vf.status()
    assert st.state == SUCCEEDED, st.message
    # Independent check on the simulator's own pose of the tcp (the base is at the world origin).
    pose = sim.engine.link_pose("tcp")
    assert np.linalg.norm(pose[:3, 3] - target[:3, 3]) <= 0.001 + 1e-5
    assert np.linalg.norm(orientation_error(target[:3, :3], pose[:3, :3])) <= 0.01 + 1e-5
    assert watch.worst > 0.0
    assert st.result["linear_error"] <= 0.001 and st.result["angular_error"] <= 0.01


def test_vf_stays_inside_joint_limits_when_the_goal_needs_more(model, sim):
    # Start with joint1 close to its upper limit (2.9) and ask for the pose of joint1 = 3.3 (beyond it): the
    # field pushes joint1 towards the limit, its weight fades to zero and the other joints do what they can.
    _, hi = limits(model)
    home = [2.75, 0.3, 0.0, 1.9, 0.0, 0.94, 0.0]
    sim.engine.set_joint_state(dict(zip(ARM, home, strict=True)))
    sim.publish_state()
    goal, _ = goal_from_q(model, [3.3, 0.3, 0.0, 1.9, 0.0, 0.94, 0.0], timeout=3.0)
    vf = sim.coupler.create("VF", "VF0", {"end_link": "tcp", "limit_margin": 0.3})
    vf.start_goal(goal)
    watch = LimitWatch(model)
    weights_seen = []
    assert sim.run_until(lambda: vf.status().done, 5.0,
                         each=lambda lp: (watch(lp), weights_seen.append(vf.last_weights.copy())))
    st = vf.status()
    assert watch.worst >= -1e-3, f"a joint went {-watch.worst:.4f} rad past its limit"
    assert weights_seen[0][0] < 1.0  # approaching the limit from the start: joint1 already weighted down
    assert min(w[0] for w in weights_seen) < 0.2
    assert hi[0] - 0.1 < sim.engine.positions()[0] <= hi[0] + 1e-3
    assert st.state in (ABORTED, SUCCEEDED)
    # Moving away from the limit is not penalised, even right next to it.
    vf.cancel()
    goal, _ = goal_from_q(model, [2.0, 0.3, 0.0, 1.9, 0.0, 0.94, 0.0], timeout=20.0)
    vf.start_goal(goal)
    sim.cycle()
    assert vf.last_weights[0] == 1.0
    assert sim.run_until(lambda: vf.status().done, 21.0, each=watch)
    assert vf.status().state == SUCCEEDED
    assert watch.worst >= -1e-3


def test_limit_weights_reduce_only_towards_the_limit():
    lo, hi = np.array([-1.0, -1.0, -1.0, -np.inf]), np.array([1.0, 1.0, 1.0, np.inf])
    q = np.array([0.95, 0.95, 0.0, 5.0])
    w = limit_weights(q, np.array([+1.0, -1.0, +1.0, +1.0]), lo, hi, margin=0.2)
    np.testing.assert_allclose(w, [0.25, 1.0, 1.0, 1.0])  # towards upper / away / far / unlimited
    at_limit = limit_weights(np.array([1.0]), np.array([+1.0]), lo[:1], hi[:1], 0.2)
    assert at_limit[0] == 0.0
    away = limit_weights(np.array([1.0]), np.array([-1.0]), lo[:1], hi[:1], 0.2)
    assert away[0] == 1.0


def test_wdls_solves_the_task_and_freezes_zero_weight_joints(model):
    chain = SerialKinematicChain(model, "base_link", "tcp")
    q = np.array([0.1, 0.5, 0.2, 1.4, 0.1, 1.1, 0.3])
    jac = chain.jacobian(q)
    xdot = np.array([0.05, -0.02, 0.03, 0.1, 0.0, -0.1])
    qdot = wdls(jac, xdot, np.ones(7), 1e-6)
    np.testing.assert_allclose(jac @ qdot, xdot, atol=1e-8)
    w = np.ones(7)
    w[2] = 0.0
    qdot = wdls(jac, xdot, w, 1e-6)
    assert qdot[2] == 0.0
    np.testing.assert_allclose(jac @ qdot, xdot, atol=1e-6)  # 6 joints still span the 6D task here
    np.testing.assert_array_equal(wdls(jac, xdot, np.zeros(7), 0.0), np.zeros(7))  # all frozen, undamped


def test_vf_chain_params_and_goal_validation(sim):
    vf = sim.coupler.create("VF", "VF1")
    with pytest.raises(RbcGoalError, match="'end_link' is not set"):
        vf.start_goal(PoseGoal([0.3, 0.0, 0.5]))
    with pytest.raises(RbcParamError, match=r"VF 'VF1': parameter 'base_link'.*'link1' is not a descendant of 'link3'"):
        vf.configure({"base_link": "link3", "end_link": "link1"})
    with pytest.raises(RbcParamError, match=r"parameter 'end_link'.*unknown link 'gripper'"):
        vf.set_param("end_link", "gripper")
    vf.configure({"base_link": "link2", "end_link": "tcp"})
    assert vf.joints == ARM[2:]
    with pytest.raises(RbcGoalError, match="zero length"):
        vf.start_goal(PoseGoal([0.3, 0.0, 0.5], [0.0, 0.0, 0.0, 0.0]))
    with pytest.raises(RbcGoalError, match="3 finite numbers"):
        vf.start_goal(PoseGoal([0.3, np.nan, 0.5]))


def test_rotation_helpers_round_trip():
    rng = np.random.default_rng(3)
    for _ in range(20):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        r = quat_xyzw_to_matrix(q)
        np.testing.assert_allclose(quat_xyzw_to_matrix(matrix_to_quat_xyzw(r)), r, atol=1e-12)
        np.testing.assert_allclose(r @ r.T, np.eye(3), atol=1e-12)
    r_pi = quat_xyzw_to_matrix([1.0, 0.0, 0.0, 0.0])  # 180 deg about x
    np.testing.assert_allclose(np.abs(orientation_error(r_pi, np.eye(3))), [np.pi, 0.0, 0.0], atol=1e-9)


def test_vf_per_axis_tolerance_and_no_timeout(model, sim):
    """The documented VF goal's semantics in the core: per-axis bounds (a zero axis takes the parameter), an
    infinite timeout never fires, negative bounds are refused."""
    vf = sim.coupler.create("VF", "VF0", {"end_link": "tcp", "linear_precision": 0.001})
    with pytest.raises(RbcGoalError, match="linear_tolerance must be 3 finite numbers >= 0"):
        vf.start_goal(PoseGoal([0.3, 0.0, 0.5], linear_tolerance=[0.0, -0.01, 0.0]))
    with pytest.raises(RbcGoalError, match="timeout is nan"):
        vf.start_goal(PoseGoal([0.3, 0.0, 0.5], timeout=float("nan")))
    goal, target = goal_from_q(model, [0.3, 0.5, 0.0, 1.6, 0.0, 1.0, 0.0], timeout=float("inf"),
                               linear_tolerance=[0.0, 0.0, 0.02], angular_tolerance=[0.05, 0.05, 0.05])
    vf.start_goal(goal)
    assert sim.run_until(lambda: vf.status().done, 30.0)
    st = vf.status()
    assert st.state == SUCCEEDED, st.message
    err = np.array(st.result["error_vector"])
    assert np.all(np.abs(err[:2]) <= 0.001) and abs(err[2]) <= 0.02 and np.all(np.abs(err[3:]) <= 0.05)
    assert vf._reached(np.array([0.0005, 0.0, 0.015]), np.zeros(3), 0.015, 0.0)  # z: its own 0.02
    assert not vf._reached(np.array([0.002, 0.0, 0.0]), np.zeros(3), 0.002, 0.0)  # x: linear_precision 0.001
    # The reached pose and its error, as the documented result reports them, agree with the engine.
    pose = sim.engine.link_pose("tcp")
    np.testing.assert_allclose(st.result["position"], pose[:3, 3], atol=2e-3)
    np.testing.assert_allclose(np.array(st.result["position"]) + err[:3], target[:3, 3], atol=1e-9)
