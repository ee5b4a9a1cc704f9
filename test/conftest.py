"""Pytest fixtures shared by all robot_core tests (see ros_harness.py for the machinery)."""

from __future__ import annotations

import site
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ros_harness import REPO, NodeProcess, RosTestContext, isolate_ros_environment, reap_leftover_processes

# Before anything imports rclpy: this session gets its own domain and localhost-only discovery.
DOMAIN_ID = isolate_ros_environment()

URDF_DIR = REPO / "urdf"
ERD_ROBOTS = None
for _cand in (
    Path(p) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
    for p in site.getsitepackages()
):
    if _cand.is_dir():
        ERD_ROBOTS = _cand
        break


def pytest_report_header(config: pytest.Config) -> str:
    return f"robot_core: ROS_DOMAIN_ID={DOMAIN_ID}, ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST"


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


@pytest.fixture
def ros() -> Iterator[RosTestContext]:
    """A fresh rclpy context with a background executor; nodes made with ros.node() are cleaned up."""
    pytest.importorskip("rclpy")
    ctx = RosTestContext()
    try:
        yield ctx
    finally:
        ctx.shutdown()


@pytest.fixture
def processes() -> Iterator[list[NodeProcess]]:
    """Collects NodeProcess objects a test starts and stops all of them, whatever happens."""
    procs: list[NodeProcess] = []
    try:
        yield procs
    finally:
        for p in procs:
            p.stop()


@pytest.fixture(scope="session")
def erd_robots() -> Path:
    """Folder of example-robot-data's robots (Panda, UR5, PR2 ...)."""
    if ERD_ROBOTS is None:
        pytest.skip("example-robot-data is not installed in this environment")
    return ERD_ROBOTS
