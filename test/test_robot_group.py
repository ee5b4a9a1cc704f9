"""Several robots as one model (robot_core.model.robot_group): the robots file, the prefixed names, one MuJoCo world
in which the robots sit at their base poses and can touch. No ROS; over DDS: test_robot_group_dds.py."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from ros_harness import REPO

from robot_core.bringup.plan import (
    BringupConfigError,
    BringupOptions,
    make_plans,
    with_namespaced_parameter_files,
)
from robot_core.model import RobotModelError, load_robot
from robot_core.model.robot_group import merge_robots, read_robots_file
from robot_core.physics.engine import PhysicsEngine

ARM = str(REPO / "urdf" / "rc_arm.urdf")


def _file(tmp_path, robots) -> str:
    path = tmp_path / "robots.yaml"
    path.write_text(yaml.safe_dump({"robots": robots}))
    return str(path)


def test_two_arms_become_one_model_with_prefixed_names(tmp_path):
    members = read_robots_file(_file(tmp_path, [
        {"namespace": "arm1", "description": ARM, "base_pose": [0, -0.6, 0]},
        {"namespace": "arm2", "description": ARM, "base_pose": [0, 0.6, 0, 0, 0, 3.14159],
         "joint_states_topic": "/custom/states"}]))
    assert members[0].joint_states_topic == "/arm1/robot_joint_states"
    assert members[1].joint_states_topic == "/custom/states"
    assert members[1].joint_commands_topic == "/arm2/robot_joint_commands"
    group = merge_robots(members, load_robot)
    model = group.model
    assert [g.name for g in model.sensors] == ["arm1/scene_camera", "arm2/scene_camera"]
    assert model.root_link == "world"
    assert {"arm1/joint1", "arm2/joint1", "arm1/base_joint"} <= set(model.joints)
    assert members[0].joints[:2] == ["joint1", "joint2"]
    assert [b.name for b in model.ros2_control] == ["arm1/RcArmSystem", "arm2/RcArmSystem"]
    engine = PhysicsEngine(model, timestep=1e-3)
    assert len(engine.joint_names) == 2 * len(members[0].joints)
    np.testing.assert_allclose(engine.link_poses()["arm2/base_link"][:3, 3], [0, 0.6, 0], atol=1e-9)
    assert any(n.startswith("arm2/wrist_ft/") for n in engine.sensor_names)  # ros2_control sensors kept


def test_robots_in_one_world_touch_each_other(tmp_path):
    """Two arms 0.3 m apart, upright at the start, then both bent toward each other: their links collide (a contact
    between the two robots), which two separate simulators could never give."""
    members = read_robots_file(_file(tmp_path, [
        {"namespace": "a", "description": ARM, "base_pose": [0, 0, 0]},
        {"namespace": "b", "description": ARM, "base_pose": [0.3, 0, 0, 0, 0, 3.14159]}]))
    model = merge_robots(members, load_robot).model
    engine = PhysicsEngine(model, timestep=1e-3, initial_positions={f"{ns}/joint2": 0.0 for ns in "ab"})
    assert not [c for c in engine.contacts() if {c.body1[:2], c.body2[:2]} == {"a/", "b/"}]
    between = []
    for _ in range(3000):
        engine.set_commands(["a/joint2", "b/joint2"], positions=[1.2, 1.2])
        engine.step()
        between = [c for c in engine.contacts() if {c.body1[:2], c.body2[:2]} == {"a/", "b/"}]
        if between:
            break
    assert between, "the two arms never touched"


def test_the_robots_cameras_and_lasers_come_along_under_their_prefix(tmp_path):
    from robot_core.ros.sim_sensors import camera_frame_id, laser_frame_id, topic_names

    bot = str(REPO / "urdf" / "sensor_bot.urdf")
    members = read_robots_file(_file(tmp_path, [{"namespace": "bot1", "description": bot},
                                                {"namespace": "bot2", "description": bot, "base_pose": [2, 0, 0]}]))
    sensors = {s.name: s for s in merge_robots(members, load_robot).model.sensors}
    assert set(sensors) == {"bot1/lidar", "bot1/camera", "bot2/lidar", "bot2/camera"}
    lidar, camera = sensors["bot2/lidar"], sensors["bot2/camera"]
    assert (lidar.link, laser_frame_id(lidar)) == ("bot2/base_scan", "bot2/base_scan")
    assert (camera.link, camera_frame_id(camera)) == ("bot2/camera_link", "bot2/camera_optical_frame")
    # relative topics: under /bot2 for a simulator in the root namespace, in both topic modes
    assert topic_names(lidar, "name") == {"scan": "bot2/lidar/scan"}
    assert topic_names(lidar, "description") == {"scan": "bot2/scan"}  # the plugin's remapping ~/out:=scan
    assert topic_names(camera, "name")["image"] == "bot2/camera/image_raw"
    assert topic_names(camera, "description")["info"] == "bot2/camera/camera_info"
    assert load_robot(bot).sensors[0].name == "lidar"  # the description itself is left alone


@pytest.mark.parametrize("robots, match", [
    ([], "non-empty 'robots:'"),
    ([{"namespace": "1arm", "description": ARM}], "namespace '1arm'"),
    ([{"namespace": "a", "description": ARM}, {"namespace": "a", "description": ARM}], "used twice"),
    ([{"namespace": "a"}], "description"),
    ([{"namespace": "a", "description": ARM, "base_pose": [0, 1]}], "base_pose"),
    ([{"namespace": "a", "description": ARM, "colour": "red"}], "unknown keys"),
    ([{"namespace": "a", "description": ARM, "controllers": ["c.yaml"]}], "controllers must be a file name"),
])
def test_a_bad_robots_file_names_file_and_entry(tmp_path, robots, match):
    path = _file(tmp_path, robots)
    with pytest.raises(RobotModelError, match=match) as info:
        read_robots_file(path)
    assert path in str(info.value)


def test_the_watchdog_stops_one_robot_of_the_group(tmp_path):
    """A silent manager's robot is stopped alone: the other robot's velocity command stands."""
    members = read_robots_file(_file(tmp_path, [
        {"namespace": "a", "description": ARM, "base_pose": [0, -1, 0]},
        {"namespace": "b", "description": ARM, "base_pose": [0, 1, 0]}]))
    engine = PhysicsEngine(merge_robots(members, load_robot).model, timestep=1e-3)
    engine.set_commands(["a/joint1", "b/joint1"], velocities=[0.2, 0.2])
    stopped = engine.stop_motion_commands([f"a/{j}" for j in members[0].joints])
    assert stopped == ["a/joint1"]
    for _ in range(300):
        engine.step()
    velocity = dict(zip(engine.joint_names, engine.velocities(), strict=True))
    assert abs(velocity["a/joint1"]) < 0.01 and velocity["b/joint1"] == pytest.approx(0.2, abs=0.02)


MJCF_ARM = str(REPO / "test" / "data" / "mjcf" / "menagerie_style.xml")


def test_an_mjcf_robot_joins_a_group_as_written_beside_a_urdf_arm(tmp_path):
    """A menagerie-style MJCF robot (default classes, an include, a body with two joints, a mimic equality) and a URDF
    arm in one world: the MJCF file is attached as written under its prefix at its base pose, so its links sit where
    the robot alone puts them, moved by the base pose, and its actuators' gains and equality come along."""
    members = read_robots_file(_file(tmp_path, [
        {"namespace": "arm1", "description": ARM, "base_pose": [0, -0.6, 0]},
        {"namespace": "arm2", "description": MJCF_ARM, "base_pose": [0.2, 0.6, 0.1, 0, 0, 1.0]}]))
    model = merge_robots(members, load_robot).model
    assert members[1].joints == ["j1", "j2", "j3", "slide", "finger_a", "finger_b"]
    assert set(model.mjcf_members) == {"arm2/"}
    group = PhysicsEngine(model, timestep=1e-3)
    alone = PhysicsEngine(load_robot(MJCF_ARM), timestep=1e-3)
    assert [n for n in group.joint_names if n.startswith("arm2/")] == [f"arm2/{n}" for n in alone.joint_names]
    assert group.description_gains["arm2/j1"] == alone.description_gains["j1"] == {"kp": 300.0, "kd": 20.0}
    assert "arm2/base" in {group.model.body(i).name for i in range(group.model.nbody)}  # the file's own bodies
    base = np.eye(4)
    base[:2, :2] = [[np.cos(1.0), -np.sin(1.0)], [np.sin(1.0), np.cos(1.0)]]
    base[:3, 3] = [0.2, 0.6, 0.1]
    q = {"j1": 0.4, "j2": -0.3, "j3": 0.2, "slide": 0.01, "finger_a": 0.02}
    group.set_joint_state({f"arm2/{n}": v for n, v in q.items()})
    alone.set_joint_state(q)
    for link in ("link1", "link2", "link3", "finger_b"):
        np.testing.assert_allclose(group.link_pose(f"arm2/{link}"), base @ alone.link_pose(link), atol=1e-9)
    for _ in range(300):  # both hold the pose under gravity; the file's mimic equality still drives finger_b
        group.step()
        alone.step()
    held = dict(zip(group.joint_names, group.positions(), strict=True))
    np.testing.assert_allclose([held[f"arm2/{n}"] for n in alone.joint_names], alone.positions(), atol=1e-3)
    assert held["arm2/finger_b"] == pytest.approx(held["arm2/finger_a"], abs=1e-3)


