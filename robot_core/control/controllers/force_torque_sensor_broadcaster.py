"""force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster: a force-torque sensor's six state interfaces ->
geometry_msgs/WrenchStamped on ``~/wrench``.

Parameters (upstream names): :attr:`ForceTorqueSensorBroadcaster.PARAMS`, rendered in
doc/controllers/force_torque_sensor_broadcaster.md. The interfaces are ``<sensor_name>/force.x`` ...
``<sensor_name>/torque.z``, or any subset named one by one in ``interface_names.<force|torque>.<x|y|z>`` (a cell
with fewer axes); giving both is refused, as upstream. An axis without an interface is NaN in the message.

Output (``emit`` key "wrench"): :class:`~robot_core.control.messages.WrenchData`.
"""

from __future__ import annotations

import numpy as np

from robot_core.control.controller_base import UPDATE_RATE
from robot_core.control.controllers.sensor_broadcaster import SensorBroadcaster, frame_id_param
from robot_core.control.messages import WrenchData
from robot_core.parameter_spec import ParamSpec as P

_AXES = tuple(f"{kind}.{axis}" for kind in ("force", "torque") for axis in ("x", "y", "z"))


def _custom(axis: str) -> P:
    return P(f"interface_names.{axis}", "string", "", f"the state interface read as {axis} (instead of "
             f"sensor_name; empty: none)")


class ForceTorqueSensorBroadcaster(SensorBroadcaster):
    type_name = "force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster"
    INTERFACES = _AXES
    OUTPUT = "wrench"
    PARAMS = (
        UPDATE_RATE,
        frame_id_param("wrench"),
        P("sensor_name", "string", "", "the sensor whose <sensor_name>/force.x ... torque.z are read (not together "
          "with interface_names)"),
        *(_custom(axis) for axis in _AXES),
    )

    def read_more_params(self) -> None:
        self._custom = [self.params.str(f"interface_names.{axis}", "") for axis in _AXES]
        if self.sensor_name and any(self._custom):
            raise self.error("parameters 'sensor_name' and 'interface_names' cannot be set together")

    def interface_names(self) -> list[str]:
        return self._custom if any(self._custom) else super().interface_names()

    def build(self, time: float, values: np.ndarray) -> WrenchData:
        v = values.tolist()
        return WrenchData(self.frame_id, v[:3], v[3:], time)
