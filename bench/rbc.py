"""Robot Body Coupler cost: 30 vars over 3 state topics at 1 kHz, against a raw rclpy echo measured in the same run.

Run: ``.venv/bin/python bench/rbc.py [--seconds 5] [--rounds 2] [--rate 1000]``

The robot is a synthetic 10-joint chain (written by :func:`bench_urdf`) whose 30 state vars come from three
topics of two message types: ``q`` from ``/bench/joint_states`` (sensor_msgs/JointState ``position``, matched by
name), ``qd`` and ``tau`` from ``/bench/velocities`` and ``/bench/efforts`` (std_msgs/Float64MultiArray ``data``,
by index).

Tables (3 alone: ``--only-reachers``):

1. **In-process cost (no DDS)**: ``time.process_time`` over N cycles of exactly what the node does per cycle
   of 1 kHz input: three ``Coupler.on_message`` calls, three ``aggregate_joint_state`` outputs (the node
   publishes those on message arrival) and one ``Coupler.step``. The anchor is building and copying the same
   three messages by hand (``raw copy``), i.e. the least a Python relay of these messages must do.
2. **Over DDS**: this process publishes the three topics at ``--rate`` Hz (seq number in element 0) and
   subscribes to the outputs; the process under test is either the **raw echo** (a plain rclpy node, same
   single-threaded executor, republishing each input unchanged: the anchor) or the real **rbc node** (console
   script ``rbc`` with its cycle at 1 kHz and at the default 100 Hz; outputs ``~/q``, ``~/qd``, ``~/tau`` go out
   on message arrival). Latency = time from publishing an input to receiving the output carrying its seq
   number, both in this process (only the JointState path is timed, so the probe is not the bottleneck); CPU
   is the process under test's user+system time from /proc over the measuring window, per input cycle (3
   messages). Rounds alternate the processes; the round with the best median latency of each is shown (the
   machine may be shared, so absolute numbers move with its load).
3. **Reachers in one process vs as processes**: one robot with two 6-joint arms, a VectorField on each arm
   (goals far enough that both fields work for the whole run), the coupler stepped at ``--rate`` Hz in this
   process on a perfect position servo (q = q_ref, no DDS, so only the reachers' cost and where it runs
   differ): the two reachers in the coupler's process, or as two instance processes on the shared-memory var
   table (``instance_processes: true``). Cycle = wall time of one ``on_message`` + ``step`` (p50, p99; ``late``
   = cycles that overran their period); CPU = this process plus the instance processes. The anchor is the raw
   rclpy echo of table 2, measured in the same run (its p99 is its input -> output latency).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

N_JOINTS = 10
TOPICS = {"q": "/bench/joint_states", "qd": "/bench/velocities", "tau": "/bench/efforts"}
ECHO_PREFIX = "/bench_echo"


def bench_urdf(n: int = N_JOINTS) -> str:
    """A chain of ``n`` revolute joints, each with q / qd / tau on the three bench topics."""
    parts = ['<?xml version="1.0"?>', '<robot name="rbc_bench">', '  <link name="base_link"/>']
    for i in range(n):
        parts.append(f'  <link name="link{i}"><inertial><mass value="1.0"/>'
                     '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>')
        parent = "base_link" if i == 0 else f"link{i - 1}"
        parts.append(f'  <joint name="j{i}" type="revolute"><parent link="{parent}"/><child link="link{i}"/>'
                     '<origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>'
                     '<limit lower="-3" upper="3" effort="10" velocity="2"/>')
        parts.append('    <rbc node="bench_driver">')
        for var, topic, msg_type, field in (("q", TOPICS["q"], "sensor_msgs.msg.JointState", "position"),
                                            ("qd", TOPICS["qd"], "std_msgs/msg/Float64MultiArray", "data"),
                                            ("tau", TOPICS["tau"], "std_msgs/msg/Float64MultiArray", "data")):
            parts.append(f'      <var name="{var}" init="0.0" topic="{topic}" type="state"><msg type="{msg_type}" '
                         f'field="{field}" field_array="true" index="{i}" index_type="float"/></var>')
        parts.append("    </rbc>")
        parts.append("  </joint>")
    parts.append("</robot>")
    return "\n".join(parts)


JOINTS = [f"j{i}" for i in range(N_JOINTS)]


def make_inputs(seq: int) -> dict[str, Any]:
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    values = [float(seq)] + [0.1 * i for i in range(1, N_JOINTS)]
    return {TOPICS["q"]: JointState(name=JOINTS, position=values),
            TOPICS["qd"]: Float64MultiArray(data=values), TOPICS["tau"]: Float64MultiArray(data=values)}


# --- 1. in-process --------------------------------------------------------------------------------------------
@dataclass
class CpuRow:
    label: str
    us_per_cycle: float
    note: str = ""


def in_process(cycles: int) -> list[CpuRow]:
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from robot_core.model import load_robot
    from robot_core.nodes.rbc import AggregateOutput
    from robot_core.rbc.coupler import Coupler

    model = load_robot(bench_urdf())
    coupler = Coupler(model)
    msgs = make_inputs(1)
    topics = list(msgs)
    outputs = {v: AggregateOutput(coupler.table.entries(v), None, True) for v in coupler.var_names()}
    feed_vars = {t: sorted({e.name for e in st.entries}) for t, st in coupler.table.state_topics.items()}
    feeds = {t: [outputs[v] for v in vs] for t, vs in feed_vars.items()}

    def raw_copy(now: float) -> None:  # anchor: a relay that rebuilds the three messages
        js = msgs[TOPICS["q"]]
        JointState(name=list(js.name), position=list(js.position))
        Float64MultiArray(data=list(msgs[TOPICS["qd"]].data))
        Float64MultiArray(data=list(msgs[TOPICS["tau"]].data))

    def messages_only(now: float) -> None:
        for t in topics:
            coupler.on_message(t, msgs[t], now)

    def node_cycle(now: float) -> None:  # what the node does per 1 kHz input cycle, publishing aside
        for t in topics:
            coupler.on_message(t, msgs[t], now)
            for out in feeds[t]:
                out.fill()
        coupler.step(now)

    def core_aggregates(now: float) -> None:
        for t in topics:
            coupler.on_message(t, msgs[t], now)
            for v in feed_vars[t]:
                coupler.aggregate_joint_state(v, now)
        coupler.step(now)

    def step_only(now: float) -> None:
        coupler.step(now)

    rows = []
    for label, fn, note in (("raw copy (anchor)", raw_copy, "3 messages rebuilt"),
                            ("on_message x3", messages_only, "30 vars stored"),
                            ("step", step_only, "staleness + mixing, no reachers"),
                            ("node cycle", node_cycle, "on_message x3 + ~/q,~/qd,~/tau filled + step"),
                            ("  same, core aggregate", core_aggregates,
                             "with Coupler.aggregate_joint_state building the outputs")):
        for k in range(200):
            fn(k * 1e-3)
        t0 = time.process_time()
        for k in range(cycles):
            fn(1.0 + k * 1e-3)
        rows.append(CpuRow(label, (time.process_time() - t0) / cycles * 1e6, note))
    return rows


# --- 3. reachers in one process vs as processes ---------------------------------------------------------------
ARM_JOINTS = 6
ARM_AXES = ("0 0 1", "0 1 0", "0 1 0", "1 0 0", "0 1 0", "0 0 1")
REACH_STATES, REACH_COMMANDS = "/bench/arms/joint_states", "/bench/arms/commands"


def two_arm_urdf() -> str:
    """One robot, two 6-joint chains (arms ``a`` and ``b``) on one base; q in from, q_ref out to JointState topics."""
    parts = ['<?xml version="1.0"?>', '<robot name="rbc_two_arms">', '  <link name="base_link"/>']
    index = 0
    for arm, y in (("a", 0.3), ("b", -0.3)):
        for i in range(ARM_JOINTS):
            link, parent = f"{arm}_link{i}", ("base_link" if i == 0 else f"{arm}_link{i - 1}")
            origin = f"0 {y} 0.1" if i == 0 else "0 0 0.15"
            parts.append(f'  <link name="{link}"><inertial><mass value="1.0"/>'
                         '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>')
            parts.append(f'  <joint name="{arm}_j{i}" type="revolute"><parent link="{parent}"/><child link="{link}"/>'
                         f'<origin xyz="{origin}"/><axis xyz="{ARM_AXES[i]}"/>'
                         '<limit lower="-3" upper="3" effort="10" velocity="2"/>')
            parts.append('    <rbc node="bench_arms">')
            for var, kind, topic in (("q", "state", REACH_STATES), ("q_ref", "cmd", REACH_COMMANDS)):
                parts.append(f'      <var name="{var}" init="0.0" topic="{topic}" type="{kind}"><msg '
                             f'type="sensor_msgs/msg/JointState" field="position" field_array="true" '
                             f'index="{index}" index_type="float"/></var>')
            parts.append("    </rbc>")
            parts.append("  </joint>")
            index += 1
    parts.append("</robot>")
    return "\n".join(parts)


@dataclass
class ReachRow:
    label: str
    cycles: int
    p50: float
    p99: float
    late: int
    cpu_percent: float
    cpu_us_per_cycle: float
    moved: float


def _vf_setup(arm: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Parameters and a goal that keep the arm's field busy for the whole run (far, slow, no timeout)."""
    params = {"base_link": "base_link", "end_link": f"{arm}_link{ARM_JOINTS - 1}", "max_linear_speed": 0.02,
              "max_angular_speed": 0.05, "timeout": 0.0}
    y = 0.3 if arm == "a" else -0.3
    goal = {"position": [0.35, y, 0.55], "orientation": [0.0, 0.0, 0.0, 1.0], "timeout": math.inf}
    return params, goal


