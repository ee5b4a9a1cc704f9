"""Physics checks of robot_core.physics.engine: real MuJoCo dynamics against analytic values.

Every check reports its numbers on the terminal (also without ``-s``) and as junit properties.
"""

from __future__ import annotations

import copy
import math
import struct
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest

from robot_core.model import (
    Collision,
    Dynamics,
    Geometry,
    Inertial,
    Joint,
    Limit,
    Link,
    Pose,
    RobotModel,
    RobotModelWarning,
    Transmission,
    TransmissionActuator,
    TransmissionJoint,
    load_robot,
)
from robot_core.model.robot_model import Ros2ControlInterface
from robot_core.physics.engine import CommandError, PhysicsDivergedError, PhysicsEngine

URDF = Path(__file__).resolve().parent.parent / "urdf"
G = 9.81


@pytest.fixture
def report(say, record_property):
    """A measured number in the run's summaries, and recorded for junit."""

    def _report(name: str, value, note: str = "") -> None:
        record_property(name, value)
        say(f"[physics] {name} = {value}{'  ' + note if note else ''}")

    return _report


# ------------------------------------------------------------------ robots built in code
def pendulum(d: float = 0.4, m: float = 1.2, ic: float = 0.01, effort: float = 50.0, damping: float = 0.0,
             continuous: bool = True, velocity: float = 10.0) -> RobotModel:
    """A compound pendulum: COM at distance d below a y-axis hinge placed 1 m above the world origin."""
    r = RobotModel("pendulum")
    r.links["base"] = Link("base")
    inertial = Inertial(m, Pose(np.array([0.0, 0.0, -d]), np.zeros(3)), np.diag([ic, ic, ic]))
    r.links["bob"] = Link("bob", inertial=inertial)
    lim = Limit(None, None, effort, velocity) if continuous else Limit(-1.0, 1.0, effort, velocity)
    r.joints["hinge"] = Joint("hinge", "continuous" if continuous else "revolute", "base", "bob",
                              Pose(np.array([0.0, 0.0, 1.0]), np.zeros(3)), np.array([0.0, 1.0, 0.0]), lim,
                              Dynamics(damping, 0.0))
    return r


def free_box(mass: float = 2.0, size: float = 0.2) -> RobotModel:
    """One floating box (root link with a free joint)."""
    r = RobotModel("box", fixed_base=False)
    i = mass * size**2 / 6.0
    geo = Geometry("box", size=np.array([size, size, size]))
    r.links["box"] = Link("box", inertial=Inertial(mass, Pose(), np.diag([i, i, i])), collisions=[Collision(geo)])
    return r


def rc_arm() -> RobotModel:
    return load_robot(URDF / "rc_arm.urdf")


def planar2() -> RobotModel:
    return load_robot(URDF / "planar2.urdf")


def free_swinging(robot: RobotModel) -> RobotModel:
    """No damping, friction, joint limits or collisions: nothing but rigid-body dynamics and gravity."""
    r = copy.deepcopy(robot)
    for j in r.joints.values():
        j.dynamics = None
        if j.type == "revolute":
            j.type = "continuous"
        if j.limit is not None:
            j.limit.velocity = 0.0  # no velocity limit (it would brake a fast swing)
    for link in r.links.values():
        link.collisions = []
    return r


def zero_efforts(engine: PhysicsEngine) -> None:
    engine.set_commands(engine.actuated_joint_names, efforts=np.zeros(len(engine.actuated_joint_names)))


def floor(spec: mujoco.MjSpec) -> None:
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[5, 5, 0.1])


# ------------------------------------------------------------------ analytic checks
def test_pendulum_period_matches_compound_pendulum(report):
    d, m, ic = 0.4, 1.2, 0.01
    eng = PhysicsEngine(pendulum(d, m, ic), initial_positions={"hinge": 0.02})
    zero_efforts(eng)
    n = 6000
    q = np.empty(n)
    for k in range(n):
        eng.step()
        q[k] = eng.positions()[0]
    t = (np.arange(n) + 1) * eng.timestep
    # Downward zero crossings, linearly interpolated.
    idx = np.flatnonzero((q[:-1] > 0) & (q[1:] <= 0))
    crossings = t[idx] + (t[idx + 1] - t[idx]) * q[idx] / (q[idx] - q[idx + 1])
    measured = float(np.mean(np.diff(crossings)))
    analytic = 2 * math.pi * math.sqrt((ic + m * d**2) / (m * G * d))
    err = abs(measured - analytic) / analytic
    report("pendulum_period_s", f"{measured:.5f} (analytic {analytic:.5f}, error {err * 100:.3f} %, "
           f"{len(crossings) - 1} periods)")
    assert len(crossings) >= 4
    assert err < 0.01


def energy_drift(robot: RobotModel, start: dict[str, float], integrator: str, timestep: float = 0.001) -> float:
    """Largest |E(t) - E(0)| over 10 s of free motion from rest at ``start``, relative to the peak kinetic energy
    (= the energy that moved; sampled every 10 steps, so if anything a little low, making the ratio stricter)."""
    eng = PhysicsEngine(robot, integrator=integrator, timestep=timestep, initial_positions=start)
    eng.model.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    zero_efforts(eng)
    assert not np.any(eng.model.dof_damping) and not np.any(eng.model.dof_frictionloss)
    mujoco.mj_forward(eng.model, eng.data)
    e0 = float(eng.data.energy.sum())
    drift = peak_kinetic = 0.0
    n = round(0.01 / timestep)
    for _ in range(1000):
        eng.step(n)
        drift = max(drift, abs(float(eng.data.energy.sum()) - e0))
        peak_kinetic = max(peak_kinetic, float(eng.data.energy[1]))
    assert eng.time == pytest.approx(10.0)
    assert peak_kinetic > 0.1  # joules: it really swung
    return drift / peak_kinetic


# Integrator choice: the engine's default "implicitfast" is first order (it trades energy accuracy for stable
# stiff servos and contacts); it keeps a single pendulum within 0.5 % but not a chaotic multi-link swing. RK4
# (integrator="rk4") is what an energy-sensitive simulation of free motion should use, and it keeps every
# robot here within a few parts per million.
@pytest.mark.parametrize("integrator", ["implicitfast", "rk4"])
def test_energy_is_conserved_single_pendulum(report, integrator):
    """1 rad amplitude, no damping or friction, dt = 1 ms, 10 s."""
    rel = energy_drift(pendulum(), {"hinge": 1.0}, integrator)
    report(f"energy_drift_pendulum_{integrator}", f"{rel * 100:.3g} % of the peak kinetic energy over 10 s "
           "(dt 1 ms)")
    assert rel < 0.005


def test_energy_is_conserved_double_pendulum(report):
    """planar2 without damping, friction, limits or collisions: a chaotic double pendulum, dt = 1 ms, 10 s,
    with rk4; implicitfast (the default) shown for reference."""
    robot = free_swinging(planar2())
    start = {"joint1": 0.3, "joint2": 0.5}
    rel = energy_drift(robot, start, "rk4")
    rel_implicit = energy_drift(robot, start, "implicitfast")
    report("energy_drift_planar2_rk4", f"{rel * 100:.3g} % of the peak kinetic energy over 10 s (dt 1 ms); "
           f"implicitfast for reference: {rel_implicit * 100:.3f} %")
    assert rel < 0.005


