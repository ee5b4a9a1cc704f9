"""Many robots in one simulator, brought up from a robots file: `robot-core bringup --robots FILE` runs one simulator
holding two rc_arms (robot_core.model.robot_group) and, per arm, its controller manager and spawners (its entry's
controllers YAML) and RBC under its namespace; both arms follow a trajectory goal sent at the same moment. Each
robot's own description is latched on /<ns>/robot_description, the simulator's per-robot services take its own
names, and an RBC reacher's contact frame and wrench carry the robot's frame prefix."""

from __future__ import annotations

import signal
import uuid

import pytest
import yaml
from ros_harness import REPO, NodeProcess, answered_eventually, wait_for, wait_future
from sim_helpers import joint1_goals_at_once

from robot_core.bringup.run import READY_PREFIX, rbc_available
from robot_core.bringup.supervisor import MARKER_ENV, processes_with_marker

pytest.importorskip("rclpy")
pytestmark = [pytest.mark.ros, pytest.mark.slow]

TARGETS = {"arm1": 0.3, "arm2": -0.25}


def _files(tmp_path):
    """A robots file whose entries name a lean controllers YAML (broadcaster and JTC only: fewer spawner runs)."""
    controllers = yaml.safe_load((REPO / "config" / "controllers.yaml").read_text())
    controllers["robot_core_bringup"] = {"ros__parameters": {
        "active_controllers": ["joint_state_broadcaster", "joint_trajectory_controller"], "inactive_controllers": []}}
    (tmp_path / "lean_controllers.yaml").write_text(yaml.safe_dump(controllers))
    robots = tmp_path / "robots.yaml"
    robots.write_text(yaml.safe_dump({"robots": [
        {"namespace": "arm1", "description": str(REPO / "urdf" / "rc_arm.urdf"), "base_pose": [0.0, -0.6, 0.0],
         "controllers": "lean_controllers.yaml"},
        {"namespace": "arm2", "description": str(REPO / "urdf" / "rc_arm.urdf"),
         "base_pose": [0.0, 0.6, 0.0, 0.0, 0.0, 3.14159], "controllers": "lean_controllers.yaml"}]}))
    return robots


