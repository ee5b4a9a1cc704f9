"""robot_core.physics.world: world files (parsing, errors naming file/line/object), the objects in MuJoCo (falling,
resting, teleports), spawn/remove without disturbing the rest, keyframe resets and the robot's base pose."""

from __future__ import annotations

import math
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from robot_core.kinematics import SerialKinematicChain
from robot_core.model import RobotModelError, RobotModelWarning, load_robot
from robot_core.physics.engine import CommandError, PhysicsEngine
from robot_core.physics.world import (
    Pose,
    WorldSim,
    base_pose_quaternion,
    load_keyframes,
    load_world,
    make_object,
    scene_hook,
)

REPO = Path(__file__).resolve().parent.parent
TABLE_TOP = REPO / "config" / "worlds" / "table_top.yaml"
EMPTY = REPO / "config" / "worlds" / "empty.yaml"
TABLE_HEIGHT = 0.2  # top of the table of table_top.yaml


@pytest.fixture(scope="module")
def rc_arm():
    return load_robot(str(REPO / "urdf" / "rc_arm.urdf"))


def make_sim(robot, world_path=TABLE_TOP, base_pose=None, keyframes=None) -> tuple[PhysicsEngine, WorldSim]:
    world = load_world(world_path) if world_path else None
    engine = PhysicsEngine(robot, include_visuals=False, scene=scene_hook(world, robot.root_link, base_pose))
    return engine, WorldSim(engine, world, keyframes)


