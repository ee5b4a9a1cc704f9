"""Pytest fixtures shared by all robot_core tests (see ros_harness.py for the machinery)."""

from __future__ import annotations

import os
import signal
import site
import sys
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mujoco
import pytest
from hang_watch import HangWatch
from ros_harness import (
    ABANDONED_CONTEXTS,
    REPO,
    NodeProcess,
    RosTestContext,
    forget_ended_processes,
    isolate_ros_environment,
    processes_to_show,
    reap_leftover_processes,
    remove_session_dir,
    stack_dumps,
)
from sim_helpers import HOME, SimClient, near, start_simulator

# Before anything imports rclpy: this session gets its own domain and localhost-only discovery.
DOMAIN_ID = isolate_ros_environment()

# MuJoCo's default warning handler appends to MUJOCO_LOG.TXT in the working directory (the checkout): the nodes
# route warnings to their logs, and in this process they become Python warnings, shown in pytest's summary.
mujoco.set_mju_user_warning(lambda text: warnings.warn(f"MuJoCo: {text.strip()}", stacklevel=1))

URDF_DIR = REPO / "urdf"
_STARTED_AT = pytest.StashKey[float]()  # monotonic time a test's setup began
_EXIT_STATUS = pytest.StashKey[int]()  # the session's exit status, for a process that must leave with os._exit
ERD_ROBOTS = None
for _cand in (
    Path(p) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
    for p in site.getsitepackages()
):
    if _cand.is_dir():
        ERD_ROBOTS = _cand
        break


def pytest_report_header(config: pytest.Config) -> str:
    if getattr(config.option, "numprocesses", None):
        return "robot_core: a ROS domain per pytest-xdist worker, ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST"
    return f"robot_core: ROS_DOMAIN_ID={DOMAIN_ID}, ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST"


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """Summaries a test recorded with ``record_property("summary", text)`` (e.g. the example-robot-data corpus's
    pass count and refused files): shown at the end of every run, also under ``-q`` where prints are hidden."""
    texts = [value for key in ("passed", "failed") for report in terminalreporter.stats.get(key, [])
             if report.when == "call" for name, value in report.user_properties if name == "summary"]
    if texts:
        terminalreporter.write_sep("-", "summaries")
        for text in texts:
            terminalreporter.write_line(text)


@pytest.fixture
def say(record_property):
    """A measured figure for the log: ``say("[world] ...")`` lands in the summaries at the end of every run (the
    terminals of pytest-xdist's workers are not shown, so a print there would be lost)."""
    return lambda text: record_property("summary", text)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[pytest.TestReport]:
    """A failing test's report ends with what its node processes printed: those it started and those still alive
    (a class's shared simulator), so a failure that began in a shared node shows that node's side."""
    report = yield
    if call.when == "setup":
        item.stash[_STARTED_AT] = call.start - (time.time() - time.monotonic())
    if report.failed and call.when in ("setup", "call"):
        for proc in processes_to_show(item.stash.get(_STARTED_AT, time.monotonic())):
            state = "running" if proc.alive() else f"exited {proc.proc.returncode}"
            text = proc.output()
            # A crash's faulthandler dump names the crashing thread first ("Current thread"): show it from there
            # (a manager's SIGSEGV in a quiet run was cut off above its last 4000 characters).
            crash = text.find("Fatal Python error")
            shown, which = (text[crash:crash + 12000], "from its crash") if crash >= 0 else \
                (text[-4000:], "last 4000 characters")
            report.sections.append((f"output of {proc.name} (pid {proc.proc.pid}, {state}), {which}", shown))
            # where it stands, if it still runs: a node alive and silent (a manager that stopped answering) can
            # only be diagnosed now
            stacks = stack_dumps(proc)
            if stacks:
                report.sections.append((f"Python stacks of {proc.name} (pid {proc.proc.pid}) at the failure",
                                        stacks[-12000:]))
    if call.when == "teardown":
        forget_ended_processes()
    return report


_HANG_WATCH: list[HangWatch] = []  # made at this process's first test (xdist's controller runs none)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """A test still running 10 s after pytest-timeout's limit is blocked in C: hang_watch dumps and aborts it."""
    if not _HANG_WATCH:
        _HANG_WATCH.append(HangWatch(float(item.config.getini("timeout") or 300) + 10.0))
    _HANG_WATCH[0].start(item.nodeid)
    try:
        return (yield)
    finally:
        _HANG_WATCH[0].end()


