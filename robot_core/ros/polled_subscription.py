"""A subscription that a worker thread takes messages from itself, with no executor in between.

Why: handing a message from an executor thread to a worker that applies it costs a thread wake-up and a hand-over
of Python's interpreter lock; on a loaded machine the executor thread often waits for a worker that was
preempted while holding the lock, which was most of the simulator's command latency (doc/benchmarks.md, the
round-trip decomposition). The worker that applies the messages calls :meth:`PolledSubscription.poll` when it
is ready for them (the simulator's simulation thread, before each tick), as the controller manager's loop does
with its joint states (:mod:`robot_core.ros.hardware_io`).

The subscription lives on a hidden internal node (``_<node>_poll``, in the owner's namespace) that no executor
spins. That node ignores the process's global arguments, so a ``__node:=`` remap cannot give it the owner's
name; the topic is resolved by the owner node (its namespace and remaps) and subscribed under that absolute name.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from robot_core.ros.middleware_deadlock import may_destroy


class PolledSubscription:
    """``msg_type`` on ``topic`` (as ``owner`` resolves it), delivered to ``callback(msg, arrived)`` by
    :meth:`poll`; ``arrived`` is when DDS received the message, on ``time.perf_counter``'s clock (NaN when the
    middleware does not say).

    ``read``: take the messages as bytes and hand ``read(bytes)`` to the callback instead of the message (e.g.
    :func:`robot_core.ros.joint_state_reader.read_joint_state`, several times cheaper than rclpy's conversion);
    where it returns None the bytes are deserialized as usual."""

    def __init__(self, owner: Any, msg_type: Any, topic: str, qos: Any, callback: Callable[[Any, float], None],
                 read: Callable[[bytes], Any] | None = None):
        import rclpy
        from rclpy.parameter import Parameter

        self.topic = owner.resolve_topic_name(topic)
        self._callback = callback
        self._read = read
        name = owner.get_name().lstrip("_")
        self.node = rclpy.create_node(f"_{name}_poll", context=owner.context, namespace=owner.get_namespace(),
                                      start_parameter_services=False, use_global_arguments=False,
                                      parameter_overrides=[Parameter("use_sim_time", value=False)])
        self._sub = self.node.create_subscription(msg_type, self.topic, lambda _msg: None, qos, raw=read is not None)
        if not (hasattr(self._sub, "handle") and hasattr(self._sub.handle, "take_message")):
            self.destroy()
            raise RuntimeError("this rclpy has no take_message: use an executor subscription")

    def poll(self) -> int:
        """Deliver every queued message in arrival order; returns how many."""
        sub, read, taken = self._sub, self._read, 0
        # received_timestamp is the system clock (ns); shift it onto perf_counter's monotonic clock
        offset = time.time() - time.perf_counter()
        while True:
            with sub.handle:
                got = sub.handle.take_message(sub.msg_type, sub.raw)
            if got is None:
                return taken
            msg, info = got
            if read is not None:
                data = msg
                msg = read(data)
                if msg is None:
                    from rclpy.serialization import deserialize_message

                    msg = deserialize_message(data, sub.msg_type)
            stamp = info.get("received_timestamp", 0) if isinstance(info, dict) else 0
            self._callback(msg, stamp * 1e-9 - offset if stamp else float("nan"))
            taken += 1

    def destroy(self) -> None:
        if may_destroy():  # a deadlocked middleware would block this for good (middleware_deadlock)
            self.node.destroy_node()
