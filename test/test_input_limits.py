"""Inputs too big for their consumer get a clear refusal, never a crash or a flooded log (issue 13, fault 9).

A 1000-link chain is deeper than Python's stack; an alias bomb in a YAML file passes ``yaml.safe_load`` (aliases
stay shared references) and then explodes in rcl's parser; a 100 KB name from a request must not be echoed in
full into the logs.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from cm_helpers import CONTROLLERS_YAML, RC_ARM, CmClient
from rbc_helpers import Client, arm_urdf, start
from ros_harness import NodeProcess

from robot_core.bringup.plan import BringupConfigError, node_parameters
from robot_core.cli import main as cli_main
from robot_core.control.config import load_config
from robot_core.control.errors import ControlError
from robot_core.model import load_robot
from robot_core.nodes.spawner import SpawnerError, controller_in_param_file
from robot_core.text import clip, clip_all
from robot_core.yaml_guard import YamlLimitError, check_yaml_text

HUGE = "x" * 100_000


def _chain_urdf(path: Path, n: int) -> Path:
    parts = ['<robot name="chain">', '<link name="l0"/>']
    for i in range(1, n + 1):
        parts.append(f'<link name="l{i}"><inertial><mass value="0.1"/><inertia ixx="1e-3" ixy="0" ixz="0" '
                     f'iyy="1e-3" iyz="0" izz="1e-3"/></inertial></link>')
        parts.append(f'<joint name="j{i}" type="revolute"><parent link="l{i - 1}"/><child link="l{i}"/>'
                     f'<origin xyz="0 0 0.01"/><axis xyz="0 0 1"/>'
                     f'<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>')
    parts.append("</robot>")
    path.write_text("\n".join(parts))
    return path


def _bomb(path: Path, node: str = "controller_manager") -> Path:
    """Nine anchors, each a list of nine aliases of the one before: 9**9 strings once expanded."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
    lines += [f"{node}:", "  ros__parameters:", "    update_rate: 100", "    joint_state_broadcaster:",
              "      type: joint_state_broadcaster/JointStateBroadcaster", "    bomb: *l8"]
    path.write_text("\n".join(lines) + "\n")
    return path


# ------------------------------------------------------------------------------------------ deep trees
def test_describe_and_load_a_1000_link_chain(tmp_path):
    urdf = _chain_urdf(tmp_path / "chain.urdf", 1000)
    model = load_robot(urdf)
    assert len(model.links) == 1001 and len(model.chain("l0", "l1000")) == 1000
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["describe", str(urdf)]) == 0
    text = out.getvalue()
    assert "links: 1001, joints: 1000" in text
    assert f"{'  ' * 1000}  +- [j1000: revolute] l1000" in text  # the tree is complete and indented by depth
    assert "l0 -> l1000 (1000 movable joints)" in text


# ---------------------------------------------------------------------------------------------- YAML
def test_alias_bomb_is_refused_naming_the_file_everywhere_yaml_is_read(tmp_path):
    bomb = _bomb(tmp_path / "bomb.yaml")
    with pytest.raises(YamlLimitError, match=r"bomb\.yaml: YAML aliases expand"):
        check_yaml_text(bomb.read_text(), str(bomb))
    with pytest.raises(ControlError, match=r"bomb\.yaml: YAML aliases expand"):
        load_config(bomb)
    with pytest.raises(SpawnerError, match=r"bomb\.yaml.*YAML aliases expand"):
        controller_in_param_file(str(bomb), "joint_state_broadcaster")
    with pytest.raises(BringupConfigError, match=r"bomb\.yaml: YAML aliases expand"):
        node_parameters(bomb, "controller_manager")


def test_yaml_limits_leave_real_files_alone_and_catch_depth_and_size(tmp_path):
    check_yaml_text(CONTROLLERS_YAML.read_text(), str(CONTROLLERS_YAML))
    check_yaml_text("base: &b {kp: 1.0, kd: 0.1}\nj1: *b\nj2: {<<: *b, kp: 2.0}\n", "anchors.yaml")
    with pytest.raises(YamlLimitError, match=r"deep\.yaml: YAML nested"):
        check_yaml_text("a: " + "[" * 5000 + "]" * 5000, "deep.yaml")
    with pytest.raises(YamlLimitError, match=r"big\.yaml: YAML file of"):
        check_yaml_text("a: '" + "y" * 5_000_000 + "'", "big.yaml")


@pytest.mark.ros
@pytest.mark.parametrize("script", ["controller_manager", "simulator", "rbc"])
def test_node_given_an_alias_bomb_params_file_exits_1_naming_it(tmp_path, script):
    bomb = _bomb(tmp_path / "bomb.yaml", node=script)
    proc = NodeProcess.console_script(script, "--ros-args", "--params-file", str(bomb))
    try:
        code = proc.proc.wait(timeout=60)
    finally:
        proc.stop()
    out = proc.log_path.read_text()
    assert code == 1, out[-3000:]
    assert f"{bomb}: YAML aliases expand" in out, out[-3000:]
    assert "Traceback" not in out, out[-3000:]


# ------------------------------------------------------------------------------------------ long names
def test_clip():
    assert clip("joint1") == "joint1"
    assert clip(HUGE) == "x" * 80 + "...(100000 chars)"
    assert clip(HUGE, 10) == "x" * 10 + "...(100000 chars)"
    assert len(clip_all([HUGE] * 1000)) < 3000


@pytest.mark.ros
def test_controller_manager_does_not_echo_a_100kb_controller_name(ros, processes):
    cm = NodeProcess.console_script("controller_manager", "--ros-args", "--params-file", str(CONTROLLERS_YAML),
                                    "-p", f"robot_description_file:={RC_ARM}")
    processes.append(cm)
    cm.wait_for_output("controller manager ready", timeout=90)
    client = CmClient(ros.node("long_name_client"))
    for service in ("load_controller", "configure_controller", "cleanup_controller", "unload_controller"):
        res = client.call(service, name=HUGE)
        assert not res.ok
    res = client.switch(activate=[HUGE], strictness=2)
    assert not res.ok
    out = cm.output()
    assert "x" * 81 not in out, f"a 100 KB name was echoed into the log ({len(out)} chars of output)"
    assert "...(100000 chars)" in out, out[-2000:]


@pytest.mark.ros
def test_rbc_does_not_echo_a_100kb_name(ros, processes, tmp_path):
    rbc = start("rbc", "-p", f"urdf_path:={arm_urdf(tmp_path / 'arm.urdf')}")
    processes.append(rbc)
    rbc.wait_for_output("rbc ready", timeout=90)
    client = Client(ros)
    for res in (client.l2_ctrl("create_re", HUGE, "JR9"), client.l2_ctrl("destroy_re", name=HUGE),
                client.l2_ctrl(HUGE), client.set_vars([HUGE], ["q_ref"], [0.0]),
                client.set_vars(["joint1"], [HUGE], [0.0])):
        assert not res.success
        assert len(res.message) < 1000, len(res.message)
    out = rbc.output()
    assert "x" * 81 not in out, f"a 100 KB name was echoed into the log ({len(out)} chars of output)"
