"""``robot-core record``: subscribe to topics as serialized messages and write them into an MCAP file.

Topics are found on the graph as they appear (every 0.5 s), so the recorder can start before the nodes it
records; each one is subscribed with a QoS every publisher matches (:func:`subscription_qos`), and each message is
written as the bytes that arrived (``raw=True``, no decoding), stamped with the time it arrived. SIGINT/SIGTERM
close the file properly (summary and footer). The file format: :mod:`robot_core.ros.recording`.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from robot_core.ros.middleware_deadlock import middleware_deadlocked
from robot_core.ros.recording import (
    McapRecordingWriter,
    QosInfo,
    RecordingError,
    in_default_set,
    message_class,
    subscription_qos,
)

DISCOVERY_PERIOD = 0.5


class RecorderNode:
    """An rclpy node that records ``topics`` (None: the default set) into ``writer``."""

    def __init__(self, context: Any, writer: McapRecordingWriter, topics: Sequence[str] | None = None,
                 images: bool = False, name: str = "robot_core_recorder") -> None:
        import rclpy

        self.node = rclpy.create_node(name, context=context)
        self.writer = writer
        self.wanted = {t if t.startswith("/") else f"/{t}" for t in topics} if topics else None
        self.images = images
        self._subs: dict[str, Any] = {}
        self._refused: set[str] = set()
        self._lock = threading.Lock()
        self.node.create_timer(DISCOVERY_PERIOD, self.discover)
        self.discover()

    def _offered(self, topic: str) -> list[QosInfo]:
        from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

        out = []
        for info in self.node.get_publishers_info_by_topic(topic):
            q = info.qos_profile
            out.append(QosInfo(reliable=q.reliability == ReliabilityPolicy.RELIABLE,
                               transient_local=q.durability == DurabilityPolicy.TRANSIENT_LOCAL,
                               depth=max(1, int(q.depth or 10))))
        return out

    def discover(self) -> None:
        """Subscribe to every new wanted topic that has a publisher (one type per topic)."""
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

        for topic, types in self.node.get_topic_names_and_types():
            if topic in self._subs or topic in self._refused or not types:
                continue
            if self.wanted is not None and topic not in self.wanted:
                continue
            type_name = types[0]
            if self.wanted is None and not in_default_set(topic, type_name, self.images):
                continue
            offered = self._offered(topic)
            if not offered:
                continue  # a subscriber only so far: wait for a publisher (its QoS decides ours)
            try:
                msg_type = message_class(type_name)
                self.writer.add_topic(topic, type_name, offered)
            except RecordingError as exc:
                self._refused.add(topic)
                self.node.get_logger().warning(f"not recording {topic}: {exc}")
                continue
            want = subscription_qos(offered)
            qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=max(100, want.depth),
                             reliability=ReliabilityPolicy.RELIABLE if want.reliable
                             else ReliabilityPolicy.BEST_EFFORT,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL if want.transient_local
                             else DurabilityPolicy.VOLATILE)
            self._subs[topic] = self.node.create_subscription(msg_type, topic, self._callback(topic), qos, raw=True)
            print(f"recording {topic} ({type_name})", flush=True)

    def _callback(self, topic: str) -> Any:
        def on_message(data: bytes) -> None:
            self.writer.write(topic, data, time.time_ns())
        return on_message

    @property
    def topics(self) -> list[str]:
        return sorted(self._subs)


def configure_cli(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topics", nargs="*", metavar="TOPIC",
                        help="topics to record (default: joint states and commands, /tf, /tf_static, /clock, the "
                             "description, controller states and commands, sensor topics; doc/recording.md)")
    parser.add_argument("-o", "--output", default="run.mcap", metavar="FILE", help="MCAP file (default run.mcap)")
    parser.add_argument("--images", action="store_true", help="also record camera images (default set only)")
    parser.add_argument("--duration", type=float, default=None, metavar="S",
                        help="stop after S seconds (default: until Ctrl-C / SIGTERM)")


def run_cli(args: argparse.Namespace) -> int:
    try:
        return record(args.output, args.topics or None, images=args.images, duration=args.duration)
    except RecordingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def record(output: str | Path, topics: Sequence[str] | None = None, *, images: bool = False,
           duration: float | None = None) -> int:
    """Record until SIGINT/SIGTERM (or ``duration`` seconds), then close the file; 0 on success."""
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor

    stop = threading.Event()
    old = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    context = Context()
    rclpy.init(context=context)
    writer = McapRecordingWriter(output)
    recorder = None
    executor = SingleThreadedExecutor(context=context)
    try:
        recorder = RecorderNode(context, writer, topics, images)
        executor.add_node(recorder.node)
        print(f"recording into {Path(output).resolve()} (waiting for "
              f"{'topics ' + ', '.join(sorted(recorder.wanted)) if recorder.wanted else 'the default topics'}); "
              "Ctrl-C stops", flush=True)
        end = None if duration is None else time.monotonic() + duration
        while not stop.is_set() and (end is None or time.monotonic() < end):
            executor.spin_once(timeout_sec=0.1)
    finally:
        writer.close()
        if not middleware_deadlocked(rclpy.logging.get_logger("recorder")):
            if recorder is not None:
                executor.remove_node(recorder.node)
                recorder.node.destroy_node()
            executor.shutdown(timeout_sec=1)
            context.try_shutdown()
        for s, handler in old.items():
            signal.signal(s, handler)
    total = sum(writer.counts.values())
    print(f"wrote {output}: {total} messages on {len(writer.counts)} topics "
          + ", ".join(f"{t} {n}" for t, n in sorted(writer.counts.items())), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m robot_core.nodes.recorder", description=__doc__.splitlines()[0])
    configure_cli(parser)
    return run_cli(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

