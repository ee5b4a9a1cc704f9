"""The README's main job: ``make demo`` = ``python -m robot_core.demo`` = ``robot-core demo``.

The command line of the demo: options, signal handling (Ctrl-C stops every node), the scenario to run
(``--scenario``, one of :data:`robot_core.demo.scenarios.SCENARIOS`; the default is the arm).
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import Any

from robot_core.bringup.plan import MODES
from robot_core.demo.runner import run_demo
from robot_core.demo.scenarios import DEFAULT, SCENARIOS


def configure_cli(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default=DEFAULT,
                        help=f"what the demo does (default {DEFAULT}; doc/demo.md describes each)")
    parser.add_argument("--output", default="demo_output", metavar="DIR",
                        help="folder for tracking.png, final_pose.png, summary.txt/json, logs/ (default ./demo_output)")
    parser.add_argument("--mode", choices=MODES, default="topic",
                        help="topic: simulator in its own process (default); embedded: physics in the controller "
                             "manager")
    parser.add_argument("--record", action=argparse.BooleanOptionalAction, default=True,
                        help="record the run's topics into run.mcap beside the PNGs (default on; doc/recording.md)")
    parser.add_argument("--video", action=argparse.BooleanOptionalAction, default=True,
                        help="render run.mp4 of the run (GIF without an encoder; default on)")
    parser.add_argument("--view", nargs="?", type=int, const=8080, default=None, metavar="PORT",
                        help="serve the live web view on http://127.0.0.1:PORT/ while the demo runs (default 8080)")


def run_cli(args: argparse.Namespace) -> int:
    interrupted: list[int] = []

    def on_signal(signum: int, _frame: Any) -> None:
        interrupted.append(signum)
        raise KeyboardInterrupt

    # Explicit handlers: a shell starts background jobs with SIGINT ignored, and Ctrl-C must still stop the nodes.
    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        return run_demo(SCENARIOS[args.scenario], Path(args.output), args.mode, record=args.record,
                        video=args.video, view_port=args.view)
    except BaseException:
        # The interrupt may surface as another exception (e.g. an import it cut short); the nodes are stopped
        # either way by Bringup's context manager.
        if not interrupted:
            raise
        print(f"robot_core demo: interrupted ({signal.Signals(interrupted[0]).name}); every node was stopped",
              file=sys.stderr)
        return 130
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m robot_core.demo", description=__doc__.splitlines()[0])
    configure_cli(parser)
    return run_cli(parser.parse_args(argv))