def reach_round(label: str, mode: str, n_reachers: int, rate: float, warmup: float, seconds: float,
                tmp: Path) -> ReachRow:
    """The coupler stepped at ``rate`` Hz on a perfect position servo (q = q_ref), with VF reachers on the two
    arms in this process (``mode`` 'in-process') or as instance processes on shared memory ('processes')."""
    from sensor_msgs.msg import JointState

    from robot_core.model import load_robot
    from robot_core.rbc.coupler import Coupler
    from robot_core.rbc.instance_process import CHILD_ARGV, goal_from_json

    text = two_arm_urdf()
    description = tmp / "two_arms.urdf"
    description.write_text(text)
    coupler = Coupler(load_robot(text), stale_timeout=0.5, max_position_lead=None)
    joints = [f"{arm}_j{i}" for arm in "ab" for i in range(ARM_JOINTS)]
    q = {j: 0.4 for j in joints}
    msg = JointState(name=joints, position=list(q.values()))
    entries = [coupler.table.entry(j, "q_ref") for j in joints]
    remotes = []
    try:
        for arm in "ab"[:n_reachers]:
            params, goal = _vf_setup(arm)
            if mode == "processes":
                remotes.append(coupler.create_remote("VF", f"VF_{arm}", [sys.executable, *CHILD_ARGV],
                                                     {"description_file": str(description), "params": params,
                                                      "goal": goal}))
            else:
                inst = coupler.create("VF", f"VF_{arm}", params)
                inst.start_goal(goal_from_json(inst, goal))
        period = 1.0 / rate
        durations: list[float] = []
        late = 0
        start_q = None
        cpu0 = wall0 = 0.0
        measuring = False
        t_start = time.perf_counter()
        next_t = t_start
        while True:
            now = time.perf_counter()
            if not measuring and now - t_start > warmup and all(r.ready for r in remotes):
                measuring, cpu0, wall0 = True, _tree_cpu([r.pid for r in remotes]), now
                start_q = dict(q)
                durations.clear()
                late = 0
            if measuring and now - wall0 >= seconds:
                break
            if not measuring and now - t_start > warmup + 60:
                raise RuntimeError(f"{label}: instance processes not ready within 60 s")
            t0 = time.perf_counter()
            msg.position = list(q.values())
            coupler.on_message(REACH_STATES, msg, time.monotonic())
            coupler.step(time.monotonic())
            for j, e in zip(joints, entries, strict=True):
                if e.written:
                    q[j] = e.value
            durations.append(time.perf_counter() - t0)
            next_t += period
            delay = next_t - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            else:
                late += 1
                if delay < -0.05:
                    next_t = time.perf_counter()
        cpu = _tree_cpu([r.pid for r in remotes]) - cpu0
        wall = time.perf_counter() - wall0
        dead = [r.name for r in remotes if r.exit_reason() is not None]
        if dead:
            raise RuntimeError(f"{label}: instance processes {dead} died")
        moved = max(abs(q[j] - start_q[j]) for j in joints) if start_q else math.nan
        us = [d * 1e6 for d in durations]
        return ReachRow(label, len(us), _percentile(us, 50), _percentile(us, 99), late, 100.0 * cpu / wall,
                        cpu / max(len(us), 1) * 1e6, moved)
    finally:
        coupler.close()


