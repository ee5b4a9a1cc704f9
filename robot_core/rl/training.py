"""Train, save and load stable-baselines3 PPO policies for robot_core's environments.

``make_ppo`` sets PPO up on ``n_envs`` copies of a registered env (an MLP policy for vector observations; for
image observations a CNN policy on :class:`TinyCnn`, small enough to train on a CPU); ``load_policy`` reads a
saved policy back and refuses one whose observation or action space is not the env's, naming both, instead
of failing somewhere inside torch. stable-baselines3 and torch are imported only here, so the environments do
not need them.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

# PPO settings that learn the state cart-pole within tens of thousands of steps (rl-zoo's CartPole-v1 ones,
# scaled down); the defaults of stable-baselines3 suit the other envs.
FAST_PPO: dict[str, Any] = {"n_steps": 64, "batch_size": 128, "n_epochs": 10, "gamma": 0.98, "gae_lambda": 0.8,
                            "learning_rate": 1e-3, "ent_coef": 0.0}


class PolicyFileError(ValueError):
    """A policy file that cannot be used (unreadable, not a policy, or made for another env)."""


def _torch_nn() -> Any:
    import torch
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    class TinyCnn(BaseFeaturesExtractor):
        """Three strided convolutions and a linear layer: 64 features from a small RGB image (channels first),
        some 60 k weights for a 64 x 96 image."""

        def __init__(self, observation_space: gym.spaces.Box, features_dim: int = 64):
            super().__init__(observation_space, features_dim)
            channels = observation_space.shape[0]
            self.cnn = torch.nn.Sequential(
                torch.nn.Conv2d(channels, 16, kernel_size=5, stride=3), torch.nn.ReLU(),
                torch.nn.Conv2d(16, 32, kernel_size=3, stride=2), torch.nn.ReLU(),
                torch.nn.Conv2d(32, 32, kernel_size=3, stride=2), torch.nn.ReLU(),
                torch.nn.Flatten())
            with torch.no_grad():
                n_flat = self.cnn(torch.zeros(1, *observation_space.shape)).shape[1]
            self.linear = torch.nn.Sequential(torch.nn.Linear(n_flat, features_dim), torch.nn.ReLU())

        def forward(self, observations: Any) -> Any:
            return self.linear(self.cnn(observations))

    return TinyCnn


def is_image_space(space: gym.Space) -> bool:
    return isinstance(space, gym.spaces.Box) and space.dtype == np.uint8 and len(space.shape) == 3


def make_vec(env_id: str, env_kwargs: dict[str, Any], n_envs: int, seed: int) -> Any:
    """stable-baselines3's vector of ``n_envs`` copies of ``env_id`` (in this process), seeded."""
    from stable_baselines3.common.env_util import make_vec_env

    return make_vec_env(env_id, n_envs=n_envs, seed=seed, env_kwargs=env_kwargs)


def make_ppo(env_id: str, env_kwargs: dict[str, Any], *, seed: int = 0, n_envs: int = 8,
             threads: int = 1) -> Any:
    """A fresh PPO on ``n_envs`` copies of the env; ``threads`` caps torch's threads (small nets gain nothing
    from more)."""
    import torch
    from stable_baselines3 import PPO

    torch.set_num_threads(threads)
    vec = make_vec(env_id, env_kwargs, n_envs, seed)
    if is_image_space(vec.observation_space):
        return _without_log_folder(PPO("CnnPolicy", vec, seed=seed, n_steps=64, batch_size=64, verbose=0,
                                       device="cpu", policy_kwargs={"features_extractor_class": _torch_nn(),
                                                                    "normalize_images": True}))
    return _without_log_folder(PPO("MlpPolicy", vec, seed=seed, verbose=0, device="cpu", **FAST_PPO))


def _without_log_folder(model: Any) -> Any:
    """stable-baselines3's default logger makes an empty ``SB3-<date>`` folder in the temporary directory at every
    ``learn()``, even with ``verbose=0``; these models print nothing through it, so they get one that writes
    nowhere."""
    from stable_baselines3.common.logger import Logger

    model.set_logger(Logger(folder=None, output_formats=[]))
    return model


