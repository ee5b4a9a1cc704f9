"""ros2_control sensors simulated by MuJoCo (robot_core.physics.sensors): the numbers against physics.

A box on a force-torque "scale" of a world (robot_core.physics.world) weighs what it should, and its torque
shows where it sits; the wrist sensor of rc_arm reads the load of the hand that the kinematics library's inverse
dynamics predicts; an IMU at rest reads +g up and no rate, and a base rotation shows in its orientation; a range
finder sees the box; a pose sensor follows its joint; bad declarations are one-line errors naming file, line and
element. Each check prints its numbers (pytest -s).
"""

from __future__ import annotations

import copy
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from robot_files import DATA_URDF, URDF_DIR

from robot_core.kinematics import SerialKinematicChain
from robot_core.model import RobotModelError, load_robot
from robot_core.physics.engine import PhysicsEngine
from robot_core.physics.world import WorldSim, base_pose_quaternion, load_world, scene_hook

G = 9.81
RIG = DATA_URDF / "sensor_rig.urdf"
PLATE_MASS = 0.5  # sensor_rig.urdf's plate (the child side of the scale's joint)


def _values(engine: PhysicsEngine, sensor: str) -> dict[str, float]:
    return {n.split("/", 1)[1]: float(v) for n, v in zip(engine.sensor_names, engine.sensor_values(), strict=True)
            if n.startswith(sensor + "/")}


def _world(tmp_path: Path, x: float = 0.0, mass: float = 2.0) -> Path:
    path = tmp_path / "scale_world.yaml"
    path.write_text(f"""floor: true
objects:
  - name: parcel
    shape: box
    size: [0.1, 0.1, 0.1]
    pose: {{xyz: [{x}, 0.0, 0.121]}}
    mass: {mass}
""", encoding="utf-8")
    return path


def _rig_with_world(tmp_path: Path, **world) -> tuple[PhysicsEngine, WorldSim]:
    robot = load_robot(RIG)
    world_def = load_world(_world(tmp_path, **world))
    engine = PhysicsEngine(robot, scene=scene_hook(world_def, robot.root_link))
    return engine, WorldSim(engine, world_def)


# ----------------------------------------------------------------------------- force-torque
def test_a_box_on_the_scale_weighs_its_weight(tmp_path):
    engine, _ = _rig_with_world(tmp_path, mass=2.0)
    engine.step(1500)  # the box settles
    ft = _values(engine, "scale_ft")
    box_weight = -ft["force.z"] - PLATE_MASS * G
    print(f"scale force.z {ft['force.z']:.4f} N -> box weight {box_weight:.4f} N (expected {2.0 * G:.4f} N)")
    assert box_weight == pytest.approx(2.0 * G, rel=0.01)
    assert abs(ft["force.x"]) < 0.01 * G and abs(ft["force.y"]) < 0.01 * G
    assert max(abs(ft[f"torque.{a}"]) for a in "xyz") < 1e-3


def test_an_off_centre_box_shows_as_torque_about_the_sensor_frame(tmp_path):
    """The load (child on parent) at x = +0.08: force -m g along z at r = (0.08, 0, h) -> torque.y = +0.08 m g."""
    engine, _ = _rig_with_world(tmp_path, x=0.08, mass=1.0)
    engine.step(1500)
    ft = _values(engine, "scale_ft")
    expected = 0.08 * 1.0 * G
    print(f"off-centre box: torque.y {ft['torque.y']:.4f} N m (expected {expected:.4f}), force.z {ft['force.z']:.4f}")
    assert ft["torque.y"] == pytest.approx(expected, rel=0.01)
    assert abs(ft["torque.x"]) < 1e-3


