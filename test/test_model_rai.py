"""rai .g files: syntax, transform notation, joint-type mapping, shapes and mass, errors, and round trips
through URDF (checked numerically, and against Pinocchio as an independent URDF consumer)."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from robot_core.model import load_robot, save_robot
from robot_core.model.rai_joint_types import JOINT_TYPES, rotation_to_xyz_angles
from robot_core.model.rai_reader import read_g
from robot_core.model.rai_transform import format_transform, matrix_to_rpy, parse_transform, quat_to_matrix
from robot_core.model.rai_writer import write_g
from robot_core.model.robot_model import (
    Collision,
    Geometry,
    Inertial,
    Joint,
    Limit,
    Link,
    Material,
    Mimic,
    Pose,
    RobotModel,
    RobotModelError,
    RobotModelWarning,
    Ros2Control,
    Ros2ControlInterface,
    Ros2ControlJoint,
    SourceRef,
    Visual,
)
from robot_core.model.urdf_reader import read_urdf
from robot_core.model.urdf_writer import write_urdf

REPO = Path(__file__).resolve().parent.parent
G_DIR = REPO / "test" / "data" / "g"
FIXTURES = ["joint_types", "transforms", "shapes", "shorthand_doc"]


# ---------------------------------------------------------------- helpers (independent of the code under test)
def rx(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])


def ry(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s, 0], [0, 1, 0, 0], [-s, 0, c, 0], [0, 0, 0, 1.0]])


def rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def tr(x: float, y: float, z: float) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = [x, y, z]
    return m


def load(name: str, **options) -> RobotModel:
    path = G_DIR / f"{name}.g"
    return read_g(path.read_text(), str(path), **options)


def joint_motion(j: Joint, q: float) -> np.ndarray:
    """URDF semantics: origin, then the joint's motion along/about its axis."""
    axis = np.asarray(j.axis, dtype=float) / np.linalg.norm(j.axis)
    m = np.eye(4)
    if j.type == "prismatic":
        m[:3, 3] = axis * q
    elif j.type in ("revolute", "continuous"):
        k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        m[:3, :3] = np.eye(3) + math.sin(q) * k + (1 - math.cos(q)) * k @ k
    return j.origin.matrix() @ m


def chain_transform(model: RobotModel, base: str, tip: str, q: dict[str, float]) -> np.ndarray:
    m = np.eye(4)
    for j in model.chain(base, tip):
        m = m @ joint_motion(j, q.get(j.name, 0.0))
    return m


def differences(a: RobotModel, b: RobotModel, tol: float = 1e-12, names: bool = True) -> list[str]:
    """What differs between two models, comparing poses as matrices (rpy angles are not unique)."""
    out: list[str] = []

    def close(x, y, what: str) -> None:
        if x is None or y is None:
            if (x is None) != (y is None):
                out.append(f"{what}: {x} vs {y}")
        elif np.max(np.abs(np.asarray(x, float) - np.asarray(y, float))) > tol:
            out.append(f"{what}: {x} vs {y}")

    if list(a.links) != list(b.links):
        out.append(f"links {list(a.links)} vs {list(b.links)}")
    if list(a.joints) != list(b.joints):
        out.append(f"joints {list(a.joints)} vs {list(b.joints)}")
    if a.fixed_base != b.fixed_base:
        out.append("fixed_base")
    for n in set(a.links) & set(b.links):
        la, lb = a.links[n], b.links[n]
        if (la.inertial is None) != (lb.inertial is None):
            out.append(f"{n}: inertial presence")
        elif la.inertial is not None and lb.inertial is not None:
            close(la.inertial.mass, lb.inertial.mass, f"{n} mass")
            close(la.inertial.origin.xyz, lb.inertial.origin.xyz, f"{n} com")
            ra, rb = la.inertial.origin.matrix()[:3, :3], lb.inertial.origin.matrix()[:3, :3]
            close(ra @ la.inertial.inertia @ ra.T, rb @ lb.inertial.inertia @ rb.T, f"{n} inertia")
        for kind in ("visuals", "collisions"):
            va, vb = getattr(la, kind), getattr(lb, kind)
            if len(va) != len(vb):
                out.append(f"{n} {kind}: {len(va)} vs {len(vb)}")
                continue
            for i, (x, y) in enumerate(zip(va, vb, strict=True)):
                w = f"{n} {kind}[{i}]"
                if x.geometry.kind != y.geometry.kind or x.geometry.filename != y.geometry.filename:
                    out.append(f"{w}: {x.geometry.kind} {x.geometry.filename} vs {y.geometry.kind}")
                    continue
                close(x.origin.matrix(), y.origin.matrix(), f"{w} origin")
                for attr in ("size", "radius", "length", "scale"):
                    close(getattr(x.geometry, attr), getattr(y.geometry, attr), f"{w} {attr}")
                if names and x.name != y.name:
                    out.append(f"{w} name {x.name!r} vs {y.name!r}")
                if kind == "visuals":
                    close(x.material.rgba if x.material else None, y.material.rgba if y.material else None,
                          f"{w} rgba")
    for n in set(a.joints) & set(b.joints):
        ja, jb = a.joints[n], b.joints[n]
        if (ja.type, ja.parent, ja.child) != (jb.type, jb.parent, jb.child):
            out.append(f"{n}: {ja.type} {ja.parent}->{ja.child} vs {jb.type} {jb.parent}->{jb.child}")
            continue
        close(ja.origin.matrix(), jb.origin.matrix(), f"{n} origin")
        if ja.type in ("fixed", "floating"):
            continue
        close(ja.axis, jb.axis, f"{n} axis")
        la, lb = ja.limit or Limit(), jb.limit or Limit()
        for attr in ("lower", "upper", "effort", "velocity"):
            close(getattr(la, attr), getattr(lb, attr), f"{n} limit {attr}")
        close(ja.initial_position, jb.initial_position, f"{n} initial_position")
        da = (ja.dynamics.damping, ja.dynamics.friction) if ja.dynamics else None
        db = (jb.dynamics.damping, jb.dynamics.friction) if jb.dynamics else None
        close(da, db, f"{n} dynamics")
        ma = (ja.mimic.joint, ja.mimic.multiplier, ja.mimic.offset) if ja.mimic else None
        mb = (jb.mimic.joint, jb.mimic.multiplier, jb.mimic.offset) if jb.mimic else None
        if ma != mb:
            out.append(f"{n} mimic {ma} vs {mb}")
    return out


def with_initial_values_block(model: RobotModel) -> RobotModel:
    """URDF keeps initial positions only as <ros2_control> initial_value; add such a block."""
    block = Ros2Control("Init", plugin="mock_components/GenericSystem")
    for j in model.joints.values():
        if j.is_scalar and j.initial_position is not None:
            block.joints.append(Ros2ControlJoint(
                j.name, state_interfaces=[Ros2ControlInterface("position", initial_value=j.initial_position)]))
    model.ros2_control.append(block)
    return model


