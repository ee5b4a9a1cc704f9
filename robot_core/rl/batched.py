"""BatchedEnv: N copies of a :class:`~robot_core.rl.task_env.TaskEnv` stepped together by ``mujoco.rollout``.

gymnasium's ``SyncVectorEnv`` steps its envs one after the other from Python, and ``AsyncVectorEnv`` pays a
process and a pipe per env. Here the N physics states live in one ``(N, nstate)`` array and each ``step()``
hands them, with the N controls, to MuJoCo's multi-threaded rollout (a C++ thread pool, one scratch ``MjData``
per thread), which runs the ``frame_skip`` physics steps of every env without coming back to Python. The task
code (controls, observations, rewards, termination) is the single env's, applied to the whole batch at once.

``gym.make_vec("robot_core/CartPole-v0", num_envs=N, vectorization_mode="vector_entry_point")`` builds one
(``robot_core.rl`` registers the entry point for its task envs). Semantics are gymnasium's ``VectorEnv`` with
``AutoresetMode.NEXT_STEP``: the step after an episode ended resets that env (its action is ignored, reward 0)
and the id's ``max_episode_steps`` truncates. Env ``i`` seeded with ``seed`` draws like a single env seeded
with ``seed + i``; the trajectories are the single env's to the bit, with contacts too: rollout starts each env
step's constraint solver cold, and so does the single env (``TaskEnv.step``).

Autoreset runs on the batch arrays too (``_reset_envs``); the one per-env Python loop left is each finished
env's draw from its own generator. Image observations are rendered env by env (one OpenGL render each).

What is specific to ``TaskEnv`` is in a handful of methods (the model, controls, resets, evaluation, the state of
one env for rendering) that :class:`~robot_core.rl.batched_reach.BatchedReachEnv` replaces for the Reach task;
the stepping, autoreset bookkeeping and truncation stay here.
"""

from __future__ import annotations

import copy
import os
from typing import Any

import gymnasium as gym
import mujoco
import mujoco.rollout
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from robot_core.rl.task_env import STATE_SPEC, state_qpos_qvel


