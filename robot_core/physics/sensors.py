"""The robot's ros2_control sensors simulated by MuJoCo: which MuJoCo sensors each one becomes, and the read-out of
their values into ros2_control state interfaces.

A ``<sensor name="...">`` inside ``<ros2_control>`` is recognised by its state interfaces (the names
ros2_controllers' semantic components read) and sits on the link named by its ``frame_id`` param (as in
ros2_control's demos and mujoco_ros2_control; a sensor named like a link may leave it out):

* force-torque: ``force.x/y/z``, ``torque.x/y/z`` -> MuJoCo ``force`` + ``torque`` (``<name>_force``,
  ``<name>_torque``);
* IMU: ``orientation.x/y/z/w``, ``angular_velocity.x/y/z``, ``linear_acceleration.x/y/z`` -> ``framequat`` +
  ``gyro`` + ``accelerometer`` (``<name>_quat``, ``<name>_gyro``, ``<name>_accel``);
* range: ``range`` -> ``rangefinder`` (``<name>_range``) looking along the link's +x, as sensor_msgs/Range does;
* pose: ``position.x/y/z`` (+ ``orientation.x/y/z/w``) -> ``framepos`` + ``framequat`` (``<name>_pos``,
  ``<name>_quat``).

Any subset of a kind's interfaces, in any order; each kind's MuJoCo sensors sit on one site at the link frame
(``<name>:site``). An orientation-only sensor is an IMU; ``position.*`` makes it a pose sensor. MuJoCo sensors
of those names already in the spec (an MJCF robot that declares them, mujoco_ros2_control style) are used as they
are.

Gazebo's ``<gazebo reference="link"><sensor type="imu|force_torque">`` blocks (read by
:mod:`robot_core.model.sensors` into ``RobotModel.sensors``) are simulated too, as sensors of that name with
every interface of their kind, at their ``<pose>`` in the link frame (a force-torque sensor referenced to a
joint sits on its child link); Gazebo's ``<noise>`` stddevs become the noise below, and ``measure_direction``
``parent_to_child`` flips the wrench's sign. A ros2_control ``<sensor>`` of the same name (gz_ros2_control's
convention) declares the interfaces and takes link and pose from the Gazebo block when it has no ``frame_id``.

Values and conventions (documented in doc/nodes/simulator.md):

* force-torque: the wrench the child side of the link's parent joint (the link and everything beyond it) exerts
  on the parent side, in the link frame, torque about the link origin -- Gazebo's default ``child_to_parent``
  measure direction, i.e. the load the sensor carries: a 1 kg body hanging below a sensor whose z points up reads
  ``force.z = -9.81``. MuJoCo's ``force``/``torque`` sensors report the opposite (what the parent exerts on the
  child), so both are negated, as mujoco_ros2_control's hardware interface does with the same MuJoCo sensors.
* IMU: orientation of the link frame in the world (x, y, z, w), angular velocity and proper acceleration in the
  link frame (at rest: +9.81 m/s^2 along the world's up axis, as a real accelerometer and Gazebo report).
* range: distance (m) to the first geom along the link's +x axis (the link's own geoms excluded); +inf where the
  ray hits nothing (REP 117).
* pose: position and orientation of the link frame in the world.

Noise (robot_core.physics.noise): ``<param name="<group>_noise_stddev">`` and ``<group>_noise_mean`` (groups
``force``, ``torque``, ``orientation``, ``angular_velocity``, ``linear_acceleration``, ``range``, ``position``) add
Gaussian noise of that mean and standard deviation to the group's values (orientation: a small random rotation of
stddev radians per axis); a Gazebo block's ``<noise>`` (its x axis' for an IMU) gives the same. The engine's
``sensor_seed`` (the nodes' ``noise_seed`` parameter) makes it repeatable. Values are those MuJoCo computed in
the last step (the state at its start).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import mujoco
import numpy as np

from robot_core.model import validation
from robot_core.model.robot_model import RobotModel, RobotModelError, Ros2ControlSensor, SourceRef
from robot_core.model.sensors import SensorSpec
from robot_core.physics.noise import GaussianNoise, check_noise

FORCE_TORQUE, IMU, RANGE, POSE = "force_torque", "imu", "range", "pose"
_XYZ = ("x", "y", "z")
_QUAT = ("x", "y", "z", "w")
KIND_INTERFACES: dict[str, tuple[str, ...]] = {
    FORCE_TORQUE: tuple(f"force.{a}" for a in _XYZ) + tuple(f"torque.{a}" for a in _XYZ),
    IMU: tuple(f"orientation.{a}" for a in _QUAT) + tuple(f"angular_velocity.{a}" for a in _XYZ)
    + tuple(f"linear_acceleration.{a}" for a in _XYZ),
    RANGE: ("range",),
    POSE: tuple(f"position.{a}" for a in _XYZ) + tuple(f"orientation.{a}" for a in _QUAT),
}
NOISE_GROUPS = ("force", "torque", "orientation", "angular_velocity", "linear_acceleration", "range", "position")
# A rangefinder looks along its site's +z; sensor_msgs/Range along the frame's +x: the site is the link frame
# turned +90 deg about y (w, x, y, z).
_Z_TO_X = np.array([math.sqrt(0.5), 0.0, math.sqrt(0.5), 0.0])


@dataclass
class SimSensor:
    """One ros2_control sensor as the simulator sees it: its kind, link and interfaces (declared order)."""

    name: str
    kind: str
    link: str
    interfaces: list[str]
    noise: dict[str, GaussianNoise] = field(default_factory=dict)  # group (force, angular_velocity, ...) -> noise
    source: SourceRef = field(default_factory=SourceRef)
    #: the sensor frame in the link frame (4x4; None: the link frame itself)
    offset: np.ndarray | None = None
    #: force-torque: -1 reports the child's wrench on the parent (child_to_parent), +1 the parent's on the child
    direction: float = -1.0

    @property
    def site(self) -> str:
        return f"{self.name}:site"


def classify(interfaces: Sequence[str], where: SourceRef) -> str:
    """The kind a sensor's state interfaces make it; an interface no kind has is an error naming it."""
    known = {i for names in KIND_INTERFACES.values() for i in names}
    unknown = [i for i in interfaces if i not in known]
    if unknown:
        raise RobotModelError(f"state interface '{unknown[0]}' is not one the simulator provides (force-torque: "
                              f"force.x..torque.z; IMU: orientation.x..w, angular_velocity.*, linear_acceleration.*; "
                              f"range: range; pose: position.*, orientation.*)", where)
    if not interfaces:
        raise RobotModelError("sensor has no <state_interface>", where)
    names = set(interfaces)
    if any(i.startswith("position.") for i in names):
        kinds = [POSE]
    else:
        kinds = [k for k in (FORCE_TORQUE, IMU, RANGE) if names & set(KIND_INTERFACES[k])]
    if len(kinds) != 1 or not names <= set(KIND_INTERFACES[kinds[0]]):
        raise RobotModelError(f"state interfaces {sorted(names)} mix sensor kinds; declare one sensor per kind "
                              "(force-torque, IMU, range, pose)", where)
    return kinds[0]


