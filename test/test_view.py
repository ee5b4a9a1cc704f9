"""The web view's parts without a browser: the transform tree, the robot's shapes from its MuJoCo model, the page's
server; and over DDS, `robot-core view` started before any graph (it says what it waits for), then fed by a
"real robot" (a test node publishing /robot_description and /tf, no simulator)."""

from __future__ import annotations

import math
import sys
import urllib.request
from typing import Any

import numpy as np
import pytest
from robot_files import URDF_DIR
from ros_harness import NodeProcess, RosTestContext, wait_for

from robot_core.view.transforms import TransformTree, matrix_wxyz, pose_matrix

pytest.importorskip("viser")


def _rz(angle: float, xyz=(0.0, 0.0, 0.0)) -> np.ndarray:
    return pose_matrix(xyz, (0.0, 0.0, math.sin(angle / 2), math.cos(angle / 2)))


def test_tree_composes_chains_in_the_root_frame() -> None:
    tree = TransformTree()
    tree.set("world", "base", _rz(0.0, (1.0, 0.0, 0.0)))
    tree.set("base", "link1", _rz(math.pi / 2, (0.0, 0.0, 0.5)))
    tree.set("link1", "tool", _rz(0.0, (0.3, 0.0, 0.0)))
    tree.set("/elsewhere", "orphan", np.eye(4))  # a smaller tree: left out
    poses = tree.poses()
    assert set(poses) == {"world", "base", "link1", "tool"}
    np.testing.assert_allclose(poses["tool"][:3, 3], [1.0, 0.3, 0.5], atol=1e-12)
    tree.set("tool", "base", np.eye(4))  # a loop does not hang
    assert isinstance(tree.poses(), dict)


def test_quaternion_round_trip() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        m = pose_matrix((0, 0, 0), tuple(q))  # x y z w
        w, x, y, z = matrix_wxyz(m)
        assert np.allclose([x, y, z, w], q, atol=1e-9) or np.allclose([x, y, z, w], -q, atol=1e-9)


def test_sliders_for_active_forward_position_and_gripper_action_controllers() -> None:
    from robot_core.view.sliders import SliderGroup, slider_groups

    arm = [f"joint{i}/position" for i in range(1, 3)]
    listed = [
        ("forward_position_controller", "position_controllers/JointGroupPositionController", "active", arm),
        ("forward_velocity_controller", "velocity_controllers/JointGroupVelocityController", "active",
         ["joint1/velocity"]),
        ("mixed", "forward_command_controller/ForwardCommandController", "active", ["joint1/effort"]),
        ("gripper_controller", "position_controllers/GripperActionController", "active", ["finger_left_joint/effort"]),
        ("parallel", "parallel_gripper_action_controller/GripperActionController", "active",
         ["finger_left_joint/position", "finger_left_joint/set_gripper_max_effort"]),
        ("idle_gripper", "position_controllers/GripperActionController", "inactive", ["finger_left_joint/effort"]),
    ]
    assert slider_groups(listed) == [
        SliderGroup("forward_position_controller", "forward", ("joint1", "joint2")),
        SliderGroup("gripper_controller", "gripper", ("finger_left_joint",), "GripperCommand"),
        SliderGroup("parallel", "gripper", ("finger_left_joint",), "ParallelGripperCommand"),
    ]


def test_shapes_of_the_arm_are_on_its_links_with_its_colours() -> None:
    from robot_core.model import load_robot
    from robot_core.view.scene import robot_shapes

    robot = load_robot(str(URDF_DIR / "rc_arm.urdf"))
    shapes = robot_shapes(robot)
    assert {s.link for s in shapes} <= set(robot.links)
    assert {"link1", "link7"} <= {s.link for s in shapes}
    orange = [s for s in shapes if s.color[0] > 0.9 and 0.4 < s.color[1] < 0.5 and s.color[2] < 0.15]
    assert orange, [s.color for s in shapes]
    for s in shapes:
        assert s.vertices.ndim == 2 and s.vertices.shape[1] == 3 and np.isfinite(s.vertices).all()
        assert s.faces.max() < len(s.vertices)
        assert np.abs(s.vertices).max() < 1.0  # in the link's frame, not the world's