class BatchedEnv(VectorEnv):
    """``num_envs`` copies of ``env_class`` in one process, stepped by ``mujoco.rollout``; see the module docstring."""

    def __init__(self, env_class: type[gym.Env], num_envs: int, *, max_episode_steps: int | None = None,
                 nthread: int | None = None, **env_kwargs: Any):
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.env = env_class(**env_kwargs)
        self.num_envs = int(num_envs)
        self.max_episode_steps = max_episode_steps
        self.single_observation_space = self.env.observation_space
        self.single_action_space = self.env.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.metadata = {**self.env.metadata, "autoreset_mode": AutoresetMode.NEXT_STEP}
        self.render_mode = self.env.render_mode
        m = self.model = self._batch_model()
        self._nq, self._nv = m.nq, m.nv
        if nthread is None:  # one env: on the calling thread, no hand-over to a pool
            nthread = min(self.num_envs, os.cpu_count() or 1) if self.num_envs > 1 else 0
        self.nthread = int(nthread)
        self._rollout = mujoco.rollout.Rollout(nthread=self.nthread)
        self._scratch = [mujoco.MjData(m) for _ in range(max(1, self.nthread))]
        nstate = mujoco.mj_stateSize(m, STATE_SPEC)
        self.states = np.zeros((self.num_envs, nstate))
        self.sensordata = np.zeros((self.num_envs, m.nsensordata))
        self._out_state = np.zeros((self.num_envs, self.env.frame_skip, nstate))
        self._out_sensor = np.zeros((self.num_envs, self.env.frame_skip, m.nsensordata))
        self._control = np.zeros((self.num_envs, self.env.frame_skip, m.nu))
        self._models = [m] * self.num_envs
        self._chunk = max(1, self.num_envs // max(1, self.nthread))
        self._rngs = [np.random.default_rng(i) for i in range(self.num_envs)]
        self._steps = np.zeros(self.num_envs, dtype=np.int64)
        self._needs_reset = np.zeros(self.num_envs, dtype=bool)
        self._setup_task()

    # ------------------------------------------------------------------ VectorEnv API
    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None):
        seeds = seed if isinstance(seed, list) else [None if seed is None else seed + i for i in range(self.num_envs)]
        if len(seeds) != self.num_envs:
            raise ValueError(f"reset got {len(seeds)} seeds for {self.num_envs} envs")
        for i, s in enumerate(seeds):
            if s is not None:
                self._rngs[i], _ = gym.utils.seeding.np_random(s)
        self._reset_envs(np.ones(self.num_envs, dtype=bool))
        obs, _reward, _terminated, info = self._evaluate()
        return self._observations(obs), info

    def step(self, actions):
        actions = np.asarray(actions, dtype=np.float64).reshape(self.num_envs, -1)
        resetting = self._needs_reset.copy()
        self._write_controls(actions)
        # Shapes and dtypes are fixed at construction, so rollout's per-call argument checks are skipped.
        self._rollout.rollout(self._models, self._scratch, self.states, self._control, nstep=self.env.frame_skip,
                              state=self._out_state, sensordata=self._out_sensor, skip_checks=True,
                              chunk_size=self._chunk)
        self.states[:] = self._out_state[:, -1]
        self.sensordata[:] = self._out_sensor[:, -1]
        self._steps += 1
        if resetting.any():  # (their step counts restart at 0: the reset step is not a step of the new episode)
            self._reset_envs(resetting)
        obs, reward, terminated, info = self._evaluate()
        truncated = (np.zeros(self.num_envs, dtype=bool) if self.max_episode_steps is None
                     else self._steps >= self.max_episode_steps)
        reward[resetting] = 0.0
        terminated[resetting] = False
        truncated[resetting] = False
        self._needs_reset = terminated | truncated
        return self._observations(obs), reward, terminated, truncated, info

    def render(self) -> tuple[np.ndarray, ...] | None:
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='rgb_array' to the env")
            return None
        return tuple(self._render_env(i) for i in range(self.num_envs))

    def close_extras(self, **kwargs: Any) -> None:
        self.env.close()
        if self._rollout.rollout_ is not None:
            self._rollout.close()

    # ------------------------------------------------------------- the task (TaskEnv; BatchedReachEnv replaces these)
    def _batch_model(self) -> mujoco.MjModel:
        """The model every env steps (rollout takes one per env: ``self._models``, by default all this one)."""
        return self.env.model

    def _setup_task(self) -> None:
        """What the task needs beyond the batch arrays; called at the end of ``__init__``."""
        m = self.model
        self._start = np.zeros((self.num_envs, self.env.start_size()))
        # Autoreset without a MuJoCo call per env: the state mj_resetData gives, as a template row ...
        scratch = self._scratch[0]
        mujoco.mj_resetData(m, scratch)
        self._initial_state = np.empty(self.states.shape[1])
        mujoco.mj_getState(m, scratch, self._initial_state, STATE_SPEC)
        # ... and, for the sensors of the reset states (mj_forward), one rollout step of a copy of the model whose
        # timestep is 0: MuJoCo's step computes the sensors of the state and integrates it by nothing.
        self._forward_model: mujoco.MjModel | None = None
        if m.nsensordata:
            self._forward_model = copy.copy(m)
            self._forward_model.opt.timestep = 0.0

    def _write_controls(self, actions: np.ndarray) -> None:
        """The batch of actions -> ``self._control`` (the same ``ctrl`` for each of the ``frame_skip`` steps)."""
        self._control[:] = self.env.controls(actions)[:, None, :]

    def _reset_envs(self, which: np.ndarray) -> None:
        """Reset the envs of mask ``which`` as the single env's ``reset`` does, on the batch arrays: the only
        per-env Python left is the task's draw from that env's own generator (what keeps env i seeded with
        s equal to a single env seeded with s + i)."""
        idx = np.flatnonzero(which)
        if idx.size == 0:
            return
        fresh = np.repeat(self._initial_state[None], idx.size, axis=0)
        qpos, qvel = state_qpos_qvel(fresh, self._nq, self._nv)  # views: the draws land in ``fresh``
        for row, i in enumerate(idx):
            self.env.reset_state(self._rngs[i], qpos[row], qvel[row])
        self.states[idx] = fresh
        if self._forward_model is not None:
            sensors = np.empty((idx.size, 1, self.sensordata.shape[1]))
            self._rollout.rollout([self._forward_model] * idx.size, self._scratch, fresh,
                                  np.zeros((idx.size, 1, self._control.shape[2])), nstep=1,
                                  state=np.empty((idx.size, 1, fresh.shape[1])), sensordata=sensors)
            self.sensordata[idx] = sensors[:, 0]
        self._start[idx] = self.env.record_start(qpos, self.sensordata[idx])
        self._steps[idx] = 0
        self._needs_reset[idx] = False

    def _evaluate(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Observations (state vectors), rewards, terminated and the info dict of the batch's current states."""
        qpos, qvel = state_qpos_qvel(self.states, self._nq, self._nv)
        obs, reward, terminated, success = self.env.evaluate(qpos, qvel, self.sensordata, self._start)
        return obs, reward, terminated, {"is_success": success}

    def _observations(self, state_obs: np.ndarray) -> np.ndarray:
        if not self.env.image_observation:
            return state_obs
        return np.stack([self.env.observe_image(self._data_of(i)) for i in range(self.num_envs)])

    def _render_env(self, i: int) -> np.ndarray:
        return self.env._render(self.env.camera, self.env.height, self.env.width, data=self._data_of(i))

    def _data_of(self, i: int) -> mujoco.MjData:
        """Env ``i``'s state in a scratch MjData (for rendering)."""
        m, d = self._models[i], self._scratch[0]
        mujoco.mj_setState(m, d, self.states[i], STATE_SPEC)
        mujoco.mj_forward(m, d)
        return d
