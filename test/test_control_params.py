"""Controller parameter access: nested or dotted input, typed reads naming the parameter at fault, and the
record of defaults the controller ran with (declared on its node like upstream's full parameter set)."""

from __future__ import annotations

import re

import pytest

from robot_core.control.errors import ControlError
from robot_core.control.params import Params


def test_dotted_and_nested_keys_read_alike():
    p = Params("jtc", {"gains.joint1.p": 5.0, "constraints": {"goal_time": 2}})
    assert p.float("gains.joint1.p") == 5.0 and p.float("constraints.goal_time") == 2.0
    with pytest.raises(ControlError, match=re.escape("controller 'jtc': parameter 'gains.joint1.d' is required")):
        p.float("gains.joint1.d")
    with pytest.raises(ControlError, match=re.escape("parameter 'constraints.goal_time' must be true or false")):
        p.bool("constraints.goal_time")


def test_defaults_record_what_was_not_set_with_its_ros_type():
    p = Params("jtc", {"joints": ["a", "b"], "gains": {"a": {"p": 3.0}}})
    assert p.str_list("joints") == ["a", "b"]
    assert p.float("gains.a.p", 1.0) == 3.0  # set: not a default
    assert p.float("gains.a.i", 0) == 0.0
    assert p.int("update_rate", 0) == 0
    assert p.bool("allow_partial_joints_goal", False) is False
    assert p.str("interpolation_method", "splines") == "splines"
    assert p.float_list("limits", [1, 2]) == [1.0, 2.0]
    assert p.str_list("state_interfaces", []) == []
    assert p.raw("anything", None) is None  # no default value: nothing to declare
    p.float("gains.a.i", 7.0)  # read again with another default: the first one is what the controller used
    assert p.defaults == {
        "gains.a.i": (0.0, "double"), "update_rate": (0, "integer"), "allow_partial_joints_goal": (False, "bool"),
        "interpolation_method": ("splines", "string"), "limits": ([1.0, 2.0], "double_array"),
        "state_interfaces": ([], "string_array")}
    assert isinstance(p.defaults["gains.a.i"][0], float)  # an int default still declares a double parameter
