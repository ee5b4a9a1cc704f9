"""ControllerManagerCore: ros2_control's controller manager without ROS.

It owns the hardware components (through a ResourceManager) and the loaded
controllers, answers every ``controller_manager_msgs`` service as a plain
method, and runs the control cycle::

    update(time, period):  read hardware -> update active controllers in load order -> write hardware

The rclpy node is a thin adapter: it calls these methods from its service
callbacks and its timer, converts the returned dataclasses to messages, and
publishes ``~/activity`` from ``on_activity``.

Threading: every public method takes ``self.lock`` (re-entrant), so a service
call made from another thread is applied between two cycles, atomically. A
switch is therefore always done "as soon as possible"; ``activate_asap`` is
accepted for API compatibility.

First states: a controller is not activated before the components it uses
have the robot's states (a topic-based robot: its first message). Until then
the state interfaces hold placeholders (initial values or 0), and a trajectory
controller activated on them would hold the robot there, a broadcaster would
publish them. A switch waits for them up to its ``timeout`` (the spawner's
``--switch-timeout``; outside the lock, so the cycles go on), then
refuses the controller, naming the component and its topic. This is the race
of a launch file that starts the robot, the manager and the spawners at once.

Refusals raise ControlError with ros2_control's wording, except
``switch_controller``, which returns SwitchResult(ok, message) because a
BEST_EFFORT switch can partly succeed.

Strictness: STRICT changes nothing unless everything can be done. BEST_EFFORT
does what it can and skips the rest (including, unlike upstream, a controller
whose interfaces are unavailable or taken: it is skipped instead of failing the
whole switch). AUTO and FORCE_AUTO exist upstream to pull chained
(ChainableControllerInterface) controllers in or out automatically; robot_core
has no chainable controllers, so, exactly like upstream today, they behave as
BEST_EFFORT. Strictness 0 (unset) also means BEST_EFFORT, upstream's default.

Safety on deactivation (normal switch, a failing update, failed hardware): the
released command interfaces are first set to a hold value -- position to the
measured position, velocity and acceleration to 0, effort kept at its last
finite value (else 0) -- then the controller's own ``on_deactivate`` may
overwrite them. The hold value is written to the hardware once more before the
interface turns "not commanded".

A component that fails (no states for ``state_timeout``, a read or write
that raised) goes inactive with its controllers, as ros2_control does on a
hardware error; the hold values of its released interfaces are written once
at the failure (a robot whose states stopped may still take commands) and
never later. A component that went inactive this way comes back
active by itself as soon as it recovers (states arrive again); its
controllers stay inactive until they are switched on again, so no goal or
command from before the failure acts on the robot that came back.

Time jumps: a cycle whose time is before the previous cycle's (simulator
reset, a restarted simulator) is a jump. The controllers are not updated
(nothing is written: the robot holds) until the hardware reports states
stamped after the jump, or at most ``JUMP_SETTLE_TIMEOUT`` wall seconds;
then every active controller's ``on_time_jump`` runs (the trajectory
controller aborts its goal and holds the measured position) and cycles go on.

Lifecycle work (constructing, configuring, cleaning up a controller) runs
outside ``self.lock``: only the checks before and the state swap after take
it, so a slow ``on_configure`` never stalls the control cycle.
"""

from __future__ import annotations

import logging
import math
import threading
import time as _time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any, cast

from robot_core.control.controller_base import ALL_INTERFACES, Controller, ReturnType
from robot_core.control.errors import ControlError
from robot_core.control.hardware import (
    HARDWARE_PLUGINS,
    HardwareComponent,
    HardwareInfo,
    create_component,
    plugin_report,
)
from robot_core.control.interfaces import ResourceManager, split_interface_name
from robot_core.control.lifecycle import State
from robot_core.control.messages import (
    ActivityData,
    ControllerStateData,
    HardwareComponentStateData,
    HardwareInterfaceData,
)
from robot_core.control.registry import ControllerRegistry, default_registry
from robot_core.text import clip

if TYPE_CHECKING:
    from robot_core.control.config import ControllerManagerConfig
    from robot_core.model.robot_model import RobotModel


# Plain references for the hot path (enum attribute lookups cost microseconds each).
_ACTIVE = State.ACTIVE
_INACTIVE = State.INACTIVE
_ERROR = ReturnType.ERROR
JUMP_SETTLE_TIMEOUT = 1.0  # s of wall time a time jump waits for the hardware's post-jump states


class Strictness(IntEnum):
    """controller_manager_msgs/SwitchController constants."""

    BEST_EFFORT = 1
    STRICT = 2
    AUTO = 3
    FORCE_AUTO = 4


