"""``robot-core play``: republish an MCAP recording with its timing, and /clock, so that controllers, the web view
or a plot tool can run against it.

The file is checked first (:func:`scan_recording`: a truncated or damaged file is refused naming the byte
offset). Each recorded topic gets a publisher of its recorded type with the QoS its publishers offered (latched
topics stay latched); a topic whose type is not installed here is skipped with a warning and the rest plays.
Messages go out as the recorded bytes, at their recorded log-time offsets divided by ``--rate``. When the
recording has no /clock, one is published from the log times (100 Hz), so ``use_sim_time`` nodes follow it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from robot_core.ros.middleware_deadlock import middleware_deadlocked
from robot_core.ros.recording import (
    RecordingError,
    RecordingIndex,
    iter_messages,
    message_class,
    scan_recording,
    subscription_qos,
)

CLOCK_PERIOD_NS = 10_000_000


def playable(index: RecordingIndex) -> tuple[dict[int, Any], list[str]]:
    """Channel id -> message class of every channel whose type is installed, and a warning per skipped topic."""
    classes: dict[int, Any] = {}
    warnings: list[str] = []
    for cid, channel in sorted(index.channels.items()):
        try:
            classes[cid] = message_class(channel.type_name)
        except RecordingError as exc:
            warnings.append(f"{index.path}: topic {channel.topic} skipped ({channel.messages} messages): {exc}")
    return classes, warnings


def play(path: str | Path, *, rate: float = 1.0, loop: bool = False, stop: threading.Event | None = None) -> int:
    """Publish the recording at ``path``; returns 0 when it was played to the end (or stopped by a signal)."""
    import rclpy
    from rclpy.context import Context
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
    from rosgraph_msgs.msg import Clock

    if rate <= 0:
        raise RecordingError(f"--rate must be positive, not {rate:g}")
    index = scan_recording(path)
    classes, warnings = playable(index)
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr, flush=True)
    if not classes:
        raise RecordingError(f"{path}: nothing to play (no channel of an installed message type)")
    stop = stop or threading.Event()
    context = Context()
    rclpy.init(context=context)
    node = rclpy.create_node("robot_core_player", context=context)
    try:
        pubs: dict[int, Any] = {}
        for cid, cls in classes.items():
            channel = index.channels[cid]
            want = subscription_qos(channel.qos)
            qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=want.depth,
                             reliability=ReliabilityPolicy.RELIABLE if want.reliable
                             else ReliabilityPolicy.BEST_EFFORT,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL if want.transient_local
                             else DurabilityPolicy.VOLATILE)
            pubs[cid] = node.create_publisher(cls, channel.topic, qos)
        has_clock = any(c.topic == "/clock" for c in index.channels.values())
        clock_pub = None if has_clock else node.create_publisher(Clock, "/clock", 10)
        print(f"playing {path}: {index.messages} messages on {len(pubs)} topics, "
              f"{(index.end_ns - index.start_ns) / 1e9:.2f} s at rate {rate:g}"
              + ("" if has_clock else "; /clock from the log times"), flush=True)
        while True:
            sent = _play_once(path, index, pubs, clock_pub, rate, stop)
            print(f"played {sent} messages", flush=True)
            if not loop or stop.is_set():
                break
    finally:
        if not middleware_deadlocked(node.get_logger()):
            node.destroy_node()
            context.try_shutdown()
    return 0


def _play_once(path: str | Path, index: RecordingIndex, pubs: dict[int, Any], clock_pub: Any, rate: float,
               stop: threading.Event) -> int:
    from builtin_interfaces.msg import Time
    from rosgraph_msgs.msg import Clock

    wall0 = time.monotonic()
    next_clock = index.start_ns
    sent = 0

    def wall(log_ns: int) -> float:
        return wall0 + (log_ns - index.start_ns) / 1e9 / rate

    def wait_until(log_ns: int) -> None:
        """Sleep until ``log_ns`` is due, publishing the generated /clock ticks that fall before it."""
        nonlocal next_clock
        while not stop.is_set():
            now = time.monotonic()
            clock_pending = clock_pub is not None and next_clock <= log_ns
            if clock_pending and now >= wall(next_clock):
                clock_pub.publish(Clock(clock=Time(sec=next_clock // 1_000_000_000,
                                                   nanosec=next_clock % 1_000_000_000)))
                next_clock += CLOCK_PERIOD_NS
                continue
            if not clock_pending and now >= wall(log_ns):
                return
            target = min(wall(log_ns), wall(next_clock)) if clock_pending else wall(log_ns)
            stop.wait(min(max(0.0, target - now), 0.05))

    for cid, log_ns, data in iter_messages(path, set(pubs)):
        wait_until(log_ns)
        if stop.is_set():
            break
        pubs[cid].publish(data)
        sent += 1
    return sent


def configure_cli(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="MCAP recording (robot-core record, ros2 bag record -s mcap)")
    parser.add_argument("--rate", type=float, default=1.0, help="playback speed factor (default 1)")
    parser.add_argument("--loop", action="store_true", help="play again from the start until Ctrl-C")
    parser.add_argument("--info", action="store_true",
                        help="print what `ros2 bag info` reports of the file (duration, start, end, size, messages, "
                             "topics with types and counts) from its MCAP summary, and exit (robot_core's reader)")


def run_cli(args: argparse.Namespace) -> int:
    if args.info:
        from robot_core.ros.recording import format_info, recording_info

        try:
            print(format_info(recording_info(args.file)), end="", flush=True)
        except RecordingError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0
    stop = threading.Event()
    old = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        return play(args.file, rate=args.rate, loop=args.loop, stop=stop)
    except RecordingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m robot_core.nodes.player", description=__doc__.splitlines()[0])
    configure_cli(parser)
    return run_cli(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
