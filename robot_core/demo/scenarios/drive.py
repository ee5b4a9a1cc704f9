"""The drive scenario: the example differential-drive base (urdf/diff_drive.urdf, floating on the simulator's floor,
config/diff_drive_simulator.yaml) drives a 1 m square by its own odometry, over real DDS traffic:

1. the demo sends TwistStamped on ``/diff_drive_controller/cmd_vel`` (config/diff_drive_controllers.yaml) at 20 Hz,
   steering by ``/diff_drive_controller/odom`` alone: straight along a side (heading and cross-track corrected)
   until odometry says the corner is reached, then turning in place by 90 degrees, four times;
2. ground truth is the simulator's pose of ``base_footprint`` on ``/tf`` (parent: its world frame), expressed
   relative to where the base started, like odometry;
3. the summary gives the loop-closure error -- how far the base really is from its start when odometry says the
   square is closed -- and where odometry and ground truth part; ``drive.png`` draws both paths.

The loop is judged closed when the true end point is within LOOP_TOLERANCE of the start: the wheels slip a little
on every turn in place, so odometry drifts (doc/controllers/diff_drive.md).
"""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from robot_core.demo.client import DemoNode, DemoStepError, progress, wait_for
from robot_core.demo.report import GoalOutcome
from robot_core.demo.runner import Scenario

WHEELS = ["left_wheel_joint", "right_wheel_joint"]
CONTROLLER = "diff_drive_controller"
BASE_FRAME = "base_footprint"
SIDE = 1.0  # m
SPEED, TURN_RATE = 0.3, 1.0  # m/s, rad/s: the top speeds of the square
ARRIVED, ALIGNED = 0.002, 0.003  # m along the side, rad of heading: where a side or a turn ends (by odometry)
LOOP_TOLERANCE = 0.1  # m: the true end point this close to the start counts as a closed loop
COMMAND_PERIOD = 0.05  # s (wall) between cmd_vel messages; the controller stops after 0.5 s without one
PHASE_TIMEOUT = 90.0  # s (wall) for one side or one turn
SAMPLE_PERIOD = 0.1  # s of simulated time between recorded path points


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


def _yaw(q: Any) -> float:
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