QUADRUPED = str(REPO / "test" / "data" / "mjcf" / "free_base_quadruped.xml")
DOG_POSE = [1.0, 2.0, 0.1, 0.0, 0.0, 0.5]


def _pose_matrix(x: float, y: float, z: float, yaw: float) -> np.ndarray:
    pose = np.eye(4)
    pose[:2, :2] = [[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]]
    pose[:3, 3] = [x, y, z]
    return pose


def _arm_and_dog(tmp_path):
    members = read_robots_file(_file(tmp_path, [
        {"namespace": "arm", "description": ARM, "base_pose": [0, -1.5, 0]},
        {"namespace": "dog", "description": QUADRUPED, "base_pose": DOG_POSE}]))
    return members, merge_robots(members, load_robot)


def test_an_mjcf_robot_with_a_free_base_joins_a_group_and_falls_onto_its_floor(tmp_path):
    """A menagerie-style quadruped (an unnamed ``<freejoint/>`` on its trunk, its scene's floor in its file) beside a
    fixed-base arm: its whole file is placed at the entry's base pose, so the trunk starts at its own pose in the
    file composed with the entry's, falls onto the floor that came along and stands there exactly as the file alone
    does, moved by the base pose. Its free joint is no joint of its states and commands; the arm is not affected."""
    members, group_model = _arm_and_dog(tmp_path)
    dog = members[1]
    hips_knees = [f"{leg}_{j}" for leg in ("fl", "fr", "hl", "hr") for j in ("hip", "knee")]
    assert (dog.free_joint, dog.base_link, dog.joints) == ("trunk:joint0", "trunk", hips_knees)
    assert group_model.model.joints["dog/trunk:joint0"].type == "floating"
    assert group_model.model.joints["dog/trunk:joint0"].child == "dog/trunk"
    group = PhysicsEngine(group_model.model, timestep=1e-3)
    alone = PhysicsEngine(load_robot(QUADRUPED), timestep=1e-3)
    arm_only = PhysicsEngine(merge_robots(members[:1], load_robot).model, timestep=1e-3)
    assert [n for n in group.joint_names if n.startswith("dog/")] == [f"dog/{n}" for n in hips_knees]
    assert "dog/trunk:joint0" not in group.actuated_joint_names
    base = _pose_matrix(*DOG_POSE[:3], DOG_POSE[5])
    np.testing.assert_allclose(group.link_pose("dog/trunk"), base @ alone.link_pose("trunk"), atol=1e-9)
    pose, twist = group.floating_state("dog/trunk:joint0")
    np.testing.assert_allclose(pose[:3], [1.0, 2.0, 0.1 + 0.45], atol=1e-9)
    np.testing.assert_allclose(pose[3:], [np.cos(0.25), 0, 0, np.sin(0.25)], atol=1e-9)
    for _ in range(3):
        group.step(500)
        alone.step(500)
        arm_only.step(500)
    np.testing.assert_allclose(group.link_pose("dog/trunk"), base @ alone.link_pose("trunk"), atol=1e-4)
    pose, twist = group.floating_state("dog/trunk:joint0")
    assert pose[2] == pytest.approx(0.1 + 0.32, abs=0.005), "the trunk does not stand on the floor of its file"
    np.testing.assert_allclose(pose[:2], [1.0, 2.0], atol=1e-3)
    np.testing.assert_allclose(twist, np.zeros(6), atol=1e-3)
    on_the_arm = [k for k, n in enumerate(group.joint_names) if n.startswith("arm/")]
    np.testing.assert_allclose(group.positions()[on_the_arm], arm_only.positions(), atol=1e-6)
    np.testing.assert_allclose(group.link_pose("arm/link2"), arm_only.link_pose("arm/link2"), atol=1e-6)


