"""Simulated cameras: a description's camera sensors as MuJoCo cameras, rendered off-screen on their own thread.

Frames. A Gazebo camera sensor looks along the x axis of its sensor frame (its link's frame moved by the sensor's
``<pose>``), y left, z up. Its images are published in the ROS *optical* frame: z forward, x right, y down
(REP 103). A MuJoCo camera looks down its own -z with y up and x right. So the MuJoCo camera sits in the sensor
frame rotated by :data:`MUJOCO_CAMERA_IN_SENSOR`, and the optical frame by :data:`OPTICAL_IN_SENSOR` (the
rpy (-pi/2, 0, -pi/2) of every ``*_optical_joint`` in published descriptions).

Intrinsics. MuJoCo's ``fovy`` is the vertical field of view of a pinhole with square pixels, so the horizontal
field of view of the description gives ``tan(fovy/2) = tan(hfov/2) * height / width`` and
``fx = fy = height / (2 tan(fovy/2))``; the principal point is the image centre, ``cx = (width - 1) / 2``,
``cy = (height - 1) / 2`` with pixel centres at whole numbers (OpenCV's and CameraInfo's convention).

Rendering. OpenGL contexts belong to one thread, and a 640x480 frame costs milliseconds, which a 1 kHz physics
loop cannot spare: :class:`CameraRenderer` owns its own copy of the model, its own MjData and the GL context on a
thread of its own. The simulation thread only copies the state (``qpos``, mocap poses) into :meth:`submit`; when
the renderer is still busy with the previous frame the new one replaces the waiting one (a dropped frame, counted)
instead of stalling the physics. MuJoCo releases Python's interpreter lock while it renders, so the cost left is CPU
time: a software OpenGL's rasteriser threads run at a lower priority (:func:`start_gl_at_low_priority`), so on a
machine short of cores frames are dropped, not physics steps.
Headless machines: EGL (``MUJOCO_GL=egl``, the default here when ``MUJOCO_GL`` is
unset or ``disable``, then OSMesa) or a backend ``MUJOCO_GL`` names (:func:`make_gl_context`).
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from robot_core.model.robot_model import Pose, RobotModelError
from robot_core.model.sensors import CAMERA_KINDS, SensorSpec
from robot_core.physics.noise import GaussianNoise, noise_rng

DEFAULT_CAMERA_RATE = 30.0  # Hz, when the description gives none
# Nice value of the rasteriser threads of a software OpenGL: when the CPU is short, the physics loop gets it and
# camera frames are dropped instead (see start_gl_at_low_priority).
RENDER_NICE = 19
CAMERA_PREFIX = "sensor:"  # MuJoCo camera name = prefix + sensor name
# Columns: the MuJoCo camera's / the optical frame's axes in the Gazebo sensor frame (x forward, y left, z up).
MUJOCO_CAMERA_IN_SENSOR = np.array([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
OPTICAL_IN_SENSOR = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


@dataclass(frozen=True)
class CameraIntrinsics:
    """The pinhole MuJoCo renders, as CameraInfo states it (plumb-bob model, no distortion)."""

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    fovy: float  # rad, MuJoCo's vertical field of view

    @classmethod
    def from_fov(cls, width: int, height: int, horizontal_fov: float) -> CameraIntrinsics:
        fovy = 2.0 * math.atan(math.tan(horizontal_fov / 2.0) * height / width)
        f = height / (2.0 * math.tan(fovy / 2.0))
        return cls(width, height, f, f, (width - 1) / 2.0, (height - 1) / 2.0, fovy)

    @classmethod
    def of(cls, sensor: SensorSpec) -> CameraIntrinsics:
        p = sensor.params
        return cls.from_fov(int(p["width"]), int(p["height"]), float(p["horizontal_fov"]))

    def k(self) -> list[float]:
        return [self.fx, 0.0, self.cx, 0.0, self.fy, self.cy, 0.0, 0.0, 1.0]

    def p(self) -> list[float]:
        return [self.fx, 0.0, self.cx, 0.0, 0.0, self.fy, self.cy, 0.0, 0.0, 0.0, 1.0, 0.0]

    def project(self, point_optical: Sequence[float]) -> tuple[float, float]:
        """Pixel (u right, v down) of a point in the optical frame."""
        x, y, z = (float(v) for v in point_optical)
        return self.fx * x / z + self.cx, self.fy * y / z + self.cy


def camera_sensors(sensors: Sequence[SensorSpec]) -> list[SensorSpec]:
    return [s for s in sensors if s.kind in CAMERA_KINDS]


def mujoco_camera_name(sensor: SensorSpec) -> str:
    """The MuJoCo camera a sensor renders: its own (``sensor:<name>``), or a model's camera (:func:`model_cameras`)."""
    return str(sensor.params.get("mujoco_camera") or CAMERA_PREFIX + sensor.name)


