"""The URDF writer emits *standard* URDF: urdfdom (through Pinocchio, an independent consumer) loads the written
file of every robot the tests use, and moves it exactly like our model does. What URDF cannot say (unbounded
revolute/prismatic joints, capsules) follows robot_core.model.urdf_conventions and still round-trips."""

from __future__ import annotations

import math
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from robot_files import DATA_G, DATA_URDF, PACKAGES, PANDA, PR2, REPO, UR5, URDF_DIR, erd_robot

from robot_core.kinematics import TreeKinematics
from robot_core.model import (
    Geometry,
    Inertial,
    Joint,
    Limit,
    Link,
    RobotModel,
    RobotModelError,
    RobotModelWarning,
    Visual,
    load_robot,
)
from robot_core.model.model_compare import model_differences
from robot_core.model.urdf_conventions import UNBOUNDED_LIMIT
from robot_core.model.urdf_reader import read_urdf
from robot_core.model.urdf_writer import write_urdf

pin = pytest.importorskip("pinocchio")

ROBOTS = [
    *sorted([f"test/data/urdf/{p.name}" for p in DATA_URDF.glob("*.urdf")]
            + [f"urdf/{p.name}" for p in URDF_DIR.glob("*.urdf")] + [f"urdf/{p.name}" for p in URDF_DIR.glob("*.g")]
            + [f"test/data/g/{p.name}" for p in DATA_G.glob("*.g")]),
    "test/data/urdf/uses_pkg.urdf.xacro", "urdf/rc_arm.urdf.xacro", "ERD/" + PANDA, "ERD/" + UR5, "ERD/" + PR2,
]


def _load(rel: str) -> RobotModel:
    path = erd_robot(rel[4:]) if rel.startswith("ERD/") else str(REPO / rel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)  # PR2 inertias, unresolved test meshes
        return load_robot(path, package_dirs=[PACKAGES])


def _inertial() -> Inertial:
    return Inertial(1.0, inertia=np.eye(3) * 0.01)


def _pin_from_xml(text: str, capfd) -> pin.Model:
    """Pinocchio model of URDF text, failing on anything urdfdom complains about (it prints and skips)."""
    capfd.readouterr()
    model = pin.buildModelFromXML(text)
    err = capfd.readouterr().err
    assert "Error" not in err and "Warn" not in err, err
    return model


# --- unbounded joints ----------------------------------------------------------------------------------------
def _unbounded_robot() -> RobotModel:
    model = RobotModel("unbounded")
    for name in ("base", "a", "b", "c", "d"):
        model.links[name] = Link(name, inertial=None if name == "base" else _inertial())
    z = np.array([0.0, 0.0, 1.0])
    model.joints["slide"] = Joint("slide", "prismatic", "base", "a", axis=z)  # no <limit> at all
    model.joints["slide_effort"] = Joint("slide_effort", "prismatic", "a", "b", axis=z,
                                         limit=Limit(None, None, 40.0, 0.5))
    model.joints["half_open"] = Joint("half_open", "revolute", "b", "c", axis=z, limit=Limit(None, 1.25, 3.0, 2.0))
    model.joints["hinge"] = Joint("hinge", "revolute", "c", "d", axis=z)
    return model


def test_unbounded_joints_are_written_with_a_standard_limit_and_read_back_unbounded(capfd):
    model = _unbounded_robot()
    text = write_urdf(model)
    limits = {j.get("name"): j.find("limit") for j in ET.fromstring(text).iter("joint")}
    for name, lim in limits.items():
        assert lim is not None, name
        assert {"lower", "upper", "effort", "velocity"} <= set(lim.attrib), (name, lim.attrib)
    assert float(limits["slide"].get("lower")) == -UNBOUNDED_LIMIT
    assert float(limits["slide"].get("upper")) == UNBOUNDED_LIMIT
    assert float(limits["half_open"].get("upper")) == 1.25
    assert (limits["slide_effort"].get("effort"), limits["slide_effort"].get("velocity")) == ("40", "0.5")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RobotModelWarning)  # a complete URDF: no "has no <limit>" warning
        again = read_urdf(text)
    assert model_differences(model, again) == []
    assert again.joints["slide"].limit is None
    assert again.joints["half_open"].limit == Limit(None, 1.25, 3.0, 2.0)
    pm = _pin_from_xml(text, capfd)
    slide = pm.joints[pm.getJointId("slide")]
    assert pm.upperPositionLimit[slide.idx_q] == UNBOUNDED_LIMIT
    assert pm.upperPositionLimit[pm.joints[pm.getJointId("half_open")].idx_q] == 1.25


def test_infinite_and_huge_bounds_mean_no_bound():
    text = """<robot name="r"><link name="a"/><link name="b"/><link name="c"/>
      <joint name="j1" type="prismatic"><parent link="a"/><child link="b"/>
        <limit lower="-inf" upper="1e300" effort="1" velocity="2"/></joint>
      <joint name="j2" type="revolute"><parent link="b"/><child link="c"/>
        <limit lower="-1e16" upper="0.5" effort="0" velocity="0"/></joint></robot>"""
    model = read_urdf(text)
    assert model.joints["j1"].limit == Limit(None, None, 1.0, 2.0)
    assert model.joints["j2"].limit == Limit(None, 0.5, 0.0, 0.0)


