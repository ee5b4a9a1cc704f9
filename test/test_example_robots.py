"""The example robots in urdf/: the committed rc_arm.urdf matches its xacro, and both robots carry what the
simulator, the controllers and the RBC rely on (SHARED_DECISIONS: joints, limits, ros2_control, rbc tags)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from robot_core.model import load_robot
from robot_core.model.model_compare import model_differences

REPO = Path(__file__).resolve().parent.parent
URDF = REPO / "urdf"
ARM_JOINTS = [f"joint{i}" for i in range(1, 8)]


@pytest.fixture(scope="module")
def rc_arm():
    return load_robot(URDF / "rc_arm.urdf")


@pytest.fixture(scope="module")
def planar2():
    return load_robot(URDF / "planar2.urdf")


def _generator():
    spec = importlib.util.spec_from_file_location("generate_urdf", REPO / "scripts" / "generate_urdf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_urdf_equals_fresh_xacro_expansion(rc_arm):
    assert model_differences(rc_arm, load_robot(URDF / "rc_arm.urdf.xacro")) == []
    gen = _generator()
    assert gen.render(URDF / "rc_arm.urdf.xacro") == (URDF / "rc_arm.urdf").read_text(), \
        "urdf/rc_arm.urdf is stale: run .venv/bin/python scripts/generate_urdf.py"
    assert gen.main(["--check"]) == 0


def test_rc_arm_structure(rc_arm):
    assert rc_arm.name == "rc_arm" and rc_arm.fixed_base
    assert list(rc_arm.links) == ["base_link", *[f"link{i}" for i in range(1, 8)], "hand", "finger_left",
                                  "finger_right", "tcp", "scene_camera_link"]
    assert rc_arm.root_link == "base_link"
    assert rc_arm.actuated_joint_names() == [*ARM_JOINTS, "finger_left_joint"]
    assert rc_arm.scalar_joint_names() == [*ARM_JOINTS, "finger_left_joint", "finger_right_joint"]
    types = {name: j.type for name, j in rc_arm.joints.items()}
    assert all(types[j] == "revolute" for j in ARM_JOINTS)
    assert (types["hand_joint"], types["tcp_joint"]) == ("fixed", "fixed")
    assert (rc_arm.joints["hand_joint"].parent, rc_arm.joints["hand_joint"].child) == ("link7", "hand")
    assert (rc_arm.joints["tcp_joint"].parent, rc_arm.joints["tcp_joint"].child) == ("hand", "tcp")
    camera_joint = rc_arm.joints["scene_camera_joint"]
    assert (camera_joint.type, camera_joint.parent, camera_joint.child) == ("fixed", "base_link", "scene_camera_link")
    right = rc_arm.joints["finger_right_joint"]
    assert right.type == "prismatic" and right.mimic.joint == "finger_left_joint" and right.mimic.multiplier == 1
    left = rc_arm.joints["finger_left_joint"]
    assert (left.limit.lower, left.limit.upper) == (0.0, 0.04)


def test_rc_arm_masses_inertias_limits(rc_arm):
    assert rc_arm.total_mass() == pytest.approx(18.0)
    for link in rc_arm.links.values():
        if link.name in ("tcp", "scene_camera_link"):  # massless frames
            assert link.inertial is None
            continue
        assert link.inertial.mass > 0
        moments = np.linalg.eigvalsh(link.inertial.inertia)
        assert moments.min() > 0 and moments[0] + moments[1] >= moments[2]
        assert link.collisions and link.visuals
        assert all(c.geometry.kind in ("box", "cylinder", "sphere") for c in link.collisions)
    efforts = [rc_arm.joints[j].limit.effort for j in ARM_JOINTS]
    assert efforts == [87, 87, 87, 87, 12, 12, 12]
    for name in ARM_JOINTS:
        joint = rc_arm.joints[name]
        assert 2.0 <= joint.limit.velocity <= 2.7
        assert joint.dynamics.damping > 0 and joint.dynamics.friction > 0
        assert joint.limit.lower < joint.initial_position < joint.limit.upper
        sc = joint.safety_controller
        assert joint.limit.lower < sc.soft_lower_limit < sc.soft_upper_limit < joint.limit.upper


def _fk(model, q: dict[str, float], tip: str) -> np.ndarray:
    """Plain forward kinematics (independent of robot_core.kinematics) for the reach/home-pose checks."""
    pose = np.eye(4)
    for joint in model.chain(model.root_link, tip):
        pose = pose @ joint.origin.matrix()
        value = q.get(joint.name, 0.0)
        if joint.type in ("revolute", "continuous"):
            a = joint.axis / np.linalg.norm(joint.axis)
            k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
            rot = np.eye(4)
            rot[:3, :3] = np.eye(3) + math.sin(value) * k + (1 - math.cos(value)) * k @ k
            pose = pose @ rot
        elif joint.type == "prismatic":
            step = np.eye(4)
            step[:3, 3] = joint.axis * value
            pose = pose @ step
    return pose


def test_rc_arm_scene_camera_looks_at_the_table_of_table_top(rc_arm):
    """The Gazebo camera on scene_camera_link (it looks along its x axis) aims at the table top of
    config/worlds/table_top.yaml (table centre x = 0.55, top at z = 0.2; boxes up to z = 0.3) from off the table."""
    (camera,) = rc_arm.sensors
    assert (camera.name, camera.kind, camera.link, camera.update_rate) == ("scene_camera", "camera",
                                                                           "scene_camera_link", 5.0)
    assert (camera.params["width"], camera.params["height"]) == (480, 360)
    pose = rc_arm.joints["scene_camera_joint"].origin.matrix()
    eye, axis = pose[:3, 3], pose[:3, 0]
    target = np.array([0.45, 0.0, 0.3])
    miss = np.linalg.norm(np.cross(target - eye, axis))  # distance of the target from the optical axis
    assert miss < 0.01 and np.dot(target - eye, axis) > 1.0
    assert not (0.3 <= eye[0] <= 0.8 and abs(eye[1]) <= 0.4)  # not above the table


def test_rc_arm_home_pose_reach_and_conditioning(rc_arm):
    home = {name: j.initial_position for name, j in rc_arm.joints.items() if j.initial_position is not None}
    assert set(home) == {*ARM_JOINTS, "finger_left_joint"}
    tcp = _fk(rc_arm, home, "tcp")
    assert tcp[2, 2] < -0.99  # tool z axis points down at home
    assert 0.25 < tcp[0, 3] < 0.5 and 0.15 < tcp[2, 3] < 0.45
    stretched = _fk(rc_arm, {}, "tcp")[2, 3] - _fk(rc_arm, {}, "link2")[2, 3]
    assert 0.8 < stretched < 0.9  # Panda-like reach from the shoulder
    # Numerical position+orientation Jacobian at home: full rank, not near a singularity.
    q0 = np.array([home[j] for j in ARM_JOINTS])
    jac = np.zeros((6, 7))
    eps = 1e-6
    base = _fk(rc_arm, dict(zip(ARM_JOINTS, q0, strict=True)), "tcp")
    for i in range(7):
        dq = q0.copy()
        dq[i] += eps
        moved = _fk(rc_arm, dict(zip(ARM_JOINTS, dq, strict=True)), "tcp")
        jac[:3, i] = (moved[:3, 3] - base[:3, 3]) / eps
        d_rot = (moved[:3, :3] - base[:3, :3]) / eps @ base[:3, :3].T
        jac[3:, i] = [d_rot[2, 1], d_rot[0, 2], d_rot[1, 0]]
    assert np.linalg.svd(jac, compute_uv=False).min() > 0.1


def test_rc_arm_ros2_control(rc_arm):
    (block,) = rc_arm.ros2_control
    assert (block.name, block.type, block.plugin) == ("RcArmSystem", "system",
                                                      "topic_based_ros2_control/TopicBasedSystem")
    assert block.hardware_params == {"joint_commands_topic": "robot_joint_commands",
                                     "joint_states_topic": "robot_joint_states",
                                     "trigger_joint_command_threshold": "-1"}
    assert [j.name for j in block.joints] == [*ARM_JOINTS, "finger_left_joint"]
    for rc_joint in block.joints[:7]:
        assert [i.name for i in rc_joint.command_interfaces] == ["position", "velocity", "effort"]
        assert [i.name for i in rc_joint.state_interfaces] == ["position", "velocity", "effort"]
        limit = rc_arm.joints[rc_joint.name].limit
        assert (rc_joint.command_interfaces[0].min, rc_joint.command_interfaces[0].max) == (limit.lower, limit.upper)
        assert rc_joint.state_interfaces[0].initial_value == rc_arm.joints[rc_joint.name].initial_position
    finger = block.joints[7]
    # effort: the gripper action controller's force-limited loop (doc/controllers/gripper_action.md)
    assert [i.name for i in finger.command_interfaces] == ["position", "effort"]
    assert [i.name for i in finger.state_interfaces] == ["position", "velocity", "effort"]


def test_rc_arm_rbc_tags(rc_arm):
    for i, name in enumerate(ARM_JOINTS):
        nodes = {n.node: n for n in rc_arm.joints[name].rbc}
        sim = {v.name: v for v in nodes["sim_driver"].vars}
        assert list(sim) == ["q", "qd", "tau"]
        for var_name, field in (("q", "position"), ("qd", "velocity"), ("tau", "effort")):
            var = sim[var_name]
            assert (var.type, var.topic, var.msg.type, var.msg.field, var.msg.field_array, var.msg.index) == (
                "state", "/robot_joint_states", "sensor_msgs.msg.JointState", field, True, i)
        (q_ref,) = nodes["position_controller"].vars
        assert (q_ref.name, q_ref.type, q_ref.topic, q_ref.msg.type, q_ref.msg.field, q_ref.msg.index) == (
            "q_ref", "cmd", "/forward_position_controller/commands", "std_msgs/msg/Float64MultiArray", "data", i)
        (qd_ref,) = nodes["velocity_controller"].vars
        assert (qd_ref.name, qd_ref.type, qd_ref.topic, qd_ref.msg.index) == (
            "qd_ref", "cmd", "/forward_velocity_controller/commands", i)
        assert ("joint_trajectory_controller" in nodes) == (i == 0)
    (q_desired,) = next(n for n in rc_arm.joints["joint1"].rbc if n.node == "joint_trajectory_controller").vars
    assert (q_desired.name, q_desired.type, q_desired.topic, q_desired.msg.type, q_desired.msg.field,
            q_desired.msg.index) == ("q_desired", "state", "/joint_trajectory_controller/controller_state",
                                     "control_msgs/msg/JointTrajectoryControllerState", "reference.positions", 0)


def test_planar2(planar2):
    assert planar2.name == "planar2"
    assert list(planar2.links) == ["base_link", "link1", "link2", "tip"]
    assert planar2.actuated_joint_names() == ["joint1", "joint2"]
    assert planar2.joints["tip_joint"].type == "fixed"
    for name in ("joint1", "joint2"):
        joint = planar2.joints[name]
        np.testing.assert_array_equal(joint.axis, [0, 1, 0])
        assert joint.limit.lower < joint.initial_position < joint.limit.upper
        assert joint.limit.effort > 0 and joint.limit.velocity > 0
    assert planar2.links["link1"].inertial.mass == 1.0 and planar2.links["link2"].inertial.mass == 0.8
    # link lengths 0.5 m and 0.4 m: the tip is 0.9 m from joint1 when stretched
    tip = _fk(planar2, {}, "tip")
    np.testing.assert_allclose(tip[:3, 3], [0.9, 0, 0.5], atol=1e-12)
    # home pose is away from the stretched-out singularity
    assert abs(math.sin(planar2.joints["joint2"].initial_position)) > 0.5
    (block,) = planar2.ros2_control
    assert block.plugin == "topic_based_ros2_control/TopicBasedSystem"
    assert [j.name for j in block.joints] == ["joint1", "joint2"]
    for i, name in enumerate(("joint1", "joint2")):
        nodes = {n.node: n for n in planar2.joints[name].rbc}
        q = next(v for v in nodes["sim_driver"].vars if v.name == "q")
        q_ref = nodes["position_controller"].vars[0]
        assert (q.msg.index, q_ref.msg.index, q_ref.name, q_ref.type) == (i, i, "q_ref", "cmd")
