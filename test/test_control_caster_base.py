"""robot_core/CasterBaseController: the caster geometry (steering, flips, odometry's least squares, two wheels per
caster), its configuration errors, and the example caster base (urdf/caster_base.urdf) and the PR2's base
(urdf/pr2_mobile.urdf, config/pr2_controllers.yaml) driven on real physics (in-process simulator, floating base on
the floor) with the measured motion printed."""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import numpy as np
import pytest

from robot_core.control import ControlError
from robot_core.control.controllers.caster_base import CasterBaseController, body_twist, caster_commands

REPO = Path(__file__).resolve().parents[1]
DT = 0.01
XY = np.array([[0.2, 0.15], [0.2, -0.15], [-0.2, 0.15], [-0.2, -0.15]])
R = 0.05


def controller_params() -> dict:
    import yaml

    data = yaml.safe_load((REPO / "config" / "caster_base_controllers.yaml").read_text(encoding="utf-8"))
    return data["caster_base_controller"]["ros__parameters"]


def test_pure_translation_steers_every_caster_alike():
    angles, wheels = caster_commands((0.3, 0.3, 0.0), XY, np.zeros(4), R, 0.001)
    assert angles == pytest.approx([math.pi / 4] * 4)
    assert wheels == pytest.approx([math.hypot(0.3, 0.3) / R] * 4)


def test_rotation_steers_tangentially_and_flips_rather_than_turning_past_90_degrees():
    angles, wheels = caster_commands((0.0, 0.0, 1.0), XY, np.zeros(4), R, 0.001)
    for (x, y), a, w in zip(XY, angles, wheels, strict=True):
        v = np.array([-y, x])  # the ground point's velocity for wz = 1
        assert abs(a) <= math.pi / 2 + 1e-12  # never more than a quarter turn from 0
        assert w * R * np.array([math.cos(a), math.sin(a)]) == pytest.approx(v)
    # backwards from angle 0: the caster stays put and the wheel reverses
    angles, wheels = caster_commands((-0.2, 0.0, 0.0), XY, np.zeros(4), R, 0.001)
    assert angles == pytest.approx([0.0] * 4) and wheels == pytest.approx([-4.0] * 4)
    # continuous angles: from 3.0 rad, forwards-left (pi/2 + 2 pi k) is reached as pi/2, never via -pi/2
    angles, _ = caster_commands((0.0, 0.1, 0.0), XY[:1], np.array([3.0 + 2 * math.pi]), R, 0.001)
    assert angles[0] == pytest.approx(math.pi / 2 + 2 * math.pi)


def test_no_speed_keeps_the_angles():
    current = np.array([0.3, -0.2, 1.0, 2.0])
    angles, wheels = caster_commands((0.0, 0.0, 0.0), XY, current, R, 0.001)
    assert angles == pytest.approx(current) and wheels == pytest.approx(np.zeros(4))


def test_odometry_twist_inverts_the_commands():
    for twist in ((0.3, 0.2, 0.5), (0.0, 0.0, -1.0), (-0.4, 0.1, 0.0)):
        angles, wheels = caster_commands(twist, XY, np.zeros(4), R, 0.001)
        assert body_twist(XY, angles, wheels, R) == pytest.approx(twist, abs=1e-12)


def test_odometry_of_two_wheels_per_caster_follows_rigid_body_kinematics():
    """Wheels 0.049 m either side of each caster's axis, casters turning: the wheels' rolling speeds taken from the
    rigid-body motion of their contact points (finite differences, no formula of the controller) give back the
    base's twist."""
    twist, rates, d = np.array([0.3, 0.2, 0.5]), np.array([0.4, -0.2, 0.0, 1.0]), 0.049
    angles, _ = caster_commands(tuple(twist), XY, np.array([0.0, 3.0, -2.0, 0.5]), R, 0.001)  # some flipped
    offsets = np.array([d, -d] * 4)
    owner = np.repeat(np.arange(4), 2)
    h = 1e-6

    def contact(t: float, j: int) -> np.ndarray:  # wheel j's contact point in the world, base at the origin at t=0
        i, yaw = owner[j], twist[2] * t
        a = angles[i] + rates[i] * t
        rot = np.array([[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]])
        local = XY[i] + offsets[j] * np.array([-math.sin(a), math.cos(a)])
        return twist[:2] * t + rot @ local  # the body twist at t=0 is the world twist (yaw 0)

    rolling = []
    for j in range(8):
        v = (contact(h, j) - contact(-h, j)) / (2 * h)
        a = angles[owner[j]]
        rolling.append(float(v @ np.array([math.cos(a), math.sin(a)])) / R)
    assert body_twist(XY, angles, np.array(rolling), R, owner, offsets, rates) == pytest.approx(twist, abs=1e-6)


