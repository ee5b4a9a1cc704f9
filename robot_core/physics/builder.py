"""RobotModel -> MuJoCo model through MjSpec (not MuJoCo's URDF import, which drops elements silently).

Mapping (one MuJoCo body per URDF link, named after the link):

- Every link gets its own body, also children of fixed joints (a body without a joint, welded to its
  parent). Nothing is fused (``compiler.fusestatic`` stays off), so every link name is a body name and
  a site name, and kinematics/inertias are exactly the URDF's. :attr:`BuiltModel.links` still stores an
  offset per link so callers never depend on that choice.
- The body frame is the URDF link frame; the body pose in its parent is the joint ``<origin>``.
- Joints: revolute/continuous -> hinge, prismatic -> slide (axis in the child link frame, through its
  origin); floating -> a free joint when the body is top level (only possible for the root), otherwise
  three slides + a ball joint named ``<joint>:x|y|z|rot`` (qpos layout x y z qw qx qy qz, like a free
  joint); planar -> two slides in the plane + a hinge about the URDF axis (the plane normal), named
  ``<joint>:u``, ``<joint>:v``, ``<joint>:rot``. Revolute/prismatic limits become hard ranges; damping and
  friction from ``<dynamics>`` become ``damping`` and ``frictionloss``. Armature is 0 (no rotor inertia),
  so the dynamics equal the URDF rigid-body model.
- Mimic joints: a joint equality (``q_mimic = offset + multiplier * q_master``) named ``mimic:<joint>``. A
  mimic joint gets no range of its own: the equality and the master's range bound it, and a second range
  could contradict them (PR2's gripper ``parallel_root`` joints mimic with multiplier -1 but have the range
  [0, 0.548], which would lock the gripper shut); a conflicting own range is warned about.
- ``limit_timeconst`` (None: MuJoCo's defaults): time constant (s, at least 2 timesteps) of the joint-limit
  and mimic constraints with a near-hard impedance (:data:`LIMIT_SOLIMP`), so a joint pushed by its full
  effort does not sink into its limit and mimic joints do not lag. Joint friction keeps MuJoCo's regularised
  (soft) model on purpose: a joint pushed by less than its friction creeps slowly instead of sticking, which
  lets position servos (P-D, no integrator) settle on their target instead of stalling friction/kp short of it.
- Inertials: the full URDF inertia is rotated into the link frame and diagonalised here (principal
  moments + orientation in ``iquat``), ``explicitinertial`` is set and inertia from geoms is off. A moving
  body whose whole subtree has (near) zero mass or inertia -- which MuJoCo rejects -- gets a tiny mass of
  :data:`TINY_MASS` kg and/or principal moments of :data:`TINY_INERTIA` kg m^2; every such change is listed
  in :attr:`BuiltModel.adjusted_links` and warned about. Links with mass whose inertia is zero (point
  masses), round-off noise or breaks the triangle inequality (MuJoCo rejects them; PR2's head sensor links
  and the quadrupeds of example-robot-data do) get the closest valid principal moments
  (:func:`balance_moments`), listed there too; the reader has already warned about them, naming file and line.
- Collision geoms (group 3 when visuals are included, else 0; contype=conaffinity=1); visual geoms
  (group 1, contype=conaffinity=0) when ``include_visuals``. Meshes: STL/OBJ by file (ASCII STL, which
  MuJoCo cannot read, converted to vertices and faces here), DAE through :mod:`robot_core.physics.collada`;
  a mesh that cannot be loaded (or of a format MuJoCo does not read) is skipped with a warning naming the
  file (listed in :attr:`BuiltModel.skipped_meshes`, and in :attr:`PreparedSpec.skipped_meshes` for callers
  that compile the spec themselves).
- ``disable_linked_collisions`` (AGX ``disableLinkedBodies``): exclude pairs between the bodies on both
  sides of every movable joint (including links welded to them by fixed joints). When False, MuJoCo's
  parent/child filter is disabled as well, so linked bodies do collide.
- Base: ``fixed_base`` True welds the root body to the world; False gives it a free joint named
  ``<root>:free``. ``None`` takes ``robot.fixed_base``. A root link named ``world`` is MuJoCo's world body
  itself (body 0, always fixed); a floating joint directly below it becomes a true free joint.
- Every link has a site named after the link at its origin (group 5), for cheap frame look-ups.
- Options: gravity (0, 0, -9.81), ``timestep``; everything else MuJoCo defaults. No actuators: callers
  (robot_core.physics.engine) add them to the spec of :func:`prepare_spec` (or :func:`build_spec`) before
  compiling, then hand the :class:`PreparedSpec` to :func:`index_model`.
"""

from __future__ import annotations

import copy
import functools
import os
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from robot_core.model.robot_model import Geometry, Joint, RobotModel, RobotModelError, RobotModelWarning, SourceRef
from robot_core.model.validation import roundoff_moment
from robot_core.physics.collada import ColladaError, read_collada
from robot_core.physics.mjcf_spec import attach_mjcf_member, link_frames, prepare_mjcf_spec