def pytest_unconfigure(config: pytest.Config) -> None:
    for watch in _HANG_WATCH:
        watch.close()
    if ABANDONED_CONTEXTS:
        # A deadlocked participant would block the interpreter's exit (its finalisers, Fast DDS's static
        # destructors): leave at once, with the session's status.
        sys.stderr.write(f"robot_core: {len(ABANDONED_CONTEXTS)} ROS context(s) left undestroyed (deadlocked "
                         "middleware); this process leaves with os._exit\n")
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(config.stash.get(_EXIT_STATUS, 1))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Node logs and stack dumps are kept for a session that failed, to read after the run; else removed."""
    session.config.stash[_EXIT_STATUS] = int(exitstatus)
    kept = remove_session_dir(passed=exitstatus == 0)
    if kept:
        sys.stderr.write(f"robot_core: node logs and stack dumps of this session kept in {kept}\n")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After a module's last test (its module fixtures are gone too): no process it started may live on, or it
    would answer the next module's calls on the same domain. A leak fails that teardown and is killed."""
    result = yield
    if sys.platform.startswith("linux") and (nextitem is None or nextitem.module is not item.module):
        leaked = reap_leftover_processes()
        if leaked:
            pytest.fail(f"{item.module.__name__} left processes running (killed now):\n  " + "\n  ".join(leaked),
                        pytrace=False)
    return result


# The `ros` contexts of the running test: the `processes` fixture shuts them down before it stops the processes.
_TEST_CONTEXTS: list[RosTestContext] = []


@pytest.fixture
def ros() -> Iterator[RosTestContext]:
    """A fresh rclpy context with a background executor; nodes made with ros.node() are cleaned up."""
    pytest.importorskip("rclpy")
    ctx = RosTestContext()
    _TEST_CONTEXTS.append(ctx)
    try:
        yield ctx
    finally:
        _TEST_CONTEXTS.remove(ctx)
        ctx.shutdown()


@pytest.fixture
def context() -> Iterator[Any]:
    """A bare initialised rclpy context, no executor: for a node the test builds and drives itself."""
    pytest.importorskip("rclpy")
    import rclpy
    from rclpy.context import Context

    ctx = Context()
    rclpy.init(context=ctx)
    try:
        yield ctx
    finally:
        ctx.try_shutdown()


@pytest.fixture
def processes() -> Iterator[list[NodeProcess]]:
    """Collects NodeProcess objects a test starts and stops all of them, whatever happens.

    The test's `ros` context goes first, while its peers still run: a process's DDS participant can deadlock as a
    peer leaves (eProsima/Fast-DDS#6502, see robot_core/ros/middleware_deadlock.py), and its shutdown can only
    step around a deadlock that formed before it began. Peers leaving during the test's own shutdown would race it.
    """
    procs: list[NodeProcess] = []
    try:
        yield procs
    finally:
        for ctx in list(_TEST_CONTEXTS):
            ctx.shutdown()
        for p in procs:
            p.stop()


@pytest.fixture(scope="session")
def erd_robots() -> Path:
    """Folder of example-robot-data's robots (Panda, UR5, PR2 ...)."""
    if ERD_ROBOTS is None:
        pytest.skip("example-robot-data is not installed in this environment")
    return ERD_ROBOTS


# ------------------------------------------------------------------ one planar2 simulator shared by a test class
@dataclass(frozen=True)
class PlanarSimSetup:
    """How ``planar_sim`` starts and ``planar_client`` watches it; a test module overrides the
    ``planar_sim_setup`` fixture to change it."""

    params: tuple[str, ...] = ()  # extra ``name:=value`` simulator parameters
    cwd: Path | None = None  # the simulator's working directory (None: pytest's)
    client: type[SimClient] = SimClient
    client_name: str = "planar_client"


@pytest.fixture(scope="class")
def planar_sim_setup() -> PlanarSimSetup:
    return PlanarSimSetup()


@pytest.fixture(scope="class")
def planar_sim(planar_sim_setup: PlanarSimSetup) -> Iterator[NodeProcess]:
    """A planar2 simulator process for one test class; it must exit 0 on SIGINT."""
    proc = start_simulator("planar2.urdf", *planar_sim_setup.params, cwd=planar_sim_setup.cwd)
    try:
        proc.wait_for_output("simulator ready", timeout=60)
        yield proc
    finally:
        code = proc.stop(signal.SIGINT)
        assert code == 0, proc.output()[-3000:]


@pytest.fixture(scope="class")
def planar_ros() -> Iterator[RosTestContext]:
    """An rclpy context for the test class's client of ``planar_sim``."""
    ctx = RosTestContext()
    try:
        yield ctx
    finally:
        ctx.shutdown()


@pytest.fixture(scope="class")
def planar_client(planar_sim: NodeProcess, planar_ros: RosTestContext, planar_sim_setup: PlanarSimSetup) -> SimClient:
    """A client of ``planar_sim`` that has seen its states and status and is seen by its command subscriber."""
    client = planar_sim_setup.client(planar_ros, planar_sim_setup.client_name)
    client.wait_connected()
    return client


@pytest.fixture
def fresh(planar_client: SimClient, planar_sim: NodeProcess) -> Iterator[SimClient]:
    """The shared simulator, running, reset to its home pose; still alive after the test."""
    assert planar_client.trigger("resume").success
    res = planar_client.reset()
    assert res.success, res.message
    planar_client.wait_state(lambda q, _: near(q, HOME, 1e-6), 10, "home pose after reset")
    yield planar_client
    assert planar_sim.alive(), planar_sim.output()[-3000:]
