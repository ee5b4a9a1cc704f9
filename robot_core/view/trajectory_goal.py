"""The trajectory goal as the web view draws it: the tool's positions along a joint trajectory, from where the
joints are when the goal arrives through every waypoint.

Why sampled between waypoints: a goal of two or three waypoints is a curve in Cartesian space, not the straight
lines between the waypoints' tool positions; joint-space interpolation between them (the controller's spline
passes through the same waypoints) shows that curve. No ROS here: the node passes joint positions and a forward
kinematics function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

SAMPLES_PER_SEGMENT = 16


def goal_tool_path(start: Mapping[str, float], joint_names: Sequence[str], waypoints: Sequence[Sequence[float]],
                   tool_position: Callable[[dict[str, float]], np.ndarray | None],
                   samples: int = SAMPLES_PER_SEGMENT) -> np.ndarray:
    """(N, 3) tool positions from ``start`` (every joint's current position; joints the goal leaves out stay
    there) through each waypoint's positions of ``joint_names``. A waypoint without positions (a velocity-only
    goal) ends the path there. Empty when the tool has no position (FK returned None)."""
    here = {**start}
    current = np.array([here.get(j, 0.0) for j in joint_names], float)
    points = []
    for k, waypoint in enumerate(waypoints):
        if len(waypoint) != len(joint_names):
            break
        target = np.asarray(waypoint, float)
        for s in np.linspace(0.0, 1.0, samples + 1)[(0 if k == 0 else 1):]:
            q = current + s * (target - current)
            p = tool_position({**here, **dict(zip(joint_names, (float(v) for v in q), strict=True))})
            if p is None:
                return np.zeros((0, 3))
            points.append(np.asarray(p, float)[:3])
        current = target
    return np.array(points).reshape(-1, 3)
