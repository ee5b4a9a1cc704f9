"""Gymnasium environments over robot_core's physics (no ROS needed).

Importing this package registers ``robot_core/Reach-v0``, ``robot_core/CartPole-v0`` and
``robot_core/PushingRobot-v0``::

    import gymnasium as gym
    import robot_core.rl  # noqa: F401  (registers the ids)
    env = gym.make("robot_core/CartPole-v0", observation="visual")
    batch = gym.make_vec("robot_core/CartPole-v0", num_envs=32, vectorization_mode="vector_entry_point")

or, without the import, ``gym.make("robot_core.rl:robot_core/Reach-v0")`` (gymnasium imports the module first).
Each id also has a batched vector entry point (:mod:`robot_core.rl.batched`, :mod:`robot_core.rl.batched_reach`).
"""

import os
import sys
from collections.abc import Callable
from functools import partial

# MuJoCo picks its OpenGL backend when first imported: default to headless EGL if nobody chose one yet.
if "mujoco" not in sys.modules:
    os.environ.setdefault("MUJOCO_GL", "egl")

from gymnasium.envs.registration import register, registry
from gymnasium.vector import VectorEnv

from robot_core.rl.batched import BatchedEnv
from robot_core.rl.batched_reach import BatchedReachEnv
from robot_core.rl.cartpole_env import CartPoleEnv
from robot_core.rl.pushing_robot_env import PushingRobotEnv
from robot_core.rl.reach_env import ReachEnv
from robot_core.rl.robot_env import RenderUnavailableError, RobotEnv
from robot_core.rl.task_env import TaskEnv

REACH_ID = "robot_core/Reach-v0"
CARTPOLE_ID = "robot_core/CartPole-v0"
PUSHING_ROBOT_ID = "robot_core/PushingRobot-v0"

# id -> (entry point, max_episode_steps, batched vector entry point, one-line description for `run-env -l`)
ENVIRONMENTS: dict[str, tuple[str, int, Callable[..., VectorEnv], str]] = {
    REACH_ID: ("robot_core.rl.reach_env:ReachEnv", 200, BatchedReachEnv,
               "an arm (rc_arm by default, any URDF) moves its end effector to a random target"),
    CARTPOLE_ID: ("robot_core.rl.cartpole_env:CartPoleEnv", 500, partial(BatchedEnv, CartPoleEnv),
                  "balance a pole on a cart; observation='state' or 'visual' (RGB image)"),
    PUSHING_ROBOT_ID: ("robot_core.rl.pushing_robot_env:PushingRobotEnv", 200, partial(BatchedEnv, PushingRobotEnv),
                       "a 2-DOF torque arm finds a box in front of it and pushes it away"),
}

for _id, (_entry, _steps, _batched, _about) in ENVIRONMENTS.items():
    if _id not in registry:
        register(id=_id, entry_point=_entry, max_episode_steps=_steps, vector_entry_point=_batched)

__all__ = ["CARTPOLE_ID", "ENVIRONMENTS", "PUSHING_ROBOT_ID", "REACH_ID", "BatchedEnv", "BatchedReachEnv",
           "CartPoleEnv", "PushingRobotEnv", "ReachEnv", "RenderUnavailableError", "RobotEnv", "TaskEnv"]
