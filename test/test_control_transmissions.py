"""Transmissions that are not one-to-one: ros2_control's differential, the PR2 wrist and gripper.

The formulas are checked against the definitions written out here from ros2_control's transmission_interface and
pr2_mechanism_model (known values, round trips, power), the URDF forms are read, bad ones warned about, and the
actuator-side interfaces of a hardware component drive the joints through the transmission, down to MuJoCo.
"""

from __future__ import annotations

import itertools
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from robot_core.control import ControllerManagerCore, Strictness
from robot_core.control.errors import ControlError
from robot_core.control.hardware import HardwareInfo, create_component
from robot_core.control.transmissions import (
    DifferentialTransmission,
    GripperTransmission,
    SimpleTransmission,
    TransmissionSet,
    wrist_transmission,
)
from robot_core.model import load_robot
from robot_core.model.robot_model import RobotModelWarning

DATA = Path(__file__).resolve().parent / "data" / "urdf"
WRIST = DATA / "wrist_differential.urdf"


# --- the formulas ------------------------------------------------------------------------------------------
def test_differential_matches_ros2_control_formulas_and_round_trips():
    ar, jr, off = (20.0, -30.0), (2.0, 0.5), (0.1, -0.2)
    t = DifferentialTransmission("d", ("j1", "j2"), ("a1", "a2"), ar, jr, off)
    a_pos, a_vel, a_eff = np.array([3.0, -1.5]), np.array([0.4, 0.9]), np.array([0.2, -0.7])
    p, v, e = t.actuator_to_joint(a_pos, a_vel, a_eff)
    # transmission_interface/DifferentialTransmission, written out
    assert p[0] == pytest.approx((3.0 / ar[0] + -1.5 / ar[1]) / (2 * jr[0]) + off[0])
    assert p[1] == pytest.approx((3.0 / ar[0] - -1.5 / ar[1]) / (2 * jr[1]) + off[1])
    assert v[1] == pytest.approx((0.4 / ar[0] - 0.9 / ar[1]) / (2 * jr[1]))
    assert e[0] == pytest.approx(jr[0] * (0.2 * ar[0] + -0.7 * ar[1]))
    assert e[1] == pytest.approx(jr[1] * (0.2 * ar[0] - -0.7 * ar[1]))
    assert float(v @ e) == pytest.approx(float(a_vel @ a_eff))  # power is preserved
    back = t.joint_to_actuator(p, v, e)
    for got, want in zip(back, (a_pos, a_vel, a_eff), strict=True):
        np.testing.assert_allclose(got, want, atol=1e-12)
    # joint_to_actuator written out
    ja = t.joint_to_actuator(np.array([0.3, 0.2]), np.zeros(2), np.array([1.0, 2.0]))
    assert ja[0][0] == pytest.approx(((0.3 - 0.1) * jr[0] + (0.2 + 0.2) * jr[1]) * ar[0])
    assert ja[2][1] == pytest.approx((1.0 / jr[0] - 2.0 / jr[1]) / (2 * ar[1]))
    with pytest.raises(ControlError, match="actuator 'a2'"):
        DifferentialTransmission("d", ("j1", "j2"), ("a1", "a2"), (1.0, 0.0))
    with pytest.raises(ControlError, match="exactly two joints and two actuators"):
        DifferentialTransmission("d", ("j1", "j2"), ("a1",))  # type: ignore[arg-type]


