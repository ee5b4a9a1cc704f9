"""Exceptions of the Robot Body Coupler, so callers (the node, tests) can tell config from run-time faults."""

from __future__ import annotations


class RbcError(Exception):
    """Base of every RBC error."""


class RbcConfigError(RbcError, ValueError):
    """Bad ``<rbc>`` tags; raised at start-up. ``problems`` lists every fault found, each naming joint/var/field."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        text = self.problems[0] if len(self.problems) == 1 else (
            f"{len(self.problems)} problems in <rbc> tags:\n  " + "\n  ".join(self.problems))
        super().__init__(text)


class RbcVarError(RbcError, KeyError):
    """Unknown joint/var, or a write to a state var, through the Python API or an aggregated input."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class RbcParamError(RbcError, ValueError):
    """A reacher/extender parameter that is unknown or invalid; the text names instance and parameter."""


class RbcGoalError(RbcError, ValueError):
    """A goal rejected before it starts (foreign joints, bad pose, no chain configured)."""
