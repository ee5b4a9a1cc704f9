"""Read rai ``.g`` robot descriptions into a :class:`RobotModel`.

In a ``.g`` file every node is a frame; URDF has links and joints. The mapping, chosen so that
``.g -> URDF -> .g`` is lossless for what both can express:

* Poses. ``Q:`` (older rai: ``rel:``) is relative to the parent, ``X:`` is absolute at the file's
  initial joint values. ``pose:`` is read as absolute, as rai read it until April 2025; newer rai
  reads it as relative for a frame with a parent, so where the two readings differ (the parent is
  not at the origin) a warning says so; option ``pose_relative=True`` reads it as newer rai does.
  Poses are ``<t() q() r() d() E()>`` chains, strings with a chain, or 3/4/7-vectors (also as a
  string ``"[...]"``; see :mod:`rai_transform`). A joint frame's ``Q``/``X`` is the transform the
  joint produces (its initial value); ``q:`` gives the values directly.
* Joint frames (``joint: <type>``) become URDF joints named after the frame; multi-DOF types
  become chains (see :mod:`rai_joint_types`). ``rigid`` frames and frames without ``joint`` are
  fixed. ``limits`` starts with the position limits, ``[lo hi]`` for one DOF and
  ``[lo_1 .. lo_n hi_1 .. hi_n]`` for ``n`` (rai before 2025 wrote ``[lo_1 hi_1 lo_2 hi_2 ..]``: read
  that way, with a warning, when only that reading keeps every lower limit below its upper one; a
  plain ``[lo hi]`` applies to every DOF). A one-DOF joint's entries after ``lo hi`` are velocity,
  acceleration and effort limits, as rai's ``getTorqueLimits`` indexes them; ``ctrl_limits: [vel acc
  effort]`` gives the same (``-1`` = none) and wins where it gives one, as in current rai. URDF has no
  acceleration limit: one given, and entries past effort, are ignored with a warning, as are the
  quaternion-component limits of a quatBall joint. ``[0 0 ...]``
  with more entries (how rai writes a joint that has only ctrl_limits) means no position limits. A
  hinge without position limits is continuous. ``mimic: other``, and the extensions
  ``mimic_multiplier``, ``mimic_offset``, ``damping``, ``friction`` (rai ignores them) fill the URDF
  fields.
* ``A:`` (alias ``pre:``) on a joint frame with a parent inserts frame ``J_origin`` (relative pose
  ``A``) between the parent and the joint, as rai's Joint does; ``B:``/``post:`` there (rai moves the
  frame's single child by it) is ignored with a warning. ``joint: none`` is no joint.
* The shorthand ``J (a b) { joint: .., A: .., Q: .., B: .. }`` adds frame ``J_pre`` (child of
  ``a``, relative pose ``A``), joint frame ``J`` under it, and re-parents root frame ``b`` under
  ``J`` at relative pose ``B`` (identity when absent; a pose ``b`` had before is replaced).
* Which frames become links. Going from the roots down:
  - roots are links;
  - a *pre* frame (no joint, no shape, no mass, exactly one child which is a joint frame) is
    folded into that joint's origin;
  - a *shape* frame (no joint, no mass, a shape, no children) adds its shape to the parent's
    link as a visual/collision named after the frame;
  - a *naming* frame (no shape, no mass, exactly one child ``C`` that has no joint and is not a
    shape frame) is the joint that carries link ``C``: a fixed joint named after it when it has
    no joint type and ``C`` sits at identity, or its own joint when ``C``'s relative pose can be
    moved through the joint (any pose for prismatic joints, a rotation plus an offset along the
    axis for revolute ones, identity for multi-DOF joints);
  - every other frame is a link; if it has no joint of its own it hangs on a fixed joint named
    ``<frame>_joint``.
  Give a frame a mass (or a child) to keep it as its own link rather than a shape.
* Roots. A single root is the robot's root link; ``joint: free`` on it makes a floating base
  (``fixed_base=False`` does too). Several roots, a root with another joint type, or a single
  root that is not at the identity pose are hung below a ``world`` link (a root frame called
  ``world`` is used when there is one) by fixed joints at their absolute poses.
* Shapes: ``shape: box|sphere|capsule|cylinder|mesh|ssBox|ssCvx|ssCylinder`` with ``size``
  (box ``[x y z]``, sphere ``[r]``, capsule/cylinder ``[length radius]``; rai's older 4-vectors
  ``[x y z r]`` work too), ``mesh: <file>``, ``meshscale``, ``color: [r g b (a)]``. ssBox /
  ssCylinder / ssCvx lose their rounding radius. Each shape is visual and collision; ``contact: 0``
  makes it visual only, ``visual: false`` collision only (option ``contact_default=False`` makes
  shapes without ``contact:`` visual only, as rai treats them). ``marker``/``camera`` shapes have
  no geometry and are skipped.
* Mass: ``mass:`` with ``inertia:`` (``[ixx iyy izz]`` or ``[ixx ixy ixz iyy iyz izz]``) and
  ``com:``. Without ``inertia`` the inertia (and, without ``com``, the centre of mass) is computed
  from the link's shapes (its own and its shape frames'; the collision ones when there are any) as
  solids of one uniform density, meshes by their bounding box, so the model is dynamically usable;
  with no usable shape, a water-density sphere of that mass is assumed (with a warning).

Syntax, names (punctuation such as ``>`` included; unnamed frames are called ``_<index>``) and the
``Include`` / ``Prefix`` / ``Edit`` directives: :mod:`rai_syntax`.

Options: ``name`` (robot name; default: the file's stem), ``contact_default`` (see above),
``strict_inertia`` (an inertia breaking the triangle inequality is an error, not a warning),
``pose_relative`` (see Poses). Other options (meant for other readers) are ignored.
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass, field

import numpy as np

from robot_core.model import rai_joint_types as jt
from robot_core.model import validation
from robot_core.model.mass_properties import combine, shape_volume_and_inertia
from robot_core.model.rai_syntax import Attr, Node, Value, parse_graph
from robot_core.model.rai_transform import inverse, parse_transform, pose_from_matrix, vector_to_transform
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
    Pose,
    RobotModel,
    RobotModelError,
    RobotModelWarning,
    SourceRef,
    Visual,
)

_IDENTITY_TOL = 1e-12
WATER_DENSITY = 1000.0  # kg/m^3, for the fallback inertia of a mass without primitive shapes
_ABSOLUTE_POSE_KEYS = ("X", "pose")
_RELATIVE_POSE_KEYS = ("Q", "rel")  # 'rel' is older rai's name for Q
_GEOMETRY_FREE_SHAPES = ("marker", "camera")


@dataclass
class _Shape:
    geometry: Geometry
    color: np.ndarray | None
    visual: bool
    collision: bool
    name: str
    origin: np.ndarray = field(default_factory=lambda: np.eye(4))  # in the owning frame


@dataclass
class _Frame:
    name: str
    node: Node
    parent: str | None
    order: int
    attrs: dict[str, Attr]
    children: list[str] = field(default_factory=list)
    joint: jt.RaiJointType | None = None
    pose_kind: str | None = None  # 'Q' relative, 'X' absolute
    pose_key: str | None = None  # the attribute that gave the pose
    pose: np.ndarray | None = None
    pose_line: int | None = None
    q: np.ndarray | None = None
    q_line: int | None = None
    shape: _Shape | None = None
    mass: float | None = None
    rel: np.ndarray = field(default_factory=lambda: np.eye(4))
    abs: np.ndarray = field(default_factory=lambda: np.eye(4))
    dof_values: np.ndarray | None = None
    initial_given: bool = False

    def ref(self, attr: str | None = None, line: int | None = None) -> SourceRef:
        element = f"frame '{self.name}'" + (f" attribute '{attr}'" if attr else "")
        a = self.attrs.get(attr) if attr else None
        if line is None:
            line = a.line if a is not None else self.node.line
        # An attribute an Edit in another file brought names that file.
        return SourceRef(a.file if a is not None and a.file else self.node.file, line, element)


def read_g(text: str, source_file: str = "<string>", fixed_base: bool = True, **options) -> RobotModel:
    """Parse rai ``.g`` text into a RobotModel (see the module docstring for the mapping)."""
    return _Reader(text, source_file, fixed_base, options).read()


def _is_identity(m: np.ndarray, tol: float = _IDENTITY_TOL) -> bool:
    return bool(np.max(np.abs(m - np.eye(4))) <= tol)


class _Reader:
    def __init__(self, text: str, source_file: str, fixed_base: bool, options: dict):
        self.text = text
        self.file = source_file
        self.fixed_base = fixed_base
        stem = os.path.basename(source_file)
        stem = stem[:-2] if stem.endswith(".g") else stem
        self.name = options.get("name") or (stem if stem and not stem.startswith("<") else "robot")
        self.contact_default = bool(options.get("contact_default", True))
        self.strict_inertia = bool(options.get("strict_inertia", False))
        self.pose_relative = bool(options.get("pose_relative", False))
        self.frames: dict[str, _Frame] = {}
        self.counter = 0
        self.floating_root: str | None = None

    # ------------------------------------------------------------------ frames
    def read(self) -> RobotModel:
        for node in parse_graph(self.text, self.file):
            if len(node.parents) <= 1:
                self._add_frame(node)
            elif len(node.parents) == 2:
                self._add_shorthand(node)
            else:
                raise RobotModelError(
                    f"a frame has at most one parent (or two for the joint shorthand 'joint (a b)'), "
                    f"got {node.parents}", node.ref())
        if not self.frames:
            raise RobotModelError("the file defines no frames", SourceRef(self.file, 1, "file"))
        self._attach_roots()
        self._resolve_poses()
        return self._build_model()

    def _next_order(self) -> int:
        self.counter += 1
        return self.counter

    def _new_frame(self, name: str, node: Node, parent: str | None, attrs: dict[str, Attr], why: str = "") -> _Frame:
        if name in self.frames:
            first = self.frames[name].node
            raise RobotModelError(
                f"frame '{name}'{why} is defined twice (first at {first.file}:{first.line})",
                SourceRef(node.file, node.line, f"frame '{name}'"))
        if parent is not None and parent not in self.frames:
            line = node.parent_lines[0] if node.parent_lines else node.line
            raise RobotModelError(
                f"unknown parent frame '{parent}' (no frame of the file or its includes has that name)",
                SourceRef(node.parents_file or node.file, line, f"frame '{name}'"))
        f = _Frame(name, node, parent, self._next_order(), attrs)
        self.frames[name] = f
        if parent is not None:
            self.frames[parent].children.append(name)
        return f

    def _add_frame(self, node: Node) -> None:
        parent = node.parents[0] if node.parents else None
        attrs = node.attrs
        pre_key = next((k for k in ("A", "pre") if k in attrs), None)
        joint = attrs.get("joint")
        if pre_key is not None and parent is not None and joint is not None and joint.value.data != "none":
            # rai's Joint reads A (alias pre) as a frame '<joint>_origin' inserted between parent and joint.
            attrs = dict(attrs)
            a_attr = attrs.pop(pre_key)
            pre = self._new_frame(f"{node.key}_origin", node, parent, {}, " (made for the joint's A:)")
            pre.pose_kind, pre.pose_line = "Q", a_attr.line
            pre.pose = self._pose_value(pre, a_attr, SourceRef(a_attr.file or node.file, a_attr.line,
                                                               f"frame '{node.key}' attribute '{pre_key}'"))
            parent = pre.name
        post_key = next((k for k in ("B", "post") if k in attrs), None)
        if post_key is not None and joint is not None and joint.value.data != "none":
            attrs = dict(attrs)
            post = attrs.pop(post_key)
            where = SourceRef(post.file or node.file, post.line, f"frame '{node.key}' attribute '{post_key}'")
            warnings.warn(f"{where}: ignored (rai moves the joint frame's single child by it; give that child "
                          "a Q: instead, or use the joint shorthand 'joint (parent child)')",
                          RobotModelWarning, stacklevel=4)
        for key in ("A", "pre", "B", "post"):
            if key in attrs:
                raise RobotModelError(
                    f"'{key}:' belongs to a joint frame with a parent (A/pre) or to the joint shorthand "
                    "'joint (parent child) {...}'; use Q: (relative) or X: (absolute) here",
                    SourceRef(attrs[key].file or node.file, attrs[key].line, f"frame '{node.key}' attribute '{key}'"))
        f = self._new_frame(node.key, node, parent, attrs)
        self._read_pose(f)
        self._read_joint(f)
        self._read_content(f)

    def _add_shorthand(self, node: Node) -> None:
        a, b = node.parents
        for name, line in zip(node.parents, node.parent_lines, strict=True):
            if name not in self.frames:
                raise RobotModelError(
                    f"unknown frame '{name}' in joint shorthand '{node.key} ({a} {b})' "
                    "(no frame of the file or its includes has that name)",
                    SourceRef(node.file, line, f"frame '{node.key}'"))
        to = self.frames[b]
        if to.parent is not None:
            raise RobotModelError(
                f"joint shorthand '{node.key} ({a} {b})' gives frame '{b}' a second parent "
                f"(it already hangs below '{to.parent}')", node.ref())
        walk: str | None = a
        while walk is not None:
            if walk == b:
                raise RobotModelError(
                    f"joint shorthand '{node.key} ({a} {b})' makes a cycle: '{b}' is '{a}' or above it", node.ref())
            walk = self.frames[walk].parent
        if "joint" not in node.attrs:
            raise RobotModelError(
                f"joint shorthand '{node.key} ({a} {b})' needs a 'joint:' type", node.ref())
        attrs = dict(node.attrs)
        a_attr, b_attr = attrs.pop("A", None), attrs.pop("B", None)
        pre = self._new_frame(f"{node.key}_pre", node, a, {}, " (made by the joint shorthand)")
        pre.pose_kind, pre.pose = "Q", np.eye(4)
        if a_attr is not None:
            pre.pose = self._pose_value(pre, a_attr, node.ref(f"frame '{node.key}' attribute 'A'"))
        joint = self._new_frame(node.key, node, pre.name, attrs)
        self._read_pose(joint)
        self._read_joint(joint)
        self._read_content(joint)
        if to.pose is not None and not _is_identity(to.pose):
            warnings.warn(
                f"{to.ref()}: its pose is replaced by the relative pose B of joint shorthand '{node.key}'",
                RobotModelWarning, stacklevel=4)
        to.parent = joint.name
        joint.children.append(b)
        to.order = self._next_order()
        to.pose_kind = "Q"
        to.pose = np.eye(4) if b_attr is None else self._pose_value(to, b_attr, node.ref(
            f"frame '{node.key}' attribute 'B'"))
        to.pose_line = node.line

    def _pose_value(self, f: _Frame, attr: Attr, ref: SourceRef | None = None) -> np.ndarray:
        ref = ref or f.ref(attr.key)
        v = attr.value
        ref = SourceRef(ref.file, v.line, ref.element)
        if v.kind in ("angle", "string"):
            return parse_transform(str(v.data), ref, f"pose {attr.key}")
        if v.kind == "array":
            return vector_to_transform(v.data, ref, f"pose {attr.key}")
        raise RobotModelError(f"a pose must be <...>, a string or a 3/4/7-vector, got {v.kind} {v.data!r}", ref)

    def _read_pose(self, f: _Frame) -> None:
        given = [k for k in (*_RELATIVE_POSE_KEYS, *_ABSOLUTE_POSE_KEYS) if k in f.attrs]
        if len(given) > 1:
            raise RobotModelError(
                f"give one pose: {' and '.join(given)} are both set (Q/rel are relative, X/pose absolute)",
                f.ref(given[1]))
        if given:
            key = given[0]
            relative = key in _RELATIVE_POSE_KEYS or (key == "pose" and self.pose_relative)
            f.pose_kind = "Q" if relative else "X"
            f.pose_key = key
            f.pose = self._pose_value(f, f.attrs[key])
            f.pose_line = f.attrs[key].line

    # ------------------------------------------------------------------ attributes
    def _number(self, f: _Frame, key: str) -> float:
        v = f.attrs[key].value
        if v.kind == "number":
            return float(v.data)
        if v.kind == "array" and len(v.data) == 1:
            return float(v.data[0])
        if v.kind == "bool":
            return 1.0 if v.data else 0.0
        raise RobotModelError(f"expected a number, got {v.kind} {v.data!r}", f.ref(key))

    def _array(self, f: _Frame, key: str, sizes: tuple[int, ...] | None = None) -> np.ndarray:
        v = f.attrs[key].value
        if v.kind == "number":
            data = [float(v.data)]
        elif v.kind == "array":
            data = list(v.data)
        else:
            raise RobotModelError(f"expected a number array [...], got {v.kind} {v.data!r}", f.ref(key))
        if sizes is not None and len(data) not in sizes:
            want = " or ".join(str(s) for s in sizes)
            raise RobotModelError(f"expected {want} numbers, got {len(data)}", f.ref(key))
        return np.array(data, dtype=float)

    def _word(self, f: _Frame, key: str) -> str:
        v: Value = f.attrs[key].value
        if v.kind in ("word", "string", "angle"):
            return str(v.data).strip()
        if v.kind == "names" and len(v.data) == 1:
            return v.data[0]
        raise RobotModelError(f"expected a name, got {v.kind} {v.data!r}", f.ref(key))

    def _read_joint(self, f: _Frame) -> None:
        if "joint" not in f.attrs:
            return
        name = self._word(f, "joint")
        if name == "none":  # rai: no joint (an Edit's way to take one away)
            return
        if name in jt.UNMAPPABLE:
            raise RobotModelError(f"joint type '{name}' cannot be mapped to URDF: {jt.UNMAPPABLE[name]}",
                                  f.ref("joint"))
        typ = jt.lookup(name)
        if typ is None:
            known = ", ".join(jt.JOINT_TYPES)
            raise RobotModelError(f"unknown joint type '{name}' (known: {known})", f.ref("joint"))
        if typ.is_fixed:
            return
        f.joint = typ
        if "q" in f.attrs:
            q = self._array(f, "q")
            if len(q) != typ.q_size:
                raise RobotModelError(f"a {typ.name} joint takes {typ.q_size} q values, got {len(q)}", f.ref("q"))
            if typ.name == "quatBall" and np.linalg.norm(q) < 1e-12:
                raise RobotModelError("the quatBall quaternion q has zero length", f.ref("q"))
            f.q = q
            f.q_line = f.attrs["q"].line

    def _read_content(self, f: _Frame) -> None:
        if "shape" in f.attrs:
            f.shape = self._read_shape(f)
        if "mass" in f.attrs:
            mass = self._number(f, "mass")
            if not mass > 0 or not math.isfinite(mass):
                raise RobotModelError(f"mass must be positive, got {mass}", f.ref("mass"))
            f.mass = mass

    def _read_shape(self, f: _Frame) -> _Shape | None:
        kind = self._word(f, "shape")
        low = kind.lower()
        if low in _GEOMETRY_FREE_SHAPES:
            return None
        size = self._array(f, "size") if "size" in f.attrs else None

        def need(n_ok: tuple[int, ...], what: str) -> np.ndarray:
            if size is None:
                raise RobotModelError(f"shape {kind} needs size: {what}", f.ref("shape"))
            if len(size) not in n_ok:
                raise RobotModelError(f"shape {kind} needs size: {what}, got {len(size)} numbers", f.ref("size"))
            return size

        if low in ("box", "ssbox"):
            s = need((3, 4), "[x y z] (ssBox: [x y z radius])")[:3]
            geom = Geometry("box", size=np.array(s, dtype=float))
            dims = list(s)
        elif low == "sphere":
            s = need((1, 4), "[radius]")
            geom = Geometry("sphere", radius=float(s[-1]))
            dims = [geom.radius]
        elif low in ("capsule", "cylinder", "sscylinder"):
            s = need((2, 3, 4), "[length radius]")
            length, radius = (s[2], s[3]) if len(s) == 4 else (s[0], s[1])
            geom = Geometry("capsule" if low == "capsule" else "cylinder", radius=float(radius), length=float(length))
            dims = [geom.radius, geom.length]
        elif low in ("mesh", "sscvx"):
            if "mesh" not in f.attrs:
                raise RobotModelError(f"shape {kind} needs mesh: <file>", f.ref("shape"))
            fn = self._word(f, "mesh")
            geom = Geometry("mesh", filename=fn, resolved_filename=self._resolve_mesh(fn))
            if "meshscale" in f.attrs:
                sc = self._array(f, "meshscale", (1, 3))
                geom.scale = np.repeat(sc, 3) if len(sc) == 1 else sc
            dims = list(geom.scale)
        else:
            raise RobotModelError(
                f"shape type '{kind}' cannot be mapped to URDF geometry "
                "(box, sphere, capsule, cylinder, mesh, ssBox, ssCvx, ssCylinder; marker/camera are skipped)",
                f.ref("shape"))
        if geom.kind == "mesh" and not all(d != 0 and math.isfinite(d) for d in dims):
            raise RobotModelError(f"meshscale must be non-zero, got {[float(d) for d in dims]}", f.ref("meshscale"))
        if geom.kind != "mesh" and not all(d > 0 and math.isfinite(d) for d in dims):
            raise RobotModelError(f"shape {kind} sizes must be positive, got {[float(d) for d in dims]}",
                                  f.ref("size"))
        color = None
        if "color" in f.attrs:
            c = self._array(f, "color", (1, 3, 4))
            color = np.array([c[0], c[0], c[0], 1.0]) if len(c) == 1 else np.append(c, 1.0) if len(c) == 3 else c
        collision = self.contact_default
        if "contact" in f.attrs:
            collision = self._number(f, "contact") != 0
        visual = True
        if "visual" in f.attrs:
            visual = self._number(f, "visual") != 0
        return _Shape(geom, color, visual, collision, f.name)

    def _resolve_mesh(self, fn: str) -> str | None:
        if "://" in fn:
            return None
        base = os.path.dirname(os.path.abspath(self.file)) if os.path.isfile(self.file) else os.getcwd()
        path = fn if os.path.isabs(fn) else os.path.join(base, fn)
        return os.path.normpath(path) if os.path.isfile(path) else None

    # ------------------------------------------------------------------ roots and poses
    def _attach_roots(self) -> None:
        roots = [f for f in self.frames.values() if f.parent is None]
        r = roots[0]
        moved = r.pose is not None and not _is_identity(r.pose)
        if len(roots) > 1:
            need_world = True
        elif r.joint is not None and r.joint.floating:
            self.floating_root = r.name
            need_world = False
        else:
            need_world = r.joint is not None or (moved and self.fixed_base and r.name != "world")
        if not need_world and moved:
            what = "a floating base" if self.floating_root or not self.fixed_base else "the world frame"
            warnings.warn(f"{r.ref()}: the initial pose of {what} cannot be kept in the model",
                          RobotModelWarning, stacklevel=4)
        if not need_world:
            return
        if not self.fixed_base:
            raise RobotModelError(
                "fixed_base=False (a floating base) needs a single root frame without a joint type, found "
                f"{[(r.name, r.joint.name if r.joint else None) for r in roots]}", roots[0].ref())
        world = self.frames.get("world")
        if world is not None and (world.parent is not None or world.joint is not None):
            raise RobotModelError(
                "the root frames must hang from a 'world' link, but frame 'world' has a parent or a joint",
                world.ref())
        if world is None:
            node = Node("world", [], {}, roots[0].node.line, roots[0].node.file)
            world = _Frame("world", node, None, 0, {})
            self.frames = {"world": world, **self.frames}
        for r in roots:
            if r is world:
                continue
            r.parent = "world"
            world.children.append(r.name)
            if r.pose is not None:
                r.pose_kind = "X"  # a root's pose is absolute whichever key gave it

    def _topological(self) -> list[_Frame]:
        out: list[_Frame] = []
        stack = [f.name for f in reversed(list(self.frames.values())) if f.parent is None]
        while stack:
            f = self.frames[stack.pop()]
            out.append(f)
            stack.extend(reversed(f.children))
        return out

    def _resolve_poses(self) -> None:
        for f in self._topological():
            parent_abs = self.frames[f.parent].abs if f.parent else np.eye(4)
            if f.pose is None:
                rel = np.eye(4)
            elif f.pose_kind == "X":
                rel = inverse(parent_abs) @ f.pose
                if f.pose_key == "pose" and f.parent is not None and not _is_identity(parent_abs, 1e-9):
                    self._warn_pose_reading(f)
            else:
                rel = f.pose
            if f.joint is not None and not f.joint.floating:
                rel = self._joint_initial(f, rel)
            elif f.joint is not None and f.name != self.floating_root and not _is_identity(rel):
                warnings.warn(f"{f.ref()}: the initial pose of a free joint cannot be kept in the model "
                              "(its q = 0 pose is the parent frame's)", RobotModelWarning, stacklevel=4)
            f.rel = rel
            f.abs = parent_abs @ rel

    def _warn_pose_reading(self, f: _Frame) -> None:
        """``pose:`` changed meaning in rai (April 2025): say so where the two readings give different poses."""
        warnings.warn(
            f"{f.ref('pose')}: 'pose' is read as absolute (like X), as rai did until April 2025; newer rai reads "
            f"'pose' of a frame with a parent as relative (like Q), which differs here because '{f.parent}' is not "
            "at the origin; write X: or Q: to say which (option pose_relative=True reads it as newer rai does)",
            RobotModelWarning, stacklevel=4)

    def _joint_initial(self, f: _Frame, rel: np.ndarray) -> np.ndarray:
        typ = f.joint
        assert typ is not None
        if f.q is not None:
            dofs = typ.dofs_from_q(f.q)
            produced = typ.transform(dofs)
            if f.pose is not None and np.max(np.abs(produced - rel)) > jt.POSE_TOLERANCE:
                raise RobotModelError(
                    f"q and the pose of {typ.name} joint frame '{f.name}' disagree; give only one of them",
                    f.ref("q", f.q_line))
        else:
            dofs = typ.dofs_from_transform(rel)
            if dofs is None:
                raise RobotModelError(
                    f"the pose of {typ.name} joint frame '{f.name}' is not a transform a {typ.name} joint can "
                    "produce (a joint frame's pose is the joint's motion; put fixed offsets on a parent frame "
                    "or use the shorthand's A:/B:)",
                    f.ref(line=f.pose_line))
        f.dof_values = np.asarray(dofs, dtype=float)
        f.initial_given = f.q is not None or f.pose is not None
        return typ.transform(dofs)

    # ------------------------------------------------------------------ classification
    def _is_empty(self, f: _Frame) -> bool:
        return f.shape is None and f.mass is None and "shape" not in f.attrs

    def _is_shape_frame(self, f: _Frame) -> bool:
        return (f.parent is not None and f.joint is None and f.mass is None and not f.children
                and f.shape is not None and f.name != self.floating_root)

    def _pushable(self, owner: _Frame, child: _Frame) -> bool:
        b = child.rel
        typ = owner.joint
        if typ is None or typ.floating or len(typ.dofs) > 1:
            return _is_identity(b)
        dof = typ.dofs[0]
        if dof.kind == "prismatic":
            return True
        u = np.asarray(dof.axis)
        p = b[:3, 3]
        return bool(np.linalg.norm(p - np.dot(p, u) * u) <= _IDENTITY_TOL)

    def _classify(self) -> dict[str, str]:
        kind: dict[str, str] = {}
        consumed: set[str] = set()
        for f in self._topological():
            kids = [self.frames[c] for c in f.children]
            if f.parent is None or f.name in consumed:
                kind[f.name] = "link"
            elif f.joint is None and self._is_empty(f) and len(kids) == 1 and kids[0].joint is not None:
                kind[f.name] = "pre"
            elif self._is_shape_frame(f):
                kind[f.name] = "shape"
            elif (self._is_empty(f) and len(kids) == 1 and kids[0].joint is None
                  and not self._is_shape_frame(kids[0]) and self._pushable(f, kids[0])):
                kind[f.name] = "named"
                consumed.add(kids[0].name)
            else:
                kind[f.name] = "link"
        return kind

    # ------------------------------------------------------------------ model
    def _build_model(self) -> RobotModel:
        kind = self._classify()
        order = self._topological()
        model = RobotModel(self.name, fixed_base=self.fixed_base and self.floating_root is None,
                           source_file=self.file)
        links: dict[str, Link] = {}
        shapes: dict[str, list[_Shape]] = {}  # each .g shape once, for the inertia computation
        for f in order:
            if kind[f.name] == "link":
                links[f.name] = Link(f.name, source=f.ref())
                shapes[f.name] = []
                if f.shape is not None:
                    f.shape.name = ""
                    self._add_shape(links[f.name], shapes[f.name], f.shape)
        for f in order:
            if kind[f.name] == "shape":
                assert f.shape is not None and f.parent is not None
                f.shape.origin = f.rel
                self._add_shape(links[f.parent], shapes[f.parent], f.shape)
        for f in order:
            if kind[f.name] == "link":
                self._add_inertial(links[f.name], shapes[f.name], f)

        edges: list[tuple[int, list[Joint], list[Link]]] = []
        for f in order:
            if kind[f.name] != "link" or f.parent is None:
                continue
            parent = self.frames[f.parent]
            owner, b = (parent, f.rel) if kind[parent.name] == "named" else (f, np.eye(4))
            edges.append((owner.order, *self._make_joints(owner, f.name, b, kind)))
        edges.sort(key=lambda e: e[0])

        # Plain frames hang on fixed joints named '<frame>_joint', made unique against all other joint names.
        defaults = {id(j) for _, joints, _ in edges for j in joints if j.type == "fixed" and j.name == j.child}
        taken: set[str] = set()
        for _, joints, _ in edges:
            for j in joints:
                if id(j) in defaults:
                    continue
                if j.name in taken:
                    raise RobotModelError(f"joint name '{j.name}' is used twice", j.source)
                taken.add(j.name)
        for _, joints, _ in edges:
            for j in joints:
                if id(j) in defaults:
                    base = name = f"{j.child}_joint"
                    k = 1
                    while name in taken:
                        name, k = f"{base}_{k}", k + 1
                    j.name = name
                    taken.add(name)
                model.joints[j.name] = j

        root = next(f.name for f in order if f.parent is None)
        all_links = {**links, **{lk.name: lk for _, _, extra in edges for lk in extra}}
        for name in [root] + [j.child for _, joints, _ in edges for j in joints]:
            if name in model.links:
                raise RobotModelError(f"link name '{name}' is used twice (a generated name clashes with a frame)",
                                      all_links[name].source)
            model.links[name] = all_links[name]
        self._check_mimics(model)
        validation.validate_model(model, check_inertials=False)
        return model

    def _add_shape(self, link: Link, pool: list[_Shape], s: _Shape) -> None:
        if s.visual:
            mat = Material(rgba=s.color.copy()) if s.color is not None else None
            link.visuals.append(Visual(s.geometry, s.name, pose_from_matrix(s.origin), mat))
        if s.collision:
            link.collisions.append(Collision(s.geometry, s.name, pose_from_matrix(s.origin)))
        pool.append(s)

    def _add_inertial(self, link: Link, shapes: list[_Shape], f: _Frame) -> None:
        if f.mass is None:
            for key in ("inertia", "inertiaTensor", "com"):
                if key in f.attrs:
                    raise RobotModelError(f"'{key}' needs a mass: on the same frame", f.ref(key))
            return
        com = self._array(f, "com", (3,)) if "com" in f.attrs else None
        key = "inertia" if "inertia" in f.attrs else "inertiaTensor" if "inertiaTensor" in f.attrs else None
        if key is not None:
            v = self._array(f, key, (3, 6))
            inertia = np.diag(v) if len(v) == 3 else Inertial.inertia_matrix(*v)
            link.inertial = Inertial(f.mass, Pose(com if com is not None else np.zeros(3)), inertia, f.ref("mass"))
            validation.check_inertial(link.inertial, f.ref(key), self.strict_inertia)
            return
        centroid, computed = _shapes_inertia(shapes, f.mass, f.ref("mass"))
        if computed is None:
            centroid = np.zeros(3)
            r = (3.0 * f.mass / (4.0 * math.pi * WATER_DENSITY)) ** (1.0 / 3.0)
            computed = np.eye(3) * 0.4 * f.mass * r * r
            warnings.warn(
                f"{f.ref('mass')}: no shape to compute the inertia from; "
                f"assuming a solid sphere of water density (radius {r:.4g} m)", RobotModelWarning, stacklevel=5)
        if com is not None:
            centroid = com
        link.inertial = Inertial(f.mass, Pose(np.asarray(centroid, dtype=float)), computed, f.ref("mass"))
        validation.check_inertial(link.inertial, f.ref("mass"), self.strict_inertia)

    def _limits(self, f: _Frame, n: int) -> tuple[list[tuple[float | None, float | None]], float, float]:
        """Per-DOF (lower, upper), and velocity and effort limits (0 = unspecified).

        rai's ``limits`` holds the position limits of the ``n`` DOFs first (``2 n`` numbers); for a one-DOF
        joint the entries after them are velocity, acceleration and effort (``[lo hi vel acc effort]``, rai's
        ``getTorqueLimits`` indices 2-4). ``ctrl_limits: [vel acc effort]`` gives the same three (``-1`` or
        ``0`` = none) and wins where it gives one, as in current rai (which drops the entries after ``lo hi``).
        URDF has no acceleration limit: a given one is ignored with a warning, as are entries past effort.
        """
        bounds: list[tuple[float | None, float | None]] = [(None, None)] * n
        vel = eff = 0.0
        acc_key = None  # the attribute giving an acceleration limit, which URDF cannot keep
        if "limits" in f.attrs and f.joint is not None and f.joint.name == "quatBall":
            self._array(f, "limits")  # still a number array
            warnings.warn(f"{f.ref('limits')}: ignored: a quatBall joint's limits bound quaternion components, "
                          "which its three URDF revolute joints cannot express", RobotModelWarning, stacklevel=5)
        elif "limits" in f.attrs:
            v = [float(x) for x in self._array(f, "limits")]
            if n > 1 and len(v) == 2:
                v = [v[0]] * n + [v[1]] * n  # one [lo hi] for every DOF (an extension: rai wants 2 n numbers)
            if len(v) < 2 * n:
                raise RobotModelError(
                    f"limits needs at least {2 * n} numbers (a lower and an upper limit per DOF), got {len(v)}",
                    f.ref("limits"))
            pos, extra = v[: 2 * n], v[2 * n:]
            bounds = [(pos[0], pos[1])] if n == 1 else self._multi_dof_bounds(f, pos, n)
            for lo, hi in bounds:
                if lo is not None and hi is not None and lo > hi:
                    raise RobotModelError(f"lower limit {lo} is above upper limit {hi}", f.ref("limits"))
            if n == 1 and extra:
                if pos == [0.0, 0.0]:
                    # rai writes a joint that has only ctrl_limits as zeros followed by them.
                    bounds = [(None, None)]
                    warnings.warn(f"{f.ref('limits')}: lower = upper = 0 followed by more entries read as no "
                                  "position limits (rai writes zeros there for a joint that has none)",
                                  RobotModelWarning, stacklevel=5)
                    extra = extra[len(extra) - 3:] if len(extra) > 3 else extra
                vel = max(extra[0], 0.0)
                eff = max(extra[2], 0.0) if len(extra) > 2 else 0.0
                if len(extra) > 1 and extra[1] > 0:
                    acc_key = "limits"
                if len(extra) > 3:
                    warnings.warn(f"{f.ref('limits')}: {len(extra) - 3} entries after [lo hi velocity acceleration "
                                  "effort] ignored", RobotModelWarning, stacklevel=5)
            elif extra:
                warnings.warn(f"{f.ref('limits')}: the {len(extra)} entries after the {2 * n} position limits are "
                              f"ignored (rai reads velocity/acceleration/effort from them only for one-DOF joints)",
                              RobotModelWarning, stacklevel=5)
        if "ctrl_limits" in f.attrs:
            c = [float(x) for x in self._array(f, "ctrl_limits", (1, 2, 3))]
            cvel, ceff = max(c[0], 0.0), max(c[2], 0.0) if len(c) == 3 else 0.0
            for what, mine, theirs in (("velocity", vel, cvel), ("effort", eff, ceff)):
                if mine > 0 and theirs > 0 and mine != theirs:
                    warnings.warn(f"{f.ref('ctrl_limits')}: {what} limit {theirs} differs from {mine} in 'limits'; "
                                  "ctrl_limits is used, as current rai does", RobotModelWarning, stacklevel=5)
            vel, eff = cvel or vel, ceff or eff
            if len(c) > 1 and c[1] > 0:
                acc_key = acc_key or "ctrl_limits"
        if acc_key is not None:
            warnings.warn(f"{f.ref(acc_key)}: the acceleration limit is ignored (URDF joints have none)",
                          RobotModelWarning, stacklevel=5)
        return bounds, vel, eff

    def _multi_dof_bounds(self, f: _Frame, pos: list[float], n: int) -> list[tuple[float | None, float | None]]:
        """rai reads ``[lo_1 .. lo_n hi_1 .. hi_n]``; rai before 2025 read ``[lo_1 hi_1 lo_2 hi_2 ..]``.

        The current layout is used unless it puts a lower limit above its upper one and the older layout
        does not: then the file was written for older rai, and is read that way with a warning.
        """
        rows = [(pos[i], pos[n + i]) for i in range(n)]
        pairs = [(pos[2 * i], pos[2 * i + 1]) for i in range(n)]
        if any(lo > hi for lo, hi in rows) and all(lo <= hi for lo, hi in pairs):
            warnings.warn(f"{f.ref('limits')}: read as [lo1 hi1 lo2 hi2 ..], the layout of rai before 2025 (current "
                          "rai reads [lo1 lo2 .. hi1 hi2 ..], which puts a lower limit above its upper one here)",
                          RobotModelWarning, stacklevel=6)
            return list(pairs)
        return list(rows)

    def _make_joints(self, owner: _Frame, child: str, b: np.ndarray, kind: dict[str, str]
                     ) -> tuple[list[Joint], list[Link]]:
        """URDF joint(s) for the edge that ``owner`` (a joint or naming frame) makes, ending at link ``child``."""
        assert owner.parent is not None
        parent = self.frames[owner.parent]
        if owner.joint is None:
            origin = owner.rel @ b
            parent_link = parent.name
        elif kind[parent.name] == "pre":
            origin = parent.rel @ b
            parent_link = parent.parent
        else:
            origin = b
            parent_link = parent.name
        assert parent_link is not None and kind[parent_link] == "link", (owner.name, parent_link)
        ref = owner.ref("joint") if owner.joint is not None else owner.ref()
        if owner.joint is None:
            # A plain frame's joint is named '<frame>_joint' later (name == child marks it here).
            return [Joint(owner.name, "fixed", parent_link, child, pose_from_matrix(origin), source=ref)], []
        typ = owner.joint
        if typ.floating:
            return [Joint(owner.name, "floating", parent_link, child, pose_from_matrix(origin), source=ref)], []
        bounds, vel, eff = self._limits(owner, len(typ.dofs))
        dynamics = None
        if "damping" in owner.attrs or "friction" in owner.attrs:
            dynamics = Dynamics(self._number(owner, "damping") if "damping" in owner.attrs else 0.0,
                                self._number(owner, "friction") if "friction" in owner.attrs else 0.0)
        mimic = None
        if "mimic" in owner.attrs:
            mimic = Mimic(self._word(owner, "mimic"),
                          self._number(owner, "mimic_multiplier") if "mimic_multiplier" in owner.attrs else 1.0,
                          self._number(owner, "mimic_offset") if "mimic_offset" in owner.attrs else 0.0)
            if len(typ.dofs) > 1:
                raise RobotModelError("mimic is only supported on one-DOF joints", owner.ref("mimic"))
        joints: list[Joint] = []
        extra_links: list[Link] = []
        prev = parent_link
        n = len(typ.dofs)
        for i, dof in enumerate(typ.dofs):
            name = owner.name if n == 1 else f"{owner.name}_{dof.suffix}"
            last = i == n - 1
            link_name = child if last else f"{name}_link"
            if not last:
                extra_links.append(Link(link_name, source=ref))
            lo, hi = bounds[i]
            if dof.kind == "revolute":
                jtype = "continuous" if lo is None else "revolute"
            else:
                jtype = "prismatic"
            limit = None
            if lo is not None or vel > 0 or eff > 0:
                limit = Limit(lo, hi, eff, vel)
            axis = np.asarray(dof.axis, dtype=float)
            jorigin = np.eye(4)
            if i == 0:
                jorigin = origin
            if last and n == 1:
                axis = b[:3, :3].T @ axis  # the child's relative pose was moved in front of the joint
            init = float(owner.dof_values[i]) if owner.initial_given and owner.dof_values is not None else None
            joints.append(Joint(name, jtype, prev, link_name, pose_from_matrix(jorigin), axis, limit,
                                Dynamics(dynamics.damping, dynamics.friction) if dynamics else None,
                                mimic, initial_position=init, source=ref))
            prev = link_name
        return joints, extra_links

    def _check_mimics(self, model: RobotModel) -> None:
        for j in model.joints.values():
            if j.mimic is None:
                continue
            target = model.joints.get(j.mimic.joint)
            if target is None or not target.is_scalar:
                raise RobotModelError(
                    f"joint '{j.name}' mimics '{j.mimic.joint}', which is not a one-DOF joint of this file",
                    j.source)


def _shapes_inertia(shapes: list[_Shape], mass: float, ref: SourceRef) -> tuple[np.ndarray, np.ndarray | None]:
    """Centre of mass and inertia about it of ``mass`` spread uniformly over the link's shapes.

    Uses the collision shapes when there are any (visual meshes often overlap them), meshes by their
    bounding box; shapes of unknown volume are left out with a warning.
    """
    pool = [s for s in shapes if s.collision] or shapes
    parts = []
    for s in pool:
        props = shape_volume_and_inertia(s.geometry, 1.0)
        if props is None:
            warnings.warn(f"{ref}: cannot compute the volume of mesh '{s.geometry.filename}'; it is left out of "
                          "the inertia", RobotModelWarning, stacklevel=6)
            continue
        if s.geometry.kind == "mesh":
            warnings.warn(f"{ref}: inertia of mesh '{s.geometry.filename}' approximated by its bounding box",
                          RobotModelWarning, stacklevel=6)
        vol, com, inertia = props
        rot = s.origin[:3, :3]
        parts.append((vol, s.origin[:3, 3] + rot @ com, rot @ inertia @ rot.T))
    total = sum(v for v, _, _ in parts)
    if not parts or total <= 0:
        return np.zeros(3), None
    scale = mass / total  # the density that gives the frame's mass
    combined = combine([(v * scale, c, i * scale) for v, c, i in parts])
    return combined.origin.xyz, combined.inertia
