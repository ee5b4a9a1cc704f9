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


def test_an_mjcf_robot_with_a_free_base_is_refused_naming_its_file(tmp_path):
    free = tmp_path / "free.xml"
    free.write_text('<mujoco><worldbody><body name="base"><freejoint/><geom size="0.1"/>'
                    '<body name="arm"><joint name="j" axis="0 0 1"/><geom size="0.05" pos="0.1 0 0"/></body>'
                    '</body></worldbody></mujoco>')
    members = read_robots_file(_file(tmp_path, [{"namespace": "a", "description": ARM},
                                                {"namespace": "b", "description": str(free)}]))
    with pytest.raises(RobotModelError, match="free base") as info:
        merge_robots(members, load_robot)
    assert str(free) in str(info.value)


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
