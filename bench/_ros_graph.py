"""The benchmarks' ROS graph: node processes, this process's client node, bringing a controller manager up with
its controllers, and a window of its loop statistics -- shared by ``bench/control_loop.py``,
``bench/jtc_tracking.py`` and ``bench/scale.py``.

A helper, not a benchmark: ``make bench`` skips ``bench/_*.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
URDF = REPO / "urdf" / "rc_arm.urdf"


class Proc:
    """A child process in its own process group, always stopped."""

    def __init__(self, args: list[str], name: str, env: dict[str, str] | None = None):
        self.name = name
        self.log = tempfile.NamedTemporaryFile(prefix=f"bench_{name}_", suffix=".log", delete=False)  # noqa: SIM115
        self.p = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
                                  env=None if env is None else {**os.environ, **env})

    def output(self) -> str:
        return Path(self.log.name).read_text(errors="replace")

    def wait_for(self, text: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.output():
            if self.p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not print '{text}':\n{self.output()[-2000:]}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.p.poll() is None:
            for sig, wait in ((signal.SIGINT, 10.0), (signal.SIGKILL, 3.0)):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.p.pid, sig)
                try:
                    self.p.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self.log.close()
        if self.p.returncode == 0:
            Path(self.log.name).unlink(missing_ok=True)
        else:
            print(f"  ({self.name} exited with {self.p.returncode}; its output: {self.log.name})", flush=True)


class Client:
    """This process's ROS side: service calls, a goal driver, the round-trip probes."""

    def __init__(self) -> None:
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import MultiThreadedExecutor

        self.context = Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("control_loop_bench", context=self.context)
        self.executor = MultiThreadedExecutor(num_threads=3, context=self.context)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        with contextlib.suppress(Exception):
            self.executor.spin()

    def call(self, srv_type: Any, name: str, request: Any, timeout: float = 30.0) -> Any:
        client = self.node.create_client(srv_type, name)
        try:
            if not client.wait_for_service(timeout_sec=timeout):
                raise RuntimeError(f"service {name} not available")
            future = client.call_async(request)
            deadline = time.monotonic() + timeout
            while not future.done():
                if time.monotonic() > deadline:
                    raise RuntimeError(f"service {name} did not answer")
                time.sleep(0.005)
            return future.result()
        finally:
            self.node.destroy_client(client)

    def loop_statistics(self, reset: bool = False) -> dict[str, float]:
        from std_srvs.srv import Trigger

        name = "/controller_manager/" + ("reset_loop_statistics" if reset else "loop_statistics")
        res = self.call(Trigger, name, Trigger.Request())
        return {} if reset else json.loads(res.message)

    def shutdown(self) -> None:
        with contextlib.suppress(Exception):
            self.executor.shutdown(timeout_sec=1.0)
        self._thread.join(2.0)
        with contextlib.suppress(Exception):
            self.node.destroy_node()
        with contextlib.suppress(Exception):
            self.context.try_shutdown()


def start_simulator(args: list[str], ready: str = "simulator ready", timeout: float = 60.0,
                    env: dict[str, str] | None = None) -> Proc:
    """The ``simulator`` console script with ``--ros-args`` ``args``, once it has printed ``ready``."""
    sim = Proc([str(BIN / "simulator"), "--ros-args", *args], "simulator", env)
    try:
        sim.wait_for(ready, timeout)
    except BaseException:
        sim.stop()
        raise
    return sim


def start_manager(yaml_file: Path, params: list[str], controllers: list[str], name: str = "controller_manager",
                  timeout: float = 120.0) -> Proc:
    """The ``controller_manager`` console script with ``--params-file yaml_file`` and ``params`` (``-p`` pairs),
    ready, with ``controllers`` spawned (loaded, configured, active) by the ``spawner``."""
    cm = Proc([str(BIN / "controller_manager"), "--ros-args", "--params-file", str(yaml_file), *params], name)
    try:
        cm.wait_for("controller manager ready", timeout=timeout)
        spawner = subprocess.run([str(BIN / "spawner"), *controllers, "--controller-manager-timeout", "60"],
                                 capture_output=True, text=True, timeout=240)
        if spawner.returncode != 0:
            raise RuntimeError(f"spawner failed:\n{spawner.stdout}\n{spawner.stderr}")
    except BaseException:
        cm.stop()
        raise
    return cm


def loop_window(client: Client, seconds: float, warmup: float = 2.0) -> dict[str, float]:
    """The controller manager's ``~/loop_statistics`` over ``seconds``, counted from a reset after ``warmup``."""
    time.sleep(warmup)
    client.loop_statistics(reset=True)
    time.sleep(seconds)
    return client.loop_statistics()
