"""robot_core.rl task envs (CartPole-v0, PushingRobot-v0): gymnasium's checker, determinism, pickling, no GL
before render, heuristics that succeed, the batched path against single envs, gymnasium's sync / async vectors."""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import robot_core.rl
from robot_core.rl import CARTPOLE_ID, PUSHING_ROBOT_ID, REACH_ID

TASKS = [(CARTPOLE_ID, {}), (CARTPOLE_ID, {"observation": "visual"}), (PUSHING_ROBOT_ID, {})]
TASK_IDS = ["cartpole-state", "cartpole-visual", "pushing"]


def rollout(env: gym.Env, seed: int, steps: int = 25) -> tuple[np.ndarray, list[float]]:
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    observations, rewards = [obs], []
    for _ in range(steps):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        observations.append(obs)
        rewards.append(reward)
        if terminated or truncated:
            break
    return np.array(observations), rewards


@pytest.mark.parametrize(("env_id", "kwargs"), TASKS, ids=TASK_IDS)
def test_check_env_and_determinism(env_id, kwargs):
    env = gym.make(env_id, **kwargs)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*infinity.*")
        check_env(env.unwrapped, skip_render_check=True)
    assert env.spec.max_episode_steps in (200, 500)
    a, ra = rollout(env, 7)
    b, rb = rollout(env, 7)
    c, _ = rollout(env, 8)
    assert np.array_equal(a, b) and ra == rb
    assert not np.array_equal(a[0], c[0])
    env.close()


@pytest.mark.parametrize(("env_id", "kwargs"), TASKS, ids=TASK_IDS)
def test_pickled_env_continues_identically(env_id, kwargs):
    env = gym.make(env_id, **kwargs).unwrapped
    env.reset(seed=3)
    for _ in range(5):
        env.step(env.action_space.sample())
    copy = pickle.loads(pickle.dumps(env))
    action = np.full(env.action_space.shape, 0.3, dtype=np.float32)
    for _ in range(5):
        mine, theirs = env.step(action), copy.step(action)
        assert np.array_equal(mine[0], theirs[0]) and mine[1:3] == theirs[1:3]
    assert np.array_equal(env.reset()[0], copy.reset()[0])  # the generator travelled too


@pytest.mark.parametrize("env_id", [CARTPOLE_ID, PUSHING_ROBOT_ID])
def test_no_gl_context_before_render(env_id):
    env = gym.make(env_id, render_mode="rgb_array").unwrapped
    env.reset(seed=0)
    env.step(env.action_space.sample())
    assert env._renderer is None
    frame = env.render()
    assert frame.shape == (240, 320, 3) and frame.dtype == np.uint8 and frame.std() > 5
    assert env._renderer is not None
    env.close()


def test_visual_cartpole_sees_the_pole_move():
    env = gym.make(CARTPOLE_ID, observation="visual")
    first, _ = env.reset(seed=0)
    assert first.shape == (64, 96, 3) and first.dtype == np.uint8
    for _ in range(8):
        obs, *_ = env.step(np.array([1.0], dtype=np.float32))
    assert np.abs(obs.astype(int) - first.astype(int)).sum() > 1000
    env.close()


def test_cartpole_heuristic_balances_500_steps():
    env = gym.make(CARTPOLE_ID)
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        steps, done = 0, False
        while not done:
            obs, _, terminated, truncated, _ = env.step(env.unwrapped.heuristic_action(obs))
            steps += 1
            done = terminated or truncated
        assert steps == 500 and not terminated, f"seed {seed}: fell after {steps} steps"


def test_cartpole_random_policy_falls_quickly():
    env = gym.make(CARTPOLE_ID)
    lengths = [len(rollout(env, seed, steps=500)[1]) for seed in range(10)]
    assert 5 < np.mean(lengths) < 100


def test_pushing_heuristic_moves_the_box():
    env = gym.make(PUSHING_ROBOT_ID)
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        assert not info["is_success"]
        box_start = obs[4:7] + obs[7:10]
        done = False
        while not done:
            obs, reward, terminated, truncated, info = env.step(env.unwrapped.heuristic_action(obs))
            done = terminated or truncated
        box = obs[4:7] + obs[7:10]
        moved = float(np.linalg.norm(box[:2] - box_start[:2]))
        assert moved > 0.3 and info["is_success"], f"seed {seed}: box moved {moved:.3f} m"
        assert reward == pytest.approx(moved, abs=1e-6)


