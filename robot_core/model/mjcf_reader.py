"""MJCF (MuJoCo's XML) -> RobotModel, parsed and compiled by MuJoCo itself so every MJCF rule holds.

MuJoCo resolves includes, default classes, the compiler's angle/eulerseq conventions and meshdir; the compiled
model gives exact frames and inertias. This module turns that into the robot's structure (links, joints,
shapes, limits, a ros2_control system) for kinematics, controllers, describe and /tf; the simulator uses the
file itself (:mod:`robot_core.physics.mjcf_spec`). The mapping, what is kept, warned about or refused, is
documented in doc/mjcf.md.
"""

from __future__ import annotations

import functools
import math
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from robot_core.model import mjcf_ball, validation
from robot_core.model.robot_model import (
    Collision,
    Dynamics,
    Geometry,
    Inertial,
    Joint,
    Limit,
    Link,
    Material,
    Mimic,
    MjcfServo,
    MjcfSource,
    Pose,
    RobotModel,
    RobotModelError,
    Ros2Control,
    Ros2ControlInterface,
    Ros2ControlJoint,
    SourceRef,
    Visual,
)
from robot_core.model.urdf_reader import parse_xml

WORLD = "world"
MUJOCO_DEFAULT_TIMESTEP = 0.002
TOPIC_PLUGIN = "topic_based_ros2_control/TopicBasedSystem"
# Geom types URDF can express: MuJoCo type -> RobotModel kind.
_GEOM_KINDS = {
    mujoco.mjtGeom.mjGEOM_BOX: "box",
    mujoco.mjtGeom.mjGEOM_SPHERE: "sphere",
    mujoco.mjtGeom.mjGEOM_CYLINDER: "cylinder",
    mujoco.mjtGeom.mjGEOM_CAPSULE: "capsule",
    mujoco.mjtGeom.mjGEOM_MESH: "mesh",
}
# MuJoCo shows geom groups 0-2 by default; menagerie puts collision-only geoms in group 3.
VISIBLE_GROUPS = (0, 1, 2)
_INCLUDE = re.compile(r"<include\s+[^>]*file\s*=\s*[\"']([^\"']+)[\"']")
_JOINT_TRN = (int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_JOINTINPARENT))
_ROOT_TAG = re.compile(r"<\s*([A-Za-z_][\w.:-]*)")
_PROLOGUE = re.compile(r"\s*(<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>)", re.S)
_LINE = re.compile(r"line(?: number=| )(\d+)", re.I)
_ELEMENT = re.compile(r"Element (?:name )?'([^']*)'")


# --------------------------------------------------------------------------------------------------
# detection and loading
def root_tag(text: str) -> str | None:
    """The name of the document's root element (after the XML declaration, comments, DOCTYPE), or None."""
    pos = 0
    while True:
        m = _PROLOGUE.match(text, pos)
        if m is None:
            break
        pos = m.end()
    m = _ROOT_TAG.match(text, pos + len(text[pos:]) - len(text[pos:].lstrip()))
    return m.group(1) if m else None


def is_mjcf_text(text: str) -> bool:
    """MJCF is recognised by its root element ``<mujoco>``, whatever the file is called."""
    return root_tag(text) == "mujoco"


def is_mjcf_file(path: str | os.PathLike) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16).decode("utf-8", errors="replace")
    except OSError:
        return False
    return is_mjcf_text(head)


def include_names(text: str) -> list[str]:
    """The files an MJCF text includes, as written in its ``<include file>`` elements."""
    return _INCLUDE.findall(text)


def included_texts(text: str, base: Path, found: dict[str, str] | None = None) -> dict[str, str]:
    """Every file ``text`` includes (recursively, relative to ``base``), by the name it is included as; a file
    that cannot be read is left for MuJoCo to report."""
    found = {} if found is None else found
    for name in include_names(text):
        if name not in found and (base / name).is_file():
            found[name] = (base / name).read_text(errors="replace")
            included_texts(found[name], base, found)
    return found


def _files(source_file: str) -> list[Path]:
    """The MJCF file and every file it includes (recursively), for finding an element MuJoCo gives no line for."""
    main = Path(source_file)
    out: list[Path] = []
    todo = [main]
    while todo:
        path = todo.pop(0)
        if path in out or not path.is_file():
            continue
        out.append(path)
        todo.extend(main.parent / name for name in include_names("\n".join(_lines(str(path), path.stat().st_mtime))))
    return out


