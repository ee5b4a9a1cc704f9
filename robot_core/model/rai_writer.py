"""Write a :class:`RobotModel` as a rai ``.g`` file that :func:`read_g` reads back to the same model.

Every link is a frame; every joint is written the way the reader folds it back (see
``rai_reader``): a movable joint ``J`` from ``P`` to ``C`` with origin ``O`` becomes

    J_origin (P) { Q: <O R> }               # left out when O R is the identity
    J (J_origin) { joint: hingeX, limits: [..], ctrl_limits: [vel -1 effort], q: .. }
    C (J) { Q: <R^-1>, mass: .., ... }      # Q left out when R is the identity

where ``R`` turns the rai axis (x, y or z: the one nearest the URDF axis) onto the URDF axis.
Chains the reader made from multi-DOF rai joints (``J_x``/``J_y``... through massless
``J_x_link``... links) are written back as one joint. A fixed joint is ``C (P) { Q: <O> }``, or
``J (P) { Q: <O> }`` + ``C (J) {}`` when its name is not ``C_joint`` (or the plain form would be
read differently). Shapes at the link origin sit on the link's frame, the others on child shape
frames; a visual and a collision with the same geometry and origin are one shape, the others get
``contact: 0`` (visual only) or ``visual: false`` (collision only). Inertia is written in full,
in the link frame. A floating base is ``joint: free`` on the root frame. Where the reader could
fold an empty link frame away (as a pre or naming frame), the writer pins it: with an explicit
fixed-joint frame, or with ``shape: marker`` (a shape without geometry) on a joint frame that
carries a link of the same name.

Joint order: document order, except that a joint is written after the joint carrying its parent
link (``.g`` frames must follow their parents). Names a ``.g`` file cannot keep apart (a joint
named like a link other than its child) are renamed with a warning.

Not expressible in ``.g`` and dropped with a RobotModelWarning: transmissions, ``<ros2_control>``,
``<rbc>`` tags, safety controllers, calibration, textures. Material names are dropped (colours kept).
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, field

import numpy as np

from robot_core.model import rai_joint_types as jt
from robot_core.model.rai_transform import (
    axis_angle_matrix,
    format_number,
    format_transform,
    inverse,
    rotation,
    rotation_between,
)
from robot_core.model.robot_model import (
    Geometry,
    Joint,
    Link,
    Pose,
    RobotModel,
    RobotModelError,
    RobotModelWarning,
    SourceRef,
)

_TOL = 1e-12
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/]*")


@dataclass
class _Out:
    name: str
    parent: str | None
    attrs: list[tuple[str, str]] = field(default_factory=list)


def write_g(model: RobotModel) -> str:
    """Serialise ``model`` as ``.g`` text (see the module docstring for the conventions)."""
    return _Writer(model).write()


def _identity(m: np.ndarray) -> bool:
    return bool(np.max(np.abs(m - np.eye(4))) <= _TOL)


def _name(n: str) -> str:
    return n if _NAME.fullmatch(n) else '"' + n.replace('"', "'") + '"'


def _array(values) -> str:
    return "[" + " ".join(format_number(v) for v in values) + "]"


def _same_geometry(a: Geometry, b: Geometry) -> bool:
    if a.kind != b.kind or a.filename != b.filename:
        return False
    if (a.size is None) != (b.size is None) or (a.size is not None and not np.allclose(a.size, b.size, 0, _TOL)):
        return False
    return (abs(a.radius - b.radius) <= _TOL and abs(a.length - b.length) <= _TOL
            and np.allclose(a.scale, b.scale, 0, _TOL))


def _same_pose(a: Pose, b: Pose) -> bool:
    return bool(np.max(np.abs(a.matrix() - b.matrix())) <= _TOL)


class _Writer:
    def __init__(self, model: RobotModel):
        self.model = model
        self.out: list[_Out] = []
        self.used: set[str] = set(model.links)  # frame names: links are reserved first
        self.children: dict[str, list[Joint]] = {name: [] for name in model.links}
        for j in model.joints.values():
            if j.parent not in model.links or j.child not in model.links:
                raise RobotModelError(f"joint '{j.name}' connects unknown links '{j.parent}' -> '{j.child}'",
                                      j.source)
            self.children[j.parent].append(j)
        self.mimicked = {j.mimic.joint for j in model.joints.values() if j.mimic}
        # Links written onto a frame that is not at the link frame (a joint frame sharing the link's
        # name, with a rotated axis): the link frame in that frame's coordinates.
        self.offset: dict[str, np.ndarray] = {}
        # Movable joints named like a link other than their child cannot keep their name (one namespace).
        self.renamed: dict[str, str] = {}
        for j in model.joints.values():
            if j.type != "fixed" and j.name in model.links and j.name != j.child:
                self.renamed[j.name] = self._fresh(f"{j.name}_joint")
                warnings.warn(f"joint '{j.name}' has the name of another link, but .g frames share one namespace; "
                              f"it is written as '{self.renamed[j.name]}'", RobotModelWarning, stacklevel=3)

    # ------------------------------------------------------------------ driver
    def write(self) -> str:
        self._warn_dropped()
        root = self.model.root_link
        root_out = _Out(root, None)
        if not self.model.fixed_base:
            root_out.attrs.append(("joint", "free"))
        self._emit_link(self.model.links[root], root_out, np.eye(4))
        done: set[str] = set()
        emitted = {root}
        pending = list(self.model.joints.values())
        # Document order, except that a joint must come after the one carrying its parent link: the
        # first joint (in document order) whose parent is written goes next.
        while pending:
            j = next((j for j in pending if j.parent in emitted), None)
            if j is None:
                raise RobotModelError(
                    f"joints {[j.name for j in pending]} are not connected to the root link '{root}'",
                    SourceRef(self.model.source_file))
            chain = self._match_chain(j)
            joints = chain[1] if chain else [j]
            self._emit_edge(j, chain)
            for k in joints:
                done.add(k.name)
                emitted.add(k.child)
            pending = [j for j in pending if j.name not in done]
        return self._render()

    def _warn_dropped(self) -> None:
        m = self.model
        dropped = []
        if m.transmissions:
            dropped.append(f"{len(m.transmissions)} transmission(s)")
        if m.ros2_control:
            dropped.append(f"{len(m.ros2_control)} <ros2_control> block(s)")
        if m.rbc_nodes():
            dropped.append(f"{len(m.rbc_nodes())} <rbc> tag(s)")
        if any(j.safety_controller for j in m.joints.values()):
            dropped.append("safety controllers")
        if any(j.calibration for j in m.joints.values()):
            dropped.append("calibration")
        if any(v.material and v.material.texture for lk in m.links.values() for v in lk.visuals):
            dropped.append("textures")
        if dropped:
            warnings.warn(f"robot '{m.name}': .g files cannot express {', '.join(dropped)}; left out",
                          RobotModelWarning, stacklevel=3)

    def _render(self) -> str:
        lines = [f"# robot '{self.model.name}' (written by robot_core)"]
        for o in self.out:
            head = _name(o.name) + (f" ({_name(o.parent)})" if o.parent else "")
            body = ", ".join(f"{k}: {v}" for k, v in o.attrs)
            lines.append(f"{head} {{ {body} }}" if body else f"{head} {{}}")
        return "\n".join(lines) + "\n"

    def _fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.used:
            name, k = f"{base}_{k}", k + 1
        self.used.add(name)
        return name

    # ------------------------------------------------------------------ links
    def _own_shape_ok(self, link: Link, is_root: bool) -> bool:
        """May a shape sit on the link's own frame without the reader taking it for a shape frame?"""
        return is_root or link.inertial is not None or bool(self.children[link.name])

    def _shapes(self, link: Link) -> list[tuple[Geometry, Pose, object, bool, bool, str]]:
        """(geometry, origin, material, visual, collision, name) per .g shape.

        A visual and a collision with the same geometry and origin become one shape; pairs are only
        formed in order, so reading the shapes back gives both lists in their original order.
        """
        out: list[tuple[Geometry, Pose, object, bool, bool, str]] = []
        cols = link.collisions
        next_col = 0
        for v in link.visuals:
            match = next((i for i in range(next_col, len(cols)) if _same_geometry(cols[i].geometry, v.geometry)
                          and _same_pose(cols[i].origin, v.origin)), None)
            if match is not None:
                for c in cols[next_col:match]:
                    out.append((c.geometry, c.origin, None, False, True, c.name))
                next_col = match + 1
            out.append((v.geometry, v.origin, v.material, True, match is not None,
                        v.name or (cols[match].name if match is not None else "")))
        for c in cols[next_col:]:
            out.append((c.geometry, c.origin, None, False, True, c.name))
        return out

    def _emit_link(self, link: Link, frame: _Out, offset: np.ndarray) -> None:
        """Write ``link``'s content onto ``frame``; ``offset`` is the link frame in that frame's coordinates."""
        self.out.append(frame)
        self.used.add(frame.name)
        if link.inertial is not None:
            ine = link.inertial
            r = offset[:3, :3] @ ine.origin.matrix()[:3, :3]
            inertia = r @ np.asarray(ine.inertia, dtype=float) @ r.T
            com = (offset @ np.append(ine.origin.xyz, 1.0))[:3]
            frame.attrs.append(("mass", format_number(ine.mass)))
            if np.any(np.abs(com) > 0):
                frame.attrs.append(("com", _array(com)))
            i = inertia
            frame.attrs.append(("inertia", _array([i[0, 0], i[0, 1], i[0, 2], i[1, 1], i[1, 2], i[2, 2]])))
        own_ok = self._own_shape_ok(link, frame.parent is None)
        for k, (geom, origin, material, visual, collision, name) in enumerate(self._shapes(link)):
            pose = offset @ origin.matrix()
            attrs = self._shape_attrs(geom, material, visual, collision, link)
            if own_ok and k == 0 and _identity(pose):
                frame.attrs.extend(attrs)
                continue
            sname = self._fresh(name if name and isinstance(name, str) else f"{link.name}_shape{k}")
            rpy = origin.rpy if _identity(offset) else None
            sub = _Out(sname, frame.name, ([("Q", format_transform(pose, rpy))] if not _identity(pose) else []) + attrs)
            self.out.append(sub)

    def _shape_attrs(self, g: Geometry, material, visual: bool, collision: bool, link: Link) -> list[tuple[str, str]]:
        if g.kind == "box":
            attrs = [("shape", "box"), ("size", _array(np.asarray(g.size, dtype=float)))]
        elif g.kind == "sphere":
            attrs = [("shape", "sphere"), ("size", _array([g.radius]))]
        elif g.kind in ("cylinder", "capsule"):
            attrs = [("shape", g.kind), ("size", _array([g.length, g.radius]))]
        elif g.kind == "mesh":
            fn = g.filename or g.resolved_filename or ""
            attrs = [("shape", "mesh"), ("mesh", f"<{fn}>" if ">" not in fn else f'"{fn}"')]
            sc = np.asarray(g.scale, dtype=float)
            if not np.allclose(sc, 1.0, 0, 0):
                attrs.append(("meshscale", format_number(sc[0]) if np.all(sc == sc[0]) else _array(sc)))
        else:
            raise RobotModelError(f"link '{link.name}': geometry '{g.kind}' has no .g shape", link.source)
        if material is not None and getattr(material, "rgba", None) is not None:
            rgba = np.asarray(material.rgba, dtype=float)
            attrs.append(("color", _array(rgba[:3] if rgba[3] == 1.0 else rgba)))
        if not collision:
            attrs.append(("contact", "0"))
        if not visual:
            attrs.append(("visual", "false"))
        return attrs

    # ------------------------------------------------------------------ joints
    def _first_frame_kind(self, j: Joint) -> str:
        """How the reader will see the first frame written for joint ``j`` (below its parent link)."""
        off = self.offset.get(j.parent, np.eye(4))
        if j.type == "fixed":
            return "plain-identity" if _identity(off @ j.origin.matrix()) else "plain"
        if _identity(off @ j.origin.matrix() @ self._axis_rotation(j)[1]):
            return "joint"
        return "plain"  # the J_origin frame

    def _at_risk(self, link: Link) -> bool:
        """Would a plain frame for ``link`` be folded away by the reader (as a pre or naming frame)?"""
        if link.inertial is not None or link.visuals or link.collisions:
            return False
        kids = self.children[link.name]
        if len(kids) != 1:
            return False
        return self._first_frame_kind(kids[0]) in ("joint", "plain-identity")

    def _axis_rotation(self, j: Joint) -> tuple[int, np.ndarray]:
        """Index of the rai axis used for ``j`` and the rotation R taking it onto ``j.axis``."""
        axis = np.asarray(j.axis, dtype=float)
        norm = float(np.linalg.norm(axis))
        if norm < 1e-12:
            raise RobotModelError(f"joint '{j.name}' has a zero axis", j.source)
        axis = axis / norm
        if j.type == "planar":
            return 2, rotation(rotation_between([0, 0, 1], axis))
        k = int(np.argmax(np.abs(axis)))
        if axis[k] > 1.0 - _TOL:
            return k, np.eye(4)
        e = np.eye(3)[k]
        if axis[k] > 0:
            return k, rotation(rotation_between(e, axis))
        # Nearly opposite: a half turn about the next axis, then the small rotation from -e onto the axis
        # (one rotation_between across ~180 degrees would lose the small components).
        half = axis_angle_matrix(np.eye(3)[(k + 1) % 3], math.pi)
        return k, rotation(rotation_between(-e, axis) @ half)

    def _emit_edge(self, j: Joint, chain: tuple[jt.RaiJointType, list[Joint], str] | None) -> None:
        child = self.model.links[j.child]
        parent = j.parent
        off = self.offset.get(parent, np.eye(4))
        if j.type == "fixed":
            explicit = j.name != f"{j.child}_joint" or self._at_risk(child)
            if explicit and j.name in self.used:
                warnings.warn(f"fixed joint '{j.name}' has the name of another frame; it is written as "
                              f"'{j.child}_joint'", RobotModelWarning, stacklevel=4)
                explicit = self._at_risk(child)
            origin = off @ j.origin.matrix()
            rpy = j.origin.rpy if _identity(off) else None
            attrs = [("Q", format_transform(origin, rpy))] if not _identity(origin) else []
            if explicit:
                jname = self._fresh(j.name if j.name not in self.used else f"{j.child}_joint")
                self.out.append(_Out(jname, parent, attrs))
                self._emit_link(child, _Out(child.name, jname), np.eye(4))
            else:
                self._emit_link(child, _Out(child.name, parent, attrs), np.eye(4))
            return

        if chain is not None:
            typ, joints, jname = chain
            rot = np.eye(4)
            last_child = self.model.links[joints[-1].child]
            attrs = self._joint_attrs_chain(typ, joints)
        elif j.type == "floating":
            typ, joints, jname, rot = jt.JOINT_TYPES["free"], [j], j.name, np.eye(4)
            last_child = child
            attrs = [("joint", "free")]
        else:
            k, rot = self._axis_rotation(j)
            if j.type == "planar":
                typ = jt.JOINT_TYPES["transXYPhi"]
                attrs = [("joint", "transXYPhi")]
            else:
                kind = "prismatic" if j.type == "prismatic" else "revolute"
                typ = jt.JOINT_TYPES[jt.SCALAR_TYPE_BY_AXIS[(kind, k)]]
                attrs = self._joint_attrs_scalar(typ, j)
            joints, jname, last_child = [j], j.name, child
        pre = off @ joints[0].origin.matrix() @ rot
        if not _identity(pre):
            pre_name = self._fresh(f"{jname}_origin")
            rpy = joints[0].origin.rpy if _identity(off) and _identity(rot) else None
            self.out.append(_Out(pre_name, parent, [("Q", format_transform(pre, rpy))]))
            parent = pre_name
        back = inverse(rot)
        if jname == last_child.name:
            # The joint and its child link share a name: one frame carries both.
            self.offset[last_child.name] = back
            kids = self.children[last_child.name]
            if (last_child.inertial is None and not last_child.visuals and not last_child.collisions
                    and len(kids) == 1 and self._first_frame_kind(kids[0]) != "joint"):
                # An empty joint frame with one plain child would be read as the joint carrying that
                # child; a marker (a shape without geometry) keeps this frame a link.
                attrs = [*attrs, ("shape", "marker")]
            self._emit_link(last_child, _Out(jname, parent, attrs), back)
            return
        jname = self.renamed.get(jname, jname)
        if jname in self.used and jname not in self.renamed.values():
            raise RobotModelError(f"joint '{jname}' clashes with a frame name the writer made", j.source)
        self.out.append(_Out(jname, parent, attrs))
        self.used.add(jname)
        link_attrs = [("Q", format_transform(back))] if not _identity(back) else []
        self._emit_link(last_child, _Out(last_child.name, jname, link_attrs), np.eye(4))

    def _limit_attrs(self, joints: list[Joint]) -> list[tuple[str, str]]:
        attrs: list[tuple[str, str]] = []
        lows, highs = [], []
        for j in joints:
            lim = j.limit
            if j.type != "continuous" and lim is not None and lim.lower is not None and lim.upper is not None:
                lows.append(lim.lower)
                highs.append(lim.upper)
        if lows:
            # rai reads a joint's limits as [lo_1 .. lo_n hi_1 .. hi_n] (a 2 x n array, row by row).
            attrs.append(("limits", _array(lows + highs)))
        lim = joints[0].limit
        vel = lim.velocity if lim else 0.0
        eff = lim.effort if lim else 0.0
        if vel > 0 or eff > 0:
            attrs.append(("ctrl_limits", _array([vel if vel > 0 else -1, -1, eff if eff > 0 else -1])))
        return attrs

    def _common_attrs(self, joints: list[Joint], q: np.ndarray | None) -> list[tuple[str, str]]:
        attrs = self._limit_attrs(joints)
        if q is not None:
            attrs.append(("q", format_number(q[0]) if len(q) == 1 else _array(q)))
        j = joints[0]
        if j.mimic is not None:
            attrs.append(("mimic", _name(self.renamed.get(j.mimic.joint, j.mimic.joint))))
            if j.mimic.multiplier != 1.0:
                attrs.append(("mimic_multiplier", format_number(j.mimic.multiplier)))
            if j.mimic.offset != 0.0:
                attrs.append(("mimic_offset", format_number(j.mimic.offset)))
        if j.dynamics is not None:
            attrs += [("damping", format_number(j.dynamics.damping)), ("friction", format_number(j.dynamics.friction))]
        return attrs

    def _joint_attrs_scalar(self, typ: jt.RaiJointType, j: Joint) -> list[tuple[str, str]]:
        q = None if j.initial_position is None else np.array([j.initial_position])
        return [("joint", typ.name), *self._common_attrs([j], q)]

    def _joint_attrs_chain(self, typ: jt.RaiJointType, joints: list[Joint]) -> list[tuple[str, str]]:
        q = None
        if joints[0].initial_position is not None:
            q = typ.q_from_dofs([j.initial_position for j in joints])
        return [("joint", typ.name), *self._common_attrs(joints, q)]

    # ------------------------------------------------------------------ chain recognition
    def _match_chain(self, j1: Joint) -> tuple[jt.RaiJointType, list[Joint], str] | None:
        """Recognise the chain ``J_<s1>, J_<s2>, ...`` the reader makes from one multi-DOF rai joint."""
        for typ in jt.MULTI_DOF_TYPES:
            suffix = "_" + typ.dofs[0].suffix
            if not j1.name.endswith(suffix) or len(j1.name) == len(suffix):
                continue
            prefix = j1.name[: -len(suffix)]
            joints = self._walk_chain(j1, typ, prefix)
            if joints is not None and self._chain_expressible(typ, joints, prefix):
                return typ, joints, prefix
        return None

    def _walk_chain(self, j1: Joint, typ: jt.RaiJointType, prefix: str) -> list[Joint] | None:
        joints: list[Joint] = []
        j: Joint | None = j1
        for i, dof in enumerate(typ.dofs):
            if j is None or j.name != f"{prefix}_{dof.suffix}" or j.mimic is not None or j.name in self.mimicked:
                return None
            if dof.kind == "revolute" and j.type not in ("revolute", "continuous"):
                return None
            if dof.kind == "prismatic" and j.type != "prismatic":
                return None
            if not np.allclose(j.axis, dof.axis, 0, _TOL):
                return None
            if i > 0 and not j.origin.is_identity(_TOL):
                return None
            joints.append(j)
            if i < len(typ.dofs) - 1:
                link = self.model.links[j.child]
                kids = self.children[link.name]
                if (link.name != f"{j.name}_link" or link.inertial or link.visuals or link.collisions
                        or len(kids) != 1):
                    return None
                j = kids[0]
        return joints

    def _chain_expressible(self, typ: jt.RaiJointType, joints: list[Joint], prefix: str) -> bool:
        if prefix in self.used and prefix != joints[-1].child:  # the rai joint frame needs the name
            return False
        has_bounds = [j.type != "continuous" and j.limit is not None and j.limit.lower is not None for j in joints]
        if any(has_bounds) and not all(has_bounds):
            return False
        if any(j.type == "revolute" for j in joints) and not all(has_bounds):
            return False

        def ctrl(j: Joint) -> tuple[float, float]:
            return (j.limit.velocity, j.limit.effort) if j.limit else (0.0, 0.0)

        if len({ctrl(j) for j in joints}) != 1:
            return False
        dyn = {(j.dynamics.damping, j.dynamics.friction) if j.dynamics else None for j in joints}
        if len(dyn) != 1:
            return False
        inits = [j.initial_position for j in joints]
        if any(v is None for v in inits) and not all(v is None for v in inits):
            return False
        if typ.name == "quatBall":
            if any(has_bounds):
                return False
            if inits[0] is not None:
                back = typ.dofs_from_q(typ.q_from_dofs(inits))
                if not np.allclose(back, inits, 0, 1e-9):
                    return False
        return True
