"""MCAP recordings in the ROS 2 profile (what ``ros2 bag``, Foxglove and PlotJuggler open): writing and reading.

A recording holds, per topic, a schema (the message definition text of the *installed* message package with its
dependencies, encoding ``ros2msg``), a channel (``cdr`` messages, the publishers' QoS as ``offered_qos_profiles``
metadata) and the serialized messages exactly as they came off the wire; no decoding happens while recording.
The nodes that subscribe and republish are :mod:`robot_core.nodes.recorder` and :mod:`robot_core.nodes.player`.
"""

from __future__ import annotations

import contextlib
import importlib
import re
import struct
import sys
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

PROFILE = "ros2"
SCHEMA_ENCODING = "ros2msg"
MESSAGE_ENCODING = "cdr"
SEPARATOR = "=" * 80

# The default topic set of `robot-core record` (doc/recording.md): joint states and commands, transforms, clock,
# description, simulator status, controller states and commands, and the sensor types below. Camera images
# only with --images (they are most of a file's bytes).
DEFAULT_TOPICS = frozenset({"/joint_states", "/robot_joint_states", "/robot_joint_commands", "/robot_sensor_states",
                            "/tf", "/tf_static", "/clock", "/robot_description", "/simulator/status",
                            "/dynamic_joint_states"})
DEFAULT_SUFFIXES = ("/controller_state", "/commands", "/joint_trajectory", "/state", "/odom", "/object_states",
                    "/world_markers")
SENSOR_TYPES = frozenset({"sensor_msgs/msg/Imu", "geometry_msgs/msg/WrenchStamped", "sensor_msgs/msg/LaserScan",
                          "sensor_msgs/msg/CameraInfo", "sensor_msgs/msg/Range", "sensor_msgs/msg/FluidPressure",
                          "sensor_msgs/msg/Temperature", "sensor_msgs/msg/MagneticField",
                          "sensor_msgs/msg/NavSatFix", "nav_msgs/msg/Odometry"})
IMAGE_TYPES = frozenset({"sensor_msgs/msg/Image", "sensor_msgs/msg/CompressedImage"})
_TYPE_IN_FIELD = re.compile(r"([A-Za-z][A-Za-z0-9_]*)/(?:msg/)?([A-Za-z][A-Za-z0-9_]*)")


class RecordingError(RuntimeError):
    """A recording that cannot be written or read; the message names the file, and the offset or topic at fault."""


def in_default_set(topic: str, type_name: str, images: bool = False) -> bool:
    """Whether ``robot-core record`` without topic arguments records ``topic`` of ``type_name``."""
    if "/_action/" in topic or topic in ("/rosout", "/parameter_events"):
        return False
    if type_name in IMAGE_TYPES:
        return images
    return topic in DEFAULT_TOPICS or type_name in SENSOR_TYPES or topic.endswith(DEFAULT_SUFFIXES)


def message_class(type_name: str) -> Any:
    """The installed Python class of ``pkg/msg/Type``; RecordingError when the package or type is missing."""
    pkg, _, name = type_name.partition("/msg/")
    if not pkg or not name:
        raise RecordingError(f"'{type_name}' is not a message type name of the form pkg/msg/Type")
    try:
        return getattr(importlib.import_module(f"{pkg}.msg"), name)
    except (ImportError, AttributeError) as exc:
        raise RecordingError(f"message type {type_name} is not installed here ({exc})") from None


def _msg_file(pkg: str, name: str) -> Path:
    """The installed ``.msg`` file of ``pkg/msg/name`` (ament index first, then the interpreter's share/)."""
    candidates = []
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

        with contextlib.suppress(PackageNotFoundError):
            candidates.append(Path(get_package_share_directory(pkg)) / "msg" / f"{name}.msg")
    except ImportError:
        pass
    candidates.append(Path(sys.prefix) / "share" / pkg / "msg" / f"{name}.msg")
    for path in candidates:
        if path.is_file():
            return path
    raise RecordingError(f"no message definition for {pkg}/msg/{name} (looked for {candidates[-1]})")