def _tree_cpu(children: list[int]) -> float:
    """User+system CPU seconds of this process and the given children."""
    total = time.process_time()
    for pid in children:
        with contextlib.suppress(OSError):
            total += _cpu_seconds(pid)
    return total


def reachers_vs_processes(rate: float, seconds: float, rounds: int) -> list[ReachRow]:
    runs = [("coupler, no reacher", "in-process", 0), ("1 VF, in-process", "in-process", 1),
            ("2 VF, in-process", "in-process", 2), ("2 VF, 2 processes (shm)", "processes", 2)]
    best: dict[str, ReachRow] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):
            for label, mode, n in runs:
                row = reach_round(label, mode, n, rate, 1.0, seconds, Path(tmp))
                if label not in best or row.p99 < best[label].p99:
                    best[label] = row
    return [best[label] for label, _, _ in runs]


# --- 2. over DDS ----------------------------------------------------------------------------------------------
def echo_main() -> int:
    """The anchor process: a plain rclpy node republishing each input unchanged."""
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    rclpy.init()
    node = rclpy.create_node("bench_echo")
    qos_in = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
    types = {TOPICS["q"]: JointState, TOPICS["qd"]: Float64MultiArray, TOPICS["tau"]: Float64MultiArray}
    subs = []
    for topic, cls in types.items():
        pub = node.create_publisher(cls, ECHO_PREFIX + topic, 10)
        subs.append(node.create_subscription(cls, topic, pub.publish, qos_in))
    print("echo ready", flush=True)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    with contextlib.suppress(KeyboardInterrupt, ExternalShutdownException):
        executor.spin()
    return 0


