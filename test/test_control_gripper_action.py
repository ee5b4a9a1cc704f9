"""Gripper action controllers on real physics (rc_arm's parallel gripper, in-process simulator): a goal closing on
nothing reaches it; a finger held back by an outside force stalls (aborted, or succeeded with allow_stalling); a new
goal preempts the running one; a goal outside the joint's range or not finite is rejected; configure errors.

With the effort loop (rc_arm's finger has an effort command interface) the squeeze is limited by max_effort: the
arm, driven by the joint trajectory controller to IK poses, closes the gripper on the table_top world's small box,
the goal ends stalled with the measured finger effort at max_effort, and lifting the arm lifts the box. Commanding
position instead squeezes with up to the joint's URDF limit (the contrast that shows the loop matters).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")

from robot_core.control import ControlError, ControllerManagerCore, Strictness
from robot_core.control.controllers.gripper_action import GoalRejectedError, GoalStatus
from robot_core.control.controllers.joint_trajectory import GoalTolerances
from robot_core.control.trajectory import JointTrajectory, TrajectoryPoint
from robot_core.kinematics import SerialKinematicChain
from robot_core.model import load_robot
from robot_core.physics.engine import PhysicsEngine
from robot_core.physics.world import WorldSim, load_world, scene_hook

REPO = Path(__file__).resolve().parents[1]
DT = 0.01
PARALLEL = "parallel_gripper_action_controller/GripperActionController"
POSITION = "position_controllers/GripperActionController"


def start(type_name: str = PARALLEL, params: dict | None = None):
    robot = load_robot(REPO / "urdf" / "rc_arm.urdf")
    cm = ControllerManagerCore.from_robot(robot, 1.0 / DT, plugin_override="robot_core/InProcessSimulator",
                                          component_options={"timestep": 0.001})
    cm.load_controller("gripper", type_name, {"joint": "finger_left_joint", "stall_timeout": 0.3,
                                              "goal_tolerance": 0.002, **(params or {})})
    cm.configure_controller("gripper")
    res = cm.switch_controller(["gripper"], [], Strictness.STRICT)
    assert res.ok, res.message
    return cm, cm.controller("gripper")


def run_until_result(cm, ctrl, seconds: float = 3.0) -> list:
    sim = cm.simulator()
    end = sim.sim_time + seconds
    results: list = []
    while sim.sim_time < end and not results:
        cm.update(sim.sim_time, DT)
        results = ctrl.poll_results()
    return results


@pytest.mark.parametrize("type_name", [PARALLEL, POSITION])
def test_closing_on_nothing_reaches_the_goal(type_name):
    cm, ctrl = start(type_name)
    for target in (0.0, 0.035):
        gid = ctrl.accept_goal(target, max_effort=5.0)
        [r] = run_until_result(cm, ctrl)
        print(f"\n{type_name}: goal {target} -> {r}")
        assert (r.goal_id, r.status, r.reached_goal, r.stalled) == (gid, GoalStatus.SUCCEEDED, True, False)
        assert r.position == pytest.approx(target, abs=ctrl.goal_tolerance)


@pytest.mark.parametrize(("allow", "status"), [(False, GoalStatus.ABORTED), (True, GoalStatus.SUCCEEDED)])
def test_finger_held_back_stalls(allow, status):
    cm, ctrl = start(params={"allow_stalling": allow})
    ctrl.accept_goal(0.0)
    run_until_result(cm, ctrl)
    engine = cm.simulator().engine
    # the finger opens along the hand's +y; a push along world -y... resolved in the finger's own axis below
    axis = engine.link_pose("finger_left")[:3, :3] @ np.array([0.0, 1.0, 0.0])
    engine.apply_wrench("finger_left", force=list(60.0 * axis))  # 60 N > the joint's 20 N effort limit
    gid = ctrl.accept_goal(0.0)  # it is open (pushed), closing is resisted
    sim = cm.simulator()
    for _ in range(50):
        cm.update(sim.sim_time, DT)
    ctrl.poll_results()
    gid = ctrl.accept_goal(0.0)
    [r] = run_until_result(cm, ctrl)
    print(f"\nheld back, allow_stalling={allow}: {r}")
    assert (r.goal_id, r.status, r.stalled, r.reached_goal) == (gid, status, True, False)
    assert r.position > 0.03


def test_new_goal_preempts_and_cancel_holds():
    cm, ctrl = start()
    first = ctrl.accept_goal(0.04)
    cm.update(cm.simulator().sim_time, DT)
    second = ctrl.accept_goal(0.0)
    results = run_until_result(cm, ctrl, 0.02)
    assert [(r.goal_id, r.status) for r in results][:1] == [(first, GoalStatus.CANCELED)]
    third = ctrl.accept_goal(0.04)
    cm.update(cm.simulator().sim_time, DT)
    ctrl.cancel(third)
    sim = cm.simulator()
    for _ in range(3):
        cm.update(sim.sim_time, DT)
    got = {r.goal_id: r.status for r in ctrl.poll_results()}
    assert (got.get(third) == GoalStatus.CANCELED and second not in got) or got[second] == GoalStatus.CANCELED


def test_goal_preempted_before_any_cycle_still_gets_its_result():
    cm, ctrl = start()
    first = ctrl.accept_goal(0.04)
    second = ctrl.accept_goal(0.0)  # before a control cycle took the first over
    got = {r.goal_id: r for r in ctrl.poll_results()}
    assert got[first].status == GoalStatus.CANCELED and got[first].message == "preempted by a new goal"
    [r] = run_until_result(cm, ctrl)
    assert (r.goal_id, r.status) == (second, GoalStatus.SUCCEEDED)


def test_goal_outside_range_or_not_finite_is_rejected():
    _, ctrl = start()
    with pytest.raises(GoalRejectedError, match=r"outside the range \[0.0, 0.04\] of joint 'finger_left_joint'"):
        ctrl.accept_goal(0.05)
    with pytest.raises(GoalRejectedError, match="not finite"):
        ctrl.accept_goal(math.nan)


@pytest.mark.parametrize(("params", "match"), [
    ({"joint": ""}, "parameter 'joint' is empty"),
    ({"joint": "nope"}, "'nope' is not a joint of robot"),
    ({"state_interfaces": ["position"]}, "lacks"),
])
def test_configure_errors_name_the_parameter(params, match):
    robot = load_robot(REPO / "urdf" / "rc_arm.urdf")
    cm = ControllerManagerCore.from_robot(robot, 100.0, plugin_override="robot_core/InProcessSimulator",
                                          component_options={"timestep": 0.001})
    cm.load_controller("gripper", PARALLEL, {"joint": "finger_left_joint", **params})
    with pytest.raises(ControlError, match=match):
        cm.configure_controller("gripper")


def test_command_interface_auto_picks_the_effort_loop_where_offered():
    _, ctrl = start()
    assert ctrl.command_interface == "effort"
    assert ctrl.command_interface_configuration() == ["finger_left_joint/effort"]
    _, ctrl = start(params={"command_interface": "position"})
    assert ctrl.command_interface_configuration() == ["finger_left_joint/position"]


def test_effort_loop_on_a_joint_without_effort_interface_is_refused():
    robot = load_robot(REPO / "urdf" / "rc_arm.urdf")
    for block in robot.ros2_control:
        for rj in block.joints:
            rj.command_interfaces = [i for i in rj.command_interfaces if i.name != "effort"]
    cm = ControllerManagerCore.from_robot(robot, 100.0, plugin_override="robot_core/InProcessSimulator",
                                          component_options={"timestep": 0.001})
    cm.load_controller("gripper", PARALLEL, {"joint": "finger_left_joint", "command_interface": "effort"})
    with pytest.raises(ControlError, match=r"parameter 'command_interface': joint 'finger_left_joint' has no "
                                           r"'effort' command interface"):
        cm.configure_controller("gripper")
    cm.load_controller("auto", PARALLEL, {"joint": "finger_left_joint"})
    cm.configure_controller("auto")
    assert cm.controller("auto").command_interface == "position"


def test_effort_loop_law():
    _, ctrl = start()
    assert ctrl.effort_command(0.03, 5.0, 0.02, 0.0) == pytest.approx(1.0)  # p = 100 N/m times 1 cm
    assert ctrl.effort_command(0.03, 5.0, 0.02, 0.1) == pytest.approx(0.5)  # minus d = 5 N s/m times 0.1 m/s
    assert ctrl.effort_command(0.0, 0.7, 0.02, 0.0) == -0.7  # clamped to max_effort
    assert ctrl.effort_command(0.04, 0.0, 0.0, 0.0) == 4.0  # no max_effort: the URDF's 20 N, not reached here
    assert ctrl.effort_command(0.0, 0.0, 0.04, -1.0) == pytest.approx(1.0)  # -4 N + 5 N of damping
    assert ctrl.effort_command(0.0, 50.0, 1.0, 0.0) == -20.0  # never above the URDF limit
    assert ctrl.effort_command(0.0, 5.0, math.nan, 0.0) == 0.0


ARM = [f"joint{i}" for i in range(1, 8)]
DOWN = np.array([[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]])  # tool z down, fingers along world y


class TableTop:
    """rc_arm in the table_top world, embedded: a joint trajectory controller for the arm, the gripper's."""

    def __init__(self, gripper_params: dict):
        robot = load_robot(REPO / "urdf" / "rc_arm.urdf")
        world = load_world(REPO / "config" / "worlds" / "table_top.yaml")
        self.engine = PhysicsEngine(robot, timestep=0.001, scene=scene_hook(world), hold_gil=True)
        self.world = WorldSim(self.engine, world)
        self.cm = cm = ControllerManagerCore.from_robot(
            robot, 1.0 / DT, plugin_override="robot_core/InProcessSimulator", component_options={"engine": self.engine})
        cm.load_controller("arm", "joint_trajectory_controller/JointTrajectoryController",
                           {"joints": ARM, "command_interfaces": ["position"],
                            "state_interfaces": ["position", "velocity"]})
        cm.load_controller("gripper", PARALLEL, {"joint": "finger_left_joint", "allow_stalling": True,
                                                 "stall_timeout": 0.3, "goal_tolerance": 0.002, **gripper_params})
        for name in ("arm", "gripper"):
            cm.configure_controller(name)
        res = cm.switch_controller(["arm", "gripper"], [], Strictness.STRICT)
        assert res.ok, res.message
        self.arm, self.gripper = cm.controller("arm"), cm.controller("gripper")
        self.chain = SerialKinematicChain(robot, "base_link", "tcp")
        self.q = np.array([self.engine.positions()[self.engine.joint_names.index(j)] for j in ARM])

    def tool(self) -> np.ndarray:
        """Where the tool is (forward kinematics of the measured arm joints)."""
        q = np.array([self.engine.positions()[self.engine.joint_names.index(j)] for j in ARM])
        return self.chain.forward_kinematics(q)[:3, 3]

    def finger_effort(self) -> float:
        return float(self.engine.efforts()[self.engine.joint_names.index("finger_left_joint")])

    def run(self, seconds: float, results_of=None) -> list:
        sim = self.cm.simulator()
        end, out = sim.sim_time + seconds, []
        while sim.sim_time < end and not out:
            self.cm.update(sim.sim_time, DT)
            if results_of is not None:
                out = results_of.poll_results()
        return out

    def move_tool(self, position, seconds: float = 2.0) -> None:
        """The tool to ``position`` (base frame), pointing down, through a joint trajectory goal."""
        target = np.eye(4)
        target[:3, :3], target[:3, 3] = DOWN, position
        ik = self.chain.inverse_kinematics(target, self.q)
        assert ik.status.name == "CONVERGED", f"IK to {position}: {ik.status}"
        self.q = np.asarray(ik.q)
        self.arm.accept_goal(JointTrajectory(ARM, [TrajectoryPoint(list(self.q), [], [], [], seconds)], 0.0),
                             GoalTolerances())
        [r] = self.run(seconds + 3.0, self.arm)
        assert r.status.value == "succeeded", r

    def grasp(self, box: str, max_effort: float) -> tuple:
        """Open, go down around ``box``, close with ``max_effort``: (result, box centre before)."""
        self.gripper.accept_goal(0.035, max_effort)
        [opened] = self.run(3.0, self.gripper)
        assert opened.reached_goal, opened
        centre = np.array(self.world.pose(box).position)
        self.move_tool(centre + np.array([0.0, 0.0, 0.12]))
        self.move_tool(centre)
        self.gripper.accept_goal(0.0, max_effort)
        [closed] = self.run(3.0, self.gripper)
        return closed, centre


