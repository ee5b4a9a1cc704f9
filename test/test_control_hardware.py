"""Hardware components: topic-based protocol logic, transmissions, the generic mirror, failure handling."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robot_core.control import ControlError, ControllerManagerCore, State, Strictness
from robot_core.control.hardware import ComponentJointInfo, HardwareInfo, InterfaceInfo, create_component
from robot_core.control.interfaces import ResourceManager
from robot_core.control.lifecycle import Transition
from robot_core.control.topic_based import TopicBasedComponent
from robot_core.control.transmissions import SimpleTransmission, TransmissionSet


def topic_info(params=None, joints=("a", "b", "c"), cmds=("position", "velocity"),
               states=("position", "velocity", "effort"), joint_params=None, transmissions=None) -> HardwareInfo:
    return HardwareInfo("bot", "system", "topic_based_ros2_control/TopicBasedSystem",
                        {"trigger_joint_command_threshold": "-1", **(params or {})},
                        [ComponentJointInfo(j, [InterfaceInfo(c) for c in cmds],
                                            [InterfaceInfo(s, 0.5 if s == "position" else None) for s in states],
                                            dict((joint_params or {}).get(j, {}))) for j in joints],
                        transmissions=transmissions or TransmissionSet())


def make(info: HardwareInfo) -> tuple[TopicBasedComponent, ResourceManager]:
    comp = create_component(info)
    rm = ResourceManager()
    rm.add_component(comp)
    comp.set_state(State.ACTIVE)
    return comp, rm


def test_states_matched_by_name_subset_and_nonfinite_skipped():
    comp, rm = make(topic_info())
    assert rm.read_state("a/position") == 0.5  # initial_value until the first message
    comp.on_joint_state(["zzz", "c", "a"], [9.0, 3.0, 1.0], [0.0, 30.0, float("nan")], [])
    comp.read(0.0, 0.01)
    assert rm.read_state("a/position") == 1.0 and rm.read_state("c/position") == 3.0
    assert rm.read_state("b/position") == 0.5
    assert rm.read_state("c/velocity") == 30.0 and rm.read_state("a/velocity") == 0.0
    # two messages before one read merge; NaN in the later one does not erase the earlier value
    comp.on_joint_state(["b"], [2.0])
    comp.on_joint_state(["b", "a"], [float("inf"), 1.5], [], [7.0, 8.0])
    comp.read(0.01, 0.01)
    assert rm.read_state("b/position") == 2.0 and rm.read_state("a/position") == 1.5
    assert rm.read_state("a/effort") == 8.0 and rm.read_state("b/effort") == 7.0


def test_sum_wrapped_joint_states():
    comp, rm = make(topic_info({"sum_wrapped_joint_states": "true"}))
    comp.on_joint_state(["a"], [3.0])
    comp.read(0.0, 0.01)
    comp.on_joint_state(["a"], [-3.0])  # wrapped: really 3.0 + (2 pi - 6.0)
    comp.read(0.01, 0.01)
    assert rm.read_state("a/position") == pytest.approx(2 * math.pi - 3.0)
    comp.on_joint_state(["a"], [-3.0 + 0.5])
    comp.read(0.02, 0.01)
    assert rm.read_state("a/position") == pytest.approx(2 * math.pi - 2.5)


def test_mimic_joint_params():
    comp, rm = make(topic_info(joint_params={"c": {"mimic": "a", "multiplier": "-2"}}))
    comp.on_joint_state(["a"], [0.25], [1.0])
    comp.read(0.0, 0.01)
    assert rm.read_state("c/position") == -0.5 and rm.read_state("c/velocity") == -2.0
    rm.claim("x", ["a/position"]).set([0.1])
    (msg,) = comp.build_commands(0.0)
    assert msg.name == ["a", "c"] and len(msg.velocity) == 0
    assert msg.position[0] == 0.1 and msg.position[1] == pytest.approx(-0.2)  # the mimic joint follows
    with pytest.raises(ControlError, match="mimics unknown joint"):
        make(topic_info(joint_params={"c": {"mimic": "nope"}}))


def test_command_messages_carry_only_commanded_joints():
    info = topic_info(joints=("a", "b"))
    info.joints.append(ComponentJointInfo("g", [InterfaceInfo("position")], [InterfaceInfo("position")]))
    comp, rm = make(info)
    sent = []
    comp.command_sink = sent.append
    comp.write(0.0, 0.01)
    assert sent == []  # nobody commands yet: nothing on the wire, the robot keeps its last command
    group = rm.claim("ctrl", ["b/velocity", "g/position"])
    group.set([0.3, 0.02])
    comp.write(0.01, 0.01)
    # one message per group of joints commanded through the same fields; only those joints and arrays
    pos = next(m for m in sent if m.name == ["g"])
    vel = next(m for m in sent if m.name == ["b"])
    assert len(sent) == 2
    assert pos.name == ["g"] and list(pos.position) == [0.02] and len(pos.velocity) == len(pos.effort) == 0
    assert vel.name == ["b"] and list(vel.velocity) == [0.3] and len(vel.position) == len(vel.effort) == 0
    assert all(np.all(np.isfinite(m.position)) and np.all(np.isfinite(m.velocity)) for m in sent)
    assert pos.stamp == vel.stamp == 0.01


def test_position_and_velocity_of_a_joint_go_in_one_message():
    """A JTC with position and velocity command interfaces: the receiver must see both together (position
    servo with velocity feed-forward), not a velocity-only message that switches the joint's mode."""
    comp, rm = make(topic_info(joints=("a", "b")))
    sent = []
    comp.command_sink = sent.append
    rm.claim("jtc", ["a/position", "a/velocity", "b/position", "b/velocity"]).set([0.1, 0.5, 0.2, -0.5])
    comp.write(0.0, 0.01)
    (msg,) = sent
    assert msg.name == ["a", "b"] and list(msg.position) == [0.1, 0.2] and list(msg.velocity) == [0.5, -0.5]
    assert len(msg.effort) == 0


