"""Whole-tree forward kinematics: the pose of every link for given joint positions (for /tf).

Poses are in the root link frame (the world when the base is fixed). Joints not given keep their held
value (``initial_position`` or 0, mimic joints following their master); mimic joints *are* updated from
their master when only the master is given, so a JointState of actuated joints yields a consistent tree.
Values: scalar joints take a float; planar joints (u, v, theta) with u, v along the in-plane axes chosen
by robot_core.physics.builder; floating joints (x, y, z, qw, qx, qy, qz).
"""

from __future__ import annotations

from collections.abc import Mapping

import mujoco
import numpy as np

from robot_core.kinematics.chain import build_query_model, held_qpos
from robot_core.model.robot_model import RobotModel
from robot_core.physics.builder import BuiltModel


class TreeKinematics:
    """Pose of every link of a RobotModel, computed by one mj_kinematics call."""

    def __init__(self, model: RobotModel, *, built: BuiltModel | None = None):
        self.model = model
        self.built = built if built is not None else build_query_model(model)
        self._m = self.built.model
        self._d = mujoco.MjData(self._m)
        self._q0 = held_qpos(self.built)
        self.link_names = list(model.links)
        frames = [self.built.link_frame(n) for n in self.link_names]
        self._bodies = np.array([f.body_id for f in frames], dtype=np.int64)
        self._offsets = [(i, f.offset) for i, f in enumerate(frames) if not f.offset_is_identity]
        self._mimics = [(self.built.joints[j.name].qpos_adr, self.built.joints[j.mimic.joint].qpos_adr,
                         j.mimic.multiplier, j.mimic.offset)
                        for j in model.joints.values()
                        if j.mimic is not None and j.is_scalar and j.mimic.joint in self.built.joints
                        and self.built.joints[j.mimic.joint].nq == 1]
        # parent link of every non-root link, for relative transforms
        self._parent_index = {}
        index = {n: i for i, n in enumerate(self.link_names)}
        for j in model.joints.values():
            self._parent_index[j.child] = (index[j.parent], j.parent)

    def _set(self, q_by_name: Mapping[str, float | np.ndarray]) -> None:
        qpos = self._d.qpos
        qpos[:] = self._q0
        given = set()
        for name, value in q_by_name.items():
            ji = self.built.joints.get(name)
            if ji is None:
                raise KeyError(f"robot '{self.model.name}' has no movable joint '{name}'")
            v = np.asarray(value, dtype=float).reshape(-1)
            if v.size != ji.nq:
                raise ValueError(f"joint '{name}' ({ji.type}) takes {ji.nq} value(s), got {v.size}")
            qpos[ji.qpos_adr : ji.qpos_adr + ji.nq] = v
            given.add(ji.qpos_adr)
        for adr, master, mult, off in self._mimics:
            if adr not in given:
                qpos[adr] = off + mult * qpos[master]
        mujoco.mj_kinematics(self._m, self._d)

    def link_pose_array(self, q_by_name: Mapping[str, float | np.ndarray]) -> np.ndarray:
        """(n_links, 4, 4) root-frame poses in ``link_names`` (document) order."""
        self._set(q_by_name)
        b = self._bodies
        t = np.zeros((len(b), 4, 4))
        t[:, :3, :3] = self._d.xmat[b].reshape(-1, 3, 3)
        t[:, :3, 3] = self._d.xpos[b]
        t[:, 3, 3] = 1.0
        for i, off in self._offsets:
            t[i] = t[i] @ off
        return t

    def link_poses(self, q_by_name: Mapping[str, float | np.ndarray]) -> dict[str, np.ndarray]:
        """link name -> 4x4 pose in the root frame."""
        t = self.link_pose_array(q_by_name)
        return dict(zip(self.link_names, t, strict=True))

    def joint_transforms(self, q_by_name: Mapping[str, float | np.ndarray]) -> dict[str, tuple[str, np.ndarray]]:
        """child link -> (parent link, 4x4 pose of child in parent): the edges /tf publishes."""
        t = self.link_pose_array(q_by_name)
        out = {}
        for i, name in enumerate(self.link_names):
            if name not in self._parent_index:
                continue
            pi, parent = self._parent_index[name]
            tp = t[pi]
            rel = np.eye(4)
            rel[:3, :3] = tp[:3, :3].T @ t[i][:3, :3]
            rel[:3, 3] = tp[:3, :3].T @ (t[i][:3, 3] - tp[:3, 3])
            out[name] = (parent, rel)
        return out
