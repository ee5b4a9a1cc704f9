"""Gazebo ``<sensor>`` blocks of a URDF -> ``SensorSpec`` (plain data), so the simulator can simulate them.

Most published descriptions (PR2, TurtleBot3, Husky, UR with a wrist camera) declare their cameras, lasers, IMUs
and force-torque sensors as ``<gazebo reference="link"><sensor type=... name=...>`` blocks, in Gazebo classic's
form (``<ray>``, plugins with ``<frameName>``) or gz's (``<lidar>``, ``<topic>``, ``<gz_frame_id>``). Both are
read here into one shape: a kind, the link it sits on, its pose in that link's frame, its rate and the
kind's parameters. Older files (the PR2's) use Gazebo 0.x's pre-SDF form, ``<sensor:ray>`` / ``<sensor:camera>``
with camelCase settings in degrees and a ``<controller:...>`` driver; cameras and lasers of that form are read
into the same shape. A type we do not simulate is skipped with a warning (sensors are optional; the robot still
loads); a sensor on a link that does not exist, or a camera without a usable image size, is an error naming the
file, line and element.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from robot_core.model import validation
from robot_core.model.robot_model import Pose, RobotModel, RobotModelError, SourceRef

# Written sensor type -> the kind robot_core knows it as (classic and gz spellings of the same sensor).
SENSOR_KINDS: dict[str, str] = {
    "camera": "camera",
    "depth": "depth",
    "depth_camera": "depth",
    "rgbd_camera": "depth",
    "ray": "ray",
    "gpu_ray": "ray",
    "lidar": "ray",
    "gpu_lidar": "ray",
    "imu": "imu",
    "force_torque": "force_torque",
}
# Pre-SDF ``<sensor:TYPE>`` tags (Gazebo 0.x, e.g. the PR2 of example-robot-data) -> kind.
PRE_SDF_KINDS: dict[str, str] = {"camera": "camera", "ray": "ray"}
# A camera's <format> (Gazebo classic and gz names) -> the sensor_msgs/Image encoding its images are published in.
IMAGE_ENCODINGS: dict[str, str] = {"R8G8B8": "rgb8", "RGB_INT8": "rgb8", "B8G8R8": "bgr8", "BGR_INT8": "bgr8",
                                   "L8": "mono8", "L_INT8": "mono8"}
# Kinds whose element holds the image settings / the scan settings.
CAMERA_KINDS = ("camera", "depth")
RAY_ELEMENTS = ("ray", "lidar")
# Plugin children that name the frame a sensor's messages are stamped with (ROS 1 and ROS 2 gazebo_ros plugins).
FRAME_TAGS = ("frame_name", "frameName")
# gz sensor children that do the same.
GZ_FRAME_TAGS = ("gz_frame_id", "ignition_frame_id")


@dataclass
class SensorSpec:
    """One simulated sensor: what it is, where it sits and how often it measures.

    ``kind`` is one of the values of :data:`SENSOR_KINDS` (``gazebo_type`` keeps the type as written, e.g.
    ``gpu_ray``). ``pose`` is in the frame of ``link``. ``update_rate`` is in Hz of simulated time, None when
    the description gives none (the simulator picks the kind's default). ``params`` holds the kind's settings:
    cameras ``width``, ``height``, ``horizontal_fov`` (rad), ``format`` (as written), ``encoding`` (its
    sensor_msgs/Image encoding: rgb8, bgr8 or mono8), ``near``, ``far``; lasers
    ``samples``, ``resolution``, ``min_angle``, ``max_angle``, ``range_min``, ``range_max``,
    ``range_resolution`` (and ``vertical_samples``, ``vertical_min_angle``, ``vertical_max_angle`` when given);
    both ``noise_mean`` and ``noise_stddev`` when the ``<camera>`` / ``<ray>`` has a gaussian ``<noise>``;
    other kinds every leaf below the sensor as ``"path/to/leaf": text``. ``params["joint"]`` names the joint
    when the ``<gazebo reference>`` named a joint (Gazebo's form for force-torque sensors); ``params["plugin"]``
    the plugin's filename, when there is one.
    """

    name: str
    kind: str
    link: str
    pose: Pose = field(default_factory=Pose)
    update_rate: float | None = None
    params: dict[str, object] = field(default_factory=dict)
    source: SourceRef = field(default_factory=SourceRef)
    gazebo_type: str = ""
    always_on: bool = False
    topic: str | None = None
    frame_id: str | None = None


class _SensorReader:
    """Reads the ``<sensor>``s of one document; ``ref`` is the URDF reader's element -> SourceRef."""

    def __init__(self, model: RobotModel, ref: Callable[[ET.Element, str], SourceRef]):
        self.model = model
        self.ref = ref

    def number(self, el: ET.Element | None, where: str, default: float | None = None) -> float | None:
        if el is None or el.text is None or not el.text.strip():
            return default
        try:
            value = float(el.text.strip())
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise RobotModelError(f"<{el.tag}>{el.text.strip()}</{el.tag}> is not a finite number",
                                  self.ref(el, where))
        return value

    def count(self, el: ET.Element | None, where: str, default: int | None = None) -> int | None:
        value = self.number(el, where)
        if value is None:
            return default
        if value != int(value) or value < 1:
            raise RobotModelError(f"<{el.tag}>{el.text}</{el.tag}> must be a positive whole number",
                                  self.ref(el, where))
        return int(value)

    @staticmethod
    def text(el: ET.Element | None) -> str | None:
        if el is None or el.text is None or not el.text.strip():
            return None
        return el.text.strip()

    def sensors(self, root: ET.Element) -> list[SensorSpec]:
        out: list[SensorSpec] = []
        seen: dict[str, SensorSpec] = {}
        for gz in root.findall("gazebo"):
            reference = gz.get("reference")
            for el in gz:
                if el.tag == "sensor":
                    spec = self.sensor(el, reference, gz)
                elif el.tag.startswith("sensor:"):
                    spec = self.pre_sdf(el, reference, gz)
                else:
                    continue
                if spec is None:
                    continue
                if spec.name in seen:
                    # Gazebo scopes sensor names by link and loads such files (TALOS names two cameras alike);
                    # our topics are named after the sensor, so only the first one can be simulated.
                    validation.warn(f"sensor name '{spec.name}' is used again (first on line "
                                    f"{seen[spec.name].source.line}, link '{seen[spec.name].link}'); topics are "
                                    "named after the sensor, so this one is skipped: rename it to simulate it",
                                    spec.source)
                    continue
                seen[spec.name] = spec
                out.append(spec)
        return out

    def sensor(self, el: ET.Element, reference: str | None, gz: ET.Element) -> SensorSpec | None:
        written = (el.get("type") or "").strip()
        name = (el.get("name") or "").strip()
        where = f"<sensor name='{name}' type='{written}'>"
        ref = self.ref(el, where)
        if not name:
            raise RobotModelError("<sensor> has no name", ref)
        kind = SENSOR_KINDS.get(written)
        if kind is None:
            validation.warn(f"sensor type '{written}' is not simulated (known: {', '.join(SENSOR_KINDS)}); "
                            "sensor skipped", ref)
            return None
        link, joint = self.attachment(reference, gz, where)
        spec = SensorSpec(name=name, kind=kind, link=link, source=ref, gazebo_type=written,
                          pose=self.pose(el.find("pose"), where))
        rate = self.number(el.find("update_rate"), where)
        if rate is not None and rate < 0:
            raise RobotModelError(f"<update_rate>{rate:g}</update_rate> is negative", self.ref(el, where))
        spec.update_rate = rate if rate else None  # Gazebo's 0 means "every step": leave it to the simulator
        always = self.text(el.find("always_on"))
        spec.always_on = always is not None and always.lower() in ("1", "true")
        spec.topic = self.text(el.find("topic"))
        spec.frame_id = self.frame_id(el)
        if joint is not None:
            spec.params["joint"] = joint
        plugin = el.find("plugin")
        if plugin is not None and plugin.get("filename"):
            spec.params["plugin"] = plugin.get("filename")
        if plugin is not None:
            spec.params.update(self.plugin_topics(plugin))
        if kind in CAMERA_KINDS:
            spec.params.update(self.camera(el, where))
        elif kind == "ray":
            spec.params.update(self.ray(el, where))
        else:
            spec.params.update(self.leaves(el))
        return spec

    def attachment(self, reference: str | None, gz: ET.Element, where: str) -> tuple[str, str | None]:
        """The link the sensor sits on; a joint reference puts it on the joint's child link."""
        if reference is None or not reference.strip():
            raise RobotModelError("<gazebo> holding a <sensor> has no reference=\"link\"", self.ref(gz, where))
        reference = reference.strip()
        if reference in self.model.links:
            return reference, None
        joint = self.model.joints.get(reference)
        if joint is not None:
            return joint.child, reference
        raise RobotModelError(f"<gazebo reference=\"{reference}\"> names no link (or joint) of robot "
                              f"'{self.model.name}'", self.ref(gz, where))

    def pose(self, el: ET.Element | None, where: str) -> Pose:
        """SDF ``<pose>x y z roll pitch yaw</pose>`` (``degrees="true"`` for degrees) in the link frame."""
        if el is None or not (el.text or "").strip():
            return Pose()
        parts = el.text.split()
        try:
            values = [float(p) for p in parts]
        except ValueError:
            values = []
        if len(values) != 6 or not all(math.isfinite(v) for v in values):
            raise RobotModelError(f"<pose>{el.text.strip()}</pose> must be 6 finite numbers (x y z roll pitch yaw)",
                                  self.ref(el, where))
        relative = el.get("relative_to")
        if relative:
            validation.warn(f"<pose relative_to=\"{relative}\"> is read as relative to the sensor's link",
                            self.ref(el, where))
        rpy = np.array(values[3:])
        if (el.get("degrees") or "").strip().lower() in ("1", "true"):
            rpy = np.radians(rpy)
        return Pose(np.array(values[:3]), rpy)

    def plugin_topics(self, plugin: ET.Element) -> dict[str, object]:
        """What a gazebo_ros plugin says about its topics (for :func:`description_topics`): ROS 2's
        ``<ros><namespace>`` / ``<remapping>`` and ``<camera_name>``, ROS 1's ``robotNamespace``, ``topicName``,
        ``imageTopicName``, ``cameraInfoTopicName``, ``cameraName``; the plugin's name (ROS 2's default topic of a
        ray sensor is ``~/out`` of a node named after it)."""
        out: dict[str, object] = {}
        for key, tags in (("ros_namespace", ("ros/namespace", "robotNamespace")),
                          ("camera_name", ("camera_name", "cameraName")), ("topic_name", ("topicName",)),
                          ("image_topic", ("imageTopicName",)), ("info_topic", ("cameraInfoTopicName",))):
            found = next((t for t in (self.text(plugin.find(tag)) for tag in tags) if t), None)
            if found:
                out[key] = found
        remaps = [r.text.strip() for r in plugin.findall("ros/remapping") if r.text and ":=" in r.text]
        if remaps:
            out["ros_remappings"] = remaps
        if plugin.get("name"):
            out["plugin_name"] = plugin.get("name")
        return out

    def frame_id(self, el: ET.Element) -> str | None:
        for tag in GZ_FRAME_TAGS:
            found = self.text(el.find(tag))
            if found:
                return found
        optical = self.text(el.find("camera/optical_frame_id"))
        if optical:
            return optical
        for plugin in el.findall("plugin"):
            for tag in FRAME_TAGS:
                found = self.text(plugin.find(tag))
                if found:
                    return found
        return None

    def camera(self, el: ET.Element, where: str) -> dict[str, object]:
        cam = el.find("camera")
        if cam is None:
            raise RobotModelError("camera sensor has no <camera>", self.ref(el, where))
        cw = f"{where} <camera>"
        image = cam.find("image")
        width = self.count(None if image is None else image.find("width"), cw, 320)
        height = self.count(None if image is None else image.find("height"), cw, 240)
        fov = self.number(cam.find("horizontal_fov"), cw, 1.047)
        if not 0.0 < fov < math.pi:
            raise RobotModelError(f"<horizontal_fov>{fov:g}</horizontal_fov> must lie in (0, pi) rad",
                                  self.ref(cam.find("horizontal_fov"), cw))
        clip = cam.find("clip")
        near = self.number(None if clip is None else clip.find("near"), cw, 0.1)
        far = self.number(None if clip is None else clip.find("far"), cw, 100.0)
        if not 0.0 < near < far:
            raise RobotModelError(f"camera clip near={near:g}, far={far:g}: need 0 < near < far",
                                  self.ref(clip if clip is not None else cam, cw))
        fmt_el = None if image is None else image.find("format")
        fmt = self.text(fmt_el) or "R8G8B8"
        return {"width": width, "height": height, "horizontal_fov": fov, "format": fmt,
                "encoding": self.encoding(fmt, fmt_el if fmt_el is not None else cam, cw), "near": near, "far": far,
                **self.noise(cam.find("noise"), cw)}

    def encoding(self, fmt: str, el: ET.Element, where: str) -> str:
        """The sensor_msgs/Image encoding of a camera's ``<format>`` (:data:`IMAGE_ENCODINGS`); another format is
        warned about (file, line) and published as rgb8."""
        encoding = IMAGE_ENCODINGS.get(fmt.strip().upper())
        if encoding is None:
            validation.warn(f"image format '{fmt}' is not simulated (known: {', '.join(IMAGE_ENCODINGS)}); the "
                            "camera publishes rgb8", self.ref(el, where))
            return "rgb8"
        return encoding

    def noise(self, el: ET.Element | None, where: str) -> dict[str, object]:
        """Gazebo's ``<noise>`` of a camera or laser as ``noise_mean`` / ``noise_stddev`` (none: {}). The type is
        the ``type`` attribute (classic) or a ``<type>`` child (SDF 1.6+); ``gaussian_quantized`` is simulated as
        gaussian, another type is warned about and ignored."""
        if el is None:
            return {}
        nw = f"{where} <noise>"
        kind = (el.get("type") or self.text(el.find("type")) or "gaussian").strip().lower()
        if kind == "none":
            return {}
        if kind not in ("gaussian", "gaussian_quantized"):
            validation.warn(f"noise type '{kind}' is not simulated (gaussian); no noise added", self.ref(el, nw))
            return {}
        if kind == "gaussian_quantized":
            validation.warn("noise type 'gaussian_quantized' is simulated as gaussian (no quantisation)",
                            self.ref(el, nw))
        mean = self.number(el.find("mean"), nw, 0.0)
        stddev = self.number(el.find("stddev"), nw, 0.0)
        if stddev < 0.0:
            raise RobotModelError(f"<stddev>{stddev:g}</stddev> must be >= 0", self.ref(el.find("stddev"), nw))
        return {"noise_mean": mean, "noise_stddev": stddev} if (mean or stddev) else {}

    def ray(self, el: ET.Element, where: str) -> dict[str, object]:
        ray = next((r for r in (el.find(t) for t in RAY_ELEMENTS) if r is not None), None)
        if ray is None:
            raise RobotModelError(f"laser sensor has no <{'> or <'.join(RAY_ELEMENTS)}>", self.ref(el, where))
        rw = f"{where} <{ray.tag}>"
        horizontal = ray.find("scan/horizontal")
        if horizontal is None:
            raise RobotModelError(f"<{ray.tag}> has no <scan><horizontal>", self.ref(ray, rw))
        hw = f"{rw} <horizontal>"
        out: dict[str, object] = {
            "samples": self.count(horizontal.find("samples"), hw, 640),
            "resolution": self.number(horizontal.find("resolution"), hw, 1.0),
            "min_angle": self.number(horizontal.find("min_angle"), hw, 0.0),
            "max_angle": self.number(horizontal.find("max_angle"), hw, 0.0),
        }
        if out["max_angle"] < out["min_angle"]:
            raise RobotModelError(f"max_angle {out['max_angle']:g} < min_angle {out['min_angle']:g}",
                                  self.ref(horizontal, hw))
        vertical = ray.find("scan/vertical")
        if vertical is not None:
            vw = f"{rw} <vertical>"
            out["vertical_samples"] = self.count(vertical.find("samples"), vw, 1)
            out["vertical_min_angle"] = self.number(vertical.find("min_angle"), vw, 0.0)
            out["vertical_max_angle"] = self.number(vertical.find("max_angle"), vw, 0.0)
        rng = ray.find("range")
        if rng is None:
            raise RobotModelError(f"<{ray.tag}> has no <range>", self.ref(ray, rw))
        gw = f"{rw} <range>"
        out["range_min"] = self.number(rng.find("min"), gw, 0.0)
        out["range_max"] = self.number(rng.find("max"), gw)
        if out["range_max"] is None:
            raise RobotModelError("<range> has no <max>", self.ref(rng, gw))
        if not 0.0 <= out["range_min"] < out["range_max"]:
            raise RobotModelError(f"range min={out['range_min']:g}, max={out['range_max']:g}: need "
                                  "0 <= min < max", self.ref(rng, gw))
        out["range_resolution"] = self.number(rng.find("resolution"), gw, 0.0)
        out.update(self.noise(ray.find("noise"), rw))
        return out

    def pre_sdf(self, el: ET.Element, reference: str | None, gz: ET.Element) -> SensorSpec | None:
        """The pre-SDF form ``<sensor:ray>`` / ``<sensor:camera>`` (Gazebo 0.x URDFs such as the PR2's), read
        into the same SensorSpec as ``<sensor type=...>``: its angles are in degrees, its settings are
        camelCase children of the sensor, the driver's frame and topic sit in a ``<controller:...>`` child."""
        written = el.tag.split(":", 1)[1]
        name = (el.get("name") or "").strip()
        where = f"<{el.tag} name='{name}'>"
        ref = self.ref(el, where)
        if not name:
            raise RobotModelError(f"<{el.tag}> has no name", ref)
        kind = PRE_SDF_KINDS.get(written)
        if kind is None:
            validation.warn(f"pre-SDF sensor type '{written}' is not simulated (known: "
                            f"{', '.join('sensor:' + k for k in PRE_SDF_KINDS)}); sensor skipped", ref)
            return None
        link, joint = self.attachment(reference, gz, where)
        spec = SensorSpec(name=name, kind=kind, link=link, source=ref, gazebo_type=el.tag,
                          pose=self.pre_sdf_origin(el.find("origin"), where))
        controller = next((c for c in el if c.tag.startswith("controller:")), None)
        rate = self.number(el.find("updateRate"), where)
        if rate is None and controller is not None:
            rate = self.number(controller.find("updateRate"), where)
        if rate is not None and rate < 0:
            raise RobotModelError(f"<updateRate>{rate:g}</updateRate> is negative", ref)
        spec.update_rate = rate if rate else None
        if controller is not None:
            always = self.text(controller.find("alwaysOn"))
            spec.always_on = always is not None and always.lower() in ("1", "true")
            spec.frame_id = self.text(controller.find("frameName"))
            spec.topic = self.text(controller.find("topicName")) or self.text(controller.find("imageTopicName"))
            info = self.text(controller.find("cameraInfoTopicName"))
            if info:
                spec.params["info_topic"] = info
            if controller.get("plugin"):
                spec.params["plugin"] = controller.get("plugin")
        if joint is not None:
            spec.params["joint"] = joint
        spec.params.update(self.pre_sdf_camera(el, where) if kind == "camera" else self.pre_sdf_ray(el, where))
        return spec

    def pre_sdf_origin(self, el: ET.Element | None, where: str) -> Pose:
        """``<origin>x y z</origin>`` of a pre-SDF sensor: a translation in the link frame."""
        if el is None or not (el.text or "").strip():
            return Pose()
        try:
            values = [float(v) for v in el.text.split()]
        except ValueError:
            values = []
        if len(values) != 3 or not all(math.isfinite(v) for v in values):
            raise RobotModelError(f"<origin>{el.text.strip()}</origin> must be 3 finite numbers (x y z)",
                                  self.ref(el, where))
        return Pose(np.array(values), np.zeros(3))

    def pre_sdf_camera(self, el: ET.Element, where: str) -> dict[str, object]:
        size = el.find("imageSize")
        parts = (size.text or "").split() if size is not None else ["320", "240"]
        try:
            width, height = (int(p) for p in parts)
        except ValueError:
            width = height = 0
        if width < 1 or height < 1:
            raise RobotModelError(f"<imageSize>{' '.join(parts)}</imageSize> must be two positive whole numbers "
                                  "(width height)", self.ref(size if size is not None else el, where))
        hfov_el = el.find("hfov")
        hfov_deg = self.number(hfov_el, where, 60.0)
        if not 0.0 < hfov_deg < 180.0:
            raise RobotModelError(f"<hfov>{hfov_deg:g}</hfov> must lie in (0, 180) degrees",
                                  self.ref(hfov_el if hfov_el is not None else el, where))
        near = self.number(el.find("nearClip"), where, 0.1)
        far = self.number(el.find("farClip"), where, 100.0)
        if not 0.0 < near < far:
            raise RobotModelError(f"camera nearClip={near:g}, farClip={far:g}: need 0 < near < far",
                                  self.ref(el, where))
        fmt = self.text(el.find("imageFormat")) or "R8G8B8"
        return {"width": width, "height": height, "horizontal_fov": math.radians(hfov_deg), "format": fmt,
                "encoding": self.encoding(fmt, el.find("imageFormat") if el.find("imageFormat") is not None else el,
                                          where),
                "near": near, "far": far}

    def pre_sdf_ray(self, el: ET.Element, where: str) -> dict[str, object]:
        lo = self.number(el.find("minAngle"), where, -90.0)
        hi = self.number(el.find("maxAngle"), where, 90.0)
        if hi < lo:
            raise RobotModelError(f"maxAngle {hi:g} < minAngle {lo:g}", self.ref(el, where))
        rays = el.find("rayCount")
        ranges = self.count(el.find("rangeCount"), where)
        samples = self.count(rays, where, ranges or 640)
        if ranges is not None and ranges != samples:
            validation.warn(f"rangeCount {ranges} differs from rayCount {samples}: the scan has rayCount "
                            "ranges (Gazebo interpolated to rangeCount)", self.ref(el, where))
        laser_count = self.count(el.find("laserCount"), where, 1)
        if laser_count != 1:
            validation.warn(f"laserCount {laser_count}: only the horizontal fan is simulated",
                            self.ref(el, where))
        range_min = self.number(el.find("minRange"), where, 0.0)
        range_max = self.number(el.find("maxRange"), where)
        if range_max is None:
            raise RobotModelError("pre-SDF laser has no <maxRange>", self.ref(el, where))
        if not 0.0 <= range_min < range_max:
            raise RobotModelError(f"minRange={range_min:g}, maxRange={range_max:g}: need 0 <= min < max",
                                  self.ref(el, where))
        return {"samples": samples, "resolution": 1.0, "min_angle": math.radians(lo), "max_angle": math.radians(hi),
                "range_min": range_min, "range_max": range_max,
                "range_resolution": self.number(el.find("resRange"), where, 0.0)}

    def leaves(self, el: ET.Element) -> dict[str, object]:
        """Every leaf below the sensor but its plugins, as ``"a/b/c": text`` (for kinds read elsewhere)."""
        out: dict[str, object] = {}

        def walk(node: ET.Element, prefix: str) -> None:
            for child in node:
                if child.tag == "plugin" or (not prefix and child.tag in ("pose", "update_rate", "always_on",
                                                                          "topic", "visualize")):
                    continue
                path = f"{prefix}{child.tag}"
                if len(child):
                    walk(child, path + "/")
                elif (child.text or "").strip():
                    out[path] = child.text.strip()

        walk(el, "")
        return out


def read_sensors(root: ET.Element, model: RobotModel, ref: Callable[[ET.Element, str], SourceRef]) -> list[SensorSpec]:
    """The sensors of a parsed ``<robot>`` whose links and joints are already in ``model``."""
    return _SensorReader(model, ref).sensors(root)


def _join(*parts: object) -> str:
    return "/".join(str(p).strip("/") for p in parts if p and str(p).strip("/"))


def description_topics(spec: SensorSpec) -> dict[str, str]:
    """The topics the description's Gazebo plugin would publish a camera's or laser's data on (relative names stay
    relative; the node's namespace applies): keys ``image``, ``info``, ``depth`` for cameras, ``scan`` for lasers.

    gazebo_ros (ROS 2): ``<ns>/<camera_name>/image_raw`` (``camera_info``, ``depth/image_raw``), a ray sensor's
    ``<ns>/<plugin name>/out``, each after the plugin's ``<remapping>from:=to</remapping>`` (``~/`` dropped); ROS 1
    and pre-SDF: ``imageTopicName`` / ``cameraInfoTopicName`` / ``topicName`` under ``robotNamespace`` and
    ``cameraName``; gz: the sensor's ``<topic>`` (a camera's info beside it). Without any of them: the names
    robot_core uses by default, ``<name>/image_raw`` etc. ``params["topics"]`` (set by a robot group, which puts
    the robot's topics under its namespace) gives them outright."""
    p = spec.params
    if isinstance(p.get("topics"), dict):
        return {str(k): str(v) for k, v in p["topics"].items()}
    ns = str(p.get("ros_namespace") or "")
    remap = {}
    for rule in p.get("ros_remappings") or []:
        src, _, dst = str(rule).partition(":=")
        remap[src.strip().removeprefix("~/")] = dst.strip()

    def placed(topic: str) -> str:
        return topic if topic.startswith("/") else (("/" if ns.startswith("/") else "") + _join(ns, topic))

    if spec.kind in CAMERA_KINDS:
        cam = str(p.get("camera_name") or spec.name)
        image = p.get("image_topic") or spec.topic
        if image:  # ROS 1, pre-SDF or gz <topic>: named outright
            image = str(image)
            base = image.rsplit("/", 1)[0] if "/" in image.strip("/") else ""
            if p.get("image_topic") and p.get("camera_name") and not image.startswith("/"):
                image, base = _join(cam, image), _join(cam, base)
            info = str(p.get("info_topic") or _join(base, "camera_info"))
            if p.get("info_topic") and p.get("camera_name") and not info.startswith("/"):
                info = _join(cam, info)
            out = {"image": image, "info": info, "depth": _join(base, "depth/image_raw")}
        else:  # gazebo_ros (ROS 2) camera: <camera_name>/<topic>, remapped by either name
            out = {key: remap.get(f"{cam}/{topic}", remap.get(topic, _join(cam, topic)))
                   for key, topic in (("image", "image_raw"), ("info", "camera_info"), ("depth", "depth/image_raw"))}
        return {key: placed(topic) for key, topic in out.items()}
    scan = remap.get("out") or p.get("topic_name") or spec.topic
    if not scan:
        plugin = str(p.get("plugin") or "")
        scan = _join(p.get("plugin_name"), "out") if "gazebo_ros_ray_sensor" in plugin and p.get("plugin_name") \
            else _join(spec.name, "scan")
    return {"scan": placed(str(scan))}


def sensors_of(model: RobotModel, kind: str | tuple[str, ...]) -> list[SensorSpec]:
    """The model's sensors of one kind (or several), in document order."""
    kinds = (kind,) if isinstance(kind, str) else kind
    return [s for s in model.sensors if s.kind in kinds]


def select_sensors(sensors: list[SensorSpec], names: Sequence[str] = (),
                   rates: Mapping[str, float] | None = None) -> list[SensorSpec]:
    """The cameras and lasers named in ``names`` (all when empty; other kinds are kept), with ``rates`` [Hz]
    replacing their update rates: a big robot's sensors cost more than a small machine renders (the PR2's
    2448 x 2050 camera). A name or rate key the list does not have, or a rate <= 0, is a ValueError naming it."""
    rates = dict(rates or {})
    simulated = {s.name for s in sensors if s.kind in (*CAMERA_KINDS, "ray")}
    for what, wanted in (("sensors", list(names)), ("sensor_rates", list(rates))):
        unknown = [n for n in wanted if n not in simulated]
        if unknown:
            raise ValueError(f"parameter '{what}' names {', '.join(repr(n) for n in unknown)}, which is not a "
                             f"camera or laser of the description (it has: {', '.join(sorted(simulated)) or 'none'})")
    for name, rate in rates.items():
        if not (math.isfinite(rate) and rate > 0.0):
            raise ValueError(f"parameter 'sensor_rates.{name}' = {rate!r} must be a positive rate in Hz")
    out = []
    for s in sensors:
        if names and s.name in simulated and s.name not in names:
            continue
        out.append(replace(s, update_rate=rates[s.name]) if s.name in rates else s)
    return out