def test_energy_is_conserved_seven_link_arm(report):
    """rc_arm's seven revolute joints swinging freely (no damping, friction, limits, collisions; the gripper
    welded shut, since its mimic constraint is soft and would dissipate), rk4, dt = 1 ms, 10 s."""
    robot = free_swinging(rc_arm())
    for j in robot.joints.values():
        if j.type == "prismatic":
            j.type, j.mimic, j.limit = "fixed", None, None
    start = {"joint1": 0.3, "joint2": 0.5, "joint3": -0.4, "joint4": 1.2, "joint5": 0.2, "joint6": 1.0, "joint7": 0.5}
    rel = energy_drift(robot, start, "rk4")
    report("energy_drift_rc_arm_rk4", f"{rel * 100:.3g} % of the peak kinetic energy over 10 s (dt 1 ms)")
    assert rel < 0.005


def test_joint_limits_hold_under_full_effort(report):
    eng = PhysicsEngine(rc_arm())
    worst = 0.0
    for joint, sign in (("joint4", -1.0), ("joint2", 1.0), ("joint6", -1.0)):
        eng.reset()
        i = eng.joint_names.index(joint)
        lim = eng.robot.joints[joint].limit
        eng.set_command(joint, effort=sign * lim.effort)
        peak = 0.0
        for _ in range(3000):
            eng.step()
            q = eng.positions()[i]
            peak = max(peak, lim.lower - q if sign < 0 else q - lim.upper)
        final = lim.lower - q if sign < 0 else q - lim.upper
        assert abs(eng.efforts()[i]) == pytest.approx(lim.effort)
        report(f"limit_violation_{joint}_rad", f"peak {peak:.5f}, after 3 s {final:.5f} (effort "
               f"{sign * lim.effort:g} N m)")
        worst = max(worst, peak)
        assert final < 2e-3
    assert worst < 0.01


def test_gravity_torques_hold_the_arm(report):
    """Effort commands = SerialKinematicChain.gravity_torques hold the arm (damping and friction removed, so
    nothing but the torques holds it); 2 % less torque visibly sags, so the check has teeth. The engine's own
    gravity compensation is verifiably off for everything the effort-commanded joints carry: the joints feel
    exactly the commanded torques (with compensation on they would feel twice the load and fly up)."""
    from robot_core.kinematics.chain import SerialKinematicChain

    for robot, tip in ((planar2(), "tip"), (rc_arm(), "tcp")):
        robot = copy.deepcopy(robot)
        for j in robot.joints.values():
            j.dynamics = None
        chain = SerialKinematicChain(robot, robot.root_link, tip)
        names = list(chain.joint_names)
        drifts = []
        for scale in (1.0, 0.98):
            eng = PhysicsEngine(robot)
            ix = [eng.joint_names.index(n) for n in names]
            dofs = eng.built.dof_indices(names)
            q0 = eng.positions()[ix]
            tau = chain.gravity_torques(q0)
            assert np.any(eng.data.qfrc_gravcomp[dofs])  # the servos' compensation, before the effort command
            eng.set_commands(names, efforts=scale * tau)
            eng.step()
            moved = {robot.root_link: False}  # links some movable joint carries (not the frames fixed to the base)
            for j in robot.joints.values():  # joints are stored parents first
                moved[j.child] = moved.get(j.parent, False) or j.type != "fixed"
            carried = [eng.built.links[n].body_id for n in robot.links if moved.get(n)]
            assert not np.any(eng.model.body_gravcomp[carried]) and not np.any(eng.data.qfrc_gravcomp[dofs])
            assert eng.efforts()[ix] == pytest.approx(scale * tau, abs=1e-12)
            eng.step(9_999)
            drifts.append(float(np.max(np.abs(eng.positions()[ix] - q0))))
        report(f"gravity_hold_drift_{robot.name}_rad", f"{drifts[0]:.2e} over 10 s (tau = "
               f"{np.round(tau, 3).tolist()}); with 98 % of it: {drifts[1]:.3f}")
        assert drifts[0] < 1e-3
        assert drifts[1] > 1e-3


@pytest.mark.parametrize("path", ["panda_description/urdf/panda.urdf", "ur_description/urdf/ur5_robot.urdf",
                                  "pr2_description/urdf/pr2.urdf"])
