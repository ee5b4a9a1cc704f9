"""Base of every extender: derives state (``UpdateResult.derived``) and never writes cmd vars."""

from __future__ import annotations

from robot_core.rbc.instance import RbcInstance


class Extender(RbcInstance):
    """Produces derived data only; the coupler rejects any command output from an extender."""

    KIND = "extender"
