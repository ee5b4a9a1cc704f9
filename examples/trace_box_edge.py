"""The Franka Panda traces the top edges of a box, once with joint-space moves and once with straight tool lines.

The "trace the edge of a box" example of AGX Dynamics' robotics chapter, on robot_core's TrajectoryDynamics
(robot_core/kinematics/trajectory_dynamics.py): the hand, pointing down, visits the four top corners of a box.
With ``solve`` each edge is a joint-space move, so the tool sweeps a curve between the corners; with
``solve_linear`` it stays on the edge. Both paths are drawn side by side (with the torques of the linear run)
into a PNG, and the largest distance of the tool from each edge is printed.

    .venv/bin/python examples/trace_box_edge.py                          # writes trace_box_edge.png
    .venv/bin/python examples/trace_box_edge.py --out /tmp/box.png --edge-time 1.5 --dt 0.001

Needs the Panda of example-robot-data (installed with Pinocchio in the venv) or ``--urdf`` pointing at it.
No ROS needed.
"""

from __future__ import annotations

import argparse
import site
import sys
import warnings
from pathlib import Path

import numpy as np

from robot_core.kinematics import SerialKinematicChain
from robot_core.kinematics.trajectory_dynamics import Move, Trajectory, TrajectoryDynamics
from robot_core.model import load_robot

READY = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8])
DOWN = np.diag([1.0, -1.0, -1.0])  # hand z axis pointing down


def find_panda() -> Path | None:
    for sp in site.getsitepackages():
        path = Path(sp) / "cmeel.prefix/share/example-robot-data/robots/panda_description/urdf/panda.urdf"
        if path.is_file():
            return path
    return None


def box_corners(center: np.ndarray, size: np.ndarray) -> np.ndarray:
    """The four top corners of a box (counter-clockwise seen from above) and the first again."""
    hx, hy = size[0] / 2, size[1] / 2
    top = center[2] + size[2] / 2
    c = [(center[0] - hx, center[1] - hy), (center[0] + hx, center[1] - hy), (center[0] + hx, center[1] + hy),
         (center[0] - hx, center[1] + hy)]
    return np.array([[x, y, top] for x, y in c + c[:1]])


def pose(p: np.ndarray) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3] = DOWN
    t[:3, 3] = p
    return t


def trace(chain: SerialKinematicChain, corners: np.ndarray, linear: bool, dt: float, edge_time: float) -> Trajectory:
    """To the first corner by a joint move, then along the edges (joint moves or straight lines)."""
    td = TrajectoryDynamics(chain, dt, q_start=READY)
    moves = [Move(pose(corners[0]), edge_time, linear=False)]
    moves += [Move(pose(p), edge_time, linear=linear) for p in corners[1:]]
    return td.solve_linear_n(moves)


def edge_deviation(plan: Trajectory, corners: np.ndarray) -> list[float]:
    """Largest distance of the tool from each edge's straight line while that edge is traced (m)."""
    out = []
    for k, mv in enumerate(plan.moves[1:]):
        a, b = corners[k], corners[k + 1]
        axis = (b - a) / np.linalg.norm(b - a)
        rel = plan.tool_positions[mv.first_frame:mv.last_frame + 1] - a
        out.append(float(np.linalg.norm(rel - np.outer(rel @ axis, axis), axis=1).max()))
    return out


def plot(path: Path, corners: np.ndarray, size: np.ndarray, runs: dict[str, Trajectory]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(15, 5))
    bottom = corners.copy()
    bottom[:, 2] -= size[2]
    for i, (title, plan) in enumerate(runs.items()):
        ax = fig.add_subplot(1, 3, i + 1, projection="3d")
        for ring in (corners, bottom):
            ax.plot(ring[:, 0], ring[:, 1], ring[:, 2], color="0.6", lw=1)
        for top, low in zip(corners[:4], bottom[:4], strict=True):
            ax.plot(*zip(top, low, strict=True), color="0.6", lw=1)
        start = plan.moves[1].first_frame
        p = plan.tool_positions
        ax.plot(p[:start + 1, 0], p[:start + 1, 1], p[:start + 1, 2], color="tab:gray", ls=":", label="approach")
        ax.plot(p[start:, 0], p[start:, 1], p[start:, 2], color="tab:blue", lw=2, label="tool")
        ax.scatter(corners[:4, 0], corners[:4, 1], corners[:4, 2], color="tab:red", s=15)
        ax.set_title(title)
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]")
        ax.set_zlabel("z [m]")
        ax.legend(loc="upper left", fontsize=8)
    ax = fig.add_subplot(1, 3, 3)
    plan = runs["solve_linear"]
    for j, name in enumerate(plan.joint_names):
        ax.plot(plan.time, plan.tau[:, j], label=name.replace("panda_", ""))
    ax.set_title("solve_linear: joint torques")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("torque [N m]")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urdf", help="Panda URDF (default: example-robot-data's)")
    parser.add_argument("--out", default="trace_box_edge.png", help="PNG to write")
    parser.add_argument("--dt", type=float, default=1e-3, help="frame period [s]")
    parser.add_argument("--edge-time", type=float, default=1.0, help="seconds per edge")
    args = parser.parse_args(argv)
    urdf = Path(args.urdf) if args.urdf else find_panda()
    if urdf is None or not urdf.is_file():
        print("Panda URDF not found: install example-robot-data (comes with Pinocchio) or pass --urdf",
              file=sys.stderr)
        return 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the Panda URDF's sloppy-but-common parts are not this example's point
        robot = load_robot(str(urdf))
    chain = SerialKinematicChain(robot, "panda_link0", "panda_hand")
    center, size = np.array([0.5, 0.0, 0.1]), np.array([0.2, 0.3, 0.2])
    corners = box_corners(center, size)
    runs = {"solve": trace(chain, corners, False, args.dt, args.edge_time),
            "solve_linear": trace(chain, corners, True, args.dt, args.edge_time)}
    for name, plan in runs.items():
        dev = edge_deviation(plan, corners)
        print(f"{name:13s} success={plan.success}  largest distance from each edge [mm]: "
              + ", ".join(f"{d * 1e3:.3f}" for d in dev)
              + f"  peak torque {np.abs(plan.tau).max():.1f} N m")
    out = Path(args.out)
    plot(out, corners, size, runs)
    print(f"wrote {out}")
    return 0 if runs["solve_linear"].success else 1


if __name__ == "__main__":
    sys.exit(main())
