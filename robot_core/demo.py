"""The README's main job: ``make demo`` = ``python -m robot_core.demo`` = ``robot-core demo``.

Brings the example arm (urdf/rc_arm.urdf) up headless through :mod:`robot_core.bringup` (simulator, controller
manager, RBC as child processes; controllers spawned with the spawner), then, over real DDS traffic:

1. a FollowJointTrajectory goal through several waypoints on the joint_trajectory_controller;
2. a switch from the joint_trajectory_controller to the forward_position_controller (the RBC's ``q_ref`` vars
   write its ``~/commands``, see the ``<rbc>`` tags of rc_arm);
3. a JointReacher ``JR0`` created through the RBC's ``~/l2_ctrl``, configured through its parameters, and a
   JointReach goal;
4. a VectorField reacher ``VF0`` (after destroying JR0, which would otherwise keep holding its joint target)
   and a CartesianReach goal for the tool frame ``tcp``.

It records commanded and actual joint positions and writes into the output folder (default ./demo_output):
``tracking.png`` (commanded vs. actual positions and tracking error over simulated time), ``final_pose.png``
(MuJoCo offscreen rendering of the arm at its final pose, the Cartesian goal as a green sphere),
``summary.txt`` / ``summary.json`` (each goal's result, max tracking error, achieved real-time factor) and
``logs/<node>.log``. Exit code 0 only when every goal succeeded and every file was written.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from robot_core.bringup.plan import MODES, BringupConfigError, BringupOptions, make_plan
from robot_core.bringup.run import Bringup, BringupError, rbc_available
from robot_core.demo_report import GoalOutcome, TrackingLog, plot_tracking, summary_dict, summary_text, write_summary

ARM_JOINTS = [f"joint{i}" for i in range(1, 8)]
JTC = "joint_trajectory_controller"
FPC = "forward_position_controller"
TOOL_LINK = "tcp"
BASE_LINK = "base_link"
# (time_from_start [s], joint1..7 [rad]); the home pose is (0, 0.3, 0, 1.9, 0, 0.94, 0).
WAYPOINTS: list[tuple[float, list[float]]] = [
    (2.0, [0.5, 0.5, 0.0, 1.6, 0.0, 1.1, 0.4]),
    (4.0, [0.9, 0.2, 0.4, 1.2, 0.3, 1.4, 0.8]),
    (6.0, [0.2, 0.6, -0.3, 1.8, -0.2, 1.0, -0.3]),
    (8.0, [-0.3, 0.4, 0.0, 1.5, 0.0, 1.2, 0.0]),
]
JR_GOAL = {"joint1": 0.3, "joint2": 0.55, "joint4": 1.35, "joint6": 1.05}
JR_PRECISION = 0.01
# The Cartesian goal is the tool pose of this joint configuration (so it is reachable and within limits).
VF_POSE_JOINTS = [0.0, 0.45, 0.3, 1.7, 0.2, 1.25, 0.3]
VF_LINEAR_PRECISION, VF_ANGULAR_PRECISION = 0.001, 0.01
JTC_PHASE, JR_PHASE, VF_PHASE = "JTC trajectory", "RBC JR0 joint goal", "RBC VF0 Cartesian goal"


class DemoStepError(RuntimeError):
    """A step could not even be attempted (a service missing, a goal rejected)."""


def _progress(msg: str) -> None:
    print(msg, flush=True)


class DemoNode:
    """rclpy context + node + background executor; records /joint_states and the commands sent to the arm."""

    def __init__(self, log: TrackingLog):
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import MultiThreadedExecutor
        from rclpy.parameter import Parameter
        from rclpy.signals import SignalHandlerOptions

        self.log = log
        self.context = Context()
        rclpy.init(context=self.context, signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node("robot_core_demo", context=self.context,
                                      parameter_overrides=[Parameter("use_sim_time", value=True)])
        self.executor = MultiThreadedExecutor(num_threads=4, context=self.context)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True, name="demo-executor")
        self._thread.start()
        self.rtf_samples: list[float] = []
        self._clients: dict[str, Any] = {}
        self._subscribe()
        self._make_clients()

    def _make_clients(self) -> None:
        """Service clients made once, at start: a client created just before its call can lose the answer
        (the server may reply before the client's response reader is matched), which a loaded machine hits."""
        from controller_manager_msgs.srv import ListControllers, SwitchController
        from robot_core_interfaces.srv import L2Control

        for srv_type, name in ((ListControllers, "/controller_manager/list_controllers"),
                               (SwitchController, "/controller_manager/switch_controller"),
                               (L2Control, "/rbc/l2_ctrl")):
            self._clients[name] = self.node.create_client(srv_type, name)

    def _spin(self) -> None:
        from rclpy.executors import ExternalShutdownException

        with contextlib.suppress(ExternalShutdownException, Exception):
            while self.context.ok():
                self.executor.spin_once(timeout_sec=0.05)

    def _subscribe(self) -> None:
        from control_msgs.msg import JointTrajectoryControllerState
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray

        def stamp(msg: Any) -> float:
            return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9

        self.node.create_subscription(JointState, "/joint_states",
                                      lambda m: self.log.add_actual(stamp(m), m.name, m.position), 50)
        self.node.create_subscription(JointTrajectoryControllerState, f"/{JTC}/controller_state",
                                      lambda m: self.log.add_commanded(stamp(m), m.joint_names,
                                                                       m.reference.positions), 50)
        self.node.create_subscription(Float64MultiArray, f"/{FPC}/commands",
                                      lambda m: self.log.add_commanded(self.sim_now(), ARM_JOINTS, m.data), 50)
        try:
            from robot_core_interfaces.msg import SimulatorStatus

            self.node.create_subscription(SimulatorStatus, "/simulator/status",
                                          lambda m: self.rtf_samples.append(m.real_time_factor), 10)
        except ImportError:
            pass

    def sim_now(self) -> float:
        return self.node.get_clock().now().nanoseconds * 1e-9

    def wait(self, future: Any, timeout: float, what: str, tick: Callable[[], None] | None = None) -> Any:
        """Wait for an rclpy future completed by the background executor; ``tick`` runs about once a second."""
        end = time.monotonic() + timeout
        next_tick = time.monotonic() + 1.0
        while not future.done():
            if time.monotonic() > end:
                with contextlib.suppress(Exception):
                    future.cancel()
                raise DemoStepError(f"{what}: no answer within {timeout:.0f} s")
            if tick is not None and time.monotonic() >= next_tick:
                tick()
                next_tick += 1.0
            time.sleep(0.01)
        if future.exception() is not None:
            raise DemoStepError(f"{what}: {future.exception()}")
        return future.result()

    def call(self, name: str, request: Any, timeout: float = 30.0) -> Any:
        client = self._clients[name]
        if not client.wait_for_service(timeout_sec=timeout):
            raise DemoStepError(f"service {name} is not available")
        return self.wait(client.call_async(request), timeout, f"service {name}")

    def set_parameters(self, node_name: str, values: dict[str, Any], timeout: float = 30.0,
                       attempts: int = 3) -> None:
        """Set parameters of a node created at run time (its client is necessarily new: retried, as it is
        idempotent, when the answer does not come)."""
        from rclpy.parameter import Parameter
        from rclpy.parameter_client import AsyncParameterClient

        client = AsyncParameterClient(self.node, node_name)
        if not client.wait_for_services(timeout_sec=timeout):
            raise DemoStepError(f"parameter services of /{node_name} are not available")
        params = [Parameter(k, value=v) for k, v in values.items()]
        for attempt in range(attempts):
            try:
                response = self.wait(client.set_parameters(params), timeout / attempts,
                                     f"setting parameters of /{node_name}")
                break
            except DemoStepError:
                if attempt == attempts - 1:
                    raise
        bad = [f"{p.name}: {r.reason}" for p, r in zip(params, response.results, strict=True) if not r.successful]
        if bad:
            raise DemoStepError(f"/{node_name} refused parameters: {'; '.join(bad)}")

    def shutdown(self) -> None:
        with contextlib.suppress(Exception):
            self.executor.shutdown(timeout_sec=1.0)
        with contextlib.suppress(Exception):
            self.node.destroy_node()
        with contextlib.suppress(Exception):
            self.context.try_shutdown()
        self._thread.join(timeout=3.0)


class ActionRun:
    """Send one action goal, wait for its result with periodic progress lines."""

    def __init__(self, demo: DemoNode, action_type: Any, name: str):
        from rclpy.action import ActionClient

        self.demo = demo
        self.client = ActionClient(demo.node, action_type, name)
        self.name = name
        self.feedback: Any = None

    def run(self, goal: Any, timeout: float, describe: Callable[[Any], str]) -> tuple[Any, int]:
        from action_msgs.msg import GoalStatus

        if not self.client.wait_for_server(timeout_sec=60.0):
            raise DemoStepError(f"action server {self.name} is not available")
        handle = self.demo.wait(self.client.send_goal_async(goal, feedback_callback=self._on_feedback), 60.0,
                                f"sending the goal to {self.name}")
        if not handle.accepted:
            raise DemoStepError(f"{self.name} rejected the goal (see its node's log)")
        t0 = time.monotonic()

        def tick() -> None:
            if self.feedback is not None:
                _progress(f"      {time.monotonic() - t0:5.1f} s: {describe(self.feedback)}")

        result = self.demo.wait(handle.get_result_async(), timeout, f"result of {self.name}", tick)
        status = result.status
        if status not in (GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_ABORTED, GoalStatus.STATUS_CANCELED):
            raise DemoStepError(f"{self.name}: goal ended with status {status}")
        return result.result, status

    def _on_feedback(self, msg: Any) -> None:
        self.feedback = msg.feedback

    def destroy(self) -> None:
        with contextlib.suppress(Exception):
            self.client.destroy()


def _status_name(status: int) -> str:
    return {4: "SUCCEEDED", 5: "CANCELED", 6: "ABORTED"}.get(status, str(status))


# --- steps ------------------------------------------------------------------------------------------------------
def trajectory_goal(start: list[float]) -> Any:
    """FollowJointTrajectory through WAYPOINTS; interior velocities by central differences (smooth splines)."""
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    times = [0.0] + [t for t, _ in WAYPOINTS]
    points = [start] + [q for _, q in WAYPOINTS]
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = list(ARM_JOINTS)
    for k in range(1, len(points)):
        if k == len(points) - 1:
            vel = [0.0] * len(ARM_JOINTS)
        else:
            dt = times[k + 1] - times[k - 1]
            vel = [(b - a) / dt for a, b in zip(points[k - 1], points[k + 1], strict=True)]
        sec = int(times[k])
        goal.trajectory.points.append(JointTrajectoryPoint(
            positions=list(points[k]), velocities=vel,
            time_from_start=Duration(sec=sec, nanosec=round((times[k] - sec) * 1e9))))
    return goal


def step_trajectory(demo: DemoNode) -> GoalOutcome:
    from control_msgs.action import FollowJointTrajectory

    current = demo.log.last_actual()
    start = [current[j] for j in ARM_JOINTS]
    goal = trajectory_goal(start)
    run = ActionRun(demo, FollowJointTrajectory, f"/{JTC}/follow_joint_trajectory")
    name = f"FollowJointTrajectory ({len(WAYPOINTS)} waypoints)"
    t0 = demo.sim_now()
    demo.log.begin(JTC_PHASE, t0)

    def describe(fb: Any) -> str:
        err = max((abs(e) for e in fb.error.positions), default=math.nan)
        return f"waypoint {fb.index + 1}/{len(WAYPOINTS)}, max |error| {err:.4f} rad"

    try:
        result, status = run.run(goal, timeout=120.0, describe=describe)
    finally:
        run.destroy()
    t1 = demo.sim_now()
    demo.log.end(t1)
    codes = {0: "SUCCESSFUL", -1: "INVALID_GOAL", -2: "INVALID_JOINTS", -3: "OLD_HEADER_TIMESTAMP",
             -4: "PATH_TOLERANCE_VIOLATED", -5: "GOAL_TOLERANCE_VIOLATED"}
    ok = status == 4 and result.error_code == 0
    return GoalOutcome(name, "control_msgs/FollowJointTrajectory", ok,
                       f"{codes.get(result.error_code, result.error_code)} ({result.error_code}), "
                       f"{_status_name(status)}", result.error_string, t1 - t0,
                       demo.log.phase_max_error(JTC_PHASE), {"error_code": int(result.error_code)})


def step_switch(demo: DemoNode) -> None:
    from builtin_interfaces.msg import Duration
    from controller_manager_msgs.srv import SwitchController

    req = SwitchController.Request(activate_controllers=[FPC], deactivate_controllers=[JTC],
                                   strictness=SwitchController.Request.STRICT, activate_asap=True,
                                   timeout=Duration(sec=5))
    res = demo.call("/controller_manager/switch_controller", req)
    if not res.ok:
        raise DemoStepError(f"switch {JTC} -> {FPC} refused: {res.message}")


def _l2(demo: DemoNode, cmd: str, data: str = "", name: str = "") -> Any:
    from robot_core_interfaces.srv import L2Control

    res = demo.call("/rbc/l2_ctrl", L2Control.Request(cmd=cmd, data=data, name=name))
    if not res.success:
        raise DemoStepError(f"l2_ctrl {cmd} {data} {name}: {res.message}")
    return res


def step_joint_reach(demo: DemoNode) -> GoalOutcome:
    from robot_core_interfaces.action import JointReach

    name = "JointReach JR0 (JointReacher)"
    _l2(demo, "create_re", "JR", "JR0")
    demo.set_parameters("JR0", {"joints": list(ARM_JOINTS)})
    goal = JointReach.Goal(joint_names=list(JR_GOAL), positions=list(JR_GOAL.values()), precision=JR_PRECISION,
                           timeout=30.0)
    run = ActionRun(demo, JointReach, "/JR0/reach")
    t0 = demo.sim_now()
    demo.log.begin(JR_PHASE, t0)
    try:
        result, status = run.run(goal, timeout=90.0, describe=lambda fb: "max |error| "
                                 f"{max((abs(e) for e in fb.error), default=math.nan):.4f} rad")
    finally:
        run.destroy()
    t1 = demo.sim_now()
    demo.log.end(t1)
    final = [float(e) for e in result.final_error]
    return GoalOutcome(name, "robot_core_interfaces/JointReach", bool(result.success) and status == 4,
                       f"{'success' if result.success else 'failure'}, {_status_name(status)}", result.message,
                       t1 - t0, demo.log.phase_max_error(JR_PHASE),
                       {"max_final_error_rad": max((abs(e) for e in final), default=math.nan),
                        "final_error": final})


def vf_goal_pose(robot_file: Path) -> tuple[list[float], list[float]]:
    """Position and quaternion (x, y, z, w) of the tool at VF_POSE_JOINTS, in base_link."""
    from robot_core.kinematics.chain import SerialKinematicChain
    from robot_core.model import load_robot
    from robot_core.rbc.rotations import matrix_to_quat_xyzw

    chain = SerialKinematicChain(load_robot(str(robot_file)), BASE_LINK, TOOL_LINK)
    pose = chain.forward_kinematics(VF_POSE_JOINTS)
    return [float(v) for v in pose[:3, 3]], [float(v) for v in matrix_to_quat_xyzw(pose[:3, :3])]


def step_cartesian_reach(demo: DemoNode, position: list[float], quat: list[float]) -> GoalOutcome:
    from geometry_msgs.msg import Point, Pose, Quaternion
    from robot_core_interfaces.action import CartesianReach

    name = "CartesianReach VF0 (VectorField)"
    _l2(demo, "destroy_re", "", "JR0")  # JR0 holds its joint target after success; it would fight VF0
    _l2(demo, "create_re", "VF", "VF0")
    demo.set_parameters("VF0", {"base_link": BASE_LINK, "end_link": TOOL_LINK})
    goal = CartesianReach.Goal(pose=Pose(position=Point(x=position[0], y=position[1], z=position[2]),
                                         orientation=Quaternion(x=quat[0], y=quat[1], z=quat[2], w=quat[3])),
                               linear_precision=VF_LINEAR_PRECISION, angular_precision=VF_ANGULAR_PRECISION,
                               timeout=40.0)
    run = ActionRun(demo, CartesianReach, "/VF0/reach")
    t0 = demo.sim_now()
    demo.log.begin(VF_PHASE, t0)
    try:
        result, status = run.run(goal, timeout=120.0, describe=lambda fb: f"linear error "
                                 f"{1000 * fb.linear_error:.2f} mm, angular error {fb.angular_error:.4f} rad")
    finally:
        run.destroy()
    t1 = demo.sim_now()
    demo.log.end(t1)
    return GoalOutcome(name, "robot_core_interfaces/CartesianReach", bool(result.success) and status == 4,
                       f"{'success' if result.success else 'failure'}, {_status_name(status)}", result.message,
                       t1 - t0, demo.log.phase_max_error(VF_PHASE),
                       {"linear_error_m": float(result.linear_error), "angular_error_rad": float(result.angular_error),
                        "goal_position": position})


# --- the whole demo -----------------------------------------------------------------------------------------------
def _wait_for(cond: Callable[[], Any], timeout: float, what: str) -> Any:
    end = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > end:
            raise DemoStepError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.02)


