"""rviz markers as the web view draws them: a visualization_msgs/Marker as plain fields (:class:`MarkerData`, the
node converts the message), turned into something the page can draw in the marker's frame (a triangle mesh, line
segments, points or a text label), and the set of live markers with rviz's actions and lifetimes
(:class:`MarkerStore`).

Why here and not in the node: what each marker type means (scales, per-point colours, arrows given by two points
or by a pose) is the part worth testing without ROS; the node only copies message fields.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

from robot_core.view.scene import Shape, marker_shape

# visualization_msgs/Marker type and action constants
ARROW, CUBE, SPHERE, CYLINDER, LINE_STRIP, LINE_LIST, CUBE_LIST, SPHERE_LIST, POINTS, TEXT_VIEW_FACING, \
    MESH_RESOURCE, TRIANGLE_LIST, ARROW_STRIP = range(13)
ADD, DELETE, DELETEALL = 0, 2, 3
TYPE_NAMES = {ARROW: "ARROW", CUBE: "CUBE", SPHERE: "SPHERE", CYLINDER: "CYLINDER", LINE_STRIP: "LINE_STRIP",
              LINE_LIST: "LINE_LIST", CUBE_LIST: "CUBE_LIST", SPHERE_LIST: "SPHERE_LIST", POINTS: "POINTS",
              TEXT_VIEW_FACING: "TEXT_VIEW_FACING", MESH_RESOURCE: "MESH_RESOURCE", TRIANGLE_LIST: "TRIANGLE_LIST",
              ARROW_STRIP: "ARROW_STRIP"}
MESH_KINDS = {CUBE: "box", SPHERE: "sphere", CYLINDER: "cylinder", TRIANGLE_LIST: "triangles",
              MESH_RESOURCE: "mesh"}


@dataclass
class MarkerData:
    """The fields of one visualization_msgs/Marker the view uses (pose as a 4x4 in ``frame``; colours 0..1)."""

    frame: str
    ns: str
    id: int
    type: int
    action: int = ADD
    pose: np.ndarray = field(default_factory=lambda: np.eye(4))
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    color: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)
    points: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    colors: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))  # per point, or empty
    text: str = ""
    mesh_resource: str = ""
    lifetime: float = 0.0  # seconds; 0 = until deleted

    @property
    def key(self) -> tuple[str, int]:
        return (self.ns, self.id)


@dataclass
class Lines:
    """Line segments (LINE_STRIP, LINE_LIST) in ``link``'s frame; ``width`` in metres, as rviz's scale.x."""

    link: str
    name: str
    segments: np.ndarray  # (N, 2, 3)
    colors: np.ndarray  # (N, 2, 3) uint8
    width: float


@dataclass
class Points:
    """Points (POINTS) in ``link``'s frame; ``size`` in metres, as rviz's scale.x."""

    link: str
    name: str
    points: np.ndarray  # (N, 3)
    colors: np.ndarray  # (N, 3) uint8
    size: float


@dataclass
class Text:
    """A label (TEXT_VIEW_FACING) at ``position`` in ``link``'s frame, ``height`` metres tall (rviz's scale.z)."""

    link: str
    name: str
    position: np.ndarray
    text: str
    height: float


Drawable = Shape | Lines | Points | Text


def _local_points(m: MarkerData) -> np.ndarray:
    pts = np.asarray(m.points, float).reshape(-1, 3)
    return pts @ m.pose[:3, :3].T + m.pose[:3, 3]


def _point_colors(m: MarkerData, n: int) -> np.ndarray:
    """(n, 3) uint8: the per-point colours when there is one per point (as rviz), else the marker's colour."""
    colors = np.asarray(m.colors, float).reshape(-1, 4)
    rgb = colors[:, :3] if len(colors) == n else np.tile(np.asarray(m.color[:3], float), (n, 1))
    return np.clip(np.round(rgb * 255), 0, 255).astype(np.uint8)


