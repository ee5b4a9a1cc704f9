"""PushingRobotEnv: a 2-DOF torque-controlled arm finds a box in front of it and pushes it away
(``robot_core/PushingRobot-v0``).

The arm turns in the horizontal plane a few centimetres above a table: base at the origin, link 1 of 0.5 m
(1 kg), link 2 of 0.45 m (0.7 kg), both joints about z with damping 0.5 N m s; the tool is the tip of link 2.
A 10 cm cube of 0.3 kg lies on the table in front of the arm (distance 0.45-0.6 m, bearing +-0.4 rad,
uniform); the arm starts folded away to the right (joint 1 near -1.4 rad, joint 2 near 0.3 rad).
Action (float32, 2): joint torques as fractions of ``max_torque`` (4 and 2 N m) in [-1, 1].
Observation (float32, 10): joint angles (2), joint speeds (2), tool position (3), tool -> box centre (3), in
the world frame (m, rad, rad/s).
Reward: the box's horizontal displacement from its start (m), every step; ``info["is_success"]`` once it is
more than ``success_distance`` (0.3 m). No termination: 200 steps of 20 ms (``timestep`` 1 ms x
``frame_skip`` 20).
"""

from __future__ import annotations

import math

import gymnasium as gym
import mujoco
import numpy as np

from robot_core.rl.task_env import TaskEnv

LINK1, LINK2 = 0.5, 0.45
BOX_HALF = 0.05
HEIGHT = 0.05


