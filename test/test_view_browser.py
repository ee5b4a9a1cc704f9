"""The web view in a real browser: the example arm brought up in embedded mode (physics inside the controller
manager: one process) with the table-top world and `--view` (the bring-up starts `robot-core view`), headless
Chromium (through chromedriver's WebDriver API) opening the page. One bring-up serves every check, in order: the
screenshot shows the arm's orange links where the camera looks and the world's table and red box drawn from the
world's markers; the panel lists the controllers with their states and shows the scene camera's images; a
trajectory goal is drawn whole as a green path (its pixels, with the panel hidden); the gripper controller's slider
(a GripperCommand goal) moves the finger; the pause / step / resume / reset buttons drive the embedded simulation
(its /clock); with forward_position_controller switched on, its joint1 slider moves joint1."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from browser import ELEMENT, KEYS, Browser, chromium_problem, free_port
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


PANEL_JS = """
var el = Array.from(document.querySelectorAll('button')).find(function (b) {
  return b.textContent.trim() === 'pause'; });
for (; el && el.parentElement && el.parentElement !== document.body; el = el.parentElement) {
  var r = el.getBoundingClientRect();
  if (r.width > 0.6 * window.innerWidth && r.height > 0.6 * window.innerHeight) { break; }
  var pos = getComputedStyle(el).position;
  if (pos === 'fixed' || pos === 'absolute') { el.style.visibility = arguments[0] ? 'visible' : 'hidden'; return true; }
}
return false;
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


def goal_green_pixels(rgb: np.ndarray) -> np.ndarray:
    """Where the goal path's green is (40 200 80, unlit lines; drawn about 97 205 101 after the viewer's colour
    management), not the lit green box (0.1 0.7 0.1: red and blue low) nor the frames' axes (0 204 0)."""
    r, g, b = (rgb[..., i].astype(int) for i in range(3))
    return (g > 170) & (r > 60) & (r < 150) & (b > 60) & (b < 150) & (np.abs(r - b) < 30) & (g - r > 60)


@dataclass
class Page:
    ros: RosTestContext
    graph: NodeProcess
    recording: Path
    browser: Browser
    node: Any
    states: list[Any] = field(default_factory=list)
    clock: list[float] = field(default_factory=list)

    def position(self, joint: str) -> float:
        return dict(zip(self.states[-1].name, self.states[-1].position, strict=False))[joint]

    def view_said(self, text: str, timeout: float = 60) -> None:
        """A line of the view (the bring-up's child: its output goes to the bring-up's)."""
        self.graph.wait_for_output(text, timeout=timeout)

    def click(self, label: str) -> None:
        found = self.browser.script(
            "var label = arguments[0]; return Array.from(document.querySelectorAll('button')).find("
            "function (b) { return b.textContent.trim() === label; }) || null;", label)
        if not found:
            self.wait(lambda: False, 0, f"the '{label}' button in the page")
        self.browser.click(found[ELEMENT])

    def settled_clock(self, still: float = 1.0) -> float | None:
        """The /clock value once it has not moved for ``still`` wall seconds (None: it still moves)."""
        seen = self.clock[-1]
        time.sleep(still)
        return seen if self.clock[-1] == seen else None

    def text(self) -> str:
        return str(self.browser.script("return document.body.innerText;"))

    def wait(self, condition: Any, timeout: float, what: str, poll: float = 0.5) -> Any:
        """wait_for, and on a timeout the page as evidence: a screenshot and the start of its text."""
        try:
            return wait_for(condition, timeout, what, poll=poll)
        except TimeoutError as exc:
            from PIL import Image

            path = f"/tmp/robot_core_view_{re.sub(r'[^a-z0-9]+', '_', what.lower())[:40]}.png"
            try:
                Image.fromarray(self.browser.screenshot()).save(path)
                text = self.text().replace("\n", " | ")
                text = f"{text[:300]} ... {text[-700:]}" if len(text) > 1000 else text
            except RuntimeError as shot:
                path, text = "(no screenshot)", str(shot)[:300]
            raise TimeoutError(f"{exc}; the page: {path}, text: {text}") from None


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    """The graph with its view, and the browser, started together (each comes up while the others do)."""
    problem = chromium_problem()
    if problem:
        pytest.skip(problem)
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState

    graph = None
    ros = RosTestContext()
    browser = None
    try:
        port = free_port()
        recording = tmp_path_factory.mktemp("view") / "run.mcap"
        graph = NodeProcess.console_script(
            "robot-core", "bringup", "--headless", "--no-rbc", "--quiet", "--mode", "embedded", "--world",
            str(TABLE_TOP), "--view", str(port), "--record", str(recording),
            env={MARKER_ENV: f"test-view-{uuid.uuid4().hex}"})
        browser = Browser(640, 480)  # fewer pixels for software WebGL to draw in every frame
        graph.wait_for_output("robot_core view: http://", timeout=60)
        browser.open(f"http://127.0.0.1:{port}/")
        node = ros.node("view_watch")
        p = Page(ros, graph, recording, browser, node)
        node.create_subscription(JointState, "/joint_states", p.states.append, 10)
        node.create_subscription(Clock, "/clock", lambda m: p.clock.append(m.clock.sec + m.clock.nanosec * 1e-9), 10)
        graph.wait_for_output(READY_PREFIX, timeout=180)
        wait_for(lambda: p.states and p.clock, 30, "/joint_states and /clock")
        yield p
    finally:
        if browser is not None:
            browser.close()
        ros.shutdown()
        if graph is not None:
            graph.stop(timeout=30)  # SIGINT: the bring-up stops its view too