def _nested_types(type_name: str) -> list[str]:
    """The message types of ``type_name``'s fields (``pkg/msg/Type``), from the installed class."""
    fields = message_class(type_name).get_fields_and_field_types()
    return [f"{m.group(1)}/msg/{m.group(2)}" for t in fields.values() for m in _TYPE_IN_FIELD.finditer(t)]


def message_definition(type_name: str) -> str:
    """The ``ros2msg`` schema text of ``type_name``: its .msg file, then each type it uses (depth first, once),
    behind a line of 80 '=' and ``MSG: pkg/Type``, as rosbag2 writes it."""
    pkg, _, name = type_name.partition("/msg/")
    parts = [_msg_file(pkg, name).read_text()]
    seen = {type_name}
    todo = _nested_types(type_name)
    while todo:
        dep = todo.pop(0)
        if dep in seen:
            continue
        seen.add(dep)
        dpkg, _, dname = dep.partition("/msg/")
        parts.append(f"{SEPARATOR}\nMSG: {dpkg}/{dname}\n{_msg_file(dpkg, dname).read_text()}")
        todo.extend(_nested_types(dep))
    return "\n".join(p.rstrip("\n") for p in parts) + "\n"


@dataclass(frozen=True)
class QosInfo:
    """What a recording keeps of one publisher's QoS (rosbag2's ``offered_qos_profiles`` fields)."""

    reliable: bool = True
    transient_local: bool = False
    depth: int = 10

    def yaml(self) -> str:
        return (f"- history: keep_last\n  depth: {self.depth}\n"
                f"  reliability: {'reliable' if self.reliable else 'best_effort'}\n"
                f"  durability: {'transient_local' if self.transient_local else 'volatile'}\n"
                "  deadline:\n    sec: 0\n    nsec: 0\n  lifespan:\n    sec: 0\n    nsec: 0\n"
                "  liveliness: automatic\n  liveliness_lease_duration:\n    sec: 0\n    nsec: 0\n"
                "  avoid_ros_namespace_conventions: false\n")


def offered_qos(yaml_text: str) -> list[QosInfo]:
    """The profiles of an ``offered_qos_profiles`` entry (ours or rosbag2's: names or rmw enum numbers)."""
    import yaml

    try:
        items = yaml.safe_load(yaml_text) or []
    except yaml.YAMLError:
        return []
    out = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        rel, dur = str(item.get("reliability", "reliable")), str(item.get("durability", "volatile"))
        out.append(QosInfo(reliable=rel in ("reliable", "1"), transient_local=dur in ("transient_local", "1"),
                           depth=int(item.get("depth") or 10)))
    return out


def subscription_qos(offered: Iterable[QosInfo]) -> QosInfo:
    """The QoS a recorder (or player) uses to hear every publisher: reliable only when all of them are,
    transient-local only when all of them are (a latched /tf_static or /robot_description then arrives too)."""
    offered = list(offered)
    if not offered:
        return QosInfo()
    return QosInfo(reliable=all(q.reliable for q in offered), transient_local=all(q.transient_local for q in offered),
                   depth=max(10, max(q.depth for q in offered)))