def test_wrist_sensor_reads_the_hand_load_inverse_dynamics_predicts():
    """rc_arm holding still: the wrist wrench (hand frame, turned to the base frame) applied to a model of the arm
    without the hand gives the joint torques of the whole arm (kinematics inverse dynamics) within 1 %."""
    robot = load_robot(URDF_DIR / "rc_arm.urdf")
    engine = PhysicsEngine(robot, initial_positions={"joint2": 0.6, "joint4": 1.2, "joint6": 0.8, "joint7": 0.5})
    engine.step(3000)
    assert np.abs(engine.velocities()).max() < 1e-6
    ft = _values(engine, "wrist_ft")
    rot = engine.link_pose("hand")[:3, :3]
    wrench = np.concatenate([rot @ [ft[f"force.{a}"] for a in "xyz"], rot @ [ft[f"torque.{a}"] for a in "xyz"]])
    pos = dict(zip(engine.joint_names, engine.positions(), strict=True))
    arm = [f"joint{i}" for i in range(1, 8)]
    q, zero = np.array([pos[j] for j in arm]), np.zeros(7)
    hold = {j: pos[j] for j in ("finger_left_joint", "finger_right_joint")}
    tau_whole = SerialKinematicChain(robot, "base_link", "link7", hold_positions=hold).inverse_dynamics(q, zero, zero)
    bare = copy.deepcopy(robot)
    for link in ("hand", "finger_left", "finger_right", "tcp"):
        bare.links[link].inertial = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the massless hand is padded with a tiny mass (builder warning)
        chain = SerialKinematicChain(bare, "base_link", "link7", hold_positions=hold)
    tau_bare = chain.inverse_dynamics(q, zero, zero)
    tau_sensed = chain.inverse_dynamics(q, zero, zero, external_wrenches={"hand": wrench})
    hand_id, hand_ft = tau_whole - tau_bare, tau_sensed - tau_bare
    err = np.linalg.norm(hand_id - hand_ft) / np.linalg.norm(hand_id)
    hand_mass = sum(robot.links[n].inertial.mass for n in ("hand", "finger_left", "finger_right"))
    print(f"wrist force |f| {np.linalg.norm(wrench[:3]):.4f} N (hand subtree weight {hand_mass * G:.4f} N)")
    print(f"hand load on joints: inverse dynamics {np.round(hand_id, 4)}, from the sensor {np.round(hand_ft, 4)}, "
          f"relative error {err:.2e}")
    assert np.linalg.norm(hand_id) > 1.0  # the pose loads the joints
    assert err < 0.01
    assert np.linalg.norm(wrench[:3]) == pytest.approx(hand_mass * G, rel=0.01)
    assert wrench[2] < 0  # the hand pulls the wrist down


# ----------------------------------------------------------------------------- IMU
def test_imu_at_rest_reads_g_up_and_no_rate():
    engine = PhysicsEngine(load_robot(URDF_DIR / "rc_arm.urdf"))
    engine.step(500)
    imu = _values(engine, "base_imu")
    acc = [imu[f"linear_acceleration.{a}"] for a in "xyz"]
    rate = [imu[f"angular_velocity.{a}"] for a in "xyz"]
    quat = [imu[f"orientation.{a}"] for a in "xyzw"]
    print(f"IMU at rest: acceleration {np.round(acc, 5)}, rate {np.round(rate, 6)}, orientation {np.round(quat, 6)}")
    assert acc == pytest.approx([0.0, 0.0, G], abs=0.01 * G)
    assert np.abs(rate).max() < 1e-6
    assert quat == pytest.approx([0.0, 0.0, 0.0, 1.0], abs=1e-9)