def via_urdf(model: RobotModel) -> RobotModel:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RobotModelWarning)
        out = read_urdf(write_urdf(model), "roundtrip.urdf")
    # Only meshes may go unresolved (no base folder here) and initial positions be left out (no <ros2_control>);
    # every joint got its <limit> from the writer.
    expected = ("could not resolve", "no place for the initial positions")
    assert all(any(e in str(w.message) for e in expected) for w in caught), [str(w.message) for w in caught]
    return out


# ---------------------------------------------------------------- syntax
def test_syntax_variants_all_read_the_same():
    """Old (=, no commas), new (colon after parents, commas) and mixed spellings give the same model."""
    old_style = """
        # comment line
        base { mass=1 shape=box size=[.1 .2 .3] }   # trailing comment
        j (base) { joint=hingeZ limits=[-1 1] q=0.5 }
        link (j) { mass=2, shape:sphere, size:[0.1] }
    """
    new_style = """
        base: { mass: 1, shape: "box", size: [0.1, 0.2, 0.3] },
        j (base): { joint: 'hingeZ'; limits: [-1, 1]; q: [0.5] }
        link(j):{mass: 2.0, shape: sphere, size: [0 0 0 0.1]}
    """
    a, b = read_g(old_style, "old.g"), read_g(new_style, "new.g")
    assert not differences(a, b)
    assert list(a.joints) == ["j"] and a.joints["j"].child == "link" and a.joints["j"].initial_position == 0.5
    assert a.links["base"].visuals[0].geometry.size.tolist() == [0.1, 0.2, 0.3]


def test_flags_strings_nested_and_unknown_attributes_are_accepted():
    model = read_g("""
        base { mass: 1, shape: sphere, size: [0.1], logical: { gripper: true }, someFlag, label: "a b", names: (x y) }
        tip (base) { Q: <t(0 0 1)>, note: 'ignored by the robot model' }
    """, "flags.g")
    assert list(model.links) == ["base", "tip"] and model.joints["tip_joint"].origin.xyz.tolist() == [0, 0, 1]


def test_include_pulls_in_another_file_and_errors_name_it(tmp_path):
    (tmp_path / "arm.g").write_text("arm_origin (base) { Q: <t(0 0 1)> }\narm (arm_origin) { joint: hingeY }\n"
                                    "arm_link (arm) { mass: 1, shape: sphere, size: [0.1] }\n")
    main = tmp_path / "robot.g"
    main.write_text("base { mass: 1, shape: sphere, size: [0.1] }\nInclude: 'arm.g'\n")
    model = read_g(main.read_text(), str(main))
    assert model.name == "robot" and model.joints["arm"].parent == "base" and model.joints["arm"].child == "arm_link"
    (tmp_path / "arm.g").write_text("\n\narm (nowhere) { joint: hingeY }\n")
    with pytest.raises(RobotModelError) as err:
        read_g(main.read_text(), str(main))
    assert err.value.source.file.endswith("arm.g") and err.value.source.line == 3
    (tmp_path / "loop.g").write_text("Include: <loop.g>\n")
    with pytest.raises(RobotModelError, match="recursive"):
        read_g((tmp_path / "loop.g").read_text(), str(tmp_path / "loop.g"))


def test_documentation_example_with_shorthand():
    """Seed 004's example: frame chain for joint1, shorthand for joint2/3, a second root (target)."""
    m = load("shorthand_doc")
    assert list(m.links) == ["world", "stem", "joint1", "arm1", "joint2", "arm2", "joint3", "eff", "target"]
    # Several roots hang from a 'world' link at their absolute poses.
    assert m.joints["stem_joint"].parent == "world"
    assert np.allclose(m.joints["stem_joint"].origin.matrix(), tr(0, 0, 0.5), atol=1e-15)
    assert np.allclose(m.joints["target_joint"].origin.matrix(), tr(0, 0.2, 1.7), atol=1e-15)
    # joint1: the origin is joint1_pre's pose, the initial value comes from Q = d(-30 1 0 0).
    j1 = m.joints["joint1"]
    assert (j1.type, j1.parent, j1.child) == ("continuous", "stem", "joint1")
    assert np.allclose(j1.origin.matrix(), tr(0, 0, 0.5) @ rx(math.pi / 2), atol=1e-15)
    assert j1.axis.tolist() == [1, 0, 0] and j1.initial_position == pytest.approx(math.radians(-30), abs=1e-15)
    # arm1 sits 0.15 along z of the joint frame: a link of its own on a fixed joint.
    assert np.allclose(m.joints["arm1_joint"].origin.matrix(), tr(0, 0, 0.15))
    # joint2 (arm1 arm2): A is the origin, B places arm2 below the joint frame.
    j2 = m.joints["joint2"]
    assert (j2.parent, j2.child, j2.initial_position) == ("arm1", "joint2", pytest.approx(math.radians(-10)))
    assert np.allclose(j2.origin.matrix(), tr(0, 0, 0.15), atol=1e-15)
    assert np.allclose(m.joints["arm2_joint"].origin.matrix(), tr(0, 0, 0.15))
    assert m.joints["eff_joint"].parent == "joint3"
    # Capsule size [length radius]; the inertia of a solid capsule of that mass.
    g = m.links["stem"].visuals[0].geometry
    assert (g.kind, g.length, g.radius) == ("capsule", 1.0, 0.05)
    assert m.links["target"].visuals[0].geometry.radius == 0.02  # old 4-vector size: radius last


def test_roots_world_link_and_mobile_base():
    # A root with a joint (a mobile base) hangs from a 'world' link; X gives its initial values.
    m = read_g("base { joint: transXYPhi, X: <t(1 2 0) d(90 0 0 1)>, mass: 1, shape: box, size: [1 1 1] }\n"
               "arm (base) { joint: hingeZ, Q: <d(10 0 0 1)> }", "mobile.g")
    assert list(m.links) == ["world", "base_x_link", "base_y_link", "base", "arm"]
    assert [(j.name, j.parent, j.initial_position) for j in m.chain("world", "base")] == [
        ("base_x", "world", 1.0), ("base_y", "base_x_link", 2.0), ("base_phi", "base_y_link", pytest.approx(
            math.pi / 2))]
    assert m.joints["arm"].initial_position == pytest.approx(math.radians(10))
    text = write_g(m)
    assert "base (world) { joint: transXYPhi, q: [1 2 1.5707963267948966], mass: 1" in text
    assert not differences(m, read_g(text, "mobile.g"))
    # An explicit 'world' root collects the other roots at their absolute poses.
    m = read_g("world {}\ntable { X: <t(1 0 .5)>, mass: 10, shape: box, size: [1 1 .1] }\n"
               "robot (world) { Q: <t(0 0 .8)>, mass: 1, shape: sphere, size: [.1] }", "scene.g")
    assert [(j.name, j.parent, j.child, j.origin.xyz.tolist()) for j in m.joints.values()] == [
        ("table_joint", "world", "table", [1, 0, 0.5]), ("robot_joint", "world", "robot", [0, 0, 0.8])]
    # A single root away from the origin keeps its pose below 'world' (fixed base) ...
    single = "stem { X: <t(0 0 1)>, mass: 1, shape: sphere, size: [.1] }"
    m = read_g(single, "stem.g")
    assert list(m.links) == ["world", "stem"] and m.joints["stem_joint"].origin.xyz.tolist() == [0, 0, 1]
    # ... but a floating base cannot keep an initial pose: it is dropped with a warning.
    with pytest.warns(RobotModelWarning, match="floating base"):
        m = read_g(single, "stem.g", fixed_base=False)
    assert m.fixed_base is False and list(m.links) == ["stem"]