@dataclass
class DdsRow:
    label: str
    sent: int
    received: int
    p50: float
    p90: float
    p99: float
    cpu_percent: float
    cpu_us_per_cycle: float


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _percentile(values: list[float], p: float) -> float:
    if not values:
        return math.nan
    s = sorted(values)
    return s[min(len(s) - 1, int(p / 100.0 * len(s)))]


class Probe:
    """Publishes the inputs at ``rate`` Hz from a thread and times the outputs coming back."""

    def __init__(self, node: Any, outputs: dict[str, tuple[type, str]], rate: float):
        from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

        self.rate = rate
        self.node = node
        qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100, reliability=ReliabilityPolicy.RELIABLE)
        self.pubs = {t: node.create_publisher(type(m), t, qos) for t, m in make_inputs(0).items()}
        self.sent_at: dict[int, float] = {}
        self.latencies: dict[str, list[float]] = {k: [] for k in outputs}
        self.seen: dict[str, set[int]] = {k: set() for k in outputs}
        self.measuring = False
        self.sent = 0
        for key, (cls, topic) in outputs.items():
            node.create_subscription(cls, topic, lambda m, k=key: self._on_output(k, m), qos)

    def _on_output(self, key: str, msg: Any) -> None:
        t = time.perf_counter()
        values = msg.position if hasattr(msg, "position") else msg.data
        if not values or not math.isfinite(values[0]):
            return
        seq = int(values[0])
        sent = self.sent_at.get(seq)
        if sent is not None and self.measuring and seq not in self.seen[key]:  # a repeat is no new delivery
            self.seen[key].add(seq)
            self.latencies[key].append(t - sent)

    def run(self, seconds: float, stop: threading.Event) -> None:
        period = 1.0 / self.rate
        seq = 1
        start = next_t = time.perf_counter()
        msgs = make_inputs(0)
        q, qd, tau = (msgs[TOPICS[v]] for v in ("q", "qd", "tau"))
        while not stop.is_set() and time.perf_counter() - start < seconds:
            q.position[0] = qd.data[0] = tau.data[0] = float(seq)
            self.sent_at[seq] = time.perf_counter()
            for topic, msg in msgs.items():
                self.pubs[topic].publish(msg)
            if self.measuring:
                self.sent += 1
            seq += 1
            next_t += period
            delay = next_t - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            elif delay < -0.05:  # fell far behind (loaded machine): do not burst to catch up
                next_t = time.perf_counter()


