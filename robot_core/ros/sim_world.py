"""The world's topics and services, shared by the simulator node and the embedded controller manager: the free objects'
poses and twists on ``~/object_states`` (robot_core_interfaces/ObjectStates) and on /tf (world_frame -> object), their
shapes on the latched ``~/world_markers`` (visualization_msgs/MarkerArray), the static frames of a placed robot and of
the scenery for /tf_static, ``~/contacts`` messages, and the services ``~/set_object_state``, ``~/spawn_object``,
``~/remove_object`` and ``~/reset`` (:class:`WorldServices`).

Why one module: both ways of simulating publish the same world (:mod:`robot_core.physics.scene`); the messages
must be the same whichever node sends them (doc/world.md).
"""

from __future__ import annotations

import math
import traceback
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from robot_core.physics.world import (
    ObjectState,
    Pose,
    WorldError,
    WorldObject,
    WorldSim,
    check_position,
    check_quaternion,
    make_object,
)
from robot_core.text import clip

if TYPE_CHECKING:
    from robot_core.physics.engine import Contact
    from robot_core.physics.world_shapes import ObjectShape

# runs a change of the engine where that is safe and returns its result (WorldServices)
Run = Callable[[Callable[[], str]], str]

STATE_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE)
# ~/world_markers: latched like /robot_description, so a viewer started later still gets the shapes
MARKERS_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)


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
    """``~/object_states`` (and ``~/base_state`` for a floating base) on ``node``; object transforms on ``tf_pub``
    (a /tf publisher, None: not on /tf)."""

    def __init__(self, node: Node, world_frame: str, tf_pub: Any | None):
        from robot_core_interfaces.msg import ObjectStates

        self.world_frame = world_frame
        self._tf_pub = tf_pub
        self._pub = node.create_publisher(ObjectStates, "~/object_states", STATE_QOS)
        self._node = node
        self._base_pubs: dict[str, Any] = {}
        self._markers_pub: Any = None

    def publish_markers(self, world: WorldSim, stamp: Time) -> None:
        """The objects' shapes on ``~/world_markers`` (latched; sent at start and whenever an object came or went).
        A world without objects sends nothing."""
        from robot_core.physics.world_shapes import object_shapes

        shapes = object_shapes(world)
        if self._markers_pub is None:
            if not shapes:
                return
            try:
                from visualization_msgs.msg import MarkerArray
            except ImportError:  # an environment set up before it was pinned: the rest of the world still runs
                self._node.get_logger().warning("visualization_msgs is not installed: no ~/world_markers (make "
                                                "setup installs it)", once=True)
                return

            self._markers_pub = self._node.create_publisher(MarkerArray, "~/world_markers", MARKERS_QOS)
        self._markers_pub.publish(world_markers_message(shapes, stamp))

    def publish_base(self, child_frame: str, pose: Sequence[float], twist: Sequence[float], stamp: Time,
                     topic: str = "~/base_state") -> None:
        """A floating base's ground truth on ``topic`` (nav_msgs/Odometry: world_frame -> the robot's root
        link; ``pose`` x y z qw qx qy qz in the world, ``twist`` vx vy vz wx wy wz in the base's own frame).
        The publisher is made on first use: a fixed-base robot has no such topic. A robot group's free-based
        robot has its own (``/<ns>/simulator/base_state``)."""
        from nav_msgs.msg import Odometry

        pub = self._base_pubs.get(topic)
        if pub is None:
            pub = self._base_pubs[topic] = self._node.create_publisher(Odometry, topic, STATE_QOS)
        msg = Odometry()
        msg.header.stamp, msg.header.frame_id, msg.child_frame_id = stamp, self.world_frame, child_frame
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        p.x, p.y, p.z = (float(v) for v in pose[:3])
        o.w, o.x, o.y, o.z = (float(v) for v in pose[3:7])
        lin, ang = msg.twist.twist.linear, msg.twist.twist.angular
        lin.x, lin.y, lin.z = (float(v) for v in twist[:3])
        ang.x, ang.y, ang.z = (float(v) for v in twist[3:6])
        pub.publish(msg)

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


