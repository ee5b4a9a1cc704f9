"""TaskEnv: a gymnasium environment on a MuJoCo model built in code (MjSpec), with no robot description behind it.

:class:`~robot_core.rl.robot_env.RobotEnv` runs a robot read from URDF through the simulator's
``PhysicsEngine`` (servos, command modes, limits). The example tasks of the RL chapter (cart-pole, pushing
robot) need none of that, and they must step close to raw ``mj_step`` speed and in batches
(:mod:`robot_core.rl.batched`). So a ``TaskEnv`` owns a bare ``MjModel`` / ``MjData`` and describes its task
as functions of the physics state arrays only:

- :meth:`TaskEnv.build_spec` builds the model (actuators take the action as ``ctrl``; sensors expose anything
  the observation needs beyond ``qpos`` / ``qvel``);
- :meth:`TaskEnv.reset_state` draws the initial ``qpos`` / ``qvel`` with the env's seeded generator;
- :meth:`TaskEnv.controls` maps a batch of actions to a batch of ``ctrl``;
- :meth:`TaskEnv.evaluate` maps a batch of ``(qpos, qvel, sensordata, start)`` to observations, rewards,
  ``terminated`` flags and an ``is_success`` flag.

Batches have a leading dimension (1 for this single env, N for the batched path), so both paths run the same
task code and cannot drift apart. The actuated physics takes ``frame_skip`` ``mj_step`` calls per ``step()``
in one ``mj_step(..., nstep)`` call, its constraint solver started cold as the batched path starts it.

No GL context is opened before :meth:`render` (or, for image observations, before the first ``reset``);
pickling drops the renderer and keeps the physics state and the generator.
"""

from __future__ import annotations

import os
import sys
from typing import Any, ClassVar

if "mujoco" not in sys.modules:
    os.environ.setdefault("MUJOCO_GL", "egl")

import gymnasium as gym
import mujoco
import numpy as np

from robot_core.rl.divergence import DIVERGENCE_WARNINGS, counters_clear, describe, log
from robot_core.rl.robot_env import camera_fields, make_renderer

STATE_SPEC = mujoco.mjtState.mjSTATE_FULLPHYSICS


def state_qpos_qvel(states: np.ndarray, nq: int, nv: int) -> tuple[np.ndarray, np.ndarray]:
    """qpos and qvel of :data:`STATE_SPEC` state rows (MuJoCo's order: time, qpos, qvel, ...) as views, so the
    batched paths read them and write a reset's draw into the rows without copying."""
    return states[..., 1:1 + nq], states[..., 1 + nq:1 + nq + nv]


