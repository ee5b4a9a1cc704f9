"""The shapes the web view draws for a robot: every visual geom of its MuJoCo model (meshes as loaded by the
builder, primitives tessellated), as triangles in the frame of the link that carries it, with its colour.

Reading the shapes from the compiled model rather than from the description means every format the simulator
loads (URDF, xacro, .g, MJCF) and every mesh file it reads are drawn the same way, and links merged on fixed joints
stay where MuJoCo puts them (in their body's frame, a body being named after its link).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_core.model.robot_model import RobotModel

VISUAL_GROUP = 1
COLLISION_GROUP = 3


@dataclass
class Shape:
    link: str  # the link (MuJoCo body) whose frame the vertices are in
    name: str  # unique within the robot: "<link>/<geom index>"
    vertices: np.ndarray  # (N, 3) float32, link frame
    faces: np.ndarray  # (M, 3) uint32
    color: tuple[float, float, float]
    opacity: float


def _quat_matrix(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _primitive(kind: int, size: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Triangles of a MuJoCo primitive (box half sizes, sphere/cylinder/capsule radius and half length)."""
    import mujoco
    import trimesh.creation as tc

    g = mujoco.mjtGeom
    if kind == g.mjGEOM_BOX:
        mesh = tc.box(extents=2 * size[:3])
    elif kind == g.mjGEOM_SPHERE:
        mesh = tc.icosphere(subdivisions=2, radius=size[0])
    elif kind == g.mjGEOM_CYLINDER:
        mesh = tc.cylinder(radius=size[0], height=2 * size[1], sections=24)
    elif kind == g.mjGEOM_CAPSULE:
        mesh = tc.capsule(radius=size[0], height=2 * size[1], count=[12, 12])
    elif kind == g.mjGEOM_ELLIPSOID:
        mesh = tc.icosphere(subdivisions=2, radius=1.0)
        mesh.vertices *= size[:3]
    else:
        return None
    return np.asarray(mesh.vertices), np.asarray(mesh.faces)


def robot_shapes(robot: RobotModel) -> list[Shape]:
    """The visual shapes of ``robot`` (its collision shapes for links that have no visual)."""
    import mujoco

    from robot_core.physics.engine import PhysicsEngine

    model = PhysicsEngine(robot, include_visuals=True).model
    with_visual = {int(model.geom_bodyid[i]) for i in range(model.ngeom) if model.geom_group[i] == VISUAL_GROUP}
    shapes = []
    for i in range(model.ngeom):
        body = int(model.geom_bodyid[i])
        group = int(model.geom_group[i])
        if body == 0 or not (group == VISUAL_GROUP or (group in (0, COLLISION_GROUP) and body not in with_visual)):
            continue
        if model.geom_type[i] == mujoco.mjtGeom.mjGEOM_MESH:
            mid = int(model.geom_dataid[i])
            va, vn = int(model.mesh_vertadr[mid]), int(model.mesh_vertnum[mid])
            fa, fn = int(model.mesh_faceadr[mid]), int(model.mesh_facenum[mid])
            tri = (np.array(model.mesh_vert[va:va + vn], float), np.array(model.mesh_face[fa:fa + fn]))
        else:
            tri = _primitive(int(model.geom_type[i]), np.array(model.geom_size[i]))
        if tri is None:
            continue
        verts = tri[0] @ _quat_matrix(np.array(model.geom_quat[i])).T + np.array(model.geom_pos[i])
        mat = int(model.geom_matid[i])
        rgba = np.array(model.mat_rgba[mat] if mat >= 0 else model.geom_rgba[i], float)
        shapes.append(Shape(mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, body), f"{i}", verts.astype(np.float32),
                            np.asarray(tri[1], np.uint32), (float(rgba[0]), float(rgba[1]), float(rgba[2])),
                            float(rgba[3])))
    return shapes
