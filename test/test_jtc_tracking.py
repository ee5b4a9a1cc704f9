"""JTC tracking of the demo trajectory (issue #21: max error <= 0.01 rad), without DDS: rc_arm's controller
configuration (config/controllers.yaml: 100 Hz, the JTC claiming position and velocity) driving the in-process
simulator in lockstep, so the figure is the controller's and the servo's, not the machine's latency
(bench/jtc_tracking.py measures the topic-mode graph over DDS)."""

from __future__ import annotations

import warnings

import numpy as np
from conftest import REPO, URDF_DIR

from robot_core.control.config import load_config
from robot_core.control.hardware import IN_PROCESS_PLUGIN
from robot_core.control.manager import ControllerManagerCore
from robot_core.control.trajectory import JointTrajectory, TrajectoryPoint
from robot_core.demo.scenarios.arm import ARM_JOINTS, trajectory_points
from robot_core.model import load_robot


def max_tracking_error(command_interfaces: list[str] | None = None) -> float:
    cfg = load_config(REPO / "config" / "controllers.yaml")
    params = dict(cfg.controller("joint_trajectory_controller").params)
    if command_interfaces is not None:
        params["command_interfaces"] = command_interfaces
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cm = ControllerManagerCore.from_robot(load_robot(str(URDF_DIR / "rc_arm.urdf")), cfg.update_rate,
                                              plugin_override=IN_PROCESS_PLUGIN)
    cm.declare_controller("jtc", "joint_trajectory_controller/JointTrajectoryController", params)
    cm.load_controller("jtc")
    cm.configure_controller("jtc")
    assert cm.switch_controller(["jtc"], []).ok
    jtc = cm.controller("jtc")
    period = 1.0 / cfg.update_rate
    settle = round(0.5 / period)
    for k in range(settle):  # settle at the start pose
        cm.update(k * period, period)
    start = jtc.measured.positions.tolist()
    jtc.accept_goal(JointTrajectory(ARM_JOINTS, [TrajectoryPoint(positions=q, velocities=v, time_from_start=t)
                                                 for t, q, v in trajectory_points(start)]))
    errors = []
    for k in range(settle, settle + round(9.0 / period)):
        cm.update(k * period, period)
        errors.append(np.max(np.abs(jtc.desired.positions - jtc.measured.positions)))
    return float(max(errors))


def test_the_demo_trajectory_is_tracked_within_a_centiradian():
    assert max_tracking_error() <= 0.01


def test_without_the_velocity_feed_forward_it_is_not():
    """What the test above guards: the position-only JTC lags by the servo and the wrist's losses."""
    assert max_tracking_error(["position"]) > 0.03
