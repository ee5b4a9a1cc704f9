"""robot_core.ros.action_client.ActionClient against a real rclpy action server, with the goal's answer forced to
come back while rclpy 9.1.2's send_goal_async is between its two registrations of the goal's future.

Registering the feedback callback is made slow (rclpy does it between the two registrations), so the background
executor takes the server's answer before send_goal_async returns. Our client must still complete the future it
returned; rclpy's own one never completes it (checked when this test was written).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from ros_harness import RosTestContext, wait_for

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros


class _SlowDict(dict):
    """The client's feedback-callback table, slow to take an entry: rclpy 9.1.2 fills it between its two
    registrations of the goal's future, so the server's answer arrives in between."""

    def __setitem__(self, key: Any, value: Any) -> None:
        time.sleep(0.5)
        super().__setitem__(key, value)


@pytest.fixture
def ros():
    ctx = RosTestContext()
    yield ctx
    ctx.shutdown()


def test_a_goal_answered_before_send_goal_async_returns_completes_its_future(ros):
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionServer, GoalResponse

    from robot_core.ros.action_client import ActionClient

    server_node = ros.node("answers_at_once")
    ActionServer(server_node, FollowJointTrajectory, "refuser", execute_callback=lambda h: None,
                 goal_callback=lambda goal: GoalResponse.REJECT)
    client_node = ros.node("asks")
    client = ActionClient(client_node, FollowJointTrajectory, "refuser")
    assert client.wait_for_server(timeout_sec=30)
    # a first goal makes sure the server's answers reach this client (discovery) before the timed one
    first = client.send_goal_async(FollowJointTrajectory.Goal())
    wait_for(first.done, 30, "the answer to a first goal")
    client._feedback_callbacks = _SlowDict(client._feedback_callbacks)
    futures = [client.send_goal_async(FollowJointTrajectory.Goal(), feedback_callback=lambda _fb: None)
               for _ in range(3)]
    wait_for(lambda: all(f.done() for f in futures), 10, "an answer to each goal answered during send_goal_async")
    assert all(not f.result().accepted for f in futures)
