"""RobotModel -> MuJoCo (robot_core.physics.builder): joint types, mimic, exclusions, meshes, inertias."""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest
from robot_files import PANDA, PR2, erd_robot, own_robot

from robot_core.model import Collision, Geometry, Inertial, Joint, Link, Pose, RobotModel, RobotModelWarning, load_robot
from robot_core.physics.builder import SITE_GROUP, VISUAL_GROUP, build_model, build_spec

INERTIA = '<inertia ixx="0.01" iyy="0.02" izz="0.015" ixy="0.001" ixz="0" iyz="-0.002"/>'


def _link(name: str, mass: float = 1.0, extra: str = "") -> str:
    return (f'<link name="{name}"><inertial><origin xyz="0.01 0.02 0.03" rpy="0.1 0.2 0.3"/>'
            f'<mass value="{mass}"/>{INERTIA}</inertial>{extra}</link>')


ALL_JOINTS = f"""<robot name="alljoints">
  {_link("base", extra='<collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision>')}
  {_link("rev", extra='<collision><origin xyz="0 0 0.05"/><geometry><cylinder radius="0.05" length="0.2"/></geometry>'
         '</collision>')}
  {_link("cont")}
  {_link("pris", extra='<collision><geometry><sphere radius="0.03"/></geometry></collision>')}
  {_link("plan")}
  {_link("float")}
  {_link("mim")}
  <link name="frame"/>
  <joint name="j_rev" type="revolute"><parent link="base"/><child link="rev"/><origin xyz="0 0 0.1" rpy="0 0 0.5"/>
    <axis xyz="0 1 1"/><limit lower="-1" upper="1.5" effort="5" velocity="2"/>
    <dynamics damping="0.3" friction="0.7"/></joint>
  <joint name="j_cont" type="continuous"><parent link="rev"/><child link="cont"/><origin xyz="0 0 0.2"/>
    <axis xyz="0 0 1"/></joint>
  <joint name="j_pris" type="prismatic"><parent link="cont"/><child link="pris"/><origin xyz="0.1 0 0"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="0.2" effort="5" velocity="0.5"/></joint>
  <joint name="j_plan" type="planar"><parent link="base"/><child link="plan"/><origin xyz="1 0 0" rpy="0.3 0 0"/>
    <axis xyz="0 1 0"/></joint>
  <joint name="j_float" type="floating"><parent link="base"/><child link="float"/><origin xyz="0 1 0"/></joint>
  <joint name="j_mim" type="prismatic"><parent link="cont"/><child link="mim"/><origin xyz="-0.1 0 0"/>
    <axis xyz="-1 0 0"/><limit lower="-0.1" upper="0.4" effort="5" velocity="0.5"/>
    <mimic joint="j_pris" multiplier="2" offset="0.01"/></joint>
  <joint name="j_fixed" type="fixed"><parent link="pris"/><child link="frame"/><origin xyz="0 0 0.3" rpy="0 1 0"/>
  </joint>
</robot>"""


@pytest.fixture(scope="module")
def alljoints():
    robot = load_robot(ALL_JOINTS)
    return robot, build_model(robot)


def _pose(bm, data, link):
    return bm.link_pose(data, link)


def test_every_joint_type_builds(alljoints):
    _robot, bm = alljoints
    m = bm.model
    jt = mujoco.mjtJoint
    assert {n: (ji.nq, ji.nv) for n, ji in bm.joints.items()} == {
        "j_rev": (1, 1), "j_cont": (1, 1), "j_pris": (1, 1), "j_plan": (3, 3), "j_float": (7, 6), "j_mim": (1, 1)}
    assert m.jnt_type[bm.joints["j_rev"].joint_id] == jt.mjJNT_HINGE
    assert m.jnt_type[bm.joints["j_cont"].joint_id] == jt.mjJNT_HINGE
    assert m.jnt_type[bm.joints["j_pris"].joint_id] == jt.mjJNT_SLIDE
    assert [m.jnt_type[i] for i in bm.joints["j_plan"].joint_ids] == [jt.mjJNT_SLIDE, jt.mjJNT_SLIDE, jt.mjJNT_HINGE]
    assert [m.jnt_type[i] for i in bm.joints["j_float"].joint_ids] == [jt.mjJNT_SLIDE] * 3 + [jt.mjJNT_BALL]
    # limits, dynamics, axes in the child frame, no armature
    rev = bm.joints["j_rev"].joint_id
    assert m.jnt_limited[rev] and np.allclose(m.jnt_range[rev], [-1, 1.5])
    assert not m.jnt_limited[bm.joints["j_cont"].joint_id]
    assert np.allclose(m.jnt_range[bm.joints["j_pris"].joint_id], [0, 0.2])
    assert m.dof_damping[bm.joints["j_rev"].dof_adr] == pytest.approx(0.3)
    assert m.dof_frictionloss[bm.joints["j_rev"].dof_adr] == pytest.approx(0.7)
    assert np.allclose(m.jnt_axis[rev], np.array([0, 1, 1]) / np.sqrt(2))
    assert np.all(m.dof_armature == 0.0)
    assert np.allclose(m.opt.gravity, [0, 0, -9.81]) and m.opt.timestep == pytest.approx(0.001)


