"""The demo's video: the recorded joint positions of the run, replayed through MuJoCo's off-screen renderer frame by
frame and written by :mod:`robot_core.video` (MP4, or GIF where no encoder runs).

The run is shown in simulated time: ``round(duration * fps)`` frames, each at the joint positions interpolated at
its instant (:func:`robot_core.video.frame_times`), the world's free objects at their recorded poses (the
simulator's ``~/object_states``) interpolated at the same instant, so a carried box moves with the gripper. The
camera frames every shaped link over the whole run, from the same side as ``final_pose.png``. Like
:mod:`robot_core.demo.pose_render`, the rendering happens in a child process per OpenGL backend; the joint samples
go to it in a ``.npz`` file. No ROS.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from robot_core.demo.pose_render import GL_BACKENDS, _place_objects, _scene, run_in_gl_child

# an object's recorded poses: times (N,) and poses (N, 7: x y z qw qx qy qz)
ObjectSamples = dict[str, tuple[np.ndarray, np.ndarray]]

DEFAULT_FPS = 15.0
DEFAULT_SIZE = (640, 480)


def sample_positions(t: np.ndarray, values: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Joint positions (columns of ``values`` sampled at ``t``) linearly interpolated at the instants ``at``; a
    joint's gaps (NaN) are bridged, a joint never sampled stays NaN."""
    out = np.full((len(at), values.shape[1]), np.nan)
    for j in range(values.shape[1]):
        ok = np.isfinite(values[:, j])
        if ok.any():
            out[:, j] = np.interp(at, t[ok], values[ok, j])
    return out


def sample_object_poses(objects: ObjectSamples, at: np.ndarray) -> dict[str, np.ndarray]:
    """Each object's pose interpolated at the instants ``at`` ((len(at), 7); before its first sample it is at its
    first pose, after its last at its last); quaternions interpolated component-wise (each sample flipped to the
    hemisphere of the one before) and normalised, which at a demo's sampling rate (tf_rate) is the rotation."""
    out = {}
    for name, (t, poses) in objects.items():
        if len(t) == 0:
            continue
        poses = np.array(poses, float)
        for k in range(1, len(poses)):
            if np.dot(poses[k, 3:], poses[k - 1, 3:]) < 0.0:
                poses[k, 3:] *= -1.0
        pose = sample_positions(np.asarray(t, float), poses, at)
        pose[:, 3:] /= np.linalg.norm(pose[:, 3:], axis=1, keepdims=True)
        out[name] = pose
    return out


