"""A transform tree as /tf and /tf_static build it (child -> parent, pose), and each frame's pose in the tree's
root frame: what the web view needs to place links, objects and sensors. No ROS: the node feeds it numbers."""

from __future__ import annotations

import threading

import numpy as np


def pose_matrix(translation: tuple[float, float, float], quat_xyzw: tuple[float, float, float, float]) -> np.ndarray:
    x, y, z, w = quat_xyzw
    n = np.sqrt(x * x + y * y + z * z + w * w) or 1.0
    x, y, z, w = x / n, y / n, z / n, w / n
    m = np.eye(4)
    m[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                 [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                 [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    m[:3, 3] = translation
    return m


def matrix_wxyz(m: np.ndarray) -> tuple[float, float, float, float]:
    """The rotation of a 4x4 pose as a unit quaternion (w, x, y, z)."""
    r = m[:3, :3]
    t = np.trace(r)
    if t > 0:
        s = np.sqrt(t + 1.0) * 2
        q = (0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s)
    elif r[0, 0] > r[1, 1] and r[0, 0] > r[2, 2]:
        s = np.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2]) * 2
        q = ((r[2, 1] - r[1, 2]) / s, 0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s)
    elif r[1, 1] > r[2, 2]:
        s = np.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2]) * 2
        q = ((r[0, 2] - r[2, 0]) / s, (r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s)
    else:
        s = np.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1]) * 2
        q = ((r[1, 0] - r[0, 1]) / s, (r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s)
    return tuple(float(v) for v in q)  # type: ignore[return-value]


class TransformTree:
    """Thread-safe: ``set`` from message callbacks, ``poses`` from the drawing loop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._edges: dict[str, tuple[str, np.ndarray]] = {}
        self.version = 0

    def set(self, parent: str, child: str, pose: np.ndarray) -> None:
        parent, child = parent.lstrip("/"), child.lstrip("/")
        if parent == child:
            return
        with self._lock:
            self._edges[child] = (parent, pose)
            self.version += 1

    def frames(self) -> set[str]:
        with self._lock:
            return set(self._edges) | {p for p, _ in self._edges.values()}

    def poses(self, root: str | None = None) -> dict[str, np.ndarray]:
        """Every frame's pose in ``root`` (None: the root of the largest tree); frames not connected to it are
        left out, and a loop in the edges ends at the frame where it closes."""
        with self._lock:
            edges = dict(self._edges)
        cache: dict[str, np.ndarray] = {}
        roots: dict[str, int] = {}

        def top(frame: str) -> str:
            seen = set()
            while frame in edges and frame not in seen:
                seen.add(frame)
                frame = edges[frame][0]
            return frame

        for child in edges:
            r = top(child)
            roots[r] = roots.get(r, 0) + 1
        if root is None:
            if not roots:
                return {}
            root = max(roots, key=lambda r: roots[r])

        def pose(frame: str, depth: int = 0) -> np.ndarray | None:
            if frame == root:
                return np.eye(4)
            if frame in cache:
                return cache[frame]
            if frame not in edges or depth > 1000:
                return None
            parent, local = edges[frame]
            up = pose(parent, depth + 1)
            if up is None:
                return None
            cache[frame] = up @ local
            return cache[frame]

        out = {root: np.eye(4)}
        for frame in edges:
            p = pose(frame)
            if p is not None:
                out[frame] = p
        return out