def test_example_robots_simulate_ten_seconds(report, erd_robots, path):
    """Hold the initial pose 5 s, then drive every joint to mid-range for 5 s: finite throughout, and every
    joint that can carry its load holds and tracks. (The PR2's shoulders rely on a counterbalance spring the
    URDF does not describe: their gravity load exceeds their 30 N m limit, so those -- and only those -- sag.)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PR2 ships inertias that break the triangle inequality
        robot = load_robot(erd_robots / path)
        eng = PhysicsEngine(robot)
    assert eng.model.ngeom > 0
    act = [eng.joint_names.index(n) for n in eng.actuated_joint_names]
    limit = np.array([lim.effort for lim in eng.limits])
    gravity = eng.data.qfrc_bias[eng.built.dof_indices(eng.actuated_joint_names)]
    overloaded = {n for n, g, lim in zip(eng.actuated_joint_names, gravity, limit, strict=True) if abs(g) > lim}
    q0 = eng.positions()[act]
    eng.step(5000)
    drift = np.abs(eng.positions()[act] - q0)
    sagged = {n for n, d in zip(eng.actuated_joint_names, drift, strict=True) if d > 0.01}
    holding = [n not in overloaded for n in eng.actuated_joint_names]
    hold_err = float(np.max(drift[holding]))

    targets = [0.5 * (lim.lower + lim.upper) if math.isfinite(lim.lower) else 0.3 for lim in eng.limits]
    eng.set_commands(eng.actuated_joint_names, positions=targets)
    eng.step(5000)
    q, qd, tau = eng.positions(), eng.velocities(), eng.efforts()
    assert all(np.all(np.isfinite(a)) for a in (q, qd, tau, eng.data.qacc))
    # Joints still on their way after 5 s (the PR2 torso lifts at 13 mm/s) are excused from the tracking check.
    reachable = [n not in overloaded and abs(t - q0i) <= 4.0 * lim.velocity
                 for n, t, q0i, lim in zip(eng.actuated_joint_names, targets, q0, eng.limits, strict=True)]
    track_err = float(np.max(np.abs(q[act] - np.array(targets))[reachable]))
    report(f"{robot.name}_10s", f"t={eng.time:.1f} s, nq={eng.model.nq}, hold error {hold_err:.2e} rad, "
           f"tracking error {track_err:.2e}, overloaded {sorted(overloaded)}, "
           f"ignored initial contacts {len(eng.ignored_collision_pairs)}")
    assert eng.time == pytest.approx(10.0)
    assert sagged <= overloaded
    assert hold_err < 0.01
    assert track_err < 0.01
    if robot.name != "pr2":
        assert not overloaded


# ------------------------------------------------------------------ actuation
def test_position_step_settles_without_overshoot(report):
    eng = PhysicsEngine(rc_arm())
    for joint, step in (("joint1", 0.8), ("joint2", -0.5), ("joint4", 0.6), ("joint6", 0.4), ("joint7", 1.0)):
        eng.reset()
        i = eng.joint_names.index(joint)
        q0 = float(eng.positions()[i])
        target = q0 + step
        eng.set_command(joint, position=target)
        peak_over, settle, max_speed, max_eff = 0.0, None, 0.0, 0.0
        lim = eng.robot.joints[joint].limit
        for k in range(3000):
            eng.step()
            q = float(eng.positions()[i])
            peak_over = max(peak_over, (q - target) / step)
            max_speed = max(max_speed, abs(float(eng.velocities()[i])))
            max_eff = max(max_eff, abs(float(eng.efforts()[i])))
            if settle is None and abs(q - target) < 1e-3 * abs(step):
                settle = (k + 1) * eng.timestep
        final_err = abs(float(eng.positions()[i]) - target)
        report(f"step_{joint}", f"{step:+.2f} rad: overshoot {peak_over * 100:.3f} %, 0.1 % band at "
               f"{settle} s, final error {final_err:.1e}, peak speed {max_speed:.3f} (limit {lim.velocity}), "
               f"peak effort {max_eff:.2f} (limit {lim.effort})")
        assert peak_over < 0.02
        assert settle is not None and final_err < 1e-3 * abs(step)
        assert max_speed <= lim.velocity * 1.05
        assert max_eff <= lim.effort + 1e-9


def test_velocity_command_is_tracked_and_clamped(report):
    eng = PhysicsEngine(rc_arm())
    i = eng.joint_names.index("joint1")
    eng.set_command("joint1", velocity=0.5)
    eng.step(500)
    v = float(eng.velocities()[i])
    report("velocity_tracking_joint1", f"commanded 0.5, measured {v:.5f} rad/s after 0.5 s")
    assert v == pytest.approx(0.5, rel=0.02)
    assert eng.command_modes()["joint1"] == "velocity"
    eng.set_command("joint1", velocity=10.0)  # limit 2.175
    eng.step(300)
    v = float(eng.velocities()[i])
    report("velocity_clamp_joint1", f"commanded 10, measured {v:.4f} rad/s (limit 2.175)")
    assert v == pytest.approx(2.175, rel=0.02)
    # Back to holding: a position command at the current place stops it.
    eng.set_command("joint1", position=float(eng.positions()[i]))
    eng.step(1000)
    assert abs(float(eng.velocities()[i])) < 1e-3


def test_effort_is_clamped_to_the_urdf_limit(report):
    eng = PhysicsEngine(rc_arm())
    i = eng.joint_names.index("joint1")
    eng.set_command("joint1", effort=1000.0)
    eng.step()
    measured = float(eng.efforts()[i])
    report("effort_clamp_joint1", f"commanded 1000, applied {measured} N m (limit 87)")
    assert measured == pytest.approx(87.0)
    eng.set_command("joint1", effort=-5.0)
    eng.step()
    assert float(eng.efforts()[i]) == pytest.approx(-5.0)
    # Effort mode holds its effort until commanded otherwise; reset zeroes it and returns to position mode.
    eng.step(10)
    assert float(eng.efforts()[i]) == pytest.approx(-5.0)
    eng.reset()
    assert eng.command_modes()["joint1"] == "position"


def test_transmission_reduction_is_joint_space_transparent(report):
    base = planar2()
    geared = copy.deepcopy(base)
    geared.transmissions = [Transmission("t2", joints=[TransmissionJoint("joint2")],
                                         actuators=[TransmissionActuator("m2", mechanical_reduction=50.0)])]
    runs = []
    for robot in (base, geared):
        eng = PhysicsEngine(robot)
        eng.set_command("joint2", position=0.2)
        eng.step(800)
        eng.set_command("joint1", effort=4.0)
        eng.step(5)
        runs.append(eng)
    a, b = runs
    assert np.allclose(a.positions(), b.positions(), atol=1e-9)
    assert b.efforts()[0] == pytest.approx(4.0)
    ratio = float(b.efforts()[1] / b.actuator_efforts()[1])
    report("reduction_joint2", f"joint effort / motor effort = {ratio:.6f} (reduction 50)")
    assert ratio == pytest.approx(50.0)
    # The effort limit stays a joint-space limit (on the joint's total actuator force).
    assert b.model.jnt_actfrcrange[b.built.joints["joint2"].joint_id] == pytest.approx([-15.0, 15.0])
    assert b.model.actuator_gear[1, 0] == 50.0


def test_mimic_finger_follows(report):
    eng = PhysicsEngine(rc_arm())
    left, right = eng.joint_names.index("finger_left_joint"), eng.joint_names.index("finger_right_joint")
    assert "finger_right_joint" in eng.joint_names and "finger_right_joint" not in eng.actuated_joint_names
    eng.set_command("finger_left_joint", position=0.035)
    eng.step(1500)
    q = eng.positions()
    report("mimic_finger", f"left {q[left]:.6f} m, right {q[right]:.6f} m")
    assert q[left] == pytest.approx(0.035, abs=1e-4)
    assert q[right] == pytest.approx(q[left], abs=1e-4)
    with pytest.raises(CommandError, match=r"finger_right_joint.*mimic"):
        eng.set_command("finger_right_joint", position=0.01)


def test_reset_and_set_joint_state():
    eng = PhysicsEngine(rc_arm(), initial_positions={"joint1": 0.2})
    q_init = eng.positions().copy()
    assert q_init[0] == pytest.approx(0.2)
    eng.set_command("joint1", position=1.0)
    eng.step(200)
    assert eng.time == pytest.approx(0.2) and eng.step_count == 200
    eng.reset()
    assert eng.time == 0.0 and eng.step_count == 0
    assert np.array_equal(eng.positions(), q_init) and not np.any(eng.velocities())
    eng.step(500)  # holds the initial pose, not the old command
    assert np.max(np.abs(eng.positions() - q_init)) < 1e-4
    eng.reset({"joint2": -0.3, "finger_left_joint": 0.01})
    q = eng.positions()
    assert q[1] == -0.3 and q[eng.joint_names.index("finger_right_joint")] == pytest.approx(0.01)

    eng.set_joint_state({"joint3": 0.7}, {"joint3": 0.0})
    assert eng.positions()[2] == 0.7
    eng.step(1000)
    assert eng.positions()[2] == pytest.approx(0.7, abs=1e-4)  # the servo holds the new place
    eng.set_joint_state({"joint5": 0.1}, {"joint5": 0.5})
    assert eng.velocities()[4] == 0.5


def test_invalid_commands_are_rejected_whole():
    eng = PhysicsEngine(rc_arm())
    modes = eng.command_modes()
    with pytest.raises(CommandError, match="no_such_joint"):
        eng.set_commands(["joint1", "no_such_joint"], positions=[0.1, 0.2])
    with pytest.raises(CommandError, match=r"joint2.*not finite"):
        eng.set_commands(["joint1", "joint2"], efforts=[1.0, math.nan])
    with pytest.raises(CommandError, match="2 joints"):
        eng.set_commands(["joint1", "joint2"], velocities=[1.0])
    with pytest.raises(CommandError, match="twice"):
        eng.set_commands(["joint1", "joint1"], positions=[0.0, 0.1])
    with pytest.raises(CommandError, match="hand_joint"):
        eng.set_command("hand_joint", position=0.0)
    assert eng.command_modes() == modes
    with pytest.raises(CommandError, match=r"finger_right_joint.*disagrees"):
        eng.set_joint_state({"finger_left_joint": 0.01, "finger_right_joint": 0.03})
    with pytest.raises(CommandError, match="bogus"):
        eng.reset({"bogus": 1.0})
    with pytest.raises(CommandError, match="inf"):
        eng.set_joint_state({"joint1": math.inf})
    with pytest.raises(CommandError, match=r"joint4.*outside its range"):
        eng.reset({"joint4": 0.0})  # range [0.07, 3.0]
    with pytest.raises(ValueError, match="not an actuated joint"):
        PhysicsEngine(planar2(), gains={"tip_joint": {"kp": 1.0}})
    with pytest.raises(ValueError, match="unknown gain 'ki'"):
        PhysicsEngine(planar2(), gains={"joint1": {"ki": 1.0}})


def test_gains_from_config_are_used():
    eng = PhysicsEngine(planar2(), gains={"joint2": {"kp": 50.0, "kd": 3.0}})
    assert eng.gains()["joint2"]["kp"] == 50.0 and eng.gains()["joint2"]["kd"] == 3.0
    # A soft servo on a loaded joint: the steady-state error is what kp predicts minus the feed-forward,
    # i.e. zero with gravity fed forward, however soft the gain.
    eng.set_command("joint2", position=0.5)
    eng.step(4000)
    assert eng.positions()[1] == pytest.approx(0.5, abs=2e-3)


# ------------------------------------------------------------------ wrenches
def test_apply_wrench_on_hanging_link(report):
    d, m, ic = 0.4, 1.2, 0.01
    inertia = ic + m * d**2
    eng = PhysicsEngine(pendulum(d, m, ic))
    zero_efforts(eng)
    # A force through the hinge axis turns nothing; the same force at the tip (1 m below) turns it.
    eng.apply_wrench("bob", force=(5.0, 0.0, 0.0), point=(0.0, 0.0, 0.0), duration=0.05)
    eng.step()
    assert abs(float(eng.data.qacc[0])) < 1e-9
    eng.reset()
    zero_efforts(eng)
    eng.apply_wrench("bob", force=(5.0, 0.0, 0.0), point=(0.0, 0.0, -1.0), duration=0.05)
    eng.step()
    # r x F about +y: (0,0,-1) x (5,0,0) = (0,-5,0) -> negative acceleration of the y-hinge.
    expected = -5.0 / inertia
    report("wrench_hinge_acc", f"{float(eng.data.qacc[0]):.5f} rad/s^2 (analytic {expected:.5f})")
    assert float(eng.data.qacc[0]) == pytest.approx(expected, rel=1e-6)
    eng.step(49)
    assert eng.active_wrenches() == ["bob"]
    eng.step()
    assert eng.active_wrenches() == [] and not np.any(eng.data.xfrc_applied)
    assert float(eng.positions()[0]) < 0.0
    # A pure torque about +y turns it the positive way; clear_wrenches stops it at once.
    eng.reset()
    zero_efforts(eng)
    eng.apply_wrench("bob", torque=(0.0, 2.0, 0.0))
    eng.step(100)
    assert float(eng.velocities()[0]) > 0.0
    eng.clear_wrenches()
    assert not np.any(eng.data.xfrc_applied)


def test_apply_wrench_on_free_body_follows_newton(report):
    mass = 2.0
    eng = PhysicsEngine(free_box(mass), fixed_base=False)
    eng.model.opt.gravity[:] = 0.0
    eng.reset()  # model options changed: recompute the derived quantities
    eng.apply_wrench("box", force=(0.0, 4.0, 0.0), point=(0.0, 0.0, 0.1), duration=0.25)
    eng.step(400)
    vel = np.array(eng.data.qvel[:3])
    ang = np.array(eng.data.qvel[3:6])
    expected = 4.0 * 0.25 / mass
    report("free_body_dv", f"{vel.round(6).tolist()} m/s (analytic [0, {expected}, 0]); angular "
           f"{ang.round(4).tolist()} rad/s")
    assert vel == pytest.approx([0.0, expected, 0.0], abs=1e-9)
    # Force at +z offset along +y: torque (0,0,0.1) x (0,4,0) = (-0.4, 0, 0) -> spin about -x.
    assert ang[0] < 0 and abs(ang[1]) < 1e-9 and abs(ang[2]) < 1e-9
    with pytest.raises(CommandError, match="no link 'nope'"):
        eng.apply_wrench("nope", force=(1, 0, 0))
    with pytest.raises(CommandError, match="force"):
        eng.apply_wrench("box", force=(1, 0))


# ------------------------------------------------------------------ contacts and frames
def test_contacts_with_a_floor(report):
    mass = 2.0
    eng = PhysicsEngine(free_box(mass), fixed_base=False, scene=floor, initial_base_pose=(0, 0, 0.3, 1, 0, 0, 0))
    assert eng.base_pose() == pytest.approx([0, 0, 0.3, 1, 0, 0, 0])
    assert eng.contacts() == []
    eng.step(300)
    assert eng.contacts(), "the box should have landed on the floor"
    eng.set_base_pose((0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0))
    assert eng.contacts() == []
    eng.step(2000)
    contacts = eng.contacts()
    assert contacts, "the box should rest on the floor"
    assert all({c.body1, c.body2} == {"world", "box"} for c in contacts)
    total = sum(float(c.force_world @ np.array([0, 0, 1.0])) * (1 if c.body2 == "box" else -1) for c in contacts)
    report("contact_support_force_N", f"{total:.4f} (m g = {mass * G:.4f}, {len(contacts)} contacts)")
    assert total == pytest.approx(mass * G, rel=0.01)
    assert all(abs(c.normal[2]) == pytest.approx(1.0) for c in contacts)
    assert eng.positions().size == 0


def test_arm_touching_a_box_reports_link_contact():
    def table(spec: mujoco.MjSpec) -> None:
        spec.worldbody.add_geom(name="table", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.3, 0.3, 0.05],
                                pos=[0.7, 0.0, 0.2])

    eng = PhysicsEngine(planar2(), scene=table)
    zero_efforts(eng)  # the arm falls onto the table
    eng.step(1500)
    bodies = {frozenset((c.body1, c.body2)) for c in eng.contacts()}
    assert any("world" in b and ({"link1", "link2"} & b) for b in bodies), bodies


def test_link_poses_include_fixed_frames():
    eng = PhysicsEngine(planar2())
    poses = eng.link_poses()
    assert set(poses) == {"base_link", "link1", "link2", "tip"}
    q1, q2 = eng.positions()
    # Planar FK in the x-z plane (rotation about +y turns +x towards -z).
    x = 0.5 * math.cos(q1) + 0.4 * math.cos(q1 + q2)
    z = 0.5 - 0.5 * math.sin(q1) - 0.4 * math.sin(q1 + q2)
    assert poses["tip"][:3, 3] == pytest.approx([x, 0.0, z], abs=1e-9)
    assert np.allclose(poses["tip"][:3, :3], poses["link2"][:3, :3])
    assert np.allclose(eng.link_pose_array()[eng.link_names.index("tip")], poses["tip"])
    # Child-in-parent poses, as /tf publishes them: the fixed tip sits 0.4 m along link2's x axis.
    rel = eng.relative_link_poses([("link2", "tip"), ("base_link", "link1")])
    assert rel[0] == pytest.approx(np.array([[1, 0, 0, 0.4], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]), abs=1e-12)
    c, s = math.cos(q1), math.sin(q1)
    assert rel[1][:3, :3] == pytest.approx(np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]), abs=1e-12)
    assert rel[1][:3, 3] == pytest.approx([0.0, 0.0, 0.5], abs=1e-12)


def test_initial_self_contacts_are_ignored(erd_robots):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eng = PhysicsEngine(load_robot(erd_robots / "panda_description/urdf/panda.urdf"))
    assert ("panda_link5", "panda_link7") in eng.ignored_collision_pairs
    eng.step(1000)
    assert np.max(np.abs(eng.positions() - np.array(list(eng.initial_positions.values())))) < 1e-3


def test_effort_joint_feels_plain_gravity_while_servos_hold(report):
    """Gravity compensation is off for what an effort-commanded joint carries, on for the servos' own links."""
    eng = PhysicsEngine(planar2())
    link1, link2 = (eng.built.links[n].body_id for n in ("link1", "link2"))
    assert eng.model.body_gravcomp[link1] == 1.0 and eng.model.body_gravcomp[link2] == 1.0
    eng.set_command("joint2", effort=0.0)
    assert eng.model.body_gravcomp[link1] == 1.0 and eng.model.body_gravcomp[link2] == 0.0
    q0 = eng.positions().copy()
    eng.step()
    assert float(eng.efforts()[1]) == 0.0  # nothing but physics acts on joint 2
    eng.step(499)
    q = eng.positions()
    report("effort_joint_fall", f"joint2 moved {q[1] - q0[1]:+.3f} rad in 0.5 s, servo joint1 "
           f"held within {abs(q[0] - q0[0]):.1e} rad")
    assert q[1] - q0[1] > 0.1  # positive angles turn link2 down
    assert abs(q[0] - q0[0]) < 0.02
    eng.set_command("joint2", position=float(q[1]))
    assert eng.model.body_gravcomp[link2] == 1.0


