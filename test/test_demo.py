"""The README's main command end to end: `python -m robot_core.demo` succeeds and leaves sane outputs."""

from __future__ import annotations

import json
import sys
import uuid

import pytest
from ros_harness import NodeProcess, wait_for

from robot_core.bringup.supervisor import MARKER_ENV, processes_with_marker

pytest.importorskip("rclpy")
pytestmark = [pytest.mark.ros, pytest.mark.slow]


def _image(path):
    import matplotlib.image

    return matplotlib.image.imread(path)


def test_demo_succeeds_and_writes_plot_rendering_and_summary(tmp_path, processes):
    out = tmp_path / "demo_output"
    marker = f"test-demo-{uuid.uuid4().hex}"
    proc = NodeProcess([sys.executable, "-m", "robot_core.demo", "--output", str(out)], name="demo",
                       env={MARKER_ENV: marker})
    processes.append(proc)
    try:
        code = proc.proc.wait(timeout=240)
    except Exception:
        pytest.fail(f"demo did not finish:\n{proc.output()[-4000:]}")
    output = proc.output()
    assert code == 0, output[-4000:]
    for step in ("[1/7]", "[3/7]", "[5/7]", "[7/7]"):
        assert step in output  # progress is shown while it runs
    assert "robot_core demo: SUCCESS" in output
    wait_for(lambda: not processes_with_marker(marker), 10, "no demo process left")

    summary = json.loads((out / "summary.json").read_text())
    assert summary["success"] is True
    goals = {g["interface"]: g for g in summary["goals"]}
    assert set(goals) == {"control_msgs/FollowJointTrajectory", "robot_core_interfaces/JointReach",
                          "robot_core_interfaces/CartesianReach"}
    assert all(g["success"] for g in goals.values())
    assert goals["control_msgs/FollowJointTrajectory"]["details"]["error_code"] == 0
    assert goals["robot_core_interfaces/JointReach"]["details"]["max_final_error_rad"] <= 0.01
    cart = goals["robot_core_interfaces/CartesianReach"]["details"]
    assert cart["linear_error_m"] <= 0.001 and cart["angular_error_rad"] <= 0.01
    for g in goals.values():
        assert 0.0 <= g["max_tracking_error"] < 0.5 and g["sim_seconds"] > 0.5
    assert 0.05 < summary["real_time_factor"] < 5.0
    assert summary["sim_seconds"] > 10.0  # the trajectory alone is 8 s of simulated time
    assert summary["samples"]["actual_samples"] > 500 and summary["samples"]["commanded_samples"] > 300
    assert set(summary["controllers"].values()) == {"active", "inactive"}
    text = (out / "summary.txt").read_text()
    assert "SUCCESS" in text and "real-time factor" in text and "max tracking error" in text
    assert text.strip() in output  # also printed to the console

    plot = _image(out / "tracking.png")
    assert plot.shape[0] >= 700 and plot.shape[1] >= 1000
    assert plot[..., :3].std() > 0.05
    render = _image(out / "final_pose.png")
    assert render.shape[:2] == (720, 960)
    rgb = render[..., :3]
    assert rgb.std() > 0.05
    # The arm is in the picture: its orange links (rc_orange, 0.95 0.45 0.10) cover a visible area.
    orange = (rgb[..., 0] > 0.7) & (rgb[..., 1] > 0.25) & (rgb[..., 1] < 0.6) & (rgb[..., 2] < 0.3)
    assert orange.sum() > 2000
    assert (out / "logs" / "controller_manager.log").is_file()