# ---------------------------------------------------------------- transforms
def test_every_transform_notation_against_hand_computed_matrices():
    m = load("transforms")
    s = math.sqrt(0.5)
    expected = {
        "f_t": tr(1, 2, 3),
        "f_q": ry(math.pi / 2),  # q(1 0 1 0) normalised: 90 deg about y
        "f_r": rz(math.pi / 2),
        "f_d": np.array([[0.5, 0.5, s, 0], [0.5, 0.5, -s, 0], [-s, s, 0, 0], [0, 0, 0, 1]]),  # 90 deg about (1 1 0)
        "f_E": rz(0.3) @ ry(0.2) @ rx(0.1),
        "f_chain": tr(0, 0, 0.5) @ rx(math.pi / 2) @ tr(0, 0, 0.2) @ rz(1.0) @ rz(math.pi / 2),
        "f_seven": tr(1, 2, 3) @ np.array([[0, 0, 1, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1.0]]),
        "f_three": tr(0.1, 0.2, 0.3),
        "f_four": rz(math.pi),
        "f_string": tr(0, 1, 0) @ rz(math.pi / 4),
        "f_T": tr(1, 0, 0) @ ry(-math.pi / 2),
        "f_multi": tr(0.1, 0.2, 0.3) @ rz(math.pi / 6),
        "f_abs": tr(0, -1, -2),  # X: t(1 1 1) seen from f_t at t(1 2 3)
        "j_x": tr(0, -1, 0) @ rz(-math.pi / 2),  # X: t(1 0 1) seen from j_link, turned 90 deg about z
    }
    for frame, want in expected.items():
        got = m.joints[f"{frame}_joint"].origin.matrix()
        assert np.allclose(got, want, atol=1e-12), (frame, got, want)
    # pose: is absolute like X; f_d turned the frame, so the relative pose is t(0 0 1) in f_d coordinates.
    f_d = expected["f_d"]
    assert np.allclose(f_d @ m.joints["f_pose_joint"].origin.matrix(), tr(0, 0, 1), atol=1e-12)


def test_chains_compose_left_to_right():
    ref = SourceRef("x.g", 1, "test")
    a = parse_transform("t(1 0 0) d(90 0 0 1)", ref)
    b = parse_transform("d(90 0 0 1) t(1 0 0)", ref)
    assert np.allclose(a, tr(1, 0, 0) @ rz(math.pi / 2)) and np.allclose(a[:3, 3], [1, 0, 0])
    assert np.allclose(b, rz(math.pi / 2) @ tr(1, 0, 0)) and np.allclose(b[:3, 3], [0, 1, 0])
    # r() takes radians, d() degrees, both about an axis that need not be unit length.
    assert np.allclose(parse_transform("r(0.5 0 0 3)", ref), parse_transform("d(28.64788975654116 0 0 1)", ref))
    assert np.allclose(parse_transform("", ref), np.eye(4))
    assert np.allclose(parse_transform("1 2 3", ref), tr(1, 2, 3))  # plain numbers inside <...> are a vector
    assert np.allclose(parse_transform("d(0 0 0 0)", ref), np.eye(4))


def test_written_transforms_read_back_exactly_even_near_gimbal_lock():
    rng = np.random.default_rng(3)
    ref = SourceRef("x.g", 1, "test")
    cases = [rng.normal(size=4) for _ in range(200)]
    cases += [np.array([math.cos(a / 2), 0, math.sin(a / 2), 0]) for a in (math.pi / 2 - 1e-9, -math.pi / 2, 1e-12)]
    for quat in cases:
        m = np.eye(4)
        m[:3, :3] = quat_to_matrix(quat)
        m[:3, 3] = rng.normal(size=3)
        back = parse_transform(format_transform(m)[1:-1], ref)
        assert np.max(np.abs(back - m)) < 1e-14
    # matrix_to_rpy keeps full precision next to pitch = pi/2 (asin would lose ~1e-8 there).
    r = (ry(math.pi / 2 - 1e-9) @ rx(0.3))[:3, :3]
    assert np.allclose(matrix_to_rpy(r), [0.3, math.pi / 2 - 1e-9, 0], atol=1e-14)


# ---------------------------------------------------------------- joint types
X, Y, Z = [1, 0, 0], [0, 1, 0], [0, 0, 1]
# rai joint -> (URDF joints (name, type, axis), rai's own definition of the joint transform for values q)
MAPPING = {
    "hx": ([("hx", "revolute", X)], lambda q: rx(q[0])),
    "hy": ([("hy", "continuous", Y)], lambda q: ry(q[0])),
    "hz": ([("hz", "revolute", Z)], lambda q: rz(q[0])),
    "tx": ([("tx", "prismatic", X)], lambda q: tr(q[0], 0, 0)),
    "ty": ([("ty", "prismatic", Y)], lambda q: tr(0, q[0], 0)),
    "tz": ([("tz", "prismatic", Z)], lambda q: tr(0, 0, q[0])),
    "txy": ([("txy_x", "prismatic", X), ("txy_y", "prismatic", Y)], lambda q: tr(q[0], q[1], 0)),
    "t3": ([("t3_x", "prismatic", X), ("t3_y", "prismatic", Y), ("t3_z", "prismatic", Z)],
           lambda q: tr(q[0], q[1], q[2])),
    "txyphi": ([("txyphi_x", "prismatic", X), ("txyphi_y", "prismatic", Y), ("txyphi_phi", "revolute", Z)],
               lambda q: tr(q[0], q[1], 0) @ rz(q[2])),  # translate, then turn
    "phitxy": ([("phitxy_phi", "continuous", Z), ("phitxy_x", "prismatic", X), ("phitxy_y", "prismatic", Y)],
               lambda q: rz(q[0]) @ tr(q[1], q[2], 0)),  # turn, then translate in the turned frame
    "univ": ([("univ_x", "revolute", X), ("univ_y", "revolute", Y)], lambda q: rx(q[0]) @ ry(q[1])),
    "ball": ([("ball_x", "continuous", X), ("ball_y", "continuous", Y), ("ball_z", "continuous", Z)],
             lambda q: rx(q[0]) @ ry(q[1]) @ rz(q[2])),
}
ORIGINS = {"hx": tr(0.1, 0, 0.2), "hy": tr(-0.1, 0, 0.2) @ rz(math.pi / 2), "hz": tr(0, 0.1, 0.2),
           "tx": tr(0, -0.1, 0.2), "ty": tr(0.2, 0.2, 0.2), "tz": tr(0.3, 0.3, 0.2), "txy": tr(-0.3, 0.3, 0.2),
           "t3": tr(-0.3, -0.3, 0.2), "txyphi": tr(0.3, -0.3, 0.2), "phitxy": tr(0.4, 0, 0.2),
           "univ": tr(-0.4, 0, 0.2), "ball": tr(0, 0.4, 0.2)}
