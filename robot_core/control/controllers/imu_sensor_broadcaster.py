"""imu_sensor_broadcaster/IMUSensorBroadcaster: an IMU's ten state interfaces -> sensor_msgs/Imu on ``~/imu``.

Parameters (upstream names): :attr:`IMUSensorBroadcaster.PARAMS`, rendered in
doc/controllers/imu_sensor_broadcaster.md. Reads ``<sensor_name>/orientation.x`` ... ``orientation.w``,
``angular_velocity.x/y/z`` and ``linear_acceleration.x/y/z``; the covariances are static (row-major 3x3, all zero
by default: "unknown" per sensor_msgs/Imu would be -1 in the first entry, which the user may set).

Output (``emit`` key "imu"): :class:`~robot_core.control.messages.ImuData`.
"""

from __future__ import annotations

import numpy as np

from robot_core.control.controller_base import UPDATE_RATE
from robot_core.control.controllers.sensor_broadcaster import SensorBroadcaster, frame_id_param
from robot_core.control.messages import ImuData
from robot_core.parameter_spec import ParamSpec as P

_COVARIANCES = ("orientation", "angular_velocity", "linear_acceleration")


def _covariance(what: str) -> P:
    return P(f"static_covariance_{what}", "double[]", [0.0] * 9, f"covariance of {what.replace('_', ' ')} "
             "(row-major 3x3, 9 values)")


class IMUSensorBroadcaster(SensorBroadcaster):
    type_name = "imu_sensor_broadcaster/IMUSensorBroadcaster"
    INTERFACES = (*(f"orientation.{a}" for a in ("x", "y", "z", "w")),
                  *(f"angular_velocity.{a}" for a in ("x", "y", "z")),
                  *(f"linear_acceleration.{a}" for a in ("x", "y", "z")))
    OUTPUT = "imu"
    PARAMS = (
        UPDATE_RATE,
        P("sensor_name", "string", "", "the IMU whose <sensor_name>/orientation.x ... linear_acceleration.z are "
          "read (must not be empty)"),
        frame_id_param("Imu message"),
        *(_covariance(c) for c in _COVARIANCES),
    )

    def read_more_params(self) -> None:
        self._cov = [self.params.float_list(f"static_covariance_{c}", [0.0] * 9, length=9) for c in _COVARIANCES]

    def build(self, time: float, values: np.ndarray) -> ImuData:
        v = values.tolist()
        return ImuData(self.frame_id, v[0:4], v[4:7], v[7:10], list(self._cov[0]), list(self._cov[1]),
                       list(self._cov[2]), time)
