"""Namespaces and frame prefixes without ROS: the bringup plan under --namespace, the parameter files moved under
it, the robot's tf frame names. The DDS side (two robots side by side) is test_namespaces_dds.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import yaml
from ros_harness import REPO

from robot_core.bringup.plan import (
    BringupConfigError,
    BringupOptions,
    describe_plan,
    make_plan,
    namespaced_parameters,
    normalize_namespace,
    with_namespaced_parameter_files,
)
from robot_core.bringup.run import help_calls
from robot_core.physics.frame_prefix import FramePrefix, frame_prefix_for_namespace


@pytest.mark.parametrize("given, expected", [("arm1", "/arm1"), ("/arm1/", "/arm1"), ("lab/arm_2", "/lab/arm_2"),
                                             ("", ""), ("/", ""), (None, "")])
def test_namespaces_are_normalised(given, expected):
    assert normalize_namespace(given) == expected


@pytest.mark.parametrize("bad", ["1arm", "arm-1", "a//b", "arm 1", "ä"])
def test_a_namespace_ros_would_refuse_is_named(bad):
    with pytest.raises(BringupConfigError, match="namespace"):
        normalize_namespace(bad)


def test_topic_mode_under_a_namespace_puts_every_node_there_and_prefixes_frames():
    plan = make_plan(BringupOptions.create(namespace="arm1"))
    sim, cm, rbc = plan.simulator, plan.controller_manager, plan.rbc
    assert sim is not None and rbc is not None
    # the RBC's <rbc> tags name absolute topics: each is remapped into the namespace
    assert ("/robot_joint_states", "/arm1/robot_joint_states") in rbc.remappings
    assert ("/forward_position_controller/commands", "/arm1/forward_position_controller/commands") in rbc.remappings
    assert rbc.namespace == "/arm1" and ("/clock", "/arm1/clock") in rbc.remappings
    assert rbc.parameters["frame_prefix"] == "arm1/"  # its contact frames and wrenches as the robot's tf names them
    for spec in (sim, cm):
        args = spec.ros_arguments()
        assert args[:3] == ["--ros-args", "-r", "__ns:=/arm1"]
        assert spec.remappings == (("/clock", "/arm1/clock"),)
    assert sim.parameters["frame_prefix"] == "arm1/"
    assert "frame_prefix" not in cm.parameters  # topic mode: the simulator publishes the robot's tf
    assert plan.options.manager == "/arm1/controller_manager"
    assert "--controller-manager /arm1/controller_manager" in describe_plan(plan)
    assert plan.options.name("joint_states") == "/arm1/joint_states"
    assert plan.options.name("/tf") == "/tf"


def test_embedded_mode_under_a_namespace_gives_the_manager_the_frame_prefix():
    plan = make_plan(BringupOptions.create(namespace="/lab/arm2", mode="embedded"))
    assert plan.simulator is None
    cm = plan.controller_manager
    assert cm.parameters["frame_prefix"] == "lab/arm2/" and cm.namespace == "/lab/arm2"
    assert cm.remappings == (("/clock", "/lab/arm2/clock"),)
    # embedded: nobody publishes the raw states, the RBC reads the broadcaster's, in the namespace
    assert plan.rbc.remappings[0] == ("/robot_joint_states", "/lab/arm2/joint_states")


def test_without_a_namespace_nothing_changes():
    plan = make_plan(BringupOptions.create())
    assert plan.rbc is not None and plan.options.clock_topic == "/clock"
    for spec in plan.nodes():
        assert spec.namespace == "" and "__ns" not in " ".join(spec.ros_arguments())
        assert "frame_prefix" not in spec.parameters
    assert plan.options.manager == "/controller_manager"


def test_parameter_files_are_moved_under_the_namespace(tmp_path):
    data = {"controller_manager": {"ros__parameters": {"update_rate": 100}},
            "/**": {"ros__parameters": {"use_sim_time": True}}, "/abs/node": {"ros__parameters": {}}}
    moved = namespaced_parameters(data, "/arm1")
    assert list(moved) == ["/arm1/controller_manager", "/**", "/abs/node"]
    plan = with_namespaced_parameter_files(make_plan(BringupOptions.create(namespace="arm1")), tmp_path)
    (cm_file,) = plan.controller_manager.param_files
    assert cm_file.parent == tmp_path
    written = yaml.safe_load(cm_file.read_text())
    original = yaml.safe_load((REPO / "config" / "controllers.yaml").read_text())
    assert written["/arm1/controller_manager"] == original["controller_manager"]
    assert written["/arm1/joint_trajectory_controller"] == original["joint_trajectory_controller"]
    (sim_file,) = plan.simulator.param_files
    assert list(yaml.safe_load(sim_file.read_text())) == ["/arm1/simulator"]
    unchanged = make_plan(BringupOptions.create())
    assert with_namespaced_parameter_files(unchanged, tmp_path) is unchanged


def test_the_printed_calls_name_the_namespace():
    text = help_calls("/arm1", rbc=False)
    assert "-c /arm1/controller_manager" in text and "/arm1/joint_trajectory_controller/follow" in text
    assert " /joint_states" not in text and "/rbc/" not in text
    assert "/arm1/rbc/l2_ctrl" in help_calls("/arm1", rbc=True)
    assert "/arm1/gripper_controller/gripper_cmd control_msgs/action/GripperCommand" in text
    without = help_calls("", gripper=False)
    assert "gripper" not in without and "/joint_trajectory_controller/follow" in without and "/rbc/" in without


def test_frame_prefix_keeps_the_shared_frames():
    fp = FramePrefix("arm1/", {"world", "box"})
    assert fp("base_link") == "arm1/base_link" and fp("world") == "world" and fp("box") == "box"
    assert fp.edges([("world", "base_link"), ("base_link", "link1")]) == [("world", "arm1/base_link"),
                                                                         ("arm1/base_link", "arm1/link1")]
    tf = SimpleNamespace(header=SimpleNamespace(frame_id="link1"), child_frame_id="cam_optical_frame")
    fp.apply([tf])
    assert (tf.header.frame_id, tf.child_frame_id) == ("arm1/link1", "arm1/cam_optical_frame")
    assert FramePrefix("")("base_link") == "base_link" and not FramePrefix("")
    assert frame_prefix_for_namespace("/lab/arm1") == "lab/arm1/" and frame_prefix_for_namespace("") == ""


@pytest.mark.parametrize("bad", ["/arm1/", "arm 1/"])
def test_a_frame_prefix_tf2_would_refuse_names_the_parameter(bad):
    with pytest.raises(ValueError, match="frame_prefix"):
        FramePrefix(bad)


def test_absolute_names_under_a_namespace_get_a_warning_naming_them():
    from robot_core.ros.namespaces import absolute_names_warning

    names = {"joint_states_topic": "/robot_joint_states", "joint_commands_topic": "robot_joint_commands"}
    text = absolute_names_warning("/arm1", names, "hardware component 'RcArmSystem'")
    assert text is not None and text.startswith("hardware component 'RcArmSystem': joint_states_topic "
                                                "'/robot_joint_states' absolute, so outside the namespace /arm1")
    assert "joint_commands_topic" not in text and "'robot_joint_states'" in text
    assert absolute_names_warning("/", names, "x") is None  # the root namespace: nothing to say
    assert absolute_names_warning("/arm1", {"a": "/arm1/robot_joint_states", "b": "/clock"}, "x") is None
