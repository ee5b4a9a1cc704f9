"""joint_trajectory_controller over DDS: an rclpy ActionClient in this process drives the simulated rc_arm
(simulator node in another process, controller manager with topic-based hardware in a third, both on sim
time). Every FollowJointTrajectory outcome is provoked for real: a goal that succeeds, a joint pushed off its
path by an external torque, a goal beyond a joint limit, preemption, cancel and invalid goals."""

from __future__ import annotations

import time

import pytest
from cm_helpers import (
    ARM_JOINTS,
    HOME,
    JointStateRecorder,
    run_spawner,
    start_controller_manager,
    start_simulator,
    wait_goal_service,
)
from ros_harness import NodeProcess, wait_for, wait_future

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

SUCCEEDED, CANCELED, ABORTED = 4, 5, 6  # action_msgs/GoalStatus


@pytest.fixture(scope="module")
def graph():
    procs: list[NodeProcess] = []
    try:
        start_simulator(procs)
        cm = start_controller_manager(procs, "use_sim_time:=true")
        code, out = run_spawner("joint_state_broadcaster", "joint_trajectory_controller")
        assert code == 0, out
        yield cm, procs[0]
    finally:
        for p in procs:
            p.stop()


class Jtc:
    """Action client and helpers for /joint_trajectory_controller."""

    def __init__(self, ros):
        from control_msgs.action import FollowJointTrajectory

        from robot_core.ros.action_client import ActionClient

        self.node = ros.node("jtc_test_client")
        self.client = ActionClient(self.node, FollowJointTrajectory,
                                   "/joint_trajectory_controller/follow_joint_trajectory")
        assert self.client.wait_for_server(timeout_sec=30), "JTC action server not discovered"
        wait_goal_service(self.client, ARM_JOINTS)
        self.states = JointStateRecorder(self.node)
        wait_for(lambda: self.states.positions(ARM_JOINTS) is not None, 20, "/joint_states")
        self.feedback: list = []

    @staticmethod
    def goal(points: list[tuple[float, list[float]]], joints: list[str] = ARM_JOINTS, stamp: float = 0.0):
        from builtin_interfaces.msg import Duration, Time
        from control_msgs.action import FollowJointTrajectory
        from trajectory_msgs.msg import JointTrajectoryPoint

        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = list(joints)
        goal.trajectory.header.stamp = Time(sec=int(stamp), nanosec=int((stamp % 1) * 1e9))
        for t, q in points:
            goal.trajectory.points.append(JointTrajectoryPoint(
                positions=[float(v) for v in q], time_from_start=Duration(sec=int(t), nanosec=int((t % 1) * 1e9))))
        return goal

    def send(self, goal):
        return wait_future(self.client.send_goal_async(goal, feedback_callback=lambda f: self.feedback.append(
            f.feedback)), 20, "goal response")

    def result(self, handle, timeout: float = 30.0):
        return wait_future(handle.get_result_async(), timeout, "goal result")

    def q(self) -> list[float]:
        return self.states.positions(ARM_JOINTS)


@pytest.fixture
def jtc(ros, graph):
    return Jtc(ros)


def pose(**changes: float) -> list[float]:
    q = list(HOME)
    for name, value in changes.items():
        q[int(name[-1]) - 1] = value
    return q


def test_goal_succeeds_within_goal_tolerance(jtc):
    from control_msgs.action import FollowJointTrajectory

    mid, end = pose(q1=0.4, q2=0.5), pose(q1=0.6, q2=0.6, q4=1.6, q6=1.1)
    handle = jtc.send(jtc.goal([(1.0, mid), (2.0, end)]))
    assert handle.accepted
    res = jtc.result(handle)
    assert res.status == SUCCEEDED
    assert res.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    assert res.result.error_string == "Goal successfully reached!"
    q = jtc.q()
    assert q == pytest.approx(end, abs=0.02)
    assert jtc.feedback and list(jtc.feedback[-1].joint_names) == ARM_JOINTS
    assert max(f.index for f in jtc.feedback) >= 1
    # the whole goal is on the latched ~/accepted_trajectory: a subscriber that comes after it still gets it
    goal = accepted_trajectory(jtc)
    assert list(goal.joint_names) == ARM_JOINTS
    assert [list(p.positions) for p in goal.points] == [pytest.approx(mid), pytest.approx(end)]