@dataclass
class SwitchResult:
    ok: bool
    message: str = ""
    activated: list[str] = field(default_factory=list)
    deactivated: list[str] = field(default_factory=list)


@dataclass
class _Spec:
    controller: Controller
    type_name: str
    last_update: float | None = None
    required_commands: list[str] = field(default_factory=list)
    required_states: list[str] = field(default_factory=list)
    busy: str = ""  # a lifecycle transition running outside the lock ("configure", "cleanup")


class ControllerManagerCore:
    """Hardware + controllers + the read/update/write cycle."""

    def __init__(self, robot: RobotModel | None = None, update_rate: float = 100.0,
                 registry: ControllerRegistry | None = None,
                 on_activity: Callable[[ActivityData], None] | None = None,
                 logger: logging.Logger | None = None):
        if not update_rate > 0:
            raise ControlError(f"update_rate must be > 0 Hz, got {update_rate}")
        self.robot = robot
        self.update_rate = float(update_rate)
        self.registry = registry or default_registry
        self.rm = ResourceManager()
        self.on_activity = on_activity
        self.log = logger or logging.getLogger("robot_core.controller_manager")
        self.lock = threading.RLock()
        self.time = 0.0
        self._specs: dict[str, _Spec] = {}
        self._declared: dict[str, tuple[str | None, dict[str, Any]]] = {}
        self._newly_failed: list[HardwareComponent] = []
        self._newly_recovered: list[HardwareComponent] = []
        self._failed_inactive: set[str] = set()  # components this manager set inactive because they failed
        self._jump: tuple[float, float, float] | None = None  # (previous time, new time, wall deadline)
        self.time_jumps = 0

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_robot(cls, robot: RobotModel, update_rate: float = 100.0, plugin_override: str | None = None,
                   initial_state: State = State.ACTIVE, component_options: Mapping[str, Any] | None = None,
                   **kwargs: Any) -> ControllerManagerCore:
        """A manager with one component per ``<ros2_control>`` block of ``robot``.

        ``plugin_override`` replaces every block's plugin (e.g. "robot_core/InProcessSimulator" for the embedded
        mode); ``component_options`` are passed to each component's constructor. A robot without
        ``<ros2_control>`` gets one default block (all actuated joints, position/velocity/effort) when
        ``plugin_override`` is given.
        """
        cm = cls(robot, update_rate, **kwargs)
        if robot.ros2_control:
            infos = [HardwareInfo.from_ros2_control(block, robot) for block in robot.ros2_control]
        elif plugin_override:
            infos = [HardwareInfo.default_for_robot(robot, plugin_override)]
        else:
            raise ControlError(f"robot '{robot.name}' has no <ros2_control> block, so there is no hardware to control")
        for info in infos:
            comp = create_component(info, robot, plugin_override, **dict(component_options or {}))
            cm.add_hardware_component(comp, initial_state)
        return cm

    def apply_config(self, config: ControllerManagerConfig) -> None:
        """Take update_rate and the declared controllers (type + params) from a parsed YAML config."""
        with self.lock:
            if config.update_rate is not None:
                self.update_rate = float(config.update_rate)
            for name, spec in config.controllers.items():
                self.declare_controller(name, spec.type, spec.params)

    def add_hardware_component(self, component: HardwareComponent, initial_state: State | str = State.ACTIVE) -> None:
        if component.plugin in HARDWARE_PLUGINS:
            self.log.info(plugin_report(component))
        with self.lock:
            self.rm.add_component(component)
            component.on_failure_change = self._on_failure_change
            component.set_state(initial_state)
            self._notify()

    def declare_controller(self, name: str, type_name: str | None = None,
                           params: Mapping[str, Any] | None = None) -> None:
        """Remember a controller's type/params for a later ``load_controller(name)`` (the YAML / ROS params)."""
        with self.lock:
            old_type, old_params = self._declared.get(name, (None, {}))
            new_params = dict(old_params)
            if params:
                new_params.update(params)
            self._declared[name] = (type_name or old_type, new_params)

    def declared_controllers(self) -> dict[str, str | None]:
        return {n: t for n, (t, _) in self._declared.items()}

    # ------------------------------------------------------------------ queries
    def controller(self, name: str) -> Controller:
        spec = self._specs.get(name)
        if spec is None:
            raise ControlError(f"no controller named '{clip(name)}' is loaded")
        return spec.controller

    def controller_names(self) -> list[str]:
        return list(self._specs)

    @property
    def components(self) -> dict[str, HardwareComponent]:
        # the resource manager holds them as InterfaceOwners; every one was added here as a HardwareComponent
        return cast("dict[str, HardwareComponent]", self.rm.components)

    def simulator(self) -> HardwareComponent | None:
        """The in-process simulator component (its ``sim_time`` is the clock to run and publish), if any."""
        for comp in self.components.values():
            if hasattr(comp, "sim_time"):
                return comp
        return None

    def component(self, name: str) -> HardwareComponent:
        comp = self.components.get(name)
        if comp is None:
            raise ControlError(f"hardware component '{clip(name)}' does not exist; known: {list(self.rm.components)}")
        return comp

    # ------------------------------------------------------------------ load / configure / cleanup / unload
    def load_controller(self, name: str, type_name: str | None = None,
                        params: Mapping[str, Any] | None = None) -> Controller:
        with self.lock:
            if name in self._specs:
                raise ControlError(f"A controller named '{name}' was already loaded inside the controller manager")
            declared_type, declared_params = self._declared.get(name, (None, {}))
            type_name = type_name or declared_type
            if not type_name:
                raise ControlError(f"The 'type' param was not defined for '{clip(name)}'.")
            try:
                cls = self.registry.get(type_name)
            except ControlError as exc:
                raise ControlError(f"Loader for controller '{name}' (type '{type_name}') not found. {exc}") from None
            merged = dict(declared_params)
            if params:
                merged.update(params)
        # constructed outside the lock (a model-based controller builds its model here): the cycle goes on
        try:
            ctrl = cls(name, merged, self.robot, self.update_rate)
        except ControlError as exc:
            raise ControlError(f"Could not initialize the controller named '{name}': {exc}") from None
        except Exception as exc:
            raise ControlError(f"Could not initialize the controller named '{name}': {type(exc).__name__}: "
                               f"{exc}") from exc
        with self.lock:
            if name in self._specs:
                raise ControlError(f"A controller named '{name}' was already loaded inside the controller manager")
            self._specs[name] = _Spec(ctrl, type_name)
            self.log.info("Loaded controller '%s' of type '%s'", name, type_name)
            self._notify()
            return ctrl

    def set_controller_params(self, name: str, params: Mapping[str, Any]) -> None:
        """New parameters for a loaded, unconfigured controller (take effect at configure)."""
        with self.lock:
            self.controller(name).set_params(params)

    def configure_controller(self, name: str) -> None:
        """Configure (an inactive controller: clean up, then configure), the hooks running outside the lock."""
        with self.lock:
            spec = self._specs.get(name)
            if spec is None:
                raise ControlError(f"Could not configure controller with name '{clip(name)}' because no controller "
                                   f"with this name exists")
            self._check_not_busy(spec, "configured")
            ctrl = spec.controller
            if ctrl.state not in (State.INACTIVE, State.UNCONFIGURED):
                raise ControlError(f"Controller '{name}' can not be configured from '{ctrl.state.label}' state.")
            spec.busy = "configure"  # an inactive controller is not updated, so its hooks may run concurrently
        try:
            if ctrl.state == State.INACTIVE:
                # ros2_control re-configures an inactive controller by cleaning it up first.
                self._run_hook(ctrl, "cleanup", ctrl.on_cleanup)
                with self.lock:
                    ctrl.state = State.UNCONFIGURED
            self._run_hook(ctrl, "configure", ctrl.on_configure)
            if ctrl.update_rate > self.update_rate:
                self._run_hook(ctrl, "cleanup", ctrl.on_cleanup)
                raise ControlError(f"The controller '{name}' has an update rate: {ctrl.update_rate} Hz that is higher "
                                   f"than the controller manager's update rate: {self.update_rate:g} Hz.")
            with self.lock:
                spec.required_commands = self._resolve(ctrl.command_interface_configuration(), "command")
                spec.required_states = self._resolve(ctrl.state_interface_configuration(), "state")
                ctrl.state = State.INACTIVE
        finally:
            spec.busy = ""
        self.log.info("Configured controller '%s'", name)
        with self.lock:
            self._notify()

    def cleanup_controller(self, name: str) -> None:
        with self.lock:
            spec = self._specs.get(name)
            if spec is None:
                raise ControlError(f"Could not cleanup controller with name '{clip(name)}' because no controller "
                                   f"with this name exists")
            self._check_not_busy(spec, "cleaned-up")
            ctrl = spec.controller
            if ctrl.state != State.INACTIVE:
                raise ControlError(f"Controller '{name}' can not be cleaned-up from '{ctrl.state.label}' state.")
            spec.busy = "cleanup"
        try:
            self.log.info("Cleanup controller '%s'", name)
            self._run_hook(ctrl, "cleanup", ctrl.on_cleanup)
            with self.lock:
                ctrl.state = State.UNCONFIGURED
        finally:
            spec.busy = ""
        with self.lock:
            self._notify()

    @staticmethod
    def _check_not_busy(spec: _Spec, what: str) -> None:
        if spec.busy:
            raise ControlError(f"Controller '{spec.controller.name}' can not be {what} now: its {spec.busy} is "
                               f"still running")

    def unload_controller(self, name: str) -> None:
        with self.lock:
            spec = self._specs.get(name)
            if spec is None:
                raise ControlError(f"Could not unload controller with name '{clip(name)}' because no controller "
                                   f"with this name exists")
            self._check_not_busy(spec, "unloaded")
            ctrl = spec.controller
            if ctrl.state == State.ACTIVE:
                raise ControlError(f"Could not unload controller with name '{name}' because it is still active")
            try:
                if ctrl.state == State.INACTIVE:
                    ctrl.on_cleanup()
                ctrl.on_shutdown()
            except Exception as exc:  # unloading must not be blocked by a broken hook
                self.log.warning("controller '%s' raised while unloading: %s", name, exc)
            ctrl.state = State.FINALIZED
            del self._specs[name]
            self.log.info("Unloaded controller '%s'", name)
            self._notify()

    def _run_hook(self, ctrl: Controller, what: str, hook: Callable[[], Any]) -> None:
        try:
            result = hook()
        except ControlError as exc:
            raise ControlError(f"Controller '{ctrl.name}' failed to {what}: {exc}") from None
        except Exception as exc:
            raise ControlError(f"Controller '{ctrl.name}' failed to {what}: {type(exc).__name__}: {exc}") from exc
        if result is False or result == ReturnType.ERROR:
            raise ControlError(f"Controller '{ctrl.name}' failed to {what}")

    def _resolve(self, config: list[str] | str, kind: str) -> list[str]:
        if config == ALL_INTERFACES:
            return self.rm.state_interface_names() if kind == "state" else self.rm.command_interface_names()
        names = list(config)
        for n in names:
            split_interface_name(n)
        return names

    # ------------------------------------------------------------------ switching
    def switch_controller(self, activate: Sequence[str] = (), deactivate: Sequence[str] = (),
                          strictness: int = Strictness.STRICT, activate_asap: bool = True,
                          timeout: float = 0.0) -> SwitchResult:
        if activate and timeout > 0:
            self._wait_for_states(list(activate), float(timeout))
        with self.lock:
            result = self._switch(list(activate), list(deactivate), int(strictness), float(timeout))
            for line in result.message.splitlines():
                (self.log.info if result.ok else self.log.warning)("switch_controller: %s", line)
            if result.activated or result.deactivated:
                self._notify()
            return result

    def _wait_for_states(self, activate: list[str], timeout: float) -> None:
        """Block (without the lock) until the components ``activate`` uses have the robot's states, or timeout."""
        deadline = _time.monotonic() + timeout
        waiting = self._awaiting_states(activate)
        if waiting:
            self.log.info("switch_controller: waiting up to %g s for the robot's first states (%s)", timeout,
                          "; ".join(f"hardware component '{c}': {why}" for c, why in waiting.items()))
        while waiting and _time.monotonic() < deadline:
            _time.sleep(0.01)
            waiting = self._awaiting_states(activate)

    def _awaiting_states(self, controllers: Iterable[str]) -> dict[str, str]:
        """The components the controllers use whose states are not the robot's yet -> why. States that arrived
        since the last cycle are taken first: a stopped clock (a paused simulator) runs no cycle to take them."""
        with self.lock:
            used: set[str] = set()
            for n in controllers:
                spec = self._specs.get(n)
                if spec is None:
                    continue
                used.update(self.rm.state_component(i) for i in spec.required_states if self.rm.has_state_interface(i))
                used.update(self.rm.command_component(i) for i in spec.required_commands
                            if self.rm.has_command_interface(i))
            waiting: dict[str, str] = {}
            for name in sorted(used):
                comp = self.components[name]
                why = comp.awaiting_states()
                if why and comp.state in (_ACTIVE, _INACTIVE):
                    try:
                        comp.read(self.time, 0.0)
                        comp.propagate_states()
                    except Exception as exc:
                        comp.fail(f"read failed: {type(exc).__name__}: {exc}")
                    why = comp.awaiting_states()
                if why:
                    waiting[name] = why
            self._handle_failures()
            return waiting

    def _switch(self, activate: list[str], deactivate: list[str], strictness: int,
                timeout: float = 0.0) -> SwitchResult:
        if strictness not in (Strictness.BEST_EFFORT, Strictness.STRICT):
            # AUTO / FORCE_AUTO only matter for chained controllers (none here); 0 means "default".
            strictness = Strictness.BEST_EFFORT
        strict = strictness == Strictness.STRICT
        problems: list[str] = []

        def refuse(msg: str) -> SwitchResult | None:
            if strict:
                return SwitchResult(False, msg + "\nAborting, no controller is switched! ('STRICT' switch)")
            problems.append(msg)
            return None

        for action, names in (("deactivate", deactivate), ("activate", activate)):
            for n in list(names):
                if n not in self._specs:
                    r = refuse(f"Could not {action} controller with name '{clip(n)}' because no controller "
                               f"with this name exists")
                    if r:
                        return r
                    names.remove(n)
        if problems and not activate and not deactivate:
            # like upstream: a BEST_EFFORT switch naming only unknown controllers is an error
            return SwitchResult(False, "\n".join(problems))
        for n in list(activate):
            ctrl = self._specs[n].controller
            msg = None
            if self._specs[n].busy:
                msg = f"Controller with name '{n}' can not be activated now: its {self._specs[n].busy} is running."
            elif ctrl.state == State.UNCONFIGURED:
                msg = (f"Controller with name '{n}' is in 'unconfigured' state. The controller needs to be configured "
                       f"to be in 'inactive' state before it can be checked and activated.")
            elif ctrl.state == State.ACTIVE and n not in deactivate:
                msg = f"Controller with name '{n}' is already active."
            elif ctrl.state not in (State.INACTIVE, State.ACTIVE):
                msg = (f"Controller with name '{n}' is not in 'inactive' state. The controller needs to be in "
                       f"'inactive' state before it can be checked and activated.")
            if msg:
                r = refuse(msg)
                if r:
                    return r
                activate.remove(n)
        for n in list(deactivate):
            if self._specs[n].controller.state != State.ACTIVE:
                r = refuse(f"Controller with name '{n}' can not be deactivated since it is not active.")
                if r:
                    return r
                deactivate.remove(n)
        # interface availability, taking the deactivations of this same switch into account
        freed = {i for n in deactivate for i in self.rm.claimed_interfaces(n)}
        taken: dict[str, str] = {}
        for n in activate:
            msg = self._check_interfaces(n, freed, taken) or self._check_states(n, timeout)
            if msg:  # as upstream, whatever the strictness: an interface conflict refuses the whole switch
                return SwitchResult(False, "\n".join([*problems, msg]))
            for i in self._specs[n].required_commands:
                taken[i] = n
        if not activate and not deactivate:
            tail = "After checking the controllers, no controllers need to be activated or deactivated."
            ok = not problems or not strict
            return SwitchResult(ok, "\n".join([*problems, tail]))
        # perform: deactivations first, then activations
        done_d: list[str] = []
        for n in deactivate:
            self._deactivate(self._specs[n], reason="switch")
            done_d.append(n)
        done_a: list[str] = []
        failed: list[str] = []
        for n in activate:
            err = self._activate(self._specs[n])
            if err:
                problems.append(err)
                failed.append(n)
            else:
                done_a.append(n)
        if failed:  # upstream's wording; ok=false whatever the strictness
            head = ["Failed switching controllers.... ", f"Unable to activate controllers: [ {' '.join(failed)} ]"]
            return SwitchResult(False, "\n".join([*head, *problems]), done_a, done_d)
        lines = ["Successfully switched controllers!"]
        if not strict:
            if deactivate:
                lines.append(f"Deactivated controllers: [ {' '.join(deactivate)} ]")
            if activate:
                lines.append(f"Activated controllers: [ {' '.join(activate)} ]")
        return SwitchResult(True, "\n".join([*lines, *problems]), done_a, done_d)

    def _check_interfaces(self, name: str, freed: set[str], taken: dict[str, str]) -> str | None:
        spec = self._specs[name]
        for i in spec.required_commands:
            if not self.rm.has_command_interface(i) or not self.rm.command_interface_available(i):
                return f"Unable to activate controller '{name}' since the command interface '{i}' is not available."
            holder = self.rm.claimed_by(i)
            if holder is not None and holder != name and i not in freed:
                return (f"Unable to activate controller '{name}' since the command interface '{i}' is currently "
                        f"claimed by another controller ('{holder}').")
            if i in taken:
                return (f"Unable to activate controller '{name}' since the command interface '{i}' will be used by "
                        f"another controller that is being activated ('{taken[i]}').")
            coupled = self.rm.coupling_conflict(name, i, freed, taken)
            if coupled:
                return f"Unable to activate controller '{name}': {coupled}"
        for i in spec.required_states:
            if not self.rm.state_interface_available(i):
                return f"Unable to activate controller '{name}' since the state interface '{i}' is not available."
        return None

    def _check_states(self, name: str, waited: float) -> str | None:
        for comp, why in self._awaiting_states([name]).items():
            return (f"Unable to activate controller '{name}' since hardware component '{comp}' has no states from "
                    f"the robot yet ({why}; waited {waited:g} s, the switch's timeout): is the robot running?")
        return None

    def _activate(self, spec: _Spec) -> str | None:
        ctrl = spec.controller
        try:
            cmd = self.rm.claim(ctrl.name, spec.required_commands) if spec.required_commands else None
        except ControlError as exc:
            return str(exc)
        state = self.rm.loan_state(spec.required_states) if spec.required_states else None
        ctrl.assign_interfaces(cmd, state, self.rm.read_state)
        try:
            self._run_hook(ctrl, "activate", ctrl.on_activate)
        except ControlError as exc:
            self._hold_commands(spec.required_commands)
            self.rm.release(ctrl.name)
            ctrl.release_interfaces()
            return str(exc)
        ctrl.state = State.ACTIVE
        spec.last_update = None
        self.log.info("Activated controller '%s'", ctrl.name)
        return None

    def _deactivate(self, spec: _Spec, reason: str, detail: str = "") -> None:
        """``detail``: why, for the controller (``deactivation_reason``: e.g. a goal's abort message)."""
        ctrl = spec.controller
        claimed = self.rm.claimed_interfaces(ctrl.name)
        self._hold_commands(claimed)
        ctrl.deactivation_reason = detail
        try:
            ctrl.on_deactivate()
        except Exception as exc:
            self.log.error("controller '%s' raised in on_deactivate: %s", ctrl.name, exc)
        if reason == "error":
            try:
                ctrl.on_error()
            except Exception as exc:
                self.log.error("controller '%s' raised in on_error: %s", ctrl.name, exc)
        self.rm.release(ctrl.name)
        ctrl.release_interfaces()
        ctrl.state = State.INACTIVE
        ctrl.deactivation_reason = ""
        self.log.info("Deactivated controller '%s' (%s)", ctrl.name, reason)

    def _hold_commands(self, names: Iterable[str]) -> None:
        """Safe values for command interfaces that lose their controller (see module docstring)."""
        rm = self.rm
        for name in names:
            joint, iface = split_interface_name(name)
            current = rm.read_command(name)
            if iface == "position":
                measured = rm.read_state(f"{joint}/position")
                if math.isfinite(measured):
                    rm.write_command(name, measured)
            elif iface in ("velocity", "acceleration") or (iface == "effort" and not math.isfinite(current)):
                rm.write_command(name, 0.0)

    # ------------------------------------------------------------------ hardware lifecycle
    def set_hardware_component_state(self, name: str, target: State | str | int) -> State:
        with self.lock:
            comp = self.component(name)
            target_state = State.parse(target)
            if target_state == State.UNKNOWN:
                raise ControlError(f"hardware component '{name}': 'unknown' is not a target state")
            leaving_active = comp.state == State.ACTIVE and target_state != State.ACTIVE
            losing_states = target_state in (State.UNCONFIGURED, State.FINALIZED)
            if leaving_active or losing_states:
                self._deactivate_users(comp, include_state_users=losing_states,
                                       reason=f"hardware component '{name}' goes to '{target_state.label}'")
            comp.set_state(target_state)
            self._failed_inactive.discard(name)  # the user decides from now on
            self.log.info("hardware component '%s' is now '%s'", name, comp.state.label)
            self._notify()
            return comp.state

    def _deactivate_users(self, comp: HardwareComponent, include_state_users: bool, reason: str) -> list[str]:
        cmd = set(comp.command_names)
        st = set(comp.state_names)
        stopped = []
        for spec in self._specs.values():
            if spec.controller.state != State.ACTIVE:
                continue
            uses = bool(cmd.intersection(spec.required_commands)) or (
                include_state_users and bool(st.intersection(spec.required_states)))
            if uses:
                self._deactivate(spec, reason="error", detail=reason)
                stopped.append(spec.controller.name)
        if stopped:
            self.log.error("Deactivating controllers %s: %s", stopped, reason)
        return stopped

    def _on_failure_change(self, comp: HardwareComponent, failed: bool, reason: str) -> None:
        if failed:
            self.log.error("hardware component '%s' failed: %s", comp.name, reason)
            self._newly_failed.append(comp)
        else:
            self.log.info("hardware component '%s' recovered%s", comp.name, f": {reason}" if reason else "")
            self._newly_recovered.append(comp)

    # ------------------------------------------------------------------ the cycle
    def update(self, time: float, period: float) -> None:
        """One control cycle: read hardware, update active controllers in load order, write hardware.

        After a backwards time jump, cycles only read until the hardware caught up (see module docstring)."""
        with self.lock:
            if time < self.time:
                self._begin_time_jump(self.time, time)
            self.read(time, period)
            if self._jump is not None and not self._settle_time_jump(time):
                self.rm.end_write_cycle()
                return
            self.update_controllers(time, period)
            self.write(time, period)

    def _begin_time_jump(self, previous: float, now: float) -> None:
        self.time_jumps += 1
        self._jump = (previous, now, _time.monotonic() + JUMP_SETTLE_TIMEOUT)
        for spec in self._specs.values():
            spec.last_update = None  # a slower controller's schedule restarts at the new time
        self.log.warning("time jumped back from %.3f s to %.3f s (simulation reset?): controllers wait for the "
                         "hardware's states from after the jump", previous, now)

    def _settle_time_jump(self, time: float) -> bool:
        """True once every component reports states from after the jump (or the wait timed out); then the
        active controllers' ``on_time_jump`` hooks run."""
        assert self._jump is not None
        previous, now, deadline = self._jump
        stale = [c.name for c in self.rm.components.values()
                 if c.state is _ACTIVE and c.state_stamp is not None and c.state_stamp > time + 1e-9]
        if stale:
            if _time.monotonic() < deadline:
                return False
            self.log.warning("after the time jump, components %s still report states stamped after %.3f s; "
                             "going on", stale, time)
        self._jump = None
        failed = []
        for spec in self._specs.values():
            ctrl = spec.controller
            if ctrl.state is not _ACTIVE:
                continue
            try:
                ctrl.on_time_jump(previous, now)
            except Exception as exc:
                failed.append((spec, f"{type(exc).__name__}: {exc}"))
        for spec, why in failed:
            self.log.error("Controller '%s' failed to handle the time jump (%s); deactivating it",
                           spec.controller.name, why)
            self._deactivate(spec, reason="error", detail=f"failed to handle a time jump: {why}")
        if failed:
            self._notify()
        return True

    def watchdog(self) -> None:
        """Between cycles, when no cycle runs (the clock stopped): judge the hardware on wall time."""
        with self.lock:
            for comp in self.rm.components.values():
                if comp.state is _ACTIVE or comp.state is _INACTIVE:
                    comp.check_stale()
            self._handle_failures()

    def read(self, time: float, period: float) -> None:
        with self.lock:
            self.time = time
            for comp in self.rm.components.values():
                if comp.state is _ACTIVE or comp.state is _INACTIVE:
                    try:
                        comp.read(time, period)
                        comp.propagate_states()
                    except Exception as exc:
                        comp.fail(f"read failed: {type(exc).__name__}: {exc}")
            self._handle_failures()

    def _handle_failures(self) -> None:
        if not self._newly_failed and not self._newly_recovered:
            return
        changed = False
        for comp in self._newly_failed:
            if not comp.is_failed:
                continue  # recovered in the same pass
            if self._deactivate_users(comp, include_state_users=False,
                                      reason=f"hardware component '{comp.name}' failed: {comp.failure_reason}"):
                changed = True
            if comp.state is _ACTIVE:
                # the hold values of the released interfaces go out once now (a robot whose states stopped may
                # still take commands), and never later: they must not reach the robot that comes back
                try:
                    comp.propagate_commands()
                    comp.write(self.time, 0.0)
                except Exception as exc:
                    self.log.error("hardware component '%s': writing the hold failed: %s", comp.name, exc)
            self.rm.drop_holds(comp.command_names)
            if comp.state is _ACTIVE:
                try:
                    comp.set_state(State.INACTIVE)
                    self._failed_inactive.add(comp.name)
                    changed = True
                    self.log.error("hardware component '%s' is inactive until it recovers", comp.name)
                except ControlError as exc:
                    self.log.error("%s", exc)
        self._newly_failed.clear()
        for comp in self._newly_recovered:
            if comp.is_failed or comp.name not in self._failed_inactive:
                continue
            self._failed_inactive.discard(comp.name)
            if comp.state is _INACTIVE:
                try:
                    comp.set_state(State.ACTIVE)
                    changed = True
                    self.log.info("hardware component '%s' is active again; its controllers stay inactive until "
                                  "they are switched on", comp.name)
                except ControlError as exc:
                    self.log.error("%s", exc)
        self._newly_recovered.clear()
        if changed:
            self._notify()

    def update_controllers(self, time: float, period: float) -> list[str]:
        """Update the active controllers; returns the names of those deactivated because they failed."""
        with self.lock:
            failed: list[tuple[_Spec, str]] = []
            cm_rate = self.update_rate
            for spec in self._specs.values():
                ctrl = spec.controller
                if ctrl.state is not _ACTIVE:
                    continue
                rate = ctrl.update_rate
                if rate >= cm_rate:
                    actual = period
                elif spec.last_update is None:
                    actual = 1.0 / rate
                else:
                    actual = time - spec.last_update
                    now_err = abs(actual * rate - 1.0)
                    skip_err = abs((actual + 1.0 / cm_rate) * rate - 1.0)
                    if now_err > skip_err:
                        continue
                spec.last_update = time
                try:
                    ret = ctrl.update(time, actual)
                except Exception as exc:
                    failed.append((spec, f"{type(exc).__name__}: {exc}"))
                    continue
                if ret is False or ret is _ERROR:
                    failed.append((spec, "update returned ERROR"))
            for spec, why in failed:
                self.log.error("Controller '%s' failed in update (%s); deactivating it", spec.controller.name, why)
                self._deactivate(spec, reason="error")
            if failed:
                self._notify()
            return [s.controller.name for s, _ in failed]

    def write(self, time: float, period: float) -> None:
        with self.lock:
            for comp in self.rm.components.values():
                if comp.state is _ACTIVE:
                    try:
                        comp.propagate_commands()
                        comp.write(time, period)
                    except Exception as exc:
                        comp.fail(f"write failed: {type(exc).__name__}: {exc}")
            self.rm.end_write_cycle()
            self._handle_failures()

    # ------------------------------------------------------------------ listings
    def list_controllers(self) -> list[ControllerStateData]:
        with self.lock:
            out = []
            for name, spec in self._specs.items():
                ctrl = spec.controller
                out.append(ControllerStateData(
                    name=name, state=ctrl.state, type=spec.type_name, is_async=ctrl.is_async,
                    update_rate=int(ctrl.update_rate), claimed_interfaces=self.rm.claimed_interfaces(name),
                    required_command_interfaces=list(spec.required_commands),
                    required_state_interfaces=list(spec.required_states), is_chainable=ctrl.is_chainable))
            return out

    def list_controller_types(self) -> tuple[list[str], list[str]]:
        return self.registry.list_types()

    def reload_controller_libraries(self, force_kill: bool = False) -> None:
        with self.lock:
            active = [s for s in self._specs.values() if s.controller.state == State.ACTIVE]
            if active and not force_kill:  # as upstream, inactive and unconfigured ones are simply unloaded
                raise ControlError(f"Controller manager: Cannot reload controller libraries because there are still "
                                   f"{len(active)} active controllers")
            for spec in self._specs.values():
                if spec.controller.state == State.ACTIVE:
                    self._deactivate(spec, reason="reload")
            for name in list(self._specs):
                self.unload_controller(name)
            self.registry.reload()
            self._notify()

    def _iface_data(self, names: list[str], kind: str) -> list[HardwareInterfaceData]:
        rm = self.rm
        if kind == "command":
            return [HardwareInterfaceData(n, "double", rm.command_interface_available(n), rm.claimed_by(n) is not None)
                    for n in names]
        return [HardwareInterfaceData(n, "double", rm.state_interface_available(n), False) for n in names]

    def list_hardware_components(self) -> list[HardwareComponentStateData]:
        with self.lock:
            return [HardwareComponentStateData(
                name=c.name, type=c.type, plugin_name=c.plugin, state=c.state, is_async=c.is_async,
                rw_rate=int(c.rw_rate or self.update_rate),
                command_interfaces=self._iface_data(c.command_names, "command"),
                state_interfaces=self._iface_data(c.state_names, "state"),
                failed=c.is_failed, failure_reason=c.failure_reason) for c in self.rm.components.values()]

    def list_hardware_interfaces(self) -> tuple[list[HardwareInterfaceData], list[HardwareInterfaceData]]:
        with self.lock:
            return (self._iface_data(self.rm.command_interface_names(), "command"),
                    self._iface_data(self.rm.state_interface_names(), "state"))

    def activity(self) -> ActivityData:
        return ActivityData([(n, s.controller.state) for n, s in self._specs.items()],
                            [(c.name, c.state) for c in self.rm.components.values()], self.time)

    def _notify(self) -> None:
        if self.on_activity is not None:
            try:
                self.on_activity(self.activity())
            except Exception as exc:  # a publisher problem must not break the manager
                self.log.error("activity callback failed: %s", exc)

    def shutdown(self) -> None:
        """Deactivate and unload every controller, then finalize the hardware."""
        with self.lock:
            for spec in list(self._specs.values()):
                if spec.controller.state == State.ACTIVE:
                    self._deactivate(spec, reason="shutdown")
            self.write(self.time, 0.0)
            for name in list(self._specs):
                self.unload_controller(name)
            for comp in self.rm.components.values():
                if comp.state != State.FINALIZED:
                    try:
                        comp.set_state(State.FINALIZED)
                    except ControlError as exc:
                        self.log.error("%s", exc)
            self._notify()
