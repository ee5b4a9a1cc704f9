"""ros2_control controller configuration files (YAML) -> ControllerManagerConfig.

The accepted shape is ros2_control's::

    controller_manager:
      ros__parameters:
        update_rate: 100
        joint_state_broadcaster:
          type: joint_state_broadcaster/JointStateBroadcaster
        joint_trajectory_controller:
          type: joint_trajectory_controller/JointTrajectoryController

    joint_trajectory_controller:
      ros__parameters:
        joints: [joint1, joint2]

Node keys may be fully qualified (``/controller_manager``, ``/ns/jtc``) or use
ROS wildcards (``/**``, ``/**/jtc``, ``/*/jtc``); a wildcard section's
parameters apply to every matching node, in file order (later wins), as ROS
applies parameter files. Several files merge in the order given. Errors name the
file and the controller.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from robot_core.control.errors import ControlError
from robot_core.control.params import nest
from robot_core.yaml_guard import YamlLimitError, safe_load_checked

CM_NODE = "controller_manager"
# Keys of a controller entry in the manager's section that are not controller parameters.
_CM_ENTRY_KEYS = ("type", "params_file", "fallback_controllers")


@dataclass
class ControllerConfig:
    name: str
    type: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    source: str = "<string>"
    params_file: list[str] = field(default_factory=list)


@dataclass
class ControllerManagerConfig:
    update_rate: float | None = None
    controllers: dict[str, ControllerConfig] = field(default_factory=dict)
    manager_params: dict[str, Any] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    _files: list[tuple[dict[str, Any], str]] = field(default_factory=list, repr=False)

    def controller(self, name: str) -> ControllerConfig:
        try:
            return self.controllers[name]
        except KeyError:
            raise ControlError(f"no controller named '{name}' in {self.sources or ['<config>']}") from None


def _key_regex(key: str) -> re.Pattern[str]:
    """A ROS parameter-file node key as a regex over the fully qualified node name."""
    k = key if key.startswith("/") else "/" + key
    parts = []
    for token in re.split(r"(/\*\*|\*)", k):
        if token == "/**":
            parts.append(r"(/[^/]+)*")
        elif token == "*":
            parts.append(r"[^/]*")
        else:
            parts.append(re.escape(token))
    return re.compile("^" + "".join(parts) + "$")


def _matches(key: str, node: str, namespace: str = "") -> bool:
    fq = f"{namespace.rstrip('/')}/{node}" if namespace else f"/{node}"
    if not key.startswith("/") and "*" not in key:
        return key == node or "/" + key == fq
    return bool(_key_regex(key).match(fq))


def node_params(data: Mapping[str, Any], node: str, source: str, namespace: str = "") -> dict[str, Any]:
    """All ``ros__parameters`` of ``node`` in one parsed file (wildcards and exact keys, file order)."""
    out: dict[str, Any] = {}
    for key, section in data.items():
        if not isinstance(key, str) or not _matches(key, node, namespace):
            continue
        if not isinstance(section, Mapping) or "ros__parameters" not in section:
            raise ControlError(f"{source}: section '{key}' has no 'ros__parameters' mapping")
        params = section["ros__parameters"]
        if params is None:
            continue
        if not isinstance(params, Mapping):
            raise ControlError(f"{source}: '{key}.ros__parameters' must be a mapping")
        _deep_update(out, nest(params))
    return out


def _deep_update(dst: dict[str, Any], src: Mapping[str, Any]) -> None:
    for k, v in src.items():
        if isinstance(v, Mapping) and isinstance(dst.get(k), dict):
            _deep_update(dst[k], v)
        else:
            dst[k] = dict(v) if isinstance(v, Mapping) else v


def _load_yaml(path_or_text: str | os.PathLike[str], is_text: bool) -> tuple[dict[str, Any], str]:
    if is_text:
        source, text = "<string>", str(path_or_text)
    else:
        source = os.fspath(path_or_text)
        try:
            with open(source, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise ControlError(f"{source}: cannot read controller configuration: {exc.strerror}") from None
    try:
        data = safe_load_checked(text, source)
    except YamlLimitError as exc:
        raise ControlError(str(exc)) from None
    except yaml.YAMLError as exc:
        raise ControlError(f"{source}: invalid YAML: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ControlError(f"{source}: a parameter file must be a mapping of node names")
    return dict(data), source


def parse_config(data: Mapping[str, Any], source: str = "<string>", manager_name: str = CM_NODE,
                 namespace: str = "", into: ControllerManagerConfig | None = None) -> ControllerManagerConfig:
    """Interpret one parsed parameter file; merges into ``into`` when given.

    Controller parameters are (re)collected from every file seen so far, so a
    controller declared in a later file still gets its parameters from an earlier one.
    """
    cfg = into or ControllerManagerConfig()
    cfg.sources.append(source)
    cfg._files.append((dict(data), source))
    cm = node_params(data, manager_name, source, namespace)
    if "update_rate" in cm:
        rate = cm["update_rate"]
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or rate <= 0:
            raise ControlError(f"{source}: {manager_name}: update_rate must be a positive number, got {rate!r}")
        cfg.update_rate = float(rate)
    for name, entry in cm.items():
        if not isinstance(entry, dict) or "type" not in entry:
            if isinstance(entry, dict) and any(k in entry for k in _CM_ENTRY_KEYS):
                raise ControlError(f"{source}: controller '{name}': 'type' missing under "
                                   f"{manager_name}.ros__parameters.{name}")
            cfg.manager_params[name] = entry
            continue
        ctype = entry["type"]
        if not isinstance(ctype, str) or ctype.count("/") != 1 or ctype.startswith("/") or ctype.endswith("/"):
            raise ControlError(f"{source}: controller '{name}': type must look like '<package>/<Class>', got "
                               f"{ctype!r}")
        spec = cfg.controllers.get(name) or ControllerConfig(name)
        spec.type = ctype
        spec.source = source
        pf = entry.get("params_file")
        if pf:
            spec.params_file = [pf] if isinstance(pf, str) else list(pf)
        cfg.controllers[name] = spec
    for name, spec in cfg.controllers.items():
        params: dict[str, Any] = {}
        for fdata, fsource in cfg._files:
            _deep_update(params, node_params(fdata, name, fsource, namespace))
        spec.params = params
    return cfg


def load_config(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], manager_name: str = CM_NODE,
                namespace: str = "") -> ControllerManagerConfig:
    """Read one or more ros2_control YAML files (later files override earlier ones)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    cfg = ControllerManagerConfig()
    for p in paths:
        data, source = _load_yaml(p, is_text=False)
        parse_config(data, source, manager_name, namespace, cfg)
    _load_params_files(cfg, namespace)
    return cfg