def test_joint_motion_matches_urdf_semantics(alljoints):
    _robot, bm = alljoints
    m, d = bm.model, mujoco.MjData(bm.model)
    mujoco.mj_kinematics(m, d)
    base_plan = _pose(bm, d, "plan").copy()
    base_float = _pose(bm, d, "float").copy()
    rev0 = _pose(bm, d, "rev").copy()
    # revolute: child rotates about the (normalised) axis in its own frame, origin fixed
    d.qpos[bm.joints["j_rev"].qpos_adr] = 0.4
    # planar: (u, v, theta) translate in the plane normal to the axis, then rotate about it
    p = bm.joints["j_plan"]
    d.qpos[p.qpos_adr : p.qpos_adr + 3] = [0.2, -0.3, 0.7]
    f = bm.joints["j_float"]
    quat = np.array([np.cos(0.25), 0, np.sin(0.25), 0])
    d.qpos[f.qpos_adr : f.qpos_adr + 7] = [0.1, 0.2, 0.3, *quat]
    mujoco.mj_kinematics(m, d)
    axis = np.array([0, 1, 1]) / np.sqrt(2)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    rot = np.eye(3) + np.sin(0.4) * k + (1 - np.cos(0.4)) * k @ k
    np.testing.assert_allclose(_pose(bm, d, "rev")[:3, :3], rev0[:3, :3] @ rot, atol=1e-12)
    np.testing.assert_allclose(_pose(bm, d, "rev")[:3, 3], rev0[:3, 3], atol=1e-12)
    plan = np.linalg.inv(base_plan) @ _pose(bm, d, "plan")
    assert abs(plan[1, 3]) < 1e-12 and np.hypot(plan[0, 3], plan[2, 3]) == pytest.approx(np.hypot(0.2, 0.3))
    np.testing.assert_allclose(plan[:3, 1], [0, 1, 0], atol=1e-12)  # rotation about the plane normal (y)
    assert np.arccos(plan[0, 0]) == pytest.approx(0.7)
    fl = np.linalg.inv(base_float) @ _pose(bm, d, "float")
    np.testing.assert_allclose(fl[:3, 3], [0.1, 0.2, 0.3], atol=1e-12)
    rq = np.zeros(9)
    mujoco.mju_quat2Mat(rq, quat)
    np.testing.assert_allclose(fl[:3, :3], rq.reshape(3, 3), atol=1e-12)


def test_fixed_links_are_named_frames(alljoints):
    robot, bm = alljoints
    m, d = bm.model, mujoco.MjData(bm.model)
    assert m.nsite == len(robot.links) and m.nbody == len(robot.links) + 1
    for name in robot.links:
        assert mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_SITE, bm.links[name].site_id) == name
        assert m.site_group[bm.links[name].site_id] == SITE_GROUP
    d.qpos[bm.joints["j_pris"].qpos_adr] = 0.1
    mujoco.mj_kinematics(m, d)
    rel = np.linalg.inv(_pose(bm, d, "pris")) @ _pose(bm, d, "frame")
    np.testing.assert_allclose(rel, robot.joints["j_fixed"].origin.matrix(), atol=1e-12)
    np.testing.assert_allclose(d.site_xpos[bm.links["frame"].site_id], _pose(bm, d, "frame")[:3, 3], atol=1e-12)