def _noise(sensor: Ros2ControlSensor, kind: str, where: SourceRef) -> dict[str, GaussianNoise]:
    """``<param name="<group>_noise_stddev">`` and ``<group>_noise_mean`` of a ros2_control sensor."""
    found: dict[str, dict[str, float]] = {}
    groups = {i.split(".")[0] for i in KIND_INTERFACES[kind]}
    for key, raw in sensor.params.items():
        part = next((p for p in ("stddev", "mean") if key.endswith(f"_noise_{p}")), None)
        if part is None:
            continue
        group = key[: -len(f"_noise_{part}")]
        if group not in groups:
            raise RobotModelError(f"param '{key}' does not apply to a {kind} sensor (noise groups: "
                                  f"{', '.join(sorted(groups))})", where)
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or (part == "stddev" and value < 0.0):
            need = "a number >= 0" if part == "stddev" else "a finite number"
            raise RobotModelError(f"param '{key}' must be {need}, got '{raw}'", where)
        found.setdefault(group, {})[part] = value
    return {g: GaussianNoise(v.get("mean", 0.0), v.get("stddev", 0.0)) for g, v in found.items()}


def robot_sensors(robot: RobotModel) -> list[SimSensor]:
    """Every sensor the simulator provides for the robot, checked: the ros2_control ``<sensor>``s (a known kind on
    an existing link), then the Gazebo IMU and force-torque blocks no ros2_control sensor names."""
    out: list[SimSensor] = []
    seen: dict[str, SourceRef] = {}
    gazebo = {g.name: g for g in getattr(robot, "sensors", []) if g.kind in (IMU, FORCE_TORQUE)}
    for block in robot.ros2_control:
        for s in block.sensors:
            where = s.source if s.source.element else SourceRef(robot.source_file, None, f"<sensor name='{s.name}'>")
            if s.name in seen:
                raise RobotModelError(f"sensor '{s.name}' is declared twice (also at {seen[s.name]})", where)
            seen[s.name] = where
            names = [i.name for i in s.state_interfaces]
            kind = classify(names, where)
            sensor = SimSensor(s.name, kind, "", names, _noise(s, kind, where), where)
            link = s.params.get("frame_id", "").strip()
            twin = gazebo.pop(s.name, None)
            if not link and twin is not None:
                _take_gazebo_placement(sensor, twin)
                link = twin.link
            elif not link:
                if s.name not in robot.links:
                    raise RobotModelError("sensor has no <param name=\"frame_id\"> naming the link it sits on",
                                          where)
                link = s.name
            if link not in robot.links:
                raise RobotModelError(f"frame_id '{link}' is not a link of robot '{robot.name}'", where)
            sensor.link = link
            out.append(sensor)
    for spec in gazebo.values():
        if spec.name in seen:
            raise RobotModelError(f"Gazebo sensor '{spec.name}' has the name of another sensor ({seen[spec.name]})",
                                  spec.source)
        seen[spec.name] = spec.source
        sensor = SimSensor(spec.name, spec.kind, spec.link, list(KIND_INTERFACES[spec.kind]), source=spec.source)
        _take_gazebo_placement(sensor, spec)
        out.append(sensor)
    return out


