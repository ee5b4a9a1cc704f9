"""Write rendered frames to a video (MP4 through imageio + imageio-ffmpeg) or an animated GIF (Pillow).

An ``.mp4`` (or ``.mkv``, ``.webm``, ``.avi``) path is encoded with ffmpeg; when no encoder is available the
frames go to a GIF beside it (same name, ``.gif``) and the caller is told so. A ``.gif`` path is written
with Pillow, which needs nothing else.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

VIDEO_SUFFIXES = (".mp4", ".mkv", ".webm", ".avi")
SUFFIXES = (*VIDEO_SUFFIXES, ".gif")


def check_record_path(path: str | Path) -> Path:
    """The path to record to, refused early (before any episode runs) when its format is unknown."""
    p = Path(path)
    if p.suffix.lower() not in SUFFIXES:
        raise ValueError(f"--record {p}: unknown video format '{p.suffix}' (use one of {', '.join(SUFFIXES)})")
    if not p.parent.is_dir():
        raise ValueError(f"--record {p}: folder {p.parent} does not exist")
    return p


def write_frames(path: str | Path, frames: list[np.ndarray], fps: float) -> Path:
    """Write ``frames`` (H x W x 3 uint8) to ``path``; returns the file actually written (a GIF when the
    video encoder is missing)."""
    p = check_record_path(path)
    if not frames:
        raise ValueError(f"--record {p}: no frames were rendered")
    if p.suffix.lower() in VIDEO_SUFFIXES:
        try:
            import imageio.v2 as imageio
            import imageio_ffmpeg  # noqa: F401  (the ffmpeg binary imageio uses)
        except ImportError:
            p = p.with_suffix(".gif")
        else:
            # 16-pixel multiples keep every codec happy without imageio resizing behind our back.
            with imageio.get_writer(p, fps=fps, codec="libx264", quality=7, macro_block_size=16) as writer:
                for frame in frames:
                    writer.append_data(_pad16(frame))
            return p
    from PIL import Image

    images = [Image.fromarray(f) for f in frames]
    images[0].save(p, save_all=True, append_images=images[1:], duration=max(1, round(1000 / fps)), loop=0)
    return p


def _pad16(frame: np.ndarray) -> np.ndarray:
    h, w = frame.shape[:2]
    ph, pw = -h % 16, -w % 16
    return frame if not (ph or pw) else np.pad(frame, ((0, ph), (0, pw), (0, 0)), mode="edge")
