"""What real third-party descriptions do that urdfdom and Pinocchio accept: robot_core loads it too, warning once
per link or joint (naming file, line and element) where the file is sloppy, and keeps the physics valid.

The inertia repair is checked against MuJoCo's own ``balanceinertia``: valid for MuJoCo, and never further from
the file's moments than MuJoCo's repair.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest

from robot_core.model import RobotModelWarning, load_robot
from robot_core.model.package_paths import find_package, resolve_uri
from robot_core.physics.builder import TINY_INERTIA, balance_moments, build_model
from robot_core.physics.engine import PhysicsEngine

LINK_A = ('<link name="a"><inertial><mass value="1"/>'
          '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>')


def _write(tmp_path: Path, body: str, name: str = "robot.urdf") -> Path:
    """A URDF whose line 3 is the first line of ``body``."""
    path = tmp_path / name
    path.write_text(f'<?xml version="1.0"?>\n<robot name="r">\n{body}\n</robot>\n')
    return path


def _load(path: Path, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = load_robot(path, **options)
    return model, [str(w.message) for w in caught if issubclass(w.category, RobotModelWarning)]


def _hinge(child: str, parent: str = "a") -> str:
    return (f'<joint name="j_{child}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
            '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>')


# --- axes of fixed and floating joints ------------------------------------------------------------------
@pytest.mark.parametrize("axis", ["0 0 0", "0 0 1", "1 1 0"])
@pytest.mark.parametrize("jtype", ["fixed", "floating"])
def test_axis_of_fixed_and_floating_joints_is_ignored(tmp_path, jtype, axis):
    body = (LINK_A + '\n<link name="b"/>\n<joint name="j" type="' + jtype + '"><parent link="a"/>'
            f'<child link="b"/><axis xyz="{axis}"/></joint>')
    model, warned = _load(_write(tmp_path, body))
    assert model.joints["j"].type == jtype
    np.testing.assert_array_equal(model.joints["j"].axis, [1.0, 0.0, 0.0])  # the default: nothing was read
    assert not [w for w in warned if "axis" in w]


# --- point masses, zero-mass inertials, round-off, placeholder masses ------------------------------------
@pytest.mark.parametrize(("inertia", "mass", "fragment"), [
    ("0 0 0 0 0 0", "0.3", "zero inertia"),                             # point mass (Talos optical frames)
    ("1e-35 0 0 1e-35 0 -1e-35", "0.2", "zero inertia"),                # round-off noise (iCub)
    ("2.4e-8 6.1e-8 1.2e-8 2.8e-8 7.7e-9 3.8e-8", "0.000001", "placeholder mass"),  # TIAGo's antennas
])
def test_degenerate_inertias_on_links_with_mass_are_accepted_and_built(tmp_path, inertia, mass, fragment):
    ixx, ixy, ixz, iyy, iyz, izz = inertia.split()
    body = (LINK_A + '\n<link name="b">\n<inertial><mass value="' + mass + '"/><inertia ixx="' + ixx + '" ixy="'
            + ixy + '" ixz="' + ixz + '" iyy="' + iyy + '" iyz="' + iyz + '" izz="' + izz + '"/></inertial>'
            '</link>\n' + _hinge("b"))
    path = _write(tmp_path, body)
    model, warned = _load(path)
    about_b = [w for w in warned if "link 'b'" in w]
    assert len(about_b) == 1, warned  # one warning per link
    assert about_b[0].startswith(f"{path}:5: link 'b' <inertial>: ") and fragment in about_b[0]
    assert model.links["b"].inertial.mass == pytest.approx(float(mass))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RobotModelWarning)  # the reader has said it already
        built = build_model(model)
    assert "b" in built.adjusted_links
    bid = built.links["b"].body_id
    np.testing.assert_allclose(built.model.body_inertia[bid], TINY_INERTIA)
    data = mujoco.MjData(built.model)
    for _ in range(200):
        mujoco.mj_step(built.model, data)
    assert np.all(np.isfinite(data.qpos))


def test_zero_mass_inertial_with_an_inertia_is_a_massless_link(tmp_path):
    body = (LINK_A + '\n<link name="foot">\n<inertial><mass value="0"/>'
            '<inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>\n'
            '<joint name="ankle" type="fixed"><parent link="a"/><child link="foot"/></joint>')
    path = _write(tmp_path, body)
    model, warned = _load(path)
    assert model.links["foot"].inertial is None
    assert len(warned) == 1 and warned[0].startswith(f"{path}:5: link 'foot' <inertial>: zero mass")
    build_model(model)


def test_a_clearly_indefinite_inertia_on_a_real_mass_is_still_refused(tmp_path):
    body = (LINK_A + '\n<link name="b">\n<inertial><mass value="2"/>'
            '<inertia ixx="0.01" ixy="0.05" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>\n' + _hinge("b"))
    path = _write(tmp_path, body)
    with pytest.raises(Exception, match=rf"^{re.escape(str(path))}:5: link 'b' <inertial>: inertia is not positive"):
        load_robot(path)


# --- the triangle-inequality repair, against MuJoCo's balanceinertia ---------------------------------------
def _mujoco_accepts(moments: np.ndarray, balance: bool) -> np.ndarray | None:
    """Body inertia MuJoCo compiles for a hinged body with these principal moments (None: refused)."""
    xml = (f'<mujoco><compiler balanceinertia="{str(balance).lower()}"/><worldbody><body><joint type="hinge"/>'
           f'<inertial pos="0 0 0" mass="1" diaginertia="{" ".join(repr(float(m)) for m in moments)}"/>'
           '</body></worldbody></mujoco>')
    try:
        return mujoco.MjModel.from_xml_string(xml).body_inertia[1].copy()
    except ValueError:
        return None


TRIANGLE_CASES = [
    [1e-9, 2e-9, 0.05],          # two smallest ~0: a quadruped's base (ANYmal, Go1, B1)
    [0.0, 0.0, 0.3],             # a thin disc printed without its in-plane moments
    [0.1, 0.1, 0.5],
    [0.02, 0.3, 0.35],           # just over
    [0.004, 0.0121, 0.0169],     # small deficit
]


@pytest.mark.parametrize("moments", TRIANGLE_CASES)
def test_triangle_repair_is_valid_and_no_further_than_mujoco_balanceinertia(moments):
    moments = np.array(moments)
    assert _mujoco_accepts(moments, balance=False) is None  # the case is real: MuJoCo refuses it as it is
    ours = balance_moments(moments)
    compiled = _mujoco_accepts(ours, balance=False)
    assert compiled is not None, f"MuJoCo refuses the repaired moments {ours}"
    mujoco_fix = _mujoco_accepts(moments, balance=True)
    assert mujoco_fix is not None
    ours_err = np.linalg.norm(np.sort(ours) - np.sort(moments))
    mujoco_err = np.linalg.norm(np.sort(mujoco_fix) - np.sort(moments))
    assert ours_err <= mujoco_err + 1e-12, (ours, mujoco_fix)
    # Close: the largest moment stays the largest and moves by at most a third of the deficit.
    a, b, c = np.sort(moments)
    assert np.argmax(ours) == np.argmax(moments)
    assert np.max(np.abs(ours - moments)) <= (c - a - b) / 3.0 * (1 + 1e-9) + 1e-12


def test_valid_moments_are_left_alone():
    for moments in ([0.1, 0.2, 0.25], [1.0, 1.0, 2.0], [3e-6, 4e-6, 5e-6]):
        np.testing.assert_array_equal(balance_moments(np.array(moments)), moments)


def test_quadruped_like_base_builds_with_a_close_inertia(tmp_path):
    """A base whose two smallest moments are ~0 (the case that used to end with the smallest as the largest)."""
    body = ('<link name="base"><inertial><mass value="10"/><origin rpy="0.3 0.2 0.1"/>'
            '<inertia ixx="1e-9" ixy="0" ixz="0" iyy="2e-9" iyz="0" izz="0.4"/></inertial></link>\n'
            '<link name="leg"><inertial><mass value="1"/>'
            '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>\n'
            '<joint name="hip" type="revolute"><parent link="base"/><child link="leg"/><axis xyz="1 0 0"/>'
            '<limit lower="-1" upper="1" effort="10" velocity="1"/></joint>')
    model, warned = _load(_write(tmp_path, body))
    assert len(warned) == 1 and "triangle inequality" in warned[0] and "link 'base'" in warned[0]
    built = build_model(model, fixed_base=False)
    moments = np.sort(built.model.body_inertia[built.links["base"].body_id])
    np.testing.assert_allclose(moments, [0.4 / 3, 0.4 / 3, 0.8 / 3], rtol=1e-6)
    assert "base" in built.adjusted_links


# --- meshes MuJoCo cannot read -----------------------------------------------------------------------------
CUBE_FACES = [((0, 0, 0), (1, 0, 0), (1, 1, 0)), ((0, 0, 0), (1, 1, 0), (0, 1, 0)),
              ((0, 0, 1), (1, 1, 1), (1, 0, 1)), ((0, 0, 1), (0, 1, 1), (1, 1, 1)),
              ((0, 0, 0), (1, 0, 1), (1, 0, 0)), ((0, 0, 0), (0, 0, 1), (1, 0, 1)),
              ((0, 1, 0), (1, 1, 0), (1, 1, 1)), ((0, 1, 0), (1, 1, 1), (0, 1, 1)),
              ((0, 0, 0), (0, 1, 0), (0, 1, 1)), ((0, 0, 0), (0, 1, 1), (0, 0, 1)),
              ((1, 0, 0), (1, 1, 1), (1, 1, 0)), ((1, 0, 0), (1, 0, 1), (1, 1, 1))]


def _ascii_stl(path: Path, size: float) -> None:
    lines = ["solid cube"]
    for face in CUBE_FACES:
        lines += ["facet normal 0 0 0", "outer loop"]
        lines += [f"vertex {x * size} {y * size} {z * size}" for x, y, z in face]
        lines += ["endloop", "endfacet"]
    path.write_text("\n".join([*lines, "endsolid cube"]) + "\n")


def test_ascii_stl_is_converted_and_an_unknown_format_skipped(tmp_path):
    _ascii_stl(tmp_path / "cube.stl", 0.2)
    (tmp_path / "shell.ply").write_text("ply\nformat ascii 1.0\nend_header\n")
    body = ('<link name="a"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" '
            'izz="0.01"/></inertial>\n<collision><geometry><mesh filename="cube.stl"/></geometry></collision>\n'
            '<visual><geometry><mesh filename="shell.ply"/></geometry></visual></link>')
    model, _ = _load(_write(tmp_path, body))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = build_model(model)
    skipped = [str(w.message) for w in caught]
    assert len(skipped) == 1 and "shell.ply" in skipped[0] and "link 'a'" in skipped[0], skipped
    assert built.skipped_meshes and "shell.ply" in built.skipped_meshes[0]
    assert built.model.nmesh == 1
    verts = built.model.mesh_vert[: built.model.mesh_vertnum[0]]
    # MuJoCo centres meshes on their centroid: a 0.2 m cube spans 0.2 m on each axis.
    np.testing.assert_allclose(verts.max(axis=0) - verts.min(axis=0), [0.2, 0.2, 0.2], atol=1e-6)


def test_a_broken_ascii_stl_is_skipped_not_fatal(tmp_path):
    (tmp_path / "bad.stl").write_text("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 zero\nendloop\n")
    body = ('<link name="a"><collision><geometry><mesh filename="bad.stl"/></geometry></collision></link>')
    model, _ = _load(_write(tmp_path, body))
    with pytest.warns(RobotModelWarning, match=r"link 'a': mesh 'bad.stl' skipped: ASCII STL line 4"):
        built = build_model(model)
    assert built.model.nmesh == 0


# --- transmissions naming missing joints ---------------------------------------------------------------------
def test_transmission_of_a_missing_joint_is_a_warning(tmp_path):
    body = (LINK_A + '\n<link name="b"/>\n' + _hinge("b") + '\n<transmission name="t_gone"><type>'
            'transmission_interface/SimpleTransmission</type><joint name="removed_joint"/><actuator name="m">'
            '<mechanicalReduction>50</mechanicalReduction></actuator></transmission>\n<transmission name="t_ok">'
            '<type>transmission_interface/SimpleTransmission</type><joint name="j_b"/><actuator name="m2">'
            '<mechanicalReduction>10</mechanicalReduction></actuator></transmission>')
    path = _write(tmp_path, body)
    model, warned = _load(path)
    assert [t.name for t in model.transmissions] == ["t_ok"]
    assert len(warned) == 1
    assert warned[0] == (f"{path}:6: transmission 't_gone': names joint(s) 'removed_joint' which do not exist; "
                         "transmission ignored")


# --- package:// like rospack ----------------------------------------------------------------------------------
def _package(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "package.xml").write_text(f"<package format='3'><name>{name}</name></package>\n")
    return folder


def test_package_roots_are_searched_recursively(tmp_path, monkeypatch):
    root = tmp_path / "ws"
    deep = _package(root / "src" / "vendor" / "robots" / "arm_description", "arm_description")
    (deep / "meshes").mkdir()
    (deep / "meshes" / "link.stl").write_bytes(b"\0" * 84)
    renamed = _package(root / "src" / "other" / "folder_name", "declared_name")
    _package(root / "src" / "ignored" / "hidden_description", "hidden_description")
    (root / "src" / "ignored" / "COLCON_IGNORE").write_text("")
    _package(deep / "nested_description", "nested_description")  # inside a package: not a package of its own
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)

    assert find_package("arm_description", [root]) == str(deep.resolve())
    assert find_package("declared_name", [root]) == str(renamed.resolve())
    assert find_package("folder_name", [root]) == str(renamed.resolve())  # the folder's name, as Pinocchio
    assert find_package("hidden_description", [root]) is None
    assert find_package("nested_description", [root]) is None
    mesh = str(deep / "meshes" / "link.stl")
    assert resolve_uri("package://arm_description/meshes/link.stl", [root]) == mesh
    assert resolve_uri("package:///arm_description/meshes/link.stl", [root]) == mesh  # Talos's extra slash

    assert find_package("arm_description", []) is None
    monkeypatch.setenv("ROS_PACKAGE_PATH", f"{tmp_path / 'nothing_here'}:{root}")
    assert find_package("arm_description", []) == str(deep.resolve())


def test_example_robot_data_resolves_from_any_root_above_it():
    from robot_files import ERD_ROBOTS

    if ERD_ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    share = ERD_ROBOTS.parent
    # Its package.xml says example_robot_descriptions; its URDFs say package://example-robot-data.
    for root in (share.parent.parent, share.parent.parent.parent):
        assert find_package("example-robot-data", [root]) == str(share.resolve())


def test_a_mesh_mujoco_refuses_is_dropped_not_the_robot(tmp_path):
    # A valid ASCII STL of one flat triangle: read fine, but MuJoCo needs at least 4 vertices for a mesh.
    (tmp_path / "flat.stl").write_text("solid f\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"
                                       "vertex 0 1 0\nendloop\nendfacet\nendsolid f\n")
    _ascii_stl(tmp_path / "cube.stl", 0.1)
    body = (LINK_A.replace("</link>", '<collision><geometry><mesh filename="flat.stl"/></geometry></collision>'
                           '<collision><geometry><mesh filename="cube.stl"/></geometry></collision></link>')
            + '\n<link name="b"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" '
            'izz="0.01"/></inertial><visual><geometry><mesh filename="flat.stl"/></geometry></visual></link>\n'
            + _hinge("b"))
    model, _ = _load(_write(tmp_path, body))
    refused = r"robot\.urdf: link\(s\) 'a', 'b': mesh '.*flat\.stl' skipped: MuJoCo refuses it"
    with pytest.warns(RobotModelWarning, match=refused):
        built = build_model(model)
    assert built.model.nmesh == 1 and any("flat.stl" in m for m in built.skipped_meshes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        engine = PhysicsEngine(model)
    engine.step(10)
    assert engine.built.model.nmesh == 1
