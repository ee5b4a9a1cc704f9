"""The robots the simulator benchmarks run on (example-robot-data's URDFs), shared by ``bench/simulator.py``
and ``bench/simulator_node.py`` so that neither imports the other for them.

A helper, not a benchmark: ``make bench`` skips ``bench/_*.py``.
"""

from __future__ import annotations

from pathlib import Path

ROBOTS = {
    "panda": "panda_description/urdf/panda.urdf",
    "pr2": "pr2_description/urdf/pr2.urdf",
    "ur5": "ur_description/urdf/ur5_robot.urdf",
}


def example_robot_data_dir() -> Path:
    import site

    for root in site.getsitepackages():
        cand = Path(root) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if cand.is_dir():
            return cand
    raise SystemExit("example-robot-data is not installed (needed for the Panda/PR2 models)")
