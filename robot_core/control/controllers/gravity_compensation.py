"""robot_core/GravityCompensationController: effort = gravity torques of the current pose.

The AGX robot-control chapter's gravity compensation: at every cycle the
kinematics library computes the joint torques that hold the chain still against
gravity at the measured positions (rigid-body model of the whole robot, so
links beyond the tip and held side branches count as loads) and writes them to
the ``effort`` command interfaces. With a model that matches the robot, the arm
floats: it stays where it is and can be pushed around.

Parameters: :attr:`GravityCompensationController.PARAMS`, rendered in doc/controllers/gravity_compensation.md
(the chain by ``joints`` or by ``base_link``/``tip_link``; optional viscous ``damping``).
"""

from __future__ import annotations

import numpy as np

from robot_core.control.controller_base import UPDATE_RATE, Controller
from robot_core.control.errors import ControlError
from robot_core.parameter_spec import ParamSpec as P

#: the chain by links (shared with the computed-torque controller)
BASE_LINK = P("base_link", "string", "", "first link of the chain; empty = the parent of joints[0] (with joints "
              "empty: both links are required)")
TIP_LINK = P("tip_link", "string", "", "last link of the chain; empty = the child of the last joint")


def build_chain(ctrl: Controller, joints: list[str], base_link: str, tip_link: str):
    """A SerialKinematicChain for ``joints`` or base/tip; raises ControlError naming the controller."""
    from robot_core.kinematics.chain import SerialKinematicChain
    from robot_core.model.robot_model import RobotModelError

    robot = ctrl.require_robot()
    if not joints and not (base_link and tip_link):
        raise ctrl.error("set either 'joints' or both 'base_link' and 'tip_link'")
    if joints:
        unknown = [j for j in joints if j not in robot.joints]
        if unknown:
            raise ctrl.error(f"joints {unknown} are not in robot '{robot.name}'")
        base_link = base_link or robot.joints[joints[0]].parent
        tip_link = tip_link or robot.joints[joints[-1]].child
    try:
        chain = SerialKinematicChain(robot, base_link, tip_link)
    except (RobotModelError, ValueError) as exc:
        raise ctrl.error(f"cannot build the chain {base_link} -> {tip_link}: {exc}") from None
    if joints and list(chain.joint_names) != list(joints):
        raise ctrl.error(f"'joints' {joints} must be exactly the movable joints of the chain {base_link} -> "
                         f"{tip_link}: {chain.joint_names}")
    return chain


class GravityCompensationController(Controller):
    type_name = "robot_core/GravityCompensationController"
    PARAMS = (
        UPDATE_RATE,
        P("joints", "string[]", [], "the chain's movable joints from base to tip; they must be exactly the movable "
          "joints between parent(joints[0]) and child(joints[-1]). Empty: every movable joint between base_link and "
          "tip_link"),
        BASE_LINK, TIP_LINK,
        P("damping", "double", 0.0, "viscous term subtracted from the gravity torque (effort -= damping * velocity); "
          "above 0 the velocity state interfaces are claimed too", read_only=False, minimum=0.0, unit="N m s/rad"),
    )

    def on_init(self) -> None:
        self._read_params()

    def _read_params(self) -> None:
        p = self.params
        self.joints = p.str_list("joints", [])
        self.base_link = p.str("base_link", "")
        self.tip_link = p.str("tip_link", "")
        self.damping = p.float("damping", 0.0)

    def on_configure(self) -> None:
        self._read_params()
        try:
            self.chain = build_chain(self, self.joints, self.base_link, self.tip_link)
        except ControlError:
            raise
        self.joints = list(self.chain.joint_names)

    def command_interface_configuration(self) -> list[str]:
        return [f"{j}/effort" for j in self.joints]

    def state_interface_configuration(self) -> list[str]:
        names = [f"{j}/position" for j in self.joints]
        if self.damping > 0.0:
            names += [f"{j}/velocity" for j in self.joints]
        return names

    def compute(self, q: np.ndarray, qd: np.ndarray | None = None) -> np.ndarray:
        tau = self.chain.gravity_torques(q)
        if qd is not None and self.damping > 0.0:
            tau = tau - self.damping * qd
        return tau

    def on_activate(self) -> None:
        self.update(0.0, 0.0)

    def update(self, time: float, period: float) -> None:
        n = len(self.joints)
        vals = self.state_interfaces.get()
        tau = self.compute(vals[:n], vals[n:2 * n] if self.damping > 0.0 else None)
        if not np.all(np.isfinite(tau)):
            raise self.error(f"gravity torques are not finite at q={vals[:n].tolist()}")
        self.output = tau
        self.command_interfaces.set(tau)
