"""Which controllers the web view gives joint sliders, and what moving a slider sends.

Kept apart from the node so the choice is tested without ROS: a forward position controller takes all its
joints at once on ``~/commands``; a gripper action controller takes one goal position on ``~/gripper_cmd``, so
the default graph's gripper (an action, as upstream's demos ship it) is still driven from the page.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

FORWARD_POSITION_TYPES = ("position_controllers/JointGroupPositionController",
                          "forward_command_controller/ForwardCommandController")
# type -> the action it serves on ~/gripper_cmd (control_msgs)
GRIPPER_ACTION_TYPES = {
    "position_controllers/GripperActionController": "GripperCommand",
    "parallel_gripper_action_controller/GripperActionController": "ParallelGripperCommand",
}


@dataclass(frozen=True)
class SliderGroup:
    """The sliders of one controller: ``kind`` "forward" (publish every joint) or "gripper" (one action goal)."""

    controller: str
    kind: str
    joints: tuple[str, ...]
    action: str = ""  # GRIPPER_ACTION_TYPES' value for a gripper


def _joint(interface: str) -> str:
    return interface.rsplit("/", 1)[0]


def slider_groups(controllers: Iterable[tuple[str, str, str, Iterable[str]]]) -> list[SliderGroup]:
    """(name, type, state, command interfaces) of each listed controller -> the active ones that get sliders.

    A forward controller counts only when every interface it claims is a position; a gripper action controller
    slides its joint (the joint of its first interface: its position or effort, then the optional max-effort and
    max-velocity interfaces of the same joint)."""
    groups = []
    for name, type_name, state, interfaces in controllers:
        names = list(interfaces)
        if state != "active" or not names:
            continue
        if type_name in FORWARD_POSITION_TYPES and all(i.endswith("/position") for i in names):
            groups.append(SliderGroup(name, "forward", tuple(_joint(i) for i in names)))
        elif type_name in GRIPPER_ACTION_TYPES:
            groups.append(SliderGroup(name, "gripper", (_joint(names[0]),), GRIPPER_ACTION_TYPES[type_name]))
    return sorted(groups, key=lambda g: g.controller)