def write(tmp_path: Path, text: str, name: str = "world.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def snapshot(engine: PhysicsEngine, sim: WorldSim) -> tuple:
    return (engine.time, engine.positions().copy(), engine.velocities().copy(),
            [(s.name, s.pose, s.linear_velocity, s.angular_velocity) for s in sim.states()])


# ------------------------------------------------------------------ files
def test_shipped_worlds_parse():
    world = load_world(TABLE_TOP)
    assert [o.name for o in world.objects] == ["table", "box_small", "box_medium", "box_large"]
    table = world.objects[0]
    assert table.fixed and table.size == (0.5, 0.8, 0.2)
    masses = [o.mass for o in world.objects[1:]]
    sizes = [o.size for o in world.objects[1:]]
    assert len(set(masses)) == 3 and len(set(sizes)) == 3, "three boxes of different size and mass"
    assert set(world.keyframes) == {"home", "stacked"}
    empty = load_world(EMPTY)
    assert empty.floor and empty.objects == ()


def test_table_top_boxes_are_within_reach_of_rc_arm(rc_arm):
    """The tool (tcp, pointing down) reaches the top centre of each box: IK finds joint positions in the limits."""
    chain = SerialKinematicChain(rc_arm, "base_link", "tcp")
    down = np.diag([1.0, -1.0, -1.0])
    for obj in load_world(TABLE_TOP).objects[1:]:
        target = np.eye(4)
        target[:3, :3] = down
        target[:3, 3] = [obj.pose.position[0], obj.pose.position[1], TABLE_HEIGHT + obj.size[2]]
        result = chain.inverse_kinematics_with_restarts(target, restarts=30, seed=1)
        assert result.success, f"{obj.name} at {target[:3, 3]} is out of reach: {result.status}"
        print(f"\n  [world] {obj.name}: tcp reaches {target[:3, 3].round(3).tolist()} pointing down")


@pytest.mark.parametrize("body, message", [
    ("- {name: b, shape: cone, size: [1]}", "shape must be one of box, sphere"),
    ("- {name: b, shape: box}", "shape box needs 'size'"),
    ("- {name: b, shape: box, size: [0.1, 0.1]}", "size (full extents x y z) must be a list of 3 numbers"),
    ("- {name: b, shape: box, size: [0.1, 0.0, 0.1]}", "must be positive"),
    ("- {name: b, shape: sphere, size: [-1]}", "must be positive"),
    ("- {name: b, shape: sphere, size: [0.1], mass: 0}", "mass must be positive"),
    ("- {name: b, shape: sphere, size: [0.1], mass: -2}", "mass must be positive"),
    ("- {name: b, shape: sphere, size: [0.1], density: 0}", "density must be positive"),
    ("- {name: b, shape: sphere, size: [0.1], mass: 1, density: 5}", "give mass or density, not both"),
    ("- {name: b, shape: sphere, size: [.nan]}", "must be finite"),
    ("- {name: b, shape: sphere, size: [0.1], pose: {xyz: [0, 0]}}", "pose xyz must be a list of 3 numbers"),
    ("- {name: b, shape: sphere, size: [0.1], pose: {xyz: [0, 0, 1], quat_xyzw: [0, 0, 0, 0]}}",
     "zero quaternion"),
    ("- {name: b, shape: sphere, size: [0.1], pose: {rpy: [0, 0, 1], quat_xyzw: [0, 0, 0, 1]}}",
     "gives both rpy and quat_xyzw"),
    ("- {name: b, shape: sphere, size: [0.1], pose: {position: [0, 0, 1]}}", "unknown key(s) ['position']"),
    ("- {name: b, shape: sphere, size: [0.1], color: [255, 0, 0]}", "between 0 and 1"),
    ("- {name: b, shape: sphere, size: [0.1], fixed: maybe}", "fixed must be true or false"),
    ("- {name: b, shape: sphere, size: [0.1], friction: [-1]}", "must not be negative"),
    ("- {name: b, shape: mesh, mesh: nowhere.stl}", "not found"),
    ("- {name: world, shape: sphere, size: [0.1]}", "reserved"),
    ("- {name: a/b, shape: sphere, size: [0.1]}", "must not contain '/'"),
    ("- {shape: sphere, size: [0.1]}", "object name must be a non-empty string"),
])
def test_bad_objects_name_file_line_and_object(tmp_path, body, message):
    path = write(tmp_path, "floor: true\nobjects:\n  - {name: ok, shape: sphere, size: [0.1]}\n  " + body + "\n")
    with pytest.raises(RobotModelError) as err:
        load_world(path)
    text = str(err.value)
    print(f"\n  [world] {text}")
    assert message in text
    assert text.startswith(f"{path}:4: ")
    assert "\n" not in text


def test_duplicate_names_and_unknown_keyframe_objects_are_errors(tmp_path):
    path = write(tmp_path, """\
        objects:
          - {name: a, shape: sphere, size: [0.1]}
          - {name: a, shape: box, size: [0.1, 0.1, 0.1]}
        """)
    with pytest.raises(RobotModelError, match=r"world.yaml:3: object 'a': duplicate object name 'a' \(first at "):
        load_world(path)
    path = write(tmp_path, """\
        objects:
          - {name: a, shape: sphere, size: [0.1]}
        keyframes:
          k:
            objects: {b: [0, 0, 1]}
        """)
    with pytest.raises(RobotModelError, match=r"world.yaml:5: keyframe 'k': .*object\(s\) \['b'\]"):
        load_world(path)


def test_sloppy_input_warns_with_file_and_line(tmp_path):
    path = write(tmp_path, """\
        objects:
          - name: a
            shape: sphere
            size: 0.1
            colour: [1, 0, 0]
            pose: {xyz: [0, 0, 1], quat_xyzw: [0, 0, 0.7071, 0.7071]}
        """)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        world = load_world(path)
    texts = [str(w.message) for w in caught if issubclass(w.category, RobotModelWarning)]
    print("\n  [world] " + "\n  [world] ".join(texts))
    assert any(t.startswith(f"{path}:2: object 'a': unknown key 'colour'") for t in texts)
    assert any("quaternion of norm" in t for t in texts)
    q = world.objects[0].pose.quaternion
    assert math.isclose(np.linalg.norm(q), 1.0, abs_tol=1e-12)
    assert q == pytest.approx((math.sqrt(0.5), 0, 0, math.sqrt(0.5)), abs=1e-4)  # w first; 90 deg about z


def test_pose_forms_agree(tmp_path):
    path = write(tmp_path, """\
        objects:
          - {name: a, shape: sphere, size: [0.1], pose: {xyz: [1, 2, 3], rpy: [0, 0, 1.5707963267948966]}}
          - {name: b, shape: sphere, size: [0.1], pose: {xyz: [1, 2, 3], quat_xyzw: [0, 0, 0.7071067811865476,
                                                                                    0.7071067811865476]}}
          - {name: c, shape: sphere, size: [0.1], pose: [1, 2, 3, 0, 0, 1.5707963267948966]}
        """)
    a, b, c = load_world(path).objects
    for o in (b, c):
        assert o.pose.position == a.pose.position == (1, 2, 3)
        assert o.pose.quaternion == pytest.approx(a.pose.quaternion, abs=1e-12)


def test_not_a_world_file(tmp_path):
    with pytest.raises(RobotModelError, match=r"world.yaml:3: not valid YAML: while parsing a flow sequence.* line 2"):
        load_world(write(tmp_path, "objects:\n  - [unclosed\n"))
    with pytest.raises(RobotModelError, match=r"world.yaml:1: a world file must be a mapping"):
        load_world(write(tmp_path, "- 1\n"))
    with pytest.raises(RobotModelError, match="cannot read world file"):
        load_world(tmp_path / "missing.yaml")
    with pytest.raises(RobotModelError, match=r"an MJCF world: load it with .*mjcf_world\.load_mjcf_world"):
        load_world(tmp_path / "scene.xml")


# ------------------------------------------------------------------ physics
def test_objects_start_at_rest_on_the_table_and_nothing_touches_the_robot(rc_arm):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RobotModelWarning)  # nothing starts inside anything
        engine, sim = make_sim(rc_arm)
    engine.step(500)
    for s in sim.states():
        obj = sim.objects[s.name]
        assert s.pose.position[2] == pytest.approx(TABLE_HEIGHT + obj.size[2] / 2, abs=1e-3), s.name
        assert np.linalg.norm(s.linear_velocity) < 1e-3
    robot_links = set(rc_arm.links)
    touching = [(c.body1, c.body2) for c in engine.contacts() if {c.body1, c.body2} & robot_links]
    assert not touching, f"the robot touches the scene at its initial pose: {touching}"


