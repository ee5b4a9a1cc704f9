"""VectorField obstacles: the field bends around spheres and planes; a goal behind a sphere is reached on the real
MuJoCo engine without the tool entering the sphere (distance measured on the engine's own tcp pose)."""

from __future__ import annotations

import numpy as np
import pytest
from rbc_helpers import ARM, load_rc_arm, rc_arm_loop

from robot_core.kinematics import SerialKinematicChain
from robot_core.rbc.errors import RbcGoalError, RbcParamError
from robot_core.rbc.instance import ABORTED, ACTIVE, SUCCEEDED
from robot_core.rbc.link_capsules import link_capsules
from robot_core.rbc.obstacles import Plane, Sphere, avoid, planes_from_list, segment_clearance, spheres_from_list
from robot_core.rbc.reachers.vector_field import PoseGoal
from robot_core.rbc.rotations import matrix_to_quat_xyzw


@pytest.fixture(scope="module")
def model():
    return load_rc_arm()


@pytest.fixture
def sim(model):
    return rc_arm_loop(model)


def test_lists_become_obstacles_and_bad_numbers_are_refused_by_name():
    (s,) = spheres_from_list([0.1, 0.2, 0.3, 0.05])
    assert np.allclose(s.center, [0.1, 0.2, 0.3]) and s.radius == 0.05
    (p,) = planes_from_list([0.0, 0.0, 2.0, 1.0])  # normalised: z >= 0.5
    assert np.allclose(p.normal, [0, 0, 1]) and p.offset == 0.5
    with pytest.raises(ValueError, match=r"sphere 1 .* negative radius -0.1"):
        spheres_from_list([0, 0, 0, 0.1, 1, 1, 1, -0.1])
    with pytest.raises(ValueError, match="4 numbers per sphere"):
        spheres_from_list([0, 0, 0])
    with pytest.raises(ValueError, match="plane 0 has a zero normal"):
        planes_from_list([0, 0, 0, 1])


def test_field_never_heads_into_an_obstacle_it_touches():
    sphere = Sphere(np.array([0.0, 0.0, 0.0]), 0.1)
    goal = np.array([-0.5, 0.0, 0.0])  # straight behind the sphere seen from p
    p = np.array([0.1 + 0.02, 0.0, 0.0])  # at the clearance
    v = avoid(p, np.array([-0.2, 0.0, 0.0]), goal, [sphere], clearance=0.02, influence=0.1)
    assert v[0] >= -1e-12 and np.linalg.norm(v) == pytest.approx(0.2)  # all of it turned along the surface
    far = avoid(np.array([1.0, 0.0, 0.0]), np.array([-0.2, 0.0, 0.0]), goal, [sphere], 0.02, 0.1)
    np.testing.assert_array_equal(far, [-0.2, 0.0, 0.0])  # out of influence: unchanged
    inside = avoid(np.array([0.05, 0.0, 0.0]), np.zeros(3), goal, [sphere], 0.02, 0.1)
    assert inside[0] > 0  # pushed out
    floor = Plane(np.array([0.0, 0.0, 1.0]), 0.0)
    v = avoid(np.array([0.0, 0.0, 0.01]), np.array([0.1, 0.0, -0.1]), np.array([1.0, 0.0, -1.0]), [floor], 0.02, 0.1)
    assert v[2] >= 0.0


def test_vf_refuses_negative_radius_and_goals_inside_obstacles(sim):
    vf = sim.coupler.create("VF", "VF0", {"end_link": "tcp"})
    with pytest.raises(RbcParamError, match=r"VF 'VF0': parameter 'obstacle_spheres': sphere 0 .*negative radius"):
        vf.set_param("obstacle_spheres", [0.3, 0.0, 0.5, -0.05])
    assert vf.params["obstacle_spheres"] == []  # nothing applied
    vf.set_param("obstacle_spheres", [0.3, 0.0, 0.5, 0.05])
    with pytest.raises(RbcGoalError, match="lies inside obstacle sphere 0"):
        vf.start_goal(PoseGoal([0.31, 0.0, 0.5]))
    vf.set_param("obstacle_planes", [0.0, 0.0, 1.0, 0.2])
    with pytest.raises(RbcGoalError, match="obstacle plane 0"):
        vf.start_goal(PoseGoal([0.0, 0.3, 0.1]))
    vf.start_goal(PoseGoal([0.0, 0.3, 0.5], timeout=float("inf")))
    vf.set_param("obstacle_spheres", [0.0, 0.3, 0.5, 0.05])  # dropped onto the running goal
    assert vf.status().state == ABORTED and "obstacles changed" in vf.status().message


