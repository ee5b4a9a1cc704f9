"""Sensors end to end over DDS, in both modes: the spawner starts the force-torque, IMU, range and pose
broadcasters of the sensor rig (test/data/urdf/sensor_rig.urdf), which publish WrenchStamped, Imu, Range and
PoseStamped (+ /tf) with what the simulated rig measures; the manager lists the sensor interfaces. Topic mode:
the simulator publishes /robot_sensor_states, and a sensor stream that goes quiet (joint states still flowing)
fails the topic-based component, which recovers when it flows again. A simulator given a sensor on an unknown
link exits 1 with one line naming file, line and element; at run time a bad description on the topic and a
broadcaster naming a missing sensor are refused while the nodes stay up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cm_helpers import CmClient, run_spawner, start_controller_manager
from robot_files import DATA_URDF
from ros_harness import NodeProcess, wait_for

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

RIG = DATA_URDF / "sensor_rig.urdf"
G = 9.81
PLATE = 0.5  # kg on the scale (nothing else on it)
NAMES = ["ft_broadcaster", "imu_broadcaster", "range_broadcaster", "pose_broadcaster"]
YAML = """controller_manager:
  ros__parameters:
    update_rate: 100
    ft_broadcaster: {type: force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster}
    imu_broadcaster: {type: imu_sensor_broadcaster/IMUSensorBroadcaster}
    range_broadcaster: {type: range_sensor_broadcaster/RangeSensorBroadcaster}
    pose_broadcaster: {type: pose_broadcaster/PoseBroadcaster}
ft_broadcaster:
  ros__parameters: {sensor_name: scale_ft, frame_id: plate}
imu_broadcaster:
  ros__parameters: {sensor_name: base_imu, frame_id: base_link}
range_broadcaster:
  ros__parameters: {sensor_name: mast_range, frame_id: mast, radiation_type: 1, min_range: 0.02, max_range: 2.0}
pose_broadcaster:
  ros__parameters: {pose_name: rotor_pose, frame_id: world, tf: {child_frame_id: rotor_measured}}
