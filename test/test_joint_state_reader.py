"""read_joint_state reads what the middleware's serializer wrote, for every shape of JointState."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rclpy")

from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

from robot_core.ros.joint_state_reader import read_joint_state


def test_every_shape_reads_as_the_serializer_wrote_it():
    rng = np.random.default_rng(7)
    for k in range(400):
        n = int(rng.integers(0, 9))
        names = ["j" * int(rng.integers(1, 12)) + str(i) for i in range(n)]
        sizes = [int(rng.choice([0, n, max(0, n - 1)])) for _ in range(3)]
        values = [rng.normal(size=s) for s in sizes]
        if values[0].size and k % 5 == 0:
            values[0][0] = np.nan  # NaN (not commanded) travels as any number
        msg = JointState(name=names, position=values[0].tolist(), velocity=values[1].tolist(),
                         effort=values[2].tolist())
        msg.header.frame_id = "f" * int(rng.integers(0, 6))
        msg.header.stamp.sec, msg.header.stamp.nanosec = int(rng.integers(0, 2**31)), int(rng.integers(0, 10**9))
        got = read_joint_state(serialize_message(msg))
        assert got is not None and got.name == names
        for field, want in zip((got.position, got.velocity, got.effort), values, strict=True):
            np.testing.assert_array_equal(field, want)


def test_other_encapsulations_and_short_bytes_are_left_to_the_deserializer():
    data = serialize_message(JointState(name=["a", "b"], position=[1.0, 2.0]))
    assert read_joint_state(data).name == ["a", "b"]
    assert read_joint_state(b"\x00\x07" + data[2:]) is None  # XCDR2, say
    assert read_joint_state(data[:30]) is None
    assert read_joint_state(b"") is None
