"""MJCF -> RobotModel (robot_core/model/mjcf_reader.py), judged against MuJoCo's own model of the same file."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest

from robot_core.model import MjcfSource, RobotModel, RobotModelError, RobotModelWarning, load_robot
from robot_core.model.mjcf_reader import load_spec
from robot_core.physics.builder import build_model
from robot_core.physics.engine import PhysicsEngine

DATA = Path(__file__).resolve().parent / "data" / "mjcf"
ARM = DATA / "two_link_arm.xml"
SCENE = DATA / "scene_box_camera.xml"
MENAGERIE = DATA / "menagerie_style.xml"
SITE_PACKAGES = Path(mujoco.__file__).resolve().parent.parent


def load_quiet(path: Path | str) -> RobotModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        return load_robot(path)


def structure_only(robot: RobotModel) -> RobotModel:
    """The RobotModel without its MJCF source: the physics builder then makes MuJoCo bodies from the reader's links
    and joints alone, so comparing that model with MuJoCo's model of the file checks what the reader made."""
    return dataclasses.replace(robot, mjcf=None)


def mujoco_model(path: Path) -> mujoco.MjModel:
    """MuJoCo's own model of the file, with unnamed bodies and joints named as the reader names them."""
    return load_spec(MjcfSource(path=str(path))).compile()


def _split_links(robot: RobotModel) -> set[str]:
    return {f"{body}:{joint}" for body, joints in robot.mjcf.split_bodies.items() for joint in joints}


def _link_pose(model: mujoco.MjModel, data: mujoco.MjData, robot: RobotModel, link: str) -> np.ndarray:
    body = robot.mjcf.link_bodies[link]
    m = np.eye(4)
    bid = model.body(body).id
    m[:3, :3] = data.xmat[bid].reshape(3, 3)
    m[:3, 3] = data.xpos[bid]
    return m @ np.asarray(robot.mjcf.link_offsets.get(link, np.eye(4)))


def _random_poses(path: Path, count: int, seed: int):
    """MuJoCo's model of the file at random joint positions (within ranges, +-pi where unlimited)."""
    model = mujoco_model(path)
    data = mujoco.MjData(model)
    rng = np.random.default_rng(seed)
    for _ in range(count):
        q = {}
        for j in range(model.njnt):
            if int(model.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_BALL)):
                continue
            lo, hi = model.jnt_range[j] if model.jnt_limited[j] else (-np.pi, np.pi)
            q[model.joint(j).name] = float(rng.uniform(lo, hi))
            data.qpos[model.jnt_qposadr[j]] = q[model.joint(j).name]
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        yield model, data, q


@pytest.mark.parametrize("path", [ARM, SCENE, MENAGERIE], ids=lambda p: p.stem)
def test_fk_and_jacobian_match_mujoco_at_random_poses(path):
    robot = load_quiet(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        built = build_model(structure_only(robot), include_visuals=False)
    bdata = mujoco.MjData(built.model)
    # (the frames between two joints of one body have no body in MuJoCo's model of the file)
    links = [n for n, body in robot.mjcf.link_bodies.items() if n != "world" and n not in _split_links(robot)]
    assert links
    for model, data, q in _random_poses(path, 20, seed=7):
        q = {name: value for name, value in q.items() if name in robot.joints}  # not the world bodies' joints
        for name, value in q.items():
            bdata.qpos[built.joints[name].qpos_adr] = value
        mujoco.mj_kinematics(built.model, bdata)
        mujoco.mj_comPos(built.model, bdata)
        for link in links:
            expected = _link_pose(model, data, robot, link)
            np.testing.assert_allclose(built.link_pose(bdata, link), expected, atol=1e-9, err_msg=link)
            # Jacobian of the link origin with respect to the robot's joints, both models.
            jp, jr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
            mujoco.mj_jac(model, data, jp, jr, expected[:3, 3], model.body(robot.mjcf.link_bodies[link]).id)
            bp, br = np.zeros((3, built.model.nv)), np.zeros((3, built.model.nv))
            mujoco.mj_jac(built.model, bdata, bp, br, expected[:3, 3], built.links[link].body_id)
            for name in q:
                col = model.jnt_dofadr[model.joint(name).id]
                np.testing.assert_allclose(bp[:, built.joints[name].dof_adr], jp[:, col], atol=1e-9)
                np.testing.assert_allclose(br[:, built.joints[name].dof_adr], jr[:, col], atol=1e-9)


@pytest.mark.parametrize("path", [ARM, SCENE, MENAGERIE], ids=lambda p: p.stem)
def test_inertials_equal_the_compiled_model(path):
    robot = load_quiet(path)
    model = mujoco_model(path)
    for link, body in robot.mjcf.link_bodies.items():
        if link == "world" or link in _split_links(robot):
            assert link == "world" or robot.links[link].inertial is None
            continue
        bid = model.body(body).id
        inertial = robot.links[link].inertial
        if model.body_mass[bid] == 0:
            assert inertial is None
            continue
        assert inertial.mass == pytest.approx(model.body_mass[bid], rel=1e-12)
        offset = np.asarray(robot.mjcf.link_offsets.get(link, np.eye(4)))
        np.testing.assert_allclose(offset[:3, 3] + inertial.origin.xyz, model.body_ipos[bid], atol=1e-12)
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, model.body_iquat[bid])
        rot = rot.reshape(3, 3)
        np.testing.assert_allclose(rot.T @ inertial.inertia @ rot, np.diag(model.body_inertia[bid]), atol=1e-12)


