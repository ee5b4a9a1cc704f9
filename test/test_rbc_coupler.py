"""Coupler: L2 control, services' semantics, safe arming of cmd topics, robustness to faulty instances."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from sensor_msgs.msg import JointState

from robot_core.model import load_robot
from robot_core.rbc import registry
from robot_core.rbc.coupler import Coupler
from robot_core.rbc.errors import RbcVarError
from robot_core.rbc.instance import ABORTED, ACTIVE, UpdateResult
from robot_core.rbc.reachers.joint_reacher import JointGoal
from robot_core.rbc.reachers.reacher import Reacher

ROOT = Path(__file__).resolve().parents[1]
ARM = [f"joint{i}" for i in range(1, 8)]
POS_TOPIC = "/forward_position_controller/commands"
STATES = "/robot_joint_states"


@pytest.fixture(scope="module")
def model():
    return load_robot(str(ROOT / "urdf" / "rc_arm.urdf"))


@pytest.fixture
def coupler(model):
    return Coupler(model)


def feed(c: Coupler, q: list[float], t: float) -> None:
    c.on_message(STATES, JointState(name=ARM, position=q, velocity=[0.0] * 7, effort=[0.0] * 7), t)


class WritesStateVar(Reacher):
    """A deliberately broken reacher: writes a state var, which the coupler must refuse."""

    TYPE_NAME = "Broken"

    def start_goal(self, goal):
        return self._begin()

    def update(self, now, dt, state):
        return UpdateResult(commands={("joint1", "q"): 1.0})


def test_l2_ctrl_creates_lists_and_destroys_instances(coupler):
    r = coupler.l2_ctrl("create_re", "JR", "JR0")
    assert r.success and r.names == ["JR0"] and r.types == ["JR"]
    assert coupler.l2_ctrl("create_re", "VF", "VF0").success
    dup = coupler.l2_ctrl("create_re", "VF", "JR0")
    assert not dup.success and "already exists" in dup.message
    bad = coupler.l2_ctrl("create_re", "XYZ", "X0")
    assert not bad.success and "unknown reacher/extender type 'XYZ'" in bad.message and "JR" in bad.message
    assert not coupler.l2_ctrl("create_re", "JR", "").success
    listed = coupler.l2_ctrl("list_re")
    assert (listed.names, listed.types) == (["JR0", "VF0"], ["JR", "VF"])
    types = coupler.l2_ctrl("list_re", "types")
    assert {"JR", "VF", "CS", "TC", "ContactSimulation", "TouchContact"} <= set(types.names)
    assert dict(zip(types.names, types.types, strict=True))["TC"] == "extender"
    assert coupler.l2_ctrl("destroy_re", name="JR0").success
    gone = coupler.l2_ctrl("destroy_re", name="JR0")
    assert not gone.success and "no instance named 'JR0'" in gone.message
    assert not coupler.l2_ctrl("explode").success


def test_full_rc_arm_subscribes_each_topic_once_including_the_nested_field_topic(coupler):
    subs = [t for t, _ in coupler.subscriptions()]
    assert len(subs) == len(set(subs))
    assert STATES in subs
    pytest.importorskip("control_msgs")
    assert "/joint_trajectory_controller/controller_state" in subs


def test_get_and_set_vars_services(coupler):
    feed(coupler, [0.1 * i for i in range(7)], 1.0)
    coupler.update(1.0)
    r = coupler.get_vars(["joint2", "joint3"], ["q"])
    assert r.success and r.values == pytest.approx([0.1, 0.2]) and r.stale == [False, False]
    r = coupler.get_vars(["joint2"], ["nope"])
    assert not r.success and "has no var 'nope'" in r.message
    ok, msg = coupler.set_vars(["joint1", "joint2"], ["q_ref", "q_ref"], [0.5, 0.6])
    assert ok, msg
    assert coupler.get("joint2", "q_ref") == 0.6
    ok, msg = coupler.set_vars(["joint1", "joint2"], ["q_ref", "q"], [0.7, 0.8])
    assert not ok and "state var" in msg
    assert coupler.get("joint1", "q_ref") == 0.5  # all-or-nothing
    ok, msg = coupler.set_vars(["joint1"], ["q_ref"], [0.1, 0.2])
    assert not ok and "lengths differ" in msg


def test_cmd_topic_waits_for_measurements_before_it_is_sent(coupler):
    # A user writes joint1's position ref before any joint state arrived: sending the other joints' init
    # (0.0) could move them, so the topic is held back until their positions are known.
    coupler.set("joint1", "q_ref", 0.2)
    out = coupler.step(0.0)
    assert POS_TOPIC not in out
    assert "joint 'joint2'" in coupler.blocked_topics[POS_TOPIC]
    q = [0.0, 0.3, -0.2, 1.9, 0.1, 0.94, 0.05]
    feed(coupler, q, 0.01)
    out = coupler.step(0.01)
    assert list(out[POS_TOPIC].data) == pytest.approx([0.2, *q[1:]])


def test_faulty_reacher_is_aborted_and_the_coupler_keeps_running(coupler, monkeypatch):
    monkeypatch.setitem(registry._TYPES, "Broken", WritesStateVar)
    bad = coupler.create("Broken", "B0")
    jr = coupler.create("JR", "JR0", {"joints": ["joint1"]})
    bad.start_goal(None)
    jr.start_goal(JointGoal({"joint1": 0.3}, timeout=100.0))
    q = [0.0, 0.3, 0.0, 1.9, 0.0, 0.94, 0.0]
    for k in range(5):
        feed(coupler, q, k * 0.01)
        coupler.step(k * 0.01)
    assert bad.status().state == ABORTED and "state var" in bad.status().message
    assert any("Broken 'B0': update failed" in e for e in coupler.events)
    assert jr.status().state == ACTIVE
    assert coupler.get("joint1", "q_ref") > 0.0  # the healthy reacher still drives its joint


def test_position_refs_do_not_integrate_over_a_clock_jump_back(coupler):
    jr = coupler.create("JR", "JR0", {"joints": ["joint1"]})
    jr.start_goal(JointGoal({"joint1": 1.0}))
    q = [0.0, 0.3, 0.0, 1.9, 0.0, 0.94, 0.0]
    feed(coupler, q, 5.0)
    coupler.step(5.0)
    feed(coupler, q, 5.01)
    coupler.step(5.01)
    ref = coupler.get("joint1", "q_ref")
    assert ref == pytest.approx(0.01, rel=1e-6)  # kp 2 * error 1 -> clipped to 1 rad/s * 10 ms
    feed(coupler, q, 0.0)  # simulation reset: time restarts at 0
    coupler.step(0.0)
    assert coupler.get("joint1", "q_ref") == ref


def test_aggregated_state_output_shows_staleness(coupler):
    feed(coupler, [0.1] * 7, 0.0)
    coupler.update(0.2)
    msg = coupler.aggregate_joint_state("q", 0.2)
    assert list(msg.name)[:7] == ARM and list(msg.position)[:7] == pytest.approx([0.1] * 7)
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (0, 200_000_000)
    coupler.update(2.0)
    msg = coupler.aggregate_joint_state("q", 2.0)
    assert all(math.isnan(v) for v in msg.position)
    assert coupler.aggregate_joint_state("q", 2.0, stale_as_nan=False).position[0] == 0.1


def test_stale_events_and_unknown_names(coupler):
    feed(coupler, [0.0] * 7, 0.0)
    coupler.update(0.1)
    assert not coupler.events
    coupler.update(1.0)
    assert any("joint 'joint1', var 'q' from topic '/robot_joint_states' is stale" in e for e in coupler.events)
    with pytest.raises(KeyError, match="no instance named 'X'"):
        coupler.instance("X")
    with pytest.raises(RbcVarError):
        coupler.set_many("qd_ref", ["joint1"], [0.1, 0.2])
