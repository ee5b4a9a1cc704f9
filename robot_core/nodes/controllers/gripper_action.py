"""ROS side of the gripper action controllers: action ``~/gripper_cmd``.

* ``parallel_gripper_action_controller/GripperActionController``: control_msgs/action/ParallelGripperCommand; the
  goal's ``command`` (sensor_msgs/JointState) names the controller's joint (or no joint) and gives one position,
  optionally one velocity and one effort (the limits for this goal).
* ``position_controllers/GripperActionController``: control_msgs/action/GripperCommand (position, max_effort).

A goal is validated and staged in the core (robot_core.control.controllers.gripper_action) before it is answered,
so ACCEPT means the controller has it and REJECT comes with a logged reason (outside the joint's range, wrong
joint, not finite), without waiting for a control cycle. A new goal preempts the running one: that one ends
aborted (rclpy cannot end a goal canceled that no client asked to cancel), its result holding where the gripper
was, and the log says "preempted by a new goal". A cancel ends the goal canceled and the gripper holds its position.
Feedback goes out every 1 / ``action_monitor_rate`` s through the manager's outbox. Requests are queued as every
action server of robot_core does (robot_core.ros.action_qos).
"""

from __future__ import annotations

import math
import threading
import time as _time
from functools import partial
from typing import Any

from robot_core.control.controllers.gripper_action import (
    GoalRejectedError,
    GoalStatus,
    GripperFeedback,
    GripperResult,
)
from robot_core.control.lifecycle import State
from robot_core.nodes.controllers.base import ControllerAdapter
from robot_core.ros.action_qos import action_server_options

PARALLEL = "parallel_gripper_action_controller/GripperActionController"
POSITION = "position_controllers/GripperActionController"


def parallel_goal(command: Any, joint: str) -> tuple[float, float | None, float | None]:
    """ParallelGripperCommand's JointState -> (position, max_effort, max_velocity); GoalRejectedError names what is
    wrong with it."""
    names = list(command.name)
    if names and names != [joint]:
        raise GoalRejectedError(f"goal names joint(s) {names}; this controller drives only '{joint}'")
    if len(command.position) != 1:
        raise GoalRejectedError(f"goal gives {len(command.position)} positions; joint '{joint}' needs exactly one")
    for field in ("velocity", "effort"):
        if len(getattr(command, field)) > 1:
            raise GoalRejectedError(f"goal gives {len(getattr(command, field))} {field} values; joint '{joint}' "
                                    f"takes at most one")
    velocity = float(command.velocity[0]) if len(command.velocity) else None
    effort = float(command.effort[0]) if len(command.effort) else None
    return float(command.position[0]), effort, velocity


def _joint_state(joint: str, position: float, effort: float) -> Any:
    from sensor_msgs.msg import JointState

    msg = JointState()
    msg.name = [joint]
    msg.position = [float(position)]
    msg.effort = [float(effort)] if math.isfinite(effort) else []
    return msg


