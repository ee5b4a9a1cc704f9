"""Run robot_core's Reach environment with a random policy and save one rendered frame.

No ROS needed: the environment simulates the arm with robot_core's MuJoCo physics engine.

    .venv/bin/python examples/reach_random_policy.py                      # rc_arm, 3 episodes
    .venv/bin/python examples/reach_random_policy.py --action-type velocity --frame /tmp/reach.png
    .venv/bin/python examples/reach_random_policy.py --urdf path/to/arm.urdf --episodes 5

A random policy does not reach the target, of course; the point is the loop a learning algorithm runs
(``reset(seed=...)``, ``step(action)`` until ``terminated or truncated``) and what the environment returns.
Rendering uses MuJoCo's off-screen renderer (EGL by default, no display needed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np

from robot_core.rl import REACH_ID, RenderUnavailableError  # importing robot_core.rl registers the id


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urdf", help="arm URDF (default: robot_core's rc_arm)")
    parser.add_argument("--action-type", choices=("torque", "velocity"), default="torque")
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--steps", type=int, default=None, help="cap on steps per episode (default: the id's 200)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--frame", type=Path, default=Path("reach_frame.png"), help="where to save a rendered frame")
    args = parser.parse_args(argv)

    kwargs = {"action_type": args.action_type, "render_mode": "rgb_array", "width": 480, "height": 360}
    if args.urdf:
        kwargs["robot"] = args.urdf
    if args.steps:
        kwargs["max_episode_steps"] = args.steps
    env = gym.make(REACH_ID, **kwargs)
    env.action_space.seed(args.seed)
    print(f"{REACH_ID}: robot '{env.unwrapped.robot.name}', joints {env.unwrapped.joint_names}, end effector "
          f"'{env.unwrapped.end_effector}', action {args.action_type} {env.action_space.shape}, "
          f"observation {env.observation_space.shape}, dt {env.unwrapped.dt:g} s")
    frame = None
    for episode in range(args.episodes):
        obs, info = env.reset(seed=args.seed + episode)
        if episode == 0:
            n = len(env.unwrapped.joint_names)  # observation: q (n), qd (n), end effector (3), target (3)
            o = np.round(obs.astype(float), 3)
            print(f"first observation: q {o[:n].tolist()}, end effector {o[2 * n:2 * n + 3].tolist()}, "
                  f"target {o[-3:].tolist()}")
        start, ret, steps = info["distance"], 0.0, 0
        terminated = truncated = False
        while not (terminated or truncated):
            _obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
            ret += float(reward)
            steps += 1
        print(f"episode {episode}: {steps} steps, return {ret:.3f}, distance to target {start:.3f} -> "
              f"{info['distance']:.3f} m, success {info['is_success']}")
        if frame is None:
            try:
                frame = env.render()
            except RenderUnavailableError as exc:
                print(f"no frame saved: {exc}")
                frame = np.zeros(0)
    env.close()
    if frame is not None and frame.size:
        from PIL import Image  # Pillow comes with matplotlib

        args.frame.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(frame).save(args.frame)
        print(f"saved a {frame.shape[1]}x{frame.shape[0]} frame of the end of episode 0 to {args.frame}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
