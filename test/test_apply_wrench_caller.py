"""robot_core.ros.apply_wrench_caller against a real rclpy ApplyWrench service: a client made just before its
first request still reaches a service it has not discovered yet, requests keep their order, and a service that
never comes fails the non-zero request (only that one) with the reason."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from ros_harness import RosTestContext, wait_for

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros


@pytest.fixture
def ros():
    ctx = RosTestContext()
    yield ctx
    ctx.shutdown()


def _request(fz: float) -> dict[str, Any]:
    return {"link_name": "tool", "reference_point": [0.0, 0.0, 0.0], "force": [0.0, 0.0, fz],
            "torque": [0.0, 0.0, 0.0], "duration": 1.5}


def test_requests_made_before_discovery_arrive_in_order(ros):
    from robot_core_interfaces.srv import ApplyWrench

    from robot_core.ros.apply_wrench_caller import ApplyWrenchCaller

    caller = ApplyWrenchCaller(ros.node("cs_instance"), "/late_sim/apply_wrench")
    failures: list[str] = []
    for fz in (-5.0, 0.0):  # a goal's push and its closing zero wrench, both sent before the service exists
        caller.call("CS0", _request(fz), failures.append)
    received: list[tuple[float, float]] = []
    lock = threading.Lock()

    def serve(request: Any, response: Any) -> Any:
        with lock:
            received.append((request.wrench.force.z, request.duration.sec + request.duration.nanosec * 1e-9))
        response.success = True
        return response

    time.sleep(1.0)  # the service appears a second after the requests were made (what a late process sees)
    ros.node("late_sim").create_service(ApplyWrench, "/late_sim/apply_wrench", serve)
    wait_for(lambda: len(received) == 2, 30, "both requests at the service")
    assert received == [(-5.0, 1.5), (0.0, 1.5)]
    assert failures == []
    caller.close()


def test_a_service_that_never_comes_fails_the_push_naming_it(ros):
    from robot_core.ros.apply_wrench_caller import ApplyWrenchCaller

    caller = ApplyWrenchCaller(ros.node("cs_alone"), "/nobody/apply_wrench", wait=0.5)
    failures: list[str] = []
    caller.call("CS0", _request(-5.0), failures.append)
    caller.call("CS0", _request(0.0), failures.append)  # a zero wrench that fails asks nobody to abort
    wait_for(lambda: failures, 30, "the failure of the push")
    caller.close()
    assert failures == ["'CS0': service '/nobody/apply_wrench' is not available (waited 0.5 s); the contact wrench "
                        "was not applied"]


def test_a_refusal_fails_the_push_with_the_simulators_words(ros):
    from robot_core_interfaces.srv import ApplyWrench

    from robot_core.ros.apply_wrench_caller import ApplyWrenchCaller

    def refuse(request: Any, response: Any) -> Any:
        response.success, response.message = False, f"no link '{request.link_name}'"
        return response

    ros.node("refusing_sim").create_service(ApplyWrench, "/refusing_sim/apply_wrench", refuse)
    caller = ApplyWrenchCaller(ros.node("cs_refused"), "/refusing_sim/apply_wrench")
    failures: list[str] = []
    caller.call("CS0", _request(-5.0), failures.append)
    wait_for(lambda: failures, 30, "the refusal")
    caller.close()
    assert failures == ["'CS0': '/refusing_sim/apply_wrench' refused the wrench: no link 'tool'"]
