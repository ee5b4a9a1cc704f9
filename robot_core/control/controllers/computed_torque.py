"""robot_core/ComputedTorqueController: trajectory tracking by inverse dynamics.

From the AGX robot-control chapter: with the desired state (q_d, qd_d, qdd_d) of a
trajectory and the measured (q, qd),

    tau = M(q) (qdd_d + Kp e + Kd e_dot) + h(q, qd),    e = q_d - q,  e_dot = qd_d - qd,

where h(q, qd) = C(q, qd) qd + g(q) is inverse_dynamics(q, qd, 0), plus the URDF's
viscous joint damping D qd (``<dynamics damping>``, on by default through
``use_urdf_damping``; Coulomb friction is left to the feedback). Because inverse
dynamics is linear in the acceleration, this equals inverse_dynamics(q, qd,
qdd_d + Kp e + Kd e_dot), which is what is evaluated (one RNEA call per cycle).
With an exact model the closed loop is the linear error dynamics
e_ddot + Kd e_dot + Kp e = 0 for every joint.

It takes trajectories exactly like the JointTrajectoryController (it *is* one,
with the effort computation replaced): FollowJointTrajectory goals, the topic,
tolerances, preemption, no-jump take-over.

Parameters: :attr:`ComputedTorqueController.PARAMS` (doc/controllers/computed_torque.md): the JTC's except
command/state interfaces (fixed to effort / position+velocity) and the PID gains (only
gains.<joint>.angle_wraparound is read), plus kp (default 100, 1/s^2) and kd (default 2 sqrt(kp)), a number or
one per joint, use_urdf_damping, and base_link / tip_link.
"""

from __future__ import annotations

import math

import numpy as np

from robot_core.control.controllers.gravity_compensation import BASE_LINK, TIP_LINK, build_chain
from robot_core.control.controllers.joint_trajectory import (
    ANGLE_WRAPAROUND,
    TRAJECTORY_PARAMS,
    JointTrajectoryController,
)
from robot_core.control.trajectory import JointSample
from robot_core.parameter_spec import ParamSpec as P


class ComputedTorqueController(JointTrajectoryController):
    type_name = "robot_core/ComputedTorqueController"
    allowed_command_interfaces = ("effort",)
    needs_pid_gains = False
    PARAMS = (
        *TRAJECTORY_PARAMS,
        BASE_LINK, TIP_LINK,
        P("kp", "double|double[]", 100.0, "position gain of the error dynamics: one number for every joint or one "
          "per joint", read_only=False, minimum=0.0, unit="1/s^2"),
        P("kd", "double|double[]", None, "velocity gain: one number or one per joint; unset = 2 sqrt(kp) (critical "
          "damping)", read_only=False, minimum=0.0, unit="1/s", optional=True),
        ANGLE_WRAPAROUND,
        P("use_urdf_damping", "bool", True, "add the URDF joints' viscous damping (<dynamics damping>) times the "
          "velocity to the torque", read_only=False),
    )

    def _read_interfaces(self) -> tuple[list[str], list[str]]:
        """Fixed: torques out, positions and velocities in (command_/state_interfaces are not read)."""
        return ["effort"], ["position", "velocity"]

    def configure_model(self) -> None:
        p = self.params
        n = len(self.joints)
        self.chain = build_chain(self, self.joints, p.str("base_link", ""), p.str("tip_link", ""))
        kp = p.float_list("kp", 100.0, length=n)
        kd_default = [2.0 * math.sqrt(max(k, 0.0)) for k in kp]
        kd = p.float_list("kd", kd_default, length=n)
        if any(k < 0 for k in kp) or any(k < 0 for k in kd):
            raise self.error("kp and kd must be >= 0")
        self.kp = np.array(kp)
        self.kd = np.array(kd)
        self.use_pid = False
        damping = np.zeros(n)
        if p.bool("use_urdf_damping", True):
            robot = self.require_robot()
            for k, j in enumerate(self.joints):
                dyn = robot.joints[j].dynamics
                damping[k] = dyn.damping if dyn is not None else 0.0
        self.damping = damping

    def compute_commands(self, desired: JointSample, err_q: np.ndarray, err_v: np.ndarray,
                         period: float) -> dict[str, np.ndarray]:
        m = self.measured
        qdd_cmd = desired.accelerations + self.kp * err_q + self.kd * err_v
        tau = self.chain.inverse_dynamics(m.positions, m.velocities, qdd_cmd) + self.damping * m.velocities
        if not np.all(np.isfinite(tau)):
            raise self.error(f"computed torque is not finite at q={m.positions.tolist()}")
        return {"effort": tau}
