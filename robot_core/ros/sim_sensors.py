"""The simulator node's camera and laser topics: the ROS side of :mod:`robot_core.physics.camera` and
:mod:`robot_core.physics.laser`.

Kept out of ``nodes/simulator.py`` so the node only calls four things: :meth:`SimSensors.rates` (merged into its
publish schedule, so a tick ends exactly when a sensor is due), :meth:`SimSensors.on_tick` (simulation thread),
:meth:`SimSensors.static_transforms` (for /tf_static) and :meth:`SimSensors.shutdown`.

Per camera sensor ``<name>``: ``<name>/image_raw`` (sensor_msgs/Image in the encoding of the description's
``<format>``: rgb8, bgr8 or mono8), ``<name>/camera_info``
(sensor_msgs/CameraInfo of the rendered pinhole) and, for depth cameras, ``<name>/depth/image_raw`` (32FC1, metres
along the optical axis; +inf beyond the far clip, -inf nearer than the near clip); per laser ``<name>/scan``
(sensor_msgs/LaserScan). Relative names, so they follow the node's namespace. Stamps are simulated time of the
state rendered or scanned. ``frame_id``: the description's (plugin ``frame_name``/``frameName``, gz
``gz_frame_id``, ``<camera><optical_frame_id>``), else ``<name>_optical_frame`` for cameras and ``<name>`` for
lasers; a frame that is not a link of the robot is put on /tf_static below the sensor's link (cameras: the optical
frame, z forward, x right, y down). A frame named by the description that *is* a link is trusted to be the right
one, as Gazebo does.

QoS: reliable, keep-last 2 for images (best-effort subscribers such as rviz's default connect too; a slow
subscriber never holds the renderer up for more than two frames), keep-last 10 for scans and camera infos.
"""

from __future__ import annotations

import array
from collections.abc import Callable, Hashable
from typing import Any

import mujoco
import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image, LaserScan

from robot_core.model.robot_model import Pose, RobotModel
from robot_core.model.sensors import CAMERA_KINDS, SensorSpec, description_topics
from robot_core.physics.camera import (
    CHANNELS,
    DEFAULT_CAMERA_RATE,
    CameraFrame,
    CameraIntrinsics,
    CameraRenderer,
    camera_sensors,
    encode_image,
    optical_frame_pose,
)
from robot_core.physics.laser import DEFAULT_LASER_RATE, LaserScanner, laser_sensors
from robot_core.physics.pacing import steps_per_period

IMAGE_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=2, reliability=ReliabilityPolicy.RELIABLE)
SENSOR_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE)


