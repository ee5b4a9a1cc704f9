"""Controller manager core: lifecycle rules, refusals, switch strictness, failure handling, listings."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from robot_core.control import ControlError, ControllerManagerCore, State, Strictness
from robot_core.control.controller_base import Controller, ReturnType
from robot_core.control.generic_system import GenericSystem
from robot_core.control.hardware import ComponentJointInfo, HardwareInfo, InterfaceInfo
from robot_core.control.lifecycle import Transition, next_state, path_to
from robot_core.control.registry import ControllerRegistry

JOINTS = ["j1", "j2", "j3"]


def hw_info(name: str = "arm", joints=JOINTS, cmds=("position", "velocity"), states=("position", "velocity"),
            initial=(0.1, 0.2, 0.3)) -> HardwareInfo:
    return HardwareInfo(name, "system", "mock_components/GenericSystem", {}, [
        ComponentJointInfo(j, [InterfaceInfo(c) for c in cmds],
                           [InterfaceInfo(s, initial[k] if s == "position" else None) for s in states])
        for k, j in enumerate(joints)])


class Exploding(Controller):
    """Claims j3/position and raises in update once ``armed``."""

    type_name = "test/Exploding"

    def on_init(self) -> None:
        self.armed = False
        self.mode = self.params.str("mode", "raise")

    def command_interface_configuration(self) -> list[str]:
        return ["j3/position"]

    def update(self, time: float, period: float):
        self.command_interfaces.set([5.0])
        if self.armed:
            if self.mode == "raise":
                raise RuntimeError("boom")
            return ReturnType.ERROR
        return ReturnType.OK


class Counting(Controller):
    """Counts updates and records periods (for the update-rate scheduler)."""

    type_name = "test/Counting"

    def on_init(self) -> None:
        self.periods: list[float] = []

    def update(self, time: float, period: float) -> None:
        self.periods.append(period)


class RefusesActivation(Controller):
    type_name = "test/RefusesActivation"

    def command_interface_configuration(self) -> list[str]:
        return ["j2/velocity"]

    def on_activate(self) -> None:
        raise ControlError("not today")


@pytest.fixture
def cm() -> ControllerManagerCore:
    reg = ControllerRegistry()
    for cls in (Exploding, Counting, RefusesActivation):
        reg.register(cls.type_name, cls)
    events = []
    m = ControllerManagerCore(update_rate=100, registry=reg, on_activity=events.append)
    m.add_hardware_component(GenericSystem(hw_info()))
    m.events = events  # type: ignore[attr-defined]
    return m


def fwd(cm: ControllerManagerCore, name: str, joints: list[str], iface: str = "position") -> None:
    cm.load_controller(name, "forward_command_controller/ForwardCommandController",
                       {"joints": joints, "interface_name": iface})
    cm.configure_controller(name)


def state_of(cm: ControllerManagerCore, name: str) -> State:
    return {c.name: c.state for c in cm.list_controllers()}[name]


# --------------------------------------------------------------------------- lifecycle module
def test_lifecycle_table_and_messages():
    assert next_state("Controller", "c", State.UNCONFIGURED, Transition.CONFIGURE) == State.INACTIVE
    assert next_state("Controller", "c", State.INACTIVE, Transition.ACTIVATE) == State.ACTIVE
    assert next_state("Controller", "c", State.ACTIVE, Transition.DEACTIVATE) == State.INACTIVE
    assert next_state("Controller", "c", State.INACTIVE, Transition.CLEANUP) == State.UNCONFIGURED
    with pytest.raises(ControlError, match=re.escape("Controller 'c' can not be cleaned-up from 'active' state.")):
        next_state("Controller", "c", State.ACTIVE, Transition.CLEANUP)
    with pytest.raises(ControlError, match="can not be activated from 'unconfigured' state"):
        next_state("Controller", "c", State.UNCONFIGURED, Transition.ACTIVATE)
    assert path_to(State.UNCONFIGURED, State.ACTIVE) == [Transition.CONFIGURE, Transition.ACTIVATE]
    assert path_to(State.ACTIVE, State.UNCONFIGURED) == [Transition.DEACTIVATE, Transition.CLEANUP]
    assert path_to(State.INACTIVE, State.FINALIZED) == [Transition.SHUTDOWN]
    assert [s.id for s in (State.UNCONFIGURED, State.INACTIVE, State.ACTIVE, State.FINALIZED)] == [1, 2, 3, 4]
    assert State.parse(3) is State.ACTIVE and State.parse("Inactive") is State.INACTIVE


# --------------------------------------------------------------------------- refusals
def test_load_configure_activate_deactivate_cleanup_unload(cm):
    fwd(cm, "fp", ["j1", "j2"])
    assert state_of(cm, "fp") == State.INACTIVE
    assert cm.switch_controller(["fp"], [], Strictness.STRICT).ok
    assert state_of(cm, "fp") == State.ACTIVE
    assert cm.rm.claimed_by("j1/position") == "fp"
    assert cm.switch_controller([], ["fp"], Strictness.STRICT).ok
    assert cm.rm.claimed_by("j1/position") is None
    cm.cleanup_controller("fp")
    assert state_of(cm, "fp") == State.UNCONFIGURED
    cm.unload_controller("fp")
    assert cm.controller_names() == []
    labels = [[s.label for _, s in a.controllers] for a in cm.events]
    assert ["inactive"] in labels and ["active"] in labels and labels[-1] == []


def test_double_load_refused(cm):
    fwd(cm, "fp", ["j1"])
    with pytest.raises(ControlError, match="A controller named 'fp' was already loaded inside the controller manager"):
        cm.load_controller("fp", "position_controllers/JointGroupPositionController", {"joints": ["j1"]})


def test_unknown_type_and_missing_type(cm):
    with pytest.raises(ControlError, match=r"Loader for controller 'x' \(type 'nope/Nope'\) not found"):
        cm.load_controller("x", "nope/Nope")
    with pytest.raises(ControlError, match=re.escape("The 'type' param was not defined for 'y'.")):
        cm.load_controller("y")
    cm.declare_controller("y", "position_controllers/JointGroupPositionController", {"joints": ["j1"]})
    assert cm.load_controller("y").joints == ["j1"]


def test_unload_while_active_refused(cm):
    fwd(cm, "fp", ["j1"])
    cm.switch_controller(["fp"])
    with pytest.raises(ControlError, match="Could not unload controller with name 'fp' because it is still active"):
        cm.unload_controller("fp")
    assert state_of(cm, "fp") == State.ACTIVE


def test_cleanup_and_configure_from_active_refused(cm):
    fwd(cm, "fp", ["j1"])
    cm.switch_controller(["fp"])
    with pytest.raises(ControlError, match=re.escape("Controller 'fp' can not be cleaned-up from 'active' state.")):
        cm.cleanup_controller("fp")
    with pytest.raises(ControlError, match=re.escape("Controller 'fp' can not be configured from 'active' state.")):
        cm.configure_controller("fp")
    with pytest.raises(ControlError, match="because no controller with this name exists"):
        cm.configure_controller("ghost")


def test_interface_conflict_refused_and_nothing_changes(cm):
    fwd(cm, "a", ["j1", "j2"])
    fwd(cm, "b", ["j2", "j3"])
    assert cm.switch_controller(["a"]).ok
    res = cm.switch_controller(["b"], [], Strictness.STRICT)
    assert not res.ok
    assert "command interface 'j2/position' is currently claimed by another controller" in res.message
    assert state_of(cm, "b") == State.INACTIVE and cm.rm.claimed_by("j2/position") == "a"
    # two controllers wanting the same interface in one switch
    cm.switch_controller([], ["a"])
    res = cm.switch_controller(["a", "b"], [], Strictness.STRICT)
    assert not res.ok and "will be used by another controller that is being activated" in res.message
    assert state_of(cm, "a") == State.INACTIVE
    # swapping in one switch is fine: deactivations free interfaces first
    assert cm.switch_controller(["a"]).ok
    res = cm.switch_controller(["b"], ["a"], Strictness.STRICT)
    assert res.ok, res.message
    assert cm.rm.claimed_by("j2/position") == "b"


def test_strict_aborts_everything_best_effort_does_what_it_can(cm):
    fwd(cm, "a", ["j1"])
    fwd(cm, "b", ["j2"])
    cm.load_controller("unconf", "position_controllers/JointGroupPositionController", {"joints": ["j3"]})
    res = cm.switch_controller(["a", "ghost", "b"], [], Strictness.STRICT)
    assert not res.ok and "no controller with this name exists" in res.message
    assert state_of(cm, "a") == State.INACTIVE and state_of(cm, "b") == State.INACTIVE
    res = cm.switch_controller(["a", "unconf"], [], Strictness.STRICT)
    assert not res.ok and "is in 'unconfigured' state" in res.message
    assert state_of(cm, "a") == State.INACTIVE
    res = cm.switch_controller(["a", "ghost", "unconf", "b"], [], Strictness.BEST_EFFORT)
    assert res.ok and res.activated == ["a", "b"]
    assert "ghost" in res.message and "unconf" in res.message
    # already active: STRICT refuses, BEST_EFFORT ignores
    assert not cm.switch_controller(["a"], [], Strictness.STRICT).ok
    res = cm.switch_controller(["a"], [], Strictness.BEST_EFFORT)
    assert res.ok and "no controllers need to be activated or deactivated" in res.message
    # deactivating an inactive one
    assert not cm.switch_controller([], ["unconf"], Strictness.STRICT).ok
    # only unknown names: an error even for BEST_EFFORT (as upstream)
    res = cm.switch_controller(["ghost"], ["ghost2"], Strictness.BEST_EFFORT)
    assert not res.ok and "ghost2" in res.message


@pytest.mark.parametrize("strictness", [Strictness.AUTO, Strictness.FORCE_AUTO, 0])
def test_auto_modes_behave_as_best_effort(cm, strictness):
    fwd(cm, "a", ["j1"])
    res = cm.switch_controller(["a", "ghost"], [], strictness)
    assert res.ok and res.activated == ["a"]


def test_an_interface_conflict_refuses_the_switch_whatever_the_strictness(cm):
    """As upstream: BEST_EFFORT skips unknown or wrongly-stated controllers, but a command interface conflict
    refuses the whole switch with ok=false (ros2 control set_controller_state relies on that)."""
    fwd(cm, "a", ["j1"])
    fwd(cm, "b", ["j1"])
    fwd(cm, "c", ["j2"])
    res = cm.switch_controller(["a", "b", "c"], [], Strictness.BEST_EFFORT)
    assert not res.ok and res.activated == [] and "'b'" in res.message
    assert "will be used by another controller that is being activated" in res.message
    res = cm.switch_controller(["a", "c", "ghost"], [], Strictness.BEST_EFFORT)
    assert res.ok and res.activated == ["a", "c"]
    assert res.message.splitlines()[:2] == ["Successfully switched controllers!", "Activated controllers: [ a c ]"]
    res = cm.switch_controller(["b"], [], Strictness.BEST_EFFORT)
    assert not res.ok and "currently claimed by another controller" in res.message
    res = cm.switch_controller(["b"], ["a"], Strictness.STRICT)
    assert res.ok and res.message == "Successfully switched controllers!"


def test_activation_hook_failure_releases_interfaces(cm):
    cm.load_controller("r", "test/RefusesActivation")
    cm.configure_controller("r")
    res = cm.switch_controller(["r"], [], Strictness.STRICT)
    assert not res.ok and "not today" in res.message
    assert state_of(cm, "r") == State.INACTIVE and cm.rm.claimed_by("j2/velocity") is None


def test_failing_controller_is_deactivated_others_continue(cm):
    fwd(cm, "a", ["j1"])
    cm.load_controller("boom", "test/Exploding")
    cm.configure_controller("boom")
    cm.load_controller("count", "test/Counting")
    cm.configure_controller("count")
    assert cm.switch_controller(["a", "boom", "count"]).ok
    cm.controller("a").set_command([0.7])
    cm.update(0.0, 0.01)
    assert cm.rm.read_state("j3/position") == 5.0
    cm.controller("boom").armed = True
    n_events = len(cm.events)
    cm.update(0.01, 0.01)
    assert state_of(cm, "boom") == State.INACTIVE
    assert cm.rm.claimed_by("j3/position") is None
    assert len(cm.events) == n_events + 1
    # the failed controller's command holds the measured position (5.0 mirrored by the mock), not its last write
    cm.update(0.02, 0.01)
    cm.update(0.03, 0.01)
    assert state_of(cm, "a") == State.ACTIVE and state_of(cm, "count") == State.ACTIVE
    assert len(cm.controller("count").periods) == 4
    assert cm.rm.read_state("j1/position") == pytest.approx(0.7)
    # ERROR return value has the same effect
    cm.controller("boom").mode = "error"
    assert cm.switch_controller(["boom"]).ok
    cm.update(0.04, 0.01)
    assert state_of(cm, "boom") == State.INACTIVE


def test_hold_values_on_deactivation(cm):
    fwd(cm, "vel", ["j1", "j2"], "velocity")
    cm.switch_controller(["vel"])
    cm.controller("vel").set_command([1.0, -1.0])
    cm.update(0.0, 0.01)
    assert cm.rm.read_command("j1/velocity") == 1.0
    cm.switch_controller([], ["vel"])
    assert cm.rm.read_command("j1/velocity") == 0.0 and cm.rm.read_command("j2/velocity") == 0.0
    # the hold is written once more, then the interface is "not commanded"
    idx = cm.rm.command_interface_names().index("j1/velocity")
    assert cm.rm.command_active[idx]
    cm.update(0.01, 0.01)
    assert not cm.rm.command_active[idx]


def test_update_rate_scheduling(cm):
    cm.load_controller("slow", "test/Counting", {"update_rate": 25})
    cm.configure_controller("slow")
    cm.load_controller("fast", "test/Counting")
    cm.configure_controller("fast")
    cm.switch_controller(["slow", "fast"])
    for k in range(100):  # one second at 100 Hz
        cm.update(k * 0.01, 0.01)
    slow, fast = cm.controller("slow"), cm.controller("fast")
    assert len(fast.periods) == 100
    assert len(slow.periods) == 25
    assert np.allclose(slow.periods[1:], 0.04)
    cm.load_controller("too_fast", "test/Counting", {"update_rate": 1000})
    with pytest.raises(ControlError, match="higher than the controller manager's update rate"):
        cm.configure_controller("too_fast")


def test_listings(cm):
    fwd(cm, "a", ["j1", "j2"])
    cm.load_controller("jsb", "joint_state_broadcaster/JointStateBroadcaster")
    cm.configure_controller("jsb")
    cm.switch_controller(["a", "jsb"])
    info = {c.name: c for c in cm.list_controllers()}
    assert info["a"].claimed_interfaces == ["j1/position", "j2/position"]
    assert info["a"].required_command_interfaces == ["j1/position", "j2/position"]
    assert info["a"].type == "forward_command_controller/ForwardCommandController"
    assert info["jsb"].required_state_interfaces == [f"{j}/{i}" for j in JOINTS for i in ("position", "velocity")]
    types, bases = cm.list_controller_types()
    assert "joint_trajectory_controller/JointTrajectoryController" in types
    assert set(bases) == {"controller_interface::ControllerInterface"}
    cmd, st = cm.list_hardware_interfaces()
    claimed = {i.name for i in cmd if i.is_claimed}
    assert claimed == {"j1/position", "j2/position"}
    assert all(i.is_available for i in st)
    (comp,) = cm.list_hardware_components()
    assert comp.name == "arm" and comp.state == State.ACTIVE and comp.plugin_name == "mock_components/GenericSystem"
    assert len(comp.command_interfaces) == 6 and len(comp.state_interfaces) == 6


def test_hardware_component_state_changes_stop_users(cm):
    fwd(cm, "a", ["j1"])
    cm.load_controller("jsb", "joint_state_broadcaster/JointStateBroadcaster")
    cm.configure_controller("jsb")
    cm.switch_controller(["a", "jsb"])
    assert cm.set_hardware_component_state("arm", State.INACTIVE) == State.INACTIVE
    assert state_of(cm, "a") == State.INACTIVE and state_of(cm, "jsb") == State.ACTIVE
    res = cm.switch_controller(["a"], [], Strictness.STRICT)
    assert not res.ok and "is not available" in res.message
    assert cm.set_hardware_component_state("arm", "unconfigured") == State.UNCONFIGURED
    assert state_of(cm, "jsb") == State.INACTIVE
    assert cm.set_hardware_component_state("arm", 3) == State.ACTIVE
    assert cm.switch_controller(["a", "jsb"]).ok
    with pytest.raises(ControlError, match="does not exist"):
        cm.set_hardware_component_state("nope", State.ACTIVE)
    hw_labels = [dict(a.hardware_components)["arm"].label for a in cm.events]
    assert "inactive" in hw_labels and "unconfigured" in hw_labels


def test_reload_libraries_requires_force_only_for_active_controllers(cm):
    fwd(cm, "a", ["j1"])
    fwd(cm, "b", ["j2"])
    cm.switch_controller(["a"])
    with pytest.raises(ControlError, match="still 1 active controllers"):
        cm.reload_controller_libraries(False)
    cm.switch_controller([], ["a"])
    cm.reload_controller_libraries(False)  # inactive controllers are unloaded, as upstream
    assert cm.controller_names() == []
    fwd(cm, "a", ["j1"])
    cm.switch_controller(["a"])
    cm.reload_controller_libraries(True)
    assert cm.controller_names() == []
    assert cm.rm.claimed_by("j1/position") is None


def test_reconfigure_from_inactive_cleans_up_first(cm):
    fwd(cm, "a", ["j1"])
    cm.configure_controller("a")  # inactive -> cleanup -> configure
    assert state_of(cm, "a") == State.INACTIVE


def test_controller_parameter_errors_name_controller(cm):
    cm.load_controller("bad", "forward_command_controller/ForwardCommandController", {"joints": ["j1"]})
    with pytest.raises(ControlError, match=r"Controller 'bad' failed to configure.*interface_name"):
        cm.configure_controller("bad")
    with pytest.raises(ControlError, match="controller 'bad2': parameter 'joints' must be a list of strings"):
        cm.load_controller("bad2", "position_controllers/JointGroupPositionController", {"joints": "j1"})


def test_shutdown_finalizes_everything(cm):
    fwd(cm, "a", ["j1"])
    cm.switch_controller(["a"])
    cm.shutdown()
    assert cm.controller_names() == []
    assert cm.components["arm"].state == State.FINALIZED
    assert math.isfinite(cm.rm.read_command("j1/position"))


def test_loop_stats_counts_overruns():
    from robot_core.control import LoopStats

    stats = LoopStats(period=0.001, window=4)
    for t in (0.0002, 0.0004, 0.0025, 0.0003, 0.0001):
        stats.record(t)
    assert stats.cycles == 5 and stats.overruns == 1 and stats.missed_cycles == 2
    assert stats.overrun_ratio == pytest.approx(0.2)
    assert stats.max_exec == 0.0025
    assert stats.mean() == pytest.approx((0.0004 + 0.0025 + 0.0003 + 0.0001) / 4)  # bounded window
    stats.reset()
    assert stats.cycles == 0 and stats.summary()["p99"] == 0.0


def test_from_robot_builds_components_from_ros2_control_blocks():
    from robot_core.model.robot_model import (
        Joint,
        Link,
        RobotModel,
        Ros2Control,
        Ros2ControlInterface,
        Ros2ControlJoint,
    )

    links = {n: Link(n) for n in ("base", "l1", "l2")}
    joints = {"a": Joint("a", "revolute", "base", "l1"), "b": Joint("b", "prismatic", "l1", "l2")}
    robot = RobotModel("r", links, joints)
    with pytest.raises(ControlError, match="has no <ros2_control> block"):
        ControllerManagerCore.from_robot(robot)
    # without a block, a plugin override gets a default block for every actuated joint
    cm = ControllerManagerCore.from_robot(robot, plugin_override="mock_components/GenericSystem")
    (comp,) = cm.list_hardware_components()
    assert comp.name == "r_system" and comp.plugin_name == "mock_components/GenericSystem"
    assert [i.name for i in comp.command_interfaces] == [f"{j}/{i}" for j in "ab"
                                                         for i in ("position", "velocity", "effort")]
    robot.ros2_control.append(Ros2Control("Sys", plugin="topic_based_ros2_control/TopicBasedSystem",
                                          hardware_params={"joint_states_topic": "/s"}, joints=[
        Ros2ControlJoint("a", [Ros2ControlInterface("position")], [Ros2ControlInterface("position", initial_value=0.4)])
    ]))
    cm = ControllerManagerCore.from_robot(robot, 200)
    comp = cm.component("Sys")
    assert comp.joint_states_topic == "/s" and comp.joint_commands_topic == "robot_joint_commands"
    assert comp.state == State.ACTIVE and cm.rm.read_state("a/position") == 0.4
    assert math.isnan(cm.rm.read_command("a/position"))
