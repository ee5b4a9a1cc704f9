"""The controller manager's core against everyday faults (issue 13), without ROS.

* a backwards jump of simulated time (reset) re-arms the loop's pacing and aborts the trajectory goal;
* a robot that goes silent is judged on wall time, also when the control clock stopped with it (a dead
  simulator takes /clock along): the component goes inactive, its controllers stop, the goal says why, and
  the component comes back active (controllers inactive) when states return;
* configuring a controller whose ``on_configure`` is slow does not stall the control loop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np
import pytest
from ros_harness import wait_for

from robot_core.control import ControllerManagerCore, State, Strictness
from robot_core.control.controller_base import Controller
from robot_core.control.controllers.joint_trajectory import GoalStatus
from robot_core.control.hardware import ComponentJointInfo, HardwareInfo, InterfaceInfo, create_component
from robot_core.control.registry import ControllerRegistry, default_registry
from robot_core.control.trajectory import JointTrajectory, TrajectoryPoint
from robot_core.ros.control_loop import ControlLoop, SimClockPacing, WallPacing

J = ["a", "b"]


# ---------------------------------------------------------------------------------------------- pacing
def _consume(pacing: SimClockPacing, stop: threading.Event, ticks: list, n: int) -> threading.Thread:
    def run() -> None:
        for _ in range(n):
            tick = pacing.wait_next(stop)
            if tick is None:
                return
            ticks.append(tick)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    return worker


def test_sim_clock_pacing_rearms_at_once_after_a_backwards_jump():
    """Before the fix the first cycle after a reset ran, then none until simulated time passed the
    pre-reset deadline (3 s here): the manager stopped for as long as the simulation had run."""
    pacing = SimClockPacing(rate=100.0)
    stop = threading.Event()
    ticks: list = []
    worker = _consume(pacing, stop, ticks, 2)
    pacing.on_clock(2.99)
    wait_for(lambda: len(ticks) == 1, 10, "the first cycle")
    pacing.on_clock(3.0)
    worker.join(10)
    assert [round(t, 6) for t, _ in ticks] == [2.99, 3.0]
    ticks.clear()
    worker = _consume(pacing, stop, ticks, 4)
    for ms in range(0, 40):  # reset: the clock restarts at 0
        pacing.on_clock(ms * 1e-3)
        if len(ticks) == 4:
            break
        wait_for(lambda ms=ms: len(ticks) >= 1 + ms // 10 or not worker.is_alive(), 10, "a cycle per 10 ms")
    worker.join(10)
    assert [round(t, 6) for t, _ in ticks] == [0.0, 0.01, 0.02, 0.03]
    assert pacing.jumps == 1
    stop.set()


def test_sim_clock_pacing_remembers_a_jump_the_loop_did_not_see():
    """The clock goes back and forward again past the last cycle before the loop looks: still a jump."""
    pacing = SimClockPacing(rate=10.0)
    stop = threading.Event()
    ticks: list = []
    pacing.on_clock(1.0)
    assert pacing.wait_next(stop) == (1.0, 0.1)
    pacing.on_clock(0.0)
    pacing.on_clock(1.05)  # before the old deadline 1.1, but after a reset
    worker = _consume(pacing, stop, ticks, 1)
    worker.join(10)
    assert ticks and ticks[0][0] == 1.05
    stop.set()


def test_sim_clock_pacing_calls_the_idle_hook_while_the_clock_stands_still():
    idle = threading.Event()
    pacing = SimClockPacing(rate=100.0, on_idle=idle.set, idle_period=0.01)
    stop = threading.Event()
    ticks: list = []
    pacing.on_clock(0.5)
    worker = _consume(pacing, stop, ticks, 2)
    assert idle.wait(10), "the idle hook runs with the clock stopped"
    assert len(ticks) == 1
    pacing.on_clock(0.51)
    worker.join(10)
    assert len(ticks) == 2
    stop.set()


# ---------------------------------------------------------------------------------------------- rigs
def topic_rig(state_timeout: float = 0.5, constraints: dict | None = None):
    info = HardwareInfo("arm_hw", "system", "topic_based_ros2_control/TopicBasedSystem",
                        {"state_timeout": str(state_timeout), "trigger_joint_command_threshold": "-1"},
                        [ComponentJointInfo(j, [InterfaceInfo("position")],
                                            [InterfaceInfo("position", 0.0), InterfaceInfo("velocity")])
                         for j in J])
    comp = create_component(info)
    wall = [1000.0]
    comp.monotonic = lambda: wall[0]
    sent: list = []
    comp.command_sink = sent.append
    cm = ControllerManagerCore(update_rate=100)
    cm.add_hardware_component(comp)
    cm.load_controller("jtc", "joint_trajectory_controller/JointTrajectoryController",
                       {"joints": J, "command_interfaces": ["position"],
                        "constraints": {"goal_time": 1.0, **(constraints or {})}})
    cm.load_controller("jsb", "joint_state_broadcaster/JointStateBroadcaster")
    for n in ("jtc", "jsb"):
        cm.configure_controller(n)
    return cm, comp, wall, sent


def robot_says(comp, q, stamp: float) -> None:
    comp.on_joint_state(J, list(q), [0.0, 0.0], [], stamp)


def goal(q, at: float) -> JointTrajectory:
    return JointTrajectory(J, [TrajectoryPoint(list(q), [], [], [], at)])


def test_time_jump_aborts_the_goal_with_the_reason_and_holds_the_post_jump_state():
    cm, comp, _, sent = topic_rig()
    robot_says(comp, [0.3, 0.3], 2.0)
    cm.update(2.0, 0.01)
    assert cm.switch_controller(["jtc", "jsb"], [], Strictness.STRICT).ok
    jtc = cm.controller("jtc")
    gid = jtc.accept_goal(goal([1.0, 1.0], 5.0))
    for k in range(1, 50):
        robot_says(comp, [0.3, 0.3], 2.0 + 0.01 * k)
        cm.update(2.0 + 0.01 * k, 0.01)
    assert jtc.active_goal_id == gid
    # reset: time back to 0, and the first cycle after it still sees a state stamped before the reset
    robot_says(comp, [0.35, 0.35], 2.5)
    n_sent = len(sent)
    cm.update(0.0, 0.01)
    assert cm.time_jumps == 1
    assert len(sent) == n_sent, "nothing is commanded until the robot reported its post-reset state"
    assert not jtc.poll_results()
    robot_says(comp, [0.0, 0.0], 0.0)  # the reset pose
    cm.update(0.001, 0.01)
    (res,) = jtc.poll_results()
    assert res.goal_id == gid and res.status == GoalStatus.ABORTED
    assert "time jumped back from 2.490 s to 0.000 s" in res.error_string
    assert np.allclose(sent[-1].position, [0.0, 0.0]), "holds the reset pose, not the pre-reset one"
    # control goes on at the new time: a new goal succeeds
    gid = jtc.accept_goal(goal([0.2, 0.2], 0.3))
    t, q = 0.01, np.zeros(2)
    for _ in range(200):
        q = np.array(sent[-1].position)
        robot_says(comp, q, t)
        cm.update(t, 0.01)
        t += 0.01
        results = jtc.poll_results()
        if results:
            break
    assert results and results[0].goal_id == gid and results[0].status == GoalStatus.SUCCEEDED


@pytest.mark.parametrize("stamped", [True, False])
def test_a_late_state_is_judged_against_the_reference_of_its_own_time(stamped):
    """The robot follows the commands exactly, but its states reach the manager 0.4 s late (as a loaded machine's
    DDS delivered them behind /clock): stamped with when they were measured, the path check compares them with
    the reference of that moment and the goal succeeds; the same late positions stamped as if they were current
    are a real 0.4 s lag, 0.4 rad behind a 1 rad/s reference, and the goal aborts on its 0.1 rad path tolerance."""
    cm, comp, _, sent = topic_rig(state_timeout=0.0, constraints={j: {"trajectory": 0.1} for j in J})
    robot_says(comp, [0.0, 0.0], 1.0)
    cm.update(1.0, 0.01)
    assert cm.switch_controller(["jtc"], [], Strictness.STRICT).ok
    jtc = cm.controller("jtc")
    gid = jtc.accept_goal(JointTrajectory(J, [TrajectoryPoint([1.0, 1.0], [1.0, 1.0], [], [], 1.0),
                                              TrajectoryPoint([2.0, 2.0], [], [], [], 2.0)]))
    history: list[tuple[float, list[float]]] = []  # (time, commanded position): the robot is where it was told
    results: list = []
    t = 1.0
    while not results and t < 6.0:
        t = round(t + 0.01, 6)
        late = [(at, q) for at, q in history if at <= t - 0.4]
        if late:
            at, q = late[-1]
            robot_says(comp, q, at if stamped else t)
        cm.update(t, 0.01)
        if sent and len(sent[-1].position):
            history.append((t, list(sent[-1].position)))
        results = jtc.poll_results()
    (res,) = results
    assert res.goal_id == gid
    if stamped:
        assert res.status == GoalStatus.SUCCEEDED, res.error_string
    else:
        assert res.status == GoalStatus.ABORTED and "path tolerance" in res.error_string


def test_a_slower_controller_keeps_its_rate_after_a_time_jump():
    """Its schedule was on the old clock: without the reset it skipped every cycle after the jump."""
    cm, comp, _, _ = topic_rig()
    cm.load_controller("slow", "joint_state_broadcaster/JointStateBroadcaster", {"update_rate": 10})
    cm.configure_controller("slow")
    robot_says(comp, [0.0, 0.0], 3.0)
    cm.update(3.0, 0.01)
    assert cm.switch_controller(["slow"], [], Strictness.STRICT).ok
    slow = cm.controller("slow")
    calls: list[float] = []
    original = slow.update
    slow.update = lambda t, p: (calls.append(t), original(t, p))[1]
    for k in range(1, 30):
        cm.update(3.0 + 0.01 * k, 0.01)
    before = len(calls)
    assert before >= 2
    robot_says(comp, [0.0, 0.0], 0.0)
    for k in range(0, 30):
        robot_says(comp, [0.0, 0.0], 0.01 * k)
        cm.update(0.01 * k, 0.01)
    assert len(calls) - before >= 2, "the 10 Hz controller runs after the jump"


def test_silent_robot_with_a_stopped_clock_fails_on_wall_time_and_comes_back():
    cm, comp, wall, sent = topic_rig(state_timeout=0.5)
    robot_says(comp, [0.1, 0.1], 1.0)
    cm.update(1.0, 0.01)
    assert cm.switch_controller(["jtc", "jsb"], [], Strictness.STRICT).ok
    jtc = cm.controller("jtc")
    gid = jtc.accept_goal(goal([1.0, 1.0], 3.0))
    robot_says(comp, [0.1, 0.1], 1.01)
    cm.update(1.01, 0.01)
    assert jtc.active_goal_id == gid
    # the simulator dies: no state, no clock, so no cycle; only the watchdog runs
    wall[0] += 0.4
    cm.watchdog()
    assert not comp.is_failed
    wall[0] += 0.2
    cm.watchdog()
    assert comp.is_failed
    (hc,) = cm.list_hardware_components()
    assert hc.state == State.INACTIVE
    states = {c.name: c.state for c in cm.list_controllers()}
    assert states == {"jtc": State.INACTIVE, "jsb": State.ACTIVE}
    (res,) = jtc.poll_results()
    assert res.goal_id == gid and res.status == GoalStatus.ABORTED
    assert "hardware component 'arm_hw' failed" in res.error_string
    assert "state_timeout 0.5 s" in res.error_string
    assert not cm.switch_controller(["jtc"], [], Strictness.STRICT).ok
    # the simulator comes back (its time starts at 0 again)
    n_sent = len(sent)
    robot_says(comp, [0.0, 0.0], 0.0)
    cm.update(0.0, 0.01)
    cm.update(0.01, 0.01)
    assert not comp.is_failed and cm.list_hardware_components()[0].state == State.ACTIVE
    assert cm.controller("jtc").state == State.INACTIVE, "controllers stay off until switched on"
    assert len(sent) == n_sent, "nothing from before the failure is sent to the robot that came back"
    assert cm.switch_controller(["jtc"], [], Strictness.STRICT).ok
    cm.update(0.02, 0.01)
    assert np.allclose(sent[-1].position, [0.0, 0.0]), "the JTC starts from the new state"


def test_a_switch_waits_for_the_robots_first_states_and_the_trajectory_controller_holds_them():
    """A launch file starts the robot, the manager and the spawners at once: a switch that came before the robot's
    first states activated the JTC on the placeholders (0 here), and it drove the robot there (the PR2's arms,
    started lowered, rose towards 0). The switch waits now, outside the lock, and the JTC holds the robot's pose."""
    cm, comp, _wall, sent = topic_rig()
    stop = threading.Event()

    def robot_and_loop() -> None:  # the manager's loop keeps cycling; the robot's states arrive after 0.3 s
        t, start = 0.0, time.monotonic()
        while not stop.is_set():
            if time.monotonic() - start > 0.3:
                robot_says(comp, [1.1, -0.4], t)
            cm.update(t, 0.01)
            t += 0.01
            time.sleep(0.005)

    worker = threading.Thread(target=robot_and_loop, daemon=True)
    worker.start()
    try:
        res = cm.switch_controller(["jtc", "jsb"], [], Strictness.STRICT, timeout=30.0)
        assert res.ok, res.message
        wait_for(lambda: sent and sent[-1].position is not None and len(sent[-1].position) == 2, 10, "a command")
        assert np.allclose(sent[-1].position, [1.1, -0.4]), sent[-1]
    finally:
        stop.set()
        worker.join(5)


