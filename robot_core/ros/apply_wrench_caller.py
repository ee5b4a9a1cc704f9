"""ContactSimulation's simulator calls (mode ``service``): its apply-wrench requests sent to the simulator.

The core instance only says what to apply (``derived["apply_wrench_request"]``, once when a goal starts and a
zero wrench when it ends); whichever process steps it sends the call from its node: the rbc node for an
instance in its process, the instance process itself otherwise (robot_core.nodes.rbc_instance_process).
A call that fails (no service, an error, a refusal) aborts the goal that asked for a non-zero wrench, naming
the instance and the reason.

The requests go out in order from one worker thread: the step loop never blocks on the graph, and a client
made just now (an instance process started at run time) gets up to ``wait`` seconds to discover a service
that is there; a loaded machine takes seconds for that (a full test run under load once refused a goal because
the instance process asked the graph 1 s after it started).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from robot_core.ros.rbc_messages import apply_wrench_request

SERVICE_WAIT = 10.0  # s a request waits for the service to be discovered before it fails


class ApplyWrenchCaller:
    """Client of ``service`` (robot_core_interfaces/srv/ApplyWrench) on ``node``; ``call`` queues one request."""

    def __init__(self, node: Any, service: str, wait: float = SERVICE_WAIT):
        from robot_core_interfaces.srv import ApplyWrench

        self.node = node
        self.service = service
        self.wait = wait
        self.client = node.create_client(ApplyWrench, service)
        self._queue: queue.Queue[tuple[str, dict[str, Any], Callable[[str], None]] | None] = queue.Queue()
        self._closed = threading.Event()
        self._worker = threading.Thread(target=self._work, name=f"apply-wrench {service}", daemon=True)
        self._worker.start()

    def call(self, name: str, request: dict[str, Any], on_failure: Callable[[str], None]) -> None:
        """Queue ``request``; ``on_failure(reason)`` when it was not applied and asked for a non-zero wrench."""
        self._queue.put((name, request, on_failure))

    def close(self) -> None:
        """Send what is queued (a goal's closing zero wrench) if the service is there, then stop the worker."""
        self._queue.put(None)
        self._worker.join(timeout=1.0)
        self._closed.set()  # a request still waiting for the service gives up
        self._worker.join(timeout=1.0)

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            try:
                self._send(*item)
            except Exception as exc:  # the context shut down under us: nothing to report to
                if not self._closed.is_set():
                    self.node.get_logger().error(f"apply-wrench request not sent: {exc}")

    def _send(self, name: str, request: dict[str, Any], on_failure: Callable[[str], None]) -> None:
        log = self.node.get_logger()

        def fail(reason: str) -> None:
            log.error(f"'{name}': {reason}")
            if any(request["force"] + request["torque"]):
                on_failure(f"'{name}': {reason}")

        if not self.client.service_is_ready() and not self._discovered():
            fail(f"service '{self.service}' is not available (waited {self.wait:g} s); the contact wrench was "
                 "not applied")
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

    def _discovered(self) -> bool:
        """Poll the graph for up to ``wait`` s (rclpy's wait_for_service would not notice ``close``)."""
        deadline = time.monotonic() + self.wait
        while time.monotonic() < deadline and not self._closed.wait(0.05):
            if self.client.service_is_ready():
                return True
        return False