def test_a_free_based_robot_of_the_group_is_reset_alone_to_its_start_pose(tmp_path):
    """``/<ns>/simulator/reset`` of a free-based robot: its trunk back to the pose it started at, at rest, and its
    joints to their initial positions, while time and the arm go on."""
    from robot_core.physics.engine import CommandError

    members, group_model = _arm_and_dog(tmp_path)
    engine = PhysicsEngine(group_model.model, timestep=1e-3)
    start_pose, _ = engine.floating_state("dog/trunk:joint0")
    start = dict(zip(engine.joint_names, engine.positions(), strict=True))
    engine.set_joint_state({"arm/joint1": 0.5, "dog/fl_hip": 0.3})
    engine.step(600)  # fallen onto the floor; then pushed across it
    engine.apply_wrench("dog/trunk", force=(60.0, 0.0, 0.0), duration=0.3)
    engine.step(300)
    moved, twist = engine.floating_state("dog/trunk:joint0")
    assert moved[0] > start_pose[0] + 0.05 and np.linalg.norm(twist) > 0.1
    engine.reset_joints([f"dog/{j}" for j in members[1].joints], free_joints=["dog/trunk:joint0"])
    pose, twist = engine.floating_state("dog/trunk:joint0")
    np.testing.assert_allclose(pose, start_pose, atol=1e-9)
    np.testing.assert_allclose(twist, np.zeros(6), atol=1e-9)
    now = dict(zip(engine.joint_names, engine.positions(), strict=True))
    assert now["dog/fl_hip"] == pytest.approx(start["dog/fl_hip"], abs=1e-9)
    assert now["arm/joint1"] == pytest.approx(0.5, abs=0.02) and engine.step_count == 900
    with pytest.raises(CommandError, match="no floating joint 'dog/fl_hip'"):
        engine.reset_joints([], free_joints=["dog/fl_hip"])
    engine.reset()  # the world's reset puts it back there too
    np.testing.assert_allclose(engine.floating_state("dog/trunk:joint0")[0], start_pose, atol=1e-9)


