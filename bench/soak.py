"""Soak benchmark: does the resident memory of the controller manager (and the simulator) stop growing?

Starts the graph ``robot-core bringup`` starts in topic mode (``robot_core.bringup.Bringup`` with the default
plan: simulator + controller manager, the active controllers of ``config/controllers.yaml`` spawned active, the
inactive ones loaded; no RBC, headless) on a ROS domain of its own, and keeps it busy the way a user would for
``--minutes`` (default 10):

* a FollowJointTrajectory goal every ``--goal-period`` seconds (default 3), alternating between two poses
  (1.5 s trajectories), each result awaited (a tick that finds the previous goal still running is skipped);
* a ``~/list_controllers`` call every second.

Every 10 s it reads VmRSS from ``/proc/<pid>/status`` of each node process. Anchor, measured in the same run: a
bare rclpy node (its own process) publishing a 9-joint JointState from one 1 kHz timer, read by a raw
subscription in this process: its slope is what "no growth" looks like for rclpy + Fast DDS themselves.

The table gives RSS per minute, then the least-squares slope (kB/min) of the samples of the first 2 minutes
(warm-up), of the rest, and of the second half of the run. A leak shows as a slope after warm-up clearly above
the anchor's that does not flatten in the second half.

At the end it also prints, per process, its thread count and its malloc arenas (the 64 MB-reserved anonymous
regions glibc maps for threads' arenas, counted from ``/proc/<pid>/maps``) at the first and the last sample:
what the growth is made of. ``--node-env KEY=VALUE`` (repeatable) sets an environment variable in the node
processes only (not the anchor), e.g. ``MALLOC_ARENA_MAX=0`` to undo the nodes' own arena cap
(:mod:`robot_core.ros.malloc_arenas`) for a comparison.

``--tracemalloc A,B`` traces the controller manager's Python allocations (``bench/tracemalloc_site``, put first
on the nodes' PYTHONPATH) and has it dump a snapshot at minute A and minute B of the load; the end shows what grew
in between, by source line and by the innermost robot_core frame, beside its ``/proc/<pid>/smaps_rollup`` then
(tracemalloc slows every allocation: the RSS figures of such a run are not comparable with a plain one).

Run: ``.venv/bin/python bench/soak.py [--minutes 10] [--goal-period 3] [--node-env KEY=VALUE ...]
[--tracemalloc 2,12]``.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
JOINTS = [f"joint{i}" for i in range(1, 8)]
HOME = [0.0, 0.3, 0.0, 1.9, 0.0, 0.94, 0.0]
AWAY = [0.5, 0.6, -0.3, 1.6, 0.3, 1.2, 0.4]
SAMPLE_PERIOD = 10.0  # s between RSS samples
WARM_UP = 120.0  # s: samples before this are the warm-up slope, the rest the steady-state slope

ANCHOR_NODE = """
import rclpy
from sensor_msgs.msg import JointState
rclpy.init()
node = rclpy.create_node("soak_rss_anchor")
pub = node.create_publisher(JointState, "/soak_anchor", 10)
names = [f"joint{i}" for i in range(1, 8)] + ["finger_left_joint", "finger_right_joint"]
def tick():
    msg = JointState(name=names, position=[0.1] * 9, velocity=[0.0] * 9, effort=[0.0] * 9)
    msg.header.stamp = node.get_clock().now().to_msg()
    pub.publish(msg)
node.create_timer(0.001, tick)
print("anchor ready", flush=True)
try:
    rclpy.spin(node)
except (Exception, KeyboardInterrupt):  # stopped with SIGINT: a clean end
    pass
"""

_DOMAIN_LOCK: IO[str] | None = None  # held for the whole run: the lock file is the reservation


def isolate_ros() -> int:
    """A domain id in 1..100 no test session holds (same flock files as test/ros_harness.py), localhost only.

    A 10-minute run beside other engineers' test sessions must neither answer their calls nor take theirs."""
    global _DOMAIN_LOCK
    start = os.getpid() % 100
    for k in range(100):
        domain = 1 + (start + k) % 100
        f = open(os.path.join(tempfile.gettempdir(), f"robot_core_ros_domain_{domain}.lock"), "w")  # noqa: SIM115
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            continue
        _DOMAIN_LOCK = f
        os.environ["ROS_DOMAIN_ID"] = str(domain)
        os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
        os.environ.pop("ROS_STATIC_PEERS", None)
        os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        return domain
    raise RuntimeError("no free ROS domain id in 1..100")


