"""The Robot Body Coupler core: var table + reachers/extenders + mixing, with no ROS in it.

A node adapter needs only this object:

* at start-up: ``Coupler(model, ...)`` (raises RbcConfigError listing every bad tag, each naming joint, var and
  field); ``subscriptions()`` / ``publications()`` give (topic, message class) to create;
* per received state message: ``on_message(topic, msg, now)``;
* per cycle (timer): ``step(now)`` -> {topic: message} to publish; ``aggregate(var)`` for the ``~/<var>``
  outputs; ``derived`` for extender/reacher data (wrenches, contact frames, apply-wrench requests);
  ``drain_events()`` for things to log;
* on aggregated command input / SetVars / GetVars: ``set_many`` / ``get_vars``;
* on ``~/l2_ctrl``: ``l2_ctrl(cmd, data, name)``; then per instance: ``instance(name).set_param``,
  ``start_goal``, ``cancel``, ``status``.

Times are float seconds from whatever clock the caller uses (sim time in the simulator set-up).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sensor_msgs.msg import JointState

from robot_core.model.robot_model import RobotModel
from robot_core.rbc.context import RbcContext
from robot_core.rbc.errors import RbcParamError, RbcVarError
from robot_core.rbc.instance import ABORTED, ACTIVE, RbcInstance, UpdateResult
from robot_core.rbc.mixer import Mixer
from robot_core.rbc.registry import resolve_type, type_names
from robot_core.rbc.var_table import AggregatedView, VarTable, VarView
from robot_core.text import clip

DEFAULT_POSITION_VARS: dict[str, str] = {"q_ref": "q"}


@dataclass
class L2Result:
    """Answer of ``l2_ctrl``; mirrors robot_core_interfaces/srv/L2Control's response."""

    success: bool
    message: str
    names: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)


@dataclass
class GetVarsResult:
    """Answer of ``get_vars``; mirrors robot_core_interfaces/srv/GetVars's response."""

    success: bool
    message: str
    values: list[float] = field(default_factory=list)
    stale: list[bool] = field(default_factory=list)


