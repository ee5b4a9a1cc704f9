"""Gripper action controllers: one joint driven to a goal position, with the result telling reached or stalled.

Types (ros2_controllers' names and parameters):

* ``parallel_gripper_action_controller/GripperActionController`` -- action ``~/gripper_cmd``
  (control_msgs/action/ParallelGripperCommand);
* ``position_controllers/GripperActionController`` -- action ``~/gripper_cmd`` (control_msgs/action/GripperCommand;
  deprecated upstream in favour of the parallel one, kept because MoveIt configurations still name it).

The node calls :meth:`GripperActionCore.accept_goal`; the update writes the goal position to
``<joint>/position`` and decides the goal as upstream does: within ``goal_tolerance`` -> succeeded with
``reached_goal``; slower than ``stall_velocity_threshold`` for ``stall_timeout`` s short of it -> ``stalled``,
succeeded with ``allow_stalling`` and aborted otherwise. A new goal preempts the running one (canceled, as
upstream's ``preempt_active_goal``); a cancel holds the current position.

Beyond upstream: a goal position outside the joint's URDF range is rejected (upstream accepts it and the
hardware clamps it, so such a goal can never report ``reached_goal``).

Force limit (``command_interface``): a position command leaves the squeeze to the hardware (the simulator's
position servo pushes with up to the joint's URDF effort limit, whatever ``max_effort`` says), so where the joint
has an ``effort`` command interface the controller instead closes its own position loop
(``gains.p``, ``gains.d``) and commands ``clamp(p (goal - q) - d qd, +-max_effort)`` on it, as upstream's
effort-based gripper controller does. The squeeze on a grasped object is then the goal's ``max_effort`` (or the
parameter's), in topic and embedded mode alike, because it is the effort the simulator applies.
"""

from __future__ import annotations

import enum
import math
import threading
from dataclasses import dataclass

from robot_core.control.controller_base import UPDATE_RATE, Controller
from robot_core.parameter_spec import ParamSpec as P

_COMMON = (
    UPDATE_RATE,
    P("joint", "string", "", "the gripper joint (position command interface; position and velocity states); must "
      "be set"),
    P("action_monitor_rate", "double", 20.0, "rate at which the action's feedback and result are checked",
      minimum=0.1, unit="Hz"),
    P("goal_tolerance", "double", 0.01, "a goal counts as reached within this distance of its position",
      minimum=0.0, unit="m or rad"),
    P("allow_stalling", "bool", False, "a stalled gripper (e.g. holding an object) succeeds instead of aborting"),
    P("stall_velocity_threshold", "double", 0.001, "slower than this counts as not moving", unit="m/s or rad/s"),
    P("stall_timeout", "double", 1.0, "not moving this long short of the goal = stalled", minimum=0.0, unit="s"),
)

_MAX_EFFORT = P("max_effort", "double", 10.0, "effort limit used when a goal gives none (or <= 0): the most the "
                "effort loop pushes with; 0 = the joint's URDF effort limit; position_controllers' type defaults "
                "to 0", minimum=0.0, unit="N or N m")
_FORCE_LOOP = (
    P("command_interface", "string", "auto", "what the joint is commanded through: effort (own position loop, "
      "effort clamped to max_effort), position (the hardware decides the force, max_effort not enforced), auto "
      "= effort where the joint has an effort command interface", choices=("auto", "effort", "position")),
    P("gains.p", "double", 100.0, "effort loop: effort per unit of position error", minimum=0.0,
      unit="N/m or N m/rad"),
    P("gains.d", "double", 5.0, "effort loop: effort per unit of velocity", minimum=0.0,
      unit="N s/m or N m s/rad"),
)


class GoalStatus(enum.Enum):
    SUCCEEDED = "succeeded"
    ABORTED = "aborted"
    CANCELED = "canceled"


@dataclass(frozen=True)
class GripperResult:
    """A finished goal as the action result carries it."""

    goal_id: int
    status: GoalStatus
    position: float
    effort: float
    stalled: bool
    reached_goal: bool
    message: str


@dataclass(frozen=True)
class GripperFeedback:
    position: float
    effort: float
    stalled: bool
    reached_goal: bool


class GoalRejectedError(Exception):
    """A goal the controller refuses before accepting it; the message says why."""


