"""Sensor state interfaces in the controller manager core and the four sensor broadcasters, ROS-free.

Embedded (robot_core/InProcessSimulator): the engine's sensors fill the block's sensor interfaces and the
force-torque, IMU, range and pose broadcasters emit what the simulated rig measures. Topic mode
(TopicBasedComponent): sensor messages fill the same interfaces, and a sensor stream gone quiet fails the
component (wall time), which recovers when it flows again. Bad parameters are refused naming them.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from robot_files import DATA_URDF

from robot_core.control import ControlError, ControllerManagerCore, State, Strictness
from robot_core.control.hardware import ComponentJointInfo, HardwareInfo, InterfaceInfo, create_component
from robot_core.model import load_robot
from robot_core.physics.world import load_world, scene_hook

RIG = DATA_URDF / "sensor_rig.urdf"
SIM = "robot_core/InProcessSimulator"
DT = 0.01
G = 9.81

BROADCASTERS = {
    "ft": ("force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster",
           {"sensor_name": "scale_ft", "frame_id": "plate"}),
    "imu": ("imu_sensor_broadcaster/IMUSensorBroadcaster",
            {"sensor_name": "base_imu", "frame_id": "base_link", "static_covariance_orientation": [0.01] * 9}),
    "range": ("range_sensor_broadcaster/RangeSensorBroadcaster",
              {"sensor_name": "mast_range", "frame_id": "mast", "radiation_type": 1, "min_range": 0.05,
               "max_range": 2.0}),
    "pose": ("pose_broadcaster/PoseBroadcaster", {"pose_name": "rotor_pose", "frame_id": "world",
                                                  "tf.publish_rate": 20.0}),
}


def _embedded(tmp_path: Path) -> ControllerManagerCore:
    world = tmp_path / "world.yaml"
    world.write_text("objects:\n  - {name: parcel, shape: box, size: [0.1, 0.1, 0.1], pose: {xyz: [0, 0, 0.121]}, "
                     "mass: 2.0}\n", encoding="utf-8")
    robot = load_robot(RIG)
    return ControllerManagerCore.from_robot(robot, 100.0, plugin_override=SIM, component_options={
        "timestep": 0.001, "engine_options": {"scene": scene_hook(load_world(world), robot.root_link)}})


def _start(cm: ControllerManagerCore, names: dict[str, tuple[str, dict]]) -> None:
    for name, (type_name, params) in names.items():
        cm.load_controller(name, type_name, params)
        cm.configure_controller(name)
    res = cm.switch_controller(list(names), [], Strictness.STRICT)
    assert res.ok, res.message


def _run(cm: ControllerManagerCore, cycles: int) -> None:
    sim = cm.simulator()
    for _ in range(cycles):
        cm.update(sim.sim_time if sim is not None else 0.0, DT)


def test_embedded_broadcasters_publish_what_the_rig_measures(tmp_path):
    cm = _embedded(tmp_path)
    _, states = cm.list_hardware_interfaces()
    names = {s.name for s in states}
    assert {"scale_ft/force.z", "base_imu/linear_acceleration.z", "mast_range/range",
            "rotor_pose/orientation.w"} <= names
    _start(cm, BROADCASTERS)
    _run(cm, 150)  # 1.5 s: the parcel settles on the scale
    wrench = cm.controller("ft").outputs["wrench"]
    imu = cm.controller("imu").outputs["imu"]
    rng = cm.controller("range").outputs["range"]
    pose = cm.controller("pose").outputs["pose"]
    print(f"wrench {wrench.force} {wrench.torque}; imu acc {imu.linear_acceleration}; range {rng.range:.4f}; "
          f"pose {pose.position} {pose.orientation}")
    assert wrench.frame_id == "plate" and wrench.force[2] == pytest.approx(-2.5 * G, rel=0.01)
    assert imu.frame_id == "base_link" and imu.linear_acceleration == pytest.approx([0, 0, G], abs=0.01 * G)
    assert imu.orientation == pytest.approx([0, 0, 0, 1], abs=1e-9) and imu.orientation_covariance == [0.01] * 9
    assert imu.angular_velocity_covariance == [0.0] * 9
    assert (rng.frame_id, rng.radiation_type, rng.min_range, rng.max_range) == ("mast", 1, 0.05, 2.0)
    assert rng.range == pytest.approx(0.6 - 0.17, abs=2e-3)
    assert pose.frame_id == "world" and pose.child_frame_id == "rotor_pose"
    assert pose.position == pytest.approx([0.3, 0.0, 0.1], abs=1e-6)
    assert wrench.stamp == pytest.approx(cm.simulator().sim_time, abs=DT + 1e-9)


def test_pose_transforms_are_limited_to_tf_publish_rate(tmp_path):
    cm = _embedded(tmp_path)
    _start(cm, {"pose": BROADCASTERS["pose"]})
    seen = []
    cm.controller("pose").output_sink = lambda key, data: seen.append(key)
    _run(cm, 100)  # 1 s at 100 Hz, transforms at 20 Hz
    print(f"1 s: {seen.count('pose')} poses, {seen.count('tf')} transforms")
    assert seen.count("pose") == 100 and seen.count("tf") == 20


def test_force_torque_interface_names_read_a_subset_and_leave_other_axes_nan(tmp_path):
    cm = _embedded(tmp_path)
    _start(cm, {"ft": ("force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster",
                       {"frame_id": "plate", "interface_names": {"force": {"z": "scale_ft/force.z"},
                                                                 "torque": {"x": "scale_ft/torque.x"}}})})
    _run(cm, 100)
    wrench = cm.controller("ft").outputs["wrench"]
    assert wrench.force[2] == pytest.approx(-2.5 * G, rel=0.01)
    assert math.isnan(wrench.force[0]) and math.isnan(wrench.force[1]) and math.isnan(wrench.torque[2])
    assert abs(wrench.torque[0]) < 1e-3


@pytest.mark.parametrize(("type_name", "params", "said"), [
    ("force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster",
     {"sensor_name": "scale_ft", "frame_id": "plate", "interface_names": {"force": {"x": "scale_ft/force.x"}}},
     "cannot be set together"),
    ("force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster", {"frame_id": "plate"}, "'sensor_name'"),
    ("imu_sensor_broadcaster/IMUSensorBroadcaster", {"sensor_name": "base_imu"}, "'frame_id' must not be empty"),
    ("imu_sensor_broadcaster/IMUSensorBroadcaster",
     {"sensor_name": "base_imu", "frame_id": "b", "static_covariance_orientation": [0.0] * 4}, "9 entries"),
    ("range_sensor_broadcaster/RangeSensorBroadcaster",
     {"sensor_name": "mast_range", "frame_id": "mast", "radiation_type": 3}, "radiation_type"),
    ("range_sensor_broadcaster/RangeSensorBroadcaster",
     {"sensor_name": "mast_range", "frame_id": "mast", "min_range": 2.0, "max_range": 1.0}, "max_range"),
    ("pose_broadcaster/PoseBroadcaster", {"frame_id": "world"}, "'pose_name'"),
])
def test_bad_broadcaster_parameters_are_refused_naming_them(tmp_path, type_name, params, said):
    cm = _embedded(tmp_path)
    with pytest.raises(ControlError) as err:
        cm.load_controller("b", type_name, params)
        cm.configure_controller("b")
    print(err.value)
    assert said in str(err.value) and "'b'" in str(err.value)


def test_a_sensor_the_hardware_lacks_fails_activation_naming_the_interface(tmp_path):
    cm = _embedded(tmp_path)
    cm.load_controller("imu", "imu_sensor_broadcaster/IMUSensorBroadcaster",
                       {"sensor_name": "wrist_imu", "frame_id": "hand"})
    cm.configure_controller("imu")
    res = cm.switch_controller(["imu"], [], Strictness.STRICT)
    print(res.message)
    assert not res.ok and "wrist_imu/orientation.x" in res.message


# ----------------------------------------------------------------------------- topic mode
def _topic_component(params: dict[str, str] | None = None):
    info = HardwareInfo("rig", "system", "topic_based_ros2_control/TopicBasedSystem",
                        {"state_timeout": "0.5", **(params or {})},
                        [ComponentJointInfo("spin", [InterfaceInfo("position")], [InterfaceInfo("position")])],
                        sensors=[ComponentJointInfo("ft", [], [InterfaceInfo(f"force.{a}") for a in "xyz"],
                                                    {"frame_id": "plate"}),
                                 ComponentJointInfo("range", [], [InterfaceInfo("range")])])
    comp = create_component(info)
    wall = [10.0]
    comp.monotonic = lambda: wall[0]
    cm = ControllerManagerCore(update_rate=100)
    cm.add_hardware_component(comp)
    return cm, comp, wall


def test_topic_sensor_messages_fill_the_sensor_interfaces():
    cm, comp, _ = _topic_component()
    assert comp.has_sensors and comp.sensor_states_topic == "robot_sensor_states"
    _, states = cm.list_hardware_interfaces()
    assert [s.name for s in states] == ["spin/position", "ft/force.x", "ft/force.y", "ft/force.z", "range/range"]
    matched = comp.on_sensor_state(["range", "ft", "other"], [["range"], ["force.z", "force.x", "torque.q"], ["a"]],
                                   [[math.inf], [-3.0, 1.5, 9.0], [1.0]], stamp=2.0)
    assert matched == 3
    cm.update(0.0, DT)
    rm = cm.rm
    assert rm.read_state("ft/force.z") == -3.0 and rm.read_state("ft/force.x") == 1.5
    assert rm.read_state("ft/force.y") == 0.0  # not sent: keeps its value
    assert rm.read_state("range/range") == math.inf  # REP 117: nothing in sight


def test_no_transform_goes_out_before_a_topic_pose_sensor_has_reported():
    """A topic-based pose sensor reads all zeros until its first message: the pose topic says so, but /tf must not
    get a transform with a zero quaternion (a CI run saw the pose at the origin on /tf before the first reading)."""
    pose_names = [f"position.{a}" for a in "xyz"] + [f"orientation.{a}" for a in "xyzw"]
    info = HardwareInfo("rig", "system", "topic_based_ros2_control/TopicBasedSystem", {"state_timeout": "0.5"},
                        [ComponentJointInfo("spin", [InterfaceInfo("position")], [InterfaceInfo("position")])],
                        sensors=[ComponentJointInfo("rotor", [], [InterfaceInfo(n) for n in pose_names])])
    comp = create_component(info)
    cm = ControllerManagerCore(update_rate=100)
    cm.add_hardware_component(comp)
    comp.on_joint_state(["spin"], [0.0])  # the joints' first state (a controller waits for it), no pose yet
    _start(cm, {"pose": ("pose_broadcaster/PoseBroadcaster", {"pose_name": "rotor", "frame_id": "world"})})
    seen: list[tuple[str, object]] = []
    pose = cm.controller("pose")
    pose.output_sink = lambda key, data: seen.append((key, data))
    for k in range(3):
        comp.on_joint_state(["spin"], [0.0])
        cm.update(k * DT, DT)
    assert [key for key, _ in seen] == ["pose"] * 3 and pose.invalid_transforms == 3
    comp.on_sensor_state(["rotor"], [pose_names], [[0.3, 0.0, 0.1, 0.0, 0.0, 0.0, 1.0]])
    comp.on_joint_state(["spin"], [0.0])
    cm.update(3 * DT, DT)
    assert [key for key, _ in seen[3:]] == ["pose", "tf"]
    assert seen[-1][1].position == pytest.approx([0.3, 0.0, 0.1])


def test_a_quiet_sensor_stream_fails_the_component_and_it_recovers():
    cm, comp, wall = _topic_component({"sensor_timeout": "0.2"})
    t = 0.0
    for _ in range(5):  # no sensor message yet: not a failure
        comp.on_joint_state(["spin"], [0.0])
        cm.update(t, DT)
        t += DT
        wall[0] += 0.1
    assert not comp.is_failed
    comp.on_sensor_state(["ft"], [["force.z"]], [[1.0]])
    for _ in range(5):  # joints keep flowing, sensors went quiet
        comp.on_joint_state(["spin"], [0.0])
        cm.update(t, DT)
        t += DT
        wall[0] += 0.1
    print(comp.failure_reason)
    assert comp.is_failed and "no sensor states on 'robot_sensor_states'" in comp.failure_reason
    assert "sensor_timeout 0.2 s" in comp.failure_reason
    comp.on_sensor_state(["ft"], [["force.z"]], [[2.0]])
    comp.on_joint_state(["spin"], [0.0])
    cm.update(t, DT)
    assert not comp.is_failed and cm.rm.read_state("ft/force.z") == 2.0


def test_sensor_timeout_defaults_to_state_timeout_and_zero_disables():
    _, comp, _ = _topic_component()
    assert comp.sensor_timeout == 0.5
    cm, comp, wall = _topic_component({"sensor_timeout": "0"})
    comp.on_sensor_state(["ft"], [["force.z"]], [[1.0]])
    for _ in range(5):
        comp.on_joint_state(["spin"], [0.0])
        cm.update(0.0, DT)
        wall[0] += 10.0
    assert not comp.is_failed
    assert np.isfinite(cm.rm.read_state("ft/force.z"))


def test_a_component_without_sensors_is_unchanged():
    info = HardwareInfo("bot", "system", "topic_based_ros2_control/TopicBasedSystem", {},
                        [ComponentJointInfo("a", [InterfaceInfo("position")], [InterfaceInfo("position")])])
    comp = create_component(info)
    cm = ControllerManagerCore(update_rate=100)
    cm.add_hardware_component(comp, State.ACTIVE)
    assert not comp.has_sensors
    assert comp.on_sensor_state(["ft"], [["force.z"]], [[1.0]]) == 0
