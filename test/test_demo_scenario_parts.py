"""The ROS-free parts of the pick_place and drive demo scenarios: the demo's --scenario option, the IK of the
pick-and-place tool lines on rc_arm over the table_top world's box, the drive's frame change and both plots."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pytest

from robot_core.demo.cli import configure_cli
from robot_core.demo.scenarios import DEFAULT, SCENARIOS, drive, pick_place

REPO = Path(__file__).resolve().parents[1]
HOME = np.array([0.0, 0.3, 0.0, 1.9, 0.0, 0.94, 0.0])  # rc_arm's initial pose


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    configure_cli(parser)
    return parser


def test_scenario_option_picks_a_registered_scenario_and_defaults_to_the_arm():
    assert DEFAULT == "arm" and {"arm", "pick_place", "drive"} <= set(SCENARIOS)
    assert _parser().parse_args([]).scenario == "arm"
    assert _parser().parse_args(["--scenario", "drive"]).scenario == "drive"
    with pytest.raises(SystemExit):
        _parser().parse_args(["--scenario", "dance"])


def test_scenarios_bring_up_files_that_exist():
    from robot_core.bringup.plan import BringupOptions, make_plan

    for name in ("pick_place", "drive"):
        s = SCENARIOS[name]
        plan = make_plan(BringupOptions.create(robot=s.robot, mode="topic", **s.bringup))
        assert plan.rbc is None and plan.simulator is not None
        assert "gripper_action_controller" in plan.active_controllers() or name == "drive"
    assert "diff_drive_controller" in make_plan(BringupOptions.create(
        robot=SCENARIOS["drive"].robot, **SCENARIOS["drive"].bringup)).active_controllers()


def test_pick_place_tool_lines_are_reachable_and_straight():
    """Every move of the scenario, from the home pose over the small box of table_top.yaml: IK converges along
    each line, the tool ends where asked, and no joint jumps between neighbouring points (one branch)."""
    import yaml

    from robot_core.kinematics import SerialKinematicChain
    from robot_core.model import load_robot

    world = yaml.safe_load((REPO / "config" / "worlds" / "table_top.yaml").read_text())
    box = next(np.array(o["pose"]["xyz"]) for o in world["objects"] if o["name"] == pick_place.BOX)
    chain = SerialKinematicChain(load_robot(str(REPO / "urdf" / "rc_arm.urdf")), pick_place.BASE_LINK,
                                 pick_place.TOOL_LINK)
    up = np.array([0.0, 0.0, pick_place.HOVER])
    target = box + np.array(pick_place.PLACE_OFFSET)
    drop = target + np.array([0.0, 0.0, pick_place.RELEASE_HEIGHT])
    q = HOME
    for end in (box + up, box, box + up, target + up, drop, drop + up):
        qs = pick_place.tool_line(chain, q, end)
        assert len(qs) >= 2
        steps = np.abs(np.diff(np.array(qs), axis=0)).max()
        start = chain.forward_kinematics(qs[0])[:3, 3]
        for qk in qs[1:]:  # every point on the segment from start to end
            p = chain.forward_kinematics(qk)[:3, 3]
            off = np.linalg.norm(np.cross(p - start, end - start)) / max(np.linalg.norm(end - start), 1e-9)
            assert off < 1e-4
        pose = chain.forward_kinematics(qs[-1])
        print(f"to {np.round(end, 3)}: {len(qs) - 1} points, largest joint step {steps:.3f} rad")
        assert np.linalg.norm(pose[:3, 3] - end) < 1e-4
        assert np.allclose(pose[:3, :3], pick_place.DOWN, atol=1e-3)
        assert steps < 0.3
        q = qs[-1]


def test_tool_line_names_the_unreachable_target():
    from robot_core.demo.client import DemoStepError
    from robot_core.kinematics import SerialKinematicChain
    from robot_core.model import load_robot

    chain = SerialKinematicChain(load_robot(str(REPO / "urdf" / "rc_arm.urdf")), "base_link", "tcp")
    with pytest.raises(DemoStepError, match=r"IK of tcp to \[.*\] \(tool turning to z down\) in base_link"):
        pick_place.tool_line(chain, HOME, np.array([0.5, 0.0, 2.0]))


def test_drive_paths_are_expressed_from_the_start_pose():
    origin = (0.0, 2.0, 1.0, math.pi / 2)  # at (2, 1) facing +y
    rows = drive.relative([origin, (1.0, 2.0, 2.0, math.pi / 2), (2.0, 1.0, 2.0, math.pi)], origin)
    assert rows[0] == pytest.approx([0.0, 0.0, 0.0, 0.0], abs=1e-12)
    assert rows[1] == pytest.approx([1.0, 1.0, 0.0, 0.0], abs=1e-12)  # 1 m ahead
    assert rows[2] == pytest.approx([2.0, 1.0, 1.0, math.pi / 2], abs=1e-12)  # then 1 m to its left, turned left


def _image(path: Path) -> np.ndarray:
    import matplotlib.image

    return matplotlib.image.imread(path)


def test_drive_plot_draws_both_paths(tmp_path):
    t = np.linspace(0.0, 4.0, 81)
    side = np.clip(t, 0, 1)
    odom = [[float(k), float(s), 0.0, 0.0] for k, s in zip(t, side, strict=True)]
    truth = [[float(k), float(s) * 0.98, 0.01 * float(s), 0.0] for k, s in zip(t, side, strict=True)]
    files = drive.write_plot(tmp_path, {"paths": {"odometry": odom, "ground_truth": truth},
                                        "loop_closure_error_m": 0.031, "odometry_vs_truth_m": 0.02})
    image = _image(Path(files["drive"]))
    assert image.shape[0] >= 700 and image[..., :3].std() > 0.05
    # an unfinished run still gets its plot
    assert Path(drive.write_plot(tmp_path, {})["drive"]).is_file()


def test_pick_place_plot_draws_tool_and_box(tmp_path):
    tool = [[0.1 * k, 0.45 + 0.01 * k, -0.18, 0.34] for k in range(21)]
    box = [[0.1 * k, 0.45 + 0.01 * k, -0.18, 0.22] for k in range(21)]
    facts = {"paths": {"tool": tool, "box": box},
             "box": {"name": "box_small", "start": [0.45, -0.18, 0.22], "target": [0.65, -0.18, 0.22],
                     "final": [0.649, -0.18, 0.22]},
             "snapshots": [{"label": "start", "t": 0.0, "tool": [0.4, 0.0, 0.5], "box": [0.45, -0.18, 0.22]}]}
    pick_place.write_plot(tmp_path / "paths.png", facts)
    image = _image(tmp_path / "paths.png")
    assert image.shape[1] >= 1200 and image[..., :3].std() > 0.05


def test_pick_place_png_is_the_paths_plot_with_the_reason_when_no_filmstrip_can_be_made(tmp_path):
    """A run that stopped after its first step has too few moments for a filmstrip: pick_place.png is the plot and
    the summary says why (the same path is taken when no OpenGL backend renders)."""
    facts = {"robot_file": str(REPO / "urdf" / "rc_arm.urdf"), "paths": {},
             "snapshots": [{"label": "start", "t": 0.0, "tool": [0.4, 0.0, 0.5], "box": [0.45, -0.18, 0.22],
                            "positions": {"joint1": 0.0}, "objects": {}}]}
    files = pick_place.write_outputs(tmp_path, facts)
    assert facts["pick_place_png"].startswith("paths plot: only 1 of the filmstrip's moments were reached")
    assert _image(Path(files["pick_place"]))[..., :3].std() > 0.05 and Path(files["pick_place_paths"]).is_file()


def test_scenarios_needing_the_simulator_node_refuse_embedded_mode(tmp_path, capsys):
    from robot_core.demo.runner import run_demo

    for name in ("pick_place", "drive"):
        assert run_demo(SCENARIOS[name], tmp_path, "embedded") == 2
        assert f"scenario '{name}' runs in mode topic only, not 'embedded'" in capsys.readouterr().err