class GripperActionAdapter(ControllerAdapter):
    types = (PARALLEL, POSITION)

    @property
    def parallel(self) -> bool:
        return self.controller.type_name == PARALLEL

    def _action_type(self) -> Any:
        from control_msgs.action import GripperCommand, ParallelGripperCommand

        return ParallelGripperCommand if self.parallel else GripperCommand

    def create_entities(self) -> None:
        from rclpy.action import ActionServer

        self._results: dict[int, GripperResult] = {}
        self._staged_goals: dict[int, int | GoalRejectedError] = {}  # id(goal message) -> core goal id
        self._results_lock = threading.Lock()
        self._closing = threading.Event()
        self._executing = 0
        server = ActionServer(self.node, self._action_type(), "~/gripper_cmd", execute_callback=self._execute,
                              goal_callback=self._on_goal, cancel_callback=self._on_cancel,
                              **action_server_options())
        self.track(server, self._close_action_server)

    # ------------------------------------------------------------------ goals
    def _stage(self, goal: Any) -> int:
        """Hand the goal to the core; GoalRejectedError says why not."""
        if self.parallel:
            position, effort, velocity = parallel_goal(goal.command, self.controller.joint)
        else:
            position, effort, velocity = float(goal.command.position), float(goal.command.max_effort), None
        with self.between_cycles():
            return self.controller.accept_goal(position, effort, velocity)

    def _on_goal(self, goal: Any) -> Any:
        from rclpy.action import GoalResponse

        if self.controller.state != State.ACTIVE:
            self.log.error(f"controller '{self.name}' is not active; goal rejected")
            return GoalResponse.REJECT
        try:
            goal_id = self._stage(goal)
        except GoalRejectedError as exc:
            self.log.error(f"goal rejected: {exc}")
            return GoalResponse.REJECT
        with self._results_lock:
            self._staged_goals[id(goal)] = goal_id
        self.log.info(f"accepted goal {goal_id}")
        return GoalResponse.ACCEPT

    def _on_cancel(self, _goal_handle: Any) -> Any:
        from rclpy.action import CancelResponse

        return CancelResponse.ACCEPT

    def _execute(self, goal_handle: Any) -> Any:
        with self._results_lock:
            goal_id = self._staged_goals.pop(id(goal_handle.request), None)
        if goal_id is None:  # not seen by _on_goal (should not happen): stage it now
            try:
                goal_id = self._stage(goal_handle.request)
            except GoalRejectedError as exc:
                self.log.error(f"goal aborted: {exc}")
                goal_handle.abort()
                return self._result_msg(None)
        period = 1.0 / max(self.controller.action_monitor_rate, 0.1)
        cancel_sent = False
        with self._results_lock:
            self._executing += 1
        try:
            while True:
                with self.between_cycles():
                    done = self._take_result(goal_id)
                    if done is None and goal_handle.is_cancel_requested and not cancel_sent:
                        cancel_sent = True
                        self.controller.cancel(goal_id)
                if done is not None:
                    break
                if self._closing.is_set():
                    done = GripperResult(goal_id, GoalStatus.ABORTED, math.nan, math.nan, False, False,
                                         "controller was cleaned up or unloaded")
                    break
                fb = self.controller.feedback()
                if fb is not None and goal_handle.is_active:
                    self.outbox.post((self.name, "feedback", goal_id), partial(self._publish_feedback, goal_handle),
                                     fb)
                _time.sleep(period)
        finally:
            with self._results_lock:
                self._executing -= 1
        if done.status == GoalStatus.SUCCEEDED:
            goal_handle.succeed()
        elif done.status == GoalStatus.CANCELED and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:  # aborted, or preempted by a newer goal
            goal_handle.abort()
        self.log.info(f"goal {goal_id} {done.status.value}: {done.message}")
        return self._result_msg(done)

    def _take_result(self, goal_id: int) -> GripperResult | None:
        with self._results_lock:
            for r in self.controller.poll_results():
                self._results[r.goal_id] = r
            return self._results.pop(goal_id, None)

    # ------------------------------------------------------------------ messages
    def _result_msg(self, done: GripperResult | None) -> Any:
        result = self._action_type().Result()
        if done is None:
            return result
        if self.parallel:
            result.state = _joint_state(self.controller.joint, done.position, done.effort)
        else:
            result.position, result.effort = float(done.position), float(done.effort)
        result.stalled, result.reached_goal = bool(done.stalled), bool(done.reached_goal)
        return result

    def _publish_feedback(self, goal_handle: Any, fb: GripperFeedback) -> None:
        if not goal_handle.is_active:
            return
        msg = self._action_type().Feedback()
        if self.parallel:
            msg.state = _joint_state(self.controller.joint, fb.position, fb.effort)
        else:
            msg.position, msg.effort = float(fb.position), float(fb.effort)
            msg.stalled, msg.reached_goal = bool(fb.stalled), bool(fb.reached_goal)
        goal_handle.publish_feedback(msg)

    def _close_action_server(self, server: Any) -> None:
        self._closing.set()
        deadline = _time.monotonic() + 2.0
        while self._executing and _time.monotonic() < deadline:
            _time.sleep(0.01)
        server.destroy()
