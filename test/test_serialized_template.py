"""Patched serialized messages: what the simulator streams must deserialize to exactly the numbers written."""

from __future__ import annotations

import numpy as np
import pytest

from robot_core.ros.serialized_template import SerializedTemplate, sentinels

pytest.importorskip("rclpy")


def test_sentinels_are_distinct_and_typed():
    f = sentinels(500, "float64")
    assert f.dtype == np.float64 and np.unique(f).size == 500 and np.all(np.isfinite(f))
    i = sentinels(300, "uint32", salt=2)
    assert i.dtype == np.uint32 and np.unique(i).size == 300
    assert not np.array_equal(sentinels(5, "float64", salt=1), sentinels(5, "float64", salt=2))


def test_joint_state_round_trip_through_the_middleware_serializer():
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import JointState

    names = ["joint1", "a_much_longer_joint_name", "j3"]
    pos, vel, eff = (sentinels(3, "float64", salt=k) for k in (3, 4, 5))
    sec, nsec = sentinels(1, "int32", salt=1), sentinels(1, "uint32", salt=2)
    msg = JointState(name=names, position=pos.tolist(), velocity=vel.tolist(), effort=eff.tolist())
    msg.header.frame_id = "frame"
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(sec[0]), int(nsec[0])
    tpl = SerializedTemplate(serialize_message(msg))
    for name, values in (("position", pos), ("velocity", vel), ("effort", eff), ("sec", sec), ("nanosec", nsec)):
        tpl.add_field(name, values)

    tpl.set("position", np.array([0.1, -2.5, 3e-9]))
    tpl.set("velocity", [1.0, 2.0, 3.0])
    tpl.set("effort", 0.0)
    tpl.set("sec", 12)
    tpl.set("nanosec", 345_000_000)
    out = deserialize_message(tpl.tobytes(), JointState)
    assert list(out.name) == names and out.header.frame_id == "frame"
    assert list(out.position) == [0.1, -2.5, 3e-9]
    assert list(out.velocity) == [1.0, 2.0, 3.0]
    assert list(out.effort) == [0.0, 0.0, 0.0]
    assert (out.header.stamp.sec, out.header.stamp.nanosec) == (12, 345_000_000)
    assert tpl.get("velocity").tolist() == [1.0, 2.0, 3.0]


def test_tf_message_with_many_transforms():
    from geometry_msgs.msg import TransformStamped
    from rclpy.serialization import deserialize_message, serialize_message
    from tf2_msgs.msg import TFMessage

    m = 40
    trans, rot = sentinels(3 * m, "float64", salt=10), sentinels(4 * m, "float64", salt=11)
    secs = sentinels(m, "int32", salt=1)
    tfs = []
    for k in range(m):
        tf = TransformStamped(child_frame_id=f"child_{k}" * (k % 3 + 1))
        tf.header.frame_id = f"p{k}"
        tf.header.stamp.sec = int(secs[k])
        t, r = tf.transform.translation, tf.transform.rotation
        t.x, t.y, t.z = trans[3 * k: 3 * k + 3].tolist()
        r.x, r.y, r.z, r.w = rot[4 * k: 4 * k + 4].tolist()
        tfs.append(tf)
    tpl = SerializedTemplate(serialize_message(TFMessage(transforms=tfs)))
    tpl.add_field("translation", trans)
    tpl.add_field("rotation", rot)
    tpl.add_field("sec", secs)
    rng = np.random.default_rng(0)
    new_t, new_r = rng.normal(size=3 * m), rng.normal(size=4 * m)
    tpl.set("translation", new_t)
    tpl.set("rotation", new_r)
    tpl.set("sec", 7)
    out = deserialize_message(tpl.tobytes(), TFMessage)
    got_t = [v for tf in out.transforms for v in (tf.transform.translation.x, tf.transform.translation.y,
                                                   tf.transform.translation.z)]
    got_r = [v for tf in out.transforms for v in (tf.transform.rotation.x, tf.transform.rotation.y,
                                                   tf.transform.rotation.z, tf.transform.rotation.w)]
    assert got_t == new_t.tolist() and got_r == new_r.tolist()
    assert {tf.header.stamp.sec for tf in out.transforms} == {7}
    assert [tf.child_frame_id for tf in out.transforms] == [tf.child_frame_id for tf in tfs]


def test_missing_or_ambiguous_sentinel_is_an_error():
    data = np.array([1.5, 2.5, 1.5], dtype=np.float64).tobytes()  # 8-byte fields: all 4-aligned
    tpl = SerializedTemplate(data)
    with pytest.raises(ValueError, match="not found"):
        tpl.add_field("x", np.array([3.5]))
    with pytest.raises(ValueError, match="more than once"):
        tpl.add_field("x", np.array([1.5]))
    tpl.add_field("y", np.array([2.5]))
    tpl.set("y", 9.0)
    assert np.frombuffer(tpl.tobytes()).tolist() == [1.5, 9.0, 1.5]


def test_setter_writes_one_field_and_refuses_groups():
    from rclpy.serialization import deserialize_message, serialize_message
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState

    sec, nsec = sentinels(1, "int32", salt=1), sentinels(1, "uint32", salt=2)
    msg = Clock()
    msg.clock.sec, msg.clock.nanosec = int(sec[0]), int(nsec[0])
    tpl = SerializedTemplate(serialize_message(msg))
    tpl.add_field("sec", sec)
    tpl.add_field("nanosec", nsec)
    set_sec, set_nanosec = tpl.setter("sec"), tpl.setter("nanosec")
    for s, n in ((0, 0), (-5, 999_999_999), (2**31 - 1, 4_000_000_000)):
        set_sec(s)
        set_nanosec(n)
        out = deserialize_message(tpl.tobytes(), Clock)
        assert (out.clock.sec, out.clock.nanosec) == (s, n)
        assert (int(tpl.get("sec")[0]), int(tpl.get("nanosec")[0])) == (s, n)

    pos = sentinels(4, "float64", salt=3)
    js = SerializedTemplate(serialize_message(JointState(name=list("abcd"), position=pos.tolist())))
    js.add_field("position", pos)
    with pytest.raises(ValueError, match="'position' has 4 fields"):
        js.setter("position")
    js.set("position", np.arange(4.0))  # a run of consecutive fields: written through a slice
    assert list(deserialize_message(js.tobytes(), JointState).position) == [0.0, 1.0, 2.0, 3.0]
