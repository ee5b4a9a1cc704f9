"""ReachEnv: move an arm's end effector to a random reachable target (any arm URDF).

Observation (float32): ``[q (n), qd (n), end-effector position (3), target position (3)]`` for the n actuated
joints on the chain root -> end effector; positions in the world frame.
Action: the n joints' torques (``action_type="torque"``, plain physics: the policy has to carry gravity
itself) or velocities (``"velocity"``, tracked by the engine's velocity servos), as fractions of the URDF
effort / velocity limits in [-1, 1] (``normalize_actions=True``, what RL algorithms expect) or in N m, N, rad/s,
m/s within those limits (``normalize_actions=False``). Other actuated joints (e.g. fingers) hold their initial
positions.
Reward: minus the end-effector distance to the target; the episode terminates when it is below
``success_distance`` (``info["is_success"]``). Registered as ``robot_core/Reach-v0`` (200 steps of 20 ms).
Targets are the end-effector positions of uniformly sampled joint configurations, so every target is reachable.

Speed: a ``step()`` runs its ``frame_skip`` physics steps in one ``mj_step(m, d, nstep)`` call. For that no servo
may need Python between physics steps: the engine's velocity limiter of effort-commanded joints (a Python
update per step) is replaced in torque mode by the same brake made of MuJoCo actuators
(:mod:`robot_core.physics.velocity_limiter`; ``engine_options={"enforce_velocity_limits": False}`` drops it);
the velocity servos and the fingers' position hold already run inside MuJoCo.

The end effector's position comes from a ``framepos`` sensor on a site at its link frame, and the observation,
reward and success are computed by :meth:`ReachEnv.evaluate` on batches of state arrays (one row here): the
batched path (:mod:`robot_core.rl.batched_reach`) runs the same function on the rows of its ``mujoco.batch`` states.
"""

from __future__ import annotations

import copy
import math
import os
from pathlib import Path
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np

from robot_core.model import load_robot
from robot_core.model.robot_model import RobotModel
from robot_core.physics.actuation import joint_inertia
from robot_core.physics.mjcf_spec import link_frames
from robot_core.physics.velocity_limiter import add_velocity_limiters, limiter_gains, set_velocity_limits
from robot_core.rl.robot_env import RobotEnv, camera_fields

ACTION_TYPES = ("torque", "velocity")
# Everything mj_step reads: physics, controls, applied forces, the target marker (mocap), the solver's warm start.
PICKLED_STATE = mujoco.mjtState.mjSTATE_INTEGRATION
DEFAULT_EFFORT = 10.0
DEFAULT_VELOCITY = 2.0
# Site and framepos sensor at the end effector's link frame (what the observation reads).
END_EFFECTOR_SENSOR = "reach_end_effector"


def default_robot_path() -> Path:
    """urdf/rc_arm.urdf of the source tree, else of the installed robot_core share directory."""
    here = Path(__file__).resolve().parents[2] / "urdf" / "rc_arm.urdf"
    if here.is_file():
        return here
    from robot_core.model.package_paths import find_package

    share = find_package("robot_core")
    if share and (Path(share) / "urdf" / "rc_arm.urdf").is_file():
        return Path(share) / "urdf" / "rc_arm.urdf"
    raise FileNotFoundError("cannot find rc_arm.urdf (neither in the source tree nor in the robot_core share dir)")


def end_effector_frame(robot: RobotModel, spec: mujoco.MjSpec, link: str) -> tuple[mujoco.MjsBody, np.ndarray]:
    """The body of ``spec`` carrying ``link`` and the link frame in that body's frame: for a robot simulated from
    its own MJCF the file's body, else the builder's (a body per link, named after it)."""
    if robot.mjcf is not None:
        body_name, offset = link_frames(robot).get(link, (link, np.eye(4)))
        body = spec.body(body_name)
        if body is not None:
            return body, offset
    body = spec.body(link)
    if body is None:
        raise ValueError(f"end_effector '{link}' of robot '{robot.name}' has no body in the simulation")
    return body, np.eye(4)


