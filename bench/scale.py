"""How cost grows: the controller manager's 1 kHz loop with more joints and more controllers, and each node's
resident memory at rest (issue 21, "Scale"). Every figure is printed beside an anchor measured in the same run.

Rows, on an isolated ROS domain:

* **joints** -- ``controller_manager`` (its console script, embedded simulator, update_rate 1000) driving a
  generated serial chain of 7, 30 and 100 revolute joints with joint_state_broadcaster + joint_trajectory_controller
  active (the JTC holding position; states published every cycle). Anchor: a bare ``mj_step`` of the same chain
  per millisecond in this process, paced like the loop (what the machine does for the physics alone). Slope: the
  least-squares µs of node p99 per joint.
* **controllers** -- the 7-joint chain with 2, 6 and 12 controllers active: the broadcaster, the JTC and 0, 4 or 10
  more joint_state_broadcasters (``use_local_topics``: each publishes its own ``~/joint_states`` every cycle).
  Anchor: the 2-controller row of this run. Slope: µs of p99 per controller.
* **arms per world** -- the ``simulator`` node with a robots file of 1, 4 and 16 example-robot-data Panda arms in
  one world (1 m apart, ``real_time_factor:=0``: as fast as possible, default publish rates), its achieved real-time
  factor from ``~/status``, beside a bare ``mj_step`` loop on the same merged model in this process (anchor).
  Slope: wall µs per simulated ms per arm, node and anchor.
* **memory at rest** -- VmRSS of the ``simulator`` (rc_arm) and of the ``controller_manager`` (topic mode, the
  broadcaster and the JTC active) a few seconds after they are up, beside a bare rclpy node process (anchor: what
  Python + rclpy + one node cost before any robot_core code).

* **per-arm profile** (``--profile-only``) -- the simulator node of the arms rows with its simulation thread under
  cProfile on its CPU clock (``bench/_profile_sim.py``): CPU µs per simulated ms, split into mj_step, the per-robot
  joint states, /tf, /clock, object states, service jobs and the rest, with the slope per arm and the functions of
  most own time.

Run: ``.venv/bin/python bench/scale.py [--seconds 5] [--profile-only]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _paced import raw_step_anchor
from _ros_graph import BIN, URDF, Client, Proc, loop_window, start_manager, start_simulator

NATIVE_JOINTS = (7, 30, 100)
ARMS = (1, 4, 16)
CONTROLLER_COUNTS = (2, 6, 12)
BARE_NODE = """
import rclpy
rclpy.init()
node = rclpy.create_node("bare_node")
print("bare ready", flush=True)
try:
    rclpy.spin(node)
except (Exception, KeyboardInterrupt):
    pass
