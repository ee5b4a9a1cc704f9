"""Runs one demo scenario against the real graph and writes its outputs; scenario-independent.

Brings the scenario's robot up headless through :class:`robot_core.bringup.run.Bringup` (simulator, controller
manager, RBC as child processes; controllers spawned with the spawner), starts the demo's ROS client
(:mod:`robot_core.demo.client`), hands it to the scenario's steps, stops the nodes and writes into the output
folder (default ./demo_output): ``tracking.png`` (commanded vs. actual positions and tracking error over simulated
time; a third panel with the measured wrench when the scenario names a ``wrench_topic``), ``final_pose.png``
(MuJoCo offscreen rendering of the final pose; a ``cartesian_goal`` fact is drawn as a green sphere, a YAML
world's objects where the file puts them), ``camera.png`` (the last frame of the scenario's ``camera_topic``,
rendered by the simulator node in topic mode and by the controller manager's embedded physics in embedded mode),
``run.mp4`` (the run replayed through the off-screen renderer, :mod:`robot_core.demo.run_video`; ``run.gif``
without an encoder), ``run.mcap`` (the default topics of ``robot-core record``, recorded from before bring-up to
the end of the scenario), ``summary.txt`` / ``summary.json`` (each goal's result, max tracking error, achieved
real-time factor, wrench, camera, video and recording) and ``logs/<node>.log``. A scenario's ``world`` is given to
the simulator in topic mode and to the controller manager in embedded mode. Exit code 0 only when every goal
succeeded and every file was written.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robot_core.bringup.plan import BringupConfigError, BringupOptions, make_plan
from robot_core.bringup.run import Bringup, BringupError
from robot_core.demo.client import DemoNode, DemoStepError, progress
from robot_core.demo.report import (
    GoalOutcome,
    TrackingLog,
    plot_tracking,
    summary_dict,
    summary_text,
    write_camera_frame,
    write_summary,
)

Facts = dict[str, Any]


@dataclass(frozen=True)
class Scenario:
    """What a scenario (one file in robot_core/demo/scenarios/) gives the runner.

    Progress is numbered over ``steps``: the runner takes step 1 (bring-up) and the last two (stopping the nodes,
    writing the outputs); the scenario's ``run`` numbers its own steps from 2 to ``steps - 2``."""

    name: str
    subject: str  # what is brought up, for the progress line ("the example arm")
    joints: Sequence[str]  # joints recorded for tracking.png
    steps: int
    prepare: Callable[[Path, Facts], None]  # facts known before bring-up (e.g. a Cartesian goal) from the robot file
    run: Callable[[DemoNode, int, Facts], tuple[list[GoalOutcome], Facts]]  # the goals, and facts on the motion
    robot: str | None = None  # robot file; None: the bringup's default (urdf/rc_arm.urdf)
    # further BringupOptions.create arguments (world, controllers, simulator_config, rbc), as the scenario needs
    bringup: Mapping[str, Any] = field(default_factory=dict)
    # the scenario's own files (e.g. pick_place.png) from its facts, written after the nodes stopped: name -> path
    outputs: Callable[[Path, Facts], dict[str, str]] | None = None
    modes: tuple[str, ...] = ("topic", "embedded")  # the bring-up modes it can run in
    world: str | None = None  # world file (doc/world.md) for the simulator, or the embedded controller manager
    wrench_topic: str | None = None  # geometry_msgs/WrenchStamped recorded for tracking.png's wrench panel
    camera_topic: str | None = None  # sensor_msgs/Image (rgb8) whose last frame is saved as camera.png


