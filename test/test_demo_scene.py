"""The arm demo's motions in its scene, without ROS: along the trajectory the joint_trajectory_controller samples
(the same spline, from the home pose) and between the RBC goals, rc_arm keeps clear of the table and boxes of
config/worlds/table_top.yaml (MuJoCo's distances between the collision shapes), so the demo never pushes them."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

from robot_core.control.trajectory import JointSample, TrajectorySpline
from robot_core.demo.scenarios.arm import ARM_JOINTS, JR_GOAL, SCENARIO, VF_POSE_JOINTS, WAYPOINTS, trajectory_points
from robot_core.model import load_robot
from robot_core.physics.engine import PhysicsEngine
from robot_core.physics.world import load_world, scene_hook

REPO = Path(__file__).resolve().parent.parent
HOME = [0.0, 0.3, 0.0, 1.9, 0.0, 0.94, 0.0]  # rc_arm's ros2_control initial values
CLEARANCE = 0.03  # m: margin for the path actually taken (it lags the reference, by up to 0.1 rad, mostly along it)


@pytest.fixture(scope="module")
def distance():
    robot = load_robot(REPO / "urdf" / "rc_arm.urdf")
    world = load_world(REPO / SCENARIO.world)
    engine = PhysicsEngine(robot, include_visuals=False, scene=scene_hook(world, robot.root_link))
    m, d = engine.model, engine.data
    names = {o.name for o in world.objects}
    scene = [g for g in range(m.ngeom) if mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, m.geom_bodyid[g]) in names]
    arm = [g for g in range(m.ngeom) if m.geom_bodyid[g] != 0 and g not in scene]
    assert len(scene) == 4 and len(arm) >= 10
    adr = [m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, j)] for j in ARM_JOINTS]

    def nearest(q) -> float:
        d.qpos[adr] = q
        mujoco.mj_kinematics(m, d)
        fromto = np.zeros(6)
        return min(mujoco.mj_geomDistance(m, d, a, b, 1.0, fromto) for a in arm for b in scene)

    return nearest


def test_trajectory_keeps_clear_of_the_table_and_boxes(distance):
    points = trajectory_points(HOME)
    n = len(ARM_JOINTS)
    spline = TrajectorySpline(0.0, JointSample(np.array(HOME), np.zeros(n), np.zeros(n)), [t for t, _, _ in points],
                              np.array([q for _, q, _ in points]), [np.array(v) for _, _, v in points],
                              [None] * len(points))
    gaps = [distance(spline.sample(t)[0].positions) for t in np.linspace(0.0, WAYPOINTS[-1][0], 161)]
    print(f"trajectory: nearest {min(gaps) * 100:.1f} cm")
    assert min(gaps) > CLEARANCE


def test_rbc_goals_and_the_way_between_keep_clear(distance):
    jr = list(WAYPOINTS[-1][1])
    for joint, value in JR_GOAL.items():
        jr[ARM_JOINTS.index(joint)] = value
    legs = [(WAYPOINTS[-1][1], jr), (jr, VF_POSE_JOINTS)]  # the reachers move about straight in joint space
    gaps = [distance((1 - s) * np.array(a) + s * np.array(b)) for a, b in legs for s in np.linspace(0, 1, 41)]
    print(f"RBC goals: nearest {min(gaps) * 100:.1f} cm")
    assert min(gaps) > CLEARANCE
