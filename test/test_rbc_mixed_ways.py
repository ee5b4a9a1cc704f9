"""One rbc node running some instances in its process and others as processes, chosen per instance at
``create_re`` (``data: "JR process"`` / ``"JR in-process"``; a bare type takes ``instance_processes``), over DDS:
both ways drive the robot side by side, and each reads the other's shared outputs.

The robot is planar2 driven by the test's perfect position servo (rbc_helpers.Servo); the rbc node runs with the
test's Probe / ProbeReader extender types registered (rbc_probe_node.py, rbc_probe_types.py).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from rbc_helpers import (
    FAKE_DRIVER,
    TEST_STALE_TIMEOUT,
    Client,
    Goal,
    created_pid,
    fake_driver_urdf,
    joint_goal,
    parent_pid,
    serving_rbc,
    servoed_client,
)
from ros_harness import NodeProcess, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("robot_core_interfaces")
pytestmark = pytest.mark.ros

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def mixed_proc(tmp_path_factory):
    urdf = fake_driver_urdf(tmp_path_factory.mktemp("rbcmixed") / "planar2.urdf", FAKE_DRIVER)
    env = {"PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    proc = NodeProcess.python(HERE / "rbc_probe_node.py", "--ros-args", "-p", f"urdf_path:={urdf}", "-p",
                              "rate:=100.0", "-p", f"stale_timeout:={TEST_STALE_TIMEOUT}", env=env)
    yield from serving_rbc(proc)


@pytest.fixture
def client(ros, mixed_proc):
    yield from servoed_client(ros)


def _seen(client: Client, name: str) -> list[float]:
    """What a ProbeReader saw last, from its ``~/status`` (served by its own node, in-process or a process)."""
    from std_srvs.srv import Trigger

    status = json.loads(client.call(client._client(Trigger, f"/{name}/status"), Trigger.Request()).message)
    seen = status["derived"].get("seen")
    return [math.nan, math.nan] if seen is None else [float(v) for v in seen[:2]]


def test_in_process_and_process_instances_mix_in_one_rbc_node_and_read_each_others_shared_outputs(
        client, mixed_proc):
    from robot_core_interfaces.action import JointReach

    bad = client.l2_ctrl("create_re", "JR somewhere", "JRx")
    assert not bad.success and "'process' or 'in-process'" in bad.message and "somewhere" in bad.message, bad
    res = client.l2_ctrl("create_re", "JR process", "JRp")
    assert res.success, res.message
    assert parent_pid(created_pid(res.message)) == mixed_proc.proc.pid
    res = client.l2_ctrl("create_re", "JR", "JRi")  # the node's default (instance_processes false): in its process
    assert res.success and "process" not in res.message, res.message
    listed = client.l2_ctrl("list_re")
    assert sorted(zip(listed.names, listed.types, strict=True)) == [("JRi", "JR"), ("JRp", "JR")]
    for name, joint in (("JRp", "joint1"), ("JRi", "joint2")):
        results = client.set_params(name, joints=[joint])
        assert all(r.successful for r in results), [r.reason for r in results]
    goals = [Goal(client, JointReach, "/JRp/reach", joint_goal(["joint1"], [0.3], precision=0.003, timeout=60.0)),
             Goal(client, JointReach, "/JRi/reach", joint_goal(["joint2"], [-0.2], precision=0.003, timeout=60.0))]
    for goal in goals:
        assert goal.accepted
        result = goal.result(60)
        assert result.success, result.message
    with client.servo.lock:
        q = list(client.servo.q)
    assert abs(q[0] - 0.3) < 0.01 and abs(q[1] + 0.2) < 0.01, q

    # Shared outputs across the two ways: a process reads an in-process extender, an in-process one a process.
    for type_name, name, params in (("Probe", "P0", {"value": [0.5, -2.0]}),
                                    ("ProbeReader process", "R0", {"source": "P0"}),
                                    ("Probe process", "P1", {"value": [3.0, 4.0]}),
                                    ("ProbeReader in-process", "R1", {"source": "P1"})):
        client.create(type_name, name, **params)
    wait_for(lambda: _seen(client, "R0") == [0.5, -2.0], 30, "the reader process to see the in-process probe")
    wait_for(lambda: _seen(client, "R1") == [3.0, 4.0], 30, "the in-process reader to see the probe process")

    # A name destroyed in one way is free for the other at once.
    assert client.l2_ctrl("destroy_re", name="JRp").success
    res = client.l2_ctrl("create_re", "JR in-process", "JRp")
    assert res.success and "process" not in res.message, res.message
    assert client.l2_ctrl("destroy_re", name="JRi").success
    res = client.l2_ctrl("create_re", "JR process", "JRi")
    assert res.success and "(process " in res.message, res.message
    for name in ("JRp", "JRi"):
        client.forget_node(name)
        assert all(r.successful for r in client.set_params(name, joints=["joint1"])), name