def _take_gazebo_placement(sensor: SimSensor, spec: SensorSpec) -> None:
    """Pose, noise and (force-torque) measure direction of a Gazebo ``<sensor>`` block."""
    if spec.kind != sensor.kind:
        raise RobotModelError(f"ros2_control sensor '{sensor.name}' is {sensor.kind}, its Gazebo block of the same "
                              f"name {spec.kind}", sensor.source)
    pose = spec.pose.matrix()
    if spec.kind == FORCE_TORQUE:
        frame = str(spec.params.get("force_torque/frame", "child")).strip()
        if frame == "parent":
            validation.warn("<force_torque><frame>parent</frame> is reported in the child frame (the sensor's "
                            "link) by the simulator", spec.source)
        if frame != "sensor":
            pose = np.eye(4)  # Gazebo measures at the joint, in the child link's frame
        direction = str(spec.params.get("force_torque/measure_direction", "child_to_parent")).strip()
        sensor.direction = 1.0 if direction == "parent_to_child" else -1.0
    if not np.allclose(pose, np.eye(4)):
        sensor.offset = pose
    groups = {IMU: {"angular_velocity": "imu/angular_velocity/x/noise/",
                    "linear_acceleration": "imu/linear_acceleration/x/noise/",
                    "orientation": "imu/orientation/x/noise/"},
              FORCE_TORQUE: {"force": "force_torque/noise/", "torque": "force_torque/noise/"}}
    for group, prefix in groups[spec.kind].items():
        if group in sensor.noise:
            continue  # the ros2_control sensor's own param wins
        values = {}
        for part in ("mean", "stddev"):
            key = prefix + part
            raw = spec.params.get(key, spec.params.get(f"noise/{part}") if spec.kind == FORCE_TORQUE else None)
            if raw is None:
                continue
            try:
                values[part] = float(str(raw))
            except ValueError:
                values[part] = math.nan
            problem = check_noise(values.get("mean", 0.0), values.get("stddev", 0.0))
            if problem:
                raise RobotModelError(f"{problem} ({key} = '{raw}')", spec.source)
        if values:
            sensor.noise[group] = GaussianNoise(values.get("mean", 0.0), values.get("stddev", 0.0))