class McapRecordingWriter:
    """Thread-safe writer of one ROS 2 MCAP file: a channel per topic, serialized messages as they came."""

    def __init__(self, path: str | Path, library: str = "robot_core") -> None:
        from mcap.writer import CompressionType, Writer

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: BinaryIO = self.path.open("wb")
        self._writer = Writer(self._file, compression=CompressionType.ZSTD, chunk_size=256 * 1024)
        self._writer.start(profile=PROFILE, library=library)
        self._lock = threading.Lock()
        self._schemas: dict[str, int] = {}
        self.channels: dict[str, int] = {}
        self.types: dict[str, str] = {}
        self.counts: dict[str, int] = {}
        self._last_time = 0
        self._closed = False

    def add_topic(self, topic: str, type_name: str, qos: Iterable[QosInfo] = ()) -> None:
        """Register ``topic``'s channel (and its type's schema, once); RecordingError when the type's definition is
        not installed."""
        definition = message_definition(type_name)
        with self._lock:
            if topic in self.channels:
                return
            if type_name not in self._schemas:
                self._schemas[type_name] = self._writer.register_schema(type_name, SCHEMA_ENCODING,
                                                                        definition.encode())
            meta = {"offered_qos_profiles": "".join(q.yaml() for q in qos)}
            self.channels[topic] = self._writer.register_channel(topic, MESSAGE_ENCODING, self._schemas[type_name],
                                                                 meta)
            self.types[topic] = type_name
            self.counts[topic] = 0

    def write(self, topic: str, data: bytes, log_time_ns: int, publish_time_ns: int | None = None) -> None:
        """Append one serialized message; log times never go backwards (a late callback gets the last time)."""
        with self._lock:
            if self._closed:
                return
            log_time_ns = max(int(log_time_ns), self._last_time)
            self._last_time = log_time_ns
            seq = self.counts[topic]
            self.counts[topic] = seq + 1
            self._writer.add_message(self.channels[topic], log_time=log_time_ns, data=bytes(data),
                                     publish_time=int(publish_time_ns if publish_time_ns is not None
                                                      else log_time_ns), sequence=seq)

    def close(self) -> None:
        """Write the summary and footer (a file without them reads as truncated)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._writer.finish()
            self._file.close()


@dataclass
class RecordedChannel:
    topic: str
    type_name: str
    qos: list[QosInfo] = field(default_factory=list)
    messages: int = 0


@dataclass
class RecordingIndex:
    """What a first pass over a recording found: its channels, message count and time span."""

    path: Path
    channels: dict[int, RecordedChannel]
    messages: int
    start_ns: int
    end_ns: int


class _CountingReader:
    """A binary stream that knows how many bytes were read from it (the offset of a truncation)."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.position = 0

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        self.position += len(data)
        return data


def scan_recording(path: str | Path) -> RecordingIndex:
    """Read every record of ``path`` once (CRC-checked): RecordingError naming the byte offset where a truncated or
    damaged file stops making sense, or saying the file is not MCAP."""
    from mcap.exceptions import McapError
    from mcap.records import Channel, Message, Schema
    from mcap.stream_reader import StreamReader

    path = Path(path)
    size = path.stat().st_size
    schemas: dict[int, str] = {}
    channels: dict[int, RecordedChannel] = {}
    count, start, end, good = 0, 0, 0, 0
    with path.open("rb") as f:
        counting = _CountingReader(f)
        reader = StreamReader(counting, validate_crcs=True)  # type: ignore[arg-type]
        try:
            for record in reader.records:
                if isinstance(record, Schema):
                    schemas[record.id] = record.name
                elif isinstance(record, Channel) and record.id not in channels:  # the summary repeats them
                    channels[record.id] = RecordedChannel(record.topic, schemas.get(record.schema_id, ""),
                                                          offered_qos(record.metadata.get("offered_qos_profiles",
                                                                                          "")))
                elif isinstance(record, Message):
                    if record.channel_id in channels:
                        channels[record.channel_id].messages += 1
                    start = record.log_time if count == 0 else min(start, record.log_time)
                    end = max(end, record.log_time)
                    count += 1
                good = counting.position
        except (McapError, EOFError, ValueError, struct.error) as exc:
            name = type(exc).__name__
            if "Magic" in name and good == 0:
                raise RecordingError(f"{path}: not an MCAP file (no MCAP magic at byte offset 0)") from None
            if counting.position >= size:
                raise RecordingError(
                    f"{path}: truncated MCAP file: the record at byte offset {good} runs past the end of the file "
                    f"({size} bytes; {count} messages before it are intact). A recorder that was killed leaves "
                    "such a file; `mcap recover` can salvage it.") from None
            raise RecordingError(f"{path}: damaged MCAP file at byte offset {good} ({name}: {exc})") from None
    return RecordingIndex(path, channels, count, start, end)


def iter_messages(path: str | Path, channel_ids: set[int] | None = None) -> Iterator[tuple[int, int, bytes]]:
    """(channel id, log time ns, serialized data) of every message of ``path`` in log-time order."""
    from mcap.reader import make_reader

    with Path(path).open("rb") as f:
        for _, channel, message in make_reader(f).iter_messages(log_time_order=True):
            if channel_ids is None or channel.id in channel_ids:
                yield channel.id, message.log_time, message.data