def _stamp(ns: int) -> Time:
    sec, nanosec = divmod(int(ns), 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def crossed(last: int, count: int, period: int) -> bool:
    """Whether stepping from step ``last`` to ``count`` reached a multiple of ``period``; after a jump back (a reset)
    only ``count`` itself counts."""
    if count < last:
        return count % period == 0
    return count // period != last // period


def camera_frame_id(sensor: SensorSpec) -> str:
    return sensor.frame_id or f"{sensor.name}_optical_frame"


def laser_frame_id(sensor: SensorSpec) -> str:
    return sensor.frame_id or sensor.name


def topic_names(sensor: SensorSpec, mode: str = "name") -> dict[str, str]:
    """A camera's (image, info, depth) or a laser's (scan) topics: ``<name>/...`` (mode ``name``), or the
    description's plugin's (mode ``description``, robot_core.model.sensors.description_topics)."""
    if mode == "description":
        return description_topics(sensor)
    if sensor.kind in CAMERA_KINDS:
        return {"image": f"{sensor.name}/image_raw", "info": f"{sensor.name}/camera_info",
                "depth": f"{sensor.name}/depth/image_raw"}
    return {"scan": f"{sensor.name}/scan"}


class _Camera:
    def __init__(self, node: Node, sensor: SensorSpec, topics: str = "name", frame_prefix: str = ""):
        self.sensor = sensor
        self.rate = sensor.update_rate or DEFAULT_CAMERA_RATE
        self.frame_id = camera_frame_id(sensor)
        self.header_frame = frame_prefix + self.frame_id
        self.topics = topic_names(sensor, topics)
        self.image_pub = node.create_publisher(Image, self.topics["image"], IMAGE_QOS)
        self.info_pub = node.create_publisher(CameraInfo, self.topics["info"], SENSOR_QOS)
        self.depth_pub = (node.create_publisher(Image, self.topics["depth"], IMAGE_QOS)
                          if sensor.kind == "depth" else None)
        self.encoding = str(sensor.params.get("encoding", "rgb8"))  # from the description's <format>
        intr = CameraIntrinsics.of(sensor)
        self.info = CameraInfo(height=intr.height, width=intr.width, distortion_model="plumb_bob",
                               d=[0.0] * 5, k=intr.k(), r=[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], p=intr.p())
        self.info.header.frame_id = self.header_frame

    def publish(self, frame: CameraFrame) -> None:
        stamp = _stamp(frame.stamp_ns)
        h, w = frame.rgb.shape[:2]
        pixels = encode_image(frame.rgb, self.encoding)
        img = Image(height=h, width=w, encoding=self.encoding, is_bigendian=0, step=CHANNELS[self.encoding] * w)
        img.header.stamp, img.header.frame_id = stamp, self.header_frame
        img.data = array.array("B", pixels.tobytes())
        self.image_pub.publish(img)
        if self.depth_pub is not None and frame.depth is not None:
            dep = Image(height=h, width=w, encoding="32FC1", is_bigendian=0, step=4 * w)
            dep.header.stamp, dep.header.frame_id = stamp, self.header_frame
            dep.data = array.array("B", frame.depth.astype("<f4").tobytes())
            self.depth_pub.publish(dep)
        self.info.header.stamp = stamp
        self.info_pub.publish(self.info)


class _Laser:
    def __init__(self, node: Node, sensor: SensorSpec, model: mujoco.MjModel, seed: int | None = None,
                 topics: str = "name", frame_prefix: str = ""):
        self.sensor = sensor
        self.rate = sensor.update_rate or DEFAULT_LASER_RATE
        self.scanner = LaserScanner(sensor, model, seed)
        self.model = model
        g = self.scanner.geometry
        self.msg = LaserScan(angle_min=g.angle_min, angle_max=g.angle_max, angle_increment=g.angle_increment,
                             time_increment=0.0, scan_time=1.0 / self.rate, range_min=g.range_min,
                             range_max=g.range_max)
        self.msg.header.frame_id = frame_prefix + laser_frame_id(sensor)
        self.topic = topic_names(sensor, topics)["scan"]
        self.pub = node.create_publisher(LaserScan, self.topic, SENSOR_QOS)

    def scan(self, model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
        """The ranges on the current state (the caller's thread: the one that steps the physics)."""
        if model is not self.model:  # the scene was edited (spawn, remove): body ids may have moved
            self.scanner.rebind(model)
            self.model = model
        return self.scanner.scan(model, data)

    def publish(self, scan: tuple[np.ndarray, int]) -> None:
        ranges, ns = scan
        self.msg.ranges = array.array("f", ranges.astype(np.float32).tobytes())
        self.msg.header.stamp = _stamp(ns)
        self.pub.publish(self.msg)


class SimSensors:
    """Cameras and lasers of one simulated robot, publishing on ``node``'s topics at their rates of simulated time.

    ``cameras``/``lasers`` False: those sensors are not simulated (no topics). ``seed``: of their noise (None:
    unrepeatable). ``topics``: ``name`` (``<name>/image_raw``, ...) or ``description`` (:func:`topic_names`).
    ``log_error`` gets a line when rendering fails (no OpenGL): the cameras stop, the simulation goes on.
    ``frame_prefix``: put before the messages' frame ids (the robot's tf frame prefix, physics/frame_prefix.py);
    :meth:`static_transforms` gives the frames unprefixed, the caller maps them with the rest of its tf."""

    def __init__(self, node: Node, robot: RobotModel, model: mujoco.MjModel, timestep: float, *,
                 cameras: bool = True, lasers: bool = True, log_error=None, seed: int | None = None,
                 topics: str = "name", frame_prefix: str = ""):
        self._cams = ([_Camera(node, s, topics, frame_prefix) for s in camera_sensors(robot.sensors)]
                      if cameras else [])
        self._lasers = ([_Laser(node, s, model, seed, topics, frame_prefix) for s in laser_sensors(robot.sensors)]
                        if lasers else [])
        self._links = set(robot.links)
        self._cam_by_name = {c.sensor.name: c for c in self._cams}
        self._periods = {f"camera:{c.sensor.name}": steps_per_period(c.rate, timestep) for c in self._cams}
        self._periods.update({f"laser:{s.sensor.name}": steps_per_period(s.rate, timestep) for s in self._lasers})
        self._cam_periods = [(c.sensor, self._periods[f"camera:{c.sensor.name}"]) for c in self._cams]
        self._laser_periods = [(s, self._periods[f"laser:{s.sensor.name}"]) for s in self._lasers]
        self._last_count = 0  # the state at t = 0 is not published (the first frame comes one period later)
        self.renderer = (CameraRenderer([c.sensor for c in self._cams], self._on_frame, log_error, seed)
                         if self._cams else None)

    def __bool__(self) -> bool:
        return bool(self._cams or self._lasers)

    def rates(self) -> dict[str, float]:
        """Output name -> Hz of simulated time, for the node's PublishSchedule."""
        out = {f"camera:{c.sensor.name}": c.rate for c in self._cams}
        out.update({f"laser:{s.sensor.name}": s.rate for s in self._lasers})
        return out

    def describe(self) -> str:
        parts = [f"camera '{c.sensor.name}' {c.sensor.params['width']}x{c.sensor.params['height']} "
                 f"{'rgb+depth' if c.depth_pub else 'rgb'} at {c.rate:g} Hz on {c.topics['image']}" for c in self._cams]
        parts += [f"laser '{s.sensor.name}' {s.scanner.geometry.samples} rays at {s.rate:g} Hz on {s.topic}"
                  for s in self._lasers]
        return ", ".join(parts)

    def on_tick(self, model: mujoco.MjModel, data: mujoco.MjData, count: int, ns: int,
                post: Callable[[Hashable, Callable[[Any], None], Any], None] | None = None) -> None:
        """After the physics stepped to step ``count`` (the thread that steps it): scan the lasers that are due and
        hand due cameras' state to the renderer. A sensor is due when a multiple of its period (in steps) lies in
        (previous count, count] (:func:`crossed`): the simulator's ticks end on those multiples, the embedded
        manager's control cycles step several at once. ``post(key, handler, data)``: where the scans are published
        (the manager's outbox, off its control loop); None: at once."""
        last, self._last_count = self._last_count, count
        for laser, period in self._laser_periods:
            if crossed(last, count, period):
                scan = (laser.scan(model, data), ns)
                if post is None:
                    laser.publish(scan)
                else:
                    post(("scan", laser.sensor.name), laser.publish, scan)
        due = [s for s, period in self._cam_periods if crossed(last, count, period)]
        if due and self.renderer is not None and self.renderer.error is None:
            self.renderer.submit(model, data, ns, due)

    def _on_frame(self, frame: CameraFrame) -> None:
        self._cam_by_name[frame.sensor.name].publish(frame)

    def static_transforms(self, stamp: Time) -> list[TransformStamped]:
        """Sensor frames the robot's links do not provide: below the sensor's link, on /tf_static."""
        out: list[TransformStamped] = []
        for cam in self._cams:
            if cam.frame_id not in self._links:
                out.append(_transform(cam.sensor.link, cam.frame_id, optical_frame_pose(cam.sensor), stamp))
        for laser in self._lasers:
            frame = laser_frame_id(laser.sensor)
            if frame not in self._links:
                out.append(_transform(laser.sensor.link, frame, laser.sensor.pose, stamp))
        return out

    @property
    def lasers(self) -> list[_Laser]:
        return list(self._lasers)

    def shutdown(self) -> None:
        if self.renderer is not None:
            self.renderer.stop()


def _transform(parent: str, child: str, pose: Pose, stamp: Time) -> TransformStamped:
    tf = TransformStamped()
    tf.header.frame_id, tf.header.stamp, tf.child_frame_id = parent, stamp, child
    t, r = tf.transform.translation, tf.transform.rotation
    t.x, t.y, t.z = (float(v) for v in pose.xyz)
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(pose.matrix()[:3, :3]).reshape(9))
    r.w, r.x, r.y, r.z = (float(v) for v in quat)
    return tf