def accepted_trajectory(jtc, positions: list[float] | None = None):
    """The newest message of the JTC's latched ~/accepted_trajectory (with ``positions``: once its last point is
    there)."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from trajectory_msgs.msg import JointTrajectory

    got: list = []
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    sub = jtc.node.create_subscription(JointTrajectory, "/joint_trajectory_controller/accepted_trajectory",
                                       got.append, latched)
    try:
        wait_for(lambda: got and (positions is None or list(got[-1].points[-1].positions) == pytest.approx(
            positions)), 20, "the accepted trajectory")
    finally:
        jtc.node.destroy_subscription(sub)
    return got[-1]


def test_path_tolerance_violated_by_an_external_torque(ros, jtc, graph):
    from control_msgs.action import FollowJointTrajectory
    from geometry_msgs.msg import Wrench
    from robot_core_interfaces.srv import ApplyWrench

    start = jtc.q()
    wrench_client = jtc.node.create_client(ApplyWrench, "/simulator/apply_wrench")
    assert wrench_client.wait_for_service(timeout_sec=20)
    target = [start[0] + 0.8, *start[1:]]
    handle = jtc.send(jtc.goal([(3.0, target)]))
    assert handle.accepted
    # 110 N m about the vertical axis against joint1 (whose actuator gives at most 87 N m) for 0.3 s
    req = ApplyWrench.Request(link_name="link1")
    req.wrench = Wrench()
    req.wrench.torque.z = -110.0
    req.duration.nanosec = 300_000_000
    assert wait_future(wrench_client.call_async(req), 10).success
    res = jtc.result(handle)
    assert res.status == ABORTED
    assert res.result.error_code == FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED
    assert "path tolerance" in res.result.error_string
    # the controller then holds where the violation happened: the arm comes to rest there, not at the target
    settled = wait_for(lambda: _settled(jtc), 20, "the arm at rest")
    assert abs(settled[0] - target[0]) > 0.5


def _settled(jtc, dt: float = 0.25, samples: int = 5, tol: float = 0.002) -> list[float] | None:
    """The arm's position if it stayed within ``tol`` over ``samples`` readings ``dt`` apart."""
    qs = [jtc.q()]
    for _ in range(samples - 1):
        time.sleep(dt)
        qs.append(jtc.q())
        if max(abs(x - y) for x, y in zip(qs[0], qs[-1], strict=True)) > tol:
            return None
    return qs[-1]


def test_goal_time_violated_beyond_a_joint_limit(jtc):
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTolerance

    # joint4 cannot get to 3.05 rad: its limit is 3.0 and, in this pose, the arm's links collide even before
    # (about 2.52). The goal asks for 3.05 with a 0.02 goal tolerance; the per-goal path tolerance -1 ("no
    # limit") keeps the blocked joint from ending the goal as a path violation.
    goal = jtc.goal([(2.5, pose(q4=3.05))])
    goal.path_tolerance = [JointTolerance(name=j, position=-1.0) for j in ARM_JOINTS]
    goal.goal_time_tolerance.sec = 3  # time enough to reach the limit, so only the limit keeps it out
    handle = jtc.send(goal)
    assert handle.accepted
    res = jtc.result(handle)
    assert res.status == ABORTED
    assert res.result.error_code == FollowJointTrajectory.Result.GOAL_TOLERANCE_VIOLATED
    assert "goal_time_tolerance" in res.result.error_string
    held = wait_for(lambda: _settled(jtc), 20, "the arm holding after the violation")
    assert held[3] < 3.0


def test_new_goal_preempts_the_running_one(jtc):
    from control_msgs.action import FollowJointTrajectory

    first = jtc.send(jtc.goal([(6.0, pose(q1=-0.8))]))
    assert first.accepted
    wait_for(lambda: jtc.feedback, 10, "feedback of the first goal")
    final = pose(q1=0.2, q3=0.3)
    second = jtc.send(jtc.goal([(1.5, final)]))
    assert second.accepted
    res1 = jtc.result(first)
    assert res1.status == ABORTED
    assert res1.result.error_code == FollowJointTrajectory.Result.INVALID_GOAL
    assert "preempted" in res1.result.error_string
    res2 = jtc.result(second)
    assert res2.status == SUCCEEDED and res2.result.error_code == 0
    assert jtc.q() == pytest.approx(final, abs=0.02)


def test_cancel_stops_and_holds(jtc):
    handle = jtc.send(jtc.goal([(6.0, pose(q1=1.2, q2=0.8))]))
    assert handle.accepted
    wait_for(lambda: jtc.q()[0] > 0.3, 10, "the arm moving")
    cancel = wait_future(handle.cancel_goal_async(), 10, "cancel response")
    assert len(cancel.goals_canceling) == 1
    res = jtc.result(handle)
    assert res.status == CANCELED
    held = wait_for(lambda: _settled(jtc), 20, "the arm holding still after cancel")
    assert held[0] < 1.1, "the canceled goal was not completed"


