"""The pick-and-place scenario: the example arm (urdf/rc_arm.urdf) in the table_top world
(config/worlds/table_top.yaml) picks the small box and puts it down 20 cm away (PLACE_OFFSET), over real DDS
traffic:

1. the gripper opens (``/gripper_action_controller/gripper_cmd``, control_msgs/ParallelGripperCommand; the
   controllers of config/pick_place_controllers.yaml);
2. the tool goes above the box and down around it: FollowJointTrajectory goals on the joint_trajectory_controller
   through joint positions the kinematics library's IK computes for tool poses along straight lines (tool z down);
3. the gripper closes with a limited effort and stalls on the box (a grasp), the arm lifts it, carries it and
   lowers it at the target, the gripper opens and the arm retreats;
4. the box's simulated pose (``/simulator/object_states``) judges the result: it must end 0.2 m +- 2 cm from
   where it started, upright on the table.

Besides the runner's files it writes ``pick_place.png``: a filmstrip of six moments of the motion (start, at the
box, lifted, carried, released, retreated), each the robot at its joint positions then and the world's boxes where
the simulator had them, rendered offscreen by one camera and tiled (``pose_render.render_filmstrip``). Where no
OpenGL backend renders, it is a plot instead (the tool's and the box's paths seen from above and from the side),
its title saying why; summary.json's ``pick_place_png`` tells which it is. ``pick_place_paths.png`` is that plot
in every case.
"""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from robot_core.demo.client import JTC, ActionRun, DemoNode, DemoStepError, progress, status_name, wait_for
from robot_core.demo.report import GoalOutcome
from robot_core.demo.runner import Scenario

ARM_JOINTS = [f"joint{i}" for i in range(1, 8)]
BASE_LINK, TOOL_LINK = "base_link", "tcp"
GRIPPER = "gripper_action_controller"
FINGER = "finger_left_joint"
WORLD = "config/worlds/table_top.yaml"
BOX = "box_small"  # the 4 cm cube of table_top.yaml
# m, world frame: 0.2 m at -120 degrees (towards the robot and to its right), 3 cm inside the table's edges and clear
# of the other boxes; with the tool pointing down the arm reaches only to about x = 0.58 m, so not further out
PLACE_OFFSET = (-0.1, -0.1732051, 0.0)
PLACE_TOLERANCE = 0.02  # m: the box must end this close to the place target
HOVER = 0.12  # m above the box's centre when approaching and leaving
RELEASE_HEIGHT = 0.005  # m: the box is let go this far above where it would rest
OPEN, GRASP_EFFORT = 0.035, 2.0  # m per finger (the box is 4 cm wide), N
LINE_STEP = 0.03  # m between the IK points of a straight tool move
# the snapshots (labels of PickPlace.snapshot) the filmstrip shows
FILMSTRIP = ("start", "down to the box", "lift", "carry", "release", "retreat")
# tool z down, fingers closing along world y (the frame test/test_gripper_action_node.py grasps with)
DOWN = np.array([[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]])
SAMPLE_PERIOD = 0.1  # s of simulated time between the recorded path points (summary.json, pick_place.png)


class BoxWatch:
    """The world's free objects from ``/simulator/object_states``: latest pose of each, and the box's path."""

    def __init__(self, demo: DemoNode):
        from robot_core_interfaces.msg import ObjectStates

        self._lock = threading.Lock()
        self._latest: dict[str, tuple[float, np.ndarray, float]] = {}  # name -> (t, pose x y z qw qx qy qz, speed)
        self.path: list[tuple[float, list[float]]] = []
        demo.node.create_subscription(ObjectStates, "/simulator/object_states", self._on_states, 10)

    def _on_states(self, msg: Any) -> None:
        t = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        with self._lock:
            for o in msg.objects:
                p, q, v = o.pose.position, o.pose.orientation, o.twist.linear
                self._latest[o.name] = (t, np.array([p.x, p.y, p.z, q.w, q.x, q.y, q.z]),
                                        math.sqrt(v.x ** 2 + v.y ** 2 + v.z ** 2))
                if o.name == BOX and (not self.path or t - self.path[-1][0] >= SAMPLE_PERIOD):
                    self.path.append((t, [p.x, p.y, p.z]))

    def position(self, name: str = BOX) -> np.ndarray | None:
        with self._lock:
            entry = self._latest.get(name)
        return None if entry is None else entry[1][:3].copy()

    def poses(self) -> dict[str, list[float]]:
        """Every object's latest pose (x, y, z, qw, qx, qy, qz)."""
        with self._lock:
            return {name: entry[1].tolist() for name, entry in self._latest.items()}

    def speed(self, name: str = BOX) -> float:
        with self._lock:
            entry = self._latest.get(name)
        return math.inf if entry is None else entry[2]