def test_a_box_dropped_above_the_table_falls_and_rests_on_it(rc_arm, say):
    engine, sim = make_sim(rc_arm)
    sim.set_state("box_medium", (0.5, 0.0, 0.5), (1, 0, 0, 0))
    z0 = sim.pose("box_medium").position[2]
    engine.step(100)
    assert sim.pose("box_medium").position[2] < z0 - 0.03, "it falls"
    engine.step(1400)
    z = sim.pose("box_medium").position[2]
    say(f"[world] box_medium rests at z = {z:.5f} m (table top {TABLE_HEIGHT} + half size 0.03)")
    assert z == pytest.approx(TABLE_HEIGHT + 0.03, abs=1e-3)
    contacts = [c for c in engine.contacts() if {c.body1, c.body2} == {"table", "box_medium"}]
    assert contacts
    total = sum(c.force_world for c in contacts)
    assert abs(total[2]) == pytest.approx(0.2 * 9.81, rel=0.05), "the table carries the box's weight"


def test_set_state_moves_a_free_object_with_its_twist(rc_arm):
    engine, sim = make_sim(rc_arm, EMPTY)
    sim.spawn(make_object("ball", "sphere", [0.05], pose=Pose((1.0, 0.0, 1.0)), mass=0.3))
    q = (math.cos(0.3), 0.0, 0.0, math.sin(0.3))
    sim.set_state("ball", (1.0, 1.0, 2.0), q, (0.5, 0.0, 1.0), (0.0, 0.0, 2.0))
    (st,) = sim.states()
    assert st.pose.position == pytest.approx((1.0, 1.0, 2.0))
    assert st.pose.quaternion == pytest.approx(q)
    assert st.linear_velocity == pytest.approx((0.5, 0.0, 1.0))
    assert st.angular_velocity == pytest.approx((0.0, 0.0, 2.0)), "world frame, not body frame"
    engine.step(100)  # ballistic for 0.1 s
    (st,) = sim.states()
    assert st.pose.position[0] == pytest.approx(1.05, abs=1e-3)
    assert st.pose.position[2] == pytest.approx(2.0 + 0.1 - 0.5 * 9.81 * 0.01, abs=2e-3)


