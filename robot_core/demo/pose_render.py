"""Offscreen picture of a robot at given joint positions (MuJoCo renderer), e.g. the demo's final pose, and a
filmstrip: several such frames of one motion (joint positions and the world's free objects where they were), seen
by one camera and tiled into one picture.

MuJoCo picks its OpenGL platform from ``MUJOCO_GL`` when it is first imported, so a process can try only one.
:func:`render_with_fallback` therefore renders in a child process per backend -- EGL (headless GPU or Mesa's
software EGL), then OSMesa (pure software, Debian package ``libosmesa6``), then GLFW (needs a display) -- and
reports which one worked or why each failed. No ROS.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

GL_BACKENDS = ("egl", "osmesa", "glfw")


class RenderError(RuntimeError):
    """No OpenGL backend could render; the message lists what each one said."""


def _scene(goal: Sequence[float] | None, world: str | None = None, root_link: str | None = None) -> Any:
    """MjSpec hook: sky, a checkered floor, two lights, (optionally) a marker at a Cartesian goal and the objects
    of a YAML world file (doc/world.md) where the file puts them."""
    import dataclasses

    import mujoco

    world_hook = None
    if world:
        from robot_core.physics.world import load_world, scene_hook

        # our checkered floor replaces the world's plane
        world_hook = scene_hook(dataclasses.replace(load_world(world), floor=False), root_link)

    def hook(spec: Any) -> None:
        if world_hook is not None:
            world_hook(spec)
        spec.add_texture(name="rc_sky", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
                         builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT, rgb1=[0.55, 0.68, 0.85],
                         rgb2=[0.97, 0.98, 1.0], width=256, height=256)
        spec.add_texture(name="rc_floor", type=mujoco.mjtTexture.mjTEXTURE_2D,
                         builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, rgb1=[0.80, 0.82, 0.85],
                         rgb2=[0.70, 0.72, 0.76], width=300, height=300)
        mat = spec.add_material(name="rc_floor", texrepeat=[6, 6], reflectance=0.0, specular=0.1)
        mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "rc_floor"
        spec.worldbody.add_geom(name="rc_floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[1.2, 1.2, 0.05],
                                material="rc_floor", contype=0, conaffinity=0)
        spec.worldbody.add_light(pos=[1.2, -1.2, 2.5], dir=[-0.45, 0.45, -1.0], diffuse=[0.65, 0.65, 0.65],
                                 castshadow=True)
        spec.worldbody.add_light(pos=[-1.0, 1.0, 2.0], dir=[0.4, -0.4, -1.0], diffuse=[0.3, 0.3, 0.3],
                                 castshadow=False)
        if goal is not None:
            spec.worldbody.add_geom(name="rc_goal", type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.02, 0, 0],
                                    pos=list(goal), rgba=[0.1, 0.75, 0.25, 0.45], contype=0, conaffinity=0)

    return hook


def render_png(robot_file: str | Path, positions: Mapping[str, float], out: str | Path, *,
               goal: Sequence[float] | None = None, caption: str = "", width: int = 960,
               height: int = 720, world: str | None = None) -> dict[str, Any]:
    """Render in this process with whatever ``MUJOCO_GL`` selected; returns image facts (size, pixel spread)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import mujoco
    import numpy as np

    from robot_core.model import load_robot
    from robot_core.physics.engine import PhysicsEngine

    robot = load_robot(str(robot_file))
    engine = PhysicsEngine(robot, scene=_scene(goal, world, robot.root_link), include_visuals=True)
    known = {k: float(v) for k, v in positions.items() if k in engine.joint_names}
    engine.set_joint_state(known)
    model, data = engine.model, engine.data
    mujoco.mj_forward(model, data)
    model.vis.global_.offwidth = max(model.vis.global_.offwidth, width)
    model.vis.global_.offheight = max(model.vis.global_.offheight, height)
    model.vis.quality.shadowsize = 4096
    renderer = mujoco.Renderer(model, height, width)
    camera = mujoco.MjvCamera()
    # Frame the bounding box of the links that have a shape (robot-agnostic; a bare frame such as rc_arm's scene
    # camera, 1.5 m off the base, would shrink the robot), looking from the front-right, slightly from above.
    shaped = {n for n, link in robot.links.items() if link.visuals or link.collisions}
    poses = np.array([p[:3, 3] for n, p in engine.link_poses().items() if n in shaped or not shaped])
    lo, hi = poses.min(axis=0), poses.max(axis=0)
    camera.lookat[:] = (lo + hi) / 2.0
    camera.distance = max(0.8, 2.0 * float(np.linalg.norm(hi - lo)))
    camera.azimuth, camera.elevation = 135.0, -22.0
    renderer.update_scene(data, camera=camera)
    pixels = renderer.render()
    renderer.close()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig = plt.figure(figsize=(width / 100, height / 100), dpi=100)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.imshow(pixels)
    ax.set_axis_off()
    if caption:
        ax.text(12, height - 12, caption, fontsize=11, color="#202020", va="bottom", ha="left",
                bbox={"facecolor": "white", "alpha": 0.75, "edgecolor": "none", "pad": 4})
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return {"width": int(pixels.shape[1]), "height": int(pixels.shape[0]), "pixel_std": float(pixels.std()),
            "joints": known}


