"""Topic-based hardware: the robot is whatever publishes JointState and listens for JointState commands.

This is the ROS-free half of ``topic_based_ros2_control/TopicBasedSystem``:
the node adapter subscribes ``joint_states_topic`` and hands every message to
:meth:`TopicBasedComponent.on_joint_state`, and publishes whatever
:meth:`write` passes to ``command_sink`` on ``joint_commands_topic``.

Behaviour (upstream's, plus a staleness check):

* States are matched by joint name; a message may carry a subset of joints;
  ``velocity``/``effort`` may be empty; non-finite values are skipped. Several
  messages between two reads are merged (newest value per joint wins).
* ``sum_wrapped_joint_states: true`` accumulates positions reported wrapped
  (e.g. Isaac Sim's +-2pi) into a continuous angle.
* Per-joint ``<param name="mimic">`` / ``multiplier`` make a joint follow another.
* Commands: one sensor_msgs/JointState per group of joints commanded through the
  same fields this cycle (usually one message). Each message names only those
  joints and carries only their commanded arrays (e.g. position and velocity for
  a JTC with both interfaces), the others empty, so every value on the wire is a
  real command: receivers that drop
  messages with non-finite values (our simulator does, as the protocol asks)
  never see a placeholder. A joint whose interface no controller claims is left
  out, and the robot keeps that joint's last command; a released interface is
  sent once more with its hold value (position: measured position; velocity: 0).
  With one command interface per joint, as in most robots, this is exactly one
  message per cycle, laid out as upstream's.
* ``trigger_joint_command_threshold`` (default 1e-5): a command is published only
  if the summed |position state - position command| exceeds it; -1 publishes
  every cycle (a NaN difference always publishes). It only gates position
  commands: while a velocity or effort command is claimed every cycle publishes.
* ``use_initial_states_as_initial_commands: true``: nothing is published until
  the first state arrived, then commands start from the measured state.
* ``state_timeout`` (seconds of wall time, default 1.0, 0 disables): after
  states stopped arriving for that long the component reports itself failed;
  it recovers by itself when states come back. Wall (monotonic) time, never the
  control clock: with ``use_sim_time`` a dead simulator takes ``/clock`` with
  it, and a timeout measured on that stopped clock would never expire. The
  watch starts with the first state message (and again at each activation), so
  a robot that comes up late is not a failure; a paused simulator keeps
  repeating its states, so it is not one either.
* Recovery waits until the robot can hear us. A robot whose states come back from the writer they came from
  before (a stalled one) recovers at once. States from a new writer are a restarted robot: its command reader
  is discovered apart from its state writer, under load a second or more later, and commands sent before that
  are lost (a goal would run on a robot that does not move). So the component recovers once its command
  publisher matched a new subscription (the adapter's ``command_matches``, cumulative), or after
  ``LISTEN_WAIT`` s of wall time without one, saying so.
* Sensors (``<sensor>`` of the block): their state interfaces come from ``sensor_states_topic`` (default
  ``/robot_sensor_states``, control_msgs/DynamicJointState whose ``joint_names`` are sensor names, see
  doc/topic_protocol.md), handed to :meth:`TopicBasedComponent.on_sensor_state`. The stream is watched like the
  joint states, on wall time from its first message: silent for ``sensor_timeout`` (default: ``state_timeout``)
  the component fails, and it recovers when both streams flow again.
* ``use_transmissions: true``: the wire speaks actuator names and actuator
  units; URDF ``<transmission>`` reductions convert both ways (simple transmissions
  only; coupling ones are propagated by the actuator interfaces of
  :class:`robot_core.control.hardware.ActuatorSide` on the joint-space wire).
* ``acceleration`` command interfaces: sent as velocity references integrated
  from them (:mod:`robot_core.control.acceleration`).
"""

from __future__ import annotations

import math
import threading
import time as _time
from collections.abc import Callable, Sequence

import numpy as np

from robot_core.control.acceleration import AccelerationToVelocity
from robot_core.control.errors import ControlError
from robot_core.control.hardware import HardwareComponent, HardwareInfo
from robot_core.control.messages import JointStateData
from robot_core.text import clip_all

_NAMES_SHOWN = 4  # joint names quoted from a state message that named none of ours
_NONE = np.zeros(0)  # a field not sent (shared; never written)
LISTEN_WAIT = 5.0  # s of wall time a restarted robot's states may flow before its command reader is seen


