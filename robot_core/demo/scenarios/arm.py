"""The arm scenario (the README's demo): the example arm (urdf/rc_arm.urdf), driven through the controllers and
the Robot Body Coupler, over real DDS traffic:

1. a FollowJointTrajectory goal through several waypoints on the joint_trajectory_controller;
2. a switch from the joint_trajectory_controller to the forward_position_controller (the RBC's ``q_ref`` vars
   write its ``~/commands``, see the ``<rbc>`` tags of rc_arm);
3. a JointReacher ``JR0`` created through the RBC's ``~/l2_ctrl``, configured through its parameters, and a
   JointReach goal;
4. a VectorField reacher ``VF0`` (after destroying JR0, which would otherwise keep holding its joint target)
   and a CartesianReach goal for the tool frame ``tcp``.

The arm stands in the table-top scene of config/worlds/table_top.yaml (in both modes: the simulator node or the
embedded controller manager simulates it). The wrist force-torque sensor's broadcaster
(``/force_torque_sensor_broadcaster/wrench``) is recorded for the plot's wrench panel, and the scene camera of
rc_arm (``/scene_camera/image_raw``) for ``camera.png``. The runner (:mod:`robot_core.demo.runner`) brings the
graph up and writes the plot, the rendering (the Cartesian goal drawn as a green sphere), the camera image and the
summary.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

from robot_core.bringup.run import rbc_available
from robot_core.demo.client import FPC, JTC, ActionRun, DemoNode, DemoStepError, progress, status_name, wait_for
from robot_core.demo.report import GoalOutcome
from robot_core.demo.runner import Scenario

ARM_JOINTS = [f"joint{i}" for i in range(1, 8)]
TOOL_LINK = "tcp"
BASE_LINK = "base_link"
# (time_from_start [s], joint1..7 [rad]); the home pose is (0, 0.3, 0, 1.9, 0, 0.94, 0). Every pose, and the
# motion between them, keeps the arm clear of the table and boxes of config/worlds/table_top.yaml
# (test/test_demo_scene.py measures it with MuJoCo's geom distances).
WAYPOINTS: list[tuple[float, list[float]]] = [
    (2.0, [0.5, 0.2, 0.0, 1.4, 0.0, 1.1, 0.4]),
    (4.0, [0.9, 0.2, 0.4, 1.2, 0.3, 1.4, 0.8]),
    (6.0, [0.2, 0.3, -0.3, 1.7, -0.2, 1.0, -0.3]),
    (8.0, [-0.3, 0.4, 0.0, 1.5, 0.0, 1.2, 0.0]),
]
JR_GOAL = {"joint1": 0.3, "joint2": 0.4, "joint4": 1.35, "joint6": 1.05}
JR_PRECISION = 0.01
# The Cartesian goal is the tool pose of this joint configuration (so it is reachable and within limits).
VF_POSE_JOINTS = [0.0, 0.3, 0.3, 1.7, 0.2, 1.25, 0.3]
VF_LINEAR_PRECISION, VF_ANGULAR_PRECISION = 0.001, 0.01
JTC_PHASE, JR_PHASE, VF_PHASE = "JTC trajectory", "RBC JR0 joint goal", "RBC VF0 Cartesian goal"
WORLD = "config/worlds/table_top.yaml"
WRENCH_TOPIC = "/force_torque_sensor_broadcaster/wrench"  # config/controllers.yaml: wrist_ft, in the hand frame
CAMERA_TOPIC = "/scene_camera/image_raw"  # rc_arm's scene camera (urdf/rc_arm.urdf.xacro)
FT_JOINT = "hand_joint"  # the wrist sensor measures the load below this joint: the hand and its fingers
REST_SAMPLES = 20  # wrench samples taken with the arm still at its start pose, before the first goal


# --- steps ------------------------------------------------------------------------------------------------------
def trajectory_points(start: list[float]) -> list[tuple[float, list[float], list[float]]]:
    """(time_from_start, positions, velocities) of WAYPOINTS after ``start``; interior velocities by central
    differences (smooth splines), zero at the end."""
    times = [0.0] + [t for t, _ in WAYPOINTS]
    points = [start] + [q for _, q in WAYPOINTS]
    out = []
    for k in range(1, len(points)):
        if k == len(points) - 1:
            vel = [0.0] * len(ARM_JOINTS)
        else:
            dt = times[k + 1] - times[k - 1]
            vel = [(b - a) / dt for a, b in zip(points[k - 1], points[k + 1], strict=True)]
        out.append((times[k], list(points[k]), vel))
    return out


def trajectory_goal(start: list[float]) -> Any:
    """FollowJointTrajectory through WAYPOINTS (:func:`trajectory_points`)."""
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = list(ARM_JOINTS)
    for t, q, vel in trajectory_points(start):
        sec = int(t)
        goal.trajectory.points.append(JointTrajectoryPoint(
            positions=q, velocities=vel, time_from_start=Duration(sec=sec, nanosec=round((t - sec) * 1e9))))
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
                       f"{status_name(status)}", result.error_string, t1 - t0,
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
                       f"{'success' if result.success else 'failure'}, {status_name(status)}", result.message,
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
                       f"{'success' if result.success else 'failure'}, {status_name(status)}", result.message,
                       t1 - t0, demo.log.phase_max_error(VF_PHASE),
                       {"linear_error_m": float(result.linear_error), "angular_error_rad": float(result.angular_error),
                        "goal_position": position})



def run_steps(demo: DemoNode, n_steps: int, facts: dict[str, Any]) -> tuple[list[GoalOutcome], dict[str, Any]]:
    """Progress steps 2 to 5: controllers, trajectory, joint reach, Cartesian reach; the motion's facts."""
    goals: list[GoalOutcome] = []
    wait_for(lambda: demo.sim_now() > 0.0 and len(demo.log.last_actual()) == len(ARM_JOINTS), 30.0,
              "/clock and /joint_states")
    wait_for(lambda: demo.log.wrench()[0].size >= REST_SAMPLES, 30.0, f"{REST_SAMPLES} samples on {WRENCH_TOPIC}")
    sim0, wall0 = demo.sim_now(), time.monotonic()
    from controller_manager_msgs.srv import ListControllers

    states = {c.name: c.state for c in demo.call("/controller_manager/list_controllers",
                                                 ListControllers.Request()).controller}
    facts["controllers"] = states
    progress(f"[2/{n_steps}] controllers spawned with the spawner: "
              + ", ".join(f"{n} ({s})" for n, s in states.items()))
    progress(f"[3/{n_steps}] FollowJointTrajectory through {len(WAYPOINTS)} waypoints "
              f"({WAYPOINTS[-1][0]:g} s) on /{JTC}")
    try:
        goals.append(step_trajectory(demo))
    except DemoStepError as exc:
        goals.append(GoalOutcome("FollowJointTrajectory", "control_msgs/FollowJointTrajectory", False, "not run",
                                 str(exc)))
    progress(f"      -> {goals[-1].result}")
    rbc_steps = [("JointReach JR0 (JointReacher)", "robot_core_interfaces/JointReach"),
                 ("CartesianReach VF0 (VectorField)", "robot_core_interfaces/CartesianReach")]
    if not rbc_available():
        progress(f"[4/{n_steps}] RBC not available: robot_core.nodes.rbc is not installed -- FAILURE")
        goals += [GoalOutcome(n, i, False, "RBC not available", "robot_core.nodes.rbc is not installed")
                  for n, i in rbc_steps]
    else:
        progress(f"[4/{n_steps}] switching {JTC} -> {FPC}; JointReacher JR0 via /rbc/l2_ctrl, goal "
                  + ", ".join(f"{j}={v:g}" for j, v in JR_GOAL.items()))
        position, quat = facts["cartesian_goal"]["position"], facts["cartesian_goal"]["orientation_xyzw"]
        try:
            step_switch(demo)
            goals.append(step_joint_reach(demo))
        except DemoStepError as exc:
            goals.append(GoalOutcome(*rbc_steps[0], False, "not run", str(exc)))
        progress(f"      -> {goals[-1].result}")
        progress(f"[5/{n_steps}] VectorField VF0 via /rbc/l2_ctrl, {TOOL_LINK} to "
                  f"({position[0]:.3f}, {position[1]:.3f}, {position[2]:.3f}) m")
        if goals[-1].result == "not run":
            goals.append(GoalOutcome(*rbc_steps[1], False, "not run", "the JointReacher step failed"))
        else:
            try:
                goals.append(step_cartesian_reach(demo, position, quat))
            except DemoStepError as exc:
                goals.append(GoalOutcome(*rbc_steps[1], False, "not run", str(exc)))
        progress(f"      -> {goals[-1].result}")
    sim1, wall1 = demo.sim_now(), time.monotonic()
    motion = {"sim_seconds": round(sim1 - sim0, 3), "wall_seconds": round(wall1 - wall0, 3),
              "real_time_factor": (sim1 - sim0) / (wall1 - wall0) if wall1 > wall0 else math.nan,
              "final_positions": demo.log.last_actual()}
    if demo.rtf_samples:
        motion["simulator_reported_real_time_factor"] = sum(demo.rtf_samples) / len(demo.rtf_samples)
    return goals, motion


