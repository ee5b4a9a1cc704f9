"""Simulator speed: raw MuJoCo vs robot_core's physics engine (and, later, the simulator node), dt = 1 ms.

Run: ``.venv/bin/python bench/simulator.py [--seconds 5] [--robots panda pr2]``

Every row is a real-time factor (simulated seconds per wall-clock second) measured in this run; the anchor is
raw MuJoCo on the very same compiled model (``mj_step`` in C, no Python per step), and "overhead" is
raw RTF / row RTF (1.0 = as fast as raw MuJoCo). The machine may be shared, so each measurement is repeated
``--rounds`` times, interleaved with the others, and the best round is reported.

Rows:
- ``raw mj_step``: a bare MjModel compiled from the engine's spec, with the engine's servo gains and a fixed
  hold command, stepped with ``mujoco.mj_step(m, d, nstep)``.
- ``raw mj_step, ctrl written per step``: the same bare model, the engine row's position commands written to
  ``data.ctrl`` from Python before each single ``mujoco.mj_step(m, d)``: the floor of any Python loop that
  commands every step, with the arm moving as in the engine row (a moving arm costs the solver more than a
  held one). Issue #21's target for the engine row is <= 1.3x ``raw mj_step``.
- ``engine (step only, holding)``: ``PhysicsEngine.step()`` once per call, no new commands: the idle cost.
- ``engine (set_commands + step)``: a fresh position command for every actuated joint + ``step()`` every
  step, the per-step work a 1 kHz simulator node does besides publishing.
- Node rows are produced by :data:`EXTRA_MEASUREMENTS` (the simulator-node benchmark appends its functions
  there: each takes a :class:`BenchRobot` and the run's duration and returns a list of :class:`Row`).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/: _robots and simulator_node

from _raw_model import raw_model  # noqa: E402
from _robots import ROBOTS, example_robot_data_dir  # noqa: E402

from robot_core.model import RobotModel, load_robot  # noqa: E402
from robot_core.physics.engine import PhysicsEngine  # noqa: E402

TIMESTEP = 0.001


@dataclass
class BenchRobot:
    name: str
    urdf: Path
    model: RobotModel


@dataclass
class Row:
    robot: str
    label: str
    rtf: float
    note: str = ""


# Functions appended by other benchmarks (the simulator node): (robot, seconds) -> rows.
EXTRA_MEASUREMENTS: list[Callable[[BenchRobot, float], list[Row]]] = []


def measure_node(robot: BenchRobot, seconds: float) -> list[Row]:
    """The simulator node's rows: the console script over DDS (see bench/simulator_node.py)."""
    from simulator_node import node_rows

    return [Row(robot.name, label, rtf, note) for label, rtf, note in node_rows(robot.urdf, seconds)]


EXTRA_MEASUREMENTS.append(measure_node)


def load_bench_robot(name: str) -> BenchRobot:
    path = example_robot_data_dir() / ROBOTS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return BenchRobot(name, path, load_robot(path))


def make_engine(robot: BenchRobot) -> PhysicsEngine:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return PhysicsEngine(robot.model, timestep=TIMESTEP)


def measure_raw(robot: BenchRobot, seconds: float) -> Row:
    """mj_step in C on a model compiled from the engine's spec, servos holding the initial pose."""
    model, data = raw_model(make_engine(robot))
    n = max(1, round(seconds / TIMESTEP))
    mujoco.mj_step(model, data, nstep=min(n, 200))  # warm-up
    t0 = time.perf_counter()
    mujoco.mj_step(model, data, nstep=n)
    wall = time.perf_counter() - t0
    assert np.all(np.isfinite(data.qpos))
    return Row(robot.name, "raw mj_step", n * TIMESTEP / wall, f"nv={model.nv}, ngeom={model.ngeom}")


def measure_raw_commanded(robot: BenchRobot, seconds: float) -> Row:
    """Bare mj_step per call from Python, the engine row's commands written to ctrl first (see the module doc)."""
    eng = make_engine(robot)
    model, data = raw_model(eng)
    act = eng.actuation._act_slice
    n = max(1, round(seconds / TIMESTEP))
    home = data.ctrl[act].copy()
    commands = home[None, :] + (0.05 * np.sin(2 * math.pi * 0.5 * TIMESTEP * np.arange(n)))[:, None]
    ctrl = data.ctrl[act]
    step = mujoco.mj_step
    t0 = time.perf_counter()
    for k in range(n):
        ctrl[:] = commands[k]
        step(model, data)
    wall = time.perf_counter() - t0
    assert np.all(np.isfinite(data.qpos))
    return Row(robot.name, "raw mj_step, ctrl written per step", n * TIMESTEP / wall, f"{wall / n * 1e6:.1f} us/step")


