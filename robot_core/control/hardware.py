"""Hardware components: what a ``<ros2_control>`` block in the URDF turns into.

A HardwareComponent exports the state and command interfaces listed in its
block (``joint1/position`` ...), goes through the same lifecycle as
ros2_control hardware (unconfigured / inactive / active / finalized), and is
read and written once per control cycle by the manager. Concrete kinds live in
their own modules (topic-based, in-process simulator, generic mirror) and are
picked by the block's ``<plugin>`` through :func:`create_component`.

A component that loses its robot (no states for too long) marks itself failed
(``is_failed``); the manager then deactivates the controllers that command it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from robot_core.control.errors import ControlError
from robot_core.control.interfaces import InterfaceDescription
from robot_core.control.lifecycle import State, Transition, next_state, path_to
from robot_core.control.transmissions import TransmissionSet

if TYPE_CHECKING:
    from robot_core.control.interfaces import ResourceManager
    from robot_core.model.robot_model import RobotModel, Ros2Control


@dataclass
class InterfaceInfo:
    name: str
    initial_value: float | None = None
    min: float | None = None
    max: float | None = None
    data_type: str = "double"
    params: dict[str, str] = field(default_factory=dict)


@dataclass
class ComponentJointInfo:
    """A ``<joint>``, ``<sensor>`` or ``<gpio>`` inside a ros2_control block."""

    name: str
    command_interfaces: list[InterfaceInfo] = field(default_factory=list)
    state_interfaces: list[InterfaceInfo] = field(default_factory=list)
    params: dict[str, str] = field(default_factory=dict)

    def command_names(self) -> list[str]:
        return [i.name for i in self.command_interfaces]

    def state_names(self) -> list[str]:
        return [i.name for i in self.state_interfaces]


def _block_transmissions(robot: RobotModel, names: set[str]) -> TransmissionSet:
    """The robot's transmissions that drive a joint of the block."""
    return TransmissionSet.from_robot_transmissions(
        [t for t in robot.transmissions if any(tj.name in names for tj in t.joints)], names)


@dataclass
class HardwareInfo:
    """Plain copy of one ``<ros2_control>`` block (what ros2_control calls HardwareInfo)."""

    name: str
    type: str = "system"
    plugin: str = ""
    hardware_params: dict[str, str] = field(default_factory=dict)
    joints: list[ComponentJointInfo] = field(default_factory=list)
    sensors: list[ComponentJointInfo] = field(default_factory=list)
    gpios: list[ComponentJointInfo] = field(default_factory=list)
    transmissions: TransmissionSet = field(default_factory=TransmissionSet)

    @staticmethod
    def from_ros2_control(block: Ros2Control, robot: RobotModel | None = None) -> HardwareInfo:
        def iface(i: Any) -> InterfaceInfo:
            return InterfaceInfo(i.name, i.initial_value, i.min, i.max, i.data_type or "double", dict(i.params))

        def command(i: Any) -> InterfaceInfo:
            info = iface(i)
            info.name = COMMAND_INTERFACE_ALIASES.get(block.plugin, {}).get(info.name, info.name)
            return info

        joints = [ComponentJointInfo(j.name, [command(i) for i in j.command_interfaces],
                                     [iface(i) for i in j.state_interfaces], dict(j.params)) for j in block.joints]
        sensors = [ComponentJointInfo(s.name, [], [iface(i) for i in s.state_interfaces], dict(s.params))
                   for s in block.sensors]
        gpios = [ComponentJointInfo(g.name, [iface(i) for i in getattr(g, "command_interfaces", [])],
                                    [iface(i) for i in g.state_interfaces], dict(g.params)) for g in block.gpios]
        transmissions = TransmissionSet()
        if robot is not None and robot.transmissions:
            transmissions = _block_transmissions(robot, {j.name for j in joints})
        return HardwareInfo(block.name, (block.type or "system").lower(), block.plugin, dict(block.hardware_params),
                            joints, sensors, gpios, transmissions)

    @staticmethod
    def default_for_robot(robot: RobotModel, plugin: str = "robot_core/InProcessSimulator",
                          name: str | None = None) -> HardwareInfo:
        """A block for a robot without ``<ros2_control>``: every actuated joint with position/velocity/effort
        command and state interfaces (mimic joints: states only), initial positions from the model."""
        joints = []
        for j in robot.joints.values():
            if not j.is_scalar:
                continue
            states = [InterfaceInfo("position", j.initial_position), InterfaceInfo("velocity"), InterfaceInfo("effort")]
            cmds = [InterfaceInfo(c) for c in ("position", "velocity", "effort")] if j.is_actuated else []
            joints.append(ComponentJointInfo(j.name, cmds, states))
        return HardwareInfo(name or f"{robot.name}_system", "system", plugin, {}, joints,
                            transmissions=_block_transmissions(robot, {j.name for j in joints}))

    def param(self, key: str, default: str) -> str:
        return str(self.hardware_params.get(key, default))

    def float_param(self, key: str, default: float) -> float:
        raw = self.hardware_params.get(key)
        if raw is None or str(raw).strip() == "":
            return default
        try:
            return float(raw)
        except ValueError:
            raise ControlError(f"hardware component '{self.name}': parameter '{key}' must be a number, "
                               f"got '{raw}'") from None

    def bool_param(self, key: str, default: bool) -> bool:
        raw = self.hardware_params.get(key)
        if raw is None:
            return default
        text = str(raw).strip().lower()
        if text not in ("true", "false", "1", "0"):
            raise ControlError(f"hardware component '{self.name}': parameter '{key}' must be true or false, "
                               f"got '{raw}'")
        return text in ("true", "1")


