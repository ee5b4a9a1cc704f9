"""Bad robot descriptions: each must fail with a RobotModelError (or warn with a RobotModelWarning) whose message
names the file, the line and the element at fault."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from robot_core.model import Joint, Link, RobotModel, RobotModelError, RobotModelWarning, SourceRef, load_robot
from robot_core.model.validation import validate_model

INERTIAL = '<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>'


def _doc(body: str) -> str:
    """A URDF whose line 3 is the first line of ``body`` (so expected line numbers are easy to read)."""
    return f'<?xml version="1.0"?>\n<robot name="bad">\n{body}\n</robot>\n'


def _link(name: str) -> str:
    return f'<link name="{name}">{INERTIAL}</link>'


def _joint(name: str, parent: str, child: str, jtype: str = "continuous", extra: str = "") -> str:
    return f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>{extra}</joint>'


TWO_LINKS = _link("a") + "\n" + _link("b")

# (id, body, expected line, expected element text, expected message fragment, load options)
CASES = [
    ("malformed_xml", TWO_LINKS + "\n<joint name='j' type='fixed'>\n<parent link='a'>\n</joint>", 7, "XML",
     "malformed XML", {}),
    ("unknown_joint_type", TWO_LINKS + "\n" + _joint("j", "a", "b", "hinge"), 5, "joint 'j'",
     "unknown joint type 'hinge'", {}),
    ("missing_parent_link", TWO_LINKS + "\n" + _joint("j", "nowhere", "b"), 5, "joint 'j'",
     "parent link 'nowhere' does not exist", {}),
    ("missing_child_link", TWO_LINKS + "\n" + _joint("j", "a", "ghost"), 5, "joint 'j'",
     "child link 'ghost' does not exist", {}),
    ("missing_parent_element", TWO_LINKS + '\n<joint name="j" type="fixed"><child link="b"/></joint>', 5,
     "joint 'j'", "missing <parent>", {}),
    ("two_parents", _link("a") + "\n" + _link("b") + "\n" + _link("c") + "\n" + _joint("j1", "a", "c") + "\n"
     + _joint("j2", "b", "c"), 7, "joint 'j2'", "link 'c' has two parents", {}),
    ("cycle", _link("a") + "\n" + _link("b") + "\n" + _link("c") + "\n" + _joint("j1", "a", "b") + "\n"
     + _joint("j2", "b", "c") + "\n" + _joint("j3", "c", "a"), None, "joint 'j", "kinematic cycle", {}),
    ("duplicate_link", TWO_LINKS + "\n" + _link("a"), 5, "link 'a'", "duplicate link name 'a'", {}),
    ("duplicate_joint", _link("a") + "\n" + _link("b") + "\n" + _link("c") + "\n" + _joint("j", "a", "b")
     + "\n" + _joint("j", "b", "c"), 7, "joint 'j'", "duplicate joint name 'j'", {}),
    ("mimic_of_missing_joint", TWO_LINKS + "\n" + _joint("j", "a", "b", extra='<mimic joint="nope"/>'), 5,
     "joint 'j'", "mimic refers to joint 'nope'", {}),
    ("negative_mass", _link("a") + '\n<link name="b">\n<inertial><mass value="-1"/>'
     '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>\n' + _joint("j", "a", "b"),
     5, "link 'b' <inertial>", "mass -1.0 must be positive", {}),
    ("inertia_not_positive_definite", _link("a") + '\n<link name="b">\n<inertial><mass value="1"/>'
     '<inertia ixx="1" ixy="2" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>\n' + _joint("j", "a", "b"),
     5, "link 'b' <inertial>", "not positive definite", {}),
    ("triangle_inequality_strict", _link("a") + '\n<link name="b">\n<inertial><mass value="1"/>'
     '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.5"/></inertial></link>\n' + _joint("j", "a", "b"),
     5, "link 'b' <inertial>", "triangle inequality", {"strict_inertia": True}),
    ("missing_mass", _link("a") + '\n<link name="b">\n<inertial>'
     '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>', 5, "link 'b' <inertial>",
     "no <mass>", {}),
    ("several_roots", TWO_LINKS, 4, "link 'b'", "several root links: a, b", {}),
    ("limit_lower_above_upper", TWO_LINKS + "\n" + _joint("j", "a", "b", "revolute",
     '\n<limit lower="1" upper="-1" effort="1" velocity="1"/>'), 6, "joint 'j' <limit>",
     "lower 1.0 is greater than upper -1.0", {}),
    ("negative_effort", TWO_LINKS + "\n" + _joint("j", "a", "b", "revolute",
     '\n<limit lower="-1" upper="1" effort="-5" velocity="1"/>'), 6, "joint 'j' <limit>", "effort -5.0 is negative",
     {}),
    ("negative_velocity", TWO_LINKS + "\n" + _joint("j", "a", "b", "prismatic",
     '\n<limit lower="-1" upper="1" effort="5" velocity="-1"/>'), 6, "joint 'j' <limit>",
     "velocity -1.0 is negative", {}),
    ("xyz_two_numbers", TWO_LINKS + "\n" + _joint("j", "a", "b", extra='\n<origin xyz="1 2"/>'), 6,
     "joint 'j' <origin>", 'xyz="1 2" must be 3 numbers', {}),
    ("mass_not_a_number", _link("a") + '\n<link name="b">\n<inertial><mass value="heavy"/>'
     '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>', 5, "link 'b' <mass>",
     'value="heavy" is not a number', {}),
    ("rgba_three_numbers", '<link name="a">\n<visual><geometry><sphere radius="1"/></geometry>\n'
     '<material name="m"><color rgba="1 0 0"/></material></visual></link>', 5, "link 'a' <material> <color>",
     "must be 4 numbers", {}),
    ("zero_axis", TWO_LINKS + "\n" + _joint("j", "a", "b", extra='\n<axis xyz="0 0 0"/>'), 6, "joint 'j' <axis>",
     "zero length", {}),
    ("unknown_geometry", '<link name="a">\n<visual>\n<geometry><cone radius="1"/></geometry></visual></link>', 5,
     "link 'a' <visual> <cone>", "unknown geometry <cone>", {}),
    ("missing_geometry", '<link name="a">\n<collision>\n</collision></link>', 4, "link 'a' <collision>",
     "missing <geometry>", {}),
    ("unknown_ros2_control_joint", TWO_LINKS + "\n" + _joint("j", "a", "b")
     + '\n<ros2_control name="Hw" type="system"><hardware><plugin>x/Y</plugin></hardware>'
     '<joint name="elbow"><command_interface name="position"/></joint></ros2_control>', 6, "ros2_control 'Hw'",
     "joint 'elbow' which does not exist", {}),
    ("bad_initial_value", TWO_LINKS + "\n" + _joint("j", "a", "b")
     + '\n<ros2_control name="Hw" type="system"><hardware><plugin>x/Y</plugin></hardware>\n<joint name="j">'
     '<state_interface name="position"><param name="initial_value">home</param></state_interface></joint>'
     '</ros2_control>', 7, "ros2_control 'Hw' joint 'j' <state_interface name='position'>",
     'initial_value="home" is not a number', {}),
    ("rbc_var_bad_type", TWO_LINKS + "\n" + _joint("j", "a", "b", extra='\n<rbc node="drv">\n'
     '<var name="q" topic="/s" type="input"><msg type="std_msgs.msg.Float64" field="data"/></var></rbc>'), 7,
     "joint 'j' <rbc node='drv'> var 'q'", "type 'input' must be 'state' or 'cmd'", {}),
    ("rbc_var_without_msg", TWO_LINKS + "\n" + _joint("j", "a", "b", extra='\n<rbc node="drv">\n'
     '<var name="q" topic="/s" type="state"/></rbc>'), 7, "joint 'j' <rbc node='drv'> var 'q'", "no <msg>", {}),
    ("nan_in_origin", TWO_LINKS + "\n" + _joint("j", "a", "b", extra='\n<origin xyz="0 nan 0"/>'), 6,
     "joint 'j' <origin>", 'xyz="0 nan 0" must be 3 finite numbers', {}),
    ("nan_in_rpy", TWO_LINKS + "\n" + _joint("j", "a", "b", extra='\n<origin rpy="NaN 0 0"/>'), 6,
     "joint 'j' <origin>", 'rpy="NaN 0 0" must be 3 finite numbers', {}),
    ("inf_in_origin", TWO_LINKS + "\n" + _joint("j", "a", "b", extra='\n<origin xyz="0 0 inf"/>'), 6,
     "joint 'j' <origin>", 'xyz="0 0 inf" must be 3 finite numbers', {}),
    ("inf_in_visual_origin", '<link name="a">\n<visual><origin rpy="0 -Infinity 0"/>'
     '<geometry><sphere radius="1"/></geometry></visual></link>', 4, "link 'a' <visual> <origin>",
     'rpy="0 -Infinity 0" must be 3 finite numbers', {}),
    ("short_origin", TWO_LINKS + "\n" + _joint("j", "a", "b", extra='\n<origin xyz="0 1"/>'), 6,
     "joint 'j' <origin>", 'xyz="0 1" must be 3 numbers', {}),
    ("truncated_xml", None, 5, "XML", "malformed XML", {}),
    ("revolute_zero_axis", TWO_LINKS + "\n" + _joint("j", "a", "b", "revolute", '\n<axis xyz="0 0 0"/>'
     '<limit lower="-1" upper="1" effort="1" velocity="1"/>'), 6, "joint 'j' <axis>", "zero length", {}),
    ("inertia_indefinite_real_mass", _link("a") + '\n<link name="b">\n<inertial><mass value="0.5"/>'
     '<inertia ixx="1e-8" ixy="6e-8" ixz="0" iyy="1e-8" iyz="0" izz="1e-8"/></inertial></link>\n'
     + _joint("j", "a", "b"), 5, "link 'b' <inertial>", "not positive definite", {}),
    ("not_a_robot", None, 1, "<model>", "expected <robot>", {}),
    ("robot_without_name", None, 1, "<robot>", "missing attribute 'name'", {}),
]


def _write(tmp_path: Path, case_id: str, body: str | None) -> Path:
    path = tmp_path / f"{case_id}.urdf"
    if case_id == "not_a_robot":
        path.write_text('<model name="x"/>\n')
    elif case_id == "truncated_xml":  # a download cut short in the middle of an element
        path.write_text(_doc(TWO_LINKS + "\n" + _joint("j", "a", "b"))[:-40])
    elif case_id == "robot_without_name":
        path.write_text('<robot>\n<link name="a"/>\n</robot>\n')
    else:
        path.write_text(_doc(body))
    return path


@pytest.mark.parametrize(("case_id", "body", "line", "element", "fragment", "options"), CASES,
                         ids=[c[0] for c in CASES])
def test_bad_urdf_names_file_line_and_element(tmp_path, case_id, body, line, element, fragment, options):
    path = _write(tmp_path, case_id, body)
    with pytest.raises(RobotModelError) as info:
        load_robot(path, **options)
    message = str(info.value)
    assert "\n" not in message, f"not one line: {message!r}"
    assert str(path) in message
    assert fragment in message
    assert element in message
    if line is not None:
        assert f"{path}:{line}:" in message, message
        assert info.value.source.line == line
    else:
        assert re.search(rf"{re.escape(str(path))}:\d+:", message), message
    assert info.value.source.file == str(path)


def test_triangle_inequality_is_a_warning_by_default(tmp_path):
    body = _link("a") + '\n<link name="b">\n<inertial><mass value="1"/>' \
        '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.5"/></inertial></link>\n' + _joint("j", "a", "b")
    path = tmp_path / "tri.urdf"
    path.write_text(_doc(body))
    with pytest.warns(RobotModelWarning, match=rf"{re.escape(str(path))}:5: link 'b' <inertial>: .*triangle"):
        model = load_robot(path)
    assert model.links["b"].inertial.mass == 1


def test_inertia_tolerance_accepts_rounding(tmp_path):
    # A thin rod printed with 9 digits: Ixx + Iyy == Izz up to rounding (relative 1e-9 tolerance).
    body = _link("a") + '\n<link name="b"><inertial><mass value="1"/>' \
        '<inertia ixx="0.0833333333" ixy="0" ixz="0" iyy="0.0000000001" iyz="0" izz="0.08333333345"/></inertial>' \
        '</link>\n' + _joint("j", "a", "b")
    path = tmp_path / "rod.urdf"
    path.write_text(_doc(body))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RobotModelWarning)
        load_robot(path, strict_inertia=True)


@pytest.mark.parametrize(("mass", "inertia", "what"), [
    ("1e-8", "0.01", "mass 1e-08 kg is suspiciously small"),
    ("1", "1e-14", "principal moment of inertia"),
])
def test_suspicious_values_warn(tmp_path, mass, inertia, what):
    body = _link("a") + f'\n<link name="b"><inertial><mass value="{mass}"/><inertia ixx="{inertia}" ixy="0" ' \
        f'ixz="0" iyy="{inertia}" iyz="0" izz="{inertia}"/></inertial></link>\n' + _joint("j", "a", "b")
    path = tmp_path / "tiny.urdf"
    path.write_text(_doc(body))
    with pytest.warns(RobotModelWarning, match=rf"{re.escape(str(path))}:4: link 'b' <inertial>: {what}"):
        load_robot(path)


def test_revolute_without_limit_warns(tmp_path):
    path = tmp_path / "nolimit.urdf"
    path.write_text(_doc(TWO_LINKS + "\n" + _joint("j", "a", "b", "revolute")))
    with pytest.warns(RobotModelWarning, match=rf"{re.escape(str(path))}:5: joint 'j': revolute joint has no"):
        model = load_robot(path)
    assert model.joints["j"].limit is None


def test_missing_file():
    with pytest.raises(RobotModelError, match=r"does_not_exist\.urdf: file not found"):
        load_robot("/tmp/does_not_exist.urdf")


def test_unknown_extension(tmp_path):
    path = tmp_path / "robot.sdf"
    path.write_text("<sdf/>")
    with pytest.raises(RobotModelError, match=r"robot\.sdf: unknown robot description format"):
        load_robot(path)


def test_xacro_error_names_the_file(tmp_path):
    path = tmp_path / "broken.urdf.xacro"
    path.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
                    '<xacro:undefined_macro/>\n</robot>\n')
    with pytest.raises(RobotModelError, match=rf"{re.escape(str(path))}.*xacro.*undefined_macro"):
        load_robot(path)


def test_xacro_malformed_xml_names_file_and_line(tmp_path):
    path = tmp_path / "broken.xacro"
    path.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">\n<link name="a">\n</robot>\n')
    with pytest.raises(RobotModelError) as info:
        load_robot(path)
    assert f"{path}:3: xacro" in str(info.value)


def test_xacro_include_of_a_missing_file_names_the_include_line(tmp_path):
    path = tmp_path / "robot.xacro"
    path.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">\n<link name="a"/>\n'
                    '<xacro:include filename="$(cwd)/parts/arm.urdf.xacro"/>\n</robot>\n')
    with pytest.raises(RobotModelError) as info:
        load_robot(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: <xacro:include>: xacro expansion failed: No such file"), message
    assert "arm.urdf.xacro" in message and "\n" not in message


def test_expanded_xacro_errors_point_at_the_xacro_file(tmp_path):
    path = tmp_path / "badjoint.urdf.xacro"
    path.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
                    '<xacro:property name="t" value="hinge"/>\n<link name="a"/><link name="b"/>\n'
                    '<joint name="j" type="${t}"><parent link="a"/><child link="b"/></joint>\n</robot>\n')
    with pytest.raises(RobotModelError, match=rf"{re.escape(str(path))} \(expanded\):\d+: joint 'j': unknown joint"):
        load_robot(path)


def test_validate_model_built_in_code_names_the_element():
    model = RobotModel("coded", source_file="coded.g")
    model.links["a"] = Link("a", source=SourceRef("coded.g", 3, "frame 'a'"))
    model.links["b"] = Link("b", source=SourceRef("coded.g", 4, "frame 'b'"))
    model.joints["j"] = Joint("j", "revolute", "a", "c", axis=np.array([0.0, 0, 1]),
                              source=SourceRef("coded.g", 7, "joint 'j'"))
    with pytest.raises(RobotModelError, match=r"coded\.g:7: joint 'j': child link 'c' does not exist"):
        validate_model(model)
