"""The world around the robot: a YAML world file parsed into plain data, its bodies added to the robot's MjSpec, and
the objects' run-time state (read, teleport, spawn, remove, reset to a keyframe) on a running PhysicsEngine.

Why here and not in the node: the simulator node, the gymnasium environments and the tests all need the same
parsing, validation and state handling; none of it needs ROS. The file format is described in doc/world.md.

Poses are (x, y, z) plus a quaternion in MuJoCo's order (w, x, y, z) throughout this module; the file accepts rpy
or ``quat_xyzw`` (ROS order) and converts. Spawning and removing rebuild the MuJoCo model from the engine's MjSpec;
:meth:`robot_core.physics.engine.PhysicsEngine.edit_scene` carries every joint's, actuator's and object's state over
by name, so the robot and the other objects do not move.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np
import yaml

from robot_core.model.robot_model import RobotModelError, RobotModelWarning, SourceRef, rpy_to_matrix
from robot_core.text import clip
from robot_core.yaml_guard import YamlLimitError, check_yaml_text

if TYPE_CHECKING:
    from robot_core.physics.engine import PhysicsEngine

SHAPES = ("box", "sphere", "cylinder", "capsule", "mesh")
# Number of size values per shape (mesh: an optional scale of 3).
SIZE_COUNT = {"box": 3, "sphere": 1, "cylinder": 2, "capsule": 2, "mesh": 3}
SIZE_MEANING = {"box": "full extents x y z", "sphere": "radius", "cylinder": "radius and length",
                "capsule": "radius and length of the cylindrical part", "mesh": "scale x y z"}
MESH_FORMATS = (".stl", ".obj", ".msh")
DEFAULT_RGBA = (0.6, 0.6, 0.6, 1.0)
DEFAULT_DENSITY = 1000.0  # kg/m^3, water: MuJoCo's default too
OVERLAP_TOLERANCE = 1e-3  # m: objects starting deeper inside something are warned about
QUAT_TOLERANCE = 1e-6  # a service's quaternion must be unit within this; a file's is normalised with a warning
MAX_EXTENT = 1e4  # m; sizes and positions beyond are refused (MuJoCo loses all precision there)
WORLD_KEYS = ("floor", "contact", "objects", "keyframes")
CONTACT_KEYS = ("cone", "impratio")
CONES = {"pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL, "elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC}
OBJECT_KEYS = ("name", "shape", "size", "mesh", "pose", "mass", "density", "color", "fixed", "friction")
KEYFRAME_KEYS = ("joints", "objects")
RESERVED_NAMES = ("world", "floor")
FLOOR = "floor"
SHAPE_ATTACHED = "attached"  # an object brought by World.attach (an MJCF world's body)


class WorldError(ValueError):
    """An object, pose or keyframe that cannot be used; the message says which and why."""


@dataclass(frozen=True)
class Pose:
    """A frame in the world: position (m) and unit quaternion (w, x, y, z)."""

    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    quaternion: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)

    def array(self) -> np.ndarray:
        """(x, y, z, qw, qx, qy, qz): a free joint's qpos."""
        return np.array([*self.position, *self.quaternion], dtype=float)

    @classmethod
    def from_matrix(cls, matrix: np.ndarray) -> Pose:
        """The pose of a 4x4 homogeneous transform."""
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, np.ascontiguousarray(matrix[:3, :3]).reshape(9))
        p = matrix[:3, 3]
        return cls((float(p[0]), float(p[1]), float(p[2])),
                   (float(quat[0]), float(quat[1]), float(quat[2]), float(quat[3])))


@dataclass(frozen=True)
class WorldObject:
    """One body of the world: a single shape, free (falls, slides, can be pushed) or fixed (welded scenery).

    ``mass`` wins over ``density`` when both could apply; ``friction`` is (sliding, torsional, rolling) or None
    for MuJoCo's defaults; ``mesh`` is an absolute file path (shape mesh only); ``where`` names its origin for
    messages (file:line or "spawn request")."""

    name: str
    shape: str
    size: tuple[float, ...]
    pose: Pose = Pose()
    mass: float | None = None
    density: float | None = None
    rgba: tuple[float, float, float, float] = DEFAULT_RGBA
    fixed: bool = False
    friction: tuple[float, ...] | None = None
    mesh: str | None = None
    where: str = ""


@dataclass(frozen=True)
class Keyframe:
    """A named state: joint positions (joint -> value) and object poses (object -> Pose)."""

    name: str
    joints: Mapping[str, float] = field(default_factory=dict)
    objects: Mapping[str, Pose] = field(default_factory=dict)
    where: str = ""


