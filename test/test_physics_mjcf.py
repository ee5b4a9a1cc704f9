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
