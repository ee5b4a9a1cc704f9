"""RL environment benchmark: what robot_core.rl adds on top of MuJoCo, each figure beside an anchor measured in
this run.

Rows:

* ``step()`` of each env (unwrapped, and as ``gym.make`` hands it out with gymnasium's wrappers) vs. a raw loop
  doing the same physics on the same model: ``frame_skip`` (20) ``mj_step`` calls from Python after writing
  ``ctrl`` (the anchor the issue names), and the same as one ``mj_step(..., nstep=20)`` call. Ratio = env time /
  anchor time (target <= 1.3 against the Python loop). The four are timed in short interleaved windows, many
  rounds, and each keeps its fastest window (min of k), so a loaded machine slows all four alike;
* the wrapper chain's own cost: per env, the ``gym.make`` step minus the unwrapped step from those windows, and
  ``TimeLimit`` / ``OrderEnforcing`` / ``PassiveEnvChecker`` around an env whose ``step()`` does nothing (with and
  without ``disable_env_checker=True``), timed the same way;
* the batched path (``BatchedEnv``, ``mujoco.batch`` on all cores) for N = 1, 8, 32 cart-poles and Reach arms
  vs. two anchors stepped one after the other: N raw ``MjData`` (``mj_step(nstep=20)`` each, controls written
  from Python: the physics alone) and N single envs (unwrapped, each its own ``step()``: what stepping the envs in
  turn costs, as gymnasium's ``SyncVectorEnv`` does without its wrappers). Ratio = anchor time / batched time,
  the speed-up (target >= 1.8 on 2 cores; a batch of one has no second core to use). Each function runs in blocks
  of 4 consecutive steps, each step timed, the fastest kept: the sustained step of a training loop. "1st" is the
  fastest first step of a block, right after an anchor's block ran on one thread: it also wakes the batch's
  second thread. Beside them, what the step is made of: the bare ``mujoco.batch.Batch.step(nstep=20)`` on 1
  thread and on the env's threads (same rows, no task code), and ``mujoco.rollout`` as the batched path used it
  before (persistent ``Rollout``, preallocated outputs, ``skip_checks``) on as many threads, timed after the
  speed-up's triple (not interleaved with it);
* the visual cart-pole's image observation per frame vs. ``mujoco.Renderer`` rendering the same camera at the
  same size;
* PPO (stable-baselines3, 8 envs, seed 0) wall time until its deterministic mean episode length on the state
  cart-pole reaches 5x the random policy's, checked every 2048 steps.

Run: ``.venv/bin/python bench/rl.py [--quick] [--no-ppo]``.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("MUJOCO_GL", "egl")  # before mujoco is imported: headless rendering for the visual rows

import gymnasium as gym
import mujoco
import mujoco.batch
import mujoco.rollout
import numpy as np

import robot_core.rl
from robot_core.rl import CARTPOLE_ID, PUSHING_ROBOT_ID, REACH_ID


def per_call(fns: list, calls: int, rounds: int = 9) -> list[float]:
    """Seconds per call of each of ``fns``: windows of ``calls`` calls taken in turn, ``rounds`` times, the best
    window of each kept. Interleaving puts a figure and its anchor under the same load on a shared machine."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            best[i] = min(best[i], (time.perf_counter() - start) / calls)
    return best


def per_step(fns: list, block: int, rounds: int) -> tuple[list[float], list[float]]:
    """Seconds of one call of each of ``fns``: blocks of ``block`` consecutive calls, each call timed, taken in
    turn ``rounds`` times; per function the fastest call of all, and the fastest first call of a block (a call
    right after another function's block). The fastest call is the step a loaded machine left alone, the way
    :func:`per_call`'s fastest window is, without a window's one slow call in it."""
    best, first = [float("inf")] * len(fns), [float("inf")] * len(fns)
    clock = time.perf_counter
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            for k in range(block):
                start = clock()
                fn()
                took = clock() - start
                best[i] = min(best[i], took)
                if k == 0:
                    first[i] = min(first[i], took)
    return best, first


def model_and_ctrl(env: gym.Env) -> tuple[mujoco.MjModel, mujoco.MjData, int]:
    """The env's own model and data: the anchors step the same state (contacts and all) as the env."""
    u = env.unwrapped
    if hasattr(u, "engine"):
        return u.engine.model, u.engine.data, u.frame_skip
    return u.model, u.data, u.frame_skip