@dataclass(frozen=True)
class ContactModel:
    """MuJoCo's friction cone and frictional-to-normal impedance ratio (``option cone``, ``impratio``).

    MuJoCo's defaults (pyramidal, 1) let an object squeezed between two fingers creep out of the grip at a few mm/s
    whatever the squeeze; an elliptic cone with impratio about 10, as MuJoCo's documentation advises for
    manipulation, holds it. A world meant for grasping sets them."""

    cone: str = "pyramidal"
    impratio: float = 1.0

    def apply(self, spec: mujoco.MjSpec) -> None:
        spec.option.cone = CONES[self.cone]
        spec.option.impratio = self.impratio


def parse_contact(raw: Any, source: str, line: int | None) -> ContactModel | None:
    """The ``contact:`` mapping of a world file (None: MuJoCo's defaults)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise RobotModelError(f"must be a mapping (cone, impratio), got {clip(repr(raw))}",
                              SourceRef(source, line, "contact"))
    line = _line(raw) or line
    _warn_unknown(raw, CONTACT_KEYS, source, "contact")
    cone = raw.get("cone", "pyramidal")
    if cone not in CONES:
        raise RobotModelError(f"cone must be one of {list(CONES)}, got {clip(repr(cone))}",
                              SourceRef(source, line, "contact"))
    try:
        impratio = _number(raw.get("impratio", 1.0), "impratio")
    except WorldError as exc:
        raise RobotModelError(str(exc), SourceRef(source, line, "contact")) from None
    if not impratio > 0.0:
        raise RobotModelError(f"impratio must be > 0, got {impratio}", SourceRef(source, line, "contact"))
    return ContactModel(cone, impratio)


@dataclass(frozen=True)
class World:
    """A parsed world file: a floor plane at z = 0 (or none), objects, keyframes.

    ``attach`` adds bodies described elsewhere (an MJCF world, robot_core.physics.mjcf_world) to the spec; its
    objects then have the shape ``SHAPE_ATTACHED`` and are not rebuilt from their fields."""

    source: str = "<empty world>"
    floor: bool = True
    objects: tuple[WorldObject, ...] = ()
    keyframes: Mapping[str, Keyframe] = field(default_factory=dict)
    attach: Callable[[mujoco.MjSpec], None] | None = None
    contact: ContactModel | None = None


@dataclass(frozen=True)
class ObjectState:
    """A free object's state: pose (w, x, y, z quaternion) and twist, all in the world frame."""

    name: str
    pose: Pose
    linear_velocity: tuple[float, float, float]
    angular_velocity: tuple[float, float, float]


# --------------------------------------------------------------------------------------------- values
def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise WorldError(f"{what} must be a number, got {clip(repr(value))}")
    f = float(value)
    if not math.isfinite(f):
        raise WorldError(f"{what} must be finite, got {f}")
    return f


def _numbers(value: Any, what: str, counts: Iterable[int]) -> tuple[float, ...]:
    counts = tuple(counts)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 1 in counts:
        value = [value]
    if not isinstance(value, (list, tuple, np.ndarray)) or len(value) not in counts:
        n = " or ".join(str(c) for c in counts)
        raise WorldError(f"{what} must be a list of {n} numbers, got {clip(repr(value))}")
    return tuple(_number(v, f"{what}[{i}]") for i, v in enumerate(value))


def check_quaternion(quat: Sequence[float], what: str, *, strict: bool) -> tuple[float, float, float, float]:
    """A unit quaternion (w, x, y, z). ``strict``: off unit by more than QUAT_TOLERANCE is refused (a service
    request); else it is normalised with a RobotModelWarning (a hand-written file's rounded values)."""
    q = np.array(_numbers(quat, what, (4,)))
    norm = float(np.linalg.norm(q))
    if norm < 1e-9:
        raise WorldError(f"{what} is the zero quaternion, which is no rotation")
    if abs(norm - 1.0) > QUAT_TOLERANCE:
        if strict:
            raise WorldError(f"{what} is not a unit quaternion (norm {norm:.9g})")
        warnings.warn(f"{what}: quaternion of norm {norm:.9g} normalised", RobotModelWarning, stacklevel=3)
    q = q / norm
    return (float(q[0]), float(q[1]), float(q[2]), float(q[3]))


def check_position(xyz: Sequence[float], what: str) -> tuple[float, float, float]:
    p = _numbers(xyz, what, (3,))
    if max(abs(v) for v in p) > MAX_EXTENT:
        raise WorldError(f"{what} is more than {MAX_EXTENT:g} m from the origin")
    return (p[0], p[1], p[2])


def rpy_quaternion(rpy: Sequence[float]) -> tuple[float, float, float, float]:
    """URDF roll-pitch-yaw (fixed axes) to (w, x, y, z)."""
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(rpy_to_matrix(np.asarray(rpy, dtype=float))).reshape(9))
    return (float(quat[0]), float(quat[1]), float(quat[2]), float(quat[3]))


