"""What reachers and extenders share: typed parameters, goal status and the update contract.

A node adapter turns ``PARAMS`` into ROS parameters, ``set_param`` into the parameter callback,
``start_goal``/``cancel``/``status`` into an action server and ``update`` into its timer, so an instance is
fully usable (and testable) without ROS.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from robot_core.rbc.errors import RbcGoalError, RbcParamError

if TYPE_CHECKING:
    from robot_core.rbc.context import RbcContext
    from robot_core.rbc.var_table import VarView

PARAM_KINDS = ("float", "int", "bool", "str", "str_list", "float_list")

IDLE, ACTIVE, SUCCEEDED, ABORTED, CANCELED = "idle", "active", "succeeded", "aborted", "canceled"
TERMINAL_STATES = (SUCCEEDED, ABORTED, CANCELED)


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: ROS-mappable kind, default, and a short description."""

    name: str
    kind: str
    default: Any
    doc: str = ""
    minimum: float | None = None
    choices: tuple[str, ...] | None = None


@dataclass
class GoalStatus:
    """Where the current goal stands; the node turns it into action feedback and results."""

    state: str = IDLE
    goal_id: int = 0
    message: str = ""
    feedback: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return self.state in TERMINAL_STATES


@dataclass
class UpdateResult:
    """One cycle of an instance: raw (unweighted) cmd var outputs and derived data for publishing."""

    commands: dict[tuple[str, str], float] = field(default_factory=dict)
    derived: dict[str, Any] = field(default_factory=dict)


def _coerce(spec: ParamSpec, value: Any) -> Any:
    k = spec.kind
    if k == "float":
        if isinstance(value, bool):
            raise ValueError("expected a number, got a bool")
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"{value} is not finite")
        return v
    if k == "int":
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError(f"expected an integer, got {value!r}")
        return int(value)
    if k == "bool":
        if isinstance(value, str):
            if value.lower() in ("true", "1", "yes"):
                return True
            if value.lower() in ("false", "0", "no"):
                return False
            raise ValueError(f"expected a bool, got {value!r}")
        return bool(value)
    if k == "str":
        if not isinstance(value, str):
            raise ValueError(f"expected a string, got {value!r}")
        return value
    if k == "str_list":
        if isinstance(value, str):
            value = [s for s in value.replace(",", " ").split() if s]
        out = [str(s) for s in value]
        return out
    if k == "float_list":
        if isinstance(value, str):
            value = [s for s in value.replace(",", " ").replace("[", " ").replace("]", " ").split() if s]
        out = [float(v) for v in value]
        if not all(math.isfinite(v) for v in out):
            raise ValueError(f"{value} has non-finite entries")
        return out
    raise ValueError(f"unknown kind {k}")


class RbcInstance:
    """Base of reachers and extenders: named, parameterised, goal-driven, stepped by the coupler."""

    TYPE_NAME: ClassVar[str] = ""
    KIND: ClassVar[str] = ""  # "reacher" or "extender"
    PARAMS: ClassVar[tuple[ParamSpec, ...]] = ()
    # float_list parameters that may also be set through a topic ``~/<name>`` (std_msgs/Float64MultiArray).
    TOPIC_PARAMS: ClassVar[tuple[str, ...]] = ()
    # Numeric results (derived key -> length) other instances read as shared vars (VarView.shared), in
    # shared memory when instances run as processes.
    SHARED_OUTPUTS: ClassVar[dict[str, int]] = {}

    def __init__(self, name: str, context: RbcContext):
        self.name = name
        self.context = context
        self._specs = {p.name: p for p in self.PARAMS}
        self.params: dict[str, Any] = {p.name: (list(p.default) if isinstance(p.default, list) else p.default)
                                       for p in self.PARAMS}
        self._status = GoalStatus()
        self._next_goal_id = 1

    # --- parameters -----------------------------------------------------------------------------
    def label(self) -> str:
        return f"{self.TYPE_NAME} '{self.name}'"

    def param_specs(self) -> tuple[ParamSpec, ...]:
        return self.PARAMS

    def get_param(self, name: str) -> Any:
        if name not in self._specs:
            raise RbcParamError(f"{self.label()}: unknown parameter '{name}' (known: {', '.join(self._specs)})")
        return self.params[name]

    def set_param(self, name: str, value: Any) -> None:
        """Validate and apply one parameter now (gains act on the running goal at the next update)."""
        self.configure({name: value})

    def configure(self, params: Mapping[str, Any]) -> None:
        """Validate all given params together, then apply them all or none."""
        staged = dict(self.params)
        for name, value in params.items():
            spec = self._specs.get(name)
            if spec is None:
                raise RbcParamError(f"{self.label()}: unknown parameter '{name}' (known: {', '.join(self._specs)})")
            try:
                v = _coerce(spec, value)
            except (TypeError, ValueError) as exc:
                raise RbcParamError(f"{self.label()}: parameter '{name}' ({spec.kind}): {exc}") from None
            if spec.minimum is not None and v < spec.minimum:
                raise RbcParamError(f"{self.label()}: parameter '{name}' must be >= {spec.minimum}, got {v}")
            if spec.choices is not None and v not in spec.choices:
                raise RbcParamError(f"{self.label()}: parameter '{name}' must be one of {spec.choices}, got '{v}'")
            staged[name] = v
        for name in params:
            try:
                self._check_param(name, staged)
            except (ValueError, KeyError) as exc:
                raise RbcParamError(f"{self.label()}: parameter '{name}': {exc}") from None
        self.params = staged
        self._params_changed(set(params))

    def _check_param(self, name: str, staged: dict[str, Any]) -> None:
        """Subclass hook: raise ValueError if ``staged[name]`` does not fit the robot (joints, links, vars)."""

    def _params_changed(self, names: set[str]) -> None:
        """Subclass hook: rebuild caches (chains, var keys) after parameters changed."""

    # --- goals ----------------------------------------------------------------------------------
    def status(self) -> GoalStatus:
        return self._status

    def _begin(self, message: str = "") -> int:
        """Start a new goal (pre-empting any active one) and return its id."""
        if self._status.state == ACTIVE:
            self._status.state = ABORTED
            self._status.message = "preempted by a new goal"
        gid = self._next_goal_id
        self._next_goal_id += 1
        self._status = GoalStatus(state=ACTIVE, goal_id=gid, message=message)
        return gid

    def _finish(self, state: str, message: str, **result: Any) -> None:
        self._status.state = state
        self._status.message = message
        self._status.result = result

    def start_goal(self, goal: Any) -> int:
        """Validate and start ``goal``; raises RbcGoalError (goal rejected) with the reason."""
        raise RbcGoalError(f"{self.label()} takes no goals")

    def cancel(self) -> None:
        if self._status.state == ACTIVE:
            self._finish(CANCELED, "canceled")
        self._on_cancel()

    def _on_cancel(self) -> None:
        """Subclass hook."""

    def abort(self, goal_id: int, message: str) -> bool:
        """Abort goal ``goal_id`` from outside (e.g. the simulator refused ContactSimulation's wrench) if it is
        still the running one; the instance stops as on cancel. True when it was aborted."""
        if self._status.goal_id != goal_id or self._status.state != ACTIVE:
            return False
        self._finish(ABORTED, message)
        self._on_cancel()
        return True

    def update(self, now: float, dt: float, state: VarView) -> UpdateResult:
        raise NotImplementedError

    @property
    def weight(self) -> float:
        return float(self.params.get("weight", 1.0))
