"""The bringup plan (what launch files and `robot-core bringup` start) from the shipped YAML files, no ROS."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from ros_harness import REPO

from robot_core.bringup.plan import (
    BRINGUP_SECTION,
    BringupConfigError,
    BringupOptions,
    NodeSpec,
    SpawnStep,
    make_plan,
    node_parameters,
    spawn_plan,
)
from robot_core.control.config import load_config
from robot_core.model import load_robot

CONTROLLERS = REPO / "config" / "controllers.yaml"


def test_controllers_yaml_is_ros2_control_format_with_the_agreed_controllers():
    cfg = load_config(CONTROLLERS)
    types = {n: c.type for n, c in cfg.controllers.items()}
    assert types == {
        "joint_state_broadcaster": "joint_state_broadcaster/JointStateBroadcaster",
        "joint_trajectory_controller": "joint_trajectory_controller/JointTrajectoryController",
        "gripper_controller": "position_controllers/GripperActionController",
        "gripper_position_controller": "position_controllers/JointGroupPositionController",
        "forward_position_controller": "position_controllers/JointGroupPositionController",
        "forward_velocity_controller": "velocity_controllers/JointGroupVelocityController",
        "gravity_compensation": "robot_core/GravityCompensationController",
        "force_torque_sensor_broadcaster": "force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster",
        "imu_sensor_broadcaster": "imu_sensor_broadcaster/IMUSensorBroadcaster",
    }
    arm = [f"joint{i}" for i in range(1, 8)]
    jtc = cfg.controllers["joint_trajectory_controller"].params
    assert jtc["joints"] == arm and jtc["command_interfaces"] == ["position", "velocity"]
    c = jtc["constraints"]
    assert c["stopped_velocity_tolerance"] > 0 and c["goal_time"] > 0
    assert all(0 < c[j]["goal"] < c[j]["trajectory"] for j in arm)
    # The gripper: an action (control_msgs/GripperCommand on ~/gripper_cmd) on the finger, and the finger's
    # position as a topic for the RBC's q_ref var (inactive at start: both claim the finger).
    assert cfg.controllers["gripper_controller"].params["joint"] == "finger_left_joint"
    assert cfg.controllers["gripper_position_controller"].params["joints"] == ["finger_left_joint"]
    finger = load_robot(REPO / "urdf" / "rc_arm.urdf").joints["finger_left_joint"]
    assert {v.topic for n in finger.rbc for v in n.vars if v.type == "cmd"} == {"/gripper_position_controller/commands"}
    for name in ("forward_position_controller", "forward_velocity_controller", "gravity_compensation"):
        assert cfg.controllers[name].params["joints"] == arm
    # The sensor broadcasters read the example arm's ros2_control sensors.
    robot_sensors = {s.name for s in load_robot(REPO / "urdf" / "rc_arm.urdf").ros2_control[0].sensors}
    assert cfg.controllers["force_torque_sensor_broadcaster"].params["sensor_name"] in robot_sensors
    assert cfg.controllers["imu_sensor_broadcaster"].params["sensor_name"] in robot_sensors
    # Every controller's joints exist in the example arm and have the interface it commands.
    robot = load_robot(REPO / "urdf" / "rc_arm.urdf")
    block = {j.name: j for j in robot.ros2_control[0].joints}
    for name in ("joint_trajectory_controller", "gripper_position_controller", "forward_position_controller"):
        for j in cfg.controllers[name].params["joints"]:
            assert "position" in [i.name for i in block[j].command_interfaces], (name, j)


def test_spawn_plan_activates_five_and_leaves_four_inactive():
    steps = spawn_plan(CONTROLLERS)
    assert steps == [
        SpawnStep(("joint_state_broadcaster", "joint_trajectory_controller", "gripper_controller",
                   "force_torque_sensor_broadcaster", "imu_sensor_broadcaster"), False),
        SpawnStep(("forward_position_controller", "forward_velocity_controller", "gravity_compensation",
                   "gripper_position_controller"), True),
    ]
    assert "--inactive" in steps[1].arguments() and "--inactive" not in steps[0].arguments()
    args = steps[0].arguments(manager_timeout=42)
    assert args[args.index("--controller-manager-timeout") + 1] == "42"
    assert args[args.index("--service-call-timeout") + 1] == "42"  # one call may queue behind the other spawner's


def test_spawn_plan_without_bringup_section_activates_every_declared_controller(tmp_path):
    data = yaml.safe_load(CONTROLLERS.read_text())
    del data[BRINGUP_SECTION]
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(data))
    (step,) = spawn_plan(f)
    assert not step.inactive and len(step.controllers) == 9


def test_spawn_plan_names_an_undeclared_controller(tmp_path):
    data = yaml.safe_load(CONTROLLERS.read_text())
    data[BRINGUP_SECTION]["ros__parameters"]["inactive_controllers"].append("no_such_controller")
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(data))
    with pytest.raises(BringupConfigError, match=r"c\.yaml.*inactive_controllers.*no_such_controller"):
        spawn_plan(f)


def test_topic_mode_plan_runs_simulator_manager_and_rbc_on_the_same_robot_file():
    plan = make_plan(BringupOptions.create())
    assert [n.name for n in plan.nodes()] == ["simulator", "controller_manager", "rbc"]
    robot = str(REPO / "urdf" / "rc_arm.urdf")
    assert plan.simulator.parameters["urdf_path"] == robot
    assert plan.rbc.parameters["urdf_path"] == robot
    cm = plan.controller_manager
    assert cm.parameters["robot_description_file"] == robot
    assert cm.parameters["hardware_mode"] == "topic" and cm.parameters["use_sim_time"] is True
    assert cm.param_files == (CONTROLLERS,)
    assert plan.simulator.param_files == (REPO / "config" / "simulator.yaml",)
    assert plan.rbc.remappings == ()
    assert plan.active_controllers() == ["joint_state_broadcaster", "joint_trajectory_controller",
                                         "gripper_controller", "force_torque_sensor_broadcaster",
                                         "imu_sensor_broadcaster"]


def test_embedded_mode_moves_the_simulator_settings_into_the_controller_manager():
    plan = make_plan(BringupOptions.create(mode="embedded", rbc="false"))
    assert plan.simulator is None and plan.rbc is None
    sim = node_parameters(REPO / "config" / "simulator.yaml", "simulator")
    p = plan.controller_manager.parameters
    assert p["hardware_mode"] == "embedded"
    assert p["sim_timestep"] == sim["timestep"] and p["real_time_factor"] == sim["real_time_factor"]
    rbc = make_plan(BringupOptions.create(mode="embedded")).rbc
    assert rbc.remappings == (("/robot_joint_states", "/joint_states"),)
    # the manager publishes /robot_description itself unless a robot_state_publisher runs beside it
    assert "publish_robot_description" not in p
    plan.with_state_publisher()
    p2 = plan.controller_manager.parameters
    assert p2["publish_robot_description"] is False and {**p2, "publish_robot_description": None} == {
        **p, "publish_robot_description": None}


def test_embedded_mobile_robots_get_a_free_base_on_a_floor_with_their_start_pose_and_gains():
    """The simulator YAML of a mobile robot reaches the embedded manager: fixed_base, floor, the PR2's start pose
    and the diff drive's wheel gains (nested maps as dotted names: gains.<joint>.kv)."""
    diff = make_plan(BringupOptions.create(robot=REPO / "urdf" / "diff_drive.urdf", mode="embedded", rbc="false",
                                           simulator_config=REPO / "config" / "diff_drive_simulator.yaml"))
    p = diff.controller_manager.parameters
    assert p["fixed_base"] is False and p["floor"] is True
    assert p["gains.left_wheel_joint.kv"] == 10.0 and p["gains.right_wheel_joint.kv"] == 10.0
    pr2 = make_plan(BringupOptions.create(robot="pr2", mode="embedded", rbc="false")).controller_manager.parameters
    assert pr2["fixed_base"] is False and pr2["floor"] is True
    assert pr2["initial_positions.torso_lift_joint"] == 0.2 and pr2["initial_positions.r_shoulder_lift_joint"] == 1.1