def test_goal_behind_a_sphere_is_reached_without_entering_it(model, sim):
    chain = SerialKinematicChain(model, "base_link", "tcp")
    q_start = np.array([0.0, 0.5, 0.0, 1.6, 0.0, 1.0, 0.0])
    q_goal = np.array([1.2, 0.5, 0.0, 1.6, 0.0, 1.0, 0.0])
    sim.engine.set_joint_state(dict(zip(ARM, q_start, strict=True)))
    sim.publish_state()
    start = chain.forward_kinematics(q_start)[:3, 3]
    target = chain.forward_kinematics(q_goal)
    center, radius = (start + target[:3, 3]) / 2.0, 0.06
    assert np.linalg.norm(target[:3, 3] - start) > 4 * radius  # the straight line runs through the sphere
    vf = sim.coupler.create("VF", "VF0", {"end_link": "tcp", "obstacle_spheres": [*center, radius]})
    vf.start_goal(PoseGoal(target[:3, 3], matrix_to_quat_xyzw(target[:3, :3]), linear_precision=0.002,
                           angular_precision=0.02, timeout=30.0))
    distances: list[float] = []
    assert sim.run_until(lambda: vf.status().done, 31.0,
                         each=lambda lp: distances.append(float(np.linalg.norm(lp.engine.link_pose("tcp")[:3, 3]
                                                                               - center))))
    st = vf.status()
    closest = min(distances)
    print(f"goal behind a sphere of radius {radius} m: closest tcp distance to its center {closest:.4f} m "
          f"({st.state}: {st.message})")
    assert st.state == SUCCEEDED, st.message
    assert closest >= radius, f"the tcp came within {closest:.4f} m of the center of a sphere of radius {radius} m"
    assert closest < radius + 0.1  # it did go around the sphere, close by, not somewhere else
    pose = sim.engine.link_pose("tcp")
    assert np.linalg.norm(pose[:3, 3] - target[:3, 3]) <= 0.002 + 1e-4


