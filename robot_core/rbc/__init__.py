"""Robot Body Coupler core (no rclpy): <rbc> tags -> var table, reachers/extenders, mixing.

The ``rbc`` node is a thin adapter around :class:`robot_core.rbc.coupler.Coupler`.
"""

from robot_core.rbc.coupler import Coupler, GetVarsResult, L2Result
from robot_core.rbc.errors import RbcConfigError, RbcError, RbcGoalError, RbcParamError, RbcVarError
from robot_core.rbc.instance import GoalStatus, ParamSpec, RbcInstance, UpdateResult
from robot_core.rbc.var_table import AggregatedView, VarTable, VarView

__all__ = [
    "AggregatedView",
    "Coupler",
    "GetVarsResult",
    "GoalStatus",
    "L2Result",
    "ParamSpec",
    "RbcConfigError",
    "RbcError",
    "RbcGoalError",
    "RbcInstance",
    "RbcParamError",
    "RbcVarError",
    "UpdateResult",
    "VarTable",
    "VarView",
]