@functools.lru_cache(maxsize=64)
def _lines(path: str, mtime: float) -> tuple[str, ...]:
    """A file's lines, read once per version (the reader locates every element of an included file)."""
    return tuple(Path(path).read_text(errors="replace").splitlines())


def locate(source_file: str, tag: str, token: str, element: str) -> SourceRef:
    """File and line of the ``<tag ...>`` (``tag``: a regular expression) holding ``token`` (a name or a value),
    searched in the file and its includes: MuJoCo reports line 0 for elements of included files."""
    needle = re.compile(rf"<{tag}\b[^>]*[\"']{re.escape(token)}[\"']")
    for path in _files(source_file):
        for number, line in enumerate(_lines(str(path), path.stat().st_mtime), start=1):
            if needle.search(line):
                return SourceRef(str(path) if path != Path(source_file) else source_file, number, element)
    return SourceRef(source_file, None, element)


def mujoco_error(exc: Exception, source_file: str) -> RobotModelError:
    """MuJoCo's parse/compile message as one line naming file, line and element."""
    text = str(exc)
    line_m = _LINE.search(text)
    elem_m = _ELEMENT.search(text)
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    first = re.sub(r"^(XML )?Error:\s*", "", first)
    if first.startswith("XML parse error"):
        first = "malformed XML (" + " ".join(text.split()[4:]).replace("Line number=", "line ") + ")"
    element = f"<{elem_m.group(1)}>" if elem_m and elem_m.group(1) else "MJCF"
    if "Element name" in text and elem_m is not None:
        element = f"element '{elem_m.group(1)}'" if elem_m.group(1) else "unnamed element"
    line = int(line_m.group(1)) if line_m else None
    where = SourceRef(source_file, line or None, element)
    token = re.search(r"'([^']+)'", first)
    if not line and elem_m is not None and "Element name" not in text and token is not None:
        where = locate(source_file, re.escape(elem_m.group(1)), token.group(1), element)
    return RobotModelError(f"MuJoCo refuses the MJCF: {first}", where)


def load_spec(source: MjcfSource, source_file: str | None = None) -> mujoco.MjSpec:
    """Parse the MJCF with MuJoCo and give unnamed bodies and joints the names the reader uses."""
    where = source_file or source.path or "<string>"
    try:
        if source.path is not None and source.path.lower().endswith(".xml"):
            spec = mujoco.MjSpec.from_file(source.path)
        else:  # MuJoCo picks its file decoder by extension: other names (.mjcf) are read as text
            text = source.text if source.path is None else Path(source.path).read_text(errors="replace")
            base = Path(source.base_dir or ".")
            includes = {k: v.encode() for k, v in included_texts(text or "", base).items()}
            spec = mujoco.MjSpec.from_string(text or "", include=includes or None)
            spec.modelfiledir = str(base.resolve()) + "/"
    except ValueError as exc:
        raise mujoco_error(exc, where) from None
    name_unnamed(spec)
    return spec


def name_unnamed(spec: mujoco.MjSpec, skip: set[str] | frozenset[str] = frozenset()) -> None:
    """Unnamed bodies become ``body<N>`` (N: its index in the spec) and unnamed joints ``<body>:joint<K>``;
    both the reader and the simulator call this, so both sides use the same names. ``skip``: bodies the simulator
    added (physics/mjcf_spec.py), not counted, so N stays the index in the file as written."""
    taken = {b.name for b in spec.bodies if b.name}
    counted = [b for b in spec.bodies if b.name not in skip]
    for i, body in enumerate(counted):
        if i and not body.name:
            name, k = f"body{i}", 1
            while name in taken:
                name, k = f"body{i}_{k}", k + 1
            body.name = name
            taken.add(name)
    jtaken = {j.name for j in spec.joints if j.name}
    for body in spec.bodies:
        for k, joint in enumerate(body.joints):
            if not joint.name:
                name, n = f"{body.name}:joint{k}", 1
                while name in jtaken:
                    name, n = f"{body.name}:joint{k}_{n}", n + 1
                joint.name = name
                jtaken.add(name)


def _enum_word(value) -> str:
    """mjGEOM_PLANE -> plane."""
    return value.name.split("_", 1)[1].lower()


def _line(info: str) -> int | None:
    m = re.search(r"line (\d+)", info or "")
    return int(m.group(1)) if m else None