def test_obstacle_links_keep_the_elbow_out_of_a_sphere_on_its_path_and_the_goal_is_still_reached(model, sim):
    """A sphere put where the elbow (link4's origin) passes on the way to a goal, far from the tool's path: with
    ``obstacle_links: [link4]`` the 7-joint arm moves its elbow around it and the tool still reaches the goal."""
    chain = SerialKinematicChain(model, "base_link", "tcp")
    q_start = np.array([0.0, 0.5, 0.0, 1.6, 0.0, 1.0, 0.0])
    target = chain.forward_kinematics(np.array([1.0, 0.2, 0.0, 1.2, 0.0, 1.0, 0.0]))
    goal = PoseGoal(target[:3, 3], matrix_to_quat_xyzw(target[:3, :3]), linear_precision=0.002,
                    angular_precision=0.02, timeout=30.0)

    def run(loop, params) -> tuple[np.ndarray, np.ndarray]:
        loop.engine.set_joint_state(dict(zip(ARM, q_start, strict=True)))
        loop.publish_state()
        vf = loop.coupler.create("VF", "VF0", {"end_link": "tcp", **params})
        vf.start_goal(goal)
        path: list[tuple[np.ndarray, np.ndarray]] = []
        loop.run_until(lambda: vf.status().done, 31.0, each=lambda lp: path.append(
            (lp.engine.link_pose("link4")[:3, 3].copy(), lp.engine.link_pose("tcp")[:3, 3].copy())))
        assert vf.status().state == SUCCEEDED, vf.status().message
        return np.array([e for e, _ in path]), np.array([t for _, t in path])

    elbow, tool = run(sim, {})
    center, radius = elbow[len(elbow) // 2], 0.04  # on the elbow's own path
    assert np.min(np.linalg.norm(tool - center, axis=1)) > radius + 0.1 + 0.1  # the tool never comes near it
    elbow, tool = run(rc_arm_loop(model), {"obstacle_spheres": [*center, radius], "obstacle_links": ["link4"]})
    closest = float(np.min(np.linalg.norm(elbow - center, axis=1)))
    print(f"sphere of radius {radius} m on the elbow's path: closest elbow distance to its center {closest:.4f} m; "
          f"goal reached")
    assert closest >= radius, f"link4 came within {closest:.4f} m of the center of a sphere of radius {radius} m"
    assert np.linalg.norm(tool[-1] - target[:3, 3]) <= 0.002 + 1e-4


def test_link_bodies_are_capsules_and_their_clearance_is_measured_at_the_nearest_point(model):
    (cyl,) = link_capsules(model, "link4", ["base_link", "link3", "link4", "link5"])
    np.testing.assert_allclose([cyl.a, cyl.b], [[0, 0, 0], [0, 0, 0.16]], atol=1e-12)  # the 0.16 m cylinder
    assert cyl.radius == pytest.approx(0.05) and "cylinder" in cyl.source
    (hand,) = link_capsules(model, "hand", [])  # a 0.05 x 0.16 x 0.04 box: its long edge, half the diagonal
    assert np.linalg.norm(hand.b - hand.a) == pytest.approx(0.16)
    assert hand.radius == pytest.approx(np.hypot(0.05, 0.04) / 2)
    (bone,) = link_capsules(model, "tcp", [])  # no collision, no child: its origin only
    assert bone.radius == 0.0 and np.array_equal(bone.a, bone.b)
    sphere = Sphere(np.array([0.1, 0.0, 0.5]), 0.03)
    s, n, p = segment_clearance(sphere, np.zeros(3), np.array([0.0, 0.0, 1.0]), 0.05)
    assert s == pytest.approx(0.1 - 0.03 - 0.05) and np.allclose(n, [-1, 0, 0]) and np.allclose(p, [0, 0, 0.5])
    floor = Plane(np.array([0.0, 0.0, 1.0]), 0.0)
    s, n, p = segment_clearance(floor, np.array([0.0, 0.0, 0.3]), np.array([0.2, 0.0, 0.1]), 0.05)
    assert s == pytest.approx(0.05) and np.allclose(p, [0.2, 0.0, 0.1])


def _segment_distance(c: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    t = float(np.clip((c - a) @ (b - a) / ((b - a) @ (b - a)), 0.0, 1.0))
    return float(np.linalg.norm(a + t * (b - a) - c))


def test_a_sphere_mid_link_is_not_entered_by_the_link_body_and_the_goal_is_still_reached(model, sim):
    """A sphere where the middle of link4 (its 0.16 m, 0.05 m radius cylinder, between the origins of link4 and
    link5) passes on the way to a goal, where no origin enters it: with ``obstacle_links: [link4]`` the cylinder's
    bounding capsule keeps out of it (measured on the engine's link poses) and the tool still reaches the goal."""
    chain = SerialKinematicChain(model, "base_link", "tcp")
    q_start = np.array([0.0, 0.5, 0.0, 1.6, 0.0, 1.0, 0.0])
    target = chain.forward_kinematics(np.array([1.0, 0.2, 0.0, 1.2, 0.0, 1.0, 0.0]))
    goal = PoseGoal(target[:3, 3], matrix_to_quat_xyzw(target[:3, :3]), linear_precision=0.002,
                    angular_precision=0.02, timeout=30.0)

    def run(loop, params) -> np.ndarray:
        loop.engine.set_joint_state(dict(zip(ARM, q_start, strict=True)))
        loop.publish_state()
        vf = loop.coupler.create("VF", "VF0", {"end_link": "tcp", **params})
        vf.start_goal(goal)
        path: list[np.ndarray] = []
        loop.run_until(lambda: vf.status().done, 31.0, each=lambda lp: path.append(np.array(
            [lp.engine.link_pose(k)[:3, 3] for k in ("link4", "link5", "tcp")])))
        assert vf.status().state == SUCCEEDED, vf.status().message
        return np.array(path)

    free = run(sim, {})
    mid = len(free) // 2
    center, radius, body = (free[mid, 0] + free[mid, 1]) / 2.0, 0.025, 0.05
    origins = min(float(np.min(np.linalg.norm(free[:, k] - center, axis=1))) for k in range(3))
    assert origins > radius  # no origin (link4, link5, tcp) enters it unguarded: only the body does
    guarded = run(rc_arm_loop(model), {"obstacle_spheres": [*center, radius], "obstacle_links": ["link4"]})
    closest = min(_segment_distance(center, a, b) for a, b, _ in guarded) - body
    print(f"sphere of radius {radius} m mid-link4: closest surface of link4's cylinder (radius {body} m) to its "
          f"center {closest:.4f} m (unguarded: it passed through); goal reached")
    assert closest >= radius, f"link4's body came within {closest:.4f} m of the center of a {radius} m sphere"
    assert np.linalg.norm(guarded[-1, 2] - target[:3, 3]) <= 0.002 + 1e-4


def test_obstacle_links_must_be_moved_by_the_chain(sim):
    vf = sim.coupler.create("VF", "VF0", {"end_link": "tcp"})
    vf.set_param("obstacle_links", ["link4", "link2"])
    with pytest.raises(RbcParamError, match="parameter 'obstacle_links': link 'finger_left' is not moved by a first"):
        vf.set_param("obstacle_links", ["finger_left"])
    with pytest.raises(RbcParamError, match="unknown link 'elbow'"):
        vf.set_param("obstacle_links", ["elbow"])
    assert vf.params["obstacle_links"] == ["link4", "link2"]


def test_a_goal_that_needs_a_guarded_link_inside_an_obstacle_is_refused_up_front(model, sim):
    """Refused at once with the link and the obstacle named, instead of running into its timeout: link7 rides with
    the tcp (its pose follows from the goal's), and every IK solution of the goal puts link6's origin, the wrist
    centre of rc_arm, at one point. A goal whose guarded links can stay clear is accepted."""
    ctx = sim.coupler.context
    tcp = ctx.chain("base_link", "tcp")
    q = np.array([0.2, 0.5, 0.1, -1.2, 0.3, 0.8, 0.1])
    goal_t = tcp.forward_kinematics(q)
    goal = PoseGoal(goal_t[:3, 3], matrix_to_quat_xyzw(goal_t[:3, :3]), timeout=5.0)
    wrist = ctx.chain("base_link", "link6").forward_kinematics(q[:6])[:3, 3]
    flange = ctx.chain("base_link", "link7").forward_kinematics(q)[:3, 3]
    assert np.linalg.norm(wrist - goal_t[:3, 3]) > 0.1 and np.linalg.norm(flange - goal_t[:3, 3]) > 0.05
    vf = sim.coupler.create("VF", "VF0", {"end_link": "tcp", "obstacle_links": ["link7"],
                                          "obstacle_spheres": [*flange, 0.01]})
    with pytest.raises(RbcGoalError, match=r"puts link 'link7' \(collision link7_collision \(cylinder\)\), which "
                                           r"moves with 'tcp', .* inside obstacle sphere 0"):
        vf.start_goal(goal)
    vf.set_param("obstacle_links", ["link6"])
    vf.set_param("obstacle_spheres", [0.5, 0.5, 0.0, 0.05, *wrist, 0.01])
    with pytest.raises(RbcGoalError, match=r"every one of the \d+ joint solutions .* link 'link6' .* inside obstacle "
                                           r"sphere 1"):
        vf.start_goal(goal)
    assert vf.status().state != ACTIVE
    above = wrist + np.array([0.0, 0.0, 0.3])
    vf.set_param("obstacle_spheres", [*above, 0.01])  # clear of every guarded body
    vf.start_goal(goal)
    assert vf.status().state == ACTIVE


def _box_stl(path, size) -> np.ndarray:
    """A binary STL of a box of full edges ``size`` whose corner sits at the file's origin; returns its 8 corners."""
    import itertools
    import struct

    corners = np.array(list(itertools.product(*[(0.0, s) for s in size])))
    hull = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1), (2, 3, 7), (2, 7, 6), (0, 2, 6),
            (0, 6, 4), (1, 5, 7), (1, 7, 3)]
    data = bytearray(b"\0" * 80) + struct.pack("<I", len(hull))
    for tri in hull:
        data += struct.pack("<3f", 0.0, 0.0, 0.0)
        for k in tri:
            data += struct.pack("<3f", *corners[k])
        data += b"\0\0"
    path.write_bytes(bytes(data))
    return corners


