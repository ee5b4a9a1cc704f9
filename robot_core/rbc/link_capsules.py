"""A link's body as capsules in its own frame: what the VectorField keeps out of obstacles for ``obstacle_links``.

A link origin alone lets a forearm cut through a sphere between two guarded origins, so each guarded link is a
set of capsules (a segment ``a``-``b`` in the link frame and a radius):

* one bounding capsule per primitive ``<collision>`` of the link: a cylinder or capsule along its own z axis
  (the capsule of the cylinder's radius around its full axis contains it), a sphere (a point with its radius),
  a box (its longest edge as the segment, half the diagonal of the other two as the radius);
* one bounding capsule per mesh ``<collision>`` whose file MuJoCo reads (binary STL, OBJ, MSH): its vertices as
  MuJoCo compiles them (scaled, in the collision frame), the segment along their principal axis, the radius
  their largest distance from it, the ends pulled in as far as the end caps still hold every vertex;
* when the link has none of these (no collision, or meshes MuJoCo cannot read): the segment from the link's
  origin to the origin of the next link (the next link of the chain it belongs to, or its only child), radius 0,
  so at least the bone between its two joints is guarded.

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


def mesh_vertices(geom: Geometry) -> np.ndarray:
    """A mesh geometry's vertices (N, 3) in its collision frame, scaled, as MuJoCo compiles the file; ValueError
    naming the file when MuJoCo cannot read it."""
    import mujoco

    path = geom.resolved_filename
    if not path:
        raise ValueError(f"mesh '{geom.filename}' was not found")
    spec = mujoco.MjSpec()
    scale = [float(v) for v in np.asarray(geom.scale, dtype=float).reshape(-1)[:3]]
    spec.add_mesh(name="m", file=path, scale=scale, inertia=mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL)
    body = spec.worldbody.add_body(name="b")
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname="m")
    try:
        model = spec.compile()
    except Exception as exc:
        raise ValueError(f"mesh '{geom.filename}' ({path}): MuJoCo cannot read it: {exc}") from None
    va, vn = int(model.mesh_vertadr[0]), int(model.mesh_vertnum[0])
    verts = np.array(model.mesh_vert[va:va + vn], dtype=float)
    # MuJoCo moves a mesh to its own centre and axes; the geom's pose puts it back where the file has it.
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, np.asarray(model.geom_quat[0], dtype=float))
    return verts @ rot.reshape(3, 3).T + np.asarray(model.geom_pos[0], dtype=float)


def bounding_capsule(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """A capsule holding every point: segment along their principal axis, radius their largest distance from
    that axis, each end pulled in as far as its half-sphere still holds every point beyond it."""
    pts = np.asarray(points, dtype=float).reshape(-1, 3)
    center = pts.mean(axis=0)
    _, _, vt = np.linalg.svd(pts - center, full_matrices=False)
    axis = vt[0]
    t = (pts - center) @ axis
    d = np.linalg.norm(pts - center - np.outer(t, axis), axis=1)
    radius = float(d.max())
    reach = np.sqrt(np.maximum(radius * radius - d * d, 0.0))
    lo, hi = float(np.min(t + reach)), float(np.max(t - reach))
    if lo > hi:  # a blob shorter than it is wide: a sphere around the middle
        mid = center + axis * (lo + hi) / 2.0
        return mid, mid.copy(), float(np.linalg.norm(pts - mid, axis=1).max())
    return center + lo * axis, center + hi * axis, radius


def _geometry_capsule(geom: Geometry, pose: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Bounding capsule of one collision shape in its collision frame ``pose`` (4x4 in the link frame); None for
    a mesh MuJoCo cannot read."""
    if geom.kind == "mesh":
        try:
            a, b, radius = bounding_capsule(mesh_vertices(geom))
        except ValueError:
            return None
        r, p = pose[:3, :3], pose[:3, 3]
        return p + r @ a, p + r @ b, radius
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