def model_cameras(model: mujoco.MjModel, names: Sequence[str], width: int, height: int, rate: float,
                  world_frame: str = "world") -> list[SensorSpec]:
    """Camera sensors for the cameras an MJCF robot or world file defines itself (``<camera name=...>``), by name;
    ``["*"]``: every named one. The image size and rate are the caller's (MJCF has no resolution); the field of view
    is the camera's ``fovy``, the sensor sits on the camera's body (``world_frame`` for the world body) at the
    camera's pose. A name the model does not have is a ValueError listing the model's cameras."""
    if not names:
        return []
    have = {}
    for i in range(model.ncam):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_CAMERA, i) or ""
        if name and not name.startswith(CAMERA_PREFIX):
            have[name] = i
    wanted = list(have) if list(names) == ["*"] else list(names)
    unknown = [n for n in wanted if n not in have]
    if unknown:
        raise ValueError(f"parameter 'mjcf_cameras' names {', '.join(repr(n) for n in unknown)}, which is not a "
                         f"camera of the MuJoCo model (it has: {', '.join(sorted(have)) or 'none'})")
    extent = float(model.stat.extent)
    near, far = float(model.vis.map.znear) * extent, float(model.vis.map.zfar) * extent
    out = []
    for name in wanted:
        i = have[name]
        if int(model.cam_mode[i]) != int(mujoco.mjtCamLight.mjCAMLIGHT_FIXED):
            raise ValueError(f"mjcf_cameras: camera '{name}' moves with mode {int(model.cam_mode[i])} (tracking); "
                             "only fixed cameras get a static optical frame")
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, model.cam_quat[i])
        pose = np.eye(4)
        pose[:3, :3] = rot.reshape(3, 3) @ MUJOCO_CAMERA_IN_SENSOR.T  # the Gazebo-style sensor frame
        pose[:3, 3] = model.cam_pos[i]
        body = int(model.cam_bodyid[i])
        link = world_frame if body == 0 else mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, body)
        fovy = math.radians(float(model.cam_fovy[i]))
        hfov = 2.0 * math.atan(math.tan(fovy / 2.0) * width / height)
        out.append(SensorSpec(name=name, kind="camera", link=link, pose=Pose.from_matrix(pose), update_rate=rate,
                              params={"width": int(width), "height": int(height), "horizontal_fov": hfov,
                                      "format": "R8G8B8", "encoding": "rgb8", "near": near, "far": far,
                                      "mujoco_camera": name},
                              gazebo_type="mjcf"))
    return out


def optical_pose(sensor: SensorSpec) -> np.ndarray:
    """4x4 pose of the sensor's optical frame in its link's frame."""
    m = sensor.pose.matrix()
    m[:3, :3] = m[:3, :3] @ OPTICAL_IN_SENSOR
    return m


def optical_frame_pose(sensor: SensorSpec) -> Pose:
    return Pose.from_matrix(optical_pose(sensor))


def add_cameras(spec: mujoco.MjSpec, sensors: Sequence[SensorSpec]) -> None:
    """Add one MuJoCo camera per camera sensor to its link's body (the builder names bodies after links), and make
    the off-screen framebuffer large enough for the largest image."""
    cams = [s for s in camera_sensors(sensors) if not s.params.get("mujoco_camera")]  # not a model's own camera
    for s in cams:
        body = spec.body(s.link)
        if body is None:
            raise RobotModelError(f"camera '{s.name}': link '{s.link}' has no MuJoCo body", s.source)
        rot = s.pose.matrix()[:3, :3] @ MUJOCO_CAMERA_IN_SENSOR
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, np.ascontiguousarray(rot).reshape(9))
        body.add_camera(name=mujoco_camera_name(s), pos=list(s.pose.xyz), quat=list(quat),
                        fovy=math.degrees(CameraIntrinsics.of(s).fovy))
    if cams:
        spec.visual.global_.offwidth = max(spec.visual.global_.offwidth, *(int(s.params["width"]) for s in cams))
        spec.visual.global_.offheight = max(spec.visual.global_.offheight, *(int(s.params["height"]) for s in cams))


