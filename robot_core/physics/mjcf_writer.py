"""RobotModel -> MJCF text: the spec the simulator would compile, written by MuJoCo (``MjSpec.to_xml``).

A robot read from MJCF is written as its file (includes and defaults resolved by MuJoCo, unnamed bodies and
joints named as the reader names them). Any other robot is written from the physics builder's spec
(:func:`robot_core.physics.builder.prepare_spec`), with one warning listing what MJCF does not carry.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from robot_core.model.mjcf_reader import load_spec
from robot_core.model.robot_model import RobotModel, RobotModelError, RobotModelWarning, SourceRef
from robot_core.physics.builder import prepare_spec


def _not_carried(robot: RobotModel) -> list[str]:
    lost = []
    if robot.ros2_control:
        lost.append(f"ros2_control block(s) {[b.name for b in robot.ros2_control]} (no actuators are written: "
                    "the simulator adds its own servos)")
    if robot.transmissions:
        lost.append(f"{len(robot.transmissions)} transmission(s)")
    if robot.rbc_nodes():
        lost.append("rbc tags")
    limited = [j.name for j in robot.joints.values() if j.limit is not None and (j.limit.effort or j.limit.velocity)]
    if limited:
        lost.append(f"effort/velocity limits of joint(s) {', '.join(limited)}")
    return lost


def write_mjcf(robot: RobotModel) -> str:
    """MJCF text of ``robot`` (see the module docstring)."""
    if robot.mjcf is not None:
        spec = load_spec(robot.mjcf, robot.source_file)
    else:
        lost = _not_carried(robot)
        if lost:
            warnings.warn(RobotModelWarning(f"{SourceRef(robot.source_file, None, f'robot {robot.name!r}')}: MJCF "
                                            f"cannot carry: {'; '.join(lost)}"), stacklevel=2)
        spec = prepare_spec(robot).spec
    try:
        return spec.to_xml()
    except ValueError as exc:
        raise RobotModelError(f"MuJoCo cannot write the MJCF: {' '.join(str(exc).split())}",
                              SourceRef(robot.source_file)) from None


def save_mjcf(robot: RobotModel, path: str | os.PathLike) -> None:
    Path(os.fspath(path)).write_text(write_mjcf(robot))
