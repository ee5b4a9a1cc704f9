"""The embedded physics' world and camera/laser topics: what the simulator node publishes about the scene, from the
controller manager when the physics runs inside it (``hardware_mode: embedded``).

Why here: the manager's control loop steps the engine (robot_core.control.in_process_simulator); this module is
called once per cycle after the step and decides what is due in simulated time. The messages are those of the
simulator node, from the same code: the free objects through :class:`robot_core.ros.sim_world.WorldTopics`
(``~/object_states`` of the manager's node and /tf; their shapes on the latched ``~/world_markers``), the
cameras and lasers through :class:`robot_core.ros.sim_sensors.SimSensors` (``<name>/image_raw``, ``<name>/camera_info``,
``<name>/depth/image_raw``, ``<name>/scan``), the static frames (world -> placed root, fixed objects, sensor frames)
once on /tf_static, a free base's pose (world -> root link) on /tf with the objects, ``~/contacts`` at
``contacts_rate``; the world's services (robot_core.ros.sim_world.WorldServices: ``~/set_object_state``,
``~/spawn_object``, ``~/remove_object``, ``~/reset`` with an optional keyframe) change the engine between two
control cycles (the manager's cycle gate), and the hardware component follows (``after_change``: a rebuilt model
has new state arrays; a reset puts time back to 0, as the simulator node's does).

Threads: :meth:`EmbeddedScene.after_cycle` runs in the control loop; it only reads the engine (the objects' state,
a laser's ray casts, a copy of ``qpos`` for the camera thread) and hands messages to the manager's outbox, which
builds and publishes them off the loop. Rendering runs on the camera's own thread (robot_core.physics.camera).

Rates are in simulated time and land on whole control cycles: a sensor is due in the cycle whose steps cross a
multiple of its period, so a 30 Hz camera under a 100 Hz manager gets frames 30 or 40 ms apart (30 on average).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from robot_core.model.robot_model import RobotModel
from robot_core.physics.frame_prefix import FramePrefix
from robot_core.physics.pacing import steps_per_period
from robot_core.physics.scene import Scene
from robot_core.physics.world import Pose, WorldSim
from robot_core.ros.sim_sensors import SimSensors, crossed
from robot_core.ros.sim_world import (
    STATE_QOS,
    WorldServices,
    WorldTopics,
    contacts_message,
    pose_transform,
    tf_message_type,
    time_msg,
)

TF_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100, reliability=ReliabilityPolicy.RELIABLE)
LATCHED_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)

Post = Callable[[Hashable, Callable[[Any], None], Any], None]


class EmbeddedScene:
    """World and camera/laser outputs of the engine the manager steps. ``post(key, handler, data)``: the manager's
    outbox. ``tf_rate``: Hz of simulated time for the objects. ``log_error``: a line when rendering fails.
    ``frame_prefix``: the robot's tf frame prefix (physics/frame_prefix.py); the world's frames keep their names."""

    def __init__(self, node: Node, scene: Scene, world: WorldSim, robot: RobotModel, post: Post, *,
                 world_frame: str = "world", tf_rate: float = 50.0, lasers: bool = True, frame_prefix: str = "",
                 contacts_rate: float = 0.0, log_error: Callable[[str], None] | None = None,
                 between_cycles: Callable[[], contextlib.AbstractContextManager[None]] | None = None,
                 after_change: Callable[[str], None] | None = None, callback_group: Any = None):
        engine = world.engine
        self.engine, self.world, self.scene = engine, world, scene
        self._post = post
        self._dt_ns = round(engine.timestep * 1e9)
        self._tf_pub = node.create_publisher(tf_message_type(), "/tf", TF_QOS)
        self._tf_static_pub = node.create_publisher(tf_message_type(), "/tf_static", LATCHED_QOS)
        self.topics = WorldTopics(node, world_frame, self._tf_pub)
        self._frames = FramePrefix(frame_prefix, {world_frame, *world.objects})
        self.sensors = SimSensors(node, robot, engine.model, engine.timestep, cameras=scene.settings.cameras,
                                  lasers=lasers, log_error=log_error, seed=scene.seed,
                                  topics=scene.settings.sensor_topics, frame_prefix=self._frames.prefix)
        self._objects_period = steps_per_period(tf_rate, engine.timestep)
        self._contacts_period = steps_per_period(contacts_rate, engine.timestep) if contacts_rate > 0 else 0
        self._contacts_pub = None
        if self._contacts_period:
            from robot_core_interfaces.msg import Contacts

            self._contacts_pub = node.create_publisher(Contacts, "~/contacts", STATE_QOS)
        self._world_frame = world_frame
        self._root = self._frames(robot.root_link)
        self._has_free = bool(world.free_objects)
        self._last = 0
        self._between_cycles = between_cycles or contextlib.nullcontext
        self._after_change = after_change
        self._publish_static()
        self.topics.publish_markers(world, time_msg(0))
        WorldServices(node, lambda: self.world, self._run, self._changed, callback_group=callback_group)

    def _run(self, fn: Callable[[], str]) -> str:
        """A world service's change of the engine, between two control cycles."""
        with self._between_cycles():
            return fn()

    def _changed(self, kind: str) -> None:
        """Between two cycles, after a world service changed the engine: the hardware component follows
        (``after_change``), /tf_static is sent again when a fixed object came or went, and the objects' new state
        goes out at once (a paused simulation publishes nothing by itself)."""
        if self._after_change is not None:
            self._after_change(kind)
        self._has_free = bool(self.world.free_objects)
        if kind == "static":
            self._publish_static()
        if kind in ("static", "model"):
            self.topics.publish_markers(self.world, time_msg(self.engine.step_count * self._dt_ns))
        ns = self.engine.step_count * self._dt_ns
        self._post("object_states", self._publish_objects, (self.world.states(), self._base_pose(), ns))

    def describe(self) -> str:
        """One line for the manager's log: the world, its objects and the sensors simulated."""
        parts = []
        if self.scene.settings.world:
            parts.append(f"world {self.scene.settings.world}: objects {', '.join(self.world.objects) or 'none'}")
        if self.sensors:
            parts.append(f"sensors: {self.sensors.describe()}")
        return "; ".join(parts)

    def after_cycle(self) -> None:
        """Control loop, after the engine stepped: post what is due at the engine's step count."""
        engine = self.engine
        count = engine.step_count
        ns = count * self._dt_ns
        last, self._last = self._last, count
        if (self._has_free or not engine.fixed_base) and crossed(last, count, self._objects_period):
            self._post("object_states", self._publish_objects, (self.world.states(), self._base_pose(), ns))
        if self._contacts_period and crossed(last, count, self._contacts_period):
            self._post("contacts", self._publish_contacts, (engine.contacts(), ns))
        if self.sensors:
            self.sensors.on_tick(engine.model, engine.data, count, ns, post=self._post)

    def _base_pose(self) -> tuple[np.ndarray, np.ndarray] | None:
        """A free base's pose in the world and its twist in its own frame (ground truth, as the simulator node's
        world_frame -> root on /tf and ~/base_state)."""
        if self.engine.fixed_base:
            return None
        return self.engine.base_pose(), self.engine.base_velocity()

    def _publish_objects(self, item: tuple[list[Any], tuple[np.ndarray, np.ndarray] | None, int]) -> None:
        states, base, ns = item
        stamp = time_msg(ns)
        self.topics.publish_objects(states, stamp)
        if base is not None:
            p, twist = base
            pose = Pose((float(p[0]), float(p[1]), float(p[2])), (float(p[3]), float(p[4]), float(p[5]), float(p[6])))
            self._tf_pub.publish(tf_message_type()(transforms=[pose_transform(self._world_frame, self._root, pose,
                                                                               stamp)]))
            self.topics.publish_base(self._root, p, twist, stamp)

    def _publish_contacts(self, item: tuple[list[Any], int]) -> None:
        contacts, ns = item
        self._contacts_pub.publish(contacts_message(contacts, time_msg(ns), self._world_frame))

    def _publish_static(self) -> None:
        stamp = time_msg(0)
        out = self.topics.static_transforms(self.world, self.scene.placed, stamp)
        if self.sensors:
            out += self.sensors.static_transforms(stamp)
        if out:
            self._tf_static_pub.publish(tf_message_type()(transforms=self._frames.apply(out)))

    def shutdown(self) -> None:
        self.sensors.shutdown()
