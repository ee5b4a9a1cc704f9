"""MCAP recordings without DDS: schemas from the installed message definitions, a round trip through a third-party
decoder (mcap_ros2), the default topic set, QoS, and the bad inputs (truncated, not MCAP, type not installed)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mcap_ros2")

from robot_core.ros.recording import (
    McapRecordingWriter,
    QosInfo,
    RecordingError,
    in_default_set,
    message_definition,
    offered_qos,
    scan_recording,
    subscription_qos,
)


def _joint_state(t: float, q: float) -> bytes:
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    msg = JointState(name=["a", "b"], position=[q, -q], velocity=[0.5, 0.25])
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(t), int((t % 1) * 1e9)
    msg.header.frame_id = "base"
    return serialize_message(msg)


def _write(path: Path, n: int = 50) -> None:
    w = McapRecordingWriter(path)
    w.add_topic("/robot_joint_states", "sensor_msgs/msg/JointState", [QosInfo(reliable=False)])
    w.add_topic("/robot_description", "std_msgs/msg/String", [QosInfo(transient_local=True, depth=1)])
    from rclpy.serialization import serialize_message
    from std_msgs.msg import String

    w.write("/robot_description", serialize_message(String(data="<robot name='x'/>")), 1_000)
    for i in range(n):
        w.write("/robot_joint_states", _joint_state(i * 0.01, i * 0.001), 2_000 + i * 10_000_000)
    w.close()


def test_definition_has_the_dependencies_once() -> None:
    text = message_definition("sensor_msgs/msg/JointState")
    assert "string[] name" in text.split("=" * 80)[0]
    assert text.count("MSG: std_msgs/Header") == 1
    assert text.count("MSG: builtin_interfaces/Time") == 1
    tf = message_definition("tf2_msgs/msg/TFMessage")
    for dep in ("geometry_msgs/TransformStamped", "geometry_msgs/Transform", "geometry_msgs/Vector3",
                "geometry_msgs/Quaternion", "std_msgs/Header", "builtin_interfaces/Time"):
        assert tf.count(f"MSG: {dep}\n") == 1, dep


def test_round_trip_decodes_with_mcap_ros2(tmp_path: Path) -> None:
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    path = tmp_path / "run.mcap"
    _write(path)
    with path.open("rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        header = reader.get_header()
        assert header.profile == "ros2"
        got = [(c.topic, m.log_time, d) for _, c, m, d in reader.iter_decoded_messages()]
    assert [t for t, _, _ in got].count("/robot_joint_states") == 50
    states = [d for t, _, d in got if t == "/robot_joint_states"]
    assert list(states[7].name) == ["a", "b"] and states[7].position[0] == pytest.approx(0.007)
    assert states[7].header.frame_id == "base"
    assert [d.data for t, _, d in got if t == "/robot_description"] == ["<robot name='x'/>"]
    times = [lt for _, lt, _ in got]
    assert times == sorted(times)
    index = scan_recording(path)
    assert index.messages == 51
    by_topic = {c.topic: c for c in index.channels.values()}
    assert by_topic["/robot_description"].qos == [QosInfo(transient_local=True, depth=1)]
    assert by_topic["/robot_joint_states"].qos[0].reliable is False


def test_log_times_never_go_backwards(tmp_path: Path) -> None:
    path = tmp_path / "late.mcap"
    w = McapRecordingWriter(path)
    w.add_topic("/a", "std_msgs/msg/String")
    from rclpy.serialization import serialize_message
    from std_msgs.msg import String

    for t in (5, 3, 9):
        w.write("/a", serialize_message(String(data=str(t))), t)
    w.close()
    from robot_core.ros.recording import iter_messages

    assert [t for _, t, _ in iter_messages(path)] == [5, 5, 9]


def test_truncated_file_names_the_offset(tmp_path: Path) -> None:
    path = tmp_path / "cut.mcap"
    _write(path, n=400)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(RecordingError, match=r"cut.mcap: truncated MCAP file: the record at byte offset \d+ runs "
                                             r"past the end of the file \(\d+ bytes"):
        scan_recording(path)


def test_not_mcap_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.mcap"
    path.write_bytes(b"rosbag v2.0 but not really\n" * 10)
    with pytest.raises(RecordingError, match=r"x\.mcap: not an MCAP file"):
        scan_recording(path)


def test_type_not_installed_is_skipped_with_a_warning(tmp_path: Path) -> None:
    from mcap.writer import Writer

    from robot_core.nodes.player import playable

    path = tmp_path / "alien.mcap"
    with path.open("wb") as f:
        w = Writer(f)
        w.start(profile="ros2", library="test")
        alien = w.register_schema("alien_msgs/msg/Probe", "ros2msg", b"float64 x\n")
        known = w.register_schema("std_msgs/msg/String", "ros2msg", b"string data\n")
        ca = w.register_channel("/probe", "cdr", alien)
        ck = w.register_channel("/chatter", "cdr", known)
        w.add_message(ca, log_time=1, data=b"\0\1\0\0" + b"\0" * 8, publish_time=1)
        w.add_message(ck, log_time=2, data=b"\0\1\0\0\3\0\0\0hi\0", publish_time=2)
        w.finish()
    classes, warnings = playable(scan_recording(path))
    assert [scan_recording(path).channels[c].topic for c in classes] == ["/chatter"]
    assert len(warnings) == 1 and "topic /probe skipped (1 messages)" in warnings[0]
    assert "alien_msgs/msg/Probe is not installed" in warnings[0]


def test_unknown_type_cannot_be_recorded(tmp_path: Path) -> None:
    w = McapRecordingWriter(tmp_path / "u.mcap")
    with pytest.raises(RecordingError, match="alien_msgs/msg/Probe"):
        w.add_topic("/probe", "alien_msgs/msg/Probe")
    w.close()


def test_default_topic_set() -> None:
    assert in_default_set("/robot_joint_states", "sensor_msgs/msg/JointState")
    assert in_default_set("/tf_static", "tf2_msgs/msg/TFMessage")
    assert in_default_set("/joint_trajectory_controller/controller_state",
                          "control_msgs/msg/JointTrajectoryControllerState")
    assert in_default_set("/forward_position_controller/commands", "std_msgs/msg/Float64MultiArray")
    assert in_default_set("/wrist_ft", "geometry_msgs/msg/WrenchStamped")
    assert in_default_set("/simulator/world_markers", "visualization_msgs/msg/MarkerArray")
    assert in_default_set("/simulator/object_states", "robot_core_interfaces/msg/ObjectStates")
    assert not in_default_set("/scene_camera/image_raw", "sensor_msgs/msg/Image")
    assert in_default_set("/scene_camera/image_raw", "sensor_msgs/msg/Image", images=True)
    assert not in_default_set("/rosout", "rcl_interfaces/msg/Log")
    assert not in_default_set("/chatter", "std_msgs/msg/String")


def test_qos_every_publisher_matches() -> None:
    assert subscription_qos([]) == QosInfo()
    assert subscription_qos([QosInfo(), QosInfo(reliable=False)]).reliable is False
    assert subscription_qos([QosInfo(transient_local=True), QosInfo()]).transient_local is False
    assert subscription_qos([QosInfo(transient_local=True, depth=1)]) == QosInfo(transient_local=True, depth=10)
    assert offered_qos(QosInfo(reliable=False, depth=5).yaml()) == [QosInfo(reliable=False, depth=5)]
    # rosbag2's older files give the rmw enum numbers
    assert offered_qos("- history: 1\n  depth: 1\n  reliability: 1\n  durability: 1\n") == [
        QosInfo(reliable=True, transient_local=True, depth=1)]


def test_info_prints_what_ros2_bag_info_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`robot-core play --info`: rosbag2's fields from the file's summary, checked against the messages read back
    one by one with the mcap library; a truncated file is refused naming the offset."""
    import time

    from mcap.reader import make_reader

    from robot_core.ros.recording import format_info, recording_info

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    path = tmp_path / "run.mcap"
    w = McapRecordingWriter(path)
    w.add_topic("/robot_joint_states", "sensor_msgs/msg/JointState", [QosInfo(reliable=False)])
    base = 1_700_000_000 * 10**9 + 5_000_000  # 2023-11-14 22:13:20.005 UTC
    for i in range(30):
        w.write("/robot_joint_states", _joint_state(i * 0.01, i * 0.001), base + i * 100_000_000)
    w.close()
    counts: dict[str, int] = {}
    with path.open("rb") as f:
        for _, channel, _ in make_reader(f).iter_messages():
            counts[channel.topic] = counts.get(channel.topic, 0) + 1
    text = format_info(recording_info(path))
    lines = text.splitlines()
    assert lines[1:] == [
        "Files:             run.mcap",
        f"Bag size:          {path.stat().st_size / 1024:.1f} KiB",
        "Storage id:        mcap",
        "ROS Distro:        unknown",
        "Duration:          2.900s",
        "Start:             Nov 14 2023 22:13:20.005 (1700000000.005)",
        "End:               Nov 14 2023 22:13:22.905 (1700000002.905)",
        f"Messages:          {sum(counts.values())}",
        f"Topic information: Topic: /robot_joint_states | Type: sensor_msgs/msg/JointState | Count: "
        f"{counts['/robot_joint_states']} | Serialization Format: cdr"]
    two = tmp_path / "two.mcap"
    _write(two)
    info = recording_info(two)
    assert [(t.topic, t.count) for t in info.topics] == [("/robot_joint_states", 50), ("/robot_description", 1)]
    assert "\n                   Topic: /robot_description | Type: std_msgs/msg/String | Count: 1 |" in \
        format_info(info)
    data = two.read_bytes()
    two.write_bytes(data[: len(data) // 2])
    with pytest.raises(RecordingError, match=r"two.mcap: truncated MCAP file: the record at byte offset \d+"):
        recording_info(two)
    monkeypatch.undo()
    time.tzset()
