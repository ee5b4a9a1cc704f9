"""The batched path's own Python per step, without the physics: what ``bench/rl.py``'s batched rows cannot resolve.

On a loaded 2-core machine the batched rows' wall times move by 10-30 % from run to run (the batch's second thread
waits for the scheduler), far more than the few µs of Python a step costs. Here the step's Python is timed alone,
in thread CPU time (``time.thread_time``: what this thread ran, not what it waited), min of windows:

* ``step's Python``: ``BatchedEnv.step`` with the batch's physics call replaced by a no-op (the states stay where
  the reset put them, so no env ends and nothing resets);
* ``one env's autoreset``: the reset of one env of the batch (its draw, the rows, the bookkeeping), which a step
  pays for each env that ended in the step before.

Compare two trees by running it from each (``PYTHONPATH=<tree>``), interleaved, several times.
Run: ``.venv/bin/python bench/rl_batched_python.py [--rounds 40]``.
"""

from __future__ import annotations

import argparse
import os
import time

import gymnasium as gym
import numpy as np

import robot_core.rl  # noqa: F401  (registers the ids)
from robot_core.rl import CARTPOLE_ID, PUSHING_ROBOT_ID, REACH_ID


def per_call(fn, calls: int, rounds: int) -> float:
    """Thread CPU µs per call of ``fn``: the best of ``rounds`` windows of ``calls`` calls."""
    best = float("inf")
    for _ in range(rounds):
        start = time.thread_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.thread_time() - start) / calls)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40, help="windows per figure (the best is kept)")
    args = parser.parse_args()
    print(f"batched path's Python, thread CPU time, load average {os.getloadavg()[0]:.1f}")
    print(f"{'env':<28}{'N':>4}{'step us':>10}{'reset us':>10}")
    for env_id in (CARTPOLE_ID, PUSHING_ROBOT_ID, REACH_ID):
        for n in (1, 8, 32):
            vec = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", nthread=1)
            vec.reset(seed=0)
            inner = vec.unwrapped
            actions = np.zeros((n, *vec.single_action_space.shape), dtype=np.float32)
            physics = inner._batch.step
            inner._batch.step = lambda *a, **k: None
            t_step = per_call(lambda v=vec, a=actions: v.step(a), 200, args.rounds)
            inner._batch.step = physics
            one = np.zeros(n, dtype=bool)
            one[n // 2] = True
            t_reset = per_call(lambda e=inner, w=one: e._start_episodes(w), 50 if env_id == REACH_ID else 200,
                               args.rounds)
            print(f"{env_id:<28}{n:>4}{t_step:>10.1f}{t_reset:>10.1f}", flush=True)
            vec.close()
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
