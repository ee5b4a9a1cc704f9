"""SerialKinematicChain against an independent oracle (Pinocchio) on third-party and our own robots.

For every robot: 200+ random configurations within the limits; FK, Jacobian, inverse dynamics (gravity,
velocities, accelerations, external wrenches) and mass matrix must agree to 1e-8. Joints outside the
chain are held at the chain's documented hold values in both libraries. The Jacobian is also checked
against central finite differences of our own FK.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pytest
from robot_files import PANDA, PR2, UR5, erd_robot, own_robot

from robot_core.kinematics import SerialKinematicChain
from robot_core.model import RobotModelWarning, load_robot

pin = pytest.importorskip("pinocchio")

N_CONFIGS = 200
TOL = 1e-8


@dataclass
class Case:
    urdf: str
    base: str
    tip: str
    hold: dict[str, float] | None = None
    wrench_links: tuple[str, ...] = ()
    # Build the chain with the second constructor (explicit joint list) instead of the tree search.
    from_joint_list: bool = False


CASES = {
    "panda": lambda: Case(erd_robot(PANDA), "panda_link0", "panda_hand",
                          {"panda_finger_joint1": 0.02}, ("panda_hand", "panda_link5", "panda_leftfinger")),
    "panda_link8": lambda: Case(erd_robot(PANDA), "panda_link0", "panda_link8", None, ("panda_link8", "panda_hand")),
    "ur5": lambda: Case(erd_robot(UR5), "base_link", "tool0", None, ("tool0", "forearm_link")),
    "ur5_joint_list": lambda: Case(erd_robot(UR5), "base_link", "ee_link", None, ("ee_link", "wrist_1_link"),
                                   from_joint_list=True),
    "pr2_right_arm": lambda: Case(erd_robot(PR2), "torso_lift_link", "r_wrist_roll_link",
                                  {"torso_lift_joint": 0.1, "head_pan_joint": 0.3, "r_gripper_l_finger_joint": 0.2},
                                  ("r_gripper_palm_link", "r_elbow_flex_link")),
    "pr2_left_arm_from_footprint": lambda: Case(erd_robot(PR2), "base_footprint", "l_gripper_tool_frame",
                                                {"torso_lift_joint": 0.2}, ("l_gripper_r_finger_tip_link",)),
    "rc_arm": lambda: Case(own_robot("rc_arm.urdf"), "base_link", "tcp", None, ("tcp", "link4", "finger_left")),
    "planar2": lambda: Case(own_robot("planar2.urdf"), "base_link", "tip", None, ("tip",)),
}


class PinChain:
    """The same chain in Pinocchio: full model, non-chain joints at the hold values."""

    def __init__(self, urdf: str, chain: SerialKinematicChain):
        self.model = pin.buildModelFromUrdf(urdf)
        self.data = self.model.createData()
        self.chain = chain
        self.q0 = pin.neutral(self.model)
        built = chain.built
        for jid in range(1, self.model.njoints):
            name = self.model.names[jid]
            ji = built.joints.get(name)
            if ji is None or ji.nq != 1:
                continue
            self._set(self.q0, jid, chain.held_qpos[ji.qpos_adr])
        self.jids = [self.model.getJointId(n) for n in chain.joint_names]
        self.vidx = np.array([self.model.joints[j].idx_v for j in self.jids])
        self.base_fid = self.model.getFrameId(chain.base_link)
        self.tip_fid = self.model.getFrameId(chain.tip_link)

    def _set(self, q: np.ndarray, jid: int, value: float) -> None:
        j = self.model.joints[jid]
        if j.nq == 1:
            q[j.idx_q] = value
        elif j.nq == 2:  # continuous: (cos, sin)
            q[j.idx_q] = np.cos(value)
            q[j.idx_q + 1] = np.sin(value)
        else:
            raise AssertionError(f"unexpected joint {self.model.names[jid]}")

    def q(self, qc: np.ndarray) -> np.ndarray:
        q = self.q0.copy()
        for jid, v in zip(self.jids, qc, strict=True):
            self._set(q, jid, v)
        return q

    def vec(self, vc: np.ndarray) -> np.ndarray:
        v = np.zeros(self.model.nv)
        v[self.vidx] = vc
        return v

    def fk(self, qc):
        pin.framesForwardKinematics(self.model, self.data, self.q(qc))
        return (self.data.oMf[self.base_fid].inverse() * self.data.oMf[self.tip_fid]).homogeneous

    def fk_link(self, qc, link):
        pin.framesForwardKinematics(self.model, self.data, self.q(qc))
        return (self.data.oMf[self.base_fid].inverse() * self.data.oMf[self.model.getFrameId(link)]).homogeneous

    def jacobian(self, qc):
        q = self.q(qc)
        jw = pin.computeFrameJacobian(self.model, self.data, q, self.tip_fid, pin.LOCAL_WORLD_ALIGNED)
        pin.updateFramePlacements(self.model, self.data)
        rt = self.data.oMf[self.base_fid].rotation.T
        j = jw[:, self.vidx]
        return np.vstack((rt @ j[:3], rt @ j[3:]))

    def rnea(self, qc, vc, ac, wrenches=None):
        q = self.q(qc)
        fext = None
        if wrenches:
            pin.framesForwardKinematics(self.model, self.data, q)
            r_b = self.data.oMf[self.base_fid].rotation
            fext = [pin.Force.Zero() for _ in range(self.model.njoints)]
            for link, w in wrenches.items():
                fid = self.model.getFrameId(link)
                jid = self.model.frames[fid].parentJoint
                o_mi = self.data.oMi[jid]
                f_w, t_w = r_b @ w[:3], r_b @ w[3:]
                p_link = self.data.oMf[fid].translation
                t_joint = t_w + np.cross(p_link - o_mi.translation, f_w)
                fext[jid] += pin.Force(o_mi.rotation.T @ f_w, o_mi.rotation.T @ t_joint)
        tau = (pin.rnea(self.model, self.data, q, self.vec(vc), self.vec(ac)) if fext is None else
               pin.rnea(self.model, self.data, q, self.vec(vc), self.vec(ac), fext))
        return tau[self.vidx]

    def mass_matrix(self, qc):
        m = pin.crba(self.model, self.data, self.q(qc))
        m = np.triu(m) + np.triu(m, 1).T
        return m[np.ix_(self.vidx, self.vidx)]


def _random_q(chain: SerialKinematicChain, rng: np.random.Generator, n: int) -> np.ndarray:
    lo = np.where(np.isfinite(chain.lower), chain.lower, -np.pi)
    hi = np.where(np.isfinite(chain.upper), chain.upper, np.pi)
    return rng.uniform(lo, hi, size=(n, chain.n))


@pytest.fixture(scope="module", params=sorted(CASES))
def setup(request):
    case = CASES[request.param]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)  # PR2's known inertia warnings
        robot = load_robot(case.urdf)
    if case.from_joint_list:
        names = [j.name for j in robot.chain(case.base, case.tip)]
        chain = SerialKinematicChain.from_joint_list(robot, names, hold_positions=case.hold)
        assert (chain.base_link, chain.tip_link) == (case.base, case.tip)
    else:
        chain = SerialKinematicChain(robot, case.base, case.tip, hold_positions=case.hold)
    return request.param, case, chain, PinChain(case.urdf, chain)


def test_chain_joints_match_pinocchio_path(setup):
    _name, _case, chain, pc = setup
    assert chain.n == len(pc.jids) > 0
    # Pinocchio's support path of the tip, restricted to joints below the base, is our joint list.
    support = [pc.model.names[j] for j in pc.model.supports[pc.model.frames[pc.tip_fid].parentJoint]][1:]
    base_support = [pc.model.names[j] for j in pc.model.supports[pc.model.frames[pc.base_fid].parentJoint]][1:]
    assert [j for j in support if j not in base_support] == chain.joint_names


def test_forward_kinematics(setup):
    name, _case, chain, pc = setup
    rng = np.random.default_rng(1)
    worst = 0.0
    for q in _random_q(chain, rng, N_CONFIGS):
        worst = max(worst, float(np.max(np.abs(chain.forward_kinematics(q) - pc.fk(q)))))
    print(f"{name}: FK max |diff| = {worst:.2e} over {N_CONFIGS} configs")
    assert worst < TOL


def test_forward_kinematics_all(setup):
    name, _case, chain, pc = setup
    rng = np.random.default_rng(2)
    worst = 0.0
    for q in _random_q(chain, rng, N_CONFIGS):
        poses = chain.forward_kinematics_all(q)
        assert len(poses) == len(chain.link_names)
        np.testing.assert_allclose(poses[0], np.eye(4), atol=TOL)
        np.testing.assert_allclose(poses[-1], chain.forward_kinematics(q), atol=TOL)
        for link, pose in zip(chain.link_names, poses, strict=True):
            worst = max(worst, float(np.max(np.abs(pose - pc.fk_link(q, link)))))
    print(f"{name}: FK of all {len(chain.link_names)} chain links max |diff| = {worst:.2e}")
    assert worst < TOL


def test_respect_limits_clamps(setup):
    _name, _case, chain, pc = setup
    limited = np.isfinite(chain.lower)
    if not limited.any():
        pytest.skip("no limited joints")
    q = np.where(limited, chain.upper + 0.3, 0.1)
    np.testing.assert_allclose(chain.forward_kinematics(q, respect_limits=True),
                               pc.fk(np.clip(q, chain.lower, chain.upper)), atol=TOL)
    assert np.max(np.abs(chain.forward_kinematics(q) - pc.fk(q))) < TOL


def test_jacobian(setup):
    name, _case, chain, pc = setup
    rng = np.random.default_rng(3)
    worst = 0.0
    for q in _random_q(chain, rng, N_CONFIGS):
        jac = chain.jacobian(q)
        assert jac.shape == (6, chain.n)
        worst = max(worst, float(np.max(np.abs(jac - pc.jacobian(q)))))
    print(f"{name}: Jacobian max |diff| = {worst:.2e}")
    assert worst < TOL


def _log_vee(r: np.ndarray) -> np.ndarray:
    return np.asarray(pin.log3(r))


def test_jacobian_finite_differences(setup):
    name, _case, chain, _pc = setup
    rng = np.random.default_rng(4)
    h = 1e-6
    worst = 0.0
    for q in _random_q(chain, rng, 50):
        jac = chain.jacobian(q)
        fd = np.zeros_like(jac)
        for i in range(chain.n):
            dq = np.zeros(chain.n)
            dq[i] = h
            tp, tm = chain.forward_kinematics(q + dq), chain.forward_kinematics(q - dq)
            fd[:3, i] = (tp[:3, 3] - tm[:3, 3]) / (2 * h)
            fd[3:, i] = _log_vee(tp[:3, :3] @ tm[:3, :3].T) / (2 * h)
        worst = max(worst, float(np.max(np.abs(jac - fd))))
    print(f"{name}: Jacobian vs finite differences max |diff| = {worst:.2e}")
    assert worst < 1e-6


def test_inverse_dynamics(setup):
    name, _case, chain, pc = setup
    rng = np.random.default_rng(5)
    worst = {"gravity": 0.0, "full": 0.0, "velocity only": 0.0}
    for q in _random_q(chain, rng, N_CONFIGS):
        qd = rng.uniform(-2, 2, chain.n)
        qdd = rng.uniform(-5, 5, chain.n)
        z = np.zeros(chain.n)
        worst["gravity"] = max(worst["gravity"], float(np.max(np.abs(chain.gravity_torques(q) - pc.rnea(q, z, z)))))
        worst["full"] = max(worst["full"], float(np.max(np.abs(chain.inverse_dynamics(q, qd, qdd)
                                                                - pc.rnea(q, qd, qdd)))))
        worst["velocity only"] = max(worst["velocity only"],
                                     float(np.max(np.abs(chain.inverse_dynamics(q, qd, z) - pc.rnea(q, qd, z)))))
    print(f"{name}: inverse dynamics max |diff| = " + ", ".join(f"{k} {v:.2e}" for k, v in worst.items()))
    assert max(worst.values()) < TOL
    # gravity actually loads at least one joint (the test would be vacuous otherwise)
    assert np.max(np.abs(chain.gravity_torques(_random_q(chain, rng, 1)[0]))) > 1e-3


def test_inverse_dynamics_external_wrenches(setup):
    name, case, chain, pc = setup
    if not case.wrench_links:
        pytest.skip("no wrench links for this case")
    rng = np.random.default_rng(6)
    worst = 0.0
    for q in _random_q(chain, rng, N_CONFIGS):
        qd = rng.uniform(-1, 1, chain.n)
        qdd = rng.uniform(-1, 1, chain.n)
        wrenches = {link: rng.uniform(-20, 20, 6) for link in case.wrench_links}
        ours = chain.inverse_dynamics(q, qd, qdd, external_wrenches=wrenches)
        worst = max(worst, float(np.max(np.abs(ours - pc.rnea(q, qd, qdd, wrenches)))))
        assert np.max(np.abs(ours - chain.inverse_dynamics(q, qd, qdd))) > 1e-6  # the wrench matters
    print(f"{name}: inverse dynamics with external wrenches max |diff| = {worst:.2e}")
    assert worst < TOL


def test_mass_matrix(setup):
    name, _case, chain, pc = setup
    rng = np.random.default_rng(7)
    worst = 0.0
    for q in _random_q(chain, rng, N_CONFIGS):
        m = chain.mass_matrix(q)
        assert m.shape == (chain.n, chain.n)
        worst = max(worst, float(np.max(np.abs(m - pc.mass_matrix(q)))))
    print(f"{name}: mass matrix max |diff| = {worst:.2e}")
    assert worst < TOL


def test_dynamics_consistency(setup):
    """ID = M qdd + ID(q, qd, 0): the three dynamics entry points agree with each other."""
    _name, _case, chain, _pc = setup
    rng = np.random.default_rng(8)
    for q in _random_q(chain, rng, 20):
        qd, qdd = rng.uniform(-1, 1, chain.n), rng.uniform(-1, 1, chain.n)
        lhs = chain.inverse_dynamics(q, qd, qdd)
        rhs = chain.mass_matrix(q) @ qdd + chain.inverse_dynamics(q, qd, np.zeros(chain.n))
        np.testing.assert_allclose(lhs, rhs, atol=1e-9)



def test_hot_queries_run_on_the_chain_model(setup):
    """Every oracle case fits the chain-only model (chain_model.py), so the checks above are of that model."""
    _name, _case, chain, _pc = setup
    assert chain.uses_chain_model
