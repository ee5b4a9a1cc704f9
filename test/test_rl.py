"""robot_core.rl: the Reach environment passes gymnasium's checker, is deterministic and renders."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import robot_core.rl
from robot_core.rl import REACH_ID, ReachEnv, RenderUnavailableError
from robot_core.rl.reach_env import as_columns

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def report(say, record_property):
    def _report(name: str, value) -> None:
        record_property(name, value)
        say(f"[rl] {name} = {value}")

    return _report


def rollout(env: gym.Env, seed: int, steps: int = 30) -> tuple[np.ndarray, list[float]]:
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


@pytest.mark.parametrize("action_type", ["torque", "velocity"])
def test_check_env_passes(action_type):
    env = ReachEnv(action_type=action_type)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checker's advice about unbounded observation boxes
        check_env(env, skip_render_check=True)
    assert env.observation_space.shape == (2 * 7 + 6,)
    assert env.action_space.shape == (7,)
    assert env.joint_names == [f"joint{i}" for i in range(1, 8)] and env.end_effector == "tcp"
    env.close()


def test_registered_id_makes_a_time_limited_env():
    assert robot_core.rl.REACH_ID in gym.registry
    env = gym.make(REACH_ID, action_type="velocity")
    assert env.spec.max_episode_steps == 200
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs) and {"distance", "is_success"} <= set(info)
    env.close()


@pytest.mark.parametrize("action_type", ["torque", "velocity"])
def test_deterministic_under_seed(report, action_type):
    a, b = ReachEnv(action_type=action_type), ReachEnv(action_type=action_type)
    obs_a, rew_a = rollout(a, seed=42)
    obs_b, rew_b = rollout(b, seed=42)
    assert np.array_equal(obs_a, obs_b) and rew_a == rew_b
    obs_c, _ = rollout(a, seed=43)  # reusing an env after another episode changes nothing either
    obs_a2, _ = rollout(a, seed=42)
    assert np.array_equal(obs_a, obs_a2)
    assert not np.array_equal(obs_a[0], obs_c[0])  # another seed: another start and target
    report(f"determinism_{action_type}", f"{len(obs_a)} observations identical across envs and resets")


def test_actions_move_the_arm_the_commanded_way():
    env = ReachEnv(action_type="velocity")
    obs, _ = env.reset(seed=1)
    action = np.zeros(7, dtype=np.float32)
    action[0] = 0.5  # half of joint1's velocity limit
    for _ in range(10):
        obs2, *_ = env.step(action)
    q1_rate = (obs2[0] - obs[0]) / (10 * env.dt)
    assert q1_rate == pytest.approx(0.5 * 2.175, rel=0.1)
    # Torque mode is plain physics: with zero torque the arm falls under gravity.
    env_t = ReachEnv(action_type="torque")
    obs, _ = env_t.reset(seed=1)
    for _ in range(5):
        obs2, *_ = env_t.step(np.zeros(7, dtype=np.float32))
    assert np.max(np.abs(obs2[:7] - obs[:7])) > 0.01


def test_reaching_the_target_terminates():
    env = ReachEnv(action_type="velocity")
    env.reset(seed=5)
    env.target = env.end_effector_position()  # put the goal where the hand is
    obs, reward, terminated, truncated, info = env.step(np.zeros(7, dtype=np.float32))
    assert terminated and info["is_success"] and not truncated
    assert reward == pytest.approx(-info["distance"]) and info["distance"] < env.success_distance
    assert np.allclose(obs[-3:], env.target)


def test_other_arms(erd_robots):
    planar = ReachEnv(REPO / "urdf" / "planar2.urdf", action_type="torque")
    assert planar.end_effector == "tip" and planar.joint_names == ["joint1", "joint2"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(planar, skip_render_check=True)
        panda = ReachEnv(erd_robots / "panda_description/urdf/panda.urdf", action_type="velocity")
    assert panda.joint_names == [f"panda_joint{i}" for i in range(1, 8)]
    obs, _ = panda.reset(seed=0)
    obs, *_ = panda.step(panda.action_space.sample())
    assert np.all(np.isfinite(obs))


def test_render_returns_rgb_array(report):
    env = ReachEnv(render_mode="rgb_array", width=320, height=240)
    env.reset(seed=3)
    try:
        img = env.render()
    except RenderUnavailableError as exc:
        pytest.skip(f"no OpenGL backend can render off-screen on this machine: {exc}")
    assert img.shape == (240, 320, 3) and img.dtype == np.uint8
    assert img.std() > 5.0  # a scene, not a blank frame
    red = (img[..., 0] > 150) & (img[..., 1] < 60) & (img[..., 2] < 60)
    report("render", f"{img.shape} {img.dtype}, pixel std {img.std():.1f}, target marker pixels {int(red.sum())}, "
           f"renderer {type(env._renderer).__name__}")
    assert red.sum() > 3  # the target marker is in view
    env.close()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(ReachEnv(render_mode="rgb_array", width=64, height=48), skip_render_check=False)


@pytest.mark.parametrize("import_mujoco_first", [False, True])
def test_render_in_a_fresh_process(report, import_mujoco_first):
    """Both render paths: mujoco.Renderer on the EGL backend robot_core.rl selects, and the explicit headless
    fallback when mujoco was imported before (so MuJoCo chose GLFW, which cannot work without a display)."""
    code = textwrap.dedent(f"""
        import os
        os.environ.pop("MUJOCO_GL", None)
        os.environ.pop("DISPLAY", None)
        if {import_mujoco_first}:
            import mujoco  # noqa: F401
        from robot_core.rl import ReachEnv, RenderUnavailableError
        env = ReachEnv(render_mode="rgb_array", width=64, height=48)
        env.reset(seed=0)
        try:
            img = env.render()
        except RenderUnavailableError as exc:
            print("UNAVAILABLE", exc)
        else:
            print("OK", img.shape, img.dtype, type(env._renderer).__name__, os.environ.get("MUJOCO_GL"))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    out = proc.stdout.strip().splitlines()
    assert proc.returncode == 0 and out, proc.stdout + proc.stderr
    if out[-1].startswith("UNAVAILABLE"):
        pytest.skip(out[-1])
    report(f"render_subprocess_mujoco_first_{import_mujoco_first}", out[-1])
    assert out[-1].startswith("OK (48, 64, 3) uint8")
    expected = "HeadlessRenderer" if import_mujoco_first else "Renderer"
    assert out[-1].split()[-2] == expected


