"""Bad input at the engine's doors (issue 13): huge finite commands and wrenches, divergence reports, MuJoCo's
warnings, the command watchdog's stop, and long names quoted in messages. ROS-free; the node's side of the same
faults is in test_simulator_trust.py."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from test_physics_engine import pendulum, planar2

from robot_core.physics.command_protocol import CommandRejectedError, JointCommandProtocol
from robot_core.physics.engine import (
    ABSURD_UNLIMITED,
    CommandError,
    PhysicsDivergedError,
    PhysicsEngine,
    route_mujoco_warnings,
)
from robot_core.text import clip


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty directory, to see whether MuJoCo writes MUJOCO_LOG.TXT into the working directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def mujoco_warnings():
    """MuJoCo's warnings, routed to a list for the test (and back to MuJoCo's default after it)."""
    got: list[str] = []
    route_mujoco_warnings(got.append)
    try:
        yield got
    finally:
        route_mujoco_warnings(None)


def settled_planar2() -> PhysicsEngine:
    eng = PhysicsEngine(planar2())
    eng.step(100)
    return eng


@pytest.mark.parametrize("effort", [1e11, -1e300])
def test_an_absurd_effort_is_refused_naming_the_joint_and_the_other_servos_hold(effort, in_tmp):
    eng = settled_planar2()
    q0 = eng.positions().copy()
    with pytest.raises(CommandError, match=r"effort command .* for joint 'joint1' is absurd"):
        eng.set_commands(["joint1"], efforts=[effort])
    assert eng.command_modes() == {"joint1": "position", "joint2": "position"}  # nothing applied
    eng.step(300)
    # MuJoCo zeroes every control when one is huge: the position servos would let go (joint2 would fall)
    assert np.allclose(eng.positions(), q0, atol=1e-3), (q0, eng.positions())
    assert not (in_tmp / "MUJOCO_LOG.TXT").exists()


def test_a_large_effort_is_clamped_to_the_effort_limit(in_tmp):
    eng = settled_planar2()
    eng.set_commands(["joint1"], efforts=[1e5])  # within 1e6 x 30 N m: a saturating command, not an absurd one
    assert eng.actuation.effort_cmd[0] == 30.0
    assert eng.data.ctrl[0] == 30.0
    eng.step(50)
    assert abs(float(eng.efforts()[0])) <= 30.0 + 1e-9
    assert np.all(np.isfinite(eng.positions()))
    # feed-forwards too
    q = eng.positions().copy()
    eng.set_commands(["joint2"], positions=[q[1]], efforts=[-1e4])
    assert eng.actuation.effort_cmd[1] == -15.0
    assert not (in_tmp / "MUJOCO_LOG.TXT").exists()


def test_velocity_and_position_commands_are_clamped_or_refused():
    eng = settled_planar2()
    eng.set_commands(["joint1"], velocities=[1e3])  # limit 3 rad/s
    assert eng.actuation.velocity_cmd[0] == 3.0
    with pytest.raises(CommandError, match=r"velocity command 1e\+07 for joint 'joint1' is absurd"):
        eng.set_commands(["joint1"], velocities=[1e7])
    eng.set_commands(["joint1"], positions=[100.0])  # range [-3, 3]
    assert eng.actuation.target[0] == 3.0
    with pytest.raises(CommandError, match=r"position command 1e\+07 for joint 'joint1' is absurd"):
        eng.set_commands(["joint1"], positions=[1e7])


def test_a_joint_without_limits_refuses_beyond_the_absolute_bound(in_tmp):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no effort limit: warned at build
        eng = PhysicsEngine(pendulum(effort=0.0, velocity=0.0))  # continuous, no effort or velocity limit
    for field in ("positions", "velocities", "efforts"):
        with pytest.raises(CommandError, match="'hinge' is absurd"):
            eng.set_commands(["hinge"], **{field: [10 * ABSURD_UNLIMITED]})
    eng.set_commands(["hinge"], efforts=[5.0])  # an ordinary command still works
    eng.step(10)
    assert not (in_tmp / "MUJOCO_LOG.TXT").exists()


def test_set_joint_state_refuses_absurd_values():
    eng = settled_planar2()
    with pytest.raises(CommandError, match="'joint1' is absurd"):
        eng.set_joint_state({}, {"joint1": 1e300})


def test_wrenches_beyond_the_bound_are_refused_with_the_bound():
    eng = settled_planar2()
    assert eng.max_wrench_force >= 1000.0
    with pytest.raises(CommandError, match=r"apply_wrench on 'link2': \|force\| = 1e\+300 N is beyond the "
                                           r"simulator's bound"):
        eng.apply_wrench("link2", force=(0.0, 0.0, 1e300))
    with pytest.raises(CommandError, match=r"\|torque\| = 1\.73205e\+11 N m is beyond"):
        eng.apply_wrench("link2", torque=(1e11, 1e11, 1e11))
    assert eng.active_wrenches() == []
    eng.apply_wrench("link2", force=(0.0, 0.0, 20.0), duration=0.1)  # an ordinary push is fine
    assert eng.active_wrenches() == ["link2"]
    custom = PhysicsEngine(planar2(), max_wrench_force=10.0)
    with pytest.raises(CommandError, match="bound 10 N"):
        custom.apply_wrench("link2", force=(0.0, 0.0, 20.0))


def test_a_divergence_says_when_and_where_and_mujoco_warns_to_the_hook(in_tmp, mujoco_warnings):
    eng = settled_planar2()
    t = eng.time
    eng.set_joint_state({}, {"joint1": 1e6})  # finite but far too fast: MuJoCo's accelerations blow up
    with pytest.raises(PhysicsDivergedError, match="diverged") as info:
        eng.step(10)
    assert info.value.time == pytest.approx(t) and info.value.dof == 0
    assert eng.step_count == 0 and eng.time == 0.0  # reset to the initial state
    assert any("QACC" in w for w in mujoco_warnings), mujoco_warnings
    assert not (in_tmp / "MUJOCO_LOG.TXT").exists()


def test_stop_motion_commands_zeroes_velocities_and_holds_effort_joints():
    eng = settled_planar2()
    assert eng.stop_motion_commands() == []  # position servos hold already: nothing to do
    eng.set_commands(["joint1"], velocities=[1.0])
    eng.set_commands(["joint2"], efforts=[2.0])
    eng.step(100)
    assert abs(float(eng.velocities()[0])) > 0.5
    assert sorted(eng.stop_motion_commands()) == ["joint1", "joint2"]
    assert eng.command_modes() == {"joint1": "velocity", "joint2": "position"}
    assert eng.actuation.velocity_cmd[0] == 0.0
    eng.step(500)
    assert np.all(np.abs(eng.velocities()) < 1e-2), eng.velocities()
    assert eng.stop_motion_commands() == []  # once
    eng.set_commands(["joint1"], velocities=[-0.5])  # the next command takes over
    eng.step(200)
    assert float(eng.velocities()[0]) == pytest.approx(-0.5, abs=0.05)


def test_long_names_are_shortened_in_messages():
    name = "j" * 100_000
    assert len(clip(name)) < 100 and "100000 chars" in clip(name)
    assert clip("joint1") == "joint1"
    protocol = JointCommandProtocol(["joint1", "joint2"])
    with pytest.raises(CommandRejectedError) as info:
        protocol.parse([name], [1.0])
    assert len(str(info.value)) < 300 and "100000 chars" in str(info.value)
    eng = settled_planar2()
    with pytest.raises(CommandError) as info:
        eng.set_commands([name], [1.0])
    assert len(str(info.value)) < 300
    with pytest.raises(CommandError) as info:
        eng.apply_wrench(name, force=(1.0, 0.0, 0.0))
    assert len(str(info.value)) < 300
