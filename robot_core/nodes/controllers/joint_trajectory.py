"""ROS side of joint_trajectory_controller/JointTrajectoryController (and the computed-torque controller).

* action ``~/follow_joint_trajectory`` (control_msgs/action/FollowJointTrajectory): goals are validated when
  they arrive; an invalid goal is rejected and the reason logged (upstream behaviour). With the node
  parameter ``reject_invalid_goals: false`` it is instead accepted and aborted at once with its error code and
  string, so a client sees *why* (INVALID_JOINTS, OLD_HEADER_TIMESTAMP, ...). A new goal preempts the running
  one (aborted, INVALID_GOAL); cancel -> canceled, and the robot holds. Feedback is published every
  ``action_monitor_period`` seconds (node parameter, default 0.05 as upstream).
* topic ``~/joint_trajectory`` (trajectory_msgs/JointTrajectory): same trajectories without a result.
* ``~/controller_state`` (control_msgs/JointTrajectoryControllerState) every update.
* ``~/accepted_trajectory`` (trajectory_msgs/JointTrajectory, reliable, transient local, depth 1): the whole
  trajectory of each goal the controller accepts (action or topic), as it was sent, so a viewer (robot-core view)
  or ``ros2 topic echo`` sees the goal the moment it arrives. Upstream's controller has no such topic: an action's
  goal travels on the action's services, which no topic repeats (our addition; doc/view.md).
* service ``~/query_state`` (control_msgs/srv/QueryTrajectoryState).

The action's goal, cancel and result services hold GOAL_QUEUE_DEPTH requests (robot_core.ros.action_qos; rclpy's
default is 10): a burst of goals is answered in full, each new one preempting the one before.

Each action goal's execute callback blocks one executor thread (reentrant group) until the core reports its
result; results are collected from the core's ``poll_results`` and handed to the right goal.
"""

from __future__ import annotations

import threading
import time as _time
from functools import partial
from typing import Any

from robot_core.control.controller_base import Deferred, resolve
from robot_core.control.controllers.joint_trajectory import (
    ErrorCode,
    GoalRejection,
    GoalResult,
    GoalStatus,
    GoalTolerances,
    JointTolerance,
    JtcFeedback,
    JtcStateData,
    PointData,
)
from robot_core.control.lifecycle import State
from robot_core.control.trajectory import JointTrajectory, TrajectoryPoint
from robot_core.nodes.controllers.base import ControllerAdapter
from robot_core.ros import ros_conversions as conv
from robot_core.ros.action_qos import action_server_options
from robot_core.ros.message_templates import JtcStateBytes
from robot_core.ros.parameters import parameter_value


def trajectory_from_msg(msg: Any) -> JointTrajectory:
    """trajectory_msgs/JointTrajectory -> core JointTrajectory (header stamp 0 = start when taken over)."""
    return JointTrajectory(
        joint_names=list(msg.joint_names),
        points=[TrajectoryPoint(list(p.positions), list(p.velocities), list(p.accelerations), list(p.effort),
                                conv.time_to_seconds(p.time_from_start)) for p in msg.points],
        start_time=conv.time_to_seconds(msg.header.stamp))


def tolerances_from_goal(goal: Any) -> GoalTolerances:
    def tol(entries: Any) -> list[JointTolerance]:
        return [JointTolerance(e.name, float(e.position), float(e.velocity), float(e.acceleration)) for e in entries]

    return GoalTolerances(tol(goal.path_tolerance), tol(goal.goal_tolerance),
                          conv.time_to_seconds(goal.goal_time_tolerance))


def point_msg(p: PointData) -> Any:
    from trajectory_msgs.msg import JointTrajectoryPoint

    msg = JointTrajectoryPoint()
    msg.positions = conv.float_array(p.positions)
    msg.velocities = conv.float_array(p.velocities)
    msg.accelerations = conv.float_array(p.accelerations)
    msg.effort = conv.float_array(p.effort)
    msg.time_from_start = conv.to_duration(p.time_from_start)
    return msg