def _place_objects(model: Any, data: Any, objects: Mapping[str, Sequence[float]]) -> list[str]:
    """Put each named free object at (x, y, z[, qw, qx, qy, qz]) (its ``<name>:free`` joint); the names of those
    the model does not have."""
    import mujoco

    missing = []
    for name, pose in objects.items():
        jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, f"{name}:free")
        if jid < 0:
            missing.append(name)
            continue
        adr = int(model.jnt_qposadr[jid])
        data.qpos[adr:adr + 3] = list(pose)[:3]
        data.qpos[adr + 3:adr + 7] = list(pose)[3:7] if len(pose) >= 7 else [1.0, 0.0, 0.0, 0.0]
    return missing


def render_filmstrip(robot_file: str | Path, frames: Sequence[Mapping[str, Any]], out: str | Path, *,
                     world: str | None = None, title: str = "", columns: int = 3, width: int = 640,
                     height: int = 480) -> dict[str, Any]:
    """Frames of one motion tiled ``columns`` wide into one PNG, in this process (``MUJOCO_GL`` as selected).

    Each frame is ``{"positions": {joint: value}, "objects": {name: [x, y, z(, qw, qx, qy, qz)]}, "caption": str}``;
    every frame is seen by the same camera, framed on the robot at the first frame and the objects of all frames,
    so the robot and the objects visibly move from tile to tile."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import mujoco
    import numpy as np

    from robot_core.model import load_robot
    from robot_core.physics.engine import PhysicsEngine

    if not frames:
        raise ValueError("a filmstrip needs at least one frame")
    robot = load_robot(str(robot_file))
    engine = PhysicsEngine(robot, scene=_scene(None, world, robot.root_link), include_visuals=True)
    model, data = engine.model, engine.data
    model.vis.global_.offwidth = max(model.vis.global_.offwidth, width)
    model.vis.global_.offheight = max(model.vis.global_.offheight, height)
    model.vis.quality.shadowsize = 2048
    renderer = mujoco.Renderer(model, height, width)
    shaped = {n for n, link in robot.links.items() if link.visuals or link.collisions}
    camera = mujoco.MjvCamera()
    images, missing = [], set()
    for k, frame in enumerate(frames):
        engine.reset()  # a joint or object a frame does not name is where it starts, not where the last frame left it
        engine.set_joint_state({j: float(v) for j, v in frame.get("positions", {}).items() if j in engine.joint_names})
        missing.update(_place_objects(model, data, frame.get("objects") or {}))
        mujoco.mj_forward(model, data)
        if k == 0:
            points = [p[:3, 3] for n, p in engine.link_poses().items() if n in shaped or not shaped]
            points += [np.array(list(pose)[:3]) for f in frames for pose in (f.get("objects") or {}).values()]
            lo, hi = np.min(points, axis=0), np.max(points, axis=0)
            camera.lookat[:] = (lo + hi) / 2.0
            camera.distance = max(0.8, 1.5 * float(np.linalg.norm(hi - lo)))
            camera.azimuth, camera.elevation = 135.0, -28.0
        renderer.update_scene(data, camera=camera)
        images.append(renderer.render().copy())
    renderer.close()
    rows = -(-len(images) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(columns * width / 150, rows * height / 150 + 0.4), dpi=150,
                             squeeze=False)
    for ax in axes.flat:
        ax.set_axis_off()
    for ax, image, frame in zip(axes.flat, images, frames, strict=False):
        ax.imshow(image)
        if frame.get("caption"):
            ax.text(8, 8, frame["caption"], fontsize=8, color="#202020", va="top", ha="left",
                    bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none", "pad": 3})
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout(pad=0.3)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=150)
    plt.close(fig)
    return {"frames": len(images), "tile_width": width, "tile_height": height,
            "pixel_std": [float(i.std()) for i in images], "pixel_mean": [float(i.mean()) for i in images],
            "objects_missing": sorted(missing)}


def render_with_fallback(robot_file: str | Path, positions: Mapping[str, float], out: str | Path, *,
                         goal: Sequence[float] | None = None, caption: str = "",
                         backends: Sequence[str] = GL_BACKENDS, timeout: float = 120.0,
                         world: str | Path | None = None,
                         frames: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Try each OpenGL backend in a child process until one renders; returns the facts plus ``backend``.
    With ``frames`` it renders a filmstrip (:func:`render_filmstrip`, ``caption`` its title) instead of one pose."""
    request = json.dumps({"robot": str(robot_file), "positions": dict(positions), "out": str(out),
                          "goal": list(goal) if goal is not None else None, "caption": caption,
                          "world": str(world) if world else None,
                          "frames": [dict(f) for f in frames] if frames is not None else None})
    return run_in_gl_child("robot_core.demo.pose_render", request, backends, timeout)


