"""A joint velocity limiter made of MuJoCo actuators, so that it runs inside ``mj_step`` with no Python per step.

The engine's effort-mode joints are braked when faster than their URDF velocity limit (see
:mod:`robot_core.physics.actuation`): before every physics step it writes ``k (vmax - qd)`` into the joint's
actuator when ``|qd| > vmax``. That is a Python call per physics step, which keeps ``frame_skip`` steps from
running as one ``mj_step(m, d, nstep)`` call. The same brake as two one-sided MuJoCo actuators per joint:

- ``<prefix>/<joint>/upper``: force ``k (vmax - qd)`` (affine bias, no gain), force range ``(-inf, 0]``: it pushes
  back only while ``qd > vmax``;
- ``<prefix>/<joint>/lower``: force ``k (-vmax - qd)``, force range ``[0, inf)``: only while ``qd < -vmax``.

MuJoCo evaluates and clamps them at every step from that step's velocity, as the engine does, and leaves a
clamped actuator's damping out of the implicit integrators' velocity derivative (checked on MuJoCo 4.0 by
``test/test_velocity_limiter.py``), so below the limit the joint feels nothing of ``k``. The joint's actuator
force range (its URDF effort limit) bounds the sum of motor and brake, as before. ``k`` is the engine's: the
joint inertia at the initial pose over the timestep, x10 under the implicit integrators (the damping is
integrated implicitly).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import mujoco
import numpy as np

PREFIX = "velocity_limiter"
IMPLICIT = (mujoco.mjtIntegrator.mjINT_IMPLICIT, mujoco.mjtIntegrator.mjINT_IMPLICITFAST)
# Force range of the braking side: wide enough never to clamp the brake itself (the joint's range does).
UNBOUNDED_FORCE = 1e10


def add_velocity_limiters(spec: mujoco.MjSpec, joints: Sequence[str]) -> None:
    """Two inactive (zero-gain) braking actuators per joint; :func:`set_velocity_limits` arms them."""
    for joint in joints:
        for side, lo, hi in (("upper", -UNBOUNDED_FORCE, 0.0), ("lower", 0.0, UNBOUNDED_FORCE)):
            act = spec.add_actuator(name=f"{PREFIX}/{joint}/{side}", target=joint)
            act.trntype = mujoco.mjtTrn.mjTRN_JOINT
            act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
            act.gainprm[0] = 0.0
            act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
            act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
            act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
            act.forcerange = [lo, hi]


def limiter_gains(model: mujoco.MjModel, inertia: np.ndarray) -> np.ndarray:
    """The engine's brake gain per joint of ``inertia``: inertia / timestep, x10 under the implicit integrators."""
    factor = 10.0 if model.opt.integrator in IMPLICIT else 1.0
    return np.asarray(inertia, dtype=float) / model.opt.timestep * factor


def set_velocity_limits(model: mujoco.MjModel, joints: Sequence[str], vmax: Sequence[float],
                        gains: Sequence[float]) -> None:
    """Arm the limiters of ``joints``: ``vmax`` (rad/s or m/s; inf leaves the joint unbraked), gain ``k``."""
    for joint, v, k in zip(joints, vmax, gains, strict=True):
        for side, sign in (("upper", 1.0), ("lower", -1.0)):
            i = model.actuator(f"{PREFIX}/{joint}/{side}").id
            armed = math.isfinite(v) and k > 0
            model.actuator_biasprm[i, :3] = (sign * k * v, 0.0, -k) if armed else (0.0, 0.0, 0.0)
