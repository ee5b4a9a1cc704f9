"""``mock_components/GenericSystem``: hardware whose states mirror its commands.

Useful to try controllers without a robot, exactly like ros2_control's mock
hardware: a commanded position becomes the measured position at the next
read. With the hardware parameter ``calculate_dynamics: true`` a velocity
command is integrated into position, and the velocity state is derived from
consecutive positions (a joint whose position command is claimed follows that
instead). Only commanded (claimed) interfaces with finite values are mirrored;
everything else holds.
"""

from __future__ import annotations

import numpy as np

from robot_core.control.hardware import HardwareComponent, HardwareInfo


class GenericSystem(HardwareComponent):
    plugin_names = ("mock_components/GenericSystem",)

    def __init__(self, info: HardwareInfo):
        super().__init__(info)
        self.calculate_dynamics = info.bool_param("calculate_dynamics", False)

    def on_bind(self) -> None:
        s_names, c_names = self.state_names, self.command_names
        s_pos = {n: i for i, n in enumerate(s_names)}
        # command index -> state index with the same name
        pairs = [(ci, s_pos[n]) for ci, n in enumerate(c_names) if n in s_pos]
        self._mirror_c = np.array([p[0] for p in pairs], dtype=np.intp)
        self._mirror_s = np.array([p[1] for p in pairs], dtype=np.intp)
        c_pos = {n: i for i, n in enumerate(c_names)}
        # (velocity cmd idx, position cmd idx or -1, position state idx)
        self._vel_pairs: list[tuple[int, int, int]] = []
        # (position cmd idx, position state idx, velocity state idx)
        self._pos_vel: list[tuple[int, int, int]] = []
        for j in self.info.joints:
            pos_s = s_pos.get(f"{j.name}/position")
            vel_s = s_pos.get(f"{j.name}/velocity")
            pos_c = c_pos.get(f"{j.name}/position", -1)
            vel_c = c_pos.get(f"{j.name}/velocity")
            if vel_c is not None and pos_s is not None:
                self._vel_pairs.append((vel_c, pos_c, pos_s))
            if pos_c >= 0 and pos_s is not None and vel_s is not None:
                self._pos_vel.append((pos_c, pos_s, vel_s))

    def write(self, time: float, period: float) -> None:
        states, commands, active = self.states, self.commands, self.command_active
        old_positions = {p: states[p] for _, p, _ in self._pos_vel}
        if self.calculate_dynamics and period > 0.0:
            for vc, pc, ps in self._vel_pairs:
                if active[vc] and np.isfinite(commands[vc]) and not (pc >= 0 and active[pc]):
                    states[ps] += commands[vc] * period
        if len(self._mirror_c):
            vals = commands[self._mirror_c]
            ok = np.isfinite(vals) & active[self._mirror_c]
            states[self._mirror_s[ok]] = vals[ok]
        if self.calculate_dynamics and period > 0.0:
            for pc, p, v in self._pos_vel:
                if active[pc]:
                    states[v] = (states[p] - old_positions[p]) / period
