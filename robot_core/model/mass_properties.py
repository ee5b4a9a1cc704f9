"""Mass properties of links from their shapes and a density, for descriptions that leave out <inertial>.

AGX computes missing mass properties from the visual elements (they usually describe the volume better than
simplified collision shapes); robot_core does the same when the ``density`` option is given.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np

from robot_core.model import validation
from robot_core.model.robot_model import Geometry, Inertial, Link, Pose, SourceRef


def shape_volume_and_inertia(geo: Geometry, density: float) -> tuple[float, np.ndarray, np.ndarray] | None:
    """(mass, centre of mass in the shape frame, inertia about the COM in the shape frame), or None if unknown."""
    if geo.kind == "box":
        x, y, z = (float(v) for v in geo.size)
        m = density * x * y * z
        return m, np.zeros(3), np.diag([m * (y * y + z * z), m * (x * x + z * z), m * (x * x + y * y)]) / 12.0
    if geo.kind == "cylinder":
        r, h = geo.radius, geo.length
        m = density * math.pi * r * r * h
        side = m * (3 * r * r + h * h) / 12.0
        return m, np.zeros(3), np.diag([side, side, 0.5 * m * r * r])
    if geo.kind == "sphere":
        r = geo.radius
        m = density * 4.0 / 3.0 * math.pi * r**3
        return m, np.zeros(3), np.eye(3) * 0.4 * m * r * r
    if geo.kind == "capsule":
        return _capsule(geo.radius, geo.length, density)
    if geo.kind == "mesh":
        bounds = mesh_bounds(geo.resolved_filename) if geo.resolved_filename else None
        if bounds is None:
            return None
        lo, hi = bounds[0] * geo.scale, bounds[1] * geo.scale
        lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
        box = shape_volume_and_inertia(Geometry("box", size=hi - lo), density)
        assert box is not None
        return box[0], 0.5 * (lo + hi), box[2]
    return None


def _capsule(r: float, h: float, density: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Cylinder of length h along z plus two hemispheres of radius r."""
    m_cyl = density * math.pi * r * r * h
    m_hemi = density * 2.0 / 3.0 * math.pi * r**3
    iz = 0.5 * m_cyl * r * r + 2 * 0.4 * m_hemi * r * r
    # Hemisphere about its own COM (3r/8 from the flat face), shifted to the capsule centre.
    d = h / 2 + 3 * r / 8
    hemi_side = (0.4 - (3.0 / 8.0) ** 2) * m_hemi * r * r + m_hemi * d * d
    ix = m_cyl * (3 * r * r + h * h) / 12.0 + 2 * hemi_side
    return m_cyl + 2 * m_hemi, np.zeros(3), np.diag([ix, ix, iz])


def mesh_bounds(path: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Axis-aligned bounds of an STL (binary or ASCII) or OBJ mesh; None for formats we do not read."""
    p = Path(path)
    suffix = p.suffix.lower()
    try:
        data = p.read_bytes()
    except OSError:
        return None
    verts: np.ndarray | None = None
    if suffix == ".stl":
        count = struct.unpack_from("<I", data, 80)[0] if len(data) >= 84 else -1
        if count >= 0 and len(data) == 84 + 50 * count:
            rec = np.frombuffer(data, dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")]),
                                count=count, offset=84)
            verts = rec["v"].reshape(-1, 3).astype(float)
        else:
            verts = _text_vertices(data, b"vertex")
    elif suffix == ".obj":
        verts = _text_vertices(data, b"v")
    if verts is None or len(verts) == 0:
        return None
    return verts.min(axis=0), verts.max(axis=0)


def _text_vertices(data: bytes, keyword: bytes) -> np.ndarray | None:
    rows = []
    for line in data.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0] == keyword:
            try:
                rows.append([float(v) for v in parts[1:4]])
            except ValueError:
                return None
    return np.array(rows) if rows else None


def combine(parts: list[tuple[float, np.ndarray, np.ndarray]]) -> Inertial:
    """Sum (mass, com, inertia about com) parts given in one frame into one Inertial (principal axes kept full)."""
    mass = sum(m for m, _, _ in parts)
    com = sum(m * c for m, c, _ in parts) / mass
    inertia = np.zeros((3, 3))
    for m, c, i in parts:
        d = c - com
        inertia += i + m * (float(d @ d) * np.eye(3) - np.outer(d, d))
    return Inertial(mass=float(mass), origin=Pose(np.asarray(com, dtype=float), np.zeros(3)),
                    inertia=0.5 * (inertia + inertia.T))


def link_inertial_from_visuals(link: Link, density: float) -> Inertial | None:
    """Inertial of a link made of its visual shapes at ``density``; None if no shape has a known volume."""
    parts = []
    ref = link.source if link.source.element else SourceRef(link.source.file, link.source.line, f"link '{link.name}'")
    for vis in link.visuals:
        props = shape_volume_and_inertia(vis.geometry, density)
        if props is None:
            validation.warn(f"cannot compute the volume of visual {vis.geometry.kind} "
                            f"'{vis.geometry.filename or vis.name}'; it is left out of the mass", ref)
            continue
        if vis.geometry.kind == "mesh":
            validation.warn(f"mass of mesh '{vis.geometry.filename}' approximated by its bounding box", ref)
        m, c, i = props
        rot = vis.origin.matrix()[:3, :3]
        parts.append((m, vis.origin.xyz + rot @ c, rot @ i @ rot.T))
    parts = [p for p in parts if p[0] > 0.0]
    if not parts:
        return None
    inertial = combine(parts)
    inertial.source = ref
    return inertial
