"""Videos of rendered runs: an MP4 (H.264 through imageio-ffmpeg's bundled ffmpeg) or, where no encoder can run, an
animated GIF (Pillow), from RGB frames handed in one at a time.

No ROS, no MuJoCo: the demo (:mod:`robot_core.demo.run_video`) and the RL tools render the frames and pass them
here. ``VideoWriter(path, fps)`` + ``add(frame)`` + ``close() -> VideoInfo``; :func:`frame_times` says which
instants a run of a given length shows at a frame rate, so the frame count is ``round(duration * fps)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


class VideoError(RuntimeError):
    """A video that cannot be written (bad frame, bad rate); the message names the file."""


@dataclass(frozen=True)
class VideoInfo:
    path: Path  # the file written: the .mp4 asked for, or a .gif beside it when no encoder was available
    frames: int
    fps: float
    encoder: str  # "libx264 (imageio-ffmpeg)" or "gif (pillow): <why no mp4>"
    width: int
    height: int

    @property
    def seconds(self) -> float:
        return self.frames / self.fps


def ffmpeg_problem() -> str | None:
    """Why no MP4 can be encoded here (None when imageio-ffmpeg finds its ffmpeg)."""
    try:
        import imageio_ffmpeg

        imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def frame_times(start: float, end: float, fps: float) -> np.ndarray:
    """The instants a video of the run [start, end] shows at ``fps``: ``round((end - start) * fps)`` frames, the
    first at ``start`` (at least one frame)."""
    if not (fps > 0 and math.isfinite(fps)):
        raise VideoError(f"frame rate must be a positive number, not {fps!r}")
    n = max(1, round((end - start) * fps))
    return start + np.arange(n) / fps


class VideoWriter:
    """Writes frames (H x W x 3 uint8, all the same size) to ``path``; MP4 when ffmpeg runs, else a GIF beside it."""

    def __init__(self, path: str | Path, fps: float, *, force_gif: bool = False) -> None:
        if not (fps > 0 and math.isfinite(fps)):
            raise VideoError(f"{path}: frame rate must be a positive number, not {fps!r}")
        self.requested = Path(path)
        self.fps = float(fps)
        problem = "asked for a GIF" if force_gif or self.requested.suffix.lower() == ".gif" else ffmpeg_problem()
        self.path = self.requested if problem is None else self.requested.with_suffix(".gif")
        self.encoder = "libx264 (imageio-ffmpeg)" if problem is None else f"gif (pillow): {problem}"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._mp4: Any = None
        self._gif: list[Any] = []
        self._size: tuple[int, int] | None = None
        self.frames = 0

    def add(self, frame: np.ndarray) -> None:
        frame = np.asarray(frame)
        if frame.ndim != 3 or frame.shape[2] not in (3, 4) or frame.dtype != np.uint8:
            raise VideoError(f"{self.path}: frame {self.frames} must be H x W x 3 uint8, not {frame.shape} "
                             f"{frame.dtype}")
        frame = frame[: frame.shape[0] // 2 * 2, : frame.shape[1] // 2 * 2, :3]  # H.264 4:2:0 wants even sizes
        size = (frame.shape[1], frame.shape[0])
        if self._size is None:
            self._size = size
        elif size != self._size:
            raise VideoError(f"{self.path}: frame {self.frames} is {size[0]}x{size[1]}, the video "
                             f"{self._size[0]}x{self._size[1]}")
        if self.path.suffix.lower() == ".gif":
            from PIL import Image

            self._gif.append(Image.fromarray(np.ascontiguousarray(frame)))
        else:
            if self._mp4 is None:
                import imageio.v2 as imageio

                self._mp4 = imageio.get_writer(str(self.path), format="FFMPEG", mode="I", fps=self.fps,
                                               codec="libx264", pixelformat="yuv420p", macro_block_size=1,
                                               quality=7, ffmpeg_log_level="error")
            self._mp4.append_data(np.ascontiguousarray(frame))
        self.frames += 1

    def close(self) -> VideoInfo:
        if self.frames == 0:
            raise VideoError(f"{self.path}: no frame was added")
        if self._mp4 is not None:
            self._mp4.close()
            self._mp4 = None
        if self._gif:
            first, *rest = self._gif
            first.save(self.path, save_all=True, append_images=rest, duration=round(1000 / self.fps), loop=0)
            self._gif = []
        assert self._size is not None
        return VideoInfo(self.path, self.frames, self.fps, self.encoder, *self._size)

    def __enter__(self) -> VideoWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._mp4 is not None:
            self._mp4.close()


def count_frames(path: str | Path) -> int:
    """The number of frames in a written MP4 (decoded by ffmpeg) or GIF."""
    path = Path(path)
    if path.suffix.lower() == ".gif":
        from PIL import Image

        with Image.open(path) as im:
            return int(getattr(im, "n_frames", 1))
    import imageio_ffmpeg

    return int(imageio_ffmpeg.count_frames_and_secs(str(path))[0])