def test_a_switch_refuses_a_controller_whose_robot_never_sent_states():
    cm, comp, _wall, sent = topic_rig()
    t0 = time.monotonic()
    res = cm.switch_controller(["jtc"], [], Strictness.STRICT, timeout=0.3)
    assert time.monotonic() - t0 >= 0.3
    assert not res.ok
    assert ("controller 'jtc' since hardware component 'arm_hw' has no states from the robot yet (no message on "
            "'robot_joint_states' yet; waited 0.3 s") in res.message
    assert cm.controller("jtc").state == State.INACTIVE and not sent
    # without a timeout: refused at once; with a state that arrived between cycles (a paused clock): activated
    assert not cm.switch_controller(["jtc"], [], Strictness.STRICT).ok
    robot_says(comp, [0.2, 0.3], 0.0)
    assert cm.switch_controller(["jtc"], [], Strictness.STRICT).ok
    cm.update(0.0, 0.01)
    assert np.allclose(sent[-1].position, [0.2, 0.3])


def test_a_switch_refusal_says_when_the_robot_publishes_other_joint_names():
    """A robot whose states name other joints (a prefix missing, another robot on the topic) is not silent: the
    refusal says what the messages named instead of "no message yet"."""
    cm, comp, _wall, _sent = topic_rig()
    for _ in range(3):
        comp.on_joint_state(["arm1_j1", "arm1_j2", "arm1_j3", "arm1_j4", "arm1_j5"], [0.0] * 5, stamp=0.0)
    res = cm.switch_controller(["jtc"], [], Strictness.STRICT, timeout=0.05)
    assert not res.ok
    assert ("no message on 'robot_joint_states' naming its joints yet: 3 arrived naming none of them, the last "
            "['arm1_j1', 'arm1_j2', 'arm1_j3', 'arm1_j4', ... (5 in all)]") in res.message, res.message


