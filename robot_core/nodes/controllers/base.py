"""The ROS side of one loaded controller: its node, and the topics, services and actions on it.

Like ros2_control, every controller is a node named after the controller (so ``~/commands`` of
``forward_position_controller`` is ``/forward_position_controller/commands`` and its parameters live on that
node), but here all of them run inside the controller manager's process and executor.

An adapter creates its ROS entities when the controller is configured and removes them at cleanup, as
upstream controllers do in ``on_configure``/``on_cleanup``. Output the controller core emits during
``update`` (in the control loop thread) goes through the manager's :class:`~robot_core.ros.outbox.Outbox`,
so message building and publishing never run inside the loop.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, ClassVar

from robot_core.control.controller_base import Controller, resolve
from robot_core.control.lifecycle import State
from robot_core.ros.outbox import Outbox
from robot_core.ros.parameters import ReadOnlyReasons, describe_declared, parameters_as_dict


def controller_node_class() -> type:
    """The node class of a controller: an rclpy Node whose refusal of a read-only parameter names the controller
    and says where the value comes from (rclpy's own text names no cause)."""
    global _NODE_CLASS
    if _NODE_CLASS is None:
        from rclpy.node import Node

        class ControllerNode(ReadOnlyReasons, Node):
            def read_only_reason(self, name: str) -> str:
                return (f"parameter '{name}' of controller '{self.get_name()}' is read-only (set it in the parameter "
                        f"file the controller is loaded with)")

        _NODE_CLASS = ControllerNode
    return _NODE_CLASS


_NODE_CLASS: type | None = None


class ControllerAdapter:
    """Base adapter: parameters in, emitted outputs published; subclasses add inputs in :meth:`create_entities`."""

    #: controller type names this adapter serves (see robot_core.nodes.controllers.ADAPTERS)
    types: ClassVar[tuple[str, ...]] = ()

    def __init__(self, node: Any, controller: Controller, outbox: Outbox, clock_now: Callable[[], float]):
        self.node = node
        self.controller = controller
        self.name = controller.name
        self.outbox = outbox
        self.now = clock_now  # the manager's control time (s): sim time in simulation
        self.log = node.get_logger()
        self._handlers: dict[str, Callable[[Any], None]] = {}
        self._entities: list[tuple[Any, Callable[[Any], Any]]] = []
        self.configured = False
        self._declaring = False
        controller.output_sink = self._sink
        node.add_on_set_parameters_callback(self._refuse_read_only)

    def _refuse_read_only(self, params: list[Any]) -> Any:
        """Upstream declares a controller's structural parameters read-only; a change would be silently ignored
        until the next configure anyway, so say so instead. The descriptors already refuse the parameters that
        carry their spec's; this also covers one declared without (a value its descriptor did not fit)."""
        from rcl_interfaces.msg import SetParametersResult

        if self._declaring:
            return SetParametersResult(successful=True)
        for p in params:
            if self.controller.is_read_only(p.name):
                return SetParametersResult(successful=False, reason=(
                    f"parameter '{p.name}' of controller '{self.name}' is read-only (set it in the parameter file "
                    f"the controller is loaded with)"))
        return SetParametersResult(successful=True)

    def between_cycles(self) -> contextlib.AbstractContextManager[Any]:
        """Run a callback's work outside any control cycle.

        Inputs are staged under the controller's own lock; a callback thread preempted by the interpreter while
        holding it would stall the cycle's update until it is scheduled again. Callbacks therefore take the
        manager's cycle gate (see robot_core.ros.control_loop.CycleGate) around every call into the core.
        """
        gate = getattr(self.outbox, "gate", None)
        return gate.helper() if gate is not None else contextlib.nullcontext()

    # --- parameters ------------------------------------------------------------
    def read_parameters(self) -> dict[str, Any]:
        """The controller node's parameters (YAML + params_file + ``ros2 param set``) for the core."""
        return parameters_as_dict(self.node)

    def declare_defaults(self, defaults: dict[str, tuple[Any, str]]) -> None:
        """Declare the parameters the controller ran with because the YAML did not set them (upstream controllers
        declare every parameter with its default), so ``ros2 param list`` / ``get`` / ``describe`` show them and
        ``ros2 param set`` works on the settable ones (taking effect at the next configure). Parameters of the
        table the core did not read (those only the node reads) are declared with their table default. Every
        parameter then gets its spec's descriptor."""
        from rclpy.parameter import Parameter

        list_types = {"string_array": Parameter.Type.STRING_ARRAY, "double_array": Parameter.Type.DOUBLE_ARRAY,
                      "string[]": Parameter.Type.STRING_ARRAY, "double[]": Parameter.Type.DOUBLE_ARRAY}
        specs = self.controller.PARAMS
        unread = {s.name: (s.default, s.type) for s in specs
                  if not s.family and s.default is not None and s.name not in defaults}
        self._declaring = True
        try:
            for path, (value, kind) in {**defaults, **unread}.items():
                if self.node.has_parameter(path):
                    continue
                try:
                    if value == []:  # an empty list says nothing of its element type: declare the type, then set
                        ptype = list_types[kind]
                        self.node.declare_parameter(path, ptype)
                        self.node.set_parameters([Parameter(path, ptype, [])])
                    else:
                        self.node.declare_parameter(path, value)
                except Exception as exc:  # an odd name: the controller still runs with the default
                    self.log.debug(f"parameter '{path}' not declared: {exc}")
            describe_declared(self.node, specs, list(self.node.get_parameters_by_prefix("")))
        finally:
            self._declaring = False

    # --- outputs ---------------------------------------------------------------
    def _sink(self, key: str, data: Any) -> None:
        handler = self._handlers.get(key)
        if handler is not None:
            self.outbox.post((self.name, key), handler, data)

    def add_output(self, key: str, msg_type: Any, topic: str, convert: Callable[[Any], Any],
                   qos: Any = 10) -> Any:
        """Publish every ``emit(key, data)`` of the core as ``convert(data)`` on ``topic``."""
        pub = self.track(self.node.create_publisher(msg_type, topic, qos), self.node.destroy_publisher)

        def publish(data: Any) -> None:
            pub.publish(convert(resolve(data)))

        self._handlers[key] = publish
        return pub

    def track(self, entity: Any, destroy: Callable[[Any], Any]) -> Any:
        """Remember a publisher/subscription/service/action server and how cleanup removes it."""
        self._entities.append((entity, destroy))
        return entity

    # --- lifecycle ---------------------------------------------------------------
    def configure(self) -> None:
        if not self.configured:
            self.create_entities()
            self.configured = True

    def create_entities(self) -> None:
        """Override: create publishers (``add_output``), subscriptions, services, action servers."""

    def cleanup(self) -> None:
        self._handlers.clear()
        self.outbox.discard(lambda key: isinstance(key, tuple) and key[:1] == (self.name,))
        for entity, destroy in reversed(self._entities):
            with contextlib.suppress(Exception):
                destroy(entity)
        self._entities.clear()
        self.configured = False

    def on_state_change(self, state: State) -> None:
        """The controller changed lifecycle state (called under the manager's lock; keep it short)."""

    def destroy(self) -> None:
        self.cleanup()
        self.controller.output_sink = None
        self.node.destroy_node()
