"""MJCF ball joints of the robot as three hinges (robot_core/model/mjcf_ball.py), judged against MuJoCo on the
files as written: structure, FK and Jacobians, a swinging pendulum, keyframes, and MuJoCo's own test model."""

from __future__ import annotations

import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np
import pytest

from robot_core.model import RobotModelWarning, load_robot, save_robot
from robot_core.model.mjcf_ball import (
    angles_from_quat,
    hinge_names,
    rate_matrix,
    rates_from_angular_velocity,
    rewrite_ball_joint,
    rotation,
)
from robot_core.physics.builder import build_model
from robot_core.physics.engine import PhysicsEngine

DATA = Path(__file__).resolve().parent / "data" / "mjcf"
ARM = DATA / "ball_arm.xml"
PENDULUM = DATA / "ball_pendulum.xml"
MUJOCO_TEST_MODEL = Path(mujoco.__file__).resolve().parent / "testdata" / "model.xml"
WRIST = hinge_names("wrist")


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        return fn(*args, **kwargs)


def random_quat(rng: np.random.Generator, max_angle: float) -> np.ndarray:
    """A rotation by at most ``max_angle`` about a random axis (keeps away from the gimbal singularity)."""
    axis = rng.normal(size=3)
    q = np.zeros(4)
    mujoco.mju_axisAngle2Quat(q, axis / np.linalg.norm(axis), float(rng.uniform(-max_angle, max_angle)))
    return q


def quat_matrix(q) -> np.ndarray:
    r = np.zeros(9)
    mujoco.mju_quat2Mat(r, np.asarray(q, dtype=float))
    return r.reshape(3, 3)


# -- the conversion -----------------------------------------------------------------------------------------------
def test_angles_reproduce_the_quaternion_and_rates_the_angular_velocity():
    rng = np.random.default_rng(1)
    for _ in range(50):
        q = random_quat(rng, np.pi)
        angles = angles_from_quat(q)
        assert abs(angles[1]) <= np.pi / 2
        np.testing.assert_allclose(rotation(angles), quat_matrix(q), atol=1e-12)
        # E maps hinge rates to the child frame's angular velocity: check against a finite difference
        rates = rng.normal(size=3)
        h = 1e-7
        dr = (rotation(angles + h * rates) - rotation(angles - h * rates)) / (2 * h)
        skew = rotation(angles).T @ dr
        omega = np.array([skew[2, 1], skew[0, 2], skew[1, 0]])
        np.testing.assert_allclose(rate_matrix(angles) @ rates, omega, atol=1e-6)
        if abs(np.cos(angles[1])) > 0.1:
            np.testing.assert_allclose(rates_from_angular_velocity(angles, omega), rates, atol=1e-5)


def test_rewrite_keeps_per_dof_attributes_and_turns_the_cone_into_a_box():
    root = ET.fromstring('<body name="b"><joint name="j" type="ball" class="c" pos="0 0 1" damping="2" '
                         'armature="0.1" frictionloss="0.3" stiffness="4" range="0 30" ref="5"/>'
                         '<geom size="1"/></body>')
    assert rewrite_ball_joint(root, "j", 30.0)
    assert not rewrite_ball_joint(root, "other", None)
    hinges = [c for c in root if c.tag == "joint"]
    assert [h.get("name") for h in hinges] == ["j:x", "j:y", "j:z"]
    assert [h.get("axis") for h in hinges] == ["1 0 0", "0 1 0", "0 0 1"]
    for h in hinges:
        assert h.get("type") == "hinge" and h.get("class") == "c" and h.get("pos") == "0 0 1"
        assert (h.get("damping"), h.get("armature"), h.get("frictionloss"), h.get("stiffness")) == \
            ("2", "0.1", "0.3", "4")
        assert (h.get("limited"), h.get("range"), h.get("ref"), h.get("springref")) == ("true", "-30.0 30.0", "0", "0")
    assert [c.tag for c in root] == ["joint", "joint", "joint", "geom"]