class BaseWatch:
    """Odometry (``~/odom``) and the simulator's ground truth (``/tf`` of base_footprint), latest and as paths."""

    def __init__(self, demo: DemoNode):
        from geometry_msgs.msg import TwistStamped
        from nav_msgs.msg import Odometry
        from tf2_msgs.msg import TFMessage

        self.demo = demo
        self._lock = threading.Lock()
        self.odom: tuple[float, float, float, float] | None = None  # t, x, y, yaw
        self.truth: tuple[float, float, float, float] | None = None
        self.odom_path: list[tuple[float, float, float, float]] = []
        self.truth_path: list[tuple[float, float, float, float]] = []
        self.pub = demo.node.create_publisher(TwistStamped, f"/{CONTROLLER}/cmd_vel", 10)
        self._twist = TwistStamped
        demo.node.create_subscription(Odometry, f"/{CONTROLLER}/odom", self._on_odom, 20)
        demo.node.create_subscription(TFMessage, "/tf", self._on_tf, 100)

    @staticmethod
    def _stamp(header: Any) -> float:
        return header.stamp.sec + header.stamp.nanosec * 1e-9

    def _keep(self, path: list, sample: tuple[float, float, float, float]) -> None:
        if not path or sample[0] - path[-1][0] >= SAMPLE_PERIOD:
            path.append(sample)

    def _on_odom(self, msg: Any) -> None:
        p = msg.pose.pose
        sample = (self._stamp(msg.header), p.position.x, p.position.y, _yaw(p.orientation))
        with self._lock:
            self.odom = sample
            self._keep(self.odom_path, sample)

    def _on_tf(self, msg: Any) -> None:
        for tf in msg.transforms:
            if tf.child_frame_id == BASE_FRAME and tf.header.frame_id != "odom":
                tr = tf.transform
                sample = (self._stamp(tf.header), tr.translation.x, tr.translation.y, _yaw(tr.rotation))
                with self._lock:
                    self.truth = sample
                    self._keep(self.truth_path, sample)

    def pose(self) -> np.ndarray:
        with self._lock:
            assert self.odom is not None
            return np.array(self.odom[1:])

    def latest(self) -> tuple[tuple[float, float, float, float], tuple[float, float, float, float]]:
        """(odometry, ground truth) as (t, x, y, yaw), both received."""
        with self._lock:
            assert self.odom is not None and self.truth is not None
            return self.odom, self.truth

    def at_rest(self, since: float, span: float = 0.5) -> bool:
        """Both the odometry and the ground truth newer than ``since`` (simulated s) and still: their newest
        ``span`` seconds of samples (by stamp) within 1 mm and 0.2 deg. Under load /tf and ~/odom reach this client
        with different delays, so "a second after the stop" can still hold a moving ground truth."""
        with self._lock:
            paths = (list(self.odom_path), list(self.truth_path))
        for path in paths:
            if not path or path[-1][0] < since + span:
                return False
            recent = np.array([p for p in path if p[0] >= path[-1][0] - span])
            moved = np.ptp(recent[:, 1:3], axis=0).max() if len(recent) > 1 else math.inf
            if moved > 1e-3 or np.ptp(np.unwrap(recent[:, 3])) > math.radians(0.2):
                return False
        return True

    def paths(self) -> tuple[list[tuple[float, float, float, float]], list[tuple[float, float, float, float]]]:
        with self._lock:
            return list(self.odom_path), list(self.truth_path)

    def send(self, linear: float, angular: float) -> None:
        msg = self._twist()  # stamp 0: "now" for the controller
        msg.twist.linear.x, msg.twist.angular.z = float(linear), float(angular)
        self.pub.publish(msg)


def drive_side(base: BaseWatch, start: np.ndarray, heading: float) -> None:
    """Straight by odometry from corner ``start`` along ``heading`` for SIDE m, slowing down near the corner."""
    u = np.array([math.cos(heading), math.sin(heading)])
    normal = np.array([-u[1], u[0]])
    end = time.monotonic() + PHASE_TIMEOUT
    while True:
        x, y, yaw = base.pose()
        rel = np.array([x, y]) - start
        remaining = SIDE - float(rel @ u)
        if remaining < ARRIVED:
            break
        if time.monotonic() > end:
            raise DemoStepError(f"side along heading {math.degrees(heading):.0f} deg: still {remaining:.3f} m to go "
                                f"after {PHASE_TIMEOUT:.0f} s (odometry {x:.3f}, {y:.3f})")
        cross = float(rel @ normal)  # left of the side's line > 0
        # the last centimetres at 15 mm/s: a client that gets no CPU for a while (the controller keeps its last
        # command for cmd_vel_timeout, 0.5 s) overshoots the corner by at most ~7 mm (1.8 cm at 30 mm/s was seen)
        v = min(SPEED, max(0.015, 0.8 * remaining))
        w = max(-TURN_RATE, min(TURN_RATE, 2.0 * _wrap(heading - yaw) - 3.0 * cross))
        base.send(v, w)
        time.sleep(COMMAND_PERIOD)
    base.send(0.0, 0.0)


def turn(base: BaseWatch, heading: float) -> None:
    """In place by odometry to ``heading``."""
    end = time.monotonic() + PHASE_TIMEOUT
    while True:
        err = _wrap(heading - base.pose()[2])
        if abs(err) < ALIGNED:
            break
        if time.monotonic() > end:
            raise DemoStepError(f"turn to {math.degrees(heading):.0f} deg: still {math.degrees(err):.2f} deg to go "
                                f"after {PHASE_TIMEOUT:.0f} s")
        w = math.copysign(min(TURN_RATE, max(0.05, 2.0 * abs(err))), err)
        base.send(0.0, w)
        time.sleep(COMMAND_PERIOD)
    base.send(0.0, 0.0)