def test_a_mesh_collision_is_bounded_by_a_capsule_around_its_vertices_not_by_the_bone(tmp_path):
    """A link whose only collision is a mesh (a 0.3 x 0.04 x 0.06 box in an STL, placed and turned by its
    <origin>) gets the capsule of that mesh's vertices: every corner inside, the length and cross-section of the
    box; a sphere touching the box far from the link's bone is seen, which the bone segment missed."""
    from robot_core.model import RobotModelWarning, load_robot

    size = (0.3, 0.04, 0.06)
    corners = _box_stl(tmp_path / "bar.stl", size)
    xyz, rpy = np.array([0.05, -0.02, 0.1]), np.array([0.3, -0.2, 0.5])
    urdf = f"""<robot name="meshbar">
  <link name="base"/>
  <link name="bar"><collision><origin xyz="{' '.join(map(str, xyz))}" rpy="{' '.join(map(str, rpy))}"/>
    <geometry><mesh filename="{tmp_path / 'bar.stl'}" scale="1 1 1"/></geometry></collision></link>
  <link name="tip"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="bar"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j2" type="fixed"><parent link="bar"/><child link="tip"/><origin xyz="0 0 0.4"/></joint>
</robot>"""
    model = load_robot(urdf)
    (cap,) = link_capsules(model, "bar", ["base", "bar", "tip"])
    pose = model.links["bar"].collisions[0].origin.matrix()
    truth = corners @ pose[:3, :3].T + pose[:3, 3]
    assert "mesh" in cap.source
    inside = [_segment_distance(c, cap.a, cap.b) - cap.radius for c in truth]
    assert max(inside) <= 1e-6, f"box corners outside the capsule by {max(inside):.3g} m"
    half_diagonal = np.hypot(size[1], size[2]) / 2
    assert cap.radius == pytest.approx(half_diagonal, rel=1e-3)
    assert np.linalg.norm(cap.b - cap.a) + 2 * cap.radius <= size[0] + 2 * half_diagonal + 1e-6
    assert np.linalg.norm(cap.b - cap.a) >= size[0] - 2 * half_diagonal - 1e-6
    far_corner = max(truth, key=lambda c: _segment_distance(c, np.zeros(3), np.array([0.0, 0.0, 0.4])))
    sphere = Sphere(far_corner + 0.005 * (far_corner - truth.mean(axis=0)) / np.linalg.norm(far_corner - truth.mean(
        axis=0)), 0.01)  # just beyond the corner of the box farthest from the bone: it touches the box
    s_cap, _, _ = segment_clearance(sphere, cap.a, cap.b, cap.radius)
    s_bone, _, _ = segment_clearance(sphere, np.zeros(3), np.array([0.0, 0.0, 0.4]), 0.0)
    print(f"mesh capsule of a 0.3 m bar: length {np.linalg.norm(cap.b - cap.a):.4f} m, radius {cap.radius:.4f} m; "
          f"a sphere at its far corner: {s_cap:.4f} m from the capsule, {s_bone:.4f} m from the bone")
    assert s_cap < 0.0 < s_bone
    with pytest.warns(RobotModelWarning, match="gone.stl"):
        missing = load_robot(urdf.replace(str(tmp_path / "bar.stl"), str(tmp_path / "gone.stl")))
    (bone,) = link_capsules(missing, "bar", ["base", "bar", "tip"])  # unreadable: the bone, as before
    assert bone.source == "segment to 'tip'" and bone.radius == 0.0
