"""Type names accepted by ``create_re`` and the classes behind them, and the way (in the coupler's process or
as a process of its own) a ``create_re`` asks for.

Classes are imported on first use so that creating a JointReacher never needs the kinematics library.
"""

from __future__ import annotations

import importlib

from robot_core.rbc.instance import RbcInstance
from robot_core.text import clip

# type name -> "module:Class"; several names may point at one class (short and long forms).
_TYPES: dict[str, str | type[RbcInstance]] = {
    "JR": "robot_core.rbc.reachers.joint_reacher:JointReacher",
    "JointReacher": "robot_core.rbc.reachers.joint_reacher:JointReacher",
    "VF": "robot_core.rbc.reachers.vector_field:VectorField",
    "VectorField": "robot_core.rbc.reachers.vector_field:VectorField",
    "CS": "robot_core.rbc.reachers.contact_simulation:ContactSimulation",
    "ContactSimulation": "robot_core.rbc.reachers.contact_simulation:ContactSimulation",
    "TC": "robot_core.rbc.extenders.touch_contact:TouchContact",
    "TouchContact": "robot_core.rbc.extenders.touch_contact:TouchContact",
}


def type_names() -> list[str]:
    """Every accepted type name (short forms first)."""
    return list(_TYPES)


def resolve_type(type_name: str) -> type[RbcInstance]:
    """Class for ``type_name``; KeyError naming the accepted names otherwise."""
    target = _TYPES.get(type_name.strip())
    if target is None:
        raise KeyError(f"unknown reacher/extender type '{clip(type_name)}' (known: {', '.join(_TYPES)})")
    if isinstance(target, type):
        return target
    module_name, cls_name = target.split(":")
    return getattr(importlib.import_module(module_name), cls_name)


def target(type_name: str) -> str | None:
    """The "module:Class" a type name points at (None for a class registered directly): an instance process
    registers it again, so user types registered with a module path run as processes too."""
    t = _TYPES.get(type_name.strip())
    return t if isinstance(t, str) else None


def register(type_name: str, target: str | type[RbcInstance]) -> None:
    """Add a type (a class or ``"package.module:Class"``) so user reachers can be created through ``create_re``."""
    _TYPES[type_name] = target


def unregister(type_name: str) -> None:
    _TYPES.pop(type_name, None)


def instance_way(data: str, default_process: bool) -> tuple[str, bool, str | None]:
    """``create_re``'s ``data``: the type, then optionally ``process`` or ``in-process`` (``in_process``) for
    the way this one instance runs; a bare type runs the node's default way (``instance_processes``).
    Returns (type, as a process, refusal or None)."""
    words = data.split()
    if len(words) <= 1:
        return data.strip(), default_process, None
    way = words[1].lower().replace("_", "-")
    if len(words) == 2 and way in ("process", "in-process"):
        return words[0], way == "process", None
    return words[0], default_process, (f"create_re data '{clip(data)}': after the type only 'process' or "
                                       f"'in-process' may follow, got '{clip(' '.join(words[1:]))}'")
