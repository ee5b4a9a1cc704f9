"""ROS-free parts of the controller manager node: the outbox, the loop pacings and the message conversions."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest
from ros_harness import wait_for

from robot_core.ros.control_loop import ControlLoop, LockstepPacing, SimClockPacing, WallPacing
from robot_core.ros.outbox import Outbox


# ---------------------------------------------------------------------------------------------- outbox
def test_outbox_delivers_the_latest_value_per_key_and_survives_a_failing_handler():
    delivered: list[tuple[str, int]] = []
    errors: list[str] = []
    gate = threading.Event()
    box = Outbox("test_outbox", errors.append)
    try:
        box.post("block", lambda _: gate.wait(5), None)  # hold the thread so later posts pile up
        for k in range(5):
            box.post("a", lambda v: delivered.append(("a", v)), k)
        box.post("b", lambda v: 1 / 0, 0)
        box.post("c", lambda v: delivered.append(("c", v)), 7)
        gate.set()
        assert box.flush(5)
        assert delivered == [("a", 4), ("c", 7)], "only the newest 'a' is published"
        assert errors and "ZeroDivisionError" in errors[0]
        assert box.overwritten >= 4
        box.post(("ctrl", "x"), lambda v: delivered.append(("x", v)), 1)
        box.discard(lambda key: isinstance(key, tuple) and key[0] == "ctrl")
        assert box.flush(5)
        assert ("x", 1) not in delivered
    finally:
        box.close()


def test_posts_from_inside_a_cycle_are_delivered_after_it():
    """The publisher thread is not woken in the middle of a control cycle (it would only contend for the
    interpreter and find the gate closed); what the cycle posted goes out once the cycle ends."""
    from robot_core.ros.control_loop import CycleGate

    gate = CycleGate()
    delivered = threading.Event()
    box = Outbox("gated_outbox", gate=gate)
    try:
        with gate.cycle():
            box.post("state", lambda _: delivered.set(), None)
            assert not box._wake.is_set(), "woken during the cycle"
            time.sleep(0.05)
            assert not delivered.is_set()
        assert delivered.wait(5), "delivered after the cycle"
        box.post("later", lambda _: None, None)  # outside a cycle: woken at once
        assert box.flush(5)
    finally:
        box.close()


# ---------------------------------------------------------------------------------------------- pacing
def test_sim_clock_pacing_follows_simulated_time_only():
    pacing = SimClockPacing(rate=100.0)
    stop = threading.Event()
    ticks: list[tuple[float, float]] = []

    def consume(n: int) -> None:
        for _ in range(n):
            tick = pacing.wait_next(stop)
            if tick is None:
                return
            ticks.append(tick)

    worker = threading.Thread(target=consume, args=(4,))
    worker.start()
    for ms in range(0, 36):  # a simulator publishing /clock every 1 ms of simulated time, up to 35 ms
        pacing.on_clock(ms * 1e-3)
        if ms % 10 == 0:
            # A cycle is due: the clock moves on once the loop took it. (A loop thread that a loaded machine woke
            # late would stamp its cycle with the newer time it then sees, as it should: a hog run's 0.021.)
            wait_for(lambda n=ms // 10 + 1: len(ticks) >= n, 5, f"the cycle due at {ms} ms")
        time.sleep(0.002)
    wait_for(lambda: len(ticks) == 4, 5, "four cycles")
    worker.join(5)
    times = [round(t, 6) for t, _ in ticks]
    assert times == [0.0, 0.01, 0.02, 0.03], "one cycle per 10 ms of simulated time"
    assert [round(p, 6) for _, p in ticks[1:]] == [0.01, 0.01, 0.01]
    # a paused simulator (clock stuck) gives no cycle; a reset (clock back to 0) restarts the grid
    worker = threading.Thread(target=consume, args=(1,))
    worker.start()
    pacing.on_clock(0.035)
    time.sleep(0.05)
    assert len(ticks) == 4
    pacing.on_clock(0.0)
    worker.join(5)
    assert ticks[-1][0] == 0.0
    stop.set()
    assert pacing.wait_next(stop) is None


def test_lockstep_pacing_steps_exactly_while_paused():
    sim = {"t": 0.0}

    def cycle(t: float, period: float) -> None:
        sim["t"] = t + period  # the engine advances one period in write()

    pacing = LockstepPacing(rate=100.0, sim_time=lambda: sim["t"], real_time_factor=0.0, paused=True)
    loop = ControlLoop(cycle, pacing, 100.0)
    loop.start()
    try:
        assert pacing.step(7, timeout=10)
        assert loop.stats.cycles == 7
        assert sim["t"] == pytest.approx(0.07)
        time.sleep(0.05)
        assert loop.stats.cycles == 7, "nothing runs while paused"
        pacing.resume()
        wait_for(lambda: loop.stats.cycles > 50, 10, "free-running cycles after resume")
        assert not pacing.step(1, timeout=0.1), "stepping needs a paused simulation"
    finally:
        loop.stop()


def test_lockstep_pacing_keeps_the_rate_when_the_simulator_does_not_step():
    """An inactive in-process simulator does not advance its clock; the loop must still run at the rate
    instead of spinning (it once reached 12 kHz at a 100 Hz setting)."""
    pacing = LockstepPacing(rate=100.0, sim_time=lambda: 0.0, real_time_factor=1.0)
    loop = ControlLoop(lambda t, p: None, pacing, 100.0)
    loop.start()
    try:
        wait_for(lambda: loop.stats.cycles >= 20, 10, "cycles")
        time.sleep(0.3)
        rate = loop.statistics()["achieved_rate"]
        assert rate < 150.0, f"{rate:.0f} cycles/s at a 100 Hz setting"
    finally:
        loop.stop()


def test_wall_pacing_and_overrun_accounting():
    overruns: list[float] = []

    def slow_then_fast(t: float, period: float) -> None:
        if loop.stats.cycles == 2:
            time.sleep(0.03)  # three periods of 10 ms: an overrun

    pacing = WallPacing(100.0, time.monotonic)
    loop = ControlLoop(slow_then_fast, pacing, 100.0, on_overrun=overruns.append)
    loop.start()
    try:
        wait_for(lambda: loop.stats.cycles >= 10, 10, "ten cycles")
    finally:
        loop.stop()
    stats = loop.statistics()
    assert stats["overruns"] >= 1 and len(overruns) >= 1 and overruns[0] >= 0.03
    assert stats["max"] >= 0.03 and stats["target_rate"] == 100.0
    assert set(stats) >= {"cycles", "overruns", "overrun_ratio", "mean", "p99", "max", "achieved_rate"}
    loop.reset_statistics()
    assert loop.statistics()["cycles"] == 0


def test_a_stalled_cycle_prints_every_thread_only_when_asked(tmp_path):
    """ROBOT_CORE_STALL_DUMP: a cycle running past it prints every thread's stack (from faulthandler's own thread,
    so a stalled thread holding the interpreter cannot stop it); a cycle within it prints nothing."""
    import subprocess
    import sys

    script = tmp_path / "stall.py"
    script.write_text(
        "import sys, time\n"
        "from robot_core.ros.control_loop import ControlLoop, WallPacing\n"
        "def cycle(t, period):\n"
        "    time.sleep(float(sys.argv[1]))\n"
        "loop = ControlLoop(cycle, WallPacing(100.0, time.monotonic), 100.0)\n"
        "loop.start()\n"
        "time.sleep(0.2 + 2 * float(sys.argv[1]))\n"
        "print('stopped', loop.stop(), flush=True)\n")
    env = {**os.environ, "ROBOT_CORE_STALL_DUMP": "0.1"}

    def run(cycle_seconds: float) -> str:
        out = subprocess.run([sys.executable, str(script), str(cycle_seconds)], env=env, capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return out.stderr

    stalled = run(0.4)
    assert "Timeout (0:00:00.1" in stalled and "in cycle" in stalled and "in _run" in stalled, stalled
    assert "Timeout" not in run(0.001)


# ---------------------------------------------------------------------------------------------- conversions
def test_conversions_keep_values_and_stamps():
    pytest.importorskip("sensor_msgs")
    from robot_core.control.lifecycle import State
    from robot_core.control.messages import ControllerStateData, JointStateData
    from robot_core.ros import ros_conversions as conv

    assert (conv.to_time(1.9999999999).sec, conv.to_time(1.9999999999).nanosec) == (2, 0)
    assert conv.time_to_seconds(conv.to_duration(2.25)) == 2.25
    assert conv.to_time(float("nan")).sec == 0
    msg = conv.joint_state(JointStateData(["a", "b"], np.array([1.0, 2.0]), [0.5, np.nan], [], 3.5))
    assert list(msg.name) == ["a", "b"] and list(msg.position) == [1.0, 2.0]
    assert msg.velocity[0] == 0.5 and np.isnan(msg.velocity[1]) and len(msg.effort) == 0
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (3, 500_000_000)
    state = conv.controller_state(ControllerStateData("jtc", State.ACTIVE, "t/T", update_rate=1_000_000,
                                                      claimed_interfaces=["j/position"]))
    assert state.state == "active" and state.update_rate == 65535 and list(state.claimed_interfaces) == ["j/position"]
    assert conv.lifecycle_state(State.INACTIVE).id == 2


def test_parameter_overrides_with_empty_lists_are_declared(tmp_path):
    """rclpy refuses a whole node when a YAML value is [] under automatic declaration; we declare one by one."""
    rclpy = pytest.importorskip("rclpy")
    from rclpy.context import Context

    from robot_core.ros.parameters import declare_overrides, parameter_value, parameters_as_dict

    params = tmp_path / "p.yaml"
    params.write_text("ctrl:\n  ros__parameters:\n    joints: [a, b]\n    extra_joints: []\n"
                      "    gains:\n      a: {p: 2.0}\n")
    context = Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("ctrl", context=context, allow_undeclared_parameters=True,
                                 cli_args=["--ros-args", "--params-file", str(params)])
        declare_overrides(node)
        values = parameters_as_dict(node)
        assert values == {"joints": ["a", "b"], "extra_joints": [], "gains.a.p": 2.0}
        assert parameter_value(node, "gains.a.p") == 2.0 and parameter_value(node, "missing", 7) == 7
        node.destroy_node()
    finally:
        context.try_shutdown()


def test_outbox_duty_cycle_rests_between_batches():
    stamps: list[float] = []
    box = Outbox("duty_outbox", duty=0.5)
    try:
        def work(_: object) -> None:
            stamps.append(time.perf_counter())
            time.sleep(0.02)

        box.post("a", work, 1)
        wait_for(lambda: stamps, 5, "the first batch")
        box.post("a", work, 2)
        wait_for(lambda: len(stamps) == 2, 5, "the second batch")
        assert stamps[1] - stamps[0] >= 0.04, "a 20 ms batch is followed by at least 20 ms of rest at duty 0.5"
    finally:
        box.close()
    with pytest.raises(ValueError):
        Outbox("bad", duty=0.0)


def test_controllers_inherit_parameter_arguments_but_not_remaps():
    from robot_core.ros.parameters import inheritable_ros_args

    argv = ["controller_manager", "--ros-args", "-r", "__node:=cm1", "--params-file", "/c.yaml", "-p", "a:=1",
            "--log-level", "debug", "--remap", "x:=y", "--param=b:=2", "--", "plain", "-p", "not_ros:=1",
            "--ros-args", "--params-file=/d.yaml", "-e", "/enclave", "--disable-rosout-logs"]
    assert inheritable_ros_args(argv) == ["--params-file", "/c.yaml", "-p", "a:=1", "-p", "b:=2",
                                          "--params-file", "/d.yaml"]
    assert inheritable_ros_args(["cm", "-p", "x:=1"]) == []