def test_trigger_threshold():
    comp, rm = make(topic_info({"trigger_joint_command_threshold": "0.01"}, joints=("a",), cmds=("position",)))
    sent = []
    comp.command_sink = sent.append
    group = rm.claim("c", ["a/position"])
    comp.on_joint_state(["a"], [1.0])
    comp.read(0.0, 0.01)
    group.set([1.005])
    comp.write(0.0, 0.01)
    assert sent == []  # |1.0 - 1.005| <= 0.01
    group.set([1.05])
    comp.write(0.01, 0.01)
    assert len(sent) == 1 and sent[0].position[0] == 1.05


def test_trigger_threshold_never_mutes_velocity_or_effort_commands():
    comp, rm = make(topic_info({"trigger_joint_command_threshold": "1e-5"}, joints=("a",), cmds=("velocity",)))
    sent = []
    comp.command_sink = sent.append
    rm.claim("c", ["a/velocity"]).set([0.7])
    comp.write(0.0, 0.01)
    assert len(sent) == 1 and list(sent[0].velocity) == [0.7]
    # a position joint held exactly at its command beside an effort joint: the effort still goes out
    comp, rm = make(topic_info({"trigger_joint_command_threshold": "1e-5"}, joints=("a", "b"),
                               cmds=("position", "effort")))
    sent = []
    comp.command_sink = sent.append
    comp.on_joint_state(["a", "b"], [0.2, 0.0])
    comp.read(0.0, 0.01)
    rm.claim("p", ["a/position"]).set([0.2])
    rm.claim("e", ["b/effort"]).set([3.0])
    comp.write(0.0, 0.01)
    assert [list(m.effort) for m in sent if len(m.effort)] == [[3.0]]


def test_use_initial_states_as_initial_commands():
    comp, rm = make(topic_info({"use_initial_states_as_initial_commands": "true"}, joints=("a",)))
    sent = []
    comp.command_sink = sent.append
    comp.read(0.0, 0.01)
    comp.write(0.0, 0.01)
    assert sent == []
    comp.on_joint_state(["a"], [0.8], [0.1])
    comp.read(0.01, 0.01)
    assert rm.read_command("a/position") == 0.8 and rm.read_command("a/velocity") == 0.1


def test_transmissions_convert_actuator_space():
    trans = TransmissionSet([SimpleTransmission("a", "a_motor", 10.0, 0.1)])
    comp, rm = make(topic_info({"use_transmissions": "true"}, joints=("a", "b"), transmissions=trans))
    comp.on_joint_state(["a_motor", "b"], [11.0, 2.0], [5.0, 1.0], [3.0, 4.0])
    comp.read(0.0, 0.01)
    assert rm.read_state("a/position") == pytest.approx(11.0 / 10.0 + 0.1)
    assert rm.read_state("a/velocity") == pytest.approx(0.5) and rm.read_state("a/effort") == pytest.approx(30.0)
    assert rm.read_state("b/position") == 2.0
    rm.claim("c", ["a/position", "a/velocity"]).set([0.6, 0.2])
    (msg,) = comp.build_commands(0.0)  # position and velocity of one joint travel together
    assert msg.name == ["a_motor"]
    assert msg.position[0] == pytest.approx((0.6 - 0.1) * 10.0) and msg.velocity[0] == pytest.approx(2.0)
    t = SimpleTransmission("j", "m", 4.0)
    p, v, e = t.joint_to_actuator(1.0, 2.0, 8.0)
    assert (p, v, e) == (4.0, 8.0, 2.0)
    assert t.actuator_to_joint(p, v, e) == (1.0, 2.0, 8.0)
    assert v * e == pytest.approx(2.0 * 8.0)  # power is preserved
    with pytest.raises(ControlError, match="mechanical reduction"):
        SimpleTransmission("j", "m", 0.0)


