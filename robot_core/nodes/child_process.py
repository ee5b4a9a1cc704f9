"""The nodes that bringup and the demo start beside the graph as child processes: ``robot-core record``
(:class:`RecorderProcess`) and ``robot-core view`` (:class:`ViewProcess`), on one handle (:class:`ChildProcess`).

Why one module: both are started the same way (this interpreter, ``-m robot_core.nodes.<name>``, a session of
their own so a Ctrl-C of the terminal reaches the parent only, output to a log file) and stopped the same way
(SIGINT, so the recorder closes its file and the view its server; SIGKILL only after a timeout).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


class ChildProcess:
    """``python -m robot_core.nodes.<module> <args>`` in its own session, output to ``log`` (None: inherited,
    or discarded with ``quiet``); :meth:`stop` ends it."""

    def __init__(self, module: str, args: Sequence[str], *, log: Path | None = None, quiet: bool = False) -> None:
        self.log_path = log
        argv = [sys.executable, "-m", f"robot_core.nodes.{module}", *args]
        sink: Any = log.open("w") if log is not None else (subprocess.DEVNULL if quiet else None)
        self.proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT if sink is not None else None,
                                     start_new_session=True)
        if log is not None:
            sink.close()

    def stop(self, timeout: float = 20.0) -> int | None:
        """SIGINT, then SIGKILL after ``timeout`` s; the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        return self.proc.returncode

    def __enter__(self) -> ChildProcess:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class RecorderProcess(ChildProcess):
    """``robot-core record`` (bringup --record, the demo): started before the graph so that latched topics and the
    first states are in the file, stopped with SIGINT so that the file is closed properly (a recorder killed after
    the timeout leaves a truncated file)."""

    def __init__(self, output: str | Path, topics: Sequence[str] = (), *, images: bool = False,
                 log: Path | None = None) -> None:
        self.output = Path(output)
        super().__init__("recorder", ["-o", str(self.output), *topics, *(["--images"] if images else [])], log=log,
                         quiet=True)


class ViewProcess(ChildProcess):
    """``robot-core view`` (bringup --view, demo --view), stopped with the graph."""

    def __init__(self, port: int = 8080, *, robot: str | None = None, log: Path | None = None,
                 package_dirs: Sequence[str | Path] = ()) -> None:
        self.url = f"http://127.0.0.1:{port}/"
        dirs = ["--package-dirs", *(str(d) for d in package_dirs)] if package_dirs else []
        super().__init__("view", ["--port", str(port), *(["--robot", str(robot)] if robot else []), *dirs], log=log)

    def stop(self, timeout: float = 10.0) -> int | None:
        return super().stop(timeout)