def make_gl_context(width: int, height: int) -> Any:
    """A current off-screen GL context: MUJOCO_GL's backend when it names one (egl, osmesa, glfw), else EGL, then
    OSMesa. (robot_core's node scripts set MUJOCO_GL=disable so that ``import mujoco`` loads no GL at all; that
    means "pick one here".) Raises RuntimeError naming every backend tried and why it failed."""
    chosen = os.environ.get("MUJOCO_GL", "").strip().lower()
    backends = [chosen] if chosen in ("egl", "osmesa", "glfw") else ["egl", "osmesa"]
    errors = []
    for name in backends:
        try:
            module = importlib.import_module(f"mujoco.{name}")
            context = module.GLContext(width, height)
            context.make_current()
            return context
        except Exception as exc:  # a missing library, no device, a PyOpenGL platform already chosen
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
    raise RuntimeError("no OpenGL backend can render off-screen here (" + "; ".join(errors) + "); headless "
                       "rendering needs EGL (libegl1 and a driver such as libegl-mesa0) or OSMesa (libosmesa6)")


def start_gl_at_low_priority() -> None:
    """Open (and close) a first GL context from a short-lived thread at :data:`RENDER_NICE`.

    Mesa's software rasteriser (llvmpipe) starts its worker threads once per process, from the thread that first
    opens a display, and they inherit that thread's priority (Linux: per thread). So the rasterising -- nearly all
    of a frame's CPU time -- runs at low priority, while the render thread itself stays at normal priority: it
    holds Python's interpreter lock for its Python parts (conversion, publishing), and a starved holder would stall
    the physics thread waiting for the lock. A failure here is left to the render thread's own context to report.
    """

    def open_and_close() -> None:
        with contextlib.suppress(OSError, AttributeError):  # Linux: per thread; inherited by threads it starts
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), RENDER_NICE)
        with contextlib.suppress(Exception):
            make_gl_context(16, 16).free()

    starter = threading.Thread(target=open_and_close, name="camera-gl-start", daemon=True)
    starter.start()
    starter.join(30.0)


def linear_depth(buffer: np.ndarray, near: float, far: float) -> np.ndarray:
    """MuJoCo's reversed-Z depth buffer (1 at ``near``, 0 at ``far``) -> distance along the optical axis (m).

    From the perspective projection: buffer = (f / (f - n)) (n / z) - n / (f - n), so z = n f / (n + b (f - n)).
    """
    b = np.asarray(buffer, dtype=np.float32)  # float32 keeps ~1e-5 relative here (far / near up to 1e3): enough
    return np.float32(near * far) / (np.float32(near) + b * np.float32(far - near))


