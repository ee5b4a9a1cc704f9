"""The PR2 of example-robot-data in the simulator node with config/pr2_simulator.yaml (on the floor of
config/worlds/empty.yaml, so that its cameras see something), over DDS: its pre-SDF
``<sensor:ray>`` lasers (base and tilting) and the wide stereo cameras that file keeps (``sensors``, at the low
rate of ``sensor_rates``) publish at their rates of simulated time, as the description sets them; the cameras the
file leaves out (the 2448 x 2050 high-definition one, the narrow stereo pair, the forearm cameras) have no
publisher."""

from __future__ import annotations

import math
import signal
from pathlib import Path

import numpy as np
import pytest
from robot_files import PR2, REPO
from ros_harness import NodeProcess, wait_for

pytest.importorskip("rclpy")
pytestmark = [pytest.mark.ros, pytest.mark.slow]

CAMERA = "wide_stereo_gazebo_l_stereo_camera_sensor"
TOPICS = {"/base_laser/scan": 20.0, "/laser_tilt/scan": 40.0, f"/{CAMERA}/image_raw": 2.0}
LEFT_OUT = ("high_def_sensor", "narrow_stereo_gazebo_l_stereo_camera_sensor", "r_forearm_cam_sensor")


def test_pr2_lasers_and_a_camera_publish_at_their_rates(ros, processes, erd_robots: Path):
    from sensor_msgs.msg import Image, LaserScan

    proc = NodeProcess.console_script("simulator", "--ros-args", "-p", f"urdf_path:={erd_robots / PR2}",
                                      "--params-file", str(REPO / "config" / "pr2_simulator.yaml"),
                                      "-p", f"world:={REPO / 'config' / 'worlds' / 'empty.yaml'}")
    processes.append(proc)
    proc.wait_for_output("simulator ready", timeout=180)
    node = ros.node("pr2_sensor_client")
    stamps: dict[str, list[float]] = {t: [] for t in TOPICS}
    latest: dict[str, object] = {}

    def keep(topic: str, msg) -> None:
        stamps[topic].append(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9)
        latest[topic] = msg

    for topic in TOPICS:
        kind = Image if topic.endswith("image_raw") else LaserScan
        node.create_subscription(kind, topic, lambda m, t=topic: keep(t, m), 10)
    span = 3.0  # s of simulated time
    wait_for(lambda: all(len(s) > 2 and max(s) - min(s) >= span for s in stamps.values()), 240,
             f"{span} s of simulated time of {', '.join(TOPICS)}")
    for topic, rate in TOPICS.items():
        s = sorted(set(stamps[topic]))
        achieved = (len(s) - 1) / (s[-1] - s[0])
        if topic.endswith("scan"):
            # Sent on the simulation thread at exact multiples of the period: the stamps lie on that grid. Judged on
            # the grid, not on a count: under load this test's reader may miss some (a KEEP_LAST queue of 10), which
            # leaves a gap of two periods, never one shorter than a period.
            gaps = np.diff(s)
            steps = gaps * rate
            print(f"{topic} {achieved:.2f} Hz received, shortest gap {gaps.min() * 1e3:.1f} ms, "
                  f"{int(np.rint(steps).sum()) - len(gaps)} missed by this reader", end="; ")
            assert gaps.min() == pytest.approx(1.0 / rate, abs=1.5e-3)  # the 1 ms step: no faster than the rate
            assert np.all(np.abs(steps - np.rint(steps)) < 0.1), gaps  # and on its grid
            assert achieved >= 0.5 * rate
        else:
            print(f"{topic} {achieved:.2f} Hz", end="; ")
            assert 0.5 * rate <= achieved <= rate * 1.03  # the renderer drops what it cannot take, never more
    base, tilt = latest["/base_laser/scan"], latest["/laser_tilt/scan"]
    assert base.header.frame_id == "base_laser_link" and tilt.header.frame_id == "laser_tilt_link"
    assert len(base.ranges) == 640 and base.range_min == pytest.approx(0.05) and base.range_max == pytest.approx(10.0)
    assert base.angle_min == pytest.approx(-math.radians(129.998394137), abs=1e-6)
    assert tilt.angle_max == pytest.approx(math.radians(79.9999999086), abs=1e-6)
    img = latest[f"/{CAMERA}/image_raw"]
    assert (img.width, img.height, img.encoding) == (640, 480, "rgb8")
    assert img.header.frame_id == "wide_stereo_optical_frame"  # the controller's <frameName>
    pixels = np.frombuffer(bytes(img.data), dtype=np.uint8).reshape(480, 640, 3)
    assert pixels.std() > 5.0  # not a blank frame: the lit floor of empty.yaml fills the lower part
    assert pixels[-40:].mean() > pixels[:40].mean() + 5.0
    for name in LEFT_OUT:
        assert node.count_publishers(f"/{name}/image_raw") == 0
    assert proc.stop(signal.SIGINT) == 0, proc.output()[-3000:]