def test_a_rotated_base_shows_in_the_imu_orientation_and_gravity_direction():
    """base_pose turns the fixed base 90 deg about x: orientation (x, y, z, w) = (sin 45, 0, 0, cos 45), and the
    proper acceleration (world up, R^T e_z in the base frame) lies along the base's +y."""
    robot = load_robot(URDF_DIR / "rc_arm.urdf")
    base = base_pose_quaternion([0.0, 0.0, 0.5, math.pi / 2, 0.0, 0.0])
    engine = PhysicsEngine(robot, scene=scene_hook(None, robot.root_link, base))
    engine.step(200)
    imu = _values(engine, "base_imu")
    quat = [imu[f"orientation.{a}"] for a in "xyzw"]
    acc = np.array([imu[f"linear_acceleration.{a}"] for a in "xyz"])
    h = math.sqrt(0.5)
    print(f"IMU on a base rolled 90 deg: orientation {np.round(quat, 6)}, acceleration {np.round(acc, 4)}")
    assert quat == pytest.approx([h, 0.0, 0.0, h], abs=1e-6)
    # world up (0, 0, 1) in the base frame: R_x(90)^T e_z = (0, 1, 0)
    assert acc == pytest.approx([0.0, G, 0.0], abs=0.01 * G)


def test_a_spinning_joint_shows_in_the_pose_sensor():
    engine = PhysicsEngine(load_robot(RIG), initial_positions={"spin": 0.0})
    engine.set_command("spin", position=1.0)
    engine.step(3000)
    pose = _values(engine, "rotor_pose")
    yaw = 2.0 * math.atan2(pose["orientation.z"], pose["orientation.w"])
    spin = float(engine.positions()[engine.joint_names.index("spin")])
    print(f"pose sensor: position {[round(pose[f'position.{a}'], 6) for a in 'xyz']}, yaw {yaw:.5f} (joint {spin:.5f})")
    assert [pose[f"position.{a}"] for a in "xyz"] == pytest.approx([0.3, 0.0, 0.1], abs=1e-6)
    assert yaw == pytest.approx(spin, abs=1e-6) and spin == pytest.approx(1.0, abs=0.01)


# ----------------------------------------------------------------------------- range
def test_range_finder_sees_the_box_top_and_nothing_without_it(tmp_path):
    engine, world = _rig_with_world(tmp_path)
    engine.step(1500)
    top = world.pose("parcel").position[2] + 0.05
    reading = _values(engine, "mast_range")["range"]
    print(f"range {reading:.5f} m to the box top at z={top:.5f} (mast at 0.6 m)")
    assert reading == pytest.approx(0.6 - top, abs=1e-4)
    world.remove("parcel")
    engine.step(2)
    plate_top = 0.05 + 0.02
    assert _values(engine, "mast_range")["range"] == pytest.approx(0.6 - plate_top, abs=1e-4)


def test_range_without_a_target_is_infinite(tmp_path):
    robot = load_robot(RIG)
    robot.joints["mast_joint"].origin.rpy[:] = [0.0, -math.pi / 2, 0.0]  # the mast now looks up, at the sky
    engine = PhysicsEngine(robot)
    engine.step(2)
    assert _values(engine, "mast_range")["range"] == math.inf


# ----------------------------------------------------------------------------- noise
def test_noise_params_add_gaussian_noise_of_that_stddev():
    text = RIG.read_text(encoding="utf-8").replace(
        '<param name="frame_id">plate</param>',
        '<param name="frame_id">plate</param><param name="force_noise_stddev">0.5</param>')
    engine = PhysicsEngine(load_robot(text), sensor_seed=7)
    engine.step(200)
    samples = np.array([_values(engine, "scale_ft")["force.x"] for _ in range(4000)])
    torque = [_values(engine, "scale_ft")["torque.x"] for _ in range(10)]
    print(f"force.x noise: mean {samples.mean():.4f}, stddev {samples.std():.4f} (asked 0.5)")
    assert samples.std() == pytest.approx(0.5, rel=0.05) and abs(samples.mean()) < 0.05
    assert np.ptp(torque) == 0.0  # torque has no noise param


def _resting_imu_samples(engine: PhysicsEngine, n: int = 3000) -> np.ndarray:
    """linear_acceleration.z of base_imu over ``n`` reads of the rig at rest (one step apart)."""
    engine.step(200)
    out = []
    for _ in range(n):
        engine.step(1)
        out.append(_values(engine, "base_imu")["linear_acceleration.z"])
    return np.array(out)