@pytest.mark.parametrize("args, message", [
    (("nothing", (0, 0, 1), (1, 0, 0, 0)), "no object named 'nothing'"),
    (("table", (0, 0, 1), (1, 0, 0, 0)), "'table' is fixed"),
    (("box_small", (0, 0, math.nan), (1, 0, 0, 0)), "must be finite"),
    (("box_small", (0, 0, 1), (1, 0, 0, 0.1)), "not a unit quaternion"),
    (("box_small", (0, 0, 1), (0, 0, 0, 0)), "zero quaternion"),
    (("box_small", (0, 0, 1), (1, 0, 0, 0), (0, math.inf, 0)), "linear velocity[1] must be finite"),
])
def test_set_state_refusals_change_nothing(rc_arm, args, message):
    engine, sim = make_sim(rc_arm)
    engine.step(10)
    before = snapshot(engine, sim)
    with pytest.raises(CommandError, match=message.replace("[", r"\[").replace("]", r"\]")):
        sim.set_state(*args)
    after = snapshot(engine, sim)
    assert before[0] == after[0] and np.array_equal(before[1], after[1]) and before[3] == after[3]


def test_spawn_and_remove_keep_the_robot_and_other_objects_exactly(rc_arm):
    engine, sim = make_sim(rc_arm)
    twin, twin_sim = make_sim(rc_arm)
    for e in (engine, twin):
        e.set_commands(["joint1", "joint2"], [0.6, 0.4])
        e.step(150)  # the arm is moving
    before = snapshot(engine, sim)
    assert np.abs(before[2]).max() > 0.1, "the test needs a moving robot"
    sim.spawn(make_object("far_ball", "sphere", [0.05], pose=Pose((3.0, 3.0, 0.5)), mass=1.0))
    after = snapshot(engine, sim)
    assert after[0] == before[0]
    assert np.array_equal(after[1], before[1]) and np.array_equal(after[2], before[2]), "robot state jumped"
    assert after[3][:3] == before[3], "the other objects moved"
    # and it goes on as if nothing happened (the new ball is far away)
    for e in (engine, twin):
        e.step(600)
    assert np.allclose(engine.positions(), twin.positions(), atol=1e-9)
    for a, b in zip(sim.states(), twin_sim.states(), strict=False):
        assert np.allclose(a.pose.array(), b.pose.array(), atol=1e-9), a.name
    assert sim.pose("far_ball").position[2] == pytest.approx(0.05, abs=1e-3), "the ball fell onto the floor"
    # removal keeps the rest too
    before = snapshot(engine, sim)
    sim.remove("box_medium")
    after = snapshot(engine, sim)
    assert np.array_equal(after[1], before[1]) and np.array_equal(after[2], before[2])
    kept = [s for s in before[3] if s[0] != "box_medium"]
    assert after[3] == kept
    assert "box_medium" not in sim.objects and "box_medium" not in [c.body1 for c in engine.contacts()]
    engine.step(100)
    assert engine.positions()[0] == pytest.approx(0.6, abs=0.02), "the robot still obeys its command"


@pytest.mark.parametrize("kwargs, message", [
    (dict(name="box_small", shape="sphere", size=[0.1]), "an object named 'box_small' exists already"),
    (dict(name="link3", shape="sphere", size=[0.1]), "'link3' is the name of a body of the robot"),
])
def test_spawn_refusals_change_nothing(rc_arm, kwargs, message):
    engine, sim = make_sim(rc_arm)
    model = engine.model
    with pytest.raises(CommandError, match=message):
        sim.spawn(make_object(**kwargs))
    assert engine.model is model and list(sim.objects) == ["table", "box_small", "box_medium", "box_large"]


def test_spawn_validation_happens_before_the_engine(rc_arm):
    from robot_core.physics.world import WorldError

    for kwargs, message in [(dict(size=[0.0]), "must be positive"), (dict(size=[0.1], mass=0.0), "mass must be"),
                            (dict(size=[math.nan]), "must be finite")]:
        with pytest.raises(WorldError, match=message):
            make_object("b", "sphere", **kwargs)
    _engine, sim = make_sim(rc_arm)
    with pytest.raises(CommandError, match="no object named 'ghost'"):
        sim.remove("ghost")