def _failed_rig(source: bytes):
    """A component whose robot (state writer ``source``, one command reader matched) went silent."""
    cm, comp, wall, _sent = topic_rig(state_timeout=0.5)
    matches = [1]
    comp.command_matches = lambda: matches[0]
    comp.on_joint_state(J, [0.1, 0.1], [0.0, 0.0], [], 1.0, source)
    cm.update(1.0, 0.01)
    wall[0] += 0.6
    cm.watchdog()
    assert comp.is_failed
    return cm, comp, wall, matches


def test_a_robot_that_stalled_recovers_as_soon_as_its_states_flow_again():
    cm, comp, _wall, _matches = _failed_rig(b"writer-1")
    comp.on_joint_state(J, [0.1, 0.1], [0.0, 0.0], [], 1.01, b"writer-1")
    cm.update(1.01, 0.01)
    assert not comp.is_failed, "the same writer: the same robot, whose command reader never went away"


def test_a_restarted_robot_recovers_once_its_command_reader_is_matched():
    """Before: the component was active again with the first state of the new simulator, while its command
    reader was not yet discovered; a 1 s goal then ran on a robot that never got a command and aborted."""
    cm, comp, wall, matches = _failed_rig(b"writer-1")
    for k in range(3):
        wall[0] += 0.1
        comp.on_joint_state(J, [0.0, 0.0], [0.0, 0.0], [], 0.01 * k, b"writer-2")
        cm.update(0.01 * k, 0.01)
        assert comp.is_failed, "states from a new writer, but nobody is listening to commands yet"
    matches[0] = 2  # the new robot's command reader was discovered
    comp.on_joint_state(J, [0.0, 0.0], [0.0, 0.0], [], 0.03, b"writer-2")
    cm.update(0.03, 0.01)
    assert not comp.is_failed and cm.list_hardware_components()[0].state == State.ACTIVE


