"""TouchContact and ContactSimulation against wrenches applied in the real MuJoCo engine (rc_arm held still)."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from robot_core.model import load_robot
from robot_core.model.robot_model import RbcMsg, RbcNode, RbcVar
from robot_core.physics.engine import PhysicsEngine
from robot_core.rbc.coupler import Coupler
from robot_core.rbc.engine_loop import EngineLoop, forward_routes
from robot_core.rbc.errors import RbcGoalError, RbcParamError
from robot_core.rbc.extenders.touch_contact import estimate_wrench
from robot_core.rbc.instance import ACTIVE, CANCELED, SUCCEEDED
from robot_core.rbc.reachers.contact_simulation import ContactGoal, torque_var_in

ROOT = Path(__file__).resolve().parents[1]
ARM = [f"joint{i}" for i in range(1, 8)]
EXT_TOPIC = "/external_torques"


@pytest.fixture(scope="module")
def model():
    """rc_arm plus an external-torque cmd var per arm joint (what a simulator driver would read)."""
    m = copy.deepcopy(load_robot(str(ROOT / "urdf" / "rc_arm.urdf")))
    for i, j in enumerate(ARM):
        msg = RbcMsg("std_msgs/msg/Float64MultiArray", "data", True, i)
        m.joints[j].rbc.append(RbcNode("sim_ext", j, [RbcVar("tau_ext", EXT_TOPIC, "cmd", msg)]))
    return m


@pytest.fixture
def sim(model):
    loop = EngineLoop(Coupler(model), PhysicsEngine(model, include_visuals=False),
                      forward_routes("/forward_position_controller/commands", None, ARM))
    loop.publish_state()
    return loop


def settle(loop: EngineLoop, min_time: float = 0.3, max_time: float = 5.0) -> None:
    """Run until the arm is at rest again (after at least ``min_time``)."""
    start = loop.engine.time
    assert loop.run_until(lambda: loop.engine.time - start >= min_time
                          and float(np.max(np.abs(loop.engine.velocities()))) < 1e-5, max_time)


def rel_err(est: np.ndarray, true: np.ndarray) -> float:
    return float(np.linalg.norm(est - true) / np.linalg.norm(true))


@pytest.mark.parametrize(("link", "point", "force"), [
    ("link7", [0.0, 0.0, 0.05], [10.0, -5.0, 8.0]),
    ("tcp", [0.0, 0.0, 0.0], [-4.0, 12.0, -6.0]),
    ("link5", [0.02, 0.0, 0.04], [0.0, 0.0, -15.0]),
])
def test_touch_contact_recovers_an_applied_force_within_5_percent(sim, link, point, force):
    tc = sim.coupler.create("TC", "TC0", {"end_link": "tcp", "link": link, "point": point})
    settle(sim)
    sim.cycle()
    assert np.linalg.norm(sim.coupler.derived["TC0"]["wrench"][:3]) < 0.05  # no contact: ~nothing
    sim.engine.apply_wrench(link, force=force, point=point)
    settle(sim)
    sim.cycle()
    d = sim.coupler.derived["TC0"]
    assert d["rank"] == 3 and d["unobservable"] == []
    assert rel_err(d["wrench"][:3], np.array(force)) < 0.05, d["wrench"]
    assert tc.joints == ARM
    # The contact frame sits at the point on the link (simulator pose as the oracle).
    link_pose = sim.engine.link_pose(link)
    np.testing.assert_allclose(d["contact_pose"][:3, 3], link_pose[:3, :3] @ point + link_pose[:3, 3], atol=1e-6)
    r = d["contact_pose"][:3, :3]
    np.testing.assert_allclose(r @ d["wrench_in_contact_frame"][:3], d["wrench"][:3], atol=1e-9)
    assert d["frame_id"] == "TC0_contact" and d["base_link"] == "base_link"


def test_touch_contact_full_wrench_with_seven_joints(sim):
    sim.coupler.create("TC", "TC0", {"end_link": "tcp", "link": "link7", "point": [0.0, 0.03, 0.06],
                                     "components": "wrench"})
    force, torque = np.array([6.0, -8.0, 5.0]), np.array([0.8, 0.5, -1.2])
    sim.engine.apply_wrench("link7", force=force, torque=torque, point=[0.0, 0.03, 0.06])
    settle(sim)
    sim.cycle()
    d = sim.coupler.derived["TC0"]
    assert d["rank"] == 6
    assert rel_err(d["wrench"], np.concatenate([force, torque])) < 0.05, d["wrench"]


def test_touch_contact_reports_unobservable_components_on_a_short_chain(sim):
    # Three joints cannot observe a 6D wrench: rank <= 3 and the null space is reported, not invented.
    sim.coupler.create("TC", "TC0", {"end_link": "link3", "components": "wrench", "point": [0.0, 0.0, 0.1]})
    sim.engine.apply_wrench("link3", force=[5.0, 5.0, 0.0], point=[0.0, 0.0, 0.1])
    settle(sim)
    sim.cycle()
    d = sim.coupler.derived["TC0"]
    assert d["rank"] <= 3
    null = np.array(d["unobservable"])
    assert null.shape == (6 - d["rank"], 6)
    np.testing.assert_allclose(null @ null.T, np.eye(len(null)), atol=1e-9)
    np.testing.assert_allclose(null @ d["wrench"], 0.0, atol=1e-9)  # minimum norm: nothing along the null space


def test_estimate_wrench_is_exact_for_consistent_torques():
    rng = np.random.default_rng(0)
    jac = rng.normal(size=(6, 7))
    w = rng.normal(size=6)
    est, rank, null = estimate_wrench(jac, jac.T @ w, "wrench")
    np.testing.assert_allclose(est, w, atol=1e-10)
    assert rank == 6 and null.shape == (0, 6)
    est, rank, _ = estimate_wrench(jac, jac[:3].T @ w[:3], "force")
    np.testing.assert_allclose(est[:3], w[:3], atol=1e-10)
    assert rank == 3 and np.all(est[3:] == 0.0)


def test_contact_simulation_torques_match_the_simulated_physics(sim):
    """J^T w from CS equals the change of holding torques the engine shows when that wrench acts."""
    c = sim.coupler
    cs = c.create("CS", "CS0", {"link": "link7", "point": [0.0, 0.0, 0.05]})
    settle(sim)
    tau0 = sim.engine.efforts()[:7].copy()
    force, torque = np.array([7.0, 3.0, -9.0]), np.array([0.0, 0.4, 0.2])
    cs.start_goal(ContactGoal(force, torque))
    sim.cycle()
    tau_cs = np.array(sim.published[EXT_TOPIC].data)
    assert cs.status().feedback["joint_torques"] == pytest.approx(tau_cs.tolist())
    sim.engine.apply_wrench("link7", force=force, torque=torque, point=[0.0, 0.0, 0.05])
    settle(sim)
    dtau = sim.engine.efforts()[:7] - tau0  # motors now also hold the contact: dtau = -J^T w
    assert rel_err(tau_cs, -dtau) < 0.02, (tau_cs, -dtau)
    d = c.derived["CS0"]
    assert d["joint_names"] == ARM and d["frame_id"] == "CS0_contact"
    np.testing.assert_allclose(d["contact_pose"][:3, 3], sim.engine.link_pose("link7")[:3, :3] @ [0, 0, 0.05]
                               + sim.engine.link_pose("link7")[:3, 3], atol=1e-4)


def test_the_documented_torque_var_name_ext_sim_torques_is_found_and_written(model, sim):
    """The RBC documentation's CS writes "ext_sim_torques": tags with that cmd var get a CS writing it, the same
    torques as into our "tau_ext"; tags with neither leave the simulator's service as the way."""
    documented = copy.deepcopy(model)
    for j in ARM:
        for node in documented.joints[j].rbc:
            for var in node.vars:
                if var.name == "tau_ext":
                    var.name = "ext_sim_torques"
    loop = EngineLoop(Coupler(documented), PhysicsEngine(documented, include_visuals=False),
                      forward_routes("/forward_position_controller/commands", None, ARM))
    loop.publish_state()
    assert torque_var_in(sim.coupler.table) == "tau_ext"
    assert torque_var_in(loop.coupler.table) == "ext_sim_torques"
    assert torque_var_in(Coupler(load_robot(str(ROOT / "urdf" / "rc_arm.urdf"))).table) is None
    goal = ContactGoal([7.0, 3.0, -9.0], [0.0, 0.4, 0.2])
    for lp, var in ((sim, "tau_ext"), (loop, "ext_sim_torques")):
        lp.coupler.create("CS", "CS0", {"link": "link7", "point": [0.0, 0.0, 0.05], "torque_var": var}).start_goal(
            goal)
        lp.cycle()
    ours = np.array(sim.published[EXT_TOPIC].data)
    assert np.abs(ours).max() > 0.5
    np.testing.assert_allclose(loop.published[EXT_TOPIC].data, ours, atol=1e-9)
    assert [loop.coupler.get(j, "ext_sim_torques") for j in ARM] == pytest.approx(ours.tolist())


