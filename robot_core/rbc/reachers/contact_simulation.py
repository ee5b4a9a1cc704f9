"""ContactSimulation ("CS"): makes a simulated robot feel a contact wrench at a point of a link.

Two ways, chosen by ``mode``:

* ``var``: the joint torques the wrench causes, ``tau = J_c(q)^T w`` (J_c: Jacobian of the contact point over
  the chain base_link -> link), are written every cycle to the external-torque cmd var (``torque_var``, a
  sum-mixed var: torques of several CS instances add up, scaled by ``weight``). A simulator driver adds that var
  to the joints as external torque.
* ``service``: nothing is written; ``derived["apply_wrench_request"]`` carries the request for the simulator's
  ``~/apply_wrench`` service (robot_core_interfaces/srv/ApplyWrench: link_name, reference_point in the link
  frame, wrench in the world frame about that point, duration) once when the goal starts, and a zero wrench
  when it is cancelled. The node performs the call. ``base_link`` must then be the world-fixed root.

Both modes publish, while active, ``wrench_in_contact_frame`` (for a WrenchStamped on ``frame_id``),
``contact_pose`` (4x4 base_link -> contact frame, for a tf) and ``joint_torques`` (the action feedback). The goal
succeeds after ``duration`` s (0 = stays active until cancelled). Forces are in base_link, torques about the
point; ``weight`` does not scale the service request (the simulator applies exactly what is asked).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from robot_core.rbc.contact_point import ContactPoint
from robot_core.rbc.context import POSITION_MODE
from robot_core.rbc.errors import RbcGoalError
from robot_core.rbc.instance import ACTIVE, SUCCEEDED, ParamSpec, UpdateResult
from robot_core.rbc.reachers.reacher import WEIGHT, Reacher
from robot_core.rbc.var_table import VarView

# Names an external-torque cmd var has in the tags: ours, then the RBC documentation's ("ext_sim_torques").
TORQUE_VARS = ("tau_ext", "ext_sim_torques")


def torque_var_in(table: Any) -> str | None:
    """The first of TORQUE_VARS the var table has as a cmd var (a new CS writes it), or None (the simulator's
    apply-wrench service is then the way)."""
    for var in TORQUE_VARS:
        if any(e.kind == "cmd" for e in table.entries(var)):
            return var
    return None


@dataclass
class ContactGoal:
    """A wrench at a point of a link (link '' = parameter ``link``); duration 0 = until cancelled."""

    force: tuple[float, float, float] | list[float] | np.ndarray
    torque: tuple[float, float, float] | list[float] | np.ndarray = (0.0, 0.0, 0.0)
    link: str = ""
    point: tuple[float, float, float] | list[float] | np.ndarray | None = None
    duration: float = 0.0


class ContactSimulation(Reacher):
    TYPE_NAME = "CS"
    PARAMS = (
        ParamSpec("base_link", "str", "", "frame of the wrench and root of the chain ('' = root link)"),
        ParamSpec("link", "str", "", "default link of the contact point"),
        ParamSpec("point", "float_list", [0.0, 0.0, 0.0], "default contact point in the link frame (m)"),
        WEIGHT,
        ParamSpec("mode", "str", "var", "'var' (J^T w into torque_var) or 'service' (apply-wrench request)",
                  choices=("var", "service")),
        ParamSpec("torque_var", "str", "tau_ext", "cmd var receiving external joint torques (mode 'var')"),
        ParamSpec("state_var", "str", "q", "state var with measured joint positions"),
        ParamSpec("frame_id", "str", "", "name of the published contact frame ('' = <instance>_contact)"),
    )

    def __init__(self, name: str, context: Any):
        super().__init__(name, context)
        self._contact: ContactPoint | None = None
        self._wrench = np.zeros(6)
        self._duration = 0.0
        self._elapsed = 0.0
        self._pending: dict[str, Any] | None = None

    def _base(self, p: dict[str, Any]) -> str:
        return p["base_link"] or self.context.model.root_link

    def _check_param(self, name: str, staged: dict[str, Any]) -> None:
        if name == "point" and len(staged["point"]) != 3:
            raise ValueError(f"needs 3 numbers (x, y, z), got {staged['point']}")
        if name in ("base_link", "link", "mode", "torque_var", "state_var") and staged["link"]:
            self._check_chain(staged, staged["link"])

    def _check_chain(self, p: dict[str, Any], link: str) -> list[str]:
        base = self._base(p)
        joints = self.context.chain_joints(base, link)
        self.context.check_joint_vars(joints, p["state_var"], "state")
        if p["mode"] == "var":
            self.context.check_joint_vars(joints, p["torque_var"], "cmd")
            if self.context.var_mode(p["torque_var"]) == POSITION_MODE:
                raise ValueError(f"torque_var '{p['torque_var']}' is a position var; torques need a summed var")
        return joints

    def start_goal(self, goal: ContactGoal) -> int:
        link = goal.link or self.params["link"]
        if not link:
            raise RbcGoalError(f"{self.label()}: goal names no link and parameter 'link' is not set")
        point = self.params["point"] if goal.point is None else goal.point
        f = np.asarray(goal.force, dtype=float).reshape(-1)
        t = np.asarray(goal.torque, dtype=float).reshape(-1)
        if f.size != 3 or t.size != 3 or not (np.all(np.isfinite(f)) and np.all(np.isfinite(t))):
            raise RbcGoalError(f"{self.label()}: force and torque must be 3 finite numbers each")
        if not (math.isfinite(goal.duration) and goal.duration >= 0):
            raise RbcGoalError(f"{self.label()}: duration must be >= 0 s, got {goal.duration}")
        try:
            joints = self._check_chain(self.params, link)
            contact = ContactPoint(self.context, self._base(self.params), link, point, joints)
        except ValueError as exc:
            raise RbcGoalError(f"{self.label()}: {exc}") from None
        gid = self._begin()
        self._contact = contact
        self._wrench = np.concatenate([f, t])
        self._duration = float(goal.duration)
        self._elapsed = 0.0
        if self.params["mode"] == "service":
            self._pending = self._request(self._wrench, self._duration)
        return gid

    def _request(self, wrench: np.ndarray, duration: float) -> dict[str, Any]:
        assert self._contact is not None
        return {"link_name": self._contact.link, "reference_point": self._contact.point.tolist(),
                "force": wrench[:3].tolist(), "torque": wrench[3:].tolist(), "duration": duration}

    def _on_cancel(self) -> None:
        if self.params["mode"] == "service" and self._contact is not None:
            self._pending = self._request(np.zeros(6), 0.0)
        self._wrench = np.zeros(6)

    def joint_torques(self, q_chain: np.ndarray) -> np.ndarray:
        """tau = J_c^T w for the active contact at chain coordinates q_chain."""
        assert self._contact is not None
        return self._contact.jacobian(q_chain).T @ self._wrench

    def update(self, now: float, dt: float, state: VarView) -> UpdateResult:
        result = UpdateResult()
        if self._pending is not None:
            result.derived["apply_wrench_request"] = self._pending
            self._pending = None
        if self._status.state != ACTIVE or self._contact is None:
            return result
        joints = self._contact.joints
        sv = self.params["state_var"]
        if state.stale_joints(joints, sv):
            return result  # no fresh pose: publish nothing new this cycle, the goal keeps running
        q = np.array(state.values(joints, sv))
        tau = self.joint_torques(q)
        pose = self._contact.pose(q)
        r = pose[:3, :3]
        result.derived.update({
            "joint_names": list(joints),
            "joint_torques": tau.tolist(),
            "wrench": self._wrench.copy(),
            "wrench_in_contact_frame": np.concatenate([r.T @ self._wrench[:3], r.T @ self._wrench[3:]]),
            "contact_pose": pose,
            "frame_id": self.params["frame_id"] or f"{self.name}_contact",
            "base_link": self._base(self.params),
        })
        self._status.feedback = {"joint_torques": tau.tolist()}
        if self.params["mode"] == "var":
            tv = self.params["torque_var"]
            for j, v in zip(joints, tau, strict=True):
                result.commands[(j, tv)] = float(v)
        self._elapsed += dt
        if self._duration > 0 and self._elapsed >= self._duration:
            self._finish(SUCCEEDED, f"applied for {self._duration:g} s")
            self._wrench = np.zeros(6)
        return result
