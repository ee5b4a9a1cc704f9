"""ROS side of pid_controller/PidController.

``~/reference`` (control_msgs/MultiDOFCommand) sets the references, ``~/measured_state`` (MultiDOFCommand)
the feedback when ``use_external_measured_states`` is true, and ``~/controller_state``
(control_msgs/MultiDOFStateStamped) reports reference, feedback, error and output per DOF each update.
"""

from __future__ import annotations

from typing import Any

from robot_core.control.errors import ControlError
from robot_core.nodes.controllers.base import ControllerAdapter
from robot_core.ros import ros_conversions as conv


class PidControllerAdapter(ControllerAdapter):
    types = ("pid_controller/PidController",)

    def create_entities(self) -> None:
        from control_msgs.msg import MultiDOFCommand, MultiDOFStateStamped

        self.add_output("controller_state", MultiDOFStateStamped, "~/controller_state", conv.multi_dof_state)
        self.track(self.node.create_subscription(MultiDOFCommand, "~/reference", self._on_reference, 10),
                   self.node.destroy_subscription)
        if getattr(self.controller, "use_external", False):
            self.track(self.node.create_subscription(MultiDOFCommand, "~/measured_state", self._on_measured, 10),
                       self.node.destroy_subscription)

    def _on_reference(self, msg: Any) -> None:
        try:
            with self.between_cycles():
                self.controller.set_reference(list(msg.dof_names), msg.values, msg.values_dot)
        except ControlError as exc:
            self.log.warning(f"dropped a reference on ~/reference: {exc}", throttle_duration_sec=1.0)

    def _on_measured(self, msg: Any) -> None:
        try:
            with self.between_cycles():
                self.controller.set_measured_state(list(msg.dof_names), msg.values, msg.values_dot)
        except ControlError as exc:
            self.log.warning(f"dropped a measurement on ~/measured_state: {exc}", throttle_duration_sec=1.0)