class GripperActionController(Controller):
    """position_controllers/GripperActionController (control_msgs/action/GripperCommand)."""

    type_name = "position_controllers/GripperActionController"
    PARAMS = (*_COMMON, _MAX_EFFORT, *_FORCE_LOOP)
    default_max_effort = 0.0

    def on_init(self) -> None:
        self._lock = threading.Lock()
        self._next_id = 0
        self._results: list[GripperResult] = []
        self._staged: tuple[int, float, float, float] | None = None
        self._cancel: int | None = None
        self._read_params()

    def _read_params(self) -> None:
        p = self.params
        self.joint = p.str("joint", "")
        self.action_monitor_rate = p.float("action_monitor_rate", 20.0)
        self.goal_tolerance = p.float("goal_tolerance", 0.01, min_value=0.0)
        self.allow_stalling = p.bool("allow_stalling", False)
        self.stall_velocity_threshold = p.float("stall_velocity_threshold", 0.001)
        self.stall_timeout = p.float("stall_timeout", 1.0, min_value=0.0)
        self.max_effort = p.float("max_effort", self.default_max_effort, min_value=0.0)
        self.command_interface = p.str("command_interface", "auto", choices=("auto", "effort", "position"))
        self.kp = p.float("gains.p", 100.0, min_value=0.0)
        self.kd = p.float("gains.d", 5.0, min_value=0.0)
        self.effort_limit = math.inf
        self.max_velocity = math.nan
        self.max_effort_interface = self.max_velocity_interface = ""

    def on_configure(self) -> None:
        self._read_params()
        if not self.joint:
            raise self.error("parameter 'joint' is empty; name the gripper joint")
        if self.robot is not None and self.joint not in self.robot.joints:
            raise self.error(f"parameter 'joint': '{self.joint}' is not a joint of robot '{self.robot.name}'")
        offered = self._offered_command_interfaces()
        if self.command_interface == "auto":
            self.command_interface = "effort" if "effort" in offered else "position"
        elif offered and self.command_interface not in offered:
            raise self.error(f"parameter 'command_interface': joint '{self.joint}' has no '{self.command_interface}' "
                             f"command interface (its <ros2_control> gives {sorted(offered)})")
        self.effort_limit = self._urdf_effort_limit()

    def _offered_command_interfaces(self) -> set[str]:
        """The joint's command interfaces in the robot's <ros2_control> blocks (empty: not known)."""
        if self.robot is None:
            return set()
        return {i.name for block in self.robot.ros2_control for rj in block.joints if rj.name == self.joint
                for i in rj.command_interfaces}

    def _urdf_effort_limit(self) -> float:
        joint = self.robot.joints.get(self.joint) if self.robot is not None else None
        lim = joint.limit if joint is not None else None
        return float(lim.effort) if lim is not None and lim.effort and lim.effort > 0 else math.inf

    @property
    def effort_mode(self) -> bool:
        return self.command_interface == "effort"

    def command_interface_configuration(self) -> list[str]:
        names = [f"{self.joint}/{'effort' if self.effort_mode else 'position'}"]
        names += [n for n in (self.max_effort_interface, self.max_velocity_interface) if n]
        return names

    def state_interface_configuration(self) -> list[str]:
        return [f"{self.joint}/position", f"{self.joint}/velocity"]

    # ------------------------------------------------------------------ lifecycle
    def on_activate(self) -> None:
        q = self._position()
        self._command = (q, self.max_effort, self.max_velocity)
        self._active: int | None = None
        self._last_movement = 0.0
        self._feedback: GripperFeedback | None = None
        self._write()

    def on_deactivate(self) -> None:
        with self._lock:
            if self._active is not None:
                self._finish(GoalStatus.ABORTED, False, False, "controller was deactivated")
            self._staged = None

    # ------------------------------------------------------------------ goals (thread-safe)
    def joint_range(self) -> tuple[float, float] | None:
        joint = self.robot.joints.get(self.joint) if self.robot is not None else None
        lim = joint.limit if joint is not None else None
        if lim is None or joint.type == "continuous" or not lim.upper > lim.lower:
            return None
        return float(lim.lower), float(lim.upper)

    def accept_goal(self, position: float, max_effort: float | None = None,
                    max_velocity: float | None = None) -> int:
        """Stage a goal; returns its id, or raises GoalRejectedError (not finite, outside the joint's range)."""
        if not math.isfinite(position):
            raise GoalRejectedError(f"goal position {position} for joint '{self.joint}' is not finite")
        rng = self.joint_range()
        if rng is not None and not rng[0] - 1e-9 <= position <= rng[1] + 1e-9:
            raise GoalRejectedError(f"goal position {position} is outside the range [{rng[0]}, {rng[1]}] of joint "
                               f"'{self.joint}'")
        effort = self.max_effort if max_effort is None or not math.isfinite(max_effort) or max_effort <= 0.0 \
            else float(max_effort)
        velocity = self.max_velocity if max_velocity is None or not math.isfinite(max_velocity) \
            else float(max_velocity)
        with self._lock:
            if self._staged is not None:  # a goal not yet taken over by a cycle still gets its answer
                fb = getattr(self, "_feedback", None)
                q = fb.position if fb is not None else math.nan
                effort_now = fb.effort if fb is not None else math.nan
                self._results.append(GripperResult(self._staged[0], GoalStatus.CANCELED, q, effort_now, False, False,
                                                   "preempted by a new goal"))
            self._next_id += 1
            self._staged = (self._next_id, float(position), effort, velocity)
            return self._next_id

    def cancel(self, goal_id: int) -> None:
        with self._lock:
            self._cancel = goal_id

    def poll_results(self) -> list[GripperResult]:
        with self._lock:
            out, self._results = self._results, []
        return out

    def feedback(self) -> GripperFeedback | None:
        return self._feedback

    # ------------------------------------------------------------------ cycle
    def update(self, time: float, period: float) -> None:
        q, qd = self._position(), self._velocity()
        with self._lock:
            staged, self._staged = self._staged, None
            cancel, self._cancel = self._cancel, None
            if staged is not None:
                if self._active is not None:
                    self._finish(GoalStatus.CANCELED, False, False, "preempted by a new goal", q)
                self._active = staged[0]
                self._command = staged[1:]
                self._last_movement = time
            if cancel is not None and cancel == self._active:
                self._finish(GoalStatus.CANCELED, False, False, "canceled", q)
                self._command = (q, self.max_effort, self.max_velocity)
            if self._active is not None:
                self._check(time, q, qd)
        self._feedback = GripperFeedback(q, self._effort(), False, False)
        self._write()

    def _check(self, time: float, q: float, qd: float) -> None:
        if abs(self._command[0] - q) < self.goal_tolerance:
            self._finish(GoalStatus.SUCCEEDED, False, True, "reached the goal", q)
        elif abs(qd) > self.stall_velocity_threshold:
            self._last_movement = time
        elif time - self._last_movement > self.stall_timeout:
            status = GoalStatus.SUCCEEDED if self.allow_stalling else GoalStatus.ABORTED
            self._finish(status, True, False, f"stalled {abs(self._command[0] - q):.4g} short of the goal", q)

    def _finish(self, status: GoalStatus, stalled: bool, reached: bool, message: str, q: float | None = None) -> None:
        """Record the active goal's result (called under the lock)."""
        if self._active is None:
            return
        position = self._position() if q is None else q
        self._results.append(GripperResult(self._active, status, position, self._effort(), stalled, reached,
                                           message))
        self._active = None

    def effort_command(self, goal: float, max_effort: float, q: float, qd: float) -> float:
        """The effort loop: PD towards ``goal``, clamped to ``max_effort`` (<= 0 or NaN: the URDF limit; never above
        it, which the hardware would clamp to anyway)."""
        limit = min(max_effort, self.effort_limit) if math.isfinite(max_effort) and max_effort > 0.0 \
            else self.effort_limit
        tau = self.kp * (goal - q) - self.kd * qd
        if not math.isfinite(tau):
            return 0.0
        return max(-limit, min(limit, tau))

    def _write(self) -> None:
        ci = self.command_interfaces
        if ci is None:
            return
        if self.effort_mode:
            value = self.effort_command(self._command[0], self._command[1], self._position(), self._velocity())
            ci.set_value(f"{self.joint}/effort", value)
        else:
            ci.set_value(f"{self.joint}/position", self._command[0])
        if self.max_effort_interface:
            ci.set_value(self.max_effort_interface, self._command[1])
        if self.max_velocity_interface:
            ci.set_value(self.max_velocity_interface, self._command[2])

    def _state(self, field: str) -> float:
        si = self.state_interfaces
        name = f"{self.joint}/{field}"
        if si is not None and name in si.names:
            return float(si.value(name))
        return self.read_hardware_state(name)

    def _position(self) -> float:
        return self._state("position")

    def _velocity(self) -> float:
        return self._state("velocity")

    def _effort(self) -> float:
        return self.read_hardware_state(f"{self.joint}/effort")