def test_the_page_draws_the_arm_and_the_worlds_objects(page: Page) -> None:
    page.view_said("marker shapes in 4 frames from /controller_manager/world_markers "
                   "(box_large, box_medium, box_small, table)")
    page.view_said("4 object frames posed from /tf")
    shot: list[np.ndarray] = []

    def drawn() -> bool:
        try:
            shot[:] = [page.browser.screenshot()]
        except RuntimeError as exc:  # chromedriver gives the renderer 10 s; under a CPU hog it may need more
            if "timeout" not in str(exc):
                raise
            return False
        return orange_pixels(shot[0]) > 1200 and table_pixels(shot[0]) > 1500 and red_box_pixels(shot[0]) > 15

    hidden = False
    try:  # the panel covers the small window's right half: hidden for the screenshots
        hidden = page.wait(lambda: page.browser.script(PANEL_JS, False), 120, "the control panel to hide", poll=1.0)
        wait_for(drawn, 240, "the arm's orange links, the brown table and the red box in the page", poll=2.0)
    except TimeoutError:
        from PIL import Image

        if shot:
            Image.fromarray(shot[0]).save("/tmp/robot_core_view_failed.png")
            counts = f"orange {orange_pixels(shot[0])}, table {table_pixels(shot[0])}, red {red_box_pixels(shot[0])}"
            raise TimeoutError(f"{counts} pixels (screenshot /tmp/robot_core_view_failed.png)") from None
        raise
    finally:
        if hidden:
            page.browser.script(PANEL_JS, True)
    h, w = shot[0].shape[:2]
    centre = shot[0][h // 6: 5 * h // 6, w // 6: 5 * w // 6]
    assert orange_pixels(centre) > 800, "the arm is not where the camera looks"


def test_the_panel_lists_the_controllers_and_shows_the_camera(page: Page) -> None:
    def listed() -> bool:
        text = page.text()
        return all(row in text for row in ("joint_trajectory_controller joint_trajectory_controller/"
                                           "JointTrajectoryController: active",
                                           "forward_position_controller position_controllers/"
                                           "JointGroupPositionController: inactive"))

    page.wait(listed, 60, "the controllers with their types and states in the panel", poll=1.0)
    # rc_arm's scene camera: 480 x 360 images on /scene_camera/image_raw, shown under their topic
    page.wait(lambda: "/scene_camera/image_raw" in page.text() and page.browser.script(
        "return Array.from(document.images).some(function (i) {"
        " return i.naturalWidth === 480 && i.naturalHeight === 360; });"), 60,
        "the scene camera's 480 x 360 image in the Cameras panel", poll=1.0)


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
        q[0] -= 0.5 * k  # the tool swings to the screen's left, away from the panel
        goal.trajectory.points.append(JointTrajectoryPoint(positions=q, time_from_start=Duration(sec=t)))
    assert page.browser.script(PANEL_JS, False), "the control panel was not found"
    try:
        before = page.browser.screenshot()  # green already there (e.g. lit edges of the green box) does not count
        handle = wait_future(client.send_goal_async(goal), 30, "the goal's answer")
        assert handle.accepted
        page.view_said("goal of 2 points from /joint_trajectory_controller/accepted_trajectory drawn")
        wait_future(handle.get_result_async(), 60, "the goal's result")
        after: list[np.ndarray] = []

        def green() -> bool:
            after[:] = [page.browser.screenshot()]
            return int((goal_green_pixels(after[0]) & ~goal_green_pixels(before)).sum()) > 150

        try:
            wait_for(green, 60, "the goal's green path in the page", poll=2.0)
        except TimeoutError:
            from PIL import Image

            Image.fromarray(np.hstack([before, after[0]])).save("/tmp/robot_core_view_goal_failed.png")
            new = int((goal_green_pixels(after[0]) & ~goal_green_pixels(before)).sum())
            raise TimeoutError(f"{new} new pixels of the goal's green (before and after: "
                               "/tmp/robot_core_view_goal_failed.png)") from None
    finally:
        page.browser.script(PANEL_JS, True)


def slider_indices(browser: Browser, joint: str) -> list[int]:
    """Where the joint's slider is among the page's sliders (a list: index 0 is a find)."""
    return [i for i, row in enumerate(browser.script(SLIDERS_JS)) if joint in (row[0] or "")]


def slide_to_upper(page: Page, joint: str, what: str) -> None:
    """End on the joint's slider (focus the thumb, then End: its upper limit); the joint follows."""
    browser = page.browser
    index = page.wait(lambda: slider_indices(browser, joint), 60, what, poll=0.5)[0]
    start = page.position(joint)
    element = browser.elements("[role=slider]")[index]
    browser.script("arguments[0].scrollIntoView({block: 'center'});", browser.ref(element))
    browser.send_keys(element, KEYS["end"])
    upper = float(browser.script(SLIDERS_JS)[index][2])
    assert upper - start > 0.005
    wait_for(lambda: abs(page.position(joint) - upper) < 0.25 * (upper - start), 60,
             f"{joint} to follow the slider from {start:.4f} to {upper:.4f}", poll=0.1)


def test_moving_the_gripper_slider_moves_the_finger(page: Page) -> None:
    slide_to_upper(page, "finger_left_joint", "the finger slider (gripper_controller, an action, is active)")


def test_the_simulator_buttons_pause_step_resume_and_reset(page: Page) -> None:
    page.click("pause")
    paused = wait_for(page.settled_clock, 60, "/clock to stop after pause", poll=0.1)
    page.click("step")  # 10 control cycles of the embedded controller manager (100 Hz): 0.1 s
    wait_for(lambda: page.clock[-1] > paused, 60, "/clock to move on step", poll=0.1)
    stepped = wait_for(page.settled_clock, 60, "/clock to stop after the step", poll=0.1)
    assert stepped - paused == pytest.approx(0.1, abs=1e-6)
    page.click("resume")
    wait_for(lambda: page.clock[-1] > stepped + 0.5, 60, "/clock to run after resume", poll=0.1)
    running = page.clock[-1]
    page.click("reset")  # the simulation back to t = 0
    wait_for(lambda: page.clock[-1] < running - 0.3, 60, "/clock to go back on reset", poll=0.1)


def test_the_forward_position_controllers_slider_moves_its_joint(page: Page) -> None:
    from cm_helpers import CmClient

    result = CmClient(page.node).switch(activate=["forward_position_controller"],
                                        deactivate=["joint_trajectory_controller"])
    assert result.ok
    slide_to_upper(page, "joint1", "joint1's slider (forward_position_controller is active)")


def test_the_bringups_recording_holds_the_run(page: Page) -> None:
    """Last: the bring-up (``--record``) stopped, its recorder closes the file; every message decodes with
    mcap_ros2 (not robot_core's reader) and the log times never go backwards."""
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    assert page.graph.stop(timeout=60) == 0, page.graph.output()[-2000:]
    topics: dict[str, int] = {}
    log_times = []
    with page.recording.open("rb") as f:
        for _, channel, message, _ in make_reader(f, decoder_factories=[DecoderFactory()]).iter_decoded_messages():
            topics[channel.topic] = topics.get(channel.topic, 0) + 1
            log_times.append(message.log_time)
    assert {"/joint_states", "/clock", "/tf", "/controller_manager/world_markers",
            "/joint_trajectory_controller/controller_state"} <= set(topics), sorted(topics)
    assert log_times == sorted(log_times)
