"""The physics engine behind the simulator node and the gymnasium environments: a MuJoCo model of one robot.

Designed for a ROS node that steps at 1 kHz: joint state read-out and command application are numpy
gathers/scatters over precomputed index arrays, the servos run inside MuJoCo's step (see
:mod:`robot_core.physics.actuation`), and while they just hold or track a streamed trajectory there is no
Python work between steps at all (``step(n)`` runs them back to back in C). Per-step Python work -- a few
vector operations -- happens only while a position reference travels towards a distant target, a joint is
effort-commanded (velocity guard), the base floats, or an external wrench is active.
The engine is not thread-safe: a node must serialise calls (one lock around step/commands/services).

Typical node use: ``set_commands`` from each command message (a CommandError means: drop it, say why),
``step(n)`` per tick, ``positions()``/``velocities()``/``efforts()`` for joint states, ``link_pose_array`` or
``relative_link_poses`` for /tf, and ``reset``/``set_joint_state``/``apply_wrench`` behind the services.

Joint vectors are in :attr:`PhysicsEngine.joint_names` order (every scalar joint, mimic joints included, and a
planar joint's three coordinates ``<joint>:u``, ``<joint>:v``, ``<joint>:rot``; URDF order); commands address
:attr:`PhysicsEngine.actuated_joint_names` by name (see :mod:`robot_core.physics.actuation` for what an
uncommanded joint does).

Integrators: ``implicitfast`` (default) integrates the servos' damping implicitly, which keeps stiff servos
and contacts stable at 1 kHz; it is first order, so a swinging, undamped robot slowly gains or loses energy
(a few percent over 10 s for a chaotic double pendulum). ``rk4`` conserves energy to a few parts per million
there and is the choice for energy-sensitive checks of free motion.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

from robot_core.model.robot_model import RobotModel, RobotModelError
from robot_core.physics.actuation import (
    Actuation,
    CommandMode,
    JointActuatorLimits,
    MimicCoupling,
    ServoTuning,
    acceleration_limits,
    actuated_coordinates,
    add_actuators,
    apply_gain_overrides,
    default_gains,
    idles_in_effort,
    joint_actuator_limits,
    joint_coordinates,
    joint_inertia,
)
from robot_core.physics.builder import BuiltModel, JointIndex, PreparedSpec, compile_spec, index_model, prepare_spec
from robot_core.physics.gil_step import GilHoldingStep
from robot_core.physics.mjcf_spec import mjcf_gains
from robot_core.physics.sensors import SensorReadout, add_sensors, robot_sensors
from robot_core.physics.servo_gains import description_gains
from robot_core.text import clip

INTEGRATORS = {
    "euler": mujoco.mjtIntegrator.mjINT_EULER,
    "rk4": mujoco.mjtIntegrator.mjINT_RK4,
    "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
    "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
}
MIMIC_TOLERANCE = 1e-6
RANGE_TOLERANCE = 1e-9
# A command beyond ABSURD_FACTOR x the joint's limit (ABSURD_UNLIMITED without one) is a bug or an attack, not a
# request to saturate: refused. Within it, commands are clamped to the limit. Both keep MuJoCo's controls below
# its own sanity bound (1e10), past which it zeroes *every* actuator and writes MUJOCO_LOG.TXT.
ABSURD_FACTOR = 1e6
ABSURD_UNLIMITED = 1e9
VALUES_FIRST_CALLS = 1000  # position-stream calls that test values first after one pressed beyond a limit
_FLOAT64 = np.dtype(np.float64)
# External wrenches: at most this many times the robot's weight (N, and N m for torques), at least MIN_WRENCH.
WRENCH_WEIGHT_FACTOR = 1000.0
MIN_WRENCH = 1000.0


def route_mujoco_warnings(log: Callable[[str], None] | None) -> None:
    """Send MuJoCo's warnings to ``log`` (None: MuJoCo's default again).

    The hook is process-wide; MuJoCo's default prints the warning and appends it to MUJOCO_LOG.TXT in the
    working directory, which a node must not litter. (MuJoCo's errors reach Python as exceptions already.)
    """
    mujoco.set_mju_user_warning(log)


class CommandError(ValueError):
    """A command or state request that cannot be applied; nothing of it was applied."""


class PhysicsDivergedError(RuntimeError):
    """MuJoCo found a non-finite state; the engine was reset to its initial state.

    ``time`` is the simulated time (s) at the start of the steps that diverged, ``dof`` the degree of freedom
    MuJoCo named."""

    def __init__(self, message: str, time: float = math.nan, dof: int = -1):
        super().__init__(message)
        self.time = time
        self.dof = dof


@dataclass(frozen=True)
class Contact:
    """One active contact. ``force`` is (normal, tangent1, tangent2, torsional, rolling1, rolling2) in the contact
    frame, acting on ``body2`` (from ``body1``); ``normal`` points from body1 to body2 in the world frame."""

    body1: str
    body2: str
    position: np.ndarray
    normal: np.ndarray
    force: np.ndarray
    distance: float
    frame: np.ndarray  # 3x3, rows: normal, tangent1, tangent2 (world frame)

    @property
    def force_world(self) -> np.ndarray:
        """Linear contact force on body2, world frame."""
        return self.frame.T @ self.force[:3]


@dataclass
class _Wrench:
    body: int
    force: np.ndarray
    torque: np.ndarray
    com_offset: np.ndarray  # application point minus body COM, in the body frame
    end_time: float


SceneHook = Callable[[mujoco.MjSpec], None]


class PhysicsEngine:
    """A simulated robot: build, reset, command, step, read out.

    Args:
        robot: the robot description.
        timestep: physics step in seconds.
        fixed_base: weld the root to the world (None: ``robot.fixed_base``).
        initial_positions: joint (or planar coordinate) -> position; overrides each joint's
            ``initial_position`` (default 0, clamped into the joint range). Used by :meth:`reset`.
        gains: ``{joint: {"kp": .., "kd": .., "kv": ..}}`` overriding the tuned servo gains and those the
            description gives (an MJCF robot's actuators, robot_core.physics.mjcf_spec; ros2_control blocks,
            robot_core.physics.servo_gains; the latter win), joint space.
        integrator: "implicitfast" (default; servo damping integrated implicitly), "implicit", "euler" or "rk4"
            (energy-conserving free motion; see the module docstring).
        servo_tuning: bandwidth / damping ratio of the default gains.
        gravity_compensation: servos hold against gravity without sagging (MuJoCo gravcomp; see the actuation
            module). Effort-commanded joints are never compensated.
        scene: called with the MjSpec before compiling, to add a floor, objects, cameras or lights.
        include_visuals: add visual geoms (needed for rendering; collision geoms are always added).
        disable_linked_collisions: no collisions between bodies joined by a joint (AGX ``disableLinkedBodies``).
        ignore_initial_self_contacts: link pairs that already penetrate at the initial pose never collide
            (like MoveIt's "default" collision matrix): collision meshes of real robots (Panda, PR2) overlap
            where the links do not, and such contacts would push the robot around from the first step.
            The pairs are listed in :attr:`ignored_collision_pairs`.
        enforce_velocity_limits: effort-commanded joints are braked (within their effort limit) when faster than
            their URDF velocity limit, like a drive's velocity limiter. Servo modes always respect the limit
            through their references.
        limit_timeconst: time constant (s) of the joint-limit and mimic constraints (MuJoCo ``solref``; at
            least 2 dt), set by the builder (:func:`robot_core.physics.builder.prepare_spec`). MuJoCo's default
            0.02 s lets a joint driven by its full effort sink ~0.04 rad into its limit; 0.004 s with a near-hard
            impedance keeps that below ~0.01 rad.
        initial_base_pose: floating base only: (x, y, z, qw, qx, qy, qz) of the root link after :meth:`reset`
            (default: the world origin).
        hold_gil: step without releasing Python's interpreter lock while that is safe (see
            robot_core.physics.gil_step): for a real-time loop thread that other threads must not preempt.
        max_wrench_force, max_wrench_torque: largest external force (N) / torque (N m) :meth:`apply_wrench`
            accepts (default: WRENCH_WEIGHT_FACTOR x the robot's weight, at least MIN_WRENCH).
        sensor_seed: seed of the sensors' noise (robot_core.physics.sensors), None: a fresh one.

    Commands are clamped to the joint's limits (position range, velocity and effort limits); a command more
    than ABSURD_FACTOR x beyond a limit (ABSURD_UNLIMITED where there is none) raises CommandError.
    """

    def __init__(
        self,
        robot: RobotModel,
        *,
        timestep: float = 0.001,
        fixed_base: bool | None = None,
        initial_positions: Mapping[str, float] | None = None,
        gains: Mapping[str, Mapping[str, float]] | None = None,
        integrator: str = "implicitfast",
        servo_tuning: ServoTuning | None = None,
        gravity_compensation: bool = True,
        scene: SceneHook | None = None,
        include_visuals: bool = True,
        disable_linked_collisions: bool = True,
        ignore_initial_self_contacts: bool = True,
        enforce_velocity_limits: bool = True,
        limit_timeconst: float = 0.004,
        initial_base_pose: Sequence[float] | None = None,
        hold_gil: bool = False,
        max_wrench_force: float | None = None,
        max_wrench_torque: float | None = None,
        sensor_seed: int | None = None,
    ):
        if not (math.isfinite(timestep) and timestep > 0):
            raise ValueError(f"timestep must be a positive number of seconds, got {timestep!r}")
        if integrator not in INTEGRATORS:
            raise ValueError(f"unknown integrator '{integrator}' (expected one of {', '.join(INTEGRATORS)})")
        self.robot = robot
        self._hold_gil = bool(hold_gil)
        self._gil_step: GilHoldingStep | None = None
        self._coordinates = joint_coordinates(robot)
        self.joint_names: list[str] = list(self._coordinates)
        self.actuated_joint_names: list[str] = actuated_coordinates(robot)
        self.fixed_base = robot.fixed_base if fixed_base is None else bool(fixed_base)

        prepared = prepare_spec(robot, fixed_base=self.fixed_base, timestep=timestep,
                                include_visuals=include_visuals, disable_linked_collisions=disable_linked_collisions,
                                limit_timeconst=limit_timeconst)
        self.fixed_base = prepared.fixed_base  # a root link named "world" cannot float
        spec = prepared.spec
        spec.option.integrator = INTEGRATORS[integrator]
        if scene is not None:
            scene(spec)
        # the robot's ros2_control sensors (robot_core.physics.sensors); checked before anything is compiled
        self.sensors = SensorReadout(robot_sensors(robot), seed=sensor_seed)
        add_sensors(spec, self.sensors.sensors, prepared.link_frames)
        self.limits: list[JointActuatorLimits] = joint_actuator_limits(robot, self.actuated_joint_names)
        add_actuators(spec, self.limits, robot, gravity_compensation=gravity_compensation)
        model = self._compile(spec, prepared)
        self.built: BuiltModel = index_model(robot, spec, model, fixed_base=self.fixed_base, prepared=prepared)
        self._model = model
        self._data = mujoco.MjData(model)
        self.sensors.bind(model)

        self._joint_index = {n: i for i, n in enumerate(self.joint_names)}
        self._act_index = {n: i for i, n in enumerate(self.actuated_joint_names)}
        self._qpos, self._dof = self._addresses(self.joint_names)
        self._act_qpos, self._act_dof = self._addresses(self.actuated_joint_names)
        self._idle_in_effort = np.array([idles_in_effort(robot, n) for n in self.actuated_joint_names], dtype=bool)
        self._mimics = self._mimic_table()
        self._link_names = list(robot.links)
        frames = [self.built.links[n] for n in self._link_names]
        self._link_body = np.array([f.body_id for f in frames], dtype=int)
        self._link_offsets = np.stack([f.offset for f in frames]) if frames else np.zeros((0, 4, 4))
        self._offsets_identity = all(f.offset_is_identity for f in frames)
        self._body_names = [model.body(i).name for i in range(model.nbody)]

        self._initial = self._initial_positions(initial_positions)
        self._initial_base = None
        if initial_base_pose is not None:
            self._initial_base = self._check_base_pose(initial_base_pose)
        self.ignored_collision_pairs: list[tuple[str, str]] = []
        if ignore_initial_self_contacts:
            self.ignored_collision_pairs = self._initial_self_contacts()
            if self.ignored_collision_pairs:
                for a, b in self.ignored_collision_pairs:
                    spec.add_exclude(name=f"initial_contact:{a}:{b}", bodyname1=a, bodyname2=b)
                model = self._compile(spec, prepared)
                self.built = index_model(robot, spec, model, fixed_base=self.fixed_base, prepared=prepared)
                self._model = model
                self._data = mujoco.MjData(model)
                self.sensors.bind(model)
        # Gains tuned at the initial pose.
        tuning = servo_tuning or ServoTuning()
        self._data.qpos[:] = self._initial_qpos(self._initial)
        mimics = self._mimic_coupling()
        inertia = joint_inertia(model, self._data, self._act_dof, mimics)
        kp, kd, kv = default_gains(inertia, timestep, tuning)
        self.description_gains = mjcf_gains(robot, self.actuated_joint_names)
        for joint, found in description_gains(robot, self.actuated_joint_names).items():
            self.description_gains.setdefault(joint, {}).update(found)
        apply_gain_overrides(self.description_gains, self.actuated_joint_names, kp, kd, kv)
        apply_gain_overrides(gains, self.actuated_joint_names, kp, kd, kv)
        accel = acceleration_limits(inertia, np.array([lim.effort for lim in self.limits]), tuning)
        # Velocity guard of effort-mode joints: deadbeat for explicit integrators, 10x stiffer (still stable,
        # the damping is integrated implicitly) for the implicit ones.
        implicit = integrator in ("implicit", "implicitfast")
        guard = inertia / timestep * (10.0 if implicit else 1.0) if enforce_velocity_limits else None
        self.actuation = Actuation(model, self._data, self.limits, self._act_qpos, self._act_dof, (kp, kd, kv),
                                   accel, guard, mimics, gravity_compensation=gravity_compensation,
                                   passive_dofs=self._passive_dofs())
        self._index_cache: dict[tuple[str, ...], np.ndarray] = {}
        self._pair_cache: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self._wrenches: dict[str, _Wrench] = {}
        self._wrench_bodies = np.zeros(0, dtype=int)
        self._command_bounds = self._absurd_bounds()
        self._inv_bound_sq = 1.0 / self._command_bounds["position"] ** 2
        self._stream_checks_values = self._stream_jump_test_suffices()
        self._values_first = 0  # calls left that test a position stream's values first (see command_at)
        weight = float(model.body_mass[np.unique(self._link_body)].sum() * np.linalg.norm(model.opt.gravity))
        default_wrench = max(MIN_WRENCH, WRENCH_WEIGHT_FACTOR * weight)
        self.max_wrench_force = default_wrench if max_wrench_force is None else float(max_wrench_force)
        self.max_wrench_torque = default_wrench if max_wrench_torque is None else float(max_wrench_torque)
        self._step_count = 0
        self._bad_qacc = 0
        self.reset()

    # ------------------------------------------------------------------ properties
    @property
    def model(self) -> mujoco.MjModel:
        return self._model

    @property
    def data(self) -> mujoco.MjData:
        return self._data

    @property
    def time(self) -> float:
        return float(self._data.time)

    @property
    def step_count(self) -> int:
        return self._step_count

    @property
    def timestep(self) -> float:
        return float(self._model.opt.timestep)

    @property
    def link_names(self) -> list[str]:
        return list(self._link_names)

    @property
    def initial_positions(self) -> dict[str, float]:
        return dict(zip(self.joint_names, self._initial, strict=True))

    # ------------------------------------------------------------------ life cycle
    def reset(self, positions: Mapping[str, float] | None = None) -> None:
        """Back to t = 0 at the initial positions (updated by ``positions``), at rest, holding that pose.

        Every joint returns to position mode at its reset position (an effort-only joint to zero effort, see
        :mod:`robot_core.physics.actuation`); efforts and wrenches are cleared.
        """
        q = self._initial.copy()
        if positions:
            idx, values = self._validate_state(positions, "reset")
            q[idx] = values
            self._derive_mimics(q)
        mujoco.mj_resetData(self._model, self._data)
        self._data.qpos[:] = self._initial_qpos(q)
        self.clear_wrenches()
        self.actuation.reset(q[self._joint_act_positions()], self._idle_in_effort)
        mujoco.mj_forward(self._model, self._data)
        self._step_count = 0
        self._bad_qacc_stat = self._data.warning[mujoco.mjtWarning.mjWARN_BADQACC]  # a live view
        self._bad_qacc = self._bad_qacc_stat.number

    def reset_joints(self, joints: Sequence[str], positions: Mapping[str, float] | None = None,
                     free_joints: Sequence[str] = ()) -> None:
        """Only ``joints`` (one robot of a group) back to their initial positions (updated by ``positions``), at
        rest and holding that pose; time and the other joints go on (one world has one time, see :meth:`reset`).
        ``free_joints``: that robot's free base (a floating joint), back to its initial pose at rest too.
        A name of ``positions`` outside ``joints`` is refused before anything changes."""
        wanted = list(dict.fromkeys(joints))
        outside = sorted(set(positions or {}) - set(wanted))
        if outside:
            raise CommandError(f"reset: joints {[clip(n) for n in outside[:5]]} are not among the {len(wanted)} "
                               "joints being reset")
        unknown = [n for n in wanted if n not in self._joint_index]
        if unknown:
            raise CommandError(f"reset: robot '{self.robot.name}' has no joint coordinate '{clip(unknown[0])}'")
        free = [self._floating(n, "reset") for n in dict.fromkeys(free_joints)]
        q = {n: float(self._initial[self._joint_index[n]]) for n in wanted if self._coordinates[n].mimic is None}
        q.update(positions or {})
        self._validate_state(q, "reset")  # before anything changes
        self.stop_motion_commands(wanted)  # velocity and effort commands of these joints stop
        d, qpos0 = self._data, self._model.qpos0
        for index in free:  # its initial pose: the compiled model's (the file's pose composed with the placement)
            d.qpos[index.qpos_adr:index.qpos_adr + index.nq] = qpos0[index.qpos_adr:index.qpos_adr + index.nq]
            d.qvel[index.dof_adr:index.dof_adr + index.nv] = 0.0
            d.qacc_warmstart[index.dof_adr:index.dof_adr + index.nv] = 0.0
        self.set_joint_state(q, dict.fromkeys(wanted, 0.0))

    def floating_state(self, joint: str) -> tuple[np.ndarray, np.ndarray]:
        """Ground truth of the link a floating joint carries (a free-based robot of a group): its pose
        (x, y, z, qw, qx, qy, qz) in the world and its twist (vx, vy, vz, wx, wy, wz) in its own frame, as
        :meth:`base_pose` and :meth:`base_velocity` give a floating base's."""
        child = self.robot.joints[self._floating(joint, "floating_state").name].child
        pose = self.link_pose(child)
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, np.ascontiguousarray(pose[:3, :3]).reshape(9))
        velocity = np.zeros(6)  # (angular, linear) at the body's origin, in its own frame
        mujoco.mj_objectVelocity(self._model, self._data, mujoco.mjtObj.mjOBJ_BODY,
                                 self.built.links[child].body_id, velocity, 1)
        return np.concatenate([pose[:3, 3], quat]), np.concatenate([velocity[3:], velocity[:3]])

    def _floating(self, name: str, what: str) -> JointIndex:
        joint = self.robot.joints.get(name)
        if joint is None or joint.type != "floating" or name not in self.built.joints:
            raise CommandError(f"{what}: robot '{self.robot.name}' has no floating joint '{clip(name)}'")
        return self.built.joints[name]

    def step(self, n: int = 1) -> None:
        """Advance ``n`` physics steps with the current commands."""
        m, d = self._model, self._data
        act = self.actuation
        n = int(n)
        t_start = d.time
        gil_step = None
        if self._hold_gil:
            gil_step = self._gil_step
            if gil_step is None:
                gil_step = self._gil_step = GilHoldingStep(m, d)
        k = 0
        while k < n:
            if not (act.per_step_work or self._wrenches):
                if gil_step is not None:
                    gil_step(n - k)
                elif n - k == 1:
                    mujoco.mj_step(m, d)  # (a keyword argument costs the binding ~0.3 µs: 1 kHz loops step one)
                else:
                    mujoco.mj_step(m, d, nstep=n - k)  # nothing to update between steps: all of them in C
                break
            act.before_step()
            if self._wrenches:
                self._update_wrenches()
            if gil_step is not None:
                gil_step(1)
            else:
                mujoco.mj_step(m, d)
            k += 1
        self._step_count += n
        if self._bad_qacc_stat.number != self._bad_qacc:
            dof = int(self._bad_qacc_stat.lastinfo)
            self.reset()
            raise PhysicsDivergedError(
                f"simulation of '{self.robot.name}' diverged (non-finite or huge acceleration at dof "
                f"{dof}) during the {n} step(s) from t={t_start:.6f} s; the engine was "
                "reset to its initial state", time=float(t_start), dof=dof)

    # ------------------------------------------------------------------ commands
    def set_command(
        self, name: str, position: float | None = None, velocity: float | None = None, effort: float | None = None
    ) -> None:
        """Command one joint; see :meth:`set_commands`."""
        self.set_commands(
            [name],
            None if position is None else [position],
            None if velocity is None else [velocity],
            None if effort is None else [effort],
        )

    def set_commands(
        self,
        names: Sequence[str],
        positions: Sequence[float] | np.ndarray | None = None,
        velocities: Sequence[float] | np.ndarray | None = None,
        efforts: Sequence[float] | np.ndarray | None = None,
    ) -> None:
        """Command actuated joints by name; each array is None or as long as ``names``.

        The mode follows from what is given: positions -> position servo (velocities/efforts act as
        feed-forwards); only velocities -> velocity servo (efforts feed-forward); only efforts -> effort.
        A joint keeps its last command until commanded again. Raises CommandError (a ValueError) naming the
        joint for unknown, mimic or repeated joints, wrong lengths and non-finite values; then nothing is applied.
        """
        key = tuple(names)
        idx = self._index_cache.get(key)
        if idx is None:
            idx = self._command_index(key)
        self.command_at(idx, key, positions, velocities, efforts)

    def command_index(self, names: Sequence[str]) -> np.ndarray | slice:
        """Actuator indices of ``names`` for :meth:`command_at` (raises CommandError like set_commands)."""
        return self._command_index(tuple(names))

    def command_at(
        self,
        idx: np.ndarray | slice,
        names: Sequence[str],
        positions: Sequence[float] | np.ndarray | None = None,
        velocities: Sequence[float] | np.ndarray | None = None,
        efforts: Sequence[float] | np.ndarray | None = None,
    ) -> None:
        """:meth:`set_commands` with the joints already resolved by :meth:`command_index` (a per-cycle caller
        skips the name lookup); ``names`` only serve the error messages."""
        n = len(names)
        if (velocities is None and efforts is None and positions.__class__ is np.ndarray
                and positions.dtype is _FLOAT64 and positions.shape == (n,)):
            # A position stream (what a 1 kHz node sends) takes the servos' fast path. Where
            # _stream_jump_test_suffices, its jump test on the raw values proves them finite and not absurd; else
            # (and for a stream pressing beyond a limit) a sufficient test comes first (sum of (value / bound)^2
            # <= 1; NaN and inf fail it). Anything else takes the general path below, which names the joint at fault.
            # A stream pressing beyond a limit fails the raw test every time: after one did, the values are tested
            # first for the next VALUES_FIRST_CALLS calls instead of paying for both tests.
            stream = self.actuation.stream_positions
            raw_failed = False
            if self._stream_checks_values:
                if self._values_first:
                    self._values_first -= 1
                elif stream(idx, positions, False):
                    return
                else:
                    raw_failed = True
            scale = self._inv_bound_sq if idx.__class__ is slice else self._inv_bound_sq[idx]
            if (positions * positions) @ scale <= 1.0 and stream(idx, positions):
                if raw_failed:
                    self._values_first = VALUES_FIRST_CALLS
                return
        arrays = []
        for label, values in (("position", positions), ("velocity", velocities), ("effort", efforts)):
            if values is None:
                arrays.append(None)
                continue
            arr = np.asarray(values, dtype=float)
            if arr.ndim != 1:
                arr = arr.reshape(-1)
            if arr.size != n:
                raise CommandError(f"{label} has {arr.size} values for {n} joints {list(names)}")
            if not math.isfinite(arr.sum()):  # one cheap reduction; look closer only when it fails
                bad = np.flatnonzero(~np.isfinite(arr))
                if bad.size:  # (else finite values whose sum overflowed)
                    j = int(bad[0])
                    raise CommandError(f"{label} command {arr[j]} for joint '{clip(names[j])}' is not finite")
            bound = self._command_bounds[label][idx]
            over = np.abs(arr) > bound
            if over.any():
                j = int(np.flatnonzero(over)[0])
                raise CommandError(f"{label} command {arr[j]:.6g} for joint '{clip(names[j])}' is absurd: beyond "
                                   f"{bound[j]:.6g} ({self._bound_rule(label)}); command ignored")
            arrays.append(arr)
        if n:
            self.actuation.command(idx, *arrays)

    def _command_index(self, names: tuple[str, ...]) -> np.ndarray | slice:
        """Actuator indices of ``names`` (validated; cached, since a node sends the same list every time)."""
        idx = np.empty(len(names), dtype=int)
        seen: set[str] = set()
        for k, name in enumerate(names):
            i = self._act_index.get(name)
            if i is None:
                raise CommandError(self._not_actuated(name))
            if name in seen:
                raise CommandError(f"joint '{clip(name)}' is commanded twice in one command")
            seen.add(name)
            idx[k] = i
        if len(self._index_cache) > 256:
            self._index_cache.clear()
        # Every actuated joint in order (what a node usually sends): a slice is cheaper than fancy indexing.
        key: np.ndarray | slice = slice(None) if np.array_equal(idx, np.arange(len(self._act_index))) else idx
        self._index_cache[names] = key
        return key


    def _absurd_bounds(self) -> dict[str, np.ndarray]:
        """Per actuated joint and command field: the magnitude beyond which a command is refused."""
        lim = self.limits

        def bound(limit: np.ndarray) -> np.ndarray:
            ok = np.isfinite(limit) & (limit > 0)
            return np.where(ok, ABSURD_FACTOR * np.where(ok, limit, 1.0), ABSURD_UNLIMITED)

        reach = np.array([max(abs(x.lower), abs(x.upper)) for x in lim], dtype=float)
        return {"position": bound(reach), "velocity": bound(np.array([x.velocity for x in lim], dtype=float)),
                "effort": bound(np.array([x.effort for x in lim], dtype=float))}

    def _stream_jump_test_suffices(self) -> bool:
        """Whether the position stream's jump test (``|p - reference| <=`` one step's travel, which NaN and inf
        fail) already proves every value finite and within its absurd bound: true when every actuated joint has a
        finite range and velocity limit (its reference then stays in range: targets are clamped) and its range
        plus one step's travel is within the bound. Saves the fast path its own test (issue #21)."""
        act = self.actuation
        travel = act.step_travel
        lower, upper = act.lower, act.upper
        finite = np.isfinite(lower) & np.isfinite(upper) & np.isfinite(travel)
        reach = np.where(finite, np.maximum(np.abs(lower), np.abs(upper)), np.inf) + travel
        return bool(np.all(finite & (reach <= self._command_bounds["position"])))

    @staticmethod
    def _bound_rule(label: str) -> str:
        limit = "position range" if label == "position" else f"{label} limit"
        return f"{ABSURD_FACTOR:g} x the joint's {limit}, or {ABSURD_UNLIMITED:g} without one"

    def stop_motion_commands(self, joints: Sequence[str] | None = None) -> list[str]:
        """Command watchdog: velocity-commanded joints to zero velocity, effort-commanded ones to hold their
        current position; returns the joints that changed (none when nothing was moving them). Position-commanded
        joints already hold. The next command takes over as usual. ``joints``: only these (one robot of a group)."""
        only = None
        if joints is not None:
            wanted = set(joints)
            only = np.array([n in wanted for n in self.actuated_joint_names], dtype=bool)
        return [self.actuated_joint_names[i] for i in self.actuation.stop_motion(only)]

    def command_modes(self) -> dict[str, str]:
        """Actuated joint -> "position" | "velocity" | "effort" (what it currently obeys)."""
        return {n: CommandMode(int(m)).name.lower()
                for n, m in zip(self.actuated_joint_names, self.actuation.mode, strict=True)}

    def gains(self) -> dict[str, dict[str, float]]:
        a = self.actuation
        return {n: {"kp": float(a.kp[i]), "kd": float(a.kd[i]), "kv": float(a.kv[i])}
                for i, n in enumerate(self.actuated_joint_names)}

    def set_gains(self, name: str, *, kp: float | None = None, kd: float | None = None,
                  kv: float | None = None) -> None:
        """Change one joint's servo gains at run time (joint space)."""
        i = self._act_index.get(name)
        if i is None:
            raise CommandError(self._not_actuated(name))
        for label, v in (("kp", kp), ("kd", kd), ("kv", kv)):
            if v is not None and not (math.isfinite(v) and v >= 0):
                raise CommandError(f"gain {label}={v} of joint '{clip(name)}' must be finite and >= 0")
        self.actuation.set_gains(i, kp, kd, kv)

    # ------------------------------------------------------------------ state
    def positions(self) -> np.ndarray:
        return self._data.qpos[self._qpos]

    def velocities(self) -> np.ndarray:
        return self._data.qvel[self._dof]

    def state_buffers(self) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        """(live MuJoCo array, index per joint) for position, velocity and effort, in ``joint_names`` order.

        For per-cycle readers that gather straight into their own storage (one copy instead of two); the
        arrays stay valid for the engine's lifetime."""
        d = self._data
        return (d.qpos, self._qpos), (d.qvel, self._dof), (d.qfrc_actuator, self._dof)

    def sensor_values(self) -> np.ndarray:
        """The ros2_control sensors' values, in :attr:`sensor_names` order (a reused buffer: copy to keep)."""
        return self.sensors.read(self._data)

    @property
    def sensor_names(self) -> list[str]:
        """``<sensor>/<interface>`` of every simulated ros2_control sensor value."""
        return self.sensors.names

    def efforts(self) -> np.ndarray:
        """Joint-side actuator effort: what the motor applies through its reduction (servo, feed-forwards and
        gravity compensation, after the effort limit). A mimic joint shows its share of the compensation."""
        return self._data.qfrc_actuator[self._dof]

    def actuator_efforts(self) -> np.ndarray:
        """Motor-side effort of each actuated joint (joint effort / reduction), actuated joint order."""
        return self._data.qfrc_actuator[self._act_dof] / self.actuation.gear

    def set_joint_state(self, positions: Mapping[str, float],
                        velocities: Mapping[str, float] | None = None) -> None:
        """Teleport joints; position-servoed joints then hold the new positions. Mimic joints follow their
        master (a given mimic value must agree with it). Nothing is applied if any entry is invalid."""
        idx, values = self._validate_state(positions, "set_joint_state")
        vidx, vvalues = (self._validate_state(velocities, "set_joint_state velocity", check_mimic=False)
                         if velocities else (np.zeros(0, dtype=int), np.zeros(0)))
        q = self.positions()
        q[idx] = values
        self._derive_mimics(q)
        qd = self.velocities()
        qd[vidx] = vvalues
        for mimic, master, mult, _off in self._mimics:  # mimic velocities follow their master
            qd[mimic] = mult * qd[master]
        d = self._data
        d.qpos[self._qpos] = q
        d.qvel[self._dof] = qd
        moved = np.array([self._act_index[self.joint_names[i]] for i in idx if self.joint_names[i] in self._act_index],
                         dtype=int)
        self.actuation.hold(moved, q[self._joint_act_positions()[moved]])
        mujoco.mj_forward(self._model, d)

    def base_pose(self) -> np.ndarray:
        """(x, y, z, qw, qx, qy, qz) of the root link (constant for a fixed base)."""
        pose = self.link_pose(self.robot.root_link) if self.robot.root_link in self.built.links else np.eye(4)
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, np.ascontiguousarray(pose[:3, :3]).reshape(9))
        return np.concatenate([pose[:3, 3], quat])

    def base_velocity(self) -> np.ndarray:
        """(vx, vy, vz, wx, wy, wz) of a floating base in its own frame (the twist convention of
        nav_msgs/Odometry); zeros for a fixed base."""
        free = self.built.root_free_joint
        if free is None:
            return np.zeros(6)
        d = self._data
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, d.qpos[free.qpos_adr + 3:free.qpos_adr + 7])
        qvel = d.qvel[free.dof_adr:free.dof_adr + 6]
        # A free joint's linear velocity is in the world frame, its angular velocity in the body frame.
        return np.concatenate([rot.reshape(3, 3).T @ qvel[:3], qvel[3:]])

    def set_base_pose(self, pose: Sequence[float], linear_velocity: Sequence[float] = (0.0, 0.0, 0.0),
                      angular_velocity: Sequence[float] = (0.0, 0.0, 0.0)) -> None:
        """Teleport a floating base: pose (x y z qw qx qy qz) in the world, velocities in the world frame."""
        arr = self._check_base_pose(pose)
        vel = np.concatenate([np.asarray(linear_velocity, dtype=float).reshape(-1),
                              np.asarray(angular_velocity, dtype=float).reshape(-1)])
        if vel.size != 6 or not np.all(np.isfinite(vel)):
            raise CommandError("base velocities must be two sets of 3 finite numbers")
        free = self.built.root_free_joint
        d = self._data
        d.qpos[free.qpos_adr:free.qpos_adr + 7] = arr
        # A free joint's angular velocity is in the body frame.
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, arr[3:])
        d.qvel[free.dof_adr:free.dof_adr + 3] = vel[:3]
        d.qvel[free.dof_adr + 3:free.dof_adr + 6] = rot.reshape(3, 3).T @ vel[3:]
        mujoco.mj_forward(self._model, d)

    # ------------------------------------------------------------------ external wrenches
    def apply_wrench(
        self,
        link: str,
        force: Sequence[float] = (0.0, 0.0, 0.0),
        torque: Sequence[float] = (0.0, 0.0, 0.0),
        point: Sequence[float] = (0.0, 0.0, 0.0),
        duration: float | None = None,
    ) -> None:
        """Push ``link`` with a world-frame ``force`` at ``point`` (link frame) plus a world-frame ``torque``
        about that point, for ``duration`` s of simulated time (None or 0: until replaced or cleared). A new
        wrench on the same link replaces the old one."""
        if link not in self.built.links:
            raise CommandError(f"robot '{self.robot.name}' has no link '{clip(link)}'")
        vecs = []
        for label, v in (("force", force), ("torque", torque), ("point", point)):
            arr = np.asarray(v, dtype=float).reshape(-1)
            if arr.size != 3 or not np.all(np.isfinite(arr)):
                raise CommandError(f"apply_wrench on '{link}': {label} must be 3 finite numbers, got {v!r}")
            vecs.append(arr)
        for label, arr, bound, unit in (("force", vecs[0], self.max_wrench_force, "N"),
                                        ("torque", vecs[1], self.max_wrench_torque, "N m")):
            size = math.hypot(*arr)  # scaled: no overflow at 1e300
            if size > bound:
                raise CommandError(f"apply_wrench on '{link}': |{label}| = {size:.6g} {unit} is beyond the "
                                   f"simulator's bound {bound:.6g} {unit} ({WRENCH_WEIGHT_FACTOR:g} x the robot's "
                                   "weight); refused")
        point_reach = float(np.max(np.abs(vecs[2])))
        if point_reach > ABSURD_UNLIMITED:
            raise CommandError(f"apply_wrench on '{link}': reference point {point_reach:.6g} m from the link "
                               "is absurd; refused")
        if duration is not None and not (math.isfinite(duration) and duration >= 0):
            raise CommandError(f"apply_wrench on '{link}': duration must be >= 0 seconds, got {duration!r}")
        frame = self.built.links[link]
        body = frame.body_id
        if body == 0:
            raise CommandError(f"link '{link}' is the world body; a wrench on it has no effect")
        point_body = frame.offset[:3, :3] @ vecs[2] + frame.offset[:3, 3]
        com_offset = point_body - self._model.body_ipos[body]
        # End a half step early so a duration of k*dt acts for exactly k steps despite rounding.
        end = math.inf if not duration else self.time + duration - 0.5 * self.timestep
        self._wrenches[link] = _Wrench(body, vecs[0], vecs[1], com_offset, end)
        self._update_wrenches()

    def clear_wrenches(self) -> None:
        self._wrenches.clear()
        self._data.xfrc_applied[:] = 0.0
        self._wrench_bodies = np.zeros(0, dtype=int)

    def active_wrenches(self) -> list[str]:
        return list(self._wrenches)

    def _update_wrenches(self) -> None:
        d = self._data
        t = d.time
        for link in [k for k, w in self._wrenches.items() if t >= w.end_time]:
            del self._wrenches[link]
        d.xfrc_applied[self._wrench_bodies] = 0.0
        if not self._wrenches:
            self._wrench_bodies = np.zeros(0, dtype=int)
            return
        ws = list(self._wrenches.values())
        bodies = np.array([w.body for w in ws], dtype=int)
        force = np.array([w.force for w in ws])
        rot = d.xmat[bodies].reshape(-1, 3, 3)
        lever = np.einsum("kij,kj->ki", rot, np.array([w.com_offset for w in ws]))
        torque = np.array([w.torque for w in ws]) + np.cross(lever, force)
        np.add.at(d.xfrc_applied, bodies, np.hstack([force, torque]))
        self._wrench_bodies = bodies

    # ------------------------------------------------------------------ contacts and frames
    def contacts(self) -> list[Contact]:
        """Active contacts (penetrating or within margin) with their 6D force in the contact frame."""
        m, d = self._model, self._data
        out: list[Contact] = []
        f6 = np.zeros(6)
        for i in range(d.ncon):
            c = d.contact[i]
            if c.efc_address < 0:  # excluded from the constraint solver
                continue
            mujoco.mj_contactForce(m, d, i, f6)
            b1 = int(m.geom_bodyid[c.geom1])
            b2 = int(m.geom_bodyid[c.geom2])
            frame = np.array(c.frame).reshape(3, 3)
            out.append(Contact(self._body_names[b1], self._body_names[b2], np.array(c.pos), frame[0].copy(),
                               f6.copy(), float(c.dist), frame))
        return out

    def link_poses(self) -> dict[str, np.ndarray]:
        """World pose (4x4) of every link, fixed-joint frames included."""
        poses = self.link_pose_array()
        return dict(zip(self._link_names, poses, strict=True))

    def link_pose_array(self) -> np.ndarray:
        """(n_links, 4, 4) world poses in :attr:`link_names` order (cheaper than the dict for publishers)."""
        d = self._data
        n = len(self._link_names)
        out = np.zeros((n, 4, 4))
        out[:, :3, :3] = d.xmat[self._link_body].reshape(n, 3, 3)
        out[:, :3, 3] = d.xpos[self._link_body]
        out[:, 3, 3] = 1.0
        if not self._offsets_identity:
            out = out @ self._link_offsets
        return out

    def link_pose(self, link: str) -> np.ndarray:
        return self.built.link_pose(self._data, link)

    def relative_link_poses(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """(k, 4, 4) poses of each ``child`` in its ``parent`` frame -- e.g. one per URDF joint, for /tf."""
        key = tuple(pairs)
        index = self._pair_cache.get(key)
        if index is None:
            where = {n: i for i, n in enumerate(self._link_names)}
            try:
                index = (np.array([where[p] for p, _ in key], dtype=int), np.array([where[c] for _, c in key],
                                                                                   dtype=int))
            except KeyError as exc:
                raise CommandError(f"robot '{self.robot.name}' has no link {exc}") from None
            self._pair_cache[key] = index
        world = self.link_pose_array()
        parent, child = world[index[0]], world[index[1]]
        out = np.zeros_like(parent)
        rot_t = np.transpose(parent[:, :3, :3], (0, 2, 1))
        out[:, :3, :3] = rot_t @ child[:, :3, :3]
        out[:, :3, 3] = np.einsum("kij,kj->ki", rot_t, child[:, :3, 3] - parent[:, :3, 3])
        out[:, 3, 3] = 1.0
        return out

    # ------------------------------------------------------------------ scene edits (robot_core.physics.world)
    def edit_scene(self, edit: SceneHook, undo: SceneHook | None = None) -> None:
        """Change the model at run time (spawn or remove a world object): ``edit`` the MjSpec, recompile, and carry
        the state over by name -- time, every joint's position, velocity and solver warm start, actuator controls,
        applied forces -- so nothing that stays moves. If MuJoCo refuses the edited spec, ``undo`` restores it and
        the engine is unchanged (CommandError). Commands, servo references and wrenches are kept; ``model``,
        ``data`` and the arrays of :meth:`state_buffers` are new objects afterwards (fetch them again)."""
        spec = self.built.spec
        old_m, old_d = self._model, self._data
        edit(spec)
        try:
            model = spec.compile()
        except ValueError as exc:
            if undo is not None:
                undo(spec)
            raise CommandError(f"MuJoCo refused the edited scene: {' '.join(str(exc).split())}") from None
        data = mujoco.MjData(model)
        _carry_state(old_m, old_d, model, data)
        self.built = index_model(self.robot, spec, model, fixed_base=self.fixed_base,
                                 skipped_meshes=self.built.skipped_meshes, adjusted_links=self.built.adjusted_links)
        self._model, self._data = model, data
        self.sensors.bind(model)
        self._gil_step = None
        self._qpos, self._dof = self._addresses(self.joint_names)
        self._act_qpos, self._act_dof = self._addresses(self.actuated_joint_names)
        self._link_body = np.array([self.built.links[n].body_id for n in self._link_names], dtype=int)
        self._body_names = [model.body(i).name for i in range(model.nbody)]
        for w in self._wrenches.values():
            w.body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, old_m.body(w.body).name)
        self._wrench_bodies = np.zeros(0, dtype=int)
        self.actuation.rebind(model, data, self._act_qpos, self._act_dof, self._passive_dofs())
        if self._wrenches:
            self._update_wrenches()
        mujoco.mj_forward(model, data)
        self._bad_qacc_stat = data.warning[mujoco.mjtWarning.mjWARN_BADQACC]
        self._bad_qacc = self._bad_qacc_stat.number

    # ------------------------------------------------------------------ internals
    def _compile(self, spec: mujoco.MjSpec, prepared: PreparedSpec | None = None) -> mujoco.MjModel:
        return compile_spec(self.robot, spec, prepared)

    def _addresses(self, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """qpos and dof addresses of coordinates (each is a MuJoCo joint of the same name, see the builder)."""
        m = self._model
        ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n) for n in names]
        missing = [n for n, i in zip(names, ids, strict=True) if i < 0]
        if missing:
            raise RobotModelError(f"joints {missing} missing from the compiled model of '{self.robot.name}'")
        return (np.array([m.jnt_qposadr[i] for i in ids], dtype=np.int64),
                np.array([m.jnt_dofadr[i] for i in ids], dtype=np.int64))

    def _passive_dofs(self) -> np.ndarray:
        """Dofs without an actuator that carry robot links (free/floating joints): where gravity compensation
        must be cancelled so the robot falls as a whole."""
        m = self._model
        carrying: set[int] = set()
        for name in self._link_names:
            b = self.built.links[name].body_id
            while b > 0 and b not in carrying:
                carrying.add(b)
                b = int(m.body_parentid[b])
        own = set(self._dof.tolist())
        return np.array([d for d in range(m.nv) if int(m.dof_bodyid[d]) in carrying and d not in own], dtype=int)

    def _initial_self_contacts(self) -> list[tuple[str, str]]:
        """Robot body pairs that penetrate at the initial pose."""
        m, d = self._model, self._data
        d.qpos[:] = self._initial_qpos(self._initial)
        mujoco.mj_forward(m, d)
        links = set(self.robot.links)
        pairs: set[tuple[str, str]] = set()
        for i in range(d.ncon):
            c = d.contact[i]
            if c.dist >= 0.0:
                continue
            a = self._model.body(int(m.geom_bodyid[c.geom1])).name
            b = self._model.body(int(m.geom_bodyid[c.geom2])).name
            if a in links and b in links and a != b and a != "world" and b != "world":
                pairs.add((a, b) if a < b else (b, a))
        return sorted(pairs)

    def _not_actuated(self, name: str) -> str:
        j = self.robot.joints.get(name)
        if j is not None and j.mimic is not None:
            return f"joint '{name}' is a mimic of '{j.mimic.joint}' and cannot be commanded; command the master"
        if j is not None and j.type == "planar":
            return f"joint '{name}' is planar: command its coordinates '{name}:u', '{name}:v', '{name}:rot'"
        if j is not None:
            return f"joint '{name}' is a {j.type} joint and cannot be commanded"
        return f"robot '{self.robot.name}' has no joint '{clip(name)}' (actuated joints: {self.actuated_joint_names})"

    def _mimic_table(self) -> list[tuple[int, int, float, float]]:
        out = []
        for n in self.joint_names:
            j = self._coordinates[n]
            if j.is_scalar and j.mimic is not None and j.mimic.joint in self._joint_index:
                out.append((self._joint_index[n], self._joint_index[j.mimic.joint], float(j.mimic.multiplier),
                            float(j.mimic.offset)))
        return out

    def _mimic_coupling(self) -> MimicCoupling:
        """Mimic joints whose master is actuated (chains of mimics are resolved to the actuated root)."""
        acts, dofs, mults = [], [], []
        for mimic, master, mult, _off in self._mimics:
            name = self.joint_names[master]
            seen = {name}
            while name not in self._act_index:
                j = self.robot.joints[name]
                if j.mimic is None or j.mimic.joint in seen or j.mimic.joint not in self._joint_index:
                    break
                mult *= j.mimic.multiplier
                name = j.mimic.joint
                seen.add(name)
            if name in self._act_index:
                acts.append(self._act_index[name])
                dofs.append(int(self._dof[mimic]))
                mults.append(mult)
        return MimicCoupling(np.array(acts, dtype=int), np.array(dofs, dtype=int), np.array(mults, dtype=float))

    def _joint_act_positions(self) -> np.ndarray:
        return np.array([self._joint_index[n] for n in self.actuated_joint_names], dtype=int)

    def _initial_positions(self, overrides: Mapping[str, float] | None) -> np.ndarray:
        q = np.zeros(len(self.joint_names))
        for i, n in enumerate(self.joint_names):
            j = self._coordinates[n]
            if not j.is_scalar:  # a planar joint's coordinates start at its origin
                continue
            v = 0.0 if j.initial_position is None else float(j.initial_position)
            if j.type != "continuous" and j.limit is not None and j.limit.lower is not None \
                    and j.limit.upper is not None and j.limit.lower < j.limit.upper:
                v = min(max(v, j.limit.lower), j.limit.upper)
            q[i] = v
        if overrides:
            idx, values = self._validate_state(overrides, "initial_positions")
            q[idx] = values
        self._derive_mimics(q)
        return q

    def _initial_qpos(self, q: np.ndarray) -> np.ndarray:
        qpos = self._model.qpos0.copy()
        qpos[self._qpos] = q
        free = self.built.root_free_joint
        if free is not None and self._initial_base is not None:
            qpos[free.qpos_adr:free.qpos_adr + 7] = self._initial_base
        return qpos

    def _check_base_pose(self, pose: Sequence[float]) -> np.ndarray:
        if self.built.root_free_joint is None:
            raise CommandError(f"robot '{self.robot.name}' has a fixed base; it has no base pose to set")
        arr = np.asarray(pose, dtype=float).reshape(-1)
        if arr.size != 7 or not np.all(np.isfinite(arr)) or np.linalg.norm(arr[3:]) < 1e-9:
            raise CommandError(f"base pose must be 7 finite numbers (x y z qw qx qy qz) with a non-zero "
                               f"quaternion, got {pose!r}")
        arr[3:] /= np.linalg.norm(arr[3:])
        return arr

    def _validate_state(self, values: Mapping[str, float], what: str,
                        check_mimic: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Indices and values of joint positions (or, with ``check_mimic`` False, velocities) by name; positions
        must lie in the joint's range (a hair of rounding allowed) and mimic values agree with their master."""
        idx, vals = [], []
        for name, v in values.items():
            i = self._joint_index.get(name)
            if i is None:
                raise CommandError(f"{what}: robot '{self.robot.name}' has no joint coordinate '{clip(name)}' "
                                   f"(scalar joints and planar joints' <joint>:u|v|rot)")
            try:
                f = float(v)
            except (TypeError, ValueError):
                raise CommandError(f"{what}: value {v!r} for joint '{name}' is not a number") from None
            if not math.isfinite(f):
                raise CommandError(f"{what}: value {f} for joint '{name}' is not finite")
            if abs(f) > ABSURD_UNLIMITED:
                raise CommandError(f"{what}: value {f:.6g} for joint '{name}' is absurd (beyond "
                                   f"{ABSURD_UNLIMITED:g}); refused")
            if check_mimic:
                j = self._coordinates[name]
                lim = j.limit
                if (j.is_scalar and j.type != "continuous" and j.mimic is None and lim is not None
                        and lim.lower is not None and lim.upper is not None and lim.lower < lim.upper
                        and not lim.lower - RANGE_TOLERANCE <= f <= lim.upper + RANGE_TOLERANCE):
                    raise CommandError(f"{what}: position {f} of joint '{name}' is outside its range "
                                       f"[{lim.lower}, {lim.upper}]")
            idx.append(i)
            vals.append(f)
        idx_a = np.array(idx, dtype=int)
        vals_a = np.array(vals, dtype=float)
        if check_mimic and self._mimics:
            given = dict(zip(idx, vals, strict=True))
            for mimic, master, mult, off in self._mimics:
                if mimic in given:
                    master_val = given.get(master, float(self._data.qpos[self._qpos[master]]))
                    expect = off + mult * master_val
                    if abs(given[mimic] - expect) > MIMIC_TOLERANCE:
                        raise CommandError(
                            f"{what}: mimic joint '{self.joint_names[mimic]}' = {given[mimic]} disagrees with its "
                            f"master '{self.joint_names[master]}' (expects {expect}); set the master only")
        return idx_a, vals_a

    def _derive_mimics(self, q: np.ndarray) -> None:
        for mimic, master, mult, off in self._mimics:
            q[mimic] = off + mult * q[master]


def _carry_state(old_m: mujoco.MjModel, old_d: mujoco.MjData, m: mujoco.MjModel, d: mujoco.MjData) -> None:
    """Copy the state of every joint, actuator and body ``m`` shares by name with ``old_m`` (see edit_scene)."""
    obj = mujoco.mjtObj
    d.time = old_d.time
    for j in range(m.njnt):
        old = mujoco.mj_name2id(old_m, obj.mjOBJ_JOINT, m.joint(j).name)
        if old < 0:
            continue
        nq = {0: 7, 1: 4}.get(int(m.jnt_type[j]), 1)
        nv = {0: 6, 1: 3}.get(int(m.jnt_type[j]), 1)
        q, oq = int(m.jnt_qposadr[j]), int(old_m.jnt_qposadr[old])
        v, ov = int(m.jnt_dofadr[j]), int(old_m.jnt_dofadr[old])
        d.qpos[q:q + nq] = old_d.qpos[oq:oq + nq]
        d.qvel[v:v + nv] = old_d.qvel[ov:ov + nv]
        d.qacc_warmstart[v:v + nv] = old_d.qacc_warmstart[ov:ov + nv]
        d.qfrc_applied[v:v + nv] = old_d.qfrc_applied[ov:ov + nv]
    for a in range(m.nu):
        old = mujoco.mj_name2id(old_m, obj.mjOBJ_ACTUATOR, m.actuator(a).name)
        if old >= 0:
            d.ctrl[a] = old_d.ctrl[old]
            if m.actuator_actnum[a] and m.actuator_actnum[a] == old_m.actuator_actnum[old]:
                n, adr, oadr = int(m.actuator_actnum[a]), int(m.actuator_actadr[a]), int(old_m.actuator_actadr[old])
                d.act[adr:adr + n] = old_d.act[oadr:oadr + n]
    for b in range(1, m.nbody):
        old = mujoco.mj_name2id(old_m, obj.mjOBJ_BODY, m.body(b).name)
        if old > 0:
            d.xfrc_applied[b] = old_d.xfrc_applied[old]
