"""C-level stacks of a test that outlived its timeout.

pytest-timeout's signal cannot act while the main thread is blocked in C, and faulthandler's dump at 330 s shows
only Python frames: a thread waiting for the GIL, or holding it inside an extension, looks like an ordinary line of
Python there. A hang seen once in a quiet full run could not be explained from that dump. This watchdog, a small
process per pytest process, attaches gdb to it when one test has run ``limit`` seconds and prints every thread's C
stack to stderr (which pytest-xdist passes to the run's log), so the next such hang names the lock it waits on.

Then it aborts the process: a process frozen that way never ends by itself (the run would wait for it forever),
while an aborted pytest-xdist worker is reported ("node down"), its test fails and the other worker finishes the
run (the Makefile's ``--max-worker-restart 0``: pytest-xdist 3.8 hung waiting for a replacement's work). pytest's
faulthandler prints every thread's Python stack on the abort.

What it found first (a hog run, 2026-11-27): Fast DDS deadlocked inside the test process. A receive thread,
removing a departed peer's writer, held the discovery (PDP) mutex and waited in ``ResourceEvent::unregister_timer``
for the event thread, which waited for that mutex in ``PDP::set_next_announcement_interval`` (the family of
eProsima/Fast-DDS issue 6502, open). A Python thread destroying a test node then blocked in
``rcl_publisher_fini`` while holding the GIL, which froze every other thread of the process, pytest-timeout's
included.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

# The watchdog's own program: reads "start <nodeid>" / "end" lines; a test still running after LIMIT s gets one
# gdb dump and then SIGABRT; EOF (the pytest process ended, however) ends the watchdog.
_WATCHDOG = r"""
import os, select, signal, subprocess, sys, time
pid, limit, gdb = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
started, test, dumped, pending = None, "", False, b""
while True:
    wait = None if started is None or dumped else max(0.0, started + limit - time.monotonic())
    # the descriptor itself, unbuffered: lines that arrive together must not wait in a buffer select cannot see
    ready, _, _ = select.select([0], [], [], wait)
    if ready:
        chunk = os.read(0, 65536)
        if not chunk:
            break
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            kind, _, name = line.decode(errors="replace").partition(" ")
            started, test, dumped = (time.monotonic(), name, False) if kind == "start" else (None, "", False)
    elif started is not None and not dumped:
        dumped = True
        sys.stderr.write(f"\n==== hang_watch: {test} still running after {limit:.0f} s; C stacks of pid {pid} ====\n")
        sys.stderr.flush()
        try:
            subprocess.run([gdb, "-p", str(pid), "-batch", "-nx", "-ex", "info threads", "-ex",
                            "thread apply all bt"], stdout=sys.stderr, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=120)
        except subprocess.TimeoutExpired:
            sys.stderr.write("(gdb did not finish within 120 s)\n")
        sys.stderr.write("==== hang_watch: end of C stacks; SIGABRT: faulthandler prints the Python stacks ====\n")
        sys.stderr.flush()
        try:
            os.kill(pid, signal.SIGABRT)
        except ProcessLookupError:
            pass
"""


class HangWatch:
    """Feeds test starts and ends to the watchdog process; does nothing where gdb or Linux is missing."""

    def __init__(self, limit: float):
        gdb = shutil.which("gdb")
        self._proc: subprocess.Popen[str] | None = None
        if gdb is None or not sys.platform.startswith("linux"):
            return
        # Without the session's test-domain marker, so reap_leftover_processes does not take it for a leaked node.
        env = {k: v for k, v in os.environ.items() if k != "ROBOT_CORE_TEST_DOMAIN"}
        self._proc = subprocess.Popen([sys.executable, "-c", _WATCHDOG, str(os.getpid()), str(limit), gdb],
                                      stdin=subprocess.PIPE, text=True, env=env, start_new_session=True)

    def _send(self, line: str) -> None:
        if self._proc is None or self._proc.stdin is None:
            return
        try:
            self._proc.stdin.write(line + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            self._proc = None

    def start(self, nodeid: str) -> None:
        self._send(f"start {nodeid}")

    def end(self) -> None:
        self._send("end")

    def close(self) -> None:
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
