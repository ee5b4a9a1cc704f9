"""Gymnasium environments over robot_core's physics engine (no ROS needed).

Importing this package registers ``robot_core/Reach-v0``::

    import gymnasium as gym
    import robot_core.rl  # noqa: F401  (registers the ids)
    env = gym.make("robot_core/Reach-v0", action_type="velocity", render_mode="rgb_array")

or, without the import, ``gym.make("robot_core.rl:robot_core/Reach-v0")`` (gymnasium imports the module first).
"""

import os
import sys

# MuJoCo picks its OpenGL backend when first imported: default to headless EGL if nobody chose one yet.
if "mujoco" not in sys.modules:
    os.environ.setdefault("MUJOCO_GL", "egl")

from gymnasium.envs.registration import register, registry

from robot_core.rl.reach_env import ReachEnv
from robot_core.rl.robot_env import RenderUnavailableError, RobotEnv

REACH_ID = "robot_core/Reach-v0"

if REACH_ID not in registry:
    register(id=REACH_ID, entry_point="robot_core.rl.reach_env:ReachEnv", max_episode_steps=200)

__all__ = ["REACH_ID", "ReachEnv", "RenderUnavailableError", "RobotEnv"]
