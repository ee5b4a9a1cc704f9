"""State/command interface storage, loaning and exclusive claiming.

All interface values of all hardware components live in two flat numpy arrays
(one for states, one for commands). Each component owns a contiguous slice, so
a component reads/writes its values as one array view, and a controller gets an
InterfaceGroup (an index array into the same storage) so a 7-joint update is a
couple of vectorised numpy operations instead of dozens of Python calls.

A command interface is *active* while a controller claims it, and for one more
write after it was released (so the hold value written on release reaches the
robot) unless another interface of the same joint is claimed meanwhile;
inactive command interfaces are "not commanded" and hardware must not act on
them (the topic-based component sends NaN for them, the in-process simulator
leaves that joint's previous command in place).

Names follow ros2_control: ``<prefix>/<interface>`` (``joint1/position``,
``imu/orientation.x``); the prefix is everything before the last '/'.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from robot_core.control.errors import ControlError
from robot_core.control.lifecycle import State

STANDARD_INTERFACES = ("position", "velocity", "acceleration", "effort")


def split_interface_name(full_name: str) -> tuple[str, str]:
    """``"joint1/position"`` -> ``("joint1", "position")``."""
    prefix, sep, iface = full_name.rpartition("/")
    if not sep or not prefix or not iface:
        raise ControlError(f"interface name '{full_name}' is not of the form '<joint>/<interface>'")
    return prefix, iface


class InterfaceOwner(Protocol):
    """What the resource manager needs of a hardware component (control/hardware.py's HardwareComponent is one).

    A protocol here, not an import of hardware.py, because hardware.py builds on this module.
    """

    name: str
    # Simulated (control clock) time the component's current state values were measured at, where it knows it
    # (a topic-based robot's message stamp); None where its state is always that of the cycle (in-process).
    state_stamp: float | None

    @property
    def state(self) -> State: ...

    @property
    def is_failed(self) -> bool: ...

    def export_state_interfaces(self) -> list[InterfaceDescription]: ...

    def export_command_interfaces(self) -> list[InterfaceDescription]: ...

    def bind(self, resources: ResourceManager, state_slice: slice, command_slice: slice) -> None: ...


@dataclass
class InterfaceDescription:
    """One exported interface: full name, initial value and data type."""

    name: str
    initial_value: float = math.nan
    data_type: str = "double"

    @property
    def prefix(self) -> str:
        return split_interface_name(self.name)[0]

    @property
    def interface(self) -> str:
        return split_interface_name(self.name)[1]


class InterfaceGroup:
    """A loaned, ordered set of interfaces with vectorised get/set.

    ``get()`` returns a fresh array in ``names`` order; ``set(values)`` writes
    all of them. Command groups are writable, state groups read-only.
    """

    def __init__(self, rm: ResourceManager, kind: str, names: Sequence[str], indices: np.ndarray, writable: bool):
        self._rm = rm
        self._kind = kind
        self.names: list[str] = list(names)
        self.indices = np.asarray(indices, dtype=np.intp)
        self.writable = writable
        self._pos = {n: i for i, n in enumerate(self.names)}
        self._owners: list[InterfaceOwner] | None = None  # the state components, found at the first state_stamp()

    def __len__(self) -> int:
        return len(self.names)

    def _storage(self) -> np.ndarray:
        return self._rm.state_values if self._kind == "state" else self._rm.command_values

    def get(self) -> np.ndarray:
        return self._storage()[self.indices]

    def set(self, values: np.ndarray | Sequence[float]) -> None:
        if not self.writable:
            raise ControlError("state interfaces are read-only")
        self._storage()[self.indices] = values

    def state_stamp(self) -> float | None:
        """When the values :meth:`get` returns were measured: the oldest ``state_stamp`` of the components they come
        from, None if none of them knows (an in-process simulator's state is always the cycle's own). A robot on
        DDS may deliver its state late under load; a controller judging a tracking error compares it with the
        reference of that moment, not of the cycle."""
        owners = self._owners
        if owners is None:
            names = {self._rm.state_component(n) for n in self.names} if self._kind == "state" else set()
            owners = self._owners = [self._rm.components[n] for n in sorted(names)]
        stamps = [c.state_stamp for c in owners if c.state_stamp is not None]
        return min(stamps) if stamps else None

    def index_of(self, name: str) -> int:
        try:
            return self._pos[name]
        except KeyError:
            raise ControlError(f"interface '{name}' is not part of this group {self.names}") from None

    def value(self, name: str) -> float:
        return float(self._storage()[self.indices[self.index_of(name)]])

    def set_value(self, name: str, value: float) -> None:
        if not self.writable:
            raise ControlError("state interfaces are read-only")
        self._storage()[self.indices[self.index_of(name)]] = value

    def subset(self, names: Sequence[str]) -> InterfaceGroup:
        """A group over some of these interfaces, in the given order."""
        return InterfaceGroup(self._rm, self._kind, names, self.indices[[self.index_of(n) for n in names]],
                              self.writable)


class ResourceManager:
    """Owns interface values, knows which component exports what, and who claimed which command."""

    def __init__(self) -> None:
        self.state_values = np.zeros(0)
        self.command_values = np.zeros(0)
        self._state_index: dict[str, int] = {}
        self._command_index: dict[str, int] = {}
        self._state_desc: list[InterfaceDescription] = []
        self._command_desc: list[InterfaceDescription] = []
        self._state_owner: dict[str, str] = {}  # interface -> component name
        self._command_owner: dict[str, str] = {}
        self._claims: dict[str, str] = {}  # command interface -> controller name
        self.command_active = np.zeros(0, dtype=bool)
        self._hold_pending: list[int] = []
        self.components: dict[str, InterfaceOwner] = {}
        # command interface -> (the interfaces it cannot be claimed together with, why): the actuator and joint
        # sides of one transmission drive the same motors
        self.coupled: dict[str, tuple[list[str], str]] = {}

    # --- registration ------------------------------------------------------
    def add_component(self, component: InterfaceOwner) -> None:
        """Register a component's interfaces; it gets contiguous slices of both arrays."""
        if component.name in self.components:
            raise ControlError(f"a hardware component named '{component.name}' is already registered")
        states = component.export_state_interfaces()
        commands = component.export_command_interfaces()
        for desc in states:
            if desc.name in self._state_index:
                raise ControlError(f"hardware component '{component.name}': state interface '{desc.name}' "
                                   f"is already exported by '{self._state_owner[desc.name]}'")
        for desc in commands:
            if desc.name in self._command_index:
                raise ControlError(f"hardware component '{component.name}': command interface '{desc.name}' "
                                   f"is already exported by '{self._command_owner[desc.name]}'")
        s0, c0 = len(self._state_desc), len(self._command_desc)
        for i, desc in enumerate(states):
            self._state_index[desc.name] = s0 + i
            self._state_owner[desc.name] = component.name
        for i, desc in enumerate(commands):
            self._command_index[desc.name] = c0 + i
            self._command_owner[desc.name] = component.name
        self._state_desc.extend(states)
        self._command_desc.extend(commands)
        self.state_values = np.concatenate([self.state_values, [d.initial_value for d in states]])
        self.command_values = np.concatenate([self.command_values, [d.initial_value for d in commands]])
        self.command_active = np.concatenate([self.command_active, np.zeros(len(commands), dtype=bool)])
        self.components[component.name] = component
        self.coupled.update(getattr(component, "coupled_commands", dict)())
        component.bind(self, slice(s0, s0 + len(states)), slice(c0, c0 + len(commands)))

    # --- queries -----------------------------------------------------------
    def state_interface_names(self) -> list[str]:
        return [d.name for d in self._state_desc]

    def command_interface_names(self) -> list[str]:
        return [d.name for d in self._command_desc]

    def state_descriptions(self) -> list[InterfaceDescription]:
        return list(self._state_desc)

    def command_descriptions(self) -> list[InterfaceDescription]:
        return list(self._command_desc)

    def has_state_interface(self, name: str) -> bool:
        return name in self._state_index

    def has_command_interface(self, name: str) -> bool:
        return name in self._command_index

    def state_component(self, name: str) -> str:
        return self._state_owner[name]

    def command_component(self, name: str) -> str:
        return self._command_owner[name]

    def state_interface_available(self, name: str) -> bool:
        """Readable when its component is inactive or active (ros2_control rule)."""
        owner = self._state_owner.get(name)
        return owner is not None and self.components[owner].state in (State.INACTIVE, State.ACTIVE)

    def command_interface_available(self, name: str) -> bool:
        """Claimable only when its component is active and not failed."""
        owner = self._command_owner.get(name)
        if owner is None:
            return False
        comp = self.components[owner]
        return comp.state == State.ACTIVE and not comp.is_failed

    def claimed_by(self, name: str) -> str | None:
        return self._claims.get(name)

    def claimed_interfaces(self, owner: str) -> list[str]:
        return [n for n in self.command_interface_names() if self._claims.get(n) == owner]

    def read_state(self, name: str) -> float:
        idx = self._state_index.get(name)
        return math.nan if idx is None else float(self.state_values[idx])

    def read_command(self, name: str) -> float:
        idx = self._command_index.get(name)
        return math.nan if idx is None else float(self.command_values[idx])

    def write_command(self, name: str, value: float) -> None:
        self.command_values[self._command_index[name]] = value

    # --- claiming ----------------------------------------------------------
    def check_claimable(self, owner: str, names: Iterable[str]) -> None:
        """Raise ControlError if ``owner`` could not claim all of ``names`` now."""
        for name in names:
            if name not in self._command_index:
                raise ControlError(f"command interface '{name}' does not exist (controller '{owner}')")
            if not self.command_interface_available(name):
                raise ControlError(f"Unable to activate controller '{owner}' since the command interface "
                                   f"'{name}' is not available.")
            holder = self._claims.get(name)
            if holder is not None and holder != owner:
                raise ControlError(f"Resource conflict for controller '{owner}'. Command interface '{name}' "
                                   f"is already claimed (by '{holder}').")
            conflict = self.coupling_conflict(owner, name)
            if conflict:
                raise ControlError(f"Resource conflict for controller '{owner}'. {conflict}")

    def coupling_conflict(self, owner: str, name: str, freed: Iterable[str] = (),
                          taken: dict[str, str] | None = None) -> str | None:
        """Why ``owner`` may not claim ``name`` while another controller holds (or, in ``taken``, is about to
        hold) an interface coupled to it through a transmission; None when it may."""
        others, why = self.coupled.get(name, ((), ""))
        for other in others:
            holder = self._claims.get(other)
            if holder is not None and holder != owner and other not in freed:
                return (f"Command interface '{name}' is coupled to '{other}' ({why}), which is claimed by "
                        f"'{holder}'.")
            if taken and other in taken and taken[other] != owner:
                return (f"Command interface '{name}' is coupled to '{other}' ({why}), which controller "
                        f"'{taken[other]}' is being activated with.")
        return None

    def claim(self, owner: str, names: Sequence[str]) -> InterfaceGroup:
        """Claim all of ``names`` for ``owner`` or none of them; returns the writable group."""
        self.check_claimable(owner, names)
        for name in names:
            self._claims[name] = owner
            self.command_active[self._command_index[name]] = True
        if self._hold_pending:
            # A joint taken over through another interface needs no hold write of the released one.
            prefixes = {split_interface_name(n)[0] for n in names}
            for i in list(self._hold_pending):
                desc = self._command_desc[i]
                if desc.prefix in prefixes and desc.name not in self._claims:
                    self.command_active[i] = False
                    self._hold_pending.remove(i)
        return self.loan_command(names)

    def release(self, owner: str) -> list[str]:
        """Drop ``owner``'s claims; the interfaces stay active for one more write (the hold value)."""
        released = [n for n, o in self._claims.items() if o == owner]
        for n in released:
            del self._claims[n]
            self._hold_pending.append(self._command_index[n])
        return released

    def end_write_cycle(self) -> None:
        """Called after every hardware write: released interfaces become inactive."""
        if self._hold_pending:
            for i in self._hold_pending:
                if self._command_desc[i].name not in self._claims:
                    self.command_active[i] = False
            self._hold_pending.clear()

    def drop_holds(self, names: Iterable[str]) -> None:
        """Released interfaces among ``names`` turn inactive now, without their hold write (failed hardware)."""
        drop = {self._command_index[n] for n in names if n in self._command_index}
        keep = []
        for i in self._hold_pending:
            if i in drop and self._command_desc[i].name not in self._claims:
                self.command_active[i] = False
            else:
                keep.append(i)
        self._hold_pending[:] = keep

    def loan_state(self, names: Sequence[str]) -> InterfaceGroup:
        missing = [n for n in names if n not in self._state_index]
        if missing:
            raise ControlError(f"state interfaces {missing} do not exist")
        return InterfaceGroup(self, "state", names, np.array([self._state_index[n] for n in names], dtype=np.intp),
                              writable=False)

    def loan_command(self, names: Sequence[str]) -> InterfaceGroup:
        missing = [n for n in names if n not in self._command_index]
        if missing:
            raise ControlError(f"command interfaces {missing} do not exist")
        return InterfaceGroup(self, "command", names,
                              np.array([self._command_index[n] for n in names], dtype=np.intp), writable=True)