def test_batched_cartpole_matches_single_envs_to_the_bit():
    n = 5
    batch = gym.make_vec(CARTPOLE_ID, num_envs=n, vectorization_mode="vector_entry_point")
    singles = [gym.make(CARTPOLE_ID) for _ in range(n)]
    obs, _ = batch.reset(seed=20)
    assert np.array_equal(obs, np.stack([s.reset(seed=20 + i)[0] for i, s in enumerate(singles)]))
    rng = np.random.default_rng(0)
    for _ in range(12):
        actions = rng.uniform(-0.3, 0.3, size=(n, 1)).astype(np.float32)
        obs, _reward, terminated, _truncated, _ = batch.step(actions)
        steps = [s.step(actions[i]) for i, s in enumerate(singles)]
        assert np.array_equal(obs, np.stack([s[0] for s in steps]))
        assert terminated.tolist() == [s[2] for s in steps]
        if terminated.any():
            break
    batch.close()


def test_batched_cartpole_staggered_episodes_match_time_limited_single_envs():
    """Poles fall at different steps, so each env's episode starts at its own step and the episode limit
    truncates the envs one by one: terminated, truncated, rewards and observations stay the single envs' (each
    under gym.make's TimeLimit, reset the step after its episode ended, as NEXT_STEP autoreset does)."""
    n, limit = 4, 15
    batch = gym.make_vec(CARTPOLE_ID, num_envs=n, vectorization_mode="vector_entry_point", max_episode_steps=limit)
    singles = [gym.make(CARTPOLE_ID, max_episode_steps=limit) for _ in range(n)]
    obs, _ = batch.reset(seed=40)
    assert np.array_equal(obs, np.stack([s.reset(seed=40 + i)[0] for i, s in enumerate(singles)]))
    rng = np.random.default_rng(2)
    pending = np.zeros(n, dtype=bool)
    ends: list[tuple[int, int, str]] = []
    for k in range(120):
        actions = rng.uniform(-1.0, 1.0, size=(n, 1)).astype(np.float32)
        obs, reward, terminated, truncated, _ = batch.step(actions)
        for i, s in enumerate(singles):
            one = (s.reset()[0], 0.0, False, False) if pending[i] else s.step(actions[i])[:4]
            assert np.array_equal(obs[i], one[0]), f"step {k} env {i}"
            assert (reward[i], terminated[i], truncated[i]) == one[1:], f"step {k} env {i}"
        ends += [(k, int(i), "terminated" if terminated[i] else "truncated")
                 for i in np.flatnonzero(terminated | truncated)]
        pending = terminated | truncated
    batch.close()
    kinds = {kind for _k, _i, kind in ends}
    truncation_steps = {k for k, _i, kind in ends if kind == "truncated"}
    assert kinds == {"terminated", "truncated"}, ends
    assert len(truncation_steps) > 2, f"truncations all at the same steps: {ends}"  # staggered, not all together


def test_batched_autoreset_and_truncation():
    """The pushing robot's observation comes from sensors: the batched reset (sensors of the reset states from the
    batch's forward pass on the reset rows) gives the single envs' reset observations to the bit, also at the
    autoreset."""
    batch = gym.make_vec(PUSHING_ROBOT_ID, num_envs=3, vectorization_mode="vector_entry_point")
    singles = [gym.make(PUSHING_ROBOT_ID).unwrapped for _ in range(3)]
    assert batch.num_envs == 3 and batch.observation_space.shape == (3, 10)
    first, _ = batch.reset(seed=0)
    assert np.array_equal(first, np.stack([s.reset(seed=i)[0] for i, s in enumerate(singles)]))
    zeros = np.zeros((3, 2), dtype=np.float32)
    for step in range(200):
        obs, reward, terminated, truncated, _ = batch.step(zeros)
        assert truncated.all() == (step == 199) and not terminated.any()
    obs, reward, _terminated, truncated, _ = batch.step(zeros)  # the autoreset step
    assert np.all(reward == 0) and not truncated.any()
    assert not np.array_equal(obs, first)  # the generators moved on: new boxes
    assert np.array_equal(obs, np.stack([s.reset()[0] for s in singles]))
    obs, reward, *_ = batch.step(zeros)
    assert np.array_equal(obs, np.stack([s.step(zeros[0])[0] for s in singles]))  # and steps on from there
    batch.close()


