"""The demo's record and results, without ROS: commanded vs. actual joint positions over (simulated) time, the
measured wrist wrench and the last camera frame, goal outcomes, tracking-error metrics, the plot, the camera image
and the summary files.

The demo node feeds samples in as they arrive; everything here is plain numpy/matplotlib so it is unit-tested
with synthetic data.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


@dataclass
class Phase:
    """A stretch of the demo (one goal), in simulated seconds."""

    name: str
    start: float
    end: float | None = None


@dataclass
class GoalOutcome:
    """One goal's result as the summary reports it."""

    name: str
    interface: str
    success: bool
    result: str
    message: str = ""
    sim_seconds: float = math.nan
    max_tracking_error: float = math.nan
    details: dict[str, Any] = field(default_factory=dict)


class TrackingLog:
    """Thread-safe time series of actual and commanded joint positions for a fixed joint list."""

    def __init__(self, joints: Sequence[str]):
        self.joints = list(joints)
        self._index = {j: i for i, j in enumerate(self.joints)}
        self._lock = threading.Lock()
        self._actual: list[tuple[float, np.ndarray]] = []
        self._commanded: list[tuple[float, np.ndarray]] = []
        self._wrench: list[tuple[float, np.ndarray]] = []  # (t, [fx, fy, fz, tx, ty, tz])
        self._frame: tuple[float, np.ndarray] | None = None  # the last camera image (t, H x W x 3 uint8)
        self._frames = 0
        self._objects: dict[str, list[tuple[float, np.ndarray]]] = {}  # free object -> (t, x y z qw qx qy qz)
        self.phases: list[Phase] = []

    def _row(self, names: Sequence[str], values: Sequence[float]) -> np.ndarray | None:
        row = np.full(len(self.joints), np.nan)
        hit = False
        for n, v in zip(names, values, strict=False):
            i = self._index.get(n)
            if i is not None:
                row[i] = float(v)
                hit = True
        return row if hit else None

    def add_actual(self, t: float, names: Sequence[str], positions: Sequence[float]) -> None:
        row = self._row(names, positions)
        if row is not None:
            with self._lock:
                self._actual.append((float(t), row))

    def add_commanded(self, t: float, names: Sequence[str], positions: Sequence[float]) -> None:
        row = self._row(names, positions)
        if row is not None:
            with self._lock:
                self._commanded.append((float(t), row))

    def add_wrench(self, t: float, force: Sequence[float], torque: Sequence[float]) -> None:
        """One measured wrench (N, N m), e.g. from a force_torque_sensor_broadcaster's WrenchStamped."""
        row = np.array([*force, *torque], dtype=float)
        if row.shape != (6,):
            raise ValueError(f"a wrench is 3 forces and 3 torques, got {row.size} values")
        with self._lock:
            self._wrench.append((float(t), row))

    def wrench(self) -> tuple[np.ndarray, np.ndarray]:
        """(t, N x 6 [fx, fy, fz, tx, ty, tz]) in time order."""
        with self._lock:
            return self._arrays(list(self._wrench), 6)

    def wrench_at_rest(self) -> float:
        """Median |force| before the first phase began (the arm still at its start pose); NaN without samples."""
        t, w = self.wrench()
        with self._lock:
            start = self.phases[0].start if self.phases else math.inf
        sel = t < start
        return float(np.median(np.linalg.norm(w[sel, :3], axis=1))) if sel.any() else math.nan

    def add_object_poses(self, t: float, poses: dict[str, Sequence[float]]) -> None:
        """The world's free objects at ``t``: name -> (x, y, z, qw, qx, qy, qz), for the run's video."""
        with self._lock:
            for name, pose in poses.items():
                row = np.asarray(pose, float)
                if row.shape != (7,):
                    raise ValueError(f"object '{name}': a pose is x y z qw qx qy qz, got {row.size} values")
                self._objects.setdefault(name, []).append((float(t), row))

    def object_poses(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """name -> (t, N x 7 poses) in time order."""
        with self._lock:
            return {name: self._arrays(list(rows), 7) for name, rows in self._objects.items()}

    def set_camera_frame(self, t: float, image: np.ndarray) -> None:
        """Keep the latest camera image (H x W x 3 uint8), replacing the previous one."""
        if image.ndim != 3 or image.shape[2] != 3:
            raise ValueError(f"a camera frame is H x W x 3, got shape {image.shape}")
        with self._lock:
            self._frame = (float(t), image)
            self._frames += 1

    def camera_frame(self) -> tuple[float, np.ndarray] | None:
        with self._lock:
            return self._frame

    @property
    def camera_frames(self) -> int:
        """How many frames were offered (only the last is kept)."""
        with self._lock:
            return self._frames

    def begin(self, name: str, t: float) -> Phase:
        with self._lock:
            if self.phases and self.phases[-1].end is None:
                self.phases[-1].end = t
            phase = Phase(name, t)
            self.phases.append(phase)
            return phase

    def end(self, t: float) -> None:
        with self._lock:
            if self.phases and self.phases[-1].end is None:
                self.phases[-1].end = t

    @staticmethod
    def _arrays(samples: list[tuple[float, np.ndarray]], width: int) -> tuple[np.ndarray, np.ndarray]:
        if not samples:
            return np.zeros(0), np.zeros((0, width))
        samples = sorted(samples, key=lambda s: s[0])
        return np.array([s[0] for s in samples]), np.stack([s[1] for s in samples])

    def actual(self) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            return self._arrays(list(self._actual), len(self.joints))

    def commanded(self) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            return self._arrays(list(self._commanded), len(self.joints))

    def last_actual(self) -> dict[str, float]:
        with self._lock:
            if not self._actual:
                return {}
            row = self._actual[-1][1]
        return {j: float(v) for j, v in zip(self.joints, row, strict=True) if math.isfinite(v)}

    def tracking_error(self) -> tuple[np.ndarray, np.ndarray]:
        """(t, |commanded - actual| per joint) at every commanded sample, actual interpolated in time.

        Samples outside the span of the actual data are dropped (nothing to compare with).
        """
        ta, qa = self.actual()
        tc, qc = self.commanded()
        if ta.size < 2 or tc.size == 0:
            return np.zeros(0), np.zeros((0, len(self.joints)))
        keep = (tc >= ta[0]) & (tc <= ta[-1])
        tc, qc = tc[keep], qc[keep]
        err = np.full(qc.shape, np.nan)
        for j in range(len(self.joints)):
            ok = np.isfinite(qa[:, j])
            if ok.sum() >= 2:
                err[:, j] = np.abs(qc[:, j] - np.interp(tc, ta[ok], qa[ok, j]))
        return tc, err

    def max_tracking_error(self, start: float = -math.inf, end: float = math.inf) -> float:
        """Largest |commanded - actual| over all joints within [start, end] (NaN when nothing to compare)."""
        t, err = self.tracking_error()
        sel = (t >= start) & (t <= end)
        vals = err[sel]
        vals = vals[np.isfinite(vals)]
        return float(vals.max()) if vals.size else math.nan

    def phase_max_error(self, name: str) -> float:
        for p in self.phases:
            if p.name == name:
                return self.max_tracking_error(p.start, p.end if p.end is not None else math.inf)
        return math.nan


# --- plot -------------------------------------------------------------------------------------------------------
PHASE_COLORS = ("#dbe9f6", "#fde8cf", "#dff0d8", "#eadcf2", "#f5dede")
GAP = 0.25  # s: a series with no sample for longer is drawn with a break, not a straight line across


def with_gaps(t: np.ndarray, values: np.ndarray, gap: float = GAP) -> tuple[np.ndarray, np.ndarray]:
    """Insert a NaN row wherever consecutive samples are more than ``gap`` apart (matplotlib breaks there)."""
    if t.size < 2:
        return t, values
    cut = np.nonzero(np.diff(t) > gap)[0] + 1
    if cut.size == 0:
        return t, values
    t_out = np.insert(t.astype(float), cut, np.nan)
    v_out = np.insert(values.astype(float), cut, np.nan, axis=0)
    return t_out, v_out


def plot_tracking(log: TrackingLog, out: str | Path, title: str) -> dict[str, Any]:
    """Panels over simulated time: commanded (dashed) vs. actual (solid) per joint, tracking error, and the
    measured wrench when one was recorded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ta, qa = log.actual()
    tc, qc = log.commanded()
    te, err = log.tracking_error()
    tw, w = log.wrench()
    t0 = min([a for a in (ta[:1].tolist() + tc[:1].tolist())] or [0.0])
    n_actual, n_commanded, n_wrench = int(ta.size), int(tc.size), int(tw.size)
    ta, qa = with_gaps(ta, qa)
    tc, qc = with_gaps(tc, qc)
    te, err = with_gaps(te, err)
    tw, w = with_gaps(tw, w)
    ratios = [3, 2, 2] if n_wrench else [3, 2]
    fig, axes = plt.subplots(len(ratios), 1, figsize=(12, 8.5 + 3.0 * bool(n_wrench)), sharex=True,
                             gridspec_kw={"height_ratios": ratios}, constrained_layout=True)
    ax_q, ax_e = axes[0], axes[1]
    colors = plt.get_cmap("tab10").colors
    if n_wrench:
        _plot_wrench(axes[2], tw - t0, w)
    for ax in axes:
        for k, p in enumerate(log.phases):
            end = p.end if p.end is not None else (ta[-1] if ta.size else p.start)
            ax.axvspan(p.start - t0, end - t0, color=PHASE_COLORS[k % len(PHASE_COLORS)], alpha=0.8, lw=0)
        ax.grid(True, alpha=0.35)
    for j, name in enumerate(log.joints):
        c = colors[j % len(colors)]
        if ta.size:
            ax_q.plot(ta - t0, qa[:, j], color=c, lw=1.6, label=f"{name}")
        if tc.size:
            ax_q.plot(tc - t0, qc[:, j], color=c, lw=1.1, ls="--")
        if te.size:
            ax_e.plot(te - t0, err[:, j], color=c, lw=0.9, alpha=0.75)
    if te.size:
        with np.errstate(all="ignore"):
            worst = np.nanmax(np.where(np.isfinite(err), err, -np.inf), axis=1)
        worst[~np.isfinite(worst)] = np.nan
        ax_e.plot(te - t0, worst, color="black", lw=1.8, label="max over joints")
        ax_e.legend(loc="upper right", fontsize=9)
    _label_phases(ax_q, log.phases, t0)
    ax_q.set_ylabel("joint position [rad]")
    ax_q.set_title(title, pad=34)
    handles, labels = ax_q.get_legend_handles_labels()
    from matplotlib.lines import Line2D

    handles += [Line2D([], [], color="gray", lw=1.6), Line2D([], [], color="gray", lw=1.1, ls="--")]
    labels += ["actual (solid)", "commanded (dashed)"]
    ax_q.legend(handles, labels, loc="center left", bbox_to_anchor=(1.005, 0.5), fontsize=9, frameon=False)
    ax_e.set_ylabel("|commanded - actual| [rad]")
    axes[-1].set_xlabel("simulated time [s]")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return {"actual_samples": n_actual, "commanded_samples": n_commanded, "wrench_samples": n_wrench}


def _plot_wrench(ax: Any, t: np.ndarray, w: np.ndarray) -> None:
    """Force components and |F| (left axis, N), torque components (right axis, N m, dotted)."""
    with np.errstate(invalid="ignore"):
        magnitude = np.linalg.norm(w[:, :3], axis=1)
    for k, (name, c) in enumerate(zip("xyz", ("tab:red", "tab:green", "tab:blue"), strict=True)):
        ax.plot(t, w[:, k], color=c, lw=1.0, label=f"F{name}")
    ax.plot(t, magnitude, color="black", lw=1.6, label="|F|")
    ax.set_ylabel("wrist force [N]")
    twin = ax.twinx()
    for k, (name, c) in enumerate(zip("xyz", ("tab:red", "tab:green", "tab:blue"), strict=True)):
        twin.plot(t, w[:, 3 + k], color=c, lw=0.9, ls=":", label=f"T{name}")
    twin.set_ylabel("wrist torque [N m] (dotted)")
    handles, labels = ax.get_legend_handles_labels()
    more, more_labels = twin.get_legend_handles_labels()
    ax.legend(handles + more, labels + more_labels, loc="center left", bbox_to_anchor=(1.06, 0.5), fontsize=9,
              frameon=False, title="measured wrench", title_fontsize=9)


def write_camera_frame(image: np.ndarray, out: str | Path) -> dict[str, Any]:
    """Save a camera image (H x W x 3 uint8) as PNG; its size and pixel spread (0 for a blank frame)."""
    import matplotlib.image

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    matplotlib.image.imsave(out, image)
    return {"width": int(image.shape[1]), "height": int(image.shape[0]), "pixel_std": float(image.std())}


def _label_phases(ax: Any, phases: list[Phase], t0: float) -> None:
    """Numbered phase names above the plot, centred on their span; close neighbours alternate rows."""
    lo, hi = ax.get_xlim()
    prev_center, row = -math.inf, 1
    for k, p in enumerate(phases):
        end = p.end if p.end is not None else p.start
        center = (p.start + end) / 2 - t0
        row = 1 - row if center - prev_center < 0.22 * (hi - lo) else 0
        ax.text(center, 1.01 + 0.05 * row, f"{k + 1}: {p.name}", transform=ax.get_xaxis_transform(), fontsize=9,
                va="bottom", ha="center", color="#333333")
        prev_center = center


# --- summary ----------------------------------------------------------------------------------------------------
def _clean(value: Any) -> Any:
    """JSON-safe: NaN/inf become None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, np.generic):
        return _clean(value.item())
    return value


