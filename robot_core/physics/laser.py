"""Simulated laser scanners: a description's ``ray``/``gpu_ray`` sensor as one fan of MuJoCo rays.

A scan is one ``mj_multiRay`` from the origin of the sensor frame (its link's frame moved by the sensor's
``<pose>``) in the sensor's x-y plane, at ``samples`` angles from ``min_angle`` to ``max_angle`` (both included,
as Gazebo spaces them), on the current state of the simulation. The rays skip the body of the link the sensor sits
on (a scanner's housing would otherwise hide everything) and visual-only geoms (group 1: the robot's visuals
double its collision shapes); they hit everything else -- the rest of the robot, the floor, the world's objects.

Ranges follow REP 117: nothing within ``range_max`` -> +inf, a hit nearer than ``range_min`` -> -inf.
A vertical fan (``<vertical><samples>`` > 1) is not simulated: only the horizontal plane is scanned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

from robot_core.model.robot_model import RobotModelError
from robot_core.model.sensors import SensorSpec
from robot_core.physics.noise import GaussianNoise, noise_rng

DEFAULT_LASER_RATE = 10.0  # Hz, when the description gives none
VISUAL_GROUP = 1  # the builder's group for visual-only geoms
RAY_GROUPS = np.array([int(g != VISUAL_GROUP) for g in range(6)], dtype=np.uint8)


@dataclass(frozen=True)
class ScanGeometry:
    """The fan of a scan as LaserScan states it."""

    angle_min: float
    angle_max: float
    angle_increment: float
    samples: int
    range_min: float
    range_max: float

    @classmethod
    def of(cls, sensor: SensorSpec) -> ScanGeometry:
        p = sensor.params
        n = int(p["samples"])
        lo, hi = float(p["min_angle"]), float(p["max_angle"])
        return cls(lo, hi, (hi - lo) / (n - 1) if n > 1 else 0.0, n, float(p["range_min"]), float(p["range_max"]))

    def angles(self) -> np.ndarray:
        return self.angle_min + self.angle_increment * np.arange(self.samples)


def laser_sensors(sensors: list[SensorSpec]) -> list[SensorSpec]:
    return [s for s in sensors if s.kind == "ray"]


class LaserScanner:
    """Scans of one laser sensor on one compiled model; :meth:`rebind` after the model was recompiled."""

    def __init__(self, sensor: SensorSpec, model: mujoco.MjModel, seed: int | None = None):
        self.sensor = sensor
        self.noise = GaussianNoise.of(sensor.params)  # the description's <ray><noise>, on the hits' ranges
        self._rng = noise_rng(seed, sensor.name)
        self.geometry = ScanGeometry.of(sensor)
        a = self.geometry.angles()
        self._dirs_sensor = np.stack([np.cos(a), np.sin(a), np.zeros_like(a)], axis=1)  # unit vectors
        self._pose = sensor.pose.matrix()
        n = self.geometry.samples
        self._vec = np.zeros(3 * n)
        self._dist = np.zeros(n)
        self._geom = np.zeros(n, dtype=np.int32)
        self.rebind(model)

    def rebind(self, model: mujoco.MjModel) -> None:
        body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, self.sensor.link)
        if body < 0:
            raise RobotModelError(f"laser '{self.sensor.name}': link '{self.sensor.link}' has no MuJoCo body",
                                  self.sensor.source)
        self.body = body

    def origin(self, data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        """World position and rotation of the sensor frame (the builder's body frame is the link frame)."""
        rot_body = data.xmat[self.body].reshape(3, 3)
        rot = rot_body @ self._pose[:3, :3]
        return data.xpos[self.body] + rot_body @ self._pose[:3, 3], rot

    def rays(self, data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        """Origin (3,) and unit directions (3 * samples,) of the scan's rays in the world frame."""
        pnt, rot = self.origin(data)
        self._vec[:] = (self._dirs_sensor @ rot.T).reshape(-1)
        return pnt, self._vec

    def scan(self, model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
        """Ranges (m, float32) of one scan on the current state of ``data`` (positions as of the last step)."""
        g = self.geometry
        pnt, vec = self.rays(data)
        mujoco.mj_multiRay(model, data, pnt, vec, RAY_GROUPS, 1, self.body, self._geom, self._dist, None,
                           g.samples, g.range_max)
        out = self._dist.astype(np.float32)
        out[(self._geom < 0) | (self._dist > g.range_max)] = math.inf
        out[(self._geom >= 0) & (self._dist < g.range_min)] = -math.inf
        return self.noise.add(out, self._rng) if self.noise else out
