"""What ``ros2 service call``, ``ros2 param set``, ``ros2 action send_goal`` and ``ros2 topic echo`` do with a
command line, over rclpy.

The shell turns a documented command block into words (bash itself does it here, so quoting and line
continuations are exactly a terminal's); then, as the ros2 command line does, the YAML payload is loaded and
copied into the request or goal field by field (nested messages from mappings, message lists from lists of
mappings, numbers converted to the field's type; an unknown field is an error), and a parameter value's type is
inferred from its YAML text (``rclpy.parameter.get_parameter_value``, which ``ros2 param set`` uses).

ros2cli and rosidl_runtime_py are not available as wheels for this environment, so this is our own rendering of
their documented behaviour; the parts that matter here are unit tested in test_rbc_documented_commands.py.
"""

from __future__ import annotations

import argparse
import array
import importlib
import subprocess
from dataclasses import dataclass
from typing import Any

import numpy as np
import yaml


def shell_words(block: str) -> list[list[str]]:
    """Each command of ``block`` as bash splits it (``ros2`` replaced by a function that prints its words)."""
    script = "ros2() { printf '%s\\0' \"$@\"; printf '\\1'; }\n" + block + "\n"
    out = subprocess.run(["bash", "-c", script], capture_output=True, check=True).stdout.decode()
    return [cmd.split("\0")[:-1] for cmd in out.split("\1") if cmd]


def _message_class(type_name: str) -> Any:
    """``pkg/msg/Type``, ``pkg/srv/Type`` or ``pkg/action/Type`` -> the Python class."""
    pkg, kind, name = type_name.split("/")
    return getattr(importlib.import_module(f"{pkg}.{kind}"), name)


def _nested_class(slot: Any) -> Any:
    return getattr(importlib.import_module(".".join(slot.namespaces)), slot.name)


def fill_message(msg: Any, values: Any, where: str = "") -> Any:
    """Copy a loaded YAML mapping into ``msg`` the way the ros2 command line does; returns ``msg``."""
    from rosidl_parser.definition import AbstractNestedType, NamespacedType

    label = where or type(msg).__name__
    if not isinstance(values, dict):
        raise TypeError(f"{label}: expected a mapping of field names, got {type(values).__name__} {values!r}")
    slots = dict(zip(msg.get_fields_and_field_types(), type(msg).SLOT_TYPES, strict=True))
    for name, value in values.items():
        if name not in slots:
            raise AttributeError(f"{label}: no field '{name}' (fields: {', '.join(slots)})")
        slot, current, path = slots[name], getattr(msg, name), f"{label}.{name}"
        if isinstance(slot, NamespacedType):
            value = value if isinstance(value, type(current)) else fill_message(type(current)(), value, path)
        elif isinstance(slot, AbstractNestedType) and isinstance(slot.value_type, NamespacedType):
            cls = _nested_class(slot.value_type)
            value = [v if isinstance(v, cls) else fill_message(cls(), v, f"{path}[{i}]") for i, v in enumerate(value)]
        elif isinstance(current, array.array):
            value = array.array(current.typecode, value)
        elif isinstance(current, np.ndarray):
            value = np.array(value, dtype=current.dtype)
        elif isinstance(current, list):
            value = list(value)
        elif type(value) is not type(current):
            value = type(current)(value)
        setattr(msg, name, value)
    return msg


def payload(text: str) -> dict[str, Any]:
    """The YAML argument of ``service call`` / ``send_goal``: it must be a mapping (empty = no fields)."""
    loaded = yaml.safe_load(text) if text.strip() else {}
    if not isinstance(loaded, dict):
        raise ValueError(f"the passed value needs to be a dictionary in YAML format, got {loaded!r}")
    return loaded


@dataclass
class Command:
    """One parsed ``ros2`` command line."""

    verb: str  # "service call", "param set", "action send_goal", "topic echo"
    name: str  # service / action / topic name, or the node for param set
    type_name: str = ""
    yaml_text: str = ""
    parameter: str = ""
    no_daemon: bool = False
    once: bool = False  # topic echo --once


def parse(words: list[str]) -> Command:
    """``ros2 ...`` words -> Command, with ros2's own positional/option rules (options anywhere)."""
    if len(words) < 2:
        raise ValueError(f"not a ros2 command: {words}")
    verb = f"{words[0]} {words[1]}"
    p = argparse.ArgumentParser(prog=f"ros2 {verb}", exit_on_error=False)
    p.add_argument("--no-daemon", action="store_true")
    if verb == "service call" or verb == "action send_goal":
        p.add_argument("name")
        p.add_argument("type_name")
        p.add_argument("yaml_text", nargs="?", default="{}")
        a = p.parse_intermixed_args(words[2:])
        return Command(verb, a.name, a.type_name, a.yaml_text, no_daemon=a.no_daemon)
    if verb == "param set":
        p.add_argument("node")
        p.add_argument("parameter")
        p.add_argument("value")
        a = p.parse_intermixed_args(words[2:])
        return Command(verb, a.node, yaml_text=a.value, parameter=a.parameter, no_daemon=a.no_daemon)
    if verb == "topic echo":
        p.add_argument("--once", action="store_true")
        p.add_argument("name")
        p.add_argument("type_name", nargs="?", default="")
        a = p.parse_intermixed_args(words[2:])
        return Command(verb, a.name, a.type_name, once=a.once, no_daemon=a.no_daemon)
    raise ValueError(f"unsupported command 'ros2 {verb}'")


def request_of(cmd: Command) -> Any:
    """The service request or action goal the command sends."""
    cls = _message_class(cmd.type_name)
    inner = cls.Request if cmd.verb == "service call" else cls.Goal
    return fill_message(inner(), payload(cmd.yaml_text))


def parameter_of(cmd: Command) -> Any:
    """The rcl_interfaces/Parameter ``ros2 param set`` sends (type inferred from the YAML text)."""
    from rcl_interfaces.msg import Parameter
    from rclpy.parameter import get_parameter_value

    return Parameter(name=cmd.parameter, value=get_parameter_value(string_value=cmd.yaml_text))
