"""Lifecycle states and transitions shared by controllers and hardware components.

ros2_control drives both controllers and hardware through the managed-node
state machine: unconfigured -> inactive -> active, back again, and finalized
at the end. Only the primary states matter to users (they appear in
``list_controllers`` and ``~/activity``), so the transient states are not
modelled. The ids match ``lifecycle_msgs/msg/State``.
"""

from __future__ import annotations

from enum import StrEnum

from robot_core.control.errors import ControlError


class State(StrEnum):
    """A primary lifecycle state; the value is the label ros2_control prints."""

    UNKNOWN = "unknown"
    UNCONFIGURED = "unconfigured"
    INACTIVE = "inactive"
    ACTIVE = "active"
    FINALIZED = "finalized"

    @property
    def id(self) -> int:
        """The ``lifecycle_msgs/msg/State`` id of this state."""
        return _IDS[self]

    @property
    def label(self) -> str:
        return self.value

    @staticmethod
    def parse(value: State | str | int) -> State:
        """Accept a State, a label (any case) or a lifecycle_msgs id."""
        if isinstance(value, State):
            return value
        if isinstance(value, int):
            for state, sid in _IDS.items():
                if sid == value:
                    return state
            raise ControlError(f"unknown lifecycle state id {value}")
        try:
            return State(str(value).strip().lower())
        except ValueError:
            raise ControlError(f"unknown lifecycle state '{value}'") from None


_IDS = {State.UNKNOWN: 0, State.UNCONFIGURED: 1, State.INACTIVE: 2, State.ACTIVE: 3, State.FINALIZED: 4}


class Transition(StrEnum):
    CONFIGURE = "configure"
    CLEANUP = "cleanup"
    ACTIVATE = "activate"
    DEACTIVATE = "deactivate"
    SHUTDOWN = "shutdown"

    @property
    def past_participle(self) -> str:
        return _PARTICIPLES[self]


_PARTICIPLES = {
    Transition.CONFIGURE: "configured",
    Transition.CLEANUP: "cleaned-up",
    Transition.ACTIVATE: "activated",
    Transition.DEACTIVATE: "deactivated",
    Transition.SHUTDOWN: "shut down",
}

# (from, transition) -> to. Anything not listed is illegal.
TRANSITIONS: dict[tuple[State, Transition], State] = {
    (State.UNCONFIGURED, Transition.CONFIGURE): State.INACTIVE,
    (State.INACTIVE, Transition.CLEANUP): State.UNCONFIGURED,
    (State.INACTIVE, Transition.ACTIVATE): State.ACTIVE,
    (State.ACTIVE, Transition.DEACTIVATE): State.INACTIVE,
    (State.UNCONFIGURED, Transition.SHUTDOWN): State.FINALIZED,
    (State.INACTIVE, Transition.SHUTDOWN): State.FINALIZED,
    (State.ACTIVE, Transition.SHUTDOWN): State.FINALIZED,
}


def next_state(kind: str, name: str, current: State, transition: Transition) -> State:
    """The state after ``transition``; raises ControlError worded like ros2_control when illegal.

    ``kind`` is "Controller" or "Hardware component" and only shapes the message.
    """
    target = TRANSITIONS.get((current, transition))
    if target is None:
        raise ControlError(
            f"{kind} '{name}' can not be {transition.past_participle} from '{current.label}' state."
        )
    return target


def path_to(current: State, target: State) -> list[Transition]:
    """The transitions that lead from ``current`` to ``target`` (empty if already there).

    Used by ``set_hardware_component_state``, which, like ros2_control, walks
    through intermediate states (unconfigured -> active configures, then activates).
    """
    if current == target:
        return []
    if current == State.FINALIZED:
        raise ControlError(f"can not leave '{State.FINALIZED.label}' state")
    if target == State.FINALIZED:
        return [Transition.SHUTDOWN]
    order = [State.UNCONFIGURED, State.INACTIVE, State.ACTIVE]
    if target not in order or current not in order:
        raise ControlError(f"no transition from '{current.label}' to '{target.label}'")
    i, j = order.index(current), order.index(target)
    up = [Transition.CONFIGURE, Transition.ACTIVATE]
    down = [Transition.CLEANUP, Transition.DEACTIVATE]
    if j > i:
        return up[i:j]
    return [down[k] for k in range(i - 1, j - 1, -1)]