class PushingRobotEnv(TaskEnv):
    """Pushing task; see the module docstring."""

    def __init__(self, *, render_mode: str | None = None, timestep: float = 0.001, frame_skip: int = 20,
                 max_torque: tuple[float, float] = (4.0, 2.0), success_distance: float = 0.3,
                 width: int = 320, height: int = 240):
        self.max_torque = np.asarray(max_torque, dtype=float)
        if self.max_torque.shape != (2,) or np.any(self.max_torque <= 0):
            raise ValueError(f"max_torque must be two positive values, got {max_torque!r}")
        self.success_distance = float(success_distance)
        super().__init__(timestep=timestep, frame_skip=frame_skip, render_mode=render_mode, width=width,
                         height=height)
        self.action_space = gym.spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(10,), dtype=np.float32)
        self._box_qpos = int(self.model.jnt_qposadr[self.model.joint("box").id])
        self.camera.lookat[:] = [0.35, 0.0, 0.0]
        self.camera.distance, self.camera.azimuth, self.camera.elevation = 2.2, 200.0, -55.0

    # ------------------------------------------------------------------ the task
    def build_spec(self) -> mujoco.MjSpec:
        spec = mujoco.MjSpec()
        spec.modelname = "pushing_robot"
        world = spec.worldbody
        world.add_light(name="light", pos=[0, 0, 3], dir=[0, 0, -1], diffuse=[0.8, 0.8, 0.8])
        # Contact groups: the table touches the box (bit 1), the arm touches the box (bit 2), never the table.
        world.add_geom(name="table", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[2, 2, 0.05], friction=[0.4, 0.005, 1e-4],
                       contype=1, conaffinity=1, rgba=[0.8, 0.82, 0.85, 1])
        world.add_geom(name="base", type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[0.06, HEIGHT, 0], pos=[0, 0, HEIGHT],
                       contype=0, conaffinity=0, rgba=[0.3, 0.3, 0.32, 1])
        link1 = world.add_body(name="link1", pos=[0, 0, HEIGHT])
        link1.add_joint(name="joint1", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 0, 1], damping=0.5, armature=0.01)
        link1.add_geom(name="link1", type=mujoco.mjtGeom.mjGEOM_CAPSULE, fromto=[0, 0, 0, LINK1, 0, 0],
                       size=[0.03, 0, 0], mass=1.0, contype=2, conaffinity=2, rgba=[0.15, 0.35, 0.8, 1])
        link2 = link1.add_body(name="link2", pos=[LINK1, 0, 0])
        link2.add_joint(name="joint2", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 0, 1], damping=0.5, armature=0.01)
        link2.add_geom(name="link2", type=mujoco.mjtGeom.mjGEOM_CAPSULE, fromto=[0, 0, 0, LINK2, 0, 0],
                       size=[0.025, 0, 0], mass=0.7, contype=2, conaffinity=2, rgba=[0.95, 0.45, 0.1, 1])
        link2.add_site(name="tool", pos=[LINK2, 0, 0], size=[0.02, 0, 0])
        box = world.add_body(name="box", pos=[0.5, 0, BOX_HALF])
        box.add_freejoint(name="box")
        box.add_geom(name="box", type=mujoco.mjtGeom.mjGEOM_BOX, size=[BOX_HALF] * 3, mass=0.3,
                     friction=[0.4, 0.005, 1e-4], contype=3, conaffinity=3, rgba=[0.2, 0.7, 0.3, 1])
        for name, limit in zip(("joint1", "joint2"), self.max_torque, strict=True):
            spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT, ctrlrange=[-limit, limit],
                              ctrllimited=True)
        spec.add_sensor(name="tool_pos", type=mujoco.mjtSensor.mjSENS_FRAMEPOS, objtype=mujoco.mjtObj.mjOBJ_SITE,
                        objname="tool")
        spec.add_sensor(name="box_pos", type=mujoco.mjtSensor.mjSENS_FRAMEPOS, objtype=mujoco.mjtObj.mjOBJ_BODY,
                        objname="box")
        return spec

    def reset_state(self, rng: np.random.Generator, qpos: np.ndarray, qvel: np.ndarray) -> None:
        qpos[0] = -1.4 + rng.uniform(-0.05, 0.05)
        qpos[1] = 0.3 + rng.uniform(-0.05, 0.05)
        distance = rng.uniform(0.45, 0.6)
        bearing = rng.uniform(-0.4, 0.4)
        yaw = rng.uniform(-math.pi, math.pi)
        qpos[2:5] = [distance * math.cos(bearing), distance * math.sin(bearing), BOX_HALF]
        qpos[5:9] = [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]

    def start_size(self) -> int:
        return 2

    def record_start(self, qpos: np.ndarray, sensordata: np.ndarray) -> np.ndarray:
        return sensordata[:, 3:5].copy()

    def controls(self, actions: np.ndarray) -> np.ndarray:
        return actions[:, :2] * self.max_torque  # MuJoCo clamps it to the actuators' ctrlrange, +-max_torque

    def evaluate(self, qpos: np.ndarray, qvel: np.ndarray, sensordata: np.ndarray, start: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        n = len(qpos)
        tool, box = sensordata[:, 0:3], sensordata[:, 3:6]
        obs = np.empty((n, 10), dtype=np.float32)
        obs[:, 0:2] = qpos[:, :2]
        obs[:, 2:4] = qvel[:, :2]
        obs[:, 4:7] = tool
        obs[:, 7:10] = box - tool
        moved = np.hypot(box[:, 0] - start[:, 0], box[:, 1] - start[:, 1])
        return obs, moved, np.zeros(n, dtype=bool), moved > self.success_distance

    # ------------------------------------------------------------------ the hand-written controller
    def heuristic_action(self, observation: np.ndarray) -> np.ndarray:
        """Sweep: keep the arm stretched and swing joint 1 through the box's bearing and 1.3 rad past it, so
        link 2 meets the box side-on and carries it along its arc (joint PD, torques clipped)."""
        obs = np.asarray(observation, dtype=float)
        q, qd, tool, to_box = obs[0:2], obs[2:4], obs[4:7], obs[7:10]
        box = tool + to_box
        bearing = math.atan2(box[1], box[0])
        target = np.array([bearing + 1.3, 0.0])
        torque = np.array([8.0, 6.0]) * (target - q) - np.array([1.5, 0.8]) * qd
        return np.clip(torque / self.max_torque, -1.0, 1.0).astype(np.float32)
