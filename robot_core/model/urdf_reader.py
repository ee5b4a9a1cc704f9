"""URDF XML -> RobotModel, keeping the line of every element so errors can point at it.

Reads the whole URDF feature tree (links, all six joint types with every joint sub-element, materials,
transmissions), the Gazebo ``<sensor>`` blocks (:mod:`robot_core.model.sensors`), and the two extensions
robot_core relies on: ``<ros2_control>`` blocks (with ros2_control's own ``<transmission>`` form inside them, read
into the same ``RobotModel.transmissions``) and ``<rbc>`` tags, and the writer's standard-URDF spellings of
unbounded joints and capsules (:mod:`robot_core.model.urdf_conventions`).
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from xml.parsers import expat

import numpy as np

from robot_core.model import validation
from robot_core.model.package_paths import resolve_uri
from robot_core.model.robot_model import (
    Calibration,
    Collision,
    Dynamics,
    Geometry,
    Inertial,
    Joint,
    Limit,
    Link,
    Material,
    Mimic,
    Pose,
    RbcMsg,
    RbcNode,
    RbcVar,
    RobotModel,
    RobotModelError,
    Ros2Control,
    Ros2ControlInterface,
    Ros2ControlJoint,
    Ros2ControlSensor,
    SafetyController,
    SourceRef,
    Transmission,
    TransmissionActuator,
    TransmissionJoint,
    Visual,
)
from robot_core.model.sensors import read_sensors
from robot_core.model.urdf_conventions import SHAPE_ATTRIBUTE, STAND_IN_ELEMENT, bound_from_urdf

GEOMETRY_KINDS = ("box", "cylinder", "sphere", "mesh", "capsule")
_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off", "")
# ros2_control's transmission_interface plugins; only SimpleTransmission is simulated (see physics/actuation.py).
KNOWN_TRANSMISSION_PLUGINS = ("transmission_interface/SimpleTransmission",
                              "transmission_interface/DifferentialTransmission",
                              "transmission_interface/FourBarLinkageTransmission")
MULTI_JOINT_PLUGINS = ("transmission_interface/DifferentialTransmission",
                       "transmission_interface/FourBarLinkageTransmission")
# How many (joints, actuators) each transmission type couples (None: any number); control/transmissions.py
# propagates them. A transmission of another shape is ignored with a warning, its joints driven directly.
TRANSMISSION_SHAPES: dict[str, tuple[int | None, int]] = {
    "transmission_interface/SimpleTransmission": (1, 1), "SimpleTransmission": (1, 1),
    "pr2_mechanism_model/SimpleTransmission": (1, 1),
    "transmission_interface/DifferentialTransmission": (2, 2), "DifferentialTransmission": (2, 2),
    "pr2_mechanism_model/WristTransmission": (2, 2), "WristTransmission": (2, 2),
    "pr2_mechanism_model/PR2GripperTransmission": (None, 1), "PR2GripperTransmission": (None, 1),
}


def parse_xml(text: str | bytes, source_file: str = "<string>") -> tuple[ET.Element, dict[ET.Element, int]]:
    """Parse XML with expat, returning the root and the start line of every element."""
    builder = ET.TreeBuilder()
    lines: dict[ET.Element, int] = {}
    parser = expat.ParserCreate()

    def start(tag: str, attrs: dict[str, str]) -> None:
        lines[builder.start(tag, attrs)] = parser.CurrentLineNumber

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        raise RobotModelError(
            f"malformed XML: {expat.errors.messages[exc.code]} (column {exc.offset})",
            SourceRef(source_file, exc.lineno, "XML"),
        ) from None
    return builder.close(), lines


def _add_unique(table: dict, item: Link | Joint, kind: str) -> None:
    """Add a link or joint by name; a second definition is an error pointing at both lines."""
    if item.name in table:
        first = table[item.name].source.line
        raise RobotModelError(f"duplicate {kind} name '{item.name}' (first defined on line {first})", item.source)
    table[item.name] = item


class _UrdfReader:
    """One read of one document; holds the file name, line table and mesh search paths."""

    def __init__(self, source_file: str, lines: dict[ET.Element, int], package_dirs, base_dir: str | None,
                 strict_inertia: bool = False):
        self.file = source_file
        self.strict_inertia = strict_inertia
        self.lines = lines
        self.package_dirs = list(package_dirs or [])
        self.base_dir = base_dir
        self.unresolved: list[tuple[str, SourceRef]] = []

    # --- small helpers ------------------------------------------------------
    def ref(self, el: ET.Element, element: str) -> SourceRef:
        return SourceRef(self.file, self.lines.get(el), element)

    def floats(self, el: ET.Element, attr: str, n: int, where: str, default: list[float] | None = None) -> np.ndarray:
        text = el.get(attr)
        if text is None:
            if default is None:
                raise RobotModelError(f"missing attribute '{attr}'", self.ref(el, where))
            return np.array(default, dtype=float)
        parts = text.split()
        try:
            values = [float(p) for p in parts]
        except ValueError:
            values = []
        if len(values) != n:
            raise RobotModelError(f"attribute {attr}=\"{text}\" must be {n} numbers", self.ref(el, where))
        if not all(math.isfinite(v) for v in values):
            raise RobotModelError(f"attribute {attr}=\"{text}\" must be {n} finite numbers (no nan or inf)",
                                  self.ref(el, where))
        return np.array(values, dtype=float)

    def number(self, el: ET.Element, attr: str, where: str, default: float | None = None) -> float | None:
        text = el.get(attr)
        if text is None:
            return default
        return self.parse_number(text, el, f"attribute {attr}", where)

    def required_number(self, el: ET.Element, attr: str, where: str) -> float:
        value = self.number(el, attr, where)
        if value is None:
            raise RobotModelError(f"missing attribute '{attr}'", self.ref(el, where))
        return value

    def parse_number(self, text: str, el: ET.Element, what: str, where: str) -> float:
        try:
            value = float(text.strip())
        except ValueError:
            value = math.nan
        if math.isnan(value):
            raise RobotModelError(f"{what}=\"{text}\" is not a number", self.ref(el, where))
        return value

    def required_attr(self, el: ET.Element, attr: str, where: str) -> str:
        value = el.get(attr)
        if value is None or value == "":
            raise RobotModelError(f"missing attribute '{attr}'", self.ref(el, where))
        return value

    def boolean(self, el: ET.Element, attr: str, where: str, default: bool = False) -> bool:
        text = el.get(attr)
        if text is None:
            return default
        low = text.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise RobotModelError(f"attribute {attr}=\"{text}\" is not a boolean", self.ref(el, where))

    def origin(self, parent: ET.Element, where: str) -> Pose:
        el = parent.find("origin")
        if el is None:
            return Pose()
        return Pose(
            self.floats(el, "xyz", 3, f"{where} <origin>", [0.0, 0.0, 0.0]),
            self.floats(el, "rpy", 3, f"{where} <origin>", [0.0, 0.0, 0.0]),
        )

    # --- document -----------------------------------------------------------
    def robot(self, root: ET.Element) -> RobotModel:
        if root.tag != "robot":
            raise RobotModelError(f"root element is <{root.tag}>, expected <robot>", self.ref(root, f"<{root.tag}>"))
        name = self.required_attr(root, "name", "<robot>")
        model = RobotModel(name=name, source_file=self.file)
        inline_materials = self.collect_materials(root, model)
        for el in root.findall("link"):
            _add_unique(model.links, self.link(el, model, inline_materials), "link")
        for el in root.findall("joint"):
            _add_unique(model.joints, self.joint(el), "joint")
        ros1 = [self.transmission(el) for el in root.findall("transmission")]
        model.ros2_control = [self.ros2_control(el) for el in root.findall("ros2_control")]
        ros2 = [self.ros2_control_transmission(t, block.name)
                for el, block in zip(root.findall("ros2_control"), model.ros2_control, strict=True)
                for t in el.findall("transmission")]
        model.transmissions = self.known_transmissions(model, self.one_per_joint(ros1, ros2))
        self.apply_initial_values(model)
        model.sensors = read_sensors(root, model, self.ref)
        if self.unresolved:
            shown = ", ".join(f"'{f}' ({r})" for f, r in self.unresolved[:3])
            more = f" and {len(self.unresolved) - 3} more" if len(self.unresolved) > 3 else ""
            validation.warn(f"could not resolve {len(self.unresolved)} mesh file(s): {shown}{more}; "
                            "pass package_dirs or set AMENT_PREFIX_PATH/ROS_PACKAGE_PATH",
                            SourceRef(self.file))
        return model

    def collect_materials(self, root: ET.Element, model: RobotModel) -> dict[str, Material]:
        """Global <material>s go into the model; named inline ones may be referenced from elsewhere too."""
        for el in root.findall("material"):
            mat = self.material(el, "<material>")
            if mat.name in model.materials:
                validation.warn(f"material '{mat.name}' defined twice; keeping the first", self.ref(el, "<material>"))
                continue
            model.materials[mat.name] = mat
        inline: dict[str, Material] = {}
        for link_el in root.findall("link"):
            for vis in link_el.findall("visual"):
                el = vis.find("material")
                defines = el is not None and (el.find("color") is not None or el.find("texture") is not None)
                if defines and el.get("name"):
                    inline.setdefault(el.get("name"), self.material(el, f"link '{link_el.get('name')}' <material>"))
        return inline

    def material(self, el: ET.Element, where: str) -> Material:
        mat = Material(name=el.get("name", ""))
        color = el.find("color")
        if color is not None:
            mat.rgba = self.floats(color, "rgba", 4, f"{where} <color>")
        texture = el.find("texture")
        if texture is not None:
            mat.texture = texture.get("filename", "")
        return mat

    # --- links --------------------------------------------------------------
    def link(self, el: ET.Element, model: RobotModel, inline_materials: dict[str, Material]) -> Link:
        name = self.required_attr(el, "name", "<link>")
        where = f"link '{name}'"
        link = Link(name=name, source=self.ref(el, where))
        inertial_el = el.find("inertial")
        if inertial_el is not None:
            link.inertial = self.inertial(inertial_el, where)
        for vis in el.findall("visual"):
            visual = Visual(geometry=self.geometry(vis, f"{where} <visual>"), name=vis.get("name", ""),
                            origin=self.origin(vis, f"{where} <visual>"))
            mat_el = vis.find("material")
            if mat_el is not None:
                visual.material = self.visual_material(mat_el, where, model, inline_materials)
            link.visuals.append(visual)
        for col in el.findall("collision"):
            link.collisions.append(Collision(geometry=self.geometry(col, f"{where} <collision>"),
                                             name=col.get("name", ""),
                                             origin=self.origin(col, f"{where} <collision>")))
        return link

    def visual_material(self, el: ET.Element, where: str, model: RobotModel,
                        inline_materials: dict[str, Material]) -> Material:
        mat = self.material(el, f"{where} <material>")
        if mat.rgba is None and not mat.texture and mat.name:
            known = model.materials.get(mat.name) or inline_materials.get(mat.name)
            if known is None:
                validation.warn(f"material '{mat.name}' is not defined", self.ref(el, f"{where} <material>"))
                return mat
            return Material(known.name, None if known.rgba is None else known.rgba.copy(), known.texture)
        return mat

    def inertial(self, el: ET.Element, where: str) -> Inertial | None:
        ref = self.ref(el, f"{where} <inertial>")
        mass_el = el.find("mass")
        if mass_el is None:
            raise RobotModelError("<inertial> has no <mass>", ref)
        mass = self.required_number(mass_el, "value", f"{where} <mass>")
        inertia_el = el.find("inertia")
        if inertia_el is None:
            raise RobotModelError("<inertial> has no <inertia>", ref)
        comps = [self.number(inertia_el, k, f"{where} <inertia>", 0.0) for k in
                 ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")]
        if mass == 0.0 and not any(comps):
            # The common idiom for a massless frame (e.g. Panda's link8): same as leaving out <inertial>.
            return None
        if mass == 0.0:
            # urdfdom and Pinocchio accept it; an inertia without mass has no physical meaning.
            validation.warn(f"zero mass with a non-zero inertia {comps}; treated as a massless link", ref)
            return None
        inertial = Inertial(mass=mass, origin=self.origin(el, f"{where} <inertial>"),
                            inertia=Inertial.inertia_matrix(*comps), source=ref)
        validation.check_inertial(inertial, ref, self.strict_inertia)
        return inertial

    def geometry(self, parent: ET.Element, where: str) -> Geometry:
        geo_el = parent.find("geometry")
        if geo_el is None:
            raise RobotModelError("missing <geometry>", self.ref(parent, where))
        shapes = [c for c in geo_el if isinstance(c.tag, str)]
        if len(shapes) != 1:
            raise RobotModelError(f"<geometry> must hold exactly one shape, found {len(shapes)}",
                                  self.ref(geo_el, f"{where} <geometry>"))
        shape = shapes[0]
        kind = shape.tag
        swhere = f"{where} <{kind}>"
        marked = shape.get(SHAPE_ATTRIBUTE)
        if marked is not None:
            if STAND_IN_ELEMENT.get(marked) != kind:
                raise RobotModelError(f"{SHAPE_ATTRIBUTE}=\"{marked}\" cannot be written as <{kind}>",
                                      self.ref(shape, swhere))
            kind = marked
        if kind == "box":
            return Geometry("box", size=self.floats(shape, "size", 3, swhere))
        if kind in ("cylinder", "capsule"):
            return Geometry(kind, radius=self.required_number(shape, "radius", swhere),
                            length=self.required_number(shape, "length", swhere))
        if kind == "sphere":
            return Geometry("sphere", radius=self.required_number(shape, "radius", swhere))
        if kind == "mesh":
            filename = self.required_attr(shape, "filename", swhere)
            geo = Geometry("mesh", filename=filename, scale=self.floats(shape, "scale", 3, swhere, [1.0, 1.0, 1.0]))
            geo.resolved_filename = resolve_uri(filename, self.package_dirs, self.base_dir)
            if geo.resolved_filename is None:
                self.unresolved.append((filename, self.ref(shape, swhere)))
            return geo
        raise RobotModelError(f"unknown geometry <{kind}> (expected one of {', '.join(GEOMETRY_KINDS)})",
                              self.ref(shape, swhere))

    # --- joints -------------------------------------------------------------
    def joint(self, el: ET.Element) -> Joint:
        name = self.required_attr(el, "name", "<joint>")
        where = f"joint '{name}'"
        ref = self.ref(el, where)
        jtype = self.required_attr(el, "type", where)
        validation.check_joint_type(jtype, ref)
        links = {}
        for role in ("parent", "child"):
            role_el = el.find(role)
            if role_el is None:
                raise RobotModelError(f"missing <{role}>", ref)
            links[role] = self.required_attr(role_el, "link", f"{where} <{role}>")
        joint = Joint(name=name, type=jtype, parent=links["parent"], child=links["child"],
                      origin=self.origin(el, where), source=ref)
        axis_el = el.find("axis")
        # urdfdom ignores the axis of fixed and floating joints, so real files leave any there (even 0 0 0).
        if axis_el is not None and jtype not in ("fixed", "floating"):
            axis = self.floats(axis_el, "xyz", 3, f"{where} <axis>", [1.0, 0.0, 0.0])
            joint.axis = validation.check_axis(axis, self.ref(axis_el, f"{where} <axis>"))
        cal = el.find("calibration")
        if cal is not None:
            w = f"{where} <calibration>"
            joint.calibration = Calibration(self.number(cal, "rising", w), self.number(cal, "falling", w),
                                            self.number(cal, "reference_position", w))
        dyn = el.find("dynamics")
        if dyn is not None:
            w = f"{where} <dynamics>"
            joint.dynamics = Dynamics(self.number(dyn, "damping", w, 0.0), self.number(dyn, "friction", w, 0.0))
        lim = el.find("limit")
        if lim is not None:
            joint.limit = self.limit(lim, jtype, where)
            if jtype in ("revolute", "prismatic") and joint.limit == Limit():
                joint.limit = None  # how the writer spells "no limit" (see urdf_conventions)
        elif jtype in ("revolute", "prismatic"):
            validation.warn(f"{jtype} joint has no <limit>; treating it as unlimited", ref)
        mim = el.find("mimic")
        if mim is not None:
            w = f"{where} <mimic>"
            joint.mimic = Mimic(self.required_attr(mim, "joint", w), self.number(mim, "multiplier", w, 1.0),
                                self.number(mim, "offset", w, 0.0))
        safety = el.find("safety_controller")
        if safety is not None:
            w = f"{where} <safety_controller>"
            joint.safety_controller = SafetyController(
                self.number(safety, "soft_lower_limit", w, 0.0), self.number(safety, "soft_upper_limit", w, 0.0),
                self.number(safety, "k_position", w, 0.0), self.number(safety, "k_velocity", w, 0.0))
        joint.rbc = [self.rbc_node(node_el, name, where) for node_el in el.findall("rbc")]
        return joint

    def limit(self, el: ET.Element, jtype: str, where: str) -> Limit:
        w = f"{where} <limit>"
        limit = Limit(effort=self.number(el, "effort", w, 0.0), velocity=self.number(el, "velocity", w, 0.0))
        if jtype in ("revolute", "prismatic"):
            # URDF: lower/upper default to 0 on joints that have a range; +-UNBOUNDED_LIMIT means none.
            limit.lower = bound_from_urdf(self.number(el, "lower", w, 0.0), upper=False)
            limit.upper = bound_from_urdf(self.number(el, "upper", w, 0.0), upper=True)
        validation.check_limit(jtype, limit, self.ref(el, w))
        return limit

    def rbc_node(self, el: ET.Element, joint: str, where: str) -> RbcNode:
        w = f"{where} <rbc>"
        node = RbcNode(node=self.required_attr(el, "node", w), joint=joint, source=self.ref(el, w))
        for var_el in el.findall("var"):
            vname = self.required_attr(var_el, "name", f"{w} <var>")
            vw = f"{where} <rbc node='{node.node}'> var '{vname}'"
            vref = self.ref(var_el, vw)
            msg_el = var_el.find("msg")
            if msg_el is None:
                raise RobotModelError("<var> has no <msg>", vref)
            mw = f"{vw} <msg>"
            msg_type = self.required_attr(msg_el, "type", mw)
            path, inner = [], msg_el
            while True:  # a <msg> inside a <msg>: a field of the outer field's message, any depth
                index = self.number(inner, "index", mw, 0.0)
                if index != int(index):
                    raise RobotModelError(f"index {index} is not an integer", self.ref(inner, mw))
                field_array = self.boolean(inner, "field_array", mw)
                deeper = inner.find("msg")
                if deeper is None:
                    break
                if not inner.get("field"):
                    raise RobotModelError("a <msg> holding another <msg> needs the field that holds that message",
                                          self.ref(inner, mw))
                path.append(inner.get("field", "") + (f"[{int(index)}]" if field_array else ""))
                inner, mw = deeper, f"{mw} <msg>"
            if path and not inner.get("field"):
                raise RobotModelError("an inner <msg> needs a field", self.ref(inner, mw))
            msg = RbcMsg(type=msg_type, field=".".join([*path, inner.get("field", "")]) if path else inner.get(
                         "field", ""), field_array=field_array, index=int(index),
                         index_type=inner.get("index_type", "float"))
            var = RbcVar(name=vname, topic=self.required_attr(var_el, "topic", vw), type=var_el.get("type", ""),
                         msg=msg, init=self.number(var_el, "init", vw, 0.0), source=vref)
            if var.type not in validation.RBC_VAR_TYPES:
                raise RobotModelError(f"rbc var type '{var.type}' must be 'state' or 'cmd'", vref)
            node.vars.append(var)
        return node

    # --- transmissions and ros2_control ------------------------------------
    def transmission(self, el: ET.Element) -> Transmission:
        name = self.required_attr(el, "name", "<transmission>")
        where = f"transmission '{name}'"
        type_el = el.find("type")
        ttype = (type_el.text or "").strip() if type_el is not None else el.get("type", "")
        trans = Transmission(name=name, type=ttype, source=self.ref(el, where))
        shared_reduction = self.reduction(el, where)
        for j in el.findall("joint"):
            trans.joints.append(TransmissionJoint(self.required_attr(j, "name", f"{where} <joint>"),
                                                  self.hardware_interfaces(j)))
        for a in el.findall("actuator"):
            aw = f"{where} <actuator>"
            reduction = self.reduction(a, aw)
            if reduction is None:
                reduction = shared_reduction if shared_reduction is not None else 1.0
            trans.actuators.append(TransmissionActuator(self.required_attr(a, "name", aw), reduction,
                                                        self.hardware_interfaces(a)))
        self.pr2_transmission_elements(el, trans, where)
        return trans

    def pr2_transmission_elements(self, el: ET.Element, trans: Transmission, where: str) -> None:
        """pr2_mechanism_model's own elements: the wrist's ``<rightActuator>``, ``<leftActuator>``,
        ``<flexJoint>``, ``<rollJoint>`` (``mechanicalReduction`` attributes) and the gripper's ``<gap_joint>``
        (its linkage attributes go to ``Transmission.params``) and ``<passive_joint>``s."""
        for tag, role in (("rightActuator", "right"), ("leftActuator", "left")):
            for a in el.findall(tag):
                aw = f"{where} <{tag}>"
                red = a.get("mechanicalReduction")
                trans.actuators.append(TransmissionActuator(
                    self.required_attr(a, "name", aw),
                    1.0 if red is None else self.parse_number(red, a, "mechanicalReduction", aw), role=role))
        for tag, role in (("flexJoint", "flex"), ("rollJoint", "roll"), ("gap_joint", "gap"),
                          ("passive_joint", "passive")):
            for j in el.findall(tag):
                jw = f"{where} <{tag}>"
                red = j.get("mechanicalReduction", j.get("mechanical_reduction"))
                if role == "gap":
                    trans.params.update({k: v for k, v in j.attrib.items() if k != "name"})
                trans.joints.append(TransmissionJoint(
                    self.required_attr(j, "name", jw), role=role,
                    mechanical_reduction=1.0 if red is None else self.parse_number(red, j, "mechanicalReduction", jw)))

    def ros2_control_transmission(self, el: ET.Element, block: str) -> Transmission:
        """ros2_control's own form: ``<plugin>``, ``<actuator name role>``, ``<joint name role>`` holding
        ``<mechanical_reduction>`` and ``<offset>``. Like ros2_control's SimpleTransmission the joint's reduction
        applies; one written under ``<actuator>`` (or the transmission) instead is taken, with a warning."""
        name = self.required_attr(el, "name", f"ros2_control '{block}' <transmission>")
        where = f"ros2_control '{block}' transmission '{name}'"
        ref = self.ref(el, where)
        plugin_el = el.find("plugin")
        if plugin_el is None:
            plugin_el = el.find("type")
        plugin = (plugin_el.text or "").strip() if plugin_el is not None else ""
        trans = Transmission(name=name, type=plugin, source=ref, ros2_control=block)
        joint_reduction: float | None = None
        multi = plugin in MULTI_JOINT_PLUGINS
        for j in el.findall("joint"):
            jw = f"{where} <joint>"
            offset_el = j.find("offset")
            offset = 0.0 if offset_el is None else self.parse_number(offset_el.text or "", offset_el, "<offset>", jw)
            trans.joints.append(TransmissionJoint(self.required_attr(j, "name", jw), self.hardware_interfaces(j),
                                                  offset, j.get("role", "")))
            if joint_reduction is None:
                joint_reduction = self.reduction(j, jw)
        other = self.reduction(el, where)
        for a in el.findall("actuator"):
            aw = f"{where} <actuator>"
            trans.actuators.append(TransmissionActuator(self.required_attr(a, "name", aw), 1.0,
                                                        self.hardware_interfaces(a), a.get("role", "")))
            if other is None:
                other = self.reduction(a, aw)
        reduction = joint_reduction
        if multi:
            pass
        elif reduction is None and other is not None:
            validation.warn(f"<mechanical_reduction> {other:g} is not under <joint> (where ros2_control's "
                            "SimpleTransmission reads it); taken as the joint's reduction", ref)
            reduction = other
        elif reduction is not None and other is not None and other not in (1.0, reduction):
            validation.warn(f"the joint's <mechanical_reduction> {reduction:g} applies; {other:g} under "
                            "<actuator> is ignored, as ros2_control ignores it", ref)
        if plugin in MULTI_JOINT_PLUGINS:
            # a differential has its own reduction on every actuator and every joint
            for j, jel in zip(trans.joints, el.findall("joint"), strict=True):
                r = self.reduction(jel, f"{where} <joint>")
                j.mechanical_reduction = 1.0 if r is None else r
            for act, ael in zip(trans.actuators, el.findall("actuator"), strict=True):
                r = self.reduction(ael, f"{where} <actuator>")
                act.mechanical_reduction = 1.0 if r is None else r
        else:
            for act in trans.actuators:
                act.mechanical_reduction = 1.0 if reduction is None else reduction
        if plugin not in KNOWN_TRANSMISSION_PLUGINS:
            shown = f"plugin '{plugin}'" if plugin else "no <plugin>"
            validation.warn(f"{shown} is not a transmission robot_core knows ({', '.join(KNOWN_TRANSMISSION_PLUGINS)})"
                            "; transmission ignored, its joints are driven directly", ref)
            trans.joints = []
        return trans

    @staticmethod
    def one_per_joint(ros1: list[Transmission], ros2: list[Transmission]) -> list[Transmission]:
        """Descriptions often keep their ROS 1 ``<transmission>`` next to the ``<ros2_control>`` one for the same
        joint; the ros2_control one wins, so each joint has one transmission (a warning when they disagree)."""
        claimed = {j.name: t for t in ros2 for j in t.joints}
        kept = []
        for trans in ros1:
            twins = [(j.name, claimed[j.name]) for j in trans.joints if j.name in claimed]
            if twins:
                joint, twin = twins[0]
                mine = [a.mechanical_reduction for a in trans.actuators]
                theirs = [a.mechanical_reduction for a in twin.actuators]
                if mine != theirs or len(trans.joints) != len(twin.joints):
                    validation.warn(f"joint '{joint}' also has transmission '{twin.name}' in <ros2_control> "
                                    f"'{twin.ros2_control}' (line {twin.source.line}), which differs; that one "
                                    "applies, this one is ignored", trans.source)
                continue
            kept.append(trans)
        return kept + [t for t in ros2 if t.joints]

    @staticmethod
    def known_transmissions(model: RobotModel, transmissions: list[Transmission]) -> list[Transmission]:
        """Drop transmissions naming joints the robot lacks: urdfdom and Pinocchio load such files (stale
        hardware notes), so they are a warning, not a refusal."""
        kept = []
        for trans in transmissions:
            gap_missing = [t for t in trans.joints if t.role == "gap" and t.name not in model.joints]
            if gap_missing and trans.type in TRANSMISSION_SHAPES and TRANSMISSION_SHAPES[trans.type][0] is None:
                validation.warn(f"gap joint '{gap_missing[0].name}' does not exist; the actuator drives the finger "
                                "joints only", trans.source)
                trans.joints = [t for t in trans.joints if t not in gap_missing]
                trans.params["gap_joint"] = gap_missing[0].name  # kept, so a written file names it again
            missing = [t.name for t in trans.joints if t.name not in model.joints]
            shape = TRANSMISSION_SHAPES.get(trans.type)
            if shape is None:
                validation.warn(f"type '{trans.type}' is not a transmission robot_core propagates (simple, "
                                "differential, PR2 wrist, PR2 gripper); transmission ignored, its joints are "
                                "driven directly", trans.source)
                continue
            n_j, n_a = shape
            if (n_j is not None and len(trans.joints) != n_j) or len(trans.actuators) != n_a or not trans.joints:
                validation.warn(f"type '{trans.type}' couples {n_j or 'one or more'} joint(s) and {n_a} "
                                f"actuator(s), this one names joints {[t.name for t in trans.joints]} and actuators "
                                f"{[a.name for a in trans.actuators]}; transmission ignored, its joints are driven "
                                "directly", trans.source)
                continue
            if missing:
                names = ", ".join(f"'{n}'" for n in missing)
                validation.warn(f"names joint(s) {names} which do not exist; transmission ignored", trans.source)
                continue
            kept.append(trans)
        return kept

    def reduction(self, el: ET.Element, where: str) -> float | None:
        for tag in ("mechanicalReduction", "mechanical_reduction"):
            r = el.find(tag)
            if r is not None:
                return self.parse_number(r.text or "", r, f"<{tag}>", where)
        return None

    @staticmethod
    def hardware_interfaces(el: ET.Element) -> list[str]:
        return [(h.text or "").strip() for h in el.findall("hardwareInterface")]

    @staticmethod
    def params(el: ET.Element) -> dict[str, str]:
        return {p.get("name", ""): (p.text or "").strip() for p in el.findall("param")}

    def ros2_control(self, el: ET.Element) -> Ros2Control:
        name = self.required_attr(el, "name", "<ros2_control>")
        where = f"ros2_control '{name}'"
        block = Ros2Control(name=name, type=el.get("type", "system"), source=self.ref(el, where))
        hw = el.find("hardware")
        if hw is not None:
            plugin = hw.find("plugin")
            block.plugin = (plugin.text or "").strip() if plugin is not None else ""
            block.hardware_params = self.params(hw)
        for j in el.findall("joint"):
            jname = self.required_attr(j, "name", f"{where} <joint>")
            jw = f"{where} joint '{jname}'"
            block.joints.append(Ros2ControlJoint(
                jname, [self.interface(i, jw) for i in j.findall("command_interface")],
                [self.interface(i, jw) for i in j.findall("state_interface")], self.params(j)))
        for tag, target in (("sensor", block.sensors), ("gpio", block.gpios)):
            for s in el.findall(tag):
                sname = self.required_attr(s, "name", f"{where} <{tag}>")
                sw = f"{where} {tag} '{sname}'"
                target.append(Ros2ControlSensor(
                    sname, [self.interface(i, sw) for i in s.findall("state_interface")], self.params(s),
                    command_interfaces=[self.interface(i, sw) for i in s.findall("command_interface")],
                    source=self.ref(s, f"<{tag} name='{sname}'>")))
        return block

    def interface(self, el: ET.Element, where: str) -> Ros2ControlInterface:
        iname = self.required_attr(el, "name", f"{where} <{el.tag}>")
        w = f"{where} <{el.tag} name='{iname}'>"
        iface = Ros2ControlInterface(name=iname, params=self.params(el), data_type=el.get("data_type", "double"))
        for key in ("min", "max", "initial_value"):
            if key in iface.params:
                param_el = next(p for p in el.findall("param") if p.get("name") == key)
                setattr(iface, key, self.parse_number(iface.params[key], param_el, f"param {key}", w))
        return iface

    @staticmethod
    def apply_initial_values(model: RobotModel) -> None:
        for block in model.ros2_control:
            for rc_joint in block.joints:
                joint = model.joints.get(rc_joint.name)
                for iface in rc_joint.state_interfaces:
                    if joint is not None and iface.name == "position" and iface.initial_value is not None:
                        joint.initial_position = iface.initial_value


def read_urdf(
    text: str | bytes,
    source_file: str = "<string>",
    package_dirs=None,
    base_dir: str | os.PathLike | None = None,
    validate: bool = True,
    strict_inertia: bool = False,
) -> RobotModel:
    """Parse URDF text. ``base_dir`` anchors relative mesh paths (defaults to the file's folder).

    ``strict_inertia`` turns a broken inertia triangle inequality from a warning into an error.
    """
    if base_dir is None and source_file != "<string>" and not source_file.startswith("<"):
        base_dir = str(Path(source_file).resolve().parent)
    root, lines = parse_xml(text, source_file)
    reader = _UrdfReader(source_file, lines, package_dirs, None if base_dir is None else str(base_dir),
                         strict_inertia)
    model = reader.robot(root)
    model.urdf_xml = text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text
    if validate:
        validation.validate_model(model, check_inertials=False)
    return model


def read_urdf_file(path: str | os.PathLike, package_dirs=None, validate: bool = True,
                   strict_inertia: bool = False) -> RobotModel:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise RobotModelError(f"cannot read file: {exc.strerror}", SourceRef(str(path))) from None
    return read_urdf(data, str(path), package_dirs, str(p.resolve().parent), validate, strict_inertia)
