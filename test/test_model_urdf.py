"""URDF reading: every element of the URDF feature tree (plus ros2_control and rbc), read from files under
test/data/urdf/; xacro expansion; write/read round trips; third-party robots; reader options."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from robot_files import DATA_URDF, PACKAGES, PANDA, PR2, REPO, UR5, erd_robot

from robot_core.model import (
    Geometry,
    Link,
    Pose,
    RobotModelError,
    RobotModelWarning,
    Visual,
    load_robot,
    save_robot,
)
from robot_core.model.mass_properties import mesh_bounds, shape_volume_and_inertia
from robot_core.model.model_compare import IGNORED_FIELDS, model_differences
from robot_core.model.package_paths import find_package, resolve_uri
from robot_core.model.urdf_reader import read_urdf
from robot_core.model.urdf_writer import write_urdf

DATA = DATA_URDF
MESH = DATA / "meshes" / "box.stl"
PKG_MESH = PACKAGES / "rc_test_pkg" / "meshes" / "box.stl"


THIRD_PARTY = {"panda": PANDA, "ur5": UR5, "pr2": PR2}


def load(name: str, **kw):
    kw.setdefault("package_dirs", [PACKAGES])
    return load_robot(DATA / name, **kw)


# --- <robot>, <link>, <inertial> ------------------------------------------------------------------------------
def test_robot_name_and_document_order():
    model = load("joints.urdf")
    assert model.name == "joints_test"
    assert list(model.joints) == ["revolute", "continuous", "prismatic", "fixed", "floating", "planar", "mimic",
                                  "default_axis"]
    assert next(iter(model.links)) == "base"
    assert model.root_link == "base"
    assert model.source_file == str(DATA / "joints.urdf")


def test_inertial_origin_mass_and_full_inertia():
    base = load("inertial.urdf").links["base"]
    assert base.inertial is not None
    assert base.inertial.mass == 2.5
    np.testing.assert_array_equal(base.inertial.origin.xyz, [0.1, -0.2, 0.3])
    np.testing.assert_array_equal(base.inertial.origin.rpy, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(base.inertial.inertia,
                                  [[0.4, 0.01, -0.02], [0.01, 0.5, 0.03], [-0.02, 0.03, 0.6]])
    assert base.inertial.source.line == 5


def test_inertial_absent_and_default_origin():
    model = load("inertial.urdf")
    assert model.links["massless"].inertial is None
    no_origin = model.links["no_origin"].inertial
    assert no_origin is not None and no_origin.origin.is_identity()
    assert model.total_mass() == pytest.approx(3.5)


def test_link_source_lines():
    model = load("inertial.urdf")
    assert model.links["base"].source.line == 4
    assert model.links["base"].source.element == "link 'base'"
    assert model.joints["j2"].source.line == 22


# --- <visual>, <collision>, <geometry>, <material> ---------------------------------------------------------------
def _visual(name: str) -> Visual:
    link = load("geometry.urdf").links["base"]
    return next(v for v in link.visuals if v.name == name)


def test_visual_name_and_origin():
    v = _visual("v_box")
    np.testing.assert_array_equal(v.origin.xyz, [1, 2, 3])
    np.testing.assert_array_equal(v.origin.rpy, [0.5, 0, -0.5])
    assert _visual("v_cylinder").origin.is_identity()


def test_geometry_box():
    g = _visual("v_box").geometry
    assert g.kind == "box"
    np.testing.assert_array_equal(g.size, [0.1, 0.2, 0.3])


def test_geometry_cylinder():
    g = _visual("v_cylinder").geometry
    assert (g.kind, g.radius, g.length) == ("cylinder", 0.05, 0.4)


def test_geometry_sphere():
    g = _visual("v_sphere").geometry
    assert (g.kind, g.radius) == ("sphere", 0.07)


def test_geometry_mesh_relative_path_and_scale():
    g = _visual("v_mesh_relative").geometry
    assert g.kind == "mesh"
    assert g.filename == "meshes/box.stl"
    np.testing.assert_array_equal(g.scale, [2, 2, 2])
    assert g.resolved_filename == str(MESH.resolve())


def test_geometry_mesh_package_uri_through_package_dirs():
    g = _visual("v_mesh_package").geometry
    assert g.filename == "package://rc_test_pkg/meshes/box.stl"
    np.testing.assert_array_equal(g.scale, [1, 1, 1])
    assert g.resolved_filename == str(PKG_MESH.resolve())


def test_geometry_mesh_file_uri_relative_to_urdf():
    assert _visual("v_mesh_file").geometry.resolved_filename == str(MESH.resolve())


def test_unresolvable_mesh_warns_and_keeps_none():
    with pytest.warns(RobotModelWarning, match="could not resolve 2 mesh file"):
        model = load_robot(DATA / "geometry.urdf")  # no package_dirs: rc_test_pkg is unknown
    g = next(v for v in model.links["base"].visuals if v.name == "v_mesh_package").geometry
    assert g.resolved_filename is None
    assert g.filename == "package://rc_test_pkg/meshes/box.stl"


def test_package_dir_may_be_the_package_itself_or_a_folder_of_packages(monkeypatch):
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    expected = str((PACKAGES / "rc_test_pkg").resolve())
    assert find_package("rc_test_pkg", [PACKAGES]) == expected
    assert find_package("rc_test_pkg", [PACKAGES / "rc_test_pkg"]) == expected
    assert find_package("rc_test_pkg", []) is None
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(PACKAGES))
    assert find_package("rc_test_pkg") == expected
    assert resolve_uri("package://rc_test_pkg/meshes/box.stl") == str(PKG_MESH.resolve())


def test_ament_prefix_path_resolves_share_dirs(tmp_path, monkeypatch):
    share = tmp_path / "install" / "share" / "my_pkg" / "meshes"
    share.mkdir(parents=True)
    (share / "m.stl").write_bytes(MESH.read_bytes())
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path / "install"))
    assert resolve_uri("package://my_pkg/meshes/m.stl") == str((share / "m.stl").resolve())


def test_collision_name_origin_and_geometry():
    cols = load("geometry.urdf").links["base"].collisions
    assert [c.name for c in cols] == ["c_box", ""]
    np.testing.assert_array_equal(cols[0].origin.xyz, [0, 0, 0.15])
    assert cols[0].geometry.kind == "box"
    assert cols[1].geometry.kind == "mesh"
    np.testing.assert_array_equal(cols[1].geometry.scale, [1, 1, 0.5])
    assert cols[1].geometry.resolved_filename == str(PKG_MESH.resolve())


def test_material_reference_to_global_definition():
    model = load("geometry.urdf")
    assert set(model.materials) == {"blue", "checker"}
    mat = _visual("v_box").material
    assert mat is not None and mat.name == "blue"
    np.testing.assert_array_equal(mat.rgba, [0, 0, 0.8, 1])


def test_material_inline_color_and_reuse_by_name():
    inline = _visual("v_cylinder").material
    assert inline is not None and inline.name == "red"
    np.testing.assert_array_equal(inline.rgba, [1, 0, 0, 0.5])
    reused = _visual("v_mesh_relative").material
    assert reused is not None
    np.testing.assert_array_equal(reused.rgba, [1, 0, 0, 0.5])


def test_material_texture():
    mat = _visual("v_sphere").material
    assert mat is not None and mat.texture == "textures/checker.png" and mat.rgba is None


# --- <joint> ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("jtype", ["revolute", "continuous", "prismatic", "fixed", "floating", "planar"])
def test_joint_types(jtype):
    joint = load("joints.urdf").joints[jtype]
    assert joint.type == jtype
    assert joint.is_scalar == (jtype in ("revolute", "continuous", "prismatic"))


def test_joint_origin_parent_child():
    j = load("joints.urdf").joints["revolute"]
    assert (j.parent, j.child) == ("base", "l_revolute")
    np.testing.assert_array_equal(j.origin.xyz, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(j.origin.rpy, [0, 0, math.pi / 2])
    assert load("joints.urdf").joints["fixed"].origin.rpy.tolist() == [0, 0, 0]


def test_joint_axis_normalised_and_default():
    joints = load("joints.urdf").joints
    np.testing.assert_array_equal(joints["revolute"].axis, [0, 0, 1])  # written as 0 0 2
    np.testing.assert_allclose(joints["prismatic"].axis, [math.sqrt(0.5), math.sqrt(0.5), 0])
    np.testing.assert_array_equal(joints["default_axis"].axis, [1, 0, 0])


def test_joint_calibration():
    c = load("joints.urdf").joints["revolute"].calibration
    assert c is not None and (c.rising, c.falling, c.reference_position) == (0.25, -0.25, 0.1)
    assert load("joints.urdf").joints["continuous"].calibration is None


def test_joint_dynamics():
    d = load("joints.urdf").joints["revolute"].dynamics
    assert d is not None and (d.damping, d.friction) == (0.7, 0.3)


def test_joint_limit():
    joints = load("joints.urdf").joints
    lim = joints["revolute"].limit
    assert lim is not None and (lim.lower, lim.upper, lim.effort, lim.velocity) == (-1.5, 2.5, 40, 1.5)
    cont = joints["continuous"].limit
    assert cont is not None and (cont.lower, cont.upper, cont.effort, cont.velocity) == (None, None, 5, 6)
    default_range = joints["default_axis"].limit
    assert default_range is not None and (default_range.lower, default_range.upper) == (0.0, 0.0)


def test_joint_mimic():
    joints = load("joints.urdf").joints
    m = joints["mimic"].mimic
    assert m is not None and (m.joint, m.multiplier, m.offset) == ("revolute", -2, 0.5)
    d = joints["default_axis"].mimic
    assert d is not None and (d.multiplier, d.offset) == (1.0, 0.0)
    model = load("joints.urdf")
    assert "mimic" in model.scalar_joint_names() and "mimic" not in model.actuated_joint_names()


def test_joint_safety_controller():
    s = load("joints.urdf").joints["revolute"].safety_controller
    assert s is not None
    assert (s.soft_lower_limit, s.soft_upper_limit, s.k_position, s.k_velocity) == (-1.4, 2.4, 100, 10)


# --- <transmission> -------------------------------------------------------------------------------------------
def test_transmission_new_format():
    t = load("transmission.urdf").transmissions[0]
    assert (t.name, t.type) == ("t1", "transmission_interface/SimpleTransmission")
    assert t.joints[0].name == "j1"
    assert t.joints[0].hardware_interfaces == ["hardware_interface/EffortJointInterface",
                                               "hardware_interface/PositionJointInterface"]
    assert t.actuators[0].name == "m1"
    assert t.actuators[0].mechanical_reduction == 50
    assert t.actuators[0].hardware_interfaces == ["hardware_interface/EffortJointInterface"]
    assert t.source.line == 12


def test_transmission_old_pr2_format():
    t = load("transmission.urdf").transmissions[1]
    assert (t.name, t.type) == ("t2", "pr2_mechanism_model/SimpleTransmission")
    assert [j.name for j in t.joints] == ["j2"]
    assert t.actuators[0].name == "m2" and t.actuators[0].mechanical_reduction == -79.5


def test_transmission_mechanical_reduction_underscore_spelling():
    t = load("transmission.urdf").transmissions[2]
    assert t.actuators[0].mechanical_reduction == 12.5
    assert t.joints[0].hardware_interfaces == ["VelocityJointInterface"]


# --- <ros2_control> -------------------------------------------------------------------------------------------
def test_ros2_control_hardware():
    blocks = load("ros2_control.urdf").ros2_control
    assert [(b.name, b.type) for b in blocks] == [("TestSystem", "system"), ("Sensors", "sensor")]
    hw = blocks[0]
    assert hw.plugin == "topic_based_ros2_control/TopicBasedSystem"
    assert hw.hardware_params == {"joint_commands_topic": "/robot_joint_commands",
                                  "joint_states_topic": "/robot_joint_states",
                                  "trigger_joint_command_threshold": "-1"}
    assert hw.source.line == 15


def test_ros2_control_joint_interfaces_and_params():
    j1, j2 = load("ros2_control.urdf").ros2_control[0].joints
    assert [i.name for i in j1.command_interfaces] == ["position", "velocity"]
    assert (j1.command_interfaces[0].min, j1.command_interfaces[0].max) == (-1.9, 1.9)
    assert j1.command_interfaces[0].params == {"min": "-1.9", "max": "1.9"}
    assert [i.name for i in j1.state_interfaces] == ["position", "velocity", "effort"]
    assert j1.state_interfaces[0].initial_value == 0.75
    assert j1.params == {"p_gain": "12.5"}
    assert j2.command_interfaces[0].name == "effort" and j2.command_interfaces[0].min == -10


def test_ros2_control_initial_value_sets_joint_initial_position():
    model = load("ros2_control.urdf")
    assert model.joints["j1"].initial_position == 0.75
    assert model.joints["j2"].initial_position is None


def test_ros2_control_sensor_and_gpio():
    block = load("ros2_control.urdf").ros2_control[0]
    sensor = block.sensors[0]
    assert sensor.name == "tcp_fts"
    assert [i.name for i in sensor.state_interfaces] == ["force.x", "torque.z"]
    assert sensor.params == {"frame_id": "l2"}
    gpio = block.gpios[0]
    assert gpio.name == "flange_io"
    assert gpio.command_interfaces[0].name == "digital_output1"
    assert gpio.command_interfaces[0].data_type == "bool"
    assert gpio.state_interfaces[0].initial_value == 1.0
    assert gpio.params == {"bus": "ethercat"}


# --- <rbc> ----------------------------------------------------------------------------------------------------
def test_rbc_nodes_vars_and_msgs():
    model = load("rbc.urdf")
    j0 = model.joints["aplator_j0"]
    assert [n.node for n in j0.rbc] == ["arcoslab_platform_torso", "torque_sensor"]
    torso = j0.rbc[0]
    assert torso.joint == "aplator_j0"
    q, q_ref = torso.vars
    assert (q.name, q.topic, q.type, q.init) == ("q", "arcoslab_platform_torso/state", "state", 0.0)
    assert (q.msg.type, q.msg.field, q.msg.field_array, q.msg.index, q.msg.index_type) == (
        "impedance_control_msgs.msg.State", "position", True, 0, "float")
    assert (q_ref.name, q_ref.type, q_ref.init) == ("q_ref", "cmd", 0.5)
    tau = j0.rbc[1].vars[0]
    assert (tau.msg.type, tau.msg.field, tau.msg.field_array) == ("geometry_msgs/msg/WrenchStamped",
                                                                  "wrench.torque.z", False)
    assert model.joints["aplator_j1"].rbc[0].vars[0].msg.index == 1
    assert len(model.rbc_nodes()) == 3
    assert q.source.line == 11 and "var 'q'" in q.source.element


# --- xacro ----------------------------------------------------------------------------------------------------
def test_xacro_find_and_package_includes_through_package_dirs(monkeypatch):
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    model = load_robot(DATA / "uses_pkg.urdf.xacro", package_dirs=[PACKAGES])
    assert list(model.links) == ["base", "link"]
    assert model.links["base"].inertial.mass == 3.0
    assert model.joints["joint"].limit.upper == 2.0
    mesh = model.links["base"].visuals[0].geometry
    assert mesh.filename == "package://rc_test_pkg/meshes/box.stl"
    assert mesh.resolved_filename == str(PKG_MESH.resolve())
    np.testing.assert_allclose(mesh.scale, [0.2, 0.2, 0.2])


def test_xacro_find_and_package_includes_through_ros_package_path(monkeypatch):
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(PACKAGES))
    model = load_robot(DATA / "uses_pkg.urdf.xacro")  # no package_dirs: $(find) and package:// use the env
    assert model.links["base"].inertial.mass == 3.0
    assert model.links["base"].visuals[0].geometry.resolved_filename == str(PKG_MESH.resolve())


def test_xacro_mappings():
    model = load_robot(DATA / "uses_pkg.urdf.xacro", package_dirs=[PACKAGES], mappings={"mass": 7.5})
    assert model.links["base"].inertial.mass == 7.5
    inside = PACKAGES / "rc_test_pkg" / "urdf" / "robot.urdf.xacro"
    model = load_robot(inside, package_dirs=[PACKAGES], mappings={"prefix": "left_", "upper": "0.5"})
    assert list(model.joints) == ["left_joint"] and model.joints["left_joint"].limit.lower == -0.5


def test_xacro_unknown_package_is_an_error_naming_the_file(monkeypatch):
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    with pytest.raises(RobotModelError, match="rc_test_pkg") as info:
        load_robot(DATA / "uses_pkg.urdf.xacro")
    assert "uses_pkg.urdf.xacro" in str(info.value)


def test_xacro_from_string():
    text = (DATA / "uses_pkg.urdf.xacro").read_text()
    model = load_robot(text, package_dirs=[PACKAGES])
    assert model.name == "uses_pkg" and model.source_file == "<string>"


def test_urdf_from_string():
    model = load_robot((DATA / "joints.urdf").read_text())
    assert model.name == "joints_test" and len(model.joints) == 8


# --- round trips ----------------------------------------------------------------------------------------------
ROUND_TRIP_FILES = sorted(p.name for p in DATA.glob("*.urdf"))


def _roundtrip(model, base_dir: Path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        text = write_urdf(model)
    lost = [str(w.message) for w in caught if "Gazebo <sensor>" in str(w.message)]
    assert bool(lost) == bool(model.sensors)  # the writer does not write Gazebo sensors, and says so
    again = read_urdf(text, package_dirs=[PACKAGES], base_dir=base_dir)
    return model_differences(model, again, ignore=IGNORED_FIELDS | {"sensors"})


@pytest.mark.parametrize("name", ROUND_TRIP_FILES)
def test_round_trip_test_files(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        model = load(name)
    assert _roundtrip(model, DATA) == []


@pytest.mark.parametrize("name", ["rc_arm.urdf", "planar2.urdf", "rc_arm.urdf.xacro"])
def test_round_trip_example_robots(name):
    model = load_robot(REPO / "urdf" / name)
    assert _roundtrip(model, REPO / "urdf") == []


@pytest.mark.parametrize("robot", sorted(THIRD_PARTY))
def test_round_trip_third_party(robot):
    path = Path(erd_robot(THIRD_PARTY[robot]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        model = load_robot(path)
        assert _roundtrip(model, path.parent) == []


def test_save_robot_urdf(tmp_path):
    model = load_robot(REPO / "urdf" / "planar2.urdf")
    out = tmp_path / "copy.urdf"
    save_robot(model, out)
    assert model_differences(model, load_robot(out)) == []


# --- third-party robots ---------------------------------------------------------------------------------------
def test_panda_loads_with_meshes_resolved():
    model = load_robot(erd_robot(PANDA))
    assert model.actuated_joint_names() == [f"panda_joint{i}" for i in range(1, 8)] + ["panda_finger_joint1"]
    assert model.joints["panda_finger_joint2"].mimic.joint == "panda_finger_joint1"
    meshes = [v.geometry for link in model.links.values() for v in link.visuals + link.collisions
              if v.geometry.kind == "mesh"]
    assert meshes and all(g.resolved_filename and Path(g.resolved_filename).is_file() for g in meshes)
    # Panda's link8 is written with mass 0 and a zero inertia: a massless frame.
    assert model.links["panda_link8"].inertial is None


def test_ur5_loads_with_transmissions():
    model = load_robot(erd_robot(UR5), package_dirs=[Path(erd_robot(UR5)).parents[4]])
    assert len(model.actuated_joint_names()) == 6
    assert len(model.transmissions) == 6
    assert all(a.mechanical_reduction == 1 for t in model.transmissions for a in t.actuators)
    assert all(Path(v.geometry.resolved_filename).is_file() for link in model.links.values() for v in link.visuals)


def test_pr2_loads():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RobotModelWarning)
        model = load_robot(erd_robot(PR2))
    # Two PR2 links ship inertias that break the triangle inequality: loadable, but reported.
    assert sum("triangle inequality" in str(w.message) for w in caught) == 2
    assert model.chain("torso_lift_link", "r_gripper_palm_link")[0].name == "r_shoulder_pan_joint"
    assert len(model.transmissions) == 30
    assert model.total_mass() > 100


# --- options --------------------------------------------------------------------------------------------------
def test_fixed_base_option():
    assert load("joints.urdf").fixed_base is True
    assert load("joints.urdf", fixed_base=False).fixed_base is False


def test_merge_kinematic_links():
    with pytest.warns(RobotModelWarning, match="'arm' has no <inertial>"):
        model = load("massless.urdf", merge_kinematic_links=True)
    assert list(model.links) == ["base", "arm"]  # bracket merged into base, shell merged into arm
    assert list(model.joints) == ["arm_joint"]
    arm_joint = model.joints["arm_joint"]
    assert arm_joint.parent == "base"
    # arm_joint's origin composed with bracket_joint's: z 0.1 + 0.1, yaw pi/2 inherited.
    np.testing.assert_allclose(arm_joint.origin.matrix(),
                               Pose(np.array([0, 0, 0.1]), np.array([0, 0, math.pi / 2])).matrix()
                               @ Pose(np.array([0, 0, 0.1])).matrix(), atol=1e-12)
    base = model.links["base"]
    assert [v.name for v in base.visuals] == ["", "bracket_box"]
    np.testing.assert_allclose(base.visuals[1].origin.xyz, [0, 0, 0.15], atol=1e-12)
    np.testing.assert_allclose(base.visuals[1].origin.rpy, [0, 0, math.pi / 2], atol=1e-12)
    assert [c.name for c in base.collisions] == ["bracket_collision"]
    assert len(model.links["arm"].visuals) == 3  # cylinder, sphere, shell mesh


def test_merge_keeps_links_with_inertial():
    model = load_robot(REPO / "urdf" / "rc_arm.urdf", merge_kinematic_links=True)
    assert "hand" in model.links  # hand has an <inertial>
    assert "tcp" not in model.links and "tcp_joint" not in model.joints  # massless frame merged


@pytest.mark.filterwarnings("ignore::robot_core.model.RobotModelWarning")
def test_density_box_cylinder_sphere():
    model = load("massless.urdf", density=1000.0)
    bracket = model.links["bracket"].inertial
    assert bracket is not None
    assert bracket.mass == pytest.approx(1000 * 0.1 * 0.2 * 0.1)
    np.testing.assert_allclose(bracket.origin.xyz, [0, 0, 0.05])
    m = bracket.mass
    np.testing.assert_allclose(np.diag(bracket.inertia),
                               [m * (0.04 + 0.01) / 12, m * (0.01 + 0.01) / 12, m * (0.01 + 0.04) / 12])
    arm = model.links["arm"].inertial
    m_cyl, m_sph = 1000 * math.pi * 0.05**2 * 0.4, 1000 * 4 / 3 * math.pi * 0.05**3
    assert arm.mass == pytest.approx(m_cyl + m_sph)
    assert arm.origin.xyz[2] == pytest.approx((m_cyl * 0.2 + m_sph * 0.4) / (m_cyl + m_sph))
    assert model.links["base"].inertial.mass == 2  # given <inertial> is kept


def test_density_mesh_uses_bounding_box_with_warning():
    with pytest.warns(RobotModelWarning, match="bounding box"):
        model = load("massless.urdf", density=500.0)
    shell = model.links["shell"].inertial
    assert shell.mass == pytest.approx(500 * 0.2 * 0.1 * 0.05)
    np.testing.assert_allclose(shell.origin.xyz, [0.11, 0, 0], atol=1e-9)  # visual at x=0.1, box centre x=0.01


def test_mesh_bounds_and_capsule():
    lo, hi = mesh_bounds(str(MESH))
    np.testing.assert_allclose(lo, [-0.09, -0.05, -0.025])
    np.testing.assert_allclose(hi, [0.11, 0.05, 0.025])
    m, _com, inertia = shape_volume_and_inertia(Geometry("capsule", radius=0.1, length=0.0), 1000.0)
    sphere = shape_volume_and_inertia(Geometry("sphere", radius=0.1), 1000.0)
    assert m == pytest.approx(sphere[0])
    np.testing.assert_allclose(inertia, sphere[2])


def test_density_link_without_visuals_stays_massless():
    model = load("inertial.urdf", density=1000.0)
    assert model.links["massless"].inertial is None
    assert isinstance(model.links["massless"], Link)