def test_mimic_is_a_joint_equality(alljoints):
    _robot, bm = alljoints
    m = bm.model
    eid = bm.mimic_equalities["j_mim"]
    assert m.eq_type[eid] == mujoco.mjtEq.mjEQ_JOINT
    assert m.eq_obj1id[eid] == bm.joints["j_mim"].joint_id and m.eq_obj2id[eid] == bm.joints["j_pris"].joint_id
    np.testing.assert_allclose(m.eq_data[eid][:5], [0.01, 2.0, 0, 0, 0])
    # simulate: push the master; the mimic joint follows q = 0.01 + 2 q_master
    d = mujoco.MjData(m)
    d.qpos[:] = bm.initial_qpos()
    assert d.qpos[bm.joints["j_mim"].qpos_adr] == pytest.approx(0.01)
    for _ in range(2000):
        d.qfrc_applied[bm.joints["j_pris"].dof_adr] = 2.0 * (0.05 - d.qpos[bm.joints["j_pris"].qpos_adr])
        mujoco.mj_step(m, d)
    q_master = d.qpos[bm.joints["j_pris"].qpos_adr]
    assert q_master > 0.02
    assert d.qpos[bm.joints["j_mim"].qpos_adr] == pytest.approx(0.01 + 2 * q_master, abs=2e-3)


def test_floating_base_and_world_root():
    robot = load_robot(ALL_JOINTS)
    assert build_model(robot).root_free_joint is None
    floating = build_model(robot, fixed_base=False)
    free = floating.root_free_joint
    assert free is not None and (free.nq, free.nv) == (7, 6)
    assert floating.model.jnt_type[free.joint_id] == mujoco.mjtJoint.mjJNT_FREE
    robot_f = load_robot(ALL_JOINTS, fixed_base=False)
    assert build_model(robot_f).root_free_joint is not None  # default follows robot.fixed_base
    world = load_robot("""<robot name="w"><link name="world"/>
      <link name="body"><inertial><mass value="2"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>
      </inertial></link>
      <joint name="free" type="floating"><parent link="world"/><child link="body"/><origin xyz="0 0 1"/></joint>
    </robot>""")
    bm = build_model(world)
    assert bm.links["world"].body_id == 0
    assert bm.model.jnt_type[bm.joints["free"].joint_id] == mujoco.mjtJoint.mjJNT_FREE
    d = mujoco.MjData(bm.model)
    d.qpos[:] = bm.model.qpos0
    for _ in range(100):
        mujoco.mj_step(bm.model, d)
    assert d.qpos[2] < bm.model.qpos0[2]  # it falls


def _inertia_in_link_frame(m: mujoco.MjModel, body: int) -> np.ndarray:
    r = np.zeros(9)
    mujoco.mju_quat2Mat(r, m.body_iquat[body])
    r = r.reshape(3, 3)
    return r @ np.diag(m.body_inertia[body]) @ r.T


@pytest.mark.parametrize("urdf", ["alljoints", "rc_arm.urdf", "panda", "pr2"])
def test_inertias_equal_the_urdf(urdf, alljoints):
    if urdf == "alljoints":
        robot = alljoints[0]
    elif urdf in ("panda", "pr2"):
        robot = load_robot(erd_robot({"panda": PANDA, "pr2": PR2}[urdf]))
    else:
        robot = load_robot(own_robot(urdf))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        bm = build_model(robot, include_visuals=False)
    m = bm.model
    checked = 0
    for name, link in robot.links.items():
        body = bm.links[name].body_id
        if link.inertial is None or link.inertial.mass <= 0 or name in bm.adjusted_links or body == 0:
            continue
        assert m.body_mass[body] == pytest.approx(link.inertial.mass, rel=1e-12)
        np.testing.assert_allclose(m.body_ipos[body], link.inertial.origin.xyz, atol=1e-12)
        r0 = link.inertial.origin.matrix()[:3, :3]
        expected = r0 @ link.inertial.inertia @ r0.T
        np.testing.assert_allclose(_inertia_in_link_frame(m, body), expected, atol=1e-12 * max(1.0, np.abs(
            expected).max()), err_msg=name)
        checked += 1
    assert checked >= 3
    assert m.body_mass.sum() == pytest.approx(robot.total_mass() + sum(
        m.body_mass[bm.links[n].body_id] - (robot.links[n].inertial.mass if robot.links[n].inertial else 0.0)
        for n in bm.adjusted_links))