def test_contact_simulation_weights_sum_and_release(sim):
    c = sim.coupler
    a = c.create("CS", "A", {"link": "link7", "weight": 0.5})
    b = c.create("CS", "B", {"link": "link7", "weight": 0.5})
    a.start_goal(ContactGoal([0.0, 0.0, -10.0]))
    sim.cycle()
    half = np.array(sim.published[EXT_TOPIC].data)
    b.start_goal(ContactGoal([0.0, 0.0, -10.0], duration=0.01))
    sim.cycle()
    both = np.array(sim.published[EXT_TOPIC].data)
    np.testing.assert_allclose(both, 2 * half, rtol=1e-3, atol=1e-6)
    sim.run_until(lambda: b.status().done, 1.0)
    assert b.status().state == SUCCEEDED and a.status().state == ACTIVE
    sim.cycle()
    np.testing.assert_allclose(np.array(sim.published[EXT_TOPIC].data), half, rtol=1e-3, atol=1e-6)
    a.cancel()
    assert a.status().state == CANCELED
    sim.cycle()
    assert np.all(np.array(sim.published[EXT_TOPIC].data) == 0.0)  # released: no torque left behind


def test_contact_simulation_service_mode_round_trip_with_touch_contact(sim):
    """CS asks the simulator to apply a wrench (the node's service call, done here on the engine); TC sees it."""
    c = sim.coupler
    cs = c.create("CS", "CS0", {"mode": "service"})
    c.create("TC", "TC0", {"end_link": "tcp", "link": "hand", "point": [0.0, 0.0, 0.08]})
    cs.start_goal(ContactGoal([3.0, -9.0, 4.0], link="hand", point=[0.0, 0.0, 0.08]))
    sim.cycle()
    req = c.derived["CS0"]["apply_wrench_request"]
    assert req == {"link_name": "hand", "reference_point": [0.0, 0.0, 0.08], "force": [3.0, -9.0, 4.0],
                   "torque": [0.0, 0.0, 0.0], "duration": 0.0}
    assert EXT_TOPIC not in sim.published  # service mode writes no torque var
    sim.engine.apply_wrench(req["link_name"], req["force"], req["torque"], req["reference_point"],
                            req["duration"] or None)
    settle(sim)
    sim.cycle()
    assert "apply_wrench_request" not in c.derived["CS0"]  # sent once
    assert rel_err(c.derived["TC0"]["wrench"][:3], np.array([3.0, -9.0, 4.0])) < 0.05
    cs.cancel()
    sim.cycle()
    assert c.derived["CS0"]["apply_wrench_request"]["force"] == [0.0, 0.0, 0.0]


