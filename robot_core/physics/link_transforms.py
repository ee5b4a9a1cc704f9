"""Parent-link -> child-link transforms of a simulated robot, in the shape tf wants them (ROS-free).

A tf tree of a robot has one edge per joint, like robot_state_publisher's: fixed joints are constant (published
once on ``/tf_static``), every other joint moves (``/tf``). The moving ones are computed in one batch of numpy
operations, so a 100 Hz /tf of a robot with dozens of joints costs the simulation loop next to nothing before
message filling.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_core.model.robot_model import RobotModel


def quaternions_from_matrices(rot: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rotation matrices -> (n, 4) unit quaternions (x, y, z, w), w >= 0 (Shepperd's method)."""
    rot = np.asarray(rot, dtype=float).reshape(-1, 3, 3)
    m00, m11, m22 = rot[:, 0, 0], rot[:, 1, 1], rot[:, 2, 2]
    trace = m00 + m11 + m22
    # Pick, per matrix, the largest of 4w^2, 4x^2, 4y^2, 4z^2 to divide by (numerically safe).
    cands = np.stack([trace, m00, m11, m22], axis=1)
    which = np.argmax(cands, axis=1)
    q = np.empty((rot.shape[0], 4))
    for k in range(4):
        sel = which == k
        if not sel.any():
            continue
        r = rot[sel]
        if k == 0:
            s = 2.0 * np.sqrt(1.0 + trace[sel])
            w = 0.25 * s
            x = (r[:, 2, 1] - r[:, 1, 2]) / s
            y = (r[:, 0, 2] - r[:, 2, 0]) / s
            z = (r[:, 1, 0] - r[:, 0, 1]) / s
        elif k == 1:
            s = 2.0 * np.sqrt(np.maximum(1.0 + r[:, 0, 0] - r[:, 1, 1] - r[:, 2, 2], 1e-300))
            w = (r[:, 2, 1] - r[:, 1, 2]) / s
            x = 0.25 * s
            y = (r[:, 0, 1] + r[:, 1, 0]) / s
            z = (r[:, 0, 2] + r[:, 2, 0]) / s
        elif k == 2:
            s = 2.0 * np.sqrt(np.maximum(1.0 + r[:, 1, 1] - r[:, 0, 0] - r[:, 2, 2], 1e-300))
            w = (r[:, 0, 2] - r[:, 2, 0]) / s
            x = (r[:, 0, 1] + r[:, 1, 0]) / s
            y = 0.25 * s
            z = (r[:, 1, 2] + r[:, 2, 1]) / s
        else:
            s = 2.0 * np.sqrt(np.maximum(1.0 + r[:, 2, 2] - r[:, 0, 0] - r[:, 1, 1], 1e-300))
            w = (r[:, 1, 0] - r[:, 0, 1]) / s
            x = (r[:, 0, 2] + r[:, 2, 0]) / s
            y = (r[:, 1, 2] + r[:, 2, 1]) / s
            z = 0.25 * s
        q[sel] = np.stack([x, y, z, w], axis=1)
    q[q[:, 3] < 0] *= -1.0
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def quaternion_products(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton products a * b of (n, 4) quaternions (x, y, z, w)."""
    ax, ay, az, aw = a[:, 0], a[:, 1], a[:, 2], a[:, 3]
    bx, by, bz, bw = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    return np.stack([
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ], axis=1)


@dataclass(frozen=True)
class StaticTransform:
    parent: str
    child: str
    translation: np.ndarray  # (3,)
    rotation: np.ndarray  # (4,) x, y, z, w


class LinkTransforms:
    """The tf edges of one robot.

    Edges of scalar joints (revolute, continuous, prismatic: nearly all of them) are computed from the joint
    positions as ``origin * motion(q)``, exactly what robot_state_publisher does with joint states, in a
    handful of vectorised operations. Other moving joints (planar, floating) and a floating base's
    ``world_frame -> root`` edge come from the engine's world link poses.

    Args:
        robot: the robot description.
        joint_names: order of the positions passed to :meth:`moving` (the engine's ``joint_names``).
        link_names: order of the world poses passed to :meth:`moving` (the engine's ``link_names``).
        world_frame: when given, an extra moving edge ``world_frame -> root link`` (a floating base's pose).
    """

    def __init__(self, robot: RobotModel, joint_names: list[str], link_names: list[str],
                 world_frame: str | None = None):
        link_index = {n: i for i, n in enumerate(link_names)}
        joint_index = {n: i for i, n in enumerate(joint_names)}
        self.static: list[StaticTransform] = []
        scalar: list[tuple[str, str, int, np.ndarray, np.ndarray, np.ndarray, bool]] = []
        posed: list[tuple[str, str, int, int]] = []
        for joint in robot.joints.values():
            m = joint.origin.matrix()
            if joint.type == "fixed":
                self.static.append(StaticTransform(joint.parent, joint.child, m[:3, 3].copy(),
                                                   quaternions_from_matrices(m[:3, :3])[0]))
            elif joint.is_scalar:
                axis = np.asarray(joint.axis, dtype=float)
                axis = axis / np.linalg.norm(axis)
                scalar.append((joint.parent, joint.child, joint_index[joint.name], m[:3, 3].copy(), m[:3, :3],
                               axis, joint.type == "prismatic"))
            else:
                posed.append((joint.parent, joint.child, link_index[joint.parent], link_index[joint.child]))
        if world_frame:
            root = link_index[robot.root_link]
            posed.insert(0, (world_frame, robot.root_link, -1, root))
        self.moving_edges: list[tuple[str, str]] = [(e[0], e[1]) for e in posed] + [(e[0], e[1]) for e in scalar]
        self._posed_parent = np.array([e[2] for e in posed], dtype=int)
        self._posed_child = np.array([e[3] for e in posed], dtype=int)
        self.needs_poses = bool(posed)
        self._q_index = np.array([e[2] for e in scalar], dtype=int)
        self._t0 = np.array([e[3] for e in scalar]).reshape(-1, 3)
        r0 = np.array([e[4] for e in scalar]).reshape(-1, 3, 3)
        axis = np.array([e[5] for e in scalar]).reshape(-1, 3)
        prismatic = np.array([e[6] for e in scalar], dtype=bool)
        # translation = t0 + (R0 axis) q for prismatic joints
        self._slide = np.einsum("kij,kj->ki", r0, axis) * prismatic[:, None]
        # rotation = q0 * (axis sin(q/2), cos(q/2)) = A sin(q/2) + B cos(q/2) for revolute joints: two constant
        # quaternion columns, so the per-call work is a few element-wise operations.
        quat0 = quaternions_from_matrices(r0) if scalar else np.zeros((0, 4))
        self._qa = quaternion_products(quat0, np.concatenate([axis, np.zeros((len(scalar), 1))], axis=1))
        self._qb = quat0
        self._half = np.where(prismatic, 0.0, 0.5)

    def moving(self, positions: np.ndarray, poses: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Translations (m, 3) and quaternions (m, 4, xyzw) of :attr:`moving_edges`.

        ``positions``: joint positions in ``joint_names`` order; ``poses``: (n_links, 4, 4) world poses in
        ``link_names`` order, needed only when :attr:`needs_poses`.
        """
        q = np.asarray(positions, dtype=float)[self._q_index][:, None]
        trans = self._t0 + self._slide * q
        half = self._half[:, None] * q
        quat = self._qa * np.sin(half) + self._qb * np.cos(half)
        if not self.needs_poses:
            return trans, quat
        if poses is None:
            raise ValueError("this robot has planar/floating joints or a floating base: pass the link poses")
        child = poses[self._posed_child]
        parent = np.where((self._posed_parent >= 0)[:, None, None], poses[self._posed_parent], np.eye(4))
        rp_t = np.transpose(parent[:, :3, :3], (0, 2, 1))
        rot = rp_t @ child[:, :3, :3]
        t = np.einsum("kij,kj->ki", rp_t, child[:, :3, 3] - parent[:, :3, 3])
        return np.concatenate([t, trans]), np.concatenate([quaternions_from_matrices(rot), quat])
