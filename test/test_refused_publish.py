"""A message the middleware refuses to send is dropped and reported; the node that sent it runs on.

Seen under a CPU hog: Fast DDS refused a simulator's /tf write ("cannot publish data") and the simulation thread
paused the simulation as if a step had failed. The simulator test below runs a real SimulatorNode whose tf output
is refused by the middleware's own error type for a while (the refusal itself cannot be produced on demand).
"""

from __future__ import annotations

import time

import pytest
from ros_harness import REPO, wait_for

pytest.importorskip("rclpy")


def refusal() -> Exception:
    from robot_core.ros.refused_publish import publish_error

    return publish_error()("Failed to publish: cannot publish data, at /project/src/rmw_publish.cpp:120")


def test_refusals_are_counted_and_reported_once_per_period_and_raised_at_shutdown(context):
    from robot_core.ros.refused_publish import RefusedPublishes

    logged: list[str] = []
    refused = RefusedPublishes(logged.append, context, period=60.0)
    for _ in range(5):
        refused.refused("/tf", refusal())
    refused.refused("/clock", refusal())
    assert refused.dropped == 6
    assert len(logged) == 2, logged  # the first of each topic; the repeats wait for the period
    assert logged[0].startswith("a message was not published and is dropped: '/tf': Failed to publish")
    context.try_shutdown()
    with pytest.raises(type(refusal())):
        refused.refused("/tf", refusal())  # shutting down: the publishing loop ends as before


def test_a_simulator_whose_tf_is_refused_runs_on(context):
    from rclpy.parameter import Parameter

    from robot_core.nodes.simulator import SimulatorNode

    node = SimulatorNode(context=context, parameter_overrides=[
        Parameter("urdf_path", value=str(REPO / "urdf" / "planar2.urdf")), Parameter("real_time_factor", value=0.0)])
    try:
        real, calls = node._tf_out, [0]

        def refusing(data: bytes) -> None:
            calls[0] += 1
            if calls[0] <= 20:
                raise refusal()
            real(data)

        node._tf_out = refusing
        wait_for(lambda: calls[0] > 40, 60, "tf publishes after the refused ones")
        t = node._snapshot[1]
        deadline = time.monotonic() + 30
        while node._snapshot[1] <= t + 1_000_000_000 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not node._paused, "the simulation paused on a refused message"
        assert node._snapshot[1] > t + 1_000_000_000, "simulated time stopped after the refused messages"
        assert node._refused.dropped == 20
    finally:
        node.shutdown()
        node.destroy_node()