def parse_pose(value: Any, what: str) -> Pose:
    """A pose of a world file: ``{xyz: [x, y, z], rpy: [r, p, y]}``, ``{xyz: .., quat_xyzw: [x, y, z, w]}`` or the
    short ``[x, y, z, roll, pitch, yaw]``; missing parts are zero / no rotation."""
    if value is None:
        return Pose()
    if isinstance(value, (list, tuple)):
        v = _numbers(value, what, (3, 6))
        return Pose(check_position(v[:3], f"{what} xyz"), rpy_quaternion(v[3:]) if len(v) == 6 else Pose().quaternion)
    if not isinstance(value, Mapping):
        raise WorldError(f"{what} must be a mapping {{xyz, rpy}} or {{xyz, quat_xyzw}}, or [x, y, z, roll, pitch, "
                         f"yaw], got {clip(repr(value))}")
    unknown = sorted(set(value) - {"xyz", "rpy", "quat_xyzw"})
    if unknown:
        raise WorldError(f"{what} has unknown key(s) {unknown} (expected xyz and rpy or quat_xyzw)")
    if "rpy" in value and "quat_xyzw" in value:
        raise WorldError(f"{what} gives both rpy and quat_xyzw; give one")
    xyz = check_position(value["xyz"], f"{what} xyz") if "xyz" in value else (0.0, 0.0, 0.0)
    if "quat_xyzw" in value:
        x, y, z, w = _numbers(value["quat_xyzw"], f"{what} quat_xyzw", (4,))
        return Pose(xyz, check_quaternion((w, x, y, z), f"{what} quat_xyzw", strict=False))
    if "rpy" in value:
        return Pose(xyz, rpy_quaternion(_numbers(value["rpy"], f"{what} rpy", (3,))))
    return Pose(xyz)


def make_object(name: Any, shape: Any, size: Any = None, *, pose: Pose = Pose(), mass: Any = None,
                density: Any = None, color: Any = None, fixed: Any = False, friction: Any = None,
                mesh: Any = None, base_dir: Path | None = None, where: str = "") -> WorldObject:
    """A validated WorldObject (from a file entry or a spawn request); WorldError says what is wrong."""
    if not isinstance(name, str) or not name.strip() or name != name.strip():
        raise WorldError(f"object name must be a non-empty string without surrounding blanks, got {clip(repr(name))}")
    if "/" in name or any(c.isspace() for c in name):
        raise WorldError(f"object name '{clip(name)}' must not contain '/' or blanks (it is a tf frame)")
    if name in RESERVED_NAMES:
        raise WorldError(f"object name '{name}' is reserved ({', '.join(RESERVED_NAMES)})")
    label = f"object '{clip(name)}'"
    if shape not in SHAPES:
        raise WorldError(f"{label}: shape must be one of {', '.join(SHAPES)}, got {clip(repr(shape))}")
    mesh_path = None
    if shape == "mesh":
        if not isinstance(mesh, str) or not mesh:
            raise WorldError(f"{label}: shape mesh needs 'mesh', the mesh file ({', '.join(MESH_FORMATS)})")
        p = Path(mesh).expanduser()
        if not p.is_absolute() and base_dir is not None:
            p = base_dir / p
        if p.suffix.lower() not in MESH_FORMATS:
            raise WorldError(f"{label}: mesh '{clip(mesh)}' is not one of {', '.join(MESH_FORMATS)}")
        if not p.is_file():
            raise WorldError(f"{label}: mesh file '{p}' not found")
        mesh_path = str(p.resolve())
        sizes = (1.0, 1.0, 1.0) if size is None or (isinstance(size, (list, tuple)) and not size) else \
            _numbers(size, f"{label} size (scale)", (1, 3))
        if len(sizes) == 1:
            sizes = sizes * 3
    else:
        if mesh:
            raise WorldError(f"{label}: 'mesh' is only for shape mesh (shape is {shape})")
        if size is None:
            raise WorldError(f"{label}: shape {shape} needs 'size' ({SIZE_MEANING[shape]})")
        sizes = _numbers(size, f"{label} size ({SIZE_MEANING[shape]})", (SIZE_COUNT[shape],))
    for v in sizes:
        if not 0.0 < v <= MAX_EXTENT:
            raise WorldError(f"{label}: size {list(sizes)} must be positive and at most {MAX_EXTENT:g} "
                             f"({SIZE_MEANING[shape]}, m)")
    m = None if mass is None else _number(mass, f"{label} mass")
    d = None if density is None else _number(density, f"{label} density")
    if m is not None and d is not None:
        raise WorldError(f"{label}: give mass or density, not both")
    if m is not None and m <= 0.0:
        raise WorldError(f"{label}: mass must be positive (kg), got {m:g}")
    if d is not None and d <= 0.0:
        raise WorldError(f"{label}: density must be positive (kg/m^3), got {d:g}")
    if not isinstance(fixed, bool):
        raise WorldError(f"{label}: fixed must be true or false, got {clip(repr(fixed))}")
    rgba = DEFAULT_RGBA
    if color is not None:
        c = _numbers(color, f"{label} color", (3, 4))
        if not all(0.0 <= v <= 1.0 for v in c):
            raise WorldError(f"{label}: color {list(c)} must be r g b [a] between 0 and 1")
        rgba = (c[0], c[1], c[2], c[3] if len(c) == 4 else 1.0)
    fr = None
    if friction is not None:
        fr = _numbers(friction, f"{label} friction", (1, 2, 3))
        if not all(v >= 0.0 for v in fr):
            raise WorldError(f"{label}: friction {list(fr)} must not be negative")
    return WorldObject(name, shape, tuple(sizes), pose, m, d, rgba, fixed, fr, mesh_path, where)