"""


def chain_urdf(n: int) -> str:
    """A serial chain of ``n`` revolute joints (alternating axes, 0.1 m links, 0.5 kg each) with a ros2_control
    block: position commands, position and velocity states."""
    links = ['<link name="base_link"><inertial><mass value="1.0"/><inertia ixx="0.01" iyy="0.01" izz="0.01" '
             'ixy="0" ixz="0" iyz="0"/></inertial></link>']
    joints, controls = [], []
    for k in range(1, n + 1):
        axis = "0 0 1" if k % 2 else "0 1 0"
        links.append(f'<link name="link{k}"><inertial><origin xyz="0 0 0.05"/><mass value="0.5"/><inertia ixx="0.001" '
                     f'iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial><collision><origin xyz="0 0 0.05"/>'
                     f'<geometry><cylinder radius="0.02" length="0.08"/></geometry></collision></link>')
        parent = "base_link" if k == 1 else f"link{k - 1}"
        joints.append(f'<joint name="joint{k}" type="revolute"><parent link="{parent}"/><child link="link{k}"/>'
                      f'<origin xyz="0 0 {0.0 if k == 1 else 0.1}"/><axis xyz="{axis}"/>'
                      f'<limit lower="-2.5" upper="2.5" effort="50" velocity="2"/><dynamics damping="0.1"/></joint>')
        controls.append(f'<joint name="joint{k}"><command_interface name="position"/><state_interface name="position"/>'
                        f'<state_interface name="velocity"/></joint>')
    return (f'<robot name="chain{n}">{"".join(links)}{"".join(joints)}<ros2_control name="Chain" type="system">'
            f'<hardware><plugin>robot_core/InProcessSimulator</plugin></hardware>{"".join(controls)}</ros2_control>'
            '</robot>')


def controllers_yaml(n_joints: int, n_controllers: int) -> tuple[str, list[str]]:
    joints = [f"joint{k}" for k in range(1, n_joints + 1)]
    extra = [f"joint_state_broadcaster_{k}" for k in range(1, n_controllers - 1)]
    names = ["joint_state_broadcaster", "joint_trajectory_controller", *extra]
    types = "".join(f"    {name}:\n      type: joint_state_broadcaster/JointStateBroadcaster\n" for name in extra)
    local = "".join(f"{name}:\n  ros__parameters:\n    use_local_topics: true\n" for name in extra)
    return (f"""controller_manager:
  ros__parameters:
    update_rate: 1000
    joint_state_broadcaster:
      type: joint_state_broadcaster/JointStateBroadcaster
    joint_trajectory_controller:
      type: joint_trajectory_controller/JointTrajectoryController
{types}joint_trajectory_controller:
  ros__parameters:
    joints: {joints}
    command_interfaces: [position]
    state_interfaces: [position, velocity]
{local}""", names)


def node_row(client: Client, urdf: Path, n_joints: int, n_controllers: int, seconds: float) -> dict[str, float]:
    text, names = controllers_yaml(n_joints, n_controllers)
    yaml_file = Path(tempfile.mkstemp(prefix="bench_scale_", suffix=".yaml")[1])
    yaml_file.write_text(text)
    try:
        cm = start_manager(yaml_file, ["-p", f"robot_description_file:={urdf}", "-p", "hardware_mode:=embedded"], names)
        try:
            return loop_window(client, seconds)
        finally:
            cm.stop()
    finally:
        yaml_file.unlink(missing_ok=True)


def panda_robots_file(directory: Path, n: int) -> Path:
    from _robots import ROBOTS, example_robot_data_dir

    urdf = example_robot_data_dir() / ROBOTS["panda"]
    side = int(np.ceil(np.sqrt(n)))
    robots = [{"namespace": f"panda{k}", "description": str(urdf),
               "base_pose": [float(k % side), float(k // side), 0.0]} for k in range(n)]
    import yaml

    path = directory / f"pandas{n}.yaml"
    path.write_text(yaml.safe_dump({"robots": robots}))
    return path


def raw_world_rtf(robots_file: Path, seconds: float) -> float:
    """Simulated s per wall s of bare mj_step on the merged model of ``robots_file``."""
    import warnings

    import mujoco

    from robot_core.model import load_robot
    from robot_core.model.robot_group import merge_robots, read_robots_file
    from robot_core.physics.engine import PhysicsEngine

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        engine = PhysicsEngine(merge_robots(read_robots_file(robots_file), load_robot).model, timestep=1e-3)
    m, d = engine._model, engine._data
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(100):
            mujoco.mj_step(m, d)
        steps += 100
    return steps * m.opt.timestep / (time.perf_counter() - t0)


def world_row(client: Client, robots_file: Path, seconds: float) -> float:
    """Median real-time factor the simulator node reports on ~/status while running as fast as possible."""
    from robot_core_interfaces.msg import SimulatorStatus

    samples: list[float] = []
    sub = client.node.create_subscription(SimulatorStatus, "/simulator/status",
                                          lambda msg: samples.append(msg.real_time_factor), 10)
    sim = Proc([str(BIN / "simulator"), "--ros-args", "-p", f"robots:={robots_file}", "-p", "real_time_factor:=0.0"],
               "simulator")
    try:
        sim.wait_for("robot group from", timeout=180)
        time.sleep(2.0)  # warm-up, and the status window (1 s) filled
        samples.clear()
        time.sleep(seconds)
        if not samples:
            raise RuntimeError(f"no ~/status from the simulator:\n{sim.output()[-2000:]}")
        return float(np.median(samples))
    finally:
        sim.stop()
        client.node.destroy_subscription(sub)


# The simulation thread's functions the per-arm profile splits its time into (pstats' function names, in the order
# printed); everything else of the thread (the loop, pacing, the tick's bookkeeping) is the rest.
PROFILE_PARTS = (("mj_step (engine.step)", "step", "engine.py"),
                 ("joint states, per robot", "_publish_member_states", "simulator.py"),
                 ("/tf", "_publish_tf", "simulator.py"),
                 ("/clock", "_publish_clock", "simulator.py"),
                 ("object states", "_publish_objects", "simulator.py"),
                 ("jobs (services)", "_run_jobs", "simulator.py"))


def profile_world(robots_file: Path, directory: Path, seconds: float) -> dict[str, object]:
    """The simulator node's simulation thread under cProfile (``bench/_profile_sim.py``) on ``robots_file``, as
    fast as possible for ``seconds``: the thread's CPU µs per simulated ms (and its wall µs), the CPU µs split into
    :data:`PROFILE_PARTS`, and the functions of most own CPU time."""
    import pstats

    stats_file = directory / f"{robots_file.stem}.prof"
    sim = Proc([sys.executable, str(Path(__file__).parent / "_profile_sim.py"), str(stats_file), "--", "--ros-args",
                "-p", f"robots:={robots_file}", "-p", "real_time_factor:=0.0"], "simulator_profiled")
    try:
        sim.wait_for("robot group from", timeout=180)
        time.sleep(seconds)
    finally:
        sim.stop()
    steps_text = Path(f"{stats_file}.steps").read_text().split()
    steps, wall, cpu = int(steps_text[0]), float(steps_text[1]), float(steps_text[2])
    stats = pstats.Stats(str(stats_file)).stats  # (file, line, function) -> (cc, ncalls, tottime, cumtime, callers)
    per_ms = 1e6 / steps  # seconds of thread time -> us per simulated ms (the simulator's dt is 1 ms: a step each)
    parts: dict[str, float] = {}
    for label, function, file in PROFILE_PARTS:
        parts[label] = sum(v[3] for k, v in stats.items() if k[2] == function and k[0].endswith(file)) * per_ms
    top = sorted(((v[2] * per_ms, f"{Path(k[0]).name}:{k[2]}" if k[0] != "~" else k[2]) for k, v in stats.items()),
                 reverse=True)[:6]
    return {"steps": steps, "wall_per_ms": wall * per_ms, "cpu_per_ms": cpu * per_ms, "parts": parts, "top": top}


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def memory_rows(settle: float = 3.0) -> dict[str, float]:
    bare = Proc([sys.executable, "-c", BARE_NODE], "bare_node")
    procs = [bare]
    try:
        bare.wait_for("bare ready")
        sim = start_simulator(["-p", f"urdf_path:={URDF}"], timeout=120)
        procs.append(sim)
        cm = start_manager(URDF.parent.parent / "config" / "controllers.yaml",
                           ["-p", f"robot_description_file:={URDF}", "-p", "hardware_mode:=topic",
                            "-p", "publish_robot_description:=false"],
                           ["joint_state_broadcaster", "joint_trajectory_controller"])
        procs.append(cm)
        time.sleep(settle)
        return {"bare rclpy node (anchor)": rss_mb(bare.p.pid), "simulator, rc_arm": rss_mb(sim.p.pid),
                "controller_manager, topic, 2 controllers": rss_mb(cm.p.pid)}
    finally:
        for p in reversed(procs):
            p.stop()


def slope(xs: list[float], ys: list[float]) -> float:
    return float(np.polyfit(np.asarray(xs, float), np.asarray(ys, float), 1)[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measurement window per node row")
    parser.add_argument("--profile-only", action="store_true",
                        help="only the profile of the simulator node's per-arm cost (1, 4, 16 Panda arms)")
    args = parser.parse_args()
    if args.profile_only:
        return profile_main(args.seconds)
    os.environ.setdefault("ROS_DOMAIN_ID", str(1 + (os.getpid() + 71) % 100))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
    us = 1e6
    print("scale benchmark: controller manager node, embedded simulator, 1 kHz; generated serial chains")
    print(f"  machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="bench_scale_"))
    client = Client()
    try:
        urdfs = {}
        for n in NATIVE_JOINTS:
            urdfs[n] = tmp / f"chain{n}.urdf"
            urdfs[n].write_text(chain_urdf(n))
        joint_rows = {n: (raw_step_anchor(urdfs[n], min(args.seconds, 3.0)),
                          node_row(client, urdfs[n], n, 2, args.seconds)) for n in NATIVE_JOINTS}
        ctrl_rows = {c: node_row(client, urdfs[7], 7, c, args.seconds) if c != 2 else joint_rows[7][1]
                     for c in CONTROLLER_COUNTS}
        worlds = {}
        for n in ARMS:
            robots = panda_robots_file(tmp, n)
            worlds[n] = (raw_world_rtf(robots, min(args.seconds, 3.0)), world_row(client, robots, args.seconds))
        memory = memory_rows()
    finally:
        client.shutdown()
    print()
    print(f"{'loop p99 vs joints (2 controllers)':<40} {'achieved Hz':>11} {'p99 us':>8} {'overrun %':>9} "
          f"{'raw mj_step p99 us (anchor)':>28} {'p99/anchor':>10}")
    for n, (anchor, row) in joint_rows.items():
        print(f"{f'{n} joints':<40} {row['achieved_rate']:>11.1f} {row['p99'] * us:>8.0f} "
              f"{row['overrun_ratio'] * 100:>9.3f} {anchor['p99'] * us:>28.0f} {row['p99'] / anchor['p99']:>10.2f}")
    js = list(joint_rows)
    print(f"  slope: {slope(js, [joint_rows[n][1]['p99'] * us for n in js]):.2f} us of p99 per joint (node), "
          f"{slope(js, [joint_rows[n][0]['p99'] * us for n in js]):.2f} us per joint (raw mj_step anchor)")
    print()
    base = ctrl_rows[CONTROLLER_COUNTS[0]]["p99"]
    print(f"{'loop p99 vs controllers (7 joints)':<40} {'achieved Hz':>11} {'p99 us':>8} {'overrun %':>9} "
          f"{'p99 / 2-controller row (anchor)':>32}")
    for c, row in ctrl_rows.items():
        print(f"{f'{c} controllers':<40} {row['achieved_rate']:>11.1f} {row['p99'] * us:>8.0f} "
              f"{row['overrun_ratio'] * 100:>9.3f} {row['p99'] / base:>32.2f}")
    cs = list(ctrl_rows)
    print(f"  slope: {slope(cs, [ctrl_rows[c]['p99'] * us for c in cs]):.2f} us of p99 per controller "
          "(the extra ones: joint_state_broadcasters publishing every cycle)")
    print()
    print(f"{'simulator rtf vs Panda arms per world':<40} {'node rtf':>9} {'raw mj_step rtf (anchor)':>25} "
          f"{'node/anchor':>11}")
    for n, (raw, node) in worlds.items():
        print(f"{f'{n} arm' + ('s' if n > 1 else ''):<40} {node:>9.2f} {raw:>25.2f} {node / raw:>11.2f}")
    ns = list(worlds)
    print(f"  slope: {slope(ns, [1e3 / worlds[n][1] for n in ns]):.1f} wall us per simulated ms per arm (node), "
          f"{slope(ns, [1e3 / worlds[n][0] for n in ns]):.1f} (raw mj_step anchor)")
    print()
    anchor_mb = memory["bare rclpy node (anchor)"]
    print(f"{'resident memory at rest':<40} {'MB':>8} {'MB over the anchor':>19}")
    for label, mb in memory.items():
        print(f"{label:<40} {mb:>8.1f} {mb - anchor_mb:>19.1f}")
    return 0


def profile_main(seconds: float) -> int:
    """The simulator node's per-arm cost under cProfile: wall µs per simulated ms and where they go."""
    os.environ.setdefault("ROS_DOMAIN_ID", str(1 + (os.getpid() + 71) % 100))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
    print("simulator node per-arm profile: Panda arms in one world, as fast as possible, default publish rates; "
          "simulation thread under cProfile on its CPU clock (the profiler's overhead inflates Python-level calls)")
    print(f"  machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="bench_scale_profile_"))
    rows = {n: profile_world(panda_robots_file(tmp, n), tmp, seconds) for n in ARMS}
    labels = [label for label, _, _ in PROFILE_PARTS]
    print(f"\n{'CPU us per simulated ms':<28}" + "".join(f"{n:>10} arm{'s' if n > 1 else ' '}" for n in rows)
          + f"{'per arm':>12}")
    ns = list(rows)
    for label in ["wall (simulation thread)", "CPU (simulation thread)", *labels, "rest (loop, pacing, tick)"]:
        if label.startswith("wall"):
            ys = [rows[n]["wall_per_ms"] for n in ns]
        elif label.startswith("CPU"):
            ys = [rows[n]["cpu_per_ms"] for n in ns]
        elif label.startswith("rest"):
            ys = [rows[n]["cpu_per_ms"] - sum(rows[n]["parts"].values()) for n in ns]
        else:
            ys = [rows[n]["parts"][label] for n in ns]
        print(f"{label:<28}" + "".join(f"{y:>14.1f}" for y in ys) + f"{slope(ns, ys):>12.1f}")
    for n in ns:
        print(f"  {n} arms, most own time (us per simulated ms): "
              + "; ".join(f"{name} {t:.1f}" for t, name in rows[n]["top"]))
    print(f"  load average at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
