"""Minimal COLLADA (.dae) triangle reader, so DAE meshes reach MuJoCo without extra dependencies.

MuJoCo loads STL/OBJ/MSH only. URDFs (Panda's visuals, many ROS packages) use DAE, so we read the
triangle soup ourselves: ``<triangles>``, ``<polylist>`` and ``<polygons>`` (fan-triangulated), node
transforms of the visual scene (``<matrix>``, ``<translate>``, ``<rotate>``, ``<scale>``) and the
``<unit meter>`` scale. Materials, textures, normals and ``up_axis`` are ignored (ROS tools ignore
``up_axis`` as well). Only geometry is needed for collision and plain rendering.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np


class ColladaError(ValueError):
    """A DAE file that cannot be turned into triangles; the message names the file and element."""


@dataclass
class TriangleMesh:
    vertices: np.ndarray  # (n, 3) float
    faces: np.ndarray  # (m, 3) int


def _strip_ns(root: ET.Element) -> None:
    for el in root.iter():
        if isinstance(el.tag, str) and "}" in el.tag:
            el.tag = el.tag.split("}", 1)[1]


def _floats(text: str | None) -> np.ndarray:
    return np.array(text.split(), dtype=float) if text and text.strip() else np.zeros(0)


def _ints(text: str | None) -> np.ndarray:
    return np.array(text.split(), dtype=np.int64) if text and text.strip() else np.zeros(0, dtype=np.int64)


def _node_matrix(node: ET.Element) -> np.ndarray:
    """Compose a node's transform elements in document order (COLLADA post-multiplies)."""
    m = np.eye(4)
    for child in node:
        t = np.eye(4)
        if child.tag == "matrix":
            t = _floats(child.text).reshape(4, 4)
        elif child.tag == "translate":
            t[:3, 3] = _floats(child.text)[:3]
        elif child.tag == "scale":
            t[:3, :3] = np.diag(_floats(child.text)[:3])
        elif child.tag == "rotate":
            v = _floats(child.text)
            axis, ang = v[:3], math.radians(v[3])
            n = np.linalg.norm(axis)
            if n > 0:
                k = axis / n
                kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
                t[:3, :3] = np.eye(3) + math.sin(ang) * kx + (1 - math.cos(ang)) * kx @ kx
        else:
            continue
        m = m @ t
    return m


def _geometry_triangles(geom: ET.Element, path: str) -> tuple[np.ndarray, np.ndarray]:
    mesh = geom.find("mesh")
    if mesh is None:
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)
    sources: dict[str, np.ndarray] = {}
    for src in mesh.findall("source"):
        arr = _floats(src.findtext("float_array"))
        acc = src.find("technique_common/accessor")
        stride = int(acc.get("stride", "3")) if acc is not None else 3
        sources[src.get("id", "")] = arr.reshape(-1, stride)[:, :3] if stride >= 3 else arr.reshape(-1, stride)
    vert_el = mesh.find("vertices")
    vert_map: dict[str, str] = {}
    if vert_el is not None:
        for inp in vert_el.findall("input"):
            if inp.get("semantic") == "POSITION":
                vert_map[vert_el.get("id", "")] = inp.get("source", "").lstrip("#")
    all_v: list[np.ndarray] = []
    all_f: list[np.ndarray] = []
    n_off = 0
    for prim in list(mesh):
        if prim.tag not in ("triangles", "polylist", "polygons"):
            continue
        inputs = prim.findall("input")
        if not inputs:
            continue
        stride = max(int(i.get("offset", "0")) for i in inputs) + 1
        pos_input = next((i for i in inputs if i.get("semantic") == "VERTEX"), None)
        if pos_input is None:
            continue
        src_id = pos_input.get("source", "").lstrip("#")
        src_id = vert_map.get(src_id, src_id)
        if src_id not in sources:
            raise ColladaError(f"{path}: <{prim.tag}> refers to missing source '{src_id}'")
        positions = sources[src_id]
        off = int(pos_input.get("offset", "0"))
        if prim.tag == "triangles":
            idx = np.concatenate([_ints(p.text) for p in prim.findall("p")]) if prim.findall("p") else np.zeros(0)
            tri = idx.reshape(-1, stride)[:, off].reshape(-1, 3)
        else:
            polys: list[np.ndarray] = []
            if prim.tag == "polylist":
                counts = _ints(prim.findtext("vcount"))
                idx = _ints(prim.findtext("p")).reshape(-1, stride)[:, off]
                starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
                polys = [idx[s : s + c] for s, c in zip(starts, counts, strict=True)]
            else:
                polys = [_ints(p.text).reshape(-1, stride)[:, off] for p in prim.findall("p")]
            fan = [[poly[0], poly[k], poly[k + 1]] for poly in polys for k in range(1, len(poly) - 1)]
            tri = np.array(fan, dtype=np.int64).reshape(-1, 3)
        if tri.size == 0:
            continue
        all_v.append(positions)
        all_f.append(tri + n_off)
        n_off += len(positions)
    if not all_v:
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)
    return np.vstack(all_v), np.vstack(all_f)


def read_collada(path: str) -> TriangleMesh:
    """All triangles of the file's visual scene, in the file's root frame, in metres."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise ColladaError(f"{path}: cannot read COLLADA file: {exc}") from exc
    _strip_ns(root)
    unit_el = root.find("asset/unit")
    unit = float(unit_el.get("meter", "1")) if unit_el is not None else 1.0
    geoms = {g.get("id", ""): g for g in root.findall("library_geometries/geometry")}
    cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    verts: list[np.ndarray] = []
    faces: list[np.ndarray] = []
    count = 0

    def emit(gid: str, m: np.ndarray) -> None:
        nonlocal count
        if gid not in geoms:
            raise ColladaError(f"{path}: <instance_geometry url='#{gid}'> names no geometry")
        if gid not in cache:
            cache[gid] = _geometry_triangles(geoms[gid], path)
        v, f = cache[gid]
        if len(f) == 0:
            return
        vw = v @ m[:3, :3].T + m[:3, 3]
        verts.append(vw)
        # A mirroring transform flips the winding; keep faces outward.
        faces.append((f[:, ::-1] if np.linalg.det(m[:3, :3]) < 0 else f) + count)
        count += len(v)

    def walk(node: ET.Element, parent: np.ndarray) -> None:
        m = parent @ _node_matrix(node)
        for inst in node.findall("instance_geometry"):
            emit(inst.get("url", "").lstrip("#"), m)
        for child in node.findall("node"):
            walk(child, m)

    scene_url = None
    inst_scene = root.find("scene/instance_visual_scene")
    if inst_scene is not None:
        scene_url = inst_scene.get("url", "").lstrip("#")
    scenes = root.findall("library_visual_scenes/visual_scene")
    scene = next((s for s in scenes if s.get("id") == scene_url), scenes[0] if scenes else None)
    if scene is not None:
        for node in scene.findall("node"):
            walk(node, np.eye(4))
    else:
        # No scene: take every geometry untransformed.
        for gid in geoms:
            emit(gid, np.eye(4))
    if not faces:
        raise ColladaError(f"{path}: no triangles found")
    return TriangleMesh(np.vstack(verts) * unit, np.vstack(faces))
