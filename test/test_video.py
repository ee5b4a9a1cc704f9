"""Videos: robot_core.video writes MP4s (GIF without an encoder) whose decoded frame count is what was added, and
the demo's run video (demo/run_video.py) of a joint trajectory has run length x fps frames and shows the motion."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("imageio_ffmpeg")

from robot_core.video import VideoError, VideoWriter, count_frames, frame_times

REPO = Path(__file__).resolve().parent.parent


def _frames(n: int, h: int = 48, w: int = 64) -> list[np.ndarray]:
    out = []
    for k in range(n):
        f = np.zeros((h, w, 3), np.uint8)
        f[:, : (k * w) // max(1, n), 0] = 255  # a red bar that grows: frames differ
        out.append(f)
    return out


def test_mp4_frame_count_matches(tmp_path: Path) -> None:
    times = frame_times(0.0, 2.0, 12.5)
    assert len(times) == 25 and times[1] == pytest.approx(0.08)
    with VideoWriter(tmp_path / "a.mp4", fps=12.5) as video:
        for f in _frames(len(times)):
            video.add(f)
        info = video.close()
    assert info.path == tmp_path / "a.mp4" and info.encoder.startswith("libx264")
    assert (info.frames, info.width, info.height) == (25, 64, 48)
    assert count_frames(info.path) == 25
    import imageio.v2 as imageio

    last = imageio.mimread(str(info.path))[-1]
    assert last[:, :50, 0].mean() > 200 and last[:, 62:, 0].mean() < 60  # the bar, through the codec


def test_gif_fallback_and_odd_sizes(tmp_path: Path) -> None:
    with VideoWriter(tmp_path / "b.mp4", fps=10, force_gif=True) as video:
        for f in _frames(7, h=31, w=45):
            video.add(f)
        info = video.close()
    assert info.path == tmp_path / "b.gif" and info.encoder.startswith("gif")
    assert (info.width, info.height) == (44, 30) and count_frames(info.path) == 7


def test_bad_frames_are_refused(tmp_path: Path) -> None:
    video = VideoWriter(tmp_path / "c.mp4", fps=10)
    with pytest.raises(VideoError, match=r"c\.mp4: frame 0 must be H x W x 3 uint8"):
        video.add(np.zeros((10, 10), np.uint8))
    video.add(np.zeros((10, 10, 3), np.uint8))
    with pytest.raises(VideoError, match=r"frame 1 is 12x10, the video 10x10"):
        video.add(np.zeros((10, 12, 3), np.uint8))
    video.close()
    with pytest.raises(VideoError, match="frame rate"):
        VideoWriter(tmp_path / "d.mp4", fps=0)
    with pytest.raises(VideoError, match="no frame"):
        VideoWriter(tmp_path / "e.mp4", fps=5).close()


def test_run_video_of_the_arm(tmp_path: Path) -> None:
    """The demo's renderer: a 3 s run at 10 fps is 30 frames, and the arm moves between first and last."""
    from robot_core.demo.pose_render import RenderError
    from robot_core.demo.run_video import render_video_with_fallback, sample_positions

    t = np.linspace(0.0, 3.0, 301)
    values = np.stack([1.2 * t / 3.0, 0.6 * t / 3.0], axis=1)
    values[100:120, 1] = np.nan  # a gap in one joint's samples is bridged
    q = sample_positions(t, values, np.array([1.05, 3.0]))
    assert q[0, 1] == pytest.approx(0.21) and q[1, 0] == pytest.approx(1.2)
    try:
        facts = render_video_with_fallback(REPO / "urdf" / "rc_arm.urdf", ["joint1", "joint2"], t, values,
                                           tmp_path / "run.mp4", fps=10.0)
    except RenderError as exc:
        pytest.skip(f"no OpenGL backend here: {exc}")
    assert facts["frames"] == 30 and facts["run_seconds"] == pytest.approx(3.0)
    path = Path(facts["file"])
    assert count_frames(path) == 30
    import imageio.v2 as imageio

    frames = imageio.mimread(str(path), memtest=False)
    diff = np.abs(frames[0].astype(int) - frames[-1].astype(int)).mean()
    assert diff > 1.0, "first and last frame look the same: the arm did not move in the video"


def _red_box_pixels(frame: np.ndarray) -> np.ndarray:
    """(row, col) of table_top's box_small (rgb 0.8 0.1 0.1, lit and shaded), not the arm's orange."""
    r, g, b = (frame[..., i].astype(int) for i in range(3))
    return np.argwhere((r > 90) & (g < 70) & (b < 70) & (r > 2.5 * g))


def test_sampled_object_poses_interpolate_and_keep_unit_quaternions() -> None:
    from robot_core.demo.run_video import sample_object_poses

    half = np.sqrt(0.5)
    t = np.array([0.0, 1.0])
    poses = np.array([[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 2.0, -half, 0.0, 0.0, -half]])  # -q: same turn
    out = sample_object_poses({"box": (t, poses)}, np.array([-1.0, 0.5, 2.0]))["box"]
    np.testing.assert_allclose(out[:, :3], [[0, 0, 0], [0.5, 0, 1.0], [1.0, 0, 2.0]])
    np.testing.assert_allclose(np.linalg.norm(out[:, 3:], axis=1), 1.0)
    assert out[1, 3] > 0.9 and out[1, 6] > 0.3  # halfway to 90 deg about z (not through the flipped sign)


def test_run_video_moves_the_worlds_objects_as_recorded(tmp_path: Path) -> None:
    """The table-top world's red box lifted 0.3 m over the run: its pixels rise from the first frame to the last,
    the arm standing still."""
    from robot_core.demo.pose_render import RenderError
    from robot_core.demo.run_video import render_video_with_fallback

    t = np.linspace(0.0, 2.0, 21)
    values = np.zeros((len(t), 1))
    start = np.array([0.45, -0.18, 0.22, 1.0, 0.0, 0.0, 0.0])  # box_small where the file puts it
    poses = np.repeat(start[None], len(t), axis=0)
    poses[:, 2] += 0.3 * t / 2.0
    try:
        facts = render_video_with_fallback(REPO / "urdf" / "rc_arm.urdf", ["joint1"], t, values,
                                           tmp_path / "run.mp4", fps=5.0,
                                           world=REPO / "config" / "worlds" / "table_top.yaml",
                                           objects={"box_small": (t, poses), "not_there": (t, poses)})
    except RenderError as exc:
        pytest.skip(f"no OpenGL backend here: {exc}")
    assert facts["frames"] == 10
    assert facts["objects_moved"] == ["box_small"] and facts["objects_missing"] == ["not_there"]
    import imageio.v2 as imageio

    frames = imageio.mimread(str(facts["file"]), memtest=False)
    first, last = _red_box_pixels(frames[0]), _red_box_pixels(frames[-1])
    assert len(first) > 20 and len(last) > 20, (len(first), len(last))
    rise = first[:, 0].mean() - last[:, 0].mean()  # image rows grow downwards
    assert rise > 20, f"the box's pixels rose {rise:.1f} rows; it did not move up in the video"
