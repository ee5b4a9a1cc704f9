"""The web page of ``robot-core view``: a viser server (it serves its own client; no internet needed) with the
robot's shapes, frames, arrows and paths in the 3D scene and a control panel beside it.

Everything here is plain Python over viser; the ROS side (:mod:`robot_core.nodes.view`) calls the ``show_*``
methods with numbers and gets the user's clicks through the callbacks it passes in. Each link is one scene node
(a frame) with its shapes as children, so a pose update is one message per link, sent in one batch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from robot_core.view.markers import Drawable, Lines, Points, Text
from robot_core.view.scene import Shape
from robot_core.view.transforms import matrix_wxyz

PATH_POINTS = 2000  # the traced tool path keeps about its last points (whole chunks are dropped)
# The traced path is drawn as chunks of this many segments, one scene node each: a new point re-sends only the
# open (newest) chunk, not the whole path (2000 points re-sent at 30 Hz cost the view and the browser a core).
PATH_CHUNK = 100
# The paths are as wide on screen at any zoom (a few mm of the world's width were a pixel or less from afar); the
# goal is a band wider than the traced path, so where the tool followed it both stay visible.
PATH_PIXELS = 2.0
GOAL_PIXELS = 7.0


@dataclass
class SliderJoint:
    name: str
    lower: float
    upper: float


class ViewPage:
    """One viser server; methods are safe to call from any thread."""

    def __init__(self, shapes: Sequence[Shape], *, host: str = "127.0.0.1", port: int = 8080,
                 on_sim_button: Callable[[str], None] | None = None,
                 on_sliders: Callable[[str, list[float]], None] | None = None) -> None:
        import viser

        self.server = viser.ViserServer(host=host, port=port, verbose=False)
        self.port = self.server.get_port()
        self.server.scene.set_up_direction("+z")
        self._lock = threading.Lock()
        self._links: dict[str, object] = {}
        self._sent: dict[str, np.ndarray] = {}
        self._frames: dict[str, object] = {}
        self._objects: dict[str, object] = {}
        self._objects_sent: dict[str, np.ndarray] = {}
        self._items: dict[str, tuple[Drawable, object]] = {}
        self._arrows: dict[str, object] = {}
        self._path: list[np.ndarray] = []
        self._path_chunks: list[object] = []  # scene nodes of the path's closed chunks, oldest first
        self._path_handle: object | None = None  # the open chunk: self._path[self._open_start:]
        self._open_start = 0
        self._chunk_count = 0  # names the chunks' scene nodes
        self._goal_handle: object | None = None
        self._images: dict[str, object] = {}
        self.on_sliders = on_sliders
        self._sliders: dict[tuple[str, str], object] = {}
        self.server.scene.add_grid("/grid", width=4.0, height=4.0, cell_size=0.25, section_size=1.0)
        self.set_shapes(shapes)
        gui = self.server.gui
        self._status = gui.add_markdown("**robot_core view**: starting")
        with gui.add_folder("Simulator"):
            for label in ("pause", "resume", "step", "reset"):
                button = gui.add_button(label)
                button.on_click(lambda _e, name=label: on_sim_button and on_sim_button(name))
        with gui.add_folder("Controllers"):
            self._controllers = gui.add_markdown("(waiting for /controller_manager/list_controllers)")
        self._slider_folder = gui.add_folder("Joint sliders")
        with self._slider_folder:
            self._slider_note = gui.add_markdown("(no active forward position or gripper action controller)")
        self._image_folder = gui.add_folder("Cameras")

    def set_shapes(self, shapes: Sequence[Shape]) -> None:
        """Replace the robot's shapes (a new /robot_description)."""
        with self._lock:
            for handle in self._links.values():
                handle.remove()  # type: ignore[attr-defined]
            self._links = {}
            self._sent = {}
            for shape in shapes:
                if shape.link not in self._links:
                    self._links[shape.link] = self.server.scene.add_frame(f"/robot/{shape.link}", show_axes=False)
                self.server.scene.add_mesh_simple(
                    f"/robot/{shape.link}/{shape.name}", shape.vertices, shape.faces, color=shape.color,
                    opacity=shape.opacity if shape.opacity < 1.0 else None)

    @property
    def links(self) -> list[str]:
        with self._lock:
            return list(self._links)

    def show_status(self, text: str) -> None:
        self._status.content = text  # type: ignore[attr-defined]

    def show_link_poses(self, poses: dict[str, np.ndarray]) -> int:
        """Place every link that has a pose (4x4 in the fixed frame); returns how many have one. Only links that
        moved since the last call are sent: a robot at rest costs the browser nothing."""
        with self._lock, self.server.atomic():
            return self._place(self._links, self._sent, poses)

    def set_object_shapes(self, drawables: Sequence[Drawable]) -> None:
        """Draw exactly ``drawables`` in frames other than links (the world's objects and any rviz markers: meshes,
        lines, points, labels): one scene node per frame, hidden until its frame has a pose. Only what changed is
        sent (a drawable is kept while the same object is passed again), so a stream of markers redraws only the
        markers that came."""
        with self._lock:
            wanted = {d.name: d for d in drawables}
            for name in [n for n, (d, _) in self._items.items() if wanted.get(n) is not d]:
                self._items.pop(name)[1].remove()  # type: ignore[attr-defined]
            for name, d in wanted.items():
                if name in self._items:
                    continue
                if d.link not in self._objects:
                    self._objects[d.link] = self.server.scene.add_frame(f"/objects/{d.link or '_'}",
                                                                        show_axes=False, visible=d.link == "")
                self._items[name] = (d, self._add_drawable(f"/objects/{d.link or '_'}/{name}", d))
            used = {d.link for d in wanted.values()}
            for frame in [f for f in self._objects if f not in used]:
                self._objects.pop(frame).remove()  # type: ignore[attr-defined]
                self._objects_sent.pop(frame, None)

    def _add_drawable(self, path: str, d: Drawable) -> object:
        scene = self.server.scene
        if isinstance(d, Lines):
            return scene.add_line_segments(path, d.segments, d.colors, thickness=d.width)
        if isinstance(d, Points):
            return scene.add_point_cloud(path, d.points, d.colors, point_size=d.size, point_shape="circle")
        if isinstance(d, Text):
            return scene.add_label(path, d.text, position=tuple(float(v) for v in d.position),
                                   font_size_mode="scene", font_scene_height=d.height, anchor="center-center")
        return scene.add_mesh_simple(path, d.vertices, d.faces, color=d.color,
                                     opacity=d.opacity if d.opacity < 1.0 else None)

    @property
    def object_items(self) -> dict[str, tuple[Drawable, object]]:
        """Name -> (drawable, its viser handle) of everything drawn by :meth:`set_object_shapes`."""
        with self._lock:
            return dict(self._items)

    @property
    def object_frames(self) -> list[str]:
        with self._lock:
            return list(self._objects)

    def show_object_poses(self, poses: dict[str, np.ndarray]) -> int:
        """Place the objects' frames that have a pose (as :meth:`show_link_poses`); returns how many."""
        with self._lock, self.server.atomic():
            return self._place(self._objects, self._objects_sent, poses)

    @staticmethod
    def _place(handles: dict[str, object], sent: dict[str, np.ndarray], poses: dict[str, np.ndarray]) -> int:
        placed = 0
        for frame, handle in handles.items():
            m = poses.get(frame)
            if m is None:
                continue
            placed += 1
            last = sent.get(frame)
            if last is not None and np.allclose(last, m, rtol=0.0, atol=1e-6):
                continue
            sent[frame] = m.copy()
            handle.position = m[:3, 3]  # type: ignore[attr-defined]
            handle.wxyz = matrix_wxyz(m)  # type: ignore[attr-defined]
            if last is None:
                handle.visible = True  # type: ignore[attr-defined]
        return placed

    def show_frames(self, poses: dict[str, np.ndarray], length: float = 0.08) -> None:
        """Axes at every named frame (sensor frames, world objects): added once, moved after."""
        with self._lock, self.server.atomic():
            for name, m in poses.items():
                handle = self._frames.get(name)
                if handle is None:
                    handle = self.server.scene.add_frame(f"/frames/{name}", axes_length=length,
                                                         axes_radius=length / 20)
                    self.server.scene.add_label(f"/frames/{name}/label", name)
                    self._frames[name] = handle
                handle.position = m[:3, 3]  # type: ignore[attr-defined]
                handle.wxyz = matrix_wxyz(m)  # type: ignore[attr-defined]

    def show_arrow(self, name: str, start: np.ndarray, vector: np.ndarray, color: tuple[int, int, int]) -> None:
        """One arrow (a force in N drawn at 1 cm/N, capped at 0.5 m), replaced on each call."""
        length = float(np.linalg.norm(vector))
        end = start + (vector / length * min(0.5, 0.01 * length) if length > 1e-9 else 0.0)
        with self._lock:
            old = self._arrows.pop(name, None)
            if old is not None:
                old.remove()  # type: ignore[attr-defined]
            self._arrows[name] = self.server.scene.add_arrows(
                f"/arrows/{name}", np.array([[start, end]], np.float32), color, shaft_radius=0.004,
                head_radius=0.012, head_length=0.02)

    def trace(self, point: np.ndarray) -> None:
        """Add a point to the traced tool path."""
        with self._lock:
            if self._path and np.linalg.norm(self._path[-1] - point) < 0.002:
                return
            self._path.append(np.asarray(point, np.float32))
            if len(self._path) - 1 - self._open_start > PATH_CHUNK:
                # the open chunk holds PATH_CHUNK segments as drawn: it stays; a new one starts at its last point
                if self._path_handle is not None:
                    self._path_chunks.append(self._path_handle)
                    self._path_handle = None
                self._open_start += PATH_CHUNK
            while len(self._path_chunks) * PATH_CHUNK > PATH_POINTS:
                self._path_chunks.pop(0).remove()  # type: ignore[attr-defined]
                del self._path[:PATH_CHUNK]
                self._open_start -= PATH_CHUNK
            pts = np.array(self._path[self._open_start:])
            if len(pts) < 2:
                return
            segments = np.stack([pts[:-1], pts[1:]], axis=1)
            if self._path_handle is not None:
                self._path_handle.remove()  # type: ignore[attr-defined]
            self._chunk_count += 1
            self._path_handle = self.server.scene.add_line_segments(
                f"/tool_path/{self._chunk_count}", segments, (30, 110, 230), thickness=PATH_PIXELS,
                thickness_units="screen")

    def show_goal(self, points: np.ndarray) -> None:
        """The current trajectory goal as a green polyline of tool positions (one point: a sphere)."""
        with self._lock:
            if self._goal_handle is not None:
                self._goal_handle.remove()  # type: ignore[attr-defined]
            if len(points) >= 2:
                seg = np.stack([points[:-1], points[1:]], axis=1).astype(np.float32)
                self._goal_handle = self.server.scene.add_line_segments("/goal", seg, (40, 200, 80),
                                                                        thickness=GOAL_PIXELS, thickness_units="screen")
            else:
                self._goal_handle = self.server.scene.add_icosphere("/goal", radius=0.02, color=(40, 200, 80),
                                                                    position=points[0])

    def show_controllers(self, rows: Sequence[tuple[str, str, str]]) -> None:
        text = "\n".join(f"- **{name}** `{kind}`: {state}" for name, kind, state in rows)
        self._controllers.content = text or "(no controller loaded)"  # type: ignore[attr-defined]

    def show_image(self, topic: str, image: np.ndarray) -> None:
        handle = self._images.get(topic)
        if handle is None:
            with self._image_folder:
                self._images[topic] = self.server.gui.add_image(image, label=topic, format="jpeg")
        else:
            handle.image = image  # type: ignore[attr-defined]

    def set_sliders(self, sliders: Sequence[tuple[str, SliderJoint]], positions: dict[str, float]) -> None:
        """One slider per (controller, joint), starting at ``positions``; moving one calls ``on_sliders`` with its
        controller and the values of all that controller's sliders in order (a forward controller takes all its
        joints at once)."""
        with self._lock:
            for handle in self._sliders.values():
                handle.remove()  # type: ignore[attr-defined]
            self._sliders = {}
            controllers = sorted({c for c, _ in sliders})
            self._slider_note.content = (  # type: ignore[attr-defined]
                f"commanding {', '.join(f'**{c}**' for c in controllers)}" if controllers
                else "(no active forward position or gripper action controller)")
            with self._slider_folder:
                for controller, j in sliders:
                    start = float(np.clip(positions.get(j.name, 0.0), j.lower, j.upper))
                    handle = self.server.gui.add_slider(j.name, min=j.lower, max=j.upper,
                                                        step=(j.upper - j.lower) / 1000, initial_value=start)
                    handle.on_update(lambda _e, c=controller: self._slider_moved(c))
                    self._sliders[(controller, j.name)] = handle

    def _slider_moved(self, controller: str) -> None:
        if self.on_sliders is not None:
            values = [float(h.value) for (c, _), h in self._sliders.items() if c == controller]  # type: ignore
            self.on_sliders(controller, values)

    @property
    def slider_names(self) -> list[tuple[str, str]]:
        return list(self._sliders)

    def clear_path(self) -> None:
        with self._lock:
            self._path = []
            for handle in [*self._path_chunks, self._path_handle]:
                if handle is not None:
                    handle.remove()  # type: ignore[attr-defined]
            self._path_chunks, self._path_handle, self._open_start = [], None, 0

    def look_at(self, target: np.ndarray, distance: float) -> None:
        """Where a browser's camera starts: looking at ``target`` from the front-right, slightly above."""
        cam = self.server.initial_camera
        cam.look_at = tuple(float(v) for v in target)
        cam.position = tuple(float(v) for v in target + distance * np.array([0.6, -0.6, 0.45]))

    def stop(self) -> None:
        self.server.stop()