class HardwareComponent:
    """Base class: interface export, lifecycle, read/write and failure reporting."""

    plugin_names: ClassVar[tuple[str, ...]] = ()

    def __init__(self, info: HardwareInfo):
        self.info = info
        self.name = info.name
        self.type = info.type
        self.plugin = info.plugin
        self.state = State.UNCONFIGURED
        self.is_async = False
        self.rw_rate = 0
        self.failure_reason = ""
        self._failed = False
        # Stamp (s) of the newest states read, when the robot stamps them; None: unknown (always current).
        # After a backwards time jump the manager waits until this is not after the new time.
        self.state_stamp: float | None = None
        self.rm: ResourceManager | None = None
        self.state_slice = slice(0, 0)
        self.command_slice = slice(0, 0)
        # Called with (component, failed: bool, reason) whenever the failure flag flips.
        self.on_failure_change: Callable[[HardwareComponent, bool, str], None] | None = None
        self._actuator_side: ActuatorSide | None = None

    # --- interfaces ----------------------------------------------------------
    def _all_items(self) -> list[ComponentJointInfo]:
        return [*self.info.joints, *self.info.sensors, *self.info.gpios, *self.actuator_items]

    @property
    def actuator_items(self) -> list[ComponentJointInfo]:
        """Actuator-side interfaces of the block's transmissions (see :class:`ActuatorSide`)."""
        if not hasattr(self, "_actuator_items"):
            self._actuator_items = ActuatorSide.items(self.info)
        return self._actuator_items

    def coupled_commands(self) -> dict[str, tuple[list[str], str]]:
        """Command interfaces that no two controllers may claim (the two sides of one transmission)."""
        return ActuatorSide.coupled(self.info, self.actuator_items)

    def export_state_interfaces(self) -> list[InterfaceDescription]:
        """States start at their ``initial_value`` or 0 (so a hold before the first read stays finite)."""
        return [InterfaceDescription(f"{item.name}/{i.name}", 0.0 if i.initial_value is None else i.initial_value,
                                     i.data_type) for item in self._all_items() for i in item.state_interfaces]

    def export_command_interfaces(self) -> list[InterfaceDescription]:
        """Commands start at their ``initial_value`` or NaN, which means "not commanded"."""
        return [InterfaceDescription(f"{item.name}/{i.name}", math.nan if i.initial_value is None else
                                     i.initial_value, i.data_type)
                for item in self._all_items() for i in item.command_interfaces]

    def bind(self, rm: ResourceManager, state_slice: slice, command_slice: slice) -> None:
        self.rm = rm
        self.state_slice = state_slice
        self.command_slice = command_slice
        self.on_bind()
        self._actuator_side = ActuatorSide(self) if self.actuator_items else None

    def propagate_states(self) -> None:
        """After ``read``: actuator states from the joint states (the manager calls it)."""
        if self._actuator_side is not None:
            self._actuator_side.states_from_joints()

    def propagate_commands(self) -> None:
        """Before ``write``: joint commands from claimed actuator commands (the manager calls it)."""
        if self._actuator_side is not None:
            self._actuator_side.commands_to_joints()

    def on_bind(self) -> None:
        """Hook: precompute index maps once interfaces have storage."""

    @property
    def state_names(self) -> list[str]:
        return [f"{item.name}/{i.name}" for item in self._all_items() for i in item.state_interfaces]

    @property
    def command_names(self) -> list[str]:
        return [f"{item.name}/{i.name}" for item in self._all_items() for i in item.command_interfaces]

    @property
    def states(self) -> np.ndarray:
        """Writable view of this component's state values."""
        assert self.rm is not None, f"hardware component '{self.name}' is not registered"
        return self.rm.state_values[self.state_slice]

    @property
    def commands(self) -> np.ndarray:
        """Writable view of this component's command values."""
        assert self.rm is not None, f"hardware component '{self.name}' is not registered"
        return self.rm.command_values[self.command_slice]

    @property
    def command_active(self) -> np.ndarray:
        """Which of this component's command interfaces are commanded (claimed, or releasing)."""
        assert self.rm is not None, f"hardware component '{self.name}' is not registered"
        return self.rm.command_active[self.command_slice]

    # --- failure -----------------------------------------------------------------
    @property
    def is_failed(self) -> bool:
        return self._failed

    def fail(self, reason: str) -> None:
        if not self._failed:
            self._failed = True
            self.failure_reason = reason
            if self.on_failure_change:
                self.on_failure_change(self, True, reason)

    def check_stale(self) -> None:
        """Hook: fail if the robot went silent. Called between cycles when no cycle runs (a stopped clock), so
        judge on wall time (``time.monotonic()``), never on the control clock."""

    def awaiting_states(self) -> str:
        """Why the states are not the robot's yet ("" once they are): a controller activated before would start
        from placeholders (a trajectory controller holding the initial values, a broadcaster publishing them).
        In-process robots have their states at once; a robot across a topic only after its first message."""
        return ""

    def recover(self, note: str = "") -> None:
        """``note``: what the recovery log line adds (e.g. how the robot was judged back)."""
        if self._failed:
            self._failed = False
            self.failure_reason = ""
            if self.on_failure_change:
                self.on_failure_change(self, False, note)

    # --- lifecycle ---------------------------------------------------------------
    def on_configure(self) -> None: ...

    def on_cleanup(self) -> None: ...

    def on_activate(self) -> None: ...

    def on_deactivate(self) -> None: ...

    def on_shutdown(self) -> None: ...

    def transition(self, transition: Transition) -> State:
        """Run one lifecycle transition; on a failing hook the state does not change."""
        target = next_state("Hardware component", self.name, self.state, transition)
        hook = {
            Transition.CONFIGURE: self.on_configure,
            Transition.CLEANUP: self.on_cleanup,
            Transition.ACTIVATE: self.on_activate,
            Transition.DEACTIVATE: self.on_deactivate,
            Transition.SHUTDOWN: self.on_shutdown,
        }[transition]
        try:
            hook()
        except ControlError:
            raise
        except Exception as exc:  # a plugin bug must not take the manager down
            raise ControlError(f"hardware component '{self.name}': {transition.value} failed: {exc}") from exc
        self.state = target
        return target

    def set_state(self, target: State | str | int) -> State:
        for t in path_to(self.state, State.parse(target)):
            self.transition(t)
        return self.state

    # --- cyclic ------------------------------------------------------------------
    def read(self, time: float, period: float) -> None:
        """Fill state interfaces from the robot."""

    def write(self, time: float, period: float) -> None:
        """Send command interfaces to the robot."""


