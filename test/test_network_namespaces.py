"""The graph across machines is DDS's own business: the simulator and the controller manager in two Linux network
namespaces joined by a veth pair (two "hosts" on one subnet, no loopback between them), discovery over the subnet
(ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET) and UDP only (FASTDDS_BUILTIN_TRANSPORTS=UDPv4: no shared memory shortcut
between the two), and a FollowJointTrajectory goal sent from the simulator's side to the controller manager on the
other; the arm follows it. Needs root (ip netns); skipped with the reason otherwise. The namespaces are deleted
whatever happens. Set-up for real hosts: doc/namespaces.md#several-machines."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ros_harness import REPO, NodeProcess

from robot_core.bringup.plan import BringupOptions, executable, make_plan

pytest.importorskip("rclpy")
pytestmark = [pytest.mark.ros, pytest.mark.slow]

PEER = Path(__file__).resolve().parent / "peers" / "trajectory_goal_peer.py"


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


class TwoHosts:
    """Two network namespaces ``<tag>a`` / ``<tag>b`` joined by a veth pair on 10.213.<n>.0/24, each with its
    loopback up and a multicast route on the veth (what DDS discovery over a subnet needs)."""

    def __init__(self) -> None:
        tag = f"rc{os.getpid() % 100000}"
        self.names = (f"{tag}a", f"{tag}b")
        self.links = (f"{tag}va", f"{tag}vb")  # interface names: at most 15 characters
        n = os.getpid() % 250 + 1
        self.addresses = (f"10.213.{n}.1", f"10.213.{n}.2")
        self.created: list[str] = []

    def up(self) -> None:
        for ns in self.names:
            self._run("netns", "add", ns)
            self.created.append(ns)
        self._run("link", "add", self.links[0], "type", "veth", "peer", "name", self.links[1])
        for ns, link, address in zip(self.names, self.links, self.addresses, strict=True):
            self._run("link", "set", link, "netns", ns)
            self._run("-n", ns, "addr", "add", f"{address}/24", "dev", link)
            self._run("-n", ns, "link", "set", link, "up")
            self._run("-n", ns, "link", "set", "lo", "up")
            self._run("-n", ns, "route", "add", "224.0.0.0/4", "dev", link)

    def _run(self, *args: str) -> None:
        done = _ip(*args)
        if done.returncode != 0:
            raise RuntimeError(f"ip {' '.join(args)} failed: {done.stderr.strip()}")

    def bytes(self, index: int) -> tuple[int, int]:
        """(received, sent) bytes of host ``index``'s end of the veth pair."""
        import json

        stats = json.loads(_ip("-j", "-s", "-n", self.names[index], "link", "show", self.links[index]).stdout)
        counters = stats[0]["stats64"]
        return int(counters["rx"]["bytes"]), int(counters["tx"]["bytes"])

    def command(self, index: int, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.names[index], *argv]

    def down(self) -> None:
        """Kill whatever still runs in the namespaces (only this test's processes can be there), delete them (the
        veth pair goes with them)."""
        for ns in self.created:
            pids = _ip("netns", "pids", ns).stdout.split()
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
            _ip("netns", "del", ns)
        self.created.clear()


@pytest.fixture
def two_hosts() -> Iterator[TwoHosts]:
    if shutil.which("ip") is None:
        pytest.skip("no `ip` command (iproute2): cannot make network namespaces")
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root (ip netns add)")
    hosts = TwoHosts()
    try:
        hosts.up()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        hosts.down()
        pytest.skip(f"ip netns is not permitted here: {exc}")
    try:
        yield hosts
    finally:
        hosts.down()
    assert not {ns for ns in _ip("netns", "list").stdout.split() if ns in hosts.names}


def test_a_trajectory_goal_crosses_two_network_namespaces(two_hosts: TwoHosts, processes: list[NodeProcess]):
    env = {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET", "FASTDDS_BUILTIN_TRANSPORTS": "UDPv4"}
    plan = make_plan(BringupOptions.create(rbc=False))
    assert plan.simulator is not None

    def start(index: int, name: str, argv: list[str]) -> NodeProcess:
        proc = NodeProcess(two_hosts.command(index, argv), name=name, env=env, cwd=REPO)
        processes.append(proc)
        return proc

    sim = start(0, "simulator", [executable("simulator"), *plan.simulator.ros_arguments()])
    cm = start(1, "controller_manager", [executable("controller_manager"),
                                         *plan.controller_manager.ros_arguments()])
    spawner = start(1, "spawner", [executable("spawner"), "joint_state_broadcaster", "joint_trajectory_controller",
                                   "--controller-manager", "/controller_manager",
                                   "--controller-manager-timeout", "120"])
    try:
        assert spawner.proc.wait(timeout=180) == 0, spawner.output()[-3000:]
    except subprocess.TimeoutExpired:
        pytest.fail(f"spawner did not finish:\n{spawner.output()[-2000:]}\n--- controller manager ---\n"
                    f"{cm.output()[-2000:]}")
    # the goal from the simulator's host: it crosses to the manager, whose commands cross back to the simulator
    client = start(0, "trajectory_goal_peer", [sys.executable, str(PEER), "--timeout", "120"])
    try:
        code = client.proc.wait(timeout=180)
    except subprocess.TimeoutExpired:
        code = None
    assert code == 0, (f"{client.output()[-2000:]}\n--- simulator ---\n{sim.output()[-1500:]}\n"
                       f"--- controller manager ---\n{cm.output()[-1500:]}")
    assert "GOAL SUCCEEDED" in client.output()
    # the traffic went over the veth pair: the simulator's side received megabytes (joint states and /clock leave
    # it; commands, the goal's answer and /joint_states come back)
    received, sent = two_hosts.bytes(0)
    print(f"veth of the simulator side: received {received} B, sent {sent} B")
    assert received > 100_000 and sent > 100_000, (received, sent)
