"""High-rate ROS traffic of the controller manager, kept away from the manager's main executor.

rclpy's executors rebuild their wait set from every entity of every node on each wake-up. The manager's main
executor carries many low-rate entities (its services, each controller node's parameter services, action
servers), so waking it for every joint-state message or ``/clock`` tick would cost more than the control
loop itself. So:

* the robot's joint states (topic-based protocol) are *polled*: their subscriptions live on an internal node
  that no executor spins, and the control loop takes every queued message at the start of each cycle
  (:meth:`HardwareIo.poll`) -- a hardware read, with no thread hop and no executor in the way;
* ``/clock`` (which must wake the loop when simulated time advances) is received by another internal node
  (``_<manager>_hardware_io``, hidden, no parameter services) spun by a single-threaded executor of its own.

Nodes that run with ``use_sim_time`` normally each subscribe ``/clock``; :meth:`HardwareIo.share_clock` removes
that per-node subscription and feeds the node's clock from the one subscription here instead, so
``node.get_clock()`` still reads simulated time everywhere.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

from robot_core.control.messages import JointStateData
from robot_core.control.topic_based import TopicBasedComponent
from robot_core.ros import ros_conversions as conv
from robot_core.ros.message_templates import JointStateBytes
from robot_core.ros.namespaces import absolute_names_warning
from robot_core.ros.refused_publish import RefusedPublishes, publish_error


class HardwareIo:
    def __init__(self, context: Any, name: str, namespace: str = "", clock_from_topic: bool = True,
                 clock_topic: str = "/clock"):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
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

        if self._clock_sub is None and self.clock_from_topic:
            self._clock_sub = self.node.create_subscription(
                Clock, self.clock_topic, self._on_clock,
                QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))

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
        if self._clock_sub is not None:
            self.node.destroy_subscription(self._clock_sub)
            self._clock_sub = None

    def deliver_clock(self, msg: Any) -> None:
        """Feed a /clock message this process produced (embedded simulator) to the shared clocks."""
        self._on_clock(msg)

    def _on_clock(self, msg: Any) -> None:
        t = conv.time_to_seconds(msg.clock)
        with self._lock:
            sources = list(self._time_sources)
            listeners = list(self._clock_listeners)
        for ts in sources:
            with contextlib.suppress(Exception):
                ts.clock_callback(msg)
        for listener in listeners:
            listener(t)

    def shutdown(self, timeout: float = 5.0) -> bool:
        """Stop the /clock executor, join its thread, then destroy the nodes; False if the thread did not end
        (the nodes are then left alone: destroying them under a running wait set crashes the process)."""
        with contextlib.suppress(Exception):
            self._executor.shutdown(timeout_sec=1.0)
        self._thread.join(timeout=timeout)
        if self._thread.is_alive():
            return False
        with contextlib.suppress(Exception):
            self.node.destroy_node()
        with contextlib.suppress(Exception):
            self.poll_node.destroy_node()
        return True
