"""The web view's cost: `robot-core view` drawing the PR2 (example-robot-data, 82 links; its meshes from the URDF
file) from /tf at 30 Hz while the simulator runs paced at real time, its arms and head swinging (commands on
/robot_joint_commands, so every frame has links that moved), first with no browser connected, then with a real
headless Chromium (the Debian package, driven through chromedriver as test/test_view_browser.py does) showing the
page, so the view also sends every pose update to a client that renders it.

Rows: the simulator's real-time factor without the view, with it, and with it and a browser; the view process's
CPU (% of one core) beside an anchor measured in the same run, a bare rclpy process that only decodes the same /tf
(what any /tf listener, rviz's included, pays before drawing anything), then with a browser connected beside the
same view without one; the browser's CPU (all its processes: software WebGL on this machine) beside the view's.

Run alone: ``.venv/bin/python bench/view.py [--seconds 10] [--no-browser]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _robots import ROBOTS, example_robot_data_dir

SWING = ("r_shoulder_pan_joint", "l_shoulder_pan_joint", "head_pan_joint")  # commanded +-0.5 rad at 0.25 Hz

TF_LISTENER = """
import rclpy, signal, sys
from tf2_msgs.msg import TFMessage
rclpy.init()
n = rclpy.create_node("bench_tf_listener")
count = [0]
n.create_subscription(TFMessage, "/tf", lambda m: count.__setitem__(0, count[0] + len(m.transforms)), 100)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
print("listening", flush=True)
rclpy.spin(n)
"""


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Status:
    """Simulator status messages with their arrival times, for the real-time factor."""

    def __init__(self) -> None:
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        from robot_core_interfaces.msg import SimulatorStatus

        self.context = Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("view_bench_watcher", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.status: list[tuple[float, float]] = []
        self.node.create_subscription(SimulatorStatus, "/simulator/status", self._on, 10)
        from sensor_msgs.msg import JointState

        self.swept: list[float] = []  # r_shoulder_pan_joint as the simulator reports it
        self._commands = self.node.create_publisher(JointState, "/robot_joint_commands", 10)
        self.node.create_timer(0.02, self._command)
        self.node.create_subscription(JointState, "/robot_joint_states", self._on_joints, 10)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _on(self, m: Any) -> None:
        self.status.append((time.perf_counter(), m.sim_time.sec + m.sim_time.nanosec * 1e-9))

    def _command(self) -> None:
        import math

        from sensor_msgs.msg import JointState

        q = 0.5 * math.sin(2 * math.pi * 0.25 * time.perf_counter())
        self._commands.publish(JointState(name=list(SWING), position=[q, -q, q]))

    def _on_joints(self, m: Any) -> None:
        if SWING[0] in m.name:
            self.swept.append(float(m.position[list(m.name).index(SWING[0])]))

    def _spin(self) -> None:
        while not self._stop.is_set():
            self.executor.spin_once(timeout_sec=0.05)

    def rtf(self, seconds: float) -> float:
        t0 = time.perf_counter()
        n0 = len(self.status)
        time.sleep(seconds)
        window = [s for s in self.status[n0:] if s[0] >= t0]
        if len(window) < 2:
            return float("nan")
        (w0, s0), (w1, s1) = window[0], window[-1]
        return (s1 - s0) / (w1 - w0)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.node.destroy_node()
        self.context.try_shutdown()


def _tree_cpu_seconds(root: int) -> float:
    """CPU seconds of ``root`` and all its descendants alive now (chromedriver's browser processes)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        with contextlib.suppress(OSError, ValueError, IndexError):  # a process that ended meanwhile
            total += _cpu_seconds(pid)
        todo += children.get(pid, [])
    return total


def _browser(url: str) -> Any:
    """A headless Chromium showing ``url`` (test/browser.py's WebDriver client); None with the reason printed when
    chromium or chromedriver is missing."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
    from browser import Browser, chromium_problem

    problem = chromium_problem()
    if problem:
        print(f"no browser rows: {problem}")
        return None
    browser = Browser()
    browser.open(url)
    deadline = time.monotonic() + 120
    while not browser.script("return document.querySelectorAll('canvas').length > 0"):
        if time.monotonic() > deadline:
            raise SystemExit("the page has no canvas after 120 s")
        time.sleep(0.5)
    return browser


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--no-browser", action="store_true", help="skip the rows with a browser connected")
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", "102")
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    urdf = example_robot_data_dir() / ROBOTS["pr2"]
    exe = Path(sys.executable).parent / "simulator"
    logs = Path(tempfile.mkdtemp(prefix="robot_core_bench_view_"))
    procs: list[subprocess.Popen] = []

    def start(argv: list[str], name: str) -> subprocess.Popen:
        p = subprocess.Popen(argv, stdout=(logs / f"{name}.log").open("w"), stderr=subprocess.STDOUT,
                             start_new_session=True)
        procs.append(p)
        return p

    def wait_log(name: str, text: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while text not in (logs / f"{name}.log").read_text(errors="replace"):
            if time.monotonic() > deadline:
                raise SystemExit(f"{name} did not print '{text}' in {timeout:g} s (log in {logs})")
            time.sleep(0.2)

    status = None
    try:
        start([str(exe), "--ros-args", "-p", f"urdf_path:={urdf}", "-p", "real_time_factor:=1.0",
               "-p", "tf_rate:=30.0", "-p", "publish_rate:=100.0", "-p", "cameras:=false"], "simulator")
        status = _Status()
        deadline = time.monotonic() + 120
        while len(status.status) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(2.0)
        rtf_alone = status.rtf(args.seconds)

        listener = start([sys.executable, "-c", TF_LISTENER], "tf_listener")
        wait_log("tf_listener", "listening")
        time.sleep(2.0)
        c0, t0 = _cpu_seconds(listener.pid), time.perf_counter()
        time.sleep(args.seconds)
        anchor_cpu = (_cpu_seconds(listener.pid) - c0) / (time.perf_counter() - t0)
        listener.terminate()
        listener.wait(timeout=10)

        port = _free_port()
        view = start([sys.executable, "-m", "robot_core.nodes.view", "--port", str(port), "--robot", str(urdf)],
                     "view")
        wait_log("view", "links posed from /tf")
        time.sleep(2.0)
        c0, t0 = _cpu_seconds(view.pid), time.perf_counter()
        rtf_view = status.rtf(args.seconds)
        wall = time.perf_counter() - t0
        view_cpu = (_cpu_seconds(view.pid) - c0) / wall
        said = [line for line in (logs / "view.log").read_text().splitlines() if "links posed from /tf" in line]
        links = said[-1].split("view: ", 1)[-1].split(" posed")[0] if said else "? links"
        swept = (min(status.swept), max(status.swept)) if status.swept else (float("nan"),) * 2
        browser_rows = None
        if not args.no_browser:
            browser = _browser(f"http://127.0.0.1:{port}/")
            if browser is not None:
                try:
                    time.sleep(5.0)  # the page loads the PR2's meshes, then only pose updates flow
                    driver = browser.driver.proc.pid
                    c0, b0, t0 = _cpu_seconds(view.pid), _tree_cpu_seconds(driver), time.perf_counter()
                    rtf_browser = status.rtf(args.seconds)
                    wall = time.perf_counter() - t0
                    browser_rows = (rtf_browser, (_cpu_seconds(view.pid) - c0) / wall,
                                    (_tree_cpu_seconds(driver) - b0) / wall)
                finally:
                    browser.close()
    finally:
        if status is not None:
            status.close()
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
    print(f"web view of the PR2 ({links} drawn) from /tf at 30 Hz, {SWING[0]} swinging {swept[0]:+.2f}..{swept[1]:+.2f}"
          f" rad, {args.seconds:g} s windows (load average {os.getloadavg()[0]:.1f})")
    print(f"{'row':52s} {'ours':>10s} {'anchor':>10s} {'ratio':>7s}")
    print(f"{'simulator real-time factor (paced at 1.0)':52s} {rtf_view:10.3f} {rtf_alone:10.3f} "
          f"{rtf_view / rtf_alone:7.2f}   (anchor: without the view)")
    print(f"{'view process CPU, % of one core':52s} {100 * view_cpu:10.1f} {100 * anchor_cpu:10.1f} "
          f"{view_cpu / max(anchor_cpu, 1e-9):7.2f}   (anchor: a bare rclpy /tf listener)")
    if browser_rows is not None:
        rtf_browser, view_browser_cpu, browser_cpu = browser_rows
        print(f"{'simulator real-time factor, view + headless Chromium':52s} {rtf_browser:10.3f} {rtf_alone:10.3f} "
              f"{rtf_browser / rtf_alone:7.2f}   (anchor: without the view)")
        print(f"{'view process CPU with a browser connected':52s} {100 * view_browser_cpu:10.1f} "
              f"{100 * view_cpu:10.1f} {view_browser_cpu / max(view_cpu, 1e-9):7.2f}   (anchor: no browser)")
        print(f"{'headless Chromium CPU (all processes), % of one core':52s} {100 * browser_cpu:10.1f} "
              f"{100 * view_browser_cpu:10.1f} {browser_cpu / max(view_browser_cpu, 1e-9):7.2f}   "
              "(anchor: the view process serving it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
