"""The trajectory goal as the web view draws it (robot_core.view.trajectory_goal): tool positions through every
waypoint, curved between them as joint-space interpolation is, from where the joints are."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robot_core.view.trajectory_goal import goal_tool_path


def planar_tool(q: dict[str, float]) -> np.ndarray:
    """A planar arm of two 1 m links (j1, j2): its tip."""
    a, b = q["j1"], q["j1"] + q["j2"]
    return np.array([math.cos(a) + math.cos(b), math.sin(a) + math.sin(b), 0.0])


def test_path_starts_at_the_current_joints_and_passes_every_waypoint() -> None:
    start = {"j1": 0.0, "j2": 0.0, "other": 3.0}
    path = goal_tool_path(start, ["j1", "j2"], [[0.5, 0.5], [1.0, 1.0]], planar_tool, samples=8)
    assert len(path) == 1 + 8 + 8
    np.testing.assert_allclose(path[0], [2.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(path[8], planar_tool({"j1": 0.5, "j2": 0.5}), atol=1e-12)
    np.testing.assert_allclose(path[-1], planar_tool({"j1": 1.0, "j2": 1.0}), atol=1e-12)
    # between waypoints the tool moves on an arc, off the chord between its end points
    chord_mid = (path[0] + path[8]) / 2
    assert np.linalg.norm(path[4] - chord_mid) > 1e-3


def test_joints_the_goal_leaves_out_stay_and_bad_waypoints_end_the_path() -> None:
    seen: list[dict[str, float]] = []

    def tool(q: dict[str, float]) -> np.ndarray:
        seen.append(q)
        return planar_tool(q)

    path = goal_tool_path({"j1": 0.2, "j2": -0.4}, ["j1"], [[0.4], [], [0.9]], tool, samples=4)
    assert len(path) == 5  # the empty (velocity-only) second waypoint ends it
    assert {q["j2"] for q in seen} == {-0.4}
    assert goal_tool_path({"j1": 0.0}, ["j1"], [[1.0]], lambda q: None).shape == (0, 3)
    assert seen[0]["j1"] == pytest.approx(0.2)