class Coupler:
    """Var table from ``<rbc>`` tags, run-time reachers/extenders and the mixer, stepped by the caller."""

    def __init__(
        self,
        model: RobotModel,
        *,
        stale_timeout: float = 0.5,
        joint_state_match: str = "auto",
        position_vars: Mapping[str, str] | None = None,
        max_position_lead: float | None = 0.1,
        kinematics_factory: Callable[[RobotModel, str, str], Any] | None = None,
    ):
        self.model = model
        self.table = VarTable(model, stale_timeout=stale_timeout, joint_state_match=joint_state_match)
        self.context = RbcContext(model, self.table, DEFAULT_POSITION_VARS if position_vars is None
                                  else position_vars, kinematics_factory)
        self.mixer = Mixer(self.table, self.context, max_position_lead)
        self.view = VarView(self.table)
        self.warnings: list[str] = list(self.table.warnings)
        self._instances: dict[str, RbcInstance] = {}
        self.derived: dict[str, dict[str, Any]] = {}
        self.blocked_topics: dict[str, str] = {}
        self.events: list[str] = []
        self._last_now: float | None = None

    # --- topics ---------------------------------------------------------------------------------
    def subscriptions(self) -> list[tuple[str, type]]:
        return self.table.subscriptions()

    def publications(self) -> list[tuple[str, type]]:
        return self.table.publications()

    def on_message(self, topic: str, msg: Any, now: float) -> int:
        return self.table.on_message(topic, msg, now)

    # --- cycle ----------------------------------------------------------------------------------
    def update(self, now: float) -> None:
        """Refresh staleness, run every instance once, mix reacher outputs into the cmd vars."""
        dt = 0.0 if self._last_now is None else now - self._last_now
        if dt < 0.0 or not math.isfinite(dt):
            dt = 0.0  # clock went back (simulation reset): do not integrate over it
        self._last_now = now
        for e in self.table.refresh(now):
            self.events.append(f"{e.where} from topic '{e.topic}' is stale (no update for "
                               f"{self.table.stale_timeout:g} s)")
        contributions: dict[tuple[str, str], float] = {}
        for name, inst in list(self._instances.items()):
            try:
                result = inst.update(now, dt, self.view)
                self._check_outputs(inst, result)
            except Exception as exc:  # one faulty instance must not stop the coupler
                self._fail(inst, f"{inst.label()}: update failed: {type(exc).__name__}: {exc}")
                continue
            self.derived[name] = result.derived
            w = inst.weight if inst.KIND == "reacher" else 0.0
            if w == 0.0:
                continue
            for key, v in result.commands.items():
                contributions[key] = contributions.get(key, 0.0) + w * v
        self.mixer.apply(contributions, now)

    def build_commands(self, now: float) -> dict[str, Any]:
        """One message per armed cmd topic (topics with a written var and no unsafe never-written var)."""
        self.blocked_topics = self.mixer.arm_topics()
        return self.table.build_messages(now, exclude=self.blocked_topics)

    def step(self, now: float) -> dict[str, Any]:
        self.update(now)
        return self.build_commands(now)

    def drain_events(self) -> list[str]:
        """Messages worth logging since the last call (stale vars, failed instances); clears the list."""
        out, self.events = self.events, []
        return out

    def _check_outputs(self, inst: RbcInstance, result: UpdateResult) -> None:
        if result.commands and inst.KIND != "reacher":
            raise RbcVarError(f"{inst.label()} is an extender and may not write cmd vars")
        for joint, var in result.commands:
            e = self.table.entry(joint, var)
            if e.kind != "cmd":
                raise RbcVarError(f"joint '{clip(joint)}', var '{clip(var)}' is a state var; reachers write cmd vars")
        for v in result.commands.values():
            if not math.isfinite(v):
                raise RbcVarError(f"non-finite output {v}")

    def _fail(self, inst: RbcInstance, message: str) -> None:
        st = inst.status()
        if st.state == ACTIVE:
            st.state = ABORTED
            st.message = message
        try:
            inst.cancel()
        except Exception as exc:
            message += f"; cancel failed too: {exc}"
        self.events.append(message)

    # --- Python API on vars ---------------------------------------------------------------------
    def get(self, joint: str, var: str) -> float:
        return self.table.get(joint, var)

    def set(self, joint: str, var: str, value: float, now: float | None = None) -> None:
        self.table.set(joint, var, value, now)

    def set_many(self, var: str, joints: Iterable[str], values: Iterable[float], now: float | None = None) -> None:
        self.table.set_many(var, joints, values, now)

    def snapshot(self) -> dict[str, dict[str, tuple[float, float | None, bool]]]:
        return self.table.snapshot()

    def aggregate(self, var: str) -> AggregatedView:
        return self.table.aggregate(var)

    def var_names(self, kind: str | None = None) -> list[str]:
        return self.table.var_names(kind)

    def aggregate_joint_state(self, var: str, now: float, stale_as_nan: bool = True) -> Any:
        """``~/<var>`` output: sensor_msgs/JointState over every joint having ``var``, values in ``position``.

        Stale values are NaN by default so no consumer mistakes a dead driver's last value for a live one
        (GetVars still returns the last value with its stale flag).
        """
        view = self.table.aggregate(var)
        values = [math.nan if (stale and stale_as_nan) else v for v, stale in zip(view.values, view.stale,
                                                                                  strict=True)]
        msg = JointState(name=view.joints, position=values)
        sec = math.floor(now)
        msg.header.stamp.sec = sec
        msg.header.stamp.nanosec = min(round((now - sec) * 1e9), 999_999_999)
        return msg

    def get_vars(self, joints: list[str], vars_: list[str]) -> GetVarsResult:
        """GetVars service: pairs joints[i]/vars[i]; one var name for all joints is accepted too."""
        if len(vars_) == 1 and len(joints) > 1:
            vars_ = vars_ * len(joints)
        if len(joints) != len(vars_):
            return GetVarsResult(False, f"{len(joints)} joints but {len(vars_)} vars")
        try:
            es = [self.table.entry(j, v) for j, v in zip(joints, vars_, strict=True)]
        except RbcVarError as exc:
            return GetVarsResult(False, str(exc))
        return GetVarsResult(True, "", [e.value for e in es], [e.stale for e in es])

    def set_vars(self, joints: list[str], vars_: list[str], values: list[float],
                 now: float | None = None) -> tuple[bool, str]:
        """SetVars service: all-or-nothing; returns (success, message)."""
        if len(vars_) == 1 and len(joints) > 1:
            vars_ = vars_ * len(joints)
        if not (len(joints) == len(vars_) == len(values)):
            return False, f"{len(joints)} joints, {len(vars_)} vars, {len(values)} values: lengths differ"
        try:
            for j, v, x in zip(joints, vars_, values, strict=True):
                e = self.table.entry(j, v)
                if e.kind != "cmd":
                    raise RbcVarError(f"joint '{clip(j)}', var '{clip(v)}' is a state var; only cmd vars can be set")
                if not math.isfinite(float(x)):
                    raise RbcVarError(f"joint '{clip(j)}', var '{clip(v)}': value {x} is not finite")
            for j, v, x in zip(joints, vars_, values, strict=True):
                self.table.set(j, v, x, now)
        except RbcVarError as exc:
            return False, str(exc)
        return True, ""

    # --- reachers and extenders -----------------------------------------------------------------
    def create(self, type_name: str, name: str, params: Mapping[str, Any] | None = None) -> RbcInstance:
        """New named instance; KeyError for an unknown type, ValueError for a taken/empty name or bad params."""
        if not name or not name.strip():
            raise ValueError("instance name is empty")
        if name in self._instances:
            raise ValueError(f"an instance named '{clip(name)}' already exists ({self._instances[name].TYPE_NAME})")
        cls = resolve_type(type_name)
        inst = cls(name, self.context)
        if params:
            inst.configure(params)
        self._instances[name] = inst
        return inst

    def destroy(self, name: str) -> None:
        inst = self._instances.pop(name, None)
        if inst is None:
            raise KeyError(f"no instance named '{clip(name)}'")
        inst.cancel()
        self.derived.pop(name, None)

    def instance(self, name: str) -> RbcInstance:
        try:
            return self._instances[name]
        except KeyError:
            raise KeyError(f"no instance named '{clip(name)}' (have: {', '.join(self._instances) or 'none'})") from None

    def instances(self) -> dict[str, RbcInstance]:
        return dict(self._instances)

    def l2_ctrl(self, cmd: str, data: str = "", name: str = "") -> L2Result:
        """The ``~/l2_ctrl`` service: ``create_re`` (data = type), ``destroy_re``, ``list_re`` (data = 'types'
        lists the creatable types instead of the instances)."""
        cmd = cmd.strip()
        if cmd == "create_re":
            try:
                inst = self.create(data, name)
            except (KeyError, ValueError, RbcParamError) as exc:
                return L2Result(False, _text(exc))
            return L2Result(True, f"created {inst.TYPE_NAME} '{name}'", [name], [inst.TYPE_NAME])
        if cmd == "destroy_re":
            try:
                self.destroy(name)
            except KeyError as exc:
                return L2Result(False, _text(exc))
            return L2Result(True, f"destroyed '{name}'")
        if cmd == "list_re":
            if data.strip() == "types":
                return L2Result(True, "", type_names(), [resolve_type(t).KIND for t in type_names()])
            return L2Result(True, "", list(self._instances), [i.TYPE_NAME for i in self._instances.values()])
        return L2Result(False, f"unknown cmd '{clip(cmd)}' (use create_re, destroy_re or list_re)")


def _text(exc: Exception) -> str:
    """Exception text without KeyError's quoting."""
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    return str(exc)