def test_shapes_of_mjcf_robots_are_their_bodies_and_meshes() -> None:
    """The view draws what the simulator loads: an MJCF robot's bodies are its links, and a mesh geom is drawn
    with the mesh file's own vertices (scaled by its asset, placed by its geom): the pairwise distances of the drawn
    vertices equal those of the STL read by trimesh, whatever rigid placement MuJoCo gave it."""
    import trimesh
    from robot_files import DATA_MJCF

    from robot_core.model import load_robot
    from robot_core.view.scene import robot_shapes

    menagerie = robot_shapes(load_robot(str(DATA_MJCF / "menagerie_style.xml")))
    assert {"link1", "link2", "link3", "finger_a", "finger_b"} <= {s.link for s in menagerie}

    with pytest.warns(Warning, match="no effort limit"):
        (shell,) = robot_shapes(load_robot(str(DATA_MJCF / "mesh_arm.xml")))
    assert shell.link == "link" and shell.faces.max() < len(shell.vertices)
    stl = trimesh.load(str(DATA_MJCF / "assets" / "wedge.stl"), process=False)
    expected = np.unique(np.asarray(stl.vertices) * [0.5, 1.0, 2.0], axis=0)

    def distances(v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, dtype=float)
        return np.sort(np.linalg.norm(v[:, None] - v[None], axis=-1)[np.triu_indices(len(v), 1)])

    assert len(shell.vertices) == len(expected)
    assert np.abs(distances(shell.vertices) - distances(expected)).max() < 1e-6
    assert np.linalg.norm(shell.vertices.mean(axis=0) - [0.3, 0.1, -0.2]) < 0.3  # near its geom, in the link frame


def test_page_serves_its_client_and_sends_only_moved_links() -> None:
    from browser import free_port

    from robot_core.model import load_robot
    from robot_core.view.page import ViewPage
    from robot_core.view.scene import robot_shapes

    page = ViewPage(robot_shapes(load_robot(str(URDF_DIR / "planar2.urdf"))), port=free_port())
    try:
        html = urllib.request.urlopen(f"http://127.0.0.1:{page.port}/", timeout=30).read().decode()
        assert "<html" in html.lower()
        poses = {link: np.eye(4) for link in page.links}
        assert page.show_link_poses(poses) == len(page.links)
        assert page.show_link_poses({"not_a_link": np.eye(4)}) == 0
    finally:
        page.stop()


def test_the_traced_path_is_sent_in_chunks_and_keeps_its_last_points() -> None:
    """A new point re-sends only the newest chunk of the traced path; the chunks join end to end, and the oldest
    go once the path is longer than PATH_POINTS."""
    from browser import free_port

    from robot_core.model import load_robot
    from robot_core.view.page import PATH_CHUNK, PATH_POINTS, ViewPage
    from robot_core.view.scene import robot_shapes

    page = ViewPage(robot_shapes(load_robot(str(URDF_DIR / "planar2.urdf"))), port=free_port())
    try:
        sent = []
        add = page.server.scene.add_line_segments

        def counting(name, segments, *args, **kwargs):
            sent.append(len(segments))
            return add(name, segments, *args, **kwargs)

        page.server.scene.add_line_segments = counting
        n = PATH_POINTS + 3 * PATH_CHUNK + 7
        points = [np.array([0.01 * i, 0.0, 0.5], np.float32) for i in range(n)]
        for p in points:
            page.trace(p)
        assert max(sent) <= PATH_CHUNK  # never the whole path
        kept = np.array(page._path)
        assert PATH_POINTS - PATH_CHUNK <= len(kept) <= PATH_POINTS + PATH_CHUNK + 1
        np.testing.assert_array_equal(kept, np.array(points[-len(kept):]))  # the last points, in order
        assert len(page._path_chunks) * PATH_CHUNK <= PATH_POINTS
        page.clear_path()
        assert page._path == [] and page._path_chunks == [] and page._path_handle is None
    finally:
        page.stop()


@pytest.mark.ros
def test_view_waits_for_the_graph_then_draws_a_real_robots_tf(ros: RosTestContext) -> None:
    from browser import free_port
    from geometry_msgs.msg import TransformStamped
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String
    from tf2_msgs.msg import TFMessage

    view = NodeProcess([sys.executable, "-m", "robot_core.cli", "view", "--port", str(free_port())], name="view")
    with view:
        view.wait_for_output("waiting for /robot_description (or start with --robot FILE) and /tf or /joint_states",
                             timeout=60)
        node = ros.node("real_robot")
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        node.create_publisher(String, "/robot_description", latched).publish(
            String(data=(URDF_DIR / "planar2.urdf").read_text()))
        tf = node.create_publisher(TFMessage, "/tf", 10)
        view.wait_for_output("drawing 'planar2'", timeout=60)

        def frame(parent: str, child: str, m: np.ndarray) -> Any:
            t = TransformStamped()
            t.header.frame_id, t.child_frame_id = parent, child
            t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = m[:3, 3]
            w, x, y, z = matrix_wxyz(m)
            t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z, t.transform.rotation.w = x, y, z, w
            return t

        from robot_core.model import load_robot

        robot = load_robot(str(URDF_DIR / "planar2.urdf"))
        msg = TFMessage(transforms=[frame(j.parent, j.child, np.eye(4)) for j in robot.joints.values()]
                        + [frame("world", robot.root_link, np.eye(4))])

        def posed() -> bool:
            tf.publish(msg)
            return "links posed from /tf" in view.output()

        wait_for(posed, 60, "the view to pose the links from /tf", poll=0.2)