@pytest.mark.parametrize("form", ["ros2_control", "gazebo"])
def test_a_resting_imu_has_the_configured_noise_and_a_seed_repeats_it(form):
    """Both ways of asking: the ros2_control sensor's ``linear_acceleration_noise_stddev`` / ``_noise_mean`` params,
    and the Gazebo block's ``<linear_acceleration><x><noise>`` (mean, stddev). Resting, the readings' sample
    stddev is the configured one within 10 % and their mean is g + mean; the same seed gives the same samples,
    another seed others."""
    std, mean = 0.08, 0.05
    text = RIG.read_text(encoding="utf-8")
    if form == "ros2_control":
        text = text.replace('<param name="frame_id">base_link</param>',
                            '<param name="frame_id">base_link</param>'
                            f'<param name="linear_acceleration_noise_stddev">{std}</param>'
                            f'<param name="linear_acceleration_noise_mean">{mean}</param>', 1)
    else:  # the ros2_control sensor without frame_id takes its place and noise from the Gazebo block of its name
        text = text.replace('<param name="frame_id">base_link</param>', "", 1).replace("</robot>", f"""
  <gazebo reference="base_link"><sensor type="imu" name="base_imu"><imu><linear_acceleration><x>
    <noise type="gaussian"><mean>{mean}</mean><stddev>{std}</stddev></noise></x></linear_acceleration></imu>
  </sensor></gazebo></robot>""")
    robot = load_robot(text)
    samples = _resting_imu_samples(PhysicsEngine(copy.deepcopy(robot), sensor_seed=11))
    quiet = _resting_imu_samples(PhysicsEngine(load_robot(RIG)), 50)
    print(f"{form}: resting IMU acceleration z: mean {samples.mean():.4f} (noise-free {quiet.mean():.4f}), "
          f"sample stddev {samples.std(ddof=1):.4f} (configured {std})")
    assert samples.std(ddof=1) == pytest.approx(std, rel=0.10)
    assert quiet.std() < 1e-6  # without the noise the resting reading is constant
    assert samples.mean() == pytest.approx(quiet.mean() + mean, abs=4 * std / math.sqrt(samples.size))
    again = _resting_imu_samples(PhysicsEngine(copy.deepcopy(robot), sensor_seed=11))
    other = _resting_imu_samples(PhysicsEngine(copy.deepcopy(robot), sensor_seed=12))
    assert np.array_equal(samples, again) and not np.array_equal(samples, other)


# ----------------------------------------------------------------------------- bad declarations
def _rig_text(old: str, new: str) -> str:
    text = RIG.read_text(encoding="utf-8")
    assert old in text
    return text.replace(old, new)


@pytest.mark.parametrize(("old", "new", "said"), [
    ('<param name="frame_id">plate</param>', '<param name="frame_id">no_such_link</param>',
     "frame_id 'no_such_link' is not a link"),
    ('<state_interface name="range"/>', '<state_interface name="temperature"/>',
     "state interface 'temperature' is not one the simulator provides"),
    ('<state_interface name="range"/>', '<state_interface name="range"/><state_interface name="force.x"/>',
     "mix sensor kinds"),
    ('<param name="frame_id">mast</param>', "", "no <param name=\"frame_id\">"),
    ('<param name="frame_id">plate</param>', '<param name="frame_id">plate</param>'
     '<param name="range_noise_stddev">0.1</param>', "does not apply to a force_torque sensor"),
])
def test_bad_sensor_declarations_are_one_line_errors_naming_file_line_and_element(tmp_path, old, new, said):
    path = tmp_path / "bad_rig.urdf"
    path.write_text(_rig_text(old, new), encoding="utf-8")
    robot = load_robot(path)  # the description itself loads; the simulator refuses what it cannot simulate
    with pytest.raises(RobotModelError) as err:
        PhysicsEngine(robot)
    msg = str(err.value)
    print(msg)
    assert "\n" not in msg and said in msg
    assert msg.startswith(f"{path}:") and "<sensor name='" in msg
    line = int(msg.split(":")[1])
    assert "<sensor name=" in path.read_text(encoding="utf-8").splitlines()[line - 1]


