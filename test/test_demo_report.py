"""The demo's record, metrics, plot and summary with synthetic data (no ROS)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from robot_core.demo.report import GoalOutcome, TrackingLog, plot_tracking, summary_dict, summary_text, with_gaps


def _log_with_lag(lag: float = 0.1) -> TrackingLog:
    """Commanded q = sin(t) per joint; actual follows `lag` seconds late (joint b has an offset of 0.05)."""
    log = TrackingLog(["a", "b"])
    for t in np.arange(0.0, 5.0, 0.01):
        log.add_actual(t, ["b", "a", "ignored"], [math.sin(t - lag) + 0.05, math.sin(t - lag), 9.0])
    log.begin("phase one", 0.0)
    for t in np.arange(0.5, 2.5, 0.02):
        log.add_commanded(t, ["a", "b"], [math.sin(t), math.sin(t)])
    log.begin("phase two", 2.5)
    for t in np.arange(2.5, 4.5, 0.02):
        log.add_commanded(t, ["a"], [math.sin(t)])
    log.end(4.5)
    return log


def test_tracking_error_interpolates_actual_at_command_times():
    log = _log_with_lag(0.1)
    t, err = log.tracking_error()
    assert t.size == 200 and err.shape == (200, 2)
    expected_a = np.abs(np.sin(t) - np.sin(t - 0.1))
    np.testing.assert_allclose(err[:, 0], expected_a, atol=2e-4)
    assert np.isnan(err[100:, 1]).all()  # phase two commands joint a only
    one = log.phase_max_error("phase one")
    assert one == pytest.approx(np.max(np.abs(np.sin(t[:100]) - np.sin(t[:100] - 0.1) - 0.05)), abs=2e-4)
    two = log.phase_max_error("phase two")
    assert two == pytest.approx(np.max(expected_a[100:]), abs=2e-4)
    assert math.isnan(log.phase_max_error("no such phase"))
    assert log.last_actual() == pytest.approx({"a": math.sin(4.99 - 0.1), "b": math.sin(4.89) + 0.05})


def test_commands_outside_the_recorded_state_are_not_compared():
    log = TrackingLog(["a"])
    log.add_actual(1.0, ["a"], [0.0])
    log.add_actual(2.0, ["a"], [1.0])
    log.add_commanded(0.5, ["a"], [5.0])
    log.add_commanded(1.5, ["a"], [0.7])
    t, err = log.tracking_error()
    assert t.tolist() == [1.5] and err[0, 0] == pytest.approx(0.2)


def test_with_gaps_breaks_lines_across_silence():
    t = np.array([0.0, 0.1, 0.2, 1.0, 1.1])
    t2, v2 = with_gaps(t, np.arange(10.0).reshape(5, 2))
    assert np.isnan(t2[3]) and np.isnan(v2[3]).all() and t2.size == 6


def test_plot_is_a_real_image(tmp_path):
    import matplotlib.image

    out = tmp_path / "tracking.png"
    info = plot_tracking(_log_with_lag(), out, "synthetic")
    assert info == {"actual_samples": 500, "commanded_samples": 200}
    img = matplotlib.image.imread(out)
    assert img.shape[0] > 600 and img.shape[1] > 900
    assert img[..., :3].std() > 0.05


def test_summary_success_only_when_every_goal_succeeded(tmp_path):
    goals = [GoalOutcome("g1", "X", True, "SUCCESSFUL (0)", sim_seconds=2.0, max_tracking_error=0.02),
             GoalOutcome("g2", "Y", False, "RBC not available", "robot_core.nodes.rbc is not installed")]
    s = summary_dict(goals, real_time_factor=0.9, sim_seconds=9.0, wall_seconds=10.0)
    assert s["success"] is False and s["max_tracking_error_rad"] == 0.02
    assert s["goals"][1]["max_tracking_error"] is None  # NaN is written as null, JSON stays valid
    json.dumps(s, allow_nan=False)
    text = summary_text(s)
    assert "FAILED" in text and "[FAIL] g2" in text and "RBC not available" in text and "0.9" in text
    assert summary_dict(goals[:1])["success"] is True
    assert summary_dict([])["success"] is False