def test_pr2_wrist_is_the_differential_with_its_signs():
    ar, jr_flex, jr_roll = 60.1714285714, -1.0, 1.0
    t = wrist_transmission("w", "r_motor", "l_motor", "flex", "roll", ar, ar, jr_flex, jr_roll)
    rng = np.random.default_rng(3)
    for _ in range(5):
        r, l, er, el = rng.normal(size=4) * 10
        p, _, e = t.actuator_to_joint([r, l], [0.0, 0.0], [er, el])
        # pr2_mechanism_model WristTransmission::propagatePosition, written out
        assert p[0] == pytest.approx((r / ar - l / ar) / (2 * jr_flex))
        assert p[1] == pytest.approx((-r / ar - l / ar) / (2 * jr_roll))
        assert e[0] == pytest.approx(jr_flex * (er * ar - el * ar))
        assert e[1] == pytest.approx(jr_roll * (-er * ar - el * ar))
    # flex alone: the motors turn opposite ways; roll alone: the same way
    flex_only = t.joint_to_actuator([0.5, 0.0], [0, 0], [0, 0])[0]
    roll_only = t.joint_to_actuator([0.0, 0.5], [0, 0], [0, 0])[0]
    assert flex_only[0] == pytest.approx(-flex_only[1]) and roll_only[0] == pytest.approx(roll_only[1])
    print(f"wrist: flex 0.5 rad <- motors {flex_only.round(3)} rad; roll 0.5 rad <- motors {roll_only.round(3)} rad")


def test_pr2_gripper_linkage():
    g = GripperTransmission("g", "motor", "gap", ("finger", "finger_mimic"))
    p = g.actuator_to_joint([0.0], [0.0], [0.0])[0]
    assert p[1] == pytest.approx(0.0, abs=0.01), "motor at zero: the gripper is (nearly) closed"
    openings = [g.actuator_to_joint([m], [0.0], [0.0])[0] for m in (0.0, 200.0, 400.0, 600.0)]
    fingers = [o[1] for o in openings]
    gaps = [o[0] for o in openings]
    assert all(b > a for a, b in itertools.pairwise(fingers)), fingers
    assert all(b > a for a, b in itertools.pairwise(gaps)), gaps
    assert all(o[1] == o[2] for o in openings), "every finger joint gets the same angle"
    print("gripper motor [rad] -> finger [rad], gap [m]:",
          [(m, round(o[1], 4), round(o[0], 4)) for m, o in zip((0, 200, 400, 600), openings, strict=True)])
    # velocity is the derivative of position; effort preserves power; round trip from a finger and from the gap
    m, dm = 300.0, 1e-4
    pa, va, ea = g.actuator_to_joint([m], [1.0], [0.05])
    pb = g.actuator_to_joint([m + dm], [0.0], [0.0])[0]
    np.testing.assert_allclose(va, (pb - pa) / dm, rtol=1e-4)
    assert va[1] * ea[1] == pytest.approx(1.0 * 0.05)
    back = g.joint_to_actuator(pa, va, ea)
    np.testing.assert_allclose([back[0][0], back[1][0], back[2][0]], [m, 1.0, 0.05], rtol=1e-6)
    from_gap = g.joint_to_actuator(np.array([pa[0], np.nan, np.nan]), va, ea)
    assert from_gap[0][0] == pytest.approx(m, rel=1e-6)


