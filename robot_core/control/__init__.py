"""ROS-free controller manager core: lifecycle, interfaces, hardware components, controllers.

The rclpy node (robot_core.nodes) is a thin adapter over ControllerManagerCore.
"""

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

__all__ = [
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
