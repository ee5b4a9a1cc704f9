"""range_sensor_broadcaster/RangeSensorBroadcaster: a range sensor's ``<sensor_name>/range`` -> sensor_msgs/Range on
``~/range``.

Parameters (upstream names and defaults): :attr:`RangeSensorBroadcaster.PARAMS`, rendered in
doc/controllers/range_sensor_broadcaster.md. The reading is published as the hardware gives it (REP 117: +inf
when nothing is in sight, as the simulator reports); ``min_range``/``max_range`` only describe the sensor, as
upstream, so a reader discards values outside them.

Output (``emit`` key "range"): :class:`~robot_core.control.messages.RangeData`.
"""

from __future__ import annotations

import numpy as np

from robot_core.control.controller_base import UPDATE_RATE
from robot_core.control.controllers.sensor_broadcaster import SensorBroadcaster, frame_id_param
from robot_core.control.messages import RangeData
from robot_core.parameter_spec import ParamSpec as P


class RangeSensorBroadcaster(SensorBroadcaster):
    type_name = "range_sensor_broadcaster/RangeSensorBroadcaster"
    INTERFACES = ("range",)
    OUTPUT = "range"
    PARAMS = (
        UPDATE_RATE,
        P("sensor_name", "string", "", "the sensor whose <sensor_name>/range is read (must not be empty)"),
        frame_id_param("Range message"),
        P("radiation_type", "int", 0, "sensor_msgs/Range radiation_type: 0 ultrasound, 1 infrared", minimum=0,
          maximum=1),
        P("field_of_view", "double", 0.52, "the arc the reading is valid for", minimum=0.0, unit="rad"),
        P("min_range", "double", 0.52, "the sensor's minimum range", minimum=0.0, unit="m"),
        P("max_range", "double", 4.0, "the sensor's maximum range", minimum=0.0, unit="m"),
        P("variance", "double", 0.0, "variance of the reading", minimum=0.0, unit="m^2"),
    )

    def read_more_params(self) -> None:
        p = self.params
        self.radiation_type = p.int("radiation_type", 0, min_value=0)
        if self.radiation_type > 1:
            raise self.error(f"parameter 'radiation_type' must be 0 (ultrasound) or 1 (infrared), got "
                             f"{self.radiation_type}")
        self.field_of_view = p.float("field_of_view", 0.52, min_value=0.0)
        self.min_range = p.float("min_range", 0.52, min_value=0.0)
        self.max_range = p.float("max_range", 4.0, min_value=0.0)
        self.variance = p.float("variance", 0.0, min_value=0.0)
        if self.max_range < self.min_range:
            raise self.error(f"parameter 'max_range' ({self.max_range}) is below 'min_range' ({self.min_range})")

    def build(self, time: float, values: np.ndarray) -> RangeData:
        return RangeData(self.frame_id, self.radiation_type, self.field_of_view, self.min_range, self.max_range,
                         float(values[0]), self.variance, time)