def test_panda_meshes_and_groups():
    robot = load_robot(erd_robot(PANDA))
    bm = build_model(robot)
    m = bm.model
    assert bm.skipped_meshes == []
    n_col = sum(len(link.collisions) for link in robot.links.values())
    n_vis = sum(len(link.visuals) for link in robot.links.values())
    mesh = mujoco.mjtGeom.mjGEOM_MESH
    colliding = [g for g in range(m.ngeom) if m.geom_contype[g] or m.geom_conaffinity[g]]
    visual = [g for g in range(m.ngeom) if not (m.geom_contype[g] or m.geom_conaffinity[g])]
    assert len(colliding) == n_col and len(visual) == n_vis
    n_col_mesh = sum(c.geometry.kind == "mesh" for link in robot.links.values() for c in link.collisions)
    assert n_col_mesh >= 9 and sum(m.geom_type[g] == mesh for g in colliding) == n_col_mesh  # collision STLs
    assert all(m.geom_group[g] == VISUAL_GROUP for g in visual)  # visual DAEs, converted
    assert all(m.mesh_vertnum[i] > 10 for i in range(m.nmesh))
    # visual DAE of link0 lies where its collision STL is (converted in the right frame and units)
    g_vis = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "panda_link0:visual:0")
    g_col = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "panda_link0:collision:0")
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)

    def centre(g):
        return d.geom_xpos[g] + d.geom_xmat[g].reshape(3, 3) @ m.geom_aabb[g][:3]

    assert np.linalg.norm(centre(g_vis) - centre(g_col)) < 0.02
    d.qpos[:] = bm.initial_qpos()
    for _ in range(500):
        mujoco.mj_step(m, d)
    assert np.all(np.isfinite(d.qpos))


def test_linked_bodies_do_not_collide_unless_asked():
    # two overlapping boxes on links connected by a revolute joint, plus a fixed child of the parent
    xml = """<robot name="overlap">
      <link name="a"><collision><geometry><box size="0.4 0.4 0.4"/></geometry></collision></link>
      <link name="a2"><collision><origin xyz="0 0 0.1"/><geometry><box size="0.3 0.3 0.3"/></geometry>
        </collision></link>
      <link name="b"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
        <collision><geometry><box size="0.4 0.4 0.4"/></geometry></collision></link>
      <joint name="fa" type="fixed"><parent link="a"/><child link="a2"/></joint>
      <joint name="ab" type="revolute"><parent link="a2"/><child link="b"/><origin xyz="0.1 0 0"/>
        <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
    </robot>"""
    robot = load_robot(xml)
    on = build_model(robot)
    off = build_model(robot, disable_linked_collisions=False)
    names = {(mujoco.mj_id2name(on.model, mujoco.mjtObj.mjOBJ_BODY, s >> 16),
              mujoco.mj_id2name(on.model, mujoco.mjtObj.mjOBJ_BODY, s & 0xFFFF)) for s in on.model.exclude_signature}
    assert {frozenset(p) for p in names} == {frozenset(("a", "b")), frozenset(("a2", "b"))}
    assert off.model.nexclude == 0
    counts = []
    for bm in (on, off):
        d = mujoco.MjData(bm.model)
        mujoco.mj_forward(bm.model, d)
        counts.append(d.ncon)
    assert counts[0] == 0 and counts[1] > 0


def test_degenerate_links_and_missing_meshes():
    robot = RobotModel(name="degenerate")
    robot.links["base"] = Link("base")
    robot.links["massless"] = Link("massless", collisions=[Collision(Geometry("mesh", filename="nope.stl",
                                                                               resolved_filename="/nope/nope.stl"))])
    robot.links["capsule"] = Link("capsule", inertial=Inertial(0.5, Pose(), np.diag([0.01, 0.01, 0.002])),
                                  collisions=[Collision(Geometry("capsule", radius=0.05, length=0.3))])
    robot.joints["j1"] = Joint("j1", "continuous", "base", "massless", axis=np.array([0.0, 0.0, 1.0]))
    robot.joints["j2"] = Joint("j2", "continuous", "base", "capsule", axis=np.array([0.0, 0.0, 1.0]))
    with pytest.warns(RobotModelWarning) as record:
        bm = build_model(robot)
    messages = " ".join(str(w.message) for w in record)
    assert "nope.stl" in messages and "massless" in messages
    assert bm.adjusted_links == ["massless"] and len(bm.skipped_meshes) == 1
    assert bm.model.body_mass[bm.links["massless"].body_id] == pytest.approx(1e-6)
    g = mujoco.mj_name2id(bm.model, mujoco.mjtObj.mjOBJ_GEOM, "capsule:collision:0")
    assert bm.model.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE
    np.testing.assert_allclose(bm.model.geom_size[g][:2], [0.05, 0.15])


