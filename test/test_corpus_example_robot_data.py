"""Every URDF and xacro that example-robot-data ships, loaded as a new user would load it.

Each file must load (``package://`` resolved), build its MuJoCo model, hold its initial pose for 1 s of simulated
time on a fixed base without NaN, and agree with Pinocchio (the oracle, reading the same XML) on the FK and
Jacobian of the end of its longest chain and on inverse dynamics (RNEA) at a random q, v, a. A file that is
genuinely invalid is listed in :data:`INVALID` with the reason its one-line error must give; the list is checked
both ways (listed files must fail with that reason, unlisted files must pass).
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET

import mujoco
import numpy as np
import pytest
from robot_files import ERD_ROBOTS

from robot_core.kinematics import SerialKinematicChain
from robot_core.model import RobotModel, RobotModelError, RobotModelWarning, load_robot
from robot_core.physics.engine import PhysicsEngine

pin = pytest.importorskip("pinocchio")

if ERD_ROBOTS is None:
    pytest.skip("example-robot-data is not installed in this environment", allow_module_level=True)

SHARE = ERD_ROBOTS.parent  # share/example-robot-data
FILES = sorted(str(p.relative_to(SHARE)) for p in ERD_ROBOTS.rglob("*")
               if p.is_file() and p.name.endswith((".urdf", ".xacro")))

# Files that are wrong, not merely sloppy: file -> how its one-line error goes on after the file's path
# (line, element, reason).
INVALID = {
    "robots/alex_description/urdf/alex_psyonic_hands.urdf":
        ":1030: joint 'Left_index_q2': mimic refers to joint 'index_q1' which does not exist",
    # A macro library, not a robot: expands to an empty <robot>.
    "robots/hector_description/robots/quadrotor_base.urdf.xacro": " (expanded):6: <robot>: missing attribute 'name'",
    # Includes .../hector_description/urdf/quadrotor_base.urdf.xacro; the file is in robots/, not urdf/.
    "robots/hector_description/robots/quadrotor_base.xacro":
        ":3: <xacro:include>: xacro expansion failed: No such file or directory",
    "robots/romeo_description/urdf/romeo_laas_small.urdf":
        ":328: link 'body' <inertial>: inertia is not positive definite (principal moments [-0.0213",
    "robots/ur_description/urdf/ur3.urdf": ":6: <robot>: missing attribute 'name'",  # an empty <robot>
}

HOLD_SECONDS = 1.0
TIMESTEP = 0.002
HOLD_TOLERANCE = 0.1  # rad or m a joint may move from its initial position (Baxter: a shoulder contact, 0.07)
TOL = 1e-8
GRAVITY = 9.81
PASSED: set[str] = set()
ATTEMPTED: set[str] = set()
REFUSED: dict[str, str] = {}  # listed-invalid file -> the one-line error it was refused with


def _one_line(message: str) -> bool:
    return "\n" not in message.strip()


def _load(rel: str) -> RobotModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        # The root above the package: found by the recursive package.xml search (and by folder name).
        return load_robot(SHARE / rel, package_dirs=[SHARE.parent.parent])


def _longest_chain(robot: RobotModel) -> tuple[str, str] | None:
    """(root, tip) of the root->leaf path with the most scalar joints and no planar/floating joint."""
    children: dict[str, list] = {}
    for j in robot.joints.values():
        children.setdefault(j.parent, []).append(j)
    root = robot.root_link
    best: tuple[int, str] | None = None
    stack = [(root, 0)]
    while stack:
        link, count = stack.pop()
        if best is None or count > best[0]:
            best = (count, link)
        for j in children.get(link, []):
            if j.type not in ("planar", "floating"):
                stack.append((j.child, count + (1 if j.is_scalar else 0)))
    if best is None or best[0] == 0:
        return None
    return root, best[1]


class _PinChain:
    """The same chain in Pinocchio, from the same (expanded) XML; joints outside the chain at our held values."""

    def __init__(self, robot: RobotModel, chain: SerialKinematicChain):
        self.model = pin.buildModelFromXML(robot.urdf_xml)
        self.data = self.model.createData()
        self.q0 = pin.neutral(self.model)
        built = chain.built
        for jid in range(1, self.model.njoints):
            ji = built.joints.get(self.model.names[jid])
            if ji is not None and ji.nq == 1:
                self._set(self.q0, jid, chain.held_qpos[ji.qpos_adr])
        self.jids = [self.model.getJointId(n) for n in chain.joint_names]
        self.vidx = np.array([self.model.joints[j].idx_v for j in self.jids])
        self.base = self.model.getFrameId(chain.base_link)
        self.tip = self.model.getFrameId(chain.tip_link)

    def _set(self, q: np.ndarray, jid: int, value: float) -> None:
        j = self.model.joints[jid]
        if j.nq == 1:
            q[j.idx_q] = value
        else:  # continuous: (cos, sin)
            q[j.idx_q: j.idx_q + 2] = (np.cos(value), np.sin(value))

    def q(self, qc: np.ndarray) -> np.ndarray:
        q = self.q0.copy()
        for jid, value in zip(self.jids, qc, strict=True):
            self._set(q, jid, value)
        return q

    def fk(self, qc: np.ndarray) -> np.ndarray:
        pin.framesForwardKinematics(self.model, self.data, self.q(qc))
        return (self.data.oMf[self.base].inverse() * self.data.oMf[self.tip]).homogeneous

    def jacobian(self, qc: np.ndarray) -> np.ndarray:
        jw = pin.computeFrameJacobian(self.model, self.data, self.q(qc), self.tip, pin.LOCAL_WORLD_ALIGNED)
        pin.updateFramePlacements(self.model, self.data)
        rt = self.data.oMf[self.base].rotation.T
        j = jw[:, self.vidx]
        return np.vstack((rt @ j[:3], rt @ j[3:]))

    def rnea(self, qc: np.ndarray, vc: np.ndarray, ac: np.ndarray) -> np.ndarray:
        v, a = np.zeros(self.model.nv), np.zeros(self.model.nv)
        v[self.vidx], a[self.vidx] = vc, ac
        return pin.rnea(self.model, self.data, self.q(qc), v, a)[self.vidx]


def _massless_inertias(xml: str) -> float:
    """Sum of the largest inertia entries of links whose <inertial> has mass 0 but an inertia (Bolt's feet):
    robot_core reads them as massless (an inertia without mass is unphysical), Pinocchio keeps the inertia."""
    total = 0.0
    for inertial in ET.fromstring(xml).iter("inertial"):
        mass, inertia = inertial.find("mass"), inertial.find("inertia")
        if mass is not None and inertia is not None and float(mass.get("value", "1")) == 0.0:
            total += max(abs(float(inertia.get(k, "0"))) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
    return total


def _adjustment_bound(robot: RobotModel, chain: SerialKinematicChain, extent: float) -> float:
    """How far the inertias the builder had to make valid for MuJoCo (point masses, broken triangle
    inequalities, massless moving links) and massless links read without their inertia may move the joint
    torques away from Pinocchio's (|v|, |a| <= 1)."""
    model = chain.built.model
    bound = 2.0 * _massless_inertias(robot.urdf_xml)
    for name in chain.built.adjusted_links:
        bid = chain.built.links[name].body_id
        inertial = robot.links[name].inertial
        mass = inertial.mass if inertial is not None else 0.0
        moments = np.linalg.eigvalsh(inertial.inertia) if inertial is not None else np.zeros(3)
        d_mass = abs(float(model.body_mass[bid]) - mass)
        d_inertia = float(np.max(np.abs(np.sort(model.body_inertia[bid]) - np.sort(moments))))
        bound += d_mass * (GRAVITY + 2.0) * extent + 2.0 * d_inertia
    return bound * max(chain.n, 1) * 2.0


def _summary() -> str:
    """The pass count, then every refused file with the reason it was refused for (the error's text after the
    file's path), so a reader of the CI log sees what is refused without opening this file."""
    lines = [f"example-robot-data corpus: {len(PASSED)} of {len(FILES)} files load, simulate and match Pinocchio; "
             f"{len(REFUSED)} of {len(INVALID)} listed invalid fail as listed; {len(FILES) - len(INVALID)} expected "
             "to pass"]
    lines += [f"  refused {rel}{REFUSED.get(rel, ': (not refused as listed: ' + INVALID[rel].strip() + ')')}"
              for rel in sorted(INVALID)]
    return "\n".join(lines)


def test_corpus_is_the_installed_package():
    assert len(FILES) >= 60, f"only {len(FILES)} URDF/xacro files under {ERD_ROBOTS}"
    assert set(INVALID) <= set(FILES), f"listed files that do not exist: {sorted(set(INVALID) - set(FILES))}"


def _too_weak_to_hold(robot: RobotModel, engine: PhysicsEngine) -> set[str]:
    """Joints whose effort limit is below the gravity torque they carry at the initial pose (PR2's shoulders
    rely on a counterbalance spring no URDF describes), and their mimics: these may sink, and that is physics."""
    data = mujoco.MjData(engine.model)
    data.qpos[:] = engine.data.qpos
    mujoco.mj_forward(engine.model, data)
    weak = set()
    for lim in engine.limits:
        ji = engine.built.joints.get(lim.joint)
        if ji is not None and ji.nv == 1 and abs(float(data.qfrc_bias[ji.dof_adr])) > lim.effort:
            weak.add(lim.joint)
    weak |= {j.name for j in robot.joints.values() if j.mimic is not None and j.mimic.joint in weak}
    return weak


@pytest.mark.parametrize("rel", FILES)
def test_file(rel):
    ATTEMPTED.add(rel)
    path = SHARE / rel
    if rel in INVALID:
        with pytest.raises(RobotModelError) as info:
            _load(rel)
        message = str(info.value)
        assert _one_line(message), f"{rel}: the error spans several lines: {message!r}"
        assert message.startswith(f"{path}{INVALID[rel]}"), \
            f"{rel}: expected an error naming the file and going on {INVALID[rel]!r}, got {message!r}"
        REFUSED[rel] = message[len(str(path)):]
        return

    robot = _load(rel)
    # Holds its initial pose for 1 s on a fixed base, without NaN.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        engine = PhysicsEngine(robot, fixed_base=True, include_visuals=False, timestep=TIMESTEP)
    q0 = engine.positions().copy()
    weak = _too_weak_to_hold(robot, engine)
    engine.step(round(HOLD_SECONDS / TIMESTEP))
    q1 = engine.positions()
    assert np.all(np.isfinite(q1)) and np.all(np.isfinite(engine.velocities())), f"{rel}: NaN after {HOLD_SECONDS} s"
    drift = np.where([n in weak for n in engine.joint_names], 0.0, np.abs(q1 - q0))
    worst = int(np.argmax(drift)) if drift.size else -1
    assert not drift.size or drift[worst] < HOLD_TOLERANCE, \
        f"{rel}: joint '{engine.joint_names[worst]}' drifted {drift[worst]:.3g} from its initial position in " \
        f"{HOLD_SECONDS} s"

    # Pinocchio on the longest chain.
    ends = _longest_chain(robot)
    if ends is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RobotModelWarning)
            chain = SerialKinematicChain(robot, *ends)
        pc = _PinChain(robot, chain)
        rng = np.random.default_rng(abs(hash(rel)) % 2**32)
        lo = np.where(np.isfinite(chain.lower), chain.lower, -np.pi)
        hi = np.where(np.isfinite(chain.upper), chain.upper, np.pi)
        q, v, a = rng.uniform(lo, hi), rng.uniform(-1, 1, chain.n), rng.uniform(-1, 1, chain.n)
        fk = chain.forward_kinematics(q)
        fk_err = float(np.max(np.abs(fk - pc.fk(q))))
        assert fk_err < TOL, f"{rel}: FK of {ends[1]} differs from Pinocchio by {fk_err:.3g}"
        jac_err = float(np.max(np.abs(chain.jacobian(q) - pc.jacobian(q))))
        assert jac_err < TOL, f"{rel}: Jacobian at {ends[1]} differs from Pinocchio by {jac_err:.3g}"
        tau, tau_pin = chain.inverse_dynamics(q, v, a), pc.rnea(q, v, a)
        extent = 1.0 + float(np.max(np.abs(fk[:3, 3])))
        tol = TOL * (1.0 + float(np.max(np.abs(tau_pin)))) + _adjustment_bound(robot, chain, extent)
        rnea_err = float(np.max(np.abs(tau - tau_pin)))
        assert rnea_err < tol, f"{rel}: inverse dynamics differ from Pinocchio by {rnea_err:.3g} (tolerance {tol:.3g})"
    PASSED.add(rel)


def test_pass_count(record_property):
    """Runs after every file (pytest keeps file order): the summary (pass count, every refused file with its
    reason) in the run's terminal summary, and the count as an assertion."""
    if len(ATTEMPTED) < len(FILES):
        pytest.skip("only part of the corpus ran")
    record_property("summary", _summary())
    assert len(PASSED) == len(FILES) - len(INVALID) and len(REFUSED) == len(INVALID), _summary()