def test_two_link_arm_structure_and_actuators():
    robot = load_quiet(ARM)
    assert robot.root_link == "world"
    assert robot.actuated_joint_names() == ["shoulder", "elbow"]
    shoulder = robot.joints["shoulder"]
    assert shoulder.type == "revolute" and (shoulder.limit.lower, shoulder.limit.upper) == (-2.0, 2.0)
    assert shoulder.limit.effort == 40.0
    assert (shoulder.dynamics.damping, shoulder.dynamics.friction) == (0.5, 0.01)
    servo = robot.mjcf.servos["shoulder"]
    assert (servo.interface, servo.kp, servo.kd) == ("position", 200.0, 10.0)
    (block,) = robot.ros2_control
    assert block.plugin == "topic_based_ros2_control/TopicBasedSystem"
    cmds = {j.name: [(i.name, i.min, i.max) for i in j.command_interfaces] for j in block.joints}
    assert cmds == {"shoulder": [("position", -2.0, 2.0)], "elbow": [("position", -2.5, 2.5)]}
    # the floor is the world's, not the robot's
    assert not robot.links["world"].collisions


def test_actuator_kinds_map_to_command_interfaces():
    robot = load_quiet(MENAGERIE)
    kinds = {name: s.interface for name, s in robot.mjcf.servos.items()}
    assert kinds == {"j1": "position", "j2": "position", "j3": "velocity", "slide": "effort", "finger_a": "position"}
    assert robot.mjcf.servos["finger_a"].kp == 80.0 and robot.mjcf.servos["finger_a"].kd == 4.0  # general servo
    assert robot.mjcf.servos["j3"].kv == 15.0
    # degrees: ranges in radians; a motor's limit is ctrlrange x gear; forcerange from the default class
    assert robot.joints["j1"].limit.upper == pytest.approx(np.radians(170))
    assert robot.joints["j1"].limit.effort == 50.0
    assert robot.joints["slide"].limit.effort == pytest.approx(10.0)
    assert robot.joints["j3"].limit.velocity == 2.0
    cmds = {j.name: [i.name for i in j.command_interfaces] for j in robot.ros2_control[0].joints}
    assert cmds["finger_b"] == []  # the mimic follows
    assert robot.joints["finger_b"].mimic.joint == "finger_a"
    # default classes reached the joints: j1 'big' damping, the others the 'arm' class
    assert robot.joints["j1"].dynamics.damping == 1.5 and robot.joints["j2"].dynamics.damping == 0.2
    # a body with two joints became a chain with an intermediate link
    assert robot.joints["j2"].child == "link2:j2" and robot.joints["j3"].parent == "link2:j2"
    # collision-only geoms (group 3) are collisions, the visual class (no contacts) visuals
    assert robot.links["link1"].collisions and not robot.links["link1"].visuals
    assert robot.links["base"].visuals and not robot.links["base"].collisions