def test_module_prefixed_id_needs_no_import():
    """gym.make("robot_core.rl:robot_core/Reach-v0") imports robot_core.rl itself (what the docs promise)."""
    code = textwrap.dedent("""
        import gymnasium as gym
        env = gym.make("robot_core.rl:robot_core/Reach-v0", action_type="velocity")
        obs, info = env.reset(seed=0)
        print("OK", obs.shape, env.spec.max_episode_steps, type(env.unwrapped).__name__)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "OK (20,) 200 ReachEnv"


def test_example_script_runs_episodes_and_saves_a_frame(report, tmp_path):
    frame = tmp_path / "frame.png"
    proc = subprocess.run([sys.executable, str(REPO / "examples" / "reach_random_policy.py"), "--episodes", "2",
                           "--steps", "15", "--action-type", "velocity", "--frame", str(frame)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert sum(line.startswith("episode ") and " 15 steps" in line for line in lines) == 2
    if "no frame saved" in proc.stdout:
        pytest.skip(proc.stdout)
    from PIL import Image

    img = np.asarray(Image.open(frame))
    report("example_frame", f"{frame.name} {img.shape} {img.dtype}, pixel std {img.std():.1f}")
    assert img.shape == (360, 480, 3) and img.std() > 5.0


@pytest.mark.parametrize(("action_type", "seeds"), [("torque", (0, 2, 3)), ("velocity", (0, 1, 2, 3))])
def test_heuristic_reaches_the_target(action_type, seeds):
    env = gym.make(REACH_ID, action_type=action_type)
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(env.unwrapped.heuristic_action(obs))
            done = terminated or truncated
        assert terminated and info["is_success"], f"seed {seed}: {info['distance']:.3f} m from the target"
    env.close()


@pytest.mark.parametrize("action_type", ["torque", "velocity"])
def test_step_runs_its_physics_in_one_mj_step_call(monkeypatch, action_type):
    """The fast path: no servo needs Python between physics steps, so frame_skip steps are one C call."""
    import mujoco

    env = ReachEnv(action_type=action_type)
    env.reset(seed=0)
    calls: list[int] = []
    real = mujoco.mj_step

    def counting(m, d, nstep=1):
        calls.append(nstep)
        real(m, d, nstep=nstep)

    monkeypatch.setattr(mujoco, "mj_step", counting)
    for _ in range(3):
        env.step(env.action_space.sample())
    assert calls == [env.frame_skip] * 3


def test_torque_mode_velocity_limiter_brakes_as_the_engine_does(report):
    """The MuJoCo-actuator velocity limiter of the torque mode gives the engine's own (per-step, Python) limiter's
    trajectory; without it the same full-effort actions spin the joints far beyond their URDF velocity limits."""
    from robot_core.physics.engine import PhysicsEngine

    env = ReachEnv(action_type="torque")
    free = ReachEnv(action_type="torque", engine_options={"enforce_velocity_limits": False})
    env.reset(seed=4)
    free.reset(seed=4)
    reference = PhysicsEngine(env.robot, timestep=env.engine.timestep)  # the engine's limiter, stepped by Python
    reference.reset(dict(zip(env.joint_names, env.engine.positions()[env._idx].tolist(), strict=True)))
    vmax = np.array([reference.limits[reference.actuated_joint_names.index(n)].velocity for n in env.joint_names])
    action = np.ones(7, dtype=np.float32)
    worst, fastest, fastest_free = 0.0, 0.0, 0.0
    for _ in range(12):
        obs, *_ = env.step(action)
        obs_free, *_ = free.step(action)
        reference.set_commands(env.joint_names, efforts=action * env.action_scale)
        reference.step(env.frame_skip)
        ref_obs = np.concatenate([reference.positions()[env._idx], reference.velocities()[env._idx]])
        worst = max(worst, float(np.max(np.abs(obs[:14] - ref_obs))))
        fastest = max(fastest, float(np.max(np.abs(obs[7:14]) / vmax)))
        fastest_free = max(fastest_free, float(np.max(np.abs(obs_free[7:14]) / vmax)))
    report("velocity_limiter", f"max |env - engine| {worst:.2e}; fastest joint {fastest:.2f} x its limit "
           f"(without the limiter {fastest_free:.1f} x)")
    assert worst < 1e-5
    assert fastest_free > 5.0  # the actions do drive the joints past their limits
    assert fastest < 2.5


@pytest.mark.parametrize("action_type", ["torque", "velocity"])
def test_pickled_env_continues_identically(action_type):
    """Pickling rebuilds the engine (its MjSpec does not pickle) and restores servos, physics state, target and
    generator: the copy steps on to the bit, also one taken right after reset."""
    import pickle

    env = gym.make(REACH_ID, action_type=action_type)
    env.reset(seed=3)
    fresh = pickle.loads(pickle.dumps(env))
    env.action_space.seed(3)
    actions = [env.action_space.sample() for _ in range(12)]
    for a in actions[:4]:
        env.step(a)
    copy = pickle.loads(pickle.dumps(env))
    for a in actions[4:]:
        mine, theirs = env.step(a), copy.step(a)
        assert np.array_equal(mine[0], theirs[0]) and mine[1:4] == theirs[1:4]
    replay = [fresh.step(a)[0] for a in actions]
    assert np.array_equal(replay[-1], mine[0])
    assert np.array_equal(env.reset()[0], copy.reset()[0])  # the generator travelled too


def _step_singles(singles, sobs, pending, actions):
    """One step of single envs as gymnasium's NEXT_STEP autoreset does it: an env that ended last step resets."""
    out = []
    for i, s in enumerate(singles):
        if pending[i]:
            obs, info = s.reset()
            out.append((obs, 0.0, False, False, info))
        else:
            out.append(s.step(actions[i]))
        sobs[i] = out[-1][0]
    return out


def _assert_same_step(batch_step, single_steps, where: str) -> None:
    obs, reward, terminated, truncated, info = batch_step
    assert np.array_equal(obs, np.stack([s[0] for s in single_steps])), where
    assert reward.tolist() == [s[1] for s in single_steps], where
    assert terminated.tolist() == [s[2] for s in single_steps], where
    assert truncated.tolist() == [s[3] for s in single_steps], where
    assert info["distance"].tolist() == [s[4]["distance"] for s in single_steps], where


@pytest.mark.parametrize("action_type", ["torque", "velocity"])
def test_batched_reach_matches_single_envs_to_the_bit(report, action_type):
    """The batched path (mujoco.batch) against single envs with the same seeds and actions: each env's
    heuristic reaches its target, terminates and autoresets (NEXT_STEP) at its own step; the trajectories stay
    the single envs' to the bit across episodes (velocity mode: each env's own loss feed-forward in the model)."""
    n = 3
    batch = gym.make_vec(REACH_ID, num_envs=n, vectorization_mode="vector_entry_point", action_type=action_type)
    assert type(batch.unwrapped).__name__ == "BatchedReachEnv"
    singles = [gym.make(REACH_ID, action_type=action_type) for _ in range(n)]
    obs, info = batch.reset(seed=0)
    sobs = [s.reset(seed=i)[0] for i, s in enumerate(singles)]
    assert np.array_equal(obs, np.stack(sobs)) and not info["is_success"].any()
    pending = np.zeros(n, dtype=bool)
    episodes = np.zeros(n, dtype=int)
    for k in range(240):
        actions = np.stack([np.zeros(7, dtype=np.float32) if pending[i] else s.unwrapped.heuristic_action(sobs[i])
                            for i, s in enumerate(singles)])
        episodes += pending
        step = batch.step(actions)
        _assert_same_step(step, _step_singles(singles, sobs, pending, actions), f"step {k}")
        pending = step[2] | step[3]
        if episodes.min() >= 1 and episodes.max() >= 2:
            break
    report(f"batched_reach_{action_type}", f"{k + 1} steps of {n} envs equal to the bit, episodes ended {episodes}")
    assert episodes.min() >= 1 and episodes.max() >= 2  # every env autoreset, at different steps
    batch.close()


def test_batched_reach_full_effort_limits_contacts_and_truncation(report):
    """Random full-effort torques throw the arms into joint limits and self-contacts (more constraint rows than at
    rest): the single envs, whose solver starts each env step cold as the batch does, stay equal to the bit; a
    short episode limit truncates and autoresets all envs together."""
    n, limit = 3, 25
    batch = gym.make_vec(REACH_ID, num_envs=n, vectorization_mode="vector_entry_point", max_episode_steps=limit)
    singles = [gym.make(REACH_ID, max_episode_steps=limit) for _ in range(n)]
    obs, _ = batch.reset(seed=30)
    sobs = [s.reset(seed=30 + i)[0] for i, s in enumerate(singles)]
    assert np.array_equal(obs, np.stack(sobs))
    rest = max(s.unwrapped.engine.data.nefc for s in singles)
    rng = np.random.default_rng(1)
    pending = np.zeros(n, dtype=bool)
    most, truncations = rest, 0
    for k in range(2 * limit + 2):
        actions = rng.uniform(-1.0, 1.0, size=(n, 7)).astype(np.float32)
        step = batch.step(actions)
        _assert_same_step(step, _step_singles(singles, sobs, pending, actions), f"step {k}")
        most = max(most, *(s.unwrapped.engine.data.nefc for s in singles))
        truncations += int(step[3].sum())
        pending = step[2] | step[3]
    report("batched_reach_full_effort", f"{2 * limit + 2} steps equal to the bit; constraint rows {rest} at rest, "
           f"up to {most}; {truncations} truncations")
    assert most > rest + 4
    assert truncations == 2 * n
    with pytest.raises(ValueError, match="action of env 1 is not finite: nan for joint 'joint3'"):
        bad = np.zeros((n, 7), dtype=np.float32)
        bad[1, 2] = np.nan
        batch.step(bad)
    batch.close()


def test_batched_reach_renders_each_env():
    batch = gym.make_vec(REACH_ID, num_envs=2, vectorization_mode="vector_entry_point", render_mode="rgb_array",
                         width=64, height=48)
    batch.reset(seed=3)
    try:
        frames = batch.render()
    except RenderUnavailableError as exc:
        pytest.skip(f"no OpenGL backend can render off-screen on this machine: {exc}")
    assert len(frames) == 2 and all(f.shape == (48, 64, 3) and f.dtype == np.uint8 for f in frames)
    assert not np.array_equal(frames[0], frames[1])  # two arms, two targets
    batch.close()


def test_as_columns_is_a_slice_only_for_consecutive_columns():
    assert as_columns(np.array([3, 4, 5])) == slice(3, 6)
    for index in ([0, 2, 3], [5, 4], []):
        assert isinstance(as_columns(np.array(index, dtype=int)), np.ndarray)
