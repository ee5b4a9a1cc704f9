"""robot_core.physics.mjcf_world: an MJCF world (config/worlds/room.xml) attached around the robot with MjSpec's
attach API: its bodies are the world's objects, the simulator's options win, errors name the file."""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from robot_core.model import RobotModelError, RobotModelWarning, load_robot
from robot_core.physics.engine import CommandError, PhysicsEngine
from robot_core.physics.mjcf_world import load_mjcf_world
from robot_core.physics.world import Pose, WorldSim, make_object, scene_hook

REPO = Path(__file__).resolve().parent.parent
ROOM = REPO / "config" / "worlds" / "room.xml"


@pytest.fixture(scope="module")
def rc_arm():
    return load_robot(str(REPO / "urdf" / "rc_arm.urdf"))


def make_sim(robot, path=ROOM, timestep: float = 0.001) -> tuple[PhysicsEngine, WorldSim]:
    world = load_mjcf_world(path)
    engine = PhysicsEngine(robot, timestep=timestep, include_visuals=False, scene=scene_hook(world, robot.root_link))
    return engine, WorldSim(engine, world)


def test_top_level_bodies_are_objects_and_the_crate_falls_onto_the_floor(rc_arm):
    engine, sim = make_sim(rc_arm)
    assert {n: o.fixed for n, o in sim.objects.items()} == {"shelf": True, "crate": False}
    assert sim.free_objects == ["crate"]
    engine.step(1000)
    (crate,) = sim.states()
    assert crate.pose.position == pytest.approx((0.6, 0.0, 0.05), abs=1e-3), "resting on the file's floor"
    assert sim.pose("shelf").position == (0.0, 0.8, 0.3)
    bodies = {engine.model.body(i).name for i in range(engine.model.nbody)}
    assert {"shelf", "crate", *rc_arm.links} <= bodies
    assert engine.model.nlight == 1 and engine.model.nmat == 1, "the file's light and material came along"


def test_the_simulators_options_win_and_the_conflict_is_a_warning(rc_arm, tmp_path):
    path = tmp_path / "slow.xml"
    path.write_text(ROOM.read_text().replace('<mujoco model="room">', '<mujoco model="room">\n  <option '
                                                                      'timestep="0.004"/>'))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        engine, _ = make_sim(rc_arm, path, timestep=0.001)
    assert engine.timestep == 0.001
    texts = [str(w.message) for w in caught if issubclass(w.category, RobotModelWarning)]
    print("\n  [mjcf world] " + "\n  [mjcf world] ".join(texts))
    assert f"{path}: <option timestep> 0.004 ignored: the simulation's 0.001 is used (set it with the simulator's " \
           "parameters)" in texts


def test_spawn_set_and_remove_in_an_mjcf_world_keep_the_rest(rc_arm):
    engine, sim = make_sim(rc_arm)
    engine.set_commands(["joint1"], [0.5])
    engine.step(100)
    q, qd = engine.positions().copy(), engine.velocities().copy()
    crate = sim.states()
    sim.spawn(make_object("ball", "sphere", [0.04], pose=Pose((0.3, -0.4, 0.5)), mass=0.2))
    assert np.array_equal(engine.positions(), q) and np.array_equal(engine.velocities(), qd)
    assert sim.states()[0] == crate[0]
    sim.set_state("crate", (0.6, 0.0, 0.5), (1.0, 0.0, 0.0, 0.0))
    sim.remove("shelf")
    assert np.array_equal(engine.positions(), q)
    engine.step(1000)
    assert sim.pose("crate").position[2] == pytest.approx(0.05, abs=1e-3)
    assert sim.pose("ball").position[2] == pytest.approx(0.04, abs=1e-3)
    with pytest.raises(CommandError, match="no object named 'shelf'"):
        sim.remove("shelf")
    sim.reset()
    assert sim.pose("crate").position == pytest.approx((0.6, 0.0, 0.3)), "back to the file's pose"


def write(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "world.xml"
    p.write_text(textwrap.dedent(f"""\
        <mujoco model="w">
          <worldbody>
        {textwrap.indent(textwrap.dedent(body), '    ')}
          </worldbody>
        </mujoco>
        """))
    return p


def test_errors_name_the_file(rc_arm, tmp_path):
    with pytest.raises(RobotModelError, match=r"world.xml:3: MuJoCo cannot read this MJCF world: .*Line number=3"):
        load_mjcf_world(write(tmp_path, "<body name='a'><geom type='box' size='1 1'/>"))
    with pytest.raises(RobotModelError, match=r"world.xml: body 'link3': bodies \['link3'\] have the names of "
                                              r"links of the robot"):
        make_sim(rc_arm, write(tmp_path, "<body name='link3' pos='2 0 0'><geom type='sphere' size='0.1'/></body>"))
    with pytest.raises(RobotModelError, match=r"world.xml: body 'floor': the name 'floor' is reserved"):
        load_mjcf_world(write(tmp_path, "<body name='floor'><geom type='sphere' size='0.1'/></body>"))
    with pytest.raises(RobotModelError, match="MJCF world file not found"):
        load_mjcf_world(tmp_path / "missing.xml")


def test_articulated_bodies_are_simulated_but_not_objects(rc_arm, tmp_path):
    path = write(tmp_path, """\
        <body name="door_frame" pos="2 0 0.5">
          <geom type="box" size="0.05 0.5 0.5"/>
        </body>
        <body name="door" pos="2.2 0.5 0.5">
          <joint name="hinge" type="hinge" axis="0 0 1"/>
          <geom type="box" size="0.02 0.4 0.5" mass="5"/>
        </body>
        """)
    engine, sim = make_sim(rc_arm, path)
    assert list(sim.objects) == ["door_frame"]
    assert "hinge" in {engine.model.joint(i).name for i in range(engine.model.njnt)}