def _pose(pos, quat) -> np.ndarray:
    m = np.eye(4)
    r = np.zeros(9)
    mujoco.mju_quat2Mat(r, np.asarray(quat, dtype=float))
    m[:3, :3] = r.reshape(3, 3)
    m[:3, 3] = pos
    return m


def _trans(v) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = v
    return m


def _rot(axis: np.ndarray, angle: float) -> np.ndarray:
    q = np.zeros(4)
    mujoco.mju_axisAngle2Quat(q, np.asarray(axis, dtype=float), float(angle))
    return _pose(np.zeros(3), q)


@dataclass(frozen=True)
class _Part:
    """One scalar (or free) joint of the RobotModel made from MuJoCo joint ``mj_id``: the joint itself, or one of
    the three hinges of a ball joint (``ball_axis`` 0-2, :mod:`robot_core.model.mjcf_ball`)."""

    name: str
    mj_id: int
    kind: mujoco.mjtJoint
    axis: np.ndarray
    ref: float
    limits: tuple[float, float] | None
    dof: int
    ball_axis: int | None = None


# --------------------------------------------------------------------------------------------------
class _MjcfReader:
    """One read: the parsed spec, its compiled model and the RobotModel being built."""

    def __init__(self, spec: mujoco.MjSpec, source: MjcfSource, source_file: str):
        self.spec = spec
        self.source = source
        self.file = source_file
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                self.m = spec.compile()
            except ValueError as exc:
                raise mujoco_error(exc, source_file) from None
        for w in caught:  # MuJoCo's own compiler warnings (deprecated attributes), naming the file
            validation.warn(f"MuJoCo: {w.message}", SourceRef(source_file, None, "MJCF"))
        self.notes: list[str] = []
        self.mj_joint: dict[str, int] = {}
        self.ball_axis: dict[str, int] = {}  # hinge of a ball joint -> its axis (0-2)

    def ref(self, kind: str, name: str) -> SourceRef:
        el = {"body": self.spec.body, "joint": self.spec.joint, "actuator": self.spec.actuator}[kind](name)
        line = _line(el.info) if el is not None else None
        if line:
            return SourceRef(self.file, line, f"{kind} '{name}'")
        tag = kind if kind != "actuator" else "[a-z]+"
        return locate(self.file, tag, name, f"{kind} '{name}'") if Path(self.file).is_file() else \
            SourceRef(self.file, None, f"{kind} '{name}'")

    # -- which bodies are the robot ------------------------------------------------------------------
    def robot_bodies(self) -> tuple[list[int], list[int]]:
        """(robot bodies, top-level world bodies): a top-level subtree is the robot's if it holds an actuated
        joint (or, in a model without actuators, any joint but a free one)."""
        m = self.m
        actuated = self.actuated_joints()
        tops = [b for b in range(1, m.nbody) if m.body_parentid[b] == 0]
        subtree = {t: [b for b in range(1, m.nbody) if self.top_of(b) == t] for t in tops}

        def joints_of(bodies: list[int]) -> list[int]:
            return [j for j in range(m.njnt) if m.jnt_bodyid[j] in bodies]

        chosen = [t for t in tops if any(j in actuated for j in joints_of(subtree[t]))]
        if not chosen:
            chosen = [t for t in tops if any(int(m.jnt_type[j]) != int(mujoco.mjtJoint.mjJNT_FREE)
                                             for j in joints_of(subtree[t]))]
        if not chosen:
            raise RobotModelError("no robot in this MJCF: no body carries an actuated or hinge/slide joint",
                                  SourceRef(self.file, None, "<worldbody>"))
        bodies = sorted(b for t in chosen for b in subtree[t])
        world = [t for t in tops if t not in chosen]
        return bodies, world

    def top_of(self, b: int) -> int:
        while self.m.body_parentid[b] != 0:
            b = int(self.m.body_parentid[b])
        return b

    def actuated_joints(self) -> set[int]:
        m = self.m
        return {int(m.actuator_trnid[a, 0]) for a in range(m.nu) if int(m.actuator_trntype[a]) in _JOINT_TRN}

    # -- the tree ------------------------------------------------------------------------------------
    def read(self) -> RobotModel:
        m = self.m
        name = self.spec.modelname or Path(self.file).stem or "mjcf_robot"
        robot = RobotModel(name=name, source_file=self.file)
        robot.mjcf = self.source
        bodies, world = self.robot_bodies()
        self.source.world_bodies = [m.body(b).name for b in world]
        if world:
            self.notes.append(f"world bodies {self.source.world_bodies} (kept by the simulator)")
        if self.has_world_geoms():
            self.notes.append("the worldbody's own geoms (kept by the simulator)")
        robot.links[WORLD] = Link(WORLD, source=SourceRef(self.file, None, "<worldbody>"))
        self.source.link_bodies[WORLD] = WORLD
        offsets: dict[int, np.ndarray] = {0: np.eye(4)}
        for b in bodies:
            offsets[b] = self.body(robot, b, offsets)
        for joint in robot.joints.values():
            if joint.is_scalar and joint.name in self.mj_joint:
                adr = int(m.jnt_qposadr[self.mj_joint[joint.name]])
                axis = self.ball_axis.get(joint.name)
                joint.initial_position = float(m.qpos0[adr] if axis is None else
                                               mjcf_ball.angles_from_quat(m.qpos0[adr:adr + 4])[axis])
        self.equalities(robot)
        self.actuators(robot)
        self.other_elements()
        self.source.not_carried = self.notes
        return robot

    def body(self, robot: RobotModel, b: int, offsets: dict[int, np.ndarray]) -> np.ndarray:
        m = self.m
        bname = m.body(b).name
        parent_b = int(m.body_parentid[b])
        parent_link = WORLD if parent_b == 0 else m.body(parent_b).name
        ref = self.ref("body", bname)
        jids = [j for j in range(m.njnt) if m.jnt_bodyid[j] == b]
        placement = np.linalg.inv(offsets[parent_b]) @ _pose(m.body_pos[b], m.body_quat[b])
        prev_anchor = None
        link_name = parent_link
        offset = np.eye(4)
        if not jids:
            jname = self.unique_joint_name(robot, f"{bname}_fixed")
            robot.joints[jname] = Joint(jname, "fixed", parent_link, bname, Pose.from_matrix(placement), source=ref)
        parts = [part for j in jids for part in self.joint_parts(j)]
        for k, part in enumerate(parts):
            jname, j = part.name, part.mj_id
            jref = self.ref("joint", m.joint(j).name)
            child = bname if k == len(parts) - 1 else f"{bname}:{jname}"
            if part.kind == mujoco.mjtJoint.mjJNT_FREE:
                if parent_b != 0 or len(parts) > 1:
                    raise RobotModelError("a free joint must be the only joint of a top-level body", jref)
                robot.joints[jname] = Joint(jname, "floating", WORLD, child, Pose.from_matrix(placement), source=jref)
                self.mj_joint[jname] = j
                link_name = child
                robot.links[child] = Link(child, source=ref)
                continue
            anchor = np.asarray(m.jnt_pos[j], dtype=float)
            axis = part.axis
            qref = part.ref
            hinge = part.kind == mujoco.mjtJoint.mjJNT_HINGE
            # MuJoCo turns a hinge by (q - ref) about its anchor; the URDF-style joint turns by q about its child
            # frame's origin, so the child frame sits at the anchor and the origin takes back the ref.
            zero = _rot(axis, -qref) if hinge else _trans(-qref * axis)
            if prev_anchor is None:
                origin = placement @ _trans(anchor) @ zero
            else:
                origin = _trans(anchor - prev_anchor) @ zero
            limited = part.limits is not None
            jt = ("revolute" if limited else "continuous") if hinge else "prismatic"
            limit = Limit()
            if part.limits is not None:
                limit.lower, limit.upper = part.limits
            if m.jnt_actfrclimited[j]:
                limit.effort = float(max(abs(m.jnt_actfrcrange[j][0]), abs(m.jnt_actfrcrange[j][1])))
            dof = part.dof
            joint = Joint(jname, jt, link_name, child, Pose.from_matrix(origin), axis=axis / np.linalg.norm(axis),
                          limit=limit, source=jref)
            if m.dof_damping[dof] or m.dof_frictionloss[dof]:
                joint.dynamics = Dynamics(float(m.dof_damping[dof]), float(m.dof_frictionloss[dof]))
            if k < len(parts) - 1:
                robot.links[child] = Link(child, source=ref)
                # A frame between two joints of one body: the simulator gives it a body of its own, named after
                # it, as the first of a chain of bodies that each carry one of the joints (physics/mjcf_spec.py).
                self.source.link_bodies[child] = child
                self.source.link_offsets[child] = _trans(anchor).tolist()
                self.source.split_bodies.setdefault(bname, []).append(jname)
            self.mj_joint[jname] = j
            if part.ball_axis is not None:
                self.ball_axis[jname] = part.ball_axis
            robot.joints[jname] = joint
            link_name = child
            prev_anchor = anchor
            offset = _trans(anchor)
        if jids and prev_anchor is None:
            offset = np.eye(4)
        link = robot.links.get(bname) or Link(bname, source=ref)
        robot.links[bname] = link
        self.source.link_bodies[bname] = bname
        if not np.array_equal(offset, np.eye(4)):
            self.source.link_offsets[bname] = offset.tolist()
        self.contents(link, b, np.linalg.inv(offset))
        return offset

    def joint_parts(self, j: int) -> list[_Part]:
        """The RobotModel joints MuJoCo joint ``j`` becomes: itself, or for a ball joint three hinges (with one
        warning naming it, doc/mjcf.md)."""
        m = self.m
        name = m.joint(j).name
        kind = mujoco.mjtJoint(int(m.jnt_type[j]))
        limits = (float(m.jnt_range[j][0]), float(m.jnt_range[j][1])) if m.jnt_limited[j] else None
        dof = int(m.jnt_dofadr[j])
        if kind != mujoco.mjtJoint.mjJNT_BALL:
            return [_Part(name, j, kind, np.asarray(m.jnt_axis[j], dtype=float), float(m.qpos0[m.jnt_qposadr[j]]),
                          limits, dof)]
        half = None
        cone = ""
        if limits is not None:
            written = float(self.spec.joint(name).range[1])  # the cone's half-angle in the file's angle unit
            half = written
            unit = "deg" if self.spec.compiler.degree else "rad"
            cone = (f"; its cone limit ({written:g} {unit} from the rest orientation about any axis) becomes a box:"
                    f" each hinge is limited to [-{written:g}, {written:g}] {unit}")
            limits = (-float(m.jnt_range[j][1]), float(m.jnt_range[j][1]))
        self.source.ball_joints[name] = half
        names = mjcf_ball.hinge_names(name)
        validation.warn(f"ball joint: simulated as three hinges {', '.join(repr(n) for n in names)} about the "
                        f"joint frame's x, y, z through its anchor (R = Rx Ry Rz: the ball's rigid-body dynamics "
                        f"except at the gimbal singularity '{names[1]}' = +-90 deg, where a ball has none; its "
                        "damping, armature, frictionloss and stiffness act on each hinge instead of on the "
                        "ball's angular velocity, the same at the rest orientation only), addressable by "
                        f"controllers as three joints{cone}", self.ref("joint", name))
        return [_Part(hinge, j, mujoco.mjtJoint.mjJNT_HINGE, np.array(axis), 0.0, limits, dof + i, i)
                for i, (hinge, (_, axis)) in enumerate(zip(names, mjcf_ball.AXES, strict=True))]

    def unique_joint_name(self, robot: RobotModel, name: str) -> str:
        out, k = name, 1
        names = {j.name for j in self.spec.joints}
        while out in robot.joints or out in names:
            out, k = f"{name}{k}", k + 1
        return out

    # -- link contents -------------------------------------------------------------------------------
    def contents(self, link: Link, b: int, to_link: np.ndarray) -> None:
        m = self.m
        mass = float(m.body_mass[b])
        if mass > 0.0:
            frame = to_link @ _pose(m.body_ipos[b], m.body_iquat[b])
            rot = frame[:3, :3]
            link.inertial = Inertial(mass, Pose(frame[:3, 3].copy(), np.zeros(3)),
                                     rot @ np.diag(m.body_inertia[b]) @ rot.T, link.source)
        for g in range(m.ngeom):
            if m.geom_bodyid[g] == b:
                self.geom(link, g, to_link)

    def geom(self, link: Link, g: int, to_link: np.ndarray) -> None:
        m = self.m
        gname = m.geom(g).name or f"geom{g}"
        gtype = mujoco.mjtGeom(int(m.geom_type[g]))
        kind = _GEOM_KINDS.get(gtype)
        if kind is None:
            self.notes.append(f"geom '{gname}' of link '{link.name}' ({_enum_word(gtype)})")
            return
        pose = _pose(m.geom_pos[g], m.geom_quat[g])
        size = np.asarray(m.geom_size[g], dtype=float)
        if kind == "box":
            geo = Geometry("box", size=2.0 * size)
        elif kind == "sphere":
            geo = Geometry("sphere", radius=float(size[0]))
        elif kind in ("cylinder", "capsule"):
            geo = Geometry(kind, radius=float(size[0]), length=2.0 * float(size[1]))
        else:
            mesh_id = int(m.geom_dataid[g])
            mesh = self.spec.mesh(m.mesh(mesh_id).name)
            # MuJoCo moved the mesh to its inertial frame and the geom with it; undo that to place the file's frame.
            pose = pose @ np.linalg.inv(_pose(m.mesh_pos[mesh_id], m.mesh_quat[mesh_id]))
            filename = mesh.file if mesh is not None else ""
            resolved = self.mesh_path(filename)
            if not filename or resolved is None:
                self.notes.append(f"mesh geom '{gname}' of link '{link.name}' (no readable mesh file)")
                return
            geo = Geometry("mesh", filename="file://" + resolved, resolved_filename=resolved,
                           scale=np.asarray(mesh.scale, dtype=float).copy())
        placed = Pose.from_matrix(to_link @ pose)
        collides = bool(m.geom_contype[g] or m.geom_conaffinity[g])
        visible = int(m.geom_group[g]) in VISIBLE_GROUPS
        if collides:
            link.collisions.append(Collision(geo, gname, placed))
        if visible:
            rgba = m.mat_rgba[m.geom_matid[g]] if m.geom_matid[g] >= 0 else m.geom_rgba[g]
            link.visuals.append(Visual(geo, gname, placed, Material(rgba=np.asarray(rgba, dtype=float).copy())))

    def mesh_path(self, filename: str) -> str | None:
        if not filename:
            return None
        base = self.spec.modelfiledir or self.source.base_dir or os.getcwd()
        meshdir = self.spec.meshdir or ""
        for cand in (Path(base) / meshdir / filename, Path(base) / filename, Path(filename)):
            if cand.is_file():
                return str(cand.resolve())
        return None

    def has_world_geoms(self) -> bool:
        return bool(np.any(self.m.geom_bodyid == 0))

    # -- equality, actuators, the rest ---------------------------------------------------------------
    def equalities(self, robot: RobotModel) -> None:
        m = self.m
        for e in range(m.neq):
            name = m.eq(e).name or f"equality{e}"
            if int(m.eq_type[e]) == int(mujoco.mjtEq.mjEQ_JOINT) and m.eq_obj2id[e] >= 0:
                follower, master = m.joint(int(m.eq_obj1id[e])).name, m.joint(int(m.eq_obj2id[e])).name
                data = m.eq_data[e]
                if follower in robot.joints and master in robot.joints and not np.any(data[2:5]):
                    robot.joints[follower].mimic = Mimic(master, float(data[1]), float(data[0]))
                    continue
            self.notes.append(f"equality '{name}' ({_enum_word(mujoco.mjtEq(int(m.eq_type[e])))})")

    def actuators(self, robot: RobotModel) -> None:
        m = self.m
        block = Ros2Control(name=f"{robot.name}_system", type="system", plugin=TOPIC_PLUGIN,
                            hardware_params={"joint_commands_topic": "robot_joint_commands",
                                             "joint_states_topic": "robot_joint_states",
                                             "trigger_joint_command_threshold": "-1"},
                            source=SourceRef(self.file, None, "<actuator>"))
        rc_joints: dict[str, Ros2ControlJoint] = {}
        for j in robot.joints.values():
            if j.is_scalar:
                rc_joints[j.name] = Ros2ControlJoint(j.name, [], [
                    Ros2ControlInterface("position", initial_value=j.initial_position),
                    Ros2ControlInterface("velocity"), Ros2ControlInterface("effort")])
        for a in range(m.nu):
            self.actuator(robot, a, rc_joints)
        block.joints = [rj for rj in rc_joints.values() if rj.name in robot.joints]
        for rj in block.joints:
            init = rj.state_interfaces[0].initial_value
            rj.state_interfaces[0].params = {} if init is None else {"initial_value": repr(float(init))}
        robot.ros2_control = [block] if block.joints else []

    def actuator(self, robot: RobotModel, a: int, rc_joints: dict[str, Ros2ControlJoint]) -> None:
        m = self.m
        aname = m.actuator(a).name or f"actuator{a}"
        ref = self.ref("actuator", aname) if m.actuator(a).name else SourceRef(self.file, None, f"actuator {a}")
        trn = int(m.actuator_trntype[a])
        if trn not in _JOINT_TRN:
            self.notes.append(f"actuator '{aname}' (drives a {_enum_word(mujoco.mjtTrn(trn))}, not a joint)")
            return
        jname = m.joint(int(m.actuator_trnid[a, 0])).name
        if jname in self.source.ball_joints:
            self.ball_actuator(robot, a, aname, ref, jname, rc_joints)
            return
        joint = robot.joints.get(jname)
        if joint is None or not joint.is_scalar:
            self.notes.append(f"actuator '{aname}' (its joint '{jname}' is not a hinge/slide of the robot)")
            return
        if jname in self.source.servos:
            validation.warn(f"joint '{jname}' has a second actuator; only "
                            f"'{self.source.servos[jname].actuator}' is used", ref)
            self.notes.append(f"actuator '{aname}' (second actuator of joint '{jname}')")
            return
        gear = float(m.actuator_gear[a, 0]) or 1.0
        gain, bias = m.actuator_gainprm[a], m.actuator_biasprm[a]
        fixed_gain = int(m.actuator_gaintype[a]) == int(mujoco.mjtGain.mjGAIN_FIXED)
        affine = int(m.actuator_biastype[a]) == int(mujoco.mjtBias.mjBIAS_AFFINE)
        no_bias = int(m.actuator_biastype[a]) == int(mujoco.mjtBias.mjBIAS_NONE)
        plain = int(m.actuator_dyntype[a]) == int(mujoco.mjtDyn.mjDYN_NONE)
        servo = MjcfServo(jname, aname, "effort")
        # Joint space: force = gear * actuator force, actuator length = gear * q.
        if fixed_gain and affine and gain[0] > 0 and math.isclose(bias[1], -gain[0]) and bias[0] == 0:
            servo.interface = "position"
            servo.kp = float(gain[0]) * gear * gear
            servo.kd = abs(float(bias[2])) * gear * gear
        elif fixed_gain and affine and gain[0] > 0 and bias[0] == 0 and bias[1] == 0 and math.isclose(bias[2],
                                                                                                     -gain[0]):
            servo.interface = "velocity"
            servo.kv = float(gain[0]) * gear * gear
        elif fixed_gain and no_bias and gain[0] == 1.0:
            servo.interface = "effort"
        else:
            validation.warn(f"neither a position servo, a velocity servo nor a motor (gain "
                            f"{[float(v) for v in gain[:3]]}, bias {[float(v) for v in bias[:3]]}); its joint "
                            f"'{jname}' is commanded by effort", ref)
        if not plain:
            validation.warn(f"activation dynamics ({_enum_word(mujoco.mjtDyn(int(m.actuator_dyntype[a])))}),"
                            " which the simulator's servo does not model", ref)
        self.source.servos[jname] = servo
        iface = Ros2ControlInterface(servo.interface)
        lim = joint.limit if joint.limit is not None else Limit()
        joint.limit = lim
        if m.actuator_forcelimited[a]:
            effort = float(max(abs(m.actuator_forcerange[a][0]), abs(m.actuator_forcerange[a][1]))) * abs(gear)
            lim.effort = min(lim.effort, effort) if lim.effort else effort
        if m.actuator_ctrllimited[a]:
            lo, hi = sorted(float(v) / gear for v in m.actuator_ctrlrange[a])
            if servo.interface == "effort":
                lo, hi = lo * gear * gear, hi * gear * gear  # a motor's control is force: times gear
                effort = max(abs(lo), abs(hi))
                lim.effort = min(lim.effort, effort) if lim.effort else effort
            elif servo.interface == "velocity":
                lim.velocity = max(abs(lo), abs(hi))
            iface.min, iface.max = lo, hi
            iface.params = {"min": repr(lo), "max": repr(hi)}
        rc_joints[jname].command_interfaces.append(iface)

    def ball_actuator(self, robot: RobotModel, a: int, aname: str, ref: SourceRef, ball: str,
                      rc_joints: dict[str, Ros2ControlJoint]) -> None:
        """A motor on a ball joint (joint transmission, gain 1, no bias, no dynamics) becomes an effort command
        interface on each of its hinges with a non-zero gear component, limited to ctrlrange (forcerange) times
        that component; anything else on a ball is dropped with a warning (doc/mjcf.md)."""
        m = self.m
        motor = (int(m.actuator_trntype[a]) == int(mujoco.mjtTrn.mjTRN_JOINT)
                 and int(m.actuator_gaintype[a]) == int(mujoco.mjtGain.mjGAIN_FIXED)
                 and float(m.actuator_gainprm[a][0]) == 1.0
                 and int(m.actuator_biastype[a]) == int(mujoco.mjtBias.mjBIAS_NONE)
                 and int(m.actuator_dyntype[a]) == int(mujoco.mjtDyn.mjDYN_NONE))
        hinges = mjcf_ball.hinge_names(ball)
        taken = [h for h in hinges if h in self.source.servos]
        if not motor or taken:
            why = (f"a second actuator of ball joint '{ball}'" if motor else
                   f"an actuator on ball joint '{ball}' that is not a plain motor (joint transmission, gain 1, "
                   "no bias, no activation dynamics), which its three hinges cannot take over")
            validation.warn(f"{why}: dropped, its hinges {hinges} are not driven by it", ref)
            self.notes.append(f"actuator '{aname}' ({why})")
            return
        gear = [float(v) for v in m.actuator_gear[a, :3]]
        for hinge, g in zip(hinges, gear, strict=True):
            if g == 0.0:
                continue
            self.source.servos[hinge] = MjcfServo(hinge, aname, "effort")
            iface = Ros2ControlInterface("effort")
            joint = robot.joints[hinge]
            lim = joint.limit if joint.limit is not None else Limit()
            joint.limit = lim
            if m.actuator_forcelimited[a]:
                effort = float(max(abs(v) for v in m.actuator_forcerange[a])) * abs(g)
                lim.effort = min(lim.effort, effort) if lim.effort else effort
            if m.actuator_ctrllimited[a]:
                lo, hi = sorted(float(v) * g for v in m.actuator_ctrlrange[a])
                effort = max(abs(lo), abs(hi))
                lim.effort = min(lim.effort, effort) if lim.effort else effort
                iface.min, iface.max = lo, hi
                iface.params = {"min": repr(lo), "max": repr(hi)}
            rc_joints[hinge].command_interfaces.append(iface)

    def other_elements(self) -> None:
        m = self.m
        for count, what in ((m.nsensor, "sensor"), (m.ncam, "camera"), (m.nlight, "light"), (m.ntendon, "tendon"),
                            (m.nsite, "site"), (m.nkey, "keyframe")):
            if count:
                self.notes.append(f"{count} {what}(s)")
        if m.npair or m.nexclude:
            self.notes.append(f"{m.npair} contact pair(s) and {m.nexclude} exclude(s)")