@pytest.mark.parametrize("max_effort", [1.0, 1.5])
def test_grasp_holds_the_box_with_max_effort_and_lifts_it(max_effort):
    sim = TableTop({})
    r, centre = sim.grasp("box_small", max_effort)
    print(f"\ngrasp with max_effort {max_effort}: {r}")
    assert (r.status, r.stalled, r.reached_goal) == (GoalStatus.SUCCEEDED, True, False)
    assert 0.015 < r.position < 0.025  # the 4 cm box between the pads: a gap of 2 q
    efforts = []
    for _ in range(30):  # held: the measured effort stays at the limit, not beyond
        sim.run(DT)
        efforts.append(abs(sim.finger_effort()))
    print(f"measured finger effort while stalled: {min(efforts):.4f} .. {max(efforts):.4f} N")
    assert max(efforts) <= max_effort + 1e-9
    assert min(efforts) > 0.9 * max_effort  # squeezing, not slack
    tool_before = sim.tool()
    sim.move_tool(centre + np.array([0.0, 0.0, 0.15]))
    lifted = np.array(sim.world.pose("box_small").position)
    rise = sim.tool() - tool_before
    print(f"box before {centre.round(4)}, after lifting: {lifted.round(4)}; the tool rose {rise[2]:.4f} m, "
          f"the box {lifted[2] - centre[2]:.4f} m")
    assert lifted[2] - centre[2] > 0.12
    assert lifted - centre == pytest.approx(rise, abs=0.005)  # the box follows the tool


