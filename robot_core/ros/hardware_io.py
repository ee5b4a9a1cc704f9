"""High-rate ROS traffic of the controller manager, kept away from the manager's main executor.

rclpy's executors rebuild their wait set from every entity of every node on each wake-up. The manager's main
executor carries many low-rate entities (its services, each controller node's parameter services, action
servers), so waking it for every joint-state message or ``/clock`` tick would cost more than the control
loop itself. So:

* the robot's joint states (topic-based protocol) are *polled*: their subscriptions live on an internal node
  that no executor spins, and the control loop takes every queued message at the start of each cycle
  (:meth:`HardwareIo.poll`) -- a hardware read, with no thread hop and no executor in the way;
* ``/clock`` (which must wake the loop when simulated time advances) is subscribed on that same unspun node and
  taken by a thread of its own that waits on that one subscription with a bare rclpy wait set (an executor
  rebuilding its wait set at every tick doubled that thread's CPU). Low-rate traffic of the hardware (the
  command publishers' matched events) goes through another internal node (``_<manager>_hardware_io``, hidden, no
  parameter services) spun by a single-threaded executor of its own.

Nodes that run with ``use_sim_time`` normally each subscribe ``/clock``; :meth:`HardwareIo.share_clock` removes
that per-node subscription and feeds the node's clock from the one subscription here instead, so
``node.get_clock()`` still reads simulated time everywhere.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

from robot_core.control.messages import JointStateData
from robot_core.control.topic_based import TopicBasedComponent
from robot_core.ros import ros_conversions as conv
from robot_core.ros.message_templates import JointStateBytes
from robot_core.ros.middleware_deadlock import may_destroy
from robot_core.ros.namespaces import absolute_names_warning
from robot_core.ros.refused_publish import RefusedPublishes, publish_error


def _bare_wait_set() -> Any:
    """rclpy's wait set class, under the executors (None if this rclpy has no such thing)."""
    try:
        from rclpy.impl.implementation_singleton import rclpy_implementation
    except ImportError:
        return None
    return getattr(rclpy_implementation, "WaitSet", None)