@pytest.mark.ros
def test_view_node_draws_sensor_frames_camera_images_force_arrows_and_the_tool_path(ros: RosTestContext) -> None:
    """The view's node in this process (its page inspected directly) fed by real rclpy traffic: joint states
    moving planar2, a camera frame on /tf that is not a link, a bgr8 image and a wrench in the camera's frame."""
    from browser import free_port
    from geometry_msgs.msg import TransformStamped, WrenchStamped
    from sensor_msgs.msg import Image, JointState
    from tf2_msgs.msg import TFMessage

    from robot_core.nodes.view import ViewNode

    view = ViewNode(ros.context, robot=str(URDF_DIR / "planar2.urdf"), port=free_port(), name="view_under_test")
    try:
        ros.add(view.node)
        node = ros.node("planar2_graph")
        joints = node.create_publisher(JointState, "/joint_states", 10)
        tf = node.create_publisher(TFMessage, "/tf", 10)
        image = node.create_publisher(Image, "/cam/image_raw", 10)
        wrench = node.create_publisher(WrenchStamped, "/tool_ft/wrench", 10)
        cam = TransformStamped()
        cam.header.frame_id, cam.child_frame_id = "world", "cam_optical_frame"
        cam.transform.translation.x, cam.transform.translation.z = 0.5, 1.0
        cam.transform.rotation.x = cam.transform.rotation.w = math.sqrt(0.5)  # turned 90 deg about x: z -> -y
        bgr = np.zeros((2, 3, 3), np.uint8)
        bgr[..., 0] = 200  # blue in bgr8: drawn as (0, 0, 200)
        img = Image(height=2, width=3, encoding="bgr8", step=9, data=bgr.tobytes())
        force = WrenchStamped()
        force.header.frame_id = "cam_optical_frame"  # a sensor at the camera: its force in that frame
        force.wrench.force.z = 20.0  # 20 N along the frame's z (the world's -y): a 0.2 m arrow
        angle = [0.0]

        def fed() -> bool:
            angle[0] += 0.05
            joints.publish(JointState(name=["joint1", "joint2"], position=[math.sin(angle[0]), 0.3]))
            tf.publish(TFMessage(transforms=[cam]))
            image.publish(img)
            wrench.publish(force)
            page = view.page
            return ("cam_optical_frame" in page._frames and "/cam/image_raw" in page._images
                    and "/tool_ft/wrench" in page._arrows and len(page._path) > 5)

        wait_for(fed, 60, "the camera frame, image, wrench arrow and a traced tool path in the page", poll=0.1)
        page = view.page
        np.testing.assert_allclose(page._frames["cam_optical_frame"].position, [0.5, 0.0, 1.0], atol=1e-6)
        np.testing.assert_array_equal(page._images["/cam/image_raw"].image[0, 0], [0, 0, 200])
        with view._lock:
            tool = view._fk({"joint1": math.sin(angle[0]), "joint2": 0.3})["tip"][:3, 3]
        (start, end), = page._arrows["/tool_ft/wrench"].points
        np.testing.assert_allclose([start, end], [[0.5, 0.0, 1.0], [0.5, -0.2, 1.0]], atol=1e-5)
        path = np.array(page._path)
        assert np.ptp(path, axis=0).max() > 0.05  # the tool moved, and its path was traced
        # only joint1 (about y, 0.5 m up) moved: every traced point is the tool on one circle about that axis
        radii = np.linalg.norm(path[:, [0, 2]] - [0.0, 0.5], axis=1)
        np.testing.assert_allclose(radii, np.linalg.norm(tool[[0, 2]] - [0.0, 0.5]), atol=1e-4)
        np.testing.assert_allclose(path[:, 1], 0.0, atol=1e-6)
    finally:
        ros.executor.remove_node(view.node)  # no drawing timer runs into the stopped page
        view.page.stop()
