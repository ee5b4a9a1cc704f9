"""ROS adapters of the controllers, one module per controller family; :func:`adapter_class` picks one by type.

A type without a dedicated adapter (e.g. gravity compensation, which takes no input) gets the plain
:class:`~robot_core.nodes.controllers.base.ControllerAdapter`: it still has its node and parameters.
"""

from __future__ import annotations

import importlib

from robot_core.nodes.controllers.base import ControllerAdapter

_ADAPTERS: dict[str, str] = {
    "joint_state_broadcaster/JointStateBroadcaster":
        "robot_core.nodes.controllers.joint_state_broadcaster:JointStateBroadcasterAdapter",
    "forward_command_controller/ForwardCommandController":
        "robot_core.nodes.controllers.forward_command:ForwardCommandAdapter",
    "position_controllers/JointGroupPositionController":
        "robot_core.nodes.controllers.forward_command:ForwardCommandAdapter",
    "velocity_controllers/JointGroupVelocityController":
        "robot_core.nodes.controllers.forward_command:ForwardCommandAdapter",
    "effort_controllers/JointGroupEffortController":
        "robot_core.nodes.controllers.forward_command:ForwardCommandAdapter",
    "pid_controller/PidController": "robot_core.nodes.controllers.pid_controller:PidControllerAdapter",
    "joint_trajectory_controller/JointTrajectoryController":
        "robot_core.nodes.controllers.joint_trajectory:JointTrajectoryAdapter",
    "robot_core/ComputedTorqueController": "robot_core.nodes.controllers.joint_trajectory:JointTrajectoryAdapter",
    "diff_drive_controller/DiffDriveController": "robot_core.nodes.controllers.diff_drive:DiffDriveAdapter",
    "robot_core/CasterBaseController": "robot_core.nodes.controllers.caster_base:CasterBaseAdapter",
    "force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster":
        "robot_core.nodes.controllers.sensor_broadcasters:ForceTorqueSensorBroadcasterAdapter",
    "imu_sensor_broadcaster/IMUSensorBroadcaster":
        "robot_core.nodes.controllers.sensor_broadcasters:IMUSensorBroadcasterAdapter",
    "range_sensor_broadcaster/RangeSensorBroadcaster":
        "robot_core.nodes.controllers.sensor_broadcasters:RangeSensorBroadcasterAdapter",
    "pose_broadcaster/PoseBroadcaster": "robot_core.nodes.controllers.sensor_broadcasters:PoseBroadcasterAdapter",
    "parallel_gripper_action_controller/GripperActionController":
        "robot_core.nodes.controllers.gripper_action:GripperActionAdapter",
    "position_controllers/GripperActionController":
        "robot_core.nodes.controllers.gripper_action:GripperActionAdapter",
}


def adapter_class(type_name: str) -> type[ControllerAdapter]:
    target = _ADAPTERS.get(type_name)
    if target is None:
        return ControllerAdapter
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)


__all__ = ["ControllerAdapter", "adapter_class"]
