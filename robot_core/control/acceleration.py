"""``acceleration`` command interfaces on simulated joints: integrated into a velocity reference.

A joint may list ``acceleration`` among its command interfaces (with or without position, velocity, effort); the
controller manager lists and claims it like any other interface. Neither the topic protocol (sensor_msgs/JointState
has no acceleration field) nor the simulator's servos take an acceleration, so the hardware components turn it
into what they do take, as ros2_control's mock hardware does with ``calculate_dynamics``: each cycle the joint's
velocity reference grows by ``acceleration x period`` and is sent as the joint's velocity command, so the
simulator's velocity servo (gravity compensated) realises the commanded acceleration, lagging it by the servo's
time constant ``I / kv``.

* The reference starts from the measured velocity (the joint's velocity state, else 0) when the acceleration
  command becomes active, so taking over a moving joint causes no jump.
* A joint whose position or velocity command is active as well is commanded by those; its acceleration is not
  integrated (a servo with velocity feed-forward already follows the trajectory it belongs to).
* When the acceleration interface is released (its controller deactivates; the manager writes the hold value
  0 first) the joint is sent velocity 0 once, so it stops instead of coasting at its last reference.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class AccelerationToVelocity:
    """The velocity references of the joints that have an acceleration command interface."""

    def __init__(self, joints: Sequence[str], command_names: Sequence[str], state_names: Sequence[str]):
        c = {n: i for i, n in enumerate(command_names)}
        s = {n: i for i, n in enumerate(state_names)}
        #: index into ``joints`` of every joint with an acceleration command interface
        self.rows = np.array([k for k, j in enumerate(joints) if f"{j}/acceleration" in c], dtype=np.intp)
        names = [joints[k] for k in self.rows]
        self.joints = names
        self._acc = np.array([c[f"{j}/acceleration"] for j in names], dtype=np.intp)
        self._other = np.array([[c.get(f"{j}/position", -1), c.get(f"{j}/velocity", -1)] for j in names],
                               dtype=np.intp).reshape(-1, 2)
        self._vel_state = np.array([s.get(f"{j}/velocity", -1) for j in names], dtype=np.intp)
        self.velocity = np.zeros(len(names))
        self._integrating = np.zeros(len(names), dtype=bool)

    def __bool__(self) -> bool:
        return bool(len(self.rows))

    @property
    def command_indices(self) -> np.ndarray:
        return self._acc

    def update(self, commands: np.ndarray, active: np.ndarray, states: np.ndarray, period: float) -> np.ndarray:
        """Advance the references by one cycle; returns which joints (of ``joints``) get ``velocity`` sent now."""
        acc = commands[self._acc]
        overridden = np.any((self._other >= 0) & active[np.maximum(self._other, 0)], axis=1)
        on = active[self._acc] & np.isfinite(acc) & ~overridden
        start = on & ~self._integrating
        if start.any():
            has = self._vel_state >= 0
            measured = np.where(has, states[np.maximum(self._vel_state, 0)], 0.0)
            self.velocity[start] = np.where(np.isfinite(measured[start]), measured[start], 0.0)
        self.velocity[on] += acc[on] * max(period, 0.0)
        stop = self._integrating & ~on & ~overridden
        self.velocity[stop] = 0.0
        self._integrating = on
        return on | stop
