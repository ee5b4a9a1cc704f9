"""BatchedReachEnv: N Reach envs stepped together by ``mujoco.batch`` (``robot_core/Reach-v0``'s vector entry point).

:class:`~robot_core.rl.batched.BatchedEnv` steps tasks built in code; Reach runs a robot read from URDF through
the simulator's ``PhysicsEngine``, whose servos are MuJoCo actuators whose mode lives in the model (gains, bias,
gravity compensation). During an episode that mode does not change (the controlled joints stay in the action's
mode, the others hold their start), so the batch steps a copy of the model as it is during an episode
(:meth:`ReachEnv.episode_model`) and each env's action becomes ``ctrl`` (:meth:`ReachEnv.batch_controls`, the
engine's clipping and limits on the whole batch). In velocity mode the engine also feeds the joints' damping and
friction at the commanded velocity forward through the actuator's constant bias, a model parameter: where a
controlled joint has such losses that field is made per env (the batch's ``expand``) and written each step.

The end effector's position is a ``framepos`` sensor, so the batch returns it; observation, reward and success
come from the single env's :meth:`ReachEnv.evaluate` on the batch arrays. Resets draw each env's episode with the
single env's own code (:meth:`RobotEnv.start_episode`: start pose, rejection-sampled target) from that env's
generator, one env at a time, and copy the engine's reset state into the batch.

Semantics are :class:`BatchedEnv`'s: ``AutoresetMode.NEXT_STEP``, env ``i`` seeded with ``s`` draws like a single
env seeded with ``s + i``, ``max_episode_steps`` truncates. The trajectories are the single envs' to the bit,
through joint limits and contacts too: each env step starts the constraint solver cold, and so does the
single env (``RobotEnv.step``).
"""

from __future__ import annotations

import copy
from typing import Any

import mujoco
import numpy as np

from robot_core.rl.batched import BatchedEnv
from robot_core.rl.reach_env import ReachEnv, as_columns
from robot_core.rl.task_env import STATE_SPEC


class BatchedReachEnv(BatchedEnv):
    """``num_envs`` Reach envs in one process, stepped by ``mujoco.batch``; see the module docstring."""

    env: ReachEnv

    def __init__(self, num_envs: int, *, max_episode_steps: int | None = None, nthread: int | None = None,
                 **env_kwargs: Any):
        super().__init__(ReachEnv, num_envs, max_episode_steps=max_episode_steps, nthread=nthread, **env_kwargs)

    # ------------------------------------------------------------------ BatchedEnv's task methods
    def _batch_model(self) -> mujoco.MjModel:
        model, self._ctrl_row = self.env.episode_model()
        return model

    def _setup_task(self) -> None:
        env = self.env
        self._columns = as_columns(env.actuator_ids)  # (a slice when the actuators are consecutive)
        self._control[:] = self._ctrl_row
        self._targets = np.zeros((self.num_envs, 3))
        self._mocap = env._target_mocap
        # Velocity mode on joints with damping or friction: the feed-forward bias differs per env (module docstring).
        act, idx = env.engine.actuation, env._command_idx
        self._bias: np.ndarray | None = None
        if env.action_type == "velocity" and (np.any(act.damping[idx]) or np.any(act.frictionloss[idx])):
            self._bias = self._batch.expand("actuator_biasprm")  # (N, nu, 10), live: the batch steps with it
            self._render_model = copy.copy(self.model)  # rendering's copy (_model_of)

    def _write_controls(self, actions: np.ndarray) -> None:
        finite = np.isfinite(actions)
        if np.count_nonzero(finite) != finite.size:  # (C-level count: ~1 µs a step less than ndarray.any)
            i, j = np.argwhere(~finite)[0]
            raise ValueError(f"action of env {i} is not finite: {actions[i, j]} for joint "
                             f"'{self.env.joint_names[j]}'")
        ctrl, bias = self.env.batch_controls(actions)
        self._control[:, self._columns] = ctrl
        if self._bias is not None:
            self._bias[:, self._columns, 0] = bias

    def _reset_envs(self, idx: np.ndarray) -> None:
        """Each env of ``idx`` starts an episode drawn by the single env's code from its own generator; the
        engine's reset state, sensors and target are copied into the batch, and the zero action's controls
        (a diverged row's were zeroed by MuJoCo's reset, the holding joints' targets with them)."""
        if idx.size == 0:
            return
        self._control[idx] = self._ctrl_row
        env = self.env
        m, d = env.engine.model, env.engine.data
        for i in idx:
            env.start_episode(self._rngs[i])
            mujoco.mj_getState(m, d, self.states[i], STATE_SPEC)
            self.sensordata[i] = d.sensordata
            self._targets[i] = env.target

    def _evaluate(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        obs, reward, success, distance = self.env.evaluate(self._qpos, self._qvel, self.sensordata, self._targets)
        return obs, reward, success.copy(), {"distance": distance, "is_success": success}

    def _observations(self, state_obs: np.ndarray) -> np.ndarray:
        return state_obs

    def _render_env(self, i: int) -> np.ndarray:
        return self.env.render_state(self._data_of(i))

    def _data_of(self, i: int) -> mujoco.MjData:
        """Env ``i``'s state in a scratch MjData, its target marker where its target is (for rendering)."""
        m, d = self._model_of(i), self._scratch
        mujoco.mj_setState(m, d, self.states[i], STATE_SPEC)
        d.mocap_pos[self._mocap] = self._targets[i]
        mujoco.mj_forward(m, d)
        return d

    def _model_of(self, i: int) -> mujoco.MjModel:
        """The model env ``i`` steps: with a per-env bias, the batch's model with env ``i``'s values."""
        if self._bias is None:
            return self.model
        return self._batch.get_model(i, self._render_model)