class OffscreenView:
    """One GL context with MuJoCo's render context for one model and one image size, used on the thread that made
    it. The framebuffer is exactly the image's size and single-sampled, and shadows and reflections are off: on a
    software OpenGL (Mesa's llvmpipe, what a headless machine without a GPU has) MuJoCo's 4096-pixel shadow map
    alone costs about 300 ms a frame, the rest of a 160x120 frame about 10 ms."""

    def __init__(self, model: mujoco.MjModel, width: int, height: int):
        self.model = model
        self._gl = make_gl_context(width, height)
        offscreen = (model.vis.global_.offwidth, model.vis.global_.offheight, model.vis.quality.offsamples)
        model.vis.global_.offwidth, model.vis.global_.offheight, model.vis.quality.offsamples = width, height, 0
        try:
            self._ctx = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_100.value)
        finally:
            model.vis.global_.offwidth, model.vis.global_.offheight, model.vis.quality.offsamples = offscreen
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, self._ctx)
        self._ctx.readDepthMap = mujoco.mjtDepthMap.mjDEPTH_ZEROFAR
        self._scene = mujoco.MjvScene(model, maxgeom=max(1000, 2 * model.ngeom))
        for flag in (mujoco.mjtRndFlag.mjRND_SHADOW, mujoco.mjtRndFlag.mjRND_REFLECTION):
            self._scene.flags[flag] = 0
        self._option = mujoco.MjvOption()
        self._camera = mujoco.MjvCamera()
        self._camera.type = mujoco.mjtCamera.mjCAMERA_FIXED

    def render(self, data: mujoco.MjData, camera_id: int, width: int, height: int,
               depth: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
        """RGB (height, width, 3) uint8, top row first; with ``depth`` also the depth (m, float32) per pixel."""
        self._gl.make_current()
        self._camera.fixedcamid = camera_id
        mujoco.mjv_updateScene(self.model, data, self._option, None, self._camera, mujoco.mjtCatBit.mjCAT_ALL.value,
                               self._scene)
        rect = mujoco.MjrRect(0, 0, width, height)
        mujoco.mjr_render(rect, self._scene, self._ctx)
        rgb = np.empty((height, width, 3), dtype=np.uint8)
        zbuf = np.empty((height, width), dtype=np.float32) if depth else None
        mujoco.mjr_readPixels(rgb, zbuf, rect, self._ctx)
        rgb = np.ascontiguousarray(rgb[::-1])  # OpenGL's first row is the bottom one
        if zbuf is None:
            return rgb, None
        extent = self.model.stat.extent
        metres = linear_depth(zbuf[::-1], self.model.vis.map.znear * extent, self.model.vis.map.zfar * extent)
        return rgb, metres

    def close(self) -> None:
        if self._gl is not None:
            self._gl.make_current()
            self._ctx.free()
            self._gl.free()
            self._gl = None


@dataclass
class CameraFrame:
    """One rendered image of one camera sensor, at ``stamp_ns`` of simulated time."""

    sensor: SensorSpec
    stamp_ns: int
    rgb: np.ndarray
    depth: np.ndarray | None  # metres; +inf beyond the sensor's far clip (nothing seen), -inf nearer than near


def render_model(model: mujoco.MjModel, sensors: Sequence[SensorSpec]) -> mujoco.MjModel:
    """A copy of ``model`` for rendering, its clip planes wide enough for every camera's near and far."""
    out = copy.deepcopy(model)
    cams = camera_sensors(sensors)
    if cams:
        extent = out.stat.extent
        out.vis.map.znear = min(float(s.params["near"]) for s in cams) / extent
        out.vis.map.zfar = 1.01 * max(float(s.params["far"]) for s in cams) / extent
    return out


# ITU-R BT.601 luma weights (as OpenCV's RGB2GRAY and Gazebo's L8 images).
LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float32)
CHANNELS = {"rgb8": 3, "bgr8": 3, "mono8": 1}


def encode_image(rgb: np.ndarray, encoding: str) -> np.ndarray:
    """A rendered (h, w, 3) rgb image in ``encoding`` (rgb8, bgr8, mono8: the luminance, rounded)."""
    if encoding == "bgr8":
        return np.ascontiguousarray(rgb[..., ::-1])
    if encoding == "mono8":
        return np.rint(rgb.astype(np.float32) @ LUMA).clip(0, 255).astype(np.uint8)
    return rgb


def clip_depth(depth: np.ndarray, near: float, far: float) -> np.ndarray:
    """REP 117's out-of-range values: -inf nearer than ``near``, +inf beyond ``far``."""
    depth[depth > far] = np.inf
    depth[depth < near] = -np.inf
    return depth


@dataclass
class _Request:
    model: mujoco.MjModel
    qpos: np.ndarray
    mocap_pos: np.ndarray
    mocap_quat: np.ndarray
    stamp_ns: int
    sensors: tuple[SensorSpec, ...]