def run_demo(output: Path, mode: str = "topic", robot: str | None = None) -> int:
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    output = output.resolve()
    output.mkdir(parents=True, exist_ok=True)
    for stale in ("tracking.png", "final_pose.png", "summary.txt", "summary.json"):
        with contextlib.suppress(FileNotFoundError):
            (output / stale).unlink()
    n_steps = 7
    _progress(f"robot_core demo -> {output}")
    _progress(f"[1/{n_steps}] bringing the example arm up headless (mode {mode}; node logs in {output / 'logs'})")
    try:
        plan = make_plan(BringupOptions.create(robot=robot, mode=mode, headless=True))
    except BringupConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    goals: list[GoalOutcome] = []
    facts: dict[str, Any] = {"robot": plan.options.robot.name, "mode": mode}
    position, quat = vf_goal_pose(plan.options.robot)
    facts["cartesian_goal"] = {"position": position, "orientation_xyzw": quat}
    log = TrackingLog(ARM_JOINTS)
    wall0 = time.monotonic()
    motion: dict[str, Any] = {}
    try:
        with Bringup(plan, log_dir=output / "logs", progress=lambda m: _progress(f"      {m}")) as bringup:
            assert bringup.report is not None
            facts["bringup_seconds"] = round(bringup.report.seconds, 2)
            facts["nodes"] = list(bringup.report.pids)
            for note in bringup.report.notes:
                _progress(f"      note: {note}")
            _progress(f"      up in {bringup.report.seconds:.1f} s: {', '.join(bringup.report.pids)}")
            demo = DemoNode(log)
            try:
                goals, motion = _run_steps(demo, n_steps, facts)
            except DemoStepError as exc:
                _progress(f"      FAILED: {exc}")
                goals.append(GoalOutcome("demo set-up", "ROS graph", False, "failed", str(exc)))
            finally:
                demo.shutdown()
            _progress(f"[6/{n_steps}] stopping the nodes")
    except (BringupError, OSError) as exc:
        _progress(f"      bringup FAILED: {exc}")
        goals = goals or [GoalOutcome("bringup", "robot-core bringup", False, "failed", str(exc))]
    facts.update(motion)
    facts["wall_seconds_total"] = round(time.monotonic() - wall0, 1)
    _progress(f"[7/{n_steps}] writing {output}")
    facts["files"] = _write_outputs(log, output, plan.options.robot, facts, goals)
    summary = summary_dict(goals, **facts)
    files_ok = all((output / f).is_file() for f in ("tracking.png", "final_pose.png"))
    if not files_ok:
        summary["success"] = False
    write_summary(summary, output)
    print()
    print(summary_text(summary))
    return 0 if summary["success"] else 1