INITIAL = {"hx": [0.3], "hy": [math.radians(20)], "hz": [0.5], "tx": [0.05], "ty": [0.04], "tz": [0.05],
           "txy": [0.01, 0.02], "t3": [0.01, -0.02, 0.03], "txyphi": [0.1, 0.2, 0.3],
           "phitxy": [math.radians(30), 0.1, 0.05], "univ": [0.2, -0.3]}


@pytest.mark.parametrize("rai_joint", list(MAPPING))
def test_joint_type_maps_to_documented_urdf_joints(rai_joint):
    m = load("joint_types")
    urdf_joints, rai_transform = MAPPING[rai_joint]
    names = [n for n, _, _ in urdf_joints]
    link = f"{rai_joint}_link"
    chain = m.chain("base", link)
    assert [j.name for j in chain] == names
    for j, (name, jtype, axis) in zip(chain, urdf_joints, strict=True):
        assert (j.name, j.type) == (name, jtype)
        assert np.allclose(j.axis, axis, atol=0)
    # The chain's intermediate links are massless and named <joint>_link.
    assert [j.child for j in chain[:-1]] == [f"{n}_link" for n in names[:-1]]
    assert all(m.links[j.child].inertial is None and not m.links[j.child].visuals for j in chain[:-1])
    assert np.allclose(chain[0].origin.matrix(), ORIGINS[rai_joint], atol=1e-15)
    assert all(j.origin.is_identity() for j in chain[1:])
    # The URDF chain moves exactly as rai defines the joint, at random values.
    rng = np.random.default_rng(len(rai_joint))
    for _ in range(20):
        q = rng.uniform(-1.5, 1.5, len(names))
        got = chain_transform(m, "base", link, dict(zip(names, q, strict=True)))
        assert np.allclose(got, ORIGINS[rai_joint] @ rai_transform(q), atol=1e-12)
    if rai_joint in INITIAL:
        assert [j.initial_position for j in chain] == pytest.approx(INITIAL[rai_joint], abs=1e-12)


def test_limits_ctrl_limits_mimic_and_dynamics():
    m = load("joint_types")
    hx, hz, tx = m.joints["hx"], m.joints["hz"], m.joints["tx"]
    assert (hx.limit.lower, hx.limit.upper, hx.limit.velocity, hx.limit.effort) == (-1, 1, 2, 10)
    assert (hz.limit.lower, hz.limit.upper, hz.limit.velocity, hz.limit.effort) == (-2, 2, 1.5, 7)  # 5-number form
    assert (tx.limit.lower, tx.limit.upper, tx.limit.velocity, tx.limit.effort) == (-0.1, 0.2, 0.5, 40)
    assert m.joints["hy"].limit is None and m.joints["phitxy_x"].limit is None  # unlimited
    def bounds(*names: str) -> list[tuple]:
        return [(m.joints[n].limit.lower, m.joints[n].limit.upper) for n in names]

    assert bounds("txy_x", "txy_y") == [(-0.1, 0.1), (-0.2, 0.2)]  # per-DOF pairs
    assert bounds("t3_x", "t3_y", "t3_z") == [(-0.1, 0.1)] * 3  # one pair for all DOFs
    mim = m.joints["mim"]
    assert (mim.mimic.joint, mim.mimic.multiplier, mim.mimic.offset) == ("hx", 2.0, 0.1)
    assert m.actuated_joint_names()[:2] == ["hx", "hy"] and "mim" not in m.actuated_joint_names()
    planar = load_robot(REPO / "urdf" / "planar2.g")
    assert (planar.joints["joint1"].dynamics.damping, planar.joints["joint1"].dynamics.friction) == (0.1, 0.05)


def test_free_xball_rigid_and_shorthand_mapping():
    m = load("joint_types")
    for name, child, origin in (("floater", "floater_body", tr(0, -0.4, 0.5)), ("xball", "xball_body",
                                                                                 tr(0.1, -0.4, 0.5))):
        j = m.joints[name]
        assert (j.type, j.parent, j.child) == ("floating", "base", child)
        assert np.allclose(j.origin.matrix(), origin)
    welded = m.joints["welded_joint"]
    assert welded.type == "fixed" and np.allclose(welded.origin.matrix(), tr(0, 0, -0.1) @ rz(0.5))
    # Shorthand with B = t(0 0 .1) d(90 1 0 0): B is moved in front of the hinge, turning its z axis into y.
    sh = m.joints["sh"]
    assert (sh.type, sh.parent, sh.child, sh.initial_position) == ("revolute", "base", "sh_link", -0.2)
    assert np.allclose(sh.axis, [0, 1, 0], atol=1e-15)
    b = tr(0, 0, 0.1) @ rx(math.pi / 2)
    for q in (-1.0, 0.0, 0.7):  # same motion as rai's A * Rz(q) * B
        assert np.allclose(joint_motion(sh, q), tr(0.45, 0.45, 0.1) @ rz(q) @ b, atol=1e-12)


def test_quatball_initial_quaternion_and_its_singularity():
    m = load("joint_types")
    chain = m.chain("base", "ball_link")
    angles = [j.initial_position for j in chain]
    quat = np.array([0.9, 0.1, 0.2, 0.3]) / np.linalg.norm([0.9, 0.1, 0.2, 0.3])
    w, x, y, z = quat
    want = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    assert np.allclose((rx(angles[0]) @ ry(angles[1]) @ rz(angles[2]))[:3, :3], want, atol=1e-12)
    # Documented singularity: at b = +-pi/2 the first and last axes line up (gimbal lock).
    turned = rx(0.4) @ ry(math.pi / 2)
    assert np.allclose(rx(0.4)[:3, 0], (turned @ np.array([0, 0, 1, 0]))[:3], atol=1e-12)
    # The angles stay well defined there (roll folded into yaw).
    r = (ry(math.pi / 2) @ rz(0.3))[:3, :3]
    a, b, c = rotation_to_xyz_angles(r)
    assert np.allclose((rx(a) @ ry(b) @ rz(c))[:3, :3], r, atol=1e-12)


def test_every_rai_joint_type_is_covered_by_the_fixture():
    text = (G_DIR / "joint_types.g").read_text()
    for name in JOINT_TYPES:
        assert f"joint: {name}" in text, name


