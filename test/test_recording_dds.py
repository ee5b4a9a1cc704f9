"""`robot-core record` and `robot-core play` over DDS: a running simulator recorded for a few simulated seconds, the
file read back with a third-party decoder (every message decodes, timestamps monotonic), then played back to a
subscriber; and a recording with a topic type that is not installed, which plays the rest with a warning."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ros_harness import NodeProcess, RosTestContext, wait_for
from sim_helpers import SimClient, sec, start_simulator

pytest.importorskip("rclpy")
pytest.importorskip("mcap_ros2")
pytestmark = pytest.mark.ros


def _stamp(msg: Any) -> float:
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def test_record_simulator_read_back_and_play(ros: RosTestContext, tmp_path: Path) -> None:
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    from rclpy.qos import qos_profile_sensor_data
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState

    out = tmp_path / "run.mcap"
    sim = start_simulator("planar2.urdf")
    rec = NodeProcess.console_script("robot-core", "record", "-o", str(out))
    try:
        client = SimClient(ros, "record_watch")
        client.wait_connected(timeout=60)
        for topic in ("/robot_joint_states", "/tf", "/clock", "/robot_description"):
            rec.wait_for_output(f"recording {topic} ", timeout=60)
        client.send(["joint1"], position=[0.3])  # motion in the recording
        t0 = client.clock[-1]
        wait_for(lambda: client.clock and client.clock[-1] > t0 + 2.0, 60, "2 simulated seconds")
    finally:
        code = rec.stop(signal.SIGINT, timeout=20)
        sim.stop()
    said = rec.log_path.read_text()
    assert code == 0 and "wrote " in said, said[-2000:]

    topics: dict[str, list[Any]] = {}
    log_times = []
    with out.open("rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        assert reader.get_header().profile == "ros2"
        for schema, channel, message, decoded in reader.iter_decoded_messages():
            assert schema.encoding == "ros2msg" and channel.message_encoding == "cdr"
            topics.setdefault(channel.topic, []).append(decoded)
            log_times.append(message.log_time)
    assert {"/robot_joint_states", "/tf", "/clock", "/robot_description"} <= set(topics), sorted(topics)
    assert log_times == sorted(log_times)
    states = topics["/robot_joint_states"]
    assert len(states) > 10
    stamps = [_stamp(m) for m in states]
    assert stamps == sorted(stamps) and stamps[-1] - stamps[0] > 1.5
    clocks = [sec(m.clock) for m in topics["/clock"]]
    assert clocks == sorted(clocks)
    assert "planar2" in topics["/robot_description"][0].data
    recorded = {round(m.position[0], 9) for m in states}
    info = subprocess.run([sys.executable, "-m", "robot_core.cli", "play", "--info", str(out)], capture_output=True,
                          text=True, timeout=60)
    assert info.returncode == 0, info.stderr
    assert f"Messages:          {len(log_times)}\n" in info.stdout  # what ros2 bag info would count
    for topic, msgs in topics.items():
        assert f"Topic: {topic} | " in info.stdout and f" | Count: {len(msgs)} | Serialization Format: cdr" in \
            info.stdout.split(f"Topic: {topic} | ")[1].splitlines()[0], (topic, info.stdout)

    got: list[Any] = []
    clock: list[float] = []
    node = ros.node("play_watch")
    node.create_subscription(JointState, "/robot_joint_states", got.append, qos_profile_sensor_data)
    node.create_subscription(Clock, "/clock", lambda m: clock.append(sec(m.clock)), 10)
    with NodeProcess.console_script("robot-core", "play", str(out), "--loop") as player:
        player.wait_for_output("playing ", timeout=60)
        wait_for(lambda: len(got) > 20 and clock and max(clock) - min(clock) > 0.5, 60,
                 "played joint states and half a second of the recorded /clock")
    assert {round(m.position[0], 9) for m in got} <= recorded
    assert min(clock) >= min(clocks) and max(clock) <= max(clocks)  # the recorded clock, not a new one


def test_play_skips_a_type_not_installed(ros: RosTestContext, tmp_path: Path) -> None:
    from mcap.writer import Writer
    from rclpy.serialization import serialize_message
    from std_msgs.msg import String

    path = tmp_path / "alien.mcap"
    with path.open("wb") as f:
        w = Writer(f)
        w.start(profile="ros2", library="test")
        alien = w.register_schema("alien_msgs/msg/Probe", "ros2msg", b"float64 x\n")
        known = w.register_schema("std_msgs/msg/String", "ros2msg", b"string data\n")
        ca = w.register_channel("/probe", "cdr", alien)
        ck = w.register_channel("/chatter", "cdr", known)
        for i in range(40):
            t = 1_000_000_000 + i * 50_000_000
            w.add_message(ca, log_time=t, data=b"\0\1\0\0" + b"\0" * 8, publish_time=t)
            w.add_message(ck, log_time=t, data=serialize_message(String(data=f"m{i}")), publish_time=t)
        w.finish()
    got: list[str] = []
    clock: list[float] = []
    node = ros.node("alien_watch")
    from rosgraph_msgs.msg import Clock

    node.create_subscription(String, "/chatter", lambda m: got.append(m.data), 10)
    node.create_subscription(Clock, "/clock", lambda m: clock.append(sec(m.clock)), 10)
    with NodeProcess.console_script("robot-core", "play", str(path), "--loop") as player:
        player.wait_for_output("playing ", timeout=60)
        wait_for(lambda: len(got) > 5 and clock, 60, "/chatter from the recording and a generated /clock")
        out = player.output()
    assert "warning:" in out and "topic /probe skipped" in out and "alien_msgs/msg/Probe" in out
    assert all(m.startswith("m") for m in got)
    assert min(clock) >= 1.0  # the generated clock runs on the recording's log times


def test_play_refuses_a_truncated_file(tmp_path: Path) -> None:
    import subprocess
    import sys

    from robot_core.ros.recording import McapRecordingWriter

    path = tmp_path / "cut.mcap"
    w = McapRecordingWriter(path)
    w.add_topic("/a", "std_msgs/msg/String")
    from rclpy.serialization import serialize_message
    from std_msgs.msg import String

    for i in range(2000):
        w.write("/a", serialize_message(String(data=f"message {i} " * 4)), i * 1_000_000)
    w.close()
    path.write_bytes(path.read_bytes()[:-3000])
    proc = subprocess.run([sys.executable, "-m", "robot_core.cli", "play", str(path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    assert "truncated MCAP file: the record at byte offset" in proc.stderr and "cut.mcap" in proc.stderr
    assert "Traceback" not in proc.stderr
