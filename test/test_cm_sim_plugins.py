"""A robot described for Gazebo Sim runs unchanged on robot_core's simulator and controller manager (issue #15):
its ``<hardware>`` is gz_ros2_control/GazeboSimSystem and its transmissions are in ros2_control's own form; the
manager (hardware_mode '', so the block's plugin decides) takes the plugin as topic-based hardware and says so,
the simulator applies the reductions, and a forward_command_controller moves both joints."""

from __future__ import annotations

from pathlib import Path

import pytest
from cm_helpers import CmClient
from ros_harness import NodeProcess, wait_for

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

DATA = Path(__file__).parent / "data"
RRBOT = DATA / "urdf" / "rrbot_transmissions.urdf"
CONTROLLERS = DATA / "cm_node" / "rrbot_controllers.yaml"


def test_gazebo_sim_robot_with_ros2_control_transmissions_moves(ros, processes):
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    sim = NodeProcess.console_script("simulator", "--ros-args", "-p", f"urdf_path:={RRBOT}")
    processes.append(sim)
    sim.wait_for_output("simulator ready", timeout=60)
    assert "transmission reductions (motor effort = joint effort / reduction; commands and states stay in joint " \
           "space): joint1 20, joint2 -50" in sim.output()
    cm_proc = NodeProcess.console_script("controller_manager", "--ros-args", "--params-file", str(CONTROLLERS),
                                         "-p", f"robot_description_file:={RRBOT}")
    processes.append(cm_proc)
    cm_proc.wait_for_output("controller manager ready", timeout=60)
    assert "hardware component 'GazeboSimSystem': <plugin> 'gz_ros2_control/GazeboSimSystem' runs as topic-based " \
           "hardware (states from 'robot_joint_states', commands to 'robot_joint_commands'" in cm_proc.output()

    node = ros.node("gz_robot_client")
    latest: dict[str, JointState] = {}
    node.create_subscription(JointState, "/robot_joint_states", lambda m: latest.__setitem__("msg", m),
                             qos_profile_sensor_data)
    cm = CmClient(node)
    cm.spawn("forward_position_controller")
    pub = node.create_publisher(Float64MultiArray, "/forward_position_controller/commands", 10)
    wait_for(lambda: pub.get_subscription_count() > 0, 30, "the forward controller's subscription")
    target = {"joint1": 0.6, "joint2": -0.4}

    def reached() -> bool:
        pub.publish(Float64MultiArray(data=list(target.values())))
        if "msg" not in latest:
            return False
        q = dict(zip(latest["msg"].name, latest["msg"].position, strict=True))
        return all(abs(q[j] - v) < 0.01 for j, v in target.items())

    wait_for(reached, 60, "joint1 at 0.6 and joint2 at -0.4 rad in the simulator", poll=0.1)
    comp = cm.call("list_hardware_components").component[0]
    assert (comp.name, comp.plugin_name, comp.state.label) == (
        "GazeboSimSystem", "gz_ros2_control/GazeboSimSystem", "active")
