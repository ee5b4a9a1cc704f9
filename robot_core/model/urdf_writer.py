"""RobotModel -> URDF XML, writing everything the reader reads so that read(write(model)) == model.

The output is standard URDF that urdfdom (and so ROS tools and Pinocchio) accepts; what URDF cannot say
(unbounded revolute/prismatic joints, capsules) is spelled as documented in
:mod:`robot_core.model.urdf_conventions`. Numbers are written with Python's shortest round-trip repr, so
nothing is lost to formatting.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from robot_core.model import validation
from robot_core.model.robot_model import (
    Collision,
    Geometry,
    Inertial,
    Joint,
    Limit,
    Link,
    Material,
    Pose,
    RbcNode,
    RobotModel,
    RobotModelError,
    Ros2Control,
    Ros2ControlInterface,
    Ros2ControlJoint,
    Ros2ControlSensor,
    SourceRef,
    Transmission,
    Visual,
)
from robot_core.model.urdf_conventions import SHAPE_ATTRIBUTE, STAND_IN_ELEMENT, bound_to_urdf


def fmt(value: float) -> str:
    """Shortest text that parses back to exactly ``value``."""
    v = float(value)
    if v == 0.0:
        return "0"  # also folds -0.0
    text = repr(v)
    return text[:-2] if text.endswith(".0") else text


def fmt_vec(values) -> str:
    return " ".join(fmt(v) for v in np.asarray(values, dtype=float).ravel())


def _sub(parent: ET.Element, tag: str, **attrs: str) -> ET.Element:
    return ET.SubElement(parent, tag, {k: v for k, v in attrs.items() if v is not None})


def _origin(parent: ET.Element, pose: Pose, always: bool = False) -> None:
    if always or not pose.is_identity():
        _sub(parent, "origin", xyz=fmt_vec(pose.xyz), rpy=fmt_vec(pose.rpy))


def _geometry(parent: ET.Element, geo: Geometry, where: SourceRef) -> None:
    el = _sub(parent, "geometry")
    if geo.kind == "box":
        _sub(el, "box", size=fmt_vec(geo.size))
    elif geo.kind in ("cylinder", "capsule"):
        shape = _sub(el, STAND_IN_ELEMENT.get(geo.kind, geo.kind), radius=fmt(geo.radius), length=fmt(geo.length))
        if geo.kind in STAND_IN_ELEMENT:
            shape.set(SHAPE_ATTRIBUTE, geo.kind)
    elif geo.kind == "sphere":
        _sub(el, "sphere", radius=fmt(geo.radius))
    elif geo.kind == "mesh":
        mesh = _sub(el, "mesh", filename=geo.filename)
        if not np.allclose(geo.scale, 1.0, rtol=0.0, atol=0.0):
            mesh.set("scale", fmt_vec(geo.scale))
    else:
        raise RobotModelError(f"cannot write geometry kind '{geo.kind}' to URDF", where)


def _same_material(a: Material, b: Material) -> bool:
    rgba_equal = (a.rgba is None and b.rgba is None) or (
        a.rgba is not None and b.rgba is not None and np.array_equal(a.rgba, b.rgba)
    )
    return a.name == b.name and a.texture == b.texture and rgba_equal


def _material(parent: ET.Element, mat: Material, model: RobotModel, by_reference: bool) -> None:
    el = _sub(parent, "material", name=mat.name)
    known = model.materials.get(mat.name)
    if by_reference and known is not None and _same_material(known, mat):
        return
    if mat.rgba is not None:
        _sub(el, "color", rgba=fmt_vec(mat.rgba))
    if mat.texture:
        _sub(el, "texture", filename=mat.texture)


def _inertial(parent: ET.Element, inertial: Inertial) -> None:
    el = _sub(parent, "inertial")
    _origin(el, inertial.origin, always=True)
    _sub(el, "mass", value=fmt(inertial.mass))
    i = np.asarray(inertial.inertia, dtype=float)
    _sub(el, "inertia", ixx=fmt(i[0, 0]), ixy=fmt(i[0, 1]), ixz=fmt(i[0, 2]), iyy=fmt(i[1, 1]), iyz=fmt(i[1, 2]),
         izz=fmt(i[2, 2]))


def _link(parent: ET.Element, link: Link, model: RobotModel) -> None:
    el = _sub(parent, "link", name=link.name)
    where = link.source if link.source.element else SourceRef(link.source.file, link.source.line,
                                                             f"link '{link.name}'")
    if link.inertial is not None:
        _inertial(el, link.inertial)
    for vis in link.visuals:
        v = _placed_shape(el, "visual", vis, where)
        if vis.material is not None:
            _material(v, vis.material, model, by_reference=True)
    for col in link.collisions:
        _placed_shape(el, "collision", col, where)


def _placed_shape(parent: ET.Element, tag: str, item: Visual | Collision, where: SourceRef) -> ET.Element:
    el = _sub(parent, tag, name=item.name or None)
    _origin(el, item.origin)
    _geometry(el, item.geometry, where)
    return el


def _opt(value: float | None) -> str | None:
    return None if value is None else fmt(value)


def _rbc(parent: ET.Element, node: RbcNode) -> None:
    el = _sub(parent, "rbc", node=node.node)
    for var in node.vars:
        v = _sub(el, "var", name=var.name, init=fmt(var.init), topic=var.topic, type=var.type)
        m = var.msg
        _sub(v, "msg", type=m.type, field=m.field, field_array="true" if m.field_array else "false",
             index=str(m.index), index_type=m.index_type)


def _joint(parent: ET.Element, joint: Joint) -> None:
    el = _sub(parent, "joint", name=joint.name, type=joint.type)
    _origin(el, joint.origin)
    _sub(el, "parent", link=joint.parent)
    _sub(el, "child", link=joint.child)
    if joint.type in ("revolute", "continuous", "prismatic", "planar") or not np.array_equal(joint.axis, [1, 0, 0]):
        _sub(el, "axis", xyz=fmt_vec(joint.axis))
    if joint.calibration is not None:
        c = joint.calibration
        _sub(el, "calibration", rising=_opt(c.rising), falling=_opt(c.falling),
             reference_position=_opt(c.reference_position))
    if joint.dynamics is not None:
        _sub(el, "dynamics", damping=fmt(joint.dynamics.damping), friction=fmt(joint.dynamics.friction))
    if joint.limit is not None or joint.type in ("revolute", "prismatic"):
        # urdfdom requires <limit> on revolute and prismatic joints: missing bounds get the "unbounded" value.
        lim = joint.limit or Limit()
        lower, upper = lim.lower, lim.upper
        if joint.type in ("revolute", "prismatic"):
            lower, upper = bound_to_urdf(lower, upper=False), bound_to_urdf(upper, upper=True)
        _sub(el, "limit", lower=_opt(lower), upper=_opt(upper), effort=fmt(lim.effort), velocity=fmt(lim.velocity))
    if joint.mimic is not None:
        _sub(el, "mimic", joint=joint.mimic.joint, multiplier=fmt(joint.mimic.multiplier),
             offset=fmt(joint.mimic.offset))
    if joint.safety_controller is not None:
        s = joint.safety_controller
        _sub(el, "safety_controller", soft_lower_limit=fmt(s.soft_lower_limit),
             soft_upper_limit=fmt(s.soft_upper_limit), k_position=fmt(s.k_position), k_velocity=fmt(s.k_velocity))
    for node in joint.rbc:
        _rbc(el, node)


def _ros2_control_transmission(parent: ET.Element, trans: Transmission) -> None:
    """ros2_control's form, inside its block: the reduction and offset under the joint."""
    el = _sub(parent, "transmission", name=trans.name)
    _sub(el, "plugin").text = trans.type
    reduction = trans.actuators[0].mechanical_reduction if trans.actuators else 1.0
    multi = len(trans.joints) > 1 or len(trans.actuators) > 1  # a differential: a reduction on every element
    for a in trans.actuators:
        ae = _sub(el, "actuator", name=a.name, **({"role": a.role} if a.role else {}))
        if multi:
            _sub(ae, "mechanical_reduction").text = fmt(a.mechanical_reduction)
    for j in trans.joints:
        je = _sub(el, "joint", name=j.name, **({"role": j.role} if j.role else {}))
        _sub(je, "mechanical_reduction").text = fmt(j.mechanical_reduction if multi else reduction)
        if j.offset:
            _sub(je, "offset").text = fmt(j.offset)


