"""RL environment benchmark: what robot_core.rl adds on top of MuJoCo, each figure beside an anchor measured in
this run.

Rows:

* ``step()`` of each env (unwrapped, and as ``gym.make`` hands it out with gymnasium's wrappers) vs. a raw loop
  doing the same physics on the same model: ``frame_skip`` (20) ``mj_step`` calls from Python after writing
  ``ctrl`` (the anchor the issue names), and the same as one ``mj_step(..., nstep=20)`` call. Ratio = env time /
  anchor time (target <= 1.3 against the Python loop);
* the batched path (``BatchedEnv``, ``mujoco.rollout`` on all cores) for N = 1, 8, 32 cart-poles vs. N raw
  ``MjData`` stepped one after the other (``mj_step(nstep=20)`` each, controls written from Python). Ratio =
  raw time / batched time, the speed-up (target >= 1.8 on 2 cores);
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


def model_and_ctrl(env: gym.Env) -> tuple[mujoco.MjModel, mujoco.MjData, int]:
    u = env.unwrapped
    if hasattr(u, "engine"):
        return u.engine.model, mujoco.MjData(u.engine.model), u.frame_skip
    return u.model, mujoco.MjData(u.model), u.frame_skip


def step_rows(calls: int) -> None:
    print(f"\n{'single env step() at frame_skip 20':<44}{'us/step':>10}{'raw loop':>10}{'ratio':>8}"
          f"{'nstep=20':>10}{'ratio':>8}")
    for env_id in (CARTPOLE_ID, PUSHING_ROBOT_ID, REACH_ID):
        wrapped = gym.make(env_id)
        wrapped.reset(seed=0)
        action = np.zeros(wrapped.action_space.shape, dtype=np.float32)
        unwrapped = wrapped.unwrapped
        m, d, skip = model_and_ctrl(wrapped)
        if hasattr(unwrapped, "engine"):
            d = unwrapped.engine.data  # the same state the env steps
        ctrl = np.zeros(m.nu)

        def raw_loop(m=m, d=d, ctrl=ctrl, skip=skip) -> None:
            d.ctrl[:] = ctrl
            for _ in range(skip):
                mujoco.mj_step(m, d)

        def raw_nstep(m=m, d=d, ctrl=ctrl, skip=skip) -> None:
            d.ctrl[:] = ctrl
            mujoco.mj_step(m, d, nstep=skip)

        # The episode limit does not matter here: a falling pole keeps stepping as physics.
        for label, fn in ((f"{env_id} (unwrapped)", lambda u=unwrapped, a=action: u.step(a)),
                          (f"{env_id} (gym.make)", lambda w=wrapped, a=action: _step_wrapped(w, a))):
            t_env, t_loop, t_nstep = per_call([fn, raw_loop, raw_nstep], calls)
            print(f"{label:<44}{t_env * 1e6:>10.1f}{t_loop * 1e6:>10.1f}{t_env / t_loop:>8.2f}"
                  f"{t_nstep * 1e6:>10.1f}{t_env / t_nstep:>8.2f}")
        wrapped.close()


def _step_wrapped(env: gym.Env, action: np.ndarray) -> None:
    _, _, terminated, truncated, _ = env.step(action)
    if terminated or truncated:
        env.reset()


def batched_rows(calls: int) -> None:
    print(f"\n{'cart-poles, one step each':<44}{'batched us':>10}{'raw seq us':>11}{'speed-up':>9}"
          f"{'env steps/s':>13}")
    for n in (1, 8, 32):
        batch = gym.make_vec(CARTPOLE_ID, num_envs=n, vectorization_mode="vector_entry_point")
        batch.reset(seed=0)
        actions = np.zeros((n, 1), dtype=np.float32)
        env = batch.unwrapped.env
        m = env.model
        datas = [mujoco.MjData(m) for _ in range(n)]
        ctrl = np.zeros((n, m.nu))

        def raw(datas=datas, ctrl=ctrl, m=m, skip=env.frame_skip) -> None:
            for d, c in zip(datas, ctrl, strict=True):
                d.ctrl[:] = c
                mujoco.mj_step(m, d, nstep=skip)

        t_batch, t_raw = per_call([lambda b=batch, a=actions: b.step(a), raw], max(1, calls // n))
        print(f"{f'N = {n} ({batch.unwrapped.nthread} threads)':<44}{t_batch * 1e6:>10.1f}{t_raw * 1e6:>11.1f}"
              f"{t_raw / t_batch:>9.2f}{n / t_batch:>13.0f}")
        batch.close()


def render_rows(calls: int) -> None:
    env = gym.make(CARTPOLE_ID, observation="visual").unwrapped
    env.reset(seed=0)
    m, d = env.model, env.data
    renderer = mujoco.Renderer(m, env.image_height, env.image_width)

    def raw() -> None:
        renderer.update_scene(d, camera="rail_camera")
        renderer.render()

    t_env, t_raw = per_call([lambda: env.observe_image(d), raw], calls)
    print(f"\n{'visual cart-pole observation':<44}{'env us':>10}{'Renderer us':>12}{'ratio':>8}")
    print(f"{f'{env.image_width} x {env.image_height} RGB, rail camera':<44}{t_env * 1e6:>10.1f}{t_raw * 1e6:>12.1f}"
          f"{t_env / t_raw:>8.2f}")
    renderer.close()
    env.close()


def ppo_row(max_steps: int) -> None:
    from robot_core.rl import training

    env = gym.make(CARTPOLE_ID)
    lengths = []
    for k in range(20):
        env.reset(seed=1000 + k)
        env.action_space.seed(k)
        n, done = 0, False
        while not done:
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            n, done = n + 1, terminated or truncated
        lengths.append(n)
    threshold = 5 * float(np.mean(lengths))
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
    print(f"\nPPO on state cart-pole: threshold 5 x random mean length = {threshold:.0f} steps; {verdict} after "
          f"{steps} env steps, {took:.1f} s of training (mean length {learned:.0f}; evaluation time excluded)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls per window")
    parser.add_argument("--no-ppo", action="store_true", help="skip the PPO row (needs stable-baselines3)")
    args = parser.parse_args()
    calls = 50 if args.quick else 200
    print(f"robot_core.rl benchmark: MuJoCo {mujoco.__version__}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}, MUJOCO_GL={os.environ.get('MUJOCO_GL')}")
    assert robot_core.rl.ENVIRONMENTS
    step_rows(calls)
    batched_rows(calls * 4)
    render_rows(calls // 4)
    if not args.no_ppo:
        ppo_row(20_480 if args.quick else 100_000)


if __name__ == "__main__":
    main()
