"""robot_core/CasterBaseController: a holonomic base on steerable casters (the PR2's kind), twist in, steering
angles and wheel velocities out, odometry back.

Each caster is a rotation joint about the vertical (position command interface) carrying one or more wheel joints
(velocity command interfaces; the PR2 has two per caster), its rotation axis at (``caster_x[i]``, ``caster_y[i]``)
in the base frame, its wheels on one axle under that axis (no trail), wheel j ``wheel_offsets[j]`` along the axle
(the caster's y axis). A body twist (vx, vy, wz) asks of caster i the ground velocity
``v_i = (vx - wz y_i, vy + wz x_i)``: the caster steers to its direction and its wheels roll at ``|v_i| / r``,
less ``(wz + da_i/dt) d_j / r`` for a wheel off the axis (a caster turning on two wheels rolls them in opposite
directions instead of dragging them). A caster turns by at most 90 degrees: past that it steers to the opposite
direction and the wheels run backwards. While a caster is still turning its wheels' share of |v_i| is slowed by
the cosine of the steering error (zero beyond 90 degrees), so it does not drag the base sideways; at (almost) no
speed a caster keeps its angle.

Odometry is the least-squares body twist that explains every wheel's measured speed along its caster's measured
angle (and no sideways slip of any caster), integrated in the odom frame. Commands older than ``cmd_vel_timeout``
stop the wheels (the casters keep their angles). Not modelled: the PR2's caster trail (its wheels sit behind the
rotation axis); the table is :attr:`CasterBaseController.PARAMS`, rendered in doc/controllers/caster_base.md.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

from robot_core.control.controller_base import UPDATE_RATE, Controller
from robot_core.parameter_spec import ParamSpec as P

PARAMS = (
    UPDATE_RATE,
    P("caster_names", "string[]", [], "the casters' rotation joints (vertical axis; position command and state "
      "interfaces); must not be empty"),
    P("wheel_names", "string[]", [], "the wheel joints, wheels_per_caster of them per caster, casters in the order "
      "of caster_names (velocity command and state interfaces)"),
    P("wheels_per_caster", "int", 1, "how many wheels each caster carries (the PR2: 2)", minimum=1),
    P("wheel_offsets", "double[]", [], "each wheel's offset along its axle from the caster's rotation axis (the "
      "caster's y axis, the wheel joint's axis), in the order of wheel_names; empty: all 0", unit="m"),
    P("caster_x", "double[]", [], "x of each caster's rotation axis in the base frame, in the same order", unit="m"),
    P("caster_y", "double[]", [], "y of each caster's rotation axis in the base frame, in the same order", unit="m"),
    P("wheel_radius", "double", 0.0, "wheel radius (must be > 0 at configure)", minimum=0.0, unit="m"),
    P("min_speed", "double", 0.001, "a caster asked for less ground speed keeps its steering angle", minimum=0.0,
      unit="m/s"),
    P("odom_frame_id", "string", "odom", "frame of the odometry (parent of base_frame_id)"),
    P("base_frame_id", "string", "base_link", "the robot's base frame (child of odom_frame_id)"),
    P("enable_odom_tf", "bool", True, "publish odom_frame_id -> base_frame_id on /tf"),
    P("cmd_vel_timeout", "double", 0.5, "a command older than this (from its stamp) stops the wheels", minimum=0.0,
      unit="s"),
    P("publish_rate", "double", 50.0, "rate of ~/odom, /tf and ~/caster_states (at most the update rate)",
      minimum=0.0, exclusive_min=True, unit="Hz"),
)


@dataclass(frozen=True)
class BaseOdomData:
    """One odometry sample of a holonomic base (body-frame twist)."""

    stamp: float
    odom_frame_id: str
    base_frame_id: str
    x: float
    y: float
    heading: float
    vx: float
    vy: float
    wz: float


@dataclass(frozen=True)
class CasterStateData:
    """The commands of the last update: each caster's steering angle and its wheel's velocity."""

    stamp: float
    casters: tuple[str, ...]
    angles: tuple[float, ...]
    wheels: tuple[str, ...]
    wheel_velocities: tuple[float, ...]


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


def caster_commands(twist: tuple[float, float, float], xy: np.ndarray, current: np.ndarray, radius: float,
                    min_speed: float) -> tuple[np.ndarray, np.ndarray]:
    """(steering angles, wheel velocities) for a body twist, given the casters' positions (n, 2) and current
    angles (n,). Angles are continuous: the target nearest the current angle, flipped by pi (wheel reversed)
    when that is closer; a caster asked for less than ``min_speed`` keeps its angle and stops its wheel."""
    vx, vy, wz = twist
    angles, wheels = current.astype(float).copy(), np.zeros(len(current))
    for i, (px, py) in enumerate(xy):
        gx, gy = vx - wz * py, vy + wz * px
        speed = math.hypot(gx, gy)
        if speed < min_speed:
            continue
        delta = _wrap(math.atan2(gy, gx) - current[i])
        sign = 1.0
        if abs(delta) > math.pi / 2:
            delta, sign = _wrap(delta + math.pi), -1.0
        angles[i] = current[i] + delta
        wheels[i] = sign * speed / radius
    return angles, wheels


def body_twist(xy: np.ndarray, angles: np.ndarray, wheel_velocities: np.ndarray, radius: float,
               wheel_caster: np.ndarray | None = None, offsets: np.ndarray | None = None,
               steer_rates: np.ndarray | None = None) -> np.ndarray:
    """Least-squares (vx, vy, wz) from the wheels' rolling speeds r w_j along their casters' angles a_i and no
    sideways slip of any caster. Wheel j sits on caster ``wheel_caster[j]`` (default: wheel i on caster i),
    ``offsets[j]`` along the axle (default 0); ``steer_rates`` (da_i/dt, default 0) is the casters' turning, which
    rolls an off-axis wheel by -da_i/dt d_j."""
    n = len(angles)
    owner = np.arange(n) if wheel_caster is None else wheel_caster
    d = np.zeros(len(wheel_velocities)) if offsets is None else offsets
    rate = np.zeros(n) if steer_rates is None else steer_rates
    cos, sin = np.cos(angles), np.sin(angles)
    px, py = xy[:, 0], xy[:, 1]
    rows = [[cos[i], sin[i], px[i] * sin[i] - py[i] * cos[i] - d[j]] for j, i in enumerate(owner)]
    rhs = [radius * w + rate[i] * d[j] for j, (i, w) in enumerate(zip(owner, wheel_velocities, strict=True))]
    rows += [[-sin[i], cos[i], px[i] * cos[i] + py[i] * sin[i]] for i in range(n)]
    rhs += [0.0] * n
    sol, *_ = np.linalg.lstsq(np.array(rows, dtype=float), np.array(rhs, dtype=float), rcond=None)
    return sol


class CasterBaseController(Controller):
    type_name = "robot_core/CasterBaseController"
    PARAMS = PARAMS

    def on_init(self) -> None:
        self._lock = threading.Lock()
        self._pending: tuple[float, float, float, float | None] | None = None
        self._read_params()

    def _read_params(self) -> None:
        p = self.params
        self.casters = p.str_list("caster_names", [])
        self.wheel_joints = p.str_list("wheel_names", [])
        self.wheels_per_caster = p.int("wheels_per_caster", 1, min_value=1)
        self.wheel_offsets = p.float_list("wheel_offsets", [])
        self.caster_x = p.float_list("caster_x", [])
        self.caster_y = p.float_list("caster_y", [])
        self.wheel_radius = p.float("wheel_radius", 0.0)
        self.min_speed = p.float("min_speed", 0.001, min_value=0.0)
        self.odom_frame_id = p.str("odom_frame_id", "odom")
        self.base_frame_id = p.str("base_frame_id", "base_link")
        self.enable_odom_tf = p.bool("enable_odom_tf", True)
        self.cmd_vel_timeout = p.float("cmd_vel_timeout", 0.5, min_value=0.0)
        self.publish_rate = p.float("publish_rate", 50.0)

    def on_configure(self) -> None:
        self._read_params()
        n = len(self.casters)
        if n == 0:
            raise self.error("parameter 'caster_names' must name at least one caster rotation joint")
        k = self.wheels_per_caster
        if len(self.wheel_joints) != n * k:
            raise self.error(f"parameter 'wheel_names' has {len(self.wheel_joints)} entries, caster_names {n} "
                             f"with wheels_per_caster {k}: {n * k} expected")
        for name, value in (("caster_x", self.caster_x), ("caster_y", self.caster_y)):
            if len(value) != n:
                raise self.error(f"parameter '{name}' has {len(value)} entries, caster_names {n}: one per caster")
        if self.wheel_offsets and len(self.wheel_offsets) != n * k:
            raise self.error(f"parameter 'wheel_offsets' has {len(self.wheel_offsets)} entries, wheel_names "
                             f"{n * k}: one per wheel (or none: all 0)")
        if not self.wheel_radius > 0.0:
            raise self.error(f"parameter 'wheel_radius' = {self.wheel_radius} must be > 0")
        if self.robot is not None:
            for param, names in (("caster_names", self.casters), ("wheel_names", self.wheel_joints)):
                for j in names:
                    if j not in self.robot.joints:
                        raise self.error(f"parameter '{param}': joint '{j}' is not a joint of robot "
                                         f"'{self.robot.name}'")
        named = self.casters + self.wheel_joints
        twice = sorted({j for j in named if named.count(j) > 1})
        if twice:
            raise self.error(f"joints {twice} are named more than once in caster_names / wheel_names")
        if n < 2:
            raise self.error("at least two casters are needed to tell the base's rotation from its motion")
        self.xy = np.column_stack([self.caster_x, self.caster_y]).astype(float)
        self.wheel_caster = np.repeat(np.arange(n), k)
        self.offsets = np.array(self.wheel_offsets or [0.0] * (n * k), dtype=float)

    # ------------------------------------------------------------------ interfaces
    def command_interface_configuration(self) -> list[str]:
        return [f"{c}/position" for c in self.casters] + [f"{w}/velocity" for w in self.wheel_joints]

    def state_interface_configuration(self) -> list[str]:
        """Casters' angles, wheels' velocities, then the casters' turning rates (for the off-axis wheels)."""
        return ([f"{c}/position" for c in self.casters] + [f"{w}/velocity" for w in self.wheel_joints]
                + [f"{c}/velocity" for c in self.casters])

    # ------------------------------------------------------------------ lifecycle
    def on_activate(self) -> None:
        with self._lock:
            self._pending = None
        self._command: tuple[float, float, float, float] | None = None  # vx, vy, wz, stamp
        self._last_publish: float | None = None
        self.pose = np.zeros(3)  # x, y, heading in the odom frame
        self.twist = np.zeros(3)
        self._angles: np.ndarray | None = None  # commanded steering angles (None: take the measured ones)
        self._stop_wheels()

    def on_deactivate(self) -> None:
        self._stop_wheels()

    def _stop_wheels(self) -> None:
        if self.command_interfaces is None or self.state_interfaces is None:
            return
        n = len(self.casters)
        held = self.state_interfaces.get()[:n]
        angles = np.where(np.isfinite(held), held, 0.0) if self._angles is None else self._angles
        self.command_interfaces.set(np.concatenate([angles, np.zeros(len(self.wheel_joints))]))

    # ------------------------------------------------------------------ input
    def set_command(self, vx: float, vy: float, wz: float, stamp: float | None = None) -> None:
        """Stage a body command (thread-safe): linear x, y (m/s), angular z (rad/s), its stamp (None or 0 = when
        the next update takes it). Non-finite values raise ControlError and change nothing."""
        for field, value in (("linear.x", vx), ("linear.y", vy), ("angular.z", wz)):
            if not math.isfinite(value):
                raise self.error(f"command {field} = {value} is not finite; command ignored")
        with self._lock:
            self._pending = (float(vx), float(vy), float(wz), stamp if stamp else None)

    def on_time_jump(self, previous: float, now: float) -> None:
        self._command = None
        self._last_publish = None

    # ------------------------------------------------------------------ cycle
    def update(self, time: float, period: float) -> None:
        with self._lock:
            new, self._pending = self._pending, None
        if new is not None:
            self._command = (new[0], new[1], new[2], time if new[3] is None else new[3])
        twist = (0.0, 0.0, 0.0)
        if self._command is not None:
            if time - self._command[3] > self.cmd_vel_timeout:
                self._command = None
            else:
                twist = self._command[:3]
        n, m = len(self.casters), len(self.wheel_joints)
        state = self.state_interfaces.get() if self.state_interfaces is not None else np.full(2 * n + m, np.nan)
        measured, wheel_v, steer_rates = state[:n], state[n:n + m], state[n + m:]
        if np.all(np.isfinite(state)):
            self._integrate(body_twist(self.xy, measured, wheel_v, self.wheel_radius, self.wheel_caster,
                                       self.offsets, steer_rates), period)
        if self._angles is None:
            if not np.all(np.isfinite(measured)):
                return  # no feedback yet (a topic-based component before its first message)
            self._angles = measured.astype(float).copy()
        # steer on from the commanded angles (continuous); slow each wheel by how far its caster still is from them
        angles, rolling = caster_commands(twist, self.xy, self._angles, self.wheel_radius, self.min_speed)
        self._angles = angles
        if np.all(np.isfinite(measured)):
            rolling = rolling * np.maximum(0.0, np.cos(angles - measured))
        turning = np.full(n, twist[2])
        if np.all(np.isfinite(steer_rates)):
            turning = turning + steer_rates
        wheels = rolling[self.wheel_caster] - turning[self.wheel_caster] * self.offsets / self.wheel_radius
        if self.command_interfaces is not None:
            self.command_interfaces.set(np.concatenate([angles, wheels]))
        if self._last_publish is None or time - self._last_publish >= 1.0 / self.publish_rate - 1e-9:
            self._last_publish = time
            x, y, h = self.pose
            odom = BaseOdomData(time, self.odom_frame_id, self.base_frame_id, float(x), float(y), float(h),
                                *(float(v) for v in self.twist))
            self.emit("odom", odom)
            if self.enable_odom_tf:
                self.emit("tf", odom)
            self.emit("caster_states", CasterStateData(time, tuple(self.casters), tuple(float(a) for a in angles),
                                                       tuple(self.wheel_joints), tuple(float(w) for w in wheels)))

    def _integrate(self, twist: np.ndarray, period: float) -> None:
        self.twist = twist
        vx, vy, wz = twist
        h = self.pose[2] + 0.5 * wz * period  # midpoint heading
        self.pose = self.pose + np.array([(vx * math.cos(h) - vy * math.sin(h)) * period,
                                          (vx * math.sin(h) + vy * math.cos(h)) * period, wz * period])
        self.pose[2] = _wrap(float(self.pose[2]))