def test_batched_pushing_robot_matches_single_envs_through_contacts():
    """The heuristic's arms hit the boxes and push them over the table: with those contacts in the solver the
    batched steps stay the single envs' to the bit (both start each env step's constraint solver cold)."""
    n = 3
    batch = gym.make_vec(PUSHING_ROBOT_ID, num_envs=n, vectorization_mode="vector_entry_point")
    singles = [gym.make(PUSHING_ROBOT_ID).unwrapped for _ in range(n)]
    obs, _ = batch.reset(seed=5)
    sobs = [s.reset(seed=5 + i)[0] for i, s in enumerate(singles)]
    for step in range(80):
        actions = np.stack([s.heuristic_action(sobs[i]) for i, s in enumerate(singles)])
        obs, reward, *_ = batch.step(actions)
        steps = [s.step(actions[i]) for i, s in enumerate(singles)]
        sobs = [st[0] for st in steps]
        assert np.array_equal(obs, np.stack(sobs)), f"step {step}"
        assert reward.tolist() == [st[1] for st in steps], f"step {step}"
    assert np.all(reward > 0.05)  # every arm reached its box and moved it
    batch.close()


def test_batched_cartpole_autoresets_each_env_as_a_single_env_resets():
    """Envs ending at different steps: each one's autoreset draws its next start from its own generator, as the
    single env seeded with seed + i does; the trajectories stay the single envs' to the bit across episodes."""
    n = 4
    batch = gym.make_vec(CARTPOLE_ID, num_envs=n, vectorization_mode="vector_entry_point")
    singles = [gym.make(CARTPOLE_ID).unwrapped for _ in range(n)]
    obs, _ = batch.reset(seed=40)
    assert np.array_equal(obs, np.stack([s.reset(seed=40 + i)[0] for i, s in enumerate(singles)]))
    actions = np.array([[1.0], [-1.0], [0.4], [-0.2]], dtype=np.float32)  # poles fall at different steps
    pending = np.zeros(n, dtype=bool)
    episodes = np.zeros(n, dtype=int)
    for _ in range(150):
        obs, reward, terminated, _truncated, _ = batch.step(actions)
        expected = []
        for i, s in enumerate(singles):
            if pending[i]:
                expected.append(s.reset()[0])
                assert reward[i] == 0.0 and not terminated[i]
                episodes[i] += 1
            else:
                single_obs, _, single_terminated, _, _ = s.step(actions[i])
                expected.append(single_obs)
                assert terminated[i] == single_terminated
        assert np.array_equal(obs, np.stack(expected))
        pending = terminated.copy()
    assert episodes.min() >= 2 and len(set(episodes.tolist())) > 1  # several resets, at different times
    batch.close()


def test_batched_visual_cartpole():
    batch = gym.make_vec(CARTPOLE_ID, num_envs=2, vectorization_mode="vector_entry_point", observation="visual")
    obs, _ = batch.reset(seed=0)
    assert obs.shape == (2, 64, 96, 3) and obs.dtype == np.uint8
    obs, *_ = batch.step(np.zeros((2, 1), dtype=np.float32))
    assert batch.observation_space.contains(obs)
    batch.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("env_id", [CARTPOLE_ID, PUSHING_ROBOT_ID, REACH_ID])
def test_gymnasium_vector_envs(env_id, mode):
    vec = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode)
    try:
        obs, _ = vec.reset(seed=1)
        assert vec.observation_space.contains(obs)
        for _ in range(3):
            obs, reward, _terminated, _truncated, _ = vec.step(vec.action_space.sample())
        assert obs.shape[0] == 2 and reward.shape == (2,)
        assert not np.array_equal(obs[0], obs[1])
    finally:
        vec.close()


def test_ids_listed():
    assert {REACH_ID, CARTPOLE_ID, PUSHING_ROBOT_ID} <= set(robot_core.rl.ENVIRONMENTS)