def test_transmission_set_converts_all_at_once_and_keeps_nan_inside_one_transmission():
    ts = TransmissionSet([SimpleTransmission("s", "s_motor", 4.0, 0.5),
                          DifferentialTransmission("d", ("j1", "j2"), ("a1", "a2"), (10.0, 10.0)),
                          GripperTransmission("g", "g_motor", None, ("finger",))])
    assert ts.joint_names == ["s", "j1", "j2", "finger"]
    assert ts.actuator_names == ["s_motor", "a1", "a2", "g_motor"]
    a = (np.array([2.0, 1.0, -1.0, 100.0]), np.array([1.0, 0.0, 0.0, 1.0]), np.array([0.5, 1.0, 1.0, 0.01]))
    p, v, e = ts.actuator_to_joint(*a)
    assert p[0] == pytest.approx(2.0 / 4.0 + 0.5) and e[0] == pytest.approx(2.0)
    assert p[1] == pytest.approx(0.0) and p[2] == pytest.approx(0.1)
    assert p[3] == pytest.approx(ts.by_joint["finger"].actuator_to_joint([100.0], [1.0], [0.01])[0][0])
    back = ts.joint_to_actuator(p, v, e)
    for got, want in zip(back, a, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    pos = a[0].copy()
    pos[1] = np.nan  # one differential input not given: only that differential's joints are unknown
    p2 = ts.actuator_to_joint(pos, a[1], a[2])[0]
    assert np.isnan(p2[1]) and np.isnan(p2[2]) and p2[0] == pytest.approx(p[0]) and p2[3] == pytest.approx(p[3])
    with pytest.raises(ControlError, match="joint 's' appears in two transmissions"):
        TransmissionSet([SimpleTransmission("s", "m1"), SimpleTransmission("s", "m2")])


# --- the URDF forms --------------------------------------------------------------------------------------------
PR2_LIKE = """<robot name="pr2_like">
  <link name="base"/><link name="f"/><link name="r"/><link name="finger_l"/><link name="finger_r"/>
  <joint name="flex" type="revolute"><parent link="base"/><child link="f"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="0" effort="10" velocity="3"/></joint>
  <joint name="roll" type="continuous"><parent link="f"/><child link="r"/><axis xyz="1 0 0"/></joint>
  <joint name="l_finger" type="revolute"><parent link="r"/><child link="finger_l"/><axis xyz="0 0 1"/>
    <limit lower="0" upper="0.548" effort="1000" velocity="0.5"/></joint>
  <joint name="r_finger" type="revolute"><parent link="r"/><child link="finger_r"/><axis xyz="0 0 -1"/>
    <limit lower="0" upper="0.548" effort="1000" velocity="0.5"/><mimic joint="l_finger"/></joint>
  <transmission name="wrist" type="pr2_mechanism_model/WristTransmission">
    <rightActuator name="r_motor" mechanicalReduction="60"/>
    <leftActuator name="l_motor" mechanicalReduction="60"/>
    <flexJoint name="flex" mechanicalReduction="-1.0"/>
    <rollJoint name="roll" mechanicalReduction="1.0"/>
  </transmission>
  <transmission name="gripper" type="pr2_mechanism_model/PR2GripperTransmission">
    <actuator name="g_motor"/>
    <gap_joint name="gap_gone" L0="0.0375528" a="0.0683698" b="0.0433849" gear_ratio="40.095" h="0.0"
               mechanical_reduction="1.0" phi0="0.518518122146" r="0.0915" screw_reduction="0.004" t0="-0.0001914"
               theta0="0.0628824676201"/>
    <passive_joint name="l_finger"/>
    <passive_joint name="r_finger"/>
  </transmission>
  BROKEN
</robot>"""


def test_pr2_forms_are_read_and_bad_transmissions_are_warned_about(tmp_path):
    broken = ("<transmission name=\"half_diff\"><type>transmission_interface/DifferentialTransmission</type>"
              "<joint name=\"flex\"/><joint name=\"roll\"/><actuator name=\"only_one\"/></transmission>")
    path = tmp_path / "pr2_like.urdf"
    path.write_text(PR2_LIKE.replace("BROKEN", broken))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = load_robot(path)
    texts = [str(w.message) for w in caught if issubclass(w.category, RobotModelWarning)]
    assert any("half_diff" in t and "only_one" in t and "transmission ignored" in t and "pr2_like.urdf:" in t
               for t in texts), texts
    assert any("gap joint 'gap_gone' does not exist" in t for t in texts), texts
    by_name = {t.name: t for t in robot.transmissions}
    assert set(by_name) == {"wrist", "gripper"}
    wrist = by_name["wrist"]
    assert [(j.name, j.role, j.mechanical_reduction) for j in wrist.joints] == [("flex", "flex", -1.0),
                                                                               ("roll", "roll", 1.0)]
    assert [(a.name, a.role, a.mechanical_reduction) for a in wrist.actuators] == [("r_motor", "right", 60.0),
                                                                                  ("l_motor", "left", 60.0)]
    assert [j.name for j in by_name["gripper"].joints] == ["l_finger", "r_finger"]
    info = HardwareInfo.default_for_robot(robot, "mock_components/GenericSystem")
    ts = info.transmissions
    assert isinstance(ts.by_joint["flex"], DifferentialTransmission)
    gripper = ts.by_actuator["g_motor"]
    assert isinstance(gripper, GripperTransmission) and gripper.params["gear_ratio"] == pytest.approx(40.095)


def test_differential_in_ros2_control_form_is_read_with_its_own_reductions():
    robot = load_robot(WRIST)
    (t,) = robot.transmissions
    assert [(a.name, a.mechanical_reduction) for a in t.actuators] == [("wrist_motor_1", 50.0),
                                                                      ("wrist_motor_2", 50.0)]
    assert [(j.name, j.offset) for j in t.joints] == [("wrist_flex", 0.1), ("wrist_roll", 0.0)]


# --- the actuator side of a hardware component -----------------------------------------------------------
def mock_wrist() -> ControllerManagerCore:
    robot = load_robot(WRIST)
    return ControllerManagerCore.from_robot(robot, 100.0, plugin_override="mock_components/GenericSystem")


def test_actuator_interfaces_are_exported_computed_and_drive_the_joints():
    cm = mock_wrist()
    names = cm.rm.command_interface_names()
    assert {"wrist_motor_1/position", "wrist_motor_2/position"} <= set(names)
    assert "wrist_motor_1/effort" in cm.rm.state_interface_names()
    cm.load_controller("motors", "forward_command_controller/ForwardCommandController",
                       {"joints": ["wrist_motor_1", "wrist_motor_2"], "interface_name": "position"})
    cm.configure_controller("motors")
    assert cm.switch_controller(["motors"], [], Strictness.STRICT).ok
    cm.controller("motors").set_command([10.0, 10.0])  # same way: flex only
    for _ in range(3):
        cm.update(cm.time + 0.01, 0.01)
    flex, roll = cm.rm.read_state("wrist_flex/position"), cm.rm.read_state("wrist_roll/position")
    assert flex == pytest.approx(10.0 / 50.0 + 0.1) and roll == pytest.approx(0.0)
    assert cm.rm.read_state("wrist_motor_1/position") == pytest.approx(10.0)
    # a controller on the joints of the same transmission is refused, naming both sides
    cm.load_controller("joints", "forward_command_controller/ForwardCommandController",
                       {"joints": ["wrist_flex"], "interface_name": "position"})
    cm.configure_controller("joints")
    res = cm.switch_controller(["joints"], [], Strictness.STRICT)
    assert not res.ok and "wrist_trans" in res.message and "motors" in res.message, res.message
    with pytest.raises(ControlError, match="coupled to 'wrist_motor_1/position'"):
        cm.rm.check_claimable("joints", ["wrist_flex/position"])


def _actuator_states_both_ways(cm: ControllerManagerCore, joint_states: dict[str, float]) -> tuple[dict, dict]:
    """Actuator states from ``joint_states`` by the per-cycle stacked product and by the general path."""
    out = []
    for stacked in (True, False):
        for comp in cm.rm.components.values():
            side = getattr(comp, "_actuator_side", None)
            if side is None:
                continue
            names = comp.state_names
            for k, n in enumerate(names):
                if n in joint_states:
                    comp.states[k] = joint_states[n]
            kept, side._stacked = side._stacked, (side._stacked if stacked else None)
            assert stacked is False or kept is not None, "the stacked plan applies to this robot"
            side.states_from_joints()
            side._stacked = kept
        out.append({n: cm.rm.read_state(n) for n in cm.rm.state_interface_names()
                    if n.split("/")[0] in {a for c in cm.rm.components.values()
                                           for a in c.info.transmissions.actuator_names}})
    return out[0], out[1]


@pytest.mark.parametrize("robot", ["wrist", "pr2"])
def test_the_per_cycle_actuator_states_equal_the_general_conversion(robot, erd_robots):
    """The cycle's stacked product (linear transmissions; the PR2's grippers one by one) gives what the general
    path gives, and a NaN joint state still leaves the actuators of its own transmission alone."""
    if robot == "wrist":
        cm = mock_wrist()
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RobotModelWarning)
            cm = ControllerManagerCore.from_robot(load_robot(erd_robots / "pr2_description" / "urdf" / "pr2.urdf"),
                                                  100.0, plugin_override="mock_components/GenericSystem")
    rng = np.random.default_rng(3)
    actuators = {a for c in cm.rm.components.values() for a in c.info.transmissions.actuator_names}
    joints = [n for n in cm.rm.state_interface_names()
              if n.split("/")[1] in ("position", "velocity", "effort") and n.split("/")[0] not in actuators]
    values = {n: float(rng.uniform(-0.5, 0.5)) for n in joints}
    stacked, general = _actuator_states_both_ways(cm, values)
    assert len(stacked) >= 6 and stacked.keys() == general.keys()
    for n in stacked:
        assert stacked[n] == pytest.approx(general[n], rel=1e-12, abs=1e-12), n
    before = stacked
    coupled = "r_wrist_flex_joint/position" if robot == "pr2" else "wrist_flex/position"
    stacked, general = _actuator_states_both_ways(cm, {**values, coupled: math.nan})
    assert stacked == general
    # the NaN's own actuators keep their last state, the others are recomputed from the same joint states
    changed = {n: (before[n], stacked[n]) for n in before if stacked[n] != pytest.approx(before[n], rel=1e-12)}
    assert changed == {}, changed


