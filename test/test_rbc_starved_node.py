"""A starved rbc node does not call a live driver stale.

Seen under a CPU hog: the rbc node, or the process it runs in, got no CPU for longer than ``stale_timeout`` while
its driver went on publishing. rclpy's executor runs a due timer before the subscriptions that became ready with
it, so the cycle woke first, judged the state topic stale with its messages still queued, and a reacher aborted
its goal on "measured 'q' ... is stale". The node below is real and gets real messages over DDS; the starvation is
made by not spinning it, and the executor's order by calling its cycle first.
"""

from __future__ import annotations

import time

import pytest
from rbc_helpers import FAKE_DRIVER, fake_driver_urdf
from ros_harness import wait_for

pytest.importorskip("rclpy")

STALE_TIMEOUT = 0.3


def test_a_starved_node_takes_its_queued_states_before_it_judges_them(context, tmp_path):
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState

    from robot_core.nodes.rbc import RbcNode

    urdf = fake_driver_urdf(tmp_path / "planar2.urdf", FAKE_DRIVER)
    node = RbcNode(context=context, parameter_overrides=[
        Parameter("urdf_path", value=str(urdf)), Parameter("stale_timeout", value=STALE_TIMEOUT)])
    driver = rclpy.create_node("starved_rbc_test_driver", context=context)
    executor = SingleThreadedExecutor(context=context)
    try:
        table = node.coupler.table
        pub = driver.create_publisher(JointState, FAKE_DRIVER, 10)
        wait_for(lambda: pub.get_subscription_count() > 0, 30, "the rbc node's state subscription")

        def send(k: int) -> None:
            pub.publish(JointState(name=["joint1", "joint2"], position=[0.1 + 1e-3 * k, -0.2]))

        # fresh while it spins
        executor.add_node(node)
        k = 0

        def fresh() -> bool:
            nonlocal k
            send(k)
            k += 1
            executor.spin_once(timeout_sec=0.02)
            return not table.stale_topics(time.monotonic()) and not any(e.stale for e in table.entries("q"))

        wait_for(fresh, 30, "q fresh while the node spins")
        executor.remove_node(node)

        # starved for twice stale_timeout while the driver publishes on
        starved_until = time.monotonic() + 2 * STALE_TIMEOUT
        while time.monotonic() < starved_until:
            send(k)
            k += 1
            time.sleep(0.02)
        time.sleep(0.1)  # the last ones delivered into the node's reader

        node._cycle()  # what the executor runs first when the starved process gets the CPU back
        now = time.monotonic()
        assert table.stale_topics(now) == [], "a live driver's queued messages were judged stale"
        assert not any(e.stale for e in table.entries("q"))
        assert not node._warned_stale, node._warned_stale
        q = [e.value for e in table.entries("q") if e.joint == "joint1"]
        assert q and q[0] > 0.1 + 1e-3 * (k - 10), (q, k)  # one of the last messages sent, not an old one
    finally:
        executor.shutdown()
        node.close_processes()
        node.destroy_node()
        driver.destroy_node()
