"""tf edges of a simulated robot: static ones from the URDF, moving ones from the engine's link poses."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import URDF_DIR

from robot_core.model import load_robot, rpy_to_matrix
from robot_core.physics.engine import PhysicsEngine
from robot_core.physics.link_transforms import LinkTransforms, quaternions_from_matrices


def _quat_to_matrix(q: np.ndarray) -> np.ndarray:
    x, y, z, w = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def test_quaternions_round_trip_including_near_180_degree_turns():
    rng = np.random.default_rng(3)
    rpys = list(rng.uniform(-np.pi, np.pi, size=(200, 3)))
    rpys += [np.array([np.pi, 0, 0]), np.array([0, np.pi, 0]), np.array([0, 0, np.pi]),
             np.array([np.pi - 1e-9, 0.3, 0]), np.zeros(3)]
    mats = np.stack([rpy_to_matrix(r) for r in rpys])
    quats = quaternions_from_matrices(mats)
    assert np.allclose(np.linalg.norm(quats, axis=1), 1.0)
    assert np.all(quats[:, 3] >= 0)
    for m, q in zip(mats, quats, strict=True):
        assert np.allclose(_quat_to_matrix(q), m, atol=1e-9)
    assert quaternions_from_matrices(np.eye(3)).tolist() == [[0.0, 0.0, 0.0, 1.0]]


def test_every_link_is_a_child_once_and_moving_edges_match_joint_motion():
    robot = load_robot(URDF_DIR / "rc_arm.urdf")
    engine = PhysicsEngine(robot, include_visuals=False)
    tfs = LinkTransforms(robot, engine.joint_names, engine.link_names)
    assert not tfs.needs_poses
    children = [c for _, c in tfs.moving_edges] + [s.child for s in tfs.static]
    assert sorted(children) == sorted(set(robot.links) - {robot.root_link})
    assert {s.child for s in tfs.static} == {"hand", "tcp", "scene_camera_link"}

    engine.set_joint_state({"joint1": -2.9, "joint2": 0.7, "joint4": 1.1, "joint7": 2.5, "finger_left_joint": 0.03})
    trans, quat = tfs.moving(engine.positions())
    poses = engine.link_poses()
    for (parent, child), t, q in zip(tfs.moving_edges, trans, quat, strict=True):
        joint = next(j for j in robot.joints.values() if j.child == child)
        qj = engine.positions()[engine.joint_names.index(joint.name)]
        motion = np.eye(4)
        if joint.type == "prismatic":
            motion[:3, 3] = joint.axis * qj
        else:
            axis = joint.axis / np.linalg.norm(joint.axis)
            k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
            motion[:3, :3] = np.eye(3) + np.sin(qj) * k + (1 - np.cos(qj)) * k @ k
        expected = joint.origin.matrix() @ motion
        assert parent == joint.parent
        assert np.allclose(t, expected[:3, 3], atol=1e-9), child
        assert np.allclose(_quat_to_matrix(q), expected[:3, :3], atol=1e-9), child
        # and it is what the simulation has: parent pose^-1 * child pose
        simulated = np.linalg.inv(poses[parent]) @ poses[child]
        assert np.allclose(simulated[:3, 3], t, atol=1e-6), child
        assert np.allclose(simulated[:3, :3], _quat_to_matrix(q), atol=1e-6), child


def test_floating_base_adds_world_to_root_edge():
    robot = load_robot(URDF_DIR / "planar2.urdf", fixed_base=False)
    engine = PhysicsEngine(robot, fixed_base=False, include_visuals=False)
    tfs = LinkTransforms(robot, engine.joint_names, engine.link_names, world_frame="world")
    assert tfs.moving_edges[0] == ("world", "base_link")
    assert tfs.needs_poses
    engine.step(50)  # it falls
    with pytest.raises(ValueError, match="pass the link poses"):
        tfs.moving(engine.positions())
    trans, quat = tfs.moving(engine.positions(), engine.link_pose_array())
    base = engine.link_poses()["base_link"]
    assert trans[0] == pytest.approx(base[:3, 3])
    assert np.allclose(_quat_to_matrix(quat[0]), base[:3, :3], atol=1e-9)
    assert trans[0][2] < 0.0
    assert len(trans) == len(tfs.moving_edges) == 3