# --------------------------------------------------------------------------------------------- files
class _Located(dict):
    """A YAML mapping that remembers its line (1-based), so errors can name it."""

    line: int | None = None


class _LineLoader(yaml.SafeLoader):
    pass


def _construct_located(loader: _LineLoader, node: yaml.MappingNode) -> _Located:
    out = _Located(loader.construct_mapping(node, deep=True))
    out.line = node.start_mark.line + 1
    return out


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_located)


def _line(value: Any) -> int | None:
    return value.line if isinstance(value, _Located) else None


def _read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RobotModelError(f"cannot read world file: {exc}", SourceRef(str(path))) from None
    try:
        check_yaml_text(text, str(path))
        return yaml.load(text, Loader=_LineLoader)  # a SafeLoader that records lines
    except YamlLimitError as exc:
        raise RobotModelError(str(exc)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise RobotModelError(f"not valid YAML: {' '.join(str(exc).split())}", SourceRef(str(path), line)) from None


def _warn_unknown(entry: Mapping, known: Sequence[str], source: str, element: str) -> None:
    for key in entry:
        if key not in known:
            warnings.warn(f"{SourceRef(source, _line(entry), element)}: unknown key '{clip(str(key))}' ignored "
                          f"(known: {', '.join(known)})", RobotModelWarning, stacklevel=3)


def load_world(path: str | Path) -> World:
    """Parse and validate a YAML world file; RobotModelError names file, line and element of the first problem,
    RobotModelWarning flags sloppy input (unknown keys, a rounded quaternion)."""
    p = Path(path).expanduser()
    if p.suffix.lower() == ".xml":
        raise RobotModelError("an MJCF world: load it with robot_core.physics.mjcf_world.load_mjcf_world",
                              SourceRef(str(p)))
    data = _read_yaml(p)
    source = str(p)
    if data is None:
        data = _Located()
    if not isinstance(data, Mapping):
        raise RobotModelError("a world file must be a mapping with objects: and keyframes:", SourceRef(source, 1))
    _warn_unknown(data, WORLD_KEYS, source, "world")
    floor = data.get("floor", True)
    if not isinstance(floor, bool):
        raise RobotModelError(f"floor must be true or false, got {clip(repr(floor))}", SourceRef(source, 1, "floor"))
    raw_objects = data.get("objects") or []
    if not isinstance(raw_objects, list):
        raise RobotModelError("objects must be a list of mappings", SourceRef(source, _line(data), "objects"))
    objects: list[WorldObject] = []
    seen: dict[str, str] = {}
    for k, entry in enumerate(raw_objects):
        element = f"objects[{k}]"
        if not isinstance(entry, Mapping):
            raise RobotModelError("each object must be a mapping (name, shape, size, pose, ...)",
                                  SourceRef(source, _line(data), element))
        line = _line(entry)
        if isinstance(entry.get("name"), str):
            element = f"object '{clip(entry['name'])}'"
        _warn_unknown(entry, OBJECT_KEYS, source, element)
        try:
            obj = make_object(entry.get("name"), entry.get("shape"), entry.get("size"),
                              pose=parse_pose(entry.get("pose"), "pose"), mass=entry.get("mass"),
                              density=entry.get("density"), color=entry.get("color"),
                              fixed=entry.get("fixed", False), friction=entry.get("friction"), mesh=entry.get("mesh"),
                              base_dir=p.parent, where=f"{source}:{line}")
        except WorldError as exc:
            raise RobotModelError(_unlabelled(exc, element), SourceRef(source, line, element)) from None
        if obj.name in seen:
            raise RobotModelError(f"duplicate object name '{obj.name}' (first at {seen[obj.name]})",
                                  SourceRef(source, line, element))
        seen[obj.name] = obj.where
        objects.append(obj)
    keyframes = parse_keyframes(data.get("keyframes"), source, _line(data))
    contact = parse_contact(data.get("contact"), source, _line(data))
    names = {o.name for o in objects}
    for kf in keyframes.values():
        unknown = sorted(set(kf.objects) - names)
        if unknown:
            raise RobotModelError(f"keyframe '{kf.name}' names object(s) {unknown} the world does not have "
                                  f"(objects: {sorted(names)})", SourceRef(source, None, f"keyframe '{kf.name}'")
                                  if not kf.where else _ref(kf.where, f"keyframe '{kf.name}'"))
    return World(source, floor, tuple(objects), keyframes, contact=contact)


def _unlabelled(exc: Exception, element: str) -> str:
    """The message without its leading "object 'x': " when the location names the object already."""
    text = str(exc)
    return text[len(element) + 2:] if text.startswith(f"{element}: ") else text


def _ref(where: str, element: str) -> SourceRef:
    file, _, line = where.rpartition(":")
    return SourceRef(file, int(line), element) if line.isdigit() else SourceRef(where, None, element)


def parse_keyframes(raw: Any, source: str, line: int | None = None) -> dict[str, Keyframe]:
    """The ``keyframes:`` mapping of a world (or keyframes) file: name -> {joints: {..}, objects: {name: pose}}."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise RobotModelError("keyframes must be a mapping: name -> {joints: {joint: position}, objects: "
                              "{object: pose}}", SourceRef(source, line, "keyframes"))
    out: dict[str, Keyframe] = {}
    for name, entry in raw.items():
        element = f"keyframe '{clip(str(name))}'"
        kline = _line(entry) or _line(raw)
        if not isinstance(name, str) or not name:
            raise RobotModelError("keyframe names must be non-empty strings", SourceRef(source, kline, element))
        if not isinstance(entry, Mapping):
            raise RobotModelError("a keyframe must be a mapping with joints: and/or objects:",
                                  SourceRef(source, kline, element))
        _warn_unknown(entry, KEYFRAME_KEYS, source, element)
        joints_raw = entry.get("joints") or {}
        objects_raw = entry.get("objects") or {}
        if not isinstance(joints_raw, Mapping) or not isinstance(objects_raw, Mapping):
            raise RobotModelError("joints and objects of a keyframe must be mappings (joint: position, "
                                  "object: pose)", SourceRef(source, kline, element))
        try:
            joints = {str(j): _number(v, f"joint '{j}'") for j, v in joints_raw.items()}
            poses = {str(o): parse_pose(v, f"pose of object '{o}'") for o, v in objects_raw.items()}
        except WorldError as exc:
            raise RobotModelError(str(exc), SourceRef(source, kline, element)) from None
        out[name] = Keyframe(name, joints, poses, f"{source}:{kline}" if kline else source)
    return out


def load_keyframes(path: str | Path) -> dict[str, Keyframe]:
    """Keyframes from a file of their own (the simulator's ``keyframes`` parameter): a ``keyframes:`` mapping as
    in a world file."""
    p = Path(path).expanduser()
    data = _read_yaml(p)
    if not isinstance(data, Mapping) or "keyframes" not in data:
        raise RobotModelError("a keyframes file must be a mapping with a keyframes: section", SourceRef(str(p), 1))
    _warn_unknown(data, ("keyframes",), str(p), "keyframes file")
    return parse_keyframes(data["keyframes"], str(p), _line(data))


# --------------------------------------------------------------------------------------------- MjSpec
def _geom_type(shape: str) -> mujoco.mjtGeom:
    return {"box": mujoco.mjtGeom.mjGEOM_BOX, "sphere": mujoco.mjtGeom.mjGEOM_SPHERE,
            "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER, "capsule": mujoco.mjtGeom.mjGEOM_CAPSULE,
            "mesh": mujoco.mjtGeom.mjGEOM_MESH}[shape]


def _mujoco_size(obj: WorldObject) -> list[float]:
    """Our sizes (full extents, URDF-like) to MuJoCo's (half sizes)."""
    s = obj.size
    if obj.shape == "box":
        return [0.5 * s[0], 0.5 * s[1], 0.5 * s[2]]
    if obj.shape == "sphere":
        return [s[0], 0.0, 0.0]
    if obj.shape in ("cylinder", "capsule"):
        return [s[0], 0.5 * s[1], 0.0]
    return [0.0, 0.0, 0.0]


def _add_geom(body: mujoco.MjsBody, spec: mujoco.MjSpec, obj: WorldObject) -> mujoco.MjsGeom:
    geom = body.add_geom(name=obj.name, type=_geom_type(obj.shape), size=_mujoco_size(obj), rgba=list(obj.rgba))
    if obj.shape == "mesh":
        spec.add_mesh(name=f"{obj.name}:mesh", file=obj.mesh, scale=list(obj.size))
        geom.meshname = f"{obj.name}:mesh"
    if obj.friction is not None:
        defaults = (1.0, 0.005, 0.0001)
        fr = [*obj.friction, *defaults[len(obj.friction):]]
        geom.friction = fr
        geom.condim = {1: 3, 2: 4, 3: 6}[len(obj.friction)]
    return geom


def object_inertia(obj: WorldObject) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """(mass, com position, principal axes quaternion, principal moments) of a free object, from its shape and
    mass or density. Computed by MuJoCo on a one-body model: the robot's spec takes inertias from the URDF only
    (inertiafromgeom off), so an object brings its own."""
    spec = mujoco.MjSpec()
    spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_TRUE
    body = spec.worldbody.add_body(name="probe")
    body.add_freejoint()
    geom = _add_geom(body, spec, obj)
    if obj.mass is not None:
        geom.mass = obj.mass
    else:
        geom.density = DEFAULT_DENSITY if obj.density is None else obj.density
    try:
        model = spec.compile()
    except ValueError as exc:
        raise WorldError(f"object '{obj.name}': MuJoCo refuses it: {' '.join(str(exc).split())}") from None
    mass = float(model.body_mass[1])
    inertia = model.body_inertia[1].copy()
    if not (mass > 0.0 and np.all(inertia > 0.0)):
        raise WorldError(f"object '{obj.name}': its mass ({mass:g} kg) or inertia is zero; give a larger size or "
                         "mass")
    return mass, model.body_ipos[1].copy(), model.body_iquat[1].copy(), inertia


def add_object(spec: mujoco.MjSpec, obj: WorldObject) -> None:
    """Add ``obj`` to ``spec``: a body named after it, child of the world, with a free joint ``<name>:free`` unless
    fixed, and one geom named after it."""
    body = spec.worldbody.add_body(name=obj.name, pos=list(obj.pose.position), quat=list(obj.pose.quaternion))
    if not obj.fixed:
        mass, ipos, iquat, inertia = object_inertia(obj)
        body.add_freejoint(name=f"{obj.name}:free")
        body.mass, body.ipos, body.iquat, body.inertia = mass, ipos, iquat, inertia
        body.explicitinertial = True
    _add_geom(body, spec, obj)


def remove_object(spec: mujoco.MjSpec, name: str) -> None:
    """Delete an object added by :func:`add_object` (body, joint, geom, mesh asset) from ``spec``."""
    body = spec.body(name)
    if body is not None:
        spec.delete(body)
    mesh = spec.mesh(f"{name}:mesh")
    if mesh is not None:
        spec.delete(mesh)


def add_floor(spec: mujoco.MjSpec) -> None:
    """A plane at z = 0 on the world body and a light above it (visual only)."""
    spec.worldbody.add_geom(name=FLOOR, type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0.0, 0.0, 0.05],
                            rgba=[0.8, 0.8, 0.8, 1.0])
    spec.worldbody.add_light(name="world:light", pos=[0.0, 0.0, 3.0], dir=[0.0, 0.0, -1.0])


def base_pose_quaternion(xyz_rpy: Sequence[float], what: str = "base_pose") -> np.ndarray:
    """(x, y, z, roll, pitch, yaw) -> (x, y, z, qw, qx, qy, qz)."""
    v = _numbers(list(xyz_rpy), what, (6,))
    return np.array([*check_position(v[:3], what), *rpy_quaternion(v[3:])], dtype=float)


def scene_hook(world: World | None, root_link: str | None = None,
               base_pose: np.ndarray | None = None, floor: bool = False) -> Callable[[mujoco.MjSpec], None]:
    """The engine's ``scene`` hook: floor, objects, and a fixed base moved to ``base_pose`` (x y z qw qx qy qz).
    ``floor``: a floor even without a world (the simulator's ``floor`` parameter, for a mobile base)."""

    def build(spec: mujoco.MjSpec) -> None:
        if base_pose is not None and root_link is not None:
            body = spec.body(root_link)
            if body is None or root_link == "world":
                raise RobotModelError(f"base_pose: the root link '{root_link}' is MuJoCo's world and cannot be moved")
            if not any(j.type == mujoco.mjtJoint.mjJNT_FREE for j in body.joints):
                body.pos, body.quat = list(base_pose[:3]), list(base_pose[3:])
        if world is None:
            if floor:
                add_floor(spec)
            return
        if world.floor or floor:
            add_floor(spec)
        if world.contact is not None:
            world.contact.apply(spec)
        if world.attach is not None:
            world.attach(spec)
        names = {b.name for b in spec.bodies}
        for obj in world.objects:
            if obj.shape == SHAPE_ATTACHED:
                continue
            if obj.name in names:
                raise RobotModelError(f"object '{obj.name}' has the name of a link of the robot; rename it",
                                      _ref(obj.where, f"object '{obj.name}'"))
            try:
                add_object(spec, obj)
            except WorldError as exc:
                element = f"object '{obj.name}'"
                raise RobotModelError(_unlabelled(exc, element), _ref(obj.where, element)) from None

    return build


# --------------------------------------------------------------------------------------------- run time
class WorldSim:
    """The objects of a running simulation: their state, teleports, spawn and removal, and keyframe resets.

    Not thread-safe, like the engine it works on (the simulator node calls it from its simulation thread).
    Raises robot_core.physics.engine.CommandError (a ValueError) for every refused request; nothing changes then.
    """

    def __init__(self, engine: PhysicsEngine, world: World | None = None,
                 keyframes: Mapping[str, Keyframe] | None = None):
        self.engine = engine
        self.world = world or World()
        self._objects: dict[str, WorldObject] = {o.name: o for o in self.world.objects}
        self.keyframes: dict[str, Keyframe] = dict(self.world.keyframes)
        for name, kf in (keyframes or {}).items():
            if name in self.keyframes:
                raise RobotModelError(f"keyframe '{name}' is defined twice (also at {self.keyframes[name].where})",
                                      _ref(kf.where, f"keyframe '{name}'"))
            self.keyframes[name] = kf
        joints = set(engine.joint_names)
        for kf in self.keyframes.values():
            bad = sorted(set(kf.joints) - joints)
            if bad:
                raise RobotModelError(f"keyframe '{kf.name}' names joint(s) {bad} robot '{engine.robot.name}' does "
                                      f"not have (joints: {engine.joint_names})", _ref(kf.where, f"keyframe "
                                                                                                  f"'{kf.name}'"))
            unknown = sorted(set(kf.objects) - set(self._objects))
            if unknown:
                raise RobotModelError(f"keyframe '{kf.name}' names object(s) {unknown} the world does not have",
                                      _ref(kf.where, f"keyframe '{kf.name}'"))
            fixed = sorted(n for n in kf.objects if self._objects[n].fixed)
            if fixed:
                raise RobotModelError(f"keyframe '{kf.name}' moves fixed object(s) {fixed}; only free objects "
                                      "have a pose to set", _ref(kf.where, f"keyframe '{kf.name}'"))
        self._index()
        self._warn_overlaps()

    # -- queries
    @property
    def objects(self) -> dict[str, WorldObject]:
        return dict(self._objects)

    @property
    def free_objects(self) -> list[str]:
        return list(self._free)

    def pose(self, name: str) -> Pose:
        """World pose of any object (fixed ones too)."""
        self._known(name, "pose")
        d = self.engine.data
        b = self._body[name]
        quat = d.xquat[b]
        pos = d.xpos[b]
        return Pose((float(pos[0]), float(pos[1]), float(pos[2])),
                    (float(quat[0]), float(quat[1]), float(quat[2]), float(quat[3])))

    def states(self) -> list[ObjectState]:
        """Pose and world-frame twist of every free object, in the order they were added."""
        d = self.engine.data
        out = []
        for name, (qadr, vadr) in self._free.items():
            q = d.qpos[qadr:qadr + 7]
            v = d.qvel[vadr:vadr + 6]
            rot = np.zeros(9)
            mujoco.mju_quat2Mat(rot, q[3:])
            w = rot.reshape(3, 3) @ v[3:]  # a free joint's angular velocity is in the body frame
            out.append(ObjectState(name, Pose((float(q[0]), float(q[1]), float(q[2])),
                                              (float(q[3]), float(q[4]), float(q[5]), float(q[6]))),
                                   (float(v[0]), float(v[1]), float(v[2])), (float(w[0]), float(w[1]), float(w[2]))))
        return out

    # -- requests
    def set_state(self, name: str, position: Sequence[float], quaternion: Sequence[float],
                  linear_velocity: Sequence[float] = (0.0, 0.0, 0.0),
                  angular_velocity: Sequence[float] = (0.0, 0.0, 0.0)) -> None:
        """Teleport a free object: pose (quaternion w x y z, unit) and world-frame twist."""
        from robot_core.physics.engine import CommandError

        self._known(name, "set_object_state")
        if name not in self._free:
            raise CommandError(f"set_object_state: object '{name}' is fixed; only free objects can be moved")
        try:
            pos = check_position(position, f"set_object_state '{name}': position")
            quat = check_quaternion(quaternion, f"set_object_state '{name}': orientation", strict=True)
            lin = _numbers(linear_velocity, f"set_object_state '{name}': linear velocity", (3,))
            ang = _numbers(angular_velocity, f"set_object_state '{name}': angular velocity", (3,))
        except WorldError as exc:
            raise CommandError(str(exc)) from None
        qadr, vadr = self._free[name]
        d = self.engine.data
        d.qpos[qadr:qadr + 7] = [*pos, *quat]
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, np.array(quat))
        d.qvel[vadr:vadr + 3] = lin
        d.qvel[vadr + 3:vadr + 6] = rot.reshape(3, 3).T @ np.array(ang)
        mujoco.mj_forward(self.engine.model, d)

    def spawn(self, obj: WorldObject) -> None:
        """Add an object to the running simulation; the robot and the other objects keep their state."""
        from robot_core.physics.engine import CommandError

        taken = {self.engine.model.body(i).name for i in range(self.engine.model.nbody)}
        if obj.name in self._objects:
            raise CommandError(f"spawn_object: an object named '{obj.name}' exists already")
        if obj.name in taken:
            raise CommandError(f"spawn_object: '{obj.name}' is the name of a body of the robot; choose another")
        try:
            object_inertia(obj) if not obj.fixed else None  # refuse before touching the model
        except WorldError as exc:
            raise CommandError(f"spawn_object: {exc}") from None
        self.engine.edit_scene(lambda spec: add_object(spec, obj), lambda spec: remove_object(spec, obj.name))
        self._objects[obj.name] = obj
        self._index()

    def remove(self, name: str) -> None:
        """Remove an object; the robot and the other objects keep their state."""
        self._known(name, "remove_object")
        obj = self._objects[name]
        undo = None if obj.shape == SHAPE_ATTACHED else (lambda spec: add_object(spec, obj))
        self.engine.edit_scene(lambda spec: remove_object(spec, name), undo)
        del self._objects[name]
        self._index()

    def reset(self, keyframe: str = "", positions: Mapping[str, float] | None = None) -> str:
        """Engine reset (t = 0, at rest) to ``keyframe``'s joint positions and object poses (empty: the initial
        state), with ``positions`` overriding joints; an unknown keyframe is refused before anything changes."""
        from robot_core.physics.engine import CommandError

        kf = None
        if keyframe:
            kf = self.keyframes.get(keyframe)
            if kf is None:
                raise CommandError(f"reset: unknown keyframe '{clip(keyframe)}' (keyframes: "
                                   f"{sorted(self.keyframes) or 'none'})")
        joints = {**(kf.joints if kf else {}), **(positions or {})}
        self.engine.reset(joints or None)  # validates before it changes anything
        skipped = []
        if kf is not None:
            d = self.engine.data
            for name, pose in kf.objects.items():
                if name not in self._free:  # removed since, or fixed
                    skipped.append(name)
                    continue
                qadr, _ = self._free[name]
                d.qpos[qadr:qadr + 7] = pose.array()
            mujoco.mj_forward(self.engine.model, d)
        note = f" (objects {skipped} not free or not present: left as they are)" if skipped else ""
        return f"keyframe '{keyframe}'{note}" if kf else "initial state"

    # -- internals
    def _warn_overlaps(self) -> None:
        """An object that starts inside the robot, the floor or another object (by more than OVERLAP_TOLERANCE)
        is pushed out violently at the first step: warn, naming both."""
        worst: dict[tuple[str, str], float] = {}
        for c in self.engine.contacts():
            if c.distance < -OVERLAP_TOLERANCE and (c.body1 in self._objects or c.body2 in self._objects):
                key = (c.body1, c.body2)
                worst[key] = min(worst.get(key, 0.0), c.distance)
        for (a, b), depth in sorted(worst.items()):
            obj = a if a in self._objects else b
            other = b if obj == a else a
            where = self._objects[obj].where or self.world.source
            warnings.warn(f"{where}: object '{obj}' starts {-depth * 1000:.1f} mm inside "
                          f"'{'the floor' if other == 'world' else other}'; the two are pushed apart at the first step",
                          RobotModelWarning, stacklevel=3)

    def _known(self, name: str, what: str) -> None:
        from robot_core.physics.engine import CommandError

        if name not in self._objects:
            raise CommandError(f"{what}: no object named '{clip(name)}' (objects: {sorted(self._objects) or 'none'})")

    def _index(self) -> None:
        m = self.engine.model
        self._body: dict[str, int] = {}
        self._free: dict[str, tuple[int, int]] = {}
        for name, obj in self._objects.items():
            self._body[name] = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)
            if not obj.fixed:
                j = int(m.body_jntadr[self._body[name]])  # its free joint (an MJCF world's may have any name)
                self._free[name] = (int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j]))
