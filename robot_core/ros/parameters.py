"""ROS parameter helpers shared by the controller manager node and the controller nodes.

Nodes here accept any parameter a YAML file gives them (ros2_control files carry arbitrary controller
keys), but ``automatically_declare_parameters_from_overrides`` makes rclpy refuse a whole node when one
value is an empty list (its type cannot be inferred). :func:`declare_overrides` declares them one by one and
gives untyped values dynamic typing instead.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from typing import Any

from robot_core.parameter_spec import ParamError, ParamSpec, spec_for, validate


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


# --------------------------------------------------------------------------- ParamSpec tables on a node
_RCLPY_READ_ONLY = "Trying to set a read-only parameter: "


def descriptor(spec: ParamSpec) -> Any:
    """The rcl_interfaces ParameterDescriptor of ``spec`` (what ``ros2 param describe`` shows)."""
    from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
    from rclpy.parameter import Parameter

    text = spec.description + (f" [{spec.unit}]" if spec.unit else "")
    d = ParameterDescriptor(name=spec.name, description=text, read_only=spec.read_only,
                            additional_constraints=spec.range_text())
    types = {"bool": Parameter.Type.BOOL, "int": Parameter.Type.INTEGER, "double": Parameter.Type.DOUBLE,
             "string": Parameter.Type.STRING, "string[]": Parameter.Type.STRING_ARRAY,
             "double[]": Parameter.Type.DOUBLE_ARRAY}
    if spec.type in types:
        d.type = types[spec.type].value
    else:
        d.dynamic_typing = True
    if spec.minimum is not None or spec.maximum is not None:
        if spec.type == "double":
            lo = -math.inf if spec.minimum is None else float(spec.minimum)
            hi = math.inf if spec.maximum is None else float(spec.maximum)
            d.floating_point_range = [FloatingPointRange(from_value=lo, to_value=hi, step=0.0)]
        elif spec.type == "int":
            lo_i = -(2 ** 63) if spec.minimum is None else int(spec.minimum)
            hi_i = 2 ** 63 - 1 if spec.maximum is None else int(spec.maximum)
            d.integer_range = [IntegerRange(from_value=lo_i, to_value=hi_i, step=spec.step)]
    return d


def declare_specs(node: Any, specs: Sequence[ParamSpec], label: str) -> dict[str, Any]:
    """Declare every plain parameter of ``specs`` on ``node`` with its descriptor; return the validated values.

    A value from a parameter file or ``-p`` is validated first (ParamError naming ``label`` and the parameter,
    instead of rclpy's exception), then declared converted to the spec's type (``rate:=200`` is a double 200.0).
    Optional parameters are declared only when given; families (``initial_positions.<joint>``) are left to
    :func:`declare_overrides`.
    """
    from rclpy.parameter import Parameter

    overrides: dict[str, Parameter] = getattr(node, "_parameter_overrides", {})
    values: dict[str, Any] = {}
    for spec in specs:
        if spec.family or node.has_parameter(spec.name):
            continue
        given = overrides.get(spec.name)
        if given is None and spec.optional:
            values[spec.name] = None
            continue
        value = validate(spec, spec.default if given is None else given.value, label)
        desc = descriptor(spec)
        if spec.type == "string[]" and not value:
            overrides.pop(spec.name, None)  # an empty list has no inferable type: declare the type alone
            node.declare_parameter(spec.name, Parameter.Type.STRING_ARRAY, desc)
        else:
            if given is not None:
                overrides[spec.name] = Parameter(spec.name, value=value)
            node.declare_parameter(spec.name, value, desc)
        values[spec.name] = value
    return values


def check_set(specs: Sequence[ParamSpec], params: Sequence[Any], label: str) -> str:
    """'' when every settable parameter in ``params`` passes its spec, else the reason (rclpy has already refused
    read-only ones and checked type and range; this adds finiteness and exclusive bounds)."""
    for prm in params:
        spec = spec_for(specs, prm.name)
        if spec is not None and not spec.family and not spec.read_only:
            try:
                validate(spec, prm.value, label)
            except ParamError as exc:
                return str(exc)
    return ""


class ReadOnlyReasons:
    """Node mixin: a refused set of a read-only parameter says why in our words, not rclpy's bare
    "Trying to set a read-only parameter" (the descriptor stays read_only, so ``ros2 param describe`` shows it)."""

    def read_only_reason(self, name: str) -> str:
        """Why ``name`` cannot change at run time (overridden per node)."""
        return f"parameter '{name}' is read-only: it is read once at start-up"

    def _explain(self, result: Any) -> Any:
        if not result.successful and result.reason.startswith(_RCLPY_READ_ONLY):
            result.reason = self.read_only_reason(result.reason[len(_RCLPY_READ_ONLY):].rstrip("."))
        return result

    def set_parameters(self, parameter_list: list[Any]) -> list[Any]:
        return [self._explain(r) for r in super().set_parameters(parameter_list)]  # type: ignore[misc]

    def set_parameters_atomically(self, parameter_list: list[Any]) -> Any:
        return self._explain(super().set_parameters_atomically(parameter_list))  # type: ignore[misc]


# --------------------------------------------------------------------------- a controller's table on its node
def convert_overrides(node: Any, specs: Sequence[ParamSpec]) -> None:
    """Give each parameter-file value of ``node`` that has a spec the spec's type before it is declared
    (``goal_time: 1`` becomes the double 1.0, so a later ``ros2 param set`` of 1.5 is accepted).

    A value that fails its spec is left as given: the controller core refuses it with a message naming the
    controller and the parameter, which is clearer than rclpy's type error at declaration.
    """
    from rclpy.parameter import Parameter

    overrides: dict[str, Parameter] = getattr(node, "_parameter_overrides", {})
    for name, param in list(overrides.items()):
        spec = spec_for(specs, name)
        if spec is None or param.type_ == Parameter.Type.NOT_SET:
            continue
        try:
            value = validate(spec, param.value, "controller")
        except ParamError:
            continue
        if spec.type in ("double", "double[]") and value != []:
            overrides[name] = Parameter(name, value=value)


def describe_declared(node: Any, specs: Sequence[ParamSpec], names: Sequence[str]) -> None:
    """Attach the spec's descriptor (description, read_only, range) to each declared parameter in ``names``.

    Parameters are declared first (from the parameter file, or with the default the controller ran with) and
    described afterwards, because rclpy refuses to set a value on a read-only parameter, and the empty-list
    defaults need a set after their declaration. A value the full descriptor refuses (a type or range the core
    will report) keeps a descriptor with the description and read_only only.
    """
    from rcl_interfaces.msg import ParameterDescriptor
    from rclpy.parameter import Parameter

    for name in names:
        spec = spec_for(specs, name)
        if spec is None or not node.has_parameter(name):
            continue
        current = node.describe_parameter(name)
        if current.read_only or current.description:
            continue  # described already (a second configure)
        full = descriptor(spec)
        full.name = name
        try:
            node.set_descriptor(name, full)
            continue
        except Exception:  # fall back to the parts that cannot conflict with the value
            pass
        ptype = node.get_parameter(name).type_
        loose = ParameterDescriptor(name=name, description=full.description, read_only=spec.read_only,
                                    additional_constraints=full.additional_constraints)
        if ptype == Parameter.Type.NOT_SET:
            loose.dynamic_typing = True
        else:
            loose.type = ptype.value
        with contextlib.suppress(Exception):  # else the parameter keeps rclpy's plain descriptor
            node.set_descriptor(name, loose)
