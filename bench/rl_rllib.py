"""Ray RLlib benchmark: PPO on robot_core/CartPole-v0 (state) on a local Ray cluster with 2 env-runner processes,
the configuration of ``robot_core.rl.rllib.example_ppo_config``.

Prints, per training iteration, the env steps sampled so far, the mean episode return of the env runners and
the wall time; then the time to reach the threshold (``robot_core.rl.training.learned_threshold``: 5x the random
policy's mean episode length, measured here as in bench/rl.py and the CI test; ~135) if it was reached within
``--iterations``. Needs Ray (``make setup-rllib``); without it this script
says so and exits 0, so ``make bench`` runs on the default set-up.

Run: ``.venv/bin/python bench/rl_rllib.py [--iterations 15] [--env-runners 2]``.
"""

from __future__ import annotations

import argparse
import os
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=15)
    parser.add_argument("--env-runners", type=int, default=2)
    args = parser.parse_args()
    try:
        import ray
    except ImportError:
        print("bench/rl_rllib.py: Ray is not installed (make setup-rllib installs it); skipped")
        return 0
    from robot_core.rl.rllib import example_ppo_config, register_envs
    from robot_core.rl.training import learned_threshold

    threshold = learned_threshold("robot_core/CartPole-v0")

    start = time.perf_counter()
    ray.init(num_cpus=max(2, os.cpu_count() or 2), include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    try:
        register_envs()
        algo = example_ppo_config("robot_core/CartPole-v0", num_env_runners=args.env_runners).build_algo()
        print(f"Ray {ray.__version__}: PPO with {args.env_runners} env-runner processes built in "
              f"{time.perf_counter() - start:.1f} s")
        print(f"{'iteration':>9}{'env steps':>11}{'return mean':>13}{'wall s':>9}")
        t0 = time.perf_counter()
        reached = None
        for i in range(1, args.iterations + 1):
            result = algo.train()
            runners = result.get("env_runners", {})
            ret = float(runners.get("episode_return_mean", float("nan")))
            steps = int(result.get("num_env_steps_sampled_lifetime", runners.get("num_env_steps_sampled_lifetime", 0)))
            wall = time.perf_counter() - t0
            print(f"{i:>9}{steps:>11}{ret:>13.1f}{wall:>9.1f}", flush=True)
            if reached is None and ret >= threshold:
                reached = (i, steps, wall)
        if reached:
            print(f"threshold {threshold:.0f} reached at iteration {reached[0]}, {reached[1]} env steps, "
                  f"{reached[2]:.1f} s of training")
        else:
            print(f"threshold {threshold:.0f} NOT reached in {args.iterations} iterations")
        algo.stop()
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