def test_a_free_prop_of_an_mjcf_member_s_scenery_stays_free(tmp_path):
    """The file's scenery comes along at the base pose, a free prop included (MuJoCo allows a free joint on a
    top-level body only, so the file is attached in a world frame): the box starts at its file pose moved by the
    base pose and falls onto the file's floor; the robot, whose base is welded, has no free base."""
    text = (REPO / "test" / "data" / "mjcf" / "two_link_arm.xml").read_text()
    prop = '<body name="prop" pos="0.5 0.5 0.3"><freejoint/><geom type="box" size="0.05 0.05 0.05" mass="0.2"/></body>'
    arm = tmp_path / "arm_with_prop.xml"
    arm.write_text(text.replace('<body name="base"', prop + '<body name="base"', 1))
    members = read_robots_file(_file(tmp_path, [{"namespace": "a", "description": str(arm),
                                                 "base_pose": [2.0, 0.0, 0.5]}]))
    engine = PhysicsEngine(merge_robots(members, load_robot).model, timestep=1e-3)
    assert (members[0].free_joint, members[0].joints) == ("", ["shoulder", "elbow"])
    box = engine.model.body("a/prop").id
    np.testing.assert_allclose(engine.data.xpos[box], [2.5, 0.5, 0.8], atol=1e-9)
    engine.step(1000)
    np.testing.assert_allclose(engine.data.xpos[box], [2.5, 0.5, 0.55], atol=1e-3)  # on the floor (at z 0.5)