def test_floating_base_falls_at_g():
    eng = PhysicsEngine(free_box(), fixed_base=False)
    eng.step(100)
    assert eng.data.qvel[2] == pytest.approx(-G * 0.1, rel=1e-9)
    assert eng.base_pose()[2] == pytest.approx(-0.5 * G * 0.1**2, rel=0.02)
    with pytest.raises(CommandError, match="fixed base"):
        PhysicsEngine(planar2()).set_base_pose((0, 0, 1, 1, 0, 0, 0))


def test_divergence_is_reported_and_the_engine_reset(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MuJoCo logs its instability warning to ./MUJOCO_LOG.TXT
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no effort limit: warned, and here the point
        eng = PhysicsEngine(pendulum(effort=0.0))
    eng.set_gains("hinge", kp=1e15, kd=0.0)  # an absurd explicit gain blows the state up in one step
    eng.set_command("hinge", position=0.5)
    with pytest.raises(PhysicsDivergedError, match="diverged"):
        eng.step(100)
    assert eng.time == 0.0 and eng.step_count == 0 and eng.command_modes() == {"hinge": "position"}
    eng.step(10)  # usable again
    assert np.all(np.isfinite(eng.positions()))


def test_feedforwards_apply_and_clear():
    """Position commands may carry velocity and effort feed-forwards; a plain position command drops them."""
    eng = PhysicsEngine(planar2())
    eng.step(10)
    hold = float(eng.efforts()[0])  # gravity compensation only
    q = eng.positions().copy()
    eng.set_commands(["joint1"], positions=[q[0]], efforts=[3.0])
    eng.step()
    assert float(eng.efforts()[0]) == pytest.approx(hold + 3.0, abs=0.05)
    eng.set_commands(["joint1"], positions=[q[0]])
    eng.step(2000)
    assert float(eng.efforts()[0]) == pytest.approx(hold, abs=1e-3)
    assert eng.positions()[0] == pytest.approx(q[0], abs=1e-4)
    # A velocity feed-forward with a moving target: the servo tracks a ramp without the lag a plain servo has.
    lags = []
    for with_ff in (False, True):
        eng.reset()
        q0 = float(eng.positions()[0])
        for k in range(1, 501):
            target = q0 + 0.5 * k * eng.timestep
            eng.set_commands(["joint1"], positions=[target], velocities=[0.5] if with_ff else None)
            eng.step()
        lags.append(target - float(eng.positions()[0]))
    assert abs(lags[1]) < 0.2 * abs(lags[0])


# ------------------------------------------------------------------ audit of the model features
def test_pr2_gripper_mimics_are_bounded_by_the_master_only(report, erd_robots):
    """PR2's r_parallel_root joints mimic the finger with multiplier -1 but declare the range [0, 0.548]: the
    builder drops mimic joints' own ranges (warning about the contradiction), so the gripper opens and all
    five mimic joints follow."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eng = PhysicsEngine(load_robot(erd_robots / "pr2_description/urdf/pr2.urdf"))
    texts = [str(w.message) for w in caught if issubclass(w.category, RobotModelWarning)]
    assert any("r_gripper_r_parallel_root_joint" in t and "only the master's limit" in t for t in texts)
    mimics = [n for n in eng.joint_names if eng.robot.joints[n].mimic is not None]
    assert not any(eng.model.jnt_limited[eng.built.joints[n].joint_id] for n in mimics)
    master = "r_gripper_l_finger_joint"
    eng.set_command(master, position=0.4)
    eng.step(2000)
    q = dict(zip(eng.joint_names, eng.positions(), strict=True))
    followers = {n: q[n] for n in mimics if eng.robot.joints[n].mimic.joint == master}
    report("pr2_gripper", f"{master} {q[master]:.4f} rad; mimics "
           f"{ {k: round(float(v), 4) for k, v in followers.items()} }")
    assert q[master] == pytest.approx(0.4, abs=2e-3)
    assert len(followers) == 5
    for n, v in followers.items():
        assert v == pytest.approx(eng.robot.joints[n].mimic.multiplier * q[master], abs=2e-3), n


def test_constraint_stiffness_is_set_at_build_time():
    eng = PhysicsEngine(rc_arm(), limit_timeconst=0.004)
    m = eng.model
    limited = [eng.built.joints[n].joint_id for n in ("joint1", "joint4", "finger_left_joint")]
    assert m.jnt_solref[limited] == pytest.approx(np.array([[0.004, 1.0]] * 3))
    assert m.jnt_solimp[limited, :3] == pytest.approx(np.array([[0.95, 0.99, 0.001]] * 3))
    eq = eng.built.mimic_equalities["finger_right_joint"]
    assert m.eq_solref[eq] == pytest.approx([0.004, 1.0])
    coarse = PhysicsEngine(planar2(), timestep=0.005, limit_timeconst=0.004)  # at least two steps
    assert coarse.model.jnt_solref[coarse.built.joints["joint1"].joint_id] == pytest.approx([0.01, 1.0])


def test_skipped_meshes_and_adjusted_links_reach_the_engine():
    robot = pendulum()
    robot.links["bob"].collisions = [Collision(Geometry("mesh", filename="package://gone/bob.stl",
                                                        resolved_filename="/nonexistent/bob.stl"))]
    robot.links["wheel"] = Link("wheel")  # moves, but has no mass
    robot.joints["spin"] = Joint("spin", "continuous", "bob", "wheel", axis=np.array([0.0, 0.0, 1.0]),
                                 limit=Limit(None, None, 1.0, 1.0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eng = PhysicsEngine(robot)
    texts = " ".join(str(w.message) for w in caught)
    assert "bob.stl" in texts and "'wheel'" in texts
    assert len(eng.built.skipped_meshes) == 1 and "link 'bob'" in eng.built.skipped_meshes[0]
    assert eng.built.adjusted_links == ["wheel"]


def test_coupling_transmissions_leave_the_simulation_in_joint_space():
    """A differential or PR2 wrist is propagated by the controller manager (control/transmissions.py); the
    simulator drives its joints directly (reduction 1) and has nothing to warn about."""
    robot = planar2()
    robot.transmissions = [
        Transmission("elbow_diff", type="transmission_interface/DifferentialTransmission",
                     joints=[TransmissionJoint("joint1"), TransmissionJoint("joint2")],
                     actuators=[TransmissionActuator("m1", 10.0), TransmissionActuator("m2", 10.0)]),
        Transmission("old_style_wrist", type="WristTransmission"),
    ]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        eng = PhysicsEngine(robot)
    assert not [w for w in record if "elbow_diff" in str(w.message) or "old_style_wrist" in str(w.message)]
    assert list(eng.model.actuator_gear[:2, 0]) == [1.0, 1.0]
    eng.set_command("joint2", effort=2.0)
    eng.step()
    assert float(eng.actuator_efforts()[1]) == pytest.approx(2.0)  # motor effort = joint effort


def _box_triangles(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Corners and 12 outward triangles of an axis-aligned box."""
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6],
                      [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    return corners, faces


def _write_mesh(path: Path, verts: np.ndarray, faces: np.ndarray) -> None:
    if path.suffix == ".stl":  # binary STL
        out = bytearray(b"\0" * 80 + struct.pack("<I", len(faces)))
        for f in faces:
            out += struct.pack("<3f", 0.0, 0.0, 0.0)
            for v in verts[f]:
                out += struct.pack("<3f", *v)
            out += b"\0\0"
        path.write_bytes(bytes(out))
    elif path.suffix == ".obj":
        path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in verts)
                        + "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in faces))
    else:  # COLLADA in millimetres, so the unit conversion is exercised too
        pos = " ".join(str(1000.0 * x) for x in verts.ravel())
        idx = " ".join(str(i) for i in faces.ravel())
        path.write_text(f"""<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="millimeter" meter="0.001"/></asset>
  <library_geometries><geometry id="g"><mesh>
    <source id="p"><float_array id="pa" count="{verts.size}">{pos}</float_array>
      <technique_common><accessor source="#pa" count="{len(verts)}" stride="3"/></technique_common></source>
    <vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
    <triangles count="{len(faces)}"><input semantic="VERTEX" source="#v" offset="0"/><p>{idx}</p></triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="s"><node id="n"><instance_geometry url="#g"/></node></visual_scene>
  </library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>""")


