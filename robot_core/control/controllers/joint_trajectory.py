"""joint_trajectory_controller/JointTrajectoryController, ROS-free.

The node maps this onto ROS as follows (all methods are thread-safe; they only
stage data that the next ``update`` takes over):

* FollowJointTrajectory action: ``accept_goal(trajectory, tolerances)`` returns a
  goal id (accept) or a GoalRejection (error code + string; reject, or accept and
  abort with that result if the client should see the code); ``cancel(goal_id)``;
  ``feedback(goal_id)`` for the latest feedback; ``poll_results()`` for finished
  goals (GoalResult: goal id, status, error code, error string).
* ``~/joint_trajectory`` topic: ``set_trajectory(trajectory)`` (an empty
  trajectory means "stop and hold").
* ``~/query_state`` service: ``query_state(time)``.
* ``~/controller_state``: ``emit("controller_state", JtcStateData)``.

Parameters (ros2_controllers names): :attr:`JointTrajectoryController.PARAMS`, rendered in
doc/controllers/joint_trajectory.md. The PID of ``gains`` drives velocity-only or effort command interfaces.
Continuous joints of the URDF are compared with wrapped angles.

Behaviour:

* Activation holds the *measured* position (zero velocity), never a stale
  command, so activating after another controller moved the joints does not jump.
* A new trajectory starts from the current *desired* state (position, velocity,
  acceleration) at the update that takes it over (TrajectorySpline's implicit
  first point); waypoints at or before that time are dropped. Replacement is
  therefore continuous in position and velocity.
* Partial goals (when allowed): missing joints hold their desired position at take-over.
* Tolerances: 0 means "not checked" (default for position), a per-goal value of
  0 keeps the default and -1 removes the limit. Path tolerances are checked while
  the trajectory runs; violation -> PATH_TOLERANCE_VIOLATED, hold measured position.
  After the last point the goal must be within goal tolerances (position, and
  velocity within stopped_velocity_tolerance) -> SUCCESSFUL, holding the final
  point; if not reached ``goal_time`` after the end -> GOAL_TOLERANCE_VIOLATED,
  hold measured position.
* Goals always end: goal_time 0 (upstream: "wait forever", a known pain point)
  means DEFAULT_GOAL_TIME (1 s) here.
* A new goal (or topic trajectory) preempts the active goal: ABORTED, INVALID_GOAL,
  "Current goal preempted by new incoming action.". Cancel: CANCELED and hold the
  measured position. Deactivation aborts the active goal (with the manager's reason when the hardware
  failed: "... hardware component 'X' failed: no joint states ... (state_timeout N s)").
* A backwards jump of the control clock (simulation reset): the goal is aborted ("time jumped back from ...")
  and the position the hardware reports after the jump is held (``on_time_jump``).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum

import numpy as np

from robot_core.control.controller_base import UPDATE_RATE, Controller, Deferred, resolve
from robot_core.control.pid import Pid, PidGains
from robot_core.control.trajectory import (
    INTERPOLATION_METHODS,
    JointSample,
    JointTrajectory,
    TrajectoryArrays,
    TrajectorySpline,
)
from robot_core.parameter_spec import ParamSpec as P

DEFAULT_GOAL_TIME = 1.0
# s: a measured state at most this much older than the cycle is compared with the reference of its own time
MAX_STATE_LAG = 1.0
NONZERO_VELOCITY_EPS = 1.1920929e-07  # float epsilon, as upstream


def _gain(key: str, default: float | bool, text: str, **kw: object) -> P:
    type_ = "bool" if isinstance(default, bool) else "double"
    return P(f"gains.<joint>.{key}", type_, default, text, read_only=False, family=True, **kw)  # type: ignore[arg-type]


#: read by the model-based subclasses too (the other gains are not)
ANGLE_WRAPAROUND = _gain("angle_wraparound", False, "wrap the position error to [-pi, pi) (always on for "
                         "continuous URDF joints)")

#: the trajectory part of the table, shared with the model-based subclasses
TRAJECTORY_PARAMS: tuple[P, ...] = (
    UPDATE_RATE,
    P("joints", "string[]", [], "the joints the trajectories move, in the order of the command and state "
      "vectors (must not be empty at configure)"),
    P("interpolation_method", "string", "splines", "how the reference is sampled between waypoints: splines "
      "(linear, cubic or quintic by what the points give) or none (hold each point until the next)",
      choices=INTERPOLATION_METHODS),
    P("allow_partial_joints_goal", "bool", False, "accept goals naming only some of joints (the others hold "
      "their desired position)", read_only=False),
    P("open_loop_control", "bool", False, "a velocity command interface gets the trajectory's velocity, not a "
      "PID on the tracking error", read_only=False),
    P("allow_nonzero_velocity_at_trajectory_end", "bool", False, "accept trajectories whose last point has a "
      "nonzero velocity (refused by default)", read_only=False),
    P("state_publish_rate", "double", 0.0, "rate of ~/controller_state; 0 = every update", read_only=False,
      minimum=0.0, unit="Hz"),
    P("reject_invalid_goals", "bool", True, "read by the node: an invalid action goal is rejected; false = "
      "accepted and aborted at once with its error code, so the client sees the code", read_only=False),
    P("action_monitor_period", "double", 0.05, "read by the node: period of the action's feedback and of its "
      "check for a result", read_only=False, minimum=0.0, exclusive_min=True, unit="s"),
    P("constraints.stopped_velocity_tolerance", "double", 0.01, "after the last point, every joint's velocity "
      "must be below this for success", read_only=False, minimum=0.0, unit="rad/s"),
    P("constraints.goal_time", "double", 0.0, "time after the trajectory's end within which the goal tolerances "
      "must be met; 0 = 1 s here (upstream waits forever)", read_only=False, minimum=0.0, unit="s"),
    P("constraints.<joint>.trajectory", "double", 0.0, "path tolerance: largest position error while the "
      "trajectory runs; 0 = not checked", read_only=False, minimum=0.0, unit="rad", family=True),
    P("constraints.<joint>.goal", "double", 0.0, "goal tolerance: largest position error at the end; 0 = not "
      "checked", read_only=False, minimum=0.0, unit="rad", family=True),
)


class ErrorCode(IntEnum):
    """control_msgs/FollowJointTrajectory result codes."""

    SUCCESSFUL = 0
    INVALID_GOAL = -1
    INVALID_JOINTS = -2
    OLD_HEADER_TIMESTAMP = -3
    PATH_TOLERANCE_VIOLATED = -4
    GOAL_TOLERANCE_VIOLATED = -5


class GoalStatus(StrEnum):
    SUCCEEDED = "succeeded"
    ABORTED = "aborted"
    CANCELED = "canceled"


@dataclass
class JointTolerance:
    """control_msgs/JointTolerance: 0 = use the default, -1 = no limit."""

    name: str
    position: float = 0.0
    velocity: float = 0.0
    acceleration: float = 0.0


@dataclass
class GoalTolerances:
    path: list[JointTolerance] = field(default_factory=list)
    goal: list[JointTolerance] = field(default_factory=list)
    goal_time: float = 0.0  # goal_time_tolerance in seconds; 0 = controller default


@dataclass
class GoalRejection:
    error_code: ErrorCode
    error_string: str


@dataclass
class GoalResult:
    goal_id: int
    status: GoalStatus
    error_code: ErrorCode
    error_string: str


@dataclass
class PointData:
    """trajectory_msgs/JointTrajectoryPoint fields (empty arrays where not applicable)."""

    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray
    effort: np.ndarray
    time_from_start: float = 0.0


@dataclass
class JtcFeedback:
    stamp: float
    joint_names: list[str]
    desired: PointData
    actual: PointData
    error: PointData
    index: int


@dataclass
class JtcStateData:
    """control_msgs/JointTrajectoryControllerState."""

    stamp: float
    joint_names: list[str]
    reference: PointData
    feedback: PointData
    error: PointData
    output: PointData
    speed_scaling_factor: float = 1.0


@dataclass
class QueryStateResult:
    success: bool
    message: str
    name: list[str]
    position: list[float]
    velocity: list[float]
    acceleration: list[float]


@dataclass
class _Tol:
    """Tolerances as arrays in joint order; 0 = not checked."""

    path_pos: np.ndarray
    path_vel: np.ndarray
    path_acc: np.ndarray
    goal_pos: np.ndarray
    goal_vel: np.ndarray
    goal_acc: np.ndarray
    goal_time: float

    def copy(self) -> _Tol:
        return _Tol(*(a.copy() for a in (self.path_pos, self.path_vel, self.path_acc, self.goal_pos, self.goal_vel,
                                         self.goal_acc)), self.goal_time)

    def limits(self) -> tuple[np.ndarray | None, ...]:
        """The six tolerance arrays with unchecked joints (0) at +inf, or None when no joint is checked: one
        comparison per check in the loop, none for an unchecked kind. Computed once (the arrays are not changed
        after the goal is staged)."""
        cached = self.__dict__.get("_limits")
        if cached is None:
            cached = self.__dict__["_limits"] = tuple(
                np.where(a > 0.0, a, np.inf) if np.any(a > 0.0) else None
                for a in (self.path_pos, self.path_vel, self.path_acc, self.goal_pos, self.goal_vel, self.goal_acc))
        return cached


@dataclass
class _Staged:
    goal_id: int | None  # None: topic trajectory
    trajectory: JointTrajectory
    tol: _Tol | None
    points: TrajectoryArrays | None = None  # None: no points (stop and hold)


_EMPTY = np.zeros(0)


def _pt(q: np.ndarray, v: np.ndarray | None = None, a: np.ndarray | None = None,
        e: np.ndarray | None = None) -> PointData:
    return PointData(q.copy(), _EMPTY if v is None else v.copy(), _EMPTY if a is None else a.copy(),
                     _EMPTY if e is None else e.copy())


class JointTrajectoryController(Controller):
    type_name = "joint_trajectory_controller/JointTrajectoryController"
    allowed_command_interfaces: tuple[str, ...] = ("position", "velocity", "acceleration", "effort")
    PARAMS = (
        *TRAJECTORY_PARAMS,
        P("command_interfaces", "string[]", ["position"], "the command interfaces claimed for every joint: any of "
          "position, velocity, acceleration, effort (effort alone); velocity alone (closed loop) or effort run "
          "the PID of gains"),
        P("state_interfaces", "string[]", ["position", "velocity"], "the state interfaces read for every joint: "
          "position (required), velocity, acceleration"),
        _gain("p", 0.0, "proportional gain on the position error"),
        _gain("i", 0.0, "integral gain"),
        _gain("d", 0.0, "derivative gain (on the velocity error when the velocity state is read)"),
        _gain("i_clamp", math.inf, "symmetric bound of the integral term, the default of i_clamp_min/max",
              minimum=0.0, finite=False),
        _gain("i_clamp_min", -math.inf, "lower bound of the integral term (default -i_clamp)", finite=False),
        _gain("i_clamp_max", math.inf, "upper bound of the integral term (default i_clamp)", finite=False),
        _gain("u_clamp_min", -math.inf, "lower bound of the PID output", finite=False),
        _gain("u_clamp_max", math.inf, "upper bound of the PID output", finite=False),
        _gain("ff_velocity_scale", 0.0, "output += ff_velocity_scale * desired velocity"),
        ANGLE_WRAPAROUND,
    )
    needs_pid_gains = True

    def configure_model(self) -> None:
        """Hook for model-based subclasses, called at the end of on_configure."""

    def on_init(self) -> None:
        self._read_params()
        self._staged: _Staged | None = None
        self._staged_cancel: set[int] = set()
        self._results: deque[GoalResult] = deque()
        self._next_goal_id = 1
        self._active_goal: int | None = None
        self._feedback: JtcFeedback | None = None
        self._last_time = 0.0
        self._running = False

    # ------------------------------------------------------------------ parameters
    def _read_params(self) -> None:
        p = self.params
        self.joints = p.str_list("joints", [])
        self.cmd_ifaces, self.state_ifaces = self._read_interfaces()
        self.interpolation_method = p.str("interpolation_method", "splines")
        self.allow_partial = p.bool("allow_partial_joints_goal", False)
        self.open_loop = p.bool("open_loop_control", False)
        self.allow_nonzero_end_velocity = p.bool("allow_nonzero_velocity_at_trajectory_end", False)
        self.state_publish_rate = p.float("state_publish_rate", 0.0)

    def _read_interfaces(self) -> tuple[list[str], list[str]]:
        """(command, state) interface names; fixed by subclasses that need particular ones."""
        p = self.params
        return p.str_list("command_interfaces", ["position"]), p.str_list("state_interfaces", ["position", "velocity"])

    def on_configure(self) -> None:
        self._read_params()
        p = self.params
        if not self.joints:
            raise self.error("'joints' parameter is empty.")
        if not self.cmd_ifaces:
            raise self.error("'command_interfaces' parameter is empty.")
        bad = [c for c in self.cmd_ifaces if c not in self.allowed_command_interfaces]
        if bad:
            raise self.error(f"command interfaces {bad} are not supported "
                             f"(use {list(self.allowed_command_interfaces)})")
        if "position" not in self.state_ifaces:
            raise self.error("'state_interfaces' must contain 'position'")
        bad = [s for s in self.state_ifaces if s not in ("position", "velocity", "acceleration")]
        if bad:
            raise self.error(f"state interfaces {bad} are not supported (position, velocity, acceleration)")
        if "effort" in self.cmd_ifaces and len(self.cmd_ifaces) > 1:
            raise self.error("'effort' command interface cannot be combined with others")
        if "velocity" in self.cmd_ifaces and "velocity" not in self.state_ifaces and "position" not in self.cmd_ifaces:
            raise self.error("a velocity command interface without position needs the 'velocity' state interface")
        n = len(self.joints)
        self.has_pos_cmd = "position" in self.cmd_ifaces
        self.has_vel_cmd = "velocity" in self.cmd_ifaces
        self.has_acc_cmd = "acceleration" in self.cmd_ifaces
        self.has_eff_cmd = "effort" in self.cmd_ifaces
        self.has_vel_state = "velocity" in self.state_ifaces
        self.has_acc_state = "acceleration" in self.state_ifaces
        self.use_pid = (self.has_vel_cmd and len(self.cmd_ifaces) == 1 and not self.open_loop) or self.has_eff_cmd
        # default tolerances
        stopped = p.float("constraints.stopped_velocity_tolerance", 0.01)
        goal_time = p.float("constraints.goal_time", 0.0)
        path_pos = np.array([p.float(f"constraints.{j}.trajectory", 0.0) for j in self.joints])
        goal_pos = np.array([p.float(f"constraints.{j}.goal", 0.0) for j in self.joints])
        self.default_tol = _Tol(path_pos, np.zeros(n), np.zeros(n), goal_pos, np.full(n, stopped), np.zeros(n),
                                goal_time)
        self.default_tol.limits()
        # gains
        self.pids: list[Pid] = []
        self.ff_velocity_scale = np.zeros(n)
        wrap = np.zeros(n, dtype=bool)
        for k, j in enumerate(self.joints):
            base = f"gains.{j}"
            if self.needs_pid_gains:  # model-based subclasses compute their command without the PID
                i_clamp = p.float(f"{base}.i_clamp", math.inf)
                try:
                    gains = PidGains(
                        p=p.float(f"{base}.p", 0.0), i=p.float(f"{base}.i", 0.0), d=p.float(f"{base}.d", 0.0),
                        i_clamp_min=p.float(f"{base}.i_clamp_min", -i_clamp),
                        i_clamp_max=p.float(f"{base}.i_clamp_max", i_clamp),
                        u_min=p.float(f"{base}.u_clamp_min", -math.inf),
                        u_max=p.float(f"{base}.u_clamp_max", math.inf))
                except ValueError as exc:
                    raise self.error(f"gains for joint '{j}': {exc}") from None
                self.pids.append(Pid(gains))
                self.ff_velocity_scale[k] = p.float(f"{base}.ff_velocity_scale", 0.0)
            wrap[k] = p.bool(f"{base}.angle_wraparound", False)
            if self.robot is not None and j in self.robot.joints and self.robot.joints[j].type == "continuous":
                wrap[k] = True
        self.wrap = wrap
        self._any_wrap = bool(wrap.any())
        # where each measured field sits in the state interface vector (fields are grouped, joints in order)
        self._zero = np.zeros(n)  # shared "no measurement" field; never written
        self._slices = {s: slice(k * n, (k + 1) * n) for k, s in enumerate(self.state_ifaces)}
        self.configure_model()
        no_gains = all(g.p == 0.0 and g.i == 0.0 and g.d == 0.0 for g in (pid.gains for pid in self.pids))
        if self.needs_pid_gains and self.use_pid and no_gains and not np.any(self.ff_velocity_scale):
            raise self.error(f"command interface {self.cmd_ifaces} needs PID gains (gains.<joint>.p ...) for the "
                             f"joints {self.joints}")

    def command_interface_configuration(self) -> list[str]:
        return [f"{j}/{c}" for c in self.cmd_ifaces for j in self.joints]

    def state_interface_configuration(self) -> list[str]:
        return [f"{j}/{s}" for s in self.state_ifaces for j in self.joints]

    # ------------------------------------------------------------------ lifecycle
    def on_activate(self) -> None:
        n = len(self.joints)
        self._read_measured()
        q = self.measured.positions.copy()
        bad = ~np.isfinite(q)
        if np.any(bad) and self.command_interfaces is not None and self.has_pos_cmd:
            q[bad] = self.command_interfaces.get()[:n][bad]
        self._desired = JointSample.at_rest(np.where(np.isfinite(q), q, 0.0))
        self._spline: TrajectorySpline | None = None
        self._set_goal_tolerances(None)
        for pid in self.pids:
            pid.reset()
        with self._lock:
            self._staged = None
            self._staged_cancel.clear()
        self._active_goal = None
        self._running = True
        self._next_state_pub = -math.inf
        self._write_commands(self._desired, np.zeros(n), np.zeros(n), 0.0)

    def on_deactivate(self) -> None:
        self._running = False
        text = "Current goal cancelled during deactivate transition."
        if self.deactivation_reason:  # e.g. the hardware failed: the client hears why
            text = f"Current goal cancelled during deactivate transition: {self.deactivation_reason}"
        self._abort_goals(text)

    def _abort_goals(self, text: str) -> None:
        """Abort the active and the staged goal (INVALID_GOAL, ``text``)."""
        with self._lock:
            if self._active_goal is not None:
                self._finish(self._active_goal, GoalStatus.ABORTED, ErrorCode.INVALID_GOAL, text)
            if self._staged is not None and self._staged.goal_id is not None:
                self._finish(self._staged.goal_id, GoalStatus.ABORTED, ErrorCode.INVALID_GOAL, text)
            self._staged = None
            self._staged_cancel.clear()
        self._active_goal = None

    def on_time_jump(self, previous: float, now: float) -> None:
        """A trajectory timed on the old clock cannot run on the new one (ros2_control aborts too): abort the
        goal with the reason and hold the position the hardware reports after the jump."""
        if self._active_goal is not None or self._staged is not None:
            self._abort_goals(f"Current goal aborted: time jumped back from {previous:.3f} s to {now:.3f} s "
                              f"(simulator reset?); holding the measured position.")
        self._read_measured()
        self._hold_measured()
        for pid in self.pids:
            pid.reset()
        self._next_state_pub = -math.inf
        self._last_time = now

    # ------------------------------------------------------------------ inputs (any thread)
    def accept_goal(self, trajectory: JointTrajectory, tolerances: GoalTolerances | None = None) -> int | GoalRejection:
        """Validate and stage an action goal; returns its id, or why it is rejected."""
        if not self._running:
            return GoalRejection(ErrorCode.INVALID_GOAL, "Can't accept new action goals. Controller is not running.")
        rejection = self.validate_trajectory(trajectory)
        if rejection is not None:
            return rejection
        tol = self._merge_tolerances(tolerances or GoalTolerances())
        if isinstance(tol, GoalRejection):
            return tol
        tol.limits()  # computed here, not in the control cycle
        points = TrajectoryArrays.of(trajectory, self.joints)
        with self._lock:
            goal_id = self._next_goal_id
            self._next_goal_id += 1
            if self._staged is not None and self._staged.goal_id is not None:
                self._finish(self._staged.goal_id, GoalStatus.ABORTED, ErrorCode.INVALID_GOAL,
                             "Current goal preempted by new incoming action.")
            self._staged = _Staged(goal_id, trajectory, tol, points)
        return goal_id

    def set_trajectory(self, trajectory: JointTrajectory) -> GoalRejection | None:
        """Stage a trajectory from the ``~/joint_trajectory`` topic; empty points = stop and hold."""
        if not self._running:
            return GoalRejection(ErrorCode.INVALID_GOAL, "Can't accept new trajectories. Controller is not running.")
        if trajectory.points:
            rejection = self.validate_trajectory(trajectory)
            if rejection is not None:
                return rejection
        with self._lock:
            if self._staged is not None and self._staged.goal_id is not None:
                self._finish(self._staged.goal_id, GoalStatus.ABORTED, ErrorCode.INVALID_GOAL,
                             "Current goal preempted by new incoming trajectory.")
            arrays = TrajectoryArrays.of(trajectory, self.joints) if trajectory.points else None
            self._staged = _Staged(None, trajectory, None, arrays)
        return None

    def cancel(self, goal_id: int) -> bool:
        """Request cancellation; True if the goal is pending or active (the result follows)."""
        with self._lock:
            if goal_id == self._active_goal or (self._staged is not None and self._staged.goal_id == goal_id):
                self._staged_cancel.add(goal_id)
                return True
        return False

    def poll_results(self) -> list[GoalResult]:
        with self._lock:
            out = list(self._results)
            self._results.clear()
        return out

    def feedback(self, goal_id: int) -> JtcFeedback | None:
        fb = self._feedback
        return resolve(fb) if fb is not None and goal_id == self._active_goal else None

    @property
    def active_goal_id(self) -> int | None:
        return self._active_goal

    def query_state(self, time: float) -> QueryStateResult:
        if not self._running:
            return QueryStateResult(False, "Can't sample trajectory. Controller is not active.", [], [], [], [])
        spline = self._spline
        if spline is not None:
            if time < spline.start_time:
                return QueryStateResult(False, "Requested sample time precedes the current trajectory start time.",
                                        [], [], [], [])
            s, _ = spline.sample(time)
        else:
            s = self._desired
        return QueryStateResult(True, "", list(self.joints), s.positions.tolist(), s.velocities.tolist(),
                                s.accelerations.tolist())

    # ------------------------------------------------------------------ validation
    def validate_trajectory(self, traj: JointTrajectory) -> GoalRejection | None:
        """The upstream checks, with their reasons; None when valid."""
        names = list(traj.joint_names)
        if not names:
            return GoalRejection(ErrorCode.INVALID_JOINTS, "Empty joint names on incoming trajectory.")
        if len(set(names)) != len(names):
            return GoalRejection(ErrorCode.INVALID_JOINTS, f"Incoming trajectory has duplicate joint names {names}.")
        for n in names:
            if n not in self.joints:
                return GoalRejection(ErrorCode.INVALID_JOINTS, f"Incoming joint {n} doesn't match the controller's "
                                                               f"joints.")
        if not self.allow_partial and len(names) != len(self.joints):
            return GoalRejection(ErrorCode.INVALID_JOINTS,
                                 "Joints on incoming trajectory don't match the controller joints.")
        if not traj.points:
            return GoalRejection(ErrorCode.INVALID_GOAL, "Empty trajectory received.")
        prev = None
        for i, pt in enumerate(traj.points):
            t = float(pt.time_from_start)
            if not math.isfinite(t) or t < 0.0:
                return GoalRejection(ErrorCode.INVALID_GOAL, f"Point #{i} has an invalid time_from_start ({t}).")
            if prev is not None and t <= prev:
                return GoalRejection(ErrorCode.INVALID_GOAL, f"Time between points {i - 1} and {i} is not strictly "
                                                             f"increasing, it is {prev:f} and {t:f} respectively")
            prev = t
            for label, values, allow_empty in (("positions", pt.positions, False), ("velocities", pt.velocities, True),
                                               ("accelerations", pt.accelerations, True),
                                               ("effort", pt.effort, True)):
                if allow_empty and len(values) == 0:
                    continue
                if len(values) != len(names):
                    return GoalRejection(ErrorCode.INVALID_GOAL, f"Mismatch between joint_names size ({len(names)}) "
                                                                 f"and {label} ({len(values)}) at point #{i}.")
                if not all(math.isfinite(float(v)) for v in values):
                    return GoalRejection(ErrorCode.INVALID_GOAL, f"Point #{i} has non-finite {label}.")
            if len(pt.effort) and not self.has_eff_cmd:
                return GoalRejection(ErrorCode.INVALID_GOAL, "Trajectories with effort fields are only supported for "
                                                             "controllers using the 'effort' command interface.")
        last = traj.points[-1]
        if not self.allow_nonzero_end_velocity:
            for k, v in enumerate(last.velocities):
                if abs(float(v)) > NONZERO_VELOCITY_EPS:
                    return GoalRejection(ErrorCode.INVALID_GOAL, f"Velocity of last trajectory point of joint "
                                                                 f"{names[k]} is not zero: {float(v):.15f}")
        if traj.start_time != 0.0:
            end = traj.start_time + float(last.time_from_start)
            if end < self._last_time:
                return GoalRejection(ErrorCode.OLD_HEADER_TIMESTAMP,
                                     f"Received trajectory with non-zero start time ({traj.start_time:f}) that ends in "
                                     f"the past ({end:f})")
        elif float(last.time_from_start) <= 0.0:
            return GoalRejection(ErrorCode.INVALID_GOAL, "The last point of a trajectory that starts now must have a "
                                                         "positive time_from_start.")
        return None

    def _merge_tolerances(self, tol: GoalTolerances) -> _Tol | GoalRejection:
        out = self.default_tol.copy()
        pos = {j: k for k, j in enumerate(self.joints)}
        for kind, entries in (("path", tol.path), ("goal", tol.goal)):
            for e in entries:
                k = pos.get(e.name)
                if k is None:
                    return GoalRejection(ErrorCode.INVALID_JOINTS, f"Tolerance given for unknown joint '{e.name}' "
                                                                   f"({kind}_tolerance).")
                for field_name in ("position", "velocity", "acceleration"):
                    v = float(getattr(e, field_name))
                    arr = getattr(out, f"{kind}_{field_name[:3]}")
                    if v == -1.0:
                        arr[k] = 0.0  # no limit
                    elif v > 0.0:
                        arr[k] = v
                    elif v != 0.0 or not math.isfinite(v):
                        return GoalRejection(ErrorCode.INVALID_GOAL, f"Illegal {kind} tolerance {field_name}={v} for "
                                                                     f"joint '{e.name}' (use > 0, 0 or -1).")
        if not math.isfinite(tol.goal_time) or tol.goal_time < 0.0:
            return GoalRejection(ErrorCode.INVALID_GOAL, f"Illegal goal_time_tolerance {tol.goal_time}.")
        if tol.goal_time > 0.0:
            out.goal_time = tol.goal_time
        return out

    # ------------------------------------------------------------------ the cycle
    def _read_measured(self) -> None:
        # Views into one fresh copy of the state values; like every array of a cycle, never modified afterwards
        # (output built later, off the loop, reads them).
        if self.state_interfaces is None:
            self.measured = JointSample.at_rest(np.zeros(len(self.joints)))
            return
        vals = self.state_interfaces.get()
        sl = self._slices
        self.measured = JointSample(vals[sl["position"]], vals[sl["velocity"]] if self.has_vel_state else self._zero,
                                    vals[sl["acceleration"]] if self.has_acc_state else self._zero)

    def _finish(self, goal_id: int, status: GoalStatus, code: ErrorCode, text: str) -> None:
        """Record a result (caller holds self._lock)."""
        self._results.append(GoalResult(goal_id, status, code, text))

    def _hold_measured(self) -> None:
        q = self.measured.positions
        q = np.where(np.isfinite(q), q, self._desired.positions)
        self._desired = JointSample.at_rest(q)
        self._spline = None
        self._set_goal_tolerances(None)

    def _set_goal_tolerances(self, tol: _Tol | None) -> None:
        self._goal_tol = tol
        self._tol_limits = tol.limits() if tol is not None else None

    def _take_over(self, staged: _Staged, time: float) -> str | None:
        """Build the spline for a staged trajectory; returns a reason if it cannot run."""
        pts = staged.points
        if pts is None:
            self._hold_measured()
            return None
        spline = pts.spline(time, self._desired, staged.trajectory.start_time, self.interpolation_method)
        if spline is None:
            return "trajectory ends in the past"
        self._spline = spline
        return None

    def update(self, time: float, period: float) -> None:
        self._last_time = time
        self._read_measured()
        if self._staged is not None or self._staged_cancel:  # unlocked peek; anything staged meanwhile waits a cycle
            self._take_staged(time)
        # desired state
        index = 0
        spline = self._spline
        if spline is not None:
            desired, index = spline.sample(time)
            self._desired = desired
        desired = self._desired
        err_q, err_v, err_a = self._errors(desired)
        # tolerances
        lim = self._tol_limits
        if spline is not None and lim is not None:
            path_pos, path_vel, path_acc, goal_pos, goal_vel, goal_acc = lim
            if time < spline.end_time:
                p_q, p_v, p_a = err_q, err_v, err_a
                measured_at = self._measured_at(time)
                if measured_at is not None:  # a late state: judged against the reference of its own moment
                    p_q, p_v, p_a = self._errors(spline.sample(measured_at)[0])
                if _violates(p_q, path_pos) or (self.has_vel_state and _violates(p_v, path_vel)) or (
                        self.has_acc_state and _violates(p_a, path_acc)):
                    self._end_goal(GoalStatus.ABORTED, ErrorCode.PATH_TOLERANCE_VIOLATED,
                                   "Aborted due to path tolerance violation")
                    self._hold_measured()
            else:
                within = not (_violates(err_q, goal_pos) or (
                    self.has_vel_state and _violates(self.measured.velocities, goal_vel)) or (
                    self.has_acc_state and _violates(err_a, goal_acc)))
                tol = self._goal_tol
                limit = tol.goal_time if tol is not None and tol.goal_time > 0.0 else DEFAULT_GOAL_TIME
                if within:
                    self._end_goal(GoalStatus.SUCCEEDED, ErrorCode.SUCCESSFUL, "Goal successfully reached!")
                    self._desired = JointSample.at_rest(spline.final_positions)
                    self._spline = None
                    self._set_goal_tolerances(None)
                elif time - spline.end_time > limit:
                    self._end_goal(GoalStatus.ABORTED, ErrorCode.GOAL_TOLERANCE_VIOLATED,
                                   f"Aborted due to goal_time_tolerance exceeding by "
                                   f"{time - spline.end_time - limit:f} seconds")
                    self._hold_measured()
            if self._desired is not desired:
                desired = self._desired
                err_q, err_v, err_a = self._errors(desired)
        self._write_commands(desired, err_q, err_v, period)
        m = self.measured
        if self._active_goal is not None:
            self._feedback = Deferred(self._feedback_from, time, desired, m, err_q, err_v, index)
        if self.state_publish_rate <= 0.0 or time >= self._next_state_pub:
            self._next_state_pub = time + (1.0 / self.state_publish_rate if self.state_publish_rate > 0 else 0.0)
            self.emit("controller_state", Deferred(self._state_from, time, desired, m, err_q, err_v, self._commands))

    def _take_staged(self, time: float) -> None:
        """Apply cancels and take over a staged trajectory (preempting the active goal)."""
        with self._lock:
            staged, self._staged = self._staged, None
            cancels, self._staged_cancel = self._staged_cancel, set()
            if self._active_goal is not None and self._active_goal in cancels:
                self._finish(self._active_goal, GoalStatus.CANCELED, ErrorCode.SUCCESSFUL, "Goal canceled by client.")
                self._active_goal = None
                self._hold_measured()
            if staged is not None and staged.goal_id is not None and staged.goal_id in cancels:
                self._finish(staged.goal_id, GoalStatus.CANCELED, ErrorCode.SUCCESSFUL, "Goal canceled by client.")
                staged = None
            if staged is not None:
                if self._active_goal is not None:
                    self._finish(self._active_goal, GoalStatus.ABORTED, ErrorCode.INVALID_GOAL,
                                 "Current goal preempted by new incoming action.")
                    self._active_goal = None
                reason = self._take_over(staged, time)
                if reason is not None:
                    if staged.goal_id is not None:
                        self._finish(staged.goal_id, GoalStatus.ABORTED, ErrorCode.OLD_HEADER_TIMESTAMP,
                                     f"Received trajectory that {reason} (at {time:f}).")
                else:
                    self._active_goal = staged.goal_id
                    self._set_goal_tolerances(staged.tol if staged.tol is not None else self.default_tol)

    def _measured_at(self, time: float) -> float | None:
        """The time the measured state is from when it is older than the cycle (a robot on DDS whose states
        arrive late on a loaded machine: a state 0.4 s old compared with the reference of now reads as an error
        of 0.4 s times the joint's speed); None when it is the cycle's own or unknown. An
        unstamped state (stamp 0) or one more than MAX_STATE_LAG old (a robot whose clock is not the manager's)
        is judged as upstream does, against the reference of the cycle."""
        group = self.state_interfaces
        stamp = group.state_stamp() if group is not None else None
        if stamp is None or stamp <= 0.0 or not time - MAX_STATE_LAG <= stamp < time - 1e-9:
            return None
        return stamp

    def _errors(self, desired: JointSample) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """desired - measured for position (wrapped for continuous joints), velocity, acceleration."""
        m = self.measured
        err_q = desired.positions - m.positions
        if self._any_wrap:
            err_q = np.where(self.wrap, (err_q + math.pi) % (2 * math.pi) - math.pi, err_q)
        err_v = desired.velocities - m.velocities if self.has_vel_state else self._zero
        err_a = desired.accelerations - m.accelerations if self.has_acc_state else self._zero
        return err_q, err_v, err_a

    def _end_goal(self, status: GoalStatus, code: ErrorCode, text: str) -> None:
        with self._lock:
            if self._active_goal is not None:
                self._finish(self._active_goal, status, code, text)
            self._active_goal = None

    def compute_commands(self, desired: JointSample, err_q: np.ndarray, err_v: np.ndarray,
                         period: float) -> dict[str, np.ndarray]:
        """Command values per command interface type (overridden by model-based subclasses)."""
        out: dict[str, np.ndarray] = {}
        pid_out = None
        if self.use_pid:
            pid_out = np.array([self.ff_velocity_scale[k] * desired.velocities[k] + self.pids[k].compute(
                float(err_q[k]), period, float(err_v[k]) if self.has_vel_state else None)
                for k in range(len(self.joints))])
        if self.has_pos_cmd:
            out["position"] = desired.positions
        if self.has_vel_cmd:
            out["velocity"] = pid_out if self.use_pid and not self.has_eff_cmd else desired.velocities
        if self.has_acc_cmd:
            out["acceleration"] = desired.accelerations
        if self.has_eff_cmd:
            out["effort"] = pid_out
        return out

    def _write_commands(self, desired: JointSample, err_q: np.ndarray, err_v: np.ndarray, period: float) -> None:
        cmds = self.compute_commands(desired, err_q, err_v, period)
        self._commands = cmds
        if self.command_interfaces is not None:
            ifaces = self.cmd_ifaces
            self.command_interfaces.set(cmds[ifaces[0]] if len(ifaces) == 1 else
                                        np.concatenate([cmds[c] for c in ifaces]))

    def state_data(self, time: float, err_q: np.ndarray, err_v: np.ndarray) -> JtcStateData:
        return self._state_from(time, self._desired, self.measured, err_q, err_v, getattr(self, "_commands", {}))

    def _state_from(self, time: float, d: JointSample, m: JointSample, err_q: np.ndarray, err_v: np.ndarray,
                    cmds: dict[str, np.ndarray]) -> JtcStateData:
        output = PointData(cmds["position"].copy() if "position" in cmds else _EMPTY,
                           cmds["velocity"].copy() if "velocity" in cmds else _EMPTY,
                           cmds["acceleration"].copy() if "acceleration" in cmds else _EMPTY,
                           cmds["effort"].copy() if "effort" in cmds else _EMPTY)
        return JtcStateData(time, list(self.joints), _pt(d.positions, d.velocities, d.accelerations),
                            _pt(m.positions, m.velocities if self.has_vel_state else None),
                            _pt(err_q, err_v if self.has_vel_state else None), output)

    def _feedback_from(self, time: float, d: JointSample, m: JointSample, err_q: np.ndarray, err_v: np.ndarray,
                       index: int) -> JtcFeedback:
        return JtcFeedback(time, list(self.joints), _pt(d.positions, d.velocities, d.accelerations),
                           _pt(m.positions, m.velocities), _pt(err_q, err_v), index)

    @property
    def desired(self) -> JointSample:
        return self._desired.copy()


def _violates(err: np.ndarray, limit: np.ndarray | None) -> bool:
    """True if any joint is outside its limit (see _Tol.limits: unchecked joints have +inf, None checks none)."""
    return limit is not None and bool(np.count_nonzero(np.abs(err) > limit))


__all__: Sequence[str] = (
    "DEFAULT_GOAL_TIME", "ErrorCode", "GoalRejection", "GoalResult", "GoalStatus", "GoalTolerances",
    "JointTolerance", "JointTrajectoryController", "JtcFeedback", "JtcStateData", "PointData", "QueryStateResult",
)
