"""Message types and dotted field paths of ``<rbc>`` vars, checked once and compiled to fast accessors.

A var names a message type as text (``pkg.msg.Type``, ``pkg/msg/Type`` or ``pkg/Type``) and a field path
into it (``position``, ``pose.position.x``, ``reference.positions``, ``points[0].positions``) plus, for array
fields, an element index. All of that is resolved against the real rosidl Python classes at start-up, so a
typo fails immediately with a message naming joint, var and field instead of silently never updating. At run
time only the compiled closures run: no string parsing, no ``getattr`` by name per message.

The classes are plain rosidl-generated Python message classes; nothing here needs rclpy.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

FLOAT_TYPES = frozenset({"float", "double", "float32", "float64", "long double"})
INT_TYPES = frozenset(
    {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "char", "octet", "byte",
     "short", "unsigned short", "long", "unsigned long", "long long", "unsigned long long"}
)
BOOL_TYPES = frozenset({"boolean", "bool"})
STRING_TYPES = frozenset({"string", "wstring"})

# ``index_type`` words accepted in tags, mapped to the element kinds they may describe.
INDEX_TYPE_KINDS: dict[str, frozenset[str]] = {
    "float": frozenset({"float"}),
    "double": frozenset({"float"}),
    "float32": frozenset({"float"}),
    "float64": frozenset({"float"}),
    "int": frozenset({"int"}),
    "integer": frozenset({"int"}),
    "bool": frozenset({"bool"}),
    "boolean": frozenset({"bool"}),
    # "number" means: any numeric element, converted to/from float.
    "number": frozenset({"float", "int", "bool"}),
}


class FieldPathError(ValueError):
    """A message type or field path that does not resolve; the text names joint, var and field."""


@dataclass(frozen=True)
class FieldType:
    """Parsed rosidl field type string (``sequence<double, 5>``, ``double[36]``, ``geometry_msgs/Pose``)."""

    base: str  # element type: a primitive name or "pkg/Type"
    array: str  # "" (scalar), "sequence" (unbounded), "bounded" (sequence with max size), "fixed"
    size: int | None = None  # fixed size or upper bound

    @property
    def is_array(self) -> bool:
        return self.array != ""

    @property
    def is_message(self) -> bool:
        return "/" in self.base

    @property
    def kind(self) -> str:
        """float / int / bool / string / message: what one element is."""
        if self.is_message:
            return "message"
        b = self.base
        if b in FLOAT_TYPES:
            return "float"
        if b in INT_TYPES:
            return "int"
        if b in BOOL_TYPES:
            return "bool"
        if b.startswith(("string", "wstring")):
            return "string"
        return "unknown"


_SEQ_RE = re.compile(r"^sequence<\s*([^,>]+?)\s*(?:,\s*(\d+)\s*)?>$")
_FIXED_RE = re.compile(r"^(.+?)\[(\d+)\]$")


def parse_field_type(text: str) -> FieldType:
    """Parse the type strings of ``get_fields_and_field_types()``."""
    text = text.strip()
    m = _SEQ_RE.match(text)
    if m:
        if m.group(2) is not None:
            return FieldType(m.group(1), "bounded", int(m.group(2)))
        return FieldType(m.group(1), "sequence")
    m = _FIXED_RE.match(text)
    if m:
        return FieldType(m.group(1), "fixed", int(m.group(2)))
    return FieldType(text, "")


_class_cache: dict[str, type] = {}


def resolve_message_class(type_name: str) -> type:
    """``pkg.msg.Type`` / ``pkg/msg/Type`` / ``pkg/Type`` -> the rosidl Python class.

    Raises FieldPathError (with the reason) when the package is missing or the name is not a message.
    """
    key = type_name.strip()
    cached = _class_cache.get(key)
    if cached is not None:
        return cached
    parts = [p for p in re.split(r"[./]", key) if p]
    if len(parts) == 2:
        pkg, sub, name = parts[0], "msg", parts[1]
    elif len(parts) == 3:
        pkg, sub, name = parts
    else:
        raise FieldPathError(f"message type '{type_name}' is not of the form pkg.msg.Type, pkg/msg/Type or pkg/Type")
    if sub != "msg":
        raise FieldPathError(f"message type '{type_name}': middle part must be 'msg', got '{sub}'")
    try:
        module = importlib.import_module(f"{pkg}.{sub}")
    except ImportError as exc:
        raise FieldPathError(f"message type '{type_name}': package '{pkg}' cannot be imported ({exc})") from None
    cls = getattr(module, name, None)
    if cls is None or not hasattr(cls, "get_fields_and_field_types"):
        raise FieldPathError(f"message type '{type_name}': '{pkg}.{sub}' has no message '{name}'")
    _class_cache[key] = cls
    return cls


def message_type_name(cls: type) -> str:
    """Canonical ``pkg/msg/Type`` text of a message class (for errors and comparisons)."""
    pkg = cls.__module__.split(".")[0]
    return f"{pkg}/msg/{cls.__name__}"


_SEGMENT_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?$")


@dataclass(frozen=True)
class PathStep:
    """One hop of a field path: an attribute, optionally followed by an index into a sequence of messages."""

    attr: str
    index: int | None
    ftype: FieldType
    element_class: type | None  # message class of the element (for message-typed fields)


@dataclass(frozen=True)
class ResolvedField:
    """A validated path ending at a numeric leaf (scalar or array element)."""

    msg_class: type
    path: str
    steps: tuple[PathStep, ...]
    leaf: FieldType
    index: int | None  # element index when the leaf is an array, else None

    @property
    def leaf_kind(self) -> str:
        return self.leaf.kind

    @property
    def parent_path(self) -> str:
        """Dotted path of the object that holds the leaf attribute ('' = the message itself)."""
        return ".".join(_step_text(s) for s in self.steps[:-1])

    @property
    def leaf_attr(self) -> str:
        return self.steps[-1].attr

    @property
    def array_key(self) -> str:
        """Identity of the array (or scalar) slot this field writes, shared by vars writing other indices."""
        return self.path


def _step_text(step: PathStep) -> str:
    return step.attr if step.index is None else f"{step.attr}[{step.index}]"


def resolve_field(
    msg_class: type, path: str, field_array: bool, index: int | None, index_type: str = "float",
    where: str = "",
) -> ResolvedField:
    """Validate ``path`` (+ ``index``) against ``msg_class``; ``where`` prefixes every error (joint/var).

    Rules: every hop but the last must be a message (``name[k]`` picks element k of a sequence of
    messages); the last hop must be a numeric scalar or a numeric array. ``field_array`` must agree with
    the leaf (an array leaf needs an ``index``; fixed-size and bounded arrays check it against their size).
    ``index_type`` must describe the leaf element (float/double, int, bool, or number for any).
    """
    prefix = f"{where}: " if where else ""
    tname = message_type_name(msg_class)
    if not path or not path.strip():
        raise FieldPathError(f"{prefix}empty field path in message {tname}")
    segments = path.strip().split(".")
    steps: list[PathStep] = []
    cls: type | None = msg_class
    for n, seg in enumerate(segments):
        m = _SEGMENT_RE.match(seg)
        if not m:
            raise FieldPathError(f"{prefix}field '{path}': bad segment '{seg}' (expected name or name[k])")
        if cls is None:
            done = ".".join(segments[:n])
            raise FieldPathError(f"{prefix}field '{path}': '{done}' is not a message, cannot access '{seg}'")
        attr, idx_text = m.group(1), m.group(2)
        fields = cls.get_fields_and_field_types()
        if attr not in fields:
            raise FieldPathError(
                f"{prefix}field '{path}': message {message_type_name(cls)} has no field '{attr}' "
                f"(fields: {', '.join(fields)})"
            )
        ftype = parse_field_type(fields[attr])
        element_class = resolve_message_class(ftype.base) if ftype.is_message else None
        last = n == len(segments) - 1
        step_index: int | None = None
        if idx_text is not None:
            step_index = int(idx_text)
            if not ftype.is_array:
                raise FieldPathError(f"{prefix}field '{path}': '{attr}' is not an array, cannot index [{step_index}]")
            if not last and not ftype.is_message:
                raise FieldPathError(f"{prefix}field '{path}': '{attr}' holds {ftype.base}, not messages")
            _check_bound(ftype, step_index, prefix, path, attr)
            if last:
                # ``data[3]`` written in the path itself: same as field_array + index.
                if index is not None and field_array and index != step_index:
                    raise FieldPathError(
                        f"{prefix}field '{path}': index {index} contradicts [{step_index}] in the path"
                    )
                index, field_array = step_index, True
                step_index = None
        elif not last and ftype.is_array:
            if ftype.is_message:
                raise FieldPathError(f"{prefix}field '{path}': '{attr}' is an array of messages, write '{attr}[k]'")
            raise FieldPathError(f"{prefix}field '{path}': '{attr}' is an array of {ftype.base}, not a message")
        steps.append(PathStep(attr, step_index, ftype, element_class))
        cls = element_class if (not last and (not ftype.is_array or step_index is not None)) else None
    leaf = steps[-1].ftype
    if leaf.is_message:
        raise FieldPathError(
            f"{prefix}field '{path}': ends at a message ({leaf.base}), not a number; "
            f"fields there: {', '.join(resolve_message_class(leaf.base).get_fields_and_field_types())}"
        )
    kind = leaf.kind
    if kind not in ("float", "int", "bool"):
        raise FieldPathError(f"{prefix}field '{path}': element type '{leaf.base}' is not numeric")
    allowed = INDEX_TYPE_KINDS.get((index_type or "float").strip().lower())
    if allowed is None:
        raise FieldPathError(
            f"{prefix}field '{path}': unknown index_type '{index_type}' (use one of {', '.join(INDEX_TYPE_KINDS)})"
        )
    if kind not in allowed:
        raise FieldPathError(
            f"{prefix}field '{path}': index_type '{index_type}' does not match element type '{leaf.base}'"
        )
    if leaf.is_array:
        if not field_array:
            raise FieldPathError(f"{prefix}field '{path}' is an array ({leaf.base}); set field_array=\"true\" "
                                 "and an index")
        if index is None or index < 0:
            raise FieldPathError(f"{prefix}field '{path}': array needs an index >= 0, got {index}")
        _check_bound(leaf, index, prefix, path, steps[-1].attr)
        return ResolvedField(msg_class, path, tuple(steps), leaf, index)
    if field_array:
        raise FieldPathError(f"{prefix}field '{path}' is a scalar {leaf.base} but field_array=\"true\"")
    return ResolvedField(msg_class, path, tuple(steps), leaf, None)


def _check_bound(ftype: FieldType, index: int, prefix: str, path: str, attr: str) -> None:
    if ftype.size is not None and index >= ftype.size:
        what = "fixed size" if ftype.array == "fixed" else "at most"
        raise FieldPathError(
            f"{prefix}field '{path}': index {index} out of range for '{attr}' ({what} {ftype.size} elements)"
        )


# --- compiled accessors -------------------------------------------------------------------------


def _compile_parent_getter(steps: tuple[PathStep, ...]) -> Callable[[Any], Any]:
    """Getter of the object holding the leaf attribute (reads only; raises IndexError if a list is short)."""
    hops = steps[:-1]
    if not hops:
        return lambda m: m
    if all(s.index is None for s in hops):
        return attrgetter(".".join(s.attr for s in hops))
    plan = [(attrgetter(s.attr), s.index) for s in hops]

    def get(m: Any) -> Any:
        obj = m
        for g, i in plan:
            obj = g(obj)
            if i is not None:
                obj = obj[i]
        return obj

    return get


def compile_getter(field: ResolvedField) -> Callable[[Any], float]:
    """msg -> float value of the field; raises IndexError/AttributeError when the message is too short."""
    steps = field.steps
    idx = field.index
    if all(s.index is None for s in steps[:-1]):
        g = attrgetter(".".join(s.attr for s in steps))
        if idx is None:
            return lambda m: float(g(m))
        return lambda m: float(g(m)[idx])
    parent = _compile_parent_getter(steps)
    leaf = attrgetter(steps[-1].attr)
    if idx is None:
        return lambda m: float(leaf(parent(m)))
    return lambda m: float(leaf(parent(m))[idx])


def compile_array_getter(field: ResolvedField) -> Callable[[Any], Any]:
    """msg -> the whole leaf array (for name-matched JointState reads)."""
    return attrgetter(".".join(_step_text(s) for s in field.steps)) if all(
        s.index is None for s in field.steps[:-1]) else _array_via_parent(field)


def _array_via_parent(field: ResolvedField) -> Callable[[Any], Any]:
    parent = _compile_parent_getter(field.steps)
    leaf = attrgetter(field.steps[-1].attr)
    return lambda m: leaf(parent(m))


def converter(field: ResolvedField) -> Callable[[float], Any]:
    """float -> the Python value the message field accepts (int fields round, bool fields test != 0)."""
    kind = field.leaf_kind
    if kind == "int":
        return lambda v: round(v)
    if kind == "bool":
        return lambda v: bool(v)
    return float


def compile_parent_ensurer(steps: tuple[PathStep, ...]) -> Callable[[Any], Any]:
    """Like the parent getter, but grows sequences of messages so the indexed element exists (for writing)."""
    hops = steps[:-1]
    if all(s.index is None for s in hops):
        return _compile_parent_getter(steps)
    plan = [(s.attr, s.index, s.element_class) for s in hops]

    def ensure(m: Any) -> Any:
        obj = m
        for attr, i, elem_cls in plan:
            child = getattr(obj, attr)
            if i is not None:
                if len(child) <= i:
                    grown = list(child) + [elem_cls() for _ in range(i + 1 - len(child))]
                    setattr(obj, attr, grown)
                    child = getattr(obj, attr)
                child = child[i]
            obj = child
        return obj

    return ensure