def state_msg(data: JtcStateData) -> Any:
    """The message built field by field: what the published JtcStateBytes must decode to (tested)."""
    from control_msgs.msg import JointTrajectoryControllerState

    msg = JointTrajectoryControllerState()
    msg.header.stamp = conv.to_time(data.stamp)
    msg.joint_names = list(data.joint_names)
    msg.reference = point_msg(data.reference)
    msg.feedback = point_msg(data.feedback)
    msg.error = point_msg(data.error)
    msg.output = point_msg(data.output)
    msg.speed_scaling_factor = float(data.speed_scaling_factor)
    return msg


def feedback_msg(fb: JtcFeedback) -> Any:
    from control_msgs.action import FollowJointTrajectory

    msg = FollowJointTrajectory.Feedback()
    msg.header.stamp = conv.to_time(fb.stamp)
    msg.joint_names = list(fb.joint_names)
    msg.desired = point_msg(fb.desired)
    msg.actual = point_msg(fb.actual)
    msg.error = point_msg(fb.error)
    msg.index = int(fb.index)
    return msg


def _publish_feedback(goal_handle: Any, fb: JtcFeedback | Deferred) -> None:
    if goal_handle.is_active:
        goal_handle.publish_feedback(feedback_msg(resolve(fb)))


class JointTrajectoryAdapter(ControllerAdapter):
    types = ("joint_trajectory_controller/JointTrajectoryController", "robot_core/ComputedTorqueController")

    def create_entities(self) -> None:
        from control_msgs.action import FollowJointTrajectory
        from control_msgs.msg import JointTrajectoryControllerState
        from control_msgs.srv import QueryTrajectoryState
        from rclpy.action import ActionServer
        from rclpy.callback_groups import ReentrantCallbackGroup
        from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

        self._results: dict[int, GoalResult] = {}
        self._staged_goals: dict[int, int | GoalRejection] = {}  # id(goal message) -> core goal id
        self._results_lock = threading.Lock()
        self._closing = threading.Event()
        self._executing = 0
        group = ReentrantCallbackGroup()
        self.add_output("controller_state", JointTrajectoryControllerState, "~/controller_state", JtcStateBytes())
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self._accepted_pub = self.node.create_publisher(JointTrajectoryMsg, "~/accepted_trajectory", latched)
        self.track(self._accepted_pub, self.node.destroy_publisher)
        self.track(self.node.create_subscription(JointTrajectoryMsg, "~/joint_trajectory", self._on_trajectory, 10,
                                                 callback_group=group), self.node.destroy_subscription)
        self.track(self.node.create_service(QueryTrajectoryState, "~/query_state", self._on_query_state,
                                            callback_group=group), self.node.destroy_service)
        # deep goal / result / cancel queues taken in arrival order (robot_core.ros.action_qos): a burst of goals is
        # answered in full and the newest wins
        server = ActionServer(self.node, FollowJointTrajectory, "~/follow_joint_trajectory",
                              execute_callback=self._execute, goal_callback=self._on_goal,
                              cancel_callback=self._on_cancel, **action_server_options())
        self.track(server, self._close_action_server)

    # ------------------------------------------------------------------ action
    def _reject_invalid(self) -> bool:
        return bool(parameter_value(self.node, "reject_invalid_goals", True))

    def _on_goal(self, goal: Any) -> Any:
        """Validate and hand the goal to the controller *before* answering, so a client that sees "accepted"
        knows the controller already has it (rclpy answers before the accepted/execute callbacks run)."""
        from rclpy.action import GoalResponse

        self.log.info("Received new action goal")
        if self.controller.state != State.ACTIVE:
            self.log.error("Can't accept new action goals. Controller is not running.")
            return GoalResponse.REJECT
        if len(goal.multi_dof_trajectory.joint_names) or len(goal.multi_dof_trajectory.points):
            self.log.error("Rejected goal: multi-DOF trajectories are not supported by this controller")
            return GoalResponse.REJECT
        trajectory, tolerances = trajectory_from_msg(goal.trajectory), tolerances_from_goal(goal)
        with self.between_cycles():
            accepted = self.controller.accept_goal(trajectory, tolerances)
        if isinstance(accepted, GoalRejection):
            self.log.error(f"Rejected goal ({accepted.error_code.name}): {accepted.error_string}")
            if self._reject_invalid():
                return GoalResponse.REJECT
        with self._results_lock:
            self._staged_goals[id(goal)] = accepted
        if not isinstance(accepted, GoalRejection):
            self._accepted_pub.publish(goal.trajectory)
        return GoalResponse.ACCEPT

    def _on_cancel(self, _goal_handle: Any) -> Any:
        from rclpy.action import CancelResponse

        self.log.info("Got request to cancel goal")
        return CancelResponse.ACCEPT

    def _execute(self, goal_handle: Any) -> Any:
        from control_msgs.action import FollowJointTrajectory

        result = FollowJointTrajectory.Result()
        with self._results_lock:
            accepted = self._staged_goals.pop(id(goal_handle.request), None)
        if accepted is None:  # not seen by _on_goal (should not happen): stage it now
            goal = goal_handle.request
            accepted = self.controller.accept_goal(trajectory_from_msg(goal.trajectory), tolerances_from_goal(goal))
        if isinstance(accepted, GoalRejection):
            result.error_code, result.error_string = int(accepted.error_code), accepted.error_string
            self.log.error(f"Goal aborted ({accepted.error_code.name}): {accepted.error_string}")
            goal_handle.abort()
            return result
        goal_id = accepted
        self.log.info("Accepted new action goal")
        period = float(parameter_value(self.node, "action_monitor_period", 0.05))
        cancel_sent = False
        last_stamp = None
        with self._results_lock:
            self._executing += 1
        try:
            while True:
                with self.between_cycles():
                    done = self._take_result(goal_id)
                    if done is None and goal_handle.is_cancel_requested and not cancel_sent:
                        cancel_sent = True
                        self.controller.cancel(goal_id)
                fb = self.controller.feedback(goal_id)  # built from the cycle's arrays here, outside the gate
                if done is not None:
                    break
                if self._closing.is_set():
                    done = GoalResult(goal_id, GoalStatus.ABORTED, ErrorCode.INVALID_GOAL,
                                      "Controller was cleaned up or unloaded.")
                    break
                if fb is not None and fb.stamp != last_stamp and goal_handle.is_active:
                    last_stamp = fb.stamp
                    # through the outbox, like every other output: never built in the middle of a control cycle
                    self.outbox.post((self.name, "feedback", goal_id), partial(_publish_feedback, goal_handle), fb)
                _time.sleep(period)
        finally:
            with self._results_lock:
                self._executing -= 1
        result.error_code, result.error_string = int(done.error_code), done.error_string
        if done.status == GoalStatus.SUCCEEDED:
            goal_handle.succeed()
        elif done.status == GoalStatus.CANCELED and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:
            goal_handle.abort()
        if done.status == GoalStatus.ABORTED:  # (rclpy refuses two severities from one call site)
            self.log.warning(f"Goal aborted: {done.error_string}")
        else:
            self.log.info(f"Goal {done.status.value}: {done.error_string}")
        return result

    def _take_result(self, goal_id: int) -> GoalResult | None:
        with self._results_lock:
            for r in self.controller.poll_results():
                self._results[r.goal_id] = r
            return self._results.pop(goal_id, None)

    def _close_action_server(self, server: Any) -> None:
        self._closing.set()
        deadline = _time.monotonic() + 2.0
        while self._executing and _time.monotonic() < deadline:
            _time.sleep(0.01)
        server.destroy()

    # ------------------------------------------------------------------ topic and service
    def _on_trajectory(self, msg: Any) -> None:
        trajectory = trajectory_from_msg(msg)
        with self.between_cycles():
            rejection = self.controller.set_trajectory(trajectory)
        if rejection is not None:
            self.log.error(f"Rejected trajectory on ~/joint_trajectory ({rejection.error_code.name}): "
                           f"{rejection.error_string}", throttle_duration_sec=1.0)
        else:
            self._accepted_pub.publish(msg)

    def _on_query_state(self, req: Any, res: Any) -> Any:
        with self.between_cycles():
            out = self.controller.query_state(conv.time_to_seconds(req.time))
        res.success, res.message = bool(out.success), out.message
        res.name = list(out.name)
        res.position = conv.float_array(out.position)
        res.velocity = conv.float_array(out.velocity)
        res.acceleration = conv.float_array(out.acceleration)
        return res
