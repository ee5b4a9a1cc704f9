"""The web view in a real browser: the example arm brought up (simulator + controller manager), `robot-core view`
serving it, headless Chromium (through chromedriver's WebDriver API) opening the page. The screenshot shows the
arm's orange links where the camera looks, and moving the gripper controller's slider in the page moves the
simulated finger joint."""

from __future__ import annotations

import sys
import uuid
from typing import Any

import numpy as np
import pytest
from browser import KEYS, Browser, chromium_problem, free_port
from ros_harness import NodeProcess, RosTestContext, wait_for

from robot_core.bringup.run import READY_PREFIX
from robot_core.bringup.supervisor import MARKER_ENV

pytest.importorskip("rclpy")
pytest.importorskip("viser")
pytestmark = pytest.mark.ros

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


def test_view_draws_the_arm_and_a_slider_moves_its_joint(ros: RosTestContext, processes: list[NodeProcess]) -> None:
    problem = chromium_problem()
    if problem:
        pytest.skip(problem)
    from sensor_msgs.msg import JointState

    marker = f"test-view-{uuid.uuid4().hex}"
    graph = NodeProcess.console_script("robot-core", "bringup", "--headless", "--no-rbc", "--quiet",
                                       env={MARKER_ENV: marker})
    processes.append(graph)
    port = free_port()
    view = NodeProcess([sys.executable, "-m", "robot_core.cli", "view", "--port", str(port)], name="view")
    processes.append(view)
    view.wait_for_output("robot_core view: http://", timeout=60)
    graph.wait_for_output(READY_PREFIX, timeout=180)
    view.wait_for_output("drawing 'rc_arm'", timeout=60)

    states: list[Any] = []
    node = ros.node("view_watch")
    node.create_subscription(JointState, "/joint_states", states.append, 10)
    wait_for(lambda: states, 30, "/joint_states")

    browser = Browser()
    try:
        browser.open(f"http://127.0.0.1:{port}/")
        shot: list[np.ndarray] = []

        def arm_drawn() -> bool:
            try:
                shot[:] = [browser.screenshot()]
            except RuntimeError as exc:  # chromedriver gives the renderer 10 s; under a CPU hog it may need more
                if "timeout" not in str(exc):
                    raise
                return False
            return orange_pixels(shot[0]) > 1200

        try:
            wait_for(arm_drawn, 240, "the arm's orange links in the page", poll=1.0)
        except TimeoutError:
            from PIL import Image

            if shot:
                Image.fromarray(shot[0]).save("/tmp/robot_core_view_failed.png")
            raise
        h, w = shot[0].shape[:2]
        centre = shot[0][h // 6: 5 * h // 6, w // 6: 5 * w // 6]
        assert orange_pixels(centre) > 800, "the arm is not where the camera looks"

        def finger_slider() -> Any:
            rows = browser.script(SLIDERS_JS)
            hits = [i for i, row in enumerate(rows) if "finger_left_joint" in (row[0] or "")]
            return hits or None

        index = wait_for(finger_slider, 60, "the finger slider (gripper_controller is active)", poll=0.5)[0]
        start = dict(zip(states[-1].name, states[-1].position, strict=False))["finger_left_joint"]
        element = browser.elements("[role=slider]")[index]
        browser.script("arguments[0].scrollIntoView({block: 'center'});", browser.ref(element))
        browser.send_keys(element, KEYS["end"])  # focuses the thumb, then End: the slider to its upper limit
        upper = float(browser.script(SLIDERS_JS)[index][2])
        assert upper - start > 0.005

        def finger() -> float:
            return dict(zip(states[-1].name, states[-1].position, strict=False))["finger_left_joint"]

        wait_for(lambda: abs(finger() - upper) < 0.25 * (upper - start), 60,
                 f"finger_left_joint to follow the slider from {start:.4f} to {upper:.4f}", poll=0.1)
    finally:
        browser.close()