def test_spec_can_be_extended_before_compiling(alljoints):
    """engine.py adds actuators to build_spec's output; the index maps still line up."""
    from robot_core.physics.builder import index_model

    robot = alljoints[0]
    spec = build_spec(robot)
    spec.add_actuator(name="m_rev", target="j_rev", trntype=mujoco.mjtTrn.mjTRN_JOINT)
    model = spec.compile()
    bm = index_model(robot, spec, model)
    assert model.nu == 1 and model.actuator_trnid[0, 0] == bm.joints["j_rev"].joint_id


def test_visual_colours_come_from_materials():
    robot = load_robot("""<robot name="c"><material name="red"><color rgba="1 0 0 1"/></material>
      <link name="a"><visual><geometry><sphere radius="0.1"/></geometry><material name="red"/></visual>
      <visual><geometry><box size="0.1 0.1 0.1"/></geometry><material name="g"><color rgba="0 1 0 0.5"/></material>
      </visual></link></robot>""")
    m = build_model(robot).model
    np.testing.assert_allclose(m.geom_rgba[0], [1, 0, 0, 1])
    np.testing.assert_allclose(m.geom_rgba[1], [0, 1, 0, 0.5])
    np.testing.assert_allclose(m.geom_size[1], [0.05, 0.05, 0.05])
    assert build_model(robot, include_visuals=False).model.ngeom == 0


SQUARE_DAE = """<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="centimeter" meter="0.01"/><up_axis>Z_UP</up_axis></asset>
  <library_geometries><geometry id="sq"><mesh>
    <source id="sq-pos"><float_array id="sq-arr" count="15">0 0 0 1 0 0 1 1 0 0 1 0 0.5 0.5 1</float_array>
      <technique_common><accessor source="#sq-arr" count="5" stride="3"/></technique_common></source>
    <source id="sq-nrm"><float_array id="sq-n" count="3">0 0 1</float_array>
      <technique_common><accessor source="#sq-n" count="1" stride="3"/></technique_common></source>
    <vertices id="sq-vtx"><input semantic="POSITION" source="#sq-pos"/></vertices>
    <polylist count="1"><input semantic="VERTEX" source="#sq-vtx" offset="0"/>
      <input semantic="NORMAL" source="#sq-nrm" offset="1"/><vcount>4</vcount><p>0 0 1 0 2 0 3 0</p></polylist>
    <triangles count="4"><input semantic="VERTEX" source="#sq-vtx" offset="0"/>
      <p>0 1 4 1 2 4 2 3 4 3 0 4</p></triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="s"><node id="n"><translate>10 0 0</translate><scale>2 2 2</scale>
    <instance_geometry url="#sq"/></node></visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>"""


def test_collada_reader_and_dae_meshes(tmp_path):
    from robot_core.physics.collada import ColladaError, read_collada

    path = tmp_path / "pyramid.dae"
    path.write_text(SQUARE_DAE)
    mesh = read_collada(str(path))
    assert mesh.faces.shape == (2 + 4, 3)  # the quad is fan-triangulated
    # node transform (translate 10, scale 2) then centimetres -> metres
    np.testing.assert_allclose(mesh.vertices.min(axis=0), [0.10, 0.0, 0.0])
    np.testing.assert_allclose(mesh.vertices.max(axis=0), [0.12, 0.02, 0.02])
    bad = tmp_path / "bad.dae"
    bad.write_text("<COLLADA><library_geometries/>")
    with pytest.raises(ColladaError, match=r"bad\.dae"):
        read_collada(str(bad))
    robot = RobotModel(name="dae")
    robot.links["a"] = Link("a", collisions=[
        Collision(Geometry("mesh", filename="pyramid.dae", resolved_filename=str(path), scale=np.array([1, 1, 2.0]))),
        Collision(Geometry("mesh", filename="bad.dae", resolved_filename=str(bad)))])
    with pytest.warns(RobotModelWarning, match=r"bad\.dae"):
        bm = build_model(robot)
    assert bm.model.nmesh == 1 and bm.model.ngeom == 1 and len(bm.skipped_meshes) == 1
    lo = bm.model.mesh_vert.min(axis=0)
    hi = bm.model.mesh_vert.max(axis=0)
    np.testing.assert_allclose(hi - lo, [0.02, 0.02, 0.04], atol=1e-6)  # <mesh scale> applied (float32)
