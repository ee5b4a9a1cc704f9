"""TouchContact ("TC"): estimates the wrench at a user-given contact point from measured joint torques.

Physics: at rest, the motors balance gravity and the contact, ``tau_measured = g(q) - J_c(q)^T w``, where
``w = [f; m]`` is the wrench the environment applies to the robot at the contact point (base_link frame, torque
about the point) and ``J_c`` is the point's Jacobian over the chain's joints. So
``J_c^T w = g(q) - tau_measured`` and ``w`` follows by least squares.

Observability: the chain's n joints give n equations. With ``components="force"`` (the default) three unknowns
are estimated and the torque at the point is assumed zero (a point contact), which needs n >= 3 joints that move
the point in independent directions; ``components="wrench"`` estimates all six and needs rank 6 (n >= 6 and a
non-singular configuration). The rank actually achieved and the directions that could not be observed (SVD null
space of J_c^T, expressed in base_link) are reported with every estimate, and unobservable components are set to
their minimum-norm value (0 along those directions), never invented. Only quasi-static contact is modelled: while
the arm accelerates, inertial torques are mistaken for contact.

Outputs (``UpdateResult.derived``): ``wrench`` (force, torque in base_link; torque about the point),
``wrench_in_contact_frame`` (same, expressed in the contact frame, for a WrenchStamped on that frame),
``contact_pose`` (4x4 base_link -> contact frame, for a tf), ``frame_id``, ``base_link``, ``rank``,
``unobservable`` (list of base-frame directions), ``residual`` (N*m, torque not explained).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from robot_core.rbc.contact_point import ContactPoint
from robot_core.rbc.extenders.extender import Extender
from robot_core.rbc.instance import ParamSpec, UpdateResult
from robot_core.rbc.var_table import VarView

RANK_TOL = 1e-6


def estimate_wrench(jac: np.ndarray, tau_ext: np.ndarray, components: str) -> tuple[np.ndarray, int, np.ndarray]:
    """Least squares of ``J^T w = tau_ext``: (wrench (6,), rank, unobservable directions (k x 3 or 6))."""
    a = jac[:3].T if components == "force" else jac.T  # n x 3 or n x 6
    u, s, vt = np.linalg.svd(a, full_matrices=True)
    tol = RANK_TOL * max(1.0, float(s[0]) if s.size else 0.0)
    rank = int(np.sum(s > tol))
    x = vt[:rank].T @ ((u[:, :rank].T @ tau_ext) / s[:rank])
    null = vt[rank:]
    w = np.zeros(6)
    w[: x.size] = x
    return w, rank, null


class TouchContact(Extender):
    TYPE_NAME = "TC"
    # the estimated wrench in base_link (force, torque about the contact point) and in the contact frame
    SHARED_OUTPUTS: ClassVar[dict[str, int]] = {"wrench": 6, "wrench_in_contact_frame": 6}
    PARAMS = (
        ParamSpec("base_link", "str", "", "frame of the estimate and root of the chain ('' = root link)"),
        ParamSpec("end_link", "str", "", "last link of the chain whose joint torques are used"),
        ParamSpec("link", "str", "", "link carrying the contact point ('' = end_link)"),
        ParamSpec("point", "float_list", [0.0, 0.0, 0.0], "contact point in the link frame (m)"),
        ParamSpec("components", "str", "force", "'force' (3, torque assumed 0) or 'wrench' (6)",
                  choices=("force", "wrench")),
        ParamSpec("torque_var", "str", "tau", "state var with measured joint torques"),
        ParamSpec("state_var", "str", "q", "state var with measured joint positions"),
        ParamSpec("gravity_compensation", "bool", True, "subtract the model's gravity torques"),
        ParamSpec("frame_id", "str", "", "name of the published contact frame ('' = <instance>_contact)"),
        ParamSpec("enabled", "bool", True, "estimate every cycle"),
    )

    def __init__(self, name: str, context: Any):
        super().__init__(name, context)
        self._contact: ContactPoint | None = None
        self._gravity_chain: Any = None
        self._joints: list[str] = []

    def _base(self, p: dict[str, Any]) -> str:
        return p["base_link"] or self.context.model.root_link

    def _check_param(self, name: str, staged: dict[str, Any]) -> None:
        if name == "point" and len(staged["point"]) != 3:
            raise ValueError(f"needs 3 numbers (x, y, z), got {staged['point']}")
        if name in ("base_link", "end_link", "link", "torque_var", "state_var") and staged["end_link"]:
            base = self._base(staged)
            joints = self.context.chain_joints(base, staged["end_link"])
            if not joints:
                raise ValueError(f"no movable joint between '{base}' and '{staged['end_link']}'")
            self.context.check_joint_vars(joints, staged["state_var"], "state")
            self.context.check_joint_vars(joints, staged["torque_var"], "state")
            link = staged["link"] or staged["end_link"]
            self.context.model.chain(base, link)  # the contact link must hang below the base

    def _params_changed(self, names: set[str]) -> None:
        if names & {"base_link", "end_link", "link", "point"}:
            self._contact = None
            self._gravity_chain = None

    def _ensure(self) -> ContactPoint | None:
        if self._contact is not None or not self.params["end_link"]:
            return self._contact
        base = self._base(self.params)
        self._gravity_chain = self.context.chain(base, self.params["end_link"])
        self._joints = list(self._gravity_chain.joint_names)
        link = self.params["link"] or self.params["end_link"]
        self._contact = ContactPoint(self.context, base, link, self.params["point"], self._joints)
        return self._contact

    def estimate(self, q: np.ndarray, tau: np.ndarray) -> dict[str, Any]:
        """Estimate from chain joint positions and measured torques (``joints`` order)."""
        contact = self._ensure()
        if contact is None:
            raise ValueError(f"{self.label()}: parameter 'end_link' is not set")
        tau_ext = -np.asarray(tau, dtype=float)
        if self.params["gravity_compensation"]:
            tau_ext = tau_ext + self._gravity_chain.gravity_torques(q)
        qmap = dict(zip(self._joints, q, strict=True))
        qc = contact.chain_q(qmap)
        jac = contact.jacobian(qc)
        w, rank, null = estimate_wrench(jac, tau_ext, self.params["components"])
        pose = contact.pose(qc)
        r = pose[:3, :3]
        residual = float(np.linalg.norm(jac.T @ w - tau_ext))
        return {
            "wrench": w,
            "wrench_in_contact_frame": np.concatenate([r.T @ w[:3], r.T @ w[3:]]),
            "contact_pose": pose,
            "frame_id": self.params["frame_id"] or f"{self.name}_contact",
            "base_link": self._base(self.params),
            "rank": rank,
            "unobservable": [v.tolist() for v in null],
            "residual": residual,
            "joints": list(self._joints),
        }

    @property
    def joints(self) -> list[str]:
        self._ensure()
        return list(self._joints)

    def update(self, now: float, dt: float, state: VarView) -> UpdateResult:
        result = UpdateResult()
        if not self.params["enabled"] or self._ensure() is None:
            return result
        sv, tv = self.params["state_var"], self.params["torque_var"]
        stale = state.stale_joints(self._joints, sv) + state.stale_joints(self._joints, tv)
        if stale:
            result.derived = {"stale_joints": sorted(set(stale))}
            return result
        q = np.array(state.values(self._joints, sv))
        tau = np.array(state.values(self._joints, tv))
        result.derived = self.estimate(q, tau)
        return result