def world_markers_message(shapes: Sequence[ObjectShape], stamp: Time) -> Any:
    """visualization_msgs/MarkerArray of the objects' shapes: a DELETEALL first (objects removed since the last
    message vanish), then one marker per geom in its object's frame (``frame_locked``: it moves with /tf),
    namespace = the object's name, id = the geom's index within it."""
    from geometry_msgs.msg import Point
    from visualization_msgs.msg import Marker, MarkerArray

    kinds = {"box": Marker.CUBE, "sphere": Marker.SPHERE, "cylinder": Marker.CYLINDER,
             "triangles": Marker.TRIANGLE_LIST}
    out = MarkerArray()
    out.markers.append(Marker(action=Marker.DELETEALL))
    for s in shapes:
        m = Marker(ns=s.frame, id=s.index, type=kinds[s.kind], action=Marker.ADD, frame_locked=True)
        m.header.frame_id, m.header.stamp = s.frame, stamp
        pose_msg(m.pose, Pose(s.position, s.quaternion))
        m.scale.x, m.scale.y, m.scale.z = s.scale
        m.color.r, m.color.g, m.color.b, m.color.a = s.rgba
        if s.triangles is not None:
            m.points = [Point(x=float(x), y=float(y), z=float(z)) for x, y, z in s.triangles]
        out.markers.append(m)
    return out


def contacts_message(contacts: Sequence[Contact], stamp: Time, frame: str) -> Any:
    """robot_core_interfaces/Contacts of the engine's active contacts (forces on body2, world frame)."""
    from robot_core_interfaces.msg import Contact as ContactMsg
    from robot_core_interfaces.msg import Contacts

    msg = Contacts()
    msg.header.stamp, msg.header.frame_id = stamp, frame
    for c in contacts:
        m = ContactMsg(body1=c.body1, body2=c.body2, distance=float(c.distance))
        m.position.x, m.position.y, m.position.z = (float(v) for v in c.position)
        m.normal.x, m.normal.y, m.normal.z = (float(v) for v in c.normal)
        m.force.x, m.force.y, m.force.z = (float(v) for v in c.force_world)
        msg.contacts.append(m)
    return msg


def spawn_request_object(r: Any) -> WorldObject:
    """The WorldObject a robot_core_interfaces/SpawnObject request describes, validated (WorldError says why not)."""
    what = f"spawn_object '{clip(str(r.name))}'"
    pos, q = r.pose.position, r.pose.orientation
    pose = Pose(check_position((pos.x, pos.y, pos.z), f"{what}: position"),
                check_quaternion((q.w, q.x, q.y, q.z), f"{what}: orientation", strict=True))
    c = r.color
    color = None if (c.r, c.g, c.b, c.a) == (0.0, 0.0, 0.0, 0.0) else (c.r, c.g, c.b, c.a)
    for label, value in (("mass", r.mass), ("density", r.density)):
        if not (math.isfinite(value) and value >= 0.0):
            raise WorldError(f"{what}: {label} must be positive (0: not given), got {value}")
    return make_object(str(r.name), str(r.shape), list(r.size) or None, pose=pose, mass=float(r.mass) or None,
                       density=float(r.density) or None, color=color, fixed=bool(r.fixed),
                       friction=list(r.friction) or None, mesh=str(r.mesh) or None, where="spawn request")


def answer(response: Any, run: Run, fn: Callable[[], str], what: str, log: Any) -> Any:
    """A service body run through ``run``; a refusal (ValueError, which CommandError and WorldError are, or
    RuntimeError) becomes success=false with the reason, logged; a bug too, loudly, and the node stays up."""
    try:
        response.message = run(fn) or ""
        response.success = True
    except (ValueError, RuntimeError) as exc:
        response.success, response.message = False, str(exc)
        log.warning(f"{what} refused: {exc}")
    except Exception as exc:
        response.success, response.message = False, f"internal error: {exc!r}"
        log.error(f"{what} failed:\n{traceback.format_exc()}")
    return response


