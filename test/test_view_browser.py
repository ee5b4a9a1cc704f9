"""The web view in a real browser: the example arm brought up in embedded mode (physics inside the controller
manager: one process) with the table-top world, `robot-core view` serving it, headless Chromium (through
chromedriver's WebDriver API) opening the page. One bring-up serves every check: the screenshot shows the arm's
orange links where the camera looks and the world's table and red box drawn from the world's markers; a trajectory
goal sent to the joint trajectory controller is drawn whole when it is accepted; moving the gripper controller's
slider in the page (a gripper action: the view sends a GripperCommand goal) moves the simulated finger joint."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from browser import KEYS, Browser, chromium_problem, free_port
from robot_files import URDF_DIR
from ros_harness import REPO, NodeProcess, RosTestContext, wait_for, wait_future

from robot_core.bringup.run import READY_PREFIX
from robot_core.bringup.supervisor import MARKER_ENV

pytest.importorskip("rclpy")
pytest.importorskip("viser")
pytestmark = pytest.mark.ros

TABLE_TOP = REPO / "config" / "worlds" / "table_top.yaml"
SLIDERS_JS = """
return Array.from(document.querySelectorAll('[role=slider]')).map(function (s) {
  var root = s.closest('.mantine-Slider-root');
  var label = root && root.id ? document.querySelector('label[for="' + root.id + '"]') : null;
  var text = label ? label.textContent : '';
  for (var up = s, i = 0; !text && up && i < 8; i++, up = up.parentElement) {
    if (up.previousElementSibling) { text = up.previousElementSibling.textContent; }
  }
  return [text, s.getAttribute('aria-valuenow'), s.getAttribute('aria-valuemax')];
});
"""


def orange_pixels(rgb: np.ndarray) -> int:
    """Pixels of rc_arm's links (rc_orange 0.95 0.45 0.10, lit and shaded)."""
    r, g, b = (rgb[..., i].astype(int) for i in range(3))
    return int(((r > 150) & (g > 50) & (g < 170) & (b < 90) & (r - g > 60)).sum())


def table_pixels(rgb: np.ndarray) -> int:
    """Pixels of table_top.yaml's table (0.55 0.4 0.25: brown, lit and shaded), not the arm's saturated orange."""
    r, g, b = (rgb[..., i].astype(int) for i in range(3))
    return int(((r > 60) & (r < 200) & (g > 0.55 * r) & (g < 0.85 * r) & (b > 0.3 * r) & (b < 0.6 * r)).sum())


def red_box_pixels(rgb: np.ndarray) -> int:
    """Pixels of the red box (box_small, 0.8 0.1 0.1)."""
    r, g, b = (rgb[..., i].astype(int) for i in range(3))
    return int(((r > 90) & (g < 70) & (b < 70) & (r > 2.5 * g)).sum())


@dataclass
class Page:
    ros: RosTestContext
    graph: NodeProcess
    view: NodeProcess
    browser: Browser
    node: Any
    states: list[Any] = field(default_factory=list)

    def position(self, joint: str) -> float:
        return dict(zip(self.states[-1].name, self.states[-1].position, strict=False))[joint]


@pytest.fixture(scope="module")
def page() -> Iterator[Page]:
    """The graph, the view and the browser, started together (each comes up while the others do)."""
    problem = chromium_problem()
    if problem:
        pytest.skip(problem)
    from sensor_msgs.msg import JointState

    procs: list[NodeProcess] = []
    ros = RosTestContext()
    browser = None
    try:
        procs.append(NodeProcess.console_script(
            "robot-core", "bringup", "--headless", "--no-rbc", "--quiet", "--mode", "embedded", "--world",
            str(TABLE_TOP), env={MARKER_ENV: f"test-view-{uuid.uuid4().hex}"}))
        port = free_port()
        procs.append(NodeProcess([sys.executable, "-m", "robot_core.cli", "view", "--port", str(port), "--robot",
                                  str(URDF_DIR / "rc_arm.urdf")], name="view"))
        graph, view = procs
        browser = Browser()
        view.wait_for_output("robot_core view: http://", timeout=60)
        browser.open(f"http://127.0.0.1:{port}/")
        node = ros.node("view_watch")
        p = Page(ros, graph, view, browser, node)
        node.create_subscription(JointState, "/joint_states", p.states.append, 10)
        graph.wait_for_output(READY_PREFIX, timeout=180)
        wait_for(lambda: p.states, 30, "/joint_states")
        yield p
    finally:
        if browser is not None:
            browser.close()
        ros.shutdown()
        for proc in procs:
            proc.stop()


