"""Base of every reacher: a weight, and joint-velocity outputs turned into whatever the output var needs.

Every reacher computes a joint velocity. For a velocity-like (``sum``) output var it contributes that
velocity; for a position-reference var it contributes the increment ``velocity * dt``. The coupler scales each
contribution by the reacher's ``weight`` and sums per var (see :mod:`robot_core.rbc.mixer`), so reachers mix
the same way whatever the output var is.
"""

from __future__ import annotations

from collections.abc import Sequence

from robot_core.rbc.context import POSITION_MODE
from robot_core.rbc.instance import ParamSpec, RbcInstance, UpdateResult

WEIGHT = ParamSpec("weight", "float", 1.0, "scale of this reacher's outputs before mixing (0 disables)", minimum=0.0)


class Reacher(RbcInstance):
    """Commands cmd vars; outputs are unweighted, the coupler applies ``weight``."""

    KIND = "reacher"

    def emit_velocities(self, result: UpdateResult, joints: Sequence[str], qdot: Sequence[float], dt: float,
                        output_var: str) -> None:
        """Add joint velocities as outputs to ``output_var`` (increments when it is a position reference)."""
        if self.context.var_mode(output_var) == POSITION_MODE and not self.context.emit_rates:
            for j, v in zip(joints, qdot, strict=True):
                result.commands[(j, output_var)] = float(v) * dt
        else:
            for j, v in zip(joints, qdot, strict=True):
                result.commands[(j, output_var)] = float(v)