# -- the reader ---------------------------------------------------------------------------------------------------
def test_ball_joint_becomes_three_hinges_with_one_warning_naming_file_line_and_joint():
    with pytest.warns(RobotModelWarning) as record:
        robot = load_robot(ARM)
    line = next(i for i, t in enumerate(ARM.read_text().splitlines(), 1) if 'name="wrist"' in t)
    ball = [str(w.message) for w in record if "ball joint:" in str(w.message)]
    assert len(ball) == 1  # the world body's ball joint (lamp) is not the robot's: no warning
    assert f"{ARM}:{line}: joint 'wrist': ball joint: simulated as three hinges" in ball[0]
    assert "gimbal singularity" in ball[0] and "becomes a box" in ball[0] and "[-60, 60] deg" in ball[0]
    assert list(robot.joints) == ["shoulder", *WRIST, "knuckle"]
    chain = [(robot.joints[n].parent, robot.joints[n].child) for n in WRIST]
    assert chain == [("base", "hand:wrist:x"), ("hand:wrist:x", "hand:wrist:y"), ("hand:wrist:y", "hand")]
    assert robot.mjcf.split_bodies == {"hand": WRIST[:2]} and robot.mjcf.ball_joints == {"wrist": 60.0}
    for name, axis in zip(WRIST, np.eye(3), strict=True):
        joint = robot.joints[name]
        assert joint.type == "revolute"
        np.testing.assert_allclose(joint.axis, axis)
        assert (joint.limit.lower, joint.limit.upper) == pytest.approx((-np.pi / 3, np.pi / 3))
        assert (joint.dynamics.damping, joint.dynamics.friction) == (0.2, 0.02)  # from the default class
        assert joint.initial_position == 0.0
    # the motor with gear (1, 2, 0.5) and ctrlrange +-3: an effort interface per hinge, limited by ctrlrange x gear
    cmds = {j.name: [(i.name, i.min, i.max) for i in j.command_interfaces] for j in robot.ros2_control[0].joints}
    assert cmds[WRIST[0]] == [("effort", -3.0, 3.0)] and cmds[WRIST[1]] == [("effort", -6.0, 6.0)]
    assert cmds[WRIST[2]] == [("effort", -1.5, 1.5)] and robot.joints[WRIST[1]].limit.effort == 6.0
    assert robot.mjcf.world_bodies == ["lamp"]


def test_actuator_a_ball_cannot_pass_on_is_dropped_with_a_warning(tmp_path):
    text = ARM.read_text().replace('<motor name="wrist_motor" joint="wrist" gear="1 2 0.5" ctrlrange="-3 3"/>',
                                   '<general name="wrist_general" joint="wrist" gear="1 0 0" dyntype="filter" '
                                   'dynprm="0.1"/>')
    path = tmp_path / "general.xml"
    path.write_text(text)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "wrist_general" in t)
    with pytest.warns(RobotModelWarning, match=rf"{path}:{line}: actuator 'wrist_general': an actuator on ball "
                                               r"joint 'wrist' that is not a plain motor .*dropped"):
        robot = load_robot(path)
    cmds = {j.name: j.command_interfaces for j in robot.ros2_control[0].joints}
    assert all(cmds[n] == [] for n in WRIST)
    assert any("wrist_general" in note for note in robot.mjcf.not_carried)
    # a second motor on the ball: the first one drives the hinges
    path.write_text(ARM.read_text().replace('ctrlrange="-3 3"/>', 'ctrlrange="-3 3"/>\n    <motor name="again" '
                                                                  'joint="wrist" gear="5 5 5"/>'))
    with pytest.warns(RobotModelWarning, match=r"actuator 'again': a second actuator of ball joint 'wrist'"):
        robot = load_robot(path)
    assert {robot.mjcf.servos[n].actuator for n in WRIST} == {"wrist_motor"}
    assert robot.joints[WRIST[1]].limit.effort == 6.0


