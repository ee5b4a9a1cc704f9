"""Diff drive core: odometry on exact arcs and lines, the speed limiter, the controller's command handling
(stale, non-finite, limits) and its configure errors. ROS-free, no physics."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robot_core.control import ControlError, ControllerManagerCore, Strictness
from robot_core.control.controllers.diff_drive import DiffDriveController, OdomData
from robot_core.control.generic_system import GenericSystem
from robot_core.control.hardware import ComponentJointInfo, HardwareInfo, InterfaceInfo
from robot_core.control.odometry import DiffDriveGeometry, Odometry
from robot_core.control.speed_limiter import SpeedLimiter

GEOM = DiffDriveGeometry(separation=0.4, left_radius=0.1, right_radius=0.1)


# ----------------------------------------------------------------------------- odometry
def test_straight_line_from_positions():
    odo = Odometry(GEOM, window=1)
    odo.update_from_positions(0.0, 0.0, 0.01)
    for k in range(1, 101):  # 1 rad/s on both wheels of radius 0.1 for 1 s: 0.1 m
        odo.update_from_positions(k * 0.01, k * 0.01, 0.01)
    assert odo.x == pytest.approx(0.1, abs=1e-12)
    assert odo.y == pytest.approx(0.0, abs=1e-12) and odo.heading == pytest.approx(0.0, abs=1e-12)
    assert odo.linear == pytest.approx(0.1) and odo.angular == pytest.approx(0.0, abs=1e-12)


def test_arc_from_positions_is_exact_for_any_step_size():
    """Constant wheel speeds drive a circle: after a quarter turn the pose is on it, whatever the step count."""
    radius, turn = 1.0, math.pi / 2  # centre line on a 1 m circle, quarter turn
    left_travel, right_travel = turn * (radius - 0.2), turn * (radius + 0.2)
    for steps in (1, 7, 1000):
        odo = Odometry(GEOM)
        odo.update_from_positions(0.0, 0.0, 0.01)
        for k in range(1, steps + 1):
            odo.update_from_positions(left_travel / 0.1 * k / steps, right_travel / 0.1 * k / steps, 0.01)
        assert odo.heading == pytest.approx(turn, abs=1e-12)
        assert odo.x == pytest.approx(1.0, abs=1e-12) and odo.y == pytest.approx(1.0, abs=1e-12)


def test_turn_in_place_and_velocity_and_open_loop_sources_agree():
    a, b, c = Odometry(GEOM, 1), Odometry(GEOM, 1), Odometry(GEOM, 1)
    a.update_from_positions(0.0, 0.0, 0.01)
    wl, wr = GEOM.wheel_velocities(0.3, 0.8)
    for k in range(1, 201):
        a.update_from_positions(wl * 0.01 * k, wr * 0.01 * k, 0.01)
        b.update_from_velocities(wl, wr, 0.01)
        c.update_open_loop(0.3, 0.8, 0.01)
    for o in (b, c):
        assert (o.x, o.y, o.heading) == pytest.approx((a.x, a.y, a.heading), abs=1e-9)
    assert a.heading == pytest.approx(1.6) and a.linear == pytest.approx(0.3) and a.angular == pytest.approx(0.8)
    spin = Odometry(GEOM)
    spin.update_open_loop(0.0, math.pi, 1.0)
    assert (spin.x, spin.y, spin.heading) == pytest.approx((0.0, 0.0, math.pi), abs=1e-12)


def test_wheel_velocities_invert_body_motion():
    g = DiffDriveGeometry(0.5, 0.1, 0.12)
    wl, wr = g.wheel_velocities(0.4, -1.0)
    assert g.body_motion(wl * 0.1, wr * 0.12) == pytest.approx((0.4, -1.0))


# ----------------------------------------------------------------------------- limiter
def test_limiter_velocity_acceleration_and_reverse_cases():
    lim = SpeedLimiter(max_velocity=1.0, max_acceleration=2.0, max_deceleration=-4.0).resolved("linear.x")
    assert lim.min_velocity == -1.0 and lim.max_acceleration_reverse == -2.0 and lim.max_deceleration_reverse == 4.0
    assert lim.limit(5.0, 0.0, 0.0, 0.1) == pytest.approx(0.2)  # accelerating forwards: 2 m/s^2
    assert lim.limit(5.0, 0.95, 0.9, 0.1) == pytest.approx(1.0)  # velocity bound
    assert lim.limit(0.0, 1.0, 1.0, 0.1) == pytest.approx(0.6)  # braking forwards: 4 m/s^2
    assert lim.limit(-5.0, 0.0, 0.0, 0.1) == pytest.approx(-0.2)  # accelerating backwards
    assert lim.limit(0.0, -1.0, -1.0, 0.1) == pytest.approx(-0.6)  # braking backwards
    free = SpeedLimiter().resolved("angular.z")
    assert free.limit(123.0, 0.0, 0.0, 0.01) == 123.0


def test_limiter_jerk_and_sign_errors():
    lim = SpeedLimiter(max_jerk=10.0).resolved("linear.x")
    assert lim.limit(1.0, 0.0, 0.0, 0.1) == pytest.approx(0.1)  # da <= 10 * 0.01
    with pytest.raises(ControlError, match=r"linear.x.max_deceleration' = 1.0 must be < 0"):
        SpeedLimiter(max_deceleration=1.0).resolved("linear.x")
    with pytest.raises(ControlError, match="min_velocity"):
        SpeedLimiter(max_velocity=1.0, min_velocity=2.0).resolved("linear.x")


# ----------------------------------------------------------------------------- controller
PARAMS = {"left_wheel_names": ["l"], "right_wheel_names": ["r"], "wheel_separation": 0.4, "wheel_radius": 0.1,
          "cmd_vel_timeout": 0.5, "publish_rate": 10.0}


def make(params=None) -> tuple[DiffDriveController, ControllerManagerCore]:
    """The controller on mock hardware that integrates the wheels' velocity commands into their positions."""
    cm = ControllerManagerCore(None, update_rate=100)
    joints = [ComponentJointInfo(j, [InterfaceInfo("velocity")], [InterfaceInfo("position"), InterfaceInfo("velocity")])
              for j in ("l", "r")]
    cm.add_hardware_component(GenericSystem(HardwareInfo("hw", "system", "mock_components/GenericSystem",
                                                         {"calculate_dynamics": "true"}, joints)))
    cm.load_controller("dd", "diff_drive_controller/DiffDriveController", {**PARAMS, **(params or {})})
    cm.configure_controller("dd")
    res = cm.switch_controller(["dd"], [], Strictness.STRICT)
    assert res.ok, res.message
    return cm.controller("dd"), cm


