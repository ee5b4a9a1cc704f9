"""Kinematics/dynamics speed on the Franka Panda: robot_core.kinematics beside Pinocchio, same run.

Prints the median µs per call of FK (tip pose as a 4x4), Jacobian (6xn, base frame), inverse dynamics
(q, qd, qdd) and IK (seeds within ±0.5 rad of a solution) for both libraries, and the ratio
ours / Pinocchio (median of the back-to-back batch pairs, and fastest batch over fastest batch); then the
IK success rate from uniformly random seeds, with and without restarts, beside Pinocchio's CLIK from the
same seeds. The load average is printed before and after: on a shared machine read the figures with it.
Pinocchio anchors: forwardKinematics + updateFramePlacement + oMf.homogeneous,
computeFrameJacobian(LOCAL_WORLD_ALIGNED), rnea, and the damped CLIK loop of Pinocchio's documentation
(step 1, no joint limits) stopped at the same tolerances. Targets (issue #21): FK, Jacobian, ID each <= 2x
Pinocchio; IK from uniformly random seeds >= 90 % in one attempt, >= 99.9 % with restarts at a median < 0.5 ms.

Run: .venv/bin/python bench/kinematics.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np

from robot_core.kinematics import IKStatus, SerialKinematicChain
from robot_core.model import load_robot


def _panda_urdf() -> str:
    import pinocchio

    for parent in Path(pinocchio.__file__).resolve().parents:
        path = parent / "cmeel.prefix" / "share" / "example-robot-data" / "robots" / "panda_description" / "urdf"
        if (path / "panda.urdf").is_file():
            return str(path / "panda.urdf")
    raise SystemExit("example-robot-data (Panda URDF) not found")


def _batch_us(fn, args_list, batch: int, start: int) -> float:
    """Mean time per call over one batch, cycling through args_list from ``start``."""
    n = len(args_list)
    t0 = time.perf_counter()
    for k in range(start, start + batch):
        fn(*args_list[k % n])
    return (time.perf_counter() - t0) / batch * 1e6


def _paired_us(ours, ours_args, theirs, their_args, batch: int,
               batches: int) -> tuple[float, float, float, float]:
    """(median µs ours, median µs theirs, median of per-pair ratios, ratio of each library's fastest batch).

    Batches of the two libraries run back to back (order alternating), and the ratio is taken per pair, so a
    load spike on this shared machine hits one pair instead of one library.
    """
    a, b, ratios = [], [], []
    for i in range(batches):
        if i % 2:
            tb = _batch_us(theirs, their_args, batch, i * batch)
            ta = _batch_us(ours, ours_args, batch, i * batch)
        else:
            ta = _batch_us(ours, ours_args, batch, i * batch)
            tb = _batch_us(theirs, their_args, batch, i * batch)
        a.append(ta)
        b.append(tb)
        ratios.append(ta / tb)
    return float(np.median(a)), float(np.median(b)), float(np.median(ratios)), min(a) / min(b)


def _per_call_us(fn, args_list) -> tuple[float, list]:
    times, results = [], []
    for args in args_list:
        t0 = time.perf_counter()
        results.append(fn(*args))
        times.append(time.perf_counter() - t0)
    return float(np.median(times) * 1e6), results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    import pinocchio as pin

    batches, batch, n_ik = (20, 100, 100) if args.quick else (60, 200, 500)
    load_before = os.getloadavg()[0]
    urdf = _panda_urdf()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chain = SerialKinematicChain(load_robot(urdf), "panda_link0", "panda_hand")
    model = pin.buildModelFromUrdf(urdf)
    data = model.createData()
    fid = model.getFrameId("panda_hand")
    vidx = np.array([model.joints[model.getJointId(n)].idx_v for n in chain.joint_names])

    rng = np.random.default_rng(0)
    qs = rng.uniform(chain.lower, chain.upper, size=(64, chain.n))
    qds = rng.uniform(-1, 1, size=(64, chain.n))
    qdds = rng.uniform(-1, 1, size=(64, chain.n))

    def full(x):
        v = np.zeros(model.nq)
        v[vidx] = x
        return v

    pq = [full(q) for q in qs]
    pqd = [full(q) for q in qds]
    pqdd = [full(q) for q in qdds]

    def pin_fk(q):
        pin.forwardKinematics(model, data, q)
        pin.updateFramePlacement(model, data, fid)
        return data.oMf[fid].homogeneous

    def pin_jac(q):
        return pin.computeFrameJacobian(model, data, q, fid, pin.LOCAL_WORLD_ALIGNED)

    def pin_rnea(q, v, a):
        return pin.rnea(model, data, q, v, a)

    # sanity: both libraries compute the same thing
    assert np.allclose(chain.forward_kinematics(qs[0]), pin_fk(pq[0]), atol=1e-9)
    assert np.allclose(chain.jacobian(qs[0]), pin_jac(pq[0])[:, vidx], atol=1e-9)
    assert np.allclose(chain.inverse_dynamics(qs[0], qds[0], qdds[0]), pin_rnea(pq[0], pqd[0], pqdd[0])[vidx],
                       atol=1e-9)

    rows = []
    for label, ours, ours_args, theirs, their_args in (
        ("forward kinematics", chain.forward_kinematics, [(q,) for q in qs], pin_fk, [(q,) for q in pq]),
        ("jacobian", chain.jacobian, [(q,) for q in qs], pin_jac, [(q,) for q in pq]),
        ("inverse dynamics", chain.inverse_dynamics, list(zip(qs, qds, qdds, strict=True)), pin_rnea,
         list(zip(pq, pqd, pqdd, strict=True))),
    ):
        rows.append((label, *_paired_us(ours, ours_args, theirs, their_args, batch, batches)))

    # IK: targets from random configurations, seeds within ±0.5 rad of the generating configuration
    targets, seeds, pin_seeds = [], [], []
    for _ in range(n_ik):
        q = rng.uniform(chain.lower, chain.upper)
        targets.append(chain.forward_kinematics(q))
        s = np.clip(q + rng.uniform(-0.5, 0.5, chain.n), chain.lower, chain.upper)
        seeds.append(s)
        pin_seeds.append(full(s))

    def ours_ik(target, seed):
        return chain.inverse_kinematics(target, seed)

    def pin_clik(target, q):
        o_mdes = pin.SE3(target[:3, :3], target[:3, 3])
        for i in range(200):
            pin.forwardKinematics(model, data, q)
            pin.updateFramePlacement(model, data, fid)
            i_md = data.oMf[fid].actInv(o_mdes)
            err = pin.log(i_md).vector
            if np.linalg.norm(err[:3]) < 1e-6 and np.linalg.norm(err[3:]) < 1e-5:
                return True, i
            jac = pin.computeFrameJacobian(model, data, q, fid)
            jac = -pin.Jlog6(i_md.inverse()) @ jac
            v = -jac.T @ np.linalg.solve(jac @ jac.T + 1e-12 * np.eye(6), err)
            q = pin.integrate(model, q, v)
        return False, 200

    ik_ours, results = _per_call_us(ours_ik, list(zip(targets, seeds, strict=True)))
    ik_pin, pin_results = _per_call_us(pin_clik, list(zip(targets, pin_seeds, strict=True)))
    rows.append(("inverse kinematics", ik_ours, ik_pin, ik_ours / ik_pin, ik_ours / ik_pin))
    ok = sum(r.status is IKStatus.CONVERGED for r in results) / n_ik
    pin_ok = sum(r[0] for r in pin_results) / n_ik
    iters = np.median([r.iterations for r in results])
    pin_iters = np.median([r[1] for r in pin_results])

    print(f"Panda ({chain.base_link} -> {chain.tip_link}, {chain.n} joints), median µs per call")
    print(f"{'operation':<22}{'robot_core':>12}{'pinocchio':>12}{'ratio':>9}{'min/min':>9}{'target':>10}")
    targets_txt = {"inverse kinematics": "<1000 µs"}
    for label, a, b, ratio, best in rows:
        print(f"{label:<22}{a:>12.2f}{b:>12.2f}{ratio:>8.2f}x{best:>8.2f}x{targets_txt.get(label, '<=2x'):>10}")
    print("(ratio: median over back-to-back batch pairs; min/min: each library's fastest batch, the figure least "
          "touched by load; IK: ratio of the medians over the same targets)")
    print(f"IK success: robot_core {ok:.1%} (median {iters:.0f} iterations, joint limits respected), "
          f"Pinocchio CLIK {pin_ok:.1%} (median {pin_iters:.0f} iterations, no limits)")

    # IK from uniformly random seeds (no knowledge of the solution), with and without random restarts; Pinocchio's
    # CLIK (no joint limits, one attempt) from the same seeds as the anchor
    n_uniform = 50 if args.quick else 200
    single = restarted = pin_single = 0
    restart_us, single_us, pin_us = [], [], []
    restart_cpu, pin_cpu = [], []  # this thread's CPU time: what a loaded machine's preemption leaves out
    wall, cpu = time.perf_counter, time.thread_time
    for k in range(n_uniform):
        target = chain.forward_kinematics(rng.uniform(chain.lower, chain.upper))
        seed = rng.uniform(chain.lower, chain.upper)
        t0 = wall()
        single += chain.inverse_kinematics(target, seed).success
        t1, c1 = wall(), cpu()
        restarted += chain.inverse_kinematics_with_restarts(target, seed, restarts=20, seed=k).success
        t2, c2 = wall(), cpu()
        pin_single += pin_clik(target, full(seed))[0]
        t3, c3 = wall(), cpu()
        single_us.append((t1 - t0) * 1e6)
        restart_us.append((t2 - t1) * 1e6)
        pin_us.append((t3 - t2) * 1e6)
        restart_cpu.append((c2 - c1) * 1e6)
        pin_cpu.append((c3 - c2) * 1e6)
    print(f"IK from uniformly random seeds ({n_uniform} targets): {single / n_uniform:.1%} single attempt "
          f"(median {np.median(single_us):.0f} µs; target >= 90 %), {restarted / n_uniform:.1%} with up to 20 random "
          f"restarts (median {np.median(restart_us):.0f} µs wall, {np.median(restart_cpu):.0f} µs CPU; target >= "
          f"99.9 % at < 500 µs); Pinocchio CLIK from the same seeds {pin_single / n_uniform:.1%} (median "
          f"{np.median(pin_us):.0f} µs wall, {np.median(pin_cpu):.0f} µs CPU, no limits)")
    print(f"load average (1 min): {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
