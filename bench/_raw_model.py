"""The anchors' bare MuJoCo model: the engine's own model compiled again from its spec, with no robot_core code
left in the step, shared by ``bench/simulator.py`` (raw ``mj_step`` rows) and ``bench/_bare_sim_node.py`` (the
simulator node's anchor), so both anchors step exactly what the engine steps.

A helper, not a benchmark: ``make bench`` skips ``bench/_*.py``.
"""

from __future__ import annotations

import warnings
from typing import Any

import mujoco


def raw_model(engine: Any) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """``engine``'s (a PhysicsEngine) model compiled bare from its spec, with the engine's servo gains, joint
    limits, hold command and state, forward-computed: what the engine steps, minus the engine."""
    model = engine.built.spec.compile()
    model.actuator_gainprm[:] = engine.model.actuator_gainprm
    model.actuator_biasprm[:] = engine.model.actuator_biasprm
    model.jnt_limited[:] = engine.model.jnt_limited
    data = mujoco.MjData(model)
    data.qpos[:] = engine.data.qpos
    data.ctrl[:] = engine.data.ctrl
    mujoco.mj_forward(model, data)
    return model, data


def raw_model_of(urdf: str, timestep: float = 1e-3) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """:func:`raw_model` of the engine robot_core builds for the robot file ``urdf`` (its warnings silenced)."""
    from robot_core.model import load_robot
    from robot_core.physics.engine import PhysicsEngine

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return raw_model(PhysicsEngine(load_robot(urdf), timestep=timestep))