def test_scene_world_bodies_are_not_links():
    robot = load_quiet(SCENE)
    assert "crate" not in robot.links and robot.mjcf.world_bodies == ["crate"]
    assert list(robot.joints) == ["post_fixed", "swing"]
    assert robot.joints["swing"].type == "continuous"
    assert any("camera" in note for note in robot.mjcf.not_carried)


def test_mjcf_detected_by_root_element_for_text_and_xml_files(tmp_path):
    text = ARM.read_text()
    assert load_quiet(text).name == "two_link_arm"
    # a .mjcf file (MuJoCo itself reads only .xml files) with an include and a mesh, both relative to it
    other = tmp_path / "robot.mjcf"
    other.write_text(MENAGERIE.read_text())
    (tmp_path / "menagerie_style_defaults.xml").write_text((DATA / "menagerie_style_defaults.xml").read_text())
    assert load_quiet(other).joints["j1"].dynamics.damping == 1.5  # from the included default class
    meshes = tmp_path / "meshes"
    (meshes / "assets").mkdir(parents=True)
    (meshes / "assets" / "wedge.stl").write_bytes((DATA / "assets" / "wedge.stl").read_bytes())
    (meshes / "arm.mjcf").write_text((DATA / "mesh_arm.xml").read_text())
    robot = load_quiet(meshes / "arm.mjcf")
    assert robot.links["link"].visuals[0].geometry.resolved_filename == str(meshes / "assets" / "wedge.stl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        assert PhysicsEngine(robot).model.nmesh == 1


def _error(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(RobotModelError) as info:
        load_quiet(path)
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message
    return message


def test_truncated_xml_names_file_and_line(tmp_path):
    text = ARM.read_text()
    cut = text[: text.index("<actuator>")]
    message = _error(tmp_path, "truncated.xml", cut)
    assert f"truncated.xml:{cut.count(chr(10)) + 1}: XML: malformed XML: no element found" in message
    cut = text[: text.index('<geom name="forearm_geom"') + 20]
    message = _error(tmp_path, "cut_tag.xml", cut)
    assert f"cut_tag.xml:{cut.count(chr(10)) + 1}: XML: malformed XML" in message


def test_unknown_joint_type_names_file_line_and_element(tmp_path):
    text = ARM.read_text().replace('type="hinge" axis="0 1 0" range="-2 2"', 'type="wobble" axis="0 1 0" range="-2 2"')
    message = _error(tmp_path, "wobble.xml", text)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "wobble" in t)
    assert f"wobble.xml:{line}: <joint>" in message and "wobble" in message


def test_ball_joint_is_three_hinges_with_a_warning_naming_file_and_line(tmp_path):
    """(the ball itself: test/test_mjcf_ball.py)"""
    text = ARM.read_text().replace('<joint name="elbow" type="hinge"', '<joint name="elbow" type="ball"')
    text = text.replace('range="-2.5 2.5" damping="0.3"', 'damping="0.3"')
    text = text.replace('<position name="elbow_servo" joint="elbow" kp="100" kv="5" ctrlrange="-2.5 2.5" '
                        'forcerange="-20 20"/>', "")
    path = tmp_path / "ball.xml"
    path.write_text(text)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if 'name="elbow"' in t)
    with pytest.warns(RobotModelWarning, match=rf"{path}:{line}: joint 'elbow': ball joint: simulated as three"):
        robot = load_robot(path)
    assert [j.name for j in robot.movable_joints()] == ["shoulder", "elbow:x", "elbow:y", "elbow:z"]
    assert robot.joints["elbow:x"].type == "continuous"


def test_unnamed_bodies_and_joints_get_stable_names():
    text = """<mujoco><worldbody><body pos="0 0 1"><joint axis="0 1 0"/><geom size="0.1" mass="1"/>
      <body pos="0 0 -0.5"><joint axis="0 1 0"/><geom size="0.1" mass="1"/></body></body></worldbody>
      <actuator><motor joint="body1:joint0"/></actuator></mujoco>"""
    robot = load_quiet(text)
    assert [j.name for j in robot.movable_joints()] == ["body1:joint0", "body2:joint0"]
    assert {"body1", "body2"} <= set(robot.links)