@pytest.mark.parametrize("ext", [".stl", ".obj", ".dae"])
def test_mesh_collision_rests_on_the_floor(report, tmp_path, ext):
    """A floating link whose only collision shape is a mesh (a box reaching 5 cm below and 15 cm above the link
    origin, scaled 2x in z by the URDF) lands on the floor and rests on the mesh's bottom face."""
    verts, faces = _box_triangles(np.array([-0.1, -0.1, -0.025]), np.array([0.1, 0.1, 0.075]))
    path = tmp_path / f"block{ext}"
    _write_mesh(path, verts, faces)
    robot = free_box()
    robot.links["box"].collisions = [Collision(Geometry("mesh", filename=path.name, resolved_filename=str(path),
                                                        scale=np.array([1.0, 1.0, 2.0])))]
    eng = PhysicsEngine(robot, fixed_base=False, scene=floor, initial_base_pose=(0, 0, 0.3, 1, 0, 0, 0))
    assert eng.built.skipped_meshes == []
    eng.step(1500)
    height = float(eng.base_pose()[2])
    contacts = eng.contacts()
    report(f"mesh_rest_height_{ext[1:]}", f"{height:.5f} m (mesh bottom 0.05 m below the origin), "
           f"{len(contacts)} contacts")
    assert contacts and all({c.body1, c.body2} == {"world", "box"} for c in contacts)
    mesh_geom = mujoco.mj_name2id(eng.model, mujoco.mjtObj.mjOBJ_GEOM, "box:collision:0")
    assert eng.model.geom_type[mesh_geom] == mujoco.mjtGeom.mjGEOM_MESH
    assert all(mesh_geom in (int(eng.data.contact[i].geom1), int(eng.data.contact[i].geom2))
               for i in range(eng.data.ncon))
    assert height == pytest.approx(0.05, abs=2e-3)
    assert np.linalg.norm(eng.data.qvel[:3]) < 1e-3