_PR2_ACTUATOR_TAGS = {"right": "rightActuator", "left": "leftActuator"}
_PR2_JOINT_TAGS = {"flex": "flexJoint", "roll": "rollJoint", "gap": "gap_joint", "passive": "passive_joint"}


def _pr2_transmission(parent: ET.Element, trans: Transmission) -> None:
    """pr2_mechanism_model's own elements (wrist and gripper), as the PR2 descriptions write them."""
    el = _sub(parent, "transmission", name=trans.name, type=trans.type)
    for a in trans.actuators:
        if a.role in _PR2_ACTUATOR_TAGS:
            _sub(el, _PR2_ACTUATOR_TAGS[a.role], name=a.name, mechanicalReduction=fmt(a.mechanical_reduction))
        else:
            _sub(el, "actuator", name=a.name)
    linkage = dict(trans.params)
    absent_gap = linkage.pop("gap_joint", None)  # named by the file, lacking in the robot (see the reader)
    if absent_gap is not None and not any(j.role == "gap" for j in trans.joints):
        _sub(el, "gap_joint", name=absent_gap, **linkage)
    for j in trans.joints:
        if j.role == "gap":
            _sub(el, "gap_joint", name=j.name, **linkage)
        elif j.role == "passive":
            _sub(el, "passive_joint", name=j.name)
        else:
            _sub(el, _PR2_JOINT_TAGS[j.role], name=j.name, mechanicalReduction=fmt(j.mechanical_reduction))