def relative(path: list[tuple[float, float, float, float]], origin: tuple[float, float, float, float]) -> np.ndarray:
    """(t, x, y, yaw) rows expressed in the frame of ``origin``'s pose (both paths start at 0, 0, 0)."""
    c, s = math.cos(origin[3]), math.sin(origin[3])
    rows = []
    for t, x, y, yaw in path:
        dx, dy = x - origin[1], y - origin[2]
        rows.append((t, c * dx + s * dy, -s * dx + c * dy, _wrap(yaw - origin[3])))
    return np.array(rows, dtype=float).reshape(-1, 4)


def run_steps(demo: DemoNode, n_steps: int, facts: dict[str, Any]) -> tuple[list[GoalOutcome], dict[str, Any]]:
    """Progress steps 2 to 4: graph ready, the square, the loop closure; the motion's facts (both paths)."""
    from controller_manager_msgs.srv import ListControllers

    base = BaseWatch(demo)
    wait_for(lambda: base.odom is not None and base.truth is not None, 60.0,
             f"/{CONTROLLER}/odom and /tf of {BASE_FRAME}")
    settle = demo.sim_now()
    wait_for(lambda: base.at_rest(settle), 60.0, "the base settled on its wheels before the start pose is taken")
    states = {c.name: c.state for c in demo.call("/controller_manager/list_controllers",
                                                 ListControllers.Request()).controller}
    facts["controllers"] = states
    progress(f"[2/{n_steps}] controllers: " + ", ".join(f"{n} ({s})" for n, s in states.items()))
    sim0, wall0 = demo.sim_now(), time.monotonic()
    odom0, truth0 = base.latest()
    progress(f"[3/{n_steps}] a {SIDE:g} m square by odometry on /{CONTROLLER}/cmd_vel (left turns in place)")
    goals: list[GoalOutcome] = []
    heading0 = odom0[3]
    corner = np.array(odom0[1:3])
    for k in range(4):
        heading = heading0 + k * math.pi / 2
        name = f"side {k + 1}: {SIDE:g} m, turn 90 deg"
        t0 = demo.sim_now()
        demo.log.begin(f"side {k + 1}", t0)
        try:
            drive_side(base, corner, heading)
            corner = corner + SIDE * np.array([math.cos(heading), math.sin(heading)])
            turn(base, heading + math.pi / 2)
        except DemoStepError as exc:
            base.send(0.0, 0.0)
            goals.append(GoalOutcome(name, "geometry_msgs/TwistStamped", False, "not finished", str(exc),
                                     demo.sim_now() - t0))
            progress(f"      FAILED: {exc}")
            break
        t1 = demo.sim_now()
        demo.log.end(t1)
        x, y, yaw = base.pose()
        goals.append(GoalOutcome(name, "geometry_msgs/TwistStamped", True, "corner reached by odometry", "",
                                 t1 - t0, math.nan, {"odom_x": x, "odom_y": y, "odom_yaw_deg": math.degrees(yaw)}))
        progress(f"      {name} -> odometry ({x:.3f}, {y:.3f}) m, {math.degrees(yaw):.1f} deg")
    base.send(0.0, 0.0)
    stop = demo.sim_now()
    wait_for(lambda: base.at_rest(stop), 60.0, "odometry and ground truth at rest before the end pose is taken")
    odom1, truth1 = base.latest()
    odom_path, truth_path = base.paths()
    odom_end = relative([odom1], odom0)[0]
    truth_end = relative([truth1], truth0)[0]
    loop_error = float(math.hypot(truth_end[1], truth_end[2]))
    odom_closure = float(math.hypot(odom_end[1], odom_end[2]))
    drift = float(math.hypot(odom_end[1] - truth_end[1], odom_end[2] - truth_end[2]))
    heading_error = math.degrees(_wrap(truth_end[3] - odom_end[3]))
    progress(f"[4/{n_steps}] loop closure: the base is {100 * loop_error:.1f} cm from its start (ground truth) where "
             f"odometry says {100 * odom_closure:.1f} cm; heading off by {heading_error:.2f} deg")
    finished = len(goals) == 4 and all(g.success for g in goals)
    ok = finished and loop_error <= LOOP_TOLERANCE
    goals.append(GoalOutcome("loop closure (ground truth)", "tf2_msgs/TFMessage", ok,
                             f"{100 * loop_error:.1f} cm from the start", "" if ok else
                             ("the square was not finished" if not finished else
                              f"more than {LOOP_TOLERANCE} m from the start"), math.nan, math.nan,
                             {"loop_closure_error_m": loop_error, "odometry_closure_m": odom_closure,
                              "odometry_vs_truth_m": drift, "heading_error_deg": heading_error}))
    sim1, wall1 = demo.sim_now(), time.monotonic()
    motion = {"sim_seconds": round(sim1 - sim0, 3), "wall_seconds": round(wall1 - wall0, 3),
              "real_time_factor": (sim1 - sim0) / (wall1 - wall0) if wall1 > wall0 else math.nan,
              "final_positions": demo.log.last_actual(),
              "loop_closure_error_m": loop_error, "odometry_vs_truth_m": drift,
              "paths": {"frame": "the base's start pose (x forwards, y left)",
                        "odometry": relative(odom_path, odom0).round(5).tolist(),
                        "ground_truth": relative(truth_path, truth0).round(5).tolist()}}
    return goals, motion


