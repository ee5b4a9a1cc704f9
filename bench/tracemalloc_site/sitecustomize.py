"""Diagnostic for bench/soak.py, never in the nodes: tracemalloc snapshots of the controller manager on request.

``bench/soak.py --tracemalloc A,B`` puts this directory first on the nodes' PYTHONPATH and names a folder in
``ROBOT_CORE_TRACEMALLOC_DIR``. In the controller manager process only (by its script name) tracemalloc starts at
interpreter start-up, and a daemon thread watches that folder: for each request file ``<label>.request`` the soak
writes (at minute A and B of its load) it dumps ``<label>.snapshot`` (``tracemalloc.Snapshot.dump``) and removes the
request. The soak then diffs the two snapshots: which Python allocations grew between them.
"""

import os
import sys
import threading
import time
import tracemalloc
from pathlib import Path

_FOLDER = os.environ.get("ROBOT_CORE_TRACEMALLOC_DIR")
_FRAMES = 12  # traceback depth kept per allocation: enough to reach robot_core's frame under rclpy's


def _serve(folder: Path) -> None:
    while True:
        time.sleep(0.5)
        for request in sorted(folder.glob("*.request")):
            label = request.stem
            snapshot = tracemalloc.take_snapshot()
            snapshot.dump(str(folder / f"{label}.snapshot.part"))
            os.replace(folder / f"{label}.snapshot.part", folder / f"{label}.snapshot")
            request.unlink(missing_ok=True)


if _FOLDER and os.path.basename(sys.argv[0] if sys.argv and sys.argv[0] else "") in (
        "controller_manager", "ros2_control_node"):
    tracemalloc.start(_FRAMES)
    threading.Thread(target=_serve, args=(Path(_FOLDER),), name="tracemalloc-snapshots", daemon=True).start()
