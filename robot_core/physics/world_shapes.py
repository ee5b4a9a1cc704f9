"""The shapes of the world's objects as a viewer needs them: per object, its geoms in the object's own frame (the
frame the simulator puts on /tf), with kind, size, colour and, for meshes, the file or the triangles.

Why from the compiled model: a world-file object, an MJCF world's body and a spawned object are all bodies named
after the object, so one reading covers them all; the simulator turns the list into its latched
``~/world_markers`` (visualization_msgs/MarkerArray, robot_core.ros.sim_world) that rviz2 and ``robot-core view``
draw. Sizes follow rviz's marker ``scale``: full extents of a box, a sphere's diameter, a cylinder's diameter and
length. A mesh goes as its triangles (rviz's TRIANGLE_LIST), not as its file: MuJoCo recentres a mesh on its
centroid and turns it to its inertia axes, so the compiled vertices with the geom's pose are what is simulated,
and a viewer on another machine needs no access to the file.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from robot_core.physics.world import WorldSim

VISIBLE_GROUPS = (0, 1, 2)  # the geom groups MuJoCo's own viewer shows by default


@dataclass(frozen=True)
class ObjectShape:
    """One geom of a world object, in the object's frame."""

    frame: str  # the object's name: its frame on /tf
    index: int  # unique within the object
    kind: str  # box, sphere, cylinder, triangles (meshes, capsules, ellipsoids)
    scale: tuple[float, float, float]
    position: tuple[float, float, float]
    quaternion: tuple[float, float, float, float]  # w, x, y, z
    rgba: tuple[float, float, float, float]
    triangles: np.ndarray | None = None  # kind triangles: (N*3, 3) float, three vertices per triangle


def _descendants(model: mujoco.MjModel, body: int) -> list[int]:
    out = [body]
    for b in range(body + 1, model.nbody):
        if int(model.body_parentid[b]) in out:
            out.append(b)
    return out


def _triangles(model: mujoco.MjModel, geom: int) -> np.ndarray | None:
    """A mesh geom's triangles (its compiled vertices, in the geom's frame), or a tessellated capsule/ellipsoid."""
    kind, size = int(model.geom_type[geom]), np.array(model.geom_size[geom])
    if kind == mujoco.mjtGeom.mjGEOM_MESH:
        mid = int(model.geom_dataid[geom])
        va, vn = int(model.mesh_vertadr[mid]), int(model.mesh_vertnum[mid])
        fa, fn = int(model.mesh_faceadr[mid]), int(model.mesh_facenum[mid])
        verts = np.array(model.mesh_vert[va:va + vn], float)
        return verts[np.array(model.mesh_face[fa:fa + fn]).reshape(-1)]
    import trimesh.creation as tc

    if kind == mujoco.mjtGeom.mjGEOM_CAPSULE:
        mesh = tc.capsule(radius=size[0], height=2 * size[1], count=[12, 12])
    elif kind == mujoco.mjtGeom.mjGEOM_ELLIPSOID:
        mesh = tc.icosphere(subdivisions=2, radius=1.0)
        mesh.vertices *= size[:3]
    else:
        return None
    return np.asarray(mesh.vertices)[np.asarray(mesh.faces).reshape(-1)]


def object_shapes(world: WorldSim) -> list[ObjectShape]:
    """Every visible geom of every object of ``world``, posed in its object's frame at the engine's current state
    (a jointed part of an MJCF world's body, a door, is drawn where it was then)."""
    model, data = world.engine.model, world.engine.data
    mujoco.mj_kinematics(model, data)
    out = []
    for name in world.objects:
        body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name)
        if body < 0:
            continue
        to_object = np.linalg.inv(_pose(data.xpos[body], data.xmat[body]))
        index = 0
        for b in _descendants(model, body):
            for g in range(int(model.body_geomadr[b]), int(model.body_geomadr[b]) + int(model.body_geomnum[b])):
                if int(model.geom_group[g]) not in VISIBLE_GROUPS or model.geom_rgba[g][3] == 0.0:
                    continue
                local = to_object @ _pose(data.geom_xpos[g], data.geom_xmat[g])
                quat = np.zeros(4)
                mujoco.mju_mat2Quat(quat, np.ascontiguousarray(local[:3, :3]).reshape(9))
                mat = int(model.geom_matid[g])
                rgba = tuple(float(v) for v in (model.mat_rgba[mat] if mat >= 0 else model.geom_rgba[g]))
                shape = _shape(model, g)
                if shape is None:
                    continue
                kind, scale, tri = shape
                out.append(ObjectShape(name, index, kind, scale, tuple(float(v) for v in local[:3, 3]),
                                       tuple(float(v) for v in quat), rgba,  # type: ignore[arg-type]
                                       tri))
                index += 1
    return out


def _shape(model: mujoco.MjModel, g: int) -> tuple[str, tuple[float, float, float], np.ndarray | None] | None:
    kind, s = int(model.geom_type[g]), [float(v) for v in model.geom_size[g]]
    if kind == mujoco.mjtGeom.mjGEOM_BOX:
        return "box", (2 * s[0], 2 * s[1], 2 * s[2]), None
    if kind == mujoco.mjtGeom.mjGEOM_SPHERE:
        return "sphere", (2 * s[0],) * 3, None  # type: ignore[return-value]
    if kind == mujoco.mjtGeom.mjGEOM_CYLINDER:
        return "cylinder", (2 * s[0], 2 * s[0], 2 * s[1]), None
    tri = _triangles(model, g)
    if tri is None:
        return None
    return "triangles", (1.0, 1.0, 1.0), tri


def _pose(pos: np.ndarray, xmat: np.ndarray) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = np.asarray(xmat).reshape(3, 3)
    m[:3, 3] = pos
    return m
