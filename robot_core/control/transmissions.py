"""Mechanical transmissions between actuator space and joint space.

A SimpleTransmission is a gear of ratio ``reduction`` (actuator turns per joint
turn) with an optional joint ``offset``. It preserves power:
actuator effort x actuator velocity == joint effort x joint velocity.

    joint position   = actuator position / reduction + offset
    joint velocity   = actuator velocity / reduction
    joint effort     = actuator effort * reduction
    actuator position = (joint position - offset) * reduction   (and the inverses)

TransmissionSet maps many joints at once (vectorised), which is what a
hardware component that talks in actuator names needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from robot_core.control.errors import ControlError

SIMPLE_TRANSMISSION_TYPES = ("transmission_interface/SimpleTransmission", "SimpleTransmission")


@dataclass(frozen=True)
class SimpleTransmission:
    joint: str
    actuator: str
    reduction: float = 1.0
    offset: float = 0.0

    def __post_init__(self) -> None:
        if self.reduction == 0.0 or not np.isfinite(self.reduction):
            raise ControlError(f"transmission for joint '{self.joint}': mechanical reduction must be finite and "
                               f"non-zero, got {self.reduction}")

    def actuator_to_joint(self, position: float, velocity: float, effort: float) -> tuple[float, float, float]:
        return position / self.reduction + self.offset, velocity / self.reduction, effort * self.reduction

    def joint_to_actuator(self, position: float, velocity: float, effort: float) -> tuple[float, float, float]:
        return (position - self.offset) * self.reduction, velocity * self.reduction, effort / self.reduction


class TransmissionSet:
    """Vectorised SimpleTransmissions keyed by joint and by actuator name."""

    def __init__(self, transmissions: Iterable[SimpleTransmission] = ()):
        self.items: list[SimpleTransmission] = list(transmissions)
        self.by_joint = {t.joint: t for t in self.items}
        self.by_actuator = {t.actuator: t for t in self.items}
        if len(self.by_joint) != len(self.items) or len(self.by_actuator) != len(self.items):
            raise ControlError("each joint and each actuator may appear in one transmission only")

    @staticmethod
    def from_robot_transmissions(transmissions: Sequence) -> TransmissionSet:
        """Build from RobotModel.transmissions (either URDF form); only single-joint/single-actuator
        SimpleTransmissions; the offset is the joint's (ros2_control's form only)."""
        out = []
        for tr in transmissions:
            if tr.type not in SIMPLE_TRANSMISSION_TYPES:
                raise ControlError(f"transmission '{tr.name}': type '{tr.type}' is not supported "
                                   f"(only transmission_interface/SimpleTransmission)")
            if len(tr.joints) != 1 or len(tr.actuators) != 1:
                raise ControlError(f"transmission '{tr.name}': a SimpleTransmission needs exactly one joint and "
                                   f"one actuator")
            out.append(SimpleTransmission(tr.joints[0].name, tr.actuators[0].name,
                                          float(tr.actuators[0].mechanical_reduction),
                                          float(getattr(tr.joints[0], "offset", 0.0))))
        return TransmissionSet(out)

    def __bool__(self) -> bool:
        return bool(self.items)

    def actuator_name(self, joint: str) -> str:
        t = self.by_joint.get(joint)
        return t.actuator if t else joint

    def joint_name(self, actuator: str) -> str:
        t = self.by_actuator.get(actuator)
        return t.joint if t else actuator

    def arrays(self, joints: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(reduction, offset) per joint; joints without a transmission get (1, 0)."""
        red = np.array([self.by_joint[j].reduction if j in self.by_joint else 1.0 for j in joints])
        off = np.array([self.by_joint[j].offset if j in self.by_joint else 0.0 for j in joints])
        return red, off