def render_video(robot_file: str | Path, joints: Sequence[str], t: np.ndarray, values: np.ndarray,
                 out: str | Path, *, fps: float = DEFAULT_FPS, world: str | None = None,
                 goal: Sequence[float] | None = None, size: tuple[int, int] = DEFAULT_SIZE,
                 objects: ObjectSamples | None = None) -> dict[str, Any]:
    """Render in this process with whatever ``MUJOCO_GL`` selected; returns the video's facts. ``objects``: the
    recorded poses of the world's free objects (of ``world``; others are reported in ``objects_missing``)."""
    import mujoco

    from robot_core.model import load_robot
    from robot_core.physics.engine import PhysicsEngine
    from robot_core.video import VideoWriter, frame_times

    if len(t) == 0:
        raise ValueError("no joint samples to make a video of")
    times = frame_times(float(t[0]), float(t[-1]), fps)
    q = sample_positions(np.asarray(t, float), np.asarray(values, float), times)
    robot = load_robot(str(robot_file))
    engine = PhysicsEngine(robot, scene=_scene(goal, world, robot.root_link), include_visuals=True)
    model, data = engine.model, engine.data
    width, height = size
    model.vis.global_.offwidth = max(model.vis.global_.offwidth, width)
    model.vis.global_.offheight = max(model.vis.global_.offheight, height)
    columns = [(i, name) for i, name in enumerate(joints) if name in engine.joint_names]
    shaped = {n for n, link in robot.links.items() if link.visuals or link.collisions}
    object_poses = sample_object_poses(objects or {}, times)
    missing: set[str] = set()

    def pose(k: int) -> None:
        engine.set_joint_state({name: float(q[k, i]) for i, name in columns if np.isfinite(q[k, i])})
        missing.update(_place_objects(model, data, {name: p[k] for name, p in object_poses.items()}))
        mujoco.mj_forward(model, data)

    points = []
    for k in range(0, len(times), max(1, len(times) // 20)):
        pose(k)
        points += [p[:3, 3] for n, p in engine.link_poses().items() if n in shaped or not shaped]
    lo, hi = np.min(points, axis=0), np.max(points, axis=0)
    camera = mujoco.MjvCamera()
    camera.lookat[:] = (lo + hi) / 2.0
    camera.distance = max(0.8, 2.0 * float(np.linalg.norm(hi - lo)))
    camera.azimuth, camera.elevation = 135.0, -22.0
    # Hundreds of frames on a software rasteriser: no shadow map, reflections or multisampling (each cost several
    # times the plain frame; doc/sensors.md measured the shadow map alone at 3-14x).
    model.vis.quality.offsamples = 0
    renderer = mujoco.Renderer(model, height, width)
    renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
    renderer.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = 0
    try:
        with VideoWriter(out, fps) as video:
            for k in range(len(times)):
                pose(k)
                renderer.update_scene(data, camera=camera)
                video.add(renderer.render())
            info = video.close()
    finally:
        renderer.close()
    return {"file": str(info.path), "frames": info.frames, "fps": info.fps, "seconds": round(info.seconds, 3),
            "run_seconds": round(float(t[-1] - t[0]), 3), "encoder": info.encoder, "width": info.width,
            "height": info.height, "objects_moved": sorted(set(object_poses) - missing),
            "objects_missing": sorted(missing)}


def render_video_with_fallback(robot_file: str | Path, joints: Sequence[str], t: np.ndarray, values: np.ndarray,
                               out: str | Path, *, fps: float = DEFAULT_FPS, world: str | Path | None = None,
                               goal: Sequence[float] | None = None, backends: Sequence[str] = GL_BACKENDS,
                               timeout: float = 300.0, objects: ObjectSamples | None = None) -> dict[str, Any]:
    """:func:`render_video` in a child process per OpenGL backend; the facts plus ``backend``."""
    with tempfile.TemporaryDirectory(prefix="robot_core_video_") as tmp:
        samples = Path(tmp) / "samples.npz"
        arrays = {"t": np.asarray(t, float), "values": np.asarray(values, float)}
        for k, (name, (ot, poses)) in enumerate((objects or {}).items()):
            arrays[f"object{k}_t"], arrays[f"object{k}_poses"] = np.asarray(ot, float), np.asarray(poses, float)
            arrays[f"object{k}_name"] = np.array(name)
        np.savez(samples, **arrays)
        request = json.dumps({"robot": str(robot_file), "joints": list(joints), "samples": str(samples),
                              "out": str(out), "fps": fps, "world": str(world) if world else None,
                              "goal": list(goal) if goal is not None else None})
        return run_in_gl_child("robot_core.demo.run_video", request, backends, timeout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="render a run's video (used by render_video_with_fallback)")
    parser.add_argument("request", help="JSON: robot, joints, samples (.npz with t, values), out, fps, world, goal")
    req = json.loads(parser.parse_args(argv).request)
    with np.load(req["samples"]) as npz:
        t, values = npz["t"], npz["values"]
        objects = {str(npz[f"object{k}_name"]): (npz[f"object{k}_t"], npz[f"object{k}_poses"])
                   for k in range(sum(1 for key in npz.files if key.endswith("_name")))}
    facts = render_video(req["robot"], req["joints"], t, values, req["out"], fps=float(req["fps"]),
                         world=req.get("world"), goal=req.get("goal"), objects=objects)
    print(json.dumps(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