TINY_MASS = 1e-6
TINY_INERTIA = 1e-9
# Smallest principal moment given to a link with mass: relative to its largest, and absolute (MuJoCo wants more
# than 1e-15; 1e-12 is where the massless-body fix-up below starts, so a link is adjusted, and warned about, once).
MIN_MOMENT_RATIO = 1e-12
MIN_MOMENT = 1e-12
GRAVITY = (0.0, 0.0, -9.81)
COLLISION_GROUP = 3
VISUAL_GROUP = 1
SITE_GROUP = 5
DEFAULT_RGBA = (0.7, 0.7, 0.7, 1.0)
WORLD = "world"
# Joint-limit and mimic impedance (MuJoCo solimp d0, dwidth, width) used with ``limit_timeconst``: close to hard.
LIMIT_SOLIMP = (0.95, 0.99, 0.001)


@dataclass(frozen=True)
class JointIndex:
    """Where one URDF joint lives in the compiled model (a planar/floating joint spans several MuJoCo joints)."""

    name: str
    type: str  # URDF type
    joint_ids: tuple[int, ...]
    qpos_adr: int
    dof_adr: int
    nq: int
    nv: int

    @property
    def joint_id(self) -> int:
        return self.joint_ids[0]


@dataclass(frozen=True)
class LinkFrame:
    """A link frame = ``offset`` (4x4, link frame in body frame) on MuJoCo body ``body_id``."""

    name: str
    body_id: int
    site_id: int
    offset: np.ndarray = field(default_factory=lambda: np.eye(4))

    @property
    def offset_is_identity(self) -> bool:
        return bool(np.array_equal(self.offset, np.eye(4)))


@dataclass
class PreparedSpec:
    """An uncompiled MjSpec of a robot plus what building it changed or dropped (see the module docstring)."""

    spec: mujoco.MjSpec
    fixed_base: bool
    skipped_meshes: list[str] = field(default_factory=list)
    adjusted_links: list[str] = field(default_factory=list)
    # A spec from the robot's own MJCF: link -> (MuJoCo body, link frame in the body frame).
    link_frames: dict[str, tuple[str, np.ndarray]] | None = None


@dataclass
class BuiltModel:
    """A compiled MuJoCo model plus the name maps from the RobotModel into it."""

    robot: RobotModel
    spec: mujoco.MjSpec
    model: mujoco.MjModel
    fixed_base: bool
    joints: dict[str, JointIndex]  # every non-fixed URDF joint, document order
    links: dict[str, LinkFrame]
    root_free_joint: JointIndex | None = None
    mimic_equalities: dict[str, int] = field(default_factory=dict)  # mimic joint name -> equality id
    skipped_meshes: list[str] = field(default_factory=list)
    adjusted_links: list[str] = field(default_factory=list)

    def joint(self, name: str) -> JointIndex:
        try:
            return self.joints[name]
        except KeyError:
            raise KeyError(f"robot '{self.robot.name}' has no movable joint '{name}'") from None

    def link_frame(self, name: str) -> LinkFrame:
        try:
            return self.links[name]
        except KeyError:
            raise KeyError(f"robot '{self.robot.name}' has no link '{name}'") from None

    def link_pose(self, data: mujoco.MjData, name: str) -> np.ndarray:
        """World pose (4x4) of a link from ``data`` after mj_kinematics/mj_forward."""
        lf = self.link_frame(name)
        m = np.eye(4)
        m[:3, :3] = data.xmat[lf.body_id].reshape(3, 3)
        m[:3, 3] = data.xpos[lf.body_id]
        return m if lf.offset_is_identity else m @ lf.offset

    def qpos_indices(self, joint_names: list[str]) -> np.ndarray:
        """qpos addresses of scalar joints, in the given order."""
        return np.array([self._scalar(n).qpos_adr for n in joint_names], dtype=np.int64)

    def dof_indices(self, joint_names: list[str]) -> np.ndarray:
        """dof (qvel/qfrc) addresses of scalar joints, in the given order."""
        return np.array([self._scalar(n).dof_adr for n in joint_names], dtype=np.int64)

    def _scalar(self, name: str) -> JointIndex:
        ji = self.joint(name)
        if ji.nq != 1:
            raise KeyError(f"joint '{name}' of robot '{self.robot.name}' is {ji.type}, not a scalar joint")
        return ji

    def initial_qpos(self) -> np.ndarray:
        """qpos0 with each joint's ``initial_position`` (mimic joints follow their master)."""
        q = self.model.qpos0.copy()
        for j in self.robot.joints.values():
            if j.is_scalar and j.initial_position is not None and j.mimic is None:
                q[self.joints[j.name].qpos_adr] = j.initial_position
        for j in self.robot.joints.values():
            if j.is_scalar and j.mimic is not None and j.mimic.joint in self.joints:
                master = q[self.joints[j.mimic.joint].qpos_adr]
                q[self.joints[j.name].qpos_adr] = j.mimic.offset + j.mimic.multiplier * master
        return q


# --------------------------------------------------------------------------------------------------
def _quat(rot: np.ndarray) -> np.ndarray:
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(rot, dtype=float).reshape(9))
    return q


def _warn(msg: str) -> None:
    warnings.warn(msg, RobotModelWarning, stacklevel=3)