def test_pinocchio_moves_the_converted_robot_like_rai_defines_it():
    """.g -> URDF -> Pinocchio: every link's pose equals rai's frame semantics at random joint values."""
    pin = pytest.importorskip("pinocchio")
    m = load("joint_types")
    # The writer spells capsules and unbounded trans joints in standard URDF, so urdfdom takes the file as is.
    assert any(v.geometry.kind == "capsule" for link in m.links.values() for v in link.visuals)
    assert any(j.type == "prismatic" and j.limit is None for j in m.joints.values())
    pm = pin.buildModelFromXML(write_urdf(m))
    data = pm.createData()
    rng = np.random.default_rng(7)
    for _ in range(25):
        q = pin.neutral(pm)
        values: dict[str, float] = {}
        for name in m.scalar_joint_names():
            jm = pm.joints[pm.getJointId(name)]
            v = float(rng.uniform(-1.0, 1.0))
            if m.joints[name].mimic is not None:
                continue
            if jm.nq == 2:  # continuous joints are (cos, sin) in Pinocchio
                q[jm.idx_q:jm.idx_q + 2] = [math.cos(v), math.sin(v)]
            else:
                q[jm.idx_q] = v
            values[name] = v
        pin.framesForwardKinematics(pm, data, q)
        for rai_joint, (urdf_joints, rai_transform) in MAPPING.items():
            qs = [values[n] for n, _, _ in urdf_joints]
            want = ORIGINS[rai_joint] @ rai_transform(qs)
            got = data.oMf[pm.getFrameId(f"{rai_joint}_link")].homogeneous
            assert np.allclose(got, want, atol=1e-12), rai_joint


# ---------------------------------------------------------------- shapes and mass
def test_shapes_sizes_flags_and_meshes():
    m = load("shapes")
    base = m.links["base"]
    vis = {v.name: v for v in base.visuals}
    col = {c.name: c for c in base.collisions}
    assert list(vis) == ["box_shape", "ssbox_shape", "sphere_old", "capsule_shape", "sscyl", "mesh_shape", "cvx_shape"]
    assert list(col) == ["box_shape", "ssbox_shape", "sphere_old", "cylinder_old", "sscyl", "mesh_shape", "cvx_shape"]
    assert vis["box_shape"].geometry.size.tolist() == [0.2, 0.3, 0.1]
    assert vis["box_shape"].material.rgba.tolist() == [1, 0, 0, 1]
    assert vis["ssbox_shape"].geometry.size.tolist() == [0.2, 0.2, 0.2]  # rounding radius dropped
    assert vis["ssbox_shape"].material.rgba.tolist() == [0, 1, 0, 0.5]
    assert vis["sphere_old"].geometry.radius == 0.05
    assert "capsule_shape" not in col  # contact: 0 -> visual only
    assert "cylinder_old" not in vis  # visual: false -> collision only
    assert (col["cylinder_old"].geometry.length, col["cylinder_old"].geometry.radius) == (0.2, 0.05)
    assert (vis["sscyl"].geometry.kind, vis["sscyl"].geometry.length, vis["sscyl"].geometry.radius) == (
        "cylinder", 0.2, 0.05)
    mesh = vis["mesh_shape"].geometry
    assert (mesh.kind, mesh.filename, mesh.scale.tolist()) == ("mesh", "meshes/tetra.stl", [0.5, 0.5, 0.5])
    assert mesh.resolved_filename == str(G_DIR / "meshes" / "tetra.stl")
    assert vis["cvx_shape"].geometry.scale.tolist() == [1, 2, 3]
    assert np.allclose(vis["sscyl"].origin.matrix(), tr(0, 0, 0.5))
    # A marker has no geometry: the frame stays a plain link.
    assert "marker" in m.links and not m.links["marker"].visuals
    # Inertia given: diagonal with com; full tensor.
    assert base.inertial.mass == 4 and base.inertial.origin.xyz.tolist() == [0, 0, 0.05]
    assert np.array_equal(base.inertial.inertia, np.diag([0.1, 0.2, 0.3]))
    arm = m.links["arm_link"].inertial
    assert np.array_equal(arm.inertia, [[0.02, 0.001, 0], [0.001, 0.03, 0], [0, 0, 0.04]])
    assert m.links["arm_link"].visuals[0].name == "" and m.links["arm_link"].visuals[0].origin.is_identity()


def test_inertia_computed_from_several_shapes():
    """Mass 2 over a box (0.2x0.1x0.1 at x=0.1) and a cylinder (r 0.05, l 0.2, along x at x=0.3), by volume."""
    link = load("shapes").links["two_link"]
    vb, vc = 0.2 * 0.1 * 0.1, math.pi * 0.05**2 * 0.2
    mb, mc = 2 * vb / (vb + vc), 2 * vc / (vb + vc)
    com = (mb * 0.1 + mc * 0.3) / 2
    ixx = mb * (0.01 + 0.01) / 12 + mc * 0.05**2 / 2
    iyy_b = mb * (0.04 + 0.01) / 12 + mb * (0.1 - com) ** 2
    iyy_c = mc * (3 * 0.05**2 + 0.04) / 12 + mc * (0.3 - com) ** 2
    assert link.inertial.mass == 2 and np.allclose(link.inertial.origin.xyz, [com, 0, 0], atol=1e-15)
    assert np.allclose(link.inertial.inertia, np.diag([ixx, iyy_b + iyy_c, iyy_b + iyy_c]), atol=1e-15)


def test_mass_without_shape_uses_water_sphere_and_warns():
    with pytest.warns(RobotModelWarning, match="water density"):
        m = read_g("base { mass: 4.18879020478639 }", "point.g")  # a 0.1 m water sphere
    assert np.allclose(m.links["base"].inertial.inertia, np.eye(3) * 0.4 * 4.18879020478639 * 0.01)


def test_mesh_inertia_uses_the_bounding_box():
    text = f"base {{ mass: 2, shape: mesh, mesh: <{G_DIR / 'meshes' / 'tetra.stl'}>, meshscale: [1 2 4] }}"
    with pytest.warns(RobotModelWarning, match="bounding box"):
        inertial = read_g(text, "mesh.g").links["base"].inertial
    assert np.allclose(inertial.origin.xyz, [0.5, 1, 2])  # the tetrahedron spans [0 1]^3 before scaling
    assert np.allclose(inertial.inertia, 2 / 12 * np.diag([4 + 16, 1 + 16, 1 + 4]))


def test_contact_default_option():
    text = "base { mass: 1, shape: box, size: [1 1 1] }\ns (base) { shape: sphere, size: [1], contact: 1 }"
    m = read_g(text, "c.g", contact_default=False)
    assert len(m.links["base"].visuals) == 2 and [c.name for c in m.links["base"].collisions] == ["s"]


# ---------------------------------------------------------------- round trips
@pytest.mark.parametrize("name", [*FIXTURES, "planar2"])
def test_g_to_urdf_to_g_round_trip(name):
    path = REPO / "urdf" / "planar2.g" if name == "planar2" else G_DIR / f"{name}.g"
    a = read_g(path.read_text(), str(path))
    assert not differences(a, read_g(write_g(a), str(path)))  # .g -> .g
    b = via_urdf(a)
    assert not [d for d in differences(a, b) if "initial_position" not in d]
    # URDF keeps initial positions only in <ros2_control>; with such a block they survive too.
    b = via_urdf(with_initial_values_block(load(name) if name != "planar2" else read_g(path.read_text(),
                                                                                        str(path))))
    with pytest.warns(RobotModelWarning, match="ros2_control"):
        text = write_g(b)
    c = read_g(text, str(path))
    assert not differences(a, c)


