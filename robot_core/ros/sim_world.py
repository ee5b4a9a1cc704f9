"""The world's topics, shared by the simulator node and the embedded controller manager: the free objects' poses
and twists on ``~/object_states`` (robot_core_interfaces/ObjectStates) and on /tf (world_frame -> object), and the
static frames of a placed robot and of the scenery for /tf_static.

Why one module: both ways of simulating publish the same world (:mod:`robot_core.physics.scene`); the messages
must be the same whichever node sends them (doc/world.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

from robot_core.physics.world import ObjectState, Pose, WorldSim

STATE_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE)


def tf_message_type() -> Any:
    from tf2_msgs.msg import TFMessage

    return TFMessage


def time_msg(ns: int) -> Time:
    sec, nanosec = divmod(int(ns), 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def pose_msg(out: Any, pose: Pose) -> None:
    """geometry_msgs/Pose fields from a Pose (MuJoCo's w, x, y, z order)."""
    out.position.x, out.position.y, out.position.z = (float(v) for v in pose.position)
    out.orientation.w, out.orientation.x, out.orientation.y, out.orientation.z = (float(v) for v in pose.quaternion)


def pose_transform(parent: str, child: str, pose: Pose, stamp: Time) -> TransformStamped:
    tf = TransformStamped()
    tf.header.frame_id, tf.header.stamp, tf.child_frame_id = parent, stamp, child
    t, r = tf.transform.translation, tf.transform.rotation
    t.x, t.y, t.z = (float(v) for v in pose.position)
    r.w, r.x, r.y, r.z = (float(v) for v in pose.quaternion)
    return tf


class WorldTopics:
    """``~/object_states`` on ``node``; object transforms on ``tf_pub`` (a /tf publisher, None: not on /tf)."""

    def __init__(self, node: Node, world_frame: str, tf_pub: Any | None):
        from robot_core_interfaces.msg import ObjectStates

        self.world_frame = world_frame
        self._tf_pub = tf_pub
        self._pub = node.create_publisher(ObjectStates, "~/object_states", STATE_QOS)

    def publish_objects(self, states: Sequence[ObjectState], stamp: Time) -> None:
        """Free objects' poses and twists (nothing for a world without free objects)."""
        from robot_core_interfaces.msg import ObjectState as ObjectStateMsg
        from robot_core_interfaces.msg import ObjectStates

        if not states:
            return
        frame = self.world_frame
        msg = ObjectStates()
        msg.header.stamp, msg.header.frame_id = stamp, frame
        transforms = []
        for st in states:
            o = ObjectStateMsg(name=st.name)
            pose_msg(o.pose, st.pose)
            o.twist.linear.x, o.twist.linear.y, o.twist.linear.z = (float(v) for v in st.linear_velocity)
            o.twist.angular.x, o.twist.angular.y, o.twist.angular.z = (float(v) for v in st.angular_velocity)
            msg.objects.append(o)
            if self._tf_pub is not None:
                transforms.append(pose_transform(frame, st.name, st.pose, stamp))
        self._pub.publish(msg)
        if transforms:
            self._tf_pub.publish(tf_message_type()(transforms=transforms))

    def static_transforms(self, world: WorldSim, placed: bool, stamp: Time) -> list[TransformStamped]:
        """world_frame -> the robot's welded root (when ``placed`` in a world or by base_pose) and -> each fixed
        object, so the robot, the scenery and the free objects share one tf tree."""
        frame = self.world_frame
        engine = world.engine
        out = []
        root = engine.robot.root_link
        if placed and engine.fixed_base and root != frame:
            out.append(pose_transform(frame, root, Pose.from_matrix(engine.link_poses()[root]), stamp))
        for name, obj in world.objects.items():
            if obj.fixed:
                out.append(pose_transform(frame, name, world.pose(name), stamp))
        return out
