"""An MJCF robot through the real nodes: the simulator runs the file, publishes its URDF conversion on
/robot_description, and the controller manager (topic mode) built from that description moves both joints."""

from __future__ import annotations

from pathlib import Path

import pytest
from cm_helpers import CmClient, JointStateRecorder, run_spawner, start_controller_manager
from ros_harness import NodeProcess, wait_for
from sim_helpers import SimClient

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

DATA = Path(__file__).resolve().parent / "data" / "mjcf"
ARM = DATA / "two_link_arm.xml"
TARGET = [0.7, -0.8]


def test_mjcf_arm_moves_through_simulator_and_controller_manager(ros, processes):
    from std_msgs.msg import Float64MultiArray

    from robot_core.model import load_robot

    sim = NodeProcess.console_script("simulator", "--ros-args", "-p", f"urdf_path:={ARM}")
    processes.append(sim)
    sim.wait_for_output("simulator ready", timeout=60)
    client = SimClient(ros, "mjcf_client")
    node = client.node
    wait_for(lambda: client.description, 30, "the simulator's /robot_description")
    urdf = load_robot(client.description[-1])  # URDF for ROS tools, with the MJCF's joints and ros2_control system
    assert client.description[-1].lstrip().startswith("<?xml") and "<robot" in client.description[-1]
    assert urdf.actuated_joint_names() == ["shoulder", "elbow"]
    # /tf names the links of the MJCF bodies; the fixed placement of the base in the world is static
    wait_for(lambda: ("upper_arm", "forearm") in client.tf and ("world", "base") in client.tf_static, 30,
             "the arm's transforms")
    assert client.tf_static[("world", "base")].transform.translation.z == pytest.approx(0.1)

    # the controller manager takes its description from the topic, like with any URDF robot
    start_controller_manager(processes, yaml=DATA / "mjcf_controllers.yaml")
    code, out = run_spawner("joint_state_broadcaster", "forward_position_controller")
    assert code == 0, out
    cm = CmClient(node)
    assert cm.state("forward_position_controller") == "active"
    states = JointStateRecorder(node)
    commands = node.create_publisher(Float64MultiArray, "/forward_position_controller/commands", 10)
    wait_for(lambda: commands.get_subscription_count() > 0, 30, "the controller's command subscription")

    def arrived() -> bool:
        commands.publish(Float64MultiArray(data=TARGET))
        q = states.positions(["shoulder", "elbow"])
        return q is not None and all(abs(a - b) < 0.01 for a, b in zip(q, TARGET, strict=True))

    wait_for(arrived, 60, f"shoulder and elbow at {TARGET} on /joint_states", poll=0.1)


def test_mjcf_arm_moves_in_the_embedded_controller_manager(ros, processes):
    """hardware_mode embedded: the controller manager runs the engine on the MJCF file itself."""
    from std_msgs.msg import Float64MultiArray

    start_controller_manager(processes, "hardware_mode:=embedded", f"robot_description_file:={ARM}",
                             yaml=DATA / "mjcf_controllers.yaml")
    code, out = run_spawner("joint_state_broadcaster", "forward_position_controller")
    assert code == 0, out
    node = ros.node("mjcf_embedded_client")
    states = JointStateRecorder(node)
    commands = node.create_publisher(Float64MultiArray, "/forward_position_controller/commands", 10)
    wait_for(lambda: commands.get_subscription_count() > 0, 30, "the controller's command subscription")
    target = [-0.5, 1.1]

    def arrived() -> bool:
        commands.publish(Float64MultiArray(data=target))
        q = states.positions(["shoulder", "elbow"])
        return q is not None and all(abs(a - b) < 0.01 for a, b in zip(q, target, strict=True))

    wait_for(arrived, 60, f"shoulder and elbow at {target} on /joint_states", poll=0.1)