# --- physics: through MuJoCo -------------------------------------------------------------------------------------
def in_process(robot) -> ControllerManagerCore:
    pytest.importorskip("mujoco")
    return ControllerManagerCore.from_robot(robot, 500.0, plugin_override="robot_core/InProcessSimulator",
                                            component_options={"timestep": 0.002})


def run(cm: ControllerManagerCore, seconds: float) -> None:
    sim = cm.simulator()
    for _ in range(round(seconds * 500)):
        cm.update(sim.sim_time, 0.002)


def test_wrist_motors_move_flex_or_roll_alone_in_the_simulator():
    cm = in_process(load_robot(WRIST))
    cm.load_controller("motors", "forward_command_controller/ForwardCommandController",
                       {"joints": ["wrist_motor_1", "wrist_motor_2"], "interface_name": "position"})
    cm.configure_controller("motors")
    run(cm, 0.1)
    assert cm.switch_controller(["motors"], [], Strictness.STRICT).ok
    motors = cm.controller("motors")

    def read() -> tuple[float, float]:
        return cm.rm.read_state("wrist_flex/position"), cm.rm.read_state("wrist_roll/position")

    f0, r0 = read()
    a1, a2 = cm.rm.read_state("wrist_motor_1/position"), cm.rm.read_state("wrist_motor_2/position")
    motors.set_command([a1 + 20.0, a2 + 20.0])  # same way: flex + 20 / 50 = 0.4 rad
    run(cm, 1.5)
    f1, r1 = read()
    print(f"flex command: flex {f0:+.4f} -> {f1:+.4f} rad, roll {r0:+.4f} -> {r1:+.4f} rad")
    assert f1 - f0 == pytest.approx(0.4, abs=0.01) and abs(r1 - r0) < 0.01
    motors.set_command([a1 + 20.0 + 25.0, a2 + 20.0 - 25.0])  # opposite ways: roll + 25 / 50 = 0.5 rad
    run(cm, 1.5)
    f2, r2 = read()
    print(f"roll command: flex {f1:+.4f} -> {f2:+.4f} rad, roll {r1:+.4f} -> {r2:+.4f} rad")
    assert r2 - r1 == pytest.approx(0.5, abs=0.01) and abs(f2 - f1) < 0.01
    m1, m2 = cm.rm.read_state("wrist_motor_1/position"), cm.rm.read_state("wrist_motor_2/position")
    assert (m1, m2) == pytest.approx((a1 + 45.0, a2 - 5.0), abs=0.5)