_FIELDS = ("position", "velocity", "effort")


class ActuatorSide:
    """The actuator side of a component's transmissions, as interfaces next to the joints'.

    Every actuator of a transmission that drives a joint of the block gets ``<actuator>/position``,
    ``/velocity`` and ``/effort`` state interfaces, computed from the joint states after every read
    (``joint_to_actuator``), and the command interfaces its joints share. A controller may claim those
    instead of the joints': before every write the claimed actuator commands go through the transmission
    (``actuator_to_joint``) into the joints' command interfaces, which then count as commanded, so every
    hardware component (and the simulator behind it, which works in joint space) sees joint commands. An
    actuator of the same transmission left unclaimed holds its measured position. The two sides of one
    transmission cannot be claimed by two controllers at once (``coupled_commands``). An actuator named
    like a joint of the block gets no interfaces of its own (its names would clash).
    """

    @staticmethod
    def items(info: HardwareInfo) -> list[ComponentJointInfo]:
        trans = info.transmissions
        if not trans:
            return []
        joints = {j.name: j for j in info.joints}
        taken = {i.name for i in (*info.joints, *info.sensors, *info.gpios)}
        out = []
        for t in trans.items:
            with_commands = [set(joints[j].command_names()) for j in t.joints if j in joints
                             and joints[j].command_names()]
            shared = set.intersection(*with_commands) if with_commands else set()
            for a in t.actuators:
                if a in taken:
                    continue
                out.append(ComponentJointInfo(a, [InterfaceInfo(f) for f in _FIELDS if f in shared],
                                              [InterfaceInfo(f) for f in _FIELDS]))
        return out

    @staticmethod
    def coupled(info: HardwareInfo, items: list[ComponentJointInfo]) -> dict[str, tuple[list[str], str]]:
        trans = info.transmissions
        mine = {i.name: i for i in items}
        joints = {j.name: j for j in info.joints}
        out: dict[str, tuple[list[str], str]] = {}
        for t in trans.items:
            acts = [f"{a}/{c}" for a in t.actuators if a in mine for c in mine[a].command_names()]
            jts = [f"{j}/{c}" for j in t.joints if j in joints for c in joints[j].command_names()]
            why = f"transmission '{t.name}'"
            for a in acts:
                out[a] = (jts, why)
            for j in jts:
                out[j] = (acts, why)
        return out

    def __init__(self, comp: HardwareComponent):
        self.comp = comp
        trans = comp.info.transmissions
        self.trans = trans
        s_index = {n: i for i, n in enumerate(comp.state_names)}
        c_index = {n: i for i, n in enumerate(comp.command_names)}

        def table(index: dict[str, int], names: list[str], field: str) -> np.ndarray:
            return np.array([index.get(f"{n}/{field}", -1) for n in names], dtype=np.intp)

        jn, an = trans.joint_names, trans.actuator_names
        self.js = [table(s_index, jn, f) for f in _FIELDS]  # joint state slots (-1: not in the block)
        self.as_ = [table(s_index, an, f) for f in _FIELDS]  # actuator state slots
        self.ac = [table(c_index, an, f) for f in _FIELDS]  # actuator command slots
        self.jc = [table(c_index, jn, f) for f in _FIELDS]  # joint command slots
        # per actuator, the transmission it belongs to (to hold an unclaimed actuator of a driven transmission)
        owner = {a: k for k, t in enumerate(trans.items) for a in t.actuators}
        self.a_owner = np.array([owner[a] for a in an], dtype=np.intp)
        jowner = {j: k for k, t in enumerate(trans.items) for j in t.joints}
        self.j_owner = np.array([jowner[j] for j in jn], dtype=np.intp)
        self.driven = np.zeros(0, dtype=np.intp)  # joint command slots this layer set active last time
        self.ac_all = np.concatenate([c[c >= 0] for c in self.ac])
        self.any_commands = bool(len(self.ac_all))
        self._stacked = self._stacked_plan()
        # the non-matrix transmissions' state slots, per field, for the stacked path's per-cycle loop
        self._nonlinear = [(t, [s[j] for s in self.js], [s[a] for s in self.as_])
                           for t, j, a in self.trans.nonlinear]

    def _stacked_plan(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """The per-cycle state conversion of the linear transmissions as one gather, one product and one scatter
        (state slots of the joints' fields, offsets, matrix, slots of the actuators' fields): the general path,
        ~40 numpy calls, cost a 7-joint arm ~30 us of its 1 kHz cycle. None when a joint of one lacks a state."""
        joints, actuators, matrix, offsets = self.trans.stacked_joint_to_actuator()
        if not len(joints):
            return None
        gather = np.concatenate([s[joints] for s in self.js])
        if (gather < 0).any():
            return None
        scatter = np.concatenate([s[actuators] for s in self.as_])
        keep = scatter >= 0  # (an actuator named like a joint has no state slots of its own)
        return gather, offsets, np.ascontiguousarray(matrix[keep]), scatter[keep]

    @staticmethod
    def _gather(values: np.ndarray, slots: np.ndarray) -> np.ndarray:
        out = np.full(len(slots), np.nan)
        ok = slots >= 0
        out[ok] = values[slots[ok]]
        return out

    def states_from_joints(self) -> None:
        states = self.comp.states
        plan = self._stacked
        if plan is not None:
            gather, offsets, matrix, scatter = plan
            x = states[gather]
            x -= offsets
            if math.isfinite(np.add.reduce(x)):  # (else the general path keeps a NaN inside its transmission)
                states[scatter] = matrix @ x
                for t, joint_slots, actuator_slots in self._nonlinear:
                    self._store(states, actuator_slots,
                                t.joint_to_actuator(*(self._gather(states, s) for s in joint_slots)))
                return
        self._store(states, self.as_, self.trans.joint_to_actuator(*(self._gather(states, s) for s in self.js)))

    @staticmethod
    def _store(states: np.ndarray, slots_by_field: list[np.ndarray], values: tuple[np.ndarray, ...]) -> None:
        """The finite values where their slot exists (a NaN leaves the last state)."""
        for slots, vals in zip(slots_by_field, values, strict=True):
            ok = (slots >= 0) & np.isfinite(vals)
            states[slots[ok]] = vals[ok]

    def commands_to_joints(self) -> None:
        if not self.any_commands:
            return
        comp = self.comp
        commands, active, states = comp.commands, comp.command_active, comp.states
        if not len(self.driven) and not active[self.ac_all].any():
            return  # nobody commands an actuator (the usual case): nothing to do
        a_cmd = []
        driven_tr = np.zeros(len(self.trans.items), dtype=bool)
        on_fields = []
        for slots in self.ac:
            on = np.zeros(len(slots), dtype=bool)
            ok = slots >= 0
            on[ok] = active[slots[ok]] & np.isfinite(commands[slots[ok]])
            on_fields.append(on)
            driven_tr[self.a_owner[on]] = True
        if not driven_tr.any() and not len(self.driven):
            return
        for k, (slots, on) in enumerate(zip(self.ac, on_fields, strict=True)):
            vals = np.full(len(slots), np.nan)
            vals[on] = commands[slots[on]]
            if k == 0:  # an unclaimed actuator of a driven transmission holds its measured position
                hold = driven_tr[self.a_owner] & ~on
                vals[hold] = self._gather(states, self.as_[0])[hold]
            a_cmd.append(vals)
        j_cmd = self.trans.actuator_to_joint(*a_cmd)
        newly = []
        for k, (slots, vals) in enumerate(zip(self.jc, j_cmd, strict=True)):
            field_on = np.zeros(len(self.trans.items), dtype=bool)
            field_on[self.a_owner[on_fields[k]]] = True
            use = (slots >= 0) & np.isfinite(vals) & field_on[self.j_owner]
            commands[slots[use]] = vals[use]
            active[slots[use]] = True
            newly.append(slots[use])
        now = np.concatenate(newly) if newly else np.zeros(0, dtype=np.intp)
        stale = np.setdiff1d(self.driven, now)
        if len(stale):
            names = comp.command_names
            rm = comp.rm
            for i in stale:  # no longer driven through the transmission: not commanded unless claimed directly
                if rm is None or rm.claimed_by(names[i]) is None:
                    active[i] = False
        self.driven = now


_TOPIC_BASED = "robot_core.control.topic_based:TopicBasedComponent"
_GENERIC = "robot_core.control.generic_system:GenericSystem"
_IN_PROCESS = "robot_core.control.in_process_simulator:InProcessSimulatorComponent"

# Hardware of other simulators. A description written for one of them runs unchanged on robot_core's simulator
# node: the block is driven over the topic-based protocol (/robot_joint_states, /robot_joint_commands), which
# the simulator node serves; its simulator-specific <hardware> params (mujoco_model, pids_config_file, ...) have
# nothing to configure there (per-joint gains: physics/servo_gains.py).
SIMULATION_PLUGINS = (
    "gz_ros2_control/GazeboSimSystem",
    "ign_ros2_control/IgnitionSystem",
    "gazebo_ros2_control/GazeboSystem",
    "mujoco_ros2_control/MujocoSystemInterface",
    "mujoco_ros2_control/MujocoSystem",
)

# Command interfaces a plugin exports under another name: moveit/mujoco_ros2_control's MujocoSystem declares
# "position_pid" / "velocity_pid" to run the joint through its PID, and exports them as position / velocity.
COMMAND_INTERFACE_ALIASES = {
    "mujoco_ros2_control/MujocoSystem": {"position_pid": "position", "velocity_pid": "velocity"},
}

# plugin name -> "module:Class" (imported on first use)
HARDWARE_PLUGINS: dict[str, str] = {
    "topic_based_ros2_control/TopicBasedSystem": _TOPIC_BASED,
    "joint_state_topic_hardware_interface/JointStateTopicSystem": _TOPIC_BASED,
    "robot_core/TopicBasedSystem": _TOPIC_BASED,
    "mock_components/GenericSystem": _GENERIC,
    "robot_core/InProcessSimulator": _IN_PROCESS,
    **{name: _TOPIC_BASED for name in SIMULATION_PLUGINS},
}

# What each implementation is, for the one log line per component (plugin_report).
_ROLES = {
    _TOPIC_BASED: "topic-based hardware (states from '{states}', commands to '{commands}': the simulator node or a "
                  "robot speaking topic_based_ros2_control)",
    _GENERIC: "mock hardware whose states mirror its commands (mock_components/GenericSystem)",
    _IN_PROCESS: "the MuJoCo engine inside the controller manager (robot_core/InProcessSimulator, lockstep)",
}

IN_PROCESS_PLUGIN = "robot_core/InProcessSimulator"


def plugin_report(component: HardwareComponent) -> str:
    """One line saying which implementation the block's ``<plugin>`` was taken as (logged once per component)."""
    role = _ROLES[HARDWARE_PLUGINS[component.plugin]].format(
        states=component.info.param("joint_states_topic", "robot_joint_states"),
        commands=component.info.param("joint_commands_topic", "robot_joint_commands"))
    written = component.info.plugin or "(none)"
    how = "" if component.plugin == written else f" (replaced by '{component.plugin}')"
    return f"hardware component '{component.name}': <plugin> '{written}'{how} runs as {role}"


def component_class(plugin: str) -> type[HardwareComponent]:
    import importlib

    target = HARDWARE_PLUGINS.get(plugin)
    if target is None:
        raise ControlError(f"hardware plugin '{plugin}' is not available; known plugins: {sorted(HARDWARE_PLUGINS)}")
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)


def create_component(info: HardwareInfo, robot: RobotModel | None = None, plugin_override: str | None = None,
                     **kwargs: Any) -> HardwareComponent:
    """Instantiate the component for ``info.plugin`` (or ``plugin_override``, e.g. the in-process simulator)."""
    plugin = plugin_override or info.plugin
    cls = component_class(plugin)
    if plugin == IN_PROCESS_PLUGIN:
        if robot is None:
            raise ControlError(f"hardware component '{info.name}': the in-process simulator needs the robot model")
        comp = cls(info, robot, **kwargs)  # type: ignore[call-arg]
    else:
        comp = cls(info, **kwargs)  # type: ignore[call-arg]
    comp.plugin = plugin
    return comp
