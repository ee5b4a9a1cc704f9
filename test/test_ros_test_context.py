"""The tests' RosTestContext leaves nothing of its DDS participant behind when it shuts down, with action clients
and servers on its nodes too (rclpy's destroy_node leaves those alive, and with them the node and the participant,
until the garbage collector frees them: a full run found eight participants of ended tests in one pytest process,
each taking part in every later test's discovery, and the Fast DDS deadlock froze one of them)."""

from __future__ import annotations

import gc
import os

import pytest
from ros_harness import RosTestContext

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros


def event_threads() -> int:
    """Fast DDS runs one event thread ("dds.ev.<n>") per participant of this process."""
    count = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as f:
                count += f.read().startswith("dds.ev")
        except OSError:  # the thread ended meanwhile
            continue
    return count


def test_shutdown_frees_the_participant_with_action_clients_and_servers_on_its_nodes():
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient, ActionServer
    from std_msgs.msg import String

    gc.collect()
    before = event_threads()
    gc.disable()  # only the shutdown may free it, not a collection that happens to run
    try:
        for k in range(3):
            ros = RosTestContext()
            node = ros.node(f"context_user_{k}")
            assert event_threads() == before + 1
            node.create_publisher(String, "context_check", 10)
            node.create_subscription(String, "context_check", lambda _m: None, 10)
            client = ActionClient(node, FollowJointTrajectory, "/context_check/follow_joint_trajectory")
            server = ActionServer(node, FollowJointTrajectory, "/context_check/follow_joint_trajectory",
                                  execute_callback=lambda goal: goal.succeed())
            ros.shutdown()
            assert event_threads() == before, (
                f"context {k}: its participant outlived the shutdown (an action client or server kept it)")
            del client, server, node, ros
    finally:
        gc.enable()


def test_shutdown_leaves_a_context_undestroyed_while_the_middleware_is_deadlocked():
    """Destroying anything of a deadlocked participant blocks for good while holding the interpreter lock
    (eProsima/Fast-DDS#6502): the shutdown must not try. Here a thread in the kernel state of that deadlock's event
    thread stands in for it; once it is gone, the same context shuts down for real."""
    import ros_harness
    from blocked_thread import thread_blocked_on_a_mutex

    ros = RosTestContext()
    node = ros.node("deadlock_probe_user")
    try:
        with thread_blocked_on_a_mutex("dds.ev.test"), pytest.warns(RuntimeWarning, match="Fast-DDS#6502"):
            ros.shutdown()
        assert ros_harness.ABANDONED_CONTEXTS[-1] == (ros, [node])
        assert node.get_name() == "deadlock_probe_user"  # not destroyed: this raises on a destroyed node
        assert ros.context.ok()
    finally:
        if ros_harness.ABANDONED_CONTEXTS and ros_harness.ABANDONED_CONTEXTS[-1][0] is ros:
            ros_harness.ABANDONED_CONTEXTS.pop()
        ros._shut_down = False
        ros.nodes = [node]
        ros.shutdown()
    assert not ros.context.ok()
