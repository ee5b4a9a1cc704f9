"""The example arm's own ``<rbc>`` tags against the real controller stack: simulator + controller manager + rbc.

urdf/rc_arm.urdf maps q/qd/tau onto the simulator's joint states, q_ref onto the forward position controller's
``~/commands`` and joint1's q_desired onto the nested field ``reference.positions`` of the joint trajectory
controller's ``~/controller_state``, so joint1's vars come from three different topics and drivers.
"""

from __future__ import annotations

import numpy as np
import pytest
from cm_helpers import HOME, CmClient, run_spawner, start_controller_manager, start_simulator
from rbc_helpers import RC_ARM, TEST_STALE_TIMEOUT, Client, Goal, joint_goal, start
from ros_harness import REPO, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("robot_core_interfaces")
pytest.importorskip("control_msgs")
pytestmark = pytest.mark.ros


def test_example_arm_tags_read_a_nested_field_and_drive_the_forward_position_controller(ros, processes):
    from robot_core_interfaces.action import JointReach

    start_simulator(processes)
    start_controller_manager(processes, yaml=REPO / "config" / "controllers.yaml")
    rbc = start("rbc", "-p", f"urdf_path:={RC_ARM}", "-p", f"stale_timeout:={TEST_STALE_TIMEOUT}")
    processes.append(rbc)
    rbc.wait_for_output("rbc ready", 60)
    code, out = run_spawner("joint_trajectory_controller")
    assert code == 0, out
    c = Client(ros)
    cm = CmClient(c.node)

    # joint1's q_desired: the JTC's reference.positions[0] (holding the start pose), next to q from the simulator.
    def q_desired() -> tuple[float, bool]:
        got = c.get_vars(["joint1"], ["q_desired"])
        assert got.success, got.message
        return got.values[0], got.stale[0]
    wait_for(lambda: not q_desired()[1], 30, "a fresh q_desired from the trajectory controller")
    assert abs(q_desired()[0] - HOME[0]) < 0.01
    joint1 = c.get_vars(["joint1"], [])
    assert set(joint1.var_names) == {"q", "qd", "tau", "q_ref", "qd_ref", "q_desired"}

    # Hand the arm to the forward position controller, the driver of the tags' q_ref.
    code, out = run_spawner("--inactive", "forward_position_controller")
    assert code == 0, out
    res = cm.switch(activate=["forward_position_controller"], deactivate=["joint_trajectory_controller"])
    assert res.ok, res.message
    # The trajectory controller is off: q_desired goes stale, the joint's other vars stay fresh.
    wait_for(lambda: q_desired()[1], 20, "q_desired to go stale")
    assert not any(c.get_vars(["joint1"], ["q"]).stale)

    c.create("JR", "JR0", joints=["joint1", "joint3", "joint5"], kp=2.5)
    targets = [0.4, -0.5, 0.6]
    goal = Goal(c, JointReach, "/JR0/reach", joint_goal(["joint1", "joint3", "joint5"], targets, 0.005, 30.0))
    result = goal.result(45)
    assert result.success, result.message
    c.wait_still()
    q = c.arm_q()
    refs = c.get_vars(["joint1", "joint3", "joint5"], ["q_ref"]).values
    assert np.abs(q[[0, 2, 4]] - targets).max() <= 0.005, (q, refs, result.final_error)
    assert np.abs(q[[1, 3, 5, 6]] - np.array(HOME)[[1, 3, 5, 6]]).max() < 0.01  # the others held
