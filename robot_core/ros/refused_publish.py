"""A message the middleware refused to send is a dropped message, not a failure of the node that sent it.

Fast DDS refuses a write ("cannot publish data") when a reliable writer's history is full of samples that a slow
reader has not acknowledged and the write's blocking time runs out. Under a CPU hog that happened to a
simulator's /tf message, and its simulation thread took the error for a failed step and paused the simulation.
The next message carries the newest state anyway, so the loops that publish at a rate (the simulation thread, the
controller manager's command write) drop the refused one, count it, say so (throttled, per topic) and go on.
While the context shuts down the error is raised as before: those loops end then.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from robot_core.physics.command_protocol import DropReporter


def publish_error() -> type[Exception]:
    """rclpy's error for a failed rcl call (``RCLError``), which a refused publish raises."""
    from rclpy.impl.implementation_singleton import rclpy_implementation

    return rclpy_implementation.RCLError


class RefusedPublishes:
    """Reports refused publishes of one node: the first for a topic at once, repeats at most every ``period`` s
    with how many were dropped since."""

    def __init__(self, log: Callable[[str], None], context: Any, period: float = 5.0):
        self._context = context
        self._reporter = DropReporter(log, period=period, prefix="a message was not published and is dropped: ")

    @property
    def dropped(self) -> int:
        return self._reporter.dropped

    def refused(self, topic: str, exc: Exception) -> None:
        """Count and report one refused message on ``topic``; re-raise ``exc`` while the context shuts down."""
        if not self._context.ok():
            raise exc
        self._reporter.report(f"'{topic}': {exc}")