def test_two_arms_from_a_robots_file_follow_goals_at_the_same_time(ros, processes, tmp_path):
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from robot_core_interfaces.srv import ApplyWrench, SetJointState
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    from tf2_msgs.msg import TFMessage


    marker = f"test-robot-group-{uuid.uuid4().hex}"
    bringup = NodeProcess.console_script("robot-core", "bringup", "--robots", str(_files(tmp_path)), "--headless",
                                         "--ready-timeout", "230",
                                         env={MARKER_ENV: marker}, cwd=REPO)
    processes.append(bringup)
    bringup.wait_for_output(READY_PREFIX, timeout=240)
    assert "arm1/joint_trajectory_controller" in bringup.output() and "arm2.controller_manager" in bringup.output()

    node = ros.node("robot_group_client")
    seen: dict[str, list[JointState]] = {ns: [] for ns in TARGETS}
    descriptions: dict[str, list[str]] = {ns: [] for ns in TARGETS}
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    for ns in TARGETS:
        node.create_subscription(JointState, f"/{ns}/joint_states", seen[ns].append, 10)
        node.create_subscription(String, f"/{ns}/robot_description", lambda m, ns=ns: descriptions[ns].append(m.data),
                                 latched)
    frames: set[tuple[str, str]] = set()
    node.create_subscription(TFMessage, "/tf", lambda m: frames.update(
        (t.header.frame_id, t.child_frame_id) for t in m.transforms), 50)
    wait_for(lambda: all(seen.values()), 30, "/<ns>/joint_states of both")
    # each robot's own joint names on its own topics; one tf tree with both robots' prefixed frames
    assert sorted(seen["arm1"][-1].name) == sorted(seen["arm2"][-1].name) and "joint1" in seen["arm1"][-1].name
    wait_for(lambda: {("arm1/base_link", "arm1/link1"), ("arm2/base_link", "arm2/link1")} <= frames, 30,
             "both robots' frames on /tf")
    # each robot's own description (its names as written; the frame prefix is tf's business), latched
    wait_for(lambda: all(descriptions.values()), 30, "/<ns>/robot_description of both")
    for text in (descriptions["arm1"][0], descriptions["arm2"][0]):
        assert '<joint name="joint1"' in text and "arm1/" not in text and "arm2/" not in text
    topics = {name for name, _ in node.get_topic_names_and_types()}
    assert not {"/robot_joint_states", "/robot_joint_commands", "/robot_description", "/joint_states"} & topics
    # only the simulator publishes /clock. Waited on: a writer can be known before the message naming its node
    # (then "_NODE_NAME_UNKNOWN_"), and a killed earlier test's writer stays until its lease ends (20 s)
    def clock_publishers() -> list[tuple[str, str]]:
        return [(i.node_namespace, i.node_name) for i in node.get_publishers_info_by_topic("/clock")]

    try:
        wait_for(lambda: clock_publishers() == [("/", "simulator")], 40, "the simulator as /clock's only publisher")
    except TimeoutError:
        raise AssertionError(f"/clock publishers: {clock_publishers()}") from None

    targets = joint1_goals_at_once(node, seen, TARGETS)
    assert abs(targets["arm1"] - targets["arm2"]) > 0.3  # different goals, each reached by its own arm

    # the simulator's services of one robot, in that robot's own names (/<ns>/simulator/...)
    setter = node.create_client(SetJointState, "/arm2/simulator/set_joint_state")
    assert setter.wait_for_service(timeout_sec=30)
    request = SetJointState.Request()
    request.state.name, request.state.position = ["no_such_joint"], [0.0]
    # a fresh client's first answers may be dropped until the server has discovered it: warm up with a refusal
    answered_eventually(setter.call_async, request, "an answer of /arm2/simulator/set_joint_state")
    answer = wait_future(setter.call_async(request), 30)
    assert not answer.success and "arm2/no_such_joint" in answer.message
    request.state.name, request.state.position = ["joint1"], [_joint1(seen["arm2"][-1])]
    answer = wait_future(setter.call_async(request), 30)
    assert answer.success, answer.message
    wrench = node.create_client(ApplyWrench, "/arm1/simulator/apply_wrench")
    assert wrench.wait_for_service(timeout_sec=30)
    answered_eventually(wrench.call_async, ApplyWrench.Request(link_name="no_such_link"),
                        "an answer of /arm1/simulator/apply_wrench")
    push = ApplyWrench.Request(link_name="link2")
    push.wrench.force.z, push.duration.nanosec = 1.0, 100_000_000
    answer = wait_future(wrench.call_async(push), 30)
    assert answer.success and "arm1/link2" in answer.message, answer.message

    if rbc_available():  # arm1's RBC: a TouchContact's contact frame on /tf and its wrench under arm1's prefix
        from geometry_msgs.msg import WrenchStamped
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter
        from robot_core_interfaces.srv import L2Control

        l2 = node.create_client(L2Control, "/arm1/rbc/l2_ctrl")
        assert l2.wait_for_service(timeout_sec=30)
        answered_eventually(l2.call_async, L2Control.Request(cmd="list_re"), "an answer of /arm1/rbc/l2_ctrl")
        created = wait_future(l2.call_async(L2Control.Request(cmd="create_re", data="TC", name="TC0")), 30)
        assert created.success, created.message
        params = node.create_client(SetParameters, "/arm1/TC0/set_parameters")
        assert params.wait_for_service(timeout_sec=30)
        answered_eventually(params.call_async, SetParameters.Request(), "an answer of /arm1/TC0/set_parameters")
        set_ = wait_future(params.call_async(SetParameters.Request(parameters=[
            Parameter("end_link", value="tcp").to_parameter_msg(),
            Parameter("link", value="link7").to_parameter_msg()])), 30)
        assert all(r.successful for r in set_.results), [r.reason for r in set_.results]
        wrenches: list[WrenchStamped] = []
        node.create_subscription(WrenchStamped, "/arm1/TC0/wrench_base", wrenches.append, 10)
        wait_for(lambda: ("arm1/base_link", "arm1/TC0_contact") in frames, 30, "arm1's contact frame on /tf")
        wait_for(lambda: wrenches, 30, "/arm1/TC0/wrench_base")
        assert wrenches[-1].header.frame_id == "arm1/base_link"
        assert not [f for f in frames if "TC0_contact" in f[1] and f[1] != "arm1/TC0_contact"]

    bringup.proc.send_signal(signal.SIGINT)
    assert bringup.proc.wait(timeout=60) == 0, bringup.output()[-3000:]
    wait_for(lambda: not processes_with_marker(marker), 15, "every bringup process to be gone")