def folding_arm() -> RobotModel:
    """Two boxes on vertical hinges (motion in the x-y plane, unloaded by gravity); folding joint2 past ~2.6 rad
    swings link2 into link1, which only a linked-body collision stops."""
    r = RobotModel("folding")
    r.links["base"] = Link("base")
    inertial = Inertial(0.5, Pose(np.array([0.25, 0.0, 0.0]), np.zeros(3)), np.diag([1e-3, 1e-2, 1e-2]))
    r.links["link1"] = Link("link1", inertial=inertial, collisions=[Collision(
        Geometry("box", size=np.array([0.48, 0.05, 0.05])), origin=Pose(np.array([0.24, 0.0, 0.0]), np.zeros(3)))])
    r.links["link2"] = Link("link2", inertial=copy.deepcopy(inertial), collisions=[Collision(
        Geometry("box", size=np.array([0.3, 0.05, 0.05])), origin=Pose(np.array([0.25, 0.0, 0.0]), np.zeros(3)))])
    z = np.array([0.0, 0.0, 1.0])
    r.joints["joint1"] = Joint("joint1", "revolute", "base", "link1", axis=z, limit=Limit(-0.1, 0.1, 10.0, 2.0))
    r.joints["joint2"] = Joint("joint2", "revolute", "link1", "link2", Pose(np.array([0.5, 0.0, 0.0]), np.zeros(3)),
                               z, Limit(-3.0, 3.0, 10.0, 2.0))
    return r


def test_linked_body_collisions_are_off_by_default_and_configurable(report):
    ends = {}
    for disable in (True, False):
        eng = PhysicsEngine(folding_arm(), disable_linked_collisions=disable)
        assert eng.ignored_collision_pairs == []  # nothing touches at the start
        eng.set_command("joint2", position=2.9)
        eng.step(3000)
        ends[disable] = float(eng.positions()[1])
        touching = {frozenset((c.body1, c.body2)) for c in eng.contacts()}
        assert (frozenset(("link1", "link2")) in touching) is (not disable)
    report("folding_joint2_rad", f"linked collisions off: {ends[True]:.4f}, on: {ends[False]:.4f} (target 2.9)")
    assert ends[True] == pytest.approx(2.9, abs=1e-3)
    assert ends[False] < 2.8


def test_floating_robot_falls_and_lands_on_the_floor(report):
    """planar2 on a free base, its arm held upright by the servos: the centre of mass falls at g (the servos'
    gravity compensation is cancelled on the free joint), the pedestal lands on the floor and the robot stands
    there, still holding its pose, the floor carrying exactly its weight."""
    robot = planar2()
    eng = PhysicsEngine(robot, fixed_base=False, scene=floor, initial_base_pose=(0, 0, 1.0, 1, 0, 0, 0),
                        initial_positions={"joint1": -math.pi / 2, "joint2": 0.0})
    assert eng.built.root_free_joint is not None
    assert eng.model.jnt_type[eng.built.root_free_joint.joint_id] == mujoco.mjtJoint.mjJNT_FREE
    q0 = eng.positions().copy()
    root = eng.built.links["base_link"].body_id
    eng.step(200)
    mujoco.mj_forward(eng.model, eng.data)  # derived quantities of the state after the last step
    mujoco.mj_subtreeVel(eng.model, eng.data)
    vz = float(eng.data.subtree_linvel[root][2])
    report("floating_com_velocity_after_0.2s", f"{vz:.6f} m/s (free fall: {-G * 0.2:.6f})")
    assert vz == pytest.approx(-G * 0.2, rel=1e-3)
    eng.step(1800)
    z = float(eng.base_pose()[2])
    contacts = eng.contacts()
    support = sum(float(c.force_world[2]) * (1 if c.body2 == "base_link" else -1) for c in contacts)
    weight = robot.total_mass() * G
    drift = float(np.max(np.abs(eng.positions() - q0)))
    report("floating_robot_landed", f"base at z = {z:.5f} m, floor force {support:.3f} N (weight {weight:.3f} N), "
           f"joint drift {drift:.1e} rad")
    assert contacts and all({c.body1, c.body2} == {"world", "base_link"} for c in contacts)
    assert abs(z) < 2e-3 and np.linalg.norm(eng.data.qvel[:6]) < 1e-3
    assert support == pytest.approx(weight, rel=0.01)
    assert drift < 1e-3