def dds_round(label: str, args: list[str], ready: str, outputs: dict[str, tuple[type, str]], rate: float,
              warmup: float, seconds: float) -> DdsRow:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 (closed in the finally below)
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node(f"bench_probe_{os.getpid()}", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    stop = threading.Event()
    spin = threading.Thread(target=lambda: [executor.spin_once(timeout_sec=0.05) for _ in iter(stop.is_set, True)],
                            daemon=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            log.seek(0)
            text = log.read()
            if ready in text:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{label} did not start:\n{text[-2000:]}")
            time.sleep(0.1)
        probe = Probe(node, outputs, rate)
        spin.start()
        deadline = time.monotonic() + 30
        while any(p.get_subscription_count() == 0 for p in probe.pubs.values()):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{label} never subscribed to the inputs")
            time.sleep(0.05)
        driver = threading.Thread(target=probe.run, args=(warmup + seconds + 0.5, stop), daemon=True)
        driver.start()
        time.sleep(warmup)
        cpu0, t0 = _cpu_seconds(proc.pid), time.monotonic()
        probe.measuring = True
        time.sleep(seconds)
        probe.measuring = False
        cpu1, t1 = _cpu_seconds(proc.pid), time.monotonic()
        driver.join()
        time.sleep(0.2)
        lat = [x * 1e6 for xs in probe.latencies.values() for x in xs]
        received = min(len(xs) for xs in probe.latencies.values())
        cpu = cpu1 - cpu0
        return DdsRow(label, probe.sent, received, _percentile(lat, 50), _percentile(lat, 90), _percentile(lat, 99),
                      100.0 * cpu / (t1 - t0), cpu / max(probe.sent, 1) * 1e6)
    finally:
        stop.set()
        with contextlib.suppress(Exception):
            spin.join(timeout=2)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 2)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
        node.destroy_node()
        context.try_shutdown()
        log.close()


def over_dds(rate: float, seconds: float, rounds: int, urdf: Path, node_rates: list[float]) -> list[DdsRow]:
    from sensor_msgs.msg import JointState

    echo_args = [sys.executable, str(Path(__file__).resolve()), "--echo"]
    rbc_exe = str(Path(sys.executable).parent / "rbc")
    # Only the JointState path is timed (one output stream), so that the probe in this process is not the
    # bottleneck; the process under test still receives all three topics and produces all three outputs.
    echo_out = {"q": (JointState, ECHO_PREFIX + TOPICS["q"])}
    rbc_out = {"q": (JointState, "/rbc/q")}
    runs = [("raw rclpy echo (anchor)", echo_args, "echo ready", echo_out)]
    for r in node_rates:
        runs.append((f"rbc node, cycle {r:g} Hz", [
            rbc_exe, "--ros-args", "-p", f"urdf_path:={urdf}", "-p", f"rate:={r}",
            "-p", "preload_kinematics:=false", "--log-level", "warn"], "", rbc_out))
    best: dict[str, DdsRow] = {}
    for _ in range(rounds):
        for label, args, ready, outs in runs:
            row = dds_round(label, args, ready, outs, rate, 2.0, seconds)
            if label not in best or row.p50 < best[label].p50:
                best[label] = row
    return [best[label] for label, _, _, _ in runs]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measuring window per round (s)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--rate", type=float, default=1000.0, help="input cycles per second (3 messages each)")
    parser.add_argument("--cycles", type=int, default=20000, help="in-process cycles")
    parser.add_argument("--node-rates", type=float, nargs="+", default=[1000.0, 100.0],
                        help="cycle rates of the rbc node to measure (its 'rate' parameter)")
    parser.add_argument("--only-reachers", action="store_true",
                        help="only table 3 (reachers in one process vs as processes) and its echo anchor")
    parser.add_argument("--echo", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 100))
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    if args.echo:
        return echo_main()

    print(f"RBC bench: {N_JOINTS} joints x 3 vars = {3 * N_JOINTS} vars over 3 topics, input {args.rate:g} Hz "
          f"(ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']})\n")
    if args.only_reachers:
        return reachers_table(args)
    rows = in_process(args.cycles)
    anchor = rows[0].us_per_cycle
    print(f"1. In-process cost per input cycle (no DDS), {args.cycles} cycles, time.process_time")
    print(f"{'':22s} {'us/cycle':>10s} {'x anchor':>9s}  note")
    for r in rows:
        print(f"{r.label:22s} {r.us_per_cycle:10.1f} {r.us_per_cycle / anchor:9.2f}  {r.note}")

    import rclpy  # noqa: F401  (fail early with a clear error if ROS is missing)

    with tempfile.TemporaryDirectory() as tmp:
        urdf = Path(tmp) / "rbc_bench.urdf"
        urdf.write_text(bench_urdf())
        dds = over_dds(args.rate, args.seconds, args.rounds, urdf, args.node_rates)
        print(f"\n2. Over DDS: input -> output latency and CPU of the process under test, "
              f"best of {args.rounds} rounds of {args.seconds:g} s")
        print(f"{'':24s} {'in Hz':>7s} {'cycles':>7s} {'outputs':>8s} {'p50 us':>8s} {'p90 us':>8s} {'p99 us':>8s} "
              f"{'CPU %':>7s} {'CPU us/cycle':>13s}")
        for r in dds:
            print(f"{r.label:24s} {r.sent / args.seconds:7.0f} {r.sent:7d} {r.received:8d} {r.p50:8.0f} "
                  f"{r.p90:8.0f} {r.p99:8.0f} {r.cpu_percent:7.1f} {r.cpu_us_per_cycle:13.1f}")
        echo = dds[0]
        print(f"\n{'vs raw echo':24s} {'latency p50':>12s} {'added p50 us':>13s} {'latency p99':>12s} "
              f"{'CPU/cycle':>10s}")
        for node in dds[1:]:
            cpu_ratio = node.cpu_us_per_cycle / max(echo.cpu_us_per_cycle, 1e-9)
            p50, p99 = f"x{node.p50 / echo.p50:.2f}", f"x{node.p99 / echo.p99:.2f}"
            print(f"{node.label:24s} {p50:>12s} {node.p50 - echo.p50:13.0f} {p99:>12s} {f'x{cpu_ratio:.2f}':>10s}")
    print()
    return reachers_table(args)


