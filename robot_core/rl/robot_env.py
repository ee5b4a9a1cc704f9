"""RobotEnv: the gymnasium plumbing shared by robot_core's environments (AGX's ``AGXGymEnv`` idea).

The base class owns the simulation (a :class:`~robot_core.physics.engine.PhysicsEngine`), the gymnasium API
(``reset`` / ``step`` / ``render`` / ``close``, seeding) and off-screen rendering. A subclass only

- builds its scene: :meth:`RobotEnv._build_scene` adds objects, markers, lights or cameras to the MjSpec;
- resets its task: :meth:`RobotEnv._reset_task` (randomise the start and goal with ``self.np_random``);
- sets actions: :meth:`RobotEnv._set_action`;
- observes: :meth:`RobotEnv._observe` returns ``(observation, reward, terminated, truncated, info)``.

Unlike AGX, the scene is built once, in ``__init__``: compiling a MuJoCo model costs far more than resetting
its state, and :meth:`PhysicsEngine.reset` restores everything a rebuild would.

Rendering (``render_mode="rgb_array"``) uses MuJoCo's off-screen renderer. MuJoCo picks its OpenGL backend
from ``MUJOCO_GL`` when it is first imported; this module sets ``MUJOCO_GL=egl`` if nothing chose one and
mujoco is not imported yet. If the backend in use cannot open a context here (e.g. GLFW without a display,
because mujoco was imported earlier), rendering falls back to an explicitly created EGL, then OSMesa context.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, ClassVar

if "mujoco" not in sys.modules:
    os.environ.setdefault("MUJOCO_GL", "egl")

import gymnasium as gym
import mujoco
import numpy as np

from robot_core.model.robot_model import RobotModel
from robot_core.physics.engine import PhysicsDivergedError, PhysicsEngine
from robot_core.rl.divergence import DIVERGENCE_WARNINGS, counters_clear, describe, log

HEADLESS_BACKENDS = ("egl", "osmesa")


class RenderUnavailableError(RuntimeError):
    """No OpenGL backend can render off-screen in this process."""


class RobotEnv(gym.Env):
    """Base of robot_core's gymnasium environments; see the module docstring for what a subclass provides."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 50}

    def __init__(
        self,
        robot: RobotModel,
        *,
        timestep: float = 0.001,
        frame_skip: int = 20,
        render_mode: str | None = None,
        width: int = 320,
        height: int = 240,
        engine_options: dict[str, Any] | None = None,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if frame_skip < 1:
            raise ValueError(f"frame_skip must be >= 1, got {frame_skip}")
        self.robot = robot
        self.frame_skip = int(frame_skip)
        self.render_mode = render_mode
        self.width, self.height = int(width), int(height)
        self.engine = PhysicsEngine(robot, timestep=timestep, scene=self._scene_hook, **(engine_options or {}))
        self.dt = self.engine.timestep * self.frame_skip
        self.metadata = {**self.metadata, "render_fps": round(1.0 / self.dt)}
        self.camera = mujoco.MjvCamera()
        self._renderer: Any = None
        self._last: tuple[np.ndarray, float, dict[str, Any]] | None = None  # the last good step's results
        self._bind_divergence()

    # ------------------------------------------------------------------ for subclasses
    def _build_scene(self, spec: mujoco.MjSpec) -> None:
        """Add the task's scene to the robot's MjSpec. Default: a (visual-only) floor and a light."""
        spec.worldbody.add_geom(name="env_floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[3, 3, 0.05],
                                rgba=[0.82, 0.84, 0.86, 1.0], contype=0, conaffinity=0, group=2)
        spec.worldbody.add_light(name="env_light", pos=[0.5, -0.5, 3.0], dir=[0.0, 0.0, -1.0],
                                 diffuse=[0.8, 0.8, 0.8])

    def _reset_task(self, rng: np.random.Generator) -> None:
        """Randomise the episode after the engine was reset to its initial state."""

    def _set_action(self, action: np.ndarray) -> None:
        raise NotImplementedError

    def _observe(self) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        raise NotImplementedError

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.start_episode(self.np_random)
        obs, reward, _terminated, _truncated, info = self._observe()
        self._last = (obs, reward, info)
        return obs, info

    def start_episode(self, rng: np.random.Generator) -> None:
        """The engine at the start of a new episode drawn from ``rng`` (what ``reset`` does after seeding; the
        batched path draws each env's episodes with it)."""
        self.engine.reset()
        self._reset_task(rng)
        mujoco.mj_forward(self.engine.model, self.engine.data)

    def step(self, action):
        self._set_action(np.asarray(action))
        # Each env step's constraint solver starts cold, as the batched path (mujoco.batch) starts it: a warm
        # start only changes where within the solver's tolerance (and, with contacts, among equal solutions)
        # it ends, and this way the single and the batched env step to the same bits.
        self.engine.data.qacc_warmstart[:] = 0.0
        try:
            self.engine.step(self.frame_skip)
        except PhysicsDivergedError as exc:  # a huge acceleration: the engine was reset to its initial state
            return self._diverged(str(exc))
        if not counters_clear(self._divergence, self._no_divergence):  # a bad position or velocity, which
            # (MuJoCo reset it on its own: the engine watches the acceleration only)
            found = describe(self._divergence, self.engine.data.warning.lastinfo[DIVERGENCE_WARNINGS],
                             self.engine.model)
            return self._diverged(f"simulation of '{self.robot.name}' diverged ({found}); MuJoCo reset its state")
        obs, reward, terminated, truncated, info = self._observe()
        info["diverged"] = False
        self._last = (obs, reward, info)
        return obs, reward, terminated, truncated, info

    def render(self) -> np.ndarray | None:
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='rgb_array' to the env")
            return None
        return self.render_state(self.engine.data)

    def render_state(self, data: mujoco.MjData) -> np.ndarray:
        """One RGB frame of the state in ``data`` (of this env's model or a copy of it: the batched path's envs)."""
        if self._renderer is None:
            self._renderer = make_renderer(self.engine.model, self.height, self.width)
        self._renderer.update_scene(data, camera=self.camera)
        return self._renderer.render()

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    # ------------------------------------------------------------------ internals
    def _bind_divergence(self) -> None:
        """A live view of the engine's divergence counters (:mod:`robot_core.rl.divergence`)."""
        self._divergence = self.engine.data.warning.number[DIVERGENCE_WARNINGS]
        self._no_divergence = bytes(self._divergence.nbytes)

    def _diverged(self, what: str) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The step whose physics diverged: truncated, with the last good observation, reward and info."""
        log.warning("%s: %s; the episode ends truncated with info['diverged']", type(self).__name__, what)
        self._divergence[:] = 0  # reported: a step on without reset() is not reported again
        if self._last is None:  # (stepped before any reset: the state the engine was reset to is all there is)
            obs, reward, _terminated, _truncated, info = self._observe()
            self._last = (obs, reward, info)
        obs, reward, info = self._last
        return obs.copy(), reward, False, True, {**info, "diverged": True}  # (a copy: users keep them)

    def _scene_hook(self, spec: mujoco.MjSpec) -> None:
        spec.visual.global_.offwidth = max(int(spec.visual.global_.offwidth), self.width)
        spec.visual.global_.offheight = max(int(spec.visual.global_.offheight), self.height)
        self._build_scene(spec)


def camera_fields(camera: mujoco.MjvCamera) -> dict[str, Any]:
    """An MjvCamera's settings as plain values (MjvCamera does not pickle)."""
    return {"type": camera.type, "fixedcamid": camera.fixedcamid, "trackbodyid": camera.trackbodyid,
            "lookat": np.array(camera.lookat), "distance": camera.distance, "azimuth": camera.azimuth,
            "elevation": camera.elevation}


def make_renderer(model: mujoco.MjModel, height: int, width: int) -> Any:
    """An off-screen renderer: ``mujoco.Renderer`` when mujoco's own GL backend works here, else one on an
    explicitly created headless (EGL, then OSMesa) context. Both offer ``update_scene``/``render``/``close``."""
    backend = os.environ.get("MUJOCO_GL", "").strip().lower()
    has_display = bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    errors: list[str] = []
    if backend in HEADLESS_BACKENDS or has_display:
        try:
            return mujoco.Renderer(model, height, width)
        except Exception as exc:  # a backend that cannot open a context here
            errors.append(f"mujoco.Renderer with MUJOCO_GL={backend or '(unset)'}: {exc}")
    for name in HEADLESS_BACKENDS:
        try:
            return HeadlessRenderer(model, height, width, name)
        except Exception as exc:
            errors.append(f"{name}: {exc}")
    raise RenderUnavailableError(
        "no OpenGL backend can render off-screen here (" + "; ".join(errors) + "). Headless rendering needs "
        "EGL (Debian package libegl1 plus a driver such as libegl-mesa0) or OSMesa (libosmesa6).")


class HeadlessRenderer:
    """What ``mujoco.Renderer`` does, on a GL context of a named headless backend ("egl" or "osmesa")."""

    def __init__(self, model: mujoco.MjModel, height: int, width: int, backend: str):
        module = importlib.import_module(f"mujoco.{backend}")
        self._gl = module.GLContext(width, height)
        self._gl.make_current()
        self._model = model
        self._width, self._height = width, height
        self._context = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_150)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._context)
        self._scene = mujoco.MjvScene(model, maxgeom=10000)
        self._option = mujoco.MjvOption()
        self._rect = mujoco.MjrRect(0, 0, width, height)
        self.backend = backend

    def update_scene(self, data: mujoco.MjData, camera: mujoco.MjvCamera | int | str = -1) -> None:
        if not isinstance(camera, mujoco.MjvCamera):
            cam = mujoco.MjvCamera()
            if camera != -1:
                cam.type = mujoco.mjtCamera.mjCAMERA_FIXED
                cam.fixedcamid = (camera if isinstance(camera, int)
                                  else mujoco.mj_name2id(self._model, mujoco.mjtObj.mjOBJ_CAMERA, camera))
            camera = cam
        mujoco.mjv_updateScene(self._model, data, self._option, None, camera, mujoco.mjtCatBit.mjCAT_ALL,
                               self._scene)

    def render(self) -> np.ndarray:
        self._gl.make_current()
        mujoco.mjr_render(self._rect, self._scene, self._context)
        pixels = np.empty((self._height, self._width, 3), dtype=np.uint8)
        mujoco.mjr_readPixels(pixels, None, self._rect, self._context)
        return np.flipud(pixels).copy()

    def close(self) -> None:
        if self._context is not None:
            self._gl.make_current()
            self._context.free()
            self._context = None
            self._gl.free()
