"""Gripper action controllers on real physics (rc_arm's parallel gripper, in-process simulator): a goal closing on
nothing reaches it; a finger held back by an outside force stalls (aborted, or succeeded with allow_stalling); a new
goal preempts the running one; a goal outside the joint's range or not finite is rejected; configure errors.

Grasping a real object waits for the simulator's world objects (another branch); the force on the finger stands in
for the object's resistance here.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")

from robot_core.control import ControlError, ControllerManagerCore, Strictness
from robot_core.control.controllers.gripper_action import GoalRejectedError, GoalStatus
from robot_core.model import load_robot

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
