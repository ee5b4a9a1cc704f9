"""HardwareIo's /clock: taken by a thread waiting on that one subscription, fed to every listener and to the
shared node clocks, and stopped cleanly (when the process starts making its own time, and at shutdown)."""

from __future__ import annotations

import threading

import pytest
from ros_harness import wait_for

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros


def clock_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "hardware_io_clock" and t.is_alive()]


def test_clock_reaches_listeners_and_shared_node_clocks_and_its_thread_stops(ros):
    from rclpy.parameter import Parameter
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from rosgraph_msgs.msg import Clock

    from robot_core.ros.hardware_io import HardwareIo

    before = len(clock_threads())
    io = HardwareIo(ros.context, "_hw_io_test")
    try:
        seen: list[float] = []
        io.on_clock(seen.append)
        user = ros.node("clock_user", parameter_overrides=[Parameter("use_sim_time", value=True)])
        io.share_clock(user)
        assert len(clock_threads()) == before + 1
        pub = ros.node("clock_source").create_publisher(
            Clock, "/clock", QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
        msg = Clock()

        def advanced() -> bool:
            msg.clock.sec += 1
            pub.publish(msg)
            return len(seen) > 0 and user.get_clock().now().nanoseconds >= 1_000_000_000

        wait_for(advanced, 30, "/clock at the listener and at the node's clock")
        assert seen == sorted(seen) and seen[-1] >= 1.0
        io.use_own_clock()  # this process makes the time now: the thread ends, the subscription goes
        assert len(clock_threads()) == before
        assert io._clock_sub is None
        count = len(seen)
        for _ in range(20):
            msg.clock.sec += 1
            pub.publish(msg)
        io.deliver_clock(msg)  # what the embedded simulator does instead
        assert len(seen) == count + 1 and seen[-1] == float(msg.clock.sec)
    finally:
        assert io.shutdown()
    assert len(clock_threads()) == before


def test_node_clocks_advance_once_per_period_and_catch_up_when_clock_goes_quiet(ros):
    """With ``node_clock_period`` the shared node clocks take /clock at most once per period of its time (each
    update wakes the manager's executor once per action server), listeners every message, and the node clocks
    catch up with the last message once /clock stops."""
    from rclpy.parameter import Parameter
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from rosgraph_msgs.msg import Clock

    from robot_core.ros.hardware_io import HardwareIo

    io = HardwareIo(ros.context, "_hw_io_period_test")
    try:
        io.node_clock_period = 10.0
        seen: list[float] = []
        io.on_clock(seen.append)
        user = ros.node("period_user", parameter_overrides=[Parameter("use_sim_time", value=True)])
        io.share_clock(user)
        pub = ros.node("period_source").create_publisher(
            Clock, "/clock", QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
        def at(seconds: float) -> Clock:
            m = Clock()
            m.clock.sec, m.clock.nanosec = int(seconds), round(seconds % 1 * 1e9)
            return m

        # the process's own time (embedded simulator): no /clock thread, so no catch-up between these calls
        own = HardwareIo(ros.context, "_hw_io_own_time", clock_from_topic=False)
        try:
            own.node_clock_period = 10.0
            own_seen: list[float] = []
            own.on_clock(own_seen.append)
            own_user = ros.node("own_time_user", parameter_overrides=[Parameter("use_sim_time", value=True)])
            own.share_clock(own_user)
            now = own_user.get_clock().now
            own.deliver_clock(at(50.0))
            own.deliver_clock(at(55.0))  # within the period: the listener only
            assert now().nanoseconds == 50_000_000_000 and own_seen[-1] == 55.0
            own.deliver_clock(at(60.0))
            assert now().nanoseconds == 60_000_000_000
            own.deliver_clock(at(20.0))  # back in time (a reset): at once
            assert now().nanoseconds == 20_000_000_000
        finally:
            assert own.shutdown()

        msg = Clock()
        msg.clock.sec = 100

        def first_delivered() -> bool:
            pub.publish(msg)
            return user.get_clock().now().nanoseconds == 100_000_000_000

        wait_for(first_delivered, 30, "the first /clock at the node's clock")
        for k in range(1, 6):  # 100.5 ... 102.5 s: within the period of the last update
            msg.clock.sec, msg.clock.nanosec = 100 + k // 2, 500_000_000 * (k % 2)
            pub.publish(msg)
        wait_for(lambda: seen and seen[-1] == 102.5, 30, "every message at the listener")
        # /clock is quiet now: within the wait set's 0.1 s timeout the node clock takes the last message
        wait_for(lambda: user.get_clock().now().nanoseconds == 102_500_000_000, 10, "the node clock catching up")
    finally:
        assert io.shutdown()