def test_simulator_takes_mjcf_text_on_its_topic_and_refuses_a_broken_one(ros, processes):
    """No description parameter: the simulator waits on /robot_description; a broken MJCF is refused with its
    line and the node stays up; the scene's text then starts it (the pendulum's joint on /robot_joint_states)."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    sim = NodeProcess.console_script("simulator", "--ros-args", "-p", "robot_description_topic:=/mjcf_description")
    processes.append(sim)
    sim.wait_for_output("waiting for the robot description", timeout=60)
    node = ros.node("mjcf_topic_client")
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    pub = node.create_publisher(String, "/mjcf_description", latched)
    scene = (DATA / "scene_box_camera.xml").read_text()
    broken = scene.replace('<joint name="swing" type="hinge"', '<joint name="swing" type="spiral"')
    pub.publish(String(data=broken))
    sim.wait_for_output("cannot simulate the robot description", timeout=60)
    line = next(i for i, t in enumerate(broken.splitlines(), 1) if "spiral" in t)
    assert f"<string>:{line}: <joint>" in sim.output() and sim.alive()

    names: list[list[str]] = []
    node.create_subscription(JointState, "/robot_joint_states", lambda m: names.append(list(m.name)),
                             qos_profile_sensor_data)
    pub.publish(String(data=scene))
    wait_for(lambda: names and names[-1] == ["swing"], 60, "the pendulum's joint state")


def test_ball_joint_robot_in_the_simulator_is_three_commandable_hinges(ros, processes):
    """An MJCF robot with a ball joint: the simulator runs its file with the ball as three hinges, publishes them
    on /robot_joint_states and in the URDF on /robot_description, and an effort on one hinge turns it."""
    from robot_core.model import load_robot

    ball_arm = DATA / "ball_arm.xml"
    wrist = ["wrist:x", "wrist:y", "wrist:z"]
    sim = NodeProcess.console_script("simulator", "--ros-args", "-p", f"urdf_path:={ball_arm}")
    processes.append(sim)
    sim.wait_for_output("simulator ready", timeout=60)
    assert f"{ball_arm}:" in sim.output() and "ball joint: simulated as three hinges" in sim.output()
    client = SimClient(ros, "mjcf_ball_client")
    wait_for(lambda: client.description, 30, "the simulator's /robot_description")
    urdf = load_robot(client.description[-1])
    assert [urdf.joints[n].type for n in wrist] == ["revolute"] * 3
    wait_for(lambda: client.states and set(wrist) <= set(client.latest().name), 30, "the hinges' joint states")
    wait_for(lambda: ("hand:wrist:y", "hand") in client.tf, 30, "the wrist's transforms")
    start = client.positions()["wrist:z"]

    def turned() -> bool:
        client.send(["wrist:z"], effort=[1.0])
        return client.positions()["wrist:z"] > start + 0.2

    wait_for(turned, 60, "wrist:z turned by its effort command", poll=0.1)


def test_mjcf_scene_file_with_its_free_box_through_simulator_and_controller_manager(ros, processes):
    """A scene written as one MJCF file (pendulum robot + free crate + camera + floor): the simulator runs it as
    written; the crate, scenery of the robot's own file, is an object like those of a world file (falls onto the
    file's floor, ~/object_states, /tf, ~/set_object_state); the controller manager drives the pendulum's motor."""
    import math

    from geometry_msgs.msg import Pose
    from robot_core_interfaces.msg import ObjectStates
    from robot_core_interfaces.srv import SetObjectState
    from ros_harness import wait_future
    from std_msgs.msg import Float64MultiArray

    scene = DATA / "scene_box_camera.xml"
    sim = NodeProcess.console_script("simulator", "--ros-args", "-p", f"urdf_path:={scene}")
    processes.append(sim)
    sim.wait_for_output("simulator ready", timeout=60)
    assert "objects crate" in sim.output(), sim.output()[-2000:]
    client = SimClient(ros, "mjcf_scene_client")
    node = client.node
    objects: list = []
    node.create_subscription(ObjectStates, "/simulator/object_states", objects.append, 10)

    def crate_z() -> float | None:
        crates = [o for o in objects[-1].objects if o.name == "crate"] if objects else []
        return crates[0].pose.position.z if crates else None

    # the crate starts at z = 0.5 and comes to rest on the file's floor, half its 0.1 m edge up
    wait_for(lambda: crate_z() is not None and abs(crate_z() - 0.05) < 2e-3, 30, "the crate resting on the floor")
    wait_for(lambda: ("world", "crate") in client.tf, 30, "world -> crate on /tf")
    setter = node.create_client(SetObjectState, "/simulator/set_object_state")
    assert setter.wait_for_service(timeout_sec=30)
    req = SetObjectState.Request(name="crate", pose=Pose())
    req.pose.position.x, req.pose.position.z, req.pose.orientation.w = -0.6, 0.3, 1.0
    res = wait_future(setter.call_async(req), 30, "/simulator/set_object_state")
    assert res.success, res.message
    wait_for(lambda: objects and any(o.name == "crate" and abs(o.pose.position.x + 0.6) < 1e-3
                                     and abs(o.pose.position.z - 0.05) < 2e-3 for o in objects[-1].objects),
             30, "the crate moved to x = -0.6 and resting there")

    # the pendulum (a <motor>, so an effort interface) swings when the effort controller pushes it
    start_controller_manager(processes, yaml=DATA / "scene_controllers.yaml")
    code, out = run_spawner("joint_state_broadcaster", "swing_effort_controller")
    assert code == 0, out
    assert CmClient(node).state("swing_effort_controller") == "active"
    states = JointStateRecorder(node)
    commands = node.create_publisher(Float64MultiArray, "/swing_effort_controller/commands", 10)
    wait_for(lambda: commands.get_subscription_count() > 0, 30, "the controller's command subscription")

    def swung() -> bool:
        commands.publish(Float64MultiArray(data=[3.0]))  # 3 N m at the joint (gear 2): beyond the bob's ~2 N m
        q = states.positions(["swing"])
        return q is not None and abs(q[0]) > 0.5

    wait_for(swung, 60, "the pendulum pushed past 0.5 rad by its motor", poll=0.1)
    commands.publish(Float64MultiArray(data=[0.0]))
    assert math.isfinite(states.positions(["swing"])[0])
