"""Every thread's Python stack, printed when a process crashes in C or when asked with SIGUSR1.

Why: a node that is alive but silent (a controller manager that stopped answering its services was seen twice in
full test runs) cannot be diagnosed after it is stopped; ``kill -USR1 <pid>`` shows where each of its threads
stands while it stands. faulthandler prints from its own C handler, so a thread that holds the interpreter in a
C call cannot stop the dump.

``ROBOT_CORE_STACKS_DIR`` (the test harness sets it) sends the on-demand dumps to ``<dir>/<pid>.txt`` instead of
the process's stderr, so they do not push the node's own output out of a failure report.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import signal
import sys
from typing import IO

STACKS_DIR_ENV = "ROBOT_CORE_STACKS_DIR"
_TARGETS: list[IO[str]] = []  # faulthandler writes to the file's descriptor: it must stay open


def enable_stack_dumps() -> None:
    """Crash dumps to stderr and on-demand dumps on SIGUSR1; quietly nothing where stderr is no file (in-process
    use with stderr captured) or the signal cannot be handled here."""
    with contextlib.suppress(OSError, ValueError, AttributeError, RuntimeError):
        faulthandler.enable()
    target: IO[str] = sys.stderr
    folder = os.environ.get(STACKS_DIR_ENV)
    if folder:
        with contextlib.suppress(OSError):
            target = open(os.path.join(folder, f"{os.getpid()}.txt"), "w")  # noqa: SIM115 -- kept open, see above
            _TARGETS.append(target)
    usr1 = getattr(signal, "SIGUSR1", None)
    if usr1 is not None:
        with contextlib.suppress(OSError, ValueError, AttributeError, RuntimeError):
            faulthandler.register(usr1, file=target, all_threads=True)
