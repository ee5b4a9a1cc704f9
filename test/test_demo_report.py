"""The demo's record, metrics, plot and summary with synthetic data (no ROS)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from robot_core.demo.report import (
    GoalOutcome,
    TrackingLog,
    plot_tracking,
    summary_dict,
    summary_text,
    with_gaps,
    write_camera_frame,
)


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
    assert info == {"actual_samples": 500, "commanded_samples": 200, "wrench_samples": 0}
    img = matplotlib.image.imread(out)
    assert img.shape[0] > 600 and img.shape[1] > 900
    assert img[..., :3].std() > 0.05


def _log_with_wrench() -> TrackingLog:
    """Still until t = 1 (|F| = 6.867 N, the weight of 0.7 kg, along -z), then a swinging load."""
    log = _log_with_lag()
    log.phases[0].start = 1.0
    for t in np.arange(0.0, 5.0, 0.01):
        swing = 0.0 if t < 1.0 else 2.0 * math.sin(3 * t)
        log.add_wrench(t, (swing, 0.0, -6.867), (0.0, 0.1 * swing, 0.0))
    return log


def test_wrench_is_recorded_plotted_in_a_third_panel_and_read_at_rest(tmp_path):
    import matplotlib.image

    log = _log_with_wrench()
    t, w = log.wrench()
    assert t.size == 500 and w.shape == (500, 6) and w[150, 0] == pytest.approx(2.0 * math.sin(4.5))
    assert log.wrench_at_rest() == pytest.approx(6.867)
    two = matplotlib.image.imread(_plot(tmp_path / "two.png", _log_with_lag()))
    three_path = tmp_path / "three.png"
    assert plot_tracking(log, three_path, "synthetic")["wrench_samples"] == 500
    three = matplotlib.image.imread(three_path)
    assert three.shape[0] > two.shape[0] + 250  # the wrench panel adds height
    with pytest.raises(ValueError, match="3 forces and 3 torques"):
        log.add_wrench(0.0, (1.0, 2.0), (0.0, 0.0, 0.0))
    assert math.isnan(TrackingLog(["a"]).wrench_at_rest())


def _plot(out, log):
    plot_tracking(log, out, "synthetic")
    return out


def test_camera_frame_keeps_the_last_and_is_written_as_png(tmp_path):
    import matplotlib.image

    log = TrackingLog(["a"])
    assert log.camera_frame() is None and log.camera_frames == 0
    first = np.zeros((36, 48, 3), np.uint8)
    last = np.zeros((36, 48, 3), np.uint8)
    last[10:20, 5:30] = (200, 30, 10)
    log.set_camera_frame(1.0, first)
    log.set_camera_frame(2.0, last)
    stamp, image = log.camera_frame()
    assert stamp == 2.0 and image is last and log.camera_frames == 2
    info = write_camera_frame(image, tmp_path / "camera.png")
    assert info["width"] == 48 and info["height"] == 36 and info["pixel_std"] > 10
    png = matplotlib.image.imread(tmp_path / "camera.png")
    assert png.shape[:2] == (36, 48)
    np.testing.assert_allclose(png[15, 10, :3], np.array([200, 30, 10]) / 255, atol=1e-6)
    with pytest.raises(ValueError, match="H x W x 3"):
        log.set_camera_frame(3.0, np.zeros((4, 4), np.uint8))


def test_image_message_pixels_with_row_padding():
    from robot_core.demo.runner import image_rgb

    h, w, step = 2, 3, 12  # 9 bytes of pixels + 3 of padding per row
    data = bytes(range(h * step))
    image = image_rgb("rgb8", h, w, step, data)
    assert image.shape == (2, 3, 3) and image[1, 0].tolist() == [12, 13, 14] and image[0, 2].tolist() == [6, 7, 8]
    assert image_rgb("bgr8", h, w, step, data) is None and image_rgb("rgb8", h, w, step, data[:20]) is None


def test_summary_text_names_wrench_camera_and_world():
    s = summary_dict([GoalOutcome("g1", "X", True, "ok")], mode="topic", world="/x/table_top.yaml",
                     wrench={"topic": "/ft/wrench", "samples": 800, "force_at_rest_n": 6.86, "hand_weight_n": 6.867},
                     camera={"topic": "/cam/image_raw", "frames": 40, "width": 480, "height": 360, "stamp": 30.2})
    text = summary_text(s)
    assert "800 samples on /ft/wrench" in text and "6.86 N" in text and "6.867 N" in text
    assert "last of 40 frames from /cam/image_raw (480x360" in text and "camera.png" in text
    assert "world: /x/table_top.yaml" in text
    none = summary_text(summary_dict([], camera={"topic": "/cam/image_raw", "frames": 0,
                                                 "note": "embedded mode has no simulator node"}))
    assert "no frame from /cam/image_raw: embedded mode has no simulator node" in none


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


def test_object_poses_are_kept_in_time_order_and_checked():
    log = TrackingLog(["a"])
    log.add_object_poses(2.0, {"box": [1, 0, 0, 1, 0, 0, 0]})
    log.add_object_poses(1.0, {"box": [0, 0, 0, 1, 0, 0, 0], "ball": [0, 1, 0, 1, 0, 0, 0]})
    poses = log.object_poses()
    assert list(poses["box"][0]) == [1.0, 2.0] and poses["box"][1][:, 0].tolist() == [0.0, 1.0]
    assert poses["ball"][1].shape == (1, 7)
    with pytest.raises(ValueError, match="object 'box'"):
        log.add_object_poses(3.0, {"box": [1, 2, 3]})
