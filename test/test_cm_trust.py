"""The controller manager over DDS against everyday faults (issue 13): a simulator reset, a simulator killed
mid-goal and restarted, a flood of trajectory goals, and a manager killed while its velocity controller drives a
joint (the simulator's command watchdog stops it: ``dead-peer: manager killed ...``).

Real processes: the simulator node and the controller manager node (topic-based hardware, ``use_sim_time``),
driven by an rclpy ActionClient and service clients in this process. No assertion on timings: the measured
ones are printed (``dead-peer: ...``, ``reset: ...``); conditions are waited for with generous deadlines.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from cm_helpers import (
    ARM_JOINTS,
    HOME,
    CmClient,
    JointStateRecorder,
    run_spawner,
    start_controller_manager,
    start_simulator,
    wait_goal_service,
)
from ros_harness import answered_eventually, wait_for, wait_future

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

SUCCEEDED, ABORTED = 4, 6  # action_msgs/GoalStatus
COMPONENT = "RcArmSystem"  # rc_arm's <ros2_control> block


def _stamp(msg) -> float:
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def _goal(points: list[tuple[float, list[float]]]):
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = list(ARM_JOINTS)
    for t, q in points:
        goal.trajectory.points.append(JointTrajectoryPoint(
            positions=[float(v) for v in q], time_from_start=Duration(sec=int(t), nanosec=int((t % 1) * 1e9))))
    return goal


def _pose(**changes: float) -> list[float]:
    q = list(HOME)
    for name, value in changes.items():
        q[int(name[-1]) - 1] = value
    return q


class Client:
    """Action client (deep goal/result queues, so the client side never drops a goal of a burst), the
    /joint_states recorder and ~/activity with the wall time each message arrived."""

    def __init__(self, ros, name: str):
        import rclpy
        from control_msgs.action import FollowJointTrajectory
        from controller_manager_msgs.msg import ControllerManagerActivity
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

        from robot_core.ros.action_client import ActionClient

        # The action client is built before the executor spins the node: rclpy registers it with the node before
        # its constructor finished, and an executor reading it then dies ("'ActionClient' object has no
        # attribute '_lock'"), taking every later callback of this process with it.
        self.node = rclpy.create_node(name, context=ros.context)
        deep = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        self.action = ActionClient(self.node, FollowJointTrajectory,
                                   "/joint_trajectory_controller/follow_joint_trajectory",
                                   goal_service_qos_profile=deep, result_service_qos_profile=deep,
                                   cancel_service_qos_profile=deep)
        ros.add(self.node)
        self.states = JointStateRecorder(self.node)
        self.activity: list[tuple[float, dict[str, str]]] = []
        self._lock = threading.Lock()
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.node.create_subscription(ControllerManagerActivity, "/controller_manager/activity", self._on_activity,
                                      qos)
        self.cm = CmClient(self.node)

    def _on_activity(self, msg) -> None:
        with self._lock:
            self.activity.append((time.monotonic(), {s.name: s.state.label for s in msg.hardware_components}))

    def hardware_state_since(self, since: float, label: str) -> float | None:
        """Wall time at which the component was first reported ``label`` after ``since``, if it was."""
        with self._lock:
            for t, hw in self.activity:
                if t >= since and hw.get(COMPONENT) == label:
                    return t
        return None

    def ready(self) -> None:
        assert self.action.wait_for_server(timeout_sec=40), "JTC action server not discovered"
        wait_goal_service(self.action, ARM_JOINTS)
        wait_for(lambda: self.states.positions(ARM_JOINTS) is not None, 40, "/joint_states")

    def send(self, goal):
        return wait_future(self.action.send_goal_async(goal), 30, "goal response")

    def result(self, handle, timeout: float = 60.0):
        return wait_future(handle.get_result_async(), timeout, "goal result")


def _graph(processes, *cm_params: str):
    sim = start_simulator(processes)
    cm = start_controller_manager(processes, "use_sim_time:=true", "hardware_mode:=topic", *cm_params)
    code, out = run_spawner("joint_state_broadcaster", "joint_trajectory_controller")
    assert code == 0, out
    return sim, cm


def test_reset_resumes_joint_states_at_once_and_aborts_the_goal(ros, processes):
    """Before the fix /joint_states stopped after a reset until simulated time passed its pre-reset value, and
    the goal hung."""
    from robot_core_interfaces.srv import ResetSimulation

    _sim, cm = _graph(processes)
    client = Client(ros, "cm_trust_reset")
    client.ready()
    reset = client.node.create_client(ResetSimulation, "/simulator/reset")
    assert reset.wait_for_service(timeout_sec=40)
    before = 3.0
    wait_for(lambda: _stamp(client.states.latest()) > before, 120, f"{before} s of simulated time")
    handle = client.send(_goal([(30.0, _pose(q1=0.5))]))  # far longer than the test: active at the reset
    assert handle.accepted
    result = handle.get_result_async()
    # a reset is not idempotent for the goal, so it is sent once, after the service answered a warm-up
    answered_eventually(reset.call_async, ResetSimulation.Request(),
                        "an answer from /simulator/reset")
    t_reset = time.monotonic()

    def resumed():
        msg = client.states.latest()
        return msg is not None and 0.2 < _stamp(msg) < before

    wait_for(resumed, 60, "/joint_states stamped after the reset (0.2 s .. before the old time)")
    t_resumed = time.monotonic()
    res = wait_future(result, 60, "the goal's result after the reset")
    t_result = time.monotonic()
    print(f"reset: /joint_states resumed {t_resumed - t_reset:.3f} s after the reset answered (wall), goal result "
          f"after {t_result - t_reset:.3f} s: {res.result.error_string!r}")
    assert res.status == ABORTED
    assert "time jumped back" in res.result.error_string
    # control goes on at the new time
    handle = client.send(_goal([(1.0, _pose(q1=0.3))]))
    assert handle.accepted
    res = client.result(handle)
    assert res.status == SUCCEEDED, res.result.error_string
    assert "time jumped back" in cm.output()


def test_killed_simulator_fails_the_component_and_a_restarted_one_is_driven_again(ros, processes):
    """Before the fix the goal never ended and the component stayed active: the state timeout was measured
    on /clock, which died with the simulator."""
    state_timeout = 2.0  # a hog run's live simulator was starved past 0.5 s before the kill (a false trip)
    sim, cm = _graph(processes, f"state_timeout:={state_timeout}")
    client = Client(ros, "cm_trust_dead_peer")
    client.ready()
    wait_for(lambda: client.hardware_state_since(0.0, "active") is not None, 40, "~/activity")
    handle = client.send(_goal([(30.0, _pose(q1=0.5))]))
    assert handle.accepted
    result = handle.get_result_async()
    done_at: list[float] = []
    result.add_done_callback(lambda _f: done_at.append(time.monotonic()))
    wait_for(lambda: client.states.latest() is not None and abs(client.states.positions(ARM_JOINTS)[0]) > 0.005,
             60, "the arm moving")

    os.killpg(sim.proc.pid, signal.SIGKILL)
    t_kill = time.monotonic()
    sim.proc.wait(30)
    res = wait_future(result, 60, "the goal's result after the simulator was killed")
    t_inactive = wait_for(lambda: client.hardware_state_since(t_kill, "inactive"), 60, "the component inactive")
    t_abort = done_at[0] if done_at else time.monotonic()
    print(f"dead-peer: simulator killed -> goal aborted {t_abort - t_kill:.3f} s, component inactive "
          f"{t_inactive - t_kill:.3f} s (state_timeout {state_timeout} s, target <= {state_timeout + 0.1:.1f} s)")
    assert res.status == ABORTED
    assert f"hardware component '{COMPONENT}' failed" in res.result.error_string
    # joint and sensor states die with the simulator at once: either stream's timeout may be the one that fires
    assert (f"state_timeout {state_timeout} s" in res.result.error_string
            or f"sensor_timeout {state_timeout} s" in res.result.error_string), res.result.error_string
    assert client.cm.state("joint_trajectory_controller") == "inactive"
    assert client.cm.state("joint_state_broadcaster") == "active", "claims no command interface"

    t_restart = time.monotonic()
    start_simulator(processes)
    t_active = wait_for(lambda: client.hardware_state_since(t_restart, "active"), 60, "the component active again")
    assert client.cm.state("joint_trajectory_controller") == "inactive", "no controller restarts by itself"
    res = client.cm.switch(["joint_trajectory_controller"])
    assert res.ok, res.message
    wait_goal_service(client.action, ARM_JOINTS)
    handle = client.send(_goal([(1.0, _pose(q1=0.2))]))
    assert handle.accepted
    res = client.result(handle)
    t_goal = time.monotonic()
    print(f"dead-peer: simulator restarted -> component active {t_active - t_restart:.3f} s after the restart "
          f"began, new goal succeeded {t_goal - t_restart:.3f} s after it")
    assert res.status == SUCCEEDED, res.result.error_string
    assert "is active again" in cm.output()
    # the new simulator is a new state writer: the component came back once its command reader was matched
    assert "recovered: states from a new writer, and a new subscriber to our commands" in cm.output()


def test_a_burst_of_goals_is_answered_in_full_and_the_newest_wins(ros, processes):
    """Before the fix most of 50 back-to-back goals were never answered (the goal service kept 10 requests
    while each waited for an executor thread held by a running goal)."""
    _graph(processes)
    client = Client(ros, "cm_trust_flood")
    client.ready()
    n = 50
    futures = [client.action.send_goal_async(_goal([(1.0 + 0.01 * k, _pose(q1=0.2 + 0.002 * k))]))
               for k in range(n)]
    t0 = time.monotonic()
    try:
        wait_for(lambda: all(f.done() for f in futures), 120, "an answer to every goal")
    finally:
        answered = sum(f.done() for f in futures)
        print(f"goal burst: {answered}/{n} goals answered, in {time.monotonic() - t0:.3f} s")
    handles = [f.result() for f in futures]
    assert all(h.accepted for h in handles), "valid goals are accepted (each preempts the one before)"
    last = client.result(handles[-1])
    assert last.status == SUCCEEDED, last.result.error_string
    earlier = [wait_future(h.get_result_async(), 60, "a preempted goal's result") for h in handles[:-1]]
    assert all(r.status == ABORTED for r in earlier)
    assert all("preempted" in r.result.error_string for r in earlier)


def test_killed_manager_leaves_the_simulator_to_stop_the_joints(ros, processes):
    """Fault 3 with a real commander: the controller manager is killed while its velocity controller drives
    joint1; only the simulator's own watchdog (command_timeout, wall time) can stop the arm before its limit."""
    from std_msgs.msg import Float64MultiArray

    sim = start_simulator(processes, "command_timeout:=0.5")
    cm = start_controller_manager(processes, "use_sim_time:=true", "hardware_mode:=topic")
    code, out = run_spawner("joint_state_broadcaster", "forward_velocity_controller")
    assert code == 0, out
    node = ros.node("cm_trust_dead_manager")
    sim_states = JointStateRecorder(node, "/robot_joint_states")  # the simulator's own, alive after the kill
    pub = node.create_publisher(Float64MultiArray, "/forward_velocity_controller/commands", 10)
    speed = [0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    node.create_timer(0.05, lambda: pub.publish(Float64MultiArray(data=speed)))

    def joint1() -> tuple[float, float] | None:
        msg = sim_states.latest()
        if msg is None or "joint1" not in msg.name:
            return None
        i = list(msg.name).index("joint1")
        return msg.position[i], msg.velocity[i]

    wait_for(lambda: (s := joint1()) is not None and s[1] > 0.25, 60, "joint1 driven at 0.3 rad/s by the manager")
    os.killpg(cm.proc.pid, signal.SIGKILL)
    t_kill = time.monotonic()
    cm.proc.wait(30)
    stopped = wait_for(lambda: (s := joint1()) is not None and abs(s[1]) < 0.02 and s, 30,
                       "joint1 stopped by the simulator's watchdog")
    t_stop = time.monotonic()
    print(f"dead-peer: manager killed -> joint1 stopped by the simulator {t_stop - t_kill:.3f} s after the kill "
          f"(command_timeout 0.5 s, wall; target <= 0.5 s + one step), at {stopped[0]:.3f} rad")
    assert stopped[0] < 2.5, "stopped by the watchdog, well before joint1's limit (3.0 rad)"
    wait_for(lambda: "no command for" in sim.output() and "joint1" in sim.output(), 20, "the watchdog's event logged")
    # it stays there
    held = stopped[0]
    t0 = _stamp(sim_states.latest())
    wait_for(lambda: _stamp(sim_states.latest()) > t0 + 0.5, 20, "0.5 s of simulated time")
    assert joint1()[0] == pytest.approx(held, abs=0.01)
