"""The simulator node's simulation thread under cProfile, for ``bench/scale.py --profile``: where the time of each
simulated millisecond goes as arms are added.

Run as ``python bench/_profile_sim.py STATS_FILE -- <simulator node arguments>``: it starts the real simulator
node (its ``main``, DDS and all) with the simulation thread's loop wrapped in a ``cProfile.Profile`` on the thread's
CPU clock, and when the node is stopped (SIGINT) writes the profile to ``STATS_FILE`` (pstats) and the steps it
ran, its wall and CPU seconds to ``STATS_FILE.steps``. The wrapping is this script's only change to the node.
A helper, not a benchmark: ``make bench`` skips ``bench/_*.py``.
"""

from __future__ import annotations

import cProfile
import sys
import time
from pathlib import Path


def main() -> int:
    out = Path(sys.argv[1])
    node_args = sys.argv[sys.argv.index("--") + 1:]
    from robot_core.nodes import simulator

    plain_run = simulator.SimulatorNode._run

    def profiled_run(self: simulator.SimulatorNode) -> None:
        # The thread's CPU time, not wall time: on a machine shared with other work the wall clock also counts the
        # time the thread waited for a core, which says nothing of where its own time goes.
        profile = cProfile.Profile(time.thread_time)
        start_steps, start, cpu = self.engine.step_count, time.perf_counter(), time.thread_time()
        profile.enable()
        try:
            plain_run(self)
        finally:
            profile.disable()
            wall, cpu = time.perf_counter() - start, time.thread_time() - cpu
            profile.dump_stats(str(out))
            Path(f"{out}.steps").write_text(f"{self.engine.step_count - start_steps} {wall} {cpu}\n")

    simulator.SimulatorNode._run = profiled_run
    return simulator.main(node_args)


if __name__ == "__main__":
    sys.exit(main())