def test_fk_and_jacobian_match_mujoco_on_the_original_file():
    """The reader's RobotModel, built alone (no MJCF source), against MuJoCo's model of the file with the ball:
    link poses for a ball quaternion q equal those at the hinge angles of q, and the hinge Jacobian columns are
    the ball's (angular velocity) columns times E."""
    robot = quiet(load_robot, ARM)
    structure = quiet(build_model, type(robot)(**{**robot.__dict__, "mjcf": None}), include_visuals=False)
    model = mujoco.MjModel.from_xml_path(str(ARM))
    data, bdata = mujoco.MjData(model), mujoco.MjData(structure.model)
    ball = model.joint("wrist")
    rng = np.random.default_rng(5)
    for _ in range(20):
        q = random_quat(rng, 1.2)
        angles = angles_from_quat(q)
        shoulder, knuckle = rng.uniform(-2, 2), rng.uniform(-1.5, 1.5)
        data.qpos[ball.qposadr[0]: ball.qposadr[0] + 4] = q
        data.qpos[model.joint("shoulder").qposadr[0]] = shoulder
        data.qpos[model.joint("knuckle").qposadr[0]] = knuckle
        for name, value in zip(["shoulder", *WRIST, "knuckle"], [shoulder, *angles, knuckle], strict=True):
            bdata.qpos[structure.joints[name].qpos_adr] = value
        for m, d in ((model, data), (structure.model, bdata)):
            mujoco.mj_kinematics(m, d)
            mujoco.mj_comPos(m, d)
        for link in ("base", "hand", "finger"):
            bid = model.body(link).id
            expected = np.eye(4)
            expected[:3, :3] = data.xmat[bid].reshape(3, 3)
            expected[:3, 3] = data.xpos[bid]
            expected = expected @ np.asarray(robot.mjcf.link_offsets.get(link, np.eye(4)))
            np.testing.assert_allclose(structure.link_pose(bdata, link), expected, atol=1e-9, err_msg=link)
            point = expected[:3, 3]
            jp, jr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
            mujoco.mj_jac(model, data, jp, jr, point, bid)
            bp, br = np.zeros((3, structure.model.nv)), np.zeros((3, structure.model.nv))
            mujoco.mj_jac(structure.model, bdata, bp, br, point, structure.links[link].body_id)
            cols = [structure.joints[n].dof_adr for n in WRIST]
            dofs = slice(ball.dofadr[0], ball.dofadr[0] + 3)
            e = rate_matrix(angles)
            np.testing.assert_allclose(bp[:, cols], jp[:, dofs] @ e, atol=1e-9, err_msg=link)
            np.testing.assert_allclose(br[:, cols], jr[:, dofs] @ e, atol=1e-9, err_msg=link)


def test_urdf_output_has_the_three_revolute_joints_and_says_so(tmp_path):
    robot = quiet(load_robot, ARM)
    out = tmp_path / "ball_arm.urdf"
    with pytest.warns(RobotModelWarning, match=r"ball joint\(s\) \['wrist'\]: written as three revolute joints"):
        save_robot(robot, out)
    back = load_robot(out)
    assert [back.joints[n].type for n in WRIST] == ["revolute"] * 3


# -- the simulator ------------------------------------------------------------------------------------------------
def test_simulated_file_has_the_hinges_the_world_ball_and_converted_keyframe():
    with pytest.warns(RobotModelWarning, match=r"ball_arm.xml:\d+: sensor 'wrist_quat': on ball joint 'wrist'"):
        sim = PhysicsEngine(quiet(load_robot, ARM), timestep=0.001)
    m = sim.model
    assert [m.joint(n).type[0] for n in WRIST] == [mujoco.mjtJoint.mjJNT_HINGE] * 3
    assert m.joint("lamp_ball").type[0] == mujoco.mjtJoint.mjJNT_BALL  # the world body's ball stays as written
    assert m.body("hand:wrist:x").mass[0] == pytest.approx(1e-6)
    assert m.sensor("lamp_quat").id >= 0 and m.sensor("knuckle_pos").id >= 0
    for n in WRIST:  # per-DOF properties of the class, per hinge; the cone as a box in radians
        j = m.joint(n)
        assert (m.dof_damping[j.dofadr[0]], m.dof_armature[j.dofadr[0]], m.jnt_stiffness[j.id]) == \
            pytest.approx((0.2, 0.01, 0.5))
        np.testing.assert_allclose(m.jnt_range[j.id], [-np.pi / 3, np.pi / 3])
    # the file's keyframe: the wrist's quaternion and angular velocity as hinge angles and rates, the rest as written
    original = mujoco.MjModel.from_xml_path(str(ARM))
    ball = original.joint("wrist")
    quat = original.key_qpos[0][ball.qposadr[0]: ball.qposadr[0] + 4]
    omega = original.key_qvel[0][ball.dofadr[0]: ball.dofadr[0] + 3]
    angles = [m.key_qpos[0][m.joint(n).qposadr[0]] for n in WRIST]
    np.testing.assert_allclose(rotation(angles), quat_matrix(quat), atol=1e-6)
    rates = [m.key_qvel[0][m.joint(n).dofadr[0]] for n in WRIST]
    np.testing.assert_allclose(rate_matrix(angles) @ rates, omega, atol=1e-9)
    lamp = m.joint("lamp_ball")
    np.testing.assert_allclose(m.key_qpos[0][lamp.qposadr[0]: lamp.qposadr[0] + 4], [0.9659258, 0, 0.258819, 0])
    # the motor's hinges take effort; the wrist turns under it
    assert {n: sim.command_modes()[n] for n in WRIST} == {n: "effort" for n in WRIST}
    start = sim.positions().copy()
    sim.set_commands([WRIST[2]], efforts=[1.0])
    sim.step(300)
    assert sim.positions()[sim.joint_names.index(WRIST[2])] > start[sim.joint_names.index(WRIST[2])] + 0.05
    assert np.all(np.isfinite(sim.data.qpos))