def test_stale_states_fail_component_and_stop_commanding_controllers():
    comp = create_component(topic_info({"state_timeout": "0.05"}))
    wall = [100.0]  # staleness is judged on wall time: a fake one here
    comp.monotonic = lambda: wall[0]
    cm = ControllerManagerCore(update_rate=100)
    cm.add_hardware_component(comp)
    cm.load_controller("fv", "velocity_controllers/JointGroupVelocityController", {"joints": ["a", "b"]})
    cm.load_controller("jsb", "joint_state_broadcaster/JointStateBroadcaster")
    for n in ("fv", "jsb"):
        cm.configure_controller(n)
    sent = []
    comp.command_sink = sent.append
    t = 0.0
    # no state yet: not a failure, however long the robot takes to appear
    for _ in range(20):
        cm.update(t, 0.01)
        t += 0.01
    assert not comp.is_failed
    comp.on_joint_state(["a", "b", "c"], [0.0, 0.0, 0.0])
    assert cm.switch_controller(["fv", "jsb"], [], Strictness.STRICT).ok
    cm.controller("fv").set_command([0.4, -0.4])
    for _ in range(3):
        comp.on_joint_state(["a", "b", "c"], [0.0, 0.0, 0.0])
        cm.update(t, 0.01)
        t += 0.01
    assert sent[-1].name == ["a", "b"] and np.allclose(sent[-1].velocity, [0.4, -0.4])
    # the robot goes silent
    for _ in range(10):
        cm.update(t, 0.01)
        t += 0.01
        wall[0] += 0.01
    assert comp.is_failed and "no joint states" in comp.failure_reason
    states = {c.name: c.state for c in cm.list_controllers()}
    assert states["fv"] == State.INACTIVE and states["jsb"] == State.ACTIVE
    # the stop command went out once, then nothing more is commanded
    zero_msgs = [m for m in sent if m.name == ["a", "b"] and np.allclose(m.velocity, 0.0)]
    assert zero_msgs, "a zero-velocity hold must be published when the controller is stopped"
    assert sent[-1] is zero_msgs[-1]
    res = cm.switch_controller(["fv"], [], Strictness.STRICT)
    assert not res.ok and "not available" in res.message
    (hc,) = cm.list_hardware_components()
    assert hc.failed and hc.state == State.INACTIVE, "a failed component goes inactive, as upstream"
    # states come back: the component recovers, is active again, and controllers can be activated again
    comp.on_joint_state(["a"], [0.0])
    cm.update(t, 0.01)
    assert not comp.is_failed
    assert cm.list_hardware_components()[0].state == State.ACTIVE
    assert {c.name: c.state for c in cm.list_controllers()}["fv"] == State.INACTIVE, "not restarted by itself"
    assert cm.switch_controller(["fv"], [], Strictness.STRICT).ok


def test_generic_system_mirrors_commands():
    info = HardwareInfo("m", "system", "mock_components/GenericSystem", {"calculate_dynamics": "true"}, [
        ComponentJointInfo("p", [InterfaceInfo("position")], [InterfaceInfo("position"), InterfaceInfo("velocity")]),
        ComponentJointInfo("v", [InterfaceInfo("velocity")], [InterfaceInfo("position"), InterfaceInfo("velocity")]),
    ])
    comp = create_component(info)
    rm = ResourceManager()
    rm.add_component(comp)
    comp.set_state(State.ACTIVE)
    rm.claim("c", ["p/position", "v/velocity"]).set([0.2, 2.0])
    comp.write(0.0, 0.1)
    assert rm.read_state("p/position") == pytest.approx(0.2) and rm.read_state("p/velocity") == pytest.approx(2.0)
    assert rm.read_state("v/position") == pytest.approx(0.2) and rm.read_state("v/velocity") == pytest.approx(2.0)


def test_component_lifecycle_and_plugins():
    comp = create_component(topic_info())
    assert comp.state == State.UNCONFIGURED
    with pytest.raises(ControlError, match="can not be activated from 'unconfigured' state"):
        comp.transition(Transition.ACTIVATE)
    assert comp.set_state("active") == State.ACTIVE
    assert comp.set_state(State.UNCONFIGURED) == State.UNCONFIGURED
    with pytest.raises(ControlError, match="hardware plugin 'nope/Nope' is not available"):
        create_component(HardwareInfo("x", plugin="nope/Nope"))
    rm = ResourceManager()
    rm.add_component(create_component(topic_info()))
    with pytest.raises(ControlError, match="already registered"):
        rm.add_component(create_component(topic_info()))