CORPUS = [SITE_PACKAGES / "gymnasium" / "envs" / "mujoco" / "assets" / name for name in
          ("reacher.xml", "inverted_double_pendulum.xml", "pusher.xml", "half_cheetah.xml", "hopper.xml",
           "walker2d_v5.xml", "swimmer.xml", "ant.xml", "humanoid.xml", "point.xml")]


@pytest.mark.parametrize("path", [p for p in CORPUS if p.is_file()], ids=lambda p: p.stem)
def test_installed_mjcf_corpus_loads_and_matches_mujoco(path):
    """Real MJCF files shipped with gymnasium: load, and the reader's structure reproduces MuJoCo's FK."""
    test_fk_and_jacobian_match_mujoco_at_random_poses(path)


def _stl_vertices(path: Path) -> np.ndarray:
    import struct

    raw = path.read_bytes()
    count = struct.unpack("<I", raw[80:84])[0]
    return np.array([struct.unpack("<3f", raw[84 + 50 * i + 12 + 12 * k: 84 + 50 * i + 24 + 12 * k])
                     for i in range(count) for k in range(3)], dtype=float)


def test_mesh_geoms_place_the_file_where_mujoco_puts_it():
    """MuJoCo recentres a mesh on its centre of mass and moves the geom with it; the link's mesh visual places
    the file's own vertices, which must land where MuJoCo's recentred vertices are (meshdir, scale, degrees)."""
    path = DATA / "mesh_arm.xml"
    robot = load_quiet(path)
    (visual,) = robot.links["link"].visuals
    (collision,) = robot.links["link"].collisions
    assert visual.geometry.resolved_filename == str((DATA / "assets" / "wedge.stl").resolve())
    assert visual.geometry.filename.startswith("file://")
    np.testing.assert_allclose(visual.geometry.scale, [0.5, 1.0, 2.0])
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    data.qpos[0] = 0.4
    mujoco.mj_kinematics(model, data)
    body = np.eye(4)
    body[:3, :3] = data.xmat[model.body("link").id].reshape(3, 3)
    body[:3, 3] = data.xpos[model.body("link").id]
    placed = body @ collision.origin.matrix()
    ours = _stl_vertices(DATA / "assets" / "wedge.stl") * visual.geometry.scale @ placed[:3, :3].T + placed[:3, 3]
    mesh = model.geom("shell").dataid[0]
    verts = model.mesh_vert[model.mesh_vertadr[mesh]: model.mesh_vertadr[mesh] + model.mesh_vertnum[mesh]]
    g = model.geom("shell").id
    theirs = verts @ data.geom_xmat[g].reshape(3, 3).T + data.geom_xpos[g]
    nearest = np.linalg.norm(ours[:, None, :] - theirs[None, :, :], axis=2).min(axis=1)
    assert nearest.max() < 1e-6  # float32 STL coordinates


def test_errors_in_an_included_file_name_that_file_and_line(tmp_path):
    """MuJoCo says line 0 for elements of included files; the reader finds the element there."""
    (tmp_path / "arm_body.xml").write_text('<mujoco>\n  <worldbody>\n    <body name="b">\n'
                                           '      <joint name="jj" type="ball"/>\n      <geom size="0.1"/>\n'
                                           '    </body>\n  </worldbody>\n</mujoco>\n')
    main = tmp_path / "main.xml"
    main.write_text('<mujoco model="m">\n  <include file="arm_body.xml"/>\n'
                    '  <actuator><motor joint="jj"/></actuator>\n</mujoco>\n')
    with pytest.warns(RobotModelWarning, match=rf"{tmp_path / 'arm_body.xml'}:4: joint 'jj': ball joint"):
        robot = load_robot(main)
    with warnings.catch_warnings():  # the ball is rewritten into its hinges in the included file's text
        warnings.simplefilter("ignore", RobotModelWarning)
        sim = PhysicsEngine(robot)
    assert sim.model.body("b:jj:x").id > 0 and sim.command_modes()["jj:x"] == "effort"
    (tmp_path / "arm_body.xml").write_text((tmp_path / "arm_body.xml").read_text().replace('"ball"', '"wobble"'))
    with pytest.raises(RobotModelError, match=rf"{tmp_path / 'arm_body.xml'}:4: <joint>: .*wobble"):
        load_quiet(main)
