"""A position servo with a velocity feed-forward tracks a ramp without the lag of the joint's own losses
(robot_core/physics/actuation.py: ``losses(v_ff)`` in the position mode's effort)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import URDF_DIR

from robot_core.model import load_robot
from robot_core.physics.engine import PhysicsEngine


@pytest.mark.parametrize("speed", [0.5, -0.8])
def test_a_light_wrist_with_damping_and_friction_tracks_a_ramp(speed):
    """rc_arm's joint7: URDF damping 0.2, friction 0.1, and inertia-based gains of kp ~7 N m/rad, so the joint's
    losses alone would make it lag by (0.2 |v| + 0.1) / kp, ~20-40 mrad; with them in the feed-forward the lag
    is what the servo's bandwidth leaves of the ramp (about a millirad)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eng = PhysicsEngine(load_robot(str(URDF_DIR / "rc_arm.urdf")), timestep=1e-3)
    k = eng.joint_names.index("joint7")
    kp = eng.gains()["joint7"]["kp"]
    eng.step(200)
    q0 = float(eng.positions()[k])
    lags = []
    for t in range(1, 601):
        target = q0 + speed * t * eng.timestep
        eng.set_commands(["joint7"], positions=[target], velocities=[speed])
        eng.step()
        lags.append(target - float(eng.positions()[k]))
    loss_lag = (0.2 * abs(speed) + 0.1) / kp
    assert loss_lag > 0.015  # the case this guards: losses the gains alone would not hide
    assert np.max(np.abs(lags[300:])) < 0.1 * loss_lag, (max(lags[300:], key=abs), loss_lag)
    assert float(eng.velocities()[k]) == pytest.approx(speed, abs=0.02)
