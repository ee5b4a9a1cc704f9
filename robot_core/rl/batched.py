"""BatchedEnv: N copies of a :class:`~robot_core.rl.task_env.TaskEnv` stepped together by ``mujoco.batch``.

gymnasium's ``SyncVectorEnv`` steps its envs one after the other from Python, and ``AsyncVectorEnv`` pays a
process and a pipe per env. Here the N physics states live in the state rows of one ``mujoco.batch.Batch``
(MuJoCo's C++ batch: one row per simulation, a thread pool that includes the calling thread), and each
``step()`` writes the N controls into those rows and has the batch run the ``frame_skip`` physics steps of every
env without coming back to Python. The task code (controls, observations, rewards, termination) is the single
env's, applied to the whole batch at once.

Why ``Batch`` and not ``mujoco.rollout``: rollout sets each step's controls and copies each of the
``frame_skip`` states out through ``mj_setState`` / ``mj_getState``, which on one thread cost 1.3-1.4x a plain
``mj_step(nstep=20)`` loop on the cart-pole (doc/benchmarks.md); the batch loads a row, runs ``mj_step`` ``nstep``
times and saves the row, at the plain loop's cost, and its caller's thread is one of its workers.

``gym.make_vec("robot_core/CartPole-v0", num_envs=N, vectorization_mode="vector_entry_point")`` builds one
(``robot_core.rl`` registers the entry point for its task envs). Semantics are gymnasium's ``VectorEnv`` with
``AutoresetMode.NEXT_STEP``: the step after an episode ended resets that env (its action is ignored, reward 0)
and the id's ``max_episode_steps`` truncates. Env ``i`` seeded with ``seed`` draws like a single env seeded
with ``seed + i``; the trajectories are the single env's to the bit, with contacts too: each env step starts the
constraint solver cold (the rows' ``qacc_warmstart`` zeroed), and so does the single env (``TaskEnv.step``).

Autoreset runs on the batch arrays too (``_reset_envs``); the one per-env Python loop left is each finished
env's draw from its own generator. Image observations are rendered env by env (one OpenGL render each).

What is specific to ``TaskEnv`` is in a handful of methods (the model, controls, resets, evaluation, the state of
one env for rendering) that :class:`~robot_core.rl.batched_reach.BatchedReachEnv` replaces for the Reach task;
the stepping, autoreset bookkeeping and truncation stay here.
"""

from __future__ import annotations

import os
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from mujoco.batch import Batch

from robot_core.rl.divergence import DIVERGENCE_WARNINGS, counters_clear, describe, log
from robot_core.rl.task_env import STATE_SPEC, state_qpos_qvel


