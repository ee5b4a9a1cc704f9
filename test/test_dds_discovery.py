"""robot_core.ros.dds_discovery: robot_core's Fast DDS discovery profile is used unless the user configured Fast
DDS, and over DDS it is the one in force (a killed node stays in a peer's graph for the profile's lease, past
Fast DDS's default 20 s, and with the profile switched off it does not)."""

from __future__ import annotations

import signal
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from robot_core.ros.dds_discovery import PROFILE, PROFILES_ENV, SWITCH_ENV, use_discovery_profile

NS = {"f": "http://www.eprosima.com"}


def _seconds(element: ET.Element | None) -> float:
    assert element is not None
    sec, nsec = element.find("f:sec", NS), element.find("f:nanosec", NS)
    return (int(sec.text) if sec is not None else 0) + (int(nsec.text) if nsec is not None else 0) * 1e-9


def test_the_profile_is_the_default_participant_profile_with_fewer_discovery_events():
    root = ET.parse(PROFILE).getroot()
    participant = root.find("f:participant", NS)
    assert participant is not None and participant.get("is_default_profile") == "true"
    discovery = participant.find("f:rtps/f:builtin/f:discovery_config", NS)
    assert discovery is not None
    lease = _seconds(discovery.find("f:leaseDuration", NS))
    period = _seconds(discovery.find("f:leaseAnnouncement", NS))
    initial = discovery.find("f:initialAnnouncements", NS)
    assert initial is not None
    # Fast DDS's defaults: lease 20 s, an announcement every 3 s, five initial ones 100 ms apart
    assert (lease, period) == (40.0, 10.0)
    assert lease >= 3 * period  # two lost announcements in a row do not drop a live peer
    assert initial.findtext("f:count", namespaces=NS) == "1"
    assert _seconds(initial.find("f:period", NS)) == pytest.approx(0.1)


def test_used_when_fast_dds_is_not_configured(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = {"RMW_IMPLEMENTATION": "rmw_fastrtps_cpp"}
    assert use_discovery_profile(env) == PROFILE
    assert env[PROFILES_ENV] == str(PROFILE)
    env = {}  # no RMW named: Fast DDS is ROS 2's default
    assert use_discovery_profile(env) == PROFILE and env[PROFILES_ENV] == str(PROFILE)


@pytest.mark.parametrize("env", [
    {PROFILES_ENV: "/etc/mine.xml"},
    {"FASTRTPS_DEFAULT_PROFILES_FILE": "/etc/mine.xml"},
])
def test_a_users_profile_file_wins(env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = dict(env)
    assert use_discovery_profile(env) == Path("/etc/mine.xml")
    assert env == before


@pytest.mark.parametrize("env", [
    {SWITCH_ENV: "off"},
    {SWITCH_ENV: "0"},
    {"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"},
])
def test_switched_off_or_another_rmw_leaves_the_environment_alone(env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = dict(env)
    assert use_discovery_profile(env) is None
    assert env == before


def test_a_default_profiles_file_in_the_working_directory_wins(tmp_path, monkeypatch):
    (tmp_path / "DEFAULT_FASTDDS_PROFILES.xml").write_text("<profiles/>")
    monkeypatch.chdir(tmp_path)
    env: dict[str, str] = {}
    assert use_discovery_profile(env) is None and env == {}


# A product process: node_main.init_rclpy is how every robot_core node starts rclpy.
NODE = textwrap.dedent("""\
    import os, sys, time
    import rclpy
    from robot_core.ros.node_main import init_rclpy
    init_rclpy([])
    node = rclpy.create_node(sys.argv[1])
    print("up", os.environ.get("FASTDDS_DEFAULT_PROFILES_FILE", "-"), flush=True)
    while True:
        time.sleep(1)
""")


@pytest.mark.ros
def test_a_killed_node_stays_in_the_graph_for_the_profiles_lease_and_not_without_it(tmp_path, monkeypatch):
    pytest.importorskip("rclpy")
    from ros_harness import NodeProcess, RosTestContext, wait_for

    script = tmp_path / "node.py"
    script.write_text(NODE)
    ros = RosTestContext()
    try:
        watcher = ros.node("lease_watcher")

        def names() -> set[str]:
            return {n for n, _ in watcher.get_node_names_and_namespaces()}

        # the harness put the profile in this process's environment: the children start without it, as a node
        # started by hand or by ros2 launch would
        monkeypatch.delenv(PROFILES_ENV, raising=False)
        with NodeProcess.python(script, "with_profile") as on, \
                NodeProcess.python(script, "without_profile", env={SWITCH_ENV: "off"}) as off:
            on.wait_for_output(f"up {PROFILE}", 60)
            off.wait_for_output("up -", 60)
            wait_for(lambda: {"with_profile", "without_profile"} <= names(), 60, "both nodes on the graph")
            for proc in (on, off):
                proc.proc.send_signal(signal.SIGKILL)  # no chance to leave: only the lease removes them
            killed = time.monotonic()
            # Fast DDS's default lease is 20 s, counted from the last announcement (at most 3 s before the kill)
            wait_for(lambda: "without_profile" not in names(), 30, "the node without the profile dropped")
            gone_after = time.monotonic() - killed
            wait_for(lambda: time.monotonic() - killed >= 24, 30, "24 s after the kill")
            assert "with_profile" in names(), (
                f"the node with robot_core's profile (lease 40 s) left the graph within 24 s of its SIGKILL; the "
                f"one without it after {gone_after:.1f} s")
    finally:
        ros.shutdown()