@pytest.mark.parametrize(("change", "message"), [
    ({"wheels_per_caster": 2}, "parameter 'wheel_names' has 4 entries, caster_names 4 with wheels_per_caster 2: 8"),
    ({"wheel_offsets": [0.01, -0.01]}, "parameter 'wheel_offsets' has 2 entries, wheel_names 4: one per wheel"),
    ({"caster_names": []}, "parameter 'caster_names' must name at least one"),
    ({"wheel_names": ["fl_wheel_joint"]}, "parameter 'wheel_names' has 1 entries, caster_names 4"),
    ({"caster_x": [0.2, 0.2, -0.2]}, "parameter 'caster_x' has 3 entries"),
    ({"wheel_radius": 0.0}, "parameter 'wheel_radius' = 0.0 must be > 0"),
    ({"wheel_names": ["fl_wheel_joint", "fr_wheel_joint", "bl_wheel_joint", "nope_joint"]},
     "parameter 'wheel_names': joint 'nope_joint' is not a joint of robot 'caster_base'"),
    ({"wheel_names": ["fl_wheel_joint", "fl_wheel_joint", "bl_wheel_joint", "br_wheel_joint"]},
     "parameter 'wheel_names' has duplicate entries ['fl_wheel_joint']"),
    ({"wheel_names": ["fl_caster_rotation_joint", "fr_wheel_joint", "bl_wheel_joint", "br_wheel_joint"]},
     "joints ['fl_caster_rotation_joint'] are named more than once"),
])
def test_configure_refuses_bad_parameters_naming_them(change, message):
    from robot_core.model import load_robot

    robot = load_robot(REPO / "urdf" / "caster_base.urdf")
    with pytest.raises(ControlError, match=re.escape(message)):
        CasterBaseController("cb", {**controller_params(), **change}, robot).on_configure()


def test_nan_command_is_refused_naming_the_field():
    ctrl = CasterBaseController("cb", controller_params())
    with pytest.raises(ControlError, match=r"linear\.y = nan is not finite"):
        ctrl.set_command(0.1, math.nan, 0.0)