def _run_steps(demo: DemoNode, n_steps: int,
               facts: dict[str, Any]) -> tuple[list[GoalOutcome], dict[str, Any]]:
    goals: list[GoalOutcome] = []
    _wait_for(lambda: demo.sim_now() > 0.0 and len(demo.log.last_actual()) == len(ARM_JOINTS), 30.0,
              "/clock and /joint_states")
    sim0, wall0 = demo.sim_now(), time.monotonic()
    from controller_manager_msgs.srv import ListControllers

    states = {c.name: c.state for c in demo.call("/controller_manager/list_controllers",
                                                 ListControllers.Request()).controller}
    facts["controllers"] = states
    _progress(f"[2/{n_steps}] controllers spawned with the spawner: "
              + ", ".join(f"{n} ({s})" for n, s in states.items()))
    _progress(f"[3/{n_steps}] FollowJointTrajectory through {len(WAYPOINTS)} waypoints "
              f"({WAYPOINTS[-1][0]:g} s) on /{JTC}")
    try:
        goals.append(step_trajectory(demo))
    except DemoStepError as exc:
        goals.append(GoalOutcome("FollowJointTrajectory", "control_msgs/FollowJointTrajectory", False, "not run",
                                 str(exc)))
    _progress(f"      -> {goals[-1].result}")
    rbc_steps = [("JointReach JR0 (JointReacher)", "robot_core_interfaces/JointReach"),
                 ("CartesianReach VF0 (VectorField)", "robot_core_interfaces/CartesianReach")]
    if not rbc_available():
        _progress(f"[4/{n_steps}] RBC not available: robot_core.nodes.rbc is not installed -- FAILURE")
        goals += [GoalOutcome(n, i, False, "RBC not available", "robot_core.nodes.rbc is not installed")
                  for n, i in rbc_steps]
    else:
        _progress(f"[4/{n_steps}] switching {JTC} -> {FPC}; JointReacher JR0 via /rbc/l2_ctrl, goal "
                  + ", ".join(f"{j}={v:g}" for j, v in JR_GOAL.items()))
        position, quat = facts["cartesian_goal"]["position"], facts["cartesian_goal"]["orientation_xyzw"]
        try:
            step_switch(demo)
            goals.append(step_joint_reach(demo))
        except DemoStepError as exc:
            goals.append(GoalOutcome(*rbc_steps[0], False, "not run", str(exc)))
        _progress(f"      -> {goals[-1].result}")
        _progress(f"[5/{n_steps}] VectorField VF0 via /rbc/l2_ctrl, {TOOL_LINK} to "
                  f"({position[0]:.3f}, {position[1]:.3f}, {position[2]:.3f}) m")
        if goals[-1].result == "not run":
            goals.append(GoalOutcome(*rbc_steps[1], False, "not run", "the JointReacher step failed"))
        else:
            try:
                goals.append(step_cartesian_reach(demo, position, quat))
            except DemoStepError as exc:
                goals.append(GoalOutcome(*rbc_steps[1], False, "not run", str(exc)))
        _progress(f"      -> {goals[-1].result}")
    sim1, wall1 = demo.sim_now(), time.monotonic()
    motion = {"sim_seconds": round(sim1 - sim0, 3), "wall_seconds": round(wall1 - wall0, 3),
              "real_time_factor": (sim1 - sim0) / (wall1 - wall0) if wall1 > wall0 else math.nan,
              "final_positions": demo.log.last_actual()}
    if demo.rtf_samples:
        motion["simulator_reported_real_time_factor"] = sum(demo.rtf_samples) / len(demo.rtf_samples)
    return goals, motion


