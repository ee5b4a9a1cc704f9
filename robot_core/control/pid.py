"""A 1-D PID controller with integral clamping and back-calculation anti-windup.

Semantics follow AGX Dynamics' ``agxModel::PidController1D``: forward-Euler
discretisation, derivative as the error difference over the time step,
integral as the running sum of error x time step, and two independent
anti-windup mechanisms:

* clamping: the integral *term* (``i * integral of e``) is kept inside
  ``[i_clamp_min, i_clamp_max]`` (off while those are infinite, the default);
* back-calculation: when the output limits ``[u_min, u_max]`` are finite and the
  unclamped output leaves them, the integral term is recomputed to its value
  before this step (integration is suspended) -- but only while the error would
  drive the output further into the limit, so the integral still unwinds as
  soon as the error changes sign.

The derivative can act on the measurement instead of the error (no "derivative
kick" when the set point jumps), or be supplied directly (``error_dot``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class PidGains:
    p: float = 0.0
    i: float = 0.0
    d: float = 0.0
    i_clamp_min: float = -math.inf
    i_clamp_max: float = math.inf
    u_min: float = -math.inf
    u_max: float = math.inf
    antiwindup: bool = True
    derivative_on_measurement: bool = False

    def __post_init__(self) -> None:
        for name in ("p", "i", "d"):
            v = getattr(self, name)
            if not math.isfinite(v):
                raise ValueError(f"PID gain {name} must be finite, got {v}")
        if self.i_clamp_min > self.i_clamp_max:
            raise ValueError(f"i_clamp_min ({self.i_clamp_min}) > i_clamp_max ({self.i_clamp_max})")
        if self.u_min > self.u_max:
            raise ValueError(f"u_min ({self.u_min}) > u_max ({self.u_max})")


class Pid:
    def __init__(self, gains: PidGains | None = None, **kwargs: float | bool):
        self.gains = gains if gains is not None else PidGains(**kwargs)  # type: ignore[arg-type]
        self.reset()

    def reset(self) -> None:
        self.i_term = 0.0
        self.p_term = 0.0
        self.d_term = 0.0
        self.output = 0.0
        self._prev_error: float | None = None
        self._prev_measurement: float | None = None

    def compute(self, error: float, dt: float, error_dot: float | None = None,
                measurement: float | None = None) -> float:
        """Advance one step of ``dt`` seconds and return the (limited) output."""
        g = self.gains
        if not (dt > 0.0 and math.isfinite(dt) and math.isfinite(error)):
            return self.output
        i_prev = self.i_term
        i_term = min(max(i_prev + g.i * error * dt, g.i_clamp_min), g.i_clamp_max)
        if error_dot is not None and math.isfinite(error_dot):
            d_term = g.d * error_dot
        elif g.derivative_on_measurement and measurement is not None:
            d_term = 0.0 if self._prev_measurement is None else -g.d * (measurement - self._prev_measurement) / dt
        else:
            d_term = 0.0 if self._prev_error is None else g.d * (error - self._prev_error) / dt
        p_term = g.p * error
        u = p_term + i_term + d_term
        if g.antiwindup and ((u > g.u_max and i_term > i_prev) or (u < g.u_min and i_term < i_prev)):
            # back-calculation: undo this step's integration while it only deepens the saturation
            i_term = i_prev
            u = p_term + i_term + d_term
        self.i_term, self.p_term, self.d_term = i_term, p_term, d_term
        self._prev_error = error
        self._prev_measurement = measurement
        self.output = min(max(u, g.u_min), g.u_max)
        return self.output
