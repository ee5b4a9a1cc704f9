"""rclpy's ActionClient with a ``send_goal_async`` that cannot lose the server's answer.

The pinned rclpy (9.1.2) registers a goal's pending future under the client's lock and then, outside the lock,
registers a second, fresh future for the same request in its place. An answer the executor takes in between
completes the first future, which the caller never sees: the caller's future then never completes, or its
done-callback finds the request already gone and raises ``ValueError: list.remove(x)`` (both seen in our suite
under a CPU hog; upstream ros2/rclpy#1123). Here one future is registered, under the lock, before the answer can
be taken (the executor takes answers under the same lock). Every action client of robot_core and of its tests is
this class.

Each client also gets a callback group of its own unless given one: an action client destroyed while an executor
thread takes its feedback makes rclpy's handler raise after the group was entered and before it is left, which
leaves that group busy for good. In the node's default group that silenced every other client and subscription of
the node (a demo run lost all its later service answers so); in its own group only the dead client is affected.

And rclpy adds the client to its node before it makes the client's lock and logger: an executor thread building
its wait set in that moment met a client without ``_lock``, and the thread died (the view's executor, in a full
test run, after which the page never updated). Both are made before rclpy's constructor runs.
"""

from __future__ import annotations

import threading
from typing import Any

from rclpy.action import ActionClient as _RclpyActionClient
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.task import Future


class ActionClient(_RclpyActionClient):
    def __init__(self, node: Any, action_type: Any, action_name: str, **kwargs: Any):
        if kwargs.get("callback_group") is None:
            kwargs["callback_group"] = MutuallyExclusiveCallbackGroup()
        self._lock = threading.Lock()
        self._logger = node.get_logger().get_child("action_client")
        super().__init__(node, action_type, action_name, **kwargs)

    def send_goal_async(self, goal: Any, feedback_callback: Any = None, goal_uuid: Any = None) -> Future:
        """As rclpy's, with the goal's future registered once, atomically with sending the request."""
        if not isinstance(goal, self._action_type.Goal):
            raise TypeError(f"expected a goal of type {self._action_type.Goal}, got {type(goal)}")
        request = self._action_type.Impl.SendGoalService.Request()
        request.goal_id = goal_uuid if goal_uuid is not None else self._generate_random_uuid()
        request.goal = goal
        future: Future = Future()
        with self._lock:
            if feedback_callback is not None:  # before sending: feedback may come right after the answer
                self._feedback_callbacks[bytes(request.goal_id.uuid)] = feedback_callback
            sequence = self._client_handle.send_goal_request(request)
            if sequence in self._pending_goal_requests:
                raise RuntimeError(f"goal request {sequence} is already pending")
            self._pending_goal_requests[sequence] = future
            self._goal_sequence_number_to_goal_id[sequence] = request.goal_id
            future.add_done_callback(self._remove_pending_goal_request)
            self.add_future(future)
        return future