def tool_line(chain: Any, q0: np.ndarray, end: np.ndarray, step: float = LINE_STEP) -> list[np.ndarray]:
    """Joint positions along the straight tool line from the pose at ``q0`` to ``end`` with tool z down (DOWN),
    ``q0`` first. The orientation turns to DOWN evenly along the way (about one axis), IK runs at points about
    ``step`` apart, each seeded with the previous solution so the arm stays on one branch; the points bunch up at
    both ends (smoothstep), so evenly timed they start and stop the tool gently."""
    from robot_core.rbc.rotations import orientation_error, quat_xyzw_to_matrix

    pose0 = chain.forward_kinematics(q0)
    start, r0 = pose0[:3, 3], pose0[:3, :3]
    turn = orientation_error(DOWN, r0)  # rotation vector taking r0 to DOWN
    angle = float(np.linalg.norm(turn))
    n = max(1, math.ceil(float(np.linalg.norm(end - start)) / step), math.ceil(angle / 0.1))
    qs, q = [np.asarray(q0, dtype=float)], np.asarray(q0, dtype=float)
    for k in range(1, n + 1):
        tau = k / n
        s = 3.0 * tau ** 2 - 2.0 * tau ** 3
        axis = turn / angle if angle > 1e-12 else np.zeros(3)
        half = 0.5 * s * angle
        target = np.eye(4)
        target[:3, :3] = quat_xyzw_to_matrix(np.array([*(axis * math.sin(half)), math.cos(half)])) @ r0
        target[:3, 3] = start + (end - start) * s
        ik = chain.inverse_kinematics(target, q)
        if ik.status.name != "CONVERGED":
            raise DemoStepError(f"IK of {TOOL_LINK} to {np.round(target[:3, 3], 4).tolist()} (tool turning to z "
                                f"down) in {BASE_LINK}: {ik.status.name}")
        q = np.asarray(ik.q, dtype=float)
        qs.append(q)
    return qs