def run_in_gl_child(module: str, request: str, backends: Sequence[str] = GL_BACKENDS,
                    timeout: float = 120.0) -> dict[str, Any]:
    """Run ``python -m module request`` with each OpenGL backend until one succeeds; the JSON facts of its last
    output line plus ``backend``, or RenderError listing what each backend said."""
    failures = []
    for backend in backends:
        env = dict(os.environ, MUJOCO_GL=backend)
        if backend in ("egl", "osmesa"):
            env["PYOPENGL_PLATFORM"] = backend
        try:
            proc = subprocess.run([sys.executable, "-m", module, request], env=env,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            failures.append(f"{backend}: no answer in {timeout:g} s")
            continue
        lines = proc.stdout.strip().splitlines()
        if proc.returncode == 0 and lines:
            facts = json.loads(lines[-1])
            facts["backend"] = backend
            return facts
        err = (proc.stderr.strip().splitlines() or ["(no error output)"])[-1]
        failures.append(f"{backend}: {err}")
    raise RenderError("no OpenGL backend could render (" + "; ".join(failures) + "). On Debian/Ubuntu install "
                      "libegl1 (EGL) or libosmesa6 (OSMesa).")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="render a robot pose (used by render_with_fallback)")
    parser.add_argument("request", help="JSON: robot, positions, out, goal")
    req = json.loads(parser.parse_args(argv).request)
    if req.get("frames") is not None:
        facts = render_filmstrip(req["robot"], req["frames"], req["out"], world=req.get("world"),
                                 title=req.get("caption", ""))
    else:
        facts = render_png(req["robot"], req["positions"], req["out"], goal=req.get("goal"),
                           caption=req.get("caption", ""), world=req.get("world"))
    print(json.dumps(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