def test_round_trip_keeps_the_written_joint_types():
    text = write_g(via_urdf(load("joint_types")))
    for frame, rai_type in (("txy", "transXY"), ("t3", "trans3"), ("txyphi", "transXYPhi"), ("phitxy", "phiTransXY"),
                            ("univ", "universal"), ("ball", "quatBall"), ("hx", "hingeX"), ("tz", "transZ")):
        assert f"{frame} ({frame}_origin) {{ joint: {rai_type}" in text, frame


@pytest.mark.parametrize("path", [
    "urdf/planar2.urdf", "urdf/rc_arm.urdf",
    "ERD/panda_description/urdf/panda.urdf", "ERD/ur_description/urdf/ur5_robot.urdf",
    "ERD/pr2_description/urdf/pr2.urdf",
])
def test_urdf_to_g_to_model(path, erd_robots):
    """Third-party robots survive URDF -> .g -> RobotModel exactly (poses as matrices, 1e-12)."""
    full = str(erd_robots / path[4:]) if path.startswith("ERD/") else str(REPO / path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)  # PR2's inertias, dropped <ros2_control> ...
        a = load_robot(full, package_dirs=[erd_robots.parent])
        c = read_g(write_g(a), full)
    diffs = differences(a, c, names=False)
    if "pr2" in path:
        # PR2's URDF lists r_forearm_roll_joint before r_elbow_flex_joint, which carries its parent link;
        # a .g file must define a parent frame first, so only that order changes.
        diffs = [d for d in diffs if not d.startswith(("links ", "joints "))]
        assert set(a.joints) == set(c.joints) and set(a.links) == set(c.links)
    elif "ur5" in path:
        # UR5's root link 'world' is listed last; .g files start at the root.
        diffs = [d for d in diffs if not d.startswith(("links ", "joints "))]
        assert a.actuated_joint_names() == c.actuated_joint_names()
    assert not diffs, diffs[:5]


def _model(*joints: Joint, links: list[Link] | None = None, fixed_base: bool = True) -> RobotModel:
    m = RobotModel("w", fixed_base=fixed_base)
    names = ["base"] + [j.child for j in joints]
    for n in names:
        m.links[n] = Link(n, Inertial(1.0, Pose(), np.eye(3) * 0.01))
    for lk in links or []:
        m.links[lk.name] = lk
    for j in joints:
        m.joints[j.name] = j
    return m


def test_writer_handles_any_axis_planar_and_floating_base():
    s = math.sqrt(0.5)
    m = _model(
        Joint("diag", "revolute", "base", "a", Pose(np.array([0.1, 0, 0]), np.array([0.2, 0.3, 0.4])),
              np.array([s, s, 0.0]), Limit(-1, 1, 5, 2), initial_position=0.3),
        Joint("neg", "continuous", "a", "b", Pose(np.array([0, 0.2, 0])), np.array([0, 0, -1.0])),
        Joint("slide", "prismatic", "b", "c", Pose(), np.array([0.6, 0.8, 0]), Limit(0, 0.5, 1, 1)),
        Joint("nearly_neg", "revolute", "c", "d", Pose(), np.array([0, -1.0, -4.37114e-08]) /
              np.linalg.norm([0, -1.0, -4.37114e-08]), Limit(-1, 1, 1, 1)),
        fixed_base=False,
    )
    text = write_g(m)
    assert "base { joint: free" in text  # floating base
    back = read_g(text, "w.g")
    assert not differences(m, back)
    # A URDF planar joint becomes transXYPhi (a chain): same motion, different structure.
    p = _model(Joint("pl", "planar", "base", "a", Pose(np.array([0, 0, 1.0])), np.array([1.0, 0, 0])))
    back = read_g(write_g(p), "p.g")
    chain = back.chain("base", "a")
    assert [j.type for j in chain] == ["prismatic", "prismatic", "continuous", "fixed"]
    x, y, phi = 0.2, -0.1, 0.4
    got = chain_transform(back, "base", "a", {"pl_x": x, "pl_y": y, "pl_phi": phi})
    # planar with normal x: rotation about x and a translation in the y-z plane. The writer turns rai's
    # z normal onto x with Ry(90 deg), which maps the chain's (x, y) translation onto (0, y, -x).
    assert np.allclose(got, tr(0, 0, 1) @ tr(0, y, -x) @ rx(phi), atol=1e-12)


def test_writer_keeps_fixed_joint_names_shape_order_and_visual_collision_split():
    box = Geometry("box", size=np.array([0.1, 0.2, 0.3]))
    sphere = Geometry("sphere", radius=0.05)
    red = Material("", np.array([1.0, 0, 0, 1]))
    shapes = Link("shapes", None,
                  [Visual(sphere, "s", Pose(), red), Visual(box, "b", Pose(np.array([0, 0, 1.0])))],
                  [Collision(box, "only_col", Pose(np.array([1.0, 0, 0]))), Collision(sphere, "s", Pose()),
                   Collision(box, "b", Pose(np.array([0, 0, 1.0])))])
    m = _model(
        # a custom-named fixed joint to an empty link that carries one joint: both must survive
        Joint("mount", "fixed", "base", "empty", Pose(np.array([0, 0, 0.5]))),
        Joint("hinge", "revolute", "empty", "arm", Pose(), np.array([0, 0, 1.0]), Limit(-1, 1, 1, 1)),
        Joint("tool_joint", "fixed", "arm", "tool"),  # default name, identity origin
        Joint("shapes_joint", "fixed", "tool", "shapes"),
        links=[],
    )
    m.links["empty"] = Link("empty")
    m.links["tool"] = Link("tool")
    m.links["shapes"] = shapes
    back = read_g(write_g(m), "w.g")
    assert not differences(m, back)


