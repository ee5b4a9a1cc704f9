"""CartPoleEnv: push a cart along a rail so that the pole hinged on it stays upright (``robot_core/CartPole-v0``).

The classic control task (Barto, Sutton & Anderson, 1983) on MuJoCo physics: cart 1 kg, pole 0.1 kg and 1 m
long (its centre of mass 0.5 m above the hinge), no friction, no contacts.
Action (float32, 1): the horizontal force on the cart as a fraction of ``max_force`` (10 N) in [-1, 1].
Observation: ``observation="state"`` (float32, 4): cart position (m), pole angle (rad, 0 = upright), cart
velocity, pole angular velocity; or ``observation="visual"``: an RGB image (uint8, ``image_height`` x
``image_width`` x 3, 64 x 96 by default) from a fixed camera in front of the rail.
Reward: 1 for every step the pole is up. The episode terminates when the pole leans more than 12 degrees
(``angle_limit``) or the cart leaves +-2.4 m (``position_limit``); ``info["is_success"]`` holds while neither
happened. Registered with 500 steps of 20 ms (``timestep`` 1 ms x ``frame_skip`` 20).
Start: all four state values uniform in +-0.05.
"""

from __future__ import annotations

import math

import gymnasium as gym
import mujoco
import numpy as np

from robot_core.rl.task_env import TaskEnv

OBSERVATIONS = ("state", "visual")
CAMERA = "rail_camera"


