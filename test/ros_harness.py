"""Shared test harness: ROS isolation, background executors, deadlines, and node subprocesses.

Every test that talks DDS goes through here so that test runs never see each other's traffic
(own ROS_DOMAIN_ID, localhost-only discovery), never sleep to synchronise (``wait_for``), and
never leave a process behind (``NodeProcess`` kills its whole process group).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from robot_core.ros.middleware_deadlock import deadlocked_middleware_threads, describe

REPO = Path(__file__).resolve().parent.parent


_DOMAIN_LOCK = None  # held open for the whole session: the lock is the reservation
_SESSION_DIR: Path | None = None  # session_dir()
_STARTED: list[NodeProcess] = []  # NodeProcess objects this test process started, for failure reports
# Contexts left undestroyed because the middleware was deadlocked (robot_core.ros.middleware_deadlock), with their
# nodes: kept referenced so that no finaliser runs on them
ABANDONED_CONTEXTS: list[tuple[Any, list[Any]]] = []


def _reserve_domain() -> int:
    """Reserve a ROS domain id no other test session on this machine holds (flock on a file per id).

    Fast DDS maps domain d to ports 7400 + 250 * d; ids above ~100 run out of port range when many
    participants exist, so pick from 1..100, starting at a pid-derived id to spread sessions out.
    """
    global _DOMAIN_LOCK
    import fcntl

    start = os.getpid() % 100
    for k in range(100):
        domain = 1 + (start + k) % 100
        f = open(os.path.join(tempfile.gettempdir(), f"robot_core_ros_domain_{domain}.lock"), "w")  # noqa: SIM115
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            continue
        if _processes_on_domain(domain):  # orphans of a killed session still talk there: not free after all
            f.close()
            continue
        _DOMAIN_LOCK = f
        return domain
    raise RuntimeError("no free ROS domain id in 1..100: too many test sessions on this machine")


def _processes_on_domain(domain: int) -> list[int]:
    """Live processes (other than this one) whose environment puts them on ``domain``: the lock of a test session
    that was killed is free, but the nodes it started may live on and answer on that domain."""
    if not Path("/proc").is_dir():
        return []
    marker = f"ROS_DOMAIN_ID={domain}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if marker in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def isolate_ros_environment() -> int:
    """Give this test session a domain of its own; children inherit it through os.environ.

    Under pytest-xdist every worker is a session of its own: it reserves its own domain (the one it inherited
    from the controlling process is that process's, shared by every worker)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker and os.environ.get("ROBOT_CORE_TEST_DOMAIN_WORKER") != worker:
        os.environ.pop("ROBOT_CORE_TEST_DOMAIN", None)
        os.environ["ROBOT_CORE_TEST_DOMAIN_WORKER"] = worker
    if "ROBOT_CORE_TEST_DOMAIN" not in os.environ:
        os.environ["ROBOT_CORE_TEST_DOMAIN"] = str(_reserve_domain())
    os.environ["ROS_DOMAIN_ID"] = os.environ["ROBOT_CORE_TEST_DOMAIN"]
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ.pop("ROS_STATIC_PEERS", None)
    os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
    os.environ["PYTHONUNBUFFERED"] = "1"
    # a controller manager's cycle stalled for seconds in hog runs: one that runs 0.5 s prints where every thread is
    os.environ.setdefault("ROBOT_CORE_STALL_DUMP", "0.5")
    # SIGUSR1's stack dumps (robot_core.ros.stack_dumps) go to files here, for a failing test's report (stack_dumps)
    stacks = session_dir() / "stacks"
    stacks.mkdir(exist_ok=True)
    os.environ["ROBOT_CORE_STACKS_DIR"] = str(stacks)
    # rcl's own log file of every node (a file per process, by default in ~/.ros/log, never removed)
    os.environ["ROS_LOG_DIR"] = str(session_dir() / "ros_log")
    return int(os.environ["ROS_DOMAIN_ID"])


def session_dir() -> Path:
    """This test process's folder for node logs, rcl's log files and stack dumps, made on first use: a full run
    starts some 300 nodes, and their logs are kept only for a session that failed (:func:`remove_session_dir`)."""
    global _SESSION_DIR
    if _SESSION_DIR is None:
        _SESSION_DIR = Path(tempfile.mkdtemp(prefix=f"robot_core_test_{os.environ.get('ROS_DOMAIN_ID', 'x')}_"))
    return _SESSION_DIR


def remove_session_dir(passed: bool) -> str:
    """At the session's end: remove the folder when every test passed (or it holds no file), else keep it;
    returns where it is kept ("" when removed or never made)."""
    if _SESSION_DIR is None:
        return ""
    if passed or not any(p.is_file() for p in _SESSION_DIR.rglob("*")):
        shutil.rmtree(_SESSION_DIR, ignore_errors=True)
        return ""
    return str(_SESSION_DIR)


@contextlib.contextmanager
def venv_layout(exclusive: bool = False) -> Iterator[None]:
    """Held while a test reads the venv's generated ROS layout (shared) or deletes and repairs a piece of it
    (exclusive): under pytest-xdist such tests of different files run side by side."""
    import fcntl

    name = "".join(c if c.isalnum() else "_" for c in sys.prefix)[-80:]
    with open(os.path.join(tempfile.gettempdir(), f"robot_core_venv_{name}.lock"), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield


def wait_for(condition: Callable[[], Any], timeout: float = 10.0, what: str = "condition",
             poll: float = 0.005) -> Any:
    """Poll condition until it returns a truthy value; fail with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.1f} s waiting for {what}")
        time.sleep(poll)


def wait_ready(endpoint: Any, timeout: float = 30.0) -> bool:
    """Whether a service client's server (``service_is_ready``) or an action client's (``server_is_ready``) was
    discovered within ``timeout`` s, checked every 5 ms: rclpy's wait_for_service / wait_for_server sleep in steps
    of 0.25 s, which lost up to a quarter second per call after the server had appeared."""
    check = getattr(endpoint, "service_is_ready", None) or endpoint.server_is_ready
    try:
        wait_for(check, timeout, "server")
    except TimeoutError:
        return False
    return True


def wait_future(future: Any, timeout: float = 10.0, what: str = "future") -> Any:
    """Wait for an rclpy Future that a background executor completes."""
    wait_for(future.done, timeout, what)
    exc = future.exception()
    if exc is not None:
        raise exc
    return future.result()


def answered_eventually(send: Callable[[Any], Any], request: Any, what: str, timeout: float = 40.0,
                        resend: float = 2.0) -> None:
    """Send ``request`` (something harmless) until one is answered. Fast DDS drops a response while the server
    has not yet discovered a new client's reader, which on a loaded machine outlasts the first call; so a fresh
    client's calls that count go out only after a harmless one came back.

    Every request sent stays in play: a new one goes out each ``resend`` seconds while none has come back, and an
    answer to *any* of them ends the wait. (Waiting on the newest one only threw away every answer that took
    longer than ``resend`` to come back, as answers may under a CPU hog.)
    """
    sent: list[Any] = []
    deadline = time.monotonic() + timeout
    while True:
        sent.append(send(request))
        try:
            wait_for(lambda: any(f.done() for f in sent), min(resend, max(0.0, deadline - time.monotonic())), what)
            return
        except TimeoutError:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"timed out after {timeout:.1f} s waiting for {what} ({len(sent)} sent, "
                                   "none answered)") from None


class RosTestContext:
    """An rclpy context with a multi-threaded executor spinning in a background thread."""

    def __init__(self) -> None:
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import MultiThreadedExecutor

        self.context = Context()
        rclpy.init(context=self.context)
        self.executor = MultiThreadedExecutor(num_threads=4, context=self.context)
        self.nodes: list[Any] = []
        self.spin_errors: list[str] = []
        self._stop = threading.Event()
        self._shut_down = False
        self._thread = threading.Thread(target=self._spin, daemon=True, name="ros-test-executor")
        self._thread.start()

    def _spin(self) -> None:
        from rclpy.executors import ExternalShutdownException

        while self.context.ok() and not self._stop.is_set():
            try:
                self.executor.spin_once(timeout_sec=0.05)
            except (ExternalShutdownException, KeyboardInterrupt):
                return
            except Exception as exc:
                # rclpy's ActionClient adds itself to its (already spinning) node before it creates its lock, so
                # the wait set may meet it half-built ("'ActionClient' object has no attribute '_lock'"). The
                # executor must not die of that: every later callback of the test would silently stop. Each retry
                # fails at once while the creating thread waits for the GIL, so the loop sleeps a moment to let it
                # finish (a cap on the count of these errors once killed this thread: 100 came in a few ms).
                # Errors other than the known transient ones are reported at teardown; only the first 100 are kept.
                if len(self.spin_errors) < 100:
                    self.spin_errors.append(f"{type(exc).__name__}: {exc}")
                time.sleep(0.002)

    def node(self, name: str, **kwargs: Any) -> Any:
        """Create a node in this context and spin it."""
        import rclpy

        node = rclpy.create_node(name, context=self.context, **kwargs)
        return self.add(node)

    def add(self, node: Any) -> Any:
        self.nodes.append(node)
        self.executor.add_node(node)
        return node

    def shutdown(self) -> None:
        if self._shut_down:
            return
        self._shut_down = True
        # Stop spinning before any node is destroyed, so no callback runs on a destroyed handle.
        self._stop.set()
        self._thread.join(timeout=5)
        unexpected = [e for e in self.spin_errors if "_lock" not in e and "destruction was requested" not in e]
        if unexpected:
            warnings.warn(f"the test executor met {len(unexpected)} error(s), first: {unexpected[0]}",
                          RuntimeWarning, stacklevel=2)
        nodes, self.nodes = list(self.nodes), []
        deadlocked = deadlocked_middleware_threads()
        if deadlocked:
            # Every destroy call would block for good, holding the interpreter lock (no timeout reaches it). The
            # context is kept, never finalised (the garbage collector would block the same way), and the process
            # leaves with os._exit at the end of the session (conftest.py).
            ABANDONED_CONTEXTS.append((self, nodes))
            warnings.warn(f"RosTestContext.shutdown: {describe(deadlocked)}", RuntimeWarning, stacklevel=2)
            return

        def destroy() -> None:
            for node in nodes:
                with contextlib.suppress(Exception):
                    self.executor.remove_node(node)
                # rclpy's destroy_node leaves the node's action clients and servers (waitables) alive, and they
                # keep the node, so the context's DDS participant, until the garbage collector frees them: a full
                # run found eight participants of ended tests in one pytest process, each taking part in the
                # discovery of every later test (the Fast DDS deadlock froze one of them), and the collector
                # finalising one on whatever thread it ran on, holding the GIL
                for waitable in list(node.waitables):
                    with contextlib.suppress(Exception):
                        waitable.destroy()
                with contextlib.suppress(Exception):
                    node.destroy_node()
            with contextlib.suppress(Exception):
                self.executor.shutdown(timeout_sec=1)
            with contextlib.suppress(Exception):
                self.context.try_shutdown()

        # A destroy call that blocks without holding the interpreter lock is reported after 30 s instead of stalling
        # the suite. rclpy's destroy calls hold it, so this cannot reach the Fast DDS deadlock: the probe above does,
        # provided the deadlock formed before (it forms as a peer leaves; see the `processes` fixture's order).
        worker = threading.Thread(target=destroy, name="ros_test_context_shutdown", daemon=True)
        worker.start()
        worker.join(timeout=30)
        if worker.is_alive():
            warnings.warn("RosTestContext.shutdown: destroying the test nodes did not finish within 30 s "
                          "(middleware hang); left behind", RuntimeWarning, stacklevel=2)


def processes_to_show(since: float) -> list[NodeProcess]:
    """The node processes a failing test's report shows: alive now (a class's shared simulator too) or started
    since ``since`` (monotonic s)."""
    return [p for p in _STARTED if p.alive() or p.started >= since]


def _family(pid: int) -> list[int]:
    """``pid``, its process group and all their descendants (a bring-up starts its nodes in sessions of their
    own)."""
    parent: dict[int, int] = {}
    group: list[int] = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                parent[int(entry.name)] = int(fields[1])
                if int(fields[2]) == pid:
                    group.append(int(entry.name))
    family, todo = set(), [pid, *group]
    while todo:
        p = todo.pop()
        if p not in family:
            family.add(p)
            todo.extend(c for c, pp in parent.items() if pp == p)
    return sorted(family)


def _catches(pid: int, signum: int) -> bool:
    """Whether ``pid`` catches ``signum`` (the default action of SIGUSR1 and SIGUSR2 ends the process)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    return False


def stack_dumps(proc: NodeProcess, timeout: float = 3.0) -> str:
    """Every thread's Python stack, now, of each process of ``proc``'s family (:func:`_family`) that dumps on
    SIGUSR1 (robot_core.ros.stack_dumps, into ROBOT_CORE_STACKS_DIR): where a node that went silent stands."""
    folder = os.environ.get("ROBOT_CORE_STACKS_DIR")
    if not folder or not proc.alive():
        return ""
    asked: dict[int, tuple[Path, int]] = {}
    for pid in _family(proc.proc.pid):
        if _catches(pid, signal.SIGUSR1):
            path = Path(folder) / f"{pid}.txt"
            with contextlib.suppress(OSError):
                before = path.stat().st_size if path.exists() else 0
                os.kill(pid, signal.SIGUSR1)
                asked[pid] = (path, before)

    def grown() -> bool:
        return all(path.exists() and path.stat().st_size > before for path, before in asked.values())

    deadline = time.monotonic() + timeout
    while not grown() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)  # a dump of many threads is written in pieces
    parts = []
    for pid, (path, before) in asked.items():
        with contextlib.suppress(OSError):
            with path.open("rb") as f:
                f.seek(before)
                text = f.read().decode("utf-8", "replace")
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:160]
            parts.append(f"--- pid {pid}: {cmd}\n{text}")
    return "\n".join(parts)