@dataclass
class TopicInfo:
    topic: str
    type_name: str
    count: int
    serialization_format: str


@dataclass
class RecordingInfo:
    """What ``ros2 bag info`` reports of a bag, read from one MCAP file's summary (its Statistics record)."""

    path: Path
    size: int  # bytes
    ros_distro: str
    start_ns: int
    end_ns: int
    messages: int
    topics: list[TopicInfo]


def recording_info(path: str | Path) -> RecordingInfo:
    """The summary of ``path`` (what ``robot-core play --info`` prints). Read from the file's summary section as
    rosbag2 reads its metadata; a file without one (a recorder that was killed) is scanned instead, and a truncated
    file is refused by :func:`scan_recording` naming the byte offset."""
    from mcap.exceptions import McapError
    from mcap.reader import make_reader

    path = Path(path)
    if not path.is_file():
        raise RecordingError(f"{path}: no such file")
    distro = "unknown"
    summary = None
    try:
        with path.open("rb") as f:
            reader = make_reader(f)
            summary = reader.get_summary()
            for meta in reader.iter_metadata():  # rosbag2's MCAP plugin stores the distro here
                if meta.name == "rosbag2" and meta.metadata.get("ROS_DISTRO"):
                    distro = meta.metadata["ROS_DISTRO"]
    except (McapError, EOFError, ValueError, struct.error):
        summary = None
    if summary is None or summary.statistics is None:
        index = scan_recording(path)  # raises on a truncated or damaged file
        topics = [TopicInfo(c.topic, c.type_name, c.messages, MESSAGE_ENCODING)
                  for _, c in sorted(index.channels.items())]
        return RecordingInfo(path, path.stat().st_size, distro, index.start_ns, index.end_ns, index.messages, topics)
    stats = summary.statistics
    topics = [TopicInfo(c.topic, summary.schemas[c.schema_id].name if c.schema_id in summary.schemas else "",
                        stats.channel_message_counts.get(cid, 0), c.message_encoding)
              for cid, c in sorted(summary.channels.items())]
    return RecordingInfo(path, path.stat().st_size, distro, stats.message_start_time, stats.message_end_time,
                         stats.message_count, topics)


def _size_text(size: int) -> str:
    """Bytes as rosbag2 prints them: B, KiB, MiB, GiB, TiB; one decimal above bytes."""
    value, unit = float(size), 0
    units = ("B", "KiB", "MiB", "GiB", "TiB")
    while value >= 1024 and unit < len(units) - 1:
        value /= 1024
        unit += 1
    return f"{value:.0f} {units[unit]}" if unit == 0 else f"{value:.1f} {units[unit]}"


def _seconds_text(ns: int) -> str:
    ms = ns // 1_000_000
    return f"{ms // 1000}.{ms % 1000:03d}"


def _time_text(ns: int) -> str:
    import time as _time

    local = _time.localtime(ns // 1_000_000_000)
    day = _time.strftime("%b ", local) + f"{local.tm_mday:2d}" + _time.strftime(" %Y %H:%M:%S", local)
    return f"{day}.{(ns // 1_000_000) % 1000:03d} ({_seconds_text(ns)})"


def format_info(info: RecordingInfo) -> str:
    """``info`` laid out as ``ros2 bag info`` prints a bag (its field names, 19-column alignment, local time)."""
    pad = " " * 19
    topics = [f"Topic: {t.topic} | Type: {t.type_name} | Count: {t.count} | Serialization Format: "
              f"{t.serialization_format}" for t in info.topics]
    lines = ["",
             f"Files:             {info.path.name}",
             f"Bag size:          {_size_text(info.size)}",
             "Storage id:        mcap",
             f"ROS Distro:        {info.ros_distro}",
             f"Duration:          {_seconds_text(max(0, info.end_ns - info.start_ns))}s",
             f"Start:             {_time_text(info.start_ns)}",
             f"End:               {_time_text(info.end_ns)}",
             f"Messages:          {info.messages}",
             "Topic information: " + f"\n{pad}".join(topics)]
    return "\n".join(lines) + "\n"