def _random_model(rng: np.random.Generator) -> RobotModel:
    """A random tree mixing every structure the writer must keep apart for the reader."""
    m = RobotModel("random")
    geoms = [Geometry("box", size=np.array([0.1, 0.2, 0.3])), Geometry("sphere", radius=0.05),
             Geometry("cylinder", radius=0.02, length=0.3), Geometry("mesh", filename="m.stl")]

    def pose(p_identity: float) -> Pose:
        if rng.random() < p_identity:
            return Pose()
        return Pose(rng.normal(size=3) * (rng.random() < 0.7), rng.uniform(-3, 3, 3) * (rng.random() < 0.6))

    def link(name: str) -> Link:
        lk = Link(name)
        if rng.random() < 0.5:
            lk.inertial = Inertial(float(rng.uniform(0.1, 2)), Pose(rng.normal(size=3) * 0.1), np.diag([1, 2, 2.5]))
        for _ in range(rng.integers(0, 3)):
            g, o = geoms[rng.integers(len(geoms))], pose(0.5)
            if rng.random() < 0.7:
                lk.visuals.append(Visual(g, f"{name}_v{len(lk.visuals)}", o))
            if rng.random() < 0.7:
                lk.collisions.append(Collision(g, f"{name}_v{len(lk.visuals) - 1}" if lk.visuals else "", o))
        return lk

    m.links["root"] = link("root")
    names = ["root"]
    for i in range(int(rng.integers(1, 9))):
        parent = names[int(rng.integers(len(names)))]
        child = f"l{i}"
        kind = ["fixed", "revolute", "continuous", "prismatic", "floating"][int(rng.integers(5))]
        jname = {0: f"{child}_joint", 1: f"j{i}", 2: child}[int(rng.integers(3))]
        axes = [np.array([1.0, 0, 0]), np.array([0, -1.0, 0]), rng.normal(size=3)]
        axis = axes[int(rng.integers(3))]
        axis = axis / np.linalg.norm(axis)
        limit = Limit(-1.0, 1.0, 2.0, 3.0) if kind in ("revolute", "prismatic") else None
        init = float(rng.uniform(-1, 1)) if kind != "fixed" and kind != "floating" and rng.random() < 0.5 else None
        if kind == "fixed" and jname == child:
            jname = f"{child}_joint"
        if kind in ("fixed", "floating"):
            axis = np.array([1.0, 0, 0])
        m.links[child] = link(child)
        m.joints[jname] = Joint(jname, kind, parent, child, pose(0.4), axis, limit, initial_position=init)
        names.append(child)
    return m


def world_poses(model: RobotModel, q: dict[str, float]) -> dict[str, np.ndarray]:
    out = {model.root_link: np.eye(4)}
    for j in model.joints.values():  # parents come first in these models
        out[j.child] = out[j.parent] @ joint_motion(j, q.get(j.name, 0.0))
    return out


def test_random_models_survive_write_and_read():
    shared_frames = 0
    for seed in range(300):
        m = _random_model(np.random.default_rng(seed))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RobotModelWarning)
            text = write_g(m)
        back = read_g(text, "random.g")
        turned = {j.child for j in m.joints.values() if j.name == j.child and j.type != "floating"
                  and np.max(np.abs(j.axis - np.eye(3)[int(np.argmax(np.abs(j.axis)))])) > 1e-12}
        if not turned:
            assert not differences(m, back, names=False), (seed, differences(m, back)[:4], text)
            continue
        # A joint named like its child link shares one frame with it; when the axis is not x, y or z that
        # frame is rai's joint frame, turned against the URDF link frame. The robot is still the same:
        # same joints, and every link, shape and centre of mass in the same place at any joint values.
        shared_frames += 1
        assert [(j.name, j.type, j.parent, j.child) for j in m.joints.values()] == [
            (j.name, j.type, j.parent, j.child) for j in back.joints.values()]
        q = {n: float(v) for n, v in zip(m.joints, np.random.default_rng(seed).uniform(-1, 1, len(m.joints)),
                                         strict=True)}
        wa, wb = world_poses(m, q), world_poses(back, q)
        for name, la in m.links.items():
            lb = back.links[name]
            if name not in turned:
                assert np.allclose(wa[name], wb[name], atol=1e-12), (seed, name)
            for va, vb in zip(la.visuals + la.collisions, lb.visuals + lb.collisions, strict=True):
                assert np.allclose(wa[name] @ va.origin.matrix(), wb[name] @ vb.origin.matrix(), atol=1e-12)
            if la.inertial is not None:
                com_a = wa[name] @ np.append(la.inertial.origin.xyz, 1)
                com_b = wb[name] @ np.append(lb.inertial.origin.xyz, 1)
                assert np.allclose(com_a, com_b, atol=1e-12) and la.inertial.mass == lb.inertial.mass
                ra = (wa[name] @ la.inertial.origin.matrix())[:3, :3]
                rb = (wb[name] @ lb.inertial.origin.matrix())[:3, :3]
                assert np.allclose(ra @ la.inertial.inertia @ ra.T, rb @ lb.inertial.inertia @ rb.T, atol=1e-12)
    assert 0 < shared_frames < 150  # both kinds were exercised


def test_writer_warns_about_what_g_cannot_express_and_name_clashes(erd_robots):
    with pytest.warns(RobotModelWarning, match="ros2_control"):
        write_g(load_robot(REPO / "urdf" / "planar2.urdf"))
    m = _model(Joint("j", "revolute", "base", "a", axis=np.array([0, 0, 1.0]), limit=Limit(-1, 1, 1, 1)),
               Joint("a", "revolute", "base", "b", axis=np.array([0, 0, 1.0]), limit=Limit(-1, 1, 1, 1)),
               Joint("c", "revolute", "base", "c", axis=np.array([0, 0, 1.0]), limit=Limit(-1, 1, 1, 1),
                     mimic=Mimic("a", 2.0)))
    with pytest.warns(RobotModelWarning, match="share one namespace"):
        back = read_g(write_g(m), "w.g")
    assert back.joints["a_joint"].child == "b" and back.joints["c"].mimic.joint == "a_joint"


# ---------------------------------------------------------------- planar2: the .g twin of planar2.urdf
def test_planar2_g_matches_planar2_urdf():
    g = load_robot(REPO / "urdf" / "planar2.g")
    u = load_robot(REPO / "urdf" / "planar2.urdf")
    assert list(g.links) == list(u.links) and list(g.joints) == list(u.joints)
    assert g.actuated_joint_names() == u.actuated_joint_names() == ["joint1", "joint2"]
    # Everything both formats express agrees (the inertias are computed from the .g shapes).
    assert not differences(u, g, names=False)


def test_planar2_g_and_urdf_give_the_same_tip_poses_in_pinocchio():
    pin = pytest.importorskip("pinocchio")
    from_urdf = pin.buildModelFromUrdf(str(REPO / "urdf" / "planar2.urdf"))
    from_g = pin.buildModelFromXML(write_urdf(load_robot(REPO / "urdf" / "planar2.g")))
    du, dg = from_urdf.createData(), from_g.createData()
    rng = np.random.default_rng(11)
    configs = [np.zeros(2), np.array([-0.4, 0.8])] + [rng.uniform(-2.5, 2.5, 2) for _ in range(10)]
    for q in configs:
        pin.framesForwardKinematics(from_urdf, du, q)
        pin.framesForwardKinematics(from_g, dg, q)
        tip_u = du.oMf[from_urdf.getFrameId("tip")].homogeneous
        tip_g = dg.oMf[from_g.getFrameId("tip")].homogeneous
        assert np.allclose(tip_u, tip_g, atol=1e-12)
        # and both agree with the hand-computed kinematics of the arm
        want = tr(0, 0, 0.5) @ ry(q[0]) @ tr(0.5, 0, 0) @ ry(q[1]) @ tr(0.4, 0, 0)
        assert np.allclose(tip_g, want, atol=1e-12)
        # gravity torques agree too (masses and inertias, not only kinematics)
        assert np.allclose(pin.computeGeneralizedGravity(from_urdf, du, q),
                           pin.computeGeneralizedGravity(from_g, dg, q), atol=1e-12)


