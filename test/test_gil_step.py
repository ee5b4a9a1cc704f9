"""The lock-holding mj_step gives exactly the binding's physics, and falls back to the binding where the direct
call could not turn a MuJoCo error into an exception."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from robot_core.model import load_robot
from robot_core.physics import gil_step
from robot_core.physics.engine import PhysicsEngine
from robot_core.physics.gil_step import GilHoldingStep

XML = """<mujoco><option timestep="0.002"/><worldbody><geom type="plane" size="2 2 .1"/>
<body pos="0 0 .5"><freejoint/><geom type="box" size=".1 .05 .02"/></body>
<body pos=".03 0 .8"><freejoint/><geom type="capsule" size=".03 .1"/></body></worldbody></mujoco>"""


def _pair():
    m = mujoco.MjModel.from_xml_string(XML)
    return m, mujoco.MjData(m), mujoco.MjData(m)


def test_same_physics_as_the_binding_including_contacts():
    step, why = gil_step._c_mj_step()
    if step is None:
        pytest.skip(f"direct call unavailable here: {why}")
    m, d_ref, d = _pair()
    stepper = GilHoldingStep(m, d)
    assert stepper.holds_lock
    for _ in range(400):  # falls, lands, tumbles: contacts in the constraint solver
        mujoco.mj_step(m, d_ref)
        stepper(1)
    stepper(7)
    mujoco.mj_step(m, d_ref, nstep=7)
    assert d_ref.ncon > 0 and d.ncon == d_ref.ncon
    np.testing.assert_array_equal(d.qpos, d_ref.qpos)
    np.testing.assert_array_equal(d.qvel, d_ref.qvel)
    assert d.time == d_ref.time


def test_falls_back_to_the_binding_near_the_arena_limit(monkeypatch):
    m, d_ref, d = _pair()
    monkeypatch.setattr(gil_step, "ARENA_LIMIT", 0.0)  # every high-water mark is past a zero limit
    stepper = GilHoldingStep(m, d)
    assert not stepper.holds_lock
    stepper(50)
    mujoco.mj_step(m, d_ref, nstep=50)
    np.testing.assert_array_equal(d.qpos, d_ref.qpos)


def test_engine_option_changes_nothing_but_the_lock():
    from conftest import URDF_DIR

    robot = load_robot(str(URDF_DIR / "rc_arm.urdf"))
    plain, holding = PhysicsEngine(robot), PhysicsEngine(robot, hold_gil=True)
    for eng in (plain, holding):
        eng.reset()
        eng.set_commands(["joint2", "joint4"], positions=[0.6, 1.2])
        eng.step(300)
    assert holding._gil_step is not None  # the option took the lock-holding path
    np.testing.assert_array_equal(plain.positions(), holding.positions())
    np.testing.assert_array_equal(plain.velocities(), holding.velocities())