def run_demo(scenario: Scenario, output: Path, mode: str = "topic", robot: str | None = None, *,
             record: bool = True, video: bool = True, view_port: int | None = None) -> int:
    """Run ``scenario`` with the nodes in ``mode``; ``robot`` overrides the scenario's robot file. ``record``: the
    run's topics into run.mcap (doc/recording.md); ``video``: run.mp4 of the run (doc/recording.md); ``view_port``:
    the live web view on that port while the demo runs (doc/view.md)."""
    if mode not in scenario.modes:
        print(f"error: scenario '{scenario.name}' runs in mode {' or '.join(scenario.modes)} only, not '{mode}'",
              file=sys.stderr)
        return 2
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    output = output.resolve()
    output.mkdir(parents=True, exist_ok=True)
    for stale in ("tracking.png", "final_pose.png", "camera.png", "summary.txt", "summary.json", "run.mcap",
                  "run.mp4", "run.gif"):
        with contextlib.suppress(FileNotFoundError):
            (output / stale).unlink()
    n_steps = scenario.steps
    progress(f"robot_core demo -> {output}")
    progress(f"[1/{n_steps}] bringing {scenario.subject} up headless (mode {mode}; node logs in {output / 'logs'})")
    world = scenario.world
    try:
        plan = make_plan(BringupOptions.create(robot=robot or scenario.robot, mode=mode, headless=True,
                                               **({"world": world} if world else {}), **scenario.bringup))
    except BringupConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    goals: list[GoalOutcome] = []
    facts: dict[str, Any] = {"robot": plan.options.robot.name, "mode": mode}
    if scenario.world:
        facts["world"] = str(plan.options.world)
    scenario.prepare(plan.options.robot, facts)
    log = TrackingLog(scenario.joints)
    wall0 = time.monotonic()
    motion: dict[str, Any] = {}
    recorder = _start_recorder(output) if record else None
    viewer = _start_view(output, view_port, plan.options.robot) if view_port is not None else None
    try:
        with Bringup(plan, log_dir=output / "logs", progress=lambda m: progress(f"      {m}")) as bringup:
            assert bringup.report is not None
            facts["bringup_seconds"] = round(bringup.report.seconds, 2)
            facts["nodes"] = list(bringup.report.pids)
            for note in bringup.report.notes:
                progress(f"      note: {note}")
            progress(f"      up in {bringup.report.seconds:.1f} s: {', '.join(bringup.report.pids)}")
            demo = DemoNode(log)
            try:
                record_sensors(demo, scenario)
                goals, motion = scenario.run(demo, n_steps, facts)
            except DemoStepError as exc:
                progress(f"      FAILED: {exc}")
                goals.append(GoalOutcome("demo set-up", "ROS graph", False, "failed", str(exc)))
            finally:
                demo.shutdown()
                _stop_recorder(recorder, facts)
            progress(f"[{n_steps - 1}/{n_steps}] stopping the nodes")
    except (BringupError, OSError) as exc:
        progress(f"      bringup FAILED: {exc}")
        goals = goals or [GoalOutcome("bringup", "robot-core bringup", False, "failed", str(exc))]
    finally:
        _stop_recorder(recorder, facts)
        if viewer is not None:
            viewer.stop()
    facts.update(motion)
    facts["wall_seconds_total"] = round(time.monotonic() - wall0, 1)
    progress(f"[{n_steps}/{n_steps}] writing {output}")
    facts["files"] = _write_outputs(log, output, plan.options.robot, facts, goals, plan.options.world, video)
    if "recording" in facts:
        facts["files"]["recording"] = str(output / "run.mcap")
    _sensor_facts(scenario, log, facts)
    own: dict[str, str] = {}
    if scenario.outputs is not None:
        try:
            own = scenario.outputs(output, facts)
        except (OSError, ValueError, KeyError) as exc:
            goals.append(GoalOutcome(f"{scenario.name} outputs", "matplotlib", False, "failed", str(exc)))
        facts["files"].update(own)
    summary = summary_dict(goals, **facts)
    required = ["tracking.png", "final_pose.png", *own.values()] + (["camera.png"] if expects_camera(scenario, mode)
                                                                     else [])
    files_ok = all((output / f).is_file() for f in required)
    wrench_ok = not scenario.wrench_topic or facts["wrench"]["samples"] > 0
    if not (files_ok and wrench_ok):
        summary["success"] = False
    write_summary(summary, output)
    print()
    print(summary_text(summary))
    return 0 if summary["success"] else 1


def expects_camera(scenario: Scenario, mode: str) -> bool:
    """camera.png is due whenever the scenario names a camera topic: the simulator node renders the cameras in topic
    mode, the controller manager's embedded physics in embedded mode."""
    return bool(scenario.camera_topic)


def record_sensors(demo: DemoNode, scenario: Scenario) -> None:
    """Subscribe the demo node to the scenario's wrench and camera topics, feeding ``demo.log``."""
    if scenario.wrench_topic:
        from geometry_msgs.msg import WrenchStamped

        def on_wrench(m: WrenchStamped) -> None:
            f, t = m.wrench.force, m.wrench.torque
            demo.log.add_wrench(m.header.stamp.sec + m.header.stamp.nanosec * 1e-9, (f.x, f.y, f.z),
                                (t.x, t.y, t.z))

        demo.node.create_subscription(WrenchStamped, scenario.wrench_topic, on_wrench, 50)
    if scenario.camera_topic:
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import Image

        def on_image(m: Image) -> None:
            image = image_rgb(m.encoding, m.height, m.width, m.step, m.data)
            if image is not None:
                demo.log.set_camera_frame(m.header.stamp.sec + m.header.stamp.nanosec * 1e-9, image)

        demo.node.create_subscription(Image, scenario.camera_topic, on_image, qos_profile_sensor_data)


def image_rgb(encoding: str, height: int, width: int, step: int, data: Any) -> Any:
    """An rgb8 image message's pixels as an H x W x 3 uint8 array (a copy); None for other encodings."""
    import numpy as np

    if encoding != "rgb8" or height < 1 or width < 1 or step < 3 * width:
        return None
    raw = np.frombuffer(bytes(data), dtype=np.uint8)
    if raw.size < height * step:
        return None
    return raw[:height * step].reshape(height, step)[:, :3 * width].reshape(height, width, 3).copy()


