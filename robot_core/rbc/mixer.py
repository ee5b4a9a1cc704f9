"""Mixing of reacher outputs into cmd vars.

The rule (one sentence per var kind):

* **sum vars** (velocities such as ``qd_ref``, torques such as ``tau_ext``): the var is
  ``sum_i weight_i * output_i`` over the reachers contributing this cycle. When the last contributor stops,
  the var is set to 0.0 once (stop moving / stop pushing).
* **position vars** (``q_ref``, paired with a state var such as ``q`` through ``position_vars``): each reacher
  contributes an *increment* (its joint velocity times dt) and the var becomes
  ``previous command + sum_i weight_i * increment_i``. The previous command is the var's last value; if the
  var was never written it starts from the paired measured state, so taking over never jumps. When no reacher
  contributes the var keeps its value (hold position).

Consequences: two reachers with weights 0.5/0.5 driving a shared joint towards the same target behave like one
reacher with weight 1 and reach that target exactly; towards different targets T1, T2 they settle at the
weighted mean (w1*T1 + w2*T2)/(w1 + w2); a lone reacher with weight 0.5 reaches its target at half the speed.
Weights need not sum to one.

Safety on position vars: the command is clipped to the joint's URDF limits and to ``max_position_lead`` around
the measured position (when fresh), so an integrating reacher cannot wind the reference up while the joint is
blocked.
"""

from __future__ import annotations

import math

from robot_core.rbc.context import POSITION_MODE, RbcContext
from robot_core.rbc.var_table import VarEntry, VarTable


class Mixer:
    """Applies weighted reacher contributions to the var table once per cycle."""

    def __init__(self, table: VarTable, context: RbcContext, max_position_lead: float | None = 0.1):
        self.table = table
        self.context = context
        self.max_position_lead = max_position_lead
        self._driven: set[tuple[str, str]] = set()
        self._pairs: dict[tuple[str, str], VarEntry | None] = {}

    @property
    def driven(self) -> set[tuple[str, str]]:
        """(joint, var) keys that reachers drove in the last cycle."""
        return set(self._driven)

    def paired_state(self, e: VarEntry) -> VarEntry | None:
        """The measured state var a position var is paired with, if the joint has it."""
        key = (e.joint, e.name)
        if key not in self._pairs:
            state_var = self.context.position_vars.get(e.name)
            has = state_var is not None and self.table.has(e.joint, state_var)
            self._pairs[key] = self.table.entry(e.joint, state_var) if has else None  # type: ignore[arg-type]
        return self._pairs[key]

    def apply(self, contributions: dict[tuple[str, str], float], now: float) -> None:
        table = self.table
        for key, total in contributions.items():
            e = table.entry(*key)
            if self.context.var_mode(e.name) == POSITION_MODE:
                measured = self.paired_state(e)
                fresh = measured is not None and not measured.stale
                if key not in self._driven and not e.written and fresh:
                    base = measured.value  # type: ignore[union-attr]
                else:
                    base = e.value
                v = base + total
                lo, hi = self.context.limits(e.joint)
                if fresh and self.max_position_lead is not None:
                    q = measured.value  # type: ignore[union-attr]
                    lo = max(lo, q - self.max_position_lead)
                    hi = min(hi, q + self.max_position_lead)
                if lo <= hi:
                    v = min(max(v, lo), hi)
            else:
                v = total
            if math.isfinite(v):
                e.value = v
                e.stamp = now
                e.written = True
        for key in self._driven - contributions.keys():
            e = table.entry(*key)
            if self.context.var_mode(e.name) != POSITION_MODE:
                e.value = 0.0
                e.stamp = now
        self._driven = set(contributions)

    def arm_topics(self) -> dict[str, str]:
        """Before publishing: give never-written position vars of armed topics their measured value.

        Returns topic -> reason for armed topics that must not be published yet because some never-written
        position var has no fresh measurement (publishing its ``init`` could move the joint).
        """
        blocked: dict[str, str] = {}
        for ct in self.table.cmd_topics.values():
            if not ct.armed:
                continue
            for e in ct.entries:
                if e.written or self.context.var_mode(e.name) != POSITION_MODE:
                    continue
                measured = self.paired_state(e)
                if measured is not None and not measured.stale:
                    e.value = measured.value
                    e.written = True
                elif measured is not None:
                    blocked[ct.topic] = f"waiting for a fresh '{measured.name}' of joint '{e.joint}' to hold it"
                    break
        return blocked