class WorldServices:
    """The world's services on ``node``, one implementation for the simulator node and the embedded controller
    manager: ``~/set_object_state``, ``~/spawn_object``, ``~/remove_object`` and ``~/reset`` (ResetSimulation:
    back to t = 0 at the initial state or a keyframe, joint positions overriding it).

    ``world()``: the running WorldSim (None before the robot is loaded: requests are refused). ``run(fn)``: runs
    ``fn`` where the engine may change and returns its result -- the simulator's simulation thread between two
    steps, the manager's cycle gate between two control cycles (a model rebuild must never meet a step).
    ``changed(kind)``, called inside ``run`` after a change: ``state`` (an object teleported), ``model`` (the
    model was rebuilt: arrays of the engine's data are new), ``static`` (rebuilt, and a fixed object came or went:
    /tf_static changes), ``reset`` (time back to 0)."""

    def __init__(self, node: Node, world: Callable[[], WorldSim | None], run: Run, changed: Callable[[str], None],
                 *, callback_group: Any = None):
        from robot_core_interfaces.srv import RemoveObject, ResetSimulation, SetObjectState, SpawnObject

        self._world, self._run, self._changed = world, run, changed
        self._log = node.get_logger()
        for srv_type, name, cb in ((SetObjectState, "set_object_state", self._set_object_state),
                                   (SpawnObject, "spawn_object", self._spawn_object),
                                   (RemoveObject, "remove_object", self._remove_object),
                                   (ResetSimulation, "reset", self._reset)):
            node.create_service(srv_type, f"~/{name}", cb, callback_group=callback_group)

    def _sim(self) -> WorldSim:
        world = self._world()
        if world is None:
            raise RuntimeError("the simulation is not running yet (no robot description)")
        return world

    def _answer(self, response: Any, fn: Callable[[], str], what: str) -> Any:
        return answer(response, self._run, fn, what, self._log)

    def _set_object_state(self, request: Any, response: Any) -> Any:
        name, pose, tw = str(request.name), request.pose, request.twist

        def set_state() -> str:
            q = pose.orientation
            self._sim().set_state(name, (pose.position.x, pose.position.y, pose.position.z), (q.w, q.x, q.y, q.z),
                                  (tw.linear.x, tw.linear.y, tw.linear.z), (tw.angular.x, tw.angular.y, tw.angular.z))
            self._changed("state")
            return f"object '{name}' set"

        return self._answer(response, set_state, "set_object_state")

    def _spawn_object(self, request: Any, response: Any) -> Any:
        def spawn() -> str:
            world = self._sim()
            obj = spawn_request_object(request)
            world.spawn(obj)
            self._changed("static" if obj.fixed else "model")
            return f"spawned {'fixed' if obj.fixed else 'free'} {obj.shape} '{obj.name}'"

        return self._answer(response, spawn, "spawn_object")

    def _remove_object(self, request: Any, response: Any) -> Any:
        name = str(request.name)

        def remove() -> str:
            world = self._sim()
            fixed = name in world.objects and world.objects[name].fixed
            world.remove(name)
            self._changed("static" if fixed else "model")
            return f"removed '{name}'"

        return self._answer(response, remove, "remove_object")

    def _reset(self, request: Any, response: Any) -> Any:
        names, positions = list(request.joint_names), list(request.positions)
        keyframe = str(request.keyframe)

        def reset() -> str:
            if len(names) != len(positions):
                raise ValueError(f"reset: {len(positions)} positions for {len(names)} joint_names")
            state = self._sim().reset(keyframe, dict(zip(names, positions, strict=True)) or None)
            self._changed("reset")
            return f"reset to t=0, {state}{' with ' + ', '.join(names) + ' set' if names else ''}"

        return self._answer(response, reset, "reset")
