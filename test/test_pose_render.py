"""Offscreen rendering of a robot pose (the demo's final_pose.png) and of a filmstrip of poses with the world's
objects moved (the pick_place demo's pick_place.png): a real picture, or a clear error."""

from __future__ import annotations

import pytest
from ros_harness import REPO

from robot_core.demo.pose_render import RenderError, render_with_fallback


def test_renders_the_arm_at_a_pose_with_the_first_working_backend(tmp_path):
    import matplotlib.image

    out = tmp_path / "pose.png"
    try:
        facts = render_with_fallback(REPO / "urdf" / "rc_arm.urdf", {"joint1": 0.5, "joint4": 1.2, "bogus": 1.0},
                                     out, goal=[0.3, 0.1, 0.4], caption="test pose")
    except RenderError as exc:
        pytest.skip(f"no OpenGL backend on this machine: {exc}")
    assert facts["backend"] in ("egl", "osmesa", "glfw")
    assert facts["joints"] == {"joint1": 0.5, "joint4": 1.2}  # unknown joints are ignored
    img = matplotlib.image.imread(out)
    assert img.shape[:2] == (720, 960) and img[..., :3].std() > 0.05


def test_every_backend_failing_is_one_error_naming_each(tmp_path):
    with pytest.raises(RenderError, match=r"no_such_gl: .*; other_gl: .*libosmesa6"):
        render_with_fallback(REPO / "urdf" / "rc_arm.urdf", {}, tmp_path / "x.png",
                             backends=["no_such_gl", "other_gl"])


def test_filmstrip_shows_each_frames_pose_and_objects(tmp_path):
    """Three frames in the table-top world: the first and last alike, the middle one with the arm and the small box
    elsewhere. Alike frames render alike, the different one differently (each frame's state is applied)."""
    import matplotlib.image

    home = {f"joint{i}": q for i, q in enumerate([0.0, 0.3, 0.0, 1.9, 0.0, 0.94, 0.0], start=1)}
    away = {**home, "joint1": 0.6, "joint2": 0.7, "finger_left_joint": 0.03}
    frames = [{"positions": home, "objects": {"box_small": [0.45, -0.18, 0.22]}, "caption": "1. start"},
              {"positions": away, "objects": {"box_small": [0.40, -0.05, 0.35, 0.92, 0.0, 0.0, 0.38]},
               "caption": "2. away"},
              {"positions": home, "objects": {"box_small": [0.45, -0.18, 0.22], "no_such_box": [0, 0, 1]},
               "caption": "3. back"}]
    out = tmp_path / "strip.png"
    try:
        facts = render_with_fallback(REPO / "urdf" / "rc_arm.urdf", {}, out, caption="test strip", frames=frames,
                                     world=str(REPO / "config" / "worlds" / "table_top.yaml"))
    except RenderError as exc:
        pytest.skip(f"no OpenGL backend on this machine: {exc}")
    assert facts["frames"] == 3 and facts["objects_missing"] == ["no_such_box"]
    first, middle, last = facts["pixel_mean"]
    assert first == pytest.approx(last, abs=1e-9) and abs(middle - first) > 0.05
    img = matplotlib.image.imread(out)
    assert img.shape[1] > 2 * img.shape[0] and img[..., :3].std() > 0.05  # three tiles side by side
