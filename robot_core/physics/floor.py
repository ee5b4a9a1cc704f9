"""The floor: an infinite plane at z = 0 for robots that stand or drive on something (a floating base).

Used as the engine's ``scene`` hook (``PhysicsEngine(scene=add_floor)``) and by the simulator's ``floor``
parameter. MuJoCo's default friction (sliding 1, torsional 0.005, rolling 0.0001) applies, so rubber-like wheels
roll without slip at the accelerations a mobile base's limits allow.
"""

from __future__ import annotations

import mujoco

FLOOR = "floor"


def add_floor(spec: mujoco.MjSpec) -> None:
    """Add the plane to the world body of ``spec`` (before compiling)."""
    spec.worldbody.add_geom(name=FLOOR, type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0.0, 0.0, 0.05],
                            rgba=[0.8, 0.8, 0.8, 1.0])