def _write_outputs(log: TrackingLog, output: Path, robot_file: Path, facts: dict[str, Any],
                   goals: list[GoalOutcome]) -> dict[str, str]:
    from robot_core.pose_render import RenderError, render_with_fallback

    files: dict[str, str] = {}
    title = (f"robot_core demo: {facts.get('robot')}, {facts.get('mode')} mode -- commanded (dashed) vs. actual "
             f"(solid) joint positions")
    info = plot_tracking(log, output / "tracking.png", title)
    files["plot"] = str(output / "tracking.png")
    facts["samples"] = info
    positions = dict(facts.get("final_positions") or log.last_actual())
    goal = (facts.get("cartesian_goal") or {}).get("position")
    try:
        caption = (f"{facts.get('robot')} at its final pose ({facts.get('mode')} mode)"
                   + ("; green sphere: the CartesianReach goal of VF0" if goal else ""))
        rendered = render_with_fallback(robot_file, positions, output / "final_pose.png", goal=goal, caption=caption)
        facts["gl_backend"] = rendered["backend"]
        files["rendering"] = str(output / "final_pose.png")
    except RenderError as exc:
        facts["gl_backend"] = f"none: {exc}"
        goals.append(GoalOutcome("rendering", "MuJoCo offscreen", False, "failed", str(exc)))
    files["summary"] = str(output / "summary.txt")
    return files


# --- command line ---------------------------------------------------------------------------------------------------
def configure_cli(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", default="demo_output", metavar="DIR",
                        help="folder for tracking.png, final_pose.png, summary.txt/json, logs/ (default ./demo_output)")
    parser.add_argument("--mode", choices=MODES, default="topic",
                        help="topic: simulator in its own process (default); embedded: physics in the controller "
                             "manager")


def run_cli(args: argparse.Namespace) -> int:
    interrupted: list[int] = []

    def on_signal(signum: int, _frame: Any) -> None:
        interrupted.append(signum)
        raise KeyboardInterrupt

    # Explicit handlers: a shell starts background jobs with SIGINT ignored, and Ctrl-C must still stop the nodes.
    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        return run_demo(Path(args.output), args.mode)
    except BaseException:
        # The interrupt may surface as another exception (e.g. an import it cut short); the nodes are stopped
        # either way by Bringup's context manager.
        if not interrupted:
            raise
        print(f"robot_core demo: interrupted ({signal.Signals(interrupted[0]).name}); every node was stopped",
              file=sys.stderr)
        return 130
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m robot_core.demo", description=__doc__.splitlines()[0])
    configure_cli(parser)
    return run_cli(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