def test_command_turns_wheels_and_stale_command_stops_them():
    c, _ = make()
    c.set_command(0.5, 1.0)
    c.update(1.0, 0.01)
    wl, wr = GEOM.wheel_velocities(0.5, 1.0)
    assert c.command_interfaces.get() == pytest.approx([wl, wr])
    c.update(1.49, 0.01)
    assert c.command_interfaces.get() == pytest.approx([wl, wr])
    c.update(1.51, 0.01)  # 0.51 s after the command (stamp = its arrival)
    assert c.command_interfaces.get() == pytest.approx([0.0, 0.0])
    c.set_command(0.5, 0.0, stamp=0.5)  # stamped 1.1 s ago: stale on arrival
    c.update(1.6, 0.01)
    assert c.command_interfaces.get() == pytest.approx([0.0, 0.0])


def test_non_finite_command_is_refused_and_the_last_valid_stays():
    c, _ = make()
    c.set_command(0.2, 0.0)
    c.update(0.0, 0.01)
    for bad in (math.nan, math.inf):
        with pytest.raises(ControlError, match="not finite"):
            c.set_command(bad, 0.0)
    c.update(0.01, 0.01)
    assert c.command_interfaces.get() == pytest.approx([2.0, 2.0])


def test_limits_shape_the_wheel_commands_and_deactivate_stops():
    c, _ = make({"linear.x.max_velocity": 0.3, "linear.x.max_acceleration": 1.0, "cmd_vel_timeout": 5.0})
    c.set_command(1.0, 0.0)
    c.update(0.0, 0.1)
    assert c.limited[0] == pytest.approx(0.1)
    for k in range(1, 10):
        c.update(0.1 * k, 0.1)
    assert c.limited[0] == pytest.approx(0.3)
    c.on_deactivate()
    assert c.command_interfaces.get() == pytest.approx([0.0, 0.0])


def test_odometry_from_state_interfaces_and_publish_rate():
    c, cm = make()
    out: list[OdomData] = []
    c.output_sink = lambda key, data: out.append(data) if key == "odom" else None
    for k in range(101):  # 0.5 m/s (wheels at 5 rad/s) for 1 s: 0.5 m (the first cycle commands, the next moves)
        c.set_command(0.5, 0.0)
        cm.update(0.01 * k, 0.01)
    assert len(out) == 11  # 10 Hz over 1 s, both ends
    assert out[-1].x == pytest.approx(0.5, abs=0.006) and out[-1].linear == pytest.approx(0.5)
    assert out[-1].odom_frame_id == "odom" and out[-1].base_frame_id == "base_link"


@pytest.mark.parametrize(("params", "match"), [
    ({"wheel_radius": 0.0}, "'wheel_radius' = 0.0 must be > 0"),
    ({"wheel_separation": 0.0}, "'wheel_separation' = 0.0 must be > 0"),
    ({"left_wheel_names": []}, "left_wheel_names"),
    ({"right_wheel_names": ["r", "r2"]}, r"left wheels \(1\) and right wheels \(2\)"),
    ({"angular.z.max_acceleration": -1.0}, "angular.z.max_acceleration"),
])
def test_configure_errors_name_the_parameter(params, match):
    c = DiffDriveController("dd", {**PARAMS, **params})
    with pytest.raises(ControlError, match=match):
        c.on_configure()


def test_negative_radius_is_refused_when_read():
    with pytest.raises(ControlError, match="wheel_radius"):
        DiffDriveController("dd", {**PARAMS, "wheel_radius": -0.1})


def test_wheel_not_in_robot_is_named():
    from robot_core.model.robot_model import Joint, RobotModel

    robot = RobotModel(name="bot", joints={"l": Joint(name="l", type="continuous", parent="a", child="b")})
    c = DiffDriveController("dd", PARAMS, robot=robot)
    with pytest.raises(ControlError, match="'right_wheel_names': joint 'r' is not a joint of robot 'bot'"):
        c.on_configure()
    assert np.isfinite(c.wheel_radius)