def test_rc_arm_g_matches_rc_arm_urdf():
    g = load_robot(REPO / "urdf" / "rc_arm.g")
    u = load_robot(REPO / "urdf" / "rc_arm.urdf")
    assert list(g.links) == list(u.links) and list(g.joints) == list(u.joints)
    assert g.actuated_joint_names() == u.actuated_joint_names()
    assert g.joints["finger_right_joint"].mimic.joint == "finger_left_joint"
    assert not differences(u, g, names=False)


def test_load_and_save_robot_handle_g_files(tmp_path):
    model = load_robot(REPO / "urdf" / "planar2.g")
    assert model.name == "planar2" and model.source_file.endswith("planar2.g")
    save_robot(model, tmp_path / "copy.g")
    again = load_robot(tmp_path / "copy.g")
    assert again.name == "copy" and not differences(model, again)


# ---------------------------------------------------------------- errors: file, line, element
ERRORS = [
    ("base { mass: 1 \n", 1, "frame 'base'", "'{' is not closed"),
    ("base { Q: <t(0 0 1) }", 1, "<...>", "unterminated"),
    ("base { mass: 1 }\n\nlink (nowhere) { }", 3, "frame 'link'", "unknown parent frame 'nowhere'"),
    ("base { }\nj (base) { joint: hingeQ }", 2, "frame 'j' attribute 'joint'", "unknown joint type 'hingeQ'"),
    ("base { }\nj (base) { joint: tau }", 2, "frame 'j' attribute 'joint'", "cannot be mapped to URDF"),
    ("base { }\nf (base) {\n  Q: <t(0 0 1)\n  x(1 2 3)> }", 4, "frame 'f' attribute 'Q'", "unknown transform step 'x"),
    ("base { }\nf (base) { Q: <t(0 0 1) d(90 1 0 0> }", 2, "frame 'f' attribute 'Q'", "cannot read transform step"),
    ("base { }\nf (base) { Q: <t(1 2)> }", 2, "frame 'f' attribute 'Q'", "t(...) takes 3 numbers"),
    ("base { }\nf (base) { Q: <\n\n  d(90 1 0)> }", 4, "frame 'f' attribute 'Q'", "d(...) takes 4 numbers"),
    ("base { }\nf (base) { Q: <q(0 0 0 0)> }", 2, "frame 'f' attribute 'Q'", "zero length"),
    ("base { }\nf (base) { Q: [1 2] }", 2, "frame 'f' attribute 'Q'", "3 (x y z), 4"),
    ("base { }\nj (base) { joint: hingeX,\n Q: <t(0 0 1)> }", 3, "frame 'j'", "not a transform a hingeX joint"),
    ("base { }\nj (base) { joint: transXY, q: [1 2 3] }", 2, "frame 'j' attribute 'q'", "takes 2 q values"),
    ("base { }\nbase { }", 2, "frame 'base'", "defined twice"),
    ("base { mass: -1 }", 1, "frame 'base' attribute 'mass'", "must be positive"),
    ("base { mass: 1, inertia: [1 1 -1] }", 1, "frame 'base' attribute 'inertia'", "not positive definite"),
    ("base { }\nj (base) { joint: hingeX, limits: [1 -1] }", 2, "frame 'j' attribute 'limits'", "above upper"),
    ("base { }\nj (base) { joint: hingeX, limits: [1] }", 2, "frame 'j' attribute 'limits'", "needs at least 2"),
    ("base { shape: cone, size: [1] }", 1, "frame 'base' attribute 'shape'", "cannot be mapped"),
    ("base { shape: box }", 1, "frame 'base' attribute 'shape'", "needs size"),
    ("base { shape: box, size: [1 -1 1] }", 1, "frame 'base' attribute 'size'", "must be positive"),
    ("base { shape: mesh }", 1, "frame 'base' attribute 'shape'", "needs mesh"),
    ("base { }\nf (base) { X: <t(1 0 0)>, Q: <t(1 0 0)> }", 2, "frame 'f' attribute", "give one pose"),
    ("base { }\nf (base) { A: <t(1 0 0)> }", 2, "frame 'f' attribute 'A'", "shorthand"),
    ("base { }\nj (base) { joint: hingeX, mimic: nope }", 2, "frame 'j'", "mimics 'nope'"),
    ("a { }\nb { }\nj (a c) { joint: hingeX }", 3, "frame 'j'", "unknown frame 'c'"),
    ("a { }\nb (a) { }\nj (a b) { joint: hingeX }", 3, "frame 'j'", "second parent"),
    ("a { }\nb (a) { }\nc { }\nj (b a) { joint: hingeX }", 4, "frame 'j'", "cycle"),
    ("a { }\nb { }\nj (a b) { A: <t(0 0 1)> }", 3, "frame 'j'", "needs a 'joint:'"),
    ("a { }\nb { }\nj (a b) { joint: hingeX,\n A: <t(0 0)> }", 4, "frame 'j' attribute 'A'", "takes 3 numbers"),
    ("a { }\nb { }\nj (a b) { joint: hingeX,\n\n B: [1] }", 5, "frame 'j' attribute 'B'", "pose vector"),
    ("a { }\nb { }\nj (a b c) { joint: hingeX }", 3, "frame 'j'", "at most one parent"),
    ("a { }\nUnknownThing: 3", 2, "entry 'UnknownThing'", "unsupported top-level"),
    ("a { ! }", 1, "syntax", "unexpected character"),
    ("a (b { }", 1, "frame 'a'", "parent frame name"),
]


@pytest.mark.parametrize(("text", "line", "element", "message"), ERRORS, ids=[e[3] for e in ERRORS])
def test_errors_name_file_line_and_element(text, line, element, message):
    with pytest.raises(RobotModelError) as err:
        read_g(text, "bad.g")
    src = err.value.source
    assert src is not None and src.file == "bad.g" and src.line == line, (src, str(err.value))
    assert element in src.element, (src.element, str(err.value))
    assert message in str(err.value), str(err.value)
    assert str(err.value).startswith(f"bad.g:{line}: ")


def test_floating_base_needs_one_root_and_triangle_inequality_is_strict_on_request():
    with pytest.raises(RobotModelError, match="floating base"):
        read_g("a { }\nb { }", "two.g", fixed_base=False)
    m = read_g("body { joint: free, mass: 1, shape: box, size: [1 1 1] }", "f.g")
    assert m.fixed_base is False and list(m.links) == ["body"] and not m.joints
    bad = "base { mass: 1, inertia: [1 1 3] }"
    with pytest.warns(RobotModelWarning, match="triangle"):
        read_g(bad, "t.g")
    with pytest.raises(RobotModelError, match="triangle") as err:
        read_g(bad, "t.g", strict_inertia=True)
    assert err.value.source.line == 1 and "inertia" in err.value.source.element