def prepare(robot_file: Path, facts: dict[str, Any]) -> None:
    """Nothing is known before bring-up."""


def write_plot(output: Path, facts: dict[str, Any]) -> dict[str, str]:
    """``drive.png``: the odometry path and the ground-truth path, both from the start pose, and the ideal square."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = facts.get("paths") or {}
    fig, ax = plt.subplots(figsize=(8, 8), constrained_layout=True)
    square = np.array([[0, 0], [SIDE, 0], [SIDE, SIDE], [0, SIDE], [0, 0]])
    ax.plot(square[:, 0], square[:, 1], color="#999999", ls=":", lw=1.2, label=f"the {SIDE:g} m square")
    for key, color, label in (("odometry", "#1f5fbf", f"odometry (/{CONTROLLER}/odom)"),
                              ("ground_truth", "#d9531a", f"ground truth (simulator /tf of {BASE_FRAME})")):
        p = np.array(paths.get(key) or np.zeros((0, 4)), dtype=float).reshape(-1, 4)
        if p.size:
            ax.plot(p[:, 1], p[:, 2], color=color, lw=1.8, label=label)
            ax.plot(p[-1, 1], p[-1, 2], "o", color=color, ms=7)
    ax.plot(0, 0, "k+", ms=14, mew=2, label="start")
    ax.set_aspect("equal", adjustable="datalim")
    ax.grid(True, alpha=0.35)
    ax.set_xlabel("x [m] (start pose: x forwards)")
    ax.set_ylabel("y [m] (left)")
    err, drift = facts.get("loop_closure_error_m"), facts.get("odometry_vs_truth_m")
    numbers = (f"loop-closure error {100 * err:.1f} cm, odometry vs. truth {100 * drift:.1f} cm"
               if isinstance(err, float) and isinstance(drift, float) else "square not finished")
    ax.set_title(f"robot_core drive: a {SIDE:g} m square by odometry\n{numbers}")
    ax.legend(loc="center", fontsize=9)
    out = output / "drive.png"
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return {"drive": str(out)}


# 6 progress steps: bring-up (runner), 2-4 below, stopping the nodes and writing the outputs (runner).
SCENARIO = Scenario(name="drive", subject="the differential-drive base on a floor", joints=WHEELS, steps=6,
                    prepare=prepare, run=run_steps, robot="urdf/diff_drive.urdf",
                    bringup={"controllers": "config/diff_drive_controllers.yaml",
                             "simulator_config": "config/diff_drive_simulator.yaml", "rbc": False},
                    outputs=write_plot, modes=("topic",))  # the floor and the floating base are the simulator node's