def parse_config_text(text: str, manager_name: str = CM_NODE, namespace: str = "") -> ControllerManagerConfig:
    data, source = _load_yaml(text, is_text=True)
    cfg = parse_config(data, source, manager_name, namespace)
    _load_params_files(cfg, namespace)
    return cfg


def _load_params_files(cfg: ControllerManagerConfig, namespace: str) -> None:
    for spec in cfg.controllers.values():
        for pf in spec.params_file:
            path = pf if os.path.isabs(pf) or spec.source.startswith("<") else os.path.join(
                os.path.dirname(spec.source), pf)
            data, source = _load_yaml(path, is_text=False)
            params = node_params(data, spec.name, source, namespace)
            if not params:
                raise ControlError(f"{source}: params_file of controller '{spec.name}' has no section for it")
            _deep_update(spec.params, params)


def validate_config(cfg: ControllerManagerConfig, registry: Any | None = None) -> list[str]:
    """Problems that would make loading fail: unknown type names (naming file and controller)."""
    from robot_core.control.registry import default_registry

    reg = registry or default_registry
    problems = []
    for name, spec in cfg.controllers.items():
        if spec.type is not None and not reg.has(spec.type):
            problems.append(f"{spec.source}: controller '{name}': unknown type '{spec.type}' (known: {reg.types()})")
    return problems