def load_policy(path: str | Path, env_id: str, env_kwargs: dict[str, Any], *, seed: int = 0,
                n_envs: int = 8) -> Any:
    """A saved PPO attached to ``n_envs`` copies of the env, after checking it was made for this env."""
    from stable_baselines3 import PPO

    p = Path(path)
    if not p.is_file():
        raise PolicyFileError(f"policy file {p} does not exist")
    try:
        with zipfile.ZipFile(p) as zf:
            if "data" not in zf.namelist():
                raise PolicyFileError(f"policy file {p} is not a stable-baselines3 policy (no 'data' entry)")
        model = PPO.load(p, device="cpu")
    except PolicyFileError:
        raise
    except Exception as exc:  # a truncated zip, a foreign file, a policy of another algorithm
        raise PolicyFileError(f"policy file {p} cannot be read as a PPO policy: {type(exc).__name__}: {exc}"
                              .splitlines()[0]) from exc
    vec = make_vec(env_id, env_kwargs, n_envs, seed)
    check_spaces(p, env_id, model.observation_space, model.action_space, vec.observation_space, vec.action_space)
    # again, on this vector (its size may differ from the saved one)
    return _without_log_folder(PPO.load(p, env=vec, device="cpu"))


def check_spaces(path: Path, env_id: str, policy_obs: gym.Space, policy_act: gym.Space, env_obs: gym.Space,
                 env_act: gym.Space) -> None:
    """Refuse a policy whose spaces are not the env's (an image env's are compared channels first, as
    stable-baselines3 stores them)."""
    if is_image_space(env_obs):
        h, w, c = env_obs.shape
        env_obs = gym.spaces.Box(0, 255, shape=(c, h, w), dtype=np.uint8)
    for what, mine, theirs in (("observation", policy_obs, env_obs), ("action", policy_act, env_act)):
        if getattr(mine, "shape", None) != getattr(theirs, "shape", None) or type(mine) is not type(theirs):
            raise PolicyFileError(f"policy file {path} was trained for another env: its {what} space is {mine}, "
                                  f"{env_id} has {theirs}")


def evaluate(model: Any, env: gym.Env, episodes: int, seed: int) -> list[tuple[int, float]]:
    """(length, return) of ``episodes`` deterministic episodes of ``model`` on ``env``."""
    out = []
    for k in range(episodes):
        obs, _ = env.reset(seed=seed + k)
        length, total, done = 0, 0.0, False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, reward, terminated, truncated, _ = env.step(action)
            length, total, done = length + 1, total + float(reward), terminated or truncated
        out.append((length, total))
    return out


# What "learned" means for the CartPole checks (the CI test, bench/rl.py, bench/rl_rllib.py): a mean episode
# length LEARNED_FACTOR times the uniformly random policy's (issue 18).
LEARNED_FACTOR = 5.0


def random_episode_lengths(env_id: str, episodes: int = 20, seed: int = 1000) -> list[int]:
    """Episode lengths of the uniformly random policy on ``env_id`` (episode k: env seeded ``seed + k``, action
    space ``k``), the baseline of the learned checks; the same seeds as :func:`evaluate` uses for the policy."""
    env = gym.make(env_id)
    lengths = []
    try:
        for k in range(episodes):
            env.reset(seed=seed + k)
            env.action_space.seed(k)
            n, done = 0, False
            while not done:
                _, _, terminated, truncated, _ = env.step(env.action_space.sample())
                n, done = n + 1, terminated or truncated
            lengths.append(n)
    finally:
        env.close()
    return lengths


def learned_threshold(env_id: str, episodes: int = 20) -> float:
    """The mean episode length a policy must reach to count as learned: LEARNED_FACTOR x the random policy's."""
    return LEARNED_FACTOR * float(np.mean(random_episode_lengths(env_id, episodes)))
