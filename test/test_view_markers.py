"""rviz markers in the web view (robot_core.view.markers and the viser page): the types a ROS user sends most
(ARROW, LINE_STRIP, LINE_LIST, POINTS, SPHERE_LIST, CUBE_LIST, TEXT_VIEW_FACING) and package:// / file:// mesh
resources become the right viser scene nodes with the message's geometry and colours; DELETE, DELETEALL and
lifetimes remove them; a visualization_msgs/Marker message converts field for field."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from robot_core.model.package_paths import resolve_uri
from robot_core.view import markers as mk
from robot_core.view.markers import Lines, MarkerData, MarkerStore, Points, Text, marker_drawables
from robot_core.view.scene import Shape
from robot_core.view.transforms import pose_matrix

TETRA = "v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"


def marker(kind: int, **fields: object) -> MarkerData:
    return MarkerData(frame=str(fields.pop("frame", "base")), ns=str(fields.pop("ns", "test")),
                      id=int(fields.pop("id", 0)), type=kind, **fields)  # type: ignore[arg-type]


def extent(v: np.ndarray) -> np.ndarray:
    return v.max(axis=0) - v.min(axis=0)


def test_arrow_from_two_points_and_from_a_pose() -> None:
    (by_points,) = marker_drawables(marker(mk.ARROW, points=np.array([[0, 0, 0], [0, 0, 0.5]]),
                                           scale=(0.02, 0.04, 0.1), color=(1, 0, 0, 1)), "a")
    assert isinstance(by_points, Shape) and by_points.color == (1.0, 0.0, 0.0)
    np.testing.assert_allclose(by_points.vertices[:, 2].min(), 0.0, atol=1e-6)
    np.testing.assert_allclose(by_points.vertices[:, 2].max(), 0.5, atol=1e-6)  # the tip at the end point
    assert extent(by_points.vertices)[0] == pytest.approx(0.04, abs=1e-3)  # the head's diameter
    pose = pose_matrix((1.0, 2.0, 3.0), (0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4)))  # x turned onto +y
    (by_pose,) = marker_drawables(marker(mk.ARROW, pose=pose, scale=(0.3, 0.05, 0.05)), "b")
    lo, hi = by_pose.vertices.min(axis=0), by_pose.vertices.max(axis=0)
    assert (lo[1], hi[1]) == (pytest.approx(2.0, abs=1e-5), pytest.approx(2.3, abs=1e-5))
    assert hi[0] - lo[0] == pytest.approx(0.05, abs=1e-3)


def test_arrow_strip_is_an_arrow_from_each_point_to_the_next() -> None:
    pts = np.array([[0, 0, 0], [0.4, 0, 0], [0.4, 0.3, 0]], float)
    (strip,) = marker_drawables(marker(mk.ARROW_STRIP, points=pts, scale=(0.02, 0.05, 0.08), color=(0, 0, 1, 1)),
                                "as")
    assert isinstance(strip, Shape) and strip.color == (0.0, 0.0, 1.0)
    (one,) = marker_drawables(marker(mk.ARROW, points=pts[:2], scale=(0.02, 0.05, 0.08)), "a")
    assert len(strip.faces) == 2 * len(one.faces)  # two arrows, each as a two-point ARROW
    np.testing.assert_allclose(strip.vertices[: len(one.vertices)], one.vertices, atol=1e-6)
    lo, hi = strip.vertices.min(axis=0), strip.vertices.max(axis=0)
    np.testing.assert_allclose([lo[0], hi[0], hi[1]], [0.0, 0.425, 0.3], atol=1e-6)  # the 2nd head 0.05 wide
    assert marker_drawables(marker(mk.ARROW_STRIP, points=pts[:1], scale=(0.02, 0.05, 0.08)), "none") == []


def test_line_strip_and_line_list_with_per_point_colours() -> None:
    pts = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], float)
    colors = np.array([[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1], [1, 1, 1, 1]], float)
    offset = pose_matrix((0.0, 0.0, 0.5), (0.0, 0.0, 0.0, 1.0))
    (strip,) = marker_drawables(marker(mk.LINE_STRIP, points=pts, colors=colors, scale=(0.01, 0, 0), pose=offset),
                                "s")
    assert isinstance(strip, Lines) and strip.segments.shape == (3, 2, 3) and strip.width == 0.01
    np.testing.assert_allclose(strip.segments[1], [[1, 0, 0.5], [1, 1, 0.5]])  # the marker's pose applies
    np.testing.assert_array_equal(strip.colors[0], [[255, 0, 0], [0, 255, 0]])
    (pairs,) = marker_drawables(marker(mk.LINE_LIST, points=pts[:3], color=(0, 0, 1, 1), scale=(0.02, 0, 0)), "l")
    assert pairs.segments.shape == (1, 2, 3)  # an odd last point is dropped, as rviz does
    np.testing.assert_array_equal(pairs.colors, [[[0, 0, 255], [0, 0, 255]]])
    assert marker_drawables(marker(mk.LINE_STRIP, points=pts[:1]), "one") == []


def test_points_sphere_list_cube_list_and_text() -> None:
    pts = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0]], float)
    (cloud,) = marker_drawables(marker(mk.POINTS, points=pts, scale=(0.05, 0.05, 0), color=(0, 1, 0, 1)), "p")
    assert isinstance(cloud, Points) and cloud.size == 0.05
    np.testing.assert_array_equal(cloud.colors, [[0, 255, 0]] * 3)
    two_colours = np.array([[1, 0, 0, 1], [1, 0, 0, 1], [0, 0, 1, 1]], float)
    spheres = marker_drawables(marker(mk.SPHERE_LIST, points=pts, colors=two_colours, scale=(0.2, 0.2, 0.2)), "sl")
    assert len(spheres) == 2 and {s.color for s in spheres} == {(1.0, 0.0, 0.0), (0.0, 0.0, 1.0)}
    red = next(s for s in spheres if s.color == (1.0, 0.0, 0.0))
    np.testing.assert_allclose(extent(red.vertices), [1.2, 0.2, 0.2], atol=1e-6)  # two spheres, at x=0 and 1
    (cubes,) = marker_drawables(marker(mk.CUBE_LIST, points=pts, scale=(0.1, 0.2, 0.3)), "cl")
    assert len(cubes.faces) == 3 * 12
    np.testing.assert_allclose(extent(cubes.vertices), [2.1, 0.2, 0.3], atol=1e-6)
    at = pose_matrix((0.0, 0.0, 1.2), (0.0, 0.0, 0.0, 1.0))
    (label,) = marker_drawables(marker(mk.TEXT_VIEW_FACING, pose=at, text="goal", scale=(0, 0, 0.08)), "t")
    assert isinstance(label, Text) and label.text == "goal" and label.height == 0.08
    np.testing.assert_allclose(label.position, [0, 0, 1.2])


def test_mesh_resources_resolve_through_package_dirs_and_ros_package_path(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "ws" / "src" / "my_meshes"
    (pkg / "meshes").mkdir(parents=True)
    (pkg / "package.xml").write_text("<package><name>my_meshes</name></package>")
    (pkg / "meshes" / "tetra.obj").write_text(TETRA)
    uri = "package://my_meshes/meshes/tetra.obj"

    def with_dirs(dirs: list[str]) -> list[mk.Drawable]:
        return marker_drawables(marker(mk.MESH_RESOURCE, mesh_resource=uri, scale=(2, 2, 2)), "m",
                                lambda u: resolve_uri(u, dirs, None))

    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    with pytest.warns(UserWarning, match="mesh resource 'package://my_meshes/meshes/tetra.obj' not found"):
        assert with_dirs([]) == []
    (shape,) = with_dirs([str(tmp_path / "ws")])  # a workspace above the package, searched as rospack does
    np.testing.assert_allclose(extent(shape.vertices), [0.2, 0.2, 0.2], atol=1e-6)  # scaled by 2
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "ws" / "src"))
    assert len(with_dirs([])) == 1
    (by_file,) = marker_drawables(marker(mk.MESH_RESOURCE, mesh_resource=f"file://{pkg}/meshes/tetra.obj"), "f",
                                  lambda u: resolve_uri(u, [], None))
    assert len(by_file.faces) == 4


def test_store_applies_delete_deleteall_and_lifetimes() -> None:
    store = MarkerStore()
    cube = marker(mk.CUBE, scale=(0.1, 0.1, 0.1))
    store.apply("/a", [cube, marker(mk.SPHERE, id=1, scale=(0.1, 0.1, 0.1)),
                       marker(mk.TEXT_VIEW_FACING, id=2, text="x", lifetime=0.5)], now=10.0)
    store.apply("/b", [marker(mk.CUBE, scale=(0.1, 0.1, 0.1))], now=10.0)
    assert sorted(store.live_keys()) == [("/a", "test", 0), ("/a", "test", 1), ("/a", "test", 2), ("/b", "test", 0)]
    assert not store.expire(10.4)
    assert store.expire(10.5) and ("/a", "test", 2) not in store.live_keys()  # its lifetime passed
    store.apply("/a", [marker(mk.CUBE, action=mk.DELETE)], now=11.0)
    assert sorted(store.live_keys()) == [("/a", "test", 1), ("/b", "test", 0)]
    store.apply("/a", [marker(mk.CUBE, action=mk.DELETEALL), marker(mk.CUBE, id=7, scale=(1, 1, 1))], now=12.0)
    assert sorted(store.live_keys()) == [("/a", "test", 7), ("/b", "test", 0)]  # the other topic's markers stay
    version = store.version
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store.apply("/a", [marker(42, id=7)], now=13.0)  # a type not drawn replaces (removes) the old marker
    assert ("/a", "test", 7) not in store.live_keys() and store.version > version


@pytest.fixture
def page() -> Iterator[object]:
    pytest.importorskip("viser")
    from browser import free_port

    from robot_core.view.page import ViewPage

    p = ViewPage([], port=free_port())
    try:
        yield p
    finally:
        p.stop()


def test_page_draws_each_kind_as_its_viser_node_and_redraws_only_what_changed(page: object) -> None:
    from viser import LabelHandle, LineSegmentsHandle, MeshHandle, PointCloudHandle

    store = MarkerStore()
    pts = np.array([[0, 0, 0], [0.5, 0, 0], [0.5, 0.5, 0]], float)
    store.apply("/m", [marker(mk.LINE_STRIP, id=0, points=pts, scale=(0.01, 0, 0)),
                       marker(mk.POINTS, id=1, points=pts, scale=(0.02, 0.02, 0)),
                       marker(mk.TEXT_VIEW_FACING, id=2, text="hello", scale=(0, 0, 0.1)),
                       marker(mk.ARROW, id=3, frame="tool", scale=(0.2, 0.02, 0.02))], now=0.0)
    page.set_object_shapes(store.drawables())  # type: ignore[attr-defined]
    items = page.object_items  # type: ignore[attr-defined]
    kinds = {name.rsplit(":", 1)[1]: type(handle) for name, (_, handle) in items.items()}
    assert kinds == {"0": LineSegmentsHandle, "1": PointCloudHandle, "2": LabelHandle, "3": MeshHandle}
    line = next(h for _, h in items.values() if isinstance(h, LineSegmentsHandle))
    np.testing.assert_allclose(line.points, [[[0, 0, 0], [0.5, 0, 0]], [[0.5, 0, 0], [0.5, 0.5, 0]]])
    assert next(h for _, h in items.values() if isinstance(h, LabelHandle)).text == "hello"
    assert sorted(page.object_frames) == ["base", "tool"]  # type: ignore[attr-defined]
    # a new point cloud replaces only its own node; DELETE removes one; the others are the same handles
    store.apply("/m", [marker(mk.POINTS, id=1, points=pts[:2], scale=(0.02, 0.02, 0)),
                       marker(mk.ARROW, id=3, action=mk.DELETE)], now=1.0)
    page.set_object_shapes(store.drawables())  # type: ignore[attr-defined]
    after = page.object_items  # type: ignore[attr-defined]
    assert len(after) == 3 and page.object_frames == ["base"]  # type: ignore[attr-defined]
    for name in after:
        if name.endswith(":0") or name.endswith(":2"):
            assert after[name][1] is items[name][1]
    cloud = next(h for _, h in after.values() if isinstance(h, PointCloudHandle))
    assert len(cloud.points) == 2


def test_a_marker_message_converts_field_for_field() -> None:
    pytest.importorskip("visualization_msgs")
    pytest.importorskip("rclpy")
    from builtin_interfaces.msg import Duration
    from geometry_msgs.msg import Point
    from std_msgs.msg import ColorRGBA
    from visualization_msgs.msg import Marker

    from robot_core.nodes.view import marker_data

    m = Marker(ns="path", id=4, type=Marker.LINE_STRIP, action=Marker.ADD, text="", mesh_resource="",
               lifetime=Duration(sec=1, nanosec=500_000_000))
    m.header.frame_id = "/world"
    m.pose.position.z = 0.25  # orientation left all zero: the identity, as rviz takes it
    m.scale.x = 0.03
    m.color = ColorRGBA(r=0.2, g=0.4, b=0.6, a=0.0)
    m.points = [Point(x=0.0), Point(x=1.0)]
    m.colors = [ColorRGBA(r=1.0, a=1.0), ColorRGBA(g=1.0, a=1.0)]
    d = marker_data(m)
    assert (d.frame, d.ns, d.id, d.type, d.action, d.lifetime) == ("world", "path", 4, mk.LINE_STRIP, mk.ADD, 1.5)
    np.testing.assert_allclose(d.pose, pose_matrix((0, 0, 0.25), (0, 0, 0, 1)))
    assert d.color == pytest.approx((0.2, 0.4, 0.6, 1.0))  # alpha 0 drawn opaque, as the simulator's markers
    (lines,) = marker_drawables(d, "x")
    np.testing.assert_array_equal(lines.colors, [[[255, 0, 0], [0, 255, 0]]])
