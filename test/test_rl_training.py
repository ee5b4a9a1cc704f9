"""PPO (stable-baselines3) on robot_core's envs: state CartPole learns to 5x the random policy's episode length
within a CI budget; run-env --train / --save / --load, the tiny CNN on the visual cart-pole, bad policy files."""

from __future__ import annotations

import hashlib
import time

import gymnasium as gym
import numpy as np
import pytest

from robot_core.cli import main
from robot_core.rl import CARTPOLE_ID, training

TRAIN_STEPS = 8192  # ~16 PPO updates of 8 x 64 steps; learns to ~150-500 steps per episode (random: ~27)


@pytest.fixture
def report(say, record_property):
    def _report(name: str, value) -> None:
        record_property(name, value)
        say(f"[rl-training] {name} = {value}")

    return _report


def test_ppo_beats_random_policy_fivefold_on_state_cartpole(report):
    baseline = float(np.mean(training.random_episode_lengths(CARTPOLE_ID)))
    start = time.perf_counter()
    model = training.make_ppo(CARTPOLE_ID, {}, seed=0, n_envs=8)
    model.learn(TRAIN_STEPS)
    took = time.perf_counter() - start
    assert model.logger.dir is None  # no empty SB3-<date> folder left in the temporary directory per training
    learned = float(np.mean([n for n, _ in training.evaluate(model, gym.make(CARTPOLE_ID), 10, seed=1000)]))
    report("ppo_cartpole", f"{TRAIN_STEPS} steps in {took:.1f} s: mean length {learned:.1f} vs random {baseline:.1f}"
           f" ({learned / baseline:.1f}x)")
    assert learned >= training.LEARNED_FACTOR * baseline


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(["run-env", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_train_save_load_and_refusals(capsys, tmp_path):
    policy = tmp_path / "cartpole.zip"
    status, out, err = run_cli(capsys, "--env", CARTPOLE_ID, "--train", "--steps", "512", "--n-envs", "2",
                               "--save", str(policy))
    assert status == 0 and policy.is_file() and "trained 512 steps" in out, err
    before = digest(policy)

    status, _, err = run_cli(capsys, "--env", CARTPOLE_ID, "--train", "--steps", "64", "--save", str(policy))
    assert status == 2 and "exists; pass --force" in err and err.count("\n") == 1
    assert digest(policy) == before  # nothing written over it

    status, out, _ = run_cli(capsys, "--env", CARTPOLE_ID, "--load", str(policy), "--episodes", "2")
    assert status == 0 and "loaded" in out and "PPO policy on robot_core/CartPole-v0: 2 episodes" in out

    status, out, _ = run_cli(capsys, "--env", CARTPOLE_ID, "--load", str(policy), "--train", "--steps", "256",
                             "--n-envs", "2", "--save", str(policy), "--force", "--episodes", "0")
    assert status == 0 and "trained 256 steps" in out and digest(policy) != before

    status, _, err = run_cli(capsys, "--env", "robot_core/PushingRobot-v0", "--load", str(policy))
    assert status == 2 and "trained for another env" in err and "observation space" in err
    assert err.count("\n") == 1

    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip at all")
    status, _, err = run_cli(capsys, "--env", CARTPOLE_ID, "--load", str(bad))
    assert status == 2 and "cannot be read as a PPO policy" in err and err.count("\n") == 1
    status, _, err = run_cli(capsys, "--env", CARTPOLE_ID, "--load", str(tmp_path / "missing.zip"))
    assert status == 2 and "does not exist" in err


def test_visual_cartpole_trains_with_the_tiny_cnn(capsys, tmp_path):
    policy = tmp_path / "visual"
    status, _out, err = run_cli(capsys, "--env", CARTPOLE_ID, "-a", "observation=visual", "--train", "--steps", "128",
                                "--n-envs", "2", "--save", str(policy))
    assert status == 0 and (tmp_path / "visual.zip").is_file(), err
    model = training.load_policy(tmp_path / "visual.zip", CARTPOLE_ID, {"observation": "visual"}, n_envs=1)
    extractor = model.policy.features_extractor
    assert type(extractor).__name__ == "TinyCnn"
    assert sum(p.numel() for p in model.policy.parameters()) < 100_000
    # and the state env refuses it
    status, _, err = run_cli(capsys, "--env", CARTPOLE_ID, "--load", str(tmp_path / "visual.zip"))
    assert status == 2 and "trained for another env" in err
