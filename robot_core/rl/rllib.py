"""Ray RLlib for robot_core's environments: ``register_envs`` names them in Ray's env registry
(``ray.tune.register_env``), ``example_ppo_config`` is a documented PPO configuration with env-runner
processes. Ray is optional (``make setup-rllib``); it is imported only here.

RLlib builds each env in its env-runner processes from the registered creator with the ``env_config``
dictionary as keyword arguments, e.g. ``{"observation": "visual"}`` for the visual cart-pole::

    import ray
    from robot_core.rl.rllib import example_ppo_config, register_envs

    ray.init(num_cpus=2)
    register_envs()
    algo = example_ppo_config("robot_core/CartPole-v0", num_env_runners=2).build_algo()
    for _ in range(10):
        print(algo.train()["env_runners"]["episode_return_mean"])
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym


def make_env(env_id: str, env_config: dict[str, Any] | None = None) -> gym.Env:
    """The registered env ``env_id`` built from RLlib's ``env_config`` (its keys are the env's keyword arguments)."""
    import robot_core.rl  # noqa: F401  (registers the ids in this process, e.g. an env-runner)

    return gym.make(env_id, **dict(env_config or {}))


def register_envs() -> list[str]:
    """Register every robot_core env id with Ray's env registry; returns the ids."""
    from ray.tune.registry import register_env

    from robot_core.rl import ENVIRONMENTS

    for env_id in ENVIRONMENTS:
        register_env(env_id, lambda config, env_id=env_id: make_env(env_id, config))
    return list(ENVIRONMENTS)


def example_ppo_config(env_id: str = "robot_core/CartPole-v0", *, num_env_runners: int = 2,
                       env_config: dict[str, Any] | None = None, seed: int = 0) -> Any:
    """PPO on ``env_id`` with ``num_env_runners`` env-runner processes (one env each, torch on the CPU): small
    batches and network, so each ``train()`` takes seconds on a 2-core machine."""
    from ray.rllib.algorithms.ppo import PPOConfig

    return (
        PPOConfig()
        .environment(env_id, env_config=dict(env_config or {}))
        .framework("torch")
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=1, rollout_fragment_length="auto")
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=1000, minibatch_size=250, num_epochs=6, lr=1e-3, gamma=0.98,
                  lambda_=0.8)
        .rl_module(model_config={"fcnet_hiddens": [64, 64]})
        .debugging(seed=seed)
    )
