"""The Controller base class every robot_core controller derives from.

A controller is plain Python: the manager constructs it with its name and
``ros__parameters`` (``on_init`` validates what it can), drives it through the
lifecycle (``on_configure`` / ``on_activate`` / ``on_deactivate`` /
``on_cleanup``; a hook refuses by raising ControlError), hands it the
interfaces it asked for, and calls ``update(time, period)`` at its rate.

ROS-facing traffic never happens here. A controller exposes plain methods for
input (``set_command``, ``accept_goal``, ...) that the node calls from its
callbacks (so they must be thread-safe: they only stage data that ``update``
picks up), and publishes output with :meth:`Controller.emit`, which calls the
``output_sink`` the node installed (or just keeps the latest value per key).
Output that is costly to shape (joint names, per-field arrays) is emitted as a
:class:`Deferred`: the loop parks the raw arrays and whoever reads the value
(the node's publisher thread, a test) builds it, outside the control cycle.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

from robot_core.control.errors import ControlError
from robot_core.control.interfaces import InterfaceGroup
from robot_core.control.lifecycle import State
from robot_core.control.params import Params
from robot_core.parameter_spec import ParamSpec, spec_for

if TYPE_CHECKING:
    from robot_core.model.robot_model import RobotModel

CONTROLLER_INTERFACE = "controller_interface::ControllerInterface"
CHAINABLE_CONTROLLER_INTERFACE = "controller_interface::ChainableControllerInterface"

# Returned by *_interface_configuration() to ask for every available interface.
ALL_INTERFACES = "all"

#: read by the base class for every controller, so every table starts with it
UPDATE_RATE = ParamSpec(
    "update_rate", "int", 0, "rate at which the manager calls this controller's update; 0 = the manager's own "
    "update_rate; a rate above the manager's is refused at configure", read_only=False, minimum=0, unit="Hz")


class ReturnType(Enum):
    OK = 0
    ERROR = 1


_UNBUILT = object()


class Deferred:
    """A value built on first use from ``build(*args)``.

    The control loop has a budget of microseconds; building message-shaped data for every emitted output
    there (lists of names, NaN-filled field arrays, copies) cost more than the control itself. The arrays
    passed as ``args`` are handed over: the caller must not modify them afterwards. Attribute access is
    forwarded to the built value, so readers may treat a Deferred like the data it stands for.
    """

    __slots__ = ("_args", "_build", "_value")

    def __init__(self, build: Callable[..., Any], *args: Any):
        self._build = build
        self._args = args
        self._value: Any = _UNBUILT

    def get(self) -> Any:
        value = self._value
        if value is _UNBUILT:  # two threads racing here build the same value twice, which is harmless
            value = self._value = self._build(*self._args)
            self._args = ()
        return value

    def __getattr__(self, name: str) -> Any:
        return getattr(self.get(), name)


def resolve(data: Any) -> Any:
    """The value itself, building a :class:`Deferred` if needed."""
    return data.get() if type(data) is Deferred else data


class Outputs(dict):
    """Latest emitted value per key; reading builds deferred values."""

    def __getitem__(self, key: str) -> Any:
        return resolve(super().__getitem__(key))

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return resolve(super().get(key, default))


class Controller:
    """Base class. Subclasses set ``type_name`` and override the hooks they need."""

    type_name: ClassVar[str] = ""
    base_class: ClassVar[str] = CONTROLLER_INTERFACE
    is_chainable: ClassVar[bool] = False
    is_async: ClassVar[bool] = False
    #: every parameter the controller reads, declared once: validation (:class:`Params`), the node's descriptors,
    #: the read-only refusal and the doc page's table (doc/controllers/<module>.md) all come from here
    PARAMS: ClassVar[tuple[ParamSpec, ...]] = (UPDATE_RATE,)
    #: names of the read-only entries of PARAMS (upstream's ``read_only: true``), derived per subclass
    read_only_parameters: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.read_only_parameters = tuple(s.name for s in cls.PARAMS if s.read_only)

    @classmethod
    def param_spec(cls, name: str) -> ParamSpec | None:
        """The spec of a parameter name of this controller (a family member matches its family)."""
        return spec_for(cls.PARAMS, name)

    @classmethod
    def is_read_only(cls, name: str) -> bool:
        """Whether ``name`` is fixed once the controller's node exists (a set is refused)."""
        spec = cls.param_spec(name)
        return spec is not None and spec.read_only

    def __init__(self, name: str, params: Mapping[str, Any] | None = None, robot: RobotModel | None = None,
                 cm_update_rate: float = 100.0):
        self.name = name
        self.params = Params(name, params, self.PARAMS)
        self.robot = robot
        self.cm_update_rate = float(cm_update_rate)
        self.state = State.UNCONFIGURED
        self.command_interfaces: InterfaceGroup | None = None
        self.state_interfaces: InterfaceGroup | None = None
        self.output_sink: Callable[[str, Any], None] | None = None
        self.outputs: dict[str, Any] = Outputs()
        self._state_reader: Callable[[str], float] | None = None
        self._lock = threading.Lock()
        # Set by the manager while on_deactivate runs when the deactivation has a cause the controller's clients
        # should hear (failed hardware); "" for an ordinary switch.
        self.deactivation_reason = ""
        self.update_rate = self._read_update_rate()
        self.on_init()

    def _read_update_rate(self) -> int:
        rate = self.params.int("update_rate", 0, min_value=0)
        return rate if rate > 0 else round(self.cm_update_rate)

    def set_params(self, params: Mapping[str, Any] | None) -> None:
        """Replace the parameters (only while unconfigured; takes effect at the next configure)."""
        if self.state not in (State.UNCONFIGURED,):
            raise ControlError(f"Controller '{self.name}': parameters can only be replaced while unconfigured")
        self.params = Params(self.name, params, self.PARAMS)
        self.update_rate = self._read_update_rate()

    # --- lifecycle hooks (override) ---------------------------------------------
    def on_init(self) -> None:
        """Validate parameters that must be right before configure."""

    def on_configure(self) -> None: ...

    def on_activate(self) -> None: ...

    def on_deactivate(self) -> None: ...

    def on_cleanup(self) -> None: ...

    def on_shutdown(self) -> None: ...

    def on_time_jump(self, previous: float, now: float) -> None:
        """The control clock jumped back from ``previous`` to ``now`` (simulation reset). Called while active,
        before the first update after the jump, with the hardware's post-jump states already read. Anything
        scheduled on the old time (trajectories, timeouts, publish deadlines) must be dropped or re-timed."""

    def on_error(self) -> None:
        """Called after the manager deactivated this controller because its update failed."""

    # --- interfaces ------------------------------------------------------------
    def command_interface_configuration(self) -> list[str] | str:
        """Full names of the command interfaces to claim, or ALL_INTERFACES."""
        return []

    def state_interface_configuration(self) -> list[str] | str:
        """Full names of the state interfaces to read, or ALL_INTERFACES."""
        return []

    def assign_interfaces(self, command: InterfaceGroup | None, state: InterfaceGroup | None,
                          state_reader: Callable[[str], float] | None = None) -> None:
        self.command_interfaces = command
        self.state_interfaces = state
        self._state_reader = state_reader

    def release_interfaces(self) -> None:
        self.command_interfaces = None
        self.state_interfaces = None

    def read_hardware_state(self, name: str) -> float:
        """Any state interface of the hardware by name (NaN if unknown); for initialising holds."""
        return self._state_reader(name) if self._state_reader else math.nan

    # --- cyclic ------------------------------------------------------------------
    def update(self, time: float, period: float) -> ReturnType | bool | None:
        """One control step. Return ReturnType.ERROR / False (or raise) to be deactivated."""
        return ReturnType.OK

    # --- output ------------------------------------------------------------------
    def emit(self, key: str, data: Any) -> None:
        """Publish ``data`` (or a :class:`Deferred` of it) under ``key`` (e.g. "joint_states"); the node maps
        keys to topics."""
        self.outputs[key] = data
        sink = self.output_sink
        if sink is not None:
            sink(key, data)

    # --- helpers -------------------------------------------------------------------
    def error(self, message: str) -> ControlError:
        return ControlError(f"controller '{self.name}': {message}")

    def require_robot(self) -> RobotModel:
        if self.robot is None:
            raise self.error("needs the robot description (robot_description) but none was given")
        return self.robot
