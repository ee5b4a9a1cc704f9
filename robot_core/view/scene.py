"""The shapes the web view draws: for a robot, every visual geom of its MuJoCo model (meshes as loaded by the
builder, primitives tessellated), as triangles in the frame of the link that carries it, with its colour.

Reading the shapes from the compiled model rather than from the description means every format the simulator
loads (URDF, xacro, .g, MJCF) and every mesh file it reads are drawn the same way, and links merged on fixed joints
stay where MuJoCo puts them (in their body's frame, a body being named after its link). For the world's objects
(and anything else a node publishes as rviz markers), the shape of a visualization_msgs/Marker in its frame
(:func:`marker_shape`): the simulator's ``~/world_markers`` are drawn that way.
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


MARKER_KINDS = ("box", "sphere", "cylinder", "triangles", "mesh")


def marker_shape(frame: str, name: str, kind: str, scale: tuple[float, float, float], pose: np.ndarray,
                 rgba: tuple[float, float, float, float], *, triangles: np.ndarray | None = None,
                 mesh_file: str | None = None) -> Shape | None:
    """The shape of one rviz marker (visualization_msgs/Marker: CUBE, SPHERE, CYLINDER, TRIANGLE_LIST,
    MESH_RESOURCE of a local file) in ``frame``, ``pose`` being the marker's 4x4 pose in that frame and ``scale``
    rviz's (full extents, diameters). None for a kind not drawn or a mesh that cannot be read."""
    import trimesh
    import trimesh.creation as tc

    sx, sy, sz = (float(v) for v in scale)
    if kind == "box":
        verts, faces = _mesh_arrays(tc.box(extents=(sx, sy, sz)))
    elif kind == "sphere":
        verts, faces = _mesh_arrays(tc.icosphere(subdivisions=2, radius=1.0))
        verts = verts * (sx / 2, sy / 2, sz / 2)
    elif kind == "cylinder":
        verts, faces = _mesh_arrays(tc.cylinder(radius=1.0, height=1.0, sections=24))
        verts = verts * (sx / 2, sy / 2, sz)
    elif kind == "triangles" and triangles is not None and len(triangles) >= 3:
        n = len(triangles) // 3 * 3
        verts = np.asarray(triangles[:n], float) * (sx, sy, sz)
        faces = np.arange(n).reshape(-1, 3)
    elif kind == "mesh" and mesh_file:
        try:
            verts, faces = _mesh_arrays(trimesh.load(mesh_file, force="mesh"))
        except (OSError, ValueError) as exc:
            import warnings

            warnings.warn(f"marker {name}: cannot read mesh {mesh_file}: {exc}", stacklevel=2)
            return None
        verts = verts * (sx, sy, sz)
    else:
        return None
    verts = verts @ pose[:3, :3].T + pose[:3, 3]
    return Shape(frame, name, verts.astype(np.float32), np.asarray(faces, np.uint32),
                 (float(rgba[0]), float(rgba[1]), float(rgba[2])), float(rgba[3]))


def _mesh_arrays(mesh: object) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(mesh.vertices, float), np.asarray(mesh.faces)  # type: ignore[attr-defined]