def test_pr2_wrist_and_gripper_through_their_actuators(erd_robots):
    pytest.importorskip("mujoco")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        robot = load_robot(erd_robots / "pr2_description" / "urdf" / "pr2.urdf")
        cm = in_process(robot)
    cm.load_controller("wrist", "forward_command_controller/ForwardCommandController",
                       {"joints": ["r_wrist_r_motor", "r_wrist_l_motor"], "interface_name": "position"})
    cm.load_controller("gripper", "forward_command_controller/ForwardCommandController",
                       {"joints": ["r_gripper_motor"], "interface_name": "position"})
    for n in ("wrist", "gripper"):
        cm.configure_controller(n)
    run(cm, 0.1)
    assert cm.switch_controller(["wrist", "gripper"], [], Strictness.STRICT).ok
    state = cm.rm.read_state
    f0, r0 = state("r_wrist_flex_joint/position"), state("r_wrist_roll_joint/position")
    mr, ml = state("r_wrist_r_motor/position"), state("r_wrist_l_motor/position")
    red = 60.1714285714
    d = 0.3 * red  # pr2: flex = (r - l) / (2 red jr_flex), jr_flex = -1: r + 0.3 red, l - 0.3 red moves -0.3
    cm.controller("wrist").set_command([mr + d, ml - d])
    motor_for = robot_gripper(cm).motor_position(0.3)[0]  # the PR2's own linkage, from its <gap_joint>
    cm.controller("gripper").set_command([motor_for])
    run(cm, 2.0)
    f1, r1 = state("r_wrist_flex_joint/position"), state("r_wrist_roll_joint/position")
    finger = state("r_gripper_l_finger_joint/position")
    print(f"PR2 flex command: flex {f0:+.4f} -> {f1:+.4f}, roll {r0:+.4f} -> {r1:+.4f}; gripper motor "
          f"{motor_for:.1f} rad -> l finger {finger:.4f} rad (target 0.3)")
    assert f1 - f0 == pytest.approx(-0.3, abs=0.02) and abs(r1 - r0) < 0.02
    assert finger == pytest.approx(0.3, abs=0.02)
    assert state("r_gripper_r_finger_joint/position") == pytest.approx(finger, abs=0.02)
    assert state("r_gripper_motor/position") == pytest.approx(motor_for, rel=0.05)
    mr, ml = state("r_wrist_r_motor/position"), state("r_wrist_l_motor/position")
    e = 0.4 * red  # roll = -(r + l) / (2 red): both motors -0.4 red rolls +0.4
    cm.controller("wrist").set_command([mr - e, ml - e])
    run(cm, 2.0)
    f2, r2 = state("r_wrist_flex_joint/position"), state("r_wrist_roll_joint/position")
    print(f"PR2 roll command: flex {f1:+.4f} -> {f2:+.4f}, roll {r1:+.4f} -> {r2:+.4f}")
    assert r2 - r1 == pytest.approx(0.4, abs=0.02) and abs(f2 - f1) < 0.02
    assert not math.isnan(state("l_wrist_r_motor/effort"))


def robot_gripper(cm: ControllerManagerCore) -> GripperTransmission:
    (comp,) = cm.rm.components.values()
    t = comp.info.transmissions.by_actuator["r_gripper_motor"]
    assert isinstance(t, GripperTransmission)
    return t


def test_actuator_names_on_the_wire_refuse_a_coupling_transmission():
    robot = load_robot(WRIST)
    info = HardwareInfo.from_ros2_control(robot.ros2_control[0], robot)
    info.hardware_params["use_transmissions"] = "true"
    cm = ControllerManagerCore(robot, 100.0)
    with pytest.raises(ControlError, match=r"use_transmissions .*\['wrist_trans'\]"):
        cm.add_hardware_component(create_component(info, robot))
