"""Velocity, acceleration and jerk limits of one body axis (diff_drive_controller's ``linear.x`` / ``angular.z``).

Each limit is NaN when unset (no limit), as in ros2_controllers since Jazzy (the ``has_*_limits`` switches are
gone). Acceleration is limited separately for the four cases a wheeled base meets: speeding up forwards
(``max_acceleration`` > 0), slowing down while moving forwards (``max_deceleration`` < 0), speeding up backwards
(``max_acceleration_reverse`` < 0) and slowing down while moving backwards (``max_deceleration_reverse`` > 0).
Unset partners are derived: ``min_velocity`` = -``max_velocity``, ``max_deceleration`` and
``max_acceleration_reverse`` = -``max_acceleration``, ``max_deceleration_reverse`` = -``max_deceleration``,
``min_jerk`` = -``max_jerk``. Order of application: jerk, acceleration, velocity (upstream's order), so the
velocity bound always holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from robot_core.control.errors import ControlError

LIMIT_NAMES = ("max_velocity", "min_velocity", "max_acceleration", "max_deceleration", "max_acceleration_reverse",
               "max_deceleration_reverse", "max_jerk", "min_jerk")


def _given(x: float) -> bool:
    return not math.isnan(x)


def _or(x: float, fallback: float) -> float:
    return x if _given(x) else fallback


@dataclass
class SpeedLimiter:
    """Limits for one axis; every field NaN = unlimited (see the module docstring for the derived defaults)."""

    max_velocity: float = math.nan
    min_velocity: float = math.nan
    max_acceleration: float = math.nan
    max_deceleration: float = math.nan
    max_acceleration_reverse: float = math.nan
    max_deceleration_reverse: float = math.nan
    max_jerk: float = math.nan
    min_jerk: float = math.nan

    def resolved(self, axis: str) -> SpeedLimiter:
        """The limits with unset partners derived; ControlError naming ``axis``.<limit> when signs contradict."""
        out = SpeedLimiter(
            max_velocity=self.max_velocity, min_velocity=_or(self.min_velocity, -self.max_velocity),
            max_acceleration=self.max_acceleration,
            max_deceleration=_or(self.max_deceleration, -self.max_acceleration),
            max_acceleration_reverse=_or(self.max_acceleration_reverse, -self.max_acceleration),
            max_jerk=self.max_jerk, min_jerk=_or(self.min_jerk, -self.max_jerk))
        out.max_deceleration_reverse = _or(self.max_deceleration_reverse, -out.max_deceleration)
        rules = (("max_acceleration", 1), ("max_deceleration", -1), ("max_acceleration_reverse", -1),
                 ("max_deceleration_reverse", 1), ("max_jerk", 1), ("min_jerk", -1))
        for name, sign in rules:
            v = getattr(out, name)
            if _given(v) and v * sign <= 0.0:
                raise ControlError(f"parameter '{axis}.{name}' = {v} must be {'> 0' if sign > 0 else '< 0'}")
        if _given(out.max_velocity) and _given(out.min_velocity) and out.min_velocity > out.max_velocity:
            raise ControlError(f"parameter '{axis}.min_velocity' = {out.min_velocity} is above "
                               f"'{axis}.max_velocity' = {out.max_velocity}")
        return out

    def limit(self, v: float, v0: float, v1: float, dt: float) -> float:
        """The velocity to command now given the wish ``v``, the last two commanded ``v0`` (previous step) and
        ``v1`` (the one before), over a period ``dt`` s. Call on :meth:`resolved` limits."""
        if dt <= 0.0:
            return self._clamp_velocity(v)
        if _given(self.max_jerk) or _given(self.min_jerk):
            dv0 = v0 - v1
            da = _clamp(v - v0 - dv0, self.min_jerk * dt * dt, self.max_jerk * dt * dt)
            v = v0 + dv0 + da
        dv = v - v0
        if dv > 0.0:  # faster forwards, or slower backwards
            bound = self.max_acceleration if v0 >= 0.0 else self.max_deceleration_reverse
            if _given(bound):
                dv = min(dv, bound * dt)
        elif dv < 0.0:  # slower forwards, or faster backwards
            bound = self.max_deceleration if v0 > 0.0 else self.max_acceleration_reverse
            if _given(bound):
                dv = max(dv, bound * dt)
        return self._clamp_velocity(v0 + dv)

    def _clamp_velocity(self, v: float) -> float:
        return _clamp(v, self.min_velocity, self.max_velocity)


def _clamp(v: float, lo: float, hi: float) -> float:
    if _given(hi) and v > hi:
        v = hi
    if _given(lo) and v < lo:
        v = lo
    return v
