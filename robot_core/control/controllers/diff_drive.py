"""diff_drive_controller/DiffDriveController: a body twist in, wheel velocities out, odometry back.

Parameters and semantics follow ros2_controllers' diff_drive_controller as of Kilted: ``~/cmd_vel`` is
geometry_msgs/TwistStamped only (no ``use_stamped_vel``), limits are NaN (unset) unless given (no
``has_*_limits``). The table is :attr:`DiffDriveController.PARAMS`, rendered in doc/controllers/diff_drive.md.

The node calls :meth:`DiffDriveController.set_command` with each message's linear.x, angular.z and stamp. Each
update: a command older than ``cmd_vel_timeout`` (counted from its stamp; stamp 0 = when it arrived) becomes
zero; the speed limiters (control/speed_limiter.py) shape it; odometry (control/odometry.py) advances from the
wheels' position or velocity feedback, or from the command with ``open_loop``; at ``publish_rate`` it is
emitted as ``odom`` (and ``tf`` with ``enable_odom_tf``); the wheels get their velocities. A non-finite command
raises ControlError and is not taken (the previous one stays, and goes stale as any other). Deactivation stops the
wheels.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

from robot_core.control.controller_base import UPDATE_RATE, Controller
from robot_core.control.odometry import DiffDriveGeometry, Odometry
from robot_core.control.speed_limiter import LIMIT_NAMES, SpeedLimiter
from robot_core.parameter_spec import ParamSpec as P

_LIMIT_TEXT = {
    "max_velocity": ("largest velocity", ""),
    "min_velocity": ("smallest (most negative) velocity; unset: -max_velocity", ""),
    "max_acceleration": ("largest acceleration when speeding up forwards (> 0)", "/s"),
    "max_deceleration": ("deceleration bound when slowing down forwards (< 0); unset: -max_acceleration", "/s"),
    "max_acceleration_reverse": ("acceleration bound when speeding up backwards (< 0); unset: -max_acceleration",
                                 "/s"),
    "max_deceleration_reverse": ("deceleration bound when slowing down backwards (> 0); unset: -max_deceleration",
                                 "/s"),
    "max_jerk": ("largest jerk (> 0)", "/s^2"),
    "min_jerk": ("smallest jerk (< 0); unset: -max_jerk", "/s^2"),
}


def _limit_specs(axis: str, unit: str) -> tuple[P, ...]:
    return tuple(P(f"{axis}.{name}", "double", None, f"{text}; unset = no limit", optional=True,
                   unit=f"{unit}{per}")
                 for name, (text, per) in _LIMIT_TEXT.items())


PARAMS = (
    UPDATE_RATE,
    P("left_wheel_names", "string[]", [], "joints of the left wheels (velocity command interfaces); all of a side "
      "get the same command and odometry averages them; must not be empty"),
    P("right_wheel_names", "string[]", [], "joints of the right wheels, as many as left_wheel_names"),
    P("wheel_separation", "double", 0.0, "distance between the left and right wheels' contact points (must be > 0 "
      "at configure)", minimum=0.0, unit="m"),
    P("wheel_radius", "double", 0.0, "wheel radius (must be > 0 at configure)", minimum=0.0, unit="m"),
    P("wheel_separation_multiplier", "double", 1.0, "correction factor of wheel_separation", minimum=0.0,
      exclusive_min=True),
    P("left_wheel_radius_multiplier", "double", 1.0, "correction factor of wheel_radius for the left wheels",
      minimum=0.0, exclusive_min=True),
    P("right_wheel_radius_multiplier", "double", 1.0, "correction factor of wheel_radius for the right wheels",
      minimum=0.0, exclusive_min=True),
    P("odom_frame_id", "string", "odom", "frame of the odometry (parent of base_frame_id)"),
    P("base_frame_id", "string", "base_link", "the robot's base frame (child of odom_frame_id)"),
    P("pose_covariance_diagonal", "double[]", [0.0] * 6, "diagonal of ~/odom's pose covariance (x y z roll pitch "
      "yaw), 6 values"),
    P("twist_covariance_diagonal", "double[]", [0.0] * 6, "diagonal of ~/odom's twist covariance, 6 values"),
    P("open_loop", "bool", False, "odometry from the (limited) commands instead of wheel feedback"),
    P("position_feedback", "bool", True, "odometry from the wheels' position state interfaces (false: velocity)"),
    P("enable_odom_tf", "bool", True, "publish odom_frame_id -> base_frame_id on /tf"),
    P("cmd_vel_timeout", "double", 0.5, "a command older than this (from its stamp) stops the wheels",
      minimum=0.0, unit="s"),
    P("publish_rate", "double", 50.0, "rate of ~/odom and /tf (at most the update rate)", minimum=0.0,
      exclusive_min=True, unit="Hz"),
    P("velocity_rolling_window_size", "int", 10, "number of updates the odometry's velocity is averaged over",
      minimum=1),
    P("publish_limited_velocity", "bool", False, "publish the command after the limits on ~/cmd_vel_out"),
    *_limit_specs("linear.x", "m/s"),
    *_limit_specs("angular.z", "rad/s"),
)


@dataclass(frozen=True)
class OdomData:
    """One odometry sample as ~/odom and /tf carry it."""

    stamp: float
    odom_frame_id: str
    base_frame_id: str
    x: float
    y: float
    heading: float
    linear: float
    angular: float
    pose_covariance_diagonal: tuple[float, ...]
    twist_covariance_diagonal: tuple[float, ...]


@dataclass(frozen=True)
class TwistData:
    """A limited body command (~/cmd_vel_out)."""

    stamp: float
    frame_id: str
    linear: float
    angular: float


class DiffDriveController(Controller):
    type_name = "diff_drive_controller/DiffDriveController"
    PARAMS = PARAMS

    def on_init(self) -> None:
        self._lock = threading.Lock()
        self._pending: tuple[float, float, float | None] | None = None
        self._read_params()

    def _read_params(self) -> None:
        p = self.params
        self.left_wheels = p.str_list("left_wheel_names", [])
        self.right_wheels = p.str_list("right_wheel_names", [])
        self.wheel_separation = p.float("wheel_separation", 0.0)
        self.wheel_radius = p.float("wheel_radius", 0.0)
        self.separation_multiplier = p.float("wheel_separation_multiplier", 1.0)
        self.left_radius_multiplier = p.float("left_wheel_radius_multiplier", 1.0)
        self.right_radius_multiplier = p.float("right_wheel_radius_multiplier", 1.0)
        self.odom_frame_id = p.str("odom_frame_id", "odom")
        self.base_frame_id = p.str("base_frame_id", "base_link")
        self.pose_covariance = tuple(p.float_list("pose_covariance_diagonal", [0.0] * 6, length=6))
        self.twist_covariance = tuple(p.float_list("twist_covariance_diagonal", [0.0] * 6, length=6))
        self.open_loop = p.bool("open_loop", False)
        self.position_feedback = p.bool("position_feedback", True)
        self.enable_odom_tf = p.bool("enable_odom_tf", True)
        self.cmd_vel_timeout = p.float("cmd_vel_timeout", 0.5, min_value=0.0)
        self.publish_rate = p.float("publish_rate", 50.0)
        self.window = p.int("velocity_rolling_window_size", 10, min_value=1)
        self.publish_limited_velocity = p.bool("publish_limited_velocity", False)
        self.limits = {axis: SpeedLimiter(**{n: p.float(f"{axis}.{n}") if p.has(f"{axis}.{n}") else math.nan
                                             for n in LIMIT_NAMES})
                       for axis in ("linear.x", "angular.z")}

    def on_configure(self) -> None:
        self._read_params()
        if not self.left_wheels or not self.right_wheels:
            raise self.error("parameters 'left_wheel_names' and 'right_wheel_names' must both name at least one "
                             f"wheel joint (got {self.left_wheels} and {self.right_wheels})")
        if len(self.left_wheels) != len(self.right_wheels):
            raise self.error(f"the number of left wheels ({len(self.left_wheels)}) and right wheels "
                             f"({len(self.right_wheels)}) differ")
        for name in ("wheel_separation", "wheel_radius"):
            value = getattr(self, name)
            if not value > 0.0:
                raise self.error(f"parameter '{name}' = {value} must be > 0")
        if self.robot is not None:
            for param, names in (("left_wheel_names", self.left_wheels), ("right_wheel_names", self.right_wheels)):
                for j in names:
                    if j not in self.robot.joints:
                        raise self.error(f"parameter '{param}': joint '{j}' is not a joint of robot "
                                         f"'{self.robot.name}'")
        shared = set(self.left_wheels) & set(self.right_wheels)
        if shared:
            raise self.error(f"joints {sorted(shared)} are in both left_wheel_names and right_wheel_names")
        try:
            self.resolved = {axis: lim.resolved(axis) for axis, lim in self.limits.items()}
        except Exception as exc:
            raise self.error(str(exc)) from None
        self.geometry = DiffDriveGeometry(self.wheel_separation * self.separation_multiplier,
                                          self.wheel_radius * self.left_radius_multiplier,
                                          self.wheel_radius * self.right_radius_multiplier)
        self.odometry = Odometry(self.geometry, self.window)

    # ------------------------------------------------------------------ interfaces
    @property
    def wheels(self) -> list[str]:
        return self.left_wheels + self.right_wheels

    def command_interface_configuration(self) -> list[str]:
        return [f"{w}/velocity" for w in self.wheels]

    def state_interface_configuration(self) -> list[str]:
        field = "position" if self.position_feedback else "velocity"
        return [f"{w}/{field}" for w in self.wheels]

    # ------------------------------------------------------------------ lifecycle
    def on_activate(self) -> None:
        with self._lock:
            self._pending = None
        self._command: tuple[float, float, float] | None = None  # (linear, angular, stamp)
        self._previous = [(0.0, 0.0), (0.0, 0.0)]  # last two limited commands (newest first)
        self._last_publish: float | None = None
        self.odometry.reset()
        self.limited = (0.0, 0.0)
        self._stop_wheels()

    def on_deactivate(self) -> None:
        self._stop_wheels()

    def _stop_wheels(self) -> None:
        if self.command_interfaces is not None:
            self.command_interfaces.set(np.zeros(len(self.wheels)))

    # ------------------------------------------------------------------ input
    def set_command(self, linear: float, angular: float, stamp: float | None = None) -> None:
        """Stage a body command (thread-safe): linear.x m/s, angular.z rad/s, its stamp (s; None or 0 = when the
        next update takes it). Non-finite values raise ControlError and change nothing."""
        for field, value in (("linear.x", linear), ("angular.z", angular)):
            if not math.isfinite(value):
                raise self.error(f"command {field} = {value} is not finite; command ignored")
        with self._lock:
            self._pending = (float(linear), float(angular), stamp if stamp else None)

    def on_time_jump(self, previous: float, now: float) -> None:
        """The old command's stamp and the publish schedule are on the old clock: drop the command."""
        self._command = None
        self._last_publish = None

    # ------------------------------------------------------------------ cycle
    def update(self, time: float, period: float) -> None:
        with self._lock:
            new, self._pending = self._pending, None
        if new is not None:
            self._command = (new[0], new[1], time if new[2] is None else new[2])
        linear = angular = 0.0
        if self._command is not None:
            if time - self._command[2] > self.cmd_vel_timeout:
                self._command = None
            else:
                linear, angular = self._command[0], self._command[1]
        (l0, a0), (l1, a1) = self._previous
        linear = self.resolved["linear.x"].limit(linear, l0, l1, period)
        angular = self.resolved["angular.z"].limit(angular, a0, a1, period)
        self._previous = [(linear, angular), (l0, a0)]
        self.limited = (linear, angular)
        self._update_odometry(linear, angular, period)
        if self._last_publish is None or time - self._last_publish >= 1.0 / self.publish_rate - 1e-9:
            self._last_publish = time
            self._publish(time)
        if self.command_interfaces is not None:
            left, right = self.geometry.wheel_velocities(linear, angular)
            n = len(self.left_wheels)
            self.command_interfaces.set(np.array([left] * n + [right] * n))

    def _update_odometry(self, linear: float, angular: float, period: float) -> None:
        odo = self.odometry
        if self.open_loop:
            odo.update_open_loop(linear, angular, period)
            return
        if self.state_interfaces is None:
            return
        values = self.state_interfaces.get()
        n = len(self.left_wheels)
        left, right = float(np.mean(values[:n])), float(np.mean(values[n:]))
        if not (math.isfinite(left) and math.isfinite(right)):
            return  # no feedback yet (a topic-based component before its first message)
        if self.position_feedback:
            odo.update_from_positions(left, right, period)
        else:
            odo.update_from_velocities(left, right, period)

    def _publish(self, time: float) -> None:
        odo = self.odometry
        data = OdomData(time, self.odom_frame_id, self.base_frame_id, odo.x, odo.y, odo.heading, odo.linear,
                        odo.angular, self.pose_covariance, self.twist_covariance)
        self.emit("odom", data)
        if self.enable_odom_tf:
            self.emit("tf", data)
        if self.publish_limited_velocity:
            self.emit("cmd_vel_out", TwistData(time, self.base_frame_id, *self.limited))
