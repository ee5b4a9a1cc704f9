"""In-process simulator hardware: the physics engine lives inside the controller manager.

The engine steps in lockstep with the control loop: each ``write`` applies the
commands and advances ``period`` seconds of simulation (``period / timestep``
steps, the remainder carried to the next cycle), and the next ``read`` returns
the resulting state. Nothing crosses a process boundary, so runs are
deterministic and 1 kHz control is cheap. The node uses :attr:`sim_time` as
the manager's clock and publishes it on ``/clock``.

Command modes follow the engine's rule per joint: a commanded position makes a
position servo (velocity/effort as feed-forward), velocity alone a velocity
servo, effort alone a pure effort; an acceleration alone is integrated into a
velocity reference (robot_core.control.acceleration). Only active (claimed or releasing) command
interfaces with finite values are applied; a joint nobody commands keeps its
last command, which after a release is the hold value.

Sensors (``<sensor>`` of the block: force-torque, IMU, range, pose; robot_core.physics.sensors) are read from
the engine's MuJoCo sensors into their state interfaces on every ``read``, like the joints.

Hardware parameters: ``timestep`` (s, default 0.001), ``initial_positions`` are
the URDF initial values. The world around the robot, a placed base and the description's cameras come in as
``engine_options`` (robot_core.physics.scene, from the manager's parameters).

The engine steps without releasing Python's interpreter lock (``hold_gil``, see
robot_core.physics.gil_step): the step runs in the manager's real-time loop thread, and
handing the lock to another thread for its duration costs the loop far more than the step.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from robot_core.control.acceleration import AccelerationToVelocity
from robot_core.control.errors import ControlError
from robot_core.control.hardware import HardwareComponent, HardwareInfo
from robot_core.model.robot_model import RobotModel


class InProcessSimulatorComponent(HardwareComponent):
    plugin_names = ("robot_core/InProcessSimulator",)

    def __init__(self, info: HardwareInfo, robot: RobotModel, timestep: float | None = None,
                 engine: Any | None = None, engine_options: dict[str, Any] | None = None):
        super().__init__(info)
        self.robot = robot
        self.timestep = timestep if timestep is not None else info.float_param("timestep", 0.001)
        if not self.timestep > 0.0:
            raise ControlError(f"hardware component '{self.name}': timestep must be > 0, got {self.timestep}")
        self.engine = engine
        self.engine_options = dict(engine_options or {})
        self._carry = 0.0
        self._read_maps: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None  # set at configure

    @property
    def sim_time(self) -> float:
        return 0.0 if self.engine is None else float(self.engine.time)

    def build_engine(self) -> Any:
        """The engine, built on first use (at configure, or earlier by the node that publishes its world and
        cameras: robot_core.ros.embedded_scene); ``engine_options`` go to PhysicsEngine (the scene, a placed base)."""
        if self.engine is None:
            from robot_core.physics.engine import PhysicsEngine

            self.engine = PhysicsEngine(self.robot, timestep=self.timestep,
                                        **{"hold_gil": True, **self.engine_options})
        return self.engine

    def on_configure(self) -> None:
        eng = self.build_engine()
        names = list(eng.joint_names)
        actuated = set(eng.actuated_joint_names)
        joints = self.info.joints
        for j in joints:
            if j.name not in names:
                raise ControlError(f"hardware component '{self.name}': joint '{j.name}' is not a scalar joint of "
                                   f"robot '{self.robot.name}'")
            if j.command_interfaces and j.name not in actuated:
                raise ControlError(f"hardware component '{self.name}': joint '{j.name}' has command interfaces "
                                   f"but the simulator cannot command it (mimic or passive joint)")
            for ci in j.command_names():
                if ci not in ("position", "velocity", "acceleration", "effort"):
                    raise ControlError(f"hardware component '{self.name}': joint '{j.name}': command interface "
                                       f"'{ci}' is not supported by the simulator (position, velocity, "
                                       f"acceleration, effort)")
        self._bind_state_buffers()
        s_index = {n: i for i, n in enumerate(self.state_names)}
        sensor_index = {n: i for i, n in enumerate(eng.sensor_names)}
        missing = [f"{s.name}/{i}" for s in self.info.sensors for i in s.state_names()
                   if f"{s.name}/{i}" not in sensor_index]
        if missing:
            raise ControlError(f"hardware component '{self.name}': sensor state interface '{missing[0]}' is not "
                               f"simulated (the simulator's sensors: {', '.join(eng.sensor_names) or 'none'})")
        pairs = [(sensor_index[n], s_index[n]) for n in s_index if n in sensor_index]
        self._sensor_src = np.array([p[0] for p in pairs], dtype=np.intp)
        self._sensor_dst = np.array([p[1] for p in pairs], dtype=np.intp)
        c_index = {n: i for i, n in enumerate(self.command_names)}
        self._cmd_joints = [j.name for j in joints if j.command_interfaces]
        # (n_cmd_joints, 3) command index per field, -1 where the joint lacks that interface
        self._cmd_idx = np.array([[c_index.get(f"{j}/{f}", -1) for f in ("position", "velocity", "effort")]
                                  for j in self._cmd_joints], dtype=np.intp).reshape(-1, 3)
        self._cmd_has = self._cmd_idx >= 0
        self._cmd_safe = np.where(self._cmd_has, self._cmd_idx, 0)
        self._groups: list[tuple[list[str], np.ndarray | slice, int, np.ndarray | slice]] | None = None
        self._last_mask = b""
        self._plans: dict[bytes, list[tuple[list[str], np.ndarray | slice, tuple[np.ndarray | None, ...]]]] = {}
        self._accel = AccelerationToVelocity(self._cmd_joints, self.command_names, self.state_names)
        self._accel_targets: dict[bytes, tuple[list[str], Any]] = {}
        self.read(0.0, 0.0)

    def _bind_state_buffers(self) -> None:
        """(engine array, source index, state index) per field: the engine's live arrays, gathered every read."""
        eng = self.engine
        names = list(eng.joint_names)
        s_index = {n: i for i, n in enumerate(self.state_names)}
        self._read_maps = []
        for field, (buffer, address) in zip(("position", "velocity", "effort"), eng.state_buffers(), strict=True):
            pairs = [(names.index(j.name), s_index[f"{j.name}/{field}"]) for j in self.info.joints
                     if f"{j.name}/{field}" in s_index]
            if pairs:
                src = np.asarray(address)[np.array([p[0] for p in pairs], dtype=np.intp)]
                self._read_maps.append((buffer, src, np.array([p[1] for p in pairs], dtype=np.intp)))

    def on_engine_changed(self, kind: str) -> None:
        """The engine was changed between two cycles by a world service (robot_core.ros.sim_world.WorldServices):
        ``model``/``static``, a rebuild (spawn, remove), replaces the arrays ``read`` gathers from; ``reset`` puts
        time back to 0, so the step remainder carried between cycles is dropped. The state interfaces follow at
        once, so nothing reads the old state after the change."""
        if kind == "reset":
            self._carry = 0.0
        if self.engine is None or self._read_maps is None:
            return  # not configured yet: on_configure binds the engine as it is then
        if kind in ("model", "static"):
            self._bind_state_buffers()
        self.read(self.sim_time, 0.0)

    def read(self, time: float, period: float) -> None:
        if self.engine is None:
            return
        states = self.states
        for buffer, src, dst in self._read_maps:
            states[dst] = buffer[src]
        if len(self._sensor_dst):
            states[self._sensor_dst] = self.engine.sensor_values()[self._sensor_src]

    def _apply_commands(self) -> None:
        if not len(self._cmd_idx):
            return
        # Usual case: which interfaces are commanded changes only with claims, and every commanded value is
        # finite; then one gather per commanded field. A non-finite value takes the general path below.
        key = self.command_active.tobytes()
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) > 64:
                self._plans.clear()
            plan = self._plans[key] = [
                (names, idx, tuple(None if not code & bit else self._cmd_idx[rows, f]
                                   for f, bit in ((0, 4), (1, 2), (2, 1))))
                for names, rows, code, idx in self._command_groups(self._cmd_has & self.command_active[self._cmd_safe])]
        commands = self.commands
        calls = []
        for names, idx, fields in plan:
            arrays = [None if c is None else commands[c] for c in fields]
            if not all(a is None or math.isfinite(a.sum()) for a in arrays):
                self._apply_masked()
                return
            calls.append((idx, names, arrays))
        engine = self.engine
        for idx, names, arrays in calls:
            engine.command_at(idx, names, *arrays)

    def _apply_masked(self) -> None:
        """Non-finite command values mean "not commanded" (ros2_control leaves unclaimed values NaN)."""
        values = self.commands[self._cmd_safe]
        mask = self._cmd_has & self.command_active[self._cmd_safe]
        mask &= np.isfinite(values)
        key = mask.tobytes()  # which fields of which joints are commanded: changes only on (de)activation
        if self._groups is None or key != self._last_mask:
            self._last_mask = key
            self._groups = self._command_groups(mask)
        engine = self.engine
        for names, rows, code, idx in self._groups:
            sel = values[rows]
            engine.command_at(idx, names, sel[:, 0] if code & 4 else None, sel[:, 1] if code & 2 else None,
                              sel[:, 2] if code & 1 else None)

    def _command_groups(self, mask: np.ndarray) -> list[tuple[list[str], np.ndarray | slice, int, np.ndarray | slice]]:
        """Joints grouped by which fields they command (one engine call per mode), with their actuator indices."""
        codes = mask[:, 0] * 4 + mask[:, 1] * 2 + mask[:, 2]
        groups = []
        for code in sorted(set(codes.tolist()) - {0}):
            rows = np.flatnonzero(codes == code)
            names = [self._cmd_joints[r] for r in rows]
            sel: np.ndarray | slice = slice(None) if len(rows) == len(codes) else rows
            groups.append((names, sel, code, self.engine.command_index(names)))
        return groups

    def _apply_accelerations(self, period: float) -> None:
        """Acceleration commands as velocity references (control/acceleration.py)."""
        send = self._accel.update(self.commands, self.command_active, self.states, period)
        if not send.any():
            return
        key = send.tobytes()
        target = self._accel_targets.get(key)
        if target is None:
            names = [n for n, on in zip(self._accel.joints, send.tolist(), strict=True) if on]
            target = self._accel_targets[key] = (names, self.engine.command_index(names))
        self.engine.command_at(target[1], target[0], None, self._accel.velocity[send], None)

    def write(self, time: float, period: float) -> None:
        if self.engine is None:
            return
        from robot_core.physics.engine import CommandError, PhysicsDivergedError

        try:
            self._apply_commands()
            if self._accel:
                self._apply_accelerations(period)
        except CommandError as exc:
            self.fail(f"simulator rejected a command: {exc}")
            return
        total = self._carry + max(period, 0.0)
        n = math.floor(total / self.timestep + 1e-9)
        self._carry = total - n * self.timestep
        if n <= 0:
            return
        try:
            self.engine.step(n)
        except PhysicsDivergedError as exc:
            self.fail(str(exc))
            return
        if self.is_failed:
            self.recover()