class PickPlace:
    """The steps, sharing the IK chain, the box watch and the record of where things were at each step."""

    def __init__(self, demo: DemoNode, robot_file: Path):
        from robot_core.kinematics import SerialKinematicChain
        from robot_core.model import load_robot

        self.demo = demo
        self.chain = SerialKinematicChain(load_robot(str(robot_file)), BASE_LINK, TOOL_LINK)
        self.boxes = BoxWatch(demo)
        self.snapshots: list[dict[str, Any]] = []
        self.finger: float | None = None  # m, the finger's position after the last gripper goal

    def arm_q(self) -> np.ndarray:
        current = self.demo.log.last_actual()
        return np.array([current[j] for j in ARM_JOINTS])

    def tool(self, q: np.ndarray | None = None) -> np.ndarray:
        return self.chain.forward_kinematics(self.arm_q() if q is None else q)[:3, 3]

    def snapshot(self, label: str) -> None:
        box = self.boxes.position()
        positions = {j: float(v) for j, v in zip(ARM_JOINTS, self.arm_q(), strict=True)}
        if self.finger is not None and math.isfinite(self.finger):
            positions[FINGER] = self.finger
        self.snapshots.append({"label": label, "t": self.demo.sim_now(), "tool": self.tool().tolist(),
                               "box": None if box is None else box.tolist(), "positions": positions,
                               "objects": self.boxes.poses()})

    def line_goal(self, end: np.ndarray, seconds: float) -> Any:
        """FollowJointTrajectory along the straight tool line from here to ``end`` (:func:`tool_line`), evenly
        timed; velocities by central differences, zero at the end."""
        from builtin_interfaces.msg import Duration
        from control_msgs.action import FollowJointTrajectory
        from trajectory_msgs.msg import JointTrajectoryPoint

        qs = tool_line(self.chain, self.arm_q(), end)
        n = len(qs) - 1
        times = [seconds * k / n for k in range(n + 1)]
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = list(ARM_JOINTS)
        for k in range(1, n + 1):
            vel = (np.zeros(len(ARM_JOINTS)) if k == n
                   else (qs[k + 1] - qs[k - 1]) / (times[k + 1] - times[k - 1]))
            sec = int(times[k])
            goal.trajectory.points.append(JointTrajectoryPoint(
                positions=[float(v) for v in qs[k]], velocities=[float(v) for v in vel],
                time_from_start=Duration(sec=sec, nanosec=round((times[k] - sec) * 1e9))))
        return goal

    def move(self, name: str, end: np.ndarray, seconds: float) -> GoalOutcome:
        from control_msgs.action import FollowJointTrajectory

        goal = self.line_goal(end, seconds)
        run = ActionRun(self.demo, FollowJointTrajectory, f"/{JTC}/follow_joint_trajectory")
        t0 = self.demo.sim_now()
        self.demo.log.begin(name, t0)
        try:
            result, status = run.run(goal, timeout=120.0, describe=lambda fb: "max |error| "
                                     f"{max((abs(e) for e in fb.error.positions), default=math.nan):.4f} rad")
        finally:
            run.destroy()
        t1 = self.demo.sim_now()
        self.demo.log.end(t1)
        ok = status == 4 and result.error_code == 0
        reached = self.tool()
        self.snapshot(name)
        return GoalOutcome(name, "control_msgs/FollowJointTrajectory", ok,
                           f"error_code {result.error_code}, {status_name(status)}", result.error_string, t1 - t0,
                           self.demo.log.phase_max_error(name),
                           {"points": len(goal.trajectory.points),
                            "tool_error_m": float(np.linalg.norm(reached - end))})

    def grip(self, name: str, position: float, effort: float, expect_stall: bool) -> GoalOutcome:
        """One gripper goal; a grasp must stall on the box (closing on nothing reaches the goal instead)."""
        from control_msgs.action import ParallelGripperCommand

        goal = ParallelGripperCommand.Goal()
        goal.command.name = [FINGER]
        goal.command.position, goal.command.effort = [float(position)], [float(effort)]
        run = ActionRun(self.demo, ParallelGripperCommand, f"/{GRIPPER}/gripper_cmd")
        t0 = self.demo.sim_now()
        try:
            result, status = run.run(goal, timeout=60.0, describe=lambda fb: f"finger at {fb.state.position[0]:.4f} m")
        finally:
            run.destroy()
        t1 = self.demo.sim_now()
        finger = float(result.state.position[0]) if len(result.state.position) else math.nan
        self.finger = finger
        held = bool(result.stalled) and not result.reached_goal
        ok = status == 4 and (held if expect_stall else bool(result.reached_goal))
        message = "" if ok else ("closed on nothing: the box was not between the fingers" if expect_stall
                                 else "the finger did not reach the goal")
        self.snapshot(name)
        return GoalOutcome(name, "control_msgs/ParallelGripperCommand", ok,
                           f"{'stalled (holding)' if held else 'reached' if result.reached_goal else 'neither'}, "
                           f"{status_name(status)}", message, t1 - t0, math.nan,
                           {"finger_m": finger, "max_effort_n": effort})

    def judge(self, start: np.ndarray, target: np.ndarray) -> GoalOutcome:
        """The box's final pose from the simulator, once it has come to rest."""
        wait_for(lambda: self.boxes.speed() < 0.005, 30.0, f"{BOX} at rest")
        final = self.boxes.position()
        assert final is not None
        moved = final - start
        error = float(np.linalg.norm((final - target)[:2]))
        dist = float(np.linalg.norm(moved[:2]))
        upright = abs(moved[2]) < 0.01  # on the table, not tipped over (a tipped 4 cm cube's centre moves)
        ok = error <= PLACE_TOLERANCE and upright
        self.snapshot("box at rest")
        return GoalOutcome(f"{BOX} placed {np.linalg.norm(PLACE_OFFSET):.2f} m away",
                           "robot_core_interfaces/ObjectStates", ok,
                           f"moved {dist:.4f} m, {1000 * error:.1f} mm from the target", "" if ok else
                           f"{BOX} ended at {np.round(final, 4).tolist()}, target {np.round(target, 4).tolist()} "
                           f"(tolerance {PLACE_TOLERANCE} m, upright: {upright})", math.nan, math.nan,
                           {"displacement_m": dist, "place_error_m": error, "height_change_m": float(moved[2]),
                            "start": start.tolist(), "final": final.tolist()})

    def tool_path(self) -> list[tuple[float, list[float]]]:
        """The tool's path from the recorded joint positions (FK), one point per SAMPLE_PERIOD."""
        t, q = self.demo.log.actual()
        path: list[tuple[float, list[float]]] = []
        for k in range(t.size):
            if (not path or t[k] - path[-1][0] >= SAMPLE_PERIOD) and np.all(np.isfinite(q[k])):
                path.append((float(t[k]), self.tool(q[k]).tolist()))
        return path