def test_spawned_fixed_objects_and_meshes(rc_arm, tmp_path):
    mesh = tmp_path / "tetra.obj"  # a 10 cm corner tetrahedron with its right angle at the origin
    mesh.write_text("v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")
    engine, sim = make_sim(rc_arm, EMPTY)
    sim.spawn(make_object("wall", "box", [0.1, 2, 1], pose=Pose((2, 0, 0.5)), fixed=True))
    sim.spawn(make_object("tetra", "mesh", mesh=str(mesh), pose=Pose((1, 0, 0.3)), density=500))
    assert sim.free_objects == ["tetra"]
    engine.step(1000)
    assert sim.pose("tetra").position[2] == pytest.approx(0.0, abs=2e-3), "the mesh's origin corner rests on z=0"
    assert sim.pose("wall").position == (2, 0, 0.5)
    with pytest.raises(CommandError, match="fixed"):
        sim.set_state("wall", (0, 0, 1), (1, 0, 0, 0))
    sim.remove("tetra")
    assert sim.free_objects == [] and engine.model.nmesh == 0


# ------------------------------------------------------------------ keyframes and resets
def test_reset_to_a_keyframe_and_back(rc_arm):
    engine, sim = make_sim(rc_arm)
    names = engine.joint_names
    engine.step(200)
    msg = sim.reset("home")
    assert msg == "keyframe 'home'" and engine.time == 0.0
    q = dict(zip(names, engine.positions(), strict=True))
    assert q["joint2"] == 0.3 and q["joint4"] == 1.2
    sim.reset("stacked")
    assert sim.pose("box_small").position == pytest.approx((0.45, 0.18, 0.32))
    engine.step(800)
    assert sim.pose("box_small").position[2] == pytest.approx(TABLE_HEIGHT + 0.1 + 0.02, abs=2e-3), \
        "it rests on the large box"
    sim.reset()
    assert sim.pose("box_small").position == pytest.approx((0.45, -0.18, 0.22)), "back to the file's pose"
    sim.reset("home", {"joint2": -0.2})
    assert dict(zip(names, engine.positions(), strict=True))["joint2"] == -0.2, "the request overrides the keyframe"


def test_unknown_keyframe_or_bad_joint_is_refused_and_nothing_changes(rc_arm):
    engine, sim = make_sim(rc_arm)
    engine.step(300)
    before = snapshot(engine, sim)
    with pytest.raises(CommandError, match=r"unknown keyframe 'nope' \(keyframes: \['home', 'stacked'\]\)"):
        sim.reset("nope")
    with pytest.raises(CommandError, match="outside its range"):
        sim.reset("home", {"joint4": -3.0})
    after = snapshot(engine, sim)
    assert before[0] == after[0] and np.array_equal(before[1], after[1]) and before[3] == after[3]


def test_keyframes_file_and_its_errors(rc_arm, tmp_path):
    path = write(tmp_path, """\
        keyframes:
          reach: {joints: {joint1: 1.0}, objects: {box_large: {xyz: [0.3, 0.3, 0.25]}}}
        """, "keyframes.yaml")
    engine, sim = make_sim(rc_arm, keyframes=load_keyframes(path))
    assert set(sim.keyframes) == {"home", "stacked", "reach"}
    sim.reset("reach")
    assert engine.positions()[0] == 1.0 and sim.pose("box_large").position == pytest.approx((0.3, 0.3, 0.25))
    bad = write(tmp_path, "keyframes:\n  home: {joints: {joint1: 0.5}}\n", "dup.yaml")
    with pytest.raises(RobotModelError, match=r"dup.yaml:2: keyframe 'home': keyframe 'home' is defined twice"):
        make_sim(rc_arm, keyframes=load_keyframes(bad))
    bad = write(tmp_path, "keyframes:\n  k: {joints: {elbow: 0.5}}\n", "joint.yaml")
    with pytest.raises(RobotModelError, match=r"joint.yaml:2: keyframe 'k': .*joint\(s\) \['elbow'\]"):
        make_sim(rc_arm, keyframes=load_keyframes(bad))
    with pytest.raises(RobotModelError, match="must be a mapping with a keyframes: section"):
        load_keyframes(write(tmp_path, "home: {}\n", "plain.yaml"))


# ------------------------------------------------------------------ base pose
def test_base_pose_moves_a_fixed_base_robot(rc_arm):
    pose = base_pose_quaternion([1.0, -0.5, 0.2, 0.0, 0.0, math.pi / 2])
    engine, _ = make_sim(rc_arm, EMPTY, base_pose=pose)
    base = engine.link_poses()["base_link"]
    assert base[:3, 3] == pytest.approx((1.0, -0.5, 0.2))
    assert base[:3, 0] == pytest.approx((0.0, 1.0, 0.0), abs=1e-12), "yawed by 90 degrees"
    plain, _ = make_sim(rc_arm, EMPTY)
    tcp, tcp0 = engine.link_poses()["tcp"], plain.link_poses()["tcp"]
    assert tcp[:3, 3] == pytest.approx(base[:3, :3] @ tcp0[:3, 3] + base[:3, 3])
    with pytest.raises(ValueError, match="base_pose must be a list of 6 numbers"):
        base_pose_quaternion([1, 2, 3])


