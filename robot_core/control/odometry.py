"""Planar odometry of a differential-drive base: wheel travel in, pose and body velocity out.

ROS-free so the geometry is unit-tested on exact arcs and straight lines. Three sources, as in ros2_controllers'
diff_drive_controller: wheel positions (the travel is the change since the last update), wheel velocities
(travel = velocity x period), or the commanded body velocity (open loop). A step with a turn is integrated on
the exact circular arc it describes; a nearly straight step uses the midpoint heading, which is the arc's limit
and avoids dividing by an angle near zero.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

#: below this turn per step (rad) the step is integrated with the midpoint heading instead of the arc radius
STRAIGHT_TURN = 1e-6


@dataclass(frozen=True)
class DiffDriveGeometry:
    """Effective wheel separation and left/right wheel radii (the multipliers already applied), in metres."""

    separation: float
    left_radius: float
    right_radius: float

    def wheel_velocities(self, linear: float, angular: float) -> tuple[float, float]:
        """Body velocity (m/s, rad/s) -> left and right wheel angular velocities (rad/s)."""
        half = 0.5 * self.separation * angular
        return (linear - half) / self.left_radius, (linear + half) / self.right_radius

    def body_motion(self, left_travel: float, right_travel: float) -> tuple[float, float]:
        """Distances rolled by the left and right wheels (m) -> (forward distance m, turn rad)."""
        return 0.5 * (left_travel + right_travel), (right_travel - left_travel) / self.separation


class Odometry:
    """Pose (x, y, heading) in the odometry frame and the body velocity, integrated step by step.

    ``window`` is the number of steps the reported velocity is averaged over (upstream's
    ``velocity_rolling_window_size``): wheel encoders quantise, and one step's difference is noisy.
    """

    def __init__(self, geometry: DiffDriveGeometry, window: int = 10):
        self.geometry = geometry
        self.window = max(1, int(window))
        self.reset()

    def reset(self) -> None:
        """Back to the origin at rest; the next position update only records where the wheels are."""
        self.x = self.y = self.heading = 0.0
        self.linear = self.angular = 0.0
        self._last_wheels: tuple[float, float] | None = None
        self._linear_window: deque[float] = deque(maxlen=self.window)
        self._angular_window: deque[float] = deque(maxlen=self.window)

    # ------------------------------------------------------------------ sources
    def update_from_positions(self, left_angle: float, right_angle: float, period: float) -> None:
        """Wheel angles (rad, averaged per side by the caller) measured now; the first call only records them."""
        g = self.geometry
        left, right = left_angle * g.left_radius, right_angle * g.right_radius
        last, self._last_wheels = self._last_wheels, (left, right)
        if last is None:
            return
        self._advance(*g.body_motion(left - last[0], right - last[1]), period)

    def update_from_velocities(self, left_velocity: float, right_velocity: float, period: float) -> None:
        """Wheel angular velocities (rad/s) held over ``period`` seconds."""
        g = self.geometry
        self._advance(*g.body_motion(left_velocity * g.left_radius * period,
                                     right_velocity * g.right_radius * period), period)

    def update_open_loop(self, linear: float, angular: float, period: float) -> None:
        """The commanded body velocity (m/s, rad/s) taken as what happened over ``period`` seconds."""
        self._advance(linear * period, angular * period, period)

    # ------------------------------------------------------------------ integration
    def _advance(self, distance: float, turn: float, period: float) -> None:
        self.integrate(distance, turn)
        if period > 0.0:
            self._linear_window.append(distance / period)
            self._angular_window.append(turn / period)
            self.linear = sum(self._linear_window) / len(self._linear_window)
            self.angular = sum(self._angular_window) / len(self._angular_window)

    def integrate(self, distance: float, turn: float) -> None:
        """Move ``distance`` metres along an arc that turns the heading by ``turn`` radians."""
        if abs(turn) < STRAIGHT_TURN:
            mid = self.heading + 0.5 * turn
            self.x += distance * math.cos(mid)
            self.y += distance * math.sin(mid)
            self.heading += turn
            return
        radius = distance / turn
        start = self.heading
        self.heading = start + turn
        self.x += radius * (math.sin(self.heading) - math.sin(start))
        self.y -= radius * (math.cos(self.heading) - math.cos(start))
