"""Every thread's Python stack, printed when a process crashes in C or when asked with SIGUSR1.

Why: a node that is alive but silent (a controller manager that stopped answering its services was seen twice in
full test runs) cannot be diagnosed after it is stopped; ``kill -USR1 <pid>`` shows where each of its threads
stands while it stands, and the node runs on.

The SIGUSR1 dump is taken by a Python-level handler, so it holds the interpreter while it reads the other threads'
stacks: no thread can push or pop a frame under it. faulthandler's own C-level signal dump reads them while they
run, and a thread leaving a frame frees memory the dump is reading: it crashed a simulator in a full test run,
and a process with threads calling functions crashes within a few dumps (``test/test_stack_dumps.py``). The price:
the dump waits until the main thread runs Python (our nodes' main threads wake every 0.1 s) and no thread holds
the interpreter in a C call. For a process stuck that way, SIGUSR2 gives faulthandler's C-level dump, which
needs neither but may crash the process it reads.

``ROBOT_CORE_STACKS_DIR`` (the test harness sets it) sends the on-demand dumps to ``<dir>/<pid>.txt`` instead of
the process's stderr, so they do not push the node's own output out of a failure report.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import signal
import sys
from typing import IO, Any

STACKS_DIR_ENV = "ROBOT_CORE_STACKS_DIR"
_TARGETS: list[IO[str]] = []  # faulthandler writes to the file's descriptor: it must stay open


def enable_stack_dumps() -> None:
    """Crash dumps to stderr, on-demand dumps on SIGUSR1 (and the unlocked ones on SIGUSR2); quietly nothing where
    stderr is no file (in-process use with stderr captured) or the signal cannot be handled here (SIGUSR1 only in
    the main thread, as Python requires)."""
    with contextlib.suppress(OSError, ValueError, AttributeError, RuntimeError):
        faulthandler.enable()
    target: IO[str] = sys.stderr
    folder = os.environ.get(STACKS_DIR_ENV)
    if folder:
        with contextlib.suppress(OSError):
            target = open(os.path.join(folder, f"{os.getpid()}.txt"), "w")  # noqa: SIM115 -- kept open, see above
            _TARGETS.append(target)

    def dump(_signum: int, _frame: Any) -> None:
        with contextlib.suppress(OSError, ValueError, RuntimeError):
            faulthandler.dump_traceback(file=target, all_threads=True)

    usr1 = getattr(signal, "SIGUSR1", None)
    if usr1 is not None:
        with contextlib.suppress(OSError, ValueError, AttributeError, RuntimeError):
            signal.signal(usr1, dump)
    usr2 = getattr(signal, "SIGUSR2", None)
    if usr2 is not None:
        with contextlib.suppress(OSError, ValueError, AttributeError, RuntimeError):
            faulthandler.register(usr2, file=target, all_threads=True)
