"""Message type resolution and field-path access of <rbc> vars, on the real rosidl message classes."""

from __future__ import annotations

import pytest
from geometry_msgs.msg import PoseStamped, PoseWithCovariance
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, Int32MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_core.rbc.message_fields import (
    FieldPathError,
    compile_getter,
    compile_parent_ensurer,
    converter,
    parse_field_type,
    resolve_field,
    resolve_message_class,
)


@pytest.mark.parametrize("text", ["sensor_msgs.msg.JointState", "sensor_msgs/msg/JointState", "sensor_msgs/JointState"])
def test_type_name_forms_resolve_to_the_real_class(text):
    assert resolve_message_class(text) is JointState


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("no_such_pkg_xyz.msg.Foo", "cannot be imported"),
        ("sensor_msgs.msg.NoSuchType", "has no message 'NoSuchType'"),
        ("sensor_msgs.srv.JointState", "middle part must be 'msg'"),
        ("JointState", "not of the form"),
    ],
)
def test_bad_type_names_explain_why(text, fragment):
    with pytest.raises(FieldPathError, match=fragment):
        resolve_message_class(text)


def test_parse_field_types():
    assert parse_field_type("sequence<double>").array == "sequence"
    b = parse_field_type("sequence<int32, 5>")
    assert (b.base, b.array, b.size) == ("int32", "bounded", 5)
    f = parse_field_type("double[36]")
    assert (f.base, f.array, f.size) == ("double", "fixed", 36)
    assert parse_field_type("geometry_msgs/Pose").is_message


def test_nested_scalar_field_reads_real_message():
    f = resolve_field(PoseStamped, "pose.position.x", False, None)
    msg = PoseStamped()
    msg.pose.position.x = 1.25
    assert compile_getter(f)(msg) == 1.25


def test_nested_array_in_sequence_of_messages():
    f = resolve_field(JointTrajectory, "points[1].positions", True, 2)
    msg = JointTrajectory(points=[JointTrajectoryPoint(positions=[0.0, 0.0, 0.0]),
                                  JointTrajectoryPoint(positions=[7.0, 8.0, 9.0])])
    assert compile_getter(f)(msg) == 9.0
    with pytest.raises(IndexError):
        compile_getter(f)(JointTrajectory(points=[JointTrajectoryPoint()]))


def test_index_written_in_path_equals_index_attribute():
    a = resolve_field(Float64MultiArray, "data[3]", False, None)
    b = resolve_field(Float64MultiArray, "data", True, 3)
    assert a.index == b.index == 3
    with pytest.raises(FieldPathError, match="contradicts"):
        resolve_field(Float64MultiArray, "data[3]", True, 2)


def test_fixed_size_array_index_checked_at_startup():
    ok = resolve_field(PoseWithCovariance, "covariance", True, 35)
    msg = PoseWithCovariance()
    msg.covariance[35] = 4.0
    assert compile_getter(ok)(msg) == 4.0
    with pytest.raises(FieldPathError, match=r"index 36 out of range for 'covariance' \(fixed size 36"):
        resolve_field(PoseWithCovariance, "covariance", True, 36, where="joint 'j1', var 'cov'")


@pytest.mark.parametrize(
    ("cls", "path", "array", "index", "index_type", "fragment"),
    [
        (JointState, "positon", True, 0, "float", "has no field 'positon'"),
        (PoseStamped, "pose.position.w", False, None, "float", "has no field 'w'"),
        (PoseStamped, "pose.position", False, None, "float", "ends at a message"),
        (JointState, "name", True, 0, "float", "not numeric"),
        (JointState, "position", False, None, "float", "is an array"),
        (PoseStamped, "pose.position.x", True, 0, "float", "scalar double but field_array"),
        (JointTrajectory, "points.positions", True, 0, "float", "array of messages"),
        (JointState, "position.x", True, 0, "float", "array of double, not a message"),
        (Int32MultiArray, "data", True, 0, "float", "index_type 'float' does not match element type 'int32'"),
        (Float64MultiArray, "data", True, 0, "complex", "unknown index_type"),
        (Float64MultiArray, "data", True, -1, "float", "index >= 0"),
        (PoseStamped, "pose..x", False, None, "float", "bad segment"),
    ],
)
def test_bad_field_paths_name_the_var_and_the_field(cls, path, array, index, index_type, fragment):
    with pytest.raises(FieldPathError) as info:
        resolve_field(cls, path, array, index, index_type, where="joint 'j1', var 'v'")
    text = str(info.value)
    assert fragment in text
    assert "joint 'j1', var 'v'" in text
    assert f"field '{path}'" in text


def test_int_and_bool_fields_convert_values():
    f = resolve_field(Int32MultiArray, "data", True, 0, "int")
    conv = converter(f)
    assert conv(2.6) == 3 and isinstance(conv(2.6), int)
    assert resolve_field(Int32MultiArray, "data", True, 1, "number").index == 1


def test_parent_ensurer_grows_sequences_of_messages_for_writing():
    f = resolve_field(JointTrajectory, "points[2].positions", True, 0)
    msg = JointTrajectory()
    parent = compile_parent_ensurer(f.steps)(msg)
    parent.positions = [1.5]
    assert len(msg.points) == 3
    assert msg.points[2].positions[0] == 1.5
    assert compile_getter(f)(msg) == 1.5
