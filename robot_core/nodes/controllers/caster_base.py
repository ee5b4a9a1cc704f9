"""ROS side of robot_core/CasterBaseController.

* subscribes ``~/cmd_vel`` (geometry_msgs/TwistStamped): linear.x, linear.y and angular.z with the header stamp
  (0 = now); a message with a NaN or infinite value is dropped with a throttled warning naming the field.
* publishes ``~/odom`` (nav_msgs/Odometry: pose in the odom frame, twist in the base frame), ``/tf`` (odom -> base)
  with ``enable_odom_tf``, and ``~/caster_states`` (sensor_msgs/JointState: each caster's commanded steering
  angle as position, each wheel's commanded velocity as velocity), through the manager's outbox.
"""

from __future__ import annotations

import math
from typing import Any

from robot_core.control.controllers.caster_base import BaseOdomData, CasterStateData
from robot_core.control.errors import ControlError
from robot_core.nodes.controllers.base import ControllerAdapter
from robot_core.ros import ros_conversions as conv


def _quaternion(msg: Any, heading: float) -> None:
    msg.x, msg.y = 0.0, 0.0
    msg.z, msg.w = math.sin(0.5 * heading), math.cos(0.5 * heading)


def odometry_msg(data: BaseOdomData) -> Any:
    from nav_msgs.msg import Odometry

    msg = Odometry()
    msg.header.stamp = conv.to_time(data.stamp)
    msg.header.frame_id = data.odom_frame_id
    msg.child_frame_id = data.base_frame_id
    msg.pose.pose.position.x, msg.pose.pose.position.y = float(data.x), float(data.y)
    _quaternion(msg.pose.pose.orientation, data.heading)
    msg.twist.twist.linear.x, msg.twist.twist.linear.y = float(data.vx), float(data.vy)
    msg.twist.twist.angular.z = float(data.wz)
    return msg


def tf_msg(data: BaseOdomData) -> Any:
    from geometry_msgs.msg import TransformStamped
    from tf2_msgs.msg import TFMessage

    tf = TransformStamped()
    tf.header.stamp = conv.to_time(data.stamp)
    tf.header.frame_id = data.odom_frame_id
    tf.child_frame_id = data.base_frame_id
    tf.transform.translation.x, tf.transform.translation.y = float(data.x), float(data.y)
    _quaternion(tf.transform.rotation, data.heading)
    return TFMessage(transforms=[tf])


def caster_states_msg(data: CasterStateData) -> Any:
    from sensor_msgs.msg import JointState

    msg = JointState()
    msg.header.stamp = conv.to_time(data.stamp)
    msg.name = [*data.casters, *data.wheels]
    nan = float("nan")
    msg.position = [*data.angles, *([nan] * len(data.wheels))]
    msg.velocity = [*([nan] * len(data.casters)), *data.wheel_velocities]
    return msg


class CasterBaseAdapter(ControllerAdapter):
    types = ("robot_core/CasterBaseController",)

    def create_entities(self) -> None:
        from geometry_msgs.msg import TwistStamped
        from nav_msgs.msg import Odometry
        from sensor_msgs.msg import JointState
        from tf2_msgs.msg import TFMessage

        self.dropped = 0
        self.add_output("odom", Odometry, "~/odom", odometry_msg)
        self.add_output("tf", TFMessage, "/tf", tf_msg, qos=100)
        self.add_output("caster_states", JointState, "~/caster_states", caster_states_msg)
        self.track(self.node.create_subscription(TwistStamped, "~/cmd_vel", self._on_cmd_vel, 10),
                   self.node.destroy_subscription)

    def _on_cmd_vel(self, msg: Any) -> None:
        stamp = conv.time_to_seconds(msg.header.stamp)
        t = msg.twist
        try:
            with self.between_cycles():
                self.controller.set_command(t.linear.x, t.linear.y, t.angular.z, stamp or None)
        except ControlError as exc:
            self.dropped += 1
            self.log.warning(f"dropped a command on ~/cmd_vel: {exc}", throttle_duration_sec=1.0)