def test_an_mjcf_robot_with_two_free_bodies_is_refused_naming_file_and_joint(tmp_path):
    """Which body is the robot's base (its ground truth, what its reset puts back) is ambiguous: refused."""
    two = tmp_path / "two_free.xml"
    body = ('<body name="{0}" pos="{1} 0 0.2"><freejoint name="{0}_free"/><geom size="0.1"/><body name="{0}_arm">'
            '<joint name="{0}_j" axis="0 0 1"/><geom size="0.05" pos="0.1 0 0"/></body></body>')
    two.write_text(f'<mujoco><worldbody>{body.format("a", 0)}\n{body.format("b", 1)}</worldbody><actuator>'
                   '<motor joint="a_j"/><motor joint="b_j"/></actuator></mujoco>')
    members = read_robots_file(_file(tmp_path, [{"namespace": "a", "description": ARM},
                                                {"namespace": "b", "description": str(two)}]))
    with pytest.raises(RobotModelError, match="2 free joints") as info:
        merge_robots(members, load_robot)
    assert str(info.value).startswith(f"{two}") and "joint 'b_free'" in str(info.value)


def test_one_robot_of_the_group_is_reset_alone(tmp_path):
    """The per-robot reset (``/<ns>/simulator/reset``): only that robot's joints go back to their initial positions
    at rest (given ones overriding), while time and the other robot go on; a name of the other robot is refused."""
    from robot_core.physics.engine import CommandError

    members = read_robots_file(_file(tmp_path, [
        {"namespace": "a", "description": ARM, "base_pose": [0, -1, 0]},
        {"namespace": "b", "description": MJCF_ARM, "base_pose": [0, 1, 0]}]))
    engine = PhysicsEngine(merge_robots(members, load_robot).model, timestep=1e-3)
    start = dict(zip(engine.joint_names, engine.positions(), strict=True))
    engine.set_joint_state({"a/joint1": 0.5, "b/j1": 0.6})
    engine.set_commands(["b/j3"], velocities=[0.5])
    engine.step(200)
    engine.reset_joints([f"b/{j}" for j in members[1].joints], {"b/j2": 0.2})
    now = dict(zip(engine.joint_names, engine.positions(), strict=True))
    assert now["b/j1"] == pytest.approx(start["b/j1"], abs=1e-9) and now["b/j2"] == pytest.approx(0.2, abs=1e-9)
    assert now["b/j3"] == pytest.approx(start["b/j3"], abs=1e-9)
    assert now["a/joint1"] == pytest.approx(0.5, abs=0.02) and engine.step_count == 200
    engine.step(200)  # b's velocity command was stopped: it holds the reset pose
    after = dict(zip(engine.joint_names, engine.positions(), strict=True))
    assert after["b/j3"] == pytest.approx(start["b/j3"], abs=0.01) and after["b/j2"] == pytest.approx(0.2, abs=0.01)
    with pytest.raises(CommandError, match="not among"):
        engine.reset_joints([f"b/{j}" for j in members[1].joints], {"a/joint1": 0.0})