def test_contact_param_and_goal_errors(sim):
    c = sim.coupler
    cs = c.create("CS", "CS0")
    with pytest.raises(RbcGoalError, match="names no link"):
        cs.start_goal(ContactGoal([1.0, 0.0, 0.0]))
    with pytest.raises(RbcParamError, match=r"CS 'CS0': parameter 'torque_var'.*'tau' is a state var"):
        cs.configure({"torque_var": "tau", "link": "link7"})
    with pytest.raises(RbcParamError, match=r"parameter 'torque_var'.*'q_ref' is a position var"):
        cs.configure({"torque_var": "q_ref", "link": "link7"})
    with pytest.raises(RbcParamError, match=r"parameter 'point'.*3 numbers"):
        cs.set_param("point", [0.0, 1.0])
    with pytest.raises(RbcGoalError, match="3 finite numbers"):
        cs.start_goal(ContactGoal([1.0, 0.0], link="link7"))
    tc = c.create("TC", "TC0")
    with pytest.raises(RbcParamError, match="TC 'TC0': parameter 'components' must be one of"):
        tc.set_param("components", "torque")
    with pytest.raises(RbcParamError, match=r"parameter 'link'.*not a descendant"):
        tc.configure({"link": "base_link", "base_link": "link3", "end_link": "link5"})