# ----------------------------------------------------------------------------- on physics
def yaw(pose: np.ndarray) -> float:
    w, x, y, z = pose[3:]
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def test_commanded_twist_moves_the_base_that_way_in_x_y_and_yaw():
    """(0.3, 0.2, 0.5) for 6 s: after the casters have turned, the base's body-frame velocity and yaw rate
    (finite differences of the simulator's base pose) match the command; odometry follows the ground truth."""
    pytest.importorskip("mujoco")
    from robot_core.control import ControllerManagerCore, Strictness
    from robot_core.model import load_robot
    from robot_core.physics.world import add_floor

    robot = load_robot(REPO / "urdf" / "caster_base.urdf")
    cm = ControllerManagerCore.from_robot(robot, 1.0 / DT, plugin_override="robot_core/InProcessSimulator",
                                          component_options={"timestep": 0.001, "engine_options": {
                                              "fixed_base": False, "scene": add_floor}})
    cm.load_controller("cb", "robot_core/CasterBaseController", controller_params())
    cm.configure_controller("cb")
    assert cm.switch_controller(["cb"], [], Strictness.STRICT).ok
    sim, ctrl = cm.simulator(), cm.controller("cb")
    engine = sim.engine

    def run(seconds: float, command: tuple[float, float, float]) -> list[tuple[float, np.ndarray]]:
        samples = []
        end = sim.sim_time + seconds - 1e-9
        while sim.sim_time < end:
            ctrl.set_command(*command)
            cm.update(sim.sim_time, DT)
            samples.append((sim.sim_time, engine.base_pose().copy()))
        return samples

    run(1.0, (0.0, 0.0, 0.0))  # settle on the wheels
    p0, odom0 = engine.base_pose().copy(), ctrl.pose.copy()
    samples = run(6.0, (0.3, 0.2, 0.5))
    steady = [s for s in samples if s[0] - samples[0][0] > 2.0]  # the casters have turned by then
    vx, vy, wz = [], [], []
    for (t0, a), (t1, b) in zip(steady[:-10:10], steady[10::10], strict=False):
        dt = t1 - t0
        h = 0.5 * (yaw(a) + yaw(b)) if abs(yaw(b) - yaw(a)) < math.pi else yaw(a)
        d = (b[:2] - a[:2]) / dt
        vx.append(math.cos(h) * d[0] + math.sin(h) * d[1])
        vy.append(-math.sin(h) * d[0] + math.cos(h) * d[1])
        wz.append(math.remainder(yaw(b) - yaw(a), 2 * math.pi) / dt)
    measured = (float(np.mean(vx)), float(np.mean(vy)), float(np.mean(wz)))
    p1 = engine.base_pose()
    truth_moved = float(np.linalg.norm(p1[:2] - p0[:2]))
    odom_moved = float(np.linalg.norm(ctrl.pose[:2] - odom0[:2]))
    print(f"\ncommanded (0.3, 0.2, 0.5); measured body twist ({measured[0]:.4f}, {measured[1]:.4f}, "
          f"{measured[2]:.4f}); odometry twist {np.round(ctrl.twist, 4).tolist()}; moved {truth_moved:.4f} m "
          f"(odometry {odom_moved:.4f} m), height change {p1[2] - p0[2]:.4f} m")
    assert measured == pytest.approx((0.3, 0.2, 0.5), abs=0.03)
    assert ctrl.twist == pytest.approx([0.3, 0.2, 0.5], abs=0.03)
    assert odom_moved == pytest.approx(truth_moved, rel=0.05)
    assert abs(p1[2] - p0[2]) < 0.01  # still on its wheels


def test_a_command_older_than_cmd_vel_timeout_stops_the_base():
    """One command and then silence (a client that died or stalled): the base drives while the command is fresh and
    has come to rest 1 s after cmd_vel_timeout (0.5 s of the controller's time); a new command drives it again."""
    pytest.importorskip("mujoco")
    from robot_core.control import ControllerManagerCore, Strictness
    from robot_core.model import load_robot
    from robot_core.physics.world import add_floor

    robot = load_robot(REPO / "urdf" / "caster_base.urdf")
    cm = ControllerManagerCore.from_robot(robot, 1.0 / DT, plugin_override="robot_core/InProcessSimulator",
                                          component_options={"timestep": 0.001, "engine_options": {
                                              "fixed_base": False, "scene": add_floor}})
    cm.load_controller("cb", "robot_core/CasterBaseController", {**controller_params(), "cmd_vel_timeout": 0.5})
    cm.configure_controller("cb")
    assert cm.switch_controller(["cb"], [], Strictness.STRICT).ok
    sim, ctrl = cm.simulator(), cm.controller("cb")

    def speed_after(seconds: float) -> float:
        end = sim.sim_time + seconds - 1e-9
        while sim.sim_time < end:
            cm.update(sim.sim_time, DT)
        return float(np.linalg.norm(sim.engine.base_velocity()[:2]))

    ctrl.set_command(0.3, 0.0, 0.0)
    fresh = speed_after(0.45)
    stale = speed_after(1.5)
    ctrl.set_command(0.3, 0.0, 0.0)
    again = speed_after(0.45)
    print(f"\nbase speed 0.45 s after one command {fresh:.3f} m/s, 1 s past cmd_vel_timeout {stale:.4f} m/s, "
          f"0.45 s after a new command {again:.3f} m/s")
    assert fresh > 0.1 and again > 0.1
    assert stale < 0.01