def reachers_table(args: argparse.Namespace) -> int:
    """Table 3, with the raw echo measured in the same run as its anchor."""
    from sensor_msgs.msg import JointState

    echo_args = [sys.executable, str(Path(__file__).resolve()), "--echo"]
    echo = dds_round("raw rclpy echo (anchor)", echo_args, "echo ready",
                     {"q": (JointState, ECHO_PREFIX + TOPICS["q"])}, args.rate, 2.0, args.seconds)
    rows = reachers_vs_processes(args.rate, args.seconds, args.rounds)
    print(f"3. Two VectorField reachers on the two 6-joint arms of one robot, coupler at {args.rate:g} Hz on a "
          f"perfect servo (no DDS), best p99 of {args.rounds} rounds of {args.seconds:g} s; CPU = this process "
          f"+ the instance processes")
    print(f"{'':26s} {'cycles':>7s} {'p50 us':>8s} {'p99 us':>8s} {'late':>6s} {'CPU %':>7s} {'CPU us/cycle':>13s} "
          f"{'x echo CPU':>11s} {'moved rad':>10s}")
    print(f"{echo.label:26s} {echo.sent:7d} {'':>8s} {echo.p99:8.0f} {'':>6s} {echo.cpu_percent:7.1f} "
          f"{echo.cpu_us_per_cycle:13.1f} {1.0:11.2f} {'':>10s}   (p99 = its latency)")
    for r in rows:
        print(f"{r.label:26s} {r.cycles:7d} {r.p50:8.0f} {r.p99:8.0f} {r.late:6d} {r.cpu_percent:7.1f} "
              f"{r.cpu_us_per_cycle:13.1f} {r.cpu_us_per_cycle / max(echo.cpu_us_per_cycle, 1e-9):11.2f} "
              f"{r.moved:10.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