class CameraRenderer:
    """Renders camera sensors on its own thread from copies of the simulation state; ``on_frame`` gets each
    :class:`CameraFrame` on that thread.

    ``submit`` never blocks: a request that arrives while the previous one still waits replaces it
    (:attr:`dropped` counts those). :attr:`render_seconds` sums the wall time spent per rendered frame."""

    def __init__(self, sensors: Sequence[SensorSpec], on_frame: Callable[[CameraFrame], None],
                 on_error: Callable[[str], None] | None = None, seed: int | None = None):
        self.sensors = camera_sensors(sensors)
        # the description's <camera><noise> on the rgb image (robot_core.physics.noise; seed: repeatable)
        self._noise = {s.name: (GaussianNoise.of(s.params), noise_rng(seed, s.name)) for s in self.sensors}
        self._on_frame = on_frame
        self._on_error = on_error
        self._cond = threading.Condition()
        self._pending: _Request | None = None
        self._stop = False
        self.frames = 0
        self.dropped = 0
        self.render_seconds = 0.0
        self.error: str | None = None
        self._busy = False  # a request taken and not yet finished
        self._thread = threading.Thread(target=self._run, name="camera-render", daemon=True)
        self._thread.start()

    def submit(self, model: mujoco.MjModel, data: mujoco.MjData, stamp_ns: int,
               sensors: Sequence[SensorSpec] | None = None) -> None:
        """Queue a frame of ``sensors`` (all by default) at the current state of ``data`` (copied here)."""
        req = _Request(model, data.qpos.copy(), data.mocap_pos.copy(), data.mocap_quat.copy(), stamp_ns,
                       tuple(self.sensors if sensors is None else sensors))
        with self._cond:
            if self._pending is not None:
                self.dropped += 1
            self._pending = req
            self._cond.notify()

    def idle(self, timeout: float) -> bool:
        """Wait until nothing is pending (for tests and benchmarks)."""
        end = time.monotonic() + timeout
        with self._cond:
            while self._pending is not None or self._busy:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def stop(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        self._thread.join(timeout)

    def _run(self) -> None:
        start_gl_at_low_priority()
        views: dict[str, OffscreenView] = {}
        source: mujoco.MjModel | None = None
        data: mujoco.MjData | None = None
        ids: dict[str, int] = {}
        try:
            while True:
                with self._cond:
                    while self._pending is None and not self._stop:
                        self._cond.wait()
                    if self._stop:
                        return
                    req, self._pending = self._pending, None
                    self._busy = True
                try:
                    if req.model is not source:  # first frame, or the scene was edited (spawn, remove)
                        for view in views.values():
                            view.close()
                        views.clear()
                        source = req.model
                        model = render_model(source, self.sensors)
                        data = mujoco.MjData(model)
                        for s in self.sensors:
                            views[s.name] = OffscreenView(model, int(s.params["width"]), int(s.params["height"]))
                        ids = {s.name: mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, mujoco_camera_name(s))
                               for s in self.sensors}
                    self._render(views, data, ids, req)
                finally:
                    with self._cond:
                        self._busy = False
                        self._cond.notify_all()
        except Exception as exc:  # no GL, a lost context: say so once, stop rendering, leave the physics alone
            self.error = f"camera rendering stopped: {type(exc).__name__}: {exc}"
            if self._on_error is not None:
                self._on_error(self.error)
        finally:
            for view in views.values():
                view.close()

    def _render(self, views: dict[str, OffscreenView], data: mujoco.MjData, ids: dict[str, int],
                req: _Request) -> None:
        model = next(iter(views.values())).model
        data.qpos[:] = req.qpos
        data.mocap_pos[:] = req.mocap_pos
        data.mocap_quat[:] = req.mocap_quat
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        mujoco.mj_camlight(model, data)
        for s in req.sensors:
            t0 = time.perf_counter()
            w, h = int(s.params["width"]), int(s.params["height"])
            rgb, depth = views[s.name].render(data, ids[s.name], w, h, depth=s.kind == "depth")
            noise, rng = self._noise[s.name]
            if noise:
                rgb = noise.add_to_image(rgb, rng)
            if depth is not None:
                clip_depth(depth, float(s.params["near"]), float(s.params["far"]))
            self.render_seconds += time.perf_counter() - t0
            self.frames += 1
            self._on_frame(CameraFrame(s, req.stamp_ns, rgb, depth))


def with_cameras(scene: Callable[[mujoco.MjSpec], None] | None,
                 sensors: Sequence[SensorSpec]) -> Callable[[mujoco.MjSpec], None]:
    """The engine's ``scene`` hook, followed by :func:`add_cameras` (cameras ride on the robot's link bodies)."""

    def build(spec: mujoco.MjSpec) -> None:
        if scene is not None:
            scene(spec)
        add_cameras(spec, sensors)

    return build
