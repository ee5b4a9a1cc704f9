"""The robot's first states and controller activation, over DDS: a spawner started before the robot (as a launch
file starts them) waits for the robot's states instead of activating on the manager's placeholders.

Its own module: a module-scoped graph of another module (test/test_spawner.py's paused simulator and manager)
would answer in this test's domain.
"""

from __future__ import annotations

import pytest
from cm_helpers import ARM_JOINTS, HOME, RC_ARM, JointStateRecorder, start_controller_manager, start_simulator
from ros_harness import NodeProcess, wait_for


def _finish(proc: NodeProcess, timeout: float) -> tuple[int, str]:
    wait_for(lambda: not proc.alive(), timeout, f"{proc.name} to exit")
    return proc.proc.returncode, proc.output()


@pytest.mark.ros
def test_a_spawner_started_before_the_robot_activates_on_the_robots_own_pose(ros):
    """As a launch file starts them: the manager (topic mode), then the spawner, then the simulator. The switch
    waits for the robot's first states; the JTC's first command is the pose the simulator started in. Before the
    wait, the JTC was activated on the manager's placeholders (rc_arm's URDF initial values here; zeros where a
    description has none) and sent them, pulling the arm out of its start pose (a PR2 bring-up's arms rose so)."""
    procs: list[NodeProcess] = []
    try:
        manager = start_controller_manager(procs, f"robot_description_file:={RC_ARM}",
                                           "publish_robot_description:=false")
        commands = JointStateRecorder(ros.node("first_command_watcher"), "/robot_joint_commands")
        spawning = NodeProcess.console_script("spawner", "joint_trajectory_controller", "--controller-manager-timeout",
                                              "30", "--switch-timeout", "120")
        procs.append(spawning)
        manager.wait_for_output("waiting up to 120 s for the robot's first states", timeout=60)
        assert "no message on '/robot_joint_states' yet" in manager.output()
        assert not commands.messages, "nothing is commanded before the switch"
        start = list(HOME)
        start[0], start[3] = 0.5, 1.2
        start_simulator(procs, "initial_positions.joint1:=0.5", "initial_positions.joint4:=1.2")
        code, out = _finish(spawning, 120)
        assert code == 0, out
        wait_for(lambda: commands.positions(ARM_JOINTS) is not None, 30, "the JTC's first command")
        first = next(m for m in commands.messages if len(m.position) == len(ARM_JOINTS))
        got = dict(zip(first.name, first.position, strict=True))
        assert [got[j] for j in ARM_JOINTS] == pytest.approx(start, abs=0.02), got
    finally:
        for p in procs:
            p.stop()
