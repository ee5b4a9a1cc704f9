"""ROS side of joint_state_broadcaster/JointStateBroadcaster: /joint_states and /dynamic_joint_states.

Topic names are relative, as upstream: ``joint_states`` resolves in the controller's namespace (``/joint_states``
by default); ``use_local_topics: true`` makes them private (``/joint_state_broadcaster/joint_states``).
"""

from __future__ import annotations

from robot_core.nodes.controllers.base import ControllerAdapter
from robot_core.ros.message_templates import DynamicJointStateBytes, JointStateBytes


class JointStateBroadcasterAdapter(ControllerAdapter):
    types = ("joint_state_broadcaster/JointStateBroadcaster",)

    def create_entities(self) -> None:
        from control_msgs.msg import DynamicJointState
        from sensor_msgs.msg import JointState

        prefix = "~/" if getattr(self.controller, "use_local_topics", False) else ""
        # published as bytes patched into a serialized template: at 1 kHz building messages in Python would
        # cost a good part of a core (robot_core.ros.message_templates)
        self.add_output("joint_states", JointState, f"{prefix}joint_states", JointStateBytes())
        self.add_output("dynamic_joint_states", DynamicJointState, f"{prefix}dynamic_joint_states",
                        DynamicJointStateBytes())