def _mj_sensors(sensor: SimSensor) -> list[tuple[str, mujoco.mjtSensor]]:
    t = mujoco.mjtSensor
    return {
        FORCE_TORQUE: [("force", t.mjSENS_FORCE), ("torque", t.mjSENS_TORQUE)],
        IMU: [("quat", t.mjSENS_FRAMEQUAT), ("gyro", t.mjSENS_GYRO), ("accel", t.mjSENS_ACCELEROMETER)],
        RANGE: [("range", t.mjSENS_RANGEFINDER)],
        POSE: [("pos", t.mjSENS_FRAMEPOS), ("quat", t.mjSENS_FRAMEQUAT)],
    }[sensor.kind]


def add_sensors(spec: mujoco.MjSpec, sensors: Sequence[SimSensor],
                link_frames: dict[str, tuple[str, np.ndarray]] | None = None) -> None:
    """Add each sensor's site (at its link frame) and MuJoCo sensors to the uncompiled spec.

    ``link_frames`` (an MJCF robot's): link -> (body, link frame in the body frame); default: the body named like
    the link, at its origin (the builder's URDF layout)."""
    existing = {s.name for s in spec.sensors}
    for sensor in sensors:
        body_name, offset = (link_frames or {}).get(sensor.link, (sensor.link, np.eye(4)))
        if sensor.offset is not None:
            offset = offset @ sensor.offset
        body = spec.body(body_name)
        if body is None:
            raise RobotModelError(f"link '{sensor.link}' has no body in the simulation", sensor.source)
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, np.ascontiguousarray(offset[:3, :3]).reshape(9))
        if sensor.kind == RANGE:
            turned = np.zeros(4)
            mujoco.mju_mulQuat(turned, quat, _Z_TO_X)
            quat = turned
        if spec.site(sensor.site) is None:
            body.add_site(name=sensor.site, pos=offset[:3, 3], quat=quat, group=5)
        for suffix, mj_type in _mj_sensors(sensor):
            name = f"{sensor.name}_{suffix}"
            if name in existing:
                continue
            added = spec.add_sensor(name=name, type=mj_type, objtype=mujoco.mjtObj.mjOBJ_SITE, objname=sensor.site)
            if mj_type == mujoco.mjtSensor.mjSENS_RANGEFINDER and hasattr(mujoco, "mjtRayDataField"):
                # MuJoCo >= 3.4: which ray data the sensor outputs (MJCF's default, the distance only)
                added.intprm[0] = 1 << int(mujoco.mjtRayDataField.mjRAYDATA_DIST)


