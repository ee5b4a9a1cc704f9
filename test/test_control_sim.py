"""Closed loop on the real physics engine (in-process simulator hardware).

JTC reaching goals deterministically, gravity compensation holding the arms still, computed torque tracking.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")
engine_mod = pytest.importorskip("robot_core.physics.engine", reason="physics engine not available yet")

from robot_core.control import ControllerManagerCore, Strictness  # noqa: E402
from robot_core.control.controllers.joint_trajectory import ErrorCode, GoalStatus  # noqa: E402
from robot_core.control.trajectory import JointTrajectory, TrajectoryPoint  # noqa: E402
from robot_core.model import load_robot  # noqa: E402
from robot_core.model.robot_model import RobotModel, Ros2ControlInterface  # noqa: E402

URDF = Path(__file__).resolve().parents[1] / "urdf"
SIM = "robot_core/InProcessSimulator"
RATE = 500.0
DT = 1.0 / RATE
ARM = [f"joint{i}" for i in range(1, 8)]


def load(name: str, effort: bool = False) -> RobotModel:
    path = URDF / name
    if not path.exists():
        pytest.skip(f"{path} not written yet")
    robot = load_robot(path)
    if effort:
        for block in robot.ros2_control:
            for j in block.joints:
                if j.command_interfaces and "effort" not in [c.name for c in j.command_interfaces]:
                    j.command_interfaces.append(Ros2ControlInterface("effort"))
    return robot


def manager(robot: RobotModel) -> ControllerManagerCore:
    return ControllerManagerCore.from_robot(robot, RATE, plugin_override=SIM,
                                            component_options={"timestep": 0.001})


def activate(cm: ControllerManagerCore, name: str, type_name: str, params: dict, deactivate=()) -> None:
    cm.load_controller(name, type_name, params)
    cm.configure_controller(name)
    res = cm.switch_controller([name], list(deactivate), Strictness.STRICT)
    assert res.ok, res.message


def run(cm: ControllerManagerCore, seconds: float, record: list | None = None) -> None:
    sim = cm.simulator()
    for _ in range(round(seconds / DT)):
        cm.update(sim.sim_time, DT)
        if record is not None:
            record.append(sim.engine.positions().copy())


def jtc_run(robot: RobotModel) -> tuple[list, np.ndarray, list]:
    cm = manager(robot)
    activate(cm, "jsb", "joint_state_broadcaster/JointStateBroadcaster", {})
    activate(cm, "jtc", "joint_trajectory_controller/JointTrajectoryController", {
        "joints": ARM, "constraints": {"goal_time": 1.0, **{j: {"goal": 0.01, "trajectory": 0.2} for j in ARM}}})
    run(cm, 0.02)
    jtc = cm.controller("jtc")
    q0 = jtc.desired.positions
    target = q0 + np.array([0.4, -0.3, 0.3, 0.3, -0.3, 0.3, 0.5])
    mid = q0 + 0.5 * (target - q0)
    gid = jtc.accept_goal(JointTrajectory(ARM, [TrajectoryPoint(list(mid), time_from_start=0.6),
                                                TrajectoryPoint(list(target), [0.0] * 7, time_from_start=1.2)]))
    assert isinstance(gid, int)
    record: list = []
    results: list = []
    for _ in range(int(3.0 / DT)):
        run(cm, DT, record)
        results += jtc.poll_results()
        if results:
            break
    sim = cm.components["RcArmSystem"]
    assert sim.sim_time == pytest.approx(cm.time + DT, abs=1e-9)  # lockstep: one period per cycle
    return results, target, record


def test_jtc_reaches_goal_on_simulator_deterministically():
    robot = load("rc_arm.urdf")
    results, target, rec1 = jtc_run(robot)
    (res,) = results
    assert res.status == GoalStatus.SUCCEEDED and res.error_code == ErrorCode.SUCCESSFUL, res.error_string
    assert np.allclose(rec1[-1][:7], target, atol=0.01)
    _, _, rec2 = jtc_run(load("rc_arm.urdf"))
    assert len(rec1) == len(rec2)
    assert np.array_equal(np.array(rec1), np.array(rec2))  # bit-identical joint trajectories


def hold_drift(robot_file: str, joints: list[str], compensate: bool, seconds: float = 1.0) -> float:
    robot = load(robot_file, effort=True)
    cm = manager(robot)
    activate(cm, "fp", "position_controllers/JointGroupPositionController", {"joints": joints})
    run(cm, 0.2)
    sim = next(iter(cm.components.values()))
    names = sim.engine.joint_names
    idx = [names.index(j) for j in joints]
    q_start = sim.engine.positions()[idx].copy()
    if compensate:
        activate(cm, "gc", "robot_core/GravityCompensationController", {"joints": joints}, deactivate=["fp"])
    else:
        activate(cm, "limp", "effort_controllers/JointGroupEffortController", {"joints": joints}, deactivate=["fp"])
    modes = sim.engine.command_modes()
    run(cm, DT)
    modes = sim.engine.command_modes()
    assert all(modes[j] == "effort" for j in joints), modes
    run(cm, seconds)
    return float(np.max(np.abs(sim.engine.positions()[idx] - q_start)))


@pytest.mark.parametrize("robot_file,joints", [("planar2.urdf", ["joint1", "joint2"]), ("rc_arm.urdf", ARM)])
def test_gravity_compensation_holds_the_arm(robot_file, joints):
    limp = hold_drift(robot_file, joints, compensate=False, seconds=0.5)
    held = hold_drift(robot_file, joints, compensate=True, seconds=0.5)
    assert limp > 0.05, "without compensation the arm must sag (otherwise the test proves nothing)"
    assert held < 2e-3, f"gravity compensation let the arm drift by {held} rad"


def test_computed_torque_tracks_trajectory():
    robot = load("planar2.urdf", effort=True)
    cm = manager(robot)
    joints = ["joint1", "joint2"]
    activate(cm, "ctc", "robot_core/ComputedTorqueController", {
        "joints": joints, "kp": 900.0, "constraints": {"goal_time": 0.5, "joint1": {"goal": 0.005, "trajectory": 0.05},
                                                        "joint2": {"goal": 0.005, "trajectory": 0.05}}})
    ctc = cm.controller("ctc")
    run(cm, 0.05)
    # the law itself: tau = M(q) (qdd_d + Kp e + Kd e_dot) + h(q, qd), h = ID(q, qd, 0) + D qd (URDF damping)
    m = ctc.measured
    d = ctc.desired
    e, ed = d.positions - m.positions, d.velocities - m.velocities
    expected = ctc.chain.mass_matrix(m.positions) @ (d.accelerations + 900.0 * e + 60.0 * ed) + \
        ctc.chain.inverse_dynamics(m.positions, m.velocities, np.zeros(2)) + 0.1 * m.velocities
    assert np.allclose(ctc.compute_commands(d, e, ed, DT)["effort"], expected, atol=1e-9)
    q0 = d.positions
    pts = [TrajectoryPoint(list(q0 + np.array([0.5, -0.6])), [0.0, 0.0], [0.0, 0.0], time_from_start=1.0),
           TrajectoryPoint(list(q0 + np.array([-0.3, 0.4])), [0.0, 0.0], [0.0, 0.0], time_from_start=2.0)]
    gid = ctc.accept_goal(JointTrajectory(joints, pts))
    worst = 0.0
    results = []
    for _ in range(int(3.0 / DT)):
        run(cm, DT)
        worst = max(worst, float(np.max(np.abs(ctc.desired.positions - ctc.measured.positions))))
        results += ctc.poll_results()
        if results:
            break
    (res,) = results
    assert res.goal_id == gid and res.status == GoalStatus.SUCCEEDED, res.error_string
    assert worst < 0.01, f"tracking error {worst} rad"


def test_topic_based_protocol_against_the_engine():
    """The topic-based component wired (without ROS) to an engine that applies only finite commands."""
    robot = load("planar2.urdf")
    cm = ControllerManagerCore.from_robot(robot, RATE)
    comp = cm.component("Planar2System")
    eng = engine_mod.PhysicsEngine(robot, timestep=0.001)
    names = eng.joint_names

    def robot_side(msg) -> None:  # what a simulator does with /robot_joint_commands
        for k, name in enumerate(msg.name):
            p = msg.position[k] if k < len(msg.position) else float("nan")
            v = msg.velocity[k] if k < len(msg.velocity) else float("nan")
            if np.isfinite(p):
                eng.set_command(name, position=p, velocity=v if np.isfinite(v) else None)
            elif np.isfinite(v):
                eng.set_command(name, velocity=v)

    comp.command_sink = robot_side
    joints = ["joint1", "joint2"]
    comp.on_joint_state(names, eng.positions(), eng.velocities(), eng.efforts())
    activate(cm, "jtc", "joint_trajectory_controller/JointTrajectoryController", {
        "joints": joints, "constraints": {"goal_time": 1.0, "joint1": {"goal": 0.01}, "joint2": {"goal": 0.01}}})
    jtc = cm.controller("jtc")
    gid = jtc.accept_goal(JointTrajectory(joints, [TrajectoryPoint([0.3, 0.2], [0.0, 0.0], time_from_start=1.0)]))
    results = []
    for _ in range(int(3.0 / DT)):
        cm.update(eng.time, DT)
        eng.step(round(DT / 0.001))
        comp.on_joint_state(names, eng.positions(), eng.velocities(), eng.efforts())
        results += jtc.poll_results()
        if results:
            break
    (res,) = results
    assert res.goal_id == gid and res.status == GoalStatus.SUCCEEDED, res.error_string
    assert np.allclose(eng.positions(), [0.3, 0.2], atol=0.01)
    # switching to velocity control: the released position interfaces turn NaN, the engine obeys velocity
    activate(cm, "fv", "velocity_controllers/JointGroupVelocityController", {"joints": joints}, deactivate=["jtc"])
    cm.controller("fv").set_command([0.5, 0.0])
    for _ in range(100):
        cm.update(eng.time, DT)
        eng.step(2)
        comp.on_joint_state(names, eng.positions(), eng.velocities(), eng.efforts())
    assert np.all(np.isnan(comp.last_command.position))
    assert eng.command_modes()["joint1"] == "velocity"
    assert eng.velocities()[0] == pytest.approx(0.5, abs=0.05)


def test_in_process_simulator_skips_non_finite_commands():
    """A NaN command value means "not commanded": that joint keeps its last command, the others are applied."""
    from robot_core.control.hardware import IN_PROCESS_PLUGIN

    cm = ControllerManagerCore.from_robot(load("planar2.urdf"), 100.0, plugin_override=IN_PROCESS_PLUGIN)
    cm.load_controller("fp", "position_controllers/JointGroupPositionController", {"joints": ["joint1", "joint2"]})
    cm.configure_controller("fp")
    assert cm.switch_controller(["fp"], [], Strictness.STRICT).ok
    fp = cm.controller("fp")
    engine = cm.simulator().engine
    fp.set_command([0.3, -0.2])
    cm.update(0.0, 0.01)
    assert engine.actuation.target.tolist() == pytest.approx([0.3, -0.2])
    fp.set_command([0.5, 0.4])
    cm.read(0.01, 0.01)
    cm.update_controllers(0.01, 0.01)
    cm.rm.write_command("joint1/position", float("nan"))  # as an unclaimed/undefined value would be
    cm.write(0.01, 0.01)
    assert engine.actuation.target.tolist() == pytest.approx([0.3, 0.4])
    cm.update(0.02, 0.01)  # finite again: applied
    assert engine.actuation.target.tolist() == pytest.approx([0.5, 0.4])
