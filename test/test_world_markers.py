"""The world's objects as shapes (robot_core.physics.world_shapes), as the simulator's latched ~/world_markers
(visualization_msgs/MarkerArray, robot_core.ros.sim_world) and drawn by the web view's page in their frames:
the table-top world's boxes, a spawned mesh and capsule, an MJCF world's bodies; over DDS, a simulator with the
table-top world and ``robot-core view`` drawing its boxes from the markers."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from robot_files import URDF_DIR
from ros_harness import NodeProcess

from robot_core.model import load_robot
from robot_core.physics.engine import PhysicsEngine
from robot_core.physics.world import Pose, WorldSim, load_world, make_object, scene_hook
from robot_core.physics.world_shapes import object_shapes
from robot_core.view.transforms import pose_matrix

REPO = Path(__file__).resolve().parent.parent
TABLE_TOP = REPO / "config" / "worlds" / "table_top.yaml"
ROOM = REPO / "config" / "worlds" / "room.xml"


def _sim(world_path: Path) -> WorldSim:
    robot = load_robot(str(URDF_DIR / "rc_arm.urdf"))
    if world_path.suffix == ".xml":
        from robot_core.physics.mjcf_world import load_mjcf_world

        world = load_mjcf_world(world_path)
    else:
        world = load_world(world_path)
    engine = PhysicsEngine(robot, include_visuals=False, scene=scene_hook(world, robot.root_link))
    return WorldSim(engine, world)


def test_table_top_objects_are_boxes_of_their_file_sizes_and_colours() -> None:
    shapes = {s.frame: s for s in object_shapes(_sim(TABLE_TOP))}
    assert set(shapes) == {"table", "box_small", "box_medium", "box_large"}
    table = shapes["table"]
    assert table.kind == "box"
    np.testing.assert_allclose(table.scale, (0.5, 0.8, 0.2), atol=1e-9)
    np.testing.assert_allclose(table.position, (0, 0, 0), atol=1e-9)  # the geom sits at its object's frame
    np.testing.assert_allclose(table.rgba[:3], (0.55, 0.4, 0.25), atol=1e-6)
    np.testing.assert_allclose(shapes["box_large"].scale, (0.08, 0.08, 0.1), atol=1e-9)


def test_meshes_and_capsules_go_as_triangles_in_their_objects_frame(tmp_path: Path) -> None:
    mesh = tmp_path / "tetra.obj"  # a 10 cm corner tetrahedron with its right angle at the origin
    mesh.write_text("v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")
    sim = _sim(TABLE_TOP)
    sim.spawn(make_object("tetra", "mesh", mesh=str(mesh), pose=Pose((1, 0, 0.3)), density=500))
    sim.spawn(make_object("pill", "capsule", [0.02, 0.1], pose=Pose((1, 0.5, 0.3))))
    shapes = {s.frame: s for s in object_shapes(sim)}
    tetra = shapes["tetra"]
    assert tetra.kind == "triangles" and tetra.triangles is not None and len(tetra.triangles) == 12
    # MuJoCo recentred the mesh on its centroid; with the geom's pose the file's corners come back
    local = pose_matrix(tetra.position, (*tetra.quaternion[1:], tetra.quaternion[0]))
    corners = tetra.triangles @ local[:3, :3].T + local[:3, 3]
    assert np.abs(corners).max() == pytest.approx(0.1, abs=1e-6)
    assert np.abs(corners.min(axis=0)).max() < 1e-6
    pill = shapes["pill"]
    assert pill.kind == "triangles"
    extent = pill.triangles.max(axis=0) - pill.triangles.min(axis=0)
    np.testing.assert_allclose(sorted(extent), [0.04, 0.04, 0.14], atol=2e-3)


def test_an_mjcf_worlds_bodies_have_their_geoms() -> None:
    shapes = object_shapes(_sim(ROOM))
    frames = {s.frame for s in shapes}
    assert {"shelf", "crate"} <= frames
    crate = next(s for s in shapes if s.frame == "crate")
    assert crate.kind == "box"
    np.testing.assert_allclose(crate.scale, (0.1, 0.1, 0.1), atol=1e-9)


def test_marker_message_round_trips_into_the_views_shapes() -> None:
    pytest.importorskip("visualization_msgs")
    from visualization_msgs.msg import Marker

    from robot_core.ros.sim_world import time_msg, world_markers_message
    from robot_core.view.scene import marker_shape

    msg = world_markers_message(object_shapes(_sim(TABLE_TOP)), time_msg(0))
    assert msg.markers[0].action == Marker.DELETEALL
    boxes = {m.ns: m for m in msg.markers[1:]}
    table = boxes["table"]
    assert (table.type, table.header.frame_id, table.frame_locked) == (Marker.CUBE, "table", True)
    shape = marker_shape(table.header.frame_id, "table/0", "box", (table.scale.x, table.scale.y, table.scale.z),
                         np.eye(4), (table.color.r, table.color.g, table.color.b, table.color.a))
    assert shape is not None
    np.testing.assert_allclose(shape.vertices.max(axis=0) - shape.vertices.min(axis=0), (0.5, 0.8, 0.2), atol=1e-6)
    assert shape.color == pytest.approx((0.55, 0.4, 0.25), abs=1e-6)


def test_page_draws_object_shapes_hidden_until_their_frame_is_posed() -> None:
    pytest.importorskip("viser")
    from browser import free_port

    from robot_core.view.page import ViewPage
    from robot_core.view.scene import marker_shape

    box = marker_shape("box_small", "_simulator_world_markers:box_small:0", "box", (0.04, 0.04, 0.04), np.eye(4),
                       (0.8, 0.1, 0.1, 1.0))
    page = ViewPage([], port=free_port())
    try:
        page.set_object_shapes([box])
        assert page.object_frames == ["box_small"]
        handle = page._objects["box_small"]
        assert handle.visible is False
        m = pose_matrix((0.45, -0.18, 0.22), (0.0, 0.0, 0.0, 1.0))
        assert page.show_object_poses({"box_small": m, "elsewhere": np.eye(4)}) == 1
        assert handle.visible is True
        np.testing.assert_allclose(handle.position, (0.45, -0.18, 0.22))
        moved = pose_matrix((0.5, 0.0, 0.3), (0.0, 0.0, 0.0, 1.0))
        page.show_object_poses({"box_small": moved})  # it moves with /tf
        np.testing.assert_allclose(handle.position, (0.5, 0.0, 0.3))
    finally:
        page.stop()


@pytest.mark.ros
def test_view_draws_the_simulators_world_markers() -> None:
    pytest.importorskip("viser")
    pytest.importorskip("visualization_msgs")
    from browser import free_port
    from sim_helpers import start_simulator

    sim = start_simulator("rc_arm.urdf", f"world:={TABLE_TOP}")
    view = NodeProcess([sys.executable, "-m", "robot_core.cli", "view", "--port", str(free_port()), "--robot",
                        str(URDF_DIR / "rc_arm.urdf")], name="view")
    with sim, view:
        view.wait_for_output("marker shapes in 4 frames from /simulator/world_markers "
                             "(box_large, box_medium, box_small, table)", timeout=90)
        view.wait_for_output("robot_core view: 4 object frames posed from /tf", timeout=60)
