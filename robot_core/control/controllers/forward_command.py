"""Forward-command controllers: ``~/commands`` (Float64MultiArray) straight to command interfaces.

Types: forward_command_controller/ForwardCommandController (params ``joints``, ``interface_name``) and the
fixed-interface variants position_controllers/JointGroupPositionController,
velocity_controllers/JointGroupVelocityController, effort_controllers/JointGroupEffortController (``joints``).
The tables are each class's ``PARAMS``, rendered in doc/controllers/forward_command.md.

The node calls :meth:`ForwardCommandController.set_command` with each message's ``data``; a command of the
wrong size or with a non-finite value raises ControlError and is not applied (upstream only logs size errors).

Beyond upstream:
  * on activation the command starts at a hold value (position: the measured position, velocity/effort: 0)
    instead of whatever the interface held before, so activation never jumps;
  * ``command_timeout`` (seconds, 0 = off, default): when no command arrived for that long, velocity and
    effort commands fall to 0 and position commands hold the last value. A new command resumes.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence

import numpy as np

from robot_core.control.controller_base import UPDATE_RATE, Controller
from robot_core.parameter_spec import ParamSpec as P

_JOINTS = P("joints", "string[]", [], "the joints commanded, in the order of the ~/commands array (must not be "
            "empty at configure)")
_INTERFACE = P("interface_name", "string", "", "the command interface written for every joint, e.g. position, "
               "velocity or effort (ForwardCommandController only; the JointGroup variants fix it)")
_TIMEOUT = P("command_timeout", "double", 0.0, "with no command for this long, velocity and effort commands fall to "
             "0 and position commands hold the last value; 0 = off", read_only=False, minimum=0.0, unit="s")


class ForwardCommandController(Controller):
    type_name = "forward_command_controller/ForwardCommandController"
    PARAMS = (UPDATE_RATE, _JOINTS, _INTERFACE, _TIMEOUT)
    fixed_interface: str | None = None

    def on_init(self) -> None:
        self._read_params()
        self._pending: np.ndarray | None = None
        self._lock = threading.Lock()

    def _read_params(self) -> None:
        p = self.params
        self.joints = p.str_list("joints", [])
        if self.fixed_interface is not None:
            self.interface_name = self.fixed_interface
        else:
            self.interface_name = p.str("interface_name", "")
        self.command_timeout = p.float("command_timeout", 0.0)

    def on_configure(self) -> None:
        self._read_params()
        if not self.joints:
            raise self.error("'joints' parameter is empty")
        if not self.interface_name:
            raise self.error("'interface_name' parameter is empty")

    def command_interface_configuration(self) -> list[str]:
        return [f"{j}/{self.interface_name}" for j in self.joints]

    def on_activate(self) -> None:
        if self.interface_name == "position":
            hold = [self.read_hardware_state(f"{j}/position") for j in self.joints]
            current = self.command_interfaces.get() if self.command_interfaces is not None else np.full(
                len(self.joints), np.nan)
            cmd = np.array([h if math.isfinite(h) else c for h, c in zip(hold, current, strict=True)])
        else:
            cmd = np.zeros(len(self.joints))
        self._command = cmd
        with self._lock:
            self._pending = None
        self._last_command_time: float | None = None
        self._timed_out = False
        if self.command_interfaces is not None:
            self.command_interfaces.set(self._command)

    def set_command(self, values: Sequence[float]) -> None:
        """Stage a new command (thread-safe); applied at the next update."""
        arr = np.asarray(values, dtype=float).reshape(-1)
        if arr.size != len(self.joints):
            raise self.error(f"command size ({arr.size}) does not match number of interfaces ({len(self.joints)})")
        bad = ~np.isfinite(arr)
        if np.any(bad):
            k = int(np.flatnonzero(bad)[0])
            raise self.error(f"command for '{self.joints[k]}/{self.interface_name}' is not finite ({arr[k]})")
        with self._lock:
            self._pending = arr

    def update(self, time: float, period: float) -> None:
        with self._lock:
            new, self._pending = self._pending, None
        if new is not None:
            self._command = new
            self._last_command_time = time
            self._timed_out = False
        elif (self.command_timeout > 0.0 and self._last_command_time is not None and not self._timed_out
              and time - self._last_command_time > self.command_timeout):
            self._timed_out = True
            if self.interface_name != "position":
                self._command = np.zeros(len(self.joints))
        if self.command_interfaces is not None:
            self.command_interfaces.set(self._command)

    def on_time_jump(self, previous: float, now: float) -> None:
        """``command_timeout`` counts from the jump: the last command's time is on the old clock."""
        if self._last_command_time is not None:
            self._last_command_time = now

    @property
    def timed_out(self) -> bool:
        return getattr(self, "_timed_out", False)


class JointGroupPositionController(ForwardCommandController):
    type_name = "position_controllers/JointGroupPositionController"
    PARAMS = (UPDATE_RATE, _JOINTS, _TIMEOUT)
    fixed_interface = "position"


class JointGroupVelocityController(ForwardCommandController):
    type_name = "velocity_controllers/JointGroupVelocityController"
    PARAMS = (UPDATE_RATE, _JOINTS, _TIMEOUT)
    fixed_interface = "velocity"


class JointGroupEffortController(ForwardCommandController):
    type_name = "effort_controllers/JointGroupEffortController"
    PARAMS = (UPDATE_RATE, _JOINTS, _TIMEOUT)
    fixed_interface = "effort"
