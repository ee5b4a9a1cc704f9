"""Template-built messages are what building and serializing the message gives.

Compared after deserializing: CDR pads strings to 4 bytes and the serializer leaves those padding bytes as it
finds them, so two serializations of one message may differ there (receivers never read them). ``repr`` of a
message prints every field with exact float reprs, so equal reprs mean equal values, NaN included."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("rclpy")

from rclpy.serialization import deserialize_message

from robot_core.control.messages import DynamicJointStateData, InterfaceValueData, JointStateData
from robot_core.ros import ros_conversions as conv
from robot_core.ros.message_templates import DynamicJointStateBytes, JointStateBytes
from robot_core.ros.ros_conversions import stamp_parts


def same(data: bytes, msg) -> bool:
    return repr(deserialize_message(data, type(msg))) == repr(msg)


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
        assert same(to_bytes(data), conv.joint_state(data)), (nm, np_, nv, ne)


def test_dynamic_joint_state_bytes_equal_serialized_messages():
    to_bytes = DynamicJointStateBytes()
    for stamp, values in ((1.25, [0.1, 0.2, 40.0, 9.0]), (2.5, [-1.0, math.inf, 41.0, 8.5])):
        data = DynamicJointStateData(["shoulder", "elbow", "ft"], [
            InterfaceValueData(["position"], values[:1]), InterfaceValueData(["position", "temperature"], values[1:3]),
            InterfaceValueData(["force.z"], values[3:])], stamp)
        assert same(to_bytes(data), conv.dynamic_joint_state(data))


def _point(rng, n: int, sizes: tuple[int, int, int, int], t: float):
    from robot_core.control.controllers.joint_trajectory import PointData

    return PointData(*(rng.normal(size=s) for s in sizes), time_from_start=t)


def test_jtc_state_bytes_equal_serialized_messages_for_every_layout():
    from robot_core.control.controllers.joint_trajectory import JtcStateData
    from robot_core.nodes.controllers.joint_trajectory import state_msg
    from robot_core.ros.message_templates import JtcStateBytes

    to_bytes = JtcStateBytes()
    rng = np.random.default_rng(5)
    names = [f"joint{i}" for i in range(1, 8)]
    full, pos_only, pos_vel = (7, 7, 7, 0), (7, 0, 0, 0), (7, 7, 0, 0)
    cases = [(names, full, pos_only), (names, pos_vel, (0, 7, 0, 0)), (names[:2], (2, 2, 2, 2), (0, 0, 0, 2))]
    for k, (nm, sizes, out_sizes) in enumerate(cases * 2):
        n = len(nm)
        ref_t = [0.0, 1.25, 3.999999999, 12.5, 1e-9, 0.5][k]
        data = JtcStateData(0.001 * k + 2.0, list(nm), _point(rng, n, sizes, ref_t), _point(rng, n, sizes, 0.0),
                            _point(rng, n, sizes, 0.0), _point(rng, n, out_sizes, 0.0),
                            speed_scaling_factor=[1.0, 0.5][k % 2])
        if sizes[0]:
            data.error.positions[0] = math.nan
        assert same(to_bytes(data), state_msg(data)), (nm, sizes, out_sizes, ref_t)
