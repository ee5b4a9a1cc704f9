"""The simulator's engine on an MJCF robot: the file as written (world bodies, cameras, options), driven by the
engine's own servos with the file's actuator gains (robot_core/physics/mjcf_spec.py)."""

from __future__ import annotations

import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest

from robot_core.model import RobotModelWarning, load_robot
from robot_core.physics.engine import PhysicsEngine
from robot_core.physics.mjcf_writer import write_mjcf

DATA = Path(__file__).resolve().parent / "data" / "mjcf"
ARM = DATA / "two_link_arm.xml"
SCENE = DATA / "scene_box_camera.xml"


def engine(path: Path, **kwargs) -> PhysicsEngine:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        return PhysicsEngine(load_robot(path), **kwargs)


def test_arm_holds_its_initial_pose_for_one_second():
    sim = engine(ARM)
    start = sim.positions().copy()
    for _ in range(10):
        sim.step(100)
        assert np.all(np.isfinite(sim.data.qpos))
    np.testing.assert_allclose(sim.positions(), start, atol=2e-3)


def test_position_commands_reach_their_targets():
    sim = engine(ARM)
    target = np.array([0.6, -0.9])
    sim.set_commands(["shoulder", "elbow"], positions=target)
    sim.step(4000)
    np.testing.assert_allclose(sim.positions(), target, atol=5e-3)
    assert np.all(np.abs(sim.velocities()) < 1e-2)


def test_engine_uses_the_file_and_the_actuators_gains():
    sim = engine(ARM)
    # the file's own actuators are replaced by the engine's servos, one per joint, with the file's gains
    assert sim.model.nu == 2
    assert all(sim.model.actuator(i).name.startswith("rc_actuator/") for i in range(sim.model.nu))
    assert sim.gains()["shoulder"]["kp"] == 200.0 and sim.gains()["shoulder"]["kd"] == 10.0
    # armature and the floor stay as written
    assert sim.model.dof_armature[sim.built.joints["shoulder"].dof_adr] == pytest.approx(0.01)
    assert mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_GEOM, "floor") >= 0
    # effort limits from forcerange
    assert sim.model.jnt_actfrcrange[sim.built.joints["shoulder"].joint_id][1] == 40.0


def test_timestep_parameter_wins_with_a_warning():
    with pytest.warns(RobotModelWarning, match="timestep"):
        sim = PhysicsEngine(load_robot(SCENE), timestep=0.001)
    assert sim.timestep == 0.001


def test_scene_box_falls_onto_the_floor_and_rests_and_camera_exists():
    sim = engine(SCENE, timestep=0.002)
    crate = sim.model.body("crate").id
    assert sim.data.xpos[crate][2] == pytest.approx(0.5)
    sim.step(1500)
    assert sim.data.xpos[crate][2] == pytest.approx(0.05, abs=2e-3)  # half its edge above the floor
    assert np.linalg.norm(sim.data.cvel[crate]) < 1e-3
    assert mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_CAMERA, "overview") >= 0
    assert mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_LIGHT, "sun") >= 0


def test_unactuated_motor_joint_swings_freely_and_effort_moves_it():
    sim = engine(SCENE, timestep=0.002)
    assert sim.command_modes() == {"swing": "effort"}  # a motor: effort only
    sim.set_commands(["swing"], efforts=[3.0])
    sim.step(200)
    assert sim.positions()[0] > 0.05


def test_link_poses_follow_the_bodies():
    sim = engine(ARM)
    sim.set_commands(["shoulder", "elbow"], positions=[0.4, 0.3])
    sim.step(2000)
    fore = sim.model.body("forearm").id
    pose = sim.built.link_pose(sim.data, "forearm")
    np.testing.assert_allclose(pose[:3, 3], sim.data.xpos[fore], atol=1e-12)


def test_urdf_robot_written_as_mjcf_reads_back(tmp_path):
    repo = Path(__file__).resolve().parent.parent
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        robot = load_robot(repo / "urdf" / "planar2.urdf")
        text = write_mjcf(robot)
        back = load_robot(text)
    assert back.scalar_joint_names() == robot.scalar_joint_names()
    for name in robot.scalar_joint_names():
        assert back.joints[name].limit.lower == pytest.approx(robot.joints[name].limit.lower)


MENAGERIE = DATA / "menagerie_style.xml"
HOPPER = Path(mujoco.__file__).resolve().parent.parent / "gymnasium" / "envs" / "mujoco" / "assets" / "hopper.xml"


def test_body_with_two_joints_is_split_and_simulated_from_the_file():
    sim = engine(MENAGERIE)
    # the frame between j2 and j3 became a body of its own; the rest of the file is as written
    assert sim.model.body("link2:j2").mass[0] == pytest.approx(1e-6)
    assert sim.built.links["link2:j2"].body_id == sim.model.body("link2:j2").id
    target = {"j1": 0.5, "j2": -0.4, "finger_a": 0.02}
    sim.set_commands(list(target), positions=list(target.values()))
    sim.step(5000)
    q = dict(zip(sim.joint_names, sim.positions(), strict=True))
    for name, value in target.items():
        assert q[name] == pytest.approx(value, abs=5e-3), name
    assert q["finger_b"] == pytest.approx(q["finger_a"], abs=1e-3)  # the file's equality (mimic) holds