def hand_weight(robot_file: Path) -> float:
    """Weight [N] of everything below FT_JOINT (what the wrist sensor carries while the arm is still)."""
    from robot_core.model import load_robot

    model = load_robot(str(robot_file))
    below, todo = set(), [model.joints[FT_JOINT].child]
    while todo:
        link = todo.pop()
        below.add(link)
        todo += [j.child for j in model.joints.values() if j.parent == link]
    mass = sum(model.links[n].inertial.mass for n in below if model.links[n].inertial is not None)
    return mass * 9.81


def prepare(robot_file: Path, facts: dict[str, Any]) -> None:
    """The Cartesian goal, known before bring-up (the runner draws it in the rendering); the hand's weight,
    which the summary sets beside the wrench measured at rest."""
    position, quat = vf_goal_pose(robot_file)
    facts["cartesian_goal"] = {"position": position, "orientation_xyzw": quat}
    facts["wrench"] = {"hand_weight_n": hand_weight(robot_file)}


# 7 progress steps: bring-up (runner), 2-5 below, stopping the nodes and writing the outputs (runner).
SCENARIO = Scenario(name="arm", subject="the example arm", joints=ARM_JOINTS, steps=7, prepare=prepare,
                    run=run_steps, world=WORLD, wrench_topic=WRENCH_TOPIC, camera_topic=CAMERA_TOPIC)
