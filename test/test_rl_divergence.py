"""A diverged simulation in robot_core.rl's envs (robot_core/rl/divergence.py): in the batched path only that env's
episode ends (truncated, ``info["diverged"]``, its last good observation), it starts afresh at the next step as a
single env seeded alike would, and the other envs step on to the bit as in a batch without the fault; the single
envs end the episode the same way instead of raising."""

from __future__ import annotations

import logging

import gymnasium as gym
import numpy as np
import pytest

from robot_core.rl import CARTPOLE_ID, PUSHING_ROBOT_ID, REACH_ID
from robot_core.rl.divergence import describe

N, SEED, FAULT_STEP, BAD_ENV = 4, 30, 6, 2


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MuJoCo's default warning handler appends to ./MUJOCO_LOG.TXT


def _actions(space: gym.spaces.Box, rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(0.5 * space.low, 0.5 * space.high).astype(np.float32)


@pytest.mark.parametrize("env_id", [CARTPOLE_ID, PUSHING_ROBOT_ID, REACH_ID])
@pytest.mark.parametrize("bad_value", [np.nan, 1e12], ids=["nan", "huge"])
def test_batched_divergence_ends_only_that_env(env_id, bad_value, caplog):
    faulty = gym.make_vec(env_id, num_envs=N, vectorization_mode="vector_entry_point")
    clean = gym.make_vec(env_id, num_envs=N, vectorization_mode="vector_entry_point")
    single = gym.make(env_id).unwrapped  # what env BAD_ENV starts its next episode as
    single.reset(seed=SEED + BAD_ENV)
    fresh_obs, _ = single.reset()  # the second episode drawn by BAD_ENV's generator
    obs, _ = faulty.reset(seed=SEED)
    assert np.array_equal(obs, clean.reset(seed=SEED)[0])
    rng = np.random.default_rng(1)
    space = faulty.single_action_space
    last = obs
    for step in range(FAULT_STEP + 12):
        actions = np.stack([_actions(space, rng) for _ in range(N)])
        if step == FAULT_STEP:  # the velocity of one env's row blows up before this step
            faulty.unwrapped._batch.bind("qvel")[BAD_ENV, 0] = bad_value
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="robot_core.rl"):
            got = faulty.step(actions)
        want = clean.step(actions)
        obs, reward, terminated, truncated, info = got
        assert np.all(np.isfinite(obs)) and np.all(np.isfinite(reward)), f"step {step}"
        others = np.arange(N) != BAD_ENV
        for mine, theirs in zip(got[:4], want[:4], strict=True):  # the other envs: to the bit
            assert np.array_equal(mine[others], theirs[others]), f"step {step}"
        if step < FAULT_STEP:
            assert not info["diverged"].any()
            for mine, theirs in zip(got[:4], want[:4], strict=True):
                assert np.array_equal(mine, theirs), f"step {step}"
        elif step == FAULT_STEP:
            assert info["diverged"].tolist() == [i == BAD_ENV for i in range(N)]
            assert truncated[BAD_ENV] and not terminated[BAD_ENV]
            assert np.array_equal(obs[BAD_ENV], last[BAD_ENV])  # its last good observation
            records = [r for r in caplog.records if "diverged" in r.getMessage()]
            assert len(records) == 1 and f"env {BAD_ENV}:" in records[0].getMessage(), caplog.text
            assert "velocity at dof 0, joint '" in records[0].getMessage()
        elif step == FAULT_STEP + 1:  # the autoreset: a fresh start from its own generator
            assert not info["diverged"].any() and reward[BAD_ENV] == 0.0
            assert np.array_equal(obs[BAD_ENV], fresh_obs)
            assert not any("diverged" in r.getMessage() for r in caplog.records)
            single_obs = fresh_obs
        else:  # and steps on as a single env from that start
            single_obs, *_ = single.step(actions[BAD_ENV])
            assert np.array_equal(obs[BAD_ENV], single_obs), f"step {step}"
            assert not info["diverged"].any()
        if step > FAULT_STEP and (terminated | truncated)[others].any():
            break  # (an other env's autoreset: the clean batch draws the same; the single env check ends here)
        last = obs
    faulty.close()
    clean.close()


@pytest.mark.parametrize("env_id", [CARTPOLE_ID, PUSHING_ROBOT_ID, REACH_ID])
def test_single_env_divergence_truncates_with_info(env_id, caplog):
    env = gym.make(env_id).unwrapped
    env.reset(seed=4)
    zero = np.zeros(env.action_space.shape, dtype=np.float32)
    last_obs, last_reward, *_ = env.step(zero)
    data = env.engine.data if hasattr(env, "engine") else env.data
    data.qvel[0] = np.nan
    with caplog.at_level(logging.WARNING, logger="robot_core.rl"):
        obs, reward, terminated, truncated, info = env.step(zero)
    assert truncated and not terminated and info["diverged"]
    assert np.array_equal(obs, last_obs) and reward == last_reward
    assert [r.getMessage() for r in caplog.records if "diverged" in r.getMessage()], caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="robot_core.rl"):
        obs, _reward, _terminated, truncated, info = env.step(zero)  # stepped on without reset: not again
    assert not info["diverged"] and not truncated and np.all(np.isfinite(obs))
    assert not caplog.records
    obs, _ = env.reset(seed=4)
    assert np.all(np.isfinite(obs)) and not env.step(zero)[4]["diverged"]
    env.close()


def test_single_reach_huge_acceleration_truncates_instead_of_raising():
    """A huge but finite velocity: MuJoCo's accelerations blow up, the engine raises PhysicsDivergedError (and
    resets itself); the env turns it into the same truncation."""
    env = gym.make(REACH_ID).unwrapped
    env.reset(seed=1)
    zero = np.zeros(env.action_space.shape, dtype=np.float32)
    last_obs, *_ = env.step(zero)
    env.engine.data.qvel[0] = 1e8
    obs, _reward, terminated, truncated, info = env.step(zero)
    assert truncated and not terminated and info["diverged"] and np.array_equal(obs, last_obs)
    assert np.all(np.isfinite(env.reset(seed=1)[0]))
    env.close()


def test_gymnasium_sync_vector_reports_it_per_env():
    """gymnasium's own vector of single envs reports the same key, per env."""
    vec = gym.make_vec(CARTPOLE_ID, num_envs=2, vectorization_mode="sync")
    vec.reset(seed=0)
    vec.unwrapped.envs[1].unwrapped.data.qvel[1] = np.nan
    _obs, _reward, _terminated, truncated, info = vec.step(np.zeros((2, 1), dtype=np.float32))
    assert info["diverged"].tolist() == [False, True] and truncated.tolist() == [False, True]
    vec.close()


def test_the_warning_names_the_joint():
    model = gym.make(CARTPOLE_ID).unwrapped.model  # slider (qpos 0, dof 0), hinge (qpos 1, dof 1)
    assert describe(np.array([1, 0, 0]), np.array([1, 0, 0]), model) == (
        "non-finite or huge position at qpos index 1, joint 'hinge'")
    assert describe(np.array([0, 2, 1]), np.array([0, 0, 1]), model) == (
        "non-finite or huge velocity at dof 0, joint 'slider'; non-finite or huge acceleration at dof 1, "
        "joint 'hinge'")
    assert describe(np.zeros(3), np.zeros(3)) == "no divergence counter set"
