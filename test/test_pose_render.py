"""Offscreen rendering of a robot pose (the demo's final_pose.png): a real picture, or a clear error."""

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
