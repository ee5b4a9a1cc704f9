"""ParamSpec: validation naming the node and the parameter, the docs table, and the nodes' tables themselves."""

from __future__ import annotations

import math
import re

import pytest

from robot_core.nodes.node_params import NODE_PARAMS
from robot_core.parameter_spec import ParamError, ParamSpec, check_table, markdown_table, spec_for, validate

RATE = ParamSpec("rate", "double", 100.0, "cycle rate", minimum=0.0, exclusive_min=True, unit="Hz")


def test_double_accepts_an_int_and_refuses_bool_nan_and_bounds():
    assert validate(RATE, 200, "rbc") == 200.0 and isinstance(validate(RATE, 200, "rbc"), float)
    for bad, what in ((True, "a float"), ("fast", "a float"), (math.nan, "a finite float"),
                      (math.inf, "a finite float"), (0.0, "> 0"), (-1, "> 0")):
        with pytest.raises(ParamError, match=re.escape(f"rbc: parameter 'rate' = {bad!r} must be {what}")):
            validate(RATE, bad, "rbc")


def test_int_range_step_and_integral_floats():
    spec = ParamSpec("prio", "int", 50, "priority", minimum=0, maximum=99)
    assert validate(spec, 99, "cm") == 99 and validate(spec, 10.0, "cm") == 10
    with pytest.raises(ParamError, match=re.escape("cm: parameter 'prio' = 100 must be >= 0, <= 99")):
        validate(spec, 100, "cm")
    with pytest.raises(ParamError, match="must be an int"):
        validate(spec, 1.5, "cm")
    stepped = ParamSpec("n", "int", 2, "even", minimum=0, step=2)
    with pytest.raises(ParamError, match="step 2"):
        validate(stepped, 3, "x")


def test_choices_strings_lists_and_int_or_list():
    mode = ParamSpec("mode", "string", "", "mode", choices=("", "topic"))
    assert validate(mode, "topic", "cm") == "topic"
    with pytest.raises(ParamError, match=re.escape("cm: parameter 'mode' = 'tpoic' must be one of '', 'topic'")):
        validate(mode, "tpoic", "cm")
    folded = ParamSpec("mode", "string", "", "mode", choices=("", "topic"), fold_case=True)
    assert validate(folded, " Topic ", "cm") == " Topic "  # the node normalises; the spec only checks
    names = ParamSpec("dirs", "string[]", [], "dirs")
    assert validate(names, None, "s") == [] and validate(names, ("a",), "s") == ["a"]
    with pytest.raises(ParamError, match="a list of strings"):
        validate(names, "a", "s")
    cpus = ParamSpec("cpus", "int|int[]", None, "cpus", minimum=0, optional=True)
    assert validate(cpus, 1, "cm") == 1 and validate(cpus, [0, 1], "cm") == [0, 1]
    assert validate(cpus, None, "cm") is None and validate(cpus, [], "cm") == []
    for bad in (-1, [0, -1], [0.5], "0"):
        with pytest.raises(ParamError, match="'cpus'"):
            validate(cpus, bad, "cm")


def test_families_match_their_pattern_only():
    specs = (RATE, ParamSpec("gains.<joint>.<kp|kd|kv>", "double", None, "gains", family=True),
             ParamSpec("<controller>.type", "string", None, "type", family=True))
    assert spec_for(specs, "rate") is RATE
    assert spec_for(specs, "gains.joint1.kp") is specs[1]
    assert spec_for(specs, "jtc.type") is specs[2]
    assert spec_for(specs, "gains") is None and spec_for(specs, "rates") is None


def test_table_lists_every_spec_with_range_unit_and_settability():
    settable = ParamSpec("rtf", "double", 1.0, "factor | pipe", read_only=False, minimum=0.0)
    table = markdown_table([RATE, settable])
    lines = table.splitlines()
    assert len(lines) == 4
    assert lines[2] == "| `rate` | double | 100 | > 0 | Hz | read-only | cycle rate |"
    assert lines[3] == "| `rtf` | double | 1 | >= 0 |  | settable | factor \\| pipe |"


def test_check_table_refuses_duplicates_missing_descriptions_and_bad_defaults():
    with pytest.raises(ParamError, match="specified twice"):
        check_table([RATE, RATE])
    with pytest.raises(ParamError, match="no description"):
        check_table([ParamSpec("x", "bool", True, " ")])
    with pytest.raises(ParamError, match=re.escape("'y' = 0.0 must be > 0")):
        check_table([ParamSpec("y", "double", 0.0, "y", minimum=0.0, exclusive_min=True)])


@pytest.mark.parametrize("node", sorted(NODE_PARAMS))
def test_node_tables_are_consistent(node: str):
    check_table(NODE_PARAMS[node])


def test_double_lists_and_non_finite_clamps():
    gains = ParamSpec("kp", "double|double[]", 100.0, "gain", minimum=0.0)
    assert validate(gains, 5, "ctc") == 5.0 and validate(gains, [1, 2.5], "ctc") == [1.0, 2.5]
    with pytest.raises(ParamError, match=re.escape("ctc: parameter 'kp' = [1, -2] must be >= 0")):
        validate(gains, [1, -2], "ctc")
    with pytest.raises(ParamError, match="must be a float or list of floats"):
        validate(gains, ["a"], "ctc")
    with pytest.raises(ParamError, match="must be a finite float"):
        validate(ParamSpec("v", "double[]", [], "values"), [math.inf], "x")
    clamp = ParamSpec("gains.<joint>.u_clamp_max", "double", math.inf, "clamp", family=True, finite=False)
    assert validate(clamp, math.inf, "jtc") == math.inf
    with pytest.raises(ParamError, match="not NaN"):
        validate(clamp, math.nan, "jtc")
