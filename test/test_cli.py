"""The robot-core command line, run as a real subprocess with the project's Python."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from robot_core.model import load_robot
from robot_core.model.model_compare import model_differences

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
    assert model_differences(load_robot(RC_ARM_XACRO), load_robot(out)) == []


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