def forget_ended_processes() -> None:
    """After each test: ended processes are no longer shown (nor their output kept in memory)."""
    _STARTED[:] = [p for p in _STARTED if p.alive()]


class NodeProcess:
    """A console-script node (or any command) in its own process group, always stopped.

    Output goes to a log file that is printed when the test fails to find a condition, so a
    failing integration test shows what the node said.
    """

    def __init__(self, args: list[str], name: str | None = None, env: dict[str, str] | None = None,
                 cwd: str | Path | None = None) -> None:
        self.args = args
        self.name = name or Path(args[0]).name
        self.log_path = Path(tempfile.mkstemp(prefix=f"{self.name}_", suffix=".log", dir=session_dir())[1])
        self._log = self.log_path.open("w")
        # output() reads only what was added since its last call: wait_for_output polls it every 5 ms, and
        # re-reading a chatty node's whole log each time cost the test process CPU that its executor needed.
        self._reader = self.log_path.open("rb")
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._text: list[str] = []
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.started = time.monotonic()
        self.proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT, env=full_env,
                                     cwd=str(cwd) if cwd else None, start_new_session=True)
        _STARTED.append(self)

    @classmethod
    def console_script(cls, script: str, *args: str, **kwargs: Any) -> NodeProcess:
        """Start one of robot_core's console scripts from the venv that runs the tests."""
        exe = Path(sys.executable).parent / script
        if not exe.exists():
            raise FileNotFoundError(f"console script '{script}' not found next to {sys.executable}")
        return cls([str(exe), *args], name=script, **kwargs)

    @classmethod
    def python(cls, script: str | Path, *args: str, **kwargs: Any) -> NodeProcess:
        return cls([sys.executable, str(script), *args], name=Path(script).stem, **kwargs)

    def output(self) -> str:
        if not self._log.closed:
            self._log.flush()
        if not self._reader.closed:
            chunk = self._reader.read()
            if chunk:
                self._text.append(self._decoder.decode(chunk))
            if len(self._text) > 1:
                self._text[:] = ["".join(self._text)]
        return self._text[0] if self._text else ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_for_output(self, text: str, timeout: float = 20.0) -> None:
        try:
            wait_for(lambda: text in self.output() or not self.alive(), timeout, f"'{text}' from {self.name}")
        except TimeoutError:
            raise TimeoutError(f"{self.name} did not print '{text}'; output:\n{self.output()[-3000:]}") from None
        if text not in self.output():
            raise RuntimeError(f"{self.name} exited ({self.proc.returncode}) before printing '{text}':\n"
                               f"{self.output()[-3000:]}")

    def stop(self, sig: int = signal.SIGINT, timeout: float = 10.0) -> int:
        """Signal the process group, escalate to SIGKILL, and return the exit code."""
        if self.proc.poll() is None:
            for k, (s, wait) in enumerate(((sig, timeout), (signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0))):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, s)
                try:
                    self.proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    if k == 0:
                        self._log_c_level_stacks()
                    continue
        # Children that escaped to their own group are still in ours unless they setsid'ed.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self._log.close()
        self.output()  # the last lines, read before the reader closes
        self._reader.close()
        return self.proc.returncode

    def _log_c_level_stacks(self) -> None:
        """A node that ignored its stop signal usually has its interpreter held by a thread blocked in C: its
        SIGUSR2 dump (faulthandler's, which needs no interpreter lock) goes into its log, for the failure report."""
        folder = os.environ.get("ROBOT_CORE_STACKS_DIR")
        if not folder or not _catches(self.proc.pid, signal.SIGUSR2):
            return
        path = Path(folder) / f"{self.proc.pid}.txt"
        with contextlib.suppress(OSError):
            before = path.stat().st_size if path.exists() else 0
            os.kill(self.proc.pid, signal.SIGUSR2)
            deadline = time.monotonic() + 2.0
            while time.monotonic() < deadline and (not path.exists() or path.stat().st_size == before):
                time.sleep(0.05)
            time.sleep(0.2)  # written in pieces
            with path.open("rb") as f:
                f.seek(before)
                dump = f.read().decode("utf-8", "replace")
            self._log.write(f"\n[test harness] {self.name} ignored its stop signal; its threads (C-level "
                            f"dump):\n{dump}\n")
            self._log.flush()

    def __enter__(self) -> NodeProcess:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


@contextlib.contextmanager
def node_processes(*procs: NodeProcess) -> Iterator[tuple[NodeProcess, ...]]:
    try:
        yield procs
    finally:
        for p in procs:
            p.stop()


def session_processes() -> list[tuple[int, str]]:
    """Live processes started by this test session (they carry its ROBOT_CORE_TEST_DOMAIN), except this process and
    its ancestors: a node that outlives its test answers the next tests' calls on the same domain."""
    marker = f"ROBOT_CORE_TEST_DOMAIN={os.environ.get('ROBOT_CORE_TEST_DOMAIN', '')}".encode()
    skip, pid = set(), os.getpid()
    while pid > 1:  # this process and its ancestors (a shell that exported the variable is no leak)
        skip.add(pid)
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in skip:
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                found.append((int(entry.name), (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]))
        except OSError:
            continue  # gone, or not ours to read
    return found


def reap_leftover_processes(grace: float = 5.0) -> list[str]:
    """Wait up to ``grace`` s for this session's child processes to end, then SIGKILL what is left; returns what
    had to be killed (empty when every test stopped what it started)."""
    deadline = time.monotonic() + grace
    while (left := session_processes()) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid, _ in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return [f"{pid}: {cmd}" for pid, cmd in left]