def test_ros_arguments_keep_node_names_and_quote_values():
    spec = NodeSpec("x", "x", (Path("/a.yaml"),), {"flag": True, "rate": 2.0, "path": "/p q", "topic": "a:b",
                                                    "empty": "", "names": ["a", "b"]}, (("/s", "/t"),))
    args = spec.ros_arguments()
    assert args[0] == "--ros-args" and "__node:=x" not in " ".join(args)
    assert args[1:3] == ["--params-file", "/a.yaml"]
    pairs = [args[i + 1] for i, a in enumerate(args) if a == "-p"]
    assert pairs == ["flag:=true", "rate:=2.0", "path:=/p q", "topic:='a:b'", "empty:=''", "names:=[a, b]"]
    assert args[-2:] == ["-r", "/s:=/t"]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"mode": "gazebo"}, "mode must be one of topic, embedded"),
    ({"robot": "nowhere.urdf"}, "robot description 'nowhere.urdf' not found"),
    ({"controllers": "missing.yaml"}, "controllers YAML 'missing.yaml' not found"),
    ({"use_sim_time": "maybe"}, "use_sim_time must be true or false"),
])
def test_bad_options_are_named(kwargs, match):
    with pytest.raises(BringupConfigError, match=match):
        BringupOptions.create(**kwargs)


def test_simulator_and_rbc_yaml_only_set_parameters_the_nodes_know():
    from robot_core.nodes.node_params import NODE_PARAMS
    from robot_core.parameter_spec import spec_for

    for path, node in ((REPO / "config" / "simulator.yaml", "simulator"), (REPO / "config" / "rbc.yaml", "rbc")):
        params = node_parameters(path, node)
        assert params, path
        unknown = [k for k in params if spec_for(NODE_PARAMS[node], k) is None]
        assert not unknown, f"{path}: parameters not documented by the {node} node: {unknown}"


def test_an_mjcf_robot_goes_to_every_node_and_to_urdf_for_description_readers():
    from robot_core.bringup.plan import robot_urdf_text

    arm = REPO / "test" / "data" / "mjcf" / "two_link_arm.xml"
    plan = make_plan(BringupOptions.create(robot=arm, controllers=arm.parent / "mjcf_controllers.yaml"))
    assert plan.simulator.parameters["urdf_path"] == str(arm)
    assert plan.controller_manager.parameters["robot_description_file"] == str(arm)
    assert plan.active_controllers() == ["joint_state_broadcaster", "forward_position_controller"]
    urdf = robot_urdf_text(arm)  # robot_state_publisher beside an embedded manager reads URDF
    assert urdf.lstrip().startswith("<?xml") and load_robot(urdf).actuated_joint_names() == ["shoulder", "elbow"]