# --- capsules ------------------------------------------------------------------------------------------------
def test_capsule_is_written_as_a_marked_cylinder_and_read_back_as_a_capsule(capfd):
    model = RobotModel("caps")
    model.links["base"] = Link("base", inertial=_inertial(), visuals=[
        Visual(Geometry("capsule", radius=0.05, length=0.3), name="cap"),
        Visual(Geometry("cylinder", radius=0.02, length=0.1), name="cyl")])
    text = write_urdf(model)
    assert "<capsule" not in text
    shapes = [g[0] for g in ET.fromstring(text).iter("geometry")]
    assert [(s.tag, s.get("robot_core_shape")) for s in shapes] == [("cylinder", "capsule"), ("cylinder", None)]
    assert (shapes[0].get("radius"), shapes[0].get("length")) == ("0.05", "0.3")
    assert model_differences(model, read_urdf(text)) == []
    _pin_from_xml(text, capfd)  # urdfdom parses the visual (it prints an error and drops unknown shapes)


def test_capsule_element_is_still_read_and_a_wrong_marker_is_an_error():
    g = read_urdf('<robot name="r"><link name="a"><collision><geometry><capsule radius="0.1" length="0.4"/>'
                  "</geometry></collision></link></robot>").links["a"].collisions[0].geometry
    assert (g.kind, g.radius, g.length) == ("capsule", 0.1, 0.4)
    with pytest.raises(RobotModelError, match=r'bad\.urdf:3: link \'a\' <visual> <box>: robot_core_shape="capsule"'):
        read_urdf('<robot name="r">\n<link name="a"><visual><geometry>\n<box size="1 1 1" robot_core_shape="capsule"/>'
                  "</geometry></visual></link></robot>", "bad.urdf")


def test_urdfdom_reports_what_the_conventions_avoid(capfd):
    """Why the conventions exist (and proof that _pin_from_xml would notice): urdfdom drops a <capsule> with an
    error message and refuses a prismatic joint without <limit>."""
    capfd.readouterr()
    pin.buildModelFromXML('<robot name="r"><link name="a"><visual><geometry><capsule radius="0.1" length="0.4"/>'
                          "</geometry></visual></link></robot>")
    assert "Could not parse visual element" in capfd.readouterr().err
    with pytest.raises(ValueError):
        pin.buildModelFromXML('<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="prismatic">'
                              '<parent link="a"/><child link="b"/></joint></robot>')
    assert "without limits" in capfd.readouterr().err


def test_unknown_geometry_kind_cannot_be_written():
    model = RobotModel("odd")
    model.links["a"] = Link("a", visuals=[Visual(Geometry("cone"))])
    with pytest.raises(RobotModelError, match=r"link 'a'.*cannot write geometry kind 'cone'"):
        write_urdf(model)


# --- every robot we test with: urdfdom loads the written URDF, and it moves like our model ---------------------
def _random_values(model: RobotModel, rng: np.random.Generator) -> dict[str, float]:
    values = {}
    for name in model.scalar_joint_names():
        lim = model.joints[name].limit
        bounded = lim is not None and lim.lower is not None and lim.upper is not None
        values[name] = float(rng.uniform(lim.lower, lim.upper) if bounded else rng.uniform(-math.pi, math.pi))
    return values


def _pin_q(pm: pin.Model, values: dict[str, float]) -> np.ndarray:
    q = pin.neutral(pm)
    for name, v in values.items():
        j = pm.joints[pm.getJointId(name)]
        if j.nq == 1:
            q[j.idx_q] = v
        else:  # continuous: (cos, sin)
            q[j.idx_q : j.idx_q + 2] = math.cos(v), math.sin(v)
    return q


@pytest.mark.parametrize("rel", ROBOTS)
def test_written_urdf_loads_in_pinocchio_and_agrees(rel, capfd):
    model = _load(rel)
    pm = _pin_from_xml(write_urdf(model), capfd)
    assert sorted(pm.names[1:]) == sorted(j.name for j in model.movable_joints())
    assert pm.nv == sum({"floating": 6, "planar": 3}.get(j.type, 1) for j in model.movable_joints())
    assert sum(i.mass for i in pm.inertias) == pytest.approx(model.total_mass(), rel=1e-12)
    tree = TreeKinematics(model)
    data = pm.createData()
    rng = np.random.default_rng(0)
    for _ in range(10):
        values = _random_values(model, rng)
        pin.framesForwardKinematics(pm, data, _pin_q(pm, values))
        for link, pose in tree.link_poses(values).items():
            expected = data.oMf[pm.getFrameId(link, pin.FrameType.BODY)].homogeneous
            np.testing.assert_allclose(pose, expected, atol=1e-12, err_msg=f"{rel}: {link}")


def test_the_robot_list_covers_every_kind_of_file():
    assert {Path(r).suffix for r in ROBOTS} == {".urdf", ".xacro", ".g"}
    assert len([r for r in ROBOTS if r.startswith("test/data/g/")]) >= 4