class BatchedEnv(VectorEnv):
    """``num_envs`` copies of ``env_class`` in one process, stepped by ``mujoco.batch``; see the module docstring."""

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
        if nthread is None:  # threads including the caller's: one env runs on the calling thread alone
            nthread = min(self.num_envs, os.cpu_count() or 1)
        self.nthread = max(1, int(nthread))
        self._batch = Batch(m, self.num_envs, nthread=self.nthread)
        nstate = mujoco.mj_stateSize(m, STATE_SPEC)
        if mujoco.mj_stateSize(m, mujoco.mjtState.mjSTATE_PLUGIN | mujoco.mjtState.mjSTATE_PLASTIC):
            raise ValueError(f"{env_class.__name__}: BatchedEnv needs a model without plugin or plastic state "
                             "(its physics state must lead the batch's state rows)")
        # The batch's rows hold time, qpos, qvel, act, history first (STATE_SPEC's layout), then the inputs.
        self.states = self._batch.state[:, :nstate]
        self._qpos, self._qvel = state_qpos_qvel(self.states, self._nq, self._nv)  # views, made once
        self._control = self._batch.bind("ctrl")
        self._warmstart = self._batch.bind("qacc_warmstart")
        self.sensordata = np.zeros((self.num_envs, m.nsensordata))
        self._sensor_out = self._batch.bind("sensordata") if m.nsensordata else None
        self._scratch = mujoco.MjData(m)
        self._rngs = [np.random.default_rng(i) for i in range(self.num_envs)]
        # Episode lengths without a per-step array update: ``_clock`` counts this batch's steps, each env's
        # episode started at ``_episode_start`` (in clock steps), and truncation is looked at only once the clock
        # reaches ``_next_truncation``, never later than the earliest env's limit (two numpy calls a step fewer:
        # ~1.5 µs, about 1 % of a step of 8 cart-poles on two threads).
        self._clock = 0
        self._episode_start = np.zeros(self.num_envs, dtype=np.int64)
        self._next_truncation = self._limit_from(self._clock)
        self._needs_reset = np.zeros(self.num_envs, dtype=bool)  # replaced each step, never written in place
        self._any_reset = False  # np.count_nonzero(self._needs_reset) > 0, taken when it is made
        # Divergence (robot_core.rl.divergence): each row's counters, a live view, zeroed when its episode starts.
        self._divergence = self._batch.warning[:, DIVERGENCE_WARNINGS, 1]
        self._no_divergence = bytes(self._divergence.nbytes)
        self._not_diverged = np.zeros(self.num_envs, dtype=bool)
        self._not_diverged.flags.writeable = False  # shared by every step's info without a divergence
        self._last: tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]] | None = None  # last step's results
        self._state_observations = not getattr(self.env, "image_observation", False)  # (obs are evaluate's)
        self._setup_task()

    # ------------------------------------------------------------------ VectorEnv API
    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None):
        seeds = seed if isinstance(seed, list) else [None if seed is None else seed + i for i in range(self.num_envs)]
        if len(seeds) != self.num_envs:
            raise ValueError(f"reset got {len(seeds)} seeds for {self.num_envs} envs")
        for i, s in enumerate(seeds):
            if s is not None:
                self._rngs[i], _ = gym.utils.seeding.np_random(s)
        self._needs_reset = np.zeros(self.num_envs, dtype=bool)
        self._any_reset = False
        self._start_episodes(np.ones(self.num_envs, dtype=bool))
        self._next_truncation = self._limit_from(self._clock)
        obs, reward, _terminated, info = self._evaluate()
        observations = self._observations(obs)
        self._last = (observations, reward, info)
        return observations, info

    def step(self, actions):
        actions = np.asarray(actions, dtype=np.float64)
        if actions.ndim != 2 or actions.shape[0] != self.num_envs:
            actions = actions.reshape(self.num_envs, -1)
        resetting = self._needs_reset  # (a new array is made for the next step below: no copy needed)
        self._write_controls(actions)
        self._warmstart[:] = 0.0  # the solver starts cold each env step, as the single env's step() does
        self._batch.step(nstep=self.env.frame_skip)
        if self._sensor_out is not None:  # (sensors of the last physics step's start, as mj_step leaves them)
            self.sensordata[:] = self._sensor_out
        self._clock += 1
        # (the reset envs' step counts restart at 0: the reset step is not a step of the new episode)
        reset = self._start_episodes(resetting) if self._any_reset else None
        obs, reward, terminated, info = self._evaluate()
        truncated = (np.zeros(self.num_envs, dtype=bool) if self._clock < self._next_truncation
                     else self._truncations())
        if reset is not None:
            reward[reset] = 0.0
            terminated[reset] = False
            truncated[reset] = False
        observations = obs if self._state_observations else self._observations(obs)
        # Rows that diverged in this step (the resetting ones were zeroed by _start_episodes): rare, so the
        # common step pays one bytes comparison.
        diverged = (self._not_diverged if counters_clear(self._divergence, self._no_divergence)
                    else self._diverged(observations, reward, terminated, truncated, info))
        info["diverged"] = diverged
        self._needs_reset = needs_reset = terminated | truncated
        self._any_reset = np.count_nonzero(needs_reset) > 0  # (C-level: a third of ndarray.any()'s cost)
        self._last = (observations, reward, info)
        return observations, reward, terminated, truncated, info

    def render(self) -> tuple[np.ndarray, ...] | None:
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='rgb_array' to the env")
            return None
        return tuple(self._render_env(i) for i in range(self.num_envs))

    def close_extras(self, **kwargs: Any) -> None:
        self.env.close()

    def _start_episodes(self, which: np.ndarray) -> np.ndarray:
        """New episodes for the envs of mask ``which``: the task's reset, then the bookkeeping of every task;
        returns their indices."""
        idx = np.flatnonzero(which)
        self._reset_envs(idx)
        self._episode_start[idx] = self._clock  # (a later start: _next_truncation stays early enough)
        self._batch.warning[idx] = 0  # as mj_resetData leaves a single env's counters
        return idx

    def _limit_from(self, start: int) -> float:
        """The clock step at which an episode started at clock step ``start`` is truncated (inf: no limit)."""
        return float("inf") if self.max_episode_steps is None else start + self.max_episode_steps

    def _truncations(self) -> np.ndarray:
        """The envs whose episodes reach the limit at this step, once the clock reached ``_next_truncation``; the
        next check is due at the earliest limit of the episodes running then (the ending ones restart next step)."""
        ended = self._clock - self._episode_start >= self.max_episode_steps
        self._next_truncation = self._limit_from(int(np.where(ended, self._clock + 1, self._episode_start).min()))
        return ended

    def _diverged(self, observations: np.ndarray, reward: np.ndarray, terminated: np.ndarray,
                  truncated: np.ndarray, info: dict[str, np.ndarray]) -> np.ndarray:
        """Envs whose physics diverged in this step (MuJoCo reset their rows): their episodes end truncated and
        report the last good observation, reward and info, in place; one warning each. The per-env Python
        runs for those envs only (:mod:`robot_core.rl.divergence`)."""
        numbers = self._divergence
        diverged = numbers.any(axis=1)
        idx = np.flatnonzero(diverged)
        lastinfo = self._batch.warning[:, DIVERGENCE_WARNINGS, 0]
        last_obs, last_reward, last_info = self._last or (observations, reward, info)  # (stepped before reset())
        for i in idx:
            log.warning("%s env %d: the simulation diverged (%s) in step %d of its episode; MuJoCo reset its "
                        "state, the episode ends truncated with info['diverged'][%d]", type(self).__name__, i,
                        describe(numbers[i], lastinfo[i], self.model), self._clock - self._episode_start[i], i)
        observations[idx] = last_obs[idx]
        reward[idx] = last_reward[idx]
        for key, values in info.items():
            if key in last_info:
                values[idx] = last_info[key][idx]
        terminated[idx] = False
        truncated[idx] = True
        return diverged

    # ------------------------------------------------------------- the task (TaskEnv; BatchedReachEnv replaces these)
    def _batch_model(self) -> mujoco.MjModel:
        """The model every env steps (the batch copies it; per-env values are the batch's ``expand``)."""
        return self.env.model

    def _setup_task(self) -> None:
        """What the task needs beyond the batch arrays; called at the end of ``__init__``."""
        m = self.model
        self._start = np.zeros((self.num_envs, self.env.start_size()))
        # Each env's qpos and qvel in its state row, as views made once: a reset draws straight into them.
        self._qpos_rows, self._qvel_rows = list(self._qpos), list(self._qvel)
        # Autoreset without a MuJoCo call per env: the state mj_resetData gives, as a template row; the sensors
        # of the reset states come from the batch's mj_forward of those rows (``_reset_envs``).
        scratch = self._scratch
        mujoco.mj_resetData(m, scratch)
        self._initial_state = np.empty(self.states.shape[1])
        mujoco.mj_getState(m, scratch, self._initial_state, STATE_SPEC)

    def _write_controls(self, actions: np.ndarray) -> None:
        """The batch of actions -> ``self._control``, the rows' ``ctrl`` (held for the ``frame_skip`` steps)."""
        self._control[:] = self.env.controls(actions)

    def _reset_envs(self, idx: np.ndarray) -> None:
        """Reset the envs ``idx`` as the single env's ``reset`` does, on the batch arrays: the only per-env
        Python left is the task's draw from that env's own generator (what keeps env i seeded with s equal to
        a single env seeded with s + i)."""
        if idx.size == 0:
            return
        self.states[idx] = self._initial_state
        reset_state, rngs, qpos, qvel = self.env.reset_state, self._rngs, self._qpos_rows, self._qvel_rows
        for i in idx.tolist():
            reset_state(rngs[i], qpos[i], qvel[i])
        if self._sensor_out is not None:
            # The single env's reset: mj_resetData (ctrl and warm start zero), then mj_forward for the sensors.
            self._control[idx] = 0.0
            self._warmstart[idx] = 0.0
            self._batch.forward(idx)
            self.sensordata[idx] = self._sensor_out[idx]
        if self._start.shape[1]:
            self._start[idx] = self.env.record_start(self.states[idx, 1:1 + self._nq], self.sensordata[idx])

    def _evaluate(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Observations (state vectors), rewards, terminated and the info dict of the batch's current states."""
        obs, reward, terminated, success = self.env.evaluate(self._qpos, self._qvel, self.sensordata, self._start)
        return obs, reward, terminated, {"is_success": success}

    def _observations(self, state_obs: np.ndarray) -> np.ndarray:
        if not self.env.image_observation:
            return state_obs
        return np.stack([self.env.observe_image(self._data_of(i)) for i in range(self.num_envs)])

    def _render_env(self, i: int) -> np.ndarray:
        return self.env._render(self.env.camera, self.env.height, self.env.width, data=self._data_of(i))

    def _data_of(self, i: int) -> mujoco.MjData:
        """Env ``i``'s state in a scratch MjData (for rendering)."""
        m, d = self._model_of(i), self._scratch
        mujoco.mj_setState(m, d, self.states[i], STATE_SPEC)
        mujoco.mj_forward(m, d)
        return d

    def _model_of(self, i: int) -> mujoco.MjModel:
        """The model env ``i`` steps (for rendering)."""
        return self.model
