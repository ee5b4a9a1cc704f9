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

import contextlib
import math
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sensor_msgs.msg import JointState

from robot_core.model.robot_model import RobotModel
from robot_core.rbc.context import RbcContext
from robot_core.rbc.errors import RbcParamError, RbcVarError
from robot_core.rbc.instance import ABORTED, ACTIVE, RbcInstance, UpdateResult
from robot_core.rbc.instance_process import (
    HANG_TIMEOUT,
    MAX_OUTPUT_AGE,
    STOP_GRACE,
    RemoteInstance,
    rate_contributions,
    spawn,
)
from robot_core.rbc.mixer import Mixer
from robot_core.rbc.registry import resolve_type, type_names
from robot_core.rbc.registry import target as type_target
from robot_core.rbc.shared_table import SharedOutputs, SharedState, cmd_keys
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
        self.view = VarView(self.table, shared=self._shared_in_process)
        self.warnings: list[str] = list(self.table.warnings)
        self._instances: dict[str, RbcInstance] = {}
        self.derived: dict[str, dict[str, Any]] = {}
        self.blocked_topics: dict[str, str] = {}
        self.events: list[str] = []
        self._last_now: float | None = None
        # Instances as processes (robot_core.rbc.instance_process): created by create_remote.
        self._remotes: dict[str, RemoteInstance] = {}
        self._stopping: list[tuple[RemoteInstance, float]] = []  # destroyed, given STOP_GRACE s to exit
        self.shared_state: SharedState | None = None
        # In-process extenders' shared outputs, copied into blocks of their own each cycle once processes exist,
        # so processes read them as they read each other's.
        self._local_blocks: dict[str, SharedOutputs] = {}
        self.lost: list[tuple[str, str]] = []  # (instance, reason) of processes that died; the node drains it
        self.hang_timeout = HANG_TIMEOUT
        self.max_output_age = MAX_OUTPUT_AGE

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
            block = self._local_blocks.get(name)
            if block is not None:
                block.write(0.0, {}, result.derived)
            w = inst.weight if inst.KIND == "reacher" else 0.0
            if w == 0.0:
                continue
            for key, v in result.commands.items():
                contributions[key] = contributions.get(key, 0.0) + w * v
        if self._remotes:
            self._remote_contributions(now, dt, contributions)
        self.mixer.apply(contributions, now)
        if self.shared_state is not None:
            self.shared_state.publish(now)
            for remote in self._remotes.values():
                remote.tick()
        if self._stopping:
            self._reap(now)

    def _remote_contributions(self, now: float, dt: float, contributions: dict[tuple[str, str], float]) -> None:
        """Weighted rates of every live instance process; a dead one is dropped here, within the cycle."""
        for name, remote in list(self._remotes.items()):
            reason = remote.exit_reason()
            if reason is not None:
                del self._remotes[name]
                self.derived.pop(name, None)
                remote.close()
                text = (f"{remote.label()} ended ({reason}): dropped, weight 0; the vars it drove hold (position "
                        f"references) or go to zero")
                self.lost.append((name, text))
                self.events.append(text)
                if remote.cls.SHARED_OUTPUTS:
                    self._announce_inputs()
                continue
            was_quiet = remote.quiet
            out = remote.contribution(now, self.hang_timeout, self.max_output_age)
            if remote.quiet and not was_quiet:
                self.events.append(f"{remote.label()} has not stepped for {self.hang_timeout:g} s: its outputs are "
                                   f"ignored until it steps again")
            if out is None or remote.KIND != "reacher":
                continue
            weight, rates = out
            if not math.isfinite(weight) or weight < 0.0:
                continue
            rate_contributions(self.context, remote.outputs.cmd_keys, weight, rates, dt, contributions)

    def _reap(self, now: float) -> None:
        keep = []
        for remote, deadline in self._stopping:
            if remote.proc.poll() is not None:
                remote.close()
            elif now > deadline:
                remote.kill()
                remote.close()
            else:
                keep.append((remote, deadline))
        self._stopping = keep

    def _shared_in_process(self, instance: str, key: str) -> Any:
        """VarView.shared for in-process instances: the declared outputs of the extender's latest update, or of
        an extender process's latest step (its outputs block)."""
        remote = self._remotes.get(instance)
        if remote is not None and key in remote.cls.SHARED_OUTPUTS:
            return remote.outputs.shared(key)
        inst = self._instances.get(instance)
        if inst is None or key not in inst.SHARED_OUTPUTS:
            have = ", ".join(f"{n}.{k}" for n, i in [*self._instances.items(), *((n, r.cls) for n, r in
                                                                                    self._remotes.items())]
                             for k in i.SHARED_OUTPUTS) or "none"
            raise KeyError(f"no shared output '{instance}.{key}' (have: {have})")
        value = self.derived.get(instance, {}).get(key)
        n = inst.SHARED_OUTPUTS[key]
        return np.full(n, math.nan) if value is None else np.asarray(value, dtype=float).ravel().copy()

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
        self._check_free(name)
        cls = resolve_type(type_name)
        inst = cls(name, self.context)
        if params:
            inst.configure(params)
        self._instances[name] = inst
        if cls.SHARED_OUTPUTS and self.shared_state is not None:
            self._announce_inputs()
        return inst

    def _check_free(self, name: str) -> None:
        if not name or not name.strip():
            raise ValueError("instance name is empty")
        taken = self._instances.get(name) or self._remotes.get(name)
        if taken is not None:
            raise ValueError(f"an instance named '{clip(name)}' already exists ({taken.TYPE_NAME})")

    def create_remote(self, type_name: str, name: str, argv: list[str], spec: Mapping[str, Any] | None = None,
                      env: Mapping[str, str] | None = None) -> RemoteInstance:
        """Start an instance as its own process (``argv`` + its JSON spec); it counts from the first cycle after
        it reported ready. KeyError for an unknown type, ValueError for a taken/empty name, OSError if it
        cannot be started."""
        self._check_free(name)
        cls = resolve_type(type_name)
        if self.shared_state is None:
            self.shared_state = SharedState(self.table)
            self.shared_state.publish(self._last_now if self._last_now is not None else 0.0)
        full = dict(spec or {}, type=type_name, type_target=type_target(type_name), name=name,
                    state_block=self.shared_state.name, position_vars=dict(self.context.position_vars),
                    stale_timeout=self.table.stale_timeout,
                    joint_state_match=self.table.joint_state_match, shared_inputs=self._inputs())
        remote = spawn(argv, full, name, cls, cmd_keys(self.table), env)
        remote.type_key = type_name
        self._remotes[name] = remote
        if cls.SHARED_OUTPUTS:
            self._announce_inputs()
        return remote

    def _inputs(self) -> list[dict[str, Any]]:
        """Every extender's shared-output block (processes' own blocks; in-process extenders' copies, made here
        when missing): what an instance process may read."""
        for n, inst in self._instances.items():
            if inst.SHARED_OUTPUTS and n not in self._local_blocks:
                self._local_blocks[n] = SharedOutputs(cmd_keys(self.table), inst.SHARED_OUTPUTS)
        out = [{"name": n, "type": r.type_key, "type_target": type_target(r.type_key), "block": r.outputs.name}
               for n, r in self._remotes.items() if r.cls.SHARED_OUTPUTS]
        out += [{"name": n, "type": self._instances[n].TYPE_NAME,
                 "type_target": type_target(self._instances[n].TYPE_NAME), "block": b.name}
                for n, b in self._local_blocks.items()]
        return out

    def _announce_inputs(self) -> None:
        """Send every instance process the current list of readable blocks (an extender came or went)."""
        inputs = self._inputs()
        for remote in self._remotes.values():
            if remote.goals is not None:
                remote.goals.announce_inputs(inputs)

    def stopping(self) -> list[str]:
        """Names of destroyed instance processes that have not exited yet."""
        return [r.name for r, _ in self._stopping]

    def finish_stopping(self, name: str, timeout: float = STOP_GRACE) -> None:
        """Wait up to ``timeout`` s for the destroyed process ``name`` to exit, then kill it: a new instance of
        that name must not meet the old one's node on the graph.
        Safe beside a running cycle: it only waits for the process; the cycle frees its block."""
        for remote, _ in [e for e in list(self._stopping) if e[0].name == name]:
            with contextlib.suppress(subprocess.TimeoutExpired):
                remote.proc.wait(timeout=timeout)
            remote.kill()

    def remote(self, name: str) -> RemoteInstance | None:
        return self._remotes.get(name)

    def remotes(self) -> dict[str, RemoteInstance]:
        return dict(self._remotes)

    def destroy(self, name: str) -> None:
        remote = self._remotes.pop(name, None)
        if remote is not None:
            remote.stop()
            self._stopping.append((remote, (self._last_now or 0.0) + STOP_GRACE))
            self.derived.pop(name, None)
            if remote.cls.SHARED_OUTPUTS:
                self._announce_inputs()
            return
        inst = self._instances.pop(name, None)
        if inst is None:
            raise KeyError(f"no instance named '{clip(name)}'")
        inst.cancel()
        self.derived.pop(name, None)
        block = self._local_blocks.pop(name, None)
        if block is not None:
            self._announce_inputs()
            block.close()

    def close(self) -> None:
        """End every instance process (end of file, then SIGKILL after STOP_GRACE s) and free the blocks."""
        for name in list(self._remotes):
            self.destroy(name)
        deadline = time.monotonic() + STOP_GRACE
        for remote, _ in self._stopping:
            with contextlib.suppress(subprocess.TimeoutExpired):
                remote.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            remote.kill()
            remote.close()
        self._stopping = []
        for block in self._local_blocks.values():
            block.close()
        self._local_blocks = {}
        if self.shared_state is not None:
            self.shared_state.close()
            self.shared_state = None

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
            both: dict[str, Any] = {**self._instances, **self._remotes}
            return L2Result(True, "", list(both), [i.TYPE_NAME for i in both.values()])
        return L2Result(False, f"unknown cmd '{clip(cmd)}' (use create_re, destroy_re or list_re)")


def _text(exc: Exception) -> str:
    """Exception text without KeyError's quoting."""
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    return str(exc)
