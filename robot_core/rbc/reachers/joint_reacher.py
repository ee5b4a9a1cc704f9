"""JointReacher ("JR"): a PID per joint that drives a set of joints to target positions.

The PID turns the position error into a joint *velocity* (rad/s or m/s), clipped to ``max_velocity``; the
base class turns it into a velocity command or a position-reference increment, depending on ``output_var``.
Gains are shared by all joints and take effect at the next update when changed. A goal succeeds when every
goal joint is within its precision; it aborts when ``timeout`` passes first or a joint's measurement goes
stale. After success the reacher keeps holding the target (``hold_after_success``) until cancelled or given
a new goal, so a velocity-controlled joint does not drift once the action returns.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from robot_core.rbc.errors import RbcGoalError
from robot_core.rbc.instance import ABORTED, ACTIVE, SUCCEEDED, ParamSpec, UpdateResult
from robot_core.rbc.reachers.reacher import WEIGHT, Reacher
from robot_core.rbc.var_table import VarView
from robot_core.text import clip


@dataclass
class JointGoal:
    """Target positions by joint; precision/timeout <= 0 mean "use the parameter", a timeout of ``math.inf``
    none."""

    positions: dict[str, float]
    precision: float = 0.0
    timeout: float = 0.0

    @staticmethod
    def from_pairs(pairs: Iterable[tuple[str, float]], precision: float = 0.0, timeout: float = 0.0) -> JointGoal:
        out: dict[str, float] = {}
        for joint, value in pairs:
            if joint in out:
                raise RbcGoalError(f"joint '{clip(joint)}' appears twice in the goal")
            out[joint] = float(value)
        return JointGoal(out, precision, timeout)


class JointReacher(Reacher):
    TYPE_NAME = "JR"
    PARAMS = (
        ParamSpec("joints", "str_list", [], "joints this reacher may move; goals naming others are rejected"),
        WEIGHT,
        ParamSpec("kp", "float", 2.0, "proportional gain (1/s): velocity per unit of error", minimum=0.0),
        ParamSpec("ki", "float", 0.0, "integral gain (1/s^2)", minimum=0.0),
        ParamSpec("kd", "float", 0.0, "derivative gain (on the measurement, unitless)", minimum=0.0),
        ParamSpec("integral_limit", "float", 0.5, "clamp of the error integral (rad*s)", minimum=0.0),
        ParamSpec("max_velocity", "float", 1.0, "clip of each joint's velocity output", minimum=0.0),
        ParamSpec("precision", "float", 0.01, "default goal precision (rad or m)", minimum=0.0),
        ParamSpec("timeout", "float", 30.0, "default goal timeout in s (0 = none)", minimum=0.0),
        ParamSpec("output_var", "str", "q_ref", "cmd var written (q_ref: position increments, qd_ref: velocity)"),
        ParamSpec("state_var", "str", "q", "state var holding the measured positions"),
        ParamSpec("hold_after_success", "bool", True, "keep regulating the target after the goal succeeded"),
    )

    def __init__(self, name: str, context: Any):
        super().__init__(name, context)
        self._targets: dict[str, float] = {}
        self._integral: dict[str, float] = {}
        self._prev_q: dict[str, float] = {}
        self._precision = 0.0
        self._timeout = 0.0
        self._elapsed = 0.0
        self._holding = False

    # --- parameters -----------------------------------------------------------------------------
    def _check_param(self, name: str, staged: dict[str, Any]) -> None:
        if name in ("joints", "output_var", "state_var"):
            joints = staged["joints"]
            if len(set(joints)) != len(joints):
                raise ValueError(f"joints list has duplicates: {joints}")
            self.context.check_joint_vars(joints, staged["state_var"], "state")
            self.context.check_joint_vars(joints, staged["output_var"], "cmd")

    def _params_changed(self, names: set[str]) -> None:
        if "joints" in names and self._targets:
            dropped = [j for j in self._targets if j not in self.params["joints"]]
            if dropped:
                # A joint taken away from the reacher must not keep being driven.
                for j in dropped:
                    self._targets.pop(j)
                if self._status.state == ACTIVE and not self._targets:
                    self._finish(ABORTED, f"joints {dropped} were removed from 'joints'")
        if names & {"output_var", "state_var"}:
            self._prev_q.clear()

    # --- goals ----------------------------------------------------------------------------------
    def start_goal(self, goal: JointGoal | Mapping[str, float]) -> int:
        if not isinstance(goal, JointGoal):
            goal = JointGoal(dict(goal))
        allowed = self.params["joints"]
        if not allowed:
            raise RbcGoalError(f"{self.label()}: parameter 'joints' is empty; set it before sending goals")
        if not goal.positions:
            raise RbcGoalError(f"{self.label()}: goal names no joints")
        foreign = [j for j in goal.positions if j not in allowed]
        if foreign:
            raise RbcGoalError(f"{self.label()}: goal names joints {foreign} outside parameter 'joints' {allowed}")
        for j, v in goal.positions.items():
            if not math.isfinite(v):
                raise RbcGoalError(f"{self.label()}: goal for joint '{clip(j)}' is not finite ({v})")
            lo, hi = self.context.limits(j)
            if not lo <= v <= hi:
                raise RbcGoalError(f"{self.label()}: goal {v:g} for joint '{clip(j)}' is outside its limits "
                                   f"[{lo:g}, {hi:g}]")
        if not math.isfinite(goal.precision):
            raise RbcGoalError(f"{self.label()}: goal precision is not finite")
        if math.isnan(goal.timeout) or goal.timeout == -math.inf:
            raise RbcGoalError(f"{self.label()}: goal timeout is {goal.timeout} (0 = default, inf = none)")
        gid = self._begin()
        self._targets = dict(goal.positions)
        self._integral = dict.fromkeys(self._targets, 0.0)
        self._prev_q.clear()
        self._precision = goal.precision if goal.precision > 0 else self.params["precision"]
        self._timeout = goal.timeout if goal.timeout > 0 else self.params["timeout"]
        self._elapsed = 0.0
        self._holding = False
        return gid

    def _on_cancel(self) -> None:
        self._targets = {}
        self._holding = False

    def errors(self, state: VarView) -> dict[str, float]:
        sv = self.params["state_var"]
        return {j: t - state.get(j, sv) for j, t in self._targets.items()}

    # --- cycle ----------------------------------------------------------------------------------
    def update(self, now: float, dt: float, state: VarView) -> UpdateResult:
        result = UpdateResult()
        active = self._status.state == ACTIVE
        if not self._targets or not (active or self._holding):
            return result
        joints = list(self._targets)
        sv = self.params["state_var"]
        stale = state.stale_joints(joints, sv)
        if stale:
            self._targets = {}
            self._holding = False
            if active:
                self._finish(ABORTED, f"measured '{sv}' of joints {stale} is stale",
                             final_error=[math.nan] * len(joints), joint_names=joints)
            return result
        q = state.values(joints, sv)
        err = [self._targets[j] - qi for j, qi in zip(joints, q, strict=True)]
        if active:
            self._elapsed += dt
            self._status.feedback = {"joint_names": joints, "error": err}
            if all(abs(e) <= self._precision for e in err):
                self._finish(SUCCEEDED, "reached within precision", final_error=err, joint_names=joints)
                self._holding = bool(self.params["hold_after_success"])
                if not self._holding:
                    self._targets = {}
                    return result
            elif self._timeout > 0 and self._elapsed > self._timeout:
                errors = dict(zip(joints, err, strict=True))
                self._finish(ABORTED, f"timeout after {self._timeout:g} s; errors {errors}", final_error=err,
                             joint_names=joints)
                self._targets = {}
                return result
        kp, ki, kd = self.params["kp"], self.params["ki"], self.params["kd"]
        ilim, vmax = self.params["integral_limit"], self.params["max_velocity"]
        qdot = []
        for j, qi, e in zip(joints, q, err, strict=True):
            integ = self._integral.get(j, 0.0)
            if ki > 0.0 and dt > 0.0:
                integ = min(max(integ + e * dt, -ilim), ilim)
                self._integral[j] = integ
            prev = self._prev_q.get(j)
            deriv = -(qi - prev) / dt if (prev is not None and dt > 0.0) else 0.0
            self._prev_q[j] = qi
            u = kp * e + ki * integ + kd * deriv
            qdot.append(min(max(u, -vmax), vmax))
        self.emit_velocities(result, joints, qdot, dt, self.params["output_var"])
        return result
