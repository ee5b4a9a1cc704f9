"""ROS side of the sensor broadcasters (force-torque, IMU, range, pose): one publisher each on the controller's
private topic (``~/wrench``, ``~/imu``, ``~/range``, ``~/pose``, as upstream), and the pose's transform on /tf.

The cores (robot_core/control/controllers/*_broadcaster.py) emit plain data each update; the message is built
and published by the manager's outbox, off the control loop.
"""

from __future__ import annotations

from rclpy.qos import QoSProfile, ReliabilityPolicy

from robot_core.nodes.controllers.base import ControllerAdapter
from robot_core.ros import ros_conversions as conv


class ForceTorqueSensorBroadcasterAdapter(ControllerAdapter):
    types = ("force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster",)

    def create_entities(self) -> None:
        from geometry_msgs.msg import WrenchStamped

        self.add_output("wrench", WrenchStamped, "~/wrench", conv.wrench_stamped)


class IMUSensorBroadcasterAdapter(ControllerAdapter):
    types = ("imu_sensor_broadcaster/IMUSensorBroadcaster",)

    def create_entities(self) -> None:
        from sensor_msgs.msg import Imu

        self.add_output("imu", Imu, "~/imu", conv.imu)


class RangeSensorBroadcasterAdapter(ControllerAdapter):
    types = ("range_sensor_broadcaster/RangeSensorBroadcaster",)

    def create_entities(self) -> None:
        from sensor_msgs.msg import Range

        self.add_output("range", Range, "~/range", conv.range_msg)


class PoseBroadcasterAdapter(ControllerAdapter):
    types = ("pose_broadcaster/PoseBroadcaster",)

    def create_entities(self) -> None:
        from geometry_msgs.msg import PoseStamped
        from tf2_msgs.msg import TFMessage

        self.add_output("pose", PoseStamped, "~/pose", conv.pose_stamped)
        if getattr(self.controller, "tf_enable", False):
            self.add_output("tf", TFMessage, "/tf", conv.pose_transform,
                            QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