# ----------------------------------------------------------------------------- Gazebo <sensor> blocks
GAZEBO_BLOCKS = """
  <gazebo reference="base_link">
    <sensor type="imu" name="gz_imu">
      <pose>0 0 0.1 0 0 1.5707963267948966</pose>
      <imu><angular_velocity><x><noise type="gaussian"><stddev>0.02</stddev></noise></x></angular_velocity></imu>
    </sensor>
  </gazebo>
  <gazebo reference="scale_joint">
    <sensor type="force_torque" name="gz_ft">
      <force_torque><frame>child</frame><measure_direction>parent_to_child</measure_direction></force_torque>
    </sensor>
  </gazebo>
  <gazebo reference="plate">
    <sensor type="force_torque" name="scale_ft_twin"/>
  </gazebo>
"""


def _rig_with_gazebo(tmp_path: Path, extra_ros2_control: str = "") -> Path:
    text = RIG.read_text(encoding="utf-8").replace("</robot>", GAZEBO_BLOCKS + "</robot>")
    if extra_ros2_control:
        text = text.replace("  </ros2_control>", extra_ros2_control + "\n  </ros2_control>")
    path = tmp_path / "gazebo_rig.urdf"
    path.write_text(text, encoding="utf-8")
    return path


def test_gazebo_imu_and_force_torque_blocks_are_simulated_with_their_pose_direction_and_noise(tmp_path):
    engine = PhysicsEngine(load_robot(_rig_with_gazebo(tmp_path)), sensor_seed=3)
    engine.step(500)
    names = {n.split("/")[0] for n in engine.sensor_names}
    assert {"gz_imu", "gz_ft", "scale_ft_twin"} <= names
    imu = _values(engine, "gz_imu")
    yaw = 2.0 * math.atan2(imu["orientation.z"], imu["orientation.w"])
    rates = np.array([_values(engine, "gz_imu")["angular_velocity.x"] for _ in range(2000)])
    print(f"Gazebo IMU: yaw {yaw:.5f} (pose yaw pi/2), acceleration z {imu['linear_acceleration.z']:.4f}, "
          f"rate x noise stddev {rates.std():.4f} (0.02)")
    assert yaw == pytest.approx(math.pi / 2, abs=1e-6)
    assert imu["linear_acceleration.z"] == pytest.approx(G, abs=0.01 * G) and len(imu) == 10
    assert rates.std() == pytest.approx(0.02, rel=0.1)
    ros2, flipped, twin = (_values(engine, n)["force.z"] for n in ("scale_ft", "gz_ft", "scale_ft_twin"))
    print(f"plate load: ros2_control {ros2:.4f}, Gazebo parent_to_child {flipped:.4f}, Gazebo default {twin:.4f}")
    assert ros2 == pytest.approx(-PLATE_MASS * G, rel=0.01)
    assert flipped == pytest.approx(-ros2, rel=1e-9) and twin == pytest.approx(ros2, rel=1e-9)


def test_a_ros2_control_sensor_without_frame_id_takes_its_gazebo_twins_link_and_pose(tmp_path):
    decl = """    <sensor name="gz_imu">
      <state_interface name="orientation.z"/>
      <state_interface name="orientation.w"/>
      <state_interface name="angular_velocity.z"/>
    </sensor>"""
    engine = PhysicsEngine(load_robot(_rig_with_gazebo(tmp_path, decl)))
    engine.step(10)
    gz = [n for n in engine.sensor_names if n.startswith("gz_imu/")]
    assert gz == ["gz_imu/orientation.z", "gz_imu/orientation.w", "gz_imu/angular_velocity.z"]
    imu = _values(engine, "gz_imu")
    assert 2.0 * math.atan2(imu["orientation.z"], imu["orientation.w"]) == pytest.approx(math.pi / 2, abs=1e-6)