def balance_moments(moments: np.ndarray, roundoff: float = 0.0) -> np.ndarray:
    """The closest principal moments (Euclidean) that satisfy the triangle inequality and MuJoCo's minimum.

    Moments a <= b <= c with a + b < c are projected onto the plane a + b = c (a and b rise by a third of the
    deficit, c falls by a third), then nudged inside so MuJoCo's exact check passes. MuJoCo's own
    ``balanceinertia`` sets all three to their mean, which also satisfies the inequality but moves further;
    the projection never moves further than that. A point mass (all moments at most ``roundoff``) gets
    :data:`TINY_INERTIA`; a zero moment (a thin rod) rises to :data:`MIN_MOMENT_RATIO` of the largest, at least
    :data:`MIN_MOMENT`, since MuJoCo refuses moments below 1e-15 on moving bodies.
    """
    out = np.maximum(np.asarray(moments, dtype=float), 0.0)
    order = np.argsort(out)
    a, b, c = out[order]
    if c <= roundoff:
        return np.full(3, TINY_INERTIA)
    deficit = c - (a + b)
    if deficit > 0.0:
        a, b, c = a + deficit / 3.0, b + deficit / 3.0, c - deficit / 3.0
        c -= 1e-12 * c  # strictly inside: a + b >= c survives the quaternion round trip in MuJoCo
    floor = max(MIN_MOMENT_RATIO * c, MIN_MOMENT)
    out[order] = [max(x, floor) for x in (a, b, c)]
    return out


