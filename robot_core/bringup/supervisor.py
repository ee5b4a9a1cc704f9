"""Child processes that cannot outlive their supervisor: what ``robot-core bringup`` runs its nodes under.

Each child gets its own session (process group), so a Ctrl-C in the terminal reaches only the supervisor, which
then stops the children in order: SIGINT to every group, SIGTERM to what is left after ``timeout``, SIGKILL
after that. On Linux each child also carries ``PR_SET_PDEATHSIG`` (set by a tiny exec shim before the real
program starts), so even a SIGKILLed supervisor leaves no node behind. Every child's environment carries
``ROBOT_CORE_BRINGUP_ID=<marker>``; tests find the whole tree through it in ``/proc``.

Output of each child is read by a thread and passed, line by line, to a sink (``[name] line`` on the console
for the CLI, a log file per child for the demo). No ROS in here.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from robot_core.ros.node_main import NODE_SCRIPTS

MARKER_ENV = "ROBOT_CORE_BRINGUP_ID"
_PARENT_ENV = "ROBOT_CORE_SUPERVISOR_PID"
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# Runs as `python -c SHIM program args...`: ask the kernel for SIGTERM when the supervisor dies, make sure it
# did not die already, then become the program (the request survives execve). The child starts with SIGINT and
# SIGTERM blocked (see Supervisor.start): a robot_core node script keeps them blocked across execve and
# unblocks them once its own handlers are in (robot_core.ros.node_main.guard_start_up), so a stop during its
# start-up is held back and then handled, instead of raising KeyboardInterrupt in the middle of an import;
# any other program gets them unblocked here. Both get their default action back first: an ignored SIGINT survives
# execve, and a supervisor started as a background job of a script (which ignores SIGINT) would otherwise start
# children that the SIGINT of stop_all cannot stop.
_SHIM = (
    "import ctypes,os,signal,sys\n"
    "ctypes.CDLL(None,use_errno=True).prctl(1,signal.SIGTERM)\n"
    "os.getppid()==int(os.environ.pop('" + _PARENT_ENV + "'))or os._exit(1)\n"
    "[signal.signal(s,signal.SIG_DFL)for s in(signal.SIGINT,signal.SIGTERM)]\n"
    "os.path.basename(sys.argv[1])in" + repr(tuple(sorted(NODE_SCRIPTS))) + "or "
    "signal.pthread_sigmask(signal.SIG_UNBLOCK,(signal.SIGINT,signal.SIGTERM))\n"
    "os.execvp(sys.argv[1],sys.argv[1:])\n"
)

LineSink = Callable[[str, str], None]  # (child name, line without newline)


@dataclass
class Child:
    """One supervised process."""

    name: str
    argv: list[str]
    popen: subprocess.Popen[bytes]
    log_path: Path | None = None
    started: float = field(default_factory=time.monotonic)
    expected_exit: bool = False  # a one-shot command (spawner): exiting is not a failure
    _reader: threading.Thread | None = None
    _lines: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def output(self) -> str:
        return "\n".join(self._lines)


class Supervisor:
    """Starts children in their own process groups and stops all of them, whatever happens."""

    def __init__(self, sink: LineSink | None = None, log_dir: Path | None = None, marker: str | None = None,
                 env: dict[str, str] | None = None, keep_lines: int = 400):
        # A marker given by whoever started us (a test) is kept, so our own process carries it as well.
        self.marker = marker or os.environ.get(MARKER_ENV) or f"robot_core-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.sink = sink
        self.log_dir = log_dir
        self.env = dict(os.environ if env is None else env)
        self.env[MARKER_ENV] = self.marker
        self.env.setdefault("PYTHONUNBUFFERED", "1")
        self.keep_lines = keep_lines
        self.children: list[Child] = []
        self._lock = threading.Lock()

    # --- starting -------------------------------------------------------------------------------------------
    def start(self, name: str, argv: Sequence[str], expected_exit: bool = False) -> Child:
        """Start ``argv`` as child ``name``; its output goes to the sink and/or ``log_dir/<name>.log``."""
        argv = [str(a) for a in argv]
        env = dict(self.env)
        cmd = list(argv)
        held = False
        if sys.platform.startswith("linux"):
            env[_PARENT_ENV] = str(os.getpid())
            cmd = [sys.executable, "-S", "-c", _SHIM, *argv]  # -S: the shim needs no site-packages
            # the child inherits this thread's signal mask; ours is restored right after the fork
            old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
            held = True
        try:
            popen = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env=env, start_new_session=True)
        finally:
            if held:
                signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        log_path = None
        log: IO[str] | None = None
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            log_path = self.log_dir / f"{name}.log"
            log = log_path.open("a", encoding="utf-8")
        child = Child(name, argv, popen, log_path, expected_exit=expected_exit)
        child._reader = threading.Thread(target=self._read, args=(child, log), daemon=True, name=f"out-{name}")
        child._reader.start()
        with self._lock:
            self.children.append(child)
        return child

    def _read(self, child: Child, log: IO[str] | None) -> None:
        assert child.popen.stdout is not None
        try:
            for raw in child.popen.stdout:
                line = raw.decode("utf-8", errors="replace").rstrip("\n")
                child._lines.append(line)
                if len(child._lines) > self.keep_lines:
                    del child._lines[: len(child._lines) - self.keep_lines]
                if log is not None:
                    log.write(line + "\n")
                    log.flush()
                if self.sink is not None:
                    self.sink(child.name, line)
        finally:
            if log is not None:
                log.close()

    def run(self, name: str, argv: Sequence[str], timeout: float, stop: threading.Event | None = None) -> Child:
        """Start a one-shot command and wait for it (supervised like the rest, so Ctrl-C stops it too).

        Raises TimeoutError when it runs longer than ``timeout``, InterruptedError when ``stop`` gets set.
        """
        child = self.start(name, argv, expected_exit=True)
        deadline = time.monotonic() + timeout
        while child.popen.poll() is None:
            if stop is not None and stop.is_set():
                self.stop_child(child)
                raise InterruptedError(f"{name} interrupted")
            if time.monotonic() > deadline:
                self.stop_child(child)
                raise TimeoutError(f"{name} did not finish within {timeout:g} s")
            time.sleep(0.05)
        if child._reader is not None:
            child._reader.join(timeout=2.0)
        return child

    # --- watching -------------------------------------------------------------------------------------------
    def pids(self) -> dict[str, int]:
        return {c.name: c.pid for c in self.children if not c.expected_exit}

    def failed(self) -> list[Child]:
        """Long-running children that exited on their own."""
        return [c for c in self.children if not c.expected_exit and not c.alive()]

    # --- stopping -------------------------------------------------------------------------------------------
    def stop_child(self, child: Child, timeout: float = 10.0) -> int | None:
        self._stop_group([child], timeout)
        return child.popen.returncode

    def stop_all(self, timeout: float = 10.0) -> dict[str, int | None]:
        """SIGINT every child's group at once, escalate to SIGTERM / SIGKILL; returns exit codes by name."""
        with self._lock:
            children = list(reversed(self.children))
        self._stop_group(children, timeout)
        for c in children:
            if c._reader is not None:
                c._reader.join(timeout=2.0)
        return {c.name: c.popen.returncode for c in children}

    @staticmethod
    def _stop_group(children: list[Child], timeout: float) -> None:
        for sig, wait in ((signal.SIGINT, timeout), (signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
            running = [c for c in children if c.popen.poll() is None]
            if not running:
                break
            for c in running:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(c.pid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and any(c.popen.poll() is None for c in running):
                time.sleep(0.02)
        for c in children:
            # Whatever the leader left behind in its group (it may have exited on SIGINT before its children).
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(c.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                c.popen.wait(timeout=1.0)


def processes_with_marker(marker: str) -> list[int]:
    """PIDs of live processes whose environment carries ``ROBOT_CORE_BRINGUP_ID=marker`` (Linux /proc)."""
    needle = f"{MARKER_ENV}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found
