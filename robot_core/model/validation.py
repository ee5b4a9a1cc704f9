"""Checks that turn a bad robot description into one clear error (or a warning) naming file, line and element.

Element-level checks (numbers, mass, inertia, limits) are called by the readers while they still know the exact
line of the offending element; :func:`validate_model` runs the tree-level checks on a finished RobotModel, so
models from every format (URDF, xacro, rai .g, built in code) get the same guarantees.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from robot_core.model.robot_model import (
    JOINT_TYPES,
    Inertial,
    Joint,
    Limit,
    RobotModel,
    RobotModelError,
    RobotModelWarning,
    SourceRef,
)

# Relative tolerance for the inertia checks: URDF files print inertias with limited precision.
INERTIA_RTOL = 1e-9
TINY_MASS = 1e-6
TINY_MOMENT = 1e-12
# Principal moments at most this large (kg m^2 per kg of mass, at least 1 kg) are round-off noise: a point mass.
ROUNDOFF_MOMENT_PER_KG = 1e-15
RBC_VAR_TYPES = ("state", "cmd")


def warn(message: str, source: SourceRef | None = None) -> None:
    """Emit a RobotModelWarning that names where, like the errors do."""
    warnings.warn(RobotModelWarning(f"{source}: {message}" if source else message), stacklevel=3)


def check_joint_type(joint_type: str, source: SourceRef) -> None:
    if joint_type not in JOINT_TYPES:
        raise RobotModelError(f"unknown joint type '{joint_type}' (expected one of {', '.join(JOINT_TYPES)})", source)


def check_axis(axis: np.ndarray, source: SourceRef) -> np.ndarray:
    """Unit axis; a zero axis cannot define a rotation or a translation."""
    norm = float(np.linalg.norm(axis))
    if not math.isfinite(norm) or norm < 1e-12:
        raise RobotModelError(f"axis {list(map(float, axis))} has zero length", source)
    axis = np.asarray(axis, dtype=float)
    # Leave (numerically) unit axes untouched so that write -> read is exact.
    return axis if abs(norm - 1.0) <= 1e-12 else axis / norm


def roundoff_moment(mass: float) -> float:
    """Largest principal moment (kg m^2) that is round-off noise for a link of ``mass`` kg (iCub prints 1e-20)."""
    return ROUNDOFF_MOMENT_PER_KG * max(float(mass), 1.0)


def check_inertial(inertial: Inertial, source: SourceRef, strict: bool = False) -> None:
    """Mass must be positive and the inertia positive semi-definite, with at most one warning per link.

    Real files (sensor frames, tool flanges, Gazebo's 1e-6 kg placeholders) carry point masses, round-off
    inertias (1e-35) and inertias that break the triangle inequality; urdfdom and Pinocchio load them, so they
    are accepted with a warning and the physics builder gives MuJoCo the closest valid inertia. A broken triangle
    inequality is an error only if ``strict``. A clearly indefinite inertia on a link of real mass is an error;
    on a placeholder mass (at most :data:`TINY_MASS`, TIAGo's antennas) it is meaningless and is replaced by
    zero here (a point mass), with the warning.
    """
    mass = inertial.mass
    if not math.isfinite(mass) or mass <= 0.0:
        raise RobotModelError(f"mass {mass} must be positive", source)
    inertia = np.asarray(inertial.inertia, dtype=float)
    if not np.all(np.isfinite(inertia)):
        raise RobotModelError("inertia has non-finite entries", source)
    notes: list[str] = []
    if mass < TINY_MASS:
        notes.append(f"mass {mass} kg is suspiciously small")
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    scale = float(np.max(np.abs(moments)))
    if scale <= roundoff_moment(mass):
        notes.append(f"zero inertia (principal moments {moments.tolist()}): a point mass; the simulator gives it "
                     "a minimal valid inertia")
    elif moments[0] <= -INERTIA_RTOL * scale:
        if mass > TINY_MASS:
            raise RobotModelError(f"inertia is not positive definite (principal moments {moments.tolist()})", source)
        notes.append(f"inertia is not positive definite (principal moments {moments.tolist()}) on a placeholder "
                     f"mass of {mass} kg; used as a point mass")
        inertial.inertia = np.zeros((3, 3))
    else:
        a, b, c = moments
        if a + b < c - INERTIA_RTOL * scale:
            message = f"inertia violates the triangle inequality (principal moments {moments.tolist()}: " \
                      f"{a} + {b} < {c})"
            if strict:
                raise RobotModelError(message, source)
            notes.append(message + "; the simulator uses the closest valid inertia")
        elif moments[0] < TINY_MOMENT:
            notes.append(f"principal moment of inertia {moments[0]} is suspiciously small")
    if notes:
        warn("; ".join(notes), source)


def check_limit(joint_type: str, limit: Limit, source: SourceRef) -> None:
    if limit.lower is not None and limit.upper is not None and limit.lower > limit.upper:
        raise RobotModelError(f"limit lower {limit.lower} is greater than upper {limit.upper}", source)
    if limit.effort < 0.0:
        raise RobotModelError(f"limit effort {limit.effort} is negative", source)
    if limit.velocity < 0.0:
        raise RobotModelError(f"limit velocity {limit.velocity} is negative", source)


def _joint_ref(joint: Joint) -> SourceRef:
    return joint.source if joint.source.element else SourceRef(joint.source.file, joint.source.line,
                                                               f"joint '{joint.name}'")


def validate_model(model: RobotModel, check_inertials: bool = True, strict_inertia: bool = False) -> None:
    """Tree-level checks: links exist, one parent each, no cycles, exactly one root, mimic/ros2_control/rbc refs.

    ``check_inertials=False`` skips the mass checks (the URDF reader has already done them per element).
    """
    file_ref = SourceRef(model.source_file, None, f"robot '{model.name}'")
    if not model.links:
        raise RobotModelError("robot has no links", file_ref)
    parent_of: dict[str, Joint] = {}
    for joint in model.joints.values():
        ref = _joint_ref(joint)
        check_joint_type(joint.type, ref)
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in model.links:
                raise RobotModelError(f"{role} link '{link}' does not exist", ref)
        if joint.parent == joint.child:
            raise RobotModelError(f"joint connects link '{joint.child}' to itself", ref)
        if joint.child in parent_of:
            other = parent_of[joint.child]
            raise RobotModelError(
                f"link '{joint.child}' has two parents: joint '{other.name}' (line {other.source.line}) "
                f"and joint '{joint.name}'",
                ref,
            )
        parent_of[joint.child] = joint
        if joint.limit is not None:
            check_limit(joint.type, joint.limit, ref)
        if joint.mimic is not None:
            if joint.mimic.joint not in model.joints:
                raise RobotModelError(f"mimic refers to joint '{joint.mimic.joint}' which does not exist", ref)
            if joint.mimic.joint == joint.name:
                raise RobotModelError("joint mimics itself", ref)
        for node in joint.rbc:
            for var in node.vars:
                if var.type not in RBC_VAR_TYPES:
                    raise RobotModelError(
                        f"rbc var '{var.name}' has type '{var.type}' (expected 'state' or 'cmd')",
                        var.source if var.source.element else ref,
                    )
    _check_cycles(model, parent_of)
    roots = [name for name in model.links if name not in parent_of]
    if len(roots) != 1:
        detail = "no root link" if not roots else f"several root links: {', '.join(roots)}"
        first = model.links[roots[1]].source if len(roots) > 1 else file_ref
        raise RobotModelError(f"robot must form one tree with exactly one root, found {detail}", first)
    for link in model.links.values():
        if check_inertials and link.inertial is not None:
            ref = link.inertial.source if link.inertial.source.element else link.source
            check_inertial(link.inertial, ref, strict_inertia)
    referrers = [(f"ros2_control '{b.name}'", b.joints, b.source) for b in model.ros2_control]
    referrers += [(f"transmission '{t.name}'", t.joints, t.source) for t in model.transmissions]
    for what, named_joints, source in referrers:
        for named in named_joints:
            if named.name not in model.joints:
                raise RobotModelError(f"{what} names joint '{named.name}' which does not exist", source)


def _check_cycles(model: RobotModel, parent_of: dict[str, Joint]) -> None:
    """Walk up from every link; a walk that revisits a link is a cycle (each link has at most one parent here)."""
    done: set[str] = set()
    for start in model.links:
        path: list[str] = []
        on_path: set[str] = set()
        link = start
        while link in parent_of and link not in done:
            if link in on_path:
                cycle = [*path[path.index(link):], link]
                joint = parent_of[link]
                raise RobotModelError(f"kinematic cycle: {' -> '.join(reversed(cycle))}", _joint_ref(joint))
            on_path.add(link)
            path.append(link)
            link = parent_of[link].parent
        done.update(path)
