"""ROS parameter helpers shared by the controller manager node and the controller nodes.

Nodes here accept any parameter a YAML file gives them (ros2_control files carry arbitrary controller
keys), but ``automatically_declare_parameters_from_overrides`` makes rclpy refuse a whole node when one
value is an empty list (its type cannot be inferred). :func:`declare_overrides` declares them one by one and
gives untyped values dynamic typing instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def declare_overrides(node: Any) -> None:
    """Declare every parameter override (global and node-local ``--params-file`` / ``-p``) on ``node``."""
    from rcl_interfaces.msg import ParameterDescriptor
    from rclpy.parameter import Parameter

    overrides: dict[str, Parameter] = getattr(node, "_parameter_overrides", {})
    for name, param in overrides.items():
        if node.has_parameter(name):
            continue
        if param.type_ == Parameter.Type.NOT_SET:
            node.declare_parameter(name, None, ParameterDescriptor(dynamic_typing=True))
        else:
            node.declare_parameter(name, param.value)


def parameters_as_dict(node: Any, skip: tuple[str, ...] = ("use_sim_time", "start_type_description_service",
                                                            "qos_overrides")) -> dict[str, Any]:
    """All parameters of ``node`` as ``{dotted.name: plain python value}`` (unset values become [])."""
    out: dict[str, Any] = {}
    for name, param in node.get_parameters_by_prefix("").items():
        if name in skip or any(name.startswith(s + ".") for s in skip):
            continue
        value = param.value
        if value is None:
            value = []
        elif not isinstance(value, (str, bool, int, float, list)):
            value = list(value)
        out[name] = value
    return out


def parameter_value(node: Any, name: str, default: Any = None) -> Any:
    """The value of a parameter if it is declared and set, else ``default``."""
    if not node.has_parameter(name):
        return default
    value = node.get_parameter(name).value
    return default if value is None else value


# --ros-args options that take a value and are not parameters (dropped when controllers inherit arguments)
_VALUE_OPTIONS = {"-r", "--remap", "-e", "--enclave", "--log-level", "--log-file-name", "--log-config-file"}


def inheritable_ros_args(argv: Sequence[str]) -> list[str]:
    """The parameter part (``--params-file`` files, ``-p`` overrides) of the ``--ros-args`` sections of ``argv``.

    Controller nodes are created without the process's global arguments, as upstream does, so that a remap meant
    for the manager -- launch_ros ``Node(name=...)`` passes ``-r __node:=<name>`` -- does not rename every
    controller after it. Parameters are still handed down, so one YAML file given to the manager configures its
    controllers too (``<controller>: ros__parameters:`` sections apply to the node of that name).
    """
    out: list[str] = []
    in_ros = False
    tokens = list(argv)
    k = 0
    while k < len(tokens):
        tok = tokens[k]
        k += 1
        if tok == "--ros-args":
            in_ros = True
        elif tok == "--":
            in_ros = False
        elif not in_ros:
            continue
        elif tok in ("--params-file", "-p", "--param") and k < len(tokens):
            out += ["--params-file" if tok == "--params-file" else "-p", tokens[k]]
            k += 1
        elif tok in _VALUE_OPTIONS:
            k += 1
        elif tok.startswith("--params-file=") or tok.startswith("--param="):
            name, _, value = tok.partition("=")
            out += ["--params-file" if name == "--params-file" else "-p", value]
    return out