class TaskEnv(gym.Env):
    """Base of the MjSpec-built task environments; see the module docstring for what a subclass provides."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 50}

    def __init__(self, *, timestep: float = 0.001, frame_skip: int = 20, render_mode: str | None = None,
                 width: int = 320, height: int = 240):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if frame_skip < 1:
            raise ValueError(f"frame_skip must be >= 1, got {frame_skip}")
        if timestep <= 0:
            raise ValueError(f"timestep must be > 0, got {timestep}")
        self.frame_skip = int(frame_skip)
        self.render_mode = render_mode
        self.width, self.height = int(width), int(height)
        spec = self.build_spec()
        spec.option.timestep = float(timestep)
        spec.visual.global_.offwidth = max(int(spec.visual.global_.offwidth), self.width, 640)
        spec.visual.global_.offheight = max(int(spec.visual.global_.offheight), self.height, 480)
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        self.dt = self.model.opt.timestep * self.frame_skip
        self.metadata = {**self.metadata, "render_fps": round(1.0 / self.dt)}
        self.camera = mujoco.MjvCamera()
        self.start = np.zeros((1, self.start_size()))
        self._renderer: Any = None
        self._last: tuple[np.ndarray, float, dict[str, Any]] | None = None  # the last good step's results
        self._bind_views()

    # ------------------------------------------------------------------ the task (subclasses)
    def build_spec(self) -> mujoco.MjSpec:
        """The task's MuJoCo model, built in code."""
        raise NotImplementedError

    def reset_state(self, rng: np.random.Generator, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """Write an episode's initial state into ``qpos`` / ``qvel`` (the model's defaults on entry)."""

    def start_size(self) -> int:
        """Length of the per-episode record :meth:`evaluate` compares against (e.g. a box's start position)."""
        return 0

    def record_start(self, qpos: np.ndarray, sensordata: np.ndarray) -> np.ndarray:
        """The per-episode record for a batch of freshly reset states, shape ``(N, start_size())``."""
        return np.zeros((qpos.shape[0], self.start_size()))

    def controls(self, actions: np.ndarray) -> np.ndarray:
        """A batch of actions ``(N, action dims)`` -> a batch of ``ctrl`` ``(N, nu)`` (actuators with a
        ``ctrlrange`` are clamped to it by MuJoCo itself)."""
        raise NotImplementedError

    def evaluate(self, qpos: np.ndarray, qvel: np.ndarray, sensordata: np.ndarray, start: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Batch of states -> ``(observations, rewards, terminated, is_success)``, each with a leading N; state
        observations as fresh float32 arrays (what the observation space holds: no cast afterwards)."""
        raise NotImplementedError

    def heuristic_action(self, observation: np.ndarray) -> np.ndarray:
        """A hand-written controller's action for one observation (``run-env --policy heuristic``)."""
        raise NotImplementedError(f"{type(self).__name__} has no heuristic policy")

    @property
    def image_observation(self) -> bool:
        """True when observations are images (:meth:`observe_image`) rather than state vectors."""
        return False

    def observe_image(self, data: mujoco.MjData) -> np.ndarray:
        """The image observation of the state in ``data`` (only when :attr:`image_observation`)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        m, d = self.model, self.data
        mujoco.mj_resetData(m, d)
        self.reset_state(self.np_random, d.qpos, d.qvel)
        mujoco.mj_forward(m, d)
        qpos, _qvel, sensordata = self._views
        self.start = self.record_start(qpos, sensordata)
        obs, reward, _terminated, success = self.evaluate(*self._views, self.start)
        observation, info = self._observation(obs[0]), {"is_success": bool(success[0])}
        self._last = (observation, float(reward[0]), info)
        return observation, info

    def step(self, action):
        # The batch-of-one views of the state were made once (_bind_views): per step only the task's own arrays.
        self._ctrl[:] = self.controls(np.asarray(action, dtype=np.float64).reshape(1, -1))
        self._warmstart[:] = 0.0  # the constraint solver starts cold, as the batched path does: its bits
        mujoco.mj_step(self.model, self.data, nstep=self.frame_skip)
        if not counters_clear(self._divergence, self._no_divergence):
            return self._diverged()
        obs, reward, terminated, success = self.evaluate(*self._views, self.start)
        observation, reward = self._observation(obs[0]), float(reward[0])
        info = {"is_success": bool(success[0]), "diverged": False}
        self._last = (observation, reward, info)
        return observation, reward, bool(terminated[0]), False, info

    def render(self) -> np.ndarray | None:
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='rgb_array' to the env")
            return None
        return self._render(self.camera, self.height, self.width)

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer[2].close()
            self._renderer = None

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_renderer"] = None
        for view in ("_views", "_ctrl", "_warmstart", "_divergence"):  # views into the MjData, remade by __setstate__
            del state[view]
        state["data"] = physics_state(self.model, self.data)
        state["camera"] = camera_fields(self.camera)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        physics = state.pop("data")
        camera = state.pop("camera")
        self.__dict__.update(state)
        self.data = mujoco.MjData(self.model)
        set_physics_state(self.model, self.data, physics)
        self._bind_views()
        self.camera = mujoco.MjvCamera()
        for name, value in camera.items():
            setattr(self.camera, name, value)

    # ------------------------------------------------------------------ internals
    def _bind_views(self) -> None:
        """The state as a batch of one (views into ``data``, valid for its lifetime): what ``evaluate`` takes."""
        d = self.data
        self._views = (d.qpos[None], d.qvel[None], d.sensordata[None])
        self._ctrl = d.ctrl[None]
        self._warmstart = d.qacc_warmstart
        self._divergence = d.warning.number[DIVERGENCE_WARNINGS]
        self._no_divergence = bytes(self._divergence.nbytes)

    def _diverged(self) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The step after MuJoCo found a diverged state (and reset ``data``): truncated, with the last good
        observation, reward and info (:mod:`robot_core.rl.divergence`)."""
        d = self.data
        log.warning("%s: the simulation diverged (%s) at t=%.4f s; MuJoCo reset its state, the episode ends "
                    "truncated with info['diverged']", type(self).__name__,
                    describe(self._divergence, d.warning.lastinfo[DIVERGENCE_WARNINGS], self.model), d.time)
        self._divergence[:] = 0  # reported: a step on without reset() is not reported again
        if self._last is None:  # (stepped before any reset: the state MuJoCo reset to is all there is)
            obs, reward, _terminated, success = self.evaluate(*self._views, self.start)
            self._last = (self._observation(obs[0]), float(reward[0]), {"is_success": bool(success[0])})
        observation, reward, info = self._last
        return observation.copy(), reward, False, True, {**info, "diverged": True}  # (a copy: users keep them)

    def _observation(self, state_obs: np.ndarray) -> np.ndarray:
        return self.observe_image(self.data) if self.image_observation else state_obs

    def _render(self, camera: mujoco.MjvCamera | str, height: int, width: int, data: mujoco.MjData | None = None
                ) -> np.ndarray:
        """One RGB frame; the renderer is opened on first use and reopened when the size changes."""
        if self._renderer is None or self._renderer[:2] != (height, width):
            self.close()
            self._renderer = (height, width, make_renderer(self.model, height, width))
        renderer = self._renderer[2]
        renderer.update_scene(self.data if data is None else data, camera=camera)
        return renderer.render()


def physics_state(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """The full physics state and the controls of ``data`` (what a copy needs to step on identically)."""
    spec = STATE_SPEC | mujoco.mjtState.mjSTATE_CTRL | mujoco.mjtState.mjSTATE_WARMSTART
    out = np.empty(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, data, out, spec)
    return out


def set_physics_state(model: mujoco.MjModel, data: mujoco.MjData, state: np.ndarray) -> None:
    spec = STATE_SPEC | mujoco.mjtState.mjSTATE_CTRL | mujoco.mjtState.mjSTATE_WARMSTART
    mujoco.mj_setState(model, data, state, spec)
    mujoco.mj_forward(model, data)

