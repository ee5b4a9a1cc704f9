"""joint_state_broadcaster/JointStateBroadcaster: hardware states -> /joint_states and /dynamic_joint_states.

Parameters (upstream names): :attr:`JointStateBroadcaster.PARAMS`, rendered in
doc/controllers/joint_state_broadcaster.md. With ``joints`` and ``interfaces`` both set exactly those
``<joint>/<interface>`` pairs are read, otherwise every state interface.

Outputs (``emit`` keys): "joint_states" -> JointStateData (URDF joint order, NaN where a joint lacks a field),
"dynamic_joint_states" -> DynamicJointStateData (every read interface, grouped per joint).
"""

from __future__ import annotations

import itertools

import numpy as np

from robot_core.control.controller_base import ALL_INTERFACES, UPDATE_RATE, Controller, Deferred
from robot_core.control.interfaces import split_interface_name
from robot_core.control.messages import DynamicJointStateData, InterfaceValueData, JointStateData
from robot_core.parameter_spec import ParamSpec as P


def _field_map(field: str) -> P:
    return P(f"map_interface_to_joint_state.{field}", "string", field,
             f"the state interface whose value fills the '{field}' field of /joint_states")


class JointStateBroadcaster(Controller):
    type_name = "joint_state_broadcaster/JointStateBroadcaster"
    PARAMS = (
        UPDATE_RATE,
        P("joints", "string[]", [], "with interfaces: read exactly <joint>/<interface> for each pair; empty (or "
          "interfaces empty): read every state interface the hardware offers"),
        P("interfaces", "string[]", [], "the state interfaces read for each of joints (see joints)"),
        P("use_local_topics", "bool", False, "publish on ~/joint_states and ~/dynamic_joint_states instead of "
          "/joint_states and /dynamic_joint_states"),
        P("use_urdf_to_filter", "bool", True, "with a robot description, /joint_states lists only the URDF's joints "
          "(sensors and GPIOs still appear in /dynamic_joint_states)"),
        P("extra_joints", "string[]", [], "joints published in /joint_states with position, velocity and effort 0 "
          "(joints the hardware does not know, e.g. passive ones)"),
        _field_map("position"), _field_map("velocity"), _field_map("effort"),
    )

    def on_init(self) -> None:
        self._read_params()

    def _read_params(self) -> None:
        p = self.params
        self.joints = p.str_list("joints", [])
        self.interfaces = p.str_list("interfaces", [])
        self.use_local_topics = p.bool("use_local_topics", False)
        self.use_urdf_to_filter = p.bool("use_urdf_to_filter", True)
        self.extra_joints = p.str_list("extra_joints", [])
        self.field_map = {
            "position": p.str("map_interface_to_joint_state.position", "position"),
            "velocity": p.str("map_interface_to_joint_state.velocity", "velocity"),
            "effort": p.str("map_interface_to_joint_state.effort", "effort"),
        }

    def on_configure(self) -> None:
        self._read_params()

    def state_interface_configuration(self) -> list[str] | str:
        if self.joints and self.interfaces:
            return [f"{j}/{i}" for j in self.joints for i in self.interfaces]
        return ALL_INTERFACES

    def on_activate(self) -> None:
        names = self.state_interfaces.names if self.state_interfaces is not None else []
        per_joint: dict[str, list[tuple[str, int]]] = {}
        for k, full in enumerate(names):
            prefix, iface = split_interface_name(full)
            per_joint.setdefault(prefix, []).append((iface, k))
        hw_order = {n: i for i, n in enumerate(per_joint)}
        urdf_order = {n: i for i, n in enumerate(self.robot.joints)} if self.robot is not None else {}
        order = sorted(per_joint, key=lambda n: (0, urdf_order[n]) if n in urdf_order else (1, hw_order[n]))
        self._dyn_joints = order
        self._dyn_ifaces = [[iface for iface, _ in per_joint[j]] for j in order]
        self._dyn_index = np.array([k for j in order for _, k in per_joint[j]], dtype=np.intp)
        bounds = np.concatenate([[0], np.cumsum([len(per_joint[j]) for j in order])]).astype(int).tolist()
        self._dyn_slices = list(itertools.pairwise(bounds))
        # /joint_states: joints having at least one mapped field
        js = []
        for j in order:
            if self.robot is not None and self.use_urdf_to_filter and j not in self.robot.joints:
                continue
            ifaces = {iface: k for iface, k in per_joint[j]}
            if any(self.field_map[f] in ifaces for f in ("position", "velocity", "effort")):
                js.append((j, ifaces))
        self._js_names = [j for j, _ in js] + [j for j in self.extra_joints if j not in per_joint]
        n_hw = len(js)
        self._js_src = []
        for f in ("position", "velocity", "effort"):
            rows = [r for r, (_, ifaces) in enumerate(js) if self.field_map[f] in ifaces]
            srcs = [js[r][1][self.field_map[f]] for r in rows]
            self._js_src.append((np.array(rows, dtype=np.intp), np.array(srcs, dtype=np.intp)))
        self._n_hw = n_hw

    def joint_state_data(self, time: float) -> JointStateData:
        return self._joint_state_from(time, self._values())

    def dynamic_joint_state_data(self, time: float) -> DynamicJointStateData:
        return self._dynamic_from(time, self._values())

    def _values(self) -> np.ndarray:
        return self.state_interfaces.get() if self.state_interfaces is not None else np.zeros(0)

    def _joint_state_from(self, time: float, values: np.ndarray) -> JointStateData:
        n = len(self._js_names)
        fields = []
        for rows, srcs in self._js_src:
            arr = np.full(n, np.nan)
            arr[self._n_hw:] = 0.0
            arr[rows] = values[srcs]
            fields.append(arr)
        return JointStateData(list(self._js_names), fields[0], fields[1], fields[2], time)

    def _dynamic_from(self, time: float, values: np.ndarray) -> DynamicJointStateData:
        flat = values[self._dyn_index].tolist()
        return DynamicJointStateData(
            list(self._dyn_joints),
            [InterfaceValueData(list(ifaces), flat[a:b]) for ifaces, (a, b) in zip(self._dyn_ifaces, self._dyn_slices,
                                                                                   strict=True)],
            time)

    def update(self, time: float, period: float) -> None:
        # one copy of the state values per cycle; both messages are shaped later, off the loop
        values = self._values()
        self.emit("joint_states", Deferred(self._joint_state_from, time, values))
        self.emit("dynamic_joint_states", Deferred(self._dynamic_from, time, values))
