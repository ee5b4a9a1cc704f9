"""ros2_control blocks as real descriptions write them (issue #15): ros2_control's own transmission form, the
simulation hardware plugins of Gazebo / MuJoCo / mock components, per-joint servo gains and acceleration commands.

Unit tests against the ROS-free cores; the DDS check of a gz_ros2_control robot is test_cm_sim_plugins.py.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest
from robot_files import DATA_URDF

from robot_core.control import Strictness
from robot_core.control.acceleration import AccelerationToVelocity
from robot_core.control.errors import ControlError
from robot_core.control.generic_system import GenericSystem
from robot_core.control.hardware import IN_PROCESS_PLUGIN, HardwareInfo
from robot_core.control.manager import ControllerManagerCore
from robot_core.control.topic_based import TopicBasedComponent
from robot_core.model import RobotModelWarning, load_robot
from robot_core.model.robot_model import Ros2ControlInterface
from robot_core.model.urdf_reader import read_urdf
from robot_core.model.urdf_writer import write_urdf
from robot_core.physics.engine import PhysicsEngine

RRBOT = DATA_URDF / "rrbot_transmissions.urdf"
RRBOT_ROS1 = DATA_URDF / "rrbot_transmissions_ros1.urdf"
EDGE_CASES = DATA_URDF / "transmission_ros2_control.urdf"


def quiet_load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RobotModelWarning)
        return load_robot(str(path))


def mapping(robot):
    """(transmission, joint, actuator, reduction, offset) of every transmission, the form left out."""
    return [(t.name, t.type, t.joints[0].name, t.actuators[0].name, t.actuators[0].mechanical_reduction,
             t.joints[0].offset) for t in robot.transmissions]


# --- ros2_control's transmission form ---------------------------------------------------------------------------
def test_ros2_control_form_reads_like_the_ros1_form():
    new, old = quiet_load(RRBOT), quiet_load(RRBOT_ROS1)
    assert mapping(new) == mapping(old) == [
        ("transmission1", "transmission_interface/SimpleTransmission", "joint1", "actuator1", 20.0, 0.0),
        ("transmission2", "transmission_interface/SimpleTransmission", "joint2", "actuator2", -50.0, 0.0)]
    t = new.transmissions[0]
    assert t.ros2_control == "GazeboSimSystem" and old.transmissions[0].ros2_control == ""
    assert (t.joints[0].role, t.actuators[0].role) == ("joint1", "actuator1")
    assert t.source.line == 58 and "transmission 'transmission1'" in t.source.element
    # The controller manager's view: the same actuator names and reductions.
    sets = [HardwareInfo.from_ros2_control(r.ros2_control[0], r).transmissions for r in (new, old)]
    assert sets[0].items == sets[1].items
    assert sets[0].actuator_name("joint2") == "actuator2"


def test_ros2_control_form_simulates_like_the_ros1_form():
    runs = []
    for path in (RRBOT, RRBOT_ROS1):
        eng = PhysicsEngine(quiet_load(path))
        eng.set_command("joint1", position=0.4)
        eng.set_command("joint2", effort=3.0)
        eng.step(300)
        runs.append(eng)
    new, old = runs
    assert np.array_equal(new.positions(), old.positions())
    assert list(new.model.actuator_gear[:2, 0]) == list(old.model.actuator_gear[:2, 0]) == [20.0, -50.0]
    # The reduction is applied to the effort: the motor gives joint effort / reduction.
    ratio = new.efforts() / new.actuator_efforts()
    assert ratio == pytest.approx([20.0, -50.0])


def test_actuator_space_hardware_applies_either_form_alike():
    """Topic-based hardware with use_transmissions: actuator names and units on the wire, from either form."""
    wires = []
    for path in (RRBOT, RRBOT_ROS1):
        robot = quiet_load(path)
        robot.ros2_control[0].hardware_params["use_transmissions"] = "true"
        cm = ControllerManagerCore.from_robot(robot, plugin_override="topic_based_ros2_control/TopicBasedSystem")
        comp = cm.components["GazeboSimSystem"]
        comp.on_joint_state(["actuator1", "actuator2"], [4.0, 10.0], [2.0, -5.0], [1.5, 0.2])
        comp.read(0.0, 0.01)
        states = [cm.rm.read_state(f"joint{i}/{f}") for i in (1, 2) for f in ("position", "velocity", "effort")]
        assert states == pytest.approx([4.0 / 20, 2.0 / 20, 1.5 * 20, 10.0 / -50, -5.0 / -50, 0.2 * -50])
        cm.rm.claim("test", ["joint1/position", "joint2/effort"]).set([0.3, 6.0])
        wires.append([(list(m.name), list(m.position), list(m.effort)) for m in comp.build_commands(0.0)])
    assert wires[0] == wires[1] == [(["actuator1"], pytest.approx([0.3 * 20]), []),
                                    (["actuator2"], [], pytest.approx([6.0 / -50]))]


def test_reduction_under_actuator_offset_unknown_plugin_unknown_joint_and_twins():
    with pytest.warns(RobotModelWarning) as record:
        robot = load_robot(str(EDGE_CASES))
    texts = [str(w.message) for w in record]
    assert mapping(robot) == [("t1", "transmission_interface/SimpleTransmission", "j1", "motor1", 2.0, 0.25),
                              ("t2", "transmission_interface/SimpleTransmission", "j2", "motor2", 40.0, 0.0)]

    def one(*words):
        hits = [t for t in texts if all(w in t for w in words)]
        assert len(hits) == 1, (words, texts)
        return hits[0]

    assert one("transmission 't2'", "not under <joint>").startswith(f"{EDGE_CASES}:33:")
    assert one("'my_vendor/HarmonicDriveTransmission'", "transmission 't3'", "ignored").startswith(
        f"{EDGE_CASES}:40:")
    assert one("'j4_removed'", "transmission 't4'", "do not exist").startswith(f"{EDGE_CASES}:45:")
    assert one("'legacy_j1'", "'t1'", "line 25", "differs").startswith(f"{EDGE_CASES}:13:")
    info = HardwareInfo.from_ros2_control(robot.ros2_control[0], robot)
    t1 = info.transmissions.by_joint["j1"]
    assert (t1.actuator, t1.reduction, t1.offset) == ("motor1", 2.0, 0.25)
    assert t1.actuator_to_joint(1.0, 0.0, 0.0)[0] == pytest.approx(1.0 / 2.0 + 0.25)


def test_both_reductions_given_the_joints_applies():
    text = EDGE_CASES.read_text().replace('<actuator name="motor1" role="actuator1"/>',
                                          '<actuator name="motor1" role="actuator1">'
                                          '<mechanical_reduction>9</mechanical_reduction></actuator>')
    with pytest.warns(RobotModelWarning, match=r"transmission 't1'.*reduction> 2 applies; 9 under <actuator> is "
                                               r"ignored"):
        robot = read_urdf(text, "both.urdf")
    assert robot.transmissions[0].actuators[0].mechanical_reduction == 2.0


def test_writer_keeps_the_ros2_control_form_in_its_block():
    robot = quiet_load(RRBOT)
    text = write_urdf(robot)
    assert text.index("<ros2_control") < text.index('<transmission name="transmission1">')
    assert "<plugin>transmission_interface/SimpleTransmission</plugin>" in text
    again = read_urdf(text, "again.urdf")
    assert mapping(again) == mapping(robot)
    assert [t.ros2_control for t in again.transmissions] == ["GazeboSimSystem"] * 2


# --- simulation hardware plugins ------------------------------------------------------------------------------
@pytest.mark.parametrize("plugin, kind", [
    ("gz_ros2_control/GazeboSimSystem", TopicBasedComponent),
    ("ign_ros2_control/IgnitionSystem", TopicBasedComponent),
    ("gazebo_ros2_control/GazeboSystem", TopicBasedComponent),
    ("mujoco_ros2_control/MujocoSystemInterface", TopicBasedComponent),
    ("mujoco_ros2_control/MujocoSystem", TopicBasedComponent),
    ("topic_based_ros2_control/TopicBasedSystem", TopicBasedComponent),
    ("mock_components/GenericSystem", GenericSystem),
])
def test_simulation_plugins_run_unchanged_and_say_as_what(plugin, kind, caplog):
    text = RRBOT.read_text().replace("gz_ros2_control/GazeboSimSystem", plugin)
    robot = read_urdf(text, "rrbot.urdf")
    with caplog.at_level(logging.INFO, logger="robot_core.controller_manager"):
        cm = ControllerManagerCore.from_robot(robot)
    component = cm.components["GazeboSimSystem"]
    assert type(component) is kind
    lines = [r.getMessage() for r in caplog.records if "hardware component 'GazeboSimSystem'" in r.getMessage()]
    assert len(lines) == 1
    expected = "topic-based hardware (states from 'robot_joint_states'" if kind is TopicBasedComponent else \
        "mock hardware whose states mirror its commands"
    assert f"<plugin> '{plugin}' runs as {expected}" in lines[0]
    assert set(cm.rm.command_interface_names()) >= {"joint1/position", "joint1/effort", "joint2/position",
                                                    "joint2/effort"}


def test_a_replaced_plugin_is_named_in_the_log(caplog):
    robot = quiet_load(RRBOT)
    with caplog.at_level(logging.INFO, logger="robot_core.controller_manager"):
        ControllerManagerCore.from_robot(robot, plugin_override=IN_PROCESS_PLUGIN)
    assert any("<plugin> 'gz_ros2_control/GazeboSimSystem' (replaced by 'robot_core/InProcessSimulator') runs as "
               "the MuJoCo engine inside the controller manager" in r.getMessage() for r in caplog.records)


def test_an_unknown_plugin_is_refused_by_name():
    robot = read_urdf(RRBOT.read_text().replace("gz_ros2_control/GazeboSimSystem", "acme/ArmDriver"), "acme.urdf")
    with pytest.raises(ControlError, match=r"hardware plugin 'acme/ArmDriver' is not available; known plugins: "
                                           r".*gz_ros2_control/GazeboSimSystem"):
        ControllerManagerCore.from_robot(robot)


# --- per-joint servo gains of MuJoCo descriptions -------------------------------------------------------------
CART = DATA_URDF / "mujoco_vertical_cart.urdf"


def cart(text: str | None = None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        return read_urdf(text or CART.read_text(), str(CART))


def sag_under_feed_forward(robot, effort: float = 5.0, **engine_options) -> float:
    """Steady-state distance of the cart from its position target while pushed by an effort feed-forward:
    effort / kp for a position servo."""
    eng = PhysicsEngine(robot, **engine_options)
    eng.set_command("slider_to_cart", position=0.2, effort=effort)
    eng.step(3000)
    assert abs(float(eng.velocities()[0])) < 1e-4
    return float(eng.positions()[0]) - 0.2


def test_mujoco_system_joint_params_are_the_servo_gains():
    with pytest.warns(RobotModelWarning, match=r"mujoco_vertical_cart.urdf:22: ros2_control 'MujocoSystem' joint "
                                               r"'slider_to_cart': <param name=\"position_ki\"> 1 has no counterpart"):
        eng = PhysicsEngine(read_urdf(CART.read_text(), str(CART)))
    assert eng.gains()["slider_to_cart"] == {"kp": 100.0, "kd": 10.0, "kv": 40.0}


def test_a_stiffer_kp_in_the_description_makes_a_stiffer_servo():
    soft = sag_under_feed_forward(cart())
    stiff = sag_under_feed_forward(cart(CART.read_text().replace(">100<", ">400<")))
    assert soft == pytest.approx(5.0 / 100.0, rel=1e-3)
    assert stiff == pytest.approx(5.0 / 400.0, rel=1e-3)


def test_the_simulators_gains_parameter_wins_over_the_description():
    assert sag_under_feed_forward(cart(), gains={"slider_to_cart": {"kp": 250.0}}) == pytest.approx(0.02, rel=1e-3)


def test_gain_params_of_other_plugins_are_not_servo_gains():
    robot = cart(CART.read_text().replace("mujoco_ros2_control/MujocoSystem", "acme/ArmDriver"))
    assert PhysicsEngine(robot).gains()["slider_to_cart"]["kp"] != 100.0


def test_mujoco_system_interface_pid_file_gives_the_servo_gains():
    text = CART.read_text().replace("mujoco_ros2_control/MujocoSystem<",
                                    "mujoco_ros2_control/MujocoSystemInterface<")
    text = text.replace("</plugin>", '</plugin>\n      <param name="pids_config_file">mujoco_pids.yaml</param>', 1)
    with pytest.warns(RobotModelWarning, match=r"pid_gains.velocity.slider_to_cart.i = 0.1 has no counterpart"):
        eng = PhysicsEngine(read_urdf(text, str(CART)))
    assert eng.gains()["slider_to_cart"] == {"kp": 400.0, "kd": 20.0, "kv": 30.0}
    missing = text.replace("mujoco_pids.yaml", "no_such_pids.yaml")
    with pytest.warns(RobotModelWarning, match=r"pids_config_file: 'no_such_pids.yaml' not found"):
        PhysicsEngine(read_urdf(missing, str(CART)))


# --- acceleration command interfaces --------------------------------------------------------------------------
def test_acceleration_is_integrated_from_the_measured_velocity_and_stops_on_release():
    acc = AccelerationToVelocity(["a", "b"], ["a/position", "a/acceleration", "b/acceleration"],
                                 ["a/position", "a/velocity"])
    assert acc.joints == ["a", "b"] and list(acc.rows) == [0, 1]
    commands = np.array([np.nan, 2.0, -1.0])
    active = np.array([False, True, True])
    states = np.array([0.0, 0.5])  # a moves at 0.5 when its acceleration takes over; b has no velocity state
    assert list(acc.update(commands, active, states, 0.1)) == [True, True]
    assert acc.velocity == pytest.approx([0.5 + 0.2, -0.1])
    acc.update(commands, active, states, 0.1)
    assert acc.velocity == pytest.approx([0.9, -0.2])
    active[0] = True  # a's position command is claimed as well: that commands it, acceleration is not integrated
    commands[0] = 0.3
    assert list(acc.update(commands, active, states, 0.1)) == [False, True]
    assert acc.velocity[0] == pytest.approx(0.9)
    active[2] = False  # b's acceleration released: velocity 0 goes out once, then nothing
    assert list(acc.update(commands, active, states, 0.1)) == [False, True] and acc.velocity[1] == 0.0
    assert list(acc.update(commands, active, states, 0.1)) == [False, False]


def acceleration_robot():
    """The cart with its command interfaces replaced by acceleration alone."""
    robot = cart()
    rc_joint = robot.ros2_control[0].joints[0]
    rc_joint.command_interfaces = [Ros2ControlInterface("acceleration")]
    return robot


def test_an_acceleration_command_accelerates_the_simulated_joint():
    cm = ControllerManagerCore.from_robot(acceleration_robot(), 500.0, plugin_override=IN_PROCESS_PLUGIN,
                                          component_options={"timestep": 0.001})
    assert "slider_to_cart/acceleration" in cm.rm.command_interface_names()
    cm.load_controller("accel", "forward_command_controller/ForwardCommandController",
                       {"joints": ["slider_to_cart"], "interface_name": "acceleration"})
    cm.configure_controller("accel")
    res = cm.switch_controller(["accel"], [], Strictness.STRICT)
    assert res.ok, res.message
    assert cm.rm.claimed_by("slider_to_cart/acceleration") == "accel"
    sim = cm.simulator()
    cm.controller("accel").set_command([2.0])
    for _ in range(250):  # 0.5 s
        cm.update(sim.sim_time, 0.002)
    v = float(sim.engine.velocities()[0])
    assert v == pytest.approx(2.0 * 0.5, abs=0.05)  # the velocity servo lags the reference by I / kv only
    assert sim.engine.command_modes()["slider_to_cart"] == "velocity"
    res = cm.switch_controller([], ["accel"], Strictness.STRICT)
    assert res.ok, res.message
    for _ in range(250):
        cm.update(sim.sim_time, 0.002)
    assert abs(float(sim.engine.velocities()[0])) < 1e-3, "released: the joint stops instead of coasting"


def test_topic_based_hardware_sends_acceleration_as_velocity_references():
    robot = acceleration_robot()
    cm = ControllerManagerCore.from_robot(robot, 100.0, plugin_override="topic_based_ros2_control/TopicBasedSystem")
    comp = cm.components["MujocoSystem"]
    sent = []
    comp.command_sink = sent.append
    comp.on_joint_state(["slider_to_cart"], [0.0], [0.25], [0.0])
    cm.load_controller("accel", "forward_command_controller/ForwardCommandController",
                       {"joints": ["slider_to_cart"], "interface_name": "acceleration"})
    cm.configure_controller("accel")
    assert cm.switch_controller(["accel"], [], Strictness.STRICT).ok
    cm.controller("accel").set_command([3.0])
    cm.update(0.01, 0.01)
    cm.update(0.02, 0.01)
    assert [list(m.name) for m in sent[-2:]] == [["slider_to_cart"]] * 2
    assert [len(m.position) for m in sent[-2:]] == [0, 0] and [len(m.effort) for m in sent[-2:]] == [0, 0]
    assert [float(m.velocity[0]) for m in sent[-2:]] == pytest.approx([0.25 + 0.03, 0.25 + 0.06])


def test_mujoco_system_pid_interfaces_are_exported_as_position_and_velocity():
    """moveit/mujoco_ros2_control's MujocoSystem: "position_pid" declares the PID-driven position interface."""
    text = CART.read_text().replace('<command_interface name="position"/>', '<command_interface name="position_pid"/>')
    text = text.replace('<command_interface name="velocity"/>', '<command_interface name="velocity_pid"/>')
    robot = cart(text)
    cm = ControllerManagerCore.from_robot(robot, 500.0, plugin_override=IN_PROCESS_PLUGIN,
                                          component_options={"timestep": 0.001})
    assert cm.rm.command_interface_names() == ["slider_to_cart/position", "slider_to_cart/velocity",
                                               "slider_to_cart/effort"]
    cm.load_controller("fwd", "position_controllers/JointGroupPositionController", {"joints": ["slider_to_cart"]})
    cm.configure_controller("fwd")
    assert cm.switch_controller(["fwd"], [], Strictness.STRICT).ok
    cm.controller("fwd").set_command([0.3])
    sim = cm.simulator()
    for _ in range(1000):
        cm.update(sim.sim_time, 0.002)
    assert float(sim.engine.positions()[0]) == pytest.approx(0.3, abs=1e-3)
    other = read_urdf(text.replace("mujoco_ros2_control/MujocoSystem<", "acme/Cart<"), "acme.urdf")
    assert [i.name for i in HardwareInfo.from_ros2_control(other.ros2_control[0]).joints[0].command_interfaces] \
        == ["position_pid", "velocity_pid", "effort"], "the aliases are MujocoSystem's only"



def test_an_agreeing_ros1_twin_is_dropped_quietly():
    old = RRBOT_ROS1.read_text()
    ros1_form = old[old.index('  <transmission name="transmission1">'):old.index("  <ros2_control")]
    both = RRBOT.read_text().replace("  <ros2_control", ros1_form + "  <ros2_control", 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RobotModelWarning)
        robot = read_urdf(both, "both_forms.urdf")
    assert mapping(robot) == mapping(quiet_load(RRBOT))
    assert [t.ros2_control for t in robot.transmissions] == ["GazeboSimSystem"] * 2


def test_gazebo_position_proportional_gain_is_said_to_change_nothing():
    text = RRBOT.read_text().replace("</plugin>\n    </hardware>", "</plugin>\n      <param name="
                                     "\"position_proportional_gain\">5000</param>\n    </hardware>", 1)
    tuned = PhysicsEngine(quiet_load(RRBOT)).gains()
    with pytest.warns(RobotModelWarning, match=r"gz.urdf:\d+: ros2_control 'GazeboSimSystem' <hardware>: <param "
                                               r"name=\"position_proportional_gain\"> is not mapped"):
        eng = PhysicsEngine(read_urdf(text, "gz.urdf"))
    assert eng.gains() == tuned
