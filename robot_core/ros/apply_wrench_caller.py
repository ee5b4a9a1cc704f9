"""ContactSimulation's simulator calls (mode ``service``): its apply-wrench requests sent to the simulator.

The core instance only says what to apply (``derived["apply_wrench_request"]``, once when a goal starts and a
zero wrench when it ends); whichever process steps it sends the call from its node: the rbc node for an
instance in its process, the instance process itself otherwise (robot_core.nodes.rbc_instance_process).
A call that fails (no service, an error, a refusal) aborts the goal that asked for a non-zero wrench, naming
the instance and the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from robot_core.ros.rbc_messages import apply_wrench_request


class ApplyWrenchCaller:
    """Client of ``service`` (robot_core_interfaces/srv/ApplyWrench) on ``node``; ``call`` sends one request."""

    def __init__(self, node: Any, service: str):
        from robot_core_interfaces.srv import ApplyWrench

        self.node = node
        self.service = service
        self.client = node.create_client(ApplyWrench, service)

    def call(self, name: str, request: dict[str, Any], on_failure: Callable[[str], None]) -> None:
        """Send ``request``; ``on_failure(reason)`` when it was not applied and asked for a non-zero wrench."""
        log = self.node.get_logger()

        def fail(reason: str) -> None:
            log.error(f"'{name}': {reason}")
            if any(request["force"] + request["torque"]):
                on_failure(f"'{name}': {reason}")

        if not self.client.service_is_ready():
            fail(f"service '{self.service}' is not available; the contact wrench was not applied")
            return
        try:
            future = self.client.call_async(apply_wrench_request(request))
        except Exception as exc:
            fail(f"apply-wrench request not sent: {exc}")
            return

        def done(f: Any) -> None:
            exc = f.exception()
            if exc is not None:
                fail(f"'{self.service}' failed: {exc}")
            elif not f.result().success:
                fail(f"'{self.service}' refused the wrench: {f.result().message}")

        future.add_done_callback(done)