@pytest.mark.parametrize("case", ["unknown joint", "empty points", "non-increasing times", "wrong sizes"])
def test_invalid_goals_are_rejected_with_a_logged_reason(jtc, graph, case):
    cm, _ = graph
    if case == "unknown joint":
        goal, reason = jtc.goal([(1.0, [0.1])], joints=["elbow_of_nobody"]), "Incoming joint elbow_of_nobody"
    elif case == "empty points":
        goal, reason = jtc.goal([]), "Empty trajectory"
    elif case == "non-increasing times":
        goal, reason = jtc.goal([(1.0, HOME), (1.0, HOME)]), "not strictly increasing"
    else:
        goal, reason = jtc.goal([(1.0, HOME[:5])]), "Mismatch between joint_names size"
    handle = jtc.send(goal)
    assert not handle.accepted
    wait_for(lambda: reason in cm.output(), 10, f"the logged reason '{reason}'")


def test_invalid_goals_report_their_error_code_when_asked(ros, jtc):
    """reject_invalid_goals=false: accepted and aborted at once, so the client sees the upstream code."""
    from control_msgs.action import FollowJointTrajectory
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters

    client = jtc.node.create_client(SetParameters, "/joint_trajectory_controller/set_parameters")
    assert client.wait_for_service(timeout_sec=20)

    def set_reject(value: bool) -> None:
        p = Parameter(name="reject_invalid_goals", value=ParameterValue(type=ParameterType.PARAMETER_BOOL,
                                                                         bool_value=value))
        assert wait_future(client.call_async(SetParameters.Request(parameters=[p])), 10).results[0].successful

    set_reject(False)
    try:
        R = FollowJointTrajectory.Result
        cases = [
            (jtc.goal([(1.0, [0.1])], joints=["elbow_of_nobody"]), R.INVALID_JOINTS),
            (jtc.goal([]), R.INVALID_GOAL),
            (jtc.goal([(1.0, HOME), (0.5, HOME)]), R.INVALID_GOAL),
            (jtc.goal([(0.5, HOME)], stamp=0.2), R.OLD_HEADER_TIMESTAMP),  # sim time is well past 0.7 s
        ]
        for goal, code in cases:
            handle = jtc.send(goal)
            assert handle.accepted
            res = jtc.result(handle)
            assert res.status == ABORTED
            assert res.result.error_code == code, res.result.error_string
            assert res.result.error_string
    finally:
        set_reject(True)


def test_topic_query_state_and_controller_state(jtc):
    from builtin_interfaces.msg import Duration
    from control_msgs.msg import JointTrajectoryControllerState
    from control_msgs.srv import QueryTrajectoryState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    states: list[JointTrajectoryControllerState] = []
    jtc.node.create_subscription(JointTrajectoryControllerState, "/joint_trajectory_controller/controller_state",
                                 states.append, 10)
    pub = jtc.node.create_publisher(JointTrajectory, "/joint_trajectory_controller/joint_trajectory", 10)
    wait_for(lambda: pub.get_subscription_count() > 0 and states, 20, "the topic and the controller state")
    assert list(states[-1].joint_names) == ARM_JOINTS
    target = pose(q1=-0.3, q5=0.4)
    pub.publish(JointTrajectory(joint_names=ARM_JOINTS, points=[
        JointTrajectoryPoint(positions=target, time_from_start=Duration(sec=1))]))
    wait_for(lambda: jtc.q() == pytest.approx(target, abs=0.02), 20, "the arm at the topic trajectory's end")
    assert len(accepted_trajectory(jtc, target).points) == 1  # a topic trajectory is repeated there too
    # The arm comes within 0.02 rad before the reference has run out, and controller states arrive on their own
    # topic: wait for the reference itself to reach the end (it must, exactly).
    wait_for(lambda: list(states[-1].reference.positions) == pytest.approx(target, abs=1e-6), 20,
             "the controller state's reference at the trajectory's end")

    query = jtc.node.create_client(QueryTrajectoryState, "/joint_trajectory_controller/query_state")
    assert query.wait_for_service(timeout_sec=20)
    res = wait_future(query.call_async(QueryTrajectoryState.Request(time=states[-1].header.stamp)), 10)
    assert res.success, res.message
    assert list(res.name) == ARM_JOINTS
    assert list(res.position) == pytest.approx(target, abs=1e-6)
