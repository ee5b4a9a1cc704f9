"""Planning speed of TrajectoryDynamics on the Franka Panda (dt 1 ms) beside the same work done with Pinocchio.

Prints the milliseconds of planning per second of planned motion for ``solve`` (IK of the target, then a quintic
joint move and inverse dynamics for every frame) and ``solve_linear`` (IK every frame seeded from the previous
one along a straight tool line, then inverse dynamics for every frame), and the same done with Pinocchio in the
same run: its damped CLIK (Pinocchio's documented loop, no joint limits) to the same tolerances (1e-6 m / 1e-5 rad
for the target; 1e-10 m / 1e-9 rad along the line, as TrajectoryDynamics uses), the same quintic, and ``rnea``
per frame (velocities and accelerations of the line by the same central differences). The ratio is ours /
Pinocchio's; a ratio below 1 is faster. Target: within 5x. The planned motion must also be real time: the last
column is planned seconds per second of planning.

Run: .venv/bin/python bench/inverse_dynamics.py [--quick]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from robot_core.kinematics import SerialKinematicChain, TrajectoryDynamics
from robot_core.kinematics.trajectory_dynamics import quintic, slerp
from robot_core.model import load_robot

Q0 = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8])
DT = 1e-3


def _panda_urdf() -> str:
    import pinocchio

    for parent in Path(pinocchio.__file__).resolve().parents:
        path = parent / "cmeel.prefix" / "share" / "example-robot-data" / "robots" / "panda_description" / "urdf"
        if (path / "panda.urdf").is_file():
            return str(path / "panda.urdf")
    raise SystemExit("example-robot-data (Panda URDF) not found")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    import pinocchio as pin

    reps = 3 if args.quick else 7
    urdf = _panda_urdf()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chain = SerialKinematicChain(load_robot(urdf), "panda_link0", "panda_hand")
    model = pin.buildModelFromUrdf(urdf)
    data = model.createData()
    fid = model.getFrameId("panda_hand")
    vidx = np.array([model.joints[model.getJointId(n)].idx_v for n in chain.joint_names])
    rng = np.random.default_rng(0)

    def full(x: np.ndarray) -> np.ndarray:
        v = np.zeros(model.nv)
        v[vidx] = x
        return v

    def clik(target: np.ndarray, q: np.ndarray, ptol: float, otol: float) -> np.ndarray:
        o_mdes = pin.SE3(target[:3, :3], target[:3, 3])
        for _ in range(200):
            pin.forwardKinematics(model, data, q)
            pin.updateFramePlacement(model, data, fid)
            i_md = data.oMf[fid].actInv(o_mdes)
            err = pin.log(i_md).vector
            if np.linalg.norm(err[:3]) < ptol and np.linalg.norm(err[3:]) < otol:
                return q
            jac = pin.computeFrameJacobian(model, data, q, fid)
            jac = -pin.Jlog6(i_md.inverse()) @ jac
            v = -jac.T @ np.linalg.solve(jac @ jac.T + 1e-12 * np.eye(6), err)
            q = pin.integrate(model, q, v)
        return q

    def pin_solve(target: np.ndarray, duration: float) -> np.ndarray:
        q1 = clik(target, full(Q0), 1e-6, 1e-5)[vidx]
        n = round(duration / DT)
        s, ds, dds = quintic(np.arange(n + 1) / n)
        dq = q1 - Q0
        return np.array([pin.rnea(model, data, full(Q0 + si * dq), full(dsi / duration * dq),
                                  full(ddsi / duration**2 * dq))[vidx] for si, dsi, ddsi in zip(s, ds, dds,
                                                                                                 strict=True)])

    def pin_linear(target: np.ndarray, duration: float) -> np.ndarray:
        n = round(duration / DT)
        s, _, _ = quintic(np.arange(n + 1) / n)
        pin.framesForwardKinematics(model, data, full(Q0))
        t0 = data.oMf[fid]
        p0, r0 = t0.translation.copy(), t0.rotation.copy()
        qs = np.empty((n + 1, chain.n))
        qs[0] = Q0
        q = full(Q0)
        desired = np.eye(4)
        for k in range(1, n + 1):
            desired[:3, 3] = p0 + s[k] * (target[:3, 3] - p0)
            desired[:3, :3] = slerp(r0, target[:3, :3], float(s[k]))
            q = clik(desired, q, 1e-10, 1e-9)
            qs[k] = q[vidx]
        padded = np.vstack((qs[1:2], qs, qs[-2:-1]))
        qd = (padded[2:] - padded[:-2]) / (2 * DT)
        qdd = (padded[2:] - 2 * padded[1:-1] + padded[:-2]) / DT**2
        return np.array([pin.rnea(model, data, full(a), full(b), full(c))[vidx] for a, b, c in zip(qs, qd, qdd,
                                                                                                  strict=True)])

    t_start = chain.forward_kinematics(Q0)
    cases = []
    for _ in range(reps):
        target = t_start.copy()
        target[:3, 3] += rng.uniform(-0.15, 0.15, 3)
        cases.append((target, float(rng.uniform(0.5, 1.5))))

    rows = []
    for label, ours, theirs in (
        ("solve", lambda tg, d: TrajectoryDynamics(chain, DT, q_start=Q0).solve(tg, d).tau, pin_solve),
        ("solve_linear", lambda tg, d: TrajectoryDynamics(chain, DT, q_start=Q0).solve_linear(tg, d).tau,
         pin_linear),
    ):
        ratios, a, b = [], [], []
        for i, (target, duration) in enumerate(cases):
            order = (ours, theirs) if i % 2 == 0 else (theirs, ours)
            times = {}
            results = {}
            for fn in order:
                t0 = time.perf_counter()
                results[fn] = fn(target, duration)
                times[fn] = (time.perf_counter() - t0) / duration * 1e3  # ms per planned second
            if label == "solve":  # same start state, same torques (later the arm's IK solutions may differ)
                assert np.abs(results[ours][0] - results[theirs][0]).max() < 1e-8
            a.append(times[ours])
            b.append(times[theirs])
            ratios.append(times[ours] / times[theirs])
        rows.append((label, float(np.median(a)), float(np.median(b)), float(np.median(ratios))))

    print(f"Panda ({chain.base_link} -> {chain.tip_link}), dt {DT * 1e3:g} ms, {reps} random targets within "
          f"±15 cm, 0.5-1.5 s moves; median ms of planning per planned second")
    print(f"{'operation':<16}{'robot_core':>12}{'pinocchio':>12}{'ratio':>9}{'target':>9}{'real time':>12}")
    for label, ms_ours, ms_pin, ratio in rows:
        print(f"{label:<16}{ms_ours:>12.1f}{ms_pin:>12.1f}{ratio:>8.2f}x{'<=5x':>9}{1e3 / ms_ours:>11.1f}x")
    print("(ratio: median over the targets of per-target ratios, the two libraries back to back)")


if __name__ == "__main__":
    main()
