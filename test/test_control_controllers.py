"""joint_state_broadcaster and the forward-command controllers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robot_core.control import ControlError, ControllerManagerCore, Strictness
from robot_core.control.generic_system import GenericSystem
from robot_core.control.hardware import ComponentJointInfo, HardwareInfo, InterfaceInfo
from robot_core.model.robot_model import Joint, Link, RobotModel


def robot_model() -> RobotModel:
    """URDF order: shoulder, elbow, wrist (the hardware lists them differently)."""
    links = {n: Link(n) for n in ("base", "l1", "l2", "l3")}
    joints = {
        "shoulder": Joint("shoulder", "revolute", "base", "l1"),
        "elbow": Joint("elbow", "revolute", "l1", "l2"),
        "wrist": Joint("wrist", "revolute", "l2", "l3"),
    }
    return RobotModel("r", links, joints)


def make_cm(robot: RobotModel | None = None) -> ControllerManagerCore:
    cm = ControllerManagerCore(robot, update_rate=100)
    joints = [
        ComponentJointInfo("wrist", [InterfaceInfo("position"), InterfaceInfo("velocity"), InterfaceInfo("effort")],
                           [InterfaceInfo("position", 0.3), InterfaceInfo("velocity")]),
        ComponentJointInfo("shoulder", [InterfaceInfo("position"), InterfaceInfo("velocity")],
                           [InterfaceInfo("position", 0.1), InterfaceInfo("velocity"), InterfaceInfo("effort")]),
        ComponentJointInfo("elbow", [InterfaceInfo("position"), InterfaceInfo("velocity")],
                           [InterfaceInfo("position", 0.2), InterfaceInfo("temperature", 40.0)]),
    ]
    sensor = ComponentJointInfo("ft", [], [InterfaceInfo("force.z", 9.0)])
    cm.add_hardware_component(GenericSystem(HardwareInfo("hw", "system", "mock_components/GenericSystem", {},
                                                         joints, sensors=[sensor])))
    return cm


def activate(cm, name, type_name, params=None):
    cm.load_controller(name, type_name, params or {})
    cm.configure_controller(name)
    res = cm.switch_controller([name], [], Strictness.STRICT)
    assert res.ok, res.message
    return cm.controller(name)


def test_joint_state_broadcaster_urdf_order_and_nan_for_missing_fields():
    cm = make_cm(robot_model())
    jsb = activate(cm, "jsb", "joint_state_broadcaster/JointStateBroadcaster")
    got = {}
    jsb.output_sink = got.__setitem__
    cm.update(1.5, 0.01)
    js = got["joint_states"]
    assert js.name == ["shoulder", "elbow", "wrist"]  # URDF order, sensor filtered out
    assert js.position.tolist() == [0.1, 0.2, 0.3]
    assert js.velocity[0] == 0.0 and math.isnan(js.velocity[1]) and js.velocity[2] == 0.0
    assert js.effort[0] == 0.0 and math.isnan(js.effort[1]) and math.isnan(js.effort[2])
    assert js.stamp == 1.5
    dyn = got["dynamic_joint_states"]
    assert dyn.joint_names == ["shoulder", "elbow", "wrist", "ft"]
    assert dyn.interface_values[1].interface_names == ["position", "temperature"]
    assert dyn.interface_values[1].values == [0.2, 40.0]
    assert dyn.interface_values[3].interface_names == ["force.z"] and dyn.interface_values[3].values == [9.0]


def test_joint_state_broadcaster_explicit_joints_interfaces_and_mapping():
    cm = make_cm(None)
    jsb = activate(cm, "jsb", "joint_state_broadcaster/JointStateBroadcaster", {
        "joints": ["elbow", "wrist"], "interfaces": ["position"], "extra_joints": ["gripper"],
        "map_interface_to_joint_state": {"effort": "temperature"}})
    assert cm.list_controllers()[0].required_state_interfaces == ["elbow/position", "wrist/position"]
    cm.update(0.0, 0.01)
    js = jsb.outputs["joint_states"]
    assert js.name == ["elbow", "wrist", "gripper"]  # no robot: hardware order
    assert js.position.tolist() == [0.2, 0.3, 0.0]
    # with only position read, effort cannot come from temperature
    assert math.isnan(js.effort[0]) and js.effort[2] == 0.0


def test_forward_command_validation_and_application():
    cm = make_cm()
    ctrl = activate(cm, "fp", "position_controllers/JointGroupPositionController", {"joints": ["shoulder", "elbow"]})
    cm.update(0.0, 0.01)
    # activation holds the measured position instead of a stale/NaN command
    assert cm.rm.read_command("shoulder/position") == 0.1 and cm.rm.read_command("elbow/position") == 0.2
    with pytest.raises(ControlError, match=r"command size \(3\) does not match number of interfaces \(2\)"):
        ctrl.set_command([1.0, 2.0, 3.0])
    with pytest.raises(ControlError, match="'elbow/position' is not finite"):
        ctrl.set_command([1.0, float("nan")])
    cm.update(0.01, 0.01)
    assert cm.rm.read_command("shoulder/position") == 0.1  # rejected commands changed nothing
    ctrl.set_command([0.5, -0.5])
    cm.update(0.02, 0.01)
    assert cm.rm.read_command("shoulder/position") == 0.5 and cm.rm.read_state("elbow/position") == -0.5
    generic = activate(cm, "fe", "forward_command_controller/ForwardCommandController",
                       {"joints": ["wrist"], "interface_name": "effort"})
    generic.set_command([2.5])
    cm.update(0.03, 0.01)
    assert cm.rm.read_command("wrist/effort") == 2.5


@pytest.mark.parametrize("type_name,iface", [("velocity_controllers/JointGroupVelocityController", "velocity"),
                                             ("effort_controllers/JointGroupEffortController", "effort"),
                                             ("position_controllers/JointGroupPositionController", "position")])
def test_command_timeout(type_name, iface):
    cm = make_cm()
    ctrl = activate(cm, "f", type_name, {"joints": ["wrist"], "command_timeout": 0.1})
    t = 0.0
    ctrl.set_command([0.7])
    for _ in range(5):
        cm.update(t, 0.01)
        t += 0.01
    assert cm.rm.read_command(f"wrist/{iface}") == 0.7 and not ctrl.timed_out
    for _ in range(12):
        cm.update(t, 0.01)
        t += 0.01
    assert ctrl.timed_out
    expected = 0.7 if iface == "position" else 0.0  # position holds, velocity/effort stop
    assert cm.rm.read_command(f"wrist/{iface}") == expected
    ctrl.set_command([0.2])
    cm.update(t, 0.01)
    assert cm.rm.read_command(f"wrist/{iface}") == 0.2 and not ctrl.timed_out


def test_no_timeout_by_default_and_zero_start_for_velocity():
    cm = make_cm()
    ctrl = activate(cm, "v", "velocity_controllers/JointGroupVelocityController", {"joints": ["shoulder"]})
    cm.update(0.0, 0.01)
    assert cm.rm.read_command("shoulder/velocity") == 0.0
    ctrl.set_command([1.0])
    for k in range(1, 500):
        cm.update(k * 0.01, 0.01)
    assert cm.rm.read_command("shoulder/velocity") == 1.0
    with pytest.raises(ControlError, match="command_timeout' must be >= 0"):
        cm.load_controller("bad", "velocity_controllers/JointGroupVelocityController",
                           {"joints": ["shoulder"], "command_timeout": -1.0})
    assert np.isfinite(cm.rm.read_state("shoulder/position"))
