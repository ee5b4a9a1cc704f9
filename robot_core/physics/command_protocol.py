"""The topic-based joint command protocol, decoded without ROS: one JointState-shaped message -> joint commands.

The simulator node hands every message it receives on its commands topic to :meth:`JointCommandProtocol.parse`
and applies the result between two physics steps. Keeping the decoding here means every rule below is unit
tested without DDS, and the node stays a thin adapter.

Rules (a message is ``name`` plus ``position`` / ``velocity`` / ``effort`` arrays):

* Joints are matched by name; a message may carry any subset of the robot's joints, in any order. A joint that
  is not in the message keeps its last command.
* Each array is either empty (no such command in this message), as long as ``name`` (one value per joint), or
  -- upstream ``topic_based_ros2_control``'s layout -- as long as the number of named joints whose
  ``<ros2_control>`` block declares that command interface, holding their values in ``name`` order (e.g. the
  rc_arm's gripper has a position but no velocity interface, so ``velocity`` is one shorter than ``name``).
* NaN means "not commanded" (what ros2_control leaves in a command interface no controller claimed); it is
  skipped for that joint and field. +-inf is an error.
* Per joint, a finite position makes it position servoed, else a finite velocity makes it velocity servoed,
  else a finite effort makes it effort driven. The joint's other finite values act as feed-forwards of that
  servo (velocity and effort for position, effort for velocity), as in Isaac Sim's drives that receive both
  targets. A joint whose values are all NaN keeps its last command.
* Mimic joints may be named (upstream lists them); their values are ignored because they follow their master.
* Anything else -- an unknown or fixed joint, a joint named twice, an array of another length, an infinite
  value -- rejects the *whole* message with :class:`CommandRejectedError` whose text names the joint or field at
  fault; nothing of it is applied and the robot keeps doing what it did.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from robot_core.model.robot_model import RobotModel
from robot_core.text import clip

FIELDS = ("position", "velocity", "effort")


class CommandRejectedError(ValueError):
    """A command message that is dropped as a whole; the text says why."""


@dataclass(frozen=True)
class CommandGroup:
    """Joints that obey the same kind of command. A feed-forward array is None when no joint of the group was
    given one (the engine then clears it, as for zeros), else zeros where a joint's value was NaN. None keeps a
    plain position stream on the engine's fast path."""

    names: tuple[str, ...]
    positions: np.ndarray | None = None
    velocities: np.ndarray | None = None
    efforts: np.ndarray | None = None

    def __bool__(self) -> bool:
        return bool(self.names)


@dataclass(frozen=True)
class JointCommand:
    """One decoded message: at most one group per command mode (empty groups are falsy)."""

    position: CommandGroup
    velocity: CommandGroup
    effort: CommandGroup

    def groups(self) -> list[CommandGroup]:
        return [g for g in (self.position, self.velocity, self.effort) if g]

    @property
    def joint_names(self) -> list[str]:
        return [n for g in self.groups() for n in g.names]

    def apply(self, engine) -> None:
        """Send to a :class:`robot_core.physics.engine.PhysicsEngine` (or anything with ``set_commands``)."""
        for g in self.groups():
            engine.set_commands(g.names, g.positions, g.velocities, g.efforts)


EMPTY_GROUP = CommandGroup(())


def _short_list(names: Sequence[str], limit: int = 12) -> str:
    shown = ", ".join(clip(n) for n in names[:limit])
    return f"[{shown}{', ...' if len(names) > limit else ''}]"


