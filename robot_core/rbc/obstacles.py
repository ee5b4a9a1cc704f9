"""Obstacles of the VectorField reacher: spheres and planes that bend its field around them.

The RBC's documentation says the vector field "takes goals (and possibly obstacles)". Here an obstacle changes
the *linear* part of the field at the end link's origin (the point the reacher brings to the goal):

* its clearance ``s`` is the distance from the point to the obstacle's surface (sphere: ``|p - c| - r``;
  plane ``n . p = d``: ``n . p - d``, the free side being where ``n`` points);
* within ``influence`` of the surface the part of the velocity heading into the obstacle is taken away in
  proportion ``a = (influence - s) / (influence - clearance)`` (all of it once ``s <= clearance``), and the same
  speed is given back along the surface, towards the goal, so the point slides around a sphere instead of
  stopping in front of it (the local minimum of a plain repulsive potential when the goal is right behind);
* below ``clearance`` a push straight out (``k_push * (clearance - s)``) brings a point that was carried in (by
  tracking lag, or an obstacle moved onto it) back out.

So a point that starts outside ``clearance`` never moves towards an obstacle once it is that close: in the
continuous field its clearance cannot fall below ``clearance``. The VectorField guards its end link's origin so,
and the bodies of its ``obstacle_links`` (capsules, robot_core.rbc.link_capsules; ``segment_clearance`` measures
them at the segment's point nearest to the obstacle) by a constraint of the same shape on that point's velocity
(robot_core.rbc.reachers.vector_field). Where the goal lies within an obstacle's clearance the goal is refused:
it cannot be reached.
ROS-free and numpy only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

SPHERE_FIELDS = 4  # x, y, z, radius
PLANE_FIELDS = 4  # nx, ny, nz, offset


@dataclass(frozen=True)
class Sphere:
    center: np.ndarray
    radius: float

    def clearance(self, p: np.ndarray) -> tuple[float, np.ndarray]:
        """Distance from ``p`` to the surface and the outward unit normal at the nearest surface point."""
        d = p - self.center
        dist = float(np.linalg.norm(d))
        normal = d / dist if dist > 1e-12 else np.array([0.0, 0.0, 1.0])
        return dist - self.radius, normal

    def nearest_on_segment(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The point of segment ``a``-``b`` closest to the center."""
        ab = b - a
        length2 = float(ab @ ab)
        t = 0.0 if length2 < 1e-18 else min(1.0, max(0.0, float((self.center - a) @ ab) / length2))
        return a + t * ab


