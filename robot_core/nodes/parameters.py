"""ROS parameter helpers shared by the controller manager node and the controller nodes.

Nodes here accept any parameter a YAML file gives them (ros2_control files carry arbitrary controller
keys), but ``automatically_declare_parameters_from_overrides`` makes rclpy refuse a whole node when one
value is an empty list (its type cannot be inferred). :func:`declare_overrides` declares them one by one and
gives untyped values dynamic typing instead.
"""

from __future__ import annotations

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