def test_a_restarted_robot_never_matched_recovers_after_the_listen_wait_with_a_warning():
    from robot_core.control.topic_based import LISTEN_WAIT

    cm, comp, wall, _matches = _failed_rig(b"writer-1")
    notes: list[str] = []
    previous = comp.on_failure_change
    comp.on_failure_change = lambda c, failed, note: (notes.append(note), previous(c, failed, note))
    comp.on_joint_state(J, [0.0, 0.0], [0.0, 0.0], [], 0.0, b"writer-2")
    cm.update(0.0, 0.01)
    assert comp.is_failed
    wall[0] += LISTEN_WAIT + 0.01
    comp.on_joint_state(J, [0.0, 0.0], [0.0, 0.0], [], 0.01, b"writer-2")
    cm.update(0.01, 0.01)
    assert not comp.is_failed
    assert "no new subscriber to '" in notes[-1] and "commands may not reach the robot" in notes[-1], notes


# ---------------------------------------------------------------------------------------------- configure
class SlowConfigureController(Controller):
    """A real controller whose configure takes as long as the loop needs to show it keeps cycling."""

    type_name = "test/SlowConfigure"
    cycles: Callable[[], int] | None = None  # set by the test
    seen = 0

    def on_configure(self) -> None:
        count = type(self).cycles
        start = count()
        deadline = time.monotonic() + 20.0
        while count() - start < 20 and time.monotonic() < deadline:
            time.sleep(0.001)
        type(self).seen = count() - start


