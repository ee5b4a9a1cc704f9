"""Real-time pacing, RTF measurement and publish scheduling of the simulator, with a fake clock."""

from __future__ import annotations

import pytest

from robot_core.physics.pacing import Pacer, PublishPlan, PublishSchedule, RtfMeter, steps_per_period


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.now += s


def test_pacer_sleeps_until_absolute_deadlines_without_drift():
    clk = FakeClock()
    pacer = Pacer(1.0, clock=clk, sleep=clk.sleep)
    pacer.rebase(0.0)
    for k in range(1, 1001):
        clk.now += 0.0003  # 0.3 ms of work per 1 ms step
        pacer.wait(k * 0.001)
    assert clk.now == pytest.approx(100.0 + 1.0, abs=1e-9)
    assert all(s == pytest.approx(0.0007) for s in clk.slept)


def test_pacer_real_time_factor_scales_wall_time():
    clk = FakeClock()
    pacer = Pacer(2.0, clock=clk, sleep=clk.sleep)
    pacer.rebase(5.0)
    pacer.wait(6.0)
    assert clk.now == pytest.approx(100.5)
    pacer.real_time_factor = 0.5  # re-anchors at the next wait
    pacer.wait(6.0)
    pacer.wait(7.0)
    assert clk.now == pytest.approx(102.5)


def test_unpaced_never_sleeps():
    clk = FakeClock()
    pacer = Pacer(0.0, clock=clk, sleep=clk.sleep)
    assert pacer.remaining(1e6) == 0.0
    pacer.wait(10.0)
    assert clk.slept == []


def test_pacer_drops_lag_instead_of_bursting():
    clk = FakeClock()
    pacer = Pacer(1.0, max_lag=0.25, clock=clk, sleep=clk.sleep)
    pacer.rebase(0.0)
    clk.now += 0.1  # 0.1 s late: catch up (no sleep)
    assert pacer.remaining(0.0) == pytest.approx(-0.1)
    clk.now += 1.0  # a stall: give up the lag, schedule restarts from here
    assert pacer.remaining(0.001) == 0.0
    assert pacer.lag_resets == 1
    assert pacer.remaining(0.002) == pytest.approx(0.001)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_pacer_rejects_non_finite_rate(bad):
    with pytest.raises(ValueError, match="real_time_factor"):
        Pacer(bad)


def test_rtf_meter_over_sliding_window():
    clk = FakeClock()
    meter = RtfMeter(window=1.0, clock=clk)
    assert meter.value == 0.0
    sim = 0.0
    for _ in range(3000):  # 3 s of wall at RTF 2
        clk.now += 0.001
        sim += 0.002
        meter.sample(sim)
    assert meter.value == pytest.approx(2.0, rel=1e-6)
    for _ in range(3000):  # then RTF 0.5: the old rate leaves the window
        clk.now += 0.001
        sim += 0.0005
        meter.sample(sim)
    assert meter.value == pytest.approx(0.5, rel=0.02)
    meter.clear()
    assert meter.value == 0.0


def test_steps_per_period():
    assert steps_per_period(100.0, 0.001) == 10
    assert steps_per_period(1000.0, 0.001) == 1
    assert steps_per_period(5000.0, 0.001) == 1  # faster than the physics: every step
    assert steps_per_period(30.0, 0.002) == 17
    with pytest.raises(ValueError):
        steps_per_period(0.0, 0.001)


def test_publish_schedule_ticks_to_the_next_output():
    sched = PublishSchedule(0.001, {"joint_states": 250.0, "tf": 100.0, "clock": None}, max_steps=50)
    assert sched.periods == {"joint_states": 4, "tf": 10}
    count, due_at = 0, []
    while count < 40:
        count += sched.steps_to_next(count)
        due_at.append((count, sched.due(count)))
    assert due_at[:4] == [(4, ["joint_states"]), (8, ["joint_states"]), (10, ["tf"]), (12, ["joint_states"])]
    assert (20, ["joint_states", "tf"]) in due_at
    assert sched.is_due("tf", 30) and not sched.is_due("clock", 30)


def test_publish_schedule_without_outputs_uses_max_steps():
    sched = PublishSchedule(0.001, {}, max_steps=7)
    assert sched.steps_to_next(3) == 7


@pytest.mark.parametrize("rates", [
    {"joint_states": 250.0, "tf": 100.0, "clock": 1000.0, "objects": 30.0},
    {"joint_states": 200.0, "clock": 500.0, "tf": 50.0, "objects": 50.0, "camera": 30.0},
    {"joint_states": 100.0},
    {},
])
def test_publish_plan_matches_the_schedule_step_for_step(rates):
    sched = PublishSchedule(0.001, rates, max_steps=10)
    plan = PublishPlan(sched, {name: name.upper() for name in reversed(list(rates)) if name != "camera"})
    assert plan._steps is not None  # these patterns fit the table
    for count in range(3 * plan.period + 7):
        assert plan.steps_to_next(count) == sched.steps_to_next(count)
        # the actions' order, not the schedule's; "camera" has none but still shapes the steps
        assert plan.due(count) == tuple(n.upper() for n in reversed(list(rates)) if n != "camera"
                                        and sched.is_due(n, count))


def test_publish_plan_computes_long_patterns_per_call():
    # periods 997 and 1000 repeat only after 997000 steps: no table, the same answers
    sched = PublishSchedule(0.0001, {"a": 1000.0 / 99.7, "b": 10.0}, max_steps=10)
    assert sched.periods == {"a": 997, "b": 1000}
    plan = PublishPlan(sched, {"b": "B", "a": "A"})
    assert plan._steps is None and plan.period == 997_000
    for count in (0, 1, 996, 997, 1000, 1994, 997_000):
        assert plan.steps_to_next(count) == sched.steps_to_next(count)
        assert plan.due(count) == tuple(x for x, n in (("B", "b"), ("A", "a")) if sched.is_due(n, count))