class CartPoleEnv(TaskEnv):
    """Cart-pole task; see the module docstring."""

    def __init__(self, *, observation: str = "state", render_mode: str | None = None, timestep: float = 0.001,
                 frame_skip: int = 20, max_force: float = 10.0, angle_limit: float = math.radians(12.0),
                 position_limit: float = 2.4, start_noise: float = 0.05, image_width: int = 96,
                 image_height: int = 64, width: int = 320, height: int = 240):
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation must be one of {OBSERVATIONS}, got {observation!r}")
        if max_force <= 0:
            raise ValueError(f"max_force must be > 0, got {max_force}")
        self.observation = observation
        self.max_force = float(max_force)
        self.angle_limit = float(angle_limit)
        self.position_limit = float(position_limit)
        self.start_noise = float(start_noise)
        self.image_width, self.image_height = int(image_width), int(image_height)
        super().__init__(timestep=timestep, frame_skip=frame_skip, render_mode=render_mode, width=width,
                         height=height)
        self.action_space = gym.spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
        if observation == "state":
            # Unbounded: a pole stepped on after the episode ended may swing round and the cart run off.
            self.observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(4,), dtype=np.float32)
        else:
            self.observation_space = gym.spaces.Box(0, 255, shape=(self.image_height, self.image_width, 3),
                                                    dtype=np.uint8)
        self.camera.lookat[:] = [0.0, 0.0, 0.6]
        self.camera.distance, self.camera.azimuth, self.camera.elevation = 4.5, 90.0, -10.0
        self._gain: np.ndarray | None = None
        self._limits = np.array([self.position_limit, self.angle_limit])  # |qpos| bounds: slider, hinge
        self._ones: dict[int, np.ndarray] = {}  # the reward of every step, by batch size

    # ------------------------------------------------------------------ the task
    def build_spec(self) -> mujoco.MjSpec:
        spec = mujoco.MjSpec()
        spec.modelname = "cartpole"
        spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
        # Images are observations, rendered every step: no shadow map and no multisampling (on software OpenGL
        # the 4096-pixel shadow map alone costs ~100x a 64 x 96 frame).
        spec.visual.quality.shadowsize = 0
        spec.visual.quality.offsamples = 0
        spec.visual.headlight.ambient = [0.4, 0.4, 0.4]
        world = spec.worldbody
        world.add_light(name="light", pos=[0, -2, 4], dir=[0, 0.4, -1], diffuse=[0.8, 0.8, 0.8])
        world.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[4, 2, 0.05], pos=[0, 0, -0.1],
                       rgba=[0.85, 0.87, 0.9, 1])
        world.add_geom(name="rail", type=mujoco.mjtGeom.mjGEOM_BOX, size=[self.position_limit + 0.2, 0.02, 0.02],
                       pos=[0, 0, -0.05], rgba=[0.3, 0.3, 0.3, 1])
        cart = world.add_body(name="cart")
        cart.add_joint(name="slider", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[1, 0, 0])
        cart.add_geom(name="cart", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.2, 0.12, 0.05], mass=1.0,
                      rgba=[0.15, 0.35, 0.8, 1])
        pole = cart.add_body(name="pole")
        pole.add_joint(name="hinge", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 1, 0])
        pole.add_geom(name="pole", type=mujoco.mjtGeom.mjGEOM_CAPSULE, fromto=[0, 0, 0, 0, 0, 1.0], size=[0.03, 0, 0],
                      mass=0.1, rgba=[0.95, 0.45, 0.1, 1])
        spec.add_actuator(name="push", target="slider", trntype=mujoco.mjtTrn.mjTRN_JOINT,
                          ctrlrange=[-self.max_force, self.max_force], ctrllimited=True)
        spec.visual.global_.offwidth = max(int(spec.visual.global_.offwidth), self.image_width)
        spec.visual.global_.offheight = max(int(spec.visual.global_.offheight), self.image_height)
        world.add_camera(name=CAMERA, pos=[0, -4.0, 0.6], xyaxes=[1, 0, 0, 0, 0, 1], fovy=47.0)
        return spec

    def reset_state(self, rng: np.random.Generator, qpos: np.ndarray, qvel: np.ndarray) -> None:
        # One draw of four: the same values as two draws of two (the generator hands out doubles in order), at
        # half the cost of a generator call, which the batched path pays once per finished env.
        draw = rng.uniform(-self.start_noise, self.start_noise, size=4)
        qpos[:] = draw[:2]
        qvel[:] = draw[2:]

    def controls(self, actions: np.ndarray) -> np.ndarray:
        return actions[:, :1] * self.max_force  # MuJoCo clamps it to the actuator's ctrlrange, +-max_force

    def evaluate(self, qpos: np.ndarray, qvel: np.ndarray, sensordata: np.ndarray, start: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        # Few numpy calls on the whole batch: each costs ~0.5 µs whatever N, which a batch of 8 cart-poles
        # (30 µs of physics each, on two threads) feels.
        n = len(qpos)
        obs = np.concatenate((qpos, qvel), axis=1, dtype=np.float32)
        out = np.abs(qpos) > self._limits  # (x beyond the rail's end, theta beyond the angle limit)
        fallen = out[:, 0] | out[:, 1]
        ones = self._ones.get(n)
        if ones is None:
            ones = self._ones[n] = np.ones(n)
        return obs, ones.copy(), fallen, ~fallen  # (a copy of a made array: a quarter of np.ones' cost)

    @property
    def image_observation(self) -> bool:
        return self.observation == "visual"

    def observe_image(self, data: mujoco.MjData) -> np.ndarray:
        return self._render(CAMERA, self.image_height, self.image_width, data=data)

    # ------------------------------------------------------------------ the hand-written controller
    def heuristic_action(self, observation: np.ndarray) -> np.ndarray:
        """LQR state feedback on the linearised model (needs the state; on images it reads the true state)."""
        if self._gain is None:
            self._gain = self._lqr_gain()
        state = np.asarray(observation, dtype=float)
        if state.shape != (4,):
            d = self.data
            state = np.array([d.qpos[0], d.qpos[1], d.qvel[0], d.qvel[1]])
        force = -float(self._gain @ state)
        return np.array([np.clip(force / self.max_force, -1.0, 1.0)], dtype=np.float32)

    def _lqr_gain(self) -> np.ndarray:
        """Discrete LQR gain (force per [x, theta, xd, thetad]) of one env step, linearised at rest upright."""
        m = self.model
        d = mujoco.MjData(m)
        mujoco.mj_forward(m, d)
        nv = m.nv
        a_mat = np.zeros((2 * nv, 2 * nv))
        b_mat = np.zeros((2 * nv, m.nu))
        mujoco.mjd_transitionFD(m, d, 1e-6, True, a_mat, b_mat, None, None)
        # One control step holds the force for frame_skip physics steps.
        a_step = np.linalg.matrix_power(a_mat, self.frame_skip)
        b_step = sum(np.linalg.matrix_power(a_mat, k) for k in range(self.frame_skip)) @ b_mat
        q = np.diag([1.0, 10.0, 0.1, 0.1])
        r = np.array([[0.01]])
        p = q.copy()
        for _ in range(2000):
            k = np.linalg.solve(r + b_step.T @ p @ b_step, b_step.T @ p @ a_step)
            p = q + a_step.T @ p @ (a_step - b_step @ k)
        return k[0]