def test_floating_joint_below_a_world_root_falls():
    """A URDF 'world' root with a floating joint below it is a free joint too, and falls at g although its
    links carry the servos' gravity compensation."""
    robot = load_robot("""<robot name="w"><link name="world"/>
      <link name="body"><inertial><mass value="2"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>
      </inertial></link>
      <joint name="free" type="floating"><parent link="world"/><child link="body"/><origin xyz="0 0 1"/></joint>
    </robot>""")
    eng = PhysicsEngine(robot)
    eng.step(100)
    assert eng.link_pose("body")[2, 3] == pytest.approx(1.0 - 0.5 * G * 0.1**2, rel=1e-3)


def planar_puck() -> RobotModel:
    """A 2 kg puck on a planar joint whose plane is vertical (normal +y), so gravity acts along the plane."""
    r = RobotModel("puck")
    r.links["base"] = Link("base")
    r.links["puck"] = Link("puck", inertial=Inertial(2.0, Pose(), np.diag([0.01, 0.01, 0.01])))
    r.joints["slide"] = Joint("slide", "planar", "base", "puck", Pose(np.array([0.0, 0.0, 1.0]), np.zeros(3)),
                              np.array([0.0, 1.0, 0.0]), Limit(None, None, 100.0, 1.0))
    return r


def test_planar_joint_has_three_commandable_coordinates(report):
    eng = PhysicsEngine(planar_puck())
    coords = ["slide:u", "slide:v", "slide:rot"]
    assert eng.joint_names == coords and eng.actuated_joint_names == coords
    assert [lim.effort for lim in eng.limits] == [100.0] * 3
    eng.step(1000)  # uncommanded: holds its place against gravity
    assert np.max(np.abs(eng.positions())) < 1e-4
    target = [0.3, -0.2, 0.5]
    eng.set_commands(coords, positions=target)
    eng.step(2000)
    reached = eng.positions().copy()
    assert reached == pytest.approx(target, abs=1e-3)
    # The builder's plane basis for normal +y: u = +x, v = -z; the puck turns about +y.
    pose = eng.link_pose("puck")
    assert pose[:3, 3] == pytest.approx([0.3, 0.0, 1.2], abs=1e-3)
    assert math.atan2(pose[0, 2], pose[0, 0]) == pytest.approx(0.5, abs=1e-3)
    eng.set_command("slide:rot", velocity=0.8)
    eng.step(500)
    rate = float(eng.velocities()[2])
    assert rate == pytest.approx(0.8, rel=0.02)
    eng.set_command("slide:u", velocity=5.0)  # clamped to the planar joint's velocity limit
    eng.step(500)
    assert float(eng.velocities()[0]) == pytest.approx(1.0, rel=0.02)
    # Effort mode is plain physics: with zero effort the puck falls along v (= down) at g.
    eng.set_commands(coords, efforts=[0.0, 0.0, 0.0])
    v0 = float(eng.velocities()[1])
    eng.step(100)
    fall = (float(eng.velocities()[1]) - v0) / 0.1
    report("planar_joint", f"reached {np.round(reached, 4).tolist()} (target {target}); rot rate {rate:.4f} "
           f"rad/s; free acceleration along v {fall:.4f} m/s^2")
    assert fall == pytest.approx(G, rel=1e-3)
    with pytest.raises(CommandError, match=r"planar.*slide:u"):
        eng.set_command("slide", position=0.0)
    eng.reset({"slide:u": 0.1})
    assert eng.positions()[0] == 0.1


def test_uncommanded_joints_hold_their_last_position_command():
    eng = PhysicsEngine(rc_arm())
    q0 = eng.positions().copy()
    eng.set_command("joint1", position=0.5)
    for k in range(1500):  # a stream of commands that names joint4 only
        eng.set_command("joint4", position=float(q0[3]) + 0.3 * min(1.0, k / 1000))
        eng.step()
    q = eng.positions()
    assert q[0] == pytest.approx(0.5, abs=1e-3)  # joint1 holds its last command
    assert q[3] == pytest.approx(q0[3] + 0.3, abs=1e-3)
    others = [i for i in range(len(q)) if i not in (0, 3)]
    assert np.max(np.abs(q[others] - q0[others])) < 1e-3  # never commanded: hold the initial pose


def test_effort_only_joints_idle_at_zero_effort():
    """A joint whose ros2_control block offers only an effort command has no position to hold: it starts (and
    restarts after reset) in effort mode at zero effort, so the arm falls until a controller commands it."""
    robot = planar2()
    for rj in robot.ros2_control[0].joints:
        if rj.name == "joint2":
            rj.command_interfaces = [Ros2ControlInterface("effort")]
    eng = PhysicsEngine(robot)
    assert eng.command_modes() == {"joint1": "position", "joint2": "effort"}
    q0 = eng.positions().copy()
    eng.step()
    assert float(eng.efforts()[1]) == 0.0
    eng.step(299)
    assert eng.positions()[1] - q0[1] > 0.1  # turns down under gravity
    assert abs(eng.positions()[0] - q0[0]) < 0.02
    eng.set_command("joint2", position=float(q0[1]))
    eng.step(2000)
    assert eng.positions()[1] == pytest.approx(q0[1], abs=1e-3)
    eng.reset()
    assert eng.command_modes()["joint2"] == "effort"


def test_effort_mode_respects_the_velocity_limit(report):
    """A pendulum dropped from horizontal with zero effort would reach ~7 rad/s; its drive's velocity limiter
    holds it at the 2 rad/s URDF limit, within the effort limit."""
    peaks = {}
    for enforce in (True, False):
        eng = PhysicsEngine(pendulum(velocity=2.0, effort=20.0), initial_positions={"hinge": 1.5},
                            enforce_velocity_limits=enforce)
        zero_efforts(eng)
        peak, peak_effort = 0.0, 0.0
        for _ in range(1500):
            eng.step()
            peak = max(peak, abs(float(eng.velocities()[0])))
            peak_effort = max(peak_effort, abs(float(eng.efforts()[0])))
        peaks[enforce] = peak
        if enforce:
            assert peak_effort <= 20.0 + 1e-9
    report("effort_mode_peak_speed", f"{peaks[True]:.4f} rad/s with the limiter (limit 2), {peaks[False]:.3f} "
           "without")
    assert peaks[True] <= 2.0 * 1.01
    assert peaks[False] > 4.0


def test_initial_positions_come_from_the_urdf_and_can_be_overridden():
    robot = rc_arm()
    urdf = {n: j.initial_position for n, j in robot.joints.items() if j.initial_position is not None}
    assert len(urdf) >= 7  # ros2_control initial_value of the arm joints
    eng = PhysicsEngine(robot)
    q = dict(zip(eng.joint_names, eng.positions(), strict=True))
    for n, v in urdf.items():
        assert q[n] == pytest.approx(v), n
    eng = PhysicsEngine(robot, initial_positions={"joint2": 0.25})
    q = dict(zip(eng.joint_names, eng.positions(), strict=True))
    assert q["joint2"] == 0.25 and q["joint4"] == pytest.approx(urdf["joint4"])
    eng.step(500)
    assert eng.positions()[1] == pytest.approx(0.25, abs=1e-4)