def test_a_slow_configure_does_not_stall_the_control_loop():
    registry = ControllerRegistry()
    for name in default_registry.types():
        registry.register(name, default_registry.get(name))
    registry.register(SlowConfigureController.type_name, SlowConfigureController)
    info = HardwareInfo("mock", "system", "mock_components/GenericSystem", {},
                        [ComponentJointInfo(j, [InterfaceInfo("position")], [InterfaceInfo("position")]) for j in J])
    cm = ControllerManagerCore(update_rate=200, registry=registry)
    cm.add_hardware_component(create_component(info))
    loop = ControlLoop(cm.update, WallPacing(200, time.monotonic), 200)
    SlowConfigureController.cycles = lambda: loop.stats.cycles
    loop.start()
    try:
        wait_for(lambda: loop.stats.cycles > 5, 20, "the loop running")
        cm.load_controller("slow", SlowConfigureController.type_name)
        cm.configure_controller("slow")
        print(f"cycles during the slow configure: {SlowConfigureController.seen}")
        assert SlowConfigureController.seen >= 20, "the loop must cycle while a controller configures"
        assert cm.controller("slow").state == State.INACTIVE
    finally:
        loop.stop()


@pytest.mark.parametrize("action", ["cleanup", "unload", "activate"])
def test_a_controller_being_configured_refuses_other_transitions(action):
    cm = topic_rig()[0]
    spec = cm._specs["jtc"]
    spec.busy = "configure"
    try:
        if action == "activate":
            res = cm.switch_controller(["jtc"], [], Strictness.STRICT)
            assert not res.ok and "configure is running" in res.message
        else:
            with pytest.raises(Exception, match="configure is still running"):
                getattr(cm, f"{action}_controller")("jtc")
    finally:
        spec.busy = ""
