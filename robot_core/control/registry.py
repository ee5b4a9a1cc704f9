"""Controller type names (as users write them in YAML) -> controller classes.

Classes are imported on first use so listing types or loading one controller
does not import every controller (and their model libraries).
"""

from __future__ import annotations

import importlib

from robot_core.control.controller_base import Controller
from robot_core.control.errors import ControlError
from robot_core.parameter_spec import ParamSpec

_BUILTIN: dict[str, str] = {
    "joint_state_broadcaster/JointStateBroadcaster":
        "robot_core.control.controllers.joint_state_broadcaster:JointStateBroadcaster",
    "forward_command_controller/ForwardCommandController":
        "robot_core.control.controllers.forward_command:ForwardCommandController",
    "position_controllers/JointGroupPositionController":
        "robot_core.control.controllers.forward_command:JointGroupPositionController",
    "velocity_controllers/JointGroupVelocityController":
        "robot_core.control.controllers.forward_command:JointGroupVelocityController",
    "effort_controllers/JointGroupEffortController":
        "robot_core.control.controllers.forward_command:JointGroupEffortController",
    "pid_controller/PidController": "robot_core.control.controllers.pid_controller:PidController",
    "joint_trajectory_controller/JointTrajectoryController":
        "robot_core.control.controllers.joint_trajectory:JointTrajectoryController",
    "diff_drive_controller/DiffDriveController": "robot_core.control.controllers.diff_drive:DiffDriveController",
    "robot_core/CasterBaseController": "robot_core.control.controllers.caster_base:CasterBaseController",
    "parallel_gripper_action_controller/GripperActionController":
        "robot_core.control.controllers.gripper_action:ParallelGripperActionController",
    "position_controllers/GripperActionController":
        "robot_core.control.controllers.gripper_action:GripperActionController",
    "robot_core/GravityCompensationController":
        "robot_core.control.controllers.gravity_compensation:GravityCompensationController",
    "robot_core/ComputedTorqueController": "robot_core.control.controllers.computed_torque:ComputedTorqueController",
    "force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster":
        "robot_core.control.controllers.force_torque_sensor_broadcaster:ForceTorqueSensorBroadcaster",
    "imu_sensor_broadcaster/IMUSensorBroadcaster":
        "robot_core.control.controllers.imu_sensor_broadcaster:IMUSensorBroadcaster",
    "range_sensor_broadcaster/RangeSensorBroadcaster":
        "robot_core.control.controllers.range_sensor_broadcaster:RangeSensorBroadcaster",
    "pose_broadcaster/PoseBroadcaster": "robot_core.control.controllers.pose_broadcaster:PoseBroadcaster",
}


class ControllerRegistry:
    """Maps type names to classes; extra types can be registered (e.g. by tests or plugins)."""

    def __init__(self) -> None:
        self._paths: dict[str, str] = dict(_BUILTIN)
        self._classes: dict[str, type[Controller]] = {}

    def register(self, type_name: str, cls: type[Controller]) -> None:
        if "/" not in type_name:
            raise ControlError(f"controller type '{type_name}' must look like '<package>/<Class>'")
        self._classes[type_name] = cls
        self._paths.pop(type_name, None)

    def types(self) -> list[str]:
        return sorted({*self._paths, *self._classes})

    def list_types(self) -> tuple[list[str], list[str]]:
        """(types, base_classes) as ListControllerTypes answers."""
        names = self.types()
        return names, [self.get(n).base_class for n in names]

    def has(self, type_name: str) -> bool:
        return type_name in self._paths or type_name in self._classes

    def get(self, type_name: str) -> type[Controller]:
        cls = self._classes.get(type_name)
        if cls is not None:
            return cls
        path = self._paths.get(type_name)
        if path is None:
            raise ControlError(f"controller type '{type_name}' does not exist; available types: {self.types()}")
        module, _, name = path.partition(":")
        cls = getattr(importlib.import_module(module), name)
        self._classes[type_name] = cls
        return cls

    def reload(self) -> None:
        """Forget imported classes of built-in types (ReloadControllerLibraries)."""
        for t in list(self._classes):
            if t in _BUILTIN:
                del self._classes[t]
        self._paths.update(_BUILTIN)


default_registry = ControllerRegistry()


def doc_pages() -> dict[str, list[str]]:
    """Doc page (doc/controllers/<page>.md, the module's name) -> the built-in type names it documents."""
    pages: dict[str, list[str]] = {}
    for type_name, path in _BUILTIN.items():
        pages.setdefault(path.partition(":")[0].rsplit(".", 1)[-1], []).append(type_name)
    return pages


def page_params(page: str) -> tuple[ParamSpec, ...]:
    """The parameter table of a doc page: the union of its types' tables, in order (a parameter only some of the
    types read says so in its description, e.g. forward_command's ``interface_name``)."""
    out: dict[str, ParamSpec] = {}
    for type_name in doc_pages()[page]:
        for spec in default_registry.get(type_name).PARAMS:
            if out.setdefault(spec.name, spec) != spec:
                raise ControlError(f"doc page '{page}': parameter '{spec.name}' is specified differently by "
                                   f"'{type_name}'")
    return tuple(out.values())