def _sensor_facts(scenario: Scenario, log: TrackingLog, facts: dict[str, Any]) -> None:
    """The summary's account of the recorded wrench and camera frames."""
    if scenario.wrench_topic:
        t, _ = log.wrench()
        facts.setdefault("wrench", {}).update(topic=scenario.wrench_topic, samples=int(t.size),
                                              force_at_rest_n=log.wrench_at_rest())
    if scenario.camera_topic:
        camera: dict[str, Any] = {"topic": scenario.camera_topic, "frames": log.camera_frames}
        camera.update(facts.pop("camera_file", {}))
        if not log.camera_frames:
            camera["note"] = "no frame received"
        facts["camera"] = camera


def _start_recorder(output: Path) -> Any:
    """``robot-core record`` of the default topics into ``output/run.mcap``, before the graph comes up."""
    from robot_core.nodes.child_process import RecorderProcess

    (output / "logs").mkdir(parents=True, exist_ok=True)
    return RecorderProcess(output / "run.mcap", log=output / "logs" / "recorder.log")


def _start_view(output: Path, port: int, robot: Path) -> Any:
    """``robot-core view`` on ``port`` for the demo's graph (its output in logs/view.log)."""
    from robot_core.nodes.child_process import ViewProcess

    (output / "logs").mkdir(parents=True, exist_ok=True)
    viewer = ViewProcess(port, robot=str(robot), log=output / "logs" / "view.log")
    progress(f"      web view on {viewer.url}")
    return viewer


def _stop_recorder(recorder: Any, facts: dict[str, Any]) -> None:
    """Close run.mcap (once) and put what it holds into the facts."""
    if recorder is None or "recording" in facts:
        return
    code = recorder.stop()
    from robot_core.ros.recording import RecordingError, scan_recording

    try:
        index = scan_recording(recorder.output)
        facts["recording"] = {"file": str(recorder.output), "messages": index.messages,
                              "topics": sorted(c.topic for c in index.channels.values())}
    except (RecordingError, OSError) as exc:
        facts["recording"] = {"file": str(recorder.output), "note": f"recorder exit {code}: {exc}"}


def _write_video(log: TrackingLog, output: Path, robot_file: Path, facts: dict[str, Any], goals: list[GoalOutcome],
                 world: Path | None, goal: Any) -> str | None:
    """run.mp4 (run.gif without an encoder) of the actual joint positions over the run; its path, or None."""
    from robot_core.demo.pose_render import RenderError
    from robot_core.demo.run_video import render_video_with_fallback

    t, values = log.actual()
    if t.size == 0:
        facts["video"] = {"note": "no joint states were recorded"}
        return None
    try:
        facts["video"] = render_video_with_fallback(robot_file, log.joints, t, values, output / "run.mp4",
                                                    world=world, goal=goal, objects=log.object_poses())
    except RenderError as exc:
        facts["video"] = {"note": str(exc)}
        goals.append(GoalOutcome("video", "MuJoCo offscreen", False, "failed", str(exc)))
        return None
    return str(facts["video"]["file"])


def _write_outputs(log: TrackingLog, output: Path, robot_file: Path, facts: dict[str, Any],
                   goals: list[GoalOutcome], world_file: Path | None = None, video: bool = True) -> dict[str, str]:
    from robot_core.demo.pose_render import RenderError, render_with_fallback

    files: dict[str, str] = {}
    title = (f"robot_core demo: {facts.get('robot')}, {facts.get('mode')} mode -- commanded (dashed) vs. actual "
             f"(solid) joint positions")
    info = plot_tracking(log, output / "tracking.png", title)
    files["plot"] = str(output / "tracking.png")
    facts["samples"] = info
    positions = dict(facts.get("final_positions") or log.last_actual())
    goal = (facts.get("cartesian_goal") or {}).get("position")
    world = world_file if world_file is not None and world_file.suffix in (".yaml", ".yml") else None
    try:
        caption = (f"{facts.get('robot')} at its final pose ({facts.get('mode')} mode)"
                   + ("; green sphere: the CartesianReach goal of VF0" if goal else "")
                   + (f"; {world.name}'s objects where the file puts them" if world else ""))
        rendered = render_with_fallback(robot_file, positions, output / "final_pose.png", goal=goal, caption=caption,
                                        world=world)
        facts["gl_backend"] = rendered["backend"]
        files["rendering"] = str(output / "final_pose.png")
    except RenderError as exc:
        facts["gl_backend"] = f"none: {exc}"
        goals.append(GoalOutcome("rendering", "MuJoCo offscreen", False, "failed", str(exc)))
    if video and (path := _write_video(log, output, robot_file, facts, goals, world, goal)):
        files["video"] = path
    frame = log.camera_frame()
    if frame is not None:
        image = write_camera_frame(frame[1], output / "camera.png")
        facts["camera_file"] = {**image, "stamp": frame[0]}
        files["camera"] = str(output / "camera.png")
    files["summary"] = str(output / "summary.txt")
    return files

