"""ROS side of the forward-command controllers: ``~/commands`` (std_msgs/Float64MultiArray).

A message of the wrong size or with a NaN/inf is dropped with a (throttled) warning that says why; the
controller keeps its previous command, so the robot never receives a half-applied or non-finite command.
"""

from __future__ import annotations

from typing import Any

from robot_core.control.errors import ControlError
from robot_core.nodes.controllers.base import ControllerAdapter


class ForwardCommandAdapter(ControllerAdapter):
    types = (
        "forward_command_controller/ForwardCommandController",
        "position_controllers/JointGroupPositionController",
        "velocity_controllers/JointGroupVelocityController",
        "effort_controllers/JointGroupEffortController",
    )

    def create_entities(self) -> None:
        from std_msgs.msg import Float64MultiArray

        self.dropped = 0
        self.track(self.node.create_subscription(Float64MultiArray, "~/commands", self._on_commands, 10),
                   self.node.destroy_subscription)

    def _on_commands(self, msg: Any) -> None:
        try:
            with self.between_cycles():
                self.controller.set_command(msg.data)
        except ControlError as exc:
            self.dropped += 1
            self.log.warning(f"dropped a command on ~/commands: {exc}", throttle_duration_sec=1.0)
