"""Loops paced at 1 kHz in a thread scheduled like the controller manager's loop thread, and the bare paced
``mj_step`` every loop row is read against -- shared by ``bench/control_loop.py`` and ``bench/scale.py``.

A helper, not a benchmark: ``make bench`` skips ``bench/_*.py``.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

LOOP_SCHEDULING: list[str] = []  # what paced()'s thread got, for the tables' header


def paced(seconds: float, cycle: Any, before: Any = None) -> dict[str, float]:
    """``cycle(k)`` every millisecond on absolute deadlines, in a thread scheduled like the node's loop thread
    (SCHED_FIFO at the default thread_priority when the system allows it), timing each call."""
    out: dict[str, float] = {}

    def run() -> None:
        from robot_core.ros import realtime

        problems = realtime.configure_current_thread(realtime.DEFAULT_THREAD_PRIORITY)
        LOOP_SCHEDULING[:] = [f"SCHED_FIFO {realtime.DEFAULT_THREAD_PRIORITY}" if not problems
                              else f"normal ({problems[0]})"]
        out.update(_paced_here(seconds, cycle, before))

    worker = threading.Thread(target=run, name="bench_paced")
    worker.start()
    worker.join()
    return out


def _paced_here(seconds: float, cycle: Any, before: Any = None) -> dict[str, float]:
    times = []
    n = int(seconds * 1000)
    wall = time.monotonic()
    for k in range(n):
        if before is not None:
            before(k)
        t0 = time.perf_counter()
        cycle(k)
        times.append(time.perf_counter() - t0)
        delay = wall + (k + 1) * 1e-3 - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    d = np.array(times[200:])
    return {"achieved_rate": len(times) / (time.monotonic() - wall), "target_rate": 1000.0, "mean": d.mean(),
            "p99": float(np.percentile(d, 99)), "max": d.max(), "overrun_ratio": float(np.mean(d > 1e-3))}


def raw_step_anchor(urdf: Path, seconds: float) -> dict[str, float]:
    """One bare ``mj_step`` of the engine's model of ``urdf`` per millisecond, paced like the loop: the machine's
    own floor for a paced 1 kHz loop of that robot."""
    import mujoco

    from robot_core.model import load_robot
    from robot_core.physics.engine import PhysicsEngine

    engine = PhysicsEngine(load_robot(str(urdf)), timestep=1e-3)
    m, d = engine._model, engine._data  # the bare MuJoCo model, no robot_core code in the loop
    return paced(seconds, lambda k: mujoco.mj_step(m, d))
