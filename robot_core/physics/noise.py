"""Gaussian sensor noise: Gazebo's ``<noise type="gaussian">`` (mean, stddev) as the simulator applies it to camera
images, laser ranges and the ros2_control sensors' values, and the seeding that makes a run repeatable.

Why one module: the description's noise is read in three places (cameras, lasers, IMU/force-torque) and a test
must be able to replay it; every noisy sensor draws from its own generator, seeded from the run's seed and the
sensor's name, so adding a sensor does not change another's noise and the same seed gives the same samples.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

NOISE_TYPES = ("gaussian", "gaussian_quantized", "none")


@dataclass(frozen=True)
class GaussianNoise:
    """Additive noise N(mean, stddev) in the value's unit (images: of the 0..1 intensity, as Gazebo)."""

    mean: float = 0.0
    stddev: float = 0.0

    def __bool__(self) -> bool:
        return self.stddev > 0.0 or self.mean != 0.0

    @classmethod
    def of(cls, params: Mapping[str, object]) -> GaussianNoise:
        """From a SensorSpec's ``noise_mean`` / ``noise_stddev`` params (absent: none)."""
        return cls(float(params.get("noise_mean", 0.0) or 0.0), float(params.get("noise_stddev", 0.0) or 0.0))

    def add(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``values`` plus noise, in place, on the finite entries only (REP 117's +-inf stay)."""
        if not self:
            return values
        finite = np.isfinite(values)
        noise = rng.standard_normal(int(finite.sum()), dtype=np.float64) * self.stddev + self.mean
        values[finite] += noise.astype(values.dtype, copy=False)
        return values

    def add_to_image(self, rgb: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """An 8-bit image with noise of (mean, stddev) x 255 per channel, clipped to 0..255."""
        if not self:
            return rgb
        noisy = rng.standard_normal(rgb.shape, dtype=np.float32)
        noisy *= np.float32(self.stddev * 255.0)
        noisy += rgb
        noisy += np.float32(self.mean * 255.0)
        np.clip(np.rint(noisy, out=noisy), 0.0, 255.0, out=noisy)
        return noisy.astype(np.uint8)


def noise_rng(seed: int | None, name: str) -> np.random.Generator:
    """The generator of sensor ``name``: from ``seed`` and the name (None or negative: a fresh, unrepeatable one)."""
    if seed is None or seed < 0:
        return np.random.default_rng()
    return np.random.default_rng([int(seed), zlib.crc32(name.encode("utf-8"))])


def check_noise(mean: float, stddev: float) -> str | None:
    """Why (mean, stddev) is unusable, or None."""
    if not math.isfinite(mean):
        return f"noise mean {mean!r} must be a finite number"
    if not (math.isfinite(stddev) and stddev >= 0.0):
        return f"noise stddev {stddev!r} must be a number >= 0"
    return None
