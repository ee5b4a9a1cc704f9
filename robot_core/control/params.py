"""Typed, error-naming access to a controller's ``ros__parameters``.

Parameters arrive either nested (straight from a YAML file) or flattened with
dots (``gains.joint1.p``, as a ROS parameter server holds them). Both forms
are normalised to one nested dict so controllers read them one way, and every
bad value raises a ControlError that names the controller and the parameter.

The controller class's ``PARAMS`` table (:class:`~robot_core.parameter_spec.ParamSpec`) is the authority on
ranges and choices: every typed read is checked against the spec of its name, so the documented range is the
enforced one. Every read is recorded (:attr:`Params.reads`) so a test can prove that nothing is read that the
table does not declare.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from robot_core.control.errors import ControlError
from robot_core.parameter_spec import ParamSpec, spec_for

_MISSING = object()


def nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    """Turn dotted keys into nested dicts; nested input passes through (merged)."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        parts = str(key).split(".")
        node = out
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = {}
                node[part] = child
            node = child
        leaf = parts[-1]
        if isinstance(value, Mapping):
            existing = node.get(leaf)
            merged = nest(value)
            if isinstance(existing, dict):
                existing.update(merged)
            else:
                node[leaf] = merged
        else:
            node[leaf] = value
    return out


class Params:
    """Read-only view of one controller's parameters.

    Every typed read that falls back to its default is remembered in :attr:`defaults` (path -> (value, kind)),
    so the controller's node can declare those parameters as upstream controllers do: ``ros2 param list``
    and ``get`` then show every setting in force, not only those the YAML named.
    """

    def __init__(self, owner: str, data: Mapping[str, Any] | None = None, specs: Sequence[ParamSpec] = ()):
        self.owner = owner
        self.data: dict[str, Any] = nest(data or {})
        self.specs = tuple(specs)
        self._defaulted: set[str] = set()
        self.defaults: dict[str, tuple[Any, str]] = {}
        #: every typed read: path -> ROS kind ("double", "string_array", ...), given or defaulted
        self.reads: dict[str, str] = {}

    def spec(self, path: str) -> ParamSpec | None:
        """The spec of ``path`` in the controller's table (None without a table or for an undeclared name)."""
        return spec_for(self.specs, path) if self.specs else None

    def _used(self, path: str, value: Any, kind: str) -> Any:
        self.reads.setdefault(path, kind)
        spec = self.spec(path)
        if spec is not None:
            self._check_spec(spec, path, value)
        if path in self._defaulted and path not in self.defaults:
            self.defaults[path] = (list(value) if isinstance(value, list) else value, kind)
        return value

    def _check_spec(self, spec: ParamSpec, path: str, value: Any) -> None:
        """Choices and range of the spec, per element for lists (worded like the typed reads' own checks)."""
        for v in value if isinstance(value, list) else [value]:
            if spec.choices and isinstance(v, str) and v not in spec.choices:
                raise self._error(path, f"must be one of {list(spec.choices)}, got '{v}'")
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            if spec.finite and not math.isfinite(v):
                raise self._error(path, f"must be finite, got {v}")
            lo, hi = spec.minimum, spec.maximum
            if lo is not None and (v <= lo if spec.exclusive_min else v < lo):
                raise self._error(path, f"must be {'>' if spec.exclusive_min else '>='} {lo}, got {v}")
            if hi is not None and v > hi:
                raise self._error(path, f"must be <= {hi}, got {v}")

    def _error(self, path: str, what: str) -> ControlError:
        return ControlError(f"controller '{self.owner}': parameter '{path}' {what}")

    def has(self, path: str) -> bool:
        """Whether ``path`` is set (to anything but null)."""
        return self.raw(path, None) is not None

    def raw(self, path: str, default: Any = _MISSING) -> Any:
        node: Any = self.data
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                if default is _MISSING:
                    raise self._error(path, "is required but not set")
                if default is not None:
                    self._defaulted.add(path)
                return default
            node = node[part]
        return node

    def section(self, path: str) -> dict[str, Any]:
        value = self.raw(path, {})
        if not isinstance(value, dict):
            raise self._error(path, f"must be a mapping, got {value!r}")
        return value

    def str(self, path: str, default: Any = _MISSING, choices: tuple[str, ...] | None = None) -> str:
        value = self.raw(path, default)
        if not isinstance(value, str):
            raise self._error(path, f"must be a string, got {value!r}")
        if choices is not None and value not in choices:
            raise self._error(path, f"must be one of {list(choices)}, got '{value}'")
        return self._used(path, value, "string")

    def float(self, path: str, default: Any = _MISSING, min_value: float | None = None) -> float:
        value = self.raw(path, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            if isinstance(value, str):
                try:
                    value = float(value)
                except ValueError:
                    raise self._error(path, f"must be a number, got '{value}'") from None
            else:
                raise self._error(path, f"must be a number, got {value!r}")
        value = float(value)
        if math.isnan(value):
            raise self._error(path, "must not be NaN")
        if min_value is not None and value < min_value:
            raise self._error(path, f"must be >= {min_value}, got {value}")
        return self._used(path, value, "double")

    def int(self, path: str, default: Any = _MISSING, min_value: int | None = None) -> int:
        value = self.raw(path, default)
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise self._error(path, f"must be an integer, got {value!r}")
        if min_value is not None and value < min_value:
            raise self._error(path, f"must be >= {min_value}, got {value}")
        return self._used(path, int(value), "integer")

    def bool(self, path: str, default: Any = _MISSING) -> bool:
        value = self.raw(path, default)
        if isinstance(value, str) and value.lower() in ("true", "false"):
            value = value.lower() == "true"
        if not isinstance(value, bool):
            raise self._error(path, f"must be true or false, got {value!r}")
        return self._used(path, value, "bool")

    def str_list(self, path: str, default: Any = _MISSING, allow_empty: bool = True) -> list[str]:
        value = self.raw(path, default)
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise self._error(path, f"must be a list of strings, got {value!r}")
        if not allow_empty and not value:
            raise self._error(path, "must not be empty")
        if len(set(value)) != len(value):
            dup = sorted({v for v in value if list(value).count(v) > 1})
            raise self._error(path, f"has duplicate entries {dup}")
        return self._used(path, list(value), "string_array")

    def float_list(self, path: str, default: Any = _MISSING, length: int | None = None) -> list[float]:
        value = self.raw(path, default)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and length is not None:
            value = [float(value)] * length
        if not isinstance(value, (list, tuple)) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
        ):
            raise self._error(path, f"must be a list of numbers, got {value!r}")
        if length is not None and len(value) != length:
            raise self._error(path, f"must have {length} entries, got {len(value)}")
        return self._used(path, [float(v) for v in value], "double_array")
