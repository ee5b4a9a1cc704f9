"""The trajectory goal as the web view draws it: the joint trajectory controller's own spline
(robot_core.control.trajectory, sampled by TrajectorySpline.path) turned into tool positions
(robot_core.view.trajectory_goal); the path is the reference the controller really follows."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_control_jtc import DT, Rig

from robot_core.control.trajectory import JointSample, JointTrajectory, TrajectoryArrays, TrajectoryPoint
from robot_core.view.trajectory_goal import goal_tool_path


def planar_tool(q: dict[str, float]) -> np.ndarray:
    """A planar arm of two 1 m links (j1, j2): its tip."""
    a, b = q["j1"], q["j1"] + q["j2"]
    return np.array([math.cos(a) + math.cos(b), math.sin(a) + math.sin(b), 0.0])


def goal(with_velocities: bool) -> JointTrajectory:
    v = [0.4, 0.4] if with_velocities else []
    return JointTrajectory(["j1", "j2"], [TrajectoryPoint([0.5, 0.6], v, [], [], 1.0),
                                          TrajectoryPoint([1.0, 1.0], [0.0, 0.0] if v else [], [], [], 2.0)])


def test_path_starts_at_the_current_joints_and_passes_every_waypoint() -> None:
    spline = TrajectoryArrays.of(goal(False), ["j1", "j2"]).spline(0.0, JointSample.at_rest([0.1, 0.2]))
    assert spline is not None
    joint_path = spline.path(per_segment=8)
    assert joint_path.shape == (1 + 2 * 8, 2)
    np.testing.assert_allclose(joint_path[[0, 8, 16]], [[0.1, 0.2], [0.5, 0.6], [1.0, 1.0]], atol=1e-12)
    path = goal_tool_path({"j1": 0.1, "j2": 0.2, "other": 3.0}, ["j1", "j2"], joint_path, planar_tool)
    np.testing.assert_allclose(path[8], planar_tool({"j1": 0.5, "j2": 0.6}), atol=1e-12)
    chord_mid = (path[0] + path[8]) / 2  # between waypoints the tool moves on an arc, off the chord
    assert np.linalg.norm(path[4] - chord_mid) > 1e-3


def test_the_drawn_path_is_the_reference_the_controller_follows() -> None:
    """A cubic goal (velocities at the waypoints) sent to the ROS-free controller: every desired position it
    commands is on the path the view samples from the same start, and that path is not the linear one."""
    rig = Rig()
    start = rig.jtc.desired.positions.copy()
    assert isinstance(rig.jtc.accept_goal(goal(True)), int)
    taken_over = rig.t  # the next update takes the staged goal over
    rig.step(int(2.2 / DT))
    view = TrajectoryArrays.of(goal(True), ["j1", "j2"]).spline(0.0, JointSample.at_rest(start), 0.0, "splines")
    assert view is not None
    for t, desired, _ in rig.history:
        if t >= taken_over:
            np.testing.assert_allclose(desired, view.sample(t - taken_over)[0].positions, atol=1e-9)
    linear = TrajectoryArrays.of(goal(False), ["j1", "j2"]).spline(0.0, JointSample.at_rest(start))
    assert np.abs(view.path() - linear.path()).max() > 0.02  # the cubic bends away from linear interpolation


def test_joints_the_goal_leaves_out_stay_and_no_tool_position_draws_nothing() -> None:
    seen: list[dict[str, float]] = []

    def tool(q: dict[str, float]) -> np.ndarray:
        seen.append(q)
        return planar_tool(q)

    spline = TrajectoryArrays.of(JointTrajectory(["j1"], [TrajectoryPoint([0.4], time_from_start=1.0)]),
                                 ["j1"]).spline(0.0, JointSample.at_rest([0.2]))
    path = goal_tool_path({"j1": 0.2, "j2": -0.4}, ["j1"], spline.path(per_segment=4), tool)
    assert len(path) == 5
    assert {q["j2"] for q in seen} == {-0.4}
    assert seen[0]["j1"] == pytest.approx(0.2)
    assert goal_tool_path({"j1": 0.0}, ["j1"], np.array([[1.0]]), lambda q: None).shape == (0, 3)