def run_steps(demo: DemoNode, n_steps: int, facts: dict[str, Any]) -> tuple[list[GoalOutcome], dict[str, Any]]:
    """Progress steps 2 to 5: graph ready, pick, place, judge; the motion's facts (paths, snapshots)."""
    from controller_manager_msgs.srv import ListControllers

    pp = PickPlace(demo, Path(facts["robot_file"]))
    wait_for(lambda: demo.sim_now() > 0.0 and len(demo.log.last_actual()) == len(ARM_JOINTS), 30.0,
             "/clock and /joint_states")
    wait_for(lambda: pp.boxes.position() is not None, 30.0, "/simulator/object_states")
    wait_for(lambda: pp.boxes.speed() < 0.005, 30.0, f"{BOX} at rest on the table")
    sim0, wall0 = demo.sim_now(), time.monotonic()
    states = {c.name: c.state for c in demo.call("/controller_manager/list_controllers",
                                                 ListControllers.Request()).controller}
    facts["controllers"] = states
    start = pp.boxes.position()
    assert start is not None
    target = start + np.array(PLACE_OFFSET)
    progress(f"[2/{n_steps}] controllers: " + ", ".join(f"{n} ({s})" for n, s in states.items())
             + f"; {BOX} at ({start[0]:.3f}, {start[1]:.3f}, {start[2]:.3f}) m")
    pp.snapshot("start")
    up = np.array([0.0, 0.0, HOVER])
    drop = target + np.array([0.0, 0.0, RELEASE_HEIGHT])
    pick = [(f"open the gripper to {OPEN} m", lambda: pp.grip("open", OPEN, GRASP_EFFORT, False)),
            ("above the box", lambda: pp.move("above the box", start + up, 5.0)),
            ("down to the box", lambda: pp.move("down to the box", start, 3.0)),
            (f"grasp with at most {GRASP_EFFORT} N", lambda: pp.grip("grasp", 0.0, GRASP_EFFORT, True))]
    place = [("lift", lambda: pp.move("lift", start + up, 3.0)),
             ("carry", lambda: pp.move("carry", target + up, 4.0)),
             ("lower", lambda: pp.move("lower", drop, 3.0)),
             ("release", lambda: pp.grip("release", OPEN, GRASP_EFFORT, False)),
             ("retreat", lambda: pp.move("retreat", drop + up, 3.0))]
    goals: list[GoalOutcome] = []
    for number, title, steps in ((3, "pick", pick), (4, "place", place)):
        progress(f"[{number}/{n_steps}] {title}: " + "; ".join(s[0] for s in steps))
        for label, step in steps:
            if goals and not goals[-1].success:
                goals.append(GoalOutcome(label, "", False, "not run", "an earlier step failed"))
                continue
            try:
                goals.append(step())
            except DemoStepError as exc:
                goals.append(GoalOutcome(label, "", False, "not run", str(exc)))
            progress(f"      {label} -> {goals[-1].result}")
    progress(f"[5/{n_steps}] judging from /simulator/object_states: {BOX} to "
             f"({target[0]:.3f}, {target[1]:.3f}) m +- {PLACE_TOLERANCE} m")
    try:
        goals.append(pp.judge(start, target))
    except DemoStepError as exc:
        goals.append(GoalOutcome(f"{BOX} placed", "robot_core_interfaces/ObjectStates", False, "not judged", str(exc)))
    progress(f"      -> {goals[-1].result}")
    sim1, wall1 = demo.sim_now(), time.monotonic()
    motion = {"sim_seconds": round(sim1 - sim0, 3), "wall_seconds": round(wall1 - wall0, 3),
              "real_time_factor": (sim1 - sim0) / (wall1 - wall0) if wall1 > wall0 else math.nan,
              "final_positions": demo.log.last_actual(),
              "box": {"name": BOX, "start": start.tolist(), "target": target.tolist(),
                      "final": (pp.boxes.position() if pp.boxes.position() is not None else start).tolist()},
              "snapshots": pp.snapshots,
              "paths": {"tool": [[t, *p] for t, p in pp.tool_path()],
                        "box": [[t, *p] for t, p in pp.boxes.path]}}
    return goals, motion


def prepare(robot_file: Path, facts: dict[str, Any]) -> None:
    from robot_core.bringup.plan import resolve_file

    facts["robot_file"] = str(robot_file)
    facts["world_file"] = str(resolve_file(WORLD, "world file"))