class SensorReadout:
    """Reads every sensor's values from ``MjData.sensordata`` into one flat vector, sensors in declaration
    order and each sensor's values in its declared interface order (:attr:`names`: ``<sensor>/<interface>``)."""

    def __init__(self, sensors: Sequence[SimSensor], seed: int | None = None):
        self.sensors = list(sensors)
        self.names = [f"{s.name}/{i}" for s in self.sensors for i in s.interfaces]
        self.values = np.zeros(len(self.names))
        self._rng = np.random.default_rng(None if seed is not None and seed < 0 else seed)

    def __len__(self) -> int:
        return len(self.names)

    def bind(self, model: mujoco.MjModel) -> None:
        """Look the MuJoCo sensors up in ``model`` (again after every recompile)."""
        self._slots: list[tuple[SimSensor, dict[str, int], int]] = []  # noisy sensors: read one by one
        gather: list[tuple[int, int, float]] = []
        start = 0
        for s in self.sensors:
            adr = {}
            for suffix, _ in _mj_sensors(s):
                sid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, f"{s.name}_{suffix}")
                if sid < 0:
                    raise RobotModelError(f"MuJoCo sensor '{s.name}_{suffix}' is missing from the compiled model",
                                          s.source)
                adr[suffix] = int(model.sensor_adr[sid])
            if s.noise:
                self._slots.append((s, adr, start))
            else:
                for k, iface in enumerate(s.interfaces):
                    src, scale = _source(s, adr, iface)
                    gather.append((start + k, src, scale))
            start += len(s.interfaces)
        # noise-free sensors: one gather (address, sign) per value; a range finder's -1 (no hit) becomes +inf
        self._dst = np.array([g[0] for g in gather], dtype=np.intp)
        self._src = np.array([g[1] for g in gather], dtype=np.intp)
        self._scale = np.array([g[2] for g in gather])
        self._range_dst = np.array([start for s, start in zip(self.sensors, self._starts(), strict=True)
                                    if s.kind == RANGE and not s.noise], dtype=np.intp)

    def _starts(self) -> list[int]:
        return np.cumsum([0] + [len(s.interfaces) for s in self.sensors])[:-1].tolist()

    def read(self, data: mujoco.MjData) -> np.ndarray:
        """The current values (a view reused by the next call; copy to keep)."""
        raw = data.sensordata
        out = self.values
        if len(self._dst):
            out[self._dst] = raw[self._src] * self._scale
            if len(self._range_dst):
                rng = out[self._range_dst]
                out[self._range_dst] = np.where(rng < 0.0, math.inf, rng)
        for s, adr, start in self._slots:
            vals = self._convert(s, adr, raw)
            self._add_noise(s, vals)
            for k, iface in enumerate(s.interfaces):
                out[start + k] = vals[iface]
        return out

    @staticmethod
    def _convert(s: SimSensor, adr: dict[str, int], raw: np.ndarray) -> dict[str, float]:
        vals: dict[str, float] = {}
        if s.kind == FORCE_TORQUE:
            sign = s.direction
            f, t = sign * raw[adr["force"]: adr["force"] + 3], sign * raw[adr["torque"]: adr["torque"] + 3]
            vals.update({f"force.{a}": float(v) for a, v in zip(_XYZ, f, strict=True)})
            vals.update({f"torque.{a}": float(v) for a, v in zip(_XYZ, t, strict=True)})
        elif s.kind == RANGE:
            d = float(raw[adr["range"]])
            vals["range"] = d if d >= 0.0 else math.inf
        else:
            if s.kind == POSE:
                p = raw[adr["pos"]: adr["pos"] + 3]
                vals.update({f"position.{a}": float(v) for a, v in zip(_XYZ, p, strict=True)})
            w, x, y, z = raw[adr["quat"]: adr["quat"] + 4]
            vals.update({"orientation.x": float(x), "orientation.y": float(y), "orientation.z": float(z),
                         "orientation.w": float(w)})
            if s.kind == IMU:
                g, a = raw[adr["gyro"]: adr["gyro"] + 3], raw[adr["accel"]: adr["accel"] + 3]
                vals.update({f"angular_velocity.{c}": float(v) for c, v in zip(_XYZ, g, strict=True)})
                vals.update({f"linear_acceleration.{c}": float(v) for c, v in zip(_XYZ, a, strict=True)})
        return vals

    def _add_noise(self, s: SimSensor, vals: dict[str, float]) -> None:
        rng = self._rng
        for group, noise in s.noise.items():
            if not noise:
                continue
            if group == "orientation":  # a random rotation of stddev rad per axis (the mean is not used)
                q = np.array([vals["orientation.w"], vals["orientation.x"], vals["orientation.y"],
                              vals["orientation.z"]])
                dq = np.zeros(4)
                mujoco.mju_axisAngle2Quat(dq, *_random_rotation(rng, noise.stddev))
                out = np.zeros(4)
                mujoco.mju_mulQuat(out, q, dq)
                vals.update({"orientation.w": float(out[0]), "orientation.x": float(out[1]),
                             "orientation.y": float(out[2]), "orientation.z": float(out[3])})
                continue
            for key in [k for k in vals if k == group or k.startswith(group + ".")]:
                if math.isfinite(vals[key]):
                    vals[key] += float(rng.normal(noise.mean, noise.stddev))


_QUAT_OFFSET = {"w": 0, "x": 1, "y": 2, "z": 3}  # MuJoCo's quaternion order


def _source(s: SimSensor, adr: dict[str, int], iface: str) -> tuple[int, float]:
    """Where in ``sensordata`` one interface's value is, and its sign."""
    group, _, axis = iface.partition(".")
    if group == "range":
        return adr["range"], 1.0
    if group == "orientation":
        return adr["quat"] + _QUAT_OFFSET[axis], 1.0
    key = {"force": "force", "torque": "torque", "angular_velocity": "gyro", "linear_acceleration": "accel",
           "position": "pos"}[group]
    return adr[key] + _XYZ.index(axis), (s.direction if s.kind == FORCE_TORQUE else 1.0)


def _random_rotation(rng: np.random.Generator, std: float) -> tuple[np.ndarray, float]:
    v = rng.normal(0.0, std, 3)
    angle = float(np.linalg.norm(v))
    return (v / angle if angle > 0 else np.array([1.0, 0.0, 0.0])), angle