@dataclass(frozen=True)
class Plane:
    normal: np.ndarray  # unit, pointing into free space
    offset: float

    def clearance(self, p: np.ndarray) -> tuple[float, np.ndarray]:
        return float(self.normal @ p) - self.offset, self.normal

    def nearest_on_segment(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The point of segment ``a``-``b`` deepest towards the plane (its middle when both ends are as deep)."""
        da, db = float(self.normal @ a), float(self.normal @ b)
        if abs(da - db) < 1e-12:
            return (a + b) / 2.0
        return a if da < db else b


Obstacle = Sphere | Plane


def segment_clearance(obs: Obstacle, a: np.ndarray, b: np.ndarray, radius: float = 0.0
                      ) -> tuple[float, np.ndarray, np.ndarray]:
    """Clearance of the capsule ``a``-``b`` of ``radius`` from ``obs``: (distance between the two surfaces,
    outward unit normal, the segment's point nearest to the obstacle, where a push acts)."""
    p = obs.nearest_on_segment(a, b)
    s, normal = obs.clearance(p)
    return s - radius, normal, p


def spheres_from_list(values: Sequence[float]) -> list[Sphere]:
    """``[x, y, z, radius, ...]`` -> spheres; ValueError naming the sphere whose numbers are wrong."""
    vals = [float(v) for v in values]
    if len(vals) % SPHERE_FIELDS:
        raise ValueError(f"needs 4 numbers per sphere (x, y, z, radius), got {len(vals)} numbers")
    out = []
    for i in range(0, len(vals), SPHERE_FIELDS):
        x, y, z, r = vals[i:i + SPHERE_FIELDS]
        k = i // SPHERE_FIELDS
        if not all(math.isfinite(v) for v in (x, y, z, r)):
            raise ValueError(f"sphere {k} has non-finite numbers {vals[i:i + SPHERE_FIELDS]}")
        if r < 0:
            raise ValueError(f"sphere {k} (center {x:g}, {y:g}, {z:g}) has negative radius {r:g}")
        out.append(Sphere(np.array([x, y, z]), r))
    return out


def planes_from_list(values: Sequence[float]) -> list[Plane]:
    """``[nx, ny, nz, offset, ...]`` -> planes (normal normalised, offset scaled with it); ValueError naming the
    plane whose numbers are wrong."""
    vals = [float(v) for v in values]
    if len(vals) % PLANE_FIELDS:
        raise ValueError(f"needs 4 numbers per plane (nx, ny, nz, offset), got {len(vals)} numbers")
    out = []
    for i in range(0, len(vals), PLANE_FIELDS):
        n, d = np.array(vals[i:i + 3]), vals[i + 3]
        k = i // PLANE_FIELDS
        length = float(np.linalg.norm(n))
        if not (np.all(np.isfinite(n)) and math.isfinite(d)):
            raise ValueError(f"plane {k} has non-finite numbers {vals[i:i + PLANE_FIELDS]}")
        if length < 1e-9:
            raise ValueError(f"plane {k} has a zero normal")
        out.append(Plane(n / length, d / length))
    return out


def _tangent(normal: np.ndarray, towards: np.ndarray) -> np.ndarray:
    """Unit direction along the surface (perpendicular to ``normal``) closest to ``towards``; any perpendicular
    when ``towards`` is along the normal (the goal straight behind the obstacle)."""
    t = towards - (towards @ normal) * normal
    n = float(np.linalg.norm(t))
    if n > 1e-9 * max(1.0, float(np.linalg.norm(towards))):
        return t / n
    helper = np.array([0.0, 0.0, 1.0]) if abs(normal[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    t = np.cross(normal, helper)
    return t / np.linalg.norm(t)


def avoid(p: np.ndarray, v: np.ndarray, goal: np.ndarray, obstacles: Sequence[Obstacle], clearance: float,
          influence: float, k_push: float = 2.0) -> np.ndarray:
    """Linear velocity ``v`` at point ``p`` bent around ``obstacles`` (see the module docstring)."""
    out = np.asarray(v, dtype=float).copy()
    influence = max(influence, clearance + 1e-6)
    for obs in obstacles:
        s, n = obs.clearance(p)
        if s >= influence:
            continue
        a = min(1.0, max(0.0, (influence - s) / (influence - clearance)))
        inward = float(out @ n)
        if inward < 0.0:
            out = out - a * inward * n + a * (-inward) * _tangent(n, goal - p)
        if s < clearance:
            out = out + k_push * (clearance - s) * n
    # A tangent given back for one obstacle may head into another: take those parts away again.
    for obs in obstacles:
        s, n = obs.clearance(p)
        if s <= clearance and float(out @ n) < 0.0:
            out = out - float(out @ n) * n
    return out


def blocked_goal(goal: np.ndarray, obstacles: Sequence[Obstacle], clearance: float) -> str | None:
    """Why ``goal`` cannot be reached (within an obstacle's clearance), or None."""
    counts = {"sphere": 0, "plane": 0}
    for obs in obstacles:
        kind = "sphere" if isinstance(obs, Sphere) else "plane"
        i = counts[kind]
        counts[kind] += 1
        s, _ = obs.clearance(goal)
        if s < clearance:
            where = "inside" if s < 0 else "within the clearance of"
            return (f"goal position {np.round(goal, 4).tolist()} lies {where} obstacle {kind} {i} "
                    f"(distance to its surface {s:.4g} m < obstacle_clearance {clearance:g} m)")
    return None


def obstacle_names(obstacles: Sequence[Obstacle]) -> list[str]:
    """'sphere 0', 'plane 0', ...: each obstacle as its parameter counts it, for messages."""
    counts = {"sphere": 0, "plane": 0}
    out = []
    for obs in obstacles:
        kind = "sphere" if isinstance(obs, Sphere) else "plane"
        out.append(f"{kind} {counts[kind]}")
        counts[kind] += 1
    return out