def test_kinematics_library_on_mjcf_matches_mujoco_on_the_file():
    from robot_core.kinematics import SerialKinematicChain

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        robot = load_robot(MENAGERIE)
        chain = SerialKinematicChain(robot, "world", "finger_a")
    model = mujoco.MjModel.from_xml_path(str(MENAGERIE))
    data = mujoco.MjData(model)
    rng = np.random.default_rng(3)
    for _ in range(10):
        q = np.array([rng.uniform(*model.jnt_range[model.joint(n).id]) for n in chain.joint_names])
        for name, value in zip(chain.joint_names, q, strict=True):
            data.qpos[model.jnt_qposadr[model.joint(name).id]] = value
        mujoco.mj_kinematics(model, data)
        pose = chain.forward_kinematics(q)
        fid = model.body("finger_a").id
        np.testing.assert_allclose(pose[:3, 3], data.xpos[fid], atol=1e-9)
        np.testing.assert_allclose(pose[:3, :3], data.xmat[fid].reshape(3, 3), atol=1e-9)


def test_body_with_unnamed_joints_falls_back_to_the_links_with_a_warning():
    text = """<mujoco><worldbody><geom name="floor" type="plane" size="1 1 0.1"/>
      <body name="cart" pos="0 0 1"><joint type="slide" axis="1 0 0"/><joint axis="0 1 0"/>
      <geom size="0.1" mass="1"/></body></worldbody>
      <actuator><motor joint="cart:joint0"/></actuator></mujoco>"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        robot = load_robot(text)
    with pytest.warns(RobotModelWarning, match="cannot be split"):
        sim = PhysicsEngine(robot)
    assert mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_GEOM, "floor") < 0  # the file's world is not there
    assert sim.joint_names == ["cart:joint0", "cart:joint1"]


def test_split_body_whose_last_joint_is_unnamed_keeps_the_readers_name():
    """The reader calls the second joint cart:joint1; moved alone into the body it must keep that name."""
    text = """<mujoco><worldbody><body name="cart" pos="0 0 1"><joint name="x" type="slide" axis="1 0 0"/>
      <joint axis="0 1 0"/><geom size="0.1" mass="1"/></body></worldbody>
      <actuator><motor joint="x"/></actuator></mujoco>"""
    sim = engine_from_text(text)
    assert sim.joint_names == ["x", "cart:joint1"] and sim.model.body("cart:x").id > 0
    sim.set_commands(["x"], efforts=[2.0])
    sim.step(200)
    assert sim.positions()[0] > 0.01


def engine_from_text(text: str) -> PhysicsEngine:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        return PhysicsEngine(load_robot(text))


@pytest.mark.skipif(not HOPPER.is_file(), reason="gymnasium's MuJoCo assets are not installed")
def test_gymnasium_hopper_lands_on_its_floor():
    sim = engine(HOPPER, timestep=0.002)
    assert mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_GEOM, "floor") >= 0
    sim.step(1000)
    assert np.all(np.isfinite(sim.data.qpos))
    foot = sim.model.geom("foot_geom").id
    assert 0.0 < sim.data.geom_xpos[foot][2] < 0.3  # standing or lying on the floor, not fallen through it
    assert sim.model.body("torso:rootx").id > 0  # the torso's three joints became a chain


GYM = HOPPER.parent
CORPUS = [GYM / n for n in ("ant.xml", "humanoid.xml", "half_cheetah.xml", "pusher.xml", "reacher.xml", "swimmer.xml")]


@pytest.mark.parametrize("path", [p for p in CORPUS if p.is_file()], ids=lambda p: p.stem)
def test_installed_mjcf_corpus_simulates(path):
    """gymnasium's MJCF robots run in the engine from their files: finite for a second, every link indexed."""
    sim = engine(path, timestep=0.002)
    sim.step(500)
    assert np.all(np.isfinite(sim.data.qpos))
    assert set(sim.built.links) == set(sim.robot.links)
    for body in sim.robot.mjcf.world_bodies:
        assert sim.model.body(body).id > 0  # the world's bodies are kept


def test_split_body_inside_an_included_file(tmp_path):
    """menagerie's scenes include the robot's file: a body with two joints there is split in that file's text."""
    (tmp_path / "robot.xml").write_text(
        '<mujoco>\n  <worldbody>\n    <body name="cart" pos="0 0 0.3">\n'
        '      <joint name="x" type="slide" axis="1 0 0"/>\n      <joint name="tilt" axis="0 1 0" pos="0 0 -0.1"/>\n'
        '      <geom type="box" size="0.1 0.1 0.05" mass="2"/>\n    </body>\n  </worldbody>\n'
        '  <actuator><position joint="x" kp="100" kv="20"/><position joint="tilt" kp="50" kv="5"/></actuator>\n'
        '</mujoco>\n')
    scene = tmp_path / "scene.xml"
    scene.write_text('<mujoco model="scene">\n  <include file="robot.xml"/>\n'
                     '  <worldbody><geom name="floor" type="plane" size="2 2 0.1"/></worldbody>\n</mujoco>\n')
    sim = engine(scene)
    assert mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_GEOM, "floor") >= 0  # the file's world is there
    assert sim.model.body("cart:x").id > 0
    sim.set_commands(["x", "tilt"], positions=[0.2, 0.3])
    sim.step(3000)
    np.testing.assert_allclose(sim.positions(), [0.2, 0.3], atol=5e-3)
    # the link between the two joints follows the slide only
    np.testing.assert_allclose(sim.built.link_pose(sim.data, "cart:x")[:3, 3], [0.2, 0.0, 0.3], atol=5e-3)
