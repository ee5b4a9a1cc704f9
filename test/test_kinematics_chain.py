"""SerialKinematicChain construction, held joints, bodies past the tip, wrenches; TreeKinematics for /tf."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from robot_files import PANDA, PR2
from robot_files import erd_robot as _erd

from robot_core.kinematics import SerialKinematicChain, TreeKinematics
from robot_core.model import RobotModelError, RobotModelWarning, load_robot


@pytest.fixture(scope="module")
def panda_robot():
    return load_robot(_erd(PANDA))


@pytest.fixture(scope="module")
def pr2_robot():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        return load_robot(_erd(PR2))


def test_joint_list_constructor_matches_search(panda_robot):
    searched = SerialKinematicChain(panda_robot, "panda_link0", "panda_hand")
    joints = [j.name for j in panda_robot.chain("panda_link0", "panda_hand")]
    links = ["panda_link0"] + [panda_robot.joints[j].child for j in joints]
    listed = SerialKinematicChain.from_joint_list(panda_robot, joints, links)
    assert listed.joint_names == searched.joint_names == [f"panda_joint{i}" for i in range(1, 8)]
    assert listed.link_names == links and (listed.base_link, listed.tip_link) == ("panda_link0", "panda_hand")
    q = np.linspace(-1, 1, 7)
    np.testing.assert_allclose(listed.forward_kinematics(q), searched.forward_kinematics(q), atol=1e-14)
    np.testing.assert_allclose(listed.inverse_dynamics(q, q, q), searched.inverse_dynamics(q, q, q), atol=1e-12)


def test_construction_errors(panda_robot):
    with pytest.raises(RobotModelError, match="unknown link 'nope'"):
        SerialKinematicChain(panda_robot, "panda_link0", "nope")
    with pytest.raises(RobotModelError, match="not a descendant"):
        SerialKinematicChain(panda_robot, "panda_hand", "panda_link0")
    with pytest.raises(RobotModelError, match="not connected"):
        SerialKinematicChain.from_joint_list(panda_robot, ["panda_joint1", "panda_joint3"])
    with pytest.raises(RobotModelError, match="unknown joint 'x'"):
        SerialKinematicChain.from_joint_list(panda_robot, ["panda_joint1", "x"])
    with pytest.raises(RobotModelError, match="need 3 links"):
        SerialKinematicChain.from_joint_list(panda_robot, ["panda_joint1", "panda_joint2"], ["panda_link0"])
    with pytest.raises(RobotModelError, match="connects"):
        SerialKinematicChain.from_joint_list(panda_robot, ["panda_joint1"], ["panda_link0", "panda_link2"])
    with pytest.raises(RobotModelError, match="hold_positions names unknown joint"):
        SerialKinematicChain(panda_robot, "panda_link0", "panda_hand", hold_positions={"bogus": 1.0})
    planar = load_robot("""<robot name="pl"><link name="a"/><link name="b"/>
      <joint name="p" type="planar"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint></robot>""")
    with pytest.raises(RobotModelError, match="planar"):
        SerialKinematicChain(planar, "a", "b")
    chain = SerialKinematicChain(panda_robot, "panda_link0", "panda_hand")
    with pytest.raises(ValueError, match=r"shape \(7,\).*panda_joint1"):
        chain.forward_kinematics(np.zeros(9))


def test_held_joints_and_a_base_that_is_not_the_root(pr2_robot):
    low = SerialKinematicChain(pr2_robot, "base_footprint", "l_gripper_tool_frame")
    high = SerialKinematicChain(pr2_robot, "base_footprint", "l_gripper_tool_frame",
                                hold_positions={"torso_lift_joint": 0.2})
    assert "torso_lift_joint" in low.joint_names  # in this chain the torso is a chain joint
    arm = SerialKinematicChain(pr2_robot, "torso_lift_link", "l_gripper_tool_frame")
    arm_high = SerialKinematicChain(pr2_robot, "torso_lift_link", "l_gripper_tool_frame",
                                    hold_positions={"torso_lift_joint": 0.2})
    assert "torso_lift_joint" not in arm.joint_names
    q = np.random.default_rng(0).uniform(-0.5, 0.5, arm.n)
    # poses are relative to the base: holding the torso higher moves the base, not the relative pose
    np.testing.assert_allclose(arm.forward_kinematics(q), arm_high.forward_kinematics(q), atol=1e-14)
    i = low.joint_names.index("torso_lift_joint")
    full = np.insert(q, i, 0.0)
    full_high = np.insert(q, i, 0.2)
    np.testing.assert_allclose(low.forward_kinematics(full_high), high.forward_kinematics(full_high), atol=1e-14)
    dz = low.forward_kinematics(full_high)[:3, 3] - low.forward_kinematics(full)[:3, 3]
    np.testing.assert_allclose(dz, [0, 0, 0.2], atol=1e-12)


def test_bodies_past_the_tip_are_carried(panda_robot):
    """A chain ending at link4 must still feel links 5..hand (held at their positions)."""
    rng = np.random.default_rng(1)
    long = SerialKinematicChain(panda_robot, "panda_link0", "panda_hand")
    for _ in range(10):
        q = rng.uniform(long.lower, long.upper)
        qd, qdd = rng.uniform(-1, 1, 7), rng.uniform(-1, 1, 7)
        hold = {f"panda_joint{i + 1}": q[i] for i in range(4, 7)}
        short = SerialKinematicChain(panda_robot, "panda_link0", "panda_link4", hold_positions=hold,
                                     built=long.built)
        np.testing.assert_allclose(short.gravity_torques(q[:4]), long.gravity_torques(q)[:4], atol=1e-10)
        qd[4:] = qdd[4:] = 0.0  # held joints do not move
        np.testing.assert_allclose(short.inverse_dynamics(q[:4], qd[:4], qdd[:4]),
                                   long.inverse_dynamics(q, qd, qdd)[:4], atol=1e-10)
        np.testing.assert_allclose(short.mass_matrix(q[:4]), long.mass_matrix(q)[:4, :4], atol=1e-12)
    assert np.abs(long.gravity_torques(q)).max() > 1.0


def test_wrenches_on_links_the_chain_does_not_carry(pr2_robot):
    arm = SerialKinematicChain(pr2_robot, "torso_lift_link", "r_wrist_roll_link")
    q = np.full(arm.n, 0.3)
    z = np.zeros(arm.n)
    base = arm.inverse_dynamics(q, z, z)
    w = np.array([1.0, 2.0, 3.0, 0.1, 0.2, 0.3])
    np.testing.assert_allclose(arm.inverse_dynamics(q, z, z, {"l_gripper_palm_link": w}), base, atol=1e-12)
    # a pure force at the tip origin: tau = -J^T f
    jac = arm.jacobian(q)
    np.testing.assert_allclose(arm.inverse_dynamics(q, z, z, {"r_wrist_roll_link": w}),
                               base - jac.T @ w, atol=1e-10)
    np.testing.assert_allclose(arm.gravity_torques(q), base, atol=1e-12)
    with pytest.raises(ValueError, match="unknown link 'nope'"):
        arm.inverse_dynamics(q, z, z, {"nope": w})
    with pytest.raises(ValueError, match="6 finite numbers"):
        arm.inverse_dynamics(q, z, z, {"r_wrist_roll_link": w[:3]})


def test_tree_kinematics_matches_pinocchio_for_every_link(pr2_robot):
    pin = pytest.importorskip("pinocchio")
    model = pin.buildModelFromUrdf(_erd(PR2))
    data = model.createData()
    tree = TreeKinematics(pr2_robot)
    rng = np.random.default_rng(2)
    for _ in range(20):
        q_by_name = {}
        q = pin.neutral(model)
        for jid in range(1, model.njoints):
            name, j = model.names[jid], model.joints[jid]
            limit = pr2_robot.joints[name].limit
            lo, hi = ((limit.lower, limit.upper) if limit and limit.lower is not None and limit.upper is not None
                      and limit.lower < limit.upper else (-np.pi, np.pi))
            v = rng.uniform(lo, hi)
            q_by_name[name] = v
            if j.nq == 1:
                q[j.idx_q] = v
            else:
                q[j.idx_q : j.idx_q + 2] = np.cos(v), np.sin(v)
        pin.framesForwardKinematics(model, data, q)
        poses = tree.link_poses(q_by_name)
        assert set(poses) == set(pr2_robot.links)
        for link, pose in poses.items():
            np.testing.assert_allclose(pose, data.oMf[model.getFrameId(link)].homogeneous, atol=1e-12, err_msg=link)


def test_tree_mimic_and_joint_transforms(panda_robot):
    tree = TreeKinematics(panda_robot)
    poses = tree.link_poses({"panda_finger_joint1": 0.03})
    explicit = tree.link_poses({"panda_finger_joint1": 0.03, "panda_finger_joint2": 0.03})
    np.testing.assert_allclose(poses["panda_rightfinger"], explicit["panda_rightfinger"], atol=1e-14)
    assert not np.allclose(poses["panda_rightfinger"], tree.link_poses({})["panda_rightfinger"])
    edges = tree.joint_transforms({"panda_joint2": 0.5})
    assert set(edges) == set(panda_robot.links) - {panda_robot.root_link}
    for child, (parent, rel) in edges.items():
        j = panda_robot.parent_joint(child)
        assert j.parent == parent
        if j.type == "fixed":
            np.testing.assert_allclose(rel, j.origin.matrix(), atol=1e-14)
    full = tree.link_poses({"panda_joint2": 0.5})
    np.testing.assert_allclose(full["panda_link2"], full["panda_link1"] @ edges["panda_link2"][1], atol=1e-14)
    with pytest.raises(KeyError, match="no movable joint 'nope'"):
        tree.link_poses({"nope": 1.0})


def test_tree_floating_and_planar_values():
    robot = load_robot("""<robot name="fp"><link name="a"/>
      <link name="b"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
      </link>
      <link name="c"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
      </link>
      <joint name="f" type="floating"><parent link="a"/><child link="b"/></joint>
      <joint name="p" type="planar"><parent link="a"/><child link="c"/><axis xyz="0 0 1"/></joint></robot>""")
    tree = TreeKinematics(robot)
    half = np.sqrt(0.5)
    poses = tree.link_poses({"f": [1, 2, 3, half, half, 0, 0], "p": [0.5, -0.5, np.pi / 2]})
    np.testing.assert_allclose(poses["b"][:3, 3], [1, 2, 3], atol=1e-14)
    np.testing.assert_allclose(poses["b"][:3, :3], [[1, 0, 0], [0, 0, -1], [0, 1, 0]], atol=1e-14)
    np.testing.assert_allclose(poses["c"][:3, 3], [0.5, -0.5, 0], atol=1e-14)
    np.testing.assert_allclose(poses["c"][:3, :3], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-14)
    with pytest.raises(ValueError, match="takes 7"):
        tree.link_poses({"f": [1, 2, 3]})


@pytest.mark.parametrize(("base", "tip", "hold"), [
    ("torso_lift_link", "r_gripper_tool_frame", {"torso_lift_joint": 0.1, "r_gripper_l_finger_joint": 0.2}),
    ("base_footprint", "l_wrist_roll_link", {"torso_lift_joint": 0.2, "head_pan_joint": 0.3}),
])
def test_the_chain_model_and_the_whole_model_agree(pr2_robot, monkeypatch, base, tip, hold):
    """The per-call queries run on the chain's own model (chain_model.py); a chain it does not fit queries the
    whole model. Both give the same answers (PR2: a base that is not the root, held side branches, a tip frame off
    its body's origin)."""
    import robot_core.kinematics.chain as chain_module

    fast = SerialKinematicChain(pr2_robot, base, tip, hold_positions=hold)
    monkeypatch.setattr(chain_module, "build_chain_model", lambda *args: None)
    whole = SerialKinematicChain(pr2_robot, base, tip, hold_positions=hold)
    assert fast.uses_chain_model and not whole.uses_chain_model
    rng = np.random.default_rng(4)
    lo = np.where(np.isfinite(fast.lower), fast.lower, -np.pi)
    hi = np.where(np.isfinite(fast.upper), fast.upper, np.pi)
    for _ in range(20):
        q, qd, qdd = rng.uniform(lo, hi), rng.uniform(-1, 1, fast.n), rng.uniform(-1, 1, fast.n)
        np.testing.assert_allclose(fast.forward_kinematics(q), whole.forward_kinematics(q), atol=1e-12)
        np.testing.assert_allclose(fast.jacobian(q), whole.jacobian(q), atol=1e-12)
        np.testing.assert_allclose(fast.inverse_dynamics(q, qd, qdd), whole.inverse_dynamics(q, qd, qdd), atol=1e-9)
        np.testing.assert_allclose(fast.gravity_torques(q), whole.gravity_torques(q), atol=1e-9)
        for a, b in zip(fast.tip_acceleration(q, qd, qdd), whole.tip_acceleration(q, qd, qdd), strict=True):
            np.testing.assert_allclose(a, b, atol=1e-10)
    np.testing.assert_allclose(fast.gravity, whole.gravity, atol=1e-14)
    target = fast.forward_kinematics(rng.uniform(lo, hi))
    for chain in (fast, whole):
        result = chain.inverse_kinematics_with_restarts(target, seed=1)
        assert result.success
        np.testing.assert_allclose(whole.forward_kinematics(result.q), target, atol=1e-5)