class HardwareIo:
    def __init__(self, context: Any, name: str, namespace: str = "", clock_from_topic: bool = True,
                 clock_topic: str = "/clock"):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.guard_condition import GuardCondition
        from rclpy.parameter import Parameter

        self.node = rclpy.create_node(name, context=context, namespace=namespace or None,
                                      start_parameter_services=False, use_global_arguments=False,
                                      parameter_overrides=[Parameter("use_sim_time", value=False)])
        self.poll_node = rclpy.create_node(f"{name}_poll", context=context, namespace=namespace or None,
                                           start_parameter_services=False, use_global_arguments=False,
                                           parameter_overrides=[Parameter("use_sim_time", value=False)])
        self._polled: list[tuple[Any, Callable[[Any], None]]] = []
        self._refused = RefusedPublishes(self.node.get_logger().warning, context)
        self._executor = SingleThreadedExecutor(context=context)
        self._executor.add_node(self.node)
        self._clock_listeners: list[Callable[[float], None]] = []
        self._time_sources: list[Any] = []
        self._clock_sub = None
        self._clock_owner = self.node  # the node of _clock_sub
        self._clock_thread: threading.Thread | None = None  # takes /clock (see _wait_for_clock)
        self._clock_stop = threading.Event()
        self._clock_wake = GuardCondition(None, None, context=context)  # wakes that thread to stop
        # Seconds of /clock time between two updates of the shared node clocks (0: at every message). Each update
        # wakes the manager's main executor once per action server (rcl_action's goal-expiry timer runs on the
        # node's clock and is woken by every time jump): at 500 /clock messages a second that executor spent a
        # quarter of a core rebuilding its wait set. The manager sets its cycle period here, so the controllers'
        # node clocks advance at least once per update, as the loop's own time does; when /clock goes quiet they
        # catch up with its last message within 0.1 s.
        self.node_clock_period = 0.0
        self._shared_t = float("-inf")
        self._unshared: Any = None  # the newest /clock message not yet given to the node clocks
        self.clock_from_topic = clock_from_topic  # False: the manager itself makes the time (embedded simulator)
        # The manager's own resolution of /clock: these nodes ignore the process's remap rules (they are not the
        # manager), so a `-r /clock:=/arm1/clock` given to the manager reaches them through this name.
        self.clock_topic = clock_topic
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._spin, name="hardware_io", daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        from rclpy.executors import ExternalShutdownException

        while self.node.context.ok():
            try:
                self._executor.spin()
                return
            except (ExternalShutdownException, KeyboardInterrupt):
                return
            except Exception as exc:  # see controller_manager._spin: a destroyed entity is not fatal
                if "destruction was requested" not in str(exc):
                    self.node.get_logger().error(f"hardware io executor: {type(exc).__name__}: {exc}")

    # ------------------------------------------------------------------ topic-based hardware
    def bridge_topic_component(self, component: TopicBasedComponent) -> None:
        """Joint states in (sensor-data QoS, as upstream), commands out (reliable).

        The component may send several command messages per cycle (one per command field), so the writer keeps
        10 instead of upstream's 1: with keep-last 1 a reliable writer may replace the first before delivery."""
        from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
        from sensor_msgs.msg import JointState

        topics = {"joint_states_topic": component.joint_states_topic,
                  "joint_commands_topic": component.joint_commands_topic}
        if component.has_sensors:
            topics["sensor_states_topic"] = component.sensor_states_topic
        warning = absolute_names_warning(self.node.get_namespace(), topics, f"hardware component '{component.name}'")
        if warning:
            self.node.get_logger().warning(warning)
        # the full names from here on, so the component's messages name the topic in use (/arm1/robot_joint_states)
        component.joint_states_topic = self.node.resolve_topic_name(component.joint_states_topic)
        component.joint_commands_topic = self.node.resolve_topic_name(component.joint_commands_topic)
        component.sensor_states_topic = self.node.resolve_topic_name(component.sensor_states_topic)

        def on_state(msg: Any, info: Any = None) -> None:
            gid = info.get("publisher_gid") if info else None
            component.on_joint_state(msg.name, msg.position, msg.velocity, msg.effort,
                                     conv.time_to_seconds(msg.header.stamp), gid["data"] if gid else None)

        qos = QoSProfile(depth=10, reliability=qos_profile_sensor_data.reliability,
                         durability=qos_profile_sensor_data.durability)
        sub = self.poll_node.create_subscription(JointState, component.joint_states_topic, on_state, qos)
        if hasattr(sub, "handle") and hasattr(sub.handle, "take_message"):
            self._polled.append((sub, on_state))
        else:  # an rclpy without the take API: receive through the io executor instead
            self.poll_node.destroy_subscription(sub)
            self.node.create_subscription(JointState, component.joint_states_topic, on_state, qos)
        pub = self._command_publisher(component, JointState,
                                      QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))

        if component.has_sensors:
            self._bridge_sensors(component, qos)
        to_bytes = JointStateBytes()  # serialized once per layout, then only numbers written (message_templates)
        refused, error = self._refused, publish_error()
        topic = component.joint_commands_topic

        def send(data: JointStateData) -> None:
            try:
                pub.publish(to_bytes(data))
            except error as exc:  # dropped, the next cycle's command follows (robot_core.ros.refused_publish)
                refused.refused(topic, exc)

        component.command_sink = send

    def _command_publisher(self, component: TopicBasedComponent, msg_type: Any, qos: Any) -> Any:
        """The command publisher; it counts the subscriptions it ever matched into ``component.command_matches``
        (a restarted robot recovers once its command reader is matched, control/topic_based.py)."""
        matches = [0]

        def on_matched(info: Any) -> None:
            matches[0] = int(info.total_count)

        try:
            from rclpy.event_handler import PublisherEventCallbacks

            pub = self.node.create_publisher(msg_type, component.joint_commands_topic, qos,
                                             event_callbacks=PublisherEventCallbacks(matched=on_matched))
        except (ImportError, TypeError):  # an rclpy or middleware without the matched event
            return self.node.create_publisher(msg_type, component.joint_commands_topic, qos)
        component.command_matches = lambda: matches[0]
        return pub

    def _bridge_sensors(self, component: TopicBasedComponent, qos: Any) -> None:
        """The sensors' values (control_msgs/DynamicJointState on ``sensor_states_topic``), polled like the joint
        states (doc/topic_protocol.md)."""
        from control_msgs.msg import DynamicJointState

        def on_sensors(msg: Any, _info: Any = None) -> None:
            component.on_sensor_state(msg.joint_names, [v.interface_names for v in msg.interface_values],
                                      [v.values for v in msg.interface_values],
                                      conv.time_to_seconds(msg.header.stamp))

        sub = self.poll_node.create_subscription(DynamicJointState, component.sensor_states_topic, on_sensors, qos)
        if hasattr(sub, "handle") and hasattr(sub.handle, "take_message"):
            self._polled.append((sub, on_sensors))
        else:
            self.poll_node.destroy_subscription(sub)
            self.node.create_subscription(DynamicJointState, component.sensor_states_topic, on_sensors, qos)

    def poll(self) -> int:
        """Take every queued joint-state message (called by the control loop before reading the hardware)."""
        taken = 0
        for sub, callback in self._polled:
            while True:
                with sub.handle:
                    msg_info = sub.handle.take_message(sub.msg_type, sub.raw)
                if msg_info is None:
                    break
                callback(msg_info[0], msg_info[1])
                taken += 1
        return taken

    # ------------------------------------------------------------------ clock
    def _ensure_clock_subscription(self) -> None:
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from rosgraph_msgs.msg import Clock

        if self._clock_sub is not None or not self.clock_from_topic:
            return
        qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
        sub = self.poll_node.create_subscription(Clock, self.clock_topic, lambda _msg: None, qos)
        if not (hasattr(sub, "handle") and hasattr(sub.handle, "take_message") and _bare_wait_set() is not None):
            # an rclpy without these: /clock through the io executor
            self.poll_node.destroy_subscription(sub)
            self._clock_sub = self.node.create_subscription(Clock, self.clock_topic, self._on_clock, qos)
            self._clock_owner = self.node
            return
        self._clock_sub, self._clock_owner = sub, self.poll_node
        self._clock_stop.clear()
        self._clock_thread = threading.Thread(target=self._wait_for_clock, args=(sub,), name="hardware_io_clock",
                                              daemon=True)
        self._clock_thread.start()

    def _wait_for_clock(self, sub: Any) -> None:
        """Take /clock on a wait set of its own: at 1 kHz an executor's per-wake-up rebuild of its wait set from
        the node's entities was half of this thread's CPU (doc/benchmarks.md)."""
        wait_set_class = _bare_wait_set()
        context = self.poll_node.context
        wake = self._clock_wake
        with context.handle:
            wait_set = wait_set_class(1, 1, 0, 0, 0, 0, context.handle)
        while not self._clock_stop.is_set() and context.ok():
            try:
                with sub.handle, wake.handle:
                    wait_set.clear_entities()
                    wait_set.add_subscription(sub.handle)
                    wait_set.add_guard_condition(wake.handle)
                    wait_set.wait(100_000_000)  # ns: the stop flag is looked at least this often
                    taken = 0
                    while not self._clock_stop.is_set():
                        got = sub.handle.take_message(sub.msg_type, False)
                        if got is None:
                            break
                        self._on_clock(got[0])
                        taken += 1
                if not taken:
                    self._share_unshared()
            except Exception as exc:  # the context or the subscription went away under it: end quietly then
                if self._clock_stop.is_set() or not context.ok():
                    return
                self.node.get_logger().error(f"hardware io /clock: {type(exc).__name__}: {exc}")
                time.sleep(0.01)

    def _stop_clock_thread(self, timeout: float) -> bool:
        """End the /clock thread; False if it did not end within ``timeout``."""
        thread = self._clock_thread
        if thread is None:
            return True
        self._clock_stop.set()
        with contextlib.suppress(Exception):
            self._clock_wake.trigger()
        thread.join(timeout=timeout)
        if thread.is_alive():
            return False
        self._clock_thread = None
        return True

    def on_clock(self, listener: Callable[[float], None]) -> None:
        """Call ``listener(seconds)`` for every /clock message."""
        with self._lock:
            self._clock_listeners.append(listener)
        self._ensure_clock_subscription()

    def share_clock(self, node: Any) -> None:
        """Drive ``node``'s sim-time clock from here instead of from its own /clock subscription."""
        ts = getattr(node, "_time_source", None)
        if ts is None or not node.get_parameter("use_sim_time").value:
            return
        sub = getattr(ts, "_clock_sub", None)
        if sub is not None:
            node.destroy_subscription(sub)
            ts._clock_sub = None
        with self._lock:
            self._time_sources.append(ts)
        self._ensure_clock_subscription()

    def forget_clock(self, node: Any) -> None:
        ts = getattr(node, "_time_source", None)
        with self._lock:
            if ts in self._time_sources:
                self._time_sources.remove(ts)

    def use_own_clock(self) -> None:
        """This process makes the time (embedded simulator): stop listening to /clock."""
        self.clock_from_topic = False
        if self._clock_sub is not None and self._stop_clock_thread(5.0):
            self._clock_owner.destroy_subscription(self._clock_sub)
            self._clock_sub = None

    def deliver_clock(self, msg: Any) -> None:
        """Feed a /clock message this process produced (embedded simulator) to the shared clocks."""
        self._on_clock(msg)

    def _on_clock(self, msg: Any) -> None:
        t = conv.time_to_seconds(msg.clock)
        with self._lock:
            listeners = list(self._clock_listeners)
            share = (self.node_clock_period <= 0.0 or not t - self._shared_t < self.node_clock_period
                     or t < self._shared_t)
            self._unshared = None if share else msg
        if share:
            self._share(msg, t)
        for listener in listeners:
            listener(t)

    def _share(self, msg: Any, t: float) -> None:
        """Set every shared node clock to ``msg``'s time."""
        with self._lock:
            sources = list(self._time_sources)
            self._shared_t = t
        for ts in sources:
            with contextlib.suppress(Exception):
                ts.clock_callback(msg)

    def _share_unshared(self) -> None:
        """/clock went quiet (paused, stepping): the node clocks catch up with its last message."""
        with self._lock:
            msg, self._unshared = self._unshared, None
        if msg is not None:
            self._share(msg, conv.time_to_seconds(msg.clock))

    def shutdown(self, timeout: float = 5.0) -> bool:
        """Stop the /clock executor, join its thread, then destroy the nodes; False if the thread did not end
        (the nodes are then left alone: destroying them under a running wait set crashes the process)."""
        with contextlib.suppress(Exception):
            self._executor.shutdown(timeout_sec=1.0)
        self._thread.join(timeout=timeout)
        if self._thread.is_alive() or not self._stop_clock_thread(timeout):
            return False
        if not may_destroy():  # a deadlocked middleware would block these for good (middleware_deadlock)
            return True
        with contextlib.suppress(Exception):
            self._clock_wake.destroy()
        with contextlib.suppress(Exception):
            self.node.destroy_node()
        with contextlib.suppress(Exception):
            self.poll_node.destroy_node()
        return True
