"""JointTrajectoryController: every result code, tolerances, preemption, cancel, invalid goals, no jumps.

The hardware here is the generic mirror (command -> state) and a variant in which one joint is blocked (it
never moves): the thing under test is the controller's logic, not the hardware.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from robot_core.control import ControllerManagerCore, State, Strictness
from robot_core.control.controllers.joint_trajectory import (
    DEFAULT_GOAL_TIME,
    ErrorCode,
    GoalRejection,
    GoalStatus,
    GoalTolerances,
    JointTolerance,
)
from robot_core.control.generic_system import GenericSystem
from robot_core.control.hardware import ComponentJointInfo, HardwareInfo, InterfaceInfo
from robot_core.control.trajectory import JointTrajectory, TrajectoryPoint

J = ["j1", "j2"]
DT = 0.01


class BlockedJointSystem(GenericSystem):
    """The generic mirror, except that joint ``blocked`` never moves (as if it hit an obstacle)."""

    blocked: str | None = None

    def write(self, time: float, period: float) -> None:
        if self.blocked is None:
            return super().write(time, period)
        idx = self.state_names.index(f"{self.blocked}/position")
        keep = self.states[idx]
        super().write(time, period)
        self.states[idx] = keep
        return None


class Rig:
    def __init__(self, params: dict | None = None, cmds=("position",), calculate_dynamics=False):
        self.cm = ControllerManagerCore(update_rate=1.0 / DT)
        info = HardwareInfo("hw", "system", "mock_components/GenericSystem",
                            {"calculate_dynamics": str(calculate_dynamics).lower()},
                            [ComponentJointInfo(j, [InterfaceInfo(c) for c in ("position", "velocity")],
                                                [InterfaceInfo("position", 0.1 * (k + 1)), InterfaceInfo("velocity")])
                             for k, j in enumerate(J)])
        self.hw = BlockedJointSystem(info)
        self.cm.add_hardware_component(self.hw)
        p = {"joints": J, "command_interfaces": list(cmds), "constraints": {"goal_time": 0.2}}
        for k, v in (params or {}).items():
            if isinstance(v, dict) and isinstance(p.get(k), dict):
                p[k].update(v)
            else:
                p[k] = v
        self.cm.load_controller("jtc", "joint_trajectory_controller/JointTrajectoryController", p)
        self.cm.configure_controller("jtc")
        assert self.cm.switch_controller(["jtc"], [], Strictness.STRICT).ok
        self.jtc = self.cm.controller("jtc")
        self.t = 0.0
        self.results = []
        self.history: list[tuple[float, np.ndarray, np.ndarray]] = []
        self.step()

    def step(self, n: int = 1) -> None:
        for _ in range(n):
            self.cm.update(self.t, DT)
            d = self.jtc.desired
            self.history.append((self.t, d.positions, d.velocities))
            self.t += DT
            self.results.extend(self.jtc.poll_results())

    def run_until_result(self, goal_id: int, max_time: float = 10.0):
        end = self.t + max_time
        while self.t < end:
            self.step()
            for r in self.results:
                if r.goal_id == goal_id:
                    return r
        raise AssertionError(f"goal {goal_id} did not finish within {max_time} s")

    def command(self, joint: str) -> float:
        return self.cm.rm.read_command(f"{joint}/position")

    def measured(self, joint: str) -> float:
        return self.cm.rm.read_state(f"{joint}/position")


def traj(positions, times=(1.0,), names=J, velocities=None, start_time=0.0) -> JointTrajectory:
    pts = []
    for k, (q, t) in enumerate(zip(positions, times, strict=True)):
        v = velocities[k] if velocities is not None else [0.0] * len(q)
        pts.append(TrajectoryPoint(list(q), list(v), time_from_start=t))
    return JointTrajectory(list(names), pts, start_time)


def test_success_within_goal_tolerance():
    rig = Rig({"constraints": {"j1": {"goal": 0.01}, "j2": {"goal": 0.01}}})
    gid = rig.jtc.accept_goal(traj([[0.5, -0.3], [0.6, -0.2]], (0.5, 1.0)))
    assert isinstance(gid, int)
    fb = None
    rig.step(20)
    fb = rig.jtc.feedback(gid)
    assert fb is not None and fb.joint_names == J and fb.index == 0
    res = rig.run_until_result(gid)
    assert (res.status, res.error_code, res.error_string) == (GoalStatus.SUCCEEDED, ErrorCode.SUCCESSFUL,
                                                             "Goal successfully reached!")
    assert rig.measured("j1") == pytest.approx(0.6, abs=1e-6)
    rig.step(50)  # holds the final point afterwards
    assert rig.command("j1") == pytest.approx(0.6) and rig.command("j2") == pytest.approx(-0.2)
    assert rig.jtc.feedback(gid) is None


def test_path_tolerance_violation_by_blocked_joint_then_hold():
    rig = Rig({"constraints": {"j2": {"trajectory": 0.05}}})
    rig.hw.blocked = "j2"
    gid = rig.jtc.accept_goal(traj([[0.5, 1.0]], (1.0,)))
    res = rig.run_until_result(gid)
    assert res.status == GoalStatus.ABORTED and res.error_code == ErrorCode.PATH_TOLERANCE_VIOLATED
    assert res.error_string == "Aborted due to path tolerance violation"
    assert rig.t < 1.0  # detected while moving
    # hold: the blocked joint is commanded where it is, the other one stops where it was measured
    held = (rig.command("j1"), rig.command("j2"))
    assert held[1] == pytest.approx(0.2)
    rig.step(30)
    assert (rig.command("j1"), rig.command("j2")) == held


def test_goal_tolerance_violation_after_goal_time():
    rig = Rig({"constraints": {"goal_time": 0.3, "j2": {"goal": 0.01}}})
    rig.hw.blocked = "j2"
    gid = rig.jtc.accept_goal(traj([[0.5, 1.0]], (0.5,)))
    res = rig.run_until_result(gid)
    assert res.status == GoalStatus.ABORTED and res.error_code == ErrorCode.GOAL_TOLERANCE_VIOLATED
    assert res.error_string.startswith("Aborted due to goal_time_tolerance exceeding by")
    # decided only after end + goal_time
    assert 0.5 + 0.3 <= rig.t <= 0.5 + 0.3 + 3 * DT + DT
    assert rig.command("j2") == pytest.approx(0.2)  # holds the measured (blocked) position


def test_zero_goal_time_still_ends():
    rig = Rig({"constraints": {"goal_time": 0.0, "j2": {"goal": 0.01}}})
    rig.hw.blocked = "j2"
    gid = rig.jtc.accept_goal(traj([[0.5, 1.0]], (0.3,)))
    res = rig.run_until_result(gid, max_time=5.0)
    assert res.error_code == ErrorCode.GOAL_TOLERANCE_VIOLATED
    assert rig.t == pytest.approx(0.3 + DEFAULT_GOAL_TIME, abs=3 * DT)


def test_per_goal_tolerances_override_and_remove_defaults():
    rig = Rig({"constraints": {"j2": {"trajectory": 0.05, "goal": 0.01}}})
    rig.hw.blocked = "j2"
    tol = GoalTolerances(path=[JointTolerance("j2", position=-1.0)], goal=[JointTolerance("j2", position=-1.0)])
    gid = rig.jtc.accept_goal(traj([[0.5, 1.0]], (0.5,)), tol)
    res = rig.run_until_result(gid)
    assert res.status == GoalStatus.SUCCEEDED  # no limits left on the blocked joint
    # a per-goal tolerance tighter than the (unchecked) default on j1 makes a path violation
    rig2 = Rig()
    rig2.hw.blocked = "j1"
    gid = rig2.jtc.accept_goal(traj([[0.5, 1.0]], (0.5,)), GoalTolerances(path=[JointTolerance("j1", 0.02)]))
    assert rig2.run_until_result(gid).error_code == ErrorCode.PATH_TOLERANCE_VIOLATED
    # per-goal goal_time_tolerance replaces the default
    rig3 = Rig({"constraints": {"goal_time": 5.0, "j2": {"goal": 0.01}}})
    rig3.hw.blocked = "j2"
    gid = rig3.jtc.accept_goal(traj([[0.5, 1.0]], (0.2,)), GoalTolerances(goal_time=0.1))
    assert rig3.run_until_result(gid, 2.0).error_code == ErrorCode.GOAL_TOLERANCE_VIOLATED
    assert rig3.t < 0.5
    bad = rig3.jtc.accept_goal(traj([[0.5, 1.0]]), GoalTolerances(path=[JointTolerance("j1", -2.0)]))
    assert isinstance(bad, GoalRejection) and bad.error_code == ErrorCode.INVALID_GOAL
    bad = rig3.jtc.accept_goal(traj([[0.5, 1.0]]), GoalTolerances(goal=[JointTolerance("zz", 0.1)]))
    assert isinstance(bad, GoalRejection) and bad.error_code == ErrorCode.INVALID_JOINTS


def max_step(history, t_from, t_to):
    """Largest change of desired position and velocity between consecutive cycles in [t_from, t_to]."""
    rows = [(p, v) for t, p, v in history if t_from <= t <= t_to]
    dp = max(float(np.max(np.abs(b[0] - a[0]))) for a, b in itertools.pairwise(rows))
    dv = max(float(np.max(np.abs(b[1] - a[1]))) for a, b in itertools.pairwise(rows))
    return dp, dv


def test_preemption_aborts_old_goal_and_does_not_jump():
    rig = Rig()
    g1 = rig.jtc.accept_goal(traj([[1.0, 1.0]], (1.0,)))
    rig.step(50)  # halfway, moving fast
    t_switch = rig.t
    v_before = rig.jtc.desired.velocities.copy()
    assert np.all(np.abs(v_before) > 0.5)
    g2 = rig.jtc.accept_goal(traj([[-0.5, 0.0]], (1.0,)))
    res2 = rig.run_until_result(g2)
    (res1,) = [r for r in rig.results if r.goal_id == g1]
    assert res1.status == GoalStatus.ABORTED and res1.error_code == ErrorCode.INVALID_GOAL
    assert res1.error_string == "Current goal preempted by new incoming action."
    assert res2.status == GoalStatus.SUCCEEDED
    dp, dv = max_step(rig.history, t_switch - 0.1, t_switch + 0.1)
    # position moves at most |v| * dt per cycle; velocity changes smoothly (no step to the new trajectory)
    assert dp < 2.0 * DT and dv < 0.2


def test_cancel_holds_measured_position():
    rig = Rig()
    gid = rig.jtc.accept_goal(traj([[1.0, 1.0]], (1.0,)))
    rig.step(30)
    assert rig.jtc.cancel(gid)
    rig.step()
    (res,) = [r for r in rig.results if r.goal_id == gid]
    assert res.status == GoalStatus.CANCELED and res.error_code == ErrorCode.SUCCESSFUL
    held = rig.command("j1")
    rig.step(40)
    assert rig.command("j1") == held and abs(held - 0.1) > 0.05
    assert not rig.jtc.cancel(gid)  # already finished
    assert not rig.jtc.cancel(12345)


def test_cancel_before_take_over():
    rig = Rig()
    gid = rig.jtc.accept_goal(traj([[1.0, 1.0]], (1.0,)))
    assert rig.jtc.cancel(gid)
    rig.step()
    (res,) = rig.results
    assert res.status == GoalStatus.CANCELED
    assert rig.command("j1") == pytest.approx(0.1)


@pytest.mark.parametrize("make,code,text", [
    (lambda: traj([[0.1, 0.2, 0.3]], names=["j1", "j2", "j9"]), ErrorCode.INVALID_JOINTS,
     "Incoming joint j9 doesn't match the controller's joints."),
    (lambda: traj([[0.1]], names=["j1"]), ErrorCode.INVALID_JOINTS,
     "Joints on incoming trajectory don't match the controller joints."),
    (lambda: JointTrajectory([], []), ErrorCode.INVALID_JOINTS, "Empty joint names on incoming trajectory."),
    (lambda: JointTrajectory(J, []), ErrorCode.INVALID_GOAL, "Empty trajectory received."),
    (lambda: traj([[0.1, 0.2], [0.3, 0.4]], (1.0, 1.0)), ErrorCode.INVALID_GOAL,
     "Time between points 0 and 1 is not strictly increasing, it is 1.000000 and 1.000000 respectively"),
    (lambda: JointTrajectory(J, [TrajectoryPoint([0.1], time_from_start=1.0)]), ErrorCode.INVALID_GOAL,
     "Mismatch between joint_names size (2) and positions (1) at point #0."),
    (lambda: JointTrajectory(J, [TrajectoryPoint([0.1, 0.2], [0.0], time_from_start=1.0)]), ErrorCode.INVALID_GOAL,
     "Mismatch between joint_names size (2) and velocities (1) at point #0."),
    (lambda: traj([[0.1, math.nan]]), ErrorCode.INVALID_GOAL, "Point #0 has non-finite positions."),
    (lambda: traj([[0.1, 0.2]], velocities=[[0.0, 0.3]]), ErrorCode.INVALID_GOAL,
     "Velocity of last trajectory point of joint j2 is not zero: 0.300000000000000"),
    (lambda: JointTrajectory(J, [TrajectoryPoint([0.1, 0.2], effort=[1.0, 1.0], time_from_start=1.0)]),
     ErrorCode.INVALID_GOAL, "Trajectories with effort fields are only supported for controllers using the "
                             "'effort' command interface."),
    (lambda: traj([[0.1, 0.2]], (0.0,)), ErrorCode.INVALID_GOAL,
     "The last point of a trajectory that starts now must have a positive time_from_start."),
])
def test_invalid_goals_rejected_with_reason(make, code, text):
    rig = Rig()
    rej = rig.jtc.accept_goal(make())
    assert isinstance(rej, GoalRejection)
    assert rej.error_code == code and rej.error_string == text
    assert rig.jtc.active_goal_id is None


def test_old_header_timestamp():
    rig = Rig()
    rig.step(100)  # now = 1.0 s
    rej = rig.jtc.accept_goal(traj([[0.5, 0.5]], (0.5,), start_time=0.2))
    assert isinstance(rej, GoalRejection) and rej.error_code == ErrorCode.OLD_HEADER_TIMESTAMP
    assert "ends in the past" in rej.error_string
    # a stamped trajectory whose first points are past starts from the current desired state (no jump)
    q_before = rig.jtc.desired.positions.copy()
    gid = rig.jtc.accept_goal(traj([[0.3, 0.3], [0.5, 0.5]], (0.1, 1.5), start_time=0.5))
    rig.step()
    assert np.allclose(rig.jtc.desired.positions, q_before, atol=0.01)
    assert rig.run_until_result(gid).status == GoalStatus.SUCCEEDED


def test_not_running_rejects_and_deactivation_aborts():
    rig = Rig()
    gid = rig.jtc.accept_goal(traj([[1.0, 1.0]], (1.0,)))
    rig.step(10)
    assert rig.cm.switch_controller([], ["jtc"]).ok
    (res,) = rig.jtc.poll_results()
    assert res.goal_id == gid and res.status == GoalStatus.ABORTED
    assert res.error_string == "Current goal cancelled during deactivate transition."
    rej = rig.jtc.accept_goal(traj([[1.0, 1.0]], (1.0,)))
    assert isinstance(rej, GoalRejection) and "Controller is not running" in rej.error_string
    assert not rig.jtc.query_state(0.0).success


def test_no_jump_on_activation_after_another_controller_moved_the_joints():
    rig = Rig()
    cm = rig.cm
    gid = rig.jtc.accept_goal(traj([[0.4, 0.4]], (0.5,)))
    rig.run_until_result(gid)
    cm.load_controller("fp", "position_controllers/JointGroupPositionController", {"joints": J})
    cm.configure_controller("fp")
    assert cm.switch_controller(["fp"], ["jtc"], Strictness.STRICT).ok
    fp = cm.controller("fp")
    fp.set_command([0.9, -0.7])
    rig.step(5)
    assert rig.measured("j1") == pytest.approx(0.9)
    assert cm.switch_controller(["jtc"], ["fp"], Strictness.STRICT).ok
    # right after activation the JTC commands the measured position, not its old hold (0.4) or anything else
    assert rig.command("j1") == pytest.approx(0.9) and rig.command("j2") == pytest.approx(-0.7)
    rig.step(10)
    assert rig.command("j1") == pytest.approx(0.9) and rig.command("j2") == pytest.approx(-0.7)


def test_partial_goal_when_allowed():
    rig = Rig({"allow_partial_joints_goal": True})
    gid = rig.jtc.accept_goal(traj([[0.8]], (0.5,), names=["j2"]))
    assert rig.run_until_result(gid).status == GoalStatus.SUCCEEDED
    assert rig.command("j1") == pytest.approx(0.1) and rig.command("j2") == pytest.approx(0.8)


def test_joint_order_of_the_goal_does_not_matter():
    rig = Rig()
    gid = rig.jtc.accept_goal(traj([[0.7, -0.3]], (0.5,), names=["j2", "j1"]))
    assert rig.run_until_result(gid).status == GoalStatus.SUCCEEDED
    assert rig.command("j1") == pytest.approx(-0.3) and rig.command("j2") == pytest.approx(0.7)


def test_topic_trajectory_query_state_and_empty_trajectory_stops():
    rig = Rig()
    assert rig.jtc.set_trajectory(traj([[1.0, 1.0]], (1.0,))) is None
    rig.step(20)
    q = rig.jtc.query_state(rig.t + 0.3)
    assert q.success and q.name == J and 0.1 < q.position[0] < 1.0 and q.velocity[0] > 0.0
    assert rig.jtc.set_trajectory(JointTrajectory(J, [])) is None
    rig.step()
    held = rig.command("j1")
    rig.step(30)
    assert rig.command("j1") == held < 0.6
    bad = rig.jtc.set_trajectory(traj([[1.0]], names=["j1"]))
    assert isinstance(bad, GoalRejection)


def test_controller_state_output():
    rig = Rig()
    got = {}
    rig.jtc.output_sink = got.__setitem__
    rig.jtc.accept_goal(traj([[0.5, 0.5]], (1.0,)))
    rig.step(30)
    st = got["controller_state"]
    assert st.joint_names == J and len(st.reference.positions) == 2 and len(st.feedback.velocities) == 2
    assert np.allclose(st.error.positions, st.reference.positions - st.feedback.positions)
    assert np.allclose(st.output.positions, st.reference.positions) and len(st.output.velocities) == 0


def test_velocity_interface_with_pid_gains():
    gains = {j: {"p": 5.0, "ff_velocity_scale": 1.0} for j in J}
    rig = Rig({"gains": gains, "constraints": {"j1": {"goal": 0.01}, "j2": {"goal": 0.01}}}, cmds=("velocity",),
              calculate_dynamics=True)
    gid = rig.jtc.accept_goal(traj([[0.6, -0.4]], (1.0,)))
    res = rig.run_until_result(gid)
    assert res.status == GoalStatus.SUCCEEDED
    assert rig.measured("j1") == pytest.approx(0.6, abs=0.01) and rig.measured("j2") == pytest.approx(-0.4, abs=0.01)
    rig.step(100)
    assert abs(rig.cm.rm.read_command("j1/velocity")) < 1e-3  # holding: no drift command
    # velocity/effort without gains is a configuration error
    cm = rig.cm
    cm.load_controller("nogains", "joint_trajectory_controller/JointTrajectoryController",
                       {"joints": J, "command_interfaces": ["effort"]})
    with pytest.raises(Exception, match="needs PID gains"):
        cm.configure_controller("nogains")
    assert {c.name: c.state for c in cm.list_controllers()}["nogains"] == State.UNCONFIGURED
