"""Control loop benchmark: the controller manager node driving the 7-DOF rc_arm, and the round trip through the
simulator beside a raw rclpy JointState echo.

Rows, all measured in this run on an isolated ROS domain:

* ``raw mj_step, paced`` -- one bare MuJoCo step of the same model per millisecond, paced the same way: what
  the machine itself does to a 1 kHz sleeper (a vCPU that idles between cycles comes back with cold caches,
  and the host may stall it), the floor under every other row;
* ``core cycle, no ROS`` -- ControllerManagerCore.update() with the in-process simulator in this process, the
  anchor the node's update times are compared with;
* ``node, embedded simulator, 1 kHz`` -- ``controller_manager`` (its console script, a separate process) with
  ``hardware_mode:=embedded`` at update_rate 1000;
* ``node, topic-based, 500 Hz`` -- ``controller_manager`` at update_rate 500 driving the ``simulator`` node (a
  third process, joint states published at 500 Hz, one per cycle) over the topic-based protocol;
* ``full PR2, embedded, 1 kHz`` -- the same embedded node with the whole PR2 (urdf/pr2_mobile.urdf, 45 actuated
  joints) and every controller of config/pr2_controllers.yaml active (broadcaster, both arms', torso and head
  JTCs, both grippers, the caster base), update_rate 1000: the right arm's JTC follows goals back and forth and
  the base controller gets a twist at 10 Hz (its wheels turn in the air: the manager runs with the default
  fixed_base and no floor, unlike ``--robot pr2 --mode embedded``). Compared with the arm-only anchor of the same
  run (p99/anchor);
* ``with cpu_dma_latency:=0`` -- the floor, the anchor and the embedded row again while a PM QoS request keeps
  idle CPUs polling (the manager's opt-in parameter; the request is system-wide, so this process holds it for
  the anchors too). Skipped where /dev/cpu_dma_latency is not writable.

In both node rows joint_state_broadcaster and joint_trajectory_controller are active and the JTC follows
FollowJointTrajectory goals back and forth during the whole window. Numbers come from the node's
``~/loop_statistics`` (execution time of read + update + write per cycle; an overrun is a cycle longer than
the period) after a warm-up and a statistics reset.

Round trip: this process publishes a velocity command for joint7 on ``/robot_joint_commands`` and waits for the
first ``/robot_joint_states`` whose joint7 effort has the command's sign (the velocity servo's effort jumps
in the first simulation step that applies the command); the raw echo is the same JointState sent to a plain
rclpy node in another process that republishes it. The two are interleaved, command after command.

Run: ``.venv/bin/python bench/control_loop.py [--seconds 10] [--pings 200]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _paced import LOOP_SCHEDULING, paced, raw_step_anchor
from _ros_graph import BIN, REPO, URDF, Client, Proc, loop_window, start_manager, start_simulator

JOINTS = [f"joint{i}" for i in range(1, 8)]
HOME = [0.0, 0.3, 0.0, 1.9, 0.0, 0.94, 0.0]
AWAY = [0.5, 0.6, -0.3, 1.6, 0.3, 1.2, 0.4]

ECHO_NODE = """
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
rclpy.init()
node = rclpy.create_node("raw_echo")
pub = node.create_publisher(JointState, "/bench_echo_out", QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
node.create_subscription(JointState, "/bench_echo_in", pub.publish,
                         QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
print("echo ready", flush=True)
try:
    rclpy.spin(node)
except (Exception, KeyboardInterrupt):  # stopped with SIGINT: a clean end
    pass
"""


def controllers_yaml(rate: int, publish_rate: float = 0.0) -> str:
    """``publish_rate`` > 0: the broadcaster updates (publishes) and the JTC publishes its state at that rate."""
    jsb = ""
    if publish_rate:
        jsb = f"\njoint_state_broadcaster:\n  ros__parameters:\n    update_rate: {int(publish_rate)}\n"
    return f"""
controller_manager:
  ros__parameters:
    update_rate: {rate}
    joint_state_broadcaster:
      type: joint_state_broadcaster/JointStateBroadcaster
    joint_trajectory_controller:
      type: joint_trajectory_controller/JointTrajectoryController
joint_trajectory_controller:
  ros__parameters:
    joints: {JOINTS}
    command_interfaces: [position]
    state_interfaces: [position, velocity]
    state_publish_rate: {float(publish_rate)}
    constraints:
      goal_time: 2.0
{jsb}"""


class GoalDriver:
    """Keeps a JTC busy: 1 s trajectories between two poses, one after the other."""

    def __init__(self, client: Client, controller: str = "joint_trajectory_controller",
                 joints: list[str] | None = None, home: list[float] | None = None, away: list[float] | None = None):
        from control_msgs.action import FollowJointTrajectory

        from robot_core.ros.action_client import ActionClient

        self.client = client
        self.joints, self.home, self.away = joints or JOINTS, home or HOME, away or AWAY
        self.action = ActionClient(client.node, FollowJointTrajectory, f"/{controller}/follow_joint_trajectory")
        if not self.action.wait_for_server(timeout_sec=30):
            raise RuntimeError("JTC action server not available")
        self.results: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from builtin_interfaces.msg import Duration
        from control_msgs.action import FollowJointTrajectory
        from trajectory_msgs.msg import JointTrajectoryPoint

        target = self.away
        while not self._stop.is_set():
            goal = FollowJointTrajectory.Goal()
            goal.trajectory.joint_names = self.joints
            goal.trajectory.points = [JointTrajectoryPoint(positions=target, time_from_start=Duration(sec=1))]
            future = self.action.send_goal_async(goal)
            while not future.done() and not self._stop.is_set():
                time.sleep(0.01)
            if self._stop.is_set():
                return
            result = future.result().get_result_async()
            while not result.done() and not self._stop.is_set():
                time.sleep(0.01)
            if result.done():
                self.results.append(result.result().result.error_code)
            target = self.home if target is self.away else self.away

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5.0)


NODE_SCHEDULING: set[str] = set()  # what the nodes' loop threads reported in their logs


def core_anchor(seconds: float) -> dict[str, float]:
    """ControllerManagerCore.update at 1 kHz timing, in this process, no ROS (paced like the node)."""
    from robot_core.control.hardware import IN_PROCESS_PLUGIN
    from robot_core.control.manager import ControllerManagerCore
    from robot_core.control.trajectory import JointTrajectory, TrajectoryPoint
    from robot_core.model import load_robot

    cm = ControllerManagerCore.from_robot(load_robot(str(URDF)), 1000.0, plugin_override=IN_PROCESS_PLUGIN)
    cm.declare_controller("jsb", "joint_state_broadcaster/JointStateBroadcaster", {})
    cm.declare_controller("jtc", "joint_trajectory_controller/JointTrajectoryController",
                          {"joints": JOINTS, "command_interfaces": ["position"],
                           "state_interfaces": ["position", "velocity"], "constraints": {"goal_time": 2.0}})
    for n in ("jsb", "jtc"):
        cm.load_controller(n)
        cm.configure_controller(n)
    assert cm.switch_controller(["jsb", "jtc"], []).ok
    jtc = cm.controller("jtc")
    period = 1e-3

    def goals(k: int) -> None:  # a new goal every 1.2 s, back and forth
        if k % 1200 == 0:
            target = AWAY if (k // 1200) % 2 == 0 else HOME
            jtc.accept_goal(JointTrajectory(JOINTS, [TrajectoryPoint(positions=target, time_from_start=1.0)]))

    return paced(seconds, lambda k: cm.update(k * period, period), goals)


def node_row(client: Client, seconds: float, rate: int, mode: str, publish_rate: float = 0.0,
             extra: tuple[str, ...] = ()) -> dict[str, float]:
    yaml_file = Path(tempfile.mkstemp(prefix="bench_controllers_", suffix=".yaml")[1])
    yaml_file.write_text(controllers_yaml(rate, publish_rate))
    procs: list[Proc] = []
    try:
        params = ["-p", f"robot_description_file:={URDF}"]
        for e in extra:
            params += ["-p", e]
        if mode == "embedded":
            params += ["-p", "hardware_mode:=embedded"]
        else:
            procs.append(start_simulator(["-p", f"urdf_path:={URDF}", "-p", "publish_rate:=500.0",
                                          "-p", "publish_tf:=false"]))
        cm = start_manager(yaml_file, params, ["joint_state_broadcaster", "joint_trajectory_controller"])
        procs.append(cm)
        driver = GoalDriver(client)
        stats = loop_window(client, seconds)
        driver.stop()
        stats["goals_succeeded"] = float(sum(1 for r in driver.results if r == 0))
        stats["goals"] = float(len(driver.results))
        NODE_SCHEDULING.add("SCHED_FIFO" if "Successful set up FIFO" in cm.output() else "normal")
        return stats
    finally:
        for p in reversed(procs):
            p.stop()
        yaml_file.unlink(missing_ok=True)


PR2_CONTROLLERS = REPO / "config" / "pr2_controllers.yaml"
PR2_ARM_JOINTS = ["r_shoulder_pan_joint", "r_elbow_flex_joint"]


def pr2_row(client: Client, seconds: float) -> dict[str, float]:
    """The whole PR2, embedded, 1 kHz, every controller of config/pr2_controllers.yaml active (see the module
    docstring)."""
    from geometry_msgs.msg import TwistStamped

    from robot_core.bringup.plan import example_robot_data, spawn_plan

    robots = example_robot_data()
    if robots is None:
        raise RuntimeError("example-robot-data is not installed (the PR2's meshes)")
    active = [c for step in spawn_plan(PR2_CONTROLLERS) if not step.inactive for c in step.controllers]
    proc = start_manager(PR2_CONTROLLERS, ["-p", f"robot_description_file:={REPO / 'urdf' / 'pr2_mobile.urdf'}",
                                           "-p", f"package_dirs:=[{robots.parent}]", "-p", "hardware_mode:=embedded",
                                           "-p", "update_rate:=1000"], active, name="controller_manager_pr2")
    timer = None
    try:
        pub = client.node.create_publisher(TwistStamped, "/base_controller/cmd_vel", 10)
        twist = TwistStamped()
        twist.twist.linear.x, twist.twist.linear.y, twist.twist.angular.z = 0.2, 0.1, 0.3
        timer = client.node.create_timer(0.1, lambda: pub.publish(twist))
        driver = GoalDriver(client, "r_arm_controller", PR2_ARM_JOINTS, [0.0, -0.3], [-0.4, -0.8])
        stats = loop_window(client, seconds, warmup=3.0)
        driver.stop()
        stats["goals_succeeded"] = float(sum(1 for r in driver.results if r == 0))
        stats["goals"] = float(len(driver.results))
        stats["controllers"] = float(len(active))
        failed = sorted({r for r in driver.results if r != 0})
        if failed:
            print(f"  (full PR2 row: r_arm_controller goals ended with error codes {failed}; 0 = success)", flush=True)
        return stats
    finally:
        if timer is not None:
            client.node.destroy_timer(timer)
        proc.stop()


class RoundTrip:
    """Interleaved pings: through the simulator (command -> first reacting state) and through a raw echo.

    The probe has a node and a single-threaded executor of its own: rclpy's multi-threaded executor adds
    milliseconds of dispatch latency, which would swamp both paths alike."""

    def __init__(self, client: Client):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState

        node = rclpy.create_node("round_trip_probe", context=client.context)
        self.node = node
        self._executor = SingleThreadedExecutor(context=client.context)
        self._executor.add_node(node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        best_effort = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
        self.cmd_pub = node.create_publisher(JointState, "/robot_joint_commands", reliable)
        self.echo_pub = node.create_publisher(JointState, "/bench_echo_in", reliable)
        self._event = threading.Event()
        self._want_sign = 0.0
        self._want_seq = -1
        self._t_recv = 0.0
        node.create_subscription(JointState, "/robot_joint_states", self._on_state, best_effort)
        node.create_subscription(JointState, "/bench_echo_out", self._on_echo, best_effort)
        self.JointState = JointState

    def _spin(self) -> None:
        with contextlib.suppress(Exception):
            self._executor.spin()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._executor.shutdown(timeout_sec=1.0)
        self._thread.join(2.0)
        with contextlib.suppress(Exception):
            self.node.destroy_node()

    def _on_state(self, msg: Any) -> None:
        if self._want_sign and not self._event.is_set():
            k = list(msg.name).index("joint7")
            if len(msg.effort) > k and msg.effort[k] * self._want_sign > 0.05:
                self._t_recv = time.perf_counter()
                self._event.set()

    def _on_echo(self, msg: Any) -> None:
        if msg.header.stamp.nanosec == self._want_seq and not self._event.is_set():
            self._t_recv = time.perf_counter()
            self._event.set()

    def sim_ping(self, sign: float) -> tuple[float, float | None]:
        """(publish stamp, round trip or None when no reacting state came within 0.5 s)."""
        self._event.clear()
        self._want_sign = sign
        msg = self.JointState(name=["joint7"], velocity=[0.3 * sign])
        t0 = time.perf_counter()
        self.cmd_pub.publish(msg)
        ok = self._event.wait(0.5)
        self._want_sign = 0.0
        return t0, (self._t_recv - t0 if ok else None)

    def echo_ping(self, seq: int) -> float | None:
        self._event.clear()
        self._want_seq = seq
        msg = self.JointState(name=[*JOINTS, "finger_left_joint", "finger_right_joint"],
                              position=[0.1] * 9, velocity=[0.0] * 9, effort=[0.0] * 9)
        msg.header.stamp.nanosec = seq
        t0 = time.perf_counter()
        self.echo_pub.publish(msg)
        ok = self._event.wait(0.5)
        self._want_seq = -1
        return self._t_recv - t0 if ok else None


@dataclass
class RoundTripResult:
    """The interleaved pings (seconds) and, per answered command, its stages inside the simulator."""

    sim: list[float]
    echo: list[float]
    lost_sim: int
    lost_echo: int
    stages: dict[str, list[float]]  # stage name -> seconds per matched command (see DECOMPOSITION)
    unmatched: int  # answered commands the simulator's trace has no record of
    missing: int  # commands with no trace record before the next one was sent (late or lost)
    taken: int  # trace records from the first measured command on (the final stop command included)


# Stage -> (from, to) along a command's path; "published"/"sent" are this process's stamps, the rest the
# simulator's (robot_core/physics/tick_trace.py), all CLOCK_MONOTONIC.
DECOMPOSITION = {
    "hop in (publish -> DDS in simulator)": ("sent", "arrived"),
    "wait for the next step": ("arrived", "began"),
    "take (bytes, read)": ("began", "received"),
    "decode and queue": ("received", "parsed"),
    "to the applying": ("parsed", "tick"),
    "apply commands": ("tick", "stepping"),
    "step": ("stepping", "stepped"),
    "publish states": ("stepped", "published"),
    "hop out (publish -> probe)": ("published", "answered"),
}
OUR_HANDLING = ("take (bytes, read)", "decode and queue", "to the applying", "apply commands",
                "publish states")


def round_trip(client: Client, pings: int) -> RoundTripResult:
    from robot_core.physics.tick_trace import ENV_VAR, read_trace

    trace_file = Path(tempfile.mkstemp(prefix="bench_tick_trace_", suffix=".json")[1])
    sim = Proc([str(BIN / "simulator"), "--ros-args", "-p", f"urdf_path:={URDF}", "-p", "publish_rate:=1000.0",
                "-p", "publish_tf:=false"], "simulator", env={ENV_VAR: str(trace_file)})
    echo = Proc([sys.executable, "-c", ECHO_NODE], "raw_echo")
    sent: list[tuple[float, float | None]] = []
    try:
        sim.wait_for("simulator ready")
        echo.wait_for("echo ready")
        rt = RoundTrip(client)
        deadline = time.monotonic() + 30
        while (rt.cmd_pub.get_subscription_count() == 0 or rt.echo_pub.get_subscription_count() == 0) and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        for k in range(10):  # warm-up both paths
            rt.sim_ping(1.0 if k % 2 else -1.0)
            rt.echo_ping(k + 1)
        echo_times: list[float] = []
        lost_echo = 0
        for k in range(pings):
            sent.append(rt.sim_ping(1.0 if k % 2 == 0 else -1.0))
            time.sleep(0.01)
            t = rt.echo_ping(1000 + k)
            if t is None:
                lost_echo += 1
            else:
                echo_times.append(t)
            time.sleep(0.01)
        rt.cmd_pub.publish(rt.JointState(name=["joint7"], velocity=[0.0]))
        rt.close()
    finally:
        echo.stop()
        sim.stop()
    try:
        records = read_trace(trace_file)
    except (OSError, ValueError) as exc:
        print(f"  (no tick trace from the simulator: {exc})", flush=True)
        records = []
    finally:
        trace_file.unlink(missing_ok=True)
    sim_times = [rtt for _, rtt in sent if rtt is not None]
    stages: dict[str, list[float]] = {k: [] for k in DECOMPOSITION}
    unmatched = missing = 0
    for k, (t0, rtt) in enumerate(sent):
        # the first command the simulator received after this one was sent and before the next one
        t_next = sent[k + 1][0] if k + 1 < len(sent) else float("inf")
        rec = next((r for r in records if r["received"] is not None and t0 <= r["received"] < t_next), None)
        if rec is None:
            missing += 1
            if rtt is not None:
                unmatched += 1
            continue
        if rtt is None or any(rec[f] is None for f in ("arrived", "began", "published")):
            continue
        at = {**rec, "sent": t0, "answered": t0 + rtt}
        for name, (a, b) in DECOMPOSITION.items():
            stages[name].append(at[b] - at[a])
    taken = sum(1 for r in records if sent and r["received"] is not None and r["received"] >= sent[0][0])
    return RoundTripResult(sim_times, echo_times, len(sent) - len(sim_times), lost_echo, stages, unmatched, missing,
                           taken)


def print_round_trip(rt: RoundTripResult) -> bool:
    """The round-trip table, its decomposition and the arrival check; returns whether the target holds."""
    us = 1e6
    raw = float(np.median(rt.echo)) if rt.echo else float("nan")
    print(f"{'round trip':<40} {'n':>5} {'lost':>5} {'median us':>10} {'p90 us':>8} {'p99 us':>8} "
          f"{'median/raw':>10}")
    for label, times, lost in (("raw rclpy JointState echo (anchor)", rt.echo, rt.lost_echo),
                               ("command -> state through the simulator", rt.sim, rt.lost_sim)):
        if not times:
            print(f"{label:<40} {0:>5} {lost:>5}   (no answer)")
            continue
        a = np.array(times) * us
        print(f"{label:<40} {len(a):>5} {lost:>5} {np.median(a):>10.0f} {np.percentile(a, 90):>8.0f} "
              f"{np.percentile(a, 99):>8.0f} {np.median(a) / (raw * us):>10.2f}")
    sent = len(rt.sim) + rt.lost_sim
    print(f"  every command arrived: {'yes' if rt.taken >= sent + 1 else 'NO'} ({sent} sent + the final stop, "
          f"{rt.taken} taken by the simulator by its shutdown; {sent - rt.missing} before the next was sent, "
          f"{len(rt.sim)} answered by a reacting state within 0.5 s"
          f"{f', {rt.unmatched} answered but not in its trace' if rt.unmatched else ''})")
    n = len(next(iter(rt.stages.values()))) if rt.stages else 0
    if not n or not rt.sim:
        print("  (no decomposition: the simulator's trace matched no answered command)")
        return False
    med = {k: float(np.median(v)) * us for k, v in rt.stages.items()}
    total = float(np.median(rt.sim)) * us
    print(f"  where a command's time goes (medians of {n} commands, stamps inside the simulator)")
    for k, v in med.items():
        print(f"    {k:<36} {v:>8.0f} us  (p90 {np.percentile(rt.stages[k], 90) * us:.0f})")
    st = {k: np.array(v) * us for k, v in rt.stages.items()}
    hops = np.median(st["hop in (publish -> DDS in simulator)"] + st["hop out (publish -> probe)"])
    ours = np.median(sum(st[k] for k in OUR_HANDLING))
    wait, step = med["wait for the next step"], med["step"]
    print(f"  decomposition (medians): raw echo {raw * us:.0f} us (two hops through rclpy callbacks) | this path: "
          f"its two DDS hops {hops:.0f} + wait for the step {wait:.0f} (a paced step every 1000 us: 500 on "
          f"average) + step {step:.0f} + our handling {ours:.0f} (take, decode, queue, apply, publish) = round trip "
          f"{total:.0f} us")
    ok = total <= raw * us + 600.0
    print(f"  target: <= raw echo + 600 us ({raw * us + 600:.0f} us): {'met' if ok else 'NOT met'} "
          f"(round trip - echo = {total - raw * us:.0f} us; our handling {ours:.0f} us, budget 100)")
    return ok


def handling_stages(commands: int = 400, busy: bool = False) -> dict[str, tuple[float, float]]:
    """Our handling of one command, stage by stage, in one process without a paced wait: a SimulatorNode (the
    round trip's configuration) whose simulation thread this thread replaces, and a publisher of the round trip's
    command (joint7's velocity, alternating sign). Per stage (min, median) us over ``commands`` commands: the
    minimum is the least it cost, the median what a loaded machine adds to it. Between two commands the thread
    sleeps 2 ms, as the paced simulation thread sleeps between steps, or with ``busy`` spins for them, which
    keeps its caches warm: the difference is what waking costs each stage."""
    import rclpy
    from rclpy.context import Context
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    from robot_core.nodes.simulator import SimulatorNode

    context = Context()
    rclpy.init(args=["--ros-args", "-p", f"urdf_path:={URDF}", "-p", "publish_rate:=1000.0", "-p",
                     "publish_tf:=false", "-p", "start_paused:=true"], context=context)
    node = SimulatorNode(context=context)
    try:
        node._stop.set()
        node._wake.set()
        node._thread.join()
        node._paused = False
        pub = node.create_publisher(JointState, node.params["joint_commands_topic"],
                                    QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
        engine, protocol = node.engine, node._protocol
        node._set_stamp(engine.step_count * node._dt_ns)
        times: dict[str, list[float]] = {k: [] for k in ("take (raw take, read, decode, queue)", "decode alone",
                                                         "apply commands", "step", "publish states")}
        deadline = time.monotonic() + 10
        while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        for k in range(commands):
            msg = JointState(name=["joint7"], velocity=[0.3 if k % 2 else -0.3])
            pub.publish(msg)
            if busy:
                end = time.perf_counter() + 0.002
                while time.perf_counter() < end:
                    pass
            else:
                time.sleep(0.002)  # delivered meanwhile (same process, shared memory)
            t0 = time.perf_counter()
            taken = node._cmd_poll.poll()
            t1 = time.perf_counter()
            protocol.parse(msg.name, msg.position, msg.velocity, msg.effort)
            t2 = time.perf_counter()
            node._apply_commands()
            t3 = time.perf_counter()
            engine.step(1)
            t4 = time.perf_counter()
            node._publish_joint_states()
            t5 = time.perf_counter()
            if taken != 1:
                continue
            for key, dt in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4), strict=True):
                times[key].append(dt * 1e6)
        return {k: (float(np.min(v)), float(np.median(v))) for k, v in times.items() if v}
    finally:
        node.shutdown()
        node.destroy_node()
        context.try_shutdown()


def print_handling_stages(stages: dict[str, tuple[float, float]], how: str) -> None:
    print(f"  our handling per command, in one process, {how}:")
    for k, (lo, med) in stages.items():
        print(f"    {k:<40} min {lo:>6.1f} us   median {med:>6.1f} us")
    ours = [k for k in stages if k != "decode alone" and k != "step"]
    print(f"    {'our handling (take + apply + publish)':<40} min {sum(stages[k][0] for k in ours):>6.1f} us   "
          f"median {sum(stages[k][1] for k in ours):>6.1f} us   (budget 100)")


PR2_LABEL = "full PR2, embedded, all ctrl, 1 kHz"


def print_loop_rows(floor: dict[str, float], anchor: dict[str, float], rows: list[tuple[str, dict[str, float]]],
                    low_latency: dict[str, dict[str, float]], qos_problem: str) -> None:
    """The update-loop table: the two anchors, then ``rows``, then the cpu_dma_latency rows if measured."""
    us = 1e6
    print(f"  loop thread scheduling: anchors {LOOP_SCHEDULING[0] if LOOP_SCHEDULING else '?'}, "
          f"nodes {' / '.join(sorted(NODE_SCHEDULING)) or '?'} (the manager's thread_priority, as upstream)")
    print()
    print(f"{'update loop':<40} {'target Hz':>9} {'achieved':>9} {'mean us':>8} {'p99 us':>8} {'max us':>8} "
          f"{'overrun %':>9} {'p99/anchor':>10} {'p99/period':>10}")

    def line(label: str, s: dict[str, float], ref: dict[str, float]) -> None:
        period = 1.0 / s["target_rate"]
        print(f"{label:<40} {s['target_rate']:>9.0f} {s['achieved_rate']:>9.1f} {s['mean'] * us:>8.0f} "
              f"{s['p99'] * us:>8.0f} {s['max'] * us:>8.0f} {s['overrun_ratio'] * 100:>9.3f} "
              f"{s['p99'] / ref['p99']:>10.2f} {s['p99'] / period:>10.2f}")

    for label, s in (("raw mj_step, paced (machine floor)", floor), ("core cycle, no ROS (anchor)", anchor), *rows):
        line(label, s, anchor)
    if low_latency:
        print("  with cpu_dma_latency:=0 (opt-in; anchors measured under the same request):")
        for label, s in (("  raw mj_step, paced", low_latency["floor"]),
                         ("  core cycle, no ROS (anchor)", low_latency["anchor"]),
                         ("  node, embedded simulator, 1 kHz", low_latency["embedded"])):
            line(label, s, low_latency["anchor"])
    else:
        print(f"  (cpu_dma_latency:=0 rows skipped: {qos_problem})")


def print_pr2_note(embedded: dict[str, float], pr2: dict[str, float]) -> None:
    print(f"  full PR2: {pr2['controllers']:.0f} controllers active, r_arm goals {pr2['goals_succeeded']:.0f}/"
          f"{pr2['goals']:.0f} succeeded; p99 {pr2['p99'] / embedded['p99']:.2f}x the arm's embedded row, "
          f"overruns {pr2['overrun_ratio'] * 100:.3f} % vs {embedded['overrun_ratio'] * 100:.3f} %")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="measurement window per node row")
    parser.add_argument("--pings", type=int, default=200, help="round trips per path")
    parser.add_argument("--pr2-only", action="store_true", help="only the anchors, the arm's embedded 1 kHz row "
                        "and the full PR2's (no topic-based, round-trip or cpu_dma_latency rows)")
    parser.add_argument("--round-trip-only", action="store_true", help="only the round trip through the "
                        "simulator, its raw echo anchor and the decomposition")
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(1 + (os.getpid() + 53) % 100))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
    load0 = os.getloadavg()[0]

    print("control loop benchmark: rc_arm (7 DOF), joint_state_broadcaster + joint_trajectory_controller active")
    print(f"  machine: {os.cpu_count()} CPUs, load average {load0:.2f} at start", flush=True)
    if args.round_trip_only:
        client = Client()
        try:
            result = round_trip(client, args.pings)
        finally:
            client.shutdown()
        ok = print_round_trip(result)
        print_handling_stages(handling_stages(), "sleeping 2 ms between commands as the paced simulator does")
        print_handling_stages(handling_stages(busy=True), "spinning between commands (caches kept warm)")
        print(f"target round trip <= raw echo + 600 us: {'met' if ok else 'NOT met'} "
              f"(load average {load0:.2f} at start, {os.getloadavg()[0]:.2f} at end)")
        return 0
    floor = raw_step_anchor(URDF, min(args.seconds, 5.0))
    anchor = core_anchor(min(args.seconds, 5.0))
    client = Client()
    low_latency: dict[str, dict[str, float]] = {}
    qos_problem = "--pr2-only"
    try:
        embedded = node_row(client, args.seconds, 1000, "embedded")
        pr2 = pr2_row(client, args.seconds)
        if args.pr2_only:
            print_loop_rows(floor, anchor, [("node, embedded simulator, 1 kHz", embedded),
                                            (PR2_LABEL, pr2)], low_latency, qos_problem)
            print_pr2_note(embedded, pr2)
            return 0
        embedded_100 = node_row(client, args.seconds, 1000, "embedded", publish_rate=100.0)
        topic = node_row(client, args.seconds, 500, "topic")
        rt = round_trip(client, args.pings)
        # Opt-in: the manager's cpu_dma_latency:=0 (idle CPUs poll instead of sleeping). The request is
        # system-wide, so the anchors run under the same request, held by this process.
        from robot_core.ros import realtime

        fd, qos_problem = realtime.hold_cpu_dma_latency(0)
        if fd is not None:
            try:
                low_latency["floor"] = raw_step_anchor(URDF, min(args.seconds, 5.0))
                low_latency["anchor"] = core_anchor(min(args.seconds, 5.0))
                low_latency["embedded"] = node_row(client, args.seconds, 1000, "embedded",
                                                   extra=("cpu_dma_latency:=0",))
            finally:
                os.close(fd)
    finally:
        client.shutdown()

    print_loop_rows(floor, anchor, [("node, embedded simulator, 1 kHz", embedded),
                                    ("  same, states published at 100 Hz", embedded_100),
                                    ("node, topic-based to simulator, 500 Hz", topic), (PR2_LABEL, pr2)],
                    low_latency, qos_problem)
    print("  (/joint_states, /dynamic_joint_states and the JTC state are published every cycle unless noted;")
    print("   'states published at 100 Hz': broadcaster update_rate 100, JTC state_publish_rate 100)")
    print(f"  goals completed while measuring: embedded {embedded['goals_succeeded']:.0f}/{embedded['goals']:.0f} "
          f"succeeded, at 100 Hz publishing {embedded_100['goals_succeeded']:.0f}/{embedded_100['goals']:.0f}, "
          f"topic-based {topic['goals_succeeded']:.0f}/{topic['goals']:.0f}")
    print_pr2_note(embedded, pr2)
    print()
    ok_rt = print_round_trip(rt)
    print()
    ok_loop = embedded["p99"] < 500e-6 and embedded["overrun_ratio"] < 0.001
    ok_loop_100 = embedded_100["p99"] < 500e-6 and embedded_100["overrun_ratio"] < 0.001
    lo = low_latency.get("embedded")
    ok_lo = "n/a" if lo is None else ("met" if lo["p99"] < 500e-6 and lo["overrun_ratio"] < 0.001 else "NOT met")
    print(f"targets: embedded 1 kHz p99 < 500 us and < 0.1 % overruns: {'met' if ok_loop else 'NOT met'} "
          f"(with 100 Hz publishing: {'met' if ok_loop_100 else 'NOT met'}; with cpu_dma_latency:=0: {ok_lo}); "
          f"round trip <= raw echo + 600 us: {'met' if ok_rt else 'NOT met'} "
          f"(load average {load0:.2f} at start, {os.getloadavg()[0]:.2f} at end)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
