"""physics/velocity_limiter.py: the brake made of two one-sided MuJoCo actuators acts only beyond the limit."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from robot_core.physics.velocity_limiter import add_velocity_limiters, limiter_gains, set_velocity_limits

VMAX = 2.0


def arm(limited: bool, integrator: int = mujoco.mjtIntegrator.mjINT_IMPLICITFAST) -> tuple[mujoco.MjModel, float]:
    """A 1 m rod on a hinge (no gravity) driven by a torque motor; with ``limited`` its limiter armed at VMAX."""
    spec = mujoco.MjSpec()
    spec.option.integrator = integrator
    spec.option.gravity = [0, 0, 0]
    body = spec.worldbody.add_body(name="rod")
    body.add_joint(name="hinge", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 0, 1])
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_CAPSULE, fromto=[0, 0, 0, 1, 0, 0], size=[0.05, 0, 0], mass=1.0)
    spec.add_actuator(name="motor", target="hinge", trntype=mujoco.mjtTrn.mjTRN_JOINT)
    add_velocity_limiters(spec, ["hinge"])
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    full = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, full)
    inertia = float(full[0, 0])
    if limited:
        set_velocity_limits(model, ["hinge"], [VMAX], limiter_gains(model, np.array([inertia])))
    return model, inertia


def spin(model: mujoco.MjModel, torque: float, steps: int, qvel0: float = 0.0) -> np.ndarray:
    data = mujoco.MjData(model)
    data.qvel[0] = qvel0
    data.ctrl[model.actuator("motor").id] = torque
    out = []
    for _ in range(steps):
        mujoco.mj_step(model, data)
        out.append(data.qvel[0])
    return np.array(out)


def test_below_the_limit_the_joint_feels_nothing():
    """Same bits as without the limiter while |qd| < vmax: the clamped actuators add neither force nor implicit
    damping (MuJoCo leaves clamped actuators out of the velocity derivative)."""
    free, _ = arm(limited=False)
    limited, _ = arm(limited=True)
    a, b = spin(free, 0.5, 400), spin(limited, 0.5, 400)
    assert np.max(np.abs(a)) < VMAX and np.max(np.abs(a)) > 0.5  # it did speed up, staying below the limit
    assert np.array_equal(a, b)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_beyond_the_limit_the_joint_is_braked_to_it(sign):
    free, _ = arm(limited=False)
    limited, inertia = arm(limited=True)
    torque = sign * 20.0
    unbraked, braked = spin(free, torque, 1000), spin(limited, torque, 1000)
    assert abs(unbraked[-1]) > 10 * VMAX
    k = limiter_gains(limited, np.array([inertia]))[0]
    # Steady state: the brake k (vmax - |qd|) balances the motor: |qd| = vmax + |torque| / k.
    assert abs(braked[-1]) == pytest.approx(VMAX + abs(torque) / k, rel=1e-3)
    assert np.sign(braked[-1]) == sign
    # A joint thrown faster than the limit with no torque is brought back to it.
    thrown = spin(limited, 0.0, 200, qvel0=sign * 3 * VMAX)
    assert abs(thrown[-1]) == pytest.approx(VMAX, rel=1e-3)


def test_unlimited_or_unarmed_joints_have_inert_actuators():
    model, inertia = arm(limited=False)
    set_velocity_limits(model, ["hinge"], [float("inf")], limiter_gains(model, np.array([inertia])))
    assert not np.any(model.actuator_biasprm[1:3, :3])
    euler, _ = arm(False, mujoco.mjtIntegrator.mjINT_EULER)
    # The engine's gains: inertia / dt (deadbeat) for explicit integrators, 10x for the implicit ones.
    assert limiter_gains(euler, np.array([1.0]))[0] == pytest.approx(1.0 / euler.opt.timestep)
    assert limiter_gains(model, np.array([1.0]))[0] == pytest.approx(10.0 / model.opt.timestep)