def _arrow_mesh(start: np.ndarray, end: np.ndarray, shaft: float, head: float,
                head_length: float) -> tuple[np.ndarray, np.ndarray] | None:
    """A cylinder shaft and a cone head from ``start`` to ``end`` (diameters, head length in metres)."""
    import trimesh.creation as tc

    axis = end - start
    length = float(np.linalg.norm(axis))
    if length < 1e-9 or shaft <= 0 or head <= 0:
        return None
    head_length = min(head_length, length)
    parts = []
    if length - head_length > 1e-9:
        cyl = tc.cylinder(radius=shaft / 2, height=length - head_length, sections=16)
        shift = np.array([0.0, 0.0, (length - head_length) / 2])
        parts.append((np.asarray(cyl.vertices) + shift, np.asarray(cyl.faces)))
    cone = tc.cone(radius=head / 2, height=head_length, sections=16)
    parts.append((np.asarray(cone.vertices) + np.array([0.0, 0.0, length - head_length]), np.asarray(cone.faces)))
    verts, faces, offset = [], [], 0
    for v, f in parts:
        verts.append(v)
        faces.append(f + offset)
        offset += len(v)
    v = np.vstack(verts)
    # rotate +z onto the arrow's direction
    z = axis / length
    ref = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(ref, z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    return v @ np.stack([x, y, z], axis=1).T + start, np.vstack(faces)


def _shape(m: MarkerData, name: str, verts: np.ndarray, faces: np.ndarray,
           rgb: Sequence[float] | None = None) -> Shape:
    c = m.color if rgb is None else (*rgb, m.color[3])
    return Shape(m.frame, name, np.asarray(verts, np.float32), np.asarray(faces, np.uint32),
                 (float(c[0]), float(c[1]), float(c[2])), float(m.color[3]))


def _list_shapes(m: MarkerData, name: str) -> list[Drawable]:
    """CUBE_LIST / SPHERE_LIST: one box or sphere of ``scale`` per point, one mesh per distinct colour."""
    import trimesh.creation as tc

    sx, sy, sz = m.scale
    if m.type == CUBE_LIST:
        unit = tc.box(extents=(sx, sy, sz))
        base_v, base_f = np.asarray(unit.vertices), np.asarray(unit.faces)
    else:
        unit = tc.icosphere(subdivisions=1, radius=1.0)
        base_v, base_f = np.asarray(unit.vertices) * (sx / 2, sy / 2, sz / 2), np.asarray(unit.faces)
    base_v = base_v @ m.pose[:3, :3].T  # each element is oriented as the marker
    pts = _local_points(m)
    colors = _point_colors(m, len(pts))
    out: list[Drawable] = []
    for k, rgb in enumerate(np.unique(colors, axis=0) if len(pts) else []):
        sel = pts[np.all(colors == rgb, axis=1)]
        verts = (sel[:, None, :] + base_v[None, :, :]).reshape(-1, 3)
        faces = (base_f[None, :, :] + (np.arange(len(sel)) * len(base_v))[:, None, None]).reshape(-1, 3)
        out.append(_shape(m, f"{name}_c{k}", verts, faces, tuple(float(c) / 255 for c in rgb)))
    return out


def marker_drawables(m: MarkerData, name: str,
                     resolve_mesh: Callable[[str], str | None] = lambda uri: None) -> list[Drawable]:
    """What the page draws for one ADD marker (empty for a type not drawn, a mesh not found, or no points).

    ``name`` must be unique per marker (a scene node name); ``resolve_mesh`` turns a MESH_RESOURCE URI
    (``package://``, ``file://``) into a local file, or None (the marker is then skipped with a warning)."""
    sx, sy, sz = (float(v) for v in m.scale)
    if m.type in MESH_KINDS:
        mesh_file = None
        if m.type == MESH_RESOURCE:
            mesh_file = resolve_mesh(m.mesh_resource) if m.mesh_resource else None
            if mesh_file is None:
                warnings.warn(f"marker {m.ns}/{m.id} in frame '{m.frame}': mesh resource '{m.mesh_resource}' not "
                              "found (package:// resolves through --package-dirs, ROS_PACKAGE_PATH, the ament index, "
                              "the robot file's folders)", stacklevel=2)
                return []
        tri = np.asarray(m.points, float).reshape(-1, 3) if m.type == TRIANGLE_LIST else None
        shape = marker_shape(m.frame, name, MESH_KINDS[m.type], (sx, sy, sz), m.pose, m.color, triangles=tri,
                             mesh_file=mesh_file)
        if shape is not None and m.type == TRIANGLE_LIST and len(m.colors) == len(tri):  # type: ignore[arg-type]
            shape.color = tuple(float(c) for c in np.mean(np.asarray(m.colors, float)[:, :3], axis=0))
        return [shape] if shape is not None else []
    if m.type == ARROW:
        if len(m.points) >= 2:  # start and end in the marker's frame: scale = shaft and head diameters, head length
            start, end = _local_points(m)[:2]
            head_length = sz if sz > 0 else 0.23 * float(np.linalg.norm(end - start))
            tri = _arrow_mesh(start, end, sx, sy, head_length)
        else:  # along the pose's x axis: scale = length, width, height
            start = m.pose[:3, 3]
            end = start + m.pose[:3, 0] * sx
            tri = _arrow_mesh(start, end, 0.5 * min(sy, sz), min(sy, sz), 0.23 * sx)
        return [_shape(m, name, *tri)] if tri is not None else []
    if m.type == ARROW_STRIP:  # an arrow from each point to the next, scaled as a two-point ARROW
        pts = _local_points(m)
        arrows = [tri for a, b in pairwise(pts)
                  if (tri := _arrow_mesh(a, b, sx, sy, sz if sz > 0 else 0.23 * float(np.linalg.norm(b - a))))]
        if not arrows:
            return []
        offsets = np.cumsum([0] + [len(v) for v, _ in arrows[:-1]])
        return [_shape(m, name, np.vstack([v for v, _ in arrows]),
                       np.vstack([f + k for (_, f), k in zip(arrows, offsets, strict=True)]))]
    if m.type in (LINE_STRIP, LINE_LIST):
        pts = _local_points(m)
        colors = _point_colors(m, len(pts)).astype(np.uint8)
        if m.type == LINE_STRIP:
            idx = np.stack([np.arange(len(pts) - 1), np.arange(1, len(pts))], axis=1) if len(pts) >= 2 else \
                np.zeros((0, 2), int)
        else:
            idx = np.arange(len(pts) // 2 * 2).reshape(-1, 2)
        if not len(idx):
            return []
        return [Lines(m.frame, name, pts[idx].astype(np.float32), colors[idx], sx if sx > 0 else 0.01)]
    if m.type == POINTS:
        pts = _local_points(m)
        if not len(pts):
            return []
        return [Points(m.frame, name, pts.astype(np.float32), _point_colors(m, len(pts)), sx if sx > 0 else 0.01)]
    if m.type in (CUBE_LIST, SPHERE_LIST):
        return _list_shapes(m, name)
    if m.type == TEXT_VIEW_FACING:
        if not m.text:
            return []
        return [Text(m.frame, name, m.pose[:3, 3].copy(), m.text, sz if sz > 0 else 0.1)]
    return []


@dataclass
class _Live:
    drawables: list[Drawable]
    expires: float  # monotonic seconds; inf = never


class MarkerStore:
    """The live markers of every topic, keyed (topic, ns, id), with rviz's actions: ADD/MODIFY replaces a marker,
    DELETE removes one, DELETEALL removes every marker of that topic (rviz: of that display); a marker with a
    lifetime disappears that long after it arrived unless replaced. ``version`` changes whenever what is drawn
    does, so the caller redraws only then."""

    def __init__(self, resolve_mesh: Callable[[str], str | None] = lambda uri: None) -> None:
        self.resolve_mesh = resolve_mesh
        self._live: dict[tuple[str, str, int], _Live] = {}
        self.version = 0

    def apply(self, topic: str, markers: Iterable[MarkerData], now: float) -> None:
        """One MarkerArray of ``topic``, in order, received at ``now`` (monotonic seconds)."""
        for m in markers:
            if m.action == DELETEALL:
                for key in [k for k in self._live if k[0] == topic]:
                    del self._live[key]
            elif m.action == DELETE:
                self._live.pop((topic, m.ns, m.id), None)
            elif m.action == ADD or m.action == 1:  # 1: ROS 1's MODIFY, deprecated, still sent by some nodes
                name = "".join(c if c.isalnum() or c in "_.:-" else "_" for c in f"{topic}:{m.ns}:{m.id}")
                drawables = marker_drawables(m, name, self.resolve_mesh)
                lifetime = m.lifetime if m.lifetime > 0 and math.isfinite(m.lifetime) else math.inf
                if drawables:
                    self._live[(topic, m.ns, m.id)] = _Live(drawables, now + lifetime)
                else:
                    self._live.pop((topic, m.ns, m.id), None)
            else:
                continue
            self.version += 1

    def expire(self, now: float) -> bool:
        """Drop the markers whose lifetime has passed; True when any was dropped."""
        gone = [k for k, live in self._live.items() if live.expires <= now]
        for key in gone:
            del self._live[key]
        if gone:
            self.version += 1
        return bool(gone)

    def drawables(self) -> list[Drawable]:
        return [d for live in self._live.values() for d in live.drawables]

    def live_keys(self) -> list[tuple[str, str, int]]:
        return list(self._live)