def status_field(pid: int, key: str) -> int | None:
    """An integer field of ``/proc/<pid>/status`` (``VmRSS`` in kB, ``Threads``); None once the process has gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{key}:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


ARENA_RESERVE = 64 * 1024 * 1024  # glibc's HEAP_MAX_SIZE on 64-bit: each thread arena reserves this much


def malloc_arenas(pid: int) -> int | None:
    """glibc thread arenas of a live process: anonymous mappings aligned to, and within, one 64 MB reservation
    (the arena's used part is rw-p, the rest ---p; both parts start a region aligned to 64 MB only for an arena).

    The main arena lives in [heap] and is not counted. None once the process has gone."""
    try:
        text = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return None
    count = 0
    for line in text.splitlines():
        fields = line.split()
        if len(fields) != 5:  # anonymous mappings have no path
            continue
        start, end = (int(x, 16) for x in fields[0].split("-"))
        if start % ARENA_RESERVE == 0 and end - start <= ARENA_RESERVE and fields[1].startswith("rw"):
            count += 1
    return count


def smaps_rollup(pid: int) -> dict[str, int]:
    """The kB fields of ``/proc/<pid>/smaps_rollup`` (Rss, Pss_Anon, Private_Dirty, ...); empty once gone."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return {}
    fields = {}
    for line in text.splitlines()[1:]:
        key, _, rest = line.partition(":")
        parts = rest.split()
        if len(parts) == 2 and parts[1] == "kB":
            fields[key] = int(parts[0])
    return fields


def print_tracemalloc_diff(folder: Path, labels: list[str], rollups: dict[str, dict[str, int]],
                           top: int = 12) -> None:
    """What the controller manager's Python allocations gained between its two snapshots, by source line (the
    innermost frame), then by the innermost robot_core frame of each allocation's traceback; and how its
    smaps_rollup changed meanwhile (live Python memory vs. all anonymous memory)."""
    import tracemalloc

    first, last = labels
    paths = [folder / f"{label}.snapshot" for label in labels]
    missing = [str(p) for p in paths if not p.exists()]
    print()
    if missing:
        print(f"  tracemalloc: no snapshot {', '.join(missing)} (the manager did not write it)")
        return
    a, b = (tracemalloc.Snapshot.load(str(p)) for p in paths)
    total = [sum(s.size for s in snap.statistics("filename")) for snap in (a, b)]
    print(f"controller manager, tracemalloc {first} -> {last}: traced Python memory {total[0] / 1024:.0f} -> "
          f"{total[1] / 1024:.0f} kB ({(total[1] - total[0]) / 1024:+.0f} kB)")
    ra, rb = rollups.get(first, {}), rollups.get(last, {})
    keys = [k for k in ("Rss", "Anonymous", "Pss_Anon", "Private_Dirty") if k in ra and k in rb]
    if keys:
        print("  smaps_rollup: " + ", ".join(f"{k} {ra[k]} -> {rb[k]} kB ({rb[k] - ra[k]:+d})" for k in keys))
    print(f"  largest growth by line (top {top}):")
    for stat in b.compare_to(a, "lineno")[:top]:
        frame = stat.traceback[0]
        print(f"    {stat.size_diff / 1024:+9.1f} kB {stat.count_diff:+7d} blocks  {frame.filename}:{frame.lineno}")
    growth: dict[str, list[int]] = {}
    for stat in b.compare_to(a, "traceback"):
        ours = next((f for f in stat.traceback if "robot_core" in f.filename), None)
        where = f"{ours.filename}:{ours.lineno}" if ours else "(no robot_core frame)"
        acc = growth.setdefault(where, [0, 0])
        acc[0] += stat.size_diff
        acc[1] += stat.count_diff
    print(f"  largest growth by the innermost robot_core frame (top {top}):")
    for where, (size, count) in sorted(growth.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"    {size / 1024:+9.1f} kB {count:+7d} blocks  {where}")


def slope_kb_per_min(t: list[float], rss: list[int]) -> float | None:
    """Least-squares slope of RSS (kB) over time (s), in kB/min; None with fewer than 3 samples."""
    if len(t) < 3:
        return None
    return float(np.polyfit(np.asarray(t) / 60.0, np.asarray(rss, dtype=float), 1)[0])


class InFlight:
    """One kind of request sent periodically, one at a time: a tick that finds the previous one unanswered skips,
    unless it waited longer than ``timeout`` (then it counts as failed, its late answer is ignored)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.sent = 0  # finished ones only
        self.ok = 0
        self.failures: dict[str, int] = {}  # why one did not succeed -> how often
        self._serial = 0
        self._since: float | None = None  # monotonic time the one in flight was sent

    def begin(self) -> int | None:
        """The serial of a new request to send now, or None while the previous one is still running."""
        if self._since is not None:
            if time.monotonic() - self._since <= self.timeout:
                return None
            self.done(self._serial, f"no answer within {self.timeout:g} s")
        self._serial += 1
        self._since = time.monotonic()
        return self._serial

    def done(self, serial: int, why: str | None) -> None:
        """Request ``serial`` finished: ``why`` None for success, else the reason it did not succeed."""
        if serial != self._serial or self._since is None:
            return  # an answer to one already given up on
        self._since = None
        self.sent += 1
        if why is None:
            self.ok += 1
        else:
            self.failures[why] = self.failures.get(why, 0) + 1


class Client:
    """This process's ROS side: the user's calls and the anchor's reader.

    Everything runs on one executor thread (timers and done callbacks): rclpy's action client is not safe
    against a goal sent from another thread while the executor delivers the answer."""

    GOAL_TIMEOUT = 30.0  # s for a goal's answer plus result; longer counts as "no answer"
    LIST_TIMEOUT = 10.0  # s for a list_controllers answer

    def __init__(self) -> None:
        import rclpy
        from control_msgs.action import FollowJointTrajectory
        from controller_manager_msgs.srv import ListControllers
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.signals import SignalHandlerOptions
        from sensor_msgs.msg import JointState

        from robot_core.ros.action_client import ActionClient

        self.context = Context()
        rclpy.init(context=self.context, signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node("soak_bench", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.lister = self.node.create_client(ListControllers, "/controller_manager/list_controllers")
        self.action = ActionClient(self.node, FollowJointTrajectory,
                                   "/joint_trajectory_controller/follow_joint_trajectory")
        self.anchor_msgs = 0
        self.node.create_subscription(JointState, "/soak_anchor", self._count_anchor, 10, raw=True)
        self.goals = InFlight(self.GOAL_TIMEOUT)
        self.lists = InFlight(self.LIST_TIMEOUT)
        self._target = AWAY
        self._timers: list[Any] = []
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _count_anchor(self, _msg: bytes) -> None:
        self.anchor_msgs += 1

    def _spin(self) -> None:
        with contextlib.suppress(Exception):
            self.executor.spin()

    def start_load(self, goal_period: float) -> None:
        """A goal every ``goal_period`` s (when the previous one is finished) and list_controllers every 1 s."""
        if not self.action.wait_for_server(timeout_sec=60):
            raise RuntimeError("/joint_trajectory_controller/follow_joint_trajectory not available")
        if not self.lister.wait_for_service(timeout_sec=60):
            raise RuntimeError("/controller_manager/list_controllers not available")
        self._timers = [self.node.create_timer(goal_period, self._goal_tick),
                        self.node.create_timer(1.0, self._list_tick)]

    # --- goals and list_controllers: executor thread only -----------------------------------------------------
    def _goal_tick(self) -> None:
        from builtin_interfaces.msg import Duration
        from control_msgs.action import FollowJointTrajectory
        from trajectory_msgs.msg import JointTrajectoryPoint

        serial = self.goals.begin()
        if serial is None:
            return
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = JOINTS
        goal.trajectory.points = [JointTrajectoryPoint(positions=self._target,
                                                       time_from_start=Duration(sec=1, nanosec=500_000_000))]
        self._target = HOME if self._target is AWAY else AWAY
        self.action.send_goal_async(goal).add_done_callback(lambda f: self._on_goal_answer(serial, f))

    def _on_goal_answer(self, serial: int, future: Any) -> None:
        handle = future.result()
        if handle is None or not handle.accepted:
            self.goals.done(serial, "rejected")
            return
        handle.get_result_async().add_done_callback(
            lambda f: self.goals.done(serial, None if f.result().result.error_code == 0
                                      else f"error_code {f.result().result.error_code}"))

    def _list_tick(self) -> None:
        from controller_manager_msgs.srv import ListControllers

        serial = self.lists.begin()
        if serial is not None:
            self.lister.call_async(ListControllers.Request()).add_done_callback(
                lambda f: self.lists.done(serial, None if f.result() is not None else "no answer"))

    def shutdown(self) -> None:
        for timer in self._timers:
            timer.cancel()
        with contextlib.suppress(Exception):
            self.executor.shutdown(timeout_sec=1.0)
        self._thread.join(2.0)
        with contextlib.suppress(Exception):
            self.node.destroy_node()
        with contextlib.suppress(Exception):
            self.context.try_shutdown()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="soak duration after the graph is up")
    parser.add_argument("--goal-period", type=float, default=3.0, help="seconds between FollowJointTrajectory goals")
    parser.add_argument("--node-env", action="append", default=[], metavar="KEY=VALUE",
                        help="environment variable for the node processes (not the anchor); repeatable")
    parser.add_argument("--tracemalloc", metavar="A,B",
                        help="minutes A and B (of the load) at which the controller manager dumps a tracemalloc "
                             "snapshot (bench/tracemalloc_site); the end shows what grew between them")
    args = parser.parse_args()
    marks: list[float] = []
    if args.tracemalloc:
        try:
            marks = [float(x) for x in args.tracemalloc.split(",")]
        except ValueError:
            marks = []
        if len(marks) != 2 or not 0 <= marks[0] < marks[1] <= args.minutes:
            parser.error(f"--tracemalloc {args.tracemalloc!r}: expected A,B with 0 <= A < B <= --minutes")
    node_env: dict[str, str] = {}
    for item in args.node_env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"--node-env {item!r}: expected KEY=VALUE")
        node_env[key] = value
    trace_dir = Path(tempfile.mkdtemp(prefix="soak_tracemalloc_")) if marks else None
    if trace_dir is not None:
        site_dir = REPO / "bench" / "tracemalloc_site"
        given = node_env.get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
        node_env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in (str(site_dir), str(REPO),
                                                                           *given.split(os.pathsep)) if p))
        node_env["ROBOT_CORE_TRACEMALLOC_DIR"] = str(trace_dir)
    domain = isolate_ros()
    sys.path.insert(0, str(REPO))
    from robot_core.bringup.plan import BringupOptions, make_plan
    from robot_core.bringup.run import Bringup

    plan = make_plan(BringupOptions.create(mode="topic", rbc=False, headless=True))
    load0 = os.getloadavg()[0]
    print("soak benchmark: robot-core bringup, topic mode, rc_arm (7 DOF); active: "
          f"{', '.join(plan.active_controllers())}; inactive: {', '.join(plan.inactive_controllers())}")
    print(f"  machine: {os.cpu_count()} CPUs, load average {load0:.2f} at start; ROS domain {domain}; "
          f"{args.minutes:g} min, a goal every {args.goal_period:g} s, list_controllers every 1 s, "
          f"RSS every {SAMPLE_PERIOD:g} s", flush=True)
    if node_env:
        print(f"  node environment: {' '.join(f'{k}={v}' for k, v in node_env.items())}", flush=True)
    log_dir = Path(tempfile.mkdtemp(prefix="soak_logs_"))
    bringup = Bringup(plan, log_dir=log_dir, ready_timeout=180.0)
    client: Client | None = None
    samples: dict[str, list[tuple[float, int]]] = {}
    lost: list[str] = []
    structure: dict[str, list[tuple[int | None, int | None]]] = {}  # name -> (threads, arenas) first, last
    rollups: dict[str, dict[str, int]] = {}  # tracemalloc label -> the manager's smaps_rollup then
    bare_env = dict(bringup.supervisor.env)
    try:
        bringup.supervisor.env.update(node_env)
        report = bringup.start()
        bringup.supervisor.env = bare_env  # the anchor stays a bare rclpy process
        anchor = bringup.supervisor.start("rss_anchor", [sys.executable, "-c", ANCHOR_NODE])
        deadline = time.monotonic() + 60.0
        while "anchor ready" not in anchor.output():
            if not anchor.alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the anchor node did not start:\n{anchor.output()[-2000:]}")
            time.sleep(0.05)
        pids = {"controller_manager": report.pids["controller_manager"], "simulator": report.pids["simulator"],
                "anchor (bare rclpy 1 kHz)": anchor.pid}
        samples = {name: [] for name in pids}
        client = Client()
        client.start_load(args.goal_period)
        print(f"  graph up in {report.seconds:.1f} s; pids {pids}", flush=True)
        t0 = time.monotonic()
        end = t0 + args.minutes * 60.0
        k = 0
        while True:
            now = time.monotonic()
            for name, pid in pids.items():
                value = status_field(pid, "VmRSS")
                if value is None:
                    if name not in lost:
                        lost.append(name)
                else:
                    samples[name].append((now - t0, value))
                    shape = (status_field(pid, "Threads"), malloc_arenas(pid))
                    if None not in shape:
                        structure.setdefault(name, [shape])[1:] = [shape]
            for mark in marks:
                label = f"minute_{mark:g}"
                if trace_dir is not None and label not in rollups and now - t0 >= mark * 60.0 - 1.0:
                    (trace_dir / f"{label}.request").write_text("")
                    rollups[label] = smaps_rollup(pids["controller_manager"])
            if lost or now >= end:
                break
            k += 1
            time.sleep(max(0.0, min(t0 + k * SAMPLE_PERIOD, end) - time.monotonic()))
        if trace_dir is not None:  # the manager dumps its snapshots on its own thread within a second or so
            wait_end = time.monotonic() + 120.0
            while time.monotonic() < wait_end and not all((trace_dir / f"{label}.snapshot").exists()
                                                          for label in rollups):
                time.sleep(0.5)
    finally:
        if client is not None:
            client.shutdown()  # stops the executor: the counts are final after this
        goals = client.goals if client is not None else InFlight(0.0)
        lists = client.lists if client is not None else InFlight(0.0)
        anchor_msgs = client.anchor_msgs if client is not None else 0
        bringup.stop()
    if lost:
        print(f"  stopped early: {', '.join(lost)} exited (logs in {log_dir})")

    print()
    names = list(samples)
    header = f"{'minute':>6} " + " ".join(f"{n + ' RSS kB':>34}" for n in names)
    print(header)
    minute = 0
    while True:
        rows = {n: [v for t, v in samples[n] if t >= minute * 60.0 - 0.5] for n in names}
        if not all(rows.values()):
            break
        print(f"{minute:>6} " + " ".join(f"{rows[n][0]:>34}" for n in names))
        minute += 1
    print()
    print(f"{'slope kB/min (least squares)':<30} {'0-2 min':>10} {'2 min-end':>10} {'2nd half':>10} {'samples':>8} "
          f"{'vs anchor':>10}")
    slopes: dict[str, tuple[float | None, ...]] = {}
    for n in names:
        half = 0.5 * samples[n][-1][0] if samples[n] else 0.0
        windows = ([(t, v) for t, v in samples[n] if t <= WARM_UP], [(t, v) for t, v in samples[n] if t >= WARM_UP],
                   [(t, v) for t, v in samples[n] if t >= half])  # the last: does a growth flatten out?
        slopes[n] = tuple(slope_kb_per_min([t for t, _ in w], [v for _, v in w]) for w in windows)
    anchor_late = slopes[names[-1]][1] if names else None
    for n in names:
        cells = [f"{s:>10.1f}" if s is not None else f"{'':>10}" for s in slopes[n]]
        versus = ""
        if n != names[-1] and slopes[n][1] is not None and anchor_late is not None:
            versus = f" {slopes[n][1] - anchor_late:>+10.1f}"
        print(f"{n:<30} {' '.join(cells)} {len(samples[n]):>8}{versus}")
    print()
    for n in names:
        if n in structure:
            (t_first, a_first), (t_last, a_last) = structure[n][0], structure[n][-1]
            print(f"  {n}: threads {t_first} -> {t_last}, malloc arena heaps {a_first} -> {a_last}")
    print(f"  load: goals {goals.ok}/{goals.sent} succeeded, list_controllers {lists.ok}/{lists.sent} answered, "
          f"{anchor_msgs} anchor messages read; load average {load0:.2f} at start, {os.getloadavg()[0]:.2f} at end")
    if goals.failures:
        print("  goals that did not succeed: " + ", ".join(f"{why} x{n}" for why, n in sorted(goals.failures.items())))
    print("  ('vs anchor': steady-state slope minus the anchor's, kB/min; node logs kept only on failure)")
    if trace_dir is not None:
        print_tracemalloc_diff(trace_dir, [f"minute_{m:g}" for m in marks], rollups)
    if not lost:
        import shutil

        shutil.rmtree(log_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
