"""Template-built messages are byte-for-byte what building and serializing the message gives."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("rclpy")

from rclpy.serialization import serialize_message

from robot_core.control.messages import DynamicJointStateData, InterfaceValueData, JointStateData
from robot_core.nodes import ros_conversions as conv
from robot_core.nodes.message_templates import DynamicJointStateBytes, JointStateBytes
from robot_core.nodes.ros_conversions import stamp_parts


@pytest.mark.parametrize("stamp", [0.0, 1.5, 12345.999999999, 7.0000000004, -1.0, math.nan])
def test_stamp_parts_match_the_message_conversion(stamp):
    t = conv.to_time(stamp)
    assert stamp_parts(stamp) == (t.sec, t.nanosec)


def test_joint_state_bytes_equal_serialized_messages_for_every_layout():
    to_bytes = JointStateBytes()
    rng = np.random.default_rng(3)
    names = [f"joint{i}" for i in range(1, 8)]
    layouts = [(names, 7, 7, 7), (names, 7, 0, 0), (names[:3], 0, 3, 0), (["a"], 1, 1, 0), (names, 7, 7, 7)]
    for k, (nm, np_, nv, ne) in enumerate(layouts * 3):
        data = JointStateData(list(nm), rng.normal(size=np_), rng.normal(size=nv), rng.normal(size=ne),
                              0.001 * k + 3.0)
        if np_:
            data.position[0] = math.nan  # NaN travels as any other number
        assert to_bytes(data) == serialize_message(conv.joint_state(data)), (nm, np_, nv, ne)


def test_dynamic_joint_state_bytes_equal_serialized_messages():
    to_bytes = DynamicJointStateBytes()
    for stamp, values in ((1.25, [0.1, 0.2, 40.0, 9.0]), (2.5, [-1.0, math.inf, 41.0, 8.5])):
        data = DynamicJointStateData(["shoulder", "elbow", "ft"], [
            InterfaceValueData(["position"], values[:1]), InterfaceValueData(["position", "temperature"], values[1:3]),
            InterfaceValueData(["force.z"], values[3:])], stamp)
        assert to_bytes(data) == serialize_message(conv.dynamic_joint_state(data))
