"""Which of our names follow a node's namespace, and the warning for those that cannot.

A robot runs under a namespace with ``-r __ns:=/arm1`` (``robot-core bringup --namespace arm1``, as upstream
ros2_control). Every name our nodes use is relative -- the topic-based protocol (``robot_joint_states``,
``robot_joint_commands``, ``robot_sensor_states``), ``robot_description``, the broadcasters' ``joint_states``, the
controllers' ``~/`` topics, services and actions -- so it moves under the namespace with the node. The global ones
stay global on purpose: ``/tf`` and ``/tf_static`` (tf2 listens there whatever its namespace; the robot's frames
carry a prefix instead, robot_core.physics.frame_prefix) and ``/clock`` (one simulated time; a bringup with its
own simulator remaps it to ``/<ns>/clock``). A name the user wrote absolute (``/robot_joint_states`` in a
description's ``<param>`` or a YAML) is honoured, but under a namespace it stays outside it, where two robots
would share it: :func:`absolute_names_warning` says so.
"""

from __future__ import annotations

from collections.abc import Mapping

GLOBAL_NAMES = frozenset({"/tf", "/tf_static", "/clock"})


def absolute_names_warning(namespace: str, names: Mapping[str, str], owner: str) -> str | None:
    """One warning line for the absolute entries of ``names`` (setting -> topic) when ``namespace`` is not the
    root; None when there is nothing to say. ``owner`` names where the settings come from."""
    if not namespace or namespace == "/":
        return None
    absolute = {key: value for key, value in names.items() if value.startswith("/") and value not in GLOBAL_NAMES
                and not value.startswith(namespace.rstrip("/") + "/")}
    if not absolute:
        return None
    listed = ", ".join(f"{key} '{value}'" for key, value in absolute.items())
    return (f"{owner}: {listed} absolute, so outside the namespace {namespace} (robots in other namespaces would "
            f"share it); write it relative (e.g. '{next(iter(absolute.values())).lstrip('/')}')")
