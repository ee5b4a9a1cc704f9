"""Queue depth of our action servers' goal, cancel and result services.

rclpy gives an action server's three services a keep-last-10 queue and takes one request per wake-up, so of a
burst of goals (a client replanning fast, a script sending many back-to-back) all but about ten were lost
unanswered and their clients waited forever. Every action server of robot_core takes its service QoS from here.
"""

from __future__ import annotations

from typing import Any

GOAL_QUEUE_DEPTH = 100  # goal / cancel / result requests an action server holds (rclpy's default: 10)


def deep_action_queues() -> dict[str, Any]:
    """Keyword arguments for ``rclpy.action.ActionServer``: reliable goal, result and cancel services holding
    GOAL_QUEUE_DEPTH requests each."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    deep = QoSProfile(depth=GOAL_QUEUE_DEPTH, reliability=ReliabilityPolicy.RELIABLE)
    return {"goal_service_qos_profile": deep, "result_service_qos_profile": deep,
            "cancel_service_qos_profile": deep}