def test_position_command_squeezes_beyond_max_effort():
    """Without the effort loop the simulator's position servo decides the force: why the loop is the default."""
    sim = TableTop({"command_interface": "position"})
    r, _ = sim.grasp("box_small", 1.0)
    sim.run(0.1)
    print(f"\nposition-commanded grasp, max_effort 1 N: {r}; finger effort {sim.finger_effort():.3f} N")
    assert r.stalled and abs(sim.finger_effort()) > 5.0


def test_the_pr2_grippers_of_the_shipped_config_open_close_and_settle(erd_robots):
    """config/pr2_controllers.yaml's r_gripper_controller (GripperCommand, effort loop with the PR2's own gains) on
    the PR2's finger joint at the config's 100 Hz: every goal is reached, the finger settles within the goal
    tolerance and never leaves the joint's range (the arm's default gains overshoot on these light fingers)."""
    from robot_core.control.config import load_config

    cfg = load_config(REPO / "config" / "pr2_controllers.yaml")
    spec = cfg.controllers["r_gripper_controller"]
    robot = load_robot(REPO / "urdf" / "pr2_mobile.urdf", [str(erd_robots.parent)])
    cm = ControllerManagerCore.from_robot(robot, 1.0 / DT, plugin_override="robot_core/InProcessSimulator",
                                          component_options={"timestep": 0.001})
    cm.load_controller("r_gripper_controller", spec.type, spec.params)
    cm.configure_controller("r_gripper_controller")
    assert cm.switch_controller(["r_gripper_controller"], [], Strictness.STRICT).ok
    ctrl = cm.controller("r_gripper_controller")
    assert ctrl.command_interface_configuration() == ["r_gripper_l_finger_joint/effort"]
    sim = cm.simulator()
    for target in (0.4, 0.05, 0.3):
        gid = ctrl.accept_goal(target, 0.0)
        seen, results = [], []
        end = sim.sim_time + 3.0
        while sim.sim_time < end and not results:
            cm.update(sim.sim_time, DT)
            results = ctrl.poll_results()
            seen.append(ctrl._position())
        for _ in range(100):  # 1 s holding after the result
            cm.update(sim.sim_time, DT)
            seen.append(ctrl._position())
        print(f"\nPR2 gripper goal {target} rad: {results}; finger {min(seen):.4f} .. {max(seen):.4f} rad, "
              f"last {seen[-1]:.4f}")
        [r] = results
        assert (r.goal_id, r.status, r.reached_goal, r.stalled) == (gid, GoalStatus.SUCCEEDED, True, False)
        assert abs(seen[-1] - target) <= ctrl.goal_tolerance
        assert min(seen) >= -0.01 and max(seen) <= 0.548 + 0.01