def write_outputs(output: Path, facts: dict[str, Any]) -> dict[str, str]:
    """``pick_place.png``: the filmstrip, or the paths plot where nothing renders (see the module docstring);
    ``pick_place_paths.png``: the paths plot."""
    from robot_core.demo.pose_render import RenderError, render_with_fallback

    plot = output / "pick_place_paths.png"
    write_plot(plot, facts)
    out = output / "pick_place.png"
    snaps = {s["label"]: s for s in facts.get("snapshots") or [] if s.get("positions")}
    frames = [{"positions": snaps[label]["positions"], "objects": snaps[label].get("objects") or {},
               "caption": f"{k + 1}. {label} (t = {snaps[label]['t']:.1f} s)"}
              for k, label in enumerate(lb for lb in FILMSTRIP if lb in snaps)]
    world = facts.get("world_file")
    reason = ""
    if len(frames) < 4:
        reason = f"only {len(frames)} of the filmstrip's moments were reached ({', '.join(FILMSTRIP)})"
    else:
        try:
            rendered = render_with_fallback(facts["robot_file"], {}, out, world=world, frames=frames,
                                            caption="robot_core pick and place: the example arm moves "
                                            f"{BOX} {np.linalg.norm(PLACE_OFFSET):.2f} m (simulated poses, "
                                            "rendered offscreen)")
            facts["pick_place_png"] = f"filmstrip of {rendered['frames']} frames ({rendered['backend']})"
            return {"pick_place": str(out), "pick_place_paths": str(plot)}
        except RenderError as exc:
            reason = f"no OpenGL backend rendered the filmstrip: {exc}"
    write_plot(out, facts, note=f"a plot instead of a filmstrip: {reason}")
    facts["pick_place_png"] = f"paths plot: {reason}"
    return {"pick_place": str(out), "pick_place_paths": str(plot)}


def write_plot(out: Path, facts: dict[str, Any], note: str = "") -> None:
    """Top view (x, y) and side view (x, z) of the tool's and the box's paths into ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    paths = facts.get("paths") or {}
    tool = np.array(paths.get("tool") or np.zeros((0, 4)), dtype=float).reshape(-1, 4)
    box = np.array(paths.get("box") or np.zeros((0, 4)), dtype=float).reshape(-1, 4)
    info = facts.get("box") or {}
    fig, (top, side) = plt.subplots(1, 2, figsize=(13, 6), constrained_layout=True)
    top.add_patch(Rectangle((0.30, -0.40), 0.5, 0.8, color="#c8b49b", alpha=0.45, lw=0, label="table"))
    side.add_patch(Rectangle((0.30, 0.0), 0.5, 0.2, color="#c8b49b", alpha=0.45, lw=0))
    for ax, (i, j) in ((top, (1, 2)), (side, (1, 3))):
        if tool.size:
            ax.plot(tool[:, i], tool[:, j], color="#d9731a", lw=1.6, label="tool (tcp, from joint states + FK)")
        if box.size:
            ax.plot(box[:, i], box[:, j], color="#b01515", lw=2.4, alpha=0.8, label=f"{info.get('name', 'box')} "
                    "(/simulator/object_states)")
        for key, marker, color in (("start", "s", "#b01515"), ("target", "x", "#1a8a2a"), ("final", "o", "black")):
            p = info.get(key)
            if p:
                ax.plot(p[i - 1], p[j - 1], marker, color=color, ms=10, mfc="none", mew=2, label=f"box {key}")
        for k, snap in enumerate(facts.get("snapshots") or []):
            p = snap.get("tool")
            if p:
                ax.annotate(f"{k}", (p[i - 1], p[j - 1]), fontsize=8, color="#555555", xytext=(4, 4),
                            textcoords="offset points")
        ax.grid(True, alpha=0.35)
        ax.set_aspect("equal", adjustable="datalim")
    top.set_xlabel("x [m]")
    top.set_ylabel("y [m]")
    top.set_title("from above")
    side.set_xlabel("x [m]")
    side.set_ylabel("z [m]")
    side.set_title("from the side")
    legend = "; ".join(f"{k} {s['label']}" for k, s in enumerate(facts.get("snapshots") or []))
    top.legend(loc="upper left", fontsize=8)
    fig.suptitle(f"robot_core pick and place: tool and box paths (numbers: the tool after each step)\n{legend}"
                 + (f"\n({note})" if note else ""), fontsize=9)
    fig.savefig(out, dpi=100)
    plt.close(fig)


# 7 progress steps: bring-up (runner), 2-5 below, stopping the nodes and writing the outputs (runner).
SCENARIO = Scenario(name="pick_place", subject="the example arm in the table_top world", joints=ARM_JOINTS, steps=7,
                    prepare=prepare, run=run_steps,
                    bringup={"world": WORLD,
                             "controllers": "config/pick_place_controllers.yaml", "rbc": False},
                    outputs=write_outputs, modes=("topic",))  # the world is the simulator node's
