"""Kinematics and dynamics on a RobotModel (FK, Jacobian, IK, inverse dynamics), computed with MuJoCo."""

from robot_core.kinematics.chain import SerialKinematicChain
from robot_core.kinematics.ik import IKResult, IKStatus
from robot_core.kinematics.trajectory_dynamics import (
    AdaptiveCommand,
    Move,
    MoveOutcome,
    Trajectory,
    TrajectoryDynamics,
    UnreachableTargetError,
)
from robot_core.kinematics.tree import TreeKinematics

__all__ = ["AdaptiveCommand", "IKResult", "IKStatus", "Move", "MoveOutcome", "SerialKinematicChain", "Trajectory",
           "TrajectoryDynamics", "TreeKinematics", "UnreachableTargetError"]