def measure_engine(robot: BenchRobot, seconds: float) -> Row:
    """Engine stepping with a fresh position command for every actuated joint on every step."""
    eng = make_engine(robot)
    names = eng.actuated_joint_names
    idx = [eng.joint_names.index(n) for n in names]
    home = eng.positions()[idx].copy()
    n = max(1, round(seconds / TIMESTEP))
    # Precompute commands so the loop measures the engine, not the trajectory maths.
    wiggle = 0.05 * np.sin(2 * math.pi * 0.5 * TIMESTEP * np.arange(n))
    commands = home[None, :] + wiggle[:, None]
    for k in range(min(n, 200)):  # warm-up
        eng.set_commands(names, positions=commands[k])
        eng.step()
    eng.reset()
    t0 = time.perf_counter()
    for k in range(n):
        eng.set_commands(names, positions=commands[k])
        eng.step()
    wall = time.perf_counter() - t0
    assert np.all(np.isfinite(eng.positions()))
    per_step_us = wall / n * 1e6
    return Row(robot.name, "engine (set_commands + step)", n * TIMESTEP / wall, f"{per_step_us:.1f} us/step")


def measure_engine_holding(robot: BenchRobot, seconds: float) -> Row:
    """Engine stepping one step per call with no new commands (servos holding): its idle per-step cost."""
    eng = make_engine(robot)
    n = max(1, round(seconds / TIMESTEP))
    for _ in range(min(n, 200)):
        eng.step()
    t0 = time.perf_counter()
    for _ in range(n):
        eng.step()
    wall = time.perf_counter() - t0
    return Row(robot.name, "engine (step only, holding)", n * TIMESTEP / wall, f"{wall / n * 1e6:.1f} us/step")


def print_table(rows: list[Row]) -> None:
    raw = {r.robot: r.rtf for r in rows if r.label == "raw mj_step"}
    header = f"{'robot':<8} {'measurement':<44} {'RTF':>9} {'overhead vs raw':>16}  note"
    print(header)
    print("-" * len(header))
    for r in rows:
        overhead = raw[r.robot] / r.rtf if r.robot in raw and r.rtf > 0 else float("nan")
        print(f"{r.robot:<8} {r.label:<44} {r.rtf:>8.2f}x {overhead:>15.2f}x  {r.note}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="simulated seconds per measurement")
    parser.add_argument("--robots", nargs="+", default=["panda", "pr2"], choices=sorted(ROBOTS))
    parser.add_argument("--rounds", type=int, default=3, help="repetitions per measurement (best is kept)")
    parser.add_argument("--engine-only", action="store_true", help="skip the simulator node rows (no DDS)")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    load_before = os.getloadavg()[0]
    for name in args.robots:
        robot = load_bench_robot(name)
        measures: list[Callable[[BenchRobot, float], list[Row]]] = [
            lambda r, s: [measure_raw(r, s)], lambda r, s: [measure_raw_commanded(r, s)],
            lambda r, s: [measure_engine_holding(r, s)],
            lambda r, s: [measure_engine(r, s)], *([] if args.engine_only else EXTRA_MEASUREMENTS)]
        best: dict[str, Row] = {}
        for _ in range(max(1, args.rounds)):
            for measure in measures:
                for row in measure(robot, args.seconds):
                    if row.label not in best or row.rtf > best[row.label].rtf:
                        best[row.label] = row
        rows.extend(best.values())
    print(f"dt = {TIMESTEP * 1e3:g} ms, {args.seconds:g} simulated s per row, best of {args.rounds} rounds, "
          f"mujoco {mujoco.__version__}, load average (1 min) {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    print_table(rows)
    if not args.engine_only:
        from simulator_node import ratios

        print("simulator node vs its anchor (raw mj_step + a bare rclpy node publishing the same streams):")
        for name in args.robots:
            for line in ratios([(r.label, r.rtf) for r in rows if r.robot == name]):
                print(f"  {name:<8} {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