def _transmission(parent: ET.Element, trans: Transmission) -> None:
    if any(j.role in _PR2_JOINT_TAGS for j in trans.joints):
        _pr2_transmission(parent, trans)
        return
    el = _sub(parent, "transmission", name=trans.name)
    _sub(el, "type").text = trans.type
    for j in trans.joints:
        je = _sub(el, "joint", name=j.name)
        for hi in j.hardware_interfaces:
            _sub(je, "hardwareInterface").text = hi
    for a in trans.actuators:
        ae = _sub(el, "actuator", name=a.name)
        _sub(ae, "mechanicalReduction").text = fmt(a.mechanical_reduction)
        for hi in a.hardware_interfaces:
            _sub(ae, "hardwareInterface").text = hi


def _params(parent: ET.Element, params: dict[str, str]) -> None:
    for name, value in params.items():
        _sub(parent, "param", name=name).text = value


def _interface(parent: ET.Element, tag: str, iface: Ros2ControlInterface) -> None:
    el = _sub(parent, tag, name=iface.name)
    if iface.data_type != "double":
        el.set("data_type", iface.data_type)
    params = dict(iface.params)
    for key in ("min", "max", "initial_value"):
        value = getattr(iface, key)
        if value is not None and key not in params:
            params[key] = fmt(value)
    _params(el, params)


def _component(parent: ET.Element, tag: str, item: Ros2ControlJoint | Ros2ControlSensor) -> None:
    """A <joint>, <sensor> or <gpio> of a ros2_control block: command, then state interfaces, then params."""
    el = _sub(parent, tag, name=item.name)
    for iface in item.command_interfaces:
        _interface(el, "command_interface", iface)
    for iface in item.state_interfaces:
        _interface(el, "state_interface", iface)
    _params(el, item.params)


def _ros2_control(parent: ET.Element, block: Ros2Control, transmissions: list[Transmission]) -> None:
    el = _sub(parent, "ros2_control", name=block.name, type=block.type)
    hw = _sub(el, "hardware")
    _sub(hw, "plugin").text = block.plugin
    _params(hw, block.hardware_params)
    for tag, items in (("joint", block.joints), ("sensor", block.sensors), ("gpio", block.gpios)):
        for item in items:
            _component(el, tag, item)
    for trans in transmissions:
        _ros2_control_transmission(el, trans)


def _warn_about_initial_positions(model: RobotModel) -> None:
    """URDF keeps a joint's initial position only as a <ros2_control> position initial_value (.g files have q:)."""
    kept = {j.name for b in model.ros2_control for j in b.joints
            for i in j.state_interfaces if i.name == "position" and i.initial_value is not None}
    lost = [j.name for j in model.joints.values() if j.initial_position is not None and j.name not in kept]
    if lost:
        validation.warn(f"URDF has no place for the initial positions of joint(s) {', '.join(lost)} outside "
                        "<ros2_control> (state_interface position, param initial_value); left out",
                        SourceRef(model.source_file, None, f"robot '{model.name}'"))


def _warn_about_gazebo_sensors(model: RobotModel) -> None:
    """The writer has no ``<gazebo><sensor>`` output yet: say what is lost rather than drop it silently."""
    if model.sensors:
        validation.warn(f"the Gazebo <sensor> block(s) {', '.join(s.name for s in model.sensors)} are not written "
                        "(robot_core's URDF writer does not write Gazebo sensors); left out",
                        SourceRef(model.source_file, None, f"robot '{model.name}'"))


def write_urdf(model: RobotModel) -> str:
    """The URDF XML text of ``model`` (links, joints, materials, transmissions, ros2_control, rbc tags).

    Warns (RobotModelWarning) when joint initial positions cannot be written (no <ros2_control> entry), and when
    the model has Gazebo sensors (not written).
    """
    _warn_about_initial_positions(model)
    _warn_about_gazebo_sensors(model)
    root = ET.Element("robot", {"name": model.name})
    for mat in model.materials.values():
        _material(root, mat, model, by_reference=False)
    for link in model.links.values():
        _link(root, link, model)
    for joint in model.joints.values():
        _joint(root, joint)
    blocks = {b.name for b in model.ros2_control}
    for trans in model.transmissions:
        if trans.ros2_control not in blocks:
            _transmission(root, trans)
    for block in model.ros2_control:
        _ros2_control(root, block, [t for t in model.transmissions if t.ros2_control == block.name])
    ET.indent(root, "  ")
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
