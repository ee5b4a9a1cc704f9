"""What a reacher or extender may know about the robot: the model, the var table and how vars are mixed.

Passed to every instance so they can validate parameters against the real robot (joints, links, vars) and get
kinematic chains without each building its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from robot_core.model.robot_model import RobotModel
from robot_core.rbc.var_table import VarTable
from robot_core.text import clip

POSITION_MODE = "position"  # value = previous command + sum(weight * increment)
SUM_MODE = "sum"  # value = sum(weight * output)  (velocities, torques)


class DefaultKinematicsFactory:
    """SerialKinematicChain from robot_core.kinematics, all chains sharing one MuJoCo query model.

    Imported lazily: pure var work (no VF/CS/TC) never needs MuJoCo.
    """

    def __init__(self) -> None:
        self._built: Any = None

    def __call__(self, model: RobotModel, base_link: str, end_link: str) -> Any:
        from robot_core.kinematics.chain import SerialKinematicChain, build_query_model

        if self._built is None:
            self._built = build_query_model(model)
        return SerialKinematicChain(model, base_link, end_link, built=self._built)


class RbcContext:
    """Shared, read-mostly knowledge handed to reachers and extenders."""

    # True in an instance process: reachers output joint velocities even for position-reference vars, and the
    # coupler integrates them with its own cycle time (robot_core.rbc.instance_process).
    emit_rates = False

    def __init__(
        self,
        model: RobotModel,
        table: VarTable,
        position_vars: Mapping[str, str],
        kinematics_factory: Callable[[RobotModel, str, str], Any] | None = None,
    ):
        self.model = model
        self.table = table
        self.position_vars = dict(position_vars)
        self._factory = kinematics_factory or DefaultKinematicsFactory()
        self._chains: dict[tuple[str, str], Any] = {}
        self._limits: dict[str, tuple[float, float]] = {}

    def var_mode(self, var: str) -> str:
        """How a cmd var mixes reacher outputs: 'position' (increments) or 'sum'."""
        return POSITION_MODE if var in self.position_vars else SUM_MODE

    def chain(self, base_link: str, end_link: str) -> Any:
        """Cached kinematic chain base_link -> end_link; ValueError naming the links if there is none."""
        key = (base_link, end_link)
        chain = self._chains.get(key)
        if chain is None:
            for link in key:
                if link not in self.model.links:
                    raise ValueError(f"unknown link '{link}' in robot '{self.model.name}'")
            self.model.chain(base_link, end_link)  # raises RobotModelError (a ValueError) if not below
            chain = self._chains[key] = self._factory(self.model, base_link, end_link)
        return chain

    def chain_joints(self, base_link: str, end_link: str) -> list[str]:
        """Movable joints from base_link to end_link, found by walking the tree (no kinematics needed)."""
        return [j.name for j in self.model.chain(base_link, end_link) if j.is_movable]

    def limits(self, joint: str) -> tuple[float, float]:
        """(lower, upper) position limits; +-inf for continuous joints or joints without limits."""
        cached = self._limits.get(joint)
        if cached is not None:
            return cached
        j = self.model.joints[joint]
        if j.type == "continuous" or j.limit is None:
            return (float("-inf"), float("inf"))
        lo = j.limit.lower if j.limit.lower is not None else float("-inf")
        hi = j.limit.upper if j.limit.upper is not None else float("inf")
        self._limits[joint] = (float(lo), float(hi))
        return self._limits[joint]

    def check_joint_vars(self, joints: Sequence[str], var: str, kind: str) -> None:
        """ValueError naming the first joint that lacks ``var`` of the given kind ('state'/'cmd')."""
        for j in joints:
            if j not in self.model.joints:
                raise ValueError(f"unknown joint '{clip(j)}' in robot '{self.model.name}'")
            if not self.table.has(j, var):
                raise ValueError(f"joint '{clip(j)}' has no rbc var '{clip(var)}'")
            e = self.table.entry(j, var)
            if e.kind != kind:
                raise ValueError(f"joint '{clip(j)}', var '{clip(var)}' is a {e.kind} var, need a {kind} var")
