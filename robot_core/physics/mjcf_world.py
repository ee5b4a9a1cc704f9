"""MJCF world files: a floor, lights, scenery and objects written in MuJoCo's XML, around the simulated robot.

Why a module of its own: a YAML world (robot_core.physics.world) is our format, checked field by field; an MJCF
world is MuJoCo's, checked by MuJoCo, and joined to the robot with MjSpec's attach API. The file's world body
(its geoms, lights, bodies, with their assets and defaults) is attached into a frame of the simulation's spec,
names unchanged (a name the robot uses already is an error). The simulation's options (timestep, gravity,
integrator: the simulator's parameters) win over the file's ``<option>``; MuJoCo reports each conflict, passed on
as a RobotModelWarning naming the file.

Objects: each body directly under the file's ``<worldbody>`` with a free joint is a free object (on /tf,
``~/object_states``, movable by ``~/set_object_state``), each one without joints a fixed object; bodies with other
joints (a door, a drawer) are simulated but are not objects. Any of them can be removed at run time; keyframes come
from the simulator's ``keyframes`` parameter (the file's ``<keyframe>`` is not used).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from robot_core.model.robot_model import RobotModelError, RobotModelWarning, SourceRef
from robot_core.physics.world import RESERVED_NAMES, SHAPE_ATTACHED, Pose, World, WorldObject

if TYPE_CHECKING:
    from robot_core.physics.engine import PhysicsEngine

FRAME = "world_file"
_LINE = re.compile(r"[Ll]ine(?: number)?[ =](\d+)")
PREFIX = "world_file:"


def _read(path: Path) -> mujoco.MjSpec:
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            spec = mujoco.MjSpec.from_file(str(path))
    except ValueError as exc:
        text = " ".join(str(exc).split())
        line = _LINE.search(text)
        raise RobotModelError(f"MuJoCo cannot read this MJCF world: {text}",
                              SourceRef(str(path), int(line.group(1)) if line else None)) from None
    for w in caught:
        warnings.warn(f"{path}: {w.message}", RobotModelWarning, stacklevel=3)
    return spec


def load_mjcf_world(path: str | Path) -> World:
    """Read an MJCF world: its top-level bodies become the World's objects (see the module docstring); the
    World's ``attach`` adds the file to a simulation's spec. RobotModelError names the file and what is wrong."""
    p = Path(path).expanduser().resolve()
    if not p.is_file():
        raise RobotModelError("MJCF world file not found", SourceRef(str(p)))
    spec = _read(p)
    objects = []
    for body in spec.worldbody.bodies:
        element = f"body '{body.name}'"
        if not body.name:
            continue  # unnamed scenery: simulated, not addressable
        if body.name in RESERVED_NAMES:
            raise RobotModelError(f"the name '{body.name}' is reserved ({', '.join(RESERVED_NAMES)})",
                                  SourceRef(str(p), None, element))
        kinds = [j.type for j in body.joints]
        if kinds and kinds != [mujoco.mjtJoint.mjJNT_FREE]:
            continue  # articulated: part of the scenery
        quat = tuple(float(v) for v in body.quat)
        objects.append(WorldObject(body.name, SHAPE_ATTACHED, (), Pose(tuple(float(v) for v in body.pos), quat),
                                   fixed=not kinds, where=str(p)))
    return World(str(p), floor=False, objects=tuple(objects), attach=lambda target: attach_mjcf(target, p))


def attach_mjcf(spec: mujoco.MjSpec, path: Path) -> None:
    """Attach the MJCF world at ``path`` into ``spec`` (a frame at the origin named ``world_file``), names kept.
    A body name the robot uses already is a RobotModelError naming the file and the body."""
    world = _read(path)
    taken = {b.name for b in spec.bodies if b.name}
    clash = sorted(b.name for b in world.bodies if b.name and b.name in taken and b.name != "world")
    if clash:
        raise RobotModelError(f"bodies {clash} have the names of links of the robot; rename them",
                              SourceRef(str(path), None, f"body '{clash[0]}'"))
    default = mujoco.MjSpec().option  # what the file has where it says nothing
    for name in dir(spec.option):
        ours = getattr(spec.option, name)
        if name.startswith("_") or callable(ours):
            continue
        theirs = getattr(world.option, name)
        if np.array_equal(np.asarray(ours), np.asarray(theirs)):
            continue
        if not np.array_equal(np.asarray(theirs), np.asarray(getattr(default, name))):
            warnings.warn(f"{path}: <option {name}> {_text(theirs)} ignored: the simulation's {_text(ours)} is used "
                          "(set it with the simulator's parameters)", RobotModelWarning, stacklevel=2)
        setattr(world.option, name, ours)
    # Attached under a prefix (MuJoCo warns at every compile about an empty one, which would break saving the
    # spec as XML), then the prefix is taken off the names a user addresses: bodies, joints, geoms, sites,
    # cameras, lights. Assets and defaults keep it (only the file's own elements refer to them).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec.attach(world, frame=spec.worldbody.add_frame(name=FRAME), prefix=PREFIX)
    for w in caught:
        warnings.warn(f"{path}: {' '.join(str(w.message).split())}", RobotModelWarning, stacklevel=2)
    for elements in (spec.bodies, spec.joints, spec.geoms, spec.sites, spec.cameras, spec.lights):
        for el in elements:
            if el.name.startswith(PREFIX):
                el.name = el.name[len(PREFIX):]


def _text(value: object) -> str:
    arr = np.asarray(value)
    return " ".join(f"{v:g}" for v in arr.reshape(-1)) if arr.dtype.kind in "fiu" else str(value)


def with_robot_file_objects(world: World | None, engine: PhysicsEngine) -> World | None:
    """``world`` plus the scenery an MJCF robot file carries itself (``RobotModel.mjcf.world_bodies``, simulated as
    written): its named top-level bodies with a free joint are free objects, those without joints fixed ones, as
    in an MJCF world file, so a scene written as one file (mujoco_menagerie's ``scene.xml``) shows its objects on
    /tf and ``~/object_states`` and takes ``~/set_object_state`` too. The engine's compiled model gives their
    initial poses."""
    mjcf = engine.robot.mjcf
    if mjcf is None or not mjcf.world_bodies:
        return world
    m = engine.model
    where = mjcf.path or "<robot description>"
    taken = {o.name for o in world.objects} if world is not None else set()
    found = []
    for name in mjcf.world_bodies:
        b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)
        if b <= 0 or int(m.body_parentid[b]) != 0 or name in RESERVED_NAMES or name in taken:
            continue
        first, count = int(m.body_jntadr[b]), int(m.body_jntnum[b])
        kinds = [int(m.jnt_type[j]) for j in range(first, first + count)]
        if kinds and kinds != [int(mujoco.mjtJoint.mjJNT_FREE)]:
            continue  # articulated scenery (a door): simulated, not an object
        pose = Pose(tuple(float(v) for v in m.body_pos[b]), tuple(float(v) for v in m.body_quat[b]))
        found.append(WorldObject(name, SHAPE_ATTACHED, (), pose, fixed=not kinds, where=where))
    if not found:
        return world
    if world is None:
        return World(where, floor=False, objects=tuple(found))
    return replace(world, objects=world.objects + tuple(found))
