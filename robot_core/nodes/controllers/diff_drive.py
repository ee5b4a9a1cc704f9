"""ROS side of diff_drive_controller/DiffDriveController.

* subscribes ``~/cmd_vel`` (geometry_msgs/TwistStamped): linear.x and angular.z with the header stamp (0 = now);
  a message with a NaN or infinite value is dropped with a throttled warning naming the field.
* publishes ``~/odom`` (nav_msgs/Odometry), ``/tf`` (tf2_msgs/TFMessage, odom -> base) with ``enable_odom_tf``,
  and ``~/cmd_vel_out`` (TwistStamped) with ``publish_limited_velocity``, all from the core's emitted samples,
  through the manager's outbox (never inside a control cycle).
"""

from __future__ import annotations

import math
from typing import Any

from robot_core.control.controllers.diff_drive import OdomData, TwistData
from robot_core.control.errors import ControlError
from robot_core.nodes.controllers.base import ControllerAdapter
from robot_core.ros import ros_conversions as conv


def _quaternion(msg: Any, heading: float) -> None:
    msg.x, msg.y = 0.0, 0.0
    msg.z, msg.w = math.sin(0.5 * heading), math.cos(0.5 * heading)


def odometry_msg(data: OdomData) -> Any:
    from nav_msgs.msg import Odometry

    msg = Odometry()
    msg.header.stamp = conv.to_time(data.stamp)
    msg.header.frame_id = data.odom_frame_id
    msg.child_frame_id = data.base_frame_id
    msg.pose.pose.position.x, msg.pose.pose.position.y = float(data.x), float(data.y)
    _quaternion(msg.pose.pose.orientation, data.heading)
    msg.twist.twist.linear.x = float(data.linear)
    msg.twist.twist.angular.z = float(data.angular)
    for k in range(6):
        msg.pose.covariance[7 * k] = float(data.pose_covariance_diagonal[k])
        msg.twist.covariance[7 * k] = float(data.twist_covariance_diagonal[k])
    return msg


def tf_msg(data: OdomData) -> Any:
    from geometry_msgs.msg import TransformStamped
    from tf2_msgs.msg import TFMessage

    tf = TransformStamped()
    tf.header.stamp = conv.to_time(data.stamp)
    tf.header.frame_id = data.odom_frame_id
    tf.child_frame_id = data.base_frame_id
    tf.transform.translation.x, tf.transform.translation.y = float(data.x), float(data.y)
    _quaternion(tf.transform.rotation, data.heading)
    return TFMessage(transforms=[tf])


def twist_msg(data: TwistData) -> Any:
    from geometry_msgs.msg import TwistStamped

    msg = TwistStamped()
    msg.header.stamp = conv.to_time(data.stamp)
    msg.header.frame_id = data.frame_id
    msg.twist.linear.x, msg.twist.angular.z = float(data.linear), float(data.angular)
    return msg


class DiffDriveAdapter(ControllerAdapter):
    types = ("diff_drive_controller/DiffDriveController",)

    def create_entities(self) -> None:
        from geometry_msgs.msg import TwistStamped
        from nav_msgs.msg import Odometry
        from tf2_msgs.msg import TFMessage

        self.dropped = 0
        self.add_output("odom", Odometry, "~/odom", odometry_msg)
        self.add_output("tf", TFMessage, "/tf", tf_msg, qos=100)
        self.add_output("cmd_vel_out", TwistStamped, "~/cmd_vel_out", twist_msg)
        self.track(self.node.create_subscription(TwistStamped, "~/cmd_vel", self._on_cmd_vel, 10),
                   self.node.destroy_subscription)

    def _on_cmd_vel(self, msg: Any) -> None:
        stamp = conv.time_to_seconds(msg.header.stamp)
        try:
            with self.between_cycles():
                self.controller.set_command(msg.twist.linear.x, msg.twist.angular.z, stamp or None)
        except ControlError as exc:
            self.dropped += 1
            self.log.warning(f"dropped a command on ~/cmd_vel: {exc}", throttle_duration_sec=1.0)
