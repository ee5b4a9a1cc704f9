"""TrajectoryDynamics (robot_core/kinematics/trajectory_dynamics.py) on the Franka Panda of example-robot-data.

Torques against Pinocchio's RNEA (with a payload body and an external wrench), the shape of joint moves, the tool
staying on the line of linear moves, leaving the workspace reported per frame, unreachable targets refused,
multi-move plans, adaptive mode closing the loop around robot_core's PhysicsEngine, the planned torques replayed
open loop in that engine, and the JointTrajectory-shaped export sampled by the JTC's own spline.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from robot_files import PANDA, erd_robot
from test_kinematics_oracle import PinChain

from robot_core.control.trajectory import JointSample, TrajectorySpline
from robot_core.kinematics import SerialKinematicChain
from robot_core.kinematics.trajectory_dynamics import (
    Move,
    TrajectoryDynamics,
    UnreachableTargetError,
    pose_errors,
)
from robot_core.model import load_robot
from robot_core.physics.engine import PhysicsEngine

pin = pytest.importorskip("pinocchio")

REPO = Path(__file__).resolve().parent.parent

Q0 = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8])
FINGER = {"panda_finger_joint1": 0.02}
DT = 1e-3


@pytest.fixture(scope="module")
def panda():
    urdf = erd_robot(PANDA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = load_robot(urdf)
    return urdf, robot, SerialKinematicChain(robot, "panda_link0", "panda_hand", hold_positions=FINGER)


def _shifted(t: np.ndarray, dp, rot_z: float = 0.0) -> np.ndarray:
    out = t.copy()
    out[:3, 3] += dp
    c, s = np.cos(rot_z), np.sin(rot_z)
    out[:3, :3] = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ t[:3, :3]
    return out


def _pin_with_payload(urdf: str, chain: SerialKinematicChain, mass: float, com: np.ndarray) -> PinChain:
    """The same chain in Pinocchio with a point mass body fixed to the tool frame at ``com`` (tool frame)."""
    pc = PinChain(urdf, chain)
    frame = pc.model.frames[pc.tip_fid]
    com_in_joint = frame.placement.act(com)
    pc.model.appendBodyToJoint(frame.parentJoint, pin.Inertia(mass, com_in_joint, np.zeros((3, 3))),
                               pin.SE3.Identity())
    pc.data = pc.model.createData()
    return pc


def test_torques_agree_with_pinocchio_rnea(panda):
    urdf, _, chain = panda
    t0 = chain.forward_kinematics(Q0)
    plain = TrajectoryDynamics(chain, DT, q_start=Q0)
    joint = plain.solve(_shifted(t0, [0.1, 0.2, -0.1], 0.4), 0.6)
    line = plain.solve_linear(t0, 0.6)
    pc = PinChain(urdf, chain)
    for plan in (joint, line):
        for k in range(0, len(plan.time), 7):
            ref = pc.rnea(plan.q[k], plan.qd[k], plan.qdd[k])
            assert np.abs(plan.tau[k] - ref).max() < 1e-8, k

    # the tool's classical acceleration the payload feels, against Pinocchio's
    k = len(joint.time) // 3
    q, v, a = pc.q(joint.q[k]), pc.vec(joint.qd[k]), pc.vec(joint.qdd[k])
    pin.forwardKinematics(pc.model, pc.data, q, v, a)
    pin.updateFramePlacements(pc.model, pc.data)
    ref = pin.getFrameClassicalAcceleration(pc.model, pc.data, pc.tip_fid, pin.LOCAL_WORLD_ALIGNED)
    lin, omega, alpha = chain.tip_acceleration(joint.q[k], joint.qd[k], joint.qdd[k])
    assert np.abs(lin - ref.linear).max() < 1e-9 and np.abs(alpha - ref.angular).max() < 1e-9
    assert np.abs(omega - chain.jacobian(joint.q[k])[3:] @ joint.qd[k]).max() < 1e-12

    mass, com = 1.3, np.array([0.02, -0.01, 0.08])
    loaded = TrajectoryDynamics(chain, DT, q_start=Q0, payload_mass=mass, payload_com=com)
    plan = loaded.solve(_shifted(t0, [0.1, -0.2, 0.05], -0.5), 0.5)
    pcl = _pin_with_payload(urdf, chain, mass, com)
    worst = max(np.abs(plan.tau[k] - pcl.rnea(plan.q[k], plan.qd[k], plan.qdd[k])).max()
                for k in range(0, len(plan.time), 5))
    assert worst < 1e-8
    assert np.abs(loaded.gravity_compensation(Q0) - pcl.rnea(Q0, np.zeros(7), np.zeros(7))).max() < 1e-8
    # the payload really matters (about 1.3 kg * g * lever)
    assert np.abs(loaded.gravity_compensation(Q0) - chain.gravity_torques(Q0)).max() > 0.5

    w = np.array([3.0, -2.0, 5.0, 0.2, 0.1, -0.3])
    pushed = TrajectoryDynamics(chain, DT, q_start=Q0, external_wrench=w)
    plan = pushed.solve_linear(_shifted(t0, [0.05, 0.05, 0.05]), 0.4)
    for k in range(0, len(plan.time), 9):
        ref = pc.rnea(plan.q[k], plan.qd[k], plan.qdd[k], {chain.tip_link: w})
        assert np.abs(plan.tau[k] - ref).max() < 1e-8


def test_solve_is_a_rest_to_rest_monotone_joint_move(panda):
    _, _, chain = panda
    td = TrajectoryDynamics(chain, DT, q_start=Q0)
    target = _shifted(chain.forward_kinematics(Q0), [0.15, -0.1, 0.1], 0.7)
    plan = td.solve(target, 0.8)
    assert plan.success and len(plan.time) == 801 and plan.time[-1] == pytest.approx(0.8)
    ep, er = pose_errors(chain.forward_kinematics(plan.q[-1]), target)
    assert ep < 1e-6 and er < 1e-5
    assert np.array_equal(plan.q[0], Q0)
    for j in range(chain.n):
        steps = np.diff(plan.q[:, j]) * np.sign(plan.q[-1, j] - plan.q[0, j])
        assert np.all(steps >= -1e-15), chain.joint_names[j]
    for end in (0, -1):
        assert np.abs(plan.qd[end]).max() < 1e-12 and np.abs(plan.qdd[end]).max() < 1e-9
    # velocities and accelerations are those of the positions
    fd = (plan.q[2:] - plan.q[:-2]) / (2 * DT)
    assert np.abs(fd - plan.qd[1:-1]).max() < 1e-4  # central difference error dt^2 q''' / 6
    assert np.array_equal(td.q, plan.q[-1])  # the state moved to the end


def test_solve_linear_keeps_the_tool_on_the_line(panda):
    _, _, chain = panda
    td = TrajectoryDynamics(chain, DT, q_start=Q0)
    t0 = chain.forward_kinematics(Q0)
    target = _shifted(t0, [0.2, 0.15, -0.15], 0.5)
    plan = td.solve_linear(target, 1.0)
    assert plan.success and plan.failed_frames == []
    p0, p1 = t0[:3, 3], target[:3, 3]
    axis = (p1 - p0) / np.linalg.norm(p1 - p0)
    rel = plan.tool_positions - p0
    off_line = np.linalg.norm(rel - np.outer(rel @ axis, axis), axis=1)
    print(f"\nsolve_linear: largest distance of the tool from the line {off_line.max() * 1e3:.2e} mm")
    assert off_line.max() < 5e-4
    along = rel @ axis
    assert np.all(np.diff(along) >= -1e-9) and along[-1] == pytest.approx(np.linalg.norm(p1 - p0), abs=1e-6)
    assert pose_errors(chain.forward_kinematics(plan.q[-1]), target)[1] < 1e-6
    assert np.abs(plan.qd[-1]).max() == 0.0 and np.abs(plan.qdd).max() < 20.0


def test_a_line_out_of_the_workspace_reports_its_frames(panda):
    _, _, chain = panda
    td = TrajectoryDynamics(chain, DT, q_start=Q0)
    t0 = chain.forward_kinematics(Q0)
    plan = td.solve_linear(_shifted(t0, [0.7, 0.0, 0.0]), 0.5)
    out = plan.moves[0]
    assert not plan.success and not out.success
    assert out.failed_frames and out.failed_frames[-1] == 500 and out.max_translation_error > 1e-2
    first = out.failed_frames[0]
    assert first > 0 and out.failed_frames == list(range(first, 501))  # from where it leaves to the end
    # the frames before are on the line
    p0 = t0[:3, 3]
    rel = plan.tool_positions[:first] - p0
    assert np.abs(rel[:, 1:]).max() < 5e-4


def test_an_unreachable_target_is_refused_in_one_line(panda):
    _, _, chain = panda
    td = TrajectoryDynamics(chain, DT, q_start=Q0, restarts=3)
    far = chain.forward_kinematics(Q0)
    far[:3, 3] = [2.0, 0.0, 0.5]
    with pytest.raises(UnreachableTargetError) as err:
        td.solve(far, 1.0)
    msg = str(err.value)
    assert "\n" not in msg and "unreachable" in msg and "[2.0, 0.0, 0.5]" in msg and "panda_hand" in msg
    assert np.array_equal(td.q, Q0)  # nothing moved
    with pytest.raises(ValueError, match="duration"):
        td.solve(chain.forward_kinematics(Q0), 0.0)
    with pytest.raises(ValueError, match="4x4"):
        td.solve(np.zeros(3), 1.0)
    with pytest.raises(ValueError, match="solve_linear: the target's 3x3 block is not a rotation"):
        td.solve_linear(np.diag([1.0, 1.0, -1.0, 1.0]), 1.0)


def test_solve_linear_n_runs_moves_with_their_own_thresholds(panda):
    _, _, chain = panda
    td = TrajectoryDynamics(chain, DT, q_start=Q0)
    t0 = chain.forward_kinematics(Q0)
    a, b = _shifted(t0, [0.1, 0.0, 0.0]), _shifted(t0, [0.1, 0.15, 0.0], 0.3)
    moves = [Move(a, 0.3), Move(b, 0.4, linear=False), Move(t0, 0.3, translation_threshold=1e-4)]
    plan = td.solve_linear_n(moves)
    assert plan.success and [m.linear for m in plan.moves] == [True, False, True]
    assert [(m.first_frame, m.last_frame) for m in plan.moves] == [(0, 300), (300, 700), (700, 1000)]
    assert len(plan.time) == 1001
    for m, target in zip(plan.moves, (a, b, t0), strict=True):
        assert pose_errors(chain.forward_kinematics(plan.q[m.last_frame]), target)[0] < 1e-6
        assert np.abs(plan.qd[m.last_frame]).max() < 1e-9
    # a threshold nothing can meet fails that move alone
    td2 = TrajectoryDynamics(chain, DT, q_start=Q0)
    tight = td2.solve_linear_n([Move(a, 0.3), Move(t0, 0.3, translation_threshold=1e-13)])
    assert tight.moves[0].success and not tight.moves[1].success and not tight.success


def _panda_engine(robot) -> PhysicsEngine:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eng = PhysicsEngine(robot, timestep=DT, include_visuals=False, gravity_compensation=False)
    eng.reset({"panda_joint" + str(i + 1): v for i, v in enumerate(Q0)} | FINGER)
    eng.set_commands(list(FINGER), positions=list(FINGER.values()))
    return eng


def test_planned_torques_replayed_in_the_physics_engine(panda):
    """Open loop the arm drifts: it is unstable under gravity, and the plan's continuous derivatives differ from
    the simulator's 1 ms steps (and its servoed, not rigid, fingers) by a little that grows. The same plan through
    adaptive mode (feed-forward on the measured state plus a small PD) tracks it."""
    _, robot, chain = panda
    t0 = chain.forward_kinematics(Q0)
    moves = [Move(_shifted(t0, [0.15, 0.1, -0.1], 0.4), 1.0, linear=False), Move(t0, 1.0)]
    plan = TrajectoryDynamics(chain, DT, q_start=Q0, joint_damping=True).solve_linear_n(moves)
    names = chain.joint_names
    eng = _panda_engine(robot)
    idx = [eng.joint_names.index(n) for n in names]
    err = np.zeros(len(plan.time))
    for k in range(len(plan.time)):
        err[k] = np.abs(eng.positions()[idx] - plan.q[k]).max()
        eng.set_commands(names, efforts=plan.tau[k])
        eng.step()
    print(f"\nopen-loop replay, largest joint error: {err[:501].max():.2e} rad over 0.5 s, {err[:1001].max():.2e} "
          f"over 1 s, {err.max():.2e} over 2 s")
    assert err[:501].max() < 2e-3  # observed ~3e-4: the torques are the motion's

    td = TrajectoryDynamics(chain, DT, q_start=Q0, joint_damping=True, kp=100.0, kd=20.0)
    td.start(moves)
    eng = _panda_engine(robot)
    err_cl = []
    while True:
        q_m, qd_m = eng.positions()[idx], eng.velocities()[idx]
        cmd = td.step(q_m, qd_m)
        err_cl.append(np.abs(q_m - cmd.q).max())
        eng.set_commands(names, efforts=cmd.tau)
        eng.step()
        if cmd.done:
            break
    issued = td.finish()
    print(f"adaptive mode (computed torque, kp 100, kd 20): largest joint error {max(err_cl):.2e} rad over 2 s")
    assert len(issued) == len(plan.time) and max(err_cl) < 1e-3
    assert pose_errors(chain.forward_kinematics(eng.positions()[idx]), t0)[0] < 1e-3


def test_adaptive_update_replans_from_the_moving_reference(panda):
    _, robot, chain = panda
    t0 = chain.forward_kinematics(Q0)
    td = TrajectoryDynamics(chain, DT, q_start=Q0)
    td.start([Move(_shifted(t0, [0.2, 0.0, 0.0]), 1.0, linear=False)])
    eng = _panda_engine(robot)
    idx = [eng.joint_names.index(n) for n in chain.joint_names]
    for _ in range(400):
        cmd = td.step(eng.positions()[idx], eng.velocities()[idx])
        eng.set_commands(chain.joint_names, efforts=cmd.tau)
        eng.step()
    assert np.abs(cmd.qd).max() > 1e-2  # moving
    with pytest.raises(ValueError, match=r"linear.*moving"):
        td.update([Move(t0, 0.5)])
    new_target = _shifted(t0, [0.0, 0.2, 0.05])
    replanned = td.update([Move(new_target, 0.8, linear=False)])
    # continuous: the new plan starts at the reference's position, velocity and acceleration
    assert np.allclose(replanned.q[0], cmd.q + cmd.qd * DT, atol=1e-3)
    ref_next = td.step(eng.positions()[idx], eng.velocities()[idx])
    assert np.abs(ref_next.qd - cmd.qd).max() < 0.05
    while not ref_next.done:
        eng.set_commands(chain.joint_names, efforts=ref_next.tau)
        eng.step()
        ref_next = td.step(eng.positions()[idx], eng.velocities()[idx])
    issued = td.finish()
    assert len(issued) == 400 + 801
    assert pose_errors(chain.forward_kinematics(eng.positions()[idx]), new_target)[0] < 2e-3
    with pytest.raises(RuntimeError, match="start"):
        td.step(Q0, np.zeros(7))


def test_joint_trajectory_export_is_what_the_jtc_samples(panda):
    _, _, chain = panda
    td = TrajectoryDynamics(chain, DT, q_start=Q0)
    plan = td.solve_linear(_shifted(chain.forward_kinematics(Q0), [0.1, 0.1, 0.1]), 0.5)
    msg = plan.to_joint_trajectory(stride=20)
    assert msg["joint_names"] == chain.joint_names and len(msg["points"]) == 25
    last = msg["points"][-1]
    assert last["time_from_start"] == {"sec": 0, "nanosec": 500_000_000}
    assert last["positions"] == plan.q[-1].tolist() and last["effort"] == plan.tau[-1].tolist()
    assert all(len(p[key]) == 7 for p in msg["points"]
               for key in ("positions", "velocities", "accelerations", "effort"))
    pts = msg["points"]
    times = [p["time_from_start"]["sec"] + p["time_from_start"]["nanosec"] * 1e-9 for p in pts]
    spline = TrajectorySpline(0.0, JointSample.at_rest(Q0), times, np.array([p["positions"] for p in pts]),
                              np.array([p["velocities"] for p in pts]), np.array([p["accelerations"] for p in pts]))
    worst = max(np.abs(spline.sample(float(t))[0].positions - q).max() for t, q in zip(plan.time, plan.q, strict=True))
    assert worst < 1e-5
    with pytest.raises(ValueError, match="stride"):
        plan.to_joint_trajectory(stride=0)


def test_trace_box_edge_example_writes_its_plot(panda, tmp_path):
    from PIL import Image

    urdf, _, _ = panda
    png = tmp_path / "box.png"
    proc = subprocess.run([sys.executable, str(REPO / "examples" / "trace_box_edge.py"), "--urdf", urdf, "--out",
                           str(png), "--dt", "0.004", "--edge-time", "0.4"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = {line.split()[0]: line for line in proc.stdout.splitlines() if line.startswith("solve")}
    assert "success=True" in lines["solve_linear"] and "success=True" in lines["solve"]
    lin = [float(x) for x in lines["solve_linear"].split("[mm]: ")[1].split("  ")[0].split(", ")]
    joint = [float(x) for x in lines["solve"].split("[mm]: ")[1].split("  ")[0].split(", ")]
    assert len(lin) == 4 and max(lin) < 0.5 and max(joint) > 1.0  # the joint moves bend away from the edges
    img = np.asarray(Image.open(png))
    assert img.shape[0] > 300 and img.shape[1] > 1000 and img.std() > 5.0
