"""JointReacher closed on the real MuJoCo engine through the coupler, plus goal/param validation and mixing."""

from __future__ import annotations

import numpy as np
import pytest
from rbc_helpers import ARM, FORWARD_POSITION, FORWARD_VELOCITY, load_rc_arm, rc_arm_loop

from robot_core.rbc.engine_loop import EngineLoop
from robot_core.rbc.errors import RbcGoalError, RbcParamError
from robot_core.rbc.instance import ABORTED, ACTIVE, CANCELED, SUCCEEDED
from robot_core.rbc.reachers.joint_reacher import JointGoal


@pytest.fixture(scope="module")
def model():
    return load_rc_arm()


@pytest.fixture
def sim(model):
    return rc_arm_loop(model, gripper=True)


def arm_q(loop: EngineLoop) -> dict[str, float]:
    return dict(zip(loop.engine.joint_names, loop.engine.positions().tolist(), strict=False))


@pytest.mark.parametrize("output_var", ["q_ref", "qd_ref"])
def test_jr_moves_three_joints_to_targets_within_precision(sim, output_var):
    c = sim.coupler
    jr = c.create("JR", "JR0", {"joints": ["joint1", "joint2", "joint4", "joint6"], "output_var": output_var})
    q0 = arm_q(sim)
    targets = {"joint1": 0.6, "joint2": -0.2, "joint4": 1.3}
    gid = jr.start_goal(JointGoal(targets, precision=0.005, timeout=20.0))
    feedback_seen = []
    assert sim.run_until(lambda: jr.status().done, 25.0,
                         each=lambda lp: feedback_seen.append(dict(jr.status().feedback)))
    st = jr.status()
    assert (st.state, st.goal_id) == (SUCCEEDED, gid), st.message
    q = arm_q(sim)
    for j, t in targets.items():
        assert abs(q[j] - t) <= 0.005, (j, q[j])
    assert max(abs(e) for e in st.result["final_error"]) <= 0.005
    # Feedback named the goal joints and its errors shrank.
    assert feedback_seen[0]["joint_names"] == list(targets)
    assert abs(feedback_seen[-1]["error"][0]) < abs(feedback_seen[0]["error"][0])
    # Joints not in the goal (joint6 is in 'joints' but not the goal; joint3/5/7 are not the reacher's) stay put:
    # held by position servos, or commanded zero velocity (a velocity servo lets coupling forces drift it a bit).
    still = 0.01 if output_var == "q_ref" else 0.03
    for j in ("joint3", "joint5", "joint6", "joint7"):
        assert abs(q[j] - q0[j]) < still, j
    # It keeps holding after success.
    sim.run_for(1.0)
    q = arm_q(sim)
    assert all(abs(q[j] - t) <= 0.01 for j, t in targets.items())


def test_jr_rejects_goals_outside_its_joints_and_bad_goals(sim):
    jr = sim.coupler.create("JR", "JR0")
    with pytest.raises(RbcGoalError, match="'joints' is empty"):
        jr.start_goal(JointGoal({"joint1": 0.1}))
    jr.set_param("joints", ["joint1", "joint2"])
    with pytest.raises(RbcGoalError, match=r"JR 'JR0'.*\['joint3'\] outside parameter 'joints'"):
        jr.start_goal(JointGoal({"joint1": 0.1, "joint3": 0.2}))
    with pytest.raises(RbcGoalError, match="outside its limits"):
        jr.start_goal(JointGoal({"joint2": 3.0}))
    with pytest.raises(RbcGoalError, match="appears twice"):
        JointGoal.from_pairs([("joint1", 0.1), ("joint1", 0.2)])
    with pytest.raises(RbcGoalError, match="no joints"):
        jr.start_goal(JointGoal({}))
    assert jr.status().state == "idle"


def test_jr_parameter_errors_name_instance_and_parameter(sim):
    jr = sim.coupler.create("JR", "JR7")
    with pytest.raises(RbcParamError, match=r"JR 'JR7': parameter 'joints'.*unknown joint 'elbow'"):
        jr.set_param("joints", ["joint1", "elbow"])
    with pytest.raises(RbcParamError, match=r"parameter 'joints'.*joint 'hand_joint' has no rbc var 'q'"):
        jr.set_param("joints", ["hand_joint"])
    with pytest.raises(RbcParamError, match=r"parameter 'output_var'.*'tau' is a state var"):
        jr.configure({"output_var": "tau", "joints": ["joint1"]})
    assert jr.get_param("joints") == []  # all-or-nothing
    with pytest.raises(RbcParamError, match="parameter 'kp' must be >= 0"):
        jr.set_param("kp", -1.0)
    with pytest.raises(RbcParamError, match="unknown parameter 'kq'"):
        jr.set_param("kq", 1.0)
    with pytest.raises(RbcParamError, match=r"parameter 'weight' \(float\)"):
        jr.set_param("weight", "heavy")
    jr.set_param("joints", "joint1, joint2")  # ROS string-array from a command line also works
    assert jr.get_param("joints") == ["joint1", "joint2"]


