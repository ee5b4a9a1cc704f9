"""pid_controller/PidController: one PID per degree of freedom, reference from ``~/reference``.

Parameters (ros2_controllers names): :attr:`PidController.PARAMS`, rendered in doc/controllers/pid_controller.md
(see robot_core.control.pid for the exact semantics of the clamps and the anti-windup).

Input: :meth:`set_reference` (control_msgs/MultiDOFCommand: dof_names, values, values_dot). Until a DOF has a
reference its output holds (0 for velocity/effort interfaces, the measured position for position).
Output (``emit`` key "controller_state"): MultiDofStateData with one SingleDofStateData per DOF.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence

import numpy as np

from robot_core.control.controller_base import UPDATE_RATE, Controller
from robot_core.control.messages import MultiDofStateData, SingleDofStateData
from robot_core.control.pid import Pid, PidGains
from robot_core.parameter_spec import ParamSpec as P


def _gain(key: str, type_: str, default: object, text: str, **kw: object) -> P:
    return P(f"gains.<dof>.{key}", type_, default, text, read_only=False, family=True, **kw)  # type: ignore[arg-type]


def _wrap(x: float) -> float:
    return (x + math.pi) % (2.0 * math.pi) - math.pi


class PidController(Controller):
    type_name = "pid_controller/PidController"
    PARAMS = (
        UPDATE_RATE,
        P("dof_names", "string[]", [], "the degrees of freedom controlled, usually joint names (must not be empty "
          "at configure)"),
        P("command_interface", "string", "velocity", "the command interface each DOF's PID output is written to "
          "(<dof>/<command_interface>)"),
        P("reference_and_state_interfaces", "string[]", ["position"], "the state interfaces fed back, one or two; "
          "with two the second is the rate of the first (e.g. [position, velocity]) and the error rate is "
          "values_dot minus the measured rate"),
        P("use_external_measured_states", "bool", False, "take the feedback from ~/measured_state instead of state "
          "interfaces (no state interface is claimed)"),
        _gain("p", "double", 0.0, "proportional gain"),
        _gain("i", "double", 0.0, "integral gain"),
        _gain("d", "double", 0.0, "derivative gain"),
        _gain("i_clamp_min", "double", -math.inf, "lower bound of the integral term", finite=False),
        _gain("i_clamp_max", "double", math.inf, "upper bound of the integral term", finite=False),
        _gain("u_clamp_min", "double", -math.inf, "lower bound of the output", finite=False),
        _gain("u_clamp_max", "double", math.inf, "upper bound of the output", finite=False),
        _gain("antiwindup", "bool", True, "back-calculation anti-windup while the output is at a finite u_clamp "
              "limit (integration stops while the error pushes further into the limit)"),
        _gain("feedforward_gain", "double", 0.0, "output += feedforward_gain * reference"),
        _gain("angle_wraparound", "bool", False, "the error is wrapped to [-pi, pi) (continuous joints)"),
    )

    def on_init(self) -> None:
        self._read_params()
        self._ref_lock = threading.Lock()
        self._staged_ref: tuple[np.ndarray, np.ndarray] | None = None
        self._staged_meas: tuple[np.ndarray, np.ndarray] | None = None

    def _read_params(self) -> None:
        p = self.params
        self.dof_names = p.str_list("dof_names", [])
        self.command_interface = p.str("command_interface", "velocity")
        self.state_ifaces = p.str_list("reference_and_state_interfaces", ["position"])
        self.use_external = p.bool("use_external_measured_states", False)

    def on_configure(self) -> None:
        self._read_params()
        if not self.dof_names:
            raise self.error("'dof_names' parameter is empty")
        if len(self.state_ifaces) not in (1, 2):
            raise self.error("'reference_and_state_interfaces' must have one or two entries")
        self.pids: list[Pid] = []
        self.ff = np.zeros(len(self.dof_names))
        self.wrap = np.zeros(len(self.dof_names), dtype=bool)
        p = self.params
        for k, dof in enumerate(self.dof_names):
            base = f"gains.{dof}"
            try:
                gains = PidGains(
                    p=p.float(f"{base}.p", 0.0), i=p.float(f"{base}.i", 0.0), d=p.float(f"{base}.d", 0.0),
                    i_clamp_min=p.float(f"{base}.i_clamp_min", -math.inf),
                    i_clamp_max=p.float(f"{base}.i_clamp_max", math.inf),
                    u_min=p.float(f"{base}.u_clamp_min", -math.inf), u_max=p.float(f"{base}.u_clamp_max", math.inf),
                    antiwindup=p.bool(f"{base}.antiwindup", True))
            except ValueError as exc:
                raise self.error(f"gains for '{dof}': {exc}") from None
            self.pids.append(Pid(gains))
            self.ff[k] = p.float(f"{base}.feedforward_gain", 0.0)
            self.wrap[k] = p.bool(f"{base}.angle_wraparound", False)

    def command_interface_configuration(self) -> list[str]:
        return [f"{d}/{self.command_interface}" for d in self.dof_names]

    def state_interface_configuration(self) -> list[str]:
        if self.use_external:
            return []
        return [f"{d}/{i}" for i in self.state_ifaces for d in self.dof_names]

    def on_activate(self) -> None:
        n = len(self.dof_names)
        self.reference = np.full(n, np.nan)
        self.reference_dot = np.full(n, np.nan)
        self.measured = np.zeros(n)
        self.measured_dot = np.full(n, np.nan)
        for pid in self.pids:
            pid.reset()
        if self.command_interface == "position":
            self.hold = np.array([self.read_hardware_state(f"{d}/position") for d in self.dof_names])
        else:
            self.hold = np.zeros(n)
        self.output = self.hold.copy()
        with self._ref_lock:
            self._staged_ref = None
            self._staged_meas = None
        if self.command_interfaces is not None:
            self.command_interfaces.set(np.where(np.isfinite(self.output), self.output, 0.0))

    def set_reference(self, dof_names: Sequence[str], values: Sequence[float],
                      values_dot: Sequence[float] = ()) -> None:
        """Stage a MultiDOFCommand (thread-safe). Unlisted DOFs keep their reference."""
        idx = self._indices(dof_names, "reference")
        vals = np.asarray(values, dtype=float).reshape(-1)
        if vals.size != len(idx):
            raise self.error(f"reference has {vals.size} values for {len(idx)} dof_names")
        dots = np.asarray(values_dot, dtype=float).reshape(-1)
        if dots.size not in (0, len(idx)):
            raise self.error(f"reference has {dots.size} values_dot for {len(idx)} dof_names")
        if not np.all(np.isfinite(vals)):
            raise self.error("reference values must be finite")
        ref = np.full(len(self.dof_names), np.nan)
        ref_dot = np.full(len(self.dof_names), np.nan)
        ref[idx] = vals
        if dots.size:
            ref_dot[idx] = dots
        with self._ref_lock:
            if self._staged_ref is not None:
                old_ref, old_dot = self._staged_ref
                ref = np.where(np.isnan(ref), old_ref, ref)
                ref_dot = np.where(np.isnan(ref_dot), old_dot, ref_dot)
            self._staged_ref = (ref, ref_dot)

    def set_measured_state(self, dof_names: Sequence[str], values: Sequence[float],
                           values_dot: Sequence[float] = ()) -> None:
        """External feedback (``use_external_measured_states``), thread-safe."""
        idx = self._indices(dof_names, "measured state")
        meas = np.full(len(self.dof_names), np.nan)
        meas_dot = np.full(len(self.dof_names), np.nan)
        meas[idx] = np.asarray(values, dtype=float).reshape(-1)
        if len(values_dot):
            meas_dot[idx] = np.asarray(values_dot, dtype=float).reshape(-1)
        with self._ref_lock:
            self._staged_meas = (meas, meas_dot)

    def _indices(self, names: Sequence[str], what: str) -> list[int]:
        pos = {d: i for i, d in enumerate(self.dof_names)}
        unknown = [n for n in names if n not in pos]
        if unknown:
            raise self.error(f"{what} names unknown DOFs {unknown} (dof_names: {self.dof_names})")
        return [pos[n] for n in names]

    def update(self, time: float, period: float) -> None:
        with self._ref_lock:
            staged, self._staged_ref = self._staged_ref, None
            meas, self._staged_meas = self._staged_meas, None
        if staged is not None:
            ref, ref_dot = staged
            given = ~np.isnan(ref)
            self.reference[given] = ref[given]
            self.reference_dot[given] = ref_dot[given]
        n = len(self.dof_names)
        if self.use_external:
            if meas is not None:
                ok = np.isfinite(meas[0])
                self.measured[ok] = meas[0][ok]
                self.measured_dot = meas[1]
        elif self.state_interfaces is not None:
            vals = self.state_interfaces.get()
            self.measured = vals[:n]
            self.measured_dot = vals[n:2 * n] if len(self.state_ifaces) == 2 else np.full(n, np.nan)
        states = []
        for k, pid in enumerate(self.pids):
            ref = self.reference[k]
            fb = float(self.measured[k])
            fb_dot = float(self.measured_dot[k])
            if math.isnan(ref):
                self.output[k] = self.hold[k] if math.isfinite(self.hold[k]) else 0.0
                err = err_dot = math.nan
            else:
                err = _wrap(ref - fb) if self.wrap[k] else ref - fb
                err_dot = (float(self.reference_dot[k]) - fb_dot
                           if math.isfinite(self.reference_dot[k]) and math.isfinite(fb_dot) else None)
                self.output[k] = self.ff[k] * ref + pid.compute(err, period, err_dot)
                err_dot = math.nan if err_dot is None else err_dot
            states.append(SingleDofStateData(self.dof_names[k], float(ref), fb, fb_dot, err, err_dot, period,
                                             float(self.output[k])))
        if self.command_interfaces is not None:
            self.command_interfaces.set(self.output)
        self.emit("controller_state", MultiDofStateData(states, time))
