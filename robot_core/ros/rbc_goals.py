"""The actions of one RBC reacher: goal in, feedback and result out, on whatever node hosts them.

One class serves both ways an instance runs: in the rbc process (the target is the core instance itself, on the
instance's own node, under the coupler's lock) and as a process (the target is the coupler's
:class:`robot_core.rbc.goal_channel.GoalProxy`, on the rbc node's helper node, so the action server outlives
the process and a killed reacher's goal is answered ABORTED with the reason). Both call ``start_goal``,
``status``, ``cancel`` and ``label`` on the target and read its status the same way.

Per reacher type (robot_core.ros.rbc_messages.actions_for): JR ``<prefix>/reach`` (JointReach) and
``<prefix>/action`` (rbc_actions/JointReacher), VF ``reach`` (CartesianReach) and ``action`` (rbc_actions/VF),
CS ``apply`` (ApplyContact). Both actions of an instance drive the same target, so a goal on one pre-empts a
goal running on the other. A goal the core refuses is rejected, its reason logged and kept in
``last_rejection``. Cancel stops the reacher. The goal, cancel and result services hold GOAL_QUEUE_DEPTH
requests (robot_core.ros.action_qos).
"""

from __future__ import annotations

import threading
from typing import Any

from rclpy.action import ActionServer, CancelResponse, GoalResponse

from robot_core.rbc.errors import RbcError
from robot_core.rbc.instance import ABORTED, ACTIVE, CANCELED, SUCCEEDED
from robot_core.ros.action_qos import action_server_options
from robot_core.ros.rbc_messages import ActionSpec, actions_for


class GoalServer:
    """Action servers of one reacher (``target``: an RbcInstance or a GoalProxy) on ``node``, named
    ``<prefix>/<suffix>``; every touch of the target happens under ``lock``."""

    def __init__(self, node: Any, target: Any, lock: threading.Lock, prefix: str, feedback_period: float = 0.05):
        self.node = node
        self.target = target
        self._lock = lock
        self._period = feedback_period
        self._closing = threading.Event()
        self._pending: dict[int, tuple[Any, int]] = {}  # id(goal message) -> (message, core goal id)
        self._running: set[int] = set()  # goals whose execute callback has not returned yet
        self.last_rejection = ""
        self.actions: list[ActionServer] = []
        for spec in actions_for(target.TYPE_NAME):
            try:
                action_type = spec.action_type()
            except ImportError as exc:  # an environment set up before the package existed: serve the others
                node.get_logger().warning(f"action '{prefix}/{spec.suffix}' ({spec.module}/{spec.type_name}) not "
                                          f"served: {exc}; run the set-up (make setup) to build it")
                continue
            self.actions.append(ActionServer(
                node, action_type, f"{prefix}/{spec.suffix}",
                execute_callback=lambda handle, spec=spec: self._execute(spec, handle),
                goal_callback=lambda goal, spec=spec: self._on_goal(spec, goal),
                cancel_callback=lambda _h: CancelResponse.ACCEPT, **action_server_options()))

    @property
    def executing(self) -> int:
        return len(self._running)

    def active(self) -> bool:
        """The target has a running goal (whichever action started it)."""
        with self._lock:
            return self.target.status().state == ACTIVE

    def _on_goal(self, spec: ActionSpec, goal: Any) -> GoalResponse:
        if self._closing.is_set():
            return GoalResponse.REJECT
        try:
            core_goal = spec.to_goal(goal)
            with self._lock:
                gid = self.target.start_goal(core_goal)
                self._pending[id(goal)] = (goal, gid)
        except (RbcError, ValueError, KeyError) as exc:
            self.last_rejection = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
            self.node.get_logger().warning(f"goal rejected: {self.last_rejection}")
            return GoalResponse.REJECT
        except Exception as exc:
            self.last_rejection = f"{self.target.label()}: {type(exc).__name__}: {exc}"
            self.node.get_logger().error(f"goal rejected: {self.last_rejection}")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _execute(self, spec: ActionSpec, handle: Any) -> Any:
        self._running.add(id(handle))
        try:
            return self._run_goal(spec, handle)
        finally:
            self._running.discard(id(handle))

    def _run_goal(self, spec: ActionSpec, handle: Any) -> Any:
        entry = self._pending.pop(id(handle.request), None)
        if entry is None or entry[0] is not handle.request:
            handle.abort()
            return spec.result(False, f"{self.target.label()}: goal was not started", {})
        gid = entry[1]
        last_feedback: dict[str, Any] | None = None
        while True:
            closing = self._closing.wait(self._period)
            with self._lock:
                st = self.target.status()
                if st.goal_id != gid:
                    state, message, feedback, result = ABORTED, "preempted by a newer goal", {}, {}
                elif st.state == ACTIVE and (closing or handle.is_cancel_requested):
                    self.target.cancel()
                    if closing:
                        state, message = ABORTED, f"{self.target.label()} was destroyed"
                    else:
                        state, message = CANCELED, "canceled"
                    feedback, result = {}, dict(st.result)
                else:
                    state, message, feedback, result = st.state, st.message, dict(st.feedback), dict(st.result)
            if state != ACTIVE:
                break
            if feedback and feedback != last_feedback:
                handle.publish_feedback(spec.feedback(feedback))
                last_feedback = feedback
        if state == SUCCEEDED:
            handle.succeed()
        elif state == CANCELED and handle.is_cancel_requested:
            handle.canceled()
        else:
            handle.abort()
        return spec.result(state == SUCCEEDED, message, result)

    def close(self) -> None:
        """Stop serving: running goals abort with "destroyed", new goals are rejected."""
        self._closing.set()

    def destroy(self) -> None:
        for action in self.actions:
            action.destroy()
        self.actions = []