def _pendulum_error(timestep: float) -> float:
    """Largest distance (m) over 1 s between the bob of the three-hinge simulation and MuJoCo's ball-joint
    pendulum from the file as written, both released from the same tilted pose."""
    q = np.zeros(4)
    mujoco.mju_axisAngle2Quat(q, np.array([1.0, 0.5, 0.6]) / np.linalg.norm([1.0, 0.5, 0.6]), 0.8)
    angles = angles_from_quat(q)
    assert abs(angles[1]) < 0.5  # far from the gimbal singularity
    model = mujoco.MjModel.from_xml_path(str(PENDULUM))
    model.opt.timestep = timestep
    data = mujoco.MjData(model)
    data.qpos[:] = q
    mujoco.mj_forward(model, data)
    sim = quiet(PhysicsEngine, quiet(load_robot, PENDULUM), timestep=timestep, gravity_compensation=False,
                initial_positions=dict(zip(hinge_names("pivot"), angles, strict=True)))
    assert sim.model.opt.integrator == model.opt.integrator
    mujoco.mj_forward(sim.model, sim.data)
    ours, theirs = sim.model.site("bob").id, model.site("bob").id
    np.testing.assert_allclose(sim.data.site_xpos[ours], data.site_xpos[theirs], atol=1e-12)
    start = data.site_xpos[theirs].copy()
    error = 0.0
    middle = sim.joint_names.index(hinge_names("pivot")[1])
    for _ in range(round(1.0 / timestep)):
        mujoco.mj_step(model, data)
        sim.step(1)
        error = max(error, float(np.linalg.norm(sim.data.site_xpos[ours] - data.site_xpos[theirs])))
        assert abs(sim.positions()[middle]) < 1.2  # well away from the singularity at pi/2
    assert np.linalg.norm(data.site_xpos[theirs] - start) > 0.1  # it did swing
    return error


def test_pendulum_on_three_hinges_follows_the_ball_joint_pendulum():
    """Measured: 1.3e-3 m at 1 ms, 6.5e-4 m at 0.5 ms (bob 0.5 m from the pivot, off its rod so every hinge
    moves it, swinging ~0.4 m): the gap is the integrators' (quaternion vs angles) and halves with the step, so
    the dynamics are the same."""
    coarse, fine = _pendulum_error(0.001), _pendulum_error(0.0005)
    print(f"bob distance, three hinges vs ball, over 1 s: {coarse:.3g} m at 1 ms, {fine:.3g} m at 0.5 ms")
    assert coarse < 4e-3
    assert fine < 0.6 * coarse


def test_mujoco_test_model_with_a_ball_joint_runs_for_one_second():
    """MuJoCo's own test model (a ball-jointed wheel on a legged free body, unnamed bodies, tendons, a keyframe):
    refused before, now read and simulated from the file for 1 s without NaN."""
    if not MUJOCO_TEST_MODEL.is_file():
        pytest.skip("MuJoCo's testdata/model.xml is not installed")
    assert re.search(r'type="ball"', MUJOCO_TEST_MODEL.read_text())
    robot = quiet(load_robot, MUJOCO_TEST_MODEL)
    assert set(hinge_names("wheel_0")) <= set(robot.joints)
    sim = quiet(PhysicsEngine, robot, timestep=0.002)
    assert mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_GEOM, "floor") >= 0  # the file as written
    assert sim.model.nkey == 1
    sim.step(500)
    assert np.all(np.isfinite(sim.data.qpos)) and np.all(np.isfinite(sim.data.qvel))
    assert set(sim.built.links) == set(robot.links)


def test_unnamed_ball_joint_falls_back_to_the_links_with_a_warning():
    text = """<mujoco><worldbody><body name="b" pos="0 0 1"><joint type="ball"/><geom size="0.1" mass="1"/>
      </body></worldbody></mujoco>"""
    robot = quiet(load_robot, text)
    assert list(robot.joints) == hinge_names("b:joint0")
    with pytest.warns(RobotModelWarning, match="cannot be split"):
        sim = PhysicsEngine(robot)
    assert sim.joint_names == hinge_names("b:joint0")