class JointCommandProtocol:
    """Decoder of joint command messages for one robot.

    Args:
        actuated: joints that accept commands.
        mimic: joints that may be named but whose values are ignored.
        command_interfaces: joint -> command interfaces its ``<ros2_control>`` block declares; enables the
            packed (upstream) array layout. None: only the one-value-per-joint layout is accepted.
    """

    def __init__(self, actuated: Iterable[str], mimic: Iterable[str] = (),
                 command_interfaces: Mapping[str, Iterable[str]] | None = None):
        self.actuated = list(actuated)
        self._actuated = set(self.actuated)
        self._mimic = set(mimic)
        self._interfaces = ({j: frozenset(v) for j, v in command_interfaces.items()}
                            if command_interfaces is not None else None)
        # name lists seen before that name actuated joints only, each once (a node sends the same list every time)
        self._plain: dict[tuple[str, ...], bool] = {}

    @classmethod
    def for_robot(cls, robot: RobotModel, actuated: Iterable[str] | None = None) -> JointCommandProtocol:
        """From a RobotModel: its actuated and mimic joints and the command interfaces of its ros2_control.

        ``actuated`` overrides the commandable names, e.g. with the engine's, which also lists the
        coordinates of planar joints (``<joint>:u``, ``:v``, ``:rot``).
        """
        mimic = [j.name for j in robot.joints.values() if j.is_scalar and j.mimic is not None]
        interfaces: dict[str, set[str]] | None = None
        if robot.ros2_control:
            interfaces = {}
            for block in robot.ros2_control:
                for joint in block.joints:
                    interfaces.setdefault(joint.name, set()).update(i.name for i in joint.command_interfaces)
        return cls(robot.actuated_joint_names() if actuated is None else actuated, mimic, interfaces)

    def _check_names(self, names: Sequence[str]) -> None:
        seen: set[str] = set()
        for name in names:
            if name not in self._actuated and name not in self._mimic:
                raise CommandRejectedError(f"unknown joint '{clip(name)}' "
                                           f"(commandable joints: {_short_list(self.actuated)})")
            if name in seen:
                raise CommandRejectedError(f"joint '{clip(name)}' is named twice")
            seen.add(name)

    def _layout(self, field: str, size: int, names: Sequence[str]) -> np.ndarray | None:
        """Index into ``names`` of each value of ``field`` (None: the field is absent)."""
        n = len(names)
        if size == 0:
            return None
        if size == n:
            return np.arange(n)
        if self._interfaces is not None:
            owners = [k for k, nm in enumerate(names) if field in self._interfaces.get(nm, ())]
            if size == len(owners):
                return np.asarray(owners, dtype=int)
            expected = f"0, {n} (one per joint) or {len(owners)} (one per named joint with a {field} interface)"
        else:
            expected = f"0 or {n} (one per joint)"
        raise CommandRejectedError(f"'{field}' has {size} values for {n} joints {_short_list(list(names))}; "
                              f"expected {expected}")

    def parse(self, names: Sequence[str], position: Sequence[float] = (), velocity: Sequence[float] = (),
              effort: Sequence[float] = ()) -> JointCommand:
        """Decode one message; raises :class:`CommandRejectedError` (nothing applied) naming what is wrong."""
        key = names if names.__class__ is tuple else tuple(names)
        plain = self._plain.get(key)
        if plain is None:
            self._check_names(key)
            plain = all(nm in self._actuated for nm in key)
            if len(self._plain) >= 256:
                self._plain.clear()
            self._plain[key] = plain
        if plain:
            fast = self._parse_uniform(key, (position, velocity, effort))
            if fast is not None:
                return fast
        return self._parse_general(list(key), position, velocity, effort)

    @staticmethod
    def _parse_uniform(names: tuple[str, ...], fields: tuple[Sequence[float], ...]) -> JointCommand | None:
        """The usual stream, decoded with a few numpy calls: every field empty or one value per joint, all of
        them either finite or NaN, so every joint gets the same mode (the first field with finite values) and
        the later fields are feed-forwards or absent. None: the message needs :meth:`_parse_general` (which
        also names what is wrong)."""
        n = len(names)
        arrays: list[np.ndarray | None] = [None, None, None]
        mode = -1
        for row, values in enumerate(fields):
            size = len(values)
            if size == 0:
                continue
            if size != n:
                return None
            arr = np.array(values, dtype=float)
            if np.isfinite(arr).all():
                arrays[row] = arr
                if mode < 0:
                    mode = row
            elif not np.isnan(arr).all():
                return None  # some NaN, some not (or an inf)
        if mode < 0:
            return JointCommand(EMPTY_GROUP, EMPTY_GROUP, EMPTY_GROUP)  # all NaN: nothing commanded
        group = CommandGroup(names, *[a if r >= mode else None for r, a in enumerate(arrays)])
        return JointCommand(*[group if r == mode else EMPTY_GROUP for r in range(3)])

    def _parse_general(self, names: list[str], position: Sequence[float], velocity: Sequence[float],
                       effort: Sequence[float]) -> JointCommand:
        """Any valid message, joint by joint (mixed modes, NaN holes, mimic joints, the packed layout)."""
        n = len(names)
        table = np.full((3, n), np.nan)
        for row, (field, values) in enumerate(zip(FIELDS, (position, velocity, effort), strict=True)):
            arr = np.asarray(values, dtype=float).reshape(-1)
            where = self._layout(field, arr.size, names)
            if where is None:
                continue
            inf = np.isinf(arr)
            if inf.any():
                k = int(np.flatnonzero(inf)[0])
                raise CommandRejectedError(f"'{field}' of joint '{names[where[k]]}' is {arr[k]}, not a finite number")
            table[row, where] = arr
        keep = np.array([nm in self._actuated for nm in names], dtype=bool)
        given = np.isfinite(table)
        pos = keep & given[0]
        vel = keep & ~given[0] & given[1]
        eff = keep & ~given[0] & ~given[1] & given[2]
        ff = np.where(given, table, 0.0)

        def group(mask: np.ndarray, rows: tuple[int, ...]) -> CommandGroup:
            if not mask.any():
                return EMPTY_GROUP
            arrays: list[np.ndarray | None] = [None, None, None]
            for r in rows:
                if r == rows[0] or given[r, mask].any():  # a feed-forward nobody gave stays None
                    arrays[r] = ff[r, mask].copy()
            return CommandGroup(tuple(nm for nm, m in zip(names, mask, strict=True) if m), *arrays)

        return JointCommand(group(pos, (0, 1, 2)), group(vel, (1, 2)), group(eff, (2,)))


class DropReporter:
    """Throttles the warnings about dropped command messages, per reason: the first drop for a reason is
    logged at once, repeats of it at most once per ``period`` seconds, saying how many were dropped in between.
    A flood of one bad message cannot flood the log, a different problem is still reported at once, and no
    drop goes unmentioned."""

    MAX_REASONS = 256

    def __init__(self, log: Callable[[str], None], period: float = 2.0,
                 clock: Callable[[], float] = time.monotonic, prefix: str = "dropped joint command: "):
        self._log = log
        self._prefix = prefix
        self._period = period
        self._clock = clock
        self._last: dict[str, tuple[float, int]] = {}  # reason -> (time logged, drops suppressed since)
        self.dropped = 0

    def report(self, reason: str) -> bool:
        """Count one dropped message; returns True when a warning was logged for it."""
        self.dropped += 1
        now = self._clock()
        last = self._last.get(reason)
        if last is not None and now - last[0] < self._period:
            self._last[reason] = (last[0], last[1] + 1)
            return False
        extra = f" ({last[1]} more dropped for this reason since)" if last is not None and last[1] else ""
        self._log(f"{self._prefix}{reason}{extra}")
        if len(self._last) >= self.MAX_REASONS:
            self._last.clear()
        self._last[reason] = (now, 0)
        return True
