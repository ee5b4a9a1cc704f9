"""What the sensor broadcasters share (ros2_controllers' semantic components): a fixed list of state interfaces
named ``<sensor_name>/<interface>``, read once per cycle and handed on as one message-shaped value.

Each broadcaster (force-torque, IMU, range, pose) is its own module and doc page; this base only reads the
interface names and ``frame_id`` and copies the values, so the cycle costs one gather. Building the message
happens off the loop (:class:`~robot_core.control.controller_base.Deferred`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from robot_core.control.controller_base import Controller, Deferred
from robot_core.parameter_spec import ParamSpec as P


def frame_id_param(what: str) -> P:
    return P("frame_id", "string", "", f"frame_id of the published {what} (the sensor's frame; must not be empty)")


class SensorBroadcaster(Controller):
    """Reads :meth:`interface_names` (``NAME_PARAM``/<standard interface>) and emits ``OUTPUT`` each update."""

    #: the standard interface names after ``<sensor>/``, in the order :meth:`build` receives their values
    INTERFACES: ClassVar[tuple[str, ...]] = ()
    NAME_PARAM: ClassVar[str] = "sensor_name"
    OUTPUT: ClassVar[str] = ""

    def on_init(self) -> None:
        self._read_params()

    def on_configure(self) -> None:
        self._read_params()

    def _read_params(self) -> None:
        self.frame_id = self.params.str("frame_id", "")
        if not self.frame_id:
            raise self.error("parameter 'frame_id' must not be empty (the frame the sensor's values are in)")
        self.sensor_name = self.params.str(self.NAME_PARAM, "")
        self.read_more_params()
        names = self.interface_names()
        if not any(names):
            raise self.error(f"parameter '{self.NAME_PARAM}' must name the sensor whose interfaces are read")
        self._names = names

    def read_more_params(self) -> None:
        """Hook: the broadcaster's own parameters."""

    def interface_names(self) -> list[str]:
        """Full interface name per entry of INTERFACES ("" where the sensor lacks that axis)."""
        if not self.sensor_name:
            return [""] * len(self.INTERFACES)
        return [f"{self.sensor_name}/{i}" for i in self.INTERFACES]

    def state_interface_configuration(self) -> list[str]:
        return [n for n in self._names if n]

    def on_activate(self) -> None:
        present = np.array([bool(n) for n in self._names])
        self._rows = np.flatnonzero(present)

    def update(self, time: float, period: float) -> None:
        values = np.full(len(self._names), np.nan)
        if self.state_interfaces is not None:
            values[self._rows] = self.state_interfaces.get()
        self.emit(self.OUTPUT, Deferred(self.build, time, values))

    def build(self, time: float, values: np.ndarray) -> Any:
        """The emitted value from one cycle's values (INTERFACES order, NaN where absent)."""
        raise NotImplementedError