class ParallelGripperActionController(GripperActionController):
    """parallel_gripper_action_controller/GripperActionController (control_msgs/action/ParallelGripperCommand)."""

    type_name = "parallel_gripper_action_controller/GripperActionController"
    PARAMS = (
        *_COMMON,
        _MAX_EFFORT,
        *_FORCE_LOOP,
        P("max_velocity", "double", 0.1, "velocity used when a goal gives none (written to max_velocity_interface "
          "when set)", minimum=0.0, unit="m/s or rad/s"),
        P("max_effort_interface", "string", "", "a command interface taking the goal's effort, e.g. "
          "<joint>/set_gripper_max_effort; empty: none claimed"),
        P("max_velocity_interface", "string", "", "a command interface taking the goal's velocity; empty: none "
          "claimed"),
        P("state_interfaces", "string[]", ["position", "velocity"], "state interfaces of the joint read "
          "(position and velocity are needed)"),
    )
    default_max_effort = 10.0

    def _read_params(self) -> None:
        super()._read_params()
        p = self.params
        self.max_velocity = p.float("max_velocity", 0.1, min_value=0.0)
        self.max_effort_interface = p.str("max_effort_interface", "")
        self.max_velocity_interface = p.str("max_velocity_interface", "")
        self.state_fields = p.str_list("state_interfaces", ["position", "velocity"])

    def on_configure(self) -> None:
        super().on_configure()
        missing = [f for f in ("position", "velocity") if f not in self.state_fields]
        if missing:
            raise self.error(f"parameter 'state_interfaces' = {self.state_fields} lacks {missing}")

    def state_interface_configuration(self) -> list[str]:
        return [f"{self.joint}/{f}" for f in self.state_fields]
