"""A link's body as capsules in its own frame: what the VectorField keeps out of obstacles for ``obstacle_links``.

A link origin alone lets a forearm cut through a sphere between two guarded origins, so each guarded link is a
set of capsules (a segment ``a``-``b`` in the link frame and a radius):

* one bounding capsule per primitive ``<collision>`` of the link: a cylinder or capsule along its own z axis
  (the capsule of the cylinder's radius around its full axis contains it), a sphere (a point with its radius),
  a box (its longest edge as the segment, half the diagonal of the other two as the radius);
* when the link has no primitive collision (none, or only meshes, whose vertices the model does not hold):
  the segment from the link's origin to the origin of the next link (the next link of the chain it belongs to,
  or its only child), radius 0, so at least the bone between its two joints is guarded.

ROS-free and numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_core.model.robot_model import Geometry, RobotModel


@dataclass(frozen=True)
class Capsule:
    """Segment ``a``-``b`` (link frame, m) swept by a sphere of ``radius``; ``source`` says where it came from."""

    a: np.ndarray
    b: np.ndarray
    radius: float
    source: str


def _geometry_capsule(geom: Geometry, pose: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Bounding capsule of one primitive in its collision frame ``pose`` (4x4 in the link frame); None for meshes."""
    if geom.kind in ("cylinder", "capsule"):
        half = np.array([0.0, 0.0, geom.length / 2.0])
        radius = geom.radius
    elif geom.kind == "sphere":
        half, radius = np.zeros(3), geom.radius
    elif geom.kind == "box" and geom.size is not None:
        size = np.asarray(geom.size, dtype=float)
        axis = int(np.argmax(size))
        half = np.zeros(3)
        half[axis] = size[axis] / 2.0
        radius = float(np.linalg.norm(np.delete(size, axis))) / 2.0
    else:
        return None
    r, p = pose[:3, :3], pose[:3, 3]
    return p - r @ half, p + r @ half, float(radius)


def next_link(model: RobotModel, link: str, chain_links: list[str]) -> str | None:
    """The link after ``link`` in ``chain_links``, else ``link``'s only child in the tree, else None."""
    if link in chain_links:
        k = chain_links.index(link)
        if k + 1 < len(chain_links):
            return chain_links[k + 1]
    children = [j.child for j in model.joints.values() if j.parent == link]
    return children[0] if len(children) == 1 else None


def link_capsules(model: RobotModel, link: str, chain_links: list[str]) -> list[Capsule]:
    """The capsules guarding ``link``'s body (module docstring); ``chain_links`` the links of the reacher's chain."""
    out: list[Capsule] = []
    for i, col in enumerate(model.links[link].collisions):
        cap = _geometry_capsule(col.geometry, col.origin.matrix())
        if cap is not None:
            out.append(Capsule(*cap, source=f"collision {col.name or i} ({col.geometry.kind})"))
    if out:
        return out
    nxt = next_link(model, link, chain_links)
    if nxt is None:
        return [Capsule(np.zeros(3), np.zeros(3), 0.0, source="origin")]
    joint = model.parent_joint(nxt)
    end = joint.origin.xyz if joint is not None else np.zeros(3)
    return [Capsule(np.zeros(3), np.asarray(end, dtype=float), 0.0, source=f"segment to '{nxt}'")]