def test_jr_aborts_on_timeout_and_then_stops_driving(sim):
    jr = sim.coupler.create("JR", "JR0", {"joints": ["joint1"], "kp": 0.05})
    jr.start_goal(JointGoal({"joint1": 1.0}, timeout=0.3))
    assert sim.run_until(lambda: jr.status().done, 2.0)
    st = jr.status()
    assert st.state == ABORTED and "timeout after 0.3 s" in st.message
    held = sim.coupler.get("joint1", "q_ref")
    sim.run_for(0.3)
    assert sim.coupler.get("joint1", "q_ref") == held  # position ref holds once nobody drives it
    assert abs(arm_q(sim)["joint1"] - held) < 0.01


def test_jr_gains_change_on_the_fly(sim):
    jr = sim.coupler.create("JR", "JR0", {"joints": ["joint1"]})
    jr.start_goal(JointGoal({"joint1": 0.8}, timeout=30.0))
    sim.run_for(0.2)
    jr.set_param("kp", 0.0)  # freeze: zero velocity output from now on
    sim.run_for(0.3)
    frozen = arm_q(sim)["joint1"]
    sim.run_for(0.5)
    assert abs(arm_q(sim)["joint1"] - frozen) < 2e-3
    assert 0.05 < frozen < 0.75 and jr.status().state == ACTIVE
    jr.configure({"kp": 3.0, "ki": 0.5})
    assert sim.run_until(lambda: jr.status().done, 10.0)
    assert jr.status().state == SUCCEEDED


def test_jr_cancel_and_stale_state_abort(sim):
    c = sim.coupler
    jr = c.create("JR", "JR0", {"joints": ["joint1"], "output_var": "qd_ref"})
    jr.start_goal(JointGoal({"joint1": 0.8}))
    sim.run_for(0.1)
    assert c.get("joint1", "qd_ref") != 0.0
    jr.cancel()
    assert jr.status().state == CANCELED
    sim.cycle()
    assert c.get("joint1", "qd_ref") == 0.0  # velocity var released to zero
    jr.start_goal(JointGoal({"joint1": 0.8}))
    sim.cycle()
    # The driver stops publishing: the coupler keeps cycling, the vars go stale and the reacher aborts.
    t = sim.engine.time
    for k in range(1, 700):
        c.step(t + k * 1e-3)
    st = jr.status()
    assert st.state == ABORTED and "stale" in st.message and "joint1" in st.message
    assert c.aggregate("q").stale[0]
    assert c.get("joint1", "qd_ref") == 0.0


def test_two_jrs_with_half_weights_mix_as_documented(sim):
    c = sim.coupler
    a = c.create("JR", "A", {"joints": ["joint1", "joint2"], "weight": 0.5})
    b = c.create("JR", "B", {"joints": ["joint1", "joint4"], "weight": 0.5})
    # Same target on the shared joint: like one reacher with weight 1, the target is reached exactly.
    a.start_goal(JointGoal({"joint1": 0.5, "joint2": 0.1}, precision=0.003, timeout=30.0))
    b.start_goal(JointGoal({"joint1": 0.5, "joint4": 1.5}, precision=0.003, timeout=30.0))
    assert sim.run_until(lambda: a.status().done and b.status().done, 30.0)
    assert a.status().state == b.status().state == SUCCEEDED
    q = arm_q(sim)
    assert abs(q["joint1"] - 0.5) <= 0.003
    # Different targets on the shared joint: it settles at the weighted mean; each unshared joint still reaches
    # its own target (driven by one reacher at half weight).
    a.start_goal(JointGoal({"joint1": 0.2, "joint2": 0.3}, timeout=60.0))
    b.start_goal(JointGoal({"joint1": 0.8}, timeout=60.0))
    sim.run_for(8.0)
    q = arm_q(sim)
    assert abs(q["joint1"] - 0.5) < 0.005
    assert abs(q["joint2"] - 0.3) < 0.005
    assert a.status().state == ACTIVE  # joint1 is not at 0.2, so A has not succeeded
    # Unequal weights shift the equilibrium to (w1*T1 + w2*T2)/(w1 + w2).
    a.set_param("weight", 0.75)
    b.set_param("weight", 0.25)
    sim.run_for(8.0)
    assert abs(arm_q(sim)["joint1"] - (0.75 * 0.2 + 0.25 * 0.8)) < 0.005


def test_half_weight_alone_is_slower_but_reaches_the_target(model):
    times = {}
    for w in (1.0, 0.5):
        loop = rc_arm_loop(model)
        engine = loop.engine
        jr = loop.coupler.create("JR", "JR0", {"joints": ["joint1"], "weight": w, "max_velocity": 5.0})
        jr.start_goal(JointGoal({"joint1": 0.4}, precision=0.005))
        assert loop.run_until(lambda jr=jr: jr.status().done, 20.0)
        assert jr.status().state == SUCCEEDED
        times[w] = engine.time
    assert times[0.5] > 1.5 * times[1.0]


def test_untouched_joints_on_an_armed_topic_hold_their_measured_position(sim):
    c = sim.coupler
    q0 = np.array([arm_q(sim)[j] for j in ARM])
    jr = c.create("JR", "JR0", {"joints": ["joint1"]})
    jr.start_goal(JointGoal({"joint1": 0.3}))
    sim.cycle()
    data = np.array(sim.published[FORWARD_POSITION].data)
    # Joints 2..7 are commanded where they are, not to their tag's init (0.0).
    np.testing.assert_allclose(data[1:], q0[1:], atol=1e-6)
    assert FORWARD_VELOCITY not in sim.published  # nobody wrote a velocity var: that controller gets nothing