def _principal_inertia(link_name: str, inertial, adjusted: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Principal moments and their frame (in the link frame) of a URDF inertial.

    Point masses, round-off inertias and moments that break the triangle inequality (the reader has already
    warned about each, naming the file and line) get the closest inertia MuJoCo accepts
    (:func:`balance_moments`); the link is listed in ``adjusted``.
    """
    r0 = inertial.origin.matrix()[:3, :3]
    inertia = np.asarray(inertial.inertia, dtype=float)
    i_link = r0 @ inertia @ r0.T
    i_link = 0.5 * (i_link + i_link.T)
    moments, axes = np.linalg.eigh(i_link)
    if np.linalg.det(axes) < 0:
        axes[:, 2] = -axes[:, 2]
    scale = max(float(np.max(np.abs(moments))), 0.0)
    roundoff = roundoff_moment(inertial.mass)
    if scale > roundoff and np.any(moments < -1e-9 * scale):
        raise RobotModelError(f"link '{link_name}': inertia is not positive semi-definite (eigenvalues {moments})",
                              inertial.source)
    balanced = balance_moments(moments, roundoff)
    if not np.array_equal(balanced, np.maximum(moments, 0.0)):
        adjusted.append(link_name)
    return balanced, axes


def _plane_basis(normal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = normal / np.linalg.norm(normal)
    e = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = e - np.dot(e, n) * n
    u /= np.linalg.norm(u)
    return u, np.cross(n, u)


def _unit_axis(joint: Joint) -> np.ndarray:
    axis = np.asarray(joint.axis, dtype=float)
    norm = float(np.linalg.norm(axis))
    if not np.isfinite(norm) or norm < 1e-12:
        raise RobotModelError(f"joint '{joint.name}': axis {axis} has zero length", joint.source)
    return axis / norm


@functools.lru_cache(maxsize=256)
def _collada_cached(path: str, mtime: float) -> tuple[tuple[float, ...], tuple[int, ...]]:
    mesh = read_collada(path)
    return tuple(mesh.vertices.reshape(-1).tolist()), tuple(mesh.faces.reshape(-1).tolist())


class _SpecBuilder:
    def __init__(self, robot: RobotModel, fixed_base: bool, timestep: float, include_visuals: bool,
                 disable_linked_collisions: bool, include_collisions: bool = True,
                 limit_timeconst: float | None = None):
        self.robot = robot
        self.solref = None if limit_timeconst is None else [max(float(limit_timeconst), 2.0 * float(timestep)), 1.0]
        self.include_collisions = include_collisions
        self.fixed_base = fixed_base
        self.include_visuals = include_visuals
        self.disable_linked = disable_linked_collisions
        self.spec = mujoco.MjSpec()
        self.spec.modelname = robot.name
        self.spec.compiler.degree = False
        self.spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
        self.spec.compiler.autolimits = True
        self.spec.option.timestep = float(timestep)
        self.spec.option.gravity = np.array(GRAVITY)
        if not disable_linked_collisions:
            self.spec.option.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_FILTERPARENT)
        self.bodies: dict[str, mujoco.MjsBody] = {}
        self.mesh_assets: dict[tuple, str] = {}
        self.skipped_meshes: list[str] = []
        self.adjusted_links: list[str] = []
        self.mimic_names: dict[str, str] = {}

    # -- tree -------------------------------------------------------------------------------------
    def build(self) -> mujoco.MjSpec:
        robot = self.robot
        if not robot.links:
            raise RobotModelError(f"robot '{robot.name}' has no links", SourceRef(robot.source_file))
        root = robot.root_link
        children: dict[str, list[Joint]] = {}
        for j in robot.joints.values():
            children.setdefault(j.parent, []).append(j)
        if root == WORLD:
            # A URDF root link called "world" *is* MuJoCo's world body: its children become top level.
            if not self.fixed_base:
                _warn(f"robot '{robot.name}': root link 'world' cannot float; kept fixed")
                self.fixed_base = True
            root_body = self.spec.worldbody
        else:
            root_body = self.spec.worldbody.add_body(name=root)
            if not self.fixed_base:
                root_body.add_freejoint(name=f"{root}:free")
        self.bodies[root] = root_body
        if WORLD in robot.links and root != WORLD:
            raise RobotModelError(f"link 'world' must be the root link of robot '{robot.name}'",
                                  robot.links[WORLD].source)
        stack = [root]
        while stack:
            link = stack.pop()
            for j in reversed(children.get(link, [])):
                body = self.bodies[link].add_body(name=j.child)
                m = j.origin.matrix()
                body.pos = m[:3, 3]
                body.quat = _quat(m[:3, :3])
                self.bodies[j.child] = body
                self._add_joint(body, j)
                stack.append(j.child)
        for name, link in robot.links.items():
            if name not in self.bodies:
                raise RobotModelError(f"link '{name}' is not connected to root link '{root}'", link.source)
        for name, link in robot.links.items():
            self._add_link_contents(self.bodies[name], link)
        self._fix_degenerate_mass(root, children)
        self._add_mimics()
        if self.disable_linked and self.include_collisions:
            self._add_excludes(children)
        return self.spec

    def _add_joint(self, body: mujoco.MjsBody, j: Joint) -> None:
        hinge, slide = mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE
        if j.type == "fixed":
            return
        if j.type == "floating" and j.parent == self.robot.root_link == WORLD:
            body.add_freejoint(name=j.name)
            return
        if j.type == "floating":
            for k, axis in zip("xyz", np.eye(3), strict=True):
                body.add_joint(name=f"{j.name}:{k}", type=slide, axis=axis)
            body.add_joint(name=f"{j.name}:rot", type=mujoco.mjtJoint.mjJNT_BALL)
            return
        axis = _unit_axis(j)
        damping = j.dynamics.damping if j.dynamics else 0.0
        friction = j.dynamics.friction if j.dynamics else 0.0
        if j.type == "planar":
            u, v = _plane_basis(axis)
            for suffix, a, t in ((":u", u, slide), (":v", v, slide), (":rot", axis, hinge)):
                body.add_joint(name=j.name + suffix, type=t, axis=a, damping=damping, frictionloss=friction)
            return
        if j.type not in ("revolute", "continuous", "prismatic"):
            raise RobotModelError(f"joint '{j.name}': unknown joint type '{j.type}'", j.source)
        jt = slide if j.type == "prismatic" else hinge
        mj = body.add_joint(name=j.name, type=jt, axis=axis, damping=damping, frictionloss=friction)
        mj.armature = 0.0
        limited = False
        if j.type != "continuous" and j.limit is not None and j.limit.lower is not None and j.limit.upper is not None:
            if j.limit.lower < j.limit.upper:
                limited = True
                mj.range = [j.limit.lower, j.limit.upper]
            else:
                _warn(f"joint '{j.name}': limit lower {j.limit.lower} >= upper {j.limit.upper}; left unlimited")
        mj.limited = mujoco.mjtLimited.mjLIMITED_TRUE if limited else mujoco.mjtLimited.mjLIMITED_FALSE
        if limited and self.solref is not None:
            mj.solref_limit = self.solref
            mj.solimp_limit = [*LIMIT_SOLIMP, *mj.solimp_limit[3:]]

    # -- link contents ---------------------------------------------------------------------------
    def _add_link_contents(self, body: mujoco.MjsBody, link) -> None:
        body.explicitinertial = True
        if link.inertial is not None and link.inertial.mass > 0:
            moments, axes = _principal_inertia(link.name, link.inertial, self.adjusted_links)
            body.mass = float(link.inertial.mass)
            body.ipos = np.asarray(link.inertial.origin.xyz, dtype=float)
            body.iquat = _quat(axes)
            body.inertia = moments
        else:
            body.mass = 0.0
            body.inertia = np.zeros(3)
        body.add_site(name=link.name, group=SITE_GROUP, size=[0.005, 0.005, 0.005])
        for i, col in enumerate(link.collisions if self.include_collisions else []):
            self._add_geom(body, f"{link.name}:collision:{i}", col.geometry, col.origin, link.name, visual=False)
        if self.include_visuals:
            for i, vis in enumerate(link.visuals):
                rgba = self._visual_rgba(vis)
                self._add_geom(body, f"{link.name}:visual:{i}", vis.geometry, vis.origin, link.name, visual=True,
                               rgba=rgba)

    def _visual_rgba(self, vis) -> tuple[float, ...]:
        mat = vis.material
        if mat is not None and mat.rgba is None and mat.name in self.robot.materials:
            mat = self.robot.materials[mat.name]
        if mat is not None and mat.rgba is not None:
            return tuple(float(x) for x in mat.rgba)
        return DEFAULT_RGBA

    def _add_geom(self, body, name: str, geo: Geometry, origin, link: str, *, visual: bool,
                  rgba: tuple[float, ...] | None = None) -> None:
        g = mujoco.mjtGeom
        kind = geo.kind
        kwargs: dict = {}
        if kind == "box":
            kwargs = {"type": g.mjGEOM_BOX, "size": 0.5 * np.asarray(geo.size, dtype=float)}
        elif kind == "cylinder":
            kwargs = {"type": g.mjGEOM_CYLINDER, "size": [geo.radius, 0.5 * geo.length, 0.0]}
        elif kind == "capsule":
            kwargs = {"type": g.mjGEOM_CAPSULE, "size": [geo.radius, 0.5 * geo.length, 0.0]}
        elif kind == "sphere":
            kwargs = {"type": g.mjGEOM_SPHERE, "size": [geo.radius, 0.0, 0.0]}
        elif kind == "mesh":
            mesh_name = self._mesh_asset(geo, link)
            if mesh_name is None:
                return
            kwargs = {"type": g.mjGEOM_MESH, "meshname": mesh_name}
        else:
            _warn(f"link '{link}': unsupported geometry '{kind}' skipped")
            return
        m = origin.matrix()
        geom = body.add_geom(name=name, pos=m[:3, 3], quat=_quat(m[:3, :3]), **kwargs)
        if visual:
            geom.contype = 0
            geom.conaffinity = 0
            geom.group = VISUAL_GROUP
            geom.rgba = np.asarray(rgba if rgba is not None else DEFAULT_RGBA, dtype=float)
        else:
            geom.contype = 1
            geom.conaffinity = 1
            geom.group = COLLISION_GROUP if self.include_visuals else 0
            geom.rgba = np.array([0.5, 0.5, 0.8, 0.5])

    def _mesh_asset(self, geo: Geometry, link: str) -> str | None:
        path = geo.resolved_filename or geo.filename
        scale = tuple(float(s) for s in np.asarray(geo.scale, dtype=float).reshape(-1)[:3])
        key = (path, scale)
        if key in self.mesh_assets:
            return self.mesh_assets[key]
        if not path or not os.path.isfile(path):
            self._skip_mesh(link, geo.filename, "file not found" + (f" ({path})" if path else ""))
            return None
        ext = os.path.splitext(path)[1].lower()
        name = f"mesh{len(self.mesh_assets)}:{os.path.basename(path)}"
        inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL
        if ext == ".stl" and _is_ascii_stl(path):
            # MuJoCo reads binary STL only; the ASCII one is converted here (vertices and faces in memory).
            try:
                verts, faces = _ascii_stl_cached(path, os.path.getmtime(path))
            except ValueError as exc:
                self._skip_mesh(link, geo.filename, str(exc))
                return None
            self.spec.add_mesh(name=name, uservert=list(verts), userface=list(faces), scale=list(scale),
                               inertia=inertia)
        elif ext in (".stl", ".obj", ".msh"):
            reason = _check_mesh_file(path, ext)
            if reason:
                self._skip_mesh(link, geo.filename, reason)
                return None
            self.spec.add_mesh(name=name, file=path, scale=list(scale), inertia=inertia)
        elif ext == ".dae":
            try:
                verts, faces = _collada_cached(path, os.path.getmtime(path))
            except ColladaError as exc:
                self._skip_mesh(link, geo.filename, str(exc))
                return None
            self.spec.add_mesh(name=name, uservert=list(verts), userface=list(faces), scale=list(scale),
                               inertia=inertia)
        else:
            self._skip_mesh(link, geo.filename, f"unsupported mesh format '{ext}'")
            return None
        self.mesh_assets[key] = name
        return name

    def _skip_mesh(self, link: str, filename: str, reason: str) -> None:
        msg = f"link '{link}': mesh '{filename}' skipped: {reason}"
        self.skipped_meshes.append(msg)
        _warn(msg)

    # -- mass fix-up, mimic, excludes --------------------------------------------------------------
    def _fix_degenerate_mass(self, root: str, children: dict[str, list[Joint]]) -> None:
        """Give massless (or inertia-less) moving bodies a tiny mass/inertia, as MuJoCo requires.

        MuJoCo checks each moving body on its own, even when its children carry mass (the
        intermediate links of a multi-DOF joint chain, e.g. a rai transXY, are such bodies).
        """
        order: list[str] = []
        stack = [root]
        while stack:
            link = stack.pop()
            order.append(link)
            stack.extend(j.child for j in children.get(link, []))
        moving = {j.child for j in self.robot.joints.values() if j.type != "fixed"}
        if not self.fixed_base:
            moving.add(root)
        for link in order:
            if link not in moving:
                continue
            body = self.bodies[link]
            changed = False
            if float(body.mass) < 1e-12:
                body.mass = TINY_MASS
                changed = True
            if float(np.min(body.inertia)) < 1e-12:
                body.inertia = np.maximum(np.asarray(body.inertia, dtype=float), TINY_INERTIA)
                changed = True
            if changed:
                self.adjusted_links.append(link)
                src = self.robot.links[link].source if link in self.robot.links else None
                where = f"{src.file}:{src.line}: " if src is not None and src.line is not None else ""
                _warn(f"{where}link '{link}' moves but carries no mass/inertia; gave it mass {body.mass:g} kg and "
                      f"inertia {np.asarray(body.inertia)} kg m^2 so MuJoCo accepts it")

    def _add_mimics(self) -> None:
        joints = self.robot.joints
        for j in joints.values():
            if j.mimic is None:
                continue
            master = joints.get(j.mimic.joint)
            if master is None or not master.is_scalar or not j.is_scalar:
                _warn(f"joint '{j.name}': mimic of '{j.mimic.joint}' is not between scalar joints; ignored")
                continue
            eq = self.spec.add_equality(name=f"mimic:{j.name}", type=mujoco.mjtEq.mjEQ_JOINT,
                                        name1=j.name, name2=master.name)
            eq.objtype = mujoco.mjtObj.mjOBJ_JOINT
            data = np.zeros(len(eq.data))
            data[0] = j.mimic.offset
            data[1] = j.mimic.multiplier
            eq.data = data
            if self.solref is not None:
                eq.solref = self.solref
                eq.solimp = [*LIMIT_SOLIMP, *eq.solimp[3:]]
            self.mimic_names[j.name] = eq.name
            self._release_mimic_range(j, master)

    def _release_mimic_range(self, j: Joint, master: Joint) -> None:
        """The mimic joint's own range goes (see the module docstring); warn if it contradicts the master's."""
        mj = self.spec.joint(j.name)
        if mj.limited != mujoco.mjtLimited.mjLIMITED_TRUE:
            return
        mj.limited = mujoco.mjtLimited.mjLIMITED_FALSE
        ml = master.limit
        if master.type == "continuous" or ml is None or ml.lower is None or ml.upper is None or ml.lower >= ml.upper:
            return
        mult, off = j.mimic.multiplier, j.mimic.offset
        lo, hi = sorted((off + mult * ml.lower, off + mult * ml.upper))
        own_lo, own_hi = (float(x) for x in mj.range)
        if lo < own_lo - 1e-9 or hi > own_hi + 1e-9:
            where = f" ({j.source.file}:{j.source.line})" if j.source.line is not None else ""
            _warn(f"joint '{j.name}'{where} mimics '{master.name}', spanning [{lo:g}, {hi:g}] through the mimic "
                  f"relation, but has its own range [{own_lo:g}, {own_hi:g}]; only the master's limit is enforced")

    def _add_excludes(self, children: dict[str, list[Joint]]) -> None:
        # Weld groups: a link plus everything attached to it through fixed joints.
        group_of: dict[str, str] = {}
        groups: dict[str, list[str]] = {}
        root = self.robot.root_link
        stack = [(root, root)]
        while stack:
            link, rep = stack.pop()
            group_of[link] = rep
            groups.setdefault(rep, []).append(link)
            for j in children.get(link, []):
                stack.append((j.child, rep if j.type == "fixed" else j.child))
        has_col = {name for name, link in self.robot.links.items() if link.collisions}
        done: set[tuple[str, str]] = set()
        for j in self.robot.joints.values():
            if j.type == "fixed":
                continue
            for a in groups[group_of[j.parent]]:
                for b in groups[group_of[j.child]]:
                    if a in has_col and b in has_col and (a, b) not in done:
                        done.add((a, b))
                        self.spec.add_exclude(name=f"linked:{a}:{b}", bodyname1=a, bodyname2=b)


def _is_ascii_stl(path: str) -> bool:
    """An STL starting with ``solid`` whose size does not fit the binary triangle count (binary STLs from some
    exporters also start with ``solid``)."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(84)
    except OSError:
        return False
    if not head[:5].lower().startswith(b"solid"):
        return False
    return len(head) < 84 or size != 84 + 50 * int.from_bytes(head[80:84], "little")


@functools.lru_cache(maxsize=256)
def _ascii_stl_cached(path: str, mtime: float) -> tuple[tuple[float, ...], tuple[int, ...]]:
    """Vertices and faces (3 vertices per ``facet``) of an ASCII STL; ValueError names what is wrong."""
    verts: list[float] = []
    with open(path, "rb") as f:
        for number, line in enumerate(f, start=1):
            parts = line.split()
            if parts[:1] == [b"vertex"]:
                try:
                    verts.extend(float(v) for v in parts[1:4])
                except ValueError:
                    raise ValueError(f"ASCII STL line {number}: bad vertex {line.strip()!r}") from None
                if len(parts) != 4:
                    raise ValueError(f"ASCII STL line {number}: a vertex needs 3 numbers")
    count = len(verts) // 3
    if count == 0 or count % 3:
        raise ValueError(f"ASCII STL with {count} vertices (not whole triangles)")
    return tuple(verts), tuple(range(count))


def _check_mesh_file(path: str, ext: str) -> str:
    """Cheap sanity checks so a broken mesh is skipped instead of failing the whole compile."""
    try:
        size = os.path.getsize(path)
        if size == 0:
            return "empty file"
        if ext == ".stl":
            with open(path, "rb") as f:
                head = f.read(84)
            if len(head) < 84:
                return "truncated STL"
            if not head[:5].lower().startswith(b"solid"):
                n = int.from_bytes(head[80:84], "little")
                if n == 0 or size < 84 + 50 * n:
                    return f"binary STL with {n} triangles but {size} bytes"
    except OSError as exc:
        return str(exc)
    return ""


# --------------------------------------------------------------------------------------------------
def prepare_spec(robot: RobotModel, *, fixed_base: bool | None = None, timestep: float = 0.001,
                 include_visuals: bool = True, disable_linked_collisions: bool = True,
                 include_collisions: bool = True, limit_timeconst: float | None = None) -> PreparedSpec:
    """An uncompiled MjSpec of the robot (see module docstring) with the list of skipped meshes and adjusted
    links; add actuators, ``spec.compile()``, then ``index_model(robot, prepared.spec, model, prepared=prepared)``.

    A robot read from MJCF starts from its file as written instead (:mod:`robot_core.physics.mjcf_spec`); the
    options here other than ``timestep`` then do not apply.

    ``include_collisions=False`` drops collision geoms too (kinematics/dynamics queries need no geometry).
    """
    if robot.mjcf is not None:
        mjcf_spec = prepare_mjcf_spec(robot, timestep)
        if mjcf_spec is not None:
            return PreparedSpec(mjcf_spec, True, link_frames=link_frames(robot))
    if robot.mjcf_members:
        return _prepare_group_spec(robot, fixed_base=fixed_base, timestep=timestep, include_visuals=include_visuals,
                                   disable_linked_collisions=disable_linked_collisions,
                                   include_collisions=include_collisions, limit_timeconst=limit_timeconst)
    fb = robot.fixed_base if fixed_base is None else bool(fixed_base)
    b = _SpecBuilder(robot, fb, timestep, include_visuals, disable_linked_collisions, include_collisions,
                     limit_timeconst)
    spec = b.build()
    return PreparedSpec(spec, b.fixed_base, b.skipped_meshes, b.adjusted_links)


def _prepare_group_spec(robot: RobotModel, **options: Any) -> PreparedSpec:
    """A robot group with MJCF robots (``robot.mjcf_members``): the URDF robots and each MJCF robot's root link
    (welded at its base pose) built as above, then each MJCF robot's own file attached at that pose under its
    prefix (:func:`robot_core.physics.mjcf_spec.attach_mjcf_member`; a free base stays free). A member whose file
    cannot be used as written (:func:`prepare_mjcf_spec` warned) is built from its links and joints like a URDF
    robot."""
    children = {prefix: prepare_mjcf_spec(member, options["timestep"])
                for prefix, member in robot.mjcf_members.items()}
    attached = {prefix: child for prefix, child in children.items() if child is not None}
    own = {prefix + link for prefix in attached for link in robot.mjcf_members[prefix].links
           if link != robot.mjcf_members[prefix].root_link}
    rest = copy.copy(robot)
    rest.links = {name: link for name, link in robot.links.items() if name not in own}
    rest.joints = {name: j for name, j in robot.joints.items() if j.child not in own}
    rest.mjcf_members = {}
    prepared = prepare_spec(rest, **options)
    frames: dict[str, tuple[str, np.ndarray]] = {}
    for prefix, child in attached.items():
        member = robot.mjcf_members[prefix]
        frames.update(attach_mjcf_member(prepared.spec, prefix, member, child,
                                         _welded_pose(robot, prefix + member.root_link)))
    prepared.link_frames = frames
    return prepared


def _welded_pose(robot: RobotModel, link: str) -> np.ndarray:
    """World pose (4x4) of a link hanging from the root by fixed joints (an MJCF robot's root link in a group)."""
    parent_joint = {j.child: j for j in robot.joints.values()}
    pose = np.eye(4)
    while link in parent_joint:
        joint = parent_joint[link]
        if joint.type != "fixed":
            raise RobotModelError(f"robot group: link '{link}' hangs from a {joint.type} joint '{joint.name}', "
                                  "an MJCF robot's root link must be welded", joint.source)
        pose = joint.origin.matrix() @ pose
        link = joint.parent
    return pose


def build_spec(robot: RobotModel, *, fixed_base: bool | None = None, timestep: float = 0.001,
               include_visuals: bool = True, disable_linked_collisions: bool = True,
               include_collisions: bool = True, limit_timeconst: float | None = None) -> mujoco.MjSpec:
    """Just the MjSpec of :func:`prepare_spec`."""
    return prepare_spec(robot, fixed_base=fixed_base, timestep=timestep, include_visuals=include_visuals,
                        disable_linked_collisions=disable_linked_collisions, include_collisions=include_collisions,
                        limit_timeconst=limit_timeconst).spec


def build_model(robot: RobotModel, *, fixed_base: bool | None = None, timestep: float = 0.001,
                include_visuals: bool = True, disable_linked_collisions: bool = True,
                include_collisions: bool = True, limit_timeconst: float | None = None) -> BuiltModel:
    """Build and compile; returns the model with joint/link index maps."""
    prepared = prepare_spec(robot, fixed_base=fixed_base, timestep=timestep, include_visuals=include_visuals,
                            disable_linked_collisions=disable_linked_collisions,
                            include_collisions=include_collisions, limit_timeconst=limit_timeconst)
    model = compile_spec(robot, prepared.spec, prepared)
    return index_model(robot, prepared.spec, model, prepared=prepared)


_REJECTED_ELEMENT = re.compile(r"Element name '([^']*)'")


def compile_spec(robot: RobotModel, spec: mujoco.MjSpec, prepared: PreparedSpec | None = None) -> mujoco.MjModel:
    """Compile; a mesh MuJoCo refuses (too few vertices, a broken file its decoder rejects) is dropped with a
    warning naming it and its geoms, and the compile retried, so one bad mesh never refuses the whole robot.

    Anything else MuJoCo refuses is a RobotModelError naming the robot's file.
    """
    while True:
        try:
            return spec.compile()
        except ValueError as exc:
            match = _REJECTED_ELEMENT.search(str(exc))
            mesh = spec.mesh(match.group(1)) if match else None
            if mesh is None:
                raise RobotModelError(f"MuJoCo rejected robot '{robot.name}': {' '.join(str(exc).split())}",
                                      SourceRef(robot.source_file)) from exc
            geoms = [g for g in spec.geoms if g.meshname == mesh.name]
            links = sorted({g.name.split(":")[0] for g in geoms})
            named = ", ".join(repr(n) for n in links)
            msg = (f"{robot.source_file}: link(s) {named}: mesh '{mesh.file or mesh.name}' skipped: MuJoCo refuses "
                   f"it ({str(exc).splitlines()[0]})")
            for g in geoms:
                spec.delete(g)
            spec.delete(mesh)
            if prepared is not None:
                prepared.skipped_meshes.append(msg)
            _warn(msg)


def index_model(robot: RobotModel, spec: mujoco.MjSpec, model: mujoco.MjModel, *, fixed_base: bool | None = None,
                skipped_meshes: list[str] | None = None, adjusted_links: list[str] | None = None,
                prepared: PreparedSpec | None = None) -> BuiltModel:
    """Name maps for a model compiled from :func:`prepare_spec`'s spec (actuators may have been added).

    ``prepared`` supplies ``fixed_base``, ``skipped_meshes`` and ``adjusted_links`` unless they are given.
    """
    if prepared is not None:
        fixed_base = prepared.fixed_base if fixed_base is None else fixed_base
        skipped_meshes = prepared.skipped_meshes if skipped_meshes is None else skipped_meshes
        adjusted_links = prepared.adjusted_links if adjusted_links is None else adjusted_links
    fb = robot.fixed_base if fixed_base is None else fixed_base
    if robot.root_link == WORLD:
        fb = True  # a root called "world" is MuJoCo's world body
    obj = mujoco.mjtObj

    def jid(name: str) -> int:
        i = mujoco.mj_name2id(model, obj.mjOBJ_JOINT, name)
        if i < 0:
            raise RobotModelError(f"joint '{name}' missing from the compiled model of '{robot.name}'")
        return i

    def index(name: str, urdf_type: str, mj_names: list[str]) -> JointIndex:
        ids = tuple(jid(n) for n in mj_names)
        nq = sum({0: 7, 1: 4, 2: 1, 3: 1}[int(model.jnt_type[i])] for i in ids)
        nv = sum({0: 6, 1: 3, 2: 1, 3: 1}[int(model.jnt_type[i])] for i in ids)
        return JointIndex(name, urdf_type, ids, int(model.jnt_qposadr[ids[0]]), int(model.jnt_dofadr[ids[0]]), nq, nv)

    joints: dict[str, JointIndex] = {}
    for j in robot.joints.values():
        if j.type == "fixed":
            continue
        if j.type == "planar":
            names = [f"{j.name}:u", f"{j.name}:v", f"{j.name}:rot"]
        elif j.type == "floating" and mujoco.mj_name2id(model, obj.mjOBJ_JOINT, j.name) >= 0:
            names = [j.name]  # a real free joint (child of a root link named "world")
        elif j.type == "floating":
            names = [f"{j.name}:x", f"{j.name}:y", f"{j.name}:z", f"{j.name}:rot"]
        else:
            names = [j.name]
        joints[j.name] = index(j.name, j.type, names)
    links: dict[str, LinkFrame] = {}
    frames = prepared.link_frames if prepared is not None else None
    for name in robot.links:  # (a robot group's MJCF robots: only their links are in ``frames``)
        body, offset = frames[name] if frames is not None and name in frames else (name, np.eye(4))
        bid = mujoco.mj_name2id(model, obj.mjOBJ_BODY, body)
        sid = mujoco.mj_name2id(model, obj.mjOBJ_SITE, name) if frames is None or name not in frames else -1
        if bid < 0:
            raise RobotModelError(f"link '{name}' missing from the compiled model of '{robot.name}'")
        links[name] = LinkFrame(name, bid, sid, offset)
    root = robot.root_link
    free = index(f"{root}:free", "floating", [f"{root}:free"]) if not fb else None
    mimics = {}
    for j in robot.joints.values():
        if j.mimic is not None:
            eid = mujoco.mj_name2id(model, obj.mjOBJ_EQUALITY, f"mimic:{j.name}")
            if eid >= 0:
                mimics[j.name] = eid
    return BuiltModel(robot, spec, model, fb, joints, links, free, mimics, list(skipped_meshes or []),
                      list(adjusted_links or []))
