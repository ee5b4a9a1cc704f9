"""The supervisor under `robot-core bringup`: children in their own groups, all stopped, none orphaned."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from ros_harness import wait_for

from robot_core.bringup.supervisor import MARKER_ENV, Supervisor, processes_with_marker

# A child that ignores SIGINT (like a node stuck in shutdown) and has a grandchild of its own.
STUBBORN = textwrap.dedent("""
    import signal, subprocess, sys, time
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    print("stubborn up", flush=True)
    time.sleep(600)
""")
# Its "up" is said inside the try: a SIGINT that arrives just after the line was written (a loaded machine) is
# still answered with "bye" and exit code 0, not an uncaught KeyboardInterrupt (-2).
POLITE = "import time\ntry:\n    print('polite up', flush=True)\n    time.sleep(600)\nexcept KeyboardInterrupt:\n" \
         "    print('bye', flush=True)\n"


def _marker() -> str:
    return f"test-supervisor-{uuid.uuid4().hex}"


def test_children_get_own_groups_marker_and_output(tmp_path):
    lines: list[tuple[str, str]] = []
    sup = Supervisor(sink=lambda n, line: lines.append((n, line)), log_dir=tmp_path, marker=_marker())
    try:
        child = sup.start("polite", [sys.executable, "-c", POLITE])
        wait_for(lambda: ("polite", "polite up") in lines, 20, "child output")
        assert os.getpgid(child.pid) == child.pid != os.getpgid(0)
        assert processes_with_marker(sup.marker) == [child.pid]
        assert sup.pids() == {"polite": child.pid} and not sup.failed()
    finally:
        codes = sup.stop_all(timeout=10)
    assert codes == {"polite": 0}
    assert ("polite", "bye") in lines
    assert (tmp_path / "polite.log").read_text().splitlines() == ["polite up", "bye"]
    assert processes_with_marker(sup.marker) == []


def test_children_stop_on_sigint_even_when_the_supervisor_ignores_it(tmp_path):
    """A background job of a script starts with SIGINT ignored, and an ignored signal survives execve: the children
    must still get SIGINT's default action back, or stop_all's SIGINT would not stop them."""
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    lines: list[tuple[str, str]] = []
    sup = Supervisor(sink=lambda n, line: lines.append((n, line)), log_dir=tmp_path, marker=_marker())
    try:
        sup.start("polite", [sys.executable, "-c", POLITE])
        wait_for(lambda: ("polite", "polite up") in lines, 20, "child output")
    finally:
        signal.signal(signal.SIGINT, old)
        codes = sup.stop_all(timeout=10)
    assert codes == {"polite": 0} and ("polite", "bye") in lines


def test_stop_all_escalates_and_takes_grandchildren():
    sup = Supervisor(marker=_marker())
    try:
        sup.start("stubborn", [sys.executable, "-c", STUBBORN])
        wait_for(lambda: len(processes_with_marker(sup.marker)) == 2, 20, "child and grandchild")
    finally:
        codes = sup.stop_all(timeout=1.0)
    assert codes["stubborn"] == -signal.SIGTERM
    wait_for(lambda: not processes_with_marker(sup.marker), 5, "no process left")


def test_run_waits_for_one_shot_commands_and_failed_reports_dead_nodes():
    sup = Supervisor(marker=_marker())
    try:
        ok = sup.run("one_shot", [sys.executable, "-c", "print('done')"], timeout=30)
        assert ok.popen.returncode == 0 and ok.output() == "done"
        with pytest.raises(TimeoutError, match="sleeper did not finish"):
            sup.run("sleeper", [sys.executable, "-c", "import time; time.sleep(60)"], timeout=0.5)
        dead = sup.start("crasher", [sys.executable, "-c", "raise SystemExit(3)"])
        wait_for(lambda: not dead.alive(), 20, "crasher to exit")
        assert [c.name for c in sup.failed()] == ["crasher"]  # one-shot commands never count as failed
    finally:
        sup.stop_all(timeout=2)
    assert not processes_with_marker(sup.marker)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
def test_children_die_with_a_killed_supervisor(tmp_path):
    """SIGKILL cannot be handled; the kernel's parent-death signal still ends every child."""
    marker = _marker()
    script = tmp_path / "sup.py"
    script.write_text(textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
        from robot_core.bringup.supervisor import Supervisor
        sup = Supervisor(marker={marker!r})
        for i in range(2):
            sup.start(f"child{{i}}", [sys.executable, "-c", "import time; time.sleep(600)"])
        print("started", flush=True)
        time.sleep(600)
    """))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "started"
        wait_for(lambda: len(processes_with_marker(marker)) == 2, 20, "two children")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        wait_for(lambda: not processes_with_marker(marker), 10, "children to follow their supervisor")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in processes_with_marker(marker):
            os.kill(pid, signal.SIGKILL)


def test_marker_is_inherited_from_the_environment(monkeypatch):
    monkeypatch.setenv(MARKER_ENV, "given-by-a-test")
    assert Supervisor().marker == "given-by-a-test"
