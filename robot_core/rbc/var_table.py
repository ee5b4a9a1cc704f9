"""The RBC middle layer: joint -> var -> (value, stamp, stale), fed from and fed to driver topics.

Built once from the ``<rbc>`` tags; everything textual (message types, field paths, indices) is resolved and
compiled here, so a bad tag fails at start-up and the per-message work is a list walk over closures.

Rules the users of the table can rely on:

* **State vars** are grouped by topic: one subscription per topic, however many vars read from it. A value is
  stored only when it is finite; a message too short for a var's index leaves that var untouched.
* **JointState matching.** For a state var on a ``sensor_msgs/JointState`` topic (field ``position``,
  ``velocity`` or ``effort``): when the message carries names, the element is found by the var's *joint name*
  (the topic-based hardware protocol allows subsets and any order), and a joint missing from the message is
  simply not updated by it; when ``name`` is empty, the tag's ``index`` is used. ``joint_state_match="index"``
  turns name matching off for drivers whose names differ from the URDF.
* **Cmd vars** are grouped by topic; :meth:`VarTable.build_messages` assembles one message per topic from
  every var writing into it. An array field is sized to its fixed size, or to the largest index + 1; indices no
  var writes are 0.0 (listed in :attr:`VarTable.warnings`). JointState commands are keyed by name: the message
  lists each joint writing to the topic once (ordered by the tags' index, then URDF order), fields no var of a
  joint writes are NaN (which the topic-based protocol skips) and fields no var writes at all stay empty.
  A top-level ``header`` gets the stamp. A cmd topic is published only once one of its vars has been written
  (``armed``), so start-up never sends ``init`` values to a robot nobody meant to move.
* **Staleness.** A state var whose last update is older than ``stale_timeout`` (or that never got one) is
  stale; it keeps its last value (or ``init``) and the flag shows in :meth:`get_entry`, :meth:`snapshot` and
  the aggregated views. :meth:`refresh` recomputes the flags for a given time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from robot_core.model.robot_model import RbcNode, RbcVar, RobotModel
from robot_core.rbc.errors import RbcConfigError, RbcVarError
from robot_core.rbc.message_fields import (
    FieldPathError,
    ResolvedField,
    compile_array_getter,
    compile_getter,
    compile_parent_ensurer,
    converter,
    message_type_name,
    resolve_field,
    resolve_message_class,
)
from robot_core.text import clip

JOINT_STATE_TYPE = "sensor_msgs/msg/JointState"
JOINT_STATE_ARRAYS = ("position", "velocity", "effort")


@dataclass(eq=False)
class VarEntry:
    """One var of one joint: its tag, resolved field and current value."""

    joint: str
    name: str
    kind: str  # "state" or "cmd"
    topic: str
    driver: str  # the <rbc node=...> that owns it
    msg_class: type
    field: ResolvedField
    init: float
    value: float
    stamp: float | None = None  # time of the last update (state) or write (cmd); None = never
    stale: bool = True  # state vars only; cmd vars are never stale
    written: bool = False  # cmd vars: set at least once since start
    where: str = ""  # "joint 'j', var 'v'" for messages

    @property
    def key(self) -> tuple[str, str]:
        return (self.joint, self.name)


@dataclass
class AggregatedView:
    """One var name over every joint that has it, in URDF joint order."""

    var: str
    joints: list[str]
    values: list[float]
    stale: list[bool]
    stamps: list[float | None]


@dataclass
class StateTopic:
    """One subscription: the message class and the compiled readers of every var fed from it."""

    topic: str
    msg_class: type
    entries: list[VarEntry] = field(default_factory=list)
    last_rx: float | None = None
    rx_count: int = 0
    # (entry, getter) read by position in the message
    by_index: list[tuple[VarEntry, Callable[[Any], float]]] = field(default_factory=list)
    # JointState: (entry, array getter, fallback index getter)
    by_name: list[tuple[VarEntry, Callable[[Any], Any], Callable[[Any], float]]] = field(default_factory=list)
    # JointState fast path: the arrays read, and per-entry (entry, array slot, element index) for the last seen
    # name list (drivers send the same names in the same order every time, so this is rebuilt rarely).
    js_arrays: list[str] = field(default_factory=list)
    js_slots: list[int] = field(default_factory=list)
    js_names: list[str] | None = None
    js_plan: list[tuple[VarEntry, int, int]] = field(default_factory=list)


@dataclass
class _CmdSlot:
    """One scalar or array field of a cmd message and the vars writing it."""

    path: str
    ensure_parent: Callable[[Any], Any]
    leaf_attr: str
    convert: Callable[[float], Any]
    is_array: bool
    size: int
    writers: dict[int, VarEntry]  # index (0 for scalars) -> var


@dataclass
class CmdTopic:
    """One publication: message class and how to assemble it from its vars."""

    topic: str
    msg_class: type
    entries: list[VarEntry] = field(default_factory=list)
    slots: list[_CmdSlot] = field(default_factory=list)
    joint_state_names: list[str] | None = None  # set for JointState topics (name-keyed assembly)
    has_header: bool = False

    @property
    def armed(self) -> bool:
        return any(e.written for e in self.entries)


class VarTable:
    """Joint vars from ``<rbc>`` tags. Construct with a RobotModel (or its rbc nodes + joint order)."""

    def __init__(
        self,
        model: RobotModel | None = None,
        *,
        rbc_nodes: Sequence[RbcNode] | None = None,
        stale_timeout: float = 0.5,
        joint_state_match: str = "auto",
    ):
        if joint_state_match not in ("auto", "index"):
            raise ValueError(f"joint_state_match must be 'auto' or 'index', got '{joint_state_match}'")
        if stale_timeout <= 0:
            raise ValueError(f"stale_timeout must be > 0, got {stale_timeout}")
        nodes = list(rbc_nodes) if rbc_nodes is not None else (model.rbc_nodes() if model is not None else [])
        self.stale_timeout = float(stale_timeout)
        self.joint_state_match = joint_state_match
        self.warnings: list[str] = []
        self._entries: dict[str, dict[str, VarEntry]] = {}
        self.state_topics: dict[str, StateTopic] = {}
        self.cmd_topics: dict[str, CmdTopic] = {}
        self._by_var: dict[str, list[VarEntry]] = {}
        joint_order = list(model.joints) if model is not None else []
        self._build(nodes, joint_order, model)

    # --- construction ---------------------------------------------------------------------------
    def _build(self, nodes: Sequence[RbcNode], joint_order: list[str], model: RobotModel | None) -> None:
        problems: list[str] = []
        entries: list[VarEntry] = []
        for node in nodes:
            if model is not None and node.joint not in model.joints:
                problems.append(f"{node.source}: <rbc node='{node.node}'> names unknown joint '{node.joint}'")
                continue
            for var in node.vars:
                entry = self._make_entry(node, var, problems)
                if entry is None:
                    continue
                existing = self._entries.setdefault(entry.joint, {})
                if entry.name in existing:
                    other = existing[entry.name]
                    problems.append(
                        f"{var.source}: joint '{entry.joint}', var '{entry.name}': defined twice "
                        f"(drivers '{other.driver}' and '{entry.driver}')"
                    )
                    continue
                existing[entry.name] = entry
                entries.append(entry)
        self._group_topics(entries, problems)
        if problems:
            raise RbcConfigError(problems)
        order = {name: i for i, name in enumerate(joint_order)}
        for e in sorted(entries, key=lambda e: order.get(e.joint, len(order))):
            self._by_var.setdefault(e.name, []).append(e)
        self._joint_order = [j for j in joint_order if j in self._entries] + [
            j for j in self._entries if j not in order]
        if model is not None and self._entries:
            # The RBC documentation: "in general, all joints that are not fixed should have the rbc tag".
            untagged = [j.name for j in model.joints.values()
                        if j.is_movable and j.mimic is None and j.name not in self._entries]
            if untagged:
                self.warnings.append(f"{model.source_file or model.name}: movable joints without <rbc> tags (the "
                                     f"RBC neither reads nor moves them): {', '.join(untagged)}")

    @staticmethod
    def _make_entry(node: RbcNode, var: RbcVar, problems: list[str]) -> VarEntry | None:
        where = f"joint '{node.joint}', var '{var.name}'"
        src = f"{var.source}: " if str(var.source) else ""
        if not var.name:
            problems.append(f"{src}joint '{node.joint}': <var> without a name")
            return None
        if var.type not in ("state", "cmd"):
            problems.append(f"{src}{where}: unknown var type '{var.type}' (use 'state' or 'cmd')")
            return None
        if not var.topic or not var.topic.strip():
            problems.append(f"{src}{where}: missing topic")
            return None
        if var.msg is None:
            problems.append(f"{src}{where}: missing <msg>")
            return None
        try:
            cls = resolve_message_class(var.msg.type)
        except FieldPathError as exc:
            problems.append(f"{src}{where}, field '{var.msg.field}': {exc}")
            return None
        try:
            resolved = resolve_field(cls, var.msg.field, var.msg.field_array,
                                     var.msg.index if var.msg.field_array else None, var.msg.index_type, where)
        except FieldPathError as exc:
            problems.append(f"{src}{exc}")
            return None
        try:
            init = float(var.init)
        except (TypeError, ValueError):
            problems.append(f"{src}{where}: init '{var.init}' is not a number")
            return None
        return VarEntry(
            joint=node.joint, name=var.name, kind=var.type, topic=var.topic.strip(), driver=node.node,
            msg_class=cls, field=resolved, init=init, value=init, stale=var.type == "state",
            where=where,
        )

    def _group_topics(self, entries: list[VarEntry], problems: list[str]) -> None:
        topic_class: dict[str, tuple[type, VarEntry]] = {}
        for e in entries:
            seen = topic_class.get(e.topic)
            if seen is None:
                topic_class[e.topic] = (e.msg_class, e)
                continue
            cls, first = seen
            if cls is not e.msg_class:
                problems.append(
                    f"{e.where}, field '{e.field.path}': topic '{e.topic}' has type {message_type_name(e.msg_class)}"
                    f" but {first.where} uses it as {message_type_name(cls)}"
                )
            elif first.kind != e.kind:
                problems.append(
                    f"{e.where}, field '{e.field.path}': topic '{e.topic}' is '{e.kind}' here but '{first.kind}' "
                    f"for {first.where}; a topic is either read or written"
                )
        for e in entries:
            if e.kind == "state":
                st = self.state_topics.get(e.topic)
                if st is None:
                    st = self.state_topics[e.topic] = StateTopic(e.topic, e.msg_class)
                st.entries.append(e)
            else:
                ct = self.cmd_topics.get(e.topic)
                if ct is None:
                    ct = self.cmd_topics[e.topic] = CmdTopic(e.topic, e.msg_class)
                ct.entries.append(e)
        for st in self.state_topics.values():
            self._plan_state_topic(st)
        for ct in self.cmd_topics.values():
            self._plan_cmd_topic(ct, problems)

    def _plan_state_topic(self, st: StateTopic) -> None:
        is_js = message_type_name(st.msg_class) == JOINT_STATE_TYPE
        seen: dict[tuple[str, int | None], VarEntry] = {}
        for e in st.entries:
            getter = compile_getter(e.field)
            if is_js and self.joint_state_match == "auto" and e.field.path in JOINT_STATE_ARRAYS:
                st.by_name.append((e, compile_array_getter(e.field), getter))
                if e.field.path not in st.js_arrays:
                    st.js_arrays.append(e.field.path)
                st.js_slots.append(st.js_arrays.index(e.field.path))
            else:
                st.by_index.append((e, getter))
            slot = (e.field.path, e.field.index)
            if slot in seen and seen[slot].joint != e.joint:
                self.warnings.append(
                    f"{e.where} and {seen[slot].where} both read '{e.field.path}' index {e.field.index} "
                    f"of '{st.topic}'" + (" (only matters when the message has no names)" if is_js else "")
                )
            seen.setdefault(slot, e)

    def _plan_cmd_topic(self, ct: CmdTopic, problems: list[str]) -> None:
        is_js = message_type_name(ct.msg_class) == JOINT_STATE_TYPE
        ct.has_header = "header" in ct.msg_class.get_fields_and_field_types() and \
            ct.msg_class.get_fields_and_field_types()["header"] == "std_msgs/Header"
        if is_js:
            first_index: dict[str, int] = {}
            for n, e in enumerate(ct.entries):
                idx = e.field.index if e.field.index is not None else n
                first_index[e.joint] = min(first_index.get(e.joint, idx), idx)
            ct.joint_state_names = sorted(first_index, key=lambda j: first_index[j])
        slots: dict[str, _CmdSlot] = {}
        for e in ct.entries:
            f = e.field
            slot = slots.get(f.array_key)
            if slot is None:
                slot = slots[f.array_key] = _CmdSlot(
                    path=f.path, ensure_parent=compile_parent_ensurer(f.steps), leaf_attr=f.leaf_attr,
                    convert=converter(f), is_array=f.leaf.is_array, size=0, writers={},
                )
            if is_js:
                assert ct.joint_state_names is not None
                pos = ct.joint_state_names.index(e.joint)
            else:
                pos = f.index if f.index is not None else 0
            if pos in slot.writers:
                other = slot.writers[pos]
                problems.append(
                    f"{e.where}, field '{f.path}'" + (f" index {f.index}" if f.index is not None else "")
                    + f": {other.where} already writes it on topic '{ct.topic}'"
                )
                continue
            slot.writers[pos] = e
        for slot in slots.values():
            if is_js:
                slot.size = len(ct.joint_state_names or [])
            elif slot.is_array:
                leaf = next(iter(slot.writers.values())).field.leaf
                slot.size = leaf.size if leaf.array == "fixed" and leaf.size is not None else max(slot.writers) + 1
                gaps = [i for i in range(max(slot.writers) + 1) if i not in slot.writers]
                if gaps:
                    self.warnings.append(
                        f"topic '{ct.topic}' field '{slot.path}': indices {gaps} are written by no var and will be 0.0"
                    )
            else:
                slot.size = 1
        ct.slots = list(slots.values())

    # --- state input ----------------------------------------------------------------------------
    def subscriptions(self) -> list[tuple[str, type]]:
        """(topic, message class) for every state topic: one subscription each."""
        return [(t.topic, t.msg_class) for t in self.state_topics.values()]

    def publications(self) -> list[tuple[str, type]]:
        """(topic, message class) for every cmd topic."""
        return [(t.topic, t.msg_class) for t in self.cmd_topics.values()]

    def on_message(self, topic: str, msg: Any, now: float) -> int:
        """Store every var read from ``msg``; returns how many vars were updated. Unknown topics raise KeyError."""
        st = self.state_topics[topic]
        st.last_rx = now
        st.rx_count += 1
        updated = 0
        isfinite = math.isfinite
        for e, getter in st.by_index:
            try:
                v = getter(msg)
            except (IndexError, AttributeError, TypeError):
                continue
            if isfinite(v):
                e.value = v
                e.stamp = now
                e.stale = False
                updated += 1
        if st.by_name:
            names = msg.name
            if names:
                if names != st.js_names:
                    lookup = {n: i for i, n in enumerate(names)}
                    st.js_names = list(names)
                    st.js_plan = [(e, slot, lookup[e.joint]) for (e, _, _), slot in zip(st.by_name, st.js_slots,
                                                                                         strict=True)
                                  if e.joint in lookup]
                arrays = [getattr(msg, a) for a in st.js_arrays]
                lengths = [len(a) for a in arrays]
                for e, slot, i in st.js_plan:
                    if i >= lengths[slot]:
                        continue
                    v = float(arrays[slot][i])
                    if isfinite(v):
                        e.value = v
                        e.stamp = now
                        e.stale = False
                        updated += 1
            else:
                for e, _, getter in st.by_name:
                    try:
                        v = getter(msg)
                    except IndexError:
                        continue
                    if isfinite(v):
                        e.value = v
                        e.stamp = now
                        e.stale = False
                        updated += 1
        return updated

    def refresh(self, now: float) -> list[VarEntry]:
        """Recompute stale flags at ``now``; returns the state vars that just became stale."""
        newly: list[VarEntry] = []
        limit = now - self.stale_timeout
        for st in self.state_topics.values():
            for e in st.entries:
                stale = e.stamp is None or e.stamp < limit
                if stale and not e.stale:
                    newly.append(e)
                e.stale = stale
        return newly

    def stale_topics(self, now: float) -> list[str]:
        """State topics without a message for longer than ``stale_timeout`` (or never)."""
        limit = now - self.stale_timeout
        return [t.topic for t in self.state_topics.values() if t.last_rx is None or t.last_rx < limit]

    # --- cmd output -----------------------------------------------------------------------------
    def build_messages(self, now: float, only_armed: bool = True,
                       exclude: Iterable[str] = ()) -> dict[str, Any]:
        """One assembled message per cmd topic (only topics with a written var unless ``only_armed`` is False)."""
        out: dict[str, Any] = {}
        skip = set(exclude)
        for ct in self.cmd_topics.values():
            if (only_armed and not ct.armed) or ct.topic in skip:
                continue
            out[ct.topic] = self.build_message(ct.topic, now)
        return out

    def build_message(self, topic: str, now: float) -> Any:
        ct = self.cmd_topics[topic]
        msg = ct.msg_class()
        if ct.has_header:
            sec = math.floor(now)
            msg.header.stamp.sec = sec
            msg.header.stamp.nanosec = min(round((now - sec) * 1e9), 999_999_999)
        if ct.joint_state_names is not None:
            msg.name = list(ct.joint_state_names)
            nan = math.nan
            for slot in ct.slots:
                values = [nan] * slot.size
                for pos, e in slot.writers.items():
                    values[pos] = e.value
                setattr(msg, slot.leaf_attr, values)
            return msg
        for slot in ct.slots:
            parent = slot.ensure_parent(msg)
            conv = slot.convert
            if slot.is_array:
                values = [conv(0.0)] * slot.size
                for pos, e in slot.writers.items():
                    values[pos] = conv(e.value)
                setattr(parent, slot.leaf_attr, values)
            else:
                setattr(parent, slot.leaf_attr, conv(slot.writers[0].value))
        return msg

    # --- Python API -----------------------------------------------------------------------------
    def joints(self) -> list[str]:
        """Joints that have at least one var, URDF order."""
        return list(self._joint_order)

    def var_names(self, kind: str | None = None) -> list[str]:
        """Var names (first-seen order); ``kind`` 'state' or 'cmd' filters."""
        return [n for n, es in self._by_var.items() if kind is None or any(e.kind == kind for e in es)]

    def has(self, joint: str, var: str) -> bool:
        return var in self._entries.get(joint, {})

    def entry(self, joint: str, var: str) -> VarEntry:
        try:
            return self._entries[joint][var]
        except KeyError:
            if joint not in self._entries:
                raise RbcVarError(f"joint '{clip(joint)}' has no rbc vars "
                                  f"(joints: {', '.join(self._joint_order)})") from None
            raise RbcVarError(
                f"joint '{clip(joint)}' has no var '{clip(var)}' (vars: {', '.join(self._entries[joint])})") from None

    def entries(self, var: str | None = None) -> list[VarEntry]:
        if var is None:
            return [e for j in self._joint_order for e in self._entries[j].values()]
        return list(self._by_var.get(var, []))

    def get(self, joint: str, var: str) -> float:
        return self.entry(joint, var).value

    def is_stale(self, joint: str, var: str) -> bool:
        return self.entry(joint, var).stale

    def set(self, joint: str, var: str, value: float, now: float | None = None) -> None:
        """Write a cmd var (state vars belong to the drivers and raise RbcVarError)."""
        e = self.entry(joint, var)
        if e.kind != "cmd":
            raise RbcVarError(f"joint '{clip(joint)}', var '{clip(var)}' is a state var; only cmd vars can be set")
        v = float(value)
        if not math.isfinite(v):
            raise RbcVarError(f"joint '{clip(joint)}', var '{clip(var)}': value {value} is not finite")
        e.value = v
        e.stamp = now
        e.written = True

    def snapshot(self) -> dict[str, dict[str, tuple[float, float | None, bool]]]:
        """joint -> var -> (value, stamp, stale): a copy, safe to keep."""
        return {j: {n: (e.value, e.stamp, e.stale) for n, e in self._entries[j].items()} for j in self._joint_order}

    def aggregate(self, var: str) -> AggregatedView:
        """All joints having ``var``, URDF order (the node publishes this as e.g. ``~/q``)."""
        es = self._by_var.get(var)
        if es is None:
            raise RbcVarError(f"no joint has var '{clip(var)}' (vars: {', '.join(self._by_var)})")
        return AggregatedView(var, [e.joint for e in es], [e.value for e in es], [e.stale for e in es],
                              [e.stamp for e in es])

    def set_many(self, var: str, joints: Iterable[str], values: Iterable[float], now: float | None = None) -> None:
        """Aggregated command input: ``joints[i]`` gets ``values[i]``; all-or-nothing on a bad name/value."""
        js, vs = list(joints), [float(v) for v in values]
        if len(js) != len(vs):
            raise RbcVarError(f"var '{clip(var)}': {len(js)} joint names but {len(vs)} values")
        targets = [self.entry(j, var) for j in js]
        for e, v in zip(targets, vs, strict=True):
            if e.kind != "cmd":
                raise RbcVarError(f"joint '{clip(e.joint)}', var '{clip(var)}' is a state var; only cmd vars can "
                                  f"be set")
            if not math.isfinite(v):
                raise RbcVarError(f"joint '{clip(e.joint)}', var '{clip(var)}': value {v} is not finite")
        for e, v in zip(targets, vs, strict=True):
            e.value = v
            e.stamp = now
            e.written = True


class VarView:
    """Read-only access to a VarTable for reachers and extenders (they command only through their outputs)."""

    __slots__ = ("_shared", "_table")

    def __init__(self, table: VarTable, shared: Callable[[str, str], Any] | None = None):
        self._table = table
        self._shared = shared

    def shared(self, instance: str, key: str) -> Any:
        """A shared output of an extender (e.g. ``shared("TC0", "wrench")``): a numpy array, NaN until the
        extender produced it; KeyError naming what can be read."""
        if self._shared is None:
            raise KeyError("no shared outputs are readable here")
        return self._shared(instance, key)

    def get(self, joint: str, var: str) -> float:
        return self._table.entry(joint, var).value

    def is_stale(self, joint: str, var: str) -> bool:
        return self._table.entry(joint, var).stale

    def has(self, joint: str, var: str) -> bool:
        return self._table.has(joint, var)

    def values(self, joints: Sequence[str], var: str) -> list[float]:
        table = self._table
        return [table.entry(j, var).value for j in joints]

    def stale_joints(self, joints: Sequence[str], var: str) -> list[str]:
        table = self._table
        return [j for j in joints if table.entry(j, var).stale]
