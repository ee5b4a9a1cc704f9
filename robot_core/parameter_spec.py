"""Node parameters declared once: a :class:`ParamSpec` per parameter drives declaring, validating and documenting.

ROS-free on purpose: the docs generator (``scripts/gen_docs.py``) and the unit tests read the specs without rclpy,
and the nodes turn them into rcl_interfaces descriptors in :mod:`robot_core.ros.parameters`. It sits at the
package top level, next to the other ROS-free building blocks, because it is not specific to one node: the
controllers' tables (``PARAMS`` of each class in :mod:`robot_core.control.controllers`) use it too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

ParamType = Literal["bool", "int", "double", "string", "string[]", "int|int[]", "double[]", "double|double[]"]

# The words the old hand-written checks used, kept so error texts keep their content.
_TYPE_WORDS = {"bool": "bool", "int": "int", "double": "float", "string": "str", "string[]": "list of strings",
               "int|int[]": "int or list of ints", "double[]": "list of floats",
               "double|double[]": "float or list of floats"}


class ParamError(ValueError):
    """A parameter value a node cannot use; the message names the node and the parameter."""


@dataclass(frozen=True)
class ParamSpec:
    """One node parameter: what ``ros2 param describe`` shows, what is checked, what the docs table lists.

    ``default`` None with ``optional`` means "not declared unless given" (e.g. ``cpu_affinity``). ``family``
    specs (``initial_positions.<joint>``) document a group of names declared only from a parameter file.
    ``minimum``/``maximum`` are inclusive unless ``exclusive_min``; ``step`` applies to ints. ``finite`` False
    lets a double be +-inf (a clamp that is off by default); NaN is always refused.
    """

    name: str
    type: ParamType
    default: Any
    description: str
    read_only: bool = True
    minimum: float | None = None
    maximum: float | None = None
    exclusive_min: bool = False
    step: int = 0
    choices: tuple[str, ...] = ()
    unit: str = ""
    optional: bool = False
    family: bool = False
    fold_case: bool = False  # choices match after strip() and lower() (the node normalises the same way)
    finite: bool = True

    def matches(self, name: str) -> bool:
        """Whether a declared ``name`` is this parameter (for a family: each ``<...>`` stands for any text)."""
        if not self.family:
            return name == self.name
        pattern = "".join(".+" if part.startswith("<") else re.escape(part)
                          for part in re.split(r"(<[^>]*>)", self.name) if part)
        return re.fullmatch(pattern, name) is not None

    def range_text(self) -> str:
        """The range / choices as the docs and the descriptor's additional_constraints say them."""
        if self.choices:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        parts = []
        if self.minimum is not None:
            parts.append(f"{'>' if self.exclusive_min else '>='} {_num(self.minimum)}")
        if self.maximum is not None:
            parts.append(f"<= {_num(self.maximum)}")
        if self.step:
            parts.append(f"step {self.step}")
        return ", ".join(parts)


def _num(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def validate(spec: ParamSpec, value: Any, node: str) -> Any:
    """``value`` converted to the spec's type (an int for a double, an integral float for an int), or ParamError.

    Checks type, finiteness, range and choices; the message names the node and the parameter.
    """
    given = value  # the message quotes what the user gave, not its conversion

    def fail(what: str) -> ParamError:
        return ParamError(f"{node}: parameter '{spec.name}' = {given!r} must be {what}")

    t = spec.type
    if t == "bool":
        if not isinstance(value, bool):
            raise fail("a bool")
        return value
    if t == "string":
        if not isinstance(value, str):
            raise fail("a str")
        if spec.choices and (value.strip().lower() if spec.fold_case else value) not in spec.choices:
            raise fail(spec.range_text())
        return value
    if t == "string[]":
        if value is None:
            return []
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise fail("a list of strings")
        return [str(v) for v in value]
    if t == "int|int[]":
        if value is None or value == "" or value == []:
            return value  # unset (an empty list in YAML arrives without a type)
        items = [value] if isinstance(value, int) else value
        if isinstance(items, (str, bytes)) or not isinstance(items, Iterable) or \
                any(isinstance(v, bool) or not isinstance(v, int) for v in items):
            raise fail("an int or a list of ints")
        for v in items:
            _check_range(spec, v, fail)
        return value
    if t in ("double[]", "double|double[]"):
        if t == "double|double[]" and _is_number(value):
            return _double(spec, value, fail)
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable) or \
                not all(_is_number(v) for v in value):
            raise fail(f"a {_TYPE_WORDS[t]}")
        return [_double(spec, v, fail) for v in value]
    if not _is_number(value):
        raise fail(f"a {_TYPE_WORDS[t]}")
    if t == "double":
        return _double(spec, value, fail)
    if isinstance(value, float):
        if not value.is_integer():
            raise fail("an int")
        value = int(value)
    _check_range(spec, value, fail)
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _double(spec: ParamSpec, value: float, fail: Any) -> float:
    value = float(value)
    if math.isnan(value) or (spec.finite and not math.isfinite(value)):
        raise fail("a finite float" if spec.finite else "a float, not NaN")
    _check_range(spec, value, fail)
    return value


def _check_range(spec: ParamSpec, value: float, fail: Any) -> None:
    if spec.minimum is not None and (value <= spec.minimum if spec.exclusive_min else value < spec.minimum):
        raise fail(spec.range_text())
    if spec.maximum is not None and value > spec.maximum:
        raise fail(spec.range_text())
    if spec.step and spec.minimum is not None and (value - spec.minimum) % spec.step:
        raise fail(spec.range_text())


def spec_for(specs: Sequence[ParamSpec], name: str) -> ParamSpec | None:
    """The spec of a declared name: the plain spec of that name, else the family whose prefix it starts with."""
    for s in sorted(specs, key=lambda s: s.family):
        if s.matches(name):
            return s
    return None


def check_table(specs: Sequence[ParamSpec]) -> None:
    """A table's own consistency: unique names, defaults that pass their own validation."""
    seen: set[str] = set()
    for s in specs:
        if s.name in seen:
            raise ParamError(f"parameter '{s.name}' is specified twice")
        seen.add(s.name)
        if not s.description.strip():
            raise ParamError(f"parameter '{s.name}' has no description")
        if s.default is not None and not s.family:
            validate(s, s.default, "spec")


def _default_text(s: ParamSpec) -> str:
    if s.default is None:
        return "unset"
    if isinstance(s.default, bool):
        return "true" if s.default else "false"
    if isinstance(s.default, str):
        return f'"{s.default}"'
    if isinstance(s.default, list):
        return "[" + ", ".join(str(v) for v in s.default) + "]"
    return _num(s.default)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(specs: Sequence[ParamSpec]) -> str:
    """The parameter table of a node's doc page (generated; see scripts/gen_docs.py)."""
    rows = ["| name | type | default | range | unit | run time | description |",
            "|---|---|---|---|---|---|---|"]
    for s in specs:
        settable = "read-only" if s.read_only else "settable"
        rows.append("| " + " | ".join(_cell(c) for c in (
            f"`{s.name}`", s.type, _default_text(s), s.range_text(), s.unit, settable, s.description)) + " |")
    return "\n".join(rows) + "\n"