def default_end_effector(robot: RobotModel) -> str:
    """The leaf link at the end of the most revolute joints; among equals a massless frame (a TCP) first."""
    best: tuple[int, int, int] | None = None
    choice = ""
    root = robot.root_link
    for order, leaf in enumerate(robot.leaf_links()):
        joints = robot.chain(root, leaf)
        turns = sum(1 for j in joints if j.is_actuated and j.type in ("revolute", "continuous"))
        massless = robot.links[leaf].inertial is None or robot.links[leaf].inertial.mass <= 0
        key = (turns, int(massless), -order)
        if best is None or key > best:
            best, choice = key, leaf
    return choice


class ReachEnv(RobotEnv):
    """Reach task; see the module docstring."""

    def __init__(
        self,
        robot: RobotModel | str | os.PathLike | None = None,
        *,
        end_effector: str | None = None,
        action_type: str = "torque",
        render_mode: str | None = None,
        timestep: float = 0.001,
        frame_skip: int = 20,
        normalize_actions: bool = True,
        success_distance: float = 0.02,
        start_noise: float = 0.1,
        min_target_height: float = 0.05,
        width: int = 320,
        height: int = 240,
        package_dirs: list[str] | None = None,
        engine_options: dict[str, Any] | None = None,
    ):
        if action_type not in ACTION_TYPES:
            raise ValueError(f"action_type must be one of {ACTION_TYPES}, got {action_type!r}")
        if not isinstance(robot, RobotModel):
            robot = load_robot(robot if robot is not None else default_robot_path(), package_dirs)
        # What a copy is rebuilt from (pickling: the engine's MjSpec does not pickle, see __getstate__).
        self._init_kwargs: dict[str, Any] = dict(
            robot=robot, end_effector=end_effector, action_type=action_type, render_mode=render_mode,
            timestep=timestep, frame_skip=frame_skip, normalize_actions=normalize_actions,
            success_distance=success_distance, start_noise=start_noise, min_target_height=min_target_height,
            width=width, height=height, engine_options=engine_options)
        self.end_effector = end_effector or default_end_effector(robot)
        if self.end_effector not in robot.links:
            raise ValueError(f"end_effector '{self.end_effector}' is not a link of robot '{robot.name}'")
        self.action_type = action_type
        self.success_distance = float(success_distance)
        self.start_noise = float(start_noise)
        self.min_target_height = float(min_target_height)
        chain = robot.chain(robot.root_link, self.end_effector)
        self.joint_names = [j.name for j in chain if j.is_actuated]
        if not self.joint_names:
            raise ValueError(f"no actuated joint between '{robot.root_link}' and '{self.end_effector}'")
        # The engine's per-step velocity limiter becomes MuJoCo actuators (module docstring): torque mode only,
        # the servo modes have no limiter to replace.
        options = dict(engine_options or {})
        self.velocity_limiter = action_type == "torque" and bool(options.pop("enforce_velocity_limits", True))
        options["enforce_velocity_limits"] = False
        super().__init__(robot, timestep=timestep, frame_skip=frame_skip, render_mode=render_mode, width=width,
                         height=height, engine_options=options)
        eng = self.engine
        self._idx = np.array([eng.joint_names.index(n) for n in self.joint_names])
        limits = {lim.joint: lim for lim in eng.limits}
        self._lower = np.array([limits[n].lower if math.isfinite(limits[n].lower) else -math.pi
                                for n in self.joint_names])
        self._upper = np.array([limits[n].upper if math.isfinite(limits[n].upper) else math.pi
                                for n in self.joint_names])
        if action_type == "torque":
            bound = np.array([limits[n].effort if math.isfinite(limits[n].effort) else DEFAULT_EFFORT
                              for n in self.joint_names])
        else:
            bound = np.array([limits[n].velocity if math.isfinite(limits[n].velocity) else DEFAULT_VELOCITY
                              for n in self.joint_names])
        self.normalize_actions = bool(normalize_actions)
        self.action_scale = bound if self.normalize_actions else np.ones_like(bound)
        high = np.ones_like(bound) if self.normalize_actions else bound
        self.action_space = gym.spaces.Box(-high.astype(np.float32), high.astype(np.float32), dtype=np.float32)
        n = len(self.joint_names)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(2 * n + 6,), dtype=np.float32)
        self._ee = eng.built.links[self.end_effector]
        self._ee_body = self._ee.body_id
        self._ee_offset = None if self._ee.offset_is_identity else self._ee.offset[:3, 3].copy()
        m = eng.model
        self._qadr = np.array([m.jnt_qposadr[m.joint(n).id] for n in self.joint_names])
        self._dofs = np.array([m.jnt_dofadr[m.joint(n).id] for n in self.joint_names])
        # evaluate's column selections: a slice where the joints' columns are consecutive (a serial arm's are),
        # which numpy takes as a view, 1-2 µs a step faster than gathering by index
        self._qpos_columns, self._qvel_columns = as_columns(self._qadr), as_columns(self._dofs)
        self._command_idx = eng.command_index(self.joint_names)
        # The engine's limits on the controlled joints' commands (effort in torque mode, velocity in velocity
        # mode), as batch_controls clamps with them: read once, not gathered by index every step.
        limit = (eng.actuation.effort_limit if action_type == "torque" else eng.actuation.velocity_limit)[
            self._command_idx]
        self._command_limits = (-limit, limit.copy())
        self._target_mocap = int(m.body_mocapid[m.body("reach_target").id])
        sensor = m.sensor(END_EFFECTOR_SENSOR)
        adr = int(m.sensor_adr[sensor.id])
        self._ee_sensor = slice(adr, adr + 3)
        site = m.site(END_EFFECTOR_SENSOR).id
        if int(m.site_bodyid[site]) != self._ee_body or not np.allclose(
                m.site_pos[site], np.zeros(3) if self._ee_offset is None else self._ee_offset, atol=1e-12):
            raise ValueError(f"end_effector '{self.end_effector}' of robot '{robot.name}': the sensor site landed "
                             f"on body '{m.body(int(m.site_bodyid[site])).name}', not on the link's frame")
        self._fk_data = mujoco.MjData(m)
        if self.velocity_limiter:
            self._fk_data.qpos[:] = eng.data.qpos  # the engine's initial pose, where it tunes its own gains
            inertia = joint_inertia(m, self._fk_data, self._dofs)
            set_velocity_limits(m, self.joint_names, [limits[n].velocity for n in self.joint_names],
                                limiter_gains(m, inertia))
        self.target = np.zeros(3)
        self._start: dict[str, float] | None = None  # the episode's start positions
        self._command: np.ndarray | None = None  # the last action, in joint units
        self._aim_camera()

    # ------------------------------------------------------------------ RobotEnv hooks
    def _build_scene(self, spec: mujoco.MjSpec) -> None:
        super()._build_scene(spec)
        if self.velocity_limiter:
            add_velocity_limiters(spec, self.joint_names)
        body, offset = end_effector_frame(self.robot, spec, self.end_effector)
        body.add_site(name=END_EFFECTOR_SENSOR, pos=offset[:3, 3], group=5)
        spec.add_sensor(name=END_EFFECTOR_SENSOR, type=mujoco.mjtSensor.mjSENS_FRAMEPOS,
                        objtype=mujoco.mjtObj.mjOBJ_SITE, objname=END_EFFECTOR_SENSOR)
        marker = spec.worldbody.add_body(name="reach_target", mocap=True)
        marker.add_geom(name="reach_target", type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.025, 0, 0],
                        rgba=[0.9, 0.1, 0.1, 0.8], contype=0, conaffinity=0, group=2)

    def _reset_task(self, rng: np.random.Generator) -> None:
        eng = self.engine
        home = eng.positions()[self._idx]
        noise = rng.uniform(-self.start_noise, self.start_noise, size=home.size)
        start = np.clip(home + noise, self._lower, self._upper)
        self._start = dict(zip(self.joint_names, start.tolist(), strict=True))
        self._command = None
        eng.reset(self._start)
        self.target = self._sample_target(rng)
        eng.data.mocap_pos[self._target_mocap] = self.target

    def _set_action(self, action: np.ndarray) -> None:
        a = np.clip(np.asarray(action, dtype=float).reshape(-1), self.action_space.low, self.action_space.high)
        a *= self.action_scale
        self._command = a
        self._apply_command(a)

    def _apply_command(self, a: np.ndarray) -> None:
        if self.action_type == "torque":
            self.engine.command_at(self._command_idx, self.joint_names, efforts=a)
        else:
            self.engine.command_at(self._command_idx, self.joint_names, velocities=a)

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict[str, Any]:
        """Constructor arguments plus the episode's state: the engine (its MjSpec) is rebuilt, not pickled."""
        m, d = self.engine.model, self.engine.data
        physics = np.empty(mujoco.mj_stateSize(m, PICKLED_STATE))
        mujoco.mj_getState(m, d, physics, PICKLED_STATE)
        return {"kwargs": self._init_kwargs, "np_random": self._np_random, "np_random_seed": self._np_random_seed,
                "start": self._start, "command": self._command, "target": self.target.copy(),
                "physics": physics, "camera": camera_fields(self.camera), "last": self._last}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Rebuild, then put the servos (episode start, last command) and the physics state back: a copy steps
        on exactly like the original."""
        self.__init__(**state["kwargs"])
        self._np_random, self._np_random_seed = state["np_random"], state["np_random_seed"]
        self._start, self._command = state["start"], state["command"]
        if self._start is not None:
            self.engine.reset(self._start)
        if self._command is not None:
            self._apply_command(self._command)
        self.target = state["target"]
        self._last = state["last"]
        m, d = self.engine.model, self.engine.data
        mujoco.mj_setState(m, d, state["physics"], PICKLED_STATE)
        mujoco.mj_forward(m, d)
        for name, value in state["camera"].items():
            setattr(self.camera, name, value)

    def _observe(self) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        d = self.engine.data
        obs, reward, success, distance = self.evaluate(d.qpos[None], d.qvel[None], d.sensordata[None],
                                                        self.target[None])
        ok = bool(success[0])
        return obs[0], float(reward[0]), ok, False, {"distance": float(distance[0]), "is_success": ok}

    # ------------------------------------------------------------------ the task on batches (also batched_reach)
    def evaluate(self, qpos: np.ndarray, qvel: np.ndarray, sensordata: np.ndarray, targets: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Batch of states (rows of ``qpos``, ``qvel``, ``sensordata``, ``targets``) -> observations (float32),
        rewards, success (= terminated) and distances. The single env passes a batch of one, the batched path
        N rows: one function, so the two cannot drift apart."""
        n = self._qadr.size
        ee = sensordata[:, self._ee_sensor]
        obs = np.empty((qpos.shape[0], 2 * n + 6), dtype=np.float32)  # fresh: callers keep observations
        obs[:, :n] = qpos[:, self._qpos_columns]
        obs[:, n:2 * n] = qvel[:, self._qvel_columns]
        obs[:, 2 * n:2 * n + 3] = ee
        obs[:, 2 * n + 3:] = targets
        e = ee - targets
        distance = np.sqrt(np.add.reduce(e * e, axis=1))  # (ndarray.sum's own reduction, without its wrapper)
        return obs, -distance, distance < self.success_distance, distance

    def batch_controls(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Batch of actions ``(N, n)`` -> the controlled joints' ``ctrl`` ``(N, n)`` and, in velocity mode, their
        actuators' constant bias (the engine's loss feed-forward, ``biasprm[:, 0]``), each as the engine's
        actuation writes them for one env in :meth:`step` (clip, scale, effort or velocity limit)."""
        # np.clip's bits (min of max), without np.clip's Python wrapper: ~3 µs a step
        a = np.minimum(np.maximum(actions, self.action_space.low), self.action_space.high) * self.action_scale
        low, high = self._command_limits
        if self.action_type == "torque":
            return np.minimum(np.maximum(a, low), high), None
        act = self.engine.actuation
        idx = self._command_idx
        v = np.minimum(np.maximum(a, low), high)
        losses = act.damping[idx] * v + act.frictionloss[idx] * np.sign(v) + 0.0  # + the (zero) effort feed-forward
        return v, losses * (1.0 / act.gear[idx])

    def episode_model(self) -> tuple[mujoco.MjModel, np.ndarray]:
        """A copy of the model as it steps during an episode, and the ``ctrl`` row of a zero action.

        After a reset every joint holds its pose in position mode; the first action switches the controlled
        joints' actuators to torque or velocity mode (gains, bias and the gravity compensation of the links they
        carry are model parameters), the other joints keep holding their initial positions. From then on an
        episode changes only ``ctrl`` (and, in velocity mode, the controlled actuators' constant bias:
        :meth:`batch_controls`). Leaves this env at the start of an episode, its first (zero) action applied."""
        self.start_episode(np.random.default_rng(0))
        self._set_action(np.zeros(self.action_space.shape))
        return copy.copy(self.engine.model), self.engine.data.ctrl.copy()

    @property
    def actuator_ids(self) -> np.ndarray:
        """MuJoCo actuator ids of the controlled joints (the columns :meth:`batch_controls` fills)."""
        return np.asarray(self.engine.actuation.act_ids[self._command_idx])

    # ------------------------------------------------------------------ the hand-written controller
    def heuristic_action(self, observation: np.ndarray) -> np.ndarray:
        """Operational-space PD towards the target on the env's current state: torques J^T (kp e - kd v) plus
        the gravity and Coriolis forces (``qfrc_bias``); velocities J^+ kp e (damped least squares)."""
        m, d = self.engine.model, self.engine.data
        dofs = self._dofs
        jacp = np.zeros((3, m.nv))
        ee = self.end_effector_position()
        mujoco.mj_jac(m, d, jacp, None, ee, self._ee.body_id)
        jac = jacp[:, dofs]
        error = self.target - ee
        if self.action_type == "torque":
            command = jac.T @ (300.0 * error - 20.0 * (jac @ d.qvel[dofs])) + d.qfrc_bias[dofs] - 1.0 * d.qvel[dofs]
        else:
            command = jac.T @ np.linalg.solve(jac @ jac.T + 1e-3 * np.eye(3), 4.0 * error)
        action = np.clip(command / self.action_scale, self.action_space.low, self.action_space.high)
        return action.astype(np.float32)

    # ------------------------------------------------------------------ helpers
    def end_effector_position(self) -> np.ndarray:
        """Where the end effector is (world frame), as the observation reports it (its framepos sensor)."""
        return self.engine.data.sensordata[self._ee_sensor].copy()

    def _sample_target(self, rng: np.random.Generator, attempts: int = 50) -> np.ndarray:
        """End-effector position of a random joint configuration (above ``min_target_height``)."""
        eng = self.engine
        d = self._fk_data
        qadr = eng.built.qpos_indices(self.joint_names)
        lf = self._ee
        pos = np.zeros(3)
        for _ in range(attempts):
            d.qpos[:] = eng.data.qpos
            d.qpos[qadr] = rng.uniform(self._lower, self._upper)
            mujoco.mj_kinematics(eng.model, d)
            pos = d.xpos[lf.body_id] + d.xmat[lf.body_id].reshape(3, 3) @ lf.offset[:3, 3]
            if pos[2] >= self.min_target_height:
                break
        return np.array(pos)

    def _aim_camera(self) -> None:
        """A free camera looking at the arm from the front-left, far enough to see its whole reach."""
        eng = self.engine
        base = eng.link_pose(self.robot.root_link)[:3, 3]
        reach = sum(float(np.linalg.norm(j.origin.xyz))
                    for j in self.robot.chain(self.robot.root_link, self.end_effector))
        reach = max(reach, 0.3)
        self.camera.lookat[:] = base + np.array([0.0, 0.0, 0.35 * reach])
        self.camera.distance = 1.8 * reach
        self.camera.azimuth = 135.0
        self.camera.elevation = -20.0


def as_columns(index: np.ndarray) -> slice | np.ndarray:
    """``index`` as a slice when its entries are consecutive and increasing, else the index array itself."""
    if index.size and np.array_equal(index, np.arange(index[0], index[0] + index.size)):
        return slice(int(index[0]), int(index[0]) + index.size)
    return index