def test_the_page_draws_the_arm_and_the_worlds_objects(page: Page) -> None:
    page.view.wait_for_output("marker shapes in 4 frames from /controller_manager/world_markers "
                              "(box_large, box_medium, box_small, table)", timeout=60)
    page.view.wait_for_output("4 object frames posed from /tf", timeout=60)
    shot: list[np.ndarray] = []

    def drawn() -> bool:
        try:
            shot[:] = [page.browser.screenshot()]
        except RuntimeError as exc:  # chromedriver gives the renderer 10 s; under a CPU hog it may need more
            if "timeout" not in str(exc):
                raise
            return False
        return orange_pixels(shot[0]) > 1200 and table_pixels(shot[0]) > 1500 and red_box_pixels(shot[0]) > 15

    try:
        wait_for(drawn, 240, "the arm's orange links, the brown table and the red box in the page", poll=1.0)
    except TimeoutError:
        from PIL import Image

        if shot:
            Image.fromarray(shot[0]).save("/tmp/robot_core_view_failed.png")
            counts = f"orange {orange_pixels(shot[0])}, table {table_pixels(shot[0])}, red {red_box_pixels(shot[0])}"
            raise TimeoutError(f"{counts} pixels (screenshot /tmp/robot_core_view_failed.png)") from None
        raise
    h, w = shot[0].shape[:2]
    centre = shot[0][h // 6: 5 * h // 6, w // 6: 5 * w // 6]
    assert orange_pixels(centre) > 800, "the arm is not where the camera looks"


def test_an_accepted_trajectory_goal_is_drawn_whole(page: Page) -> None:
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    from robot_core.ros.action_client import ActionClient

    joints = [f"joint{i}" for i in range(1, 8)]
    client = ActionClient(page.node, FollowJointTrajectory, "/joint_trajectory_controller/follow_joint_trajectory")
    assert client.wait_for_server(timeout_sec=60), "the JTC's action server"
    start = [page.position(j) for j in joints]
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = joints
    for k, t in ((1, 1), (2, 2)):
        q = list(start)
        q[0] += 0.2 * k
        goal.trajectory.points.append(JointTrajectoryPoint(positions=q, time_from_start=Duration(sec=t)))
    handle = wait_future(client.send_goal_async(goal), 30, "the goal's answer")
    assert handle.accepted
    page.view.wait_for_output("goal of 2 points from /joint_trajectory_controller/accepted_trajectory drawn",
                              timeout=60)
    wait_future(handle.get_result_async(), 60, "the goal's result")


def test_moving_a_slider_moves_the_joint(page: Page) -> None:
    browser = page.browser

    def finger_slider() -> Any:
        rows = browser.script(SLIDERS_JS)
        hits = [i for i, row in enumerate(rows) if "finger_left_joint" in (row[0] or "")]
        return hits or None

    index = wait_for(finger_slider, 60, "the finger slider (gripper_controller, an action, is active)", poll=0.5)[0]
    start = page.position("finger_left_joint")
    element = browser.elements("[role=slider]")[index]
    browser.script("arguments[0].scrollIntoView({block: 'center'});", browser.ref(element))
    browser.send_keys(element, KEYS["end"])  # focuses the thumb, then End: the slider to its upper limit
    upper = float(browser.script(SLIDERS_JS)[index][2])
    assert upper - start > 0.005
    wait_for(lambda: abs(page.position("finger_left_joint") - upper) < 0.25 * (upper - start), 60,
             f"finger_left_joint to follow the slider from {start:.4f} to {upper:.4f}", poll=0.1)
