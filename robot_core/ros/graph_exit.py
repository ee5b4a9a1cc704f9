"""How a short-lived process (a spawner, the bring-up's readiness probe) leaves the ROS graph: its node goes, its
DDS participant stays until the process ends with ``os._exit``.

rmw_fastrtps (9.3, Fast DDS 3.2) deletes a context's DDS participant when the context's last node is destroyed.
Processes with one node crashed with SIGSEGV inside ``Node.destroy_node`` four times in eight full test runs under
a CPU hog (spawners that had done their work, the bring-up's probe), each time while other participants were being
discovered (nodes starting beside it): that deletion is the likely site, inferred (the C frames were never caught).
Crashing at the very end turns a finished job into a failure (``exited -11``) for whoever started the process.

:func:`leave_graph` destroys the node while a hidden node (its name starts with ``_``, so ``ros2 node list`` does
not show it) keeps the participant: the node and its endpoints still leave every peer's graph at once; the empty
participant is dropped by the peers when its lease runs out (Fast DDS's default: 20 s) after the process has gone.
That is the price: a process leaving this way must end with ``os._exit`` (:func:`robot_core.ros.node_main.finish`)
and never shut the context down (rclpy's shutdown destroys every node of it, the keeper too).
"""

from __future__ import annotations

from typing import Any

# The hidden nodes keeping their participants; never destroyed (os._exit ends the process).
_KEEPERS: list[Any] = []


def leave_graph(node: Any) -> None:
    """Destroy ``node`` without finalising its DDS participant; the caller ends the process with ``os._exit``."""
    import rclpy
    from rclpy.parameter import Parameter

    keeper = rclpy.create_node(
        f"_{node.get_name()}_leaving", context=node.context, enable_rosout=False, start_parameter_services=False,
        parameter_overrides=[Parameter("start_type_description_service", value=False)])
    _KEEPERS.append(keeper)
    node.destroy_node()


def kept_participants() -> int:
    """How many participants :func:`leave_graph` is keeping (the process must leave with ``os._exit``)."""
    return len(_KEEPERS)