def read_mjcf(text: str | bytes, source_file: str = "<string>", base_dir: str | os.PathLike | None = None,
              path: str | None = None) -> RobotModel:
    """Read MJCF text (or, with ``path``, the file) into a validated RobotModel (see doc/mjcf.md).

    ``base_dir`` anchors the text's relative asset paths (meshdir, includes); default: the current directory.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    parse_xml(text, source_file)  # malformed XML: expat names the line and what is wrong, TinyXML only a code
    source = MjcfSource(path=path, text=None if path else text,
                        base_dir=str(base_dir) if base_dir is not None else (
                            str(Path(path).resolve().parent) if path else None))
    spec = load_spec(source, source_file)
    # Whether the file sets <option timestep> (in the main text, or anywhere when it differs from MuJoCo's default).
    written = re.search(r"<option\b[^>]*\btimestep\s*=", text or "") is not None
    dt = float(spec.option.timestep)
    source.timestep = dt if written or dt != MUJOCO_DEFAULT_TIMESTEP else None
    reader = _MjcfReader(spec, source, source_file)
    model = reader.read()
    validation.validate_model(model, check_inertials=False)
    return model


def read_mjcf_file(path: str | os.PathLike) -> RobotModel:
    p = Path(path)
    try:
        text = p.read_text(errors="replace")
    except OSError as exc:
        raise RobotModelError(f"cannot read file: {exc.strerror}", SourceRef(str(path))) from None
    return read_mjcf(text, str(path), path=str(p.resolve()))