def summary_dict(goals: Sequence[GoalOutcome], **facts: Any) -> dict[str, Any]:
    errors = [g.max_tracking_error for g in goals if math.isfinite(g.max_tracking_error)]
    return _clean({
        "success": bool(goals) and all(g.success for g in goals),
        "goals": [asdict(g) for g in goals],
        "max_tracking_error_rad": max(errors) if errors else math.nan,
        **facts,
    })


def _fmt(v: Any, unit: str = "", digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    if isinstance(v, float):
        return f"{v:.{digits}g}{unit}"
    return f"{v}{unit}"


def summary_text(summary: dict[str, Any]) -> str:
    lines = [f"robot_core demo: {'SUCCESS' if summary['success'] else 'FAILED'}"]
    for key, label in (("robot", "robot"), ("mode", "mode"), ("gl_backend", "rendering")):
        if key in summary:
            lines.append(f"  {label}: {summary[key]}")
    lines.append("  goals:")
    for g in summary["goals"]:
        mark = "ok  " if g["success"] else "FAIL"
        extra = "".join(f", {k} {_fmt(v)}" for k, v in g.get("details", {}).items() if not isinstance(v, list))
        lines.append(f"    [{mark}] {g['name']:<34s} {g['interface']:<26s} result {g['result']}; "
                     f"max tracking error {_fmt(g['max_tracking_error'], ' rad')}; "
                     f"{_fmt(g['sim_seconds'], ' s', 3)} sim{extra}")
        if g.get("message") and not g["success"]:
            lines.append(f"           {g['message']}")
    lines.append(f"  max tracking error: {_fmt(summary.get('max_tracking_error_rad'), ' rad')}")
    if "real_time_factor" in summary:
        lines.append(f"  achieved real-time factor: {_fmt(summary['real_time_factor'], '', 3)} "
                     f"({_fmt(summary.get('sim_seconds'), ' s', 4)} simulated in "
                     f"{_fmt(summary.get('wall_seconds'), ' s', 4)} wall)")
    wrench = summary.get("wrench")
    if wrench:
        lines.append(f"  wrist wrench: {wrench.get('samples', 0)} samples on {wrench.get('topic')} (plotted in "
                     f"tracking.png); |F| at rest {_fmt(wrench.get('force_at_rest_n'), ' N')}"
                     + (f" (the hand's weight: {_fmt(wrench['hand_weight_n'], ' N')})"
                        if wrench.get("hand_weight_n") is not None else ""))
    camera = summary.get("camera")
    if camera:
        if camera.get("frames"):
            lines.append(f"  camera: last of {camera['frames']} frames from {camera.get('topic')} "
                         f"({camera.get('width')}x{camera.get('height')}, t = {_fmt(camera.get('stamp'), ' s', 4)}) "
                         "saved as camera.png")
        else:
            lines.append(f"  camera: no frame from {camera.get('topic')}: {camera.get('note', 'none received')}")
    if summary.get("world"):
        lines.append(f"  world: {summary['world']}")
    video = summary.get("video")
    if video:
        lines.append(f"  video: {video['frames']} frames at {_fmt(video.get('fps'))} fps = "
                     f"{_fmt(video.get('run_seconds'), ' s', 4)} of the run ({video.get('encoder')})"
                     + (f"; objects moving as recorded: {', '.join(video['objects_moved'])}"
                        if video.get("objects_moved") else "")
                     if video.get("frames") else f"  video: none: {video.get('note')}")
    recording = summary.get("recording")
    if recording:
        lines.append(f"  recording: {recording['messages']} messages on {len(recording['topics'])} topics "
                     "(robot-core play run.mcap, ros2 bag, Foxglove)" if "messages" in recording
                     else f"  recording: none: {recording.get('note')}")
    for k, v in summary.get("files", {}).items():
        lines.append(f"  {k}: {v}")
    return "\n".join(lines)


def write_summary(summary: dict[str, Any], out_dir: str | Path) -> tuple[Path, Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    js, txt = out_dir / "summary.json", out_dir / "summary.txt"
    js.write_text(json.dumps(summary, indent=2) + "\n")
    txt.write_text(summary_text(summary) + "\n")
    return js, txt
