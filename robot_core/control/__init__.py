"""ROS-free controller manager core: lifecycle, interfaces, hardware components, controllers.

The rclpy node (robot_core.nodes) is a thin adapter over ControllerManagerCore.

The names below are imported on first use: a process that needs one module of this package (the simulator node
reads ``control.messages``) does not load the whole manager at start-up; every node start of the suite pays for it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> module of this package that defines it
_EXPORTS = {
    "ALL_INTERFACES": "controller_base",
    "ControlError": "errors",
    "Controller": "controller_base",
    "ControllerConfig": "config",
    "ControllerManagerConfig": "config",
    "ControllerManagerCore": "manager",
    "ControllerRegistry": "registry",
    "HardwareComponent": "hardware",
    "HardwareInfo": "hardware",
    "InterfaceGroup": "interfaces",
    "JointTrajectory": "trajectory",
    "LoopStats": "loop_stats",
    "ResourceManager": "interfaces",
    "ReturnType": "controller_base",
    "State": "lifecycle",
    "Strictness": "manager",
    "SwitchResult": "manager",
    "TrajectoryPoint": "trajectory",
    "Transition": "lifecycle",
    "create_component": "hardware",
    "default_registry": "registry",
    "load_config": "config",
    "parse_config_text": "config",
}

__all__ = [  # the same names as _EXPORTS (a literal, for linters and type checkers)
    "ALL_INTERFACES",
    "ControlError",
    "Controller",
    "ControllerConfig",
    "ControllerManagerConfig",
    "ControllerManagerCore",
    "ControllerRegistry",
    "HardwareComponent",
    "HardwareInfo",
    "InterfaceGroup",
    "JointTrajectory",
    "LoopStats",
    "ResourceManager",
    "ReturnType",
    "State",
    "Strictness",
    "SwitchResult",
    "TrajectoryPoint",
    "Transition",
    "create_component",
    "default_registry",
    "load_config",
    "parse_config_text",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'robot_core.control' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"robot_core.control.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


if TYPE_CHECKING:
    from robot_core.control.config import ControllerConfig, ControllerManagerConfig, load_config, parse_config_text
    from robot_core.control.controller_base import ALL_INTERFACES, Controller, ReturnType
    from robot_core.control.errors import ControlError
    from robot_core.control.hardware import HardwareComponent, HardwareInfo, create_component
    from robot_core.control.interfaces import InterfaceGroup, ResourceManager
    from robot_core.control.lifecycle import State, Transition
    from robot_core.control.loop_stats import LoopStats
    from robot_core.control.manager import ControllerManagerCore, Strictness, SwitchResult
    from robot_core.control.registry import ControllerRegistry, default_registry
    from robot_core.control.trajectory import JointTrajectory, TrajectoryPoint