def test_pr2_base_commanded_twist_moves_it_that_way(erd_robots):
    """The PR2 (urdf/pr2_mobile.urdf, its meshes from example-robot-data) with config/pr2_controllers.yaml's
    base_controller: two wheels per caster, commanded (0.3, 0.2, 0.5) for 5 s; the base's motion from the engine
    after the casters have turned is within 3 % of the command and odometry agrees with it."""
    pytest.importorskip("mujoco")
    import yaml

    from robot_core.control import ControllerManagerCore, Strictness
    from robot_core.model import load_robot
    from robot_core.physics.world import add_floor

    robot = load_robot(REPO / "urdf" / "pr2_mobile.urdf", [str(erd_robots.parent)], fixed_base=False)
    params = yaml.safe_load((REPO / "config" / "pr2_controllers.yaml").read_text(encoding="utf-8"))
    cm = ControllerManagerCore.from_robot(robot, 1.0 / DT, plugin_override="robot_core/InProcessSimulator",
                                          component_options={"timestep": 0.001, "engine_options": {
                                              "fixed_base": False, "scene": add_floor}})
    cm.load_controller("base", "robot_core/CasterBaseController", params["base_controller"]["ros__parameters"])
    cm.configure_controller("base")
    assert cm.switch_controller(["base"], [], Strictness.STRICT).ok
    sim, ctrl = cm.simulator(), cm.controller("base")
    poses = []
    while sim.sim_time < 6.0 - 1e-9:
        ctrl.set_command(*((0.0, 0.0, 0.0) if sim.sim_time < 1.0 else (0.3, 0.2, 0.5)))
        cm.update(sim.sim_time, DT)
        if sim.sim_time > 3.0:  # 2 s after the command: the casters have turned
            poses.append(sim.engine.base_pose().copy())
    a, b = poses[0], poses[-1]
    span = (len(poses) - 1) * DT
    turned = sum(math.remainder(yaw(q) - yaw(p), 2 * math.pi) for p, q in itertools.pairwise(poses))
    # displacement in the base frame, step by step at the mid heading
    body = sum((np.array([[math.cos(h), math.sin(h)], [-math.sin(h), math.cos(h)]]) @ (q[:2] - p[:2])
                for p, q in itertools.pairwise(poses)
                for h in [yaw(p) + 0.5 * math.remainder(yaw(q) - yaw(p), 2 * math.pi)]), np.zeros(2))
    measured = (body[0] / span, body[1] / span, turned / span)
    print(f"\nPR2 base commanded (0.3, 0.2, 0.5); measured ({measured[0]:.4f}, {measured[1]:.4f}, "
          f"{measured[2]:.4f}); odometry twist {np.round(ctrl.twist, 4).tolist()}; height change "
          f"{b[2] - a[2]:.5f} m")
    assert measured == pytest.approx((0.3, 0.2, 0.5), rel=0.03)
    assert ctrl.twist == pytest.approx([0.3, 0.2, 0.5], rel=0.03)
    assert abs(b[2] - a[2]) < 0.005  # on its wheels


def test_pr2_mobile_urdf_is_example_robot_datas_with_only_the_base_made_movable(erd_robots):
    """urdf/pr2_mobile.urdf is what scripts/generate_pr2_mobile.py makes of the installed PR2 (regenerate after an
    example-robot-data update), and it differs from it only in the caster and wheel joints and wheel collisions."""
    import subprocess
    import sys

    from robot_core.model import load_robot

    done = subprocess.run([sys.executable, str(REPO / "scripts" / "generate_pr2_mobile.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    source = load_robot(erd_robots / "pr2_description" / "urdf" / "pr2.urdf")
    mobile = load_robot(REPO / "urdf" / "pr2_mobile.urdf", [str(erd_robots.parent)])
    changed = {n for n, j in mobile.joints.items() if j.type != source.joints[n].type}
    assert len(changed) == 12 and all(re.fullmatch(r"[fb][lr]_caster_(rotation|[lr]_wheel)_joint", n)
                                      for n in changed)
    assert {mobile.joints[n].type for n in changed} == {"continuous"}
    assert set(mobile.links) == set(source.links) and set(mobile.joints) == set(source.joints)