def _wrap_to_pi(x: np.ndarray) -> np.ndarray:
    return (x + math.pi) % (2.0 * math.pi) - math.pi


class TopicBasedComponent(HardwareComponent):
    plugin_names = ("topic_based_ros2_control/TopicBasedSystem",)

    def __init__(self, info: HardwareInfo):
        super().__init__(info)
        self.joint_commands_topic = info.param("joint_commands_topic", "robot_joint_commands")
        self.joint_states_topic = info.param("joint_states_topic", "robot_joint_states")
        self.trigger_joint_command_threshold = info.float_param("trigger_joint_command_threshold", 1e-5)
        self.sum_wrapped_joint_states = info.bool_param("sum_wrapped_joint_states", False)
        self.use_initial_states_as_initial_commands = info.bool_param("use_initial_states_as_initial_commands", False)
        self.state_timeout = info.float_param("state_timeout", 1.0)
        self.use_transmissions = info.bool_param("use_transmissions", False)
        self.sensor_states_topic = info.param("sensor_states_topic", "robot_sensor_states")
        self.sensor_timeout = info.float_param("sensor_timeout", self.state_timeout)
        # The node sets this to a function that publishes the command message.
        self.command_sink: Callable[[JointStateData], None] | None = None
        self.last_command: JointStateData | None = None
        self.published_count = 0
        self.received_count = 0
        self._lock = threading.Lock()
        self._has_news = False
        self._got_first_state = False
        # Messages on the state topic that named none of our joints, and the first names of the newest one: a
        # robot publishing under other joint names is told apart from a silent one while we wait for states.
        self._unmatched_count = 0
        self._unmatched_names: tuple[list[str], int] = ([], 0)
        self.monotonic = _time.monotonic  # the wall clock staleness is judged on (a fake one in tests)
        self._last_rx_mono: float | None = None  # self.monotonic() of the last state message taken
        self._rx_stamp = 0.0  # header stamp of that message
        self._last_sensor_mono: float | None = None  # self.monotonic() of the last sensor message taken
        self._sensor_index: dict[str, int] = {}  # "<sensor>/<interface>" -> state index, set in on_bind
        self._sensor_news = False
        self._ready_to_send = not self.use_initial_states_as_initial_commands
        # Set by the node: how many subscriptions the command publisher matched so far (cumulative), and the
        # writer of each state message (``on_joint_state``'s ``source``); None where the middleware hides them.
        self.command_matches: Callable[[], int] | None = None
        self._state_source: bytes | None = None
        self._fail_source: bytes | None = None
        self._fail_matches: int | None = None
        self._listen_wait_since: float | None = None

    # --- set-up --------------------------------------------------------------
    def on_bind(self) -> None:
        joints = self.info.joints
        n = len(joints)
        trans = self.info.transmissions if self.use_transmissions else None
        if trans and not trans.all_simple:
            coupling = [t.name for t in trans.items if t.name and len(t.joints) + len(t.actuators) > 2]
            raise ControlError(f"hardware component '{self.name}': use_transmissions (actuator names on the wire) "
                               f"works with one-joint-one-actuator transmissions only; {coupling} couple several: "
                               "leave use_transmissions off and claim their actuator interfaces instead")
        self.wire_names = [trans.actuator_name(j.name) if trans else j.name for j in joints]
        self._wire_index = {name: k for k, name in enumerate(self.wire_names)}
        self._red, self._off = (trans.arrays([j.name for j in joints]) if trans else (np.ones(n), np.zeros(n)))
        s_names = {name: i for i, name in enumerate(self.state_names)}
        c_names = {name: i for i, name in enumerate(self.command_names)}

        def idx(table: dict[str, int], joint: str, iface: str) -> int:
            return table.get(f"{joint}/{iface}", -1)

        self._s_pos = np.array([idx(s_names, j.name, "position") for j in joints], dtype=np.intp)
        self._s_vel = np.array([idx(s_names, j.name, "velocity") for j in joints], dtype=np.intp)
        self._s_eff = np.array([idx(s_names, j.name, "effort") for j in joints], dtype=np.intp)
        self._pend = np.full((3, n), np.nan)
        # command layout: per field, (joint index, command index) in joint order
        self._c_layout: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for field in ("position", "velocity", "effort"):
            js = [k for k, j in enumerate(joints) if field in j.command_names()]
            self._c_layout[field] = (np.array(js, dtype=np.intp),
                                     np.array([c_names[f"{joints[k].name}/{field}"] for k in js], dtype=np.intp))
        self._c_all = np.concatenate([cs for _, cs in self._c_layout.values()])
        # acceleration commands go out as velocity references (control/acceleration.py)
        self._accel = AccelerationToVelocity([j.name for j in joints], self.command_names, self.state_names)
        self._accel_send = np.zeros(len(self._accel.rows), dtype=bool)
        self._c_other = np.concatenate([self._c_layout["velocity"][1], self._c_layout["effort"][1],
                                        self._accel.command_indices])
        self._plan_key = b"-"
        self._plan: list[tuple[list[str], list[tuple[np.ndarray, ...] | None]]] = []
        pos_js, pos_cs = self._c_layout["position"]
        keep = self._s_pos[pos_js] >= 0
        self._thr_state = self._s_pos[pos_js][keep]
        self._thr_cmd = pos_cs[keep]
        # sensor values: "<sensor>/<interface>" -> state index; pending values (NaN: nothing new)
        self._sensor_index = {f"{sn.name}/{i}": s_names[f"{sn.name}/{i}"] for sn in self.info.sensors
                              for i in sn.state_names()}
        self._sensor_pend = np.full(len(self.states), np.nan)
        # mimic joints (per-joint params, as in topic_based_ros2_control)
        names = [j.name for j in joints]
        self._mimic: list[tuple[int, int, float]] = []
        for k, j in enumerate(joints):
            target = j.params.get("mimic")
            if target:
                if target not in names:
                    raise ControlError(f"hardware component '{self.name}': joint '{j.name}' mimics unknown joint "
                                       f"'{target}'")
                self._mimic.append((k, names.index(target), float(j.params.get("multiplier", 1.0))))

    # --- input from the node ---------------------------------------------------
    def on_joint_state(self, name: Sequence[str], position: Sequence[float] = (), velocity: Sequence[float] = (),
                       effort: Sequence[float] = (), stamp: float = 0.0, source: bytes | None = None) -> int:
        """Store an incoming JointState (thread-safe); returns how many of our joints it matched. ``source``
        identifies the writer (its DDS gid), so a restarted robot is told from one that stalled."""
        matched = 0
        index = self._wire_index
        with self._lock:
            pend = self._pend
            np_, nv, ne = len(position), len(velocity), len(effort)
            for k, nm in enumerate(name):
                j = index.get(nm)
                if j is None:
                    continue
                matched += 1
                if k < np_ and math.isfinite(position[k]):
                    pend[0, j] = position[k]
                if k < nv and math.isfinite(velocity[k]):
                    pend[1, j] = velocity[k]
                if k < ne and math.isfinite(effort[k]):
                    pend[2, j] = effort[k]
            if matched:
                self._has_news = True
                self.received_count += 1
                self._rx_stamp = stamp
                self._last_rx_mono = self.monotonic()
                self._state_source = source
            elif not self._got_first_state:
                self._unmatched_count += 1
                self._unmatched_names = (list(name[:_NAMES_SHOWN]), len(name))
        return matched

    @property
    def has_sensors(self) -> bool:
        """Whether the block declares sensors (known before the interfaces are bound, when the node bridges)."""
        return any(s.state_interfaces for s in self.info.sensors)

    def on_sensor_state(self, names: Sequence[str], interface_names: Sequence[Sequence[str]],
                        values: Sequence[Sequence[float]], stamp: float = 0.0) -> int:
        """Store an incoming sensor message (DynamicJointState layout; thread-safe); returns how many of our
        sensor values it matched. Non-finite values are kept (a range finder seeing nothing reads +inf)."""
        matched = 0
        index = self._sensor_index
        with self._lock:
            pend = self._sensor_pend
            for name, ifaces, vals in zip(names, interface_names, values, strict=False):
                for iface, value in zip(ifaces, vals, strict=False):
                    k = index.get(f"{name}/{iface}")
                    if k is not None:
                        pend[k] = value
                        matched += 1
            if matched:
                self._sensor_news = True
                self._last_sensor_mono = self.monotonic()
        return matched

    # --- cyclic ------------------------------------------------------------------
    def read(self, time: float, period: float) -> None:
        with self._lock:
            news = self._has_news
            if news:
                pend = self._pend.copy()
                self._pend.fill(np.nan)
                self._has_news = False
            sensor_news = self._sensor_news
            if sensor_news:
                sensor_pend = self._sensor_pend.copy()
                self._sensor_pend.fill(np.nan)
                self._sensor_news = False
        if sensor_news:
            taken = ~np.isnan(sensor_pend)
            self.states[taken] = sensor_pend[taken]
        if news:
            self._apply_states(pend)
            self.state_stamp = self._rx_stamp
            if not self._got_first_state:
                self._got_first_state = True
                if not self._ready_to_send:
                    self._init_commands_from_states()
        if (news or sensor_news) and self.is_failed and not self.stale_reason():
            listens = self._robot_listens()
            if listens is not None:
                self.recover(listens)
        if not news or (self.has_sensors and not sensor_news):
            self.check_stale()

    def stale_reason(self) -> str:
        """Why the robot counts as silent ("" if it does not): a watched stream quiet for longer than its
        timeout, on wall time."""
        now = self.monotonic()
        last = self._last_rx_mono
        if self.state_timeout > 0.0 and last is not None and now - last > self.state_timeout:
            return (f"no joint states on '{self.joint_states_topic}' for {now - last:.3f} s of wall time "
                    f"(state_timeout {self.state_timeout} s)")
        last = self._last_sensor_mono
        if self.sensor_timeout > 0.0 and last is not None and now - last > self.sensor_timeout:
            return (f"no sensor states on '{self.sensor_states_topic}' for {now - last:.3f} s of wall time "
                    f"(sensor_timeout {self.sensor_timeout} s)")
        return ""

    def fail(self, reason: str) -> None:
        if not self._failed:
            self._fail_source = self._state_source
            self._fail_matches = self.command_matches() if self.command_matches is not None else None
            self._listen_wait_since = None
        super().fail(reason)

    def _robot_listens(self) -> str | None:
        """None while a restarted robot's command reader is not matched yet (see the module docstring), else
        the note recovery is logged with ("" when there is nothing to add)."""
        if self.command_matches is None or self._fail_matches is None:
            return ""
        with self._lock:
            source = self._state_source
        if source is not None and source == self._fail_source:
            return ""
        if self.command_matches() > self._fail_matches:
            return "states from a new writer, and a new subscriber to our commands"
        now = self.monotonic()
        if self._listen_wait_since is None:
            self._listen_wait_since = now
        if now - self._listen_wait_since < LISTEN_WAIT:
            return None
        return (f"states from a new writer, but no new subscriber to '{self.joint_commands_topic}' in "
                f"{LISTEN_WAIT:g} s: commands may not reach the robot")

    def check_stale(self) -> None:
        if not self._failed:
            reason = self.stale_reason()
            if reason:
                self.fail(reason)

    def _apply_states(self, pend: np.ndarray) -> None:
        states = self.states
        # actuator -> joint units
        pos = pend[0] / self._red + self._off
        vel = pend[1] / self._red
        eff = pend[2] * self._red
        ok = np.isfinite(pos) & (self._s_pos >= 0)
        if self.sum_wrapped_joint_states:
            idx = self._s_pos[ok]
            states[idx] += _wrap_to_pi(pos[ok] - states[idx])
        else:
            states[self._s_pos[ok]] = pos[ok]
        ok = np.isfinite(vel) & (self._s_vel >= 0)
        states[self._s_vel[ok]] = vel[ok]
        ok = np.isfinite(eff) & (self._s_eff >= 0)
        states[self._s_eff[ok]] = eff[ok]
        for k, target, mult in self._mimic:
            for table in (self._s_pos, self._s_vel, self._s_eff):
                if table[k] >= 0 and table[target] >= 0:
                    states[table[k]] = mult * states[table[target]]

    def _init_commands_from_states(self) -> None:
        states, commands = self.states, self.commands
        s_index = {n: i for i, n in enumerate(self.state_names)}
        for ci, name in enumerate(self.command_names):
            si = s_index.get(name)
            if si is not None:
                commands[ci] = states[si]
        self._ready_to_send = True

    def build_commands(self, time: float) -> list[JointStateData]:
        """The command messages for the current command values (no threshold check).

        Joints are grouped by the set of fields commanded for them; each group is one message carrying
        exactly those arrays, so a joint commanded in position and velocity (a JTC with both command
        interfaces) gets both in one message: the receiver servos the position with the velocity as
        feed-forward instead of switching the joint to velocity control.
        """
        active = self.command_active[self._c_all]
        # which interfaces are commanded: changes only when controllers switch
        key = active.tobytes() + self._accel_send.tobytes()
        if key != self._plan_key:
            self._plan_key = key
            self._plan = self._command_plan(active)
        commands = self.commands
        if self._accel_send.any():  # velocity references of acceleration-commanded joints, indexed after commands
            commands = np.concatenate((commands, self._accel.velocity))
        out: list[JointStateData] = []
        for names, fields in self._plan:
            arrays = [_NONE if f is None else (commands[f[0]] - f[2]) * f[1] for f in fields]
            out.append(JointStateData(names, arrays[0], arrays[1], arrays[2], time))
        return out

    def _command_plan(self, active: np.ndarray) -> list[tuple[list[str], list[tuple[np.ndarray, ...] | None]]]:
        """Per message: wire names and, per field, (command index, gain, offset) giving each wire value as
        ``(command - offset) * gain`` -- the transmission, and for a mimic joint its multiplier applied to the
        joint it follows."""
        # per joint and field: (command index, gain, offset) of the value sent, if commanded
        sources: dict[int, dict[str, tuple[int, float, float]]] = {}
        start = 0
        for field, (js, cs) in self._c_layout.items():
            on = active[start:start + len(cs)]
            start += len(cs)
            by_joint: dict[int, tuple[int, float, float]] = {}
            for k, c, a in zip(js.tolist(), cs.tolist(), on.tolist(), strict=True):
                if a:
                    red, off = float(self._red[k]), float(self._off[k])
                    gain = red if field != "effort" else 1.0 / red
                    by_joint[k] = (c, gain, off if field == "position" else 0.0)
            for k, target, mult in self._mimic:
                if target in by_joint and k in js:
                    c, gain, off = by_joint[target]
                    by_joint[k] = (c, mult * gain, off)
            for k, src in by_joint.items():
                sources.setdefault(k, {})[field] = src
        base = len(self.commands)
        for r, k in enumerate(self._accel.rows.tolist()):
            if self._accel_send[r]:
                sources.setdefault(k, {})["velocity"] = (base + r, float(self._red[k]), 0.0)
        groups: dict[tuple[str, ...], list[int]] = {}
        for k in sorted(sources):
            groups.setdefault(tuple(f for f in ("position", "velocity", "effort") if f in sources[k]), []).append(k)
        plan = []
        for fields, joints in groups.items():
            per_field: list[tuple[np.ndarray, ...] | None] = []
            for f in ("position", "velocity", "effort"):
                if f not in fields:
                    per_field.append(None)
                    continue
                src = [sources[k][f] for k in joints]
                per_field.append((np.array([c for c, _, _ in src], dtype=np.intp), np.array([g for _, g, _ in src]),
                                  np.array([o for _, _, o in src])))
            plan.append(([self.wire_names[k] for k in joints], per_field))
        return plan

    def command_due(self) -> bool:
        """Upstream's anti-spam rule: publish unless |state - command| summed over positions <= threshold.

        The rule only speaks about positions: while any velocity or effort command is claimed, every cycle is
        published (else a velocity-only robot, whose position difference is 0, would never be commanded)."""
        if self.trigger_joint_command_threshold < 0.0 or self.command_active[self._c_other].any():
            return True
        diff = float(np.sum(np.abs(self.states[self._thr_state] - self.commands[self._thr_cmd])))
        return not diff <= self.trigger_joint_command_threshold  # NaN -> publish

    def write(self, time: float, period: float) -> None:
        if not self._ready_to_send:
            return
        if self._accel:
            self._accel_send = self._accel.update(self.commands, self.command_active, self.states, period)
        if not self._accel_send.any() and not self.command_due():
            return
        for msg in self.build_commands(time):
            self.last_command = msg
            self.published_count += 1
            if self.command_sink is not None:
                self.command_sink(msg)

    def awaiting_states(self) -> str:
        if self._got_first_state:
            return ""
        with self._lock:
            count, (names, total) = self._unmatched_count, self._unmatched_names
        if not count:
            return f"no message on '{self.joint_states_topic}' yet"
        shown = clip_all(names)
        if total > len(names):
            shown = f"{shown[:-1]}, ... ({total} in all)]"
        return (f"no message on '{self.joint_states_topic}' naming its joints yet: {count} arrived naming none of "
                f"them, the last {shown}")

    def on_activate(self) -> None:
        # Staleness is armed by the next state; an old timestamp must not fail a fresh activation.
        self._last_rx_mono = None
        self._last_sensor_mono = None
