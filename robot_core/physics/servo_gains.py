"""Servo gains written in the robot description for other MuJoCo ros2_control plugins, as robot_core's servo gains.

A description made for a MuJoCo ros2_control plugin carries its per-joint PID gains; the simulator takes them as
the joint's servo gains (``kp``, ``kd``, ``kv`` of :mod:`robot_core.physics.actuation`, joint space), so the robot
feels as stiff as its author tuned it. The simulator's ``gains`` parameter still wins over them.

* ``mujoco_ros2_control/MujocoSystem`` (moveit/mujoco_ros2_control): ``<param>``s of a ``<joint>`` in the block,
  ``position_kp`` -> kp, ``position_kd`` -> kd (its PID turns the position error into an effort, as our position
  servo does), ``velocity_kp`` -> kv (velocity error -> effort).
* ``mujoco_ros2_control/MujocoSystemInterface`` (ros-controls/mujoco_ros2_control): the YAML file named by the
  ``<hardware>`` param ``pids_config_file``, ``pid_gains.position.<joint>.p`` / ``.d`` -> kp / kd and
  ``pid_gains.velocity.<joint>.p`` -> kv (any node section's ``ros__parameters``). A relative or ``package://``
  path is resolved like a mesh path.

Integral terms (``*_ki``, ``i``) and a velocity loop's ``d`` have no counterpart in our servo (gravity is
compensated, so a servo holds without an integrator): a non-zero one is a RobotModelWarning naming it. Gains for
a joint the simulator does not actuate (a mimic or passive joint) are a warning too.

gz_ros2_control's ``position_proportional_gain`` is not mapped: it scales a position error into a joint velocity
set directly (times the controller manager's rate), a loop our force-driven servo does not have, and it belongs
to the ``<gazebo>`` plugin element, not to ``<ros2_control>``. Written as a ``<hardware>`` param of a Gazebo block
it is a warning, so the author knows it changes nothing.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from robot_core.model.package_paths import resolve_uri
from robot_core.model.robot_model import RobotModel, RobotModelWarning, Ros2Control, SourceRef
from robot_core.yaml_guard import YamlLimitError, safe_load_checked

MUJOCO_SYSTEM = "mujoco_ros2_control/MujocoSystem"
MUJOCO_SYSTEM_INTERFACE = "mujoco_ros2_control/MujocoSystemInterface"
GAZEBO_SYSTEMS = ("gz_ros2_control/GazeboSimSystem", "ign_ros2_control/IgnitionSystem",
                  "gazebo_ros2_control/GazeboSystem")
# <joint> param -> our gain (MujocoSystem); the params we cannot represent, warned about when non-zero
JOINT_PARAMS = {"position_kp": "kp", "position_kd": "kd", "velocity_kp": "kv"}
UNMAPPED_JOINT_PARAMS = ("position_ki", "velocity_ki", "velocity_kd")
# pid_gains.<loop>.<joint>.<term> -> our gain (MujocoSystemInterface)
PID_FILE_TERMS = {("position", "p"): "kp", ("position", "d"): "kd", ("velocity", "p"): "kv"}


def _warn(message: str, source: SourceRef) -> None:
    warnings.warn(RobotModelWarning(f"{source}: {message}"), stacklevel=3)


def _number(value: Any, what: str, source: SourceRef) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or number < 0.0:
        _warn(f"{what} = {value!r} is not a finite number >= 0; ignored", source)
        return None
    return number


def _from_joint_params(block: Ros2Control) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for rc_joint in block.joints:
        where = SourceRef(block.source.file, block.source.line,
                          f"ros2_control '{block.name}' joint '{rc_joint.name}'")
        for param, gain in JOINT_PARAMS.items():
            if param in rc_joint.params:
                value = _number(rc_joint.params[param], f"<param name=\"{param}\">", where)
                if value is not None:
                    out.setdefault(rc_joint.name, {})[gain] = value
        for param in UNMAPPED_JOINT_PARAMS:
            value = rc_joint.params.get(param, "0")
            if value.strip() not in ("", "0", "0.0"):
                _warn(f"<param name=\"{param}\"> {value} has no counterpart in robot_core's servo; ignored", where)
    return out


def _from_pid_file(block: Ros2Control, robot: RobotModel) -> dict[str, dict[str, float]]:
    raw = block.hardware_params.get("pids_config_file", "").strip()
    if not raw:
        return {}
    where = SourceRef(block.source.file, block.source.line, f"ros2_control '{block.name}' pids_config_file")
    base = str(Path(robot.source_file).resolve().parent) if not robot.source_file.startswith("<") else None
    path = resolve_uri(raw, [], base)
    if path is None:
        _warn(f"'{raw}' not found; its PID gains are not applied", where)
        return {}
    try:
        data = safe_load_checked(Path(path).read_text(encoding="utf-8"), path)
    except (OSError, yaml.YAMLError, YamlLimitError) as exc:
        _warn(f"'{path}' cannot be read ({exc}); its PID gains are not applied", where)
        return {}
    out: dict[str, dict[str, float]] = {}
    for section in (data or {}).values() if isinstance(data, Mapping) else ():
        params = section.get("ros__parameters") if isinstance(section, Mapping) else None
        pid = params.get("pid_gains") if isinstance(params, Mapping) else None
        if not isinstance(pid, Mapping):
            continue
        for loop in ("position", "velocity"):
            for joint, terms in (pid.get(loop) or {}).items():
                if not isinstance(terms, Mapping):
                    continue
                for term, value in terms.items():
                    gain = PID_FILE_TERMS.get((loop, term))
                    what = f"{path}: pid_gains.{loop}.{joint}.{term}"
                    if gain is not None:
                        number = _number(value, what, where)
                        if number is not None:
                            out.setdefault(str(joint), {})[gain] = number
                    elif term in ("i", "d") and value not in (0, 0.0, None):
                        _warn(f"{what} = {value} has no counterpart in robot_core's servo; ignored", where)
    return out


def description_gains(robot: RobotModel, actuated: list[str]) -> dict[str, dict[str, float]]:
    """``{joint: {"kp"|"kd"|"kv": value}}`` from the description's ros2_control blocks, actuated joints only."""
    out: dict[str, dict[str, float]] = {}
    for block in robot.ros2_control:
        if block.plugin == MUJOCO_SYSTEM:
            found = _from_joint_params(block)
        elif block.plugin == MUJOCO_SYSTEM_INTERFACE:
            found = _from_pid_file(block, robot)
        else:
            if block.plugin in GAZEBO_SYSTEMS and "position_proportional_gain" in block.hardware_params:
                _warn("<param name=\"position_proportional_gain\"> is not mapped onto robot_core's servo gains "
                      "(see robot_core/physics/servo_gains.py); the simulator's tuned gains apply",
                      SourceRef(block.source.file, block.source.line, f"ros2_control '{block.name}' <hardware>"))
            continue
        for joint, gains in found.items():
            if joint not in actuated:
                _warn(f"servo gains for '{joint}', which the simulator does not actuate (actuated: {actuated}); "
                      "ignored", SourceRef(block.source.file, block.source.line, f"ros2_control '{block.name}'"))
                continue
            out.setdefault(joint, {}).update(gains)
    return out