def test_urdf_damping_and_friction_act(report):
    """<dynamics damping> gives the analytic decay of a small swing; <dynamics friction> subtracts itself from
    efforts above it and nearly holds a joint against efforts below it (MuJoCo's friction is regularised: the
    joint creeps slowly, see the builder, where a free joint would have turned 5 rad)."""
    d, m, ic, c = 0.4, 1.2, 0.01, 0.05
    inertia = ic + m * d**2
    eng = PhysicsEngine(pendulum(d, m, ic, damping=c), initial_positions={"hinge": 0.05})
    zero_efforts(eng)
    q = np.empty(6000)
    for k in range(q.size):
        eng.step()
        q[k] = eng.positions()[0]
    peaks = [q[k] for k in range(1, q.size - 1) if q[k - 1] < q[k] >= q[k + 1] and q[k] > 0]
    ratio = float(np.mean(np.array(peaks[1:]) / np.array(peaks[:-1])))
    omega_d = math.sqrt(m * G * d / inertia - (c / (2 * inertia)) ** 2)
    expected = math.exp(-c / (2 * inertia) * 2 * math.pi / omega_d)
    report("damping_peak_ratio", f"{ratio:.5f} per period (analytic {expected:.5f}, {len(peaks)} peaks)")
    assert len(peaks) >= 3 and ratio == pytest.approx(expected, rel=0.01)

    spinner = pendulum(d, m, ic, velocity=100.0)
    spinner.joints["hinge"].axis = np.array([0.0, 0.0, 1.0])  # gravity does not load a vertical axis
    spinner.joints["hinge"].dynamics = Dynamics(0.0, 0.5)
    eng = PhysicsEngine(spinner)
    eng.set_command("hinge", effort=0.4)
    eng.step(500)
    held = abs(float(eng.positions()[0]))
    eng.set_command("hinge", effort=0.7)
    v0 = float(eng.velocities()[0])
    eng.step(200)
    accel = (float(eng.velocities()[0]) - v0) / 0.2
    report("friction", f"effort 0.4 < friction 0.5 moved it {held:.1e} rad in 0.5 s (frictionless: "
           f"{0.5 * 0.4 / ic * 0.5**2:.1f} rad); effort 0.7 accelerates it at {accel:.3f} rad/s^2 (analytic "
           f"(0.7 - 0.5) / I = {0.2 / ic:.3f})")
    assert held < 0.05
    assert accel == pytest.approx(0.2 / ic, rel=0.02)


@pytest.mark.parametrize(("subset", "folded"), [(False, True), (True, True), (False, False)],
                         ids=["all joints", "three joints", "all joints, values tested first"])
def test_position_stream_fast_path_matches_the_general_path(subset, folded):
    """set_commands' fast path for a float64 position stream (robot_core.physics.actuation.stream_positions)
    must leave the engine exactly as the general path does (fed the same values as lists): a small-step stream,
    a jump the reference profile takes over, a stream pressing beyond the upper limits (clamped), a
    velocity-mode interlude, and refused commands that change nothing; for every actuated joint (a slice) and
    for a subset (indices). ``folded``: the jump test on the raw values is the only test of a value in range
    (rc_arm's joints all have a range and a velocity limit); else the engine's test of the values comes first."""
    probe = PhysicsEngine(rc_arm())
    names = probe.actuated_joint_names
    upper = probe.actuation.upper.copy()
    start = dict(zip(names, upper, strict=True))  # every joint at its upper limit
    fast, general = PhysicsEngine(rc_arm(), initial_positions=start), PhysicsEngine(rc_arm(), initial_positions=start)
    act = fast.actuation
    assert fast._stream_checks_values
    fast._stream_checks_values = folded
    taken: list[bool] = []  # per step: did a call take the fast path
    calls: list[bool] = []
    stream = act.stream_positions
    act.stream_positions = lambda *args: calls.append(stream(*args)) or calls[-1]
    rng = np.random.default_rng(3)
    phase = np.arange(len(names))
    sel = np.array([5, 1, 3]) if subset else np.arange(len(names))
    sent = [names[i] for i in sel]

    def wave(k: int) -> np.ndarray:
        """Moves each joint by at most half a step's travel per step, 0 at k = 0."""
        t = 0.001 * k
        return 0.5 * act.velocity_limit / (2 * math.pi) * (np.sin(2 * math.pi * t + phase) - np.sin(phase))

    for k in range(600):
        if k < 150:
            q = upper + np.abs(wave(k))  # pressing beyond the limits in small steps: clamped, fast path
        elif k < 400:
            q = upper - 0.3  # one jump, then held: the reference profile runs, then settles
        else:
            q = upper - 0.3 - wave(k - 400)  # small steps again: fast path, then slow after the interlude
        q = q[sel]
        calls.clear()
        if 520 <= k < 540:
            for eng in (fast, general):
                eng.set_commands(sent, velocities=[0.01] * len(sent))
        else:
            fast.set_commands(sent, positions=q)
            general.set_commands(sent, positions=q.tolist())
        if k % 97 == 0:
            bad = q.copy()
            bad[rng.integers(len(sent))] = math.nan if k % 2 else 1e30
            for eng, values in ((fast, bad), (general, bad.tolist())):
                with pytest.raises(CommandError, match=r"not finite|absurd"):
                    eng.set_commands(sent, positions=values)
        taken.append(any(calls))
        fast.step()
        general.step()
        for attr in ("target", "reference", "reference_velocity", "mode"):
            assert np.array_equal(getattr(act, attr), getattr(general.actuation, attr)), (k, attr)
        assert np.array_equal(fast.data.ctrl, general.data.ctrl), k
        assert np.array_equal(fast.data.qpos, general.data.qpos), k
    assert sum(taken[:150]) >= 140 and sum(taken[400:510]) >= 100, \
        f"fast path taken {sum(taken[:150])} of 150, {sum(taken[400:510])} of 110 times"


def test_base_velocity_is_the_floating_base_twist_in_its_own_frame():
    """nav_msgs/Odometry's convention for ~/base_state: linear and angular velocity in the base's frame."""
    eng = PhysicsEngine(free_box(), fixed_base=False)
    yaw = math.pi / 2  # the base turned left by 90 deg: world +x is the base's -y
    eng.set_base_pose((0.0, 0.0, 1.0, math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)),
                      linear_velocity=(1.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.5))
    twist = eng.base_velocity()
    print(twist)
    assert twist == pytest.approx([0.0, -1.0, 0.0, 0.0, 0.0, 0.5], abs=1e-9)
    assert PhysicsEngine(planar2()).base_velocity() == pytest.approx([0.0] * 6)


def test_a_stream_pressing_beyond_a_limit_tests_its_values_first():
    """A position stream beyond a joint's range fails the raw jump test every time (issue #21's folded test): after
    one such call the engine tests the values first for VALUES_FIRST_CALLS calls instead of trying both tests,
    then tries the raw test again; every call still takes the fast path and clamps."""
    from robot_core.physics.engine import VALUES_FIRST_CALLS

    eng = PhysicsEngine(rc_arm())
    names = eng.actuated_joint_names
    act = eng.actuation
    assert eng._stream_checks_values
    raw_tries, taken = [], []
    stream = act.stream_positions

    def spy(idx, p, validated=True):
        ok = stream(idx, p, validated)
        if not validated:
            raw_tries.append(ok)
        taken.append(ok)
        return ok

    act.stream_positions = spy
    q = act.target.copy()
    q[-1] = act.upper[-1] + 0.01  # the gripper pressed beyond its upper limit
    eng.set_commands(names, positions=q)  # general path: the reference starts towards the limit
    eng.step(400)
    raw_tries.clear()
    for _ in range(VALUES_FIRST_CALLS + 2):
        taken.clear()
        eng.set_commands(names, positions=q)
        assert taken[-1]  # the fast path, after the values' test
        eng.step()
    assert raw_tries == [False, False]  # the first call, then again after VALUES_FIRST_CALLS
    assert act.target[-1] == act.upper[-1]
