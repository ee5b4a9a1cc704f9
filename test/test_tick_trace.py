"""TickTrace (robot_core/physics/tick_trace.py): the bench-only stamps of a command's path through the simulator."""

from __future__ import annotations

import itertools
import math

from robot_core.physics.tick_trace import ENV_VAR, FIELDS, TickTrace, read_trace


def test_off_unless_the_environment_names_a_file(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert TickTrace.from_environment() is None
    monkeypatch.setenv(ENV_VAR, "")
    assert TickTrace.from_environment() is None
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "t.json"))
    assert TickTrace.from_environment().path == tmp_path / "t.json"


def test_each_command_gets_the_stamps_of_the_tick_that_applied_it(tmp_path):
    clock = itertools.count(100.0, 1.0).__next__
    trace = TickTrace(tmp_path / "t.json", clock=clock)
    trace.began()  # 100: the tick begins, then takes the two queued commands
    r1 = trace.received()  # 101
    trace.parsed(r1, arrived=99.5)  # 102
    r2 = trace.received()  # 103
    trace.parsed(r2)  # 104, arrival unknown
    trace.tick()  # 105: both applied in this tick
    trace.stepping()  # 106
    trace.stepped()  # 107
    trace.states_published()  # 108
    trace.published()
    trace.began()  # 109
    r3 = trace.received()  # 110
    trace.parsed(r3, arrived=107.5)  # 111
    trace.tick()  # 112
    trace.stepping()  # 113
    trace.stepped()  # 114
    trace.published()  # no state published in that tick
    trace.began()  # 115
    trace.states_published()  # 116
    trace.published()  # a later tick without new commands records nothing
    trace.write()
    recs = read_trace(tmp_path / "t.json")
    assert [list(r) for r in recs] == [list(FIELDS)] * 3
    assert [r["began"] for r in recs] == [100.0, 100.0, 109.0]
    assert [r["received"] for r in recs] == [101.0, 103.0, 110.0]
    assert [r["arrived"] for r in recs] == [99.5, None, 107.5]
    assert recs[0]["tick"] == recs[1]["tick"] == 105.0 and recs[2]["tick"] == 112.0
    assert recs[0]["stepped"] == 107.0 and recs[0]["published"] == 108.0
    assert recs[2]["published"] is None


def test_a_divergence_drops_the_tick_s_commands(tmp_path):
    trace = TickTrace(tmp_path / "t.json")
    trace.began()
    trace.parsed(trace.received())
    trace.tick()
    trace.stepping()
    trace.dropped()
    trace.states_published()
    trace.published()
    assert len(trace.records) == 0
    trace.began()
    trace.parsed(trace.received())
    trace.tick()
    trace.stepping()
    trace.stepped()
    trace.states_published()
    trace.published()
    (rec,) = trace.records
    assert all(math.isfinite(v) for v in rec[1:])