# --- robot-core bringup --robots: the plans of a group (robot_core.bringup.plan.make_plans) ----------------------
def test_a_group_bringup_runs_one_simulator_and_per_robot_a_namespaced_manager_and_rbc(tmp_path):
    robots = REPO / "config" / "robots_two_arms.yaml"
    plans = make_plans(BringupOptions.create(robots=robots))
    assert [p.options.namespace for p in plans] == ["/arm1", "/arm2"]
    sim = plans[0].simulator
    assert sim is not None and plans[1].simulator is None
    assert sim.namespace == "" and sim.parameters["robots"] == str(robots) and not sim.remappings
    assert "urdf_path" not in sim.parameters and "frame_prefix" not in sim.parameters  # the group prefixes itself
    for plan in plans:
        ns, cm = plan.options.namespace, plan.controller_manager
        assert cm.namespace == ns and cm.parameters["robot_description_file"] == str(REPO / "urdf" / "rc_arm.urdf")
        assert cm.parameters["publish_robot_description"] is False  # the simulator publishes /<ns>/robot_description
        assert not cm.remappings and plan.options.clock_topic == "/clock"  # one simulator: one shared time
        assert plan.options.controllers == REPO / "config" / "controllers.yaml"
        assert plan.options.manager == f"{ns}/controller_manager" and plan.spawns
        assert plan.raw_states_topic() == f"{ns}/robot_joint_states"
        assert plan.rbc is not None and plan.rbc.namespace == ns
        assert ("/robot_joint_states", f"{ns}/robot_joint_states") in plan.rbc.remappings
        assert not [r for r in plan.rbc.remappings if r[0] == "/clock"]
    # each manager's parameter file is moved under its namespace; the simulator's stays in the root namespace
    moved = [with_namespaced_parameter_files(p, tmp_path) for p in plans]
    assert moved[0].simulator is not None and moved[0].simulator.param_files == sim.param_files
    keys = [set(yaml.safe_load(m.controller_manager.param_files[0].read_text())) for m in moved]
    assert "/arm1/controller_manager" in keys[0] and "/arm2/controller_manager" in keys[1]


def test_a_group_entry_names_its_own_controllers_and_topics(tmp_path):
    controllers = tmp_path / "mine.yaml"
    controllers.write_text((REPO / "config" / "controllers.yaml").read_text())
    path = _file(tmp_path, [{"namespace": "a", "description": ARM, "controllers": "mine.yaml",
                             "joint_states_topic": "/custom/states"}, {"namespace": "b", "description": ARM}])
    a, b = make_plans(BringupOptions.create(robots=path, controllers=REPO / "config" / "controllers.yaml"))
    assert a.options.controllers == controllers and a.raw_states_topic() == "/custom/states"
    assert b.options.controllers == REPO / "config" / "controllers.yaml"


@pytest.mark.parametrize("kwargs, match", [
    ({"mode": "embedded"}, "needs mode topic"),
    ({"namespace": "arm1"}, "namespace comes from the file"),
])
def test_a_group_bringup_refuses_what_it_cannot_do(kwargs, match):
    with pytest.raises(BringupConfigError, match=match):
        BringupOptions.create(robots=REPO / "config" / "robots_two_arms.yaml", **kwargs)


def test_a_bad_robots_file_stops_the_bringup_naming_it(tmp_path):
    path = _file(tmp_path, [{"namespace": "a", "description": str(tmp_path / "missing.urdf")}])
    with pytest.raises(BringupConfigError, match="description of robot 'a'"):
        make_plans(BringupOptions.create(robots=path))
    path = _file(tmp_path, [{"namespace": "a", "description": ARM, "colour": "red"}])
    with pytest.raises(BringupConfigError, match=r"robots\.yaml.*unknown keys"):
        make_plans(BringupOptions.create(robots=path))
