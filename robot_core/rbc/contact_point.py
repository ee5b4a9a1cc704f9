"""A contact point fixed on a link: its pose and its Jacobian over a chain's joints.

Shared by ContactSimulation (wrench -> joint torques, J^T w) and TouchContact (joint torques -> wrench, least
squares on J^T), so both use exactly the same point kinematics.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robot_core.rbc.context import RbcContext


def skew(v: np.ndarray) -> np.ndarray:
    x, y, z = v
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


class ContactPoint:
    """Point ``point`` (link frame) on ``link``; kinematics over ``joints`` (any superset/subset of the
    joints between ``base_link`` and ``link``; joints not moving the link get zero columns)."""

    def __init__(self, context: RbcContext, base_link: str, link: str, point: Sequence[float], joints: Sequence[str]):
        p = np.asarray(point, dtype=float).reshape(-1)
        if p.size != 3 or not np.all(np.isfinite(p)):
            raise ValueError(f"contact point must be 3 finite numbers, got {list(point)!r}")
        self.base_link, self.link, self.point = base_link, link, p
        self.joints = list(joints)
        self.chain = context.chain(base_link, link)  # ValueError/RobotModelError if link is not below base
        index = {j: i for i, j in enumerate(self.joints)}
        # chain column k -> column in ``joints`` (or -1 when the caller does not consider that joint)
        self._cols = np.array([index.get(j, -1) for j in self.chain.joint_names], dtype=int)
        self.moving_joints = [j for j in self.chain.joint_names if j in index]

    def chain_q(self, q_by_joint: dict[str, float]) -> np.ndarray:
        """Chain coordinates from measured values (every chain joint must be present)."""
        return np.array([q_by_joint[j] for j in self.chain.joint_names])

    def pose(self, q_chain: np.ndarray) -> np.ndarray:
        """4x4 pose in base_link of the contact frame: at the point, oriented like the link."""
        t = self.chain.forward_kinematics(q_chain).copy()
        t[:3, 3] = t[:3, 3] + t[:3, :3] @ self.point
        return t

    def jacobian(self, q_chain: np.ndarray) -> np.ndarray:
        """6 x len(joints) Jacobian (base frame) of the point: rows linear velocity of the point, angular."""
        t = self.chain.forward_kinematics(q_chain)
        jl = np.asarray(self.chain.jacobian(q_chain), dtype=float)
        lever = t[:3, :3] @ self.point
        jp = jl[:3] - skew(lever) @ jl[3:]
        out = np.zeros((6, len(self.joints)))
        keep = self._cols >= 0
        out[:3, self._cols[keep]] = jp[:, keep]
        out[3:, self._cols[keep]] = jl[3:, keep]
        return out