class NullEnv(gym.Env):
    """An env whose step() does nothing: what gym.make's wrappers cost on their own."""

    observation_space = gym.spaces.Box(-1.0, 1.0, shape=(4,), dtype=np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        return np.zeros(4, dtype=np.float32), {}

    def step(self, action):
        return np.zeros(4, dtype=np.float32), 0.0, False, False, {}


NULL_ID = "robot_core_bench/Null-v0"
LONG_EPISODE = 10**9  # gym.make's TimeLimit stays in the chain but never cuts a timing window with a reset


def step_rows(calls: int, rounds: int) -> None:
    print(f"\n{'single env step() at frame_skip 20':<44}{'us/step':>10}{'raw loop':>10}{'ratio':>8}"
          f"{'nstep=20':>10}{'ratio':>8}")
    overheads = []
    for env_id in (CARTPOLE_ID, PUSHING_ROBOT_ID, REACH_ID):
        wrapped = gym.make(env_id, max_episode_steps=LONG_EPISODE)
        wrapped.reset(seed=0)
        action = np.zeros(wrapped.action_space.shape, dtype=np.float32)
        unwrapped = wrapped.unwrapped
        m, d, skip = model_and_ctrl(wrapped)
        ctrl = np.zeros(m.nu)

        def raw_loop(m=m, d=d, ctrl=ctrl, skip=skip) -> None:
            d.ctrl[:] = ctrl
            for _ in range(skip):
                mujoco.mj_step(m, d)

        def raw_nstep(m=m, d=d, ctrl=ctrl, skip=skip) -> None:
            d.ctrl[:] = ctrl
            mujoco.mj_step(m, d, nstep=skip)

        # Past an episode's end the env keeps stepping as physics (a fallen pole costs the same): no reset in a window.
        t_env, t_wrapped, t_loop, t_nstep = per_call(
            [lambda u=unwrapped, a=action: u.step(a), lambda w=wrapped, a=action: w.step(a), raw_loop, raw_nstep],
            calls, rounds)
        for label, t in ((f"{env_id} (unwrapped)", t_env), (f"{env_id} (gym.make)", t_wrapped)):
            print(f"{label:<44}{t * 1e6:>10.1f}{t_loop * 1e6:>10.1f}{t / t_loop:>8.2f}"
                  f"{t_nstep * 1e6:>10.1f}{t / t_nstep:>8.2f}")
        overheads.append((env_id, t_wrapped - t_env, t_loop))
        wrapped.close()

    if NULL_ID not in gym.registry:
        gym.register(NULL_ID, entry_point=NullEnv, max_episode_steps=LONG_EPISODE)
    chains = {}
    for label, kwargs in (("with", {}), ("without", {"disable_env_checker": True})):
        env = gym.make(NULL_ID, **kwargs)
        env.reset(seed=0)
        bare, a = env.unwrapped, np.zeros(1, dtype=np.float32)
        t_bare, t_chain = per_call([lambda b=bare, a=a: b.step(a), lambda e=env, a=a: e.step(a)], 50, rounds)
        chains[label] = t_chain - t_bare
    print(f"\n{'gym.make wrapper chain (min of k)':<44}{'us/step':>10}{'of raw loop':>13}")
    for env_id, extra, t_loop in overheads:
        print(f"{f'{env_id}: gym.make - unwrapped':<44}{extra * 1e6:>10.2f}{extra / t_loop:>12.1%}")
    print(f"{'null env, TimeLimit+OrderEnforcing+Checker':<44}{chains['with'] * 1e6:>10.2f}")
    print(f"{'null env, disable_env_checker=True':<44}{chains['without'] * 1e6:>10.2f}")


def batched_rows(steps: int, rounds: int) -> None:
    print(f"\n{'one step of each env (us)':<36}{'batched':>8}{'raw seq':>8}{'speed-up':>9}{'envs':>8}{'speed-up':>9}"
          f"{'1st':>8}{'Batch 1t':>9}{'Batch':>7}{'rollout':>8}")
    for env_id, label in ((CARTPOLE_ID, "cart-poles"), (REACH_ID, "Reach arms (torque)")):
        for n in (1, 8, 32):
            batch = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point")
            batch.reset(seed=0)
            actions = np.zeros((n, *batch.single_action_space.shape), dtype=np.float32)
            inner = batch.unwrapped
            m = inner.model  # the model the batch steps (Reach: its copy in the episode's actuator modes)
            skip = inner.env.frame_skip
            datas = [mujoco.MjData(m) for _ in range(n)]
            for d, state in zip(datas, inner.states, strict=True):  # the same states as the batch
                mujoco.mj_setState(m, d, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
            ctrl = inner._control.copy()

            def raw(datas=datas, ctrl=ctrl, m=m, skip=skip) -> None:
                for d, c in zip(datas, ctrl, strict=True):
                    d.ctrl[:] = c
                    mujoco.mj_step(m, d, nstep=skip)

            # The other anchor: N single envs (unwrapped, seeded as the batch's), each stepped by its own step()
            # in turn, the way gymnasium's SyncVectorEnv steps them (without its wrappers and copies).
            singles = [gym.make(env_id).unwrapped for _ in range(n)]
            for i, env in enumerate(singles):
                env.reset(seed=i)
            action = actions[0]

            def envs(singles=singles, action=action) -> None:
                for env in singles:
                    env.step(action)

            # What the batched step is made of: the bare engine (mujoco.batch on 1 thread and on the env's
            # threads, same rows and controls, no task code) and mujoco.rollout as the batched path used it
            # before (a persistent Rollout, preallocated outputs, no checks) on the same number of threads.
            engines = [mujoco.batch.Batch(m, n, nthread=t) for t in (1, inner.nthread)]
            for engine in engines:
                engine.state[:] = inner._batch.state
            pool = mujoco.rollout.Rollout(nthread=inner.nthread if n > 1 else 0)
            scratch = [mujoco.MjData(m) for _ in range(max(1, pool.nthread))]
            states0, controls = inner.states.copy(), np.repeat(ctrl[:, None, :], skip, axis=1)
            out_state = np.empty((n, skip, states0.shape[1]))
            out_sensor = np.empty((n, skip, m.nsensordata))
            chunk = max(1, n // max(1, pool.nthread))

            def rollout(pool=pool, scratch=scratch, models=[m] * n, states0=states0, controls=controls,
                        out_state=out_state, out_sensor=out_sensor, chunk=chunk, skip=skip) -> None:
                pool.rollout(models, scratch, states0, controls, nstep=skip, state=out_state,
                             sensordata=out_sensor, skip_checks=True, chunk_size=chunk)

            # Blocks of `steps` consecutive steps, each step timed: the fastest is the sustained step of a
            # training loop. The fastest first step of a block ("1st") is a step right after an anchor's block,
            # which also wakes the batch's second thread: it went to sleep while the anchor ran on one thread.
            # The batched path is interleaved with its anchors only: a thread pool's workers keep a core busy
            # for a while after its call returns, so a step right after another pool's (the breakdown's engines)
            # ran up to 1.4x slower (8 cart-poles, quiet machine: 198 instead of 145 us).
            repeats = max(rounds, 4 * rounds // n)
            (t_batch, t_raw, t_envs), (t_first, *_) = per_step(
                [lambda b=batch, a=actions: b.step(a), raw, envs], steps, repeats)
            (t_one, t_engine, t_rollout), _ = per_step(
                [*(lambda e=e, k=skip: e.step(nstep=k) for e in engines), rollout], steps, repeats)
            pool.close()
            print(f"{f'{n} {label} ({inner.nthread} threads)':<36}{t_batch * 1e6:>8.1f}{t_raw * 1e6:>8.1f}"
                  f"{t_raw / t_batch:>9.2f}{t_envs * 1e6:>8.1f}{t_envs / t_batch:>9.2f}{t_first * 1e6:>8.1f}"
                  f"{t_one * 1e6:>9.1f}{t_engine * 1e6:>7.1f}{t_rollout * 1e6:>8.1f}")
            for env in singles:
                env.close()
            batch.close()


def render_rows(calls: int, rounds: int) -> None:
    env = gym.make(CARTPOLE_ID, observation="visual").unwrapped
    env.reset(seed=0)
    m, d = env.model, env.data
    renderer = mujoco.Renderer(m, env.image_height, env.image_width)

    def raw() -> None:
        renderer.update_scene(d, camera="rail_camera")
        renderer.render()

    t_env, t_raw = per_call([lambda: env.observe_image(d), raw], calls, rounds)
    print(f"\n{'visual cart-pole observation':<44}{'env us':>10}{'Renderer us':>12}{'ratio':>8}")
    print(f"{f'{env.image_width} x {env.image_height} RGB, rail camera':<44}{t_env * 1e6:>10.1f}{t_raw * 1e6:>12.1f}"
          f"{t_env / t_raw:>8.2f}")
    renderer.close()
    env.close()


def ppo_row(max_steps: int) -> None:
    from robot_core.rl import training

    env = gym.make(CARTPOLE_ID)
    threshold = training.learned_threshold(CARTPOLE_ID)
    start = time.perf_counter()
    model = training.make_ppo(CARTPOLE_ID, {}, seed=0, n_envs=8)
    learned, steps, eval_time = 0.0, 0, 0.0
    while steps < max_steps:
        model.learn(2048, reset_num_timesteps=False)
        steps += 2048
        t = time.perf_counter()
        learned = float(np.mean([n for n, _ in training.evaluate(model, env, 10, seed=1000)]))
        eval_time += time.perf_counter() - t
        if learned >= threshold:
            break
    took = time.perf_counter() - start - eval_time
    verdict = "reached" if learned >= threshold else "NOT reached"
    print(f"\nPPO on state cart-pole: threshold {training.LEARNED_FACTOR:g} x random mean length = "
          f"{threshold:.0f} steps; {verdict} after "
          f"{steps} env steps, {took:.1f} s of training (mean length {learned:.0f}; evaluation time excluded)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls per window")
    parser.add_argument("--no-ppo", action="store_true", help="skip the PPO row (needs stable-baselines3)")
    args = parser.parse_args()
    rounds = 60 if args.quick else 250
    print(f"robot_core.rl benchmark: MuJoCo {mujoco.__version__}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}, MUJOCO_GL={os.environ.get('MUJOCO_GL')}")
    assert robot_core.rl.ENVIRONMENTS
    # Short windows, many rounds: the more windows, the likelier each function gets some the load left alone.
    step_rows(2, rounds)
    batched_rows(4, 15 if args.quick else 61)
    render_rows(5, rounds // 4)
    if not args.no_ppo:
        ppo_row(20_480 if args.quick else 100_000)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
