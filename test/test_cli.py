"""The robot-core command line, run as a real subprocess with the project's Python."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from robot_core.cli import describe, main
from robot_core.model import Joint, Limit, Link, RobotModel, load_robot
from robot_core.model.model_compare import IGNORED_FIELDS, model_differences

REPO = Path(__file__).resolve().parent.parent
RC_ARM_XACRO = REPO / "urdf" / "rc_arm.urdf.xacro"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "robot_core.cli", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=120)


def test_describe_rc_arm():
    result = run_cli("describe", str(RC_ARM_XACRO))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "robot 'rc_arm'" in out
    assert "total mass: 18 kg" in out
    assert "degrees of freedom (8 actuated):" in out
    assert "joint4" in out and "[0.07, 3] rad, effort 87, velocity 2.175, initial 1.9" in out
    assert "finger_right_joint" in out and "mimic of finger_left_joint" in out
    assert "base_link -> tcp (7 movable joints): joint1 -> joint2" in out
    assert "RcArmSystem (system, topic_based_ros2_control/TopicBasedSystem)" in out
    # tree lines are indented by depth
    assert "  base_link\n    +- [joint1: revolute] link1\n      +- [joint2: revolute] link2" in out


def test_describe_floating_option():
    result = run_cli("describe", "urdf/planar2.urdf", "--floating")
    assert result.returncode == 0, result.stderr
    assert "base: floating" in result.stdout


def test_convert_xacro_to_urdf(tmp_path):
    out = tmp_path / "rc_arm_converted.urdf"
    result = run_cli("convert", str(RC_ARM_XACRO), str(out))
    assert result.returncode == 0, result.stderr
    assert out.is_file()
    assert "Gazebo <sensor> block(s) scene_camera are not written" in result.stderr
    assert model_differences(load_robot(RC_ARM_XACRO), load_robot(out), ignore=IGNORED_FIELDS | {"sensors"}) == []


def test_bad_file_exits_2_with_location_and_no_traceback(tmp_path):
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="bad">\n<link name="a"/>\n<link name="b"/>\n'
                   '<joint name="elbow" type="hinge"><parent link="a"/><child link="b"/></joint>\n</robot>\n')
    result = run_cli("describe", str(bad))
    assert result.returncode == 2
    assert f"{bad}:4: joint 'elbow': unknown joint type 'hinge'" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_convert_malformed_xml_exits_2(tmp_path):
    bad = tmp_path / "broken.urdf"
    bad.write_text('<robot name="x">\n<link name="a">\n</robot>\n')
    result = run_cli("convert", str(bad), str(tmp_path / "out.urdf"))
    assert result.returncode == 2
    assert f"{bad}:3: XML: malformed XML" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out.urdf").exists()


def test_missing_file_and_unknown_output_extension(tmp_path):
    result = run_cli("describe", str(tmp_path / "nope.urdf"))
    assert result.returncode == 2 and "file not found" in result.stderr
    result = run_cli("convert", "urdf/planar2.urdf", str(tmp_path / "out.sdf"))
    assert result.returncode == 2 and "unknown extension" in result.stderr


def test_warnings_go_to_stderr_without_failing(tmp_path):
    tri = tmp_path / "tri.urdf"
    tri.write_text('<robot name="t">\n<link name="a">\n<inertial><mass value="1"/>'
                   '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.5"/></inertial></link>\n</robot>\n')
    result = run_cli("describe", str(tri))
    assert result.returncode == 0
    assert f"warning: {tri}:3: link 'a' <inertial>: inertia violates the triangle inequality" in result.stderr


def test_no_subcommand_is_a_usage_error():
    result = run_cli()
    assert result.returncode == 2 and "usage: robot-core" in result.stderr


# --- in-process checks of what describe prints and convert writes ----------------------------------------------
DATA_URDF = REPO / "test" / "data" / "urdf"


def test_describe_every_joint_type_dofs_mass_and_all_chains(capsys):
    assert main(["describe", str(DATA_URDF / "joints.urdf")]) == 0
    out = capsys.readouterr().out
    assert "links: 9, joints: 8, total mass: 7 kg" in out
    for line in (
        "revolute                     revolute   axis (0 0 1) [-1.5, 2.5] rad, effort 40, velocity 1.5",
        "continuous                   continuous axis (0 1 0) unbounded, effort 5, velocity 6",
        "prismatic                    prismatic  axis (0.707107 0.707107 0) [0, 0.2] m, effort 100, velocity 0.5",
        "floating                     floating   6 DOF (x y z + rotation), unbounded",
        "planar                       planar     3 DOF in the plane with normal (0 0 1), unbounded",
        "mimic                        revolute   axis (0 0 1) [-3, 3] rad, effort 10, velocity 1 "
        "(mimic of revolute x-2 + 0.5)",
    ):
        assert f"  {line}\n" in out, line
    assert "  fixed " not in out.split("degrees of freedom")[1].split("chains")[0]  # fixed joints are no DOF
    # one chain per leaf, root first, fixed joints included
    assert "base -> l_floating (4 movable joints): revolute -> continuous -> prismatic -> fixed -> floating" in out
    assert "base -> l_default_axis (3 movable joints): planar -> mimic -> default_axis" in out
    assert out.count(" movable joints): ") == 2


def test_describe_g_file_shows_initial_positions(capsys):
    assert main(["describe", str(REPO / "urdf" / "planar2.g")]) == 0
    out = capsys.readouterr().out
    assert "robot 'planar2'" in out and "total mass: 4.8 kg" in out
    assert "joint1                       revolute   axis (0 1 0) [-3, 3] rad, effort 30, velocity 3, initial -0.4\n" \
        in out
    assert "base_link -> tip (2 movable joints): joint1 -> joint2 -> tip_joint" in out


def test_describe_one_sided_and_missing_limits():
    model = RobotModel("r")
    for name in ("a", "b", "c"):
        model.links[name] = Link(name)
    model.joints["half"] = Joint("half", "prismatic", "a", "b", limit=Limit(None, 0.5, 1.0, 2.0))
    model.joints["free"] = Joint("free", "revolute", "b", "c")
    text = describe(model)
    assert "half                         prismatic  axis (1 0 0) [-inf, 0.5] m, effort 1, velocity 2" in text
    assert "free                         revolute   axis (1 0 0) unbounded\n" in text + "\n"


def _loss_free(differences: list[str], allowed: tuple[str, ...]) -> list[str]:
    return [d for d in differences if not any(a in d for a in allowed)]


def test_convert_urdf_to_g_and_back(tmp_path, capsys):
    g_file, back = tmp_path / "planar2.g", tmp_path / "planar2_back.urdf"
    assert main(["convert", str(REPO / "urdf" / "planar2.urdf"), str(g_file)]) == 0
    assert main(["convert", str(g_file), str(back)]) == 0
    err = capsys.readouterr().err
    assert "warning: robot 'planar2': .g files cannot express 1 <ros2_control> block(s), 4 <rbc> tag(s)" in err
    assert "URDF has no place for the initial positions of joint(s) joint1, joint2" in err
    original, via_g, again = (load_robot(p) for p in (REPO / "urdf" / "planar2.urdf", g_file, back))
    # What .g cannot hold (materials, rbc, ros2_control, collision names) is the only difference.
    allowed = ("material", ".rbc", "ros2_control", "collisions[0].name", "initial_position")
    assert _loss_free(model_differences(original, via_g, atol=1e-12), allowed) == []
    assert via_g.joints["joint1"].initial_position == -0.4  # the ros2_control initial_value became q:
    assert _loss_free(model_differences(via_g, again), ("initial_position",)) == []


def test_convert_g_to_urdf_keeps_capsules_and_unbounded_joints_standard(tmp_path):
    source = REPO / "test" / "data" / "g" / "joint_types.g"
    out = tmp_path / "joint_types.urdf"
    assert main(["convert", str(source), str(out)]) == 0
    text = out.read_text()
    assert "<capsule" not in text and 'robot_core_shape="capsule"' in text
    assert _loss_free(model_differences(load_robot(source), load_robot(out)), ("initial_position",)) == []


# --- broken descriptions: one line naming file, line and element, exit 2, for describe and convert ---------------
_TWO_LINKS = '<robot name="r">\n<link name="a"/>\n<link name="b"/>\n'
BROKEN = [
    ("truncated.urdf", _TWO_LINKS + '<joint name="j" type="fixed"><parent link="a"/><chi', 4, "XML: malformed XML"),
    ("truncated.urdf.xacro", '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">\n<link name="a"/>\n'
     '<xacro:property name="l" value="1"/>\n<link name="b', 4, "xacro"),
    ("no_parent.urdf", _TWO_LINKS + '<joint name="j" type="fixed"><parent link="zz"/><child link="b"/></joint>\n'
     '</robot>\n', 4, "joint 'j': parent link 'zz' does not exist"),
    ("cycle.urdf", '<robot name="r">\n<link name="a"/>\n<link name="b"/>\n<link name="c"/>\n'
     '<joint name="j1" type="fixed"><parent link="b"/><child link="c"/></joint>\n'
     '<joint name="j2" type="fixed"><parent link="c"/><child link="b"/></joint>\n</robot>\n', 6,
     "joint 'j2': kinematic cycle"),
    ("nan.urdf", _TWO_LINKS + '<joint name="j" type="fixed"><parent link="a"/><child link="b"/>\n'
     '<origin xyz="0 nan 0"/></joint>\n</robot>\n', 5,
     "joint 'j' <origin>: attribute xyz=\"0 nan 0\" must be 3 finite"),
    ("inf.urdf", _TWO_LINKS + '<joint name="j" type="fixed"><parent link="a"/><child link="b"/>\n'
     '<origin rpy="0 inf 0"/></joint>\n</robot>\n', 5,
     "joint 'j' <origin>: attribute rpy=\"0 inf 0\" must be 3 finite"),
    ("brace.g", "base { mass: 1 }\narm (base) {\n  mass: 1, shape: box, size: [1 1 1]\n\nhand (arm) { mass: 1 }\n", 2,
     "frame 'arm': '{' is not closed by a matching '}' (reached 'hand' on line 5)"),
    ("cycle.g", "a { }\nb (a) { }\nc (b) { }\nEdit a (c): { }\n", 4,
     "frame 'a': kinematic cycle: a -> b -> c -> a"),
    ("no_parent.g", "a { }\nb (a) { }\nc (bb) { }\n", 3, "frame 'c': unknown parent frame 'bb'"),
    ("brace_at_end.g", "base { mass: 1 }\narm (base) { mass: 1,\n  shape: box, size: [1 1 1]\n", 2,
     "frame 'arm': '{' is not closed by a matching '}' (reached the end of the file)"),
]


@pytest.mark.parametrize(("name", "text", "line", "message"), BROKEN, ids=[b[0] for b in BROKEN])
@pytest.mark.parametrize("command", ["describe", "convert"])
def test_broken_description_is_one_line_and_exit_2(tmp_path, capsys, command, name, text, line, message):
    bad = tmp_path / name
    bad.write_text(text)
    out = tmp_path / ("out.urdf" if name.endswith(".g") else "out.g")
    argv = [command, str(bad)] + ([str(out)] if command == "convert" else [])
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"error: {bad}:{line}: "), lines[0]
    assert message in lines[0], lines[0]
    assert "Traceback" not in captured.err and captured.out == ""
    assert not out.exists()


MJCF_ARM = REPO / "test" / "data" / "mjcf" / "two_link_arm.xml"


def test_describe_mjcf_prints_its_joints():
    result = run_cli("describe", str(MJCF_ARM))
    assert result.returncode == 0, result.stderr
    assert "robot 'two_link_arm'" in result.stdout
    assert "degrees of freedom (2 actuated):" in result.stdout
    assert "shoulder" in result.stdout and "[-2, 2] rad, effort 40" in result.stdout
    assert "elbow" in result.stdout and "[-2.5, 2.5] rad, effort 20" in result.stdout
    assert "shoulder                     position from actuator 'shoulder_servo' (kp 200, kd 10)" in result.stdout
    scene = run_cli("describe", str(REPO / "test" / "data" / "mjcf" / "scene_box_camera.xml"))
    assert scene.returncode == 0 and "world bodies (not links): crate" in scene.stdout


def test_broken_mjcf_exits_2_with_one_line(tmp_path):
    bad = tmp_path / "broken.xml"
    bad.write_text(MJCF_ARM.read_text().replace('type="hinge" axis="0 1 0" range="-2 2"', 'type="twist"'))
    result = run_cli("describe", str(bad))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {bad}:") and "twist" in lines[0]
    assert "Traceback" not in result.stderr


def test_convert_mjcf_to_urdf_warns_once_about_what_urdf_cannot_carry(tmp_path):
    out = tmp_path / "scene.urdf"
    result = run_cli("convert", str(REPO / "test" / "data" / "mjcf" / "scene_box_camera.xml"), str(out))
    assert result.returncode == 0, result.stderr
    carried = [line for line in result.stderr.splitlines() if "cannot carry from the MJCF" in line]
    assert len(carried) == 1 and "camera" in carried[0] and "crate" in carried[0]
    back = load_robot(out)
    assert back.scalar_joint_names() == ["swing"]


def test_convert_urdf_to_mjcf_and_back(tmp_path):
    out = tmp_path / "planar2.xml"
    result = run_cli("convert", str(REPO / "urdf" / "planar2.urdf"), str(out))
    assert result.returncode == 0, result.stderr
    assert "MJCF cannot carry" in result.stderr
    assert out.read_text().lstrip().startswith("<mujoco")
    back = run_cli("describe", str(out))
    assert back.returncode == 0 and "joint1" in back.stdout and "joint2" in back.stdout
