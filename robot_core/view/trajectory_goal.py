"""The trajectory goal as the web view draws it: the tool's positions along the joint path the controller will
follow, from where the joints are when the goal arrives through every waypoint.

Why the controller's own path: a goal of two or three waypoints is a curve in Cartesian space, and how it bends
between waypoints depends on the controller's interpolation (linear, cubic with velocities, quintic with
accelerations). The node samples the joint trajectory controller's spline (robot_core.control.trajectory, the
same code the controller runs) and passes the joint positions here with a forward kinematics function; no ROS.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np


def goal_tool_path(start: Mapping[str, float], joint_names: Sequence[str], joint_path: np.ndarray,
                   tool_position: Callable[[dict[str, float]], np.ndarray | None]) -> np.ndarray:
    """(N, 3) tool positions along ``joint_path`` ((N, len(joint_names)) positions of ``joint_names``; every other
    joint stays where ``start`` has it). Empty when the tool has no position (FK returned None)."""
    here = dict(start)
    points = []
    for q in np.asarray(joint_path, float).reshape(-1, len(joint_names)):
        p = tool_position({**here, **dict(zip(joint_names, (float(v) for v in q), strict=True))})
        if p is None:
            return np.zeros((0, 3))
        points.append(np.asarray(p, float)[:3])
    return np.array(points).reshape(-1, 3)