def test_base_pose_of_a_free_base_robot_is_where_it_starts(tmp_path):
    from robot_core.model import load_robot as load

    robot = load(str(REPO / "urdf" / "planar2.urdf"))
    pose = base_pose_quaternion([0.5, 0.0, 1.0, 0.0, 0.0, 0.0])
    engine = PhysicsEngine(robot, fixed_base=False, include_visuals=False, initial_base_pose=pose,
                           scene=scene_hook(load_world(EMPTY), robot.root_link, pose))
    assert engine.base_pose()[:3] == pytest.approx((0.5, 0.0, 1.0))
    engine.step(100)
    assert engine.base_pose()[2] < 1.0, "a free base falls from where it starts"


def test_a_keyframe_cannot_move_a_fixed_object(rc_arm, tmp_path):
    path = write(tmp_path, "keyframes:\n  k: {objects: {table: [0, 0, 1]}}\n", "kf.yaml")
    with pytest.raises(RobotModelError, match=r"kf.yaml:2: keyframe 'k': keyframe 'k' moves fixed object\(s\) "
                                              r"\['table'\]"):
        make_sim(rc_arm, keyframes=load_keyframes(path))


def test_objects_starting_inside_something_are_warned_about(rc_arm, tmp_path):
    path = write(tmp_path, """\
        objects:
          - {name: sunk, shape: box, size: [0.1, 0.1, 0.1], pose: {xyz: [1.0, 0, 0.02]}}
          - {name: in_arm, shape: sphere, size: [0.05], pose: {xyz: [0, 0, 0.3]}, fixed: true}
          - {name: fine, shape: sphere, size: [0.05], pose: {xyz: [2.0, 0, 0.05]}}
        """)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make_sim(rc_arm, path)
    texts = [str(w.message) for w in caught if issubclass(w.category, RobotModelWarning)]
    print("\n  [world] " + "\n  [world] ".join(texts))
    assert any(t.startswith(f"{path}:2: object 'sunk' starts 30.0 mm inside 'the floor'") for t in texts)
    assert any(t.startswith(f"{path}:3: object 'in_arm' starts") and "inside 'link" in t for t in texts)
    assert not any("'fine'" in t for t in texts)


def test_contact_model_reaches_mujoco_and_bad_values_name_file_and_line(rc_arm, tmp_path):
    import mujoco

    world = load_world(TABLE_TOP)
    assert (world.contact.cone, world.contact.impratio) == ("elliptic", 10.0)
    engine = PhysicsEngine(rc_arm, scene=scene_hook(world))
    assert (engine.model.opt.cone, engine.model.opt.impratio) == (mujoco.mjtCone.mjCONE_ELLIPTIC, 10.0)
    plain = PhysicsEngine(rc_arm, scene=scene_hook(load_world(write(tmp_path, "objects: []\n"))))
    assert (plain.model.opt.cone, plain.model.opt.impratio) == (mujoco.mjtCone.mjCONE_PYRAMIDAL, 1.0)
    for body, message in (("contact: {cone: round}\n", "contact: cone must be one of ['pyramidal', 'elliptic']"),
                          ("contact: {impratio: 0}\n", "contact: impratio must be > 0, got 0.0"),
                          ("contact: {impratio: .nan}\n", "contact: impratio must be finite"),
                          ("contact: elliptic\n", "contact: must be a mapping")):
        path = write(tmp_path, "floor: true\n" + body)
        with pytest.raises(RobotModelError) as err:
            load_world(path)
        print(f"\n  [world] {err.value}")
        assert message in str(err.value) and str(err.value).startswith(f"{path}:")
    with pytest.warns(RobotModelWarning, match=r"world.yaml:3: contact: unknown key 'solref'"):
        load_world(write(tmp_path, "floor: true\ncontact:\n  solref: [0.01, 1]\n"))
