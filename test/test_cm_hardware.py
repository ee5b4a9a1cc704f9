"""Hardware components seen from the controller manager node: topic-based hardware that loses its robot (when
joint states stop for ``state_timeout`` the component is reported failed and the controllers commanding it
are deactivated; when states come back it recovers), and components that start inactive."""

from __future__ import annotations

import pytest
from cm_helpers import RC_ARM, CmClient, start_controller_manager, start_simulator
from ros_harness import wait_for

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros


def test_state_timeout_fails_the_component_and_stops_its_controllers(ros, processes):
    sim = start_simulator(processes)
    cm_proc = start_controller_manager(processes, "state_timeout:=0.5")
    cm = CmClient(ros.node("failure_client"))
    cm.spawn("joint_state_broadcaster", "joint_trajectory_controller")

    sim.stop()  # the robot disappears
    wait_for(lambda: cm.state("joint_trajectory_controller") == "inactive", 20, "the JTC deactivated")
    # joint and sensor states die with the simulator at once: either stream's timeout may be the one that fires
    out = cm_proc.output()
    assert ("failed: no joint states on '/robot_joint_states'" in out
            or "failed: no sensor states on '/robot_sensor_states'" in out), out[-2000:]
    assert cm.state("joint_state_broadcaster") == "active", "a broadcaster claims no command interface"
    res = cm.switch(["joint_trajectory_controller"])
    assert not res.ok and "not available" in res.message

    start_simulator(processes)  # the robot comes back
    wait_for(lambda: "recovered" in cm_proc.output(), 30, "the component recovering")
    res = cm.switch(["joint_trajectory_controller"])
    assert res.ok, res.message


def test_hardware_can_start_inactive_and_be_activated(ros, processes):
    from lifecycle_msgs.msg import State

    start_controller_manager(processes, "hardware_mode:=embedded", f"robot_description_file:={RC_ARM}",
                             "hardware_components_initial_state.inactive:=[RcArmSystem]")
    cm = CmClient(ros.node("initial_state_client"))
    comp = cm.call("list_hardware_components").component[0]
    assert comp.state.label == "inactive"
    assert cm.load("joint_trajectory_controller") and cm.configure("joint_trajectory_controller")
    assert not cm.switch(["joint_trajectory_controller"]).ok, "inactive hardware takes no commands"
    res = cm.call("set_hardware_component_state", name="RcArmSystem", target_state=State(id=3, label="active"))
    assert res.ok and res.state.label == "active"
    assert cm.switch(["joint_trajectory_controller"]).ok
