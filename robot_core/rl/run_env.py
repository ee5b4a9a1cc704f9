"""``robot-core run-env``: list the environments, run one with a random, keyboard or hand-written policy,
record a video, train a PPO policy (stable-baselines3) or run a saved one.

Bad input (an unknown env, an env argument it does not take, an unreadable policy file, a policy of another
env, ``--save`` over an existing file without ``--force``) ends with a one-line ``error: ...`` and exit
status 2, before anything is trained or written.
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

RECORD_SUFFIXES = (".mp4", ".gif")  # robot_core.video writes these (a GIF beside the .mp4 when ffmpeg is missing)

EXIT_BAD_INPUT = 2
POLICIES = ("random", "keyboard", "heuristic")


class RunEnvError(ValueError):
    """Bad input to run-env (reported as one line, exit status 2)."""


def configure_cli(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-l", "--list", action="store_true", help="list the environments and exit")
    parser.add_argument("--env", metavar="NAME", help="environment id, e.g. robot_core/CartPole-v0")
    parser.add_argument("--env-arg", "-a", action="append", default=[], metavar="KEY=VALUE",
                        help="keyword argument of the env, e.g. -a observation=visual (repeatable)")
    parser.add_argument("--policy", choices=POLICIES, default=None,
                        help="who acts: random (default), keyboard (terminal keys) or heuristic (hand-written)")
    parser.add_argument("--episodes", type=int, default=None, help="episodes to run (default 3; 0 with --train)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first episode (then +1 each)")
    parser.add_argument("--record", metavar="PATH", help="write the rendered episodes to PATH (.mp4 or .gif)")
    parser.add_argument("--train", action="store_true", help="train a PPO policy (stable-baselines3)")
    parser.add_argument("--steps", type=int, default=50_000, help="environment steps to train (default 50000)")
    parser.add_argument("--save", metavar="PATH", help="save the trained policy to PATH (.zip)")
    parser.add_argument("--load", metavar="PATH", help="a saved policy: run it, or continue training it with --train")
    parser.add_argument("--force", action="store_true", help="let --save replace an existing file")
    parser.add_argument("--n-envs", type=int, default=8, help="parallel envs for training (default 8)")


def run_cli(args: argparse.Namespace) -> int:
    try:
        return run(args)
    except RunEnvError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


def run(args: argparse.Namespace) -> int:
    from robot_core.rl import ENVIRONMENTS

    if args.list:
        width = max(len(name) for name in ENVIRONMENTS)
        for name, (_entry, steps, _batched, about) in ENVIRONMENTS.items():
            print(f"{name:<{width}}  {about} ({steps} steps)")
        return 0
    if not args.env:
        raise RunEnvError("run-env needs --env NAME (or -l to list the environments)")
    if args.env not in ENVIRONMENTS:
        raise RunEnvError(f"unknown environment '{args.env}' (known: {', '.join(ENVIRONMENTS)}; run-env -l lists them)")
    if args.policy is not None and (args.train or args.load):
        raise RunEnvError("--policy cannot be combined with --train or --load (those act with the PPO policy)")
    if args.save and not args.train:
        raise RunEnvError("--save needs --train")
    if args.steps < 1 or args.n_envs < 1:
        raise RunEnvError("--steps and --n-envs must be >= 1")
    episodes = args.episodes if args.episodes is not None else (0 if args.train else 3)
    if episodes < 0:
        raise RunEnvError(f"--episodes must be >= 0, got {episodes}")
    env_kwargs = parse_env_args(args.env_arg)
    record = _check_record(args.record)
    save = _check_save(args.save, args.force)
    env = _make_env(args.env, env_kwargs, render=record is not None)

    if args.train or args.load:
        model = _ppo(args, env_kwargs, save)
        act = lambda obs: model.predict(obs, deterministic=True)[0]  # noqa: E731
        label = "PPO"
    else:
        act, label = _policy(args.policy or "random", env, args.seed)
    if episodes:
        status = _run_episodes(env, act, label, episodes, args.seed, record, keyboard=args.policy == "keyboard")
        if status:
            return status
    env.close()
    return 0


def parse_env_args(items: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` strings -> keyword arguments (values read as Python literals, else kept as strings)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.isidentifier():
            raise RunEnvError(f"--env-arg '{item}' is not KEY=VALUE")
        try:
            out[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            out[key] = value
    return out


# ------------------------------------------------------------------------------------------------ internals
def _make_env(env_id: str, env_kwargs: dict[str, Any], *, render: bool) -> gym.Env:
    kwargs = dict(env_kwargs)
    if render:
        kwargs["render_mode"] = "rgb_array"
    try:
        return gym.make(env_id, **kwargs)
    except TypeError as exc:  # an argument the env does not take
        raise RunEnvError(f"{env_id}: {exc}".splitlines()[0]) from exc
    except ValueError as exc:  # a value the env refuses
        raise RunEnvError(f"{env_id}: {exc}".splitlines()[0]) from exc


def _check_record(path: str | None) -> Path | None:
    if path is None:
        return None
    p = Path(path)
    if p.suffix.lower() not in RECORD_SUFFIXES:
        raise RunEnvError(f"--record {p}: unknown video format '{p.suffix}' (use one of {', '.join(RECORD_SUFFIXES)})")
    if not p.parent.is_dir():
        raise RunEnvError(f"--record {p}: folder {p.parent} does not exist")
    return p


def _check_save(path: str | None, force: bool) -> Path | None:
    if path is None:
        return None
    p = Path(path)
    if p.suffix != ".zip":
        p = p.with_name(p.name + ".zip")  # what stable-baselines3 writes
    if p.exists() and not force:
        raise RunEnvError(f"--save {p}: the file exists; pass --force to replace it")
    if not p.parent.is_dir():
        raise RunEnvError(f"--save {p}: folder {p.parent} does not exist")
    return p


def _policy(name: str, env: gym.Env, seed: int) -> tuple[Any, str]:
    if name == "random":
        env.action_space.seed(seed)
        return (lambda _obs: env.action_space.sample()), "random"
    if name == "heuristic":
        unwrapped = env.unwrapped
        try:
            unwrapped.heuristic_action(env.observation_space.sample())
        except (NotImplementedError, AttributeError) as exc:
            raise RunEnvError(f"{env.spec.id} has no heuristic policy") from exc
        return unwrapped.heuristic_action, "heuristic"
    return None, "keyboard"


def _ppo(args: argparse.Namespace, env_kwargs: dict[str, Any], save: Path | None) -> Any:
    try:
        from robot_core.rl import training
    except ImportError as exc:
        raise RunEnvError(f"--train / --load need stable-baselines3 and torch ({exc}); run `make setup`") from exc
    if args.load:
        try:
            model = training.load_policy(args.load, args.env, env_kwargs, seed=args.seed, n_envs=args.n_envs)
        except training.PolicyFileError as exc:
            raise RunEnvError(str(exc)) from exc
        print(f"loaded {args.load} ({model.num_timesteps} steps trained)")
    else:
        model = training.make_ppo(args.env, env_kwargs, seed=args.seed, n_envs=args.n_envs)
    if args.train:
        start = time.perf_counter()
        model.learn(total_timesteps=args.steps, reset_num_timesteps=not args.load)
        took = time.perf_counter() - start
        print(f"trained {args.steps} steps in {took:.1f} s ({args.steps / took:.0f} steps/s), "
              f"{model.num_timesteps} in total")
        if save is not None:
            model.save(save)
            print(f"saved {save}")
    return model


def _run_episodes(env: gym.Env, act: Any, label: str, episodes: int, seed: int, record: Path | None, *,
                  keyboard: bool) -> int:
    from robot_core.rl.keyboard import KeyboardPolicy, KeyboardQuit

    frames: list[np.ndarray] = []
    keys = None
    if keyboard:
        try:
            keys = KeyboardPolicy(int(np.prod(env.action_space.shape)))
        except ValueError as exc:
            raise RunEnvError(str(exc)) from exc
        print(keys.help(), flush=True)
        keys.__enter__()
    lengths, returns = [], []
    try:
        for k in range(episodes):
            obs, info = env.reset(seed=seed + k)
            length, total, done = 0, 0.0, False
            if record is not None:
                frames.append(env.render())
            while not done:
                tick = time.perf_counter()
                action = keys.action().reshape(env.action_space.shape) if keys is not None else act(obs)
                obs, reward, terminated, truncated, info = env.step(action)
                length, total, done = length + 1, total + float(reward), terminated or truncated
                if record is not None:
                    frames.append(env.render())
                if keys is not None:  # a person plays in real time
                    time.sleep(max(0.0, env.unwrapped.dt - (time.perf_counter() - tick)))
            lengths.append(length)
            returns.append(total)
            state = np.array2string(np.asarray(obs).ravel()[:4], precision=3) if np.asarray(obs).ndim == 1 else ""
            print(f"episode {k + 1}: {length} steps, return {total:.2f}, success {bool(info.get('is_success'))}"
                  + (f", final observation {state}" if state else ""), flush=True)
    except KeyboardQuit:
        print("quit", flush=True)
    finally:
        if keys is not None:
            keys.__exit__(None, None, None)
    if lengths:
        print(f"{label} policy on {env.spec.id}: {len(lengths)} episodes, mean length {np.mean(lengths):.1f}, "
              f"mean return {np.mean(returns):.2f}")
    if record is not None and frames:
        from robot_core.video import VideoWriter

        with VideoWriter(record, env.metadata.get("render_fps", 50)) as writer:
            for frame in frames:
                writer.add(frame)
            info = writer.close()
        note = "" if info.path == record else f" (no video encoder here: wrote a GIF instead; {info.encoder})"
        print(f"recorded {info.frames} frames to {info.path}{note}")
    return 0