"""


def _yaml(tmp_path: Path) -> Path:
    path = tmp_path / "sensor_controllers.yaml"
    path.write_text(YAML, encoding="utf-8")
    return path


class SensorListener:
    """Keeps the newest message of each broadcaster topic and the newest /tf transform per child frame."""

    def __init__(self, node: Any):
        from geometry_msgs.msg import PoseStamped, WrenchStamped
        from sensor_msgs.msg import Imu, Range
        from tf2_msgs.msg import TFMessage

        self.latest: dict[str, Any] = {}
        self.tf: dict[str, Any] = {}
        for key, msg_type, topic in (("wrench", WrenchStamped, "/ft_broadcaster/wrench"),
                                     ("imu", Imu, "/imu_broadcaster/imu"),
                                     ("range", Range, "/range_broadcaster/range"),
                                     ("pose", PoseStamped, "/pose_broadcaster/pose")):
            node.create_subscription(msg_type, topic, lambda m, k=key: self.latest.__setitem__(k, m), 10)
        node.create_subscription(TFMessage, "/tf", self._on_tf, 100)

    def _on_tf(self, msg: Any) -> None:
        for t in msg.transforms:
            self.tf[t.child_frame_id] = t


def _check_readings(listener: SensorListener, what: str) -> None:
    wait_for(lambda: len(listener.latest) == 4, 60, f"{what}: a message from each of the four broadcasters")

    def settled() -> bool:
        w = listener.latest["wrench"].wrench.force
        return abs(w.z + PLATE * G) < 0.01 * PLATE * G

    wait_for(settled, 30, f"{what}: the scale reading the plate's weight")
    wrench, imu = listener.latest["wrench"], listener.latest["imu"]
    rng, pose = listener.latest["range"], listener.latest["pose"]
    print(f"{what}: wrench {wrench.wrench.force}, imu acc {imu.linear_acceleration}, range {rng.range:.4f}, "
          f"pose {pose.pose.position}")
    assert wrench.header.frame_id == "plate"
    assert imu.header.frame_id == "base_link" and imu.linear_acceleration.z == pytest.approx(G, rel=0.01)
    assert imu.orientation.w == pytest.approx(1.0, abs=1e-6) and abs(imu.angular_velocity.z) < 1e-3
    assert rng.header.frame_id == "mast" and rng.radiation_type == 1 and rng.max_range == pytest.approx(2.0)
    assert rng.range == pytest.approx(0.6 - 0.07, abs=1e-3)  # the mast looks down at the plate's top
    assert pose.header.frame_id == "world"
    assert (pose.pose.position.x, pose.pose.position.y, pose.pose.position.z) == pytest.approx((0.3, 0.0, 0.1),
                                                                                                abs=1e-4)
    assert wrench.header.stamp.sec + wrench.header.stamp.nanosec > 0
    wait_for(lambda: "rotor_measured" in listener.tf, 30, f"{what}: the pose broadcaster's transform on /tf")
    tf = listener.tf["rotor_measured"]
    assert tf.header.frame_id == "world" and tf.transform.translation.x == pytest.approx(0.3, abs=1e-4)


def _sensor_interfaces(cm: CmClient) -> set[str]:
    res = cm.call("list_hardware_interfaces")
    return {i.name for i in res.state_interfaces}


def test_topic_mode_broadcasters_publish_the_simulated_sensors(ros, processes, tmp_path):
    sim = NodeProcess.console_script("simulator", "--ros-args", "-p", f"urdf_path:={RIG}")
    processes.append(sim)
    sim.wait_for_output("simulator ready", timeout=60)
    start_controller_manager(processes, f"robot_description_file:={RIG}", yaml=_yaml(tmp_path))
    node = ros.node("sensor_topic_client")
    listener = SensorListener(node)
    cm = CmClient(node)
    assert {"scale_ft/force.z", "base_imu/orientation.w", "mast_range/range",
            "rotor_pose/position.x"} <= _sensor_interfaces(cm)
    code, out = run_spawner(*NAMES)
    assert code == 0, out
    _check_readings(listener, "topic mode")


def test_embedded_mode_broadcasters_publish_the_simulated_sensors(ros, processes, tmp_path):
    start_controller_manager(processes, "hardware_mode:=embedded", f"robot_description_file:={RIG}",
                             yaml=_yaml(tmp_path))
    node = ros.node("sensor_embedded_client")
    listener = SensorListener(node)
    cm = CmClient(node)
    assert "scale_ft/torque.x" in _sensor_interfaces(cm)
    code, out = run_spawner(*NAMES)
    assert code == 0, out
    _check_readings(listener, "embedded mode")


def test_a_quiet_sensor_stream_fails_the_topic_component_and_it_recovers(ros, processes, tmp_path):
    """The simulator's sensor messages reach the manager through a relay the test can stop; the joint states keep
    flowing, so only the sensor watch can trip."""
    from control_msgs.msg import DynamicJointState
    from rclpy.qos import qos_profile_sensor_data

    sim = NodeProcess.console_script("simulator", "--ros-args", "-p", f"urdf_path:={RIG}",
                                     "-p", "sensor_states_topic:=/rig_sensor_source")
    processes.append(sim)
    sim.wait_for_output("simulator ready", timeout=60)
    cm_proc = start_controller_manager(processes, f"robot_description_file:={RIG}", "state_timeout:=1.0",
                                       yaml=_yaml(tmp_path))
    node = ros.node("sensor_relay")
    relaying = [True]
    relayed = [0]
    out = node.create_publisher(DynamicJointState, "/robot_sensor_states", 10)

    def relay(msg: Any) -> None:
        if relaying[0]:
            out.publish(msg)
            relayed[0] += 1

    node.create_subscription(DynamicJointState, "/rig_sensor_source", relay, qos_profile_sensor_data)
    listener = SensorListener(node)
    code, text = run_spawner(*NAMES)
    assert code == 0, text
    wait_for(lambda: "wrench" in listener.latest and relayed[0] > 0, 60, "sensor values through the relay")
    relaying[0] = False
    wait_for(lambda: "failed: no sensor states on '/robot_sensor_states'" in cm_proc.output(), 30,
             "the component failing on its quiet sensor stream")
    assert "no joint states" not in cm_proc.output()
    relaying[0] = True
    wait_for(lambda: "recovered" in cm_proc.output(), 30, "the component recovering")


def test_a_sensor_on_an_unknown_link_stops_the_simulator_with_one_line(tmp_path):
    bad = tmp_path / "bad_rig.urdf"
    bad.write_text(RIG.read_text(encoding="utf-8").replace('<param name="frame_id">mast</param>',
                                                           '<param name="frame_id">nowhere</param>'),
                   encoding="utf-8")
    sim = NodeProcess.console_script("simulator", "--ros-args", "-p", f"urdf_path:={bad}")
    try:
        wait_for(lambda: not sim.alive(), 60, "the simulator to exit")
        text = sim.output()
    finally:
        sim.stop()
    print(text)
    assert sim.proc.returncode == 1
    line = next(ln for ln in text.splitlines() if "frame_id 'nowhere'" in ln)
    assert f"{bad}:" in line and "<sensor name='mast_range'>" in line and "is not a link" in line


def test_bad_sensors_at_run_time_are_refused_and_the_nodes_stay_up(ros, processes, tmp_path):
    """A description with a bad sensor arriving on /robot_description is refused with one line and the simulator
    waits on; a broadcaster naming a sensor the hardware lacks is refused by the manager, which stays up."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String

    sim = NodeProcess.console_script("simulator", "--ros-args", "-p", "publish_robot_description:=false")
    processes.append(sim)
    sim.wait_for_output("waiting for the robot description", timeout=60)
    node = ros.node("sensor_description_publisher")
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    pub = node.create_publisher(String, "/robot_description", latched)
    bad = RIG.read_text(encoding="utf-8").replace('<state_interface name="range"/>',
                                                  '<state_interface name="humidity"/>')
    pub.publish(String(data=bad))
    sim.wait_for_output("state interface 'humidity' is not one the simulator provides", timeout=60)
    line = next(ln for ln in sim.output().splitlines() if "'humidity'" in ln)
    print(line)
    assert "<sensor name='mast_range'>" in line and sim.alive()
    pub.publish(String(data=RIG.read_text(encoding="utf-8")))
    sim.wait_for_output("simulator ready", timeout=60)

    yaml = tmp_path / "bad_broadcaster.yaml"
    yaml.write_text(YAML.replace("sensor_name: base_imu", "sensor_name: no_such_imu"), encoding="utf-8")
    start_controller_manager(processes, f"robot_description_file:={RIG}", yaml=yaml)
    code, out = run_spawner("imu_broadcaster")
    print(out[-500:])
    assert code != 0 and "no_such_imu/orientation.x" in out
    cm = CmClient(ros.node("sensor_cm_client"))
    assert cm.state("imu_broadcaster") in ("inactive", "unconfigured", None)
    code, out = run_spawner("ft_broadcaster")
    assert code == 0, out
