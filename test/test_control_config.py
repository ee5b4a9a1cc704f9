"""ros2_control YAML configuration parsing."""

from __future__ import annotations

import textwrap

import pytest

from robot_core.control import ControlError, ControllerManagerCore, load_config, parse_config_text
from robot_core.control.config import validate_config
from robot_core.control.generic_system import GenericSystem
from robot_core.control.hardware import ComponentJointInfo, HardwareInfo, InterfaceInfo

YAML = textwrap.dedent("""
    controller_manager:
      ros__parameters:
        update_rate: 500
        joint_state_broadcaster:
          type: joint_state_broadcaster/JointStateBroadcaster
        joint_trajectory_controller:
          type: joint_trajectory_controller/JointTrajectoryController
        forward_position_controller:
          type: position_controllers/JointGroupPositionController

    /**:
      ros__parameters:
        use_sim_time: true

    joint_trajectory_controller:
      ros__parameters:
        joints: [j1, j2]
        command_interfaces: [position]
        constraints:
          goal_time: 0.5
          j1: {goal: 0.01}
        gains.j1.p: 3.0

    /forward_position_controller:
      ros__parameters:
        joints:
          - j1
          - j2

    robot_state_publisher:
      ros__parameters:
        publish_frequency: 50.0
""")


def test_parse_shape_wildcards_and_dotted_keys():
    cfg = parse_config_text(YAML)
    assert cfg.update_rate == 500
    assert list(cfg.controllers) == ["joint_state_broadcaster", "joint_trajectory_controller",
                                     "forward_position_controller"]
    jtc = cfg.controller("joint_trajectory_controller")
    assert jtc.type == "joint_trajectory_controller/JointTrajectoryController"
    assert jtc.params["joints"] == ["j1", "j2"]
    assert jtc.params["constraints"] == {"goal_time": 0.5, "j1": {"goal": 0.01}}
    assert jtc.params["gains"] == {"j1": {"p": 3.0}}
    assert jtc.params["use_sim_time"] is True  # from /**
    assert cfg.controller("forward_position_controller").params["joints"] == ["j1", "j2"]
    assert cfg.controller("joint_state_broadcaster").params == {"use_sim_time": True}
    assert "robot_state_publisher" not in cfg.controllers
    assert validate_config(cfg) == []


def test_config_drives_the_manager():
    cfg = parse_config_text(YAML)
    cm = ControllerManagerCore(update_rate=100)
    cm.add_hardware_component(GenericSystem(HardwareInfo("hw", joints=[
        ComponentJointInfo(j, [InterfaceInfo("position")], [InterfaceInfo("position"), InterfaceInfo("velocity")])
        for j in ("j1", "j2")])))
    cm.apply_config(cfg)
    assert cm.update_rate == 500
    for name in cfg.controllers:
        cm.load_controller(name)
        cm.configure_controller(name)
    jtc = cm.controller("joint_trajectory_controller")
    assert jtc.default_tol.goal_time == 0.5 and jtc.default_tol.goal_pos.tolist() == [0.01, 0.0]
    assert jtc.pids[0].gains.p == 3.0
    assert cm.switch_controller(["joint_state_broadcaster", "joint_trajectory_controller"]).ok


def test_files_merge_and_errors_name_file_and_controller(tmp_path):
    a = tmp_path / "a.yaml"
    b = tmp_path / "b.yaml"
    a.write_text(YAML)
    b.write_text(textwrap.dedent("""
        controller_manager:
          ros__parameters:
            update_rate: 1000
            gravity_compensation:
              type: robot_core/GravityCompensationController
        joint_trajectory_controller:
          ros__parameters:
            joints: [j2]
        gravity_compensation:
          ros__parameters:
            joints: [j1]
    """))
    cfg = load_config([a, b])
    assert cfg.update_rate == 1000
    assert cfg.controller("joint_trajectory_controller").params["joints"] == ["j2"]
    assert cfg.controller("joint_trajectory_controller").params["command_interfaces"] == ["position"]
    assert cfg.controller("gravity_compensation").params["joints"] == ["j1"]
    assert cfg.sources == [str(a), str(b)]

    bad = tmp_path / "bad.yaml"
    bad.write_text("controller_manager:\n  ros__parameters:\n    jtc:\n      type: NoSlash\n")
    with pytest.raises(ControlError, match=r"bad\.yaml: controller 'jtc': type must look like '<package>/<Class>'"):
        load_config(bad)
    bad.write_text("controller_manager:\n  ros__parameters:\n    jtc:\n      params_file: x.yaml\n")
    with pytest.raises(ControlError, match=r"bad\.yaml: controller 'jtc': 'type' missing"):
        load_config(bad)
    bad.write_text("controller_manager:\n  ros__parameters:\n    update_rate: -5\n")
    with pytest.raises(ControlError, match=r"bad\.yaml: controller_manager: update_rate must be a positive number"):
        load_config(bad)
    bad.write_text("controller_manager: [1, 2\n")
    with pytest.raises(ControlError, match=r"bad\.yaml: invalid YAML"):
        load_config(bad)
    with pytest.raises(ControlError, match=r"missing\.yaml: cannot read"):
        load_config(tmp_path / "missing.yaml")
    bad.write_text("controller_manager:\n  ros__parameters:\n    x:\n      type: nope/Nope\n")
    (problem,) = validate_config(load_config(bad))
    assert "bad.yaml" in problem and "controller 'x'" in problem and "nope/Nope" in problem


def test_params_file_entry(tmp_path):
    (tmp_path / "jtc.yaml").write_text("jtc:\n  ros__parameters:\n    joints: [j9]\n")
    main = tmp_path / "main.yaml"
    main.write_text("controller_manager:\n  ros__parameters:\n    jtc:\n      type: a/B\n      params_file: jtc.yaml\n")
    assert load_config(main).controller("jtc").params["joints"] == ["j9"]


def test_namespaced_keys():
    text = textwrap.dedent("""
        /robot1/controller_manager:
          ros__parameters:
            update_rate: 200
            jtc: {type: a/B}
        /robot1/jtc:
          ros__parameters: {joints: [x]}
        /robot2/jtc:
          ros__parameters: {joints: [y]}
        /**/jtc:
          ros__parameters: {open_loop_control: true}
    """)
    cfg = parse_config_text(text, namespace="/robot1")
    assert cfg.update_rate == 200
    assert cfg.controller("jtc").params == {"joints": ["x"], "open_loop_control": True}
    assert parse_config_text(text, namespace="/robot2").controllers == {}