def test_the_group_s_cameras_and_lasers_publish_under_each_robot_s_namespace(ros, processes, tmp_path):
    """Two sensor_bots in one simulator: their lidar scans and camera images on /<ns>/..., in prefixed frames, the
    camera's optical frame on /tf_static below the robot's prefixed link; sensors / sensor_rates take the prefixed
    names."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import CameraInfo, Image, LaserScan
    from tf2_msgs.msg import TFMessage

    robots = tmp_path / "bots.yaml"
    bot = str(REPO / "urdf" / "sensor_bot.urdf")
    robots.write_text(yaml.safe_dump({"robots": [{"namespace": "bot1", "description": bot},
                                                 {"namespace": "bot2", "description": bot,
                                                  "base_pose": [1.5, 0.0, 0.1, 0.0, 0.0, 3.14159]}]}))
    # sensors and sensor_rates take the group's (prefixed) sensor names
    sim = NodeProcess.console_script("simulator", "--ros-args", "-p", f"robots:={robots}",
                                     "-p", "sensors:=[bot1/lidar, bot1/camera, bot2/lidar]",
                                     "-p", "sensor_rates.bot1/camera:=5.0")
    processes.append(sim)
    sim.wait_for_output("robot group from", timeout=120)
    node = ros.node("robot_group_sensors")
    got: dict[str, list] = {}
    for name, kind in (("/bot1/lidar/scan", LaserScan), ("/bot2/lidar/scan", LaserScan),
                       ("/bot1/camera/image_raw", Image), ("/bot1/camera/camera_info", CameraInfo)):
        got[name] = []
        node.create_subscription(kind, name, got[name].append, 10)
    static: set[tuple[str, str]] = set()
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(TFMessage, "/tf_static", lambda m: static.update(
        (t.header.frame_id, t.child_frame_id) for t in m.transforms), latched)
    wait_for(lambda: all(got.values()), 60, "every robot's sensor topics")
    for ns in ("bot1", "bot2"):
        assert got[f"/{ns}/lidar/scan"][-1].header.frame_id == f"{ns}/base_scan"
    assert got["/bot1/camera/image_raw"][-1].header.frame_id == "bot1/camera_optical_frame"
    assert got["/bot1/camera/camera_info"][-1].width == 160
    assert "camera 'bot1/camera' 160x120 rgb+depth at 5 Hz on bot1/camera/image_raw" in sim.output()
    # they share one world: bot1's lidar sees bot2's base (raised 0.1 m into its scan plane) about 1.4 m ahead
    scan = got["/bot1/lidar/scan"][-1]
    assert 1.2 < scan.ranges[0] < 1.6, list(scan.ranges[:3])
    wait_for(lambda: {("bot1/camera_link", "bot1/camera_optical_frame"), ("world", "bot2/base_link")} <= static, 30,
             "the group's fixed frames on /tf_static")
    topics = {name for name, _ in node.get_topic_names_and_types()}
    assert not {"/lidar/scan", "/camera/image_raw", "/bot2/camera/image_raw"} & topics  # bot2's camera not chosen


def _joint1(msg) -> float:
    return msg.position[list(msg.name).index("joint1")]


def test_an_mjcf_robot_and_a_urdf_arm_share_one_simulator(ros, processes, tmp_path):
    """A menagerie-style MJCF robot joins a group beside a URDF arm: its own topic pair in its own joint names, its
    prefixed frames on /tf, its description latched under its namespace; and each robot's ``reset`` under its
    namespace takes its own names and resets that robot alone, the other arm holding its commanded pose. A
    free-based MJCF quadruped beside them: no free joint among its joint states, its trunk on /tf below its placed
    root and its ground truth on /dog/simulator/base_state, standing on its file's floor at its entry's pose, and
    its own reset lifts it back to its start pose."""
    from nav_msgs.msg import Odometry
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from robot_core_interfaces.srv import ResetSimulation
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    from std_srvs.srv import Trigger
    from tf2_msgs.msg import TFMessage

    robots = tmp_path / "mixed.yaml"
    robots.write_text(yaml.safe_dump({"robots": [
        {"namespace": "arm1", "description": str(REPO / "urdf" / "rc_arm.urdf"), "base_pose": [0.0, -0.6, 0.0]},
        {"namespace": "arm2", "description": str(REPO / "test" / "data" / "mjcf" / "menagerie_style.xml"),
         "base_pose": [0.0, 0.6, 0.0, 0.0, 0.0, 1.5708]},
        {"namespace": "dog", "description": str(REPO / "test" / "data" / "mjcf" / "free_base_quadruped.xml"),
         "base_pose": [3.0, 0.0, 0.0]}]}))
    sim = NodeProcess.console_script("simulator", "--ros-args", "-p", f"robots:={robots}")
    processes.append(sim)
    sim.wait_for_output("robot group from", timeout=120)
    node = ros.node("robot_group_mjcf")
    states: dict[str, list[JointState]] = {"arm1": [], "arm2": [], "dog": []}
    for ns in states:
        node.create_subscription(JointState, f"/{ns}/robot_joint_states", states[ns].append, 10)
    description: list[str] = []
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(String, "/arm2/robot_description", lambda m: description.append(m.data), latched)
    frames: set[tuple[str, str]] = set()
    node.create_subscription(TFMessage, "/tf", lambda m: frames.update(
        (t.header.frame_id, t.child_frame_id) for t in m.transforms), 50)
    wait_for(lambda: all(states.values()), 60, "both robots' joint states")
    assert list(states["arm2"][-1].name) == ["j1", "j2", "j3", "slide", "finger_a", "finger_b"]
    assert "joint1" in states["arm1"][-1].name
    wait_for(lambda: {("arm2/link1", "arm2/link2:j2"), ("arm1/base_link", "arm1/link1")} <= frames, 30,
             "both robots' prefixed frames on /tf")
    assert list(states["dog"][-1].name) == [f"{leg}_{j}" for leg in ("fl", "fr", "hl", "hr") for j in ("hip", "knee")]
    dog: list[Odometry] = []
    node.create_subscription(Odometry, "/dog/simulator/base_state", dog.append, 10)
    wait_for(lambda: ("dog/world", "dog/trunk") in frames, 30, "the quadruped's trunk on /tf")
    wait_for(lambda: dog and abs(dog[-1].pose.pose.position.z - 0.32) < 0.005, 60,
             "the quadruped standing on its floor (/dog/simulator/base_state)")
    truth = dog[-1]
    assert (truth.header.frame_id, truth.child_frame_id) == ("world", "dog/trunk")
    assert abs(truth.pose.pose.position.x - 3.0) < 0.005 and abs(truth.pose.pose.position.y) < 0.005
    wait_for(lambda: description, 30, "/arm2/robot_description")
    assert 'name="j1"' in description[0] and "arm2/" not in description[0]

    def position(ns: str, joint: str) -> float:
        msg = states[ns][-1]
        return msg.position[list(msg.name).index(joint)]

    commands = {ns: node.create_publisher(JointState, f"/{ns}/robot_joint_commands", 10) for ns in states}

    def command() -> None:  # (repeated: the first messages may go before the simulator has discovered us)
        commands["arm1"].publish(JointState(name=["joint1"], position=[0.4]))
        commands["arm2"].publish(JointState(name=["j1"], position=[0.5]))

    wait_for(lambda: command() or (abs(position("arm2", "j1") - 0.5) < 0.02
                                   and abs(position("arm1", "joint1") - 0.4) < 0.02),
             60, "both robots at their commanded positions", poll=0.1)

    reset = node.create_client(ResetSimulation, "/arm2/simulator/reset")
    assert reset.wait_for_service(timeout_sec=30)
    answered_eventually(reset.call_async, ResetSimulation.Request(joint_names=["arm1/joint1"], positions=[0.0]),
                        "an answer of /arm2/simulator/reset")
    refused = wait_future(reset.call_async(ResetSimulation.Request(joint_names=["joint1"], positions=[0.0])), 30)
    assert not refused.success and "arm2/joint1" in refused.message, refused.message  # arm1's names are not arm2's
    answer = wait_future(reset.call_async(ResetSimulation.Request(joint_names=["j2"], positions=[0.3])), 30)
    assert answer.success and "robot 'arm2' reset" in answer.message, answer.message
    count = len(states["arm2"])
    wait_for(lambda: len(states["arm2"]) > count + 5, 30, "arm2's states after the reset")
    assert abs(position("arm2", "j1")) < 0.02 and abs(position("arm2", "j2") - 0.3) < 0.02
    assert abs(position("arm1", "joint1") - 0.4) < 0.02  # the other robot went on

    reset_dog = node.create_client(ResetSimulation, "/dog/simulator/reset")
    assert reset_dog.wait_for_service(timeout_sec=30)
    # paused: running, the trunk falls back to 0.32 m within 0.2 s, which a loaded reader may not see a state of
    pause, resume = (node.create_client(Trigger, f"/simulator/{what}") for what in ("pause", "resume"))
    assert pause.wait_for_service(timeout_sec=30) and resume.wait_for_service(timeout_sec=30)
    assert wait_future(pause.call_async(Trigger.Request()), 30).success
    standing = len(dog)
    answer = wait_future(reset_dog.call_async(ResetSimulation.Request()), 30)
    assert answer.success and "robot 'dog' reset" in answer.message, answer.message
    # back at its start pose (0.45 m up), published at the reset: every state before it was at 0.32 m
    wait_for(lambda: any(m.pose.pose.position.z > 0.44 for m in dog[standing:]), 30,
             "the quadruped's trunk back at its start pose after its reset")
    assert wait_future(resume.call_async(Trigger.Request()), 30).success
