"""The chain's own MuJoCo model: the hot per-call queries (FK, Jacobian, inverse dynamics, IK) run on it.

Why (issue #21): each query is a few MuJoCo calls of well under a microsecond, so what MuJoCo walks per call and
what Python copies around it decide the cost. Built from the compiled query model of the whole robot, this model
keeps only what the chain's answers depend on:

- the **base link's frame is the world**: poses, Jacobians and torques come out in the base frame, no rotation
  per call; gravity is rotated into it once;
- the **chain's joints are the only joints**, in chain order: qpos is q and qvel is qd (``nq = nv = n``), so MuJoCo
  writes Jacobians and torques straight into chain-sized arrays;
- **only bodies the chain's joints carry** (its links, links past the tip, side branches) and the links between the
  base and the first joint remain; joints not in the chain are welded at their held positions (held joints have
  zero velocity and acceleration, so welding changes none of the chain's dynamics); no sites, no equality
  constraints, no geometry;
- the tip link's frame is a body (a child at the link's offset when the link is not at a body's origin).

Joint frames, body frames and inertias are copied from the compiled model (welded bodies: their pose relative to
the parent at the held positions), so results equal the whole model's to rounding; :func:`build_chain_model`
checks that on a random configuration and returns None when a chain does not fit this shape (a chain joint that
is neither hinge nor slide, a joint not in the chain on the path from base to tip): the caller then queries the
whole model.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

_SCALAR = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))


@dataclass
class ChainModel:
    """A compiled chain-only model: joint ``i`` (qpos/qvel index ``i``) is the chain's ``i``-th joint."""

    model: mujoco.MjModel
    tip_body: int  # the body whose frame is the tip link's frame


def _pose(pos: np.ndarray, xmat: np.ndarray) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3] = xmat.reshape(3, 3)
    t[:3, 3] = pos
    return t


def _pos_quat(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(t[:3, :3]).reshape(9))
    return t[:3, 3].copy(), quat


def build_chain_model(full: mujoco.MjModel, held_qpos: np.ndarray, base_body: int, base_offset: np.ndarray,
                      tip_body: int, tip_offset: np.ndarray, joint_ids: list[int]) -> ChainModel | None:
    """The chain-only model of the chain whose scalar joints are ``joint_ids`` (ids in ``full``, base to tip),
    from the link frame ``base_body``/``base_offset`` to ``tip_body``/``tip_offset``; None if it does not apply."""
    if not joint_ids or any(full.jnt_type[j] not in _SCALAR for j in joint_ids):
        return None
    path = []  # bodies from just after the base body to the tip body
    b = tip_body
    while b != base_body:
        if b == 0:
            return None  # the base is not an ancestor of the tip
        path.append(b)
        b = int(full.body_parentid[b])
    path.reverse()
    on_path = set(path)
    path_joints = [j for b in path for j in range(full.body_jntadr[b], full.body_jntadr[b] + full.body_jntnum[b])]
    if path_joints != list(joint_ids):
        return None  # a held joint between base and tip, or the chain's order differs from the tree's
    first_moving = next(i for i, b in enumerate(path) if full.body_jntnum[b])
    carriers = set(path[first_moving:])

    # World poses at the held positions with the chain at its reference (qpos0): welded bodies' relative poses.
    data = mujoco.MjData(full)
    data.qpos[:] = held_qpos
    for j in joint_ids:
        adr = full.jnt_qposadr[j]
        data.qpos[adr] = full.qpos0[adr]
    mujoco.mj_kinematics(full, data)
    world_base = _pose(data.xpos[base_body], data.xmat[base_body]) @ base_offset
    base_world = np.linalg.inv(world_base)

    spec = mujoco.MjSpec()
    spec.modelname = "chain"
    spec.option.gravity = world_base[:3, :3].T @ np.asarray(full.opt.gravity, dtype=float)
    made: dict[int, mujoco.MjsBody] = {base_body: spec.worldbody}
    for b in range(1, full.nbody):
        parent = int(full.body_parentid[b])
        if b in on_path:
            pass
        elif parent not in made or (parent in on_path and parent not in carriers) or parent == base_body:
            continue  # not carried by the chain's joints
        if b in on_path and parent == base_body:
            pos, quat = _pos_quat(base_world @ _pose(data.xpos[b], data.xmat[b]))
        elif b in on_path:
            pos, quat = full.body_pos[b], full.body_quat[b]
        else:  # welded at the held positions
            pos, quat = _pos_quat(np.linalg.inv(_pose(data.xpos[parent], data.xmat[parent]))
                                  @ _pose(data.xpos[b], data.xmat[b]))
        body = made[parent].add_body(name=f"body{b}", pos=pos, quat=quat, mass=full.body_mass[b],
                                     ipos=full.body_ipos[b], iquat=full.body_iquat[b],
                                     inertia=full.body_inertia[b])
        body.explicitinertial = True
        if b in on_path:
            for j in range(full.body_jntadr[b], full.body_jntadr[b] + full.body_jntnum[b]):
                body.add_joint(name=f"joint{j}", type=mujoco.mjtJoint(full.jnt_type[j]), axis=full.jnt_axis[j],
                               pos=full.jnt_pos[j], ref=full.qpos0[full.jnt_qposadr[j]])
        made[b] = body
    tip_name = f"body{tip_body}"
    if not np.array_equal(tip_offset, np.eye(4)):
        pos, quat = _pos_quat(tip_offset)
        made[tip_body].add_body(name="tip", pos=pos, quat=quat)
        tip_name = "tip"
    try:
        model = spec.compile()
    except ValueError:  # (e.g. a body MuJoCo finds too light once its welded children are gone)
        return None
    if model.nq != len(joint_ids) or model.nv != len(joint_ids):
        return None
    result = ChainModel(model, model.body(tip_name).id)
    return result if _agrees(full, held_qpos, base_world, tip_body, tip_offset, joint_ids, result) else None


def _agrees(full: mujoco.MjModel, held_qpos: np.ndarray, base_world: np.ndarray, tip_body: int,
            tip_offset: np.ndarray, joint_ids: list[int], cm: ChainModel) -> bool:
    """Whether the chain model puts the tip where the whole model does, on a fixed pseudo-random configuration."""
    q = np.random.default_rng(0).uniform(-1.0, 1.0, len(joint_ids))
    data = mujoco.MjData(full)
    data.qpos[:] = held_qpos
    for j, v in zip(joint_ids, q, strict=True):
        data.qpos[full.jnt_qposadr[j]] += v
    mujoco.mj_kinematics(full, data)
    want = base_world @ _pose(data.xpos[tip_body], data.xmat[tip_body]) @ tip_offset
    cd = mujoco.MjData(cm.model)
    cd.qpos[:] = [data.qpos[full.jnt_qposadr[j]] for j in joint_ids]
    mujoco.mj_kinematics(cm.model, cd)
    got = _pose(cd.xpos[cm.tip_body], cd.xmat[cm.tip_body])
    return bool(np.allclose(got, want, rtol=0.0, atol=1e-9))
