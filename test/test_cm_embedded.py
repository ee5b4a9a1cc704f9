"""The embedded mode: the physics engine inside the controller manager, stepping in lockstep with the update
loop. Two runs with the same goal give bit-identical joint trajectories (compared on /joint_states, stamped
with simulated time), the pause / step / resume services control simulated time, and the world, the camera and a
laser scanner are published as the simulator node publishes them."""

from __future__ import annotations

import json

import pytest
from cm_helpers import (
    ARM_JOINTS,
    HOME,
    RC_ARM,
    CmClient,
    JointStateRecorder,
    run_spawner,
    start_controller_manager,
    wait_goal_service,
)
from ros_harness import REPO, NodeProcess, wait_for, wait_future

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

SUCCEEDED = 4
# at half real-time speed the publisher thread has time to spare even on a loaded machine
EMBEDDED = ("hardware_mode:=embedded", f"robot_description_file:={RC_ARM}", "start_paused:=true",
            "real_time_factor:=0.5")


def goal_at(stamp: float):
    from builtin_interfaces.msg import Duration, Time
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = ARM_JOINTS
    goal.trajectory.header.stamp = Time(sec=int(stamp), nanosec=round((stamp % 1) * 1e9))
    mid = list(HOME)
    mid[0], mid[1], mid[3] = 0.5, 0.6, 1.5
    end = list(HOME)
    end[0], end[1], end[3], end[5] = 0.8, 0.4, 1.2, 1.3
    goal.trajectory.points = [JointTrajectoryPoint(positions=mid, time_from_start=Duration(sec=1)),
                              JointTrajectoryPoint(positions=end, time_from_start=Duration(sec=2))]
    return goal, end


def run_once(ros, tag: str) -> tuple[dict[int, tuple[float, ...]], list[float]]:
    """One embedded manager: spawn while paused, queue a goal stamped at t = 0.5 s, step to t = 3 s, record."""
    from control_msgs.action import FollowJointTrajectory
    from robot_core_interfaces.srv import StepSimulation

    from robot_core.ros.action_client import ActionClient

    procs: list[NodeProcess] = []
    try:
        start_controller_manager(procs, *EMBEDDED)
        code, out = run_spawner("joint_state_broadcaster", "joint_trajectory_controller")
        assert code == 0, out
        node = ros.node(f"embedded_client_{tag}")
        rec = JointStateRecorder(node, qos=10)  # reliable: each stepped state is awaited below
        client = ActionClient(node, FollowJointTrajectory, "/joint_trajectory_controller/follow_joint_trajectory")
        assert client.wait_for_server(timeout_sec=30)
        wait_goal_service(client, ARM_JOINTS)
        goal, end = goal_at(0.5)
        handle = wait_future(client.send_goal_async(goal), 20, "goal response")
        assert handle.accepted
        # Stepped, 5 cycles (50 ms) at a time, each step's state awaited: both runs then have the same 60 samples
        # however loaded the machine (running free, a loaded run's newest-value-wins /joint_states kept 60 of 300).
        step = node.create_client(StepSimulation, "/controller_manager/step_simulation")
        assert step.wait_for_service(timeout_sec=20)
        for k in range(1, 61):
            res = wait_future(step.call_async(StepSimulation.Request(steps=5)), 20, f"step {k}")
            assert res.success, res.message
            stamp = res.sim_time.sec * 10**9 + res.sim_time.nanosec
            assert stamp == k * 50_000_000, (k, stamp)
            last = stamp - 10_000_000  # the step's last cycle ran (and broadcast its state) at t - 10 ms
            wait_for(lambda last=last: last in rec.stamps(), 20, f"the state of t = {last * 1e-9:.2f} s")
        result = wait_future(handle.get_result_async(), 60, "goal result")
        assert result.status == SUCCEEDED, result.result.error_string
        if tag == "a":  # the robot is published for rqt_joint_trajectory_controller / MoveIt / rviz
            from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
            from std_msgs.msg import String

            descriptions: list[String] = []
            node.create_subscription(String, "/robot_description", descriptions.append, QoSProfile(
                depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE))
            wait_for(lambda: descriptions, 20, "/robot_description (latched)")
            assert '<robot name="rc_arm"' in descriptions[0].data and "<ros2_control" in descriptions[0].data
        samples = {}
        for m in rec.snapshot():
            index = {n: i for i, n in enumerate(m.name)}
            samples[m.header.stamp.sec * 10**9 + m.header.stamp.nanosec] = tuple(
                m.position[index[j]] for j in ARM_JOINTS) + tuple(m.velocity[index[j]] for j in ARM_JOINTS)
        return samples, end
    finally:
        for p in procs:
            p.stop()


def test_two_embedded_runs_give_identical_trajectories(ros):
    first, end = run_once(ros, "a")
    second, _ = run_once(ros, "b")
    common = sorted(set(first) & set(second))
    moving = [t for t in common if 0.5e9 <= t <= 2.5e9]
    # /joint_states is published newest-value-wins, so a loaded machine may skip some; 200 cycles are in range
    assert len(moving) >= 40, (f"too few common samples during the motion ({len(moving)}; runs had {len(first)} and "
                               f"{len(second)} samples)")  # each step's last state, 0.54 to 2.49 s
    mismatched = [t for t in common if first[t] != second[t]]
    assert not mismatched, f"{len(mismatched)} of {len(common)} samples differ, first at t = {mismatched[0] * 1e-9} s"
    final = first[max(first)][:7]
    assert list(final) == pytest.approx(end, abs=0.02)
    # the arm really moved along the trajectory (not a trivially identical standstill)
    assert max(abs(first[t][0] - HOME[0]) for t in moving) > 0.4


def test_pause_step_and_resume(ros, processes, tmp_path):
    """Also: the robot given as the robot_description *parameter* (URDF text in a parameter file)."""
    import yaml
    from robot_core_interfaces.srv import StepSimulation
    from rosgraph_msgs.msg import Clock

    description = tmp_path / "description.yaml"
    description.write_text(yaml.safe_dump({"controller_manager": {"ros__parameters": {
        "robot_description": RC_ARM.read_text()}}}))
    start_controller_manager(processes, "hardware_mode:=embedded", "start_paused:=true",
                             extra_args=("--params-file", str(description)))
    node = ros.node("embedded_stepper")
    cm = CmClient(node)
    clocks: list[Clock] = []
    node.create_subscription(Clock, "/clock", clocks.append, 10)
    step = node.create_client(StepSimulation, "/controller_manager/step_simulation")
    assert step.wait_for_service(timeout_sec=20)
    res = wait_future(step.call_async(StepSimulation.Request(steps=25)), 20)
    assert res.success, res.message
    assert (res.sim_time.sec, res.sim_time.nanosec) == (0, 250_000_000), "25 cycles of 10 ms"
    wait_for(lambda: clocks and clocks[-1].clock.nanosec == 250_000_000, 10, "/clock at 0.25 s")
    stats = json.loads(cm.call("loop_statistics").message)
    assert stats["cycles"] == 25
    assert cm.call("resume_simulation").success
    wait_for(lambda: clocks[-1].clock.sec >= 1, 20, "simulated time running after resume")
    res = wait_future(step.call_async(StepSimulation.Request(steps=1)), 20)
    assert not res.success, "stepping is refused while running"
    assert cm.call("pause_simulation").success


def test_embedded_world_objects_and_camera(ros, processes):
    """The embedded manager in the table-top world publishes what the simulator node would: a free box's pose on
    /tf and ~/object_states, the table and the placed arm on /tf_static, and rc_arm's scene camera at its rate of
    simulated time (stamps on whole periods: 5 Hz = 200 steps of the 1 ms physics, 20 cycles of 10 ms)."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from robot_core_interfaces.msg import ObjectStates
    from sensor_msgs.msg import CameraInfo, Image
    from tf2_msgs.msg import TFMessage

    from robot_core.bringup.plan import share_dir

    world = share_dir() / "config" / "worlds" / "table_top.yaml"
    start_controller_manager(processes, "hardware_mode:=embedded", f"robot_description_file:={RC_ARM}",
                             f"world:={world}", "cameras:=true", "real_time_factor:=0.5")
    node = ros.node("embedded_world_client")
    images: list[Image] = []
    infos: list[CameraInfo] = []
    objects: list[ObjectStates] = []
    box_tf: list = []
    static: dict[tuple[str, str], object] = {}
    node.create_subscription(Image, "/scene_camera/image_raw", images.append, 10)
    node.create_subscription(CameraInfo, "/scene_camera/camera_info", infos.append, 10)
    node.create_subscription(ObjectStates, "/controller_manager/object_states", objects.append, 10)
    node.create_subscription(TFMessage, "/tf", lambda m: box_tf.extend(
        t for t in m.transforms if (t.header.frame_id, t.child_frame_id) == ("world", "box_small")), 100)
    node.create_subscription(TFMessage, "/tf_static", lambda m: static.update(
        {(t.header.frame_id, t.child_frame_id): t for t in m.transforms}), QoSProfile(
        depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE))
    wait_for(lambda: len(images) >= 3, 60, "three frames on /scene_camera/image_raw")
    wait_for(lambda: box_tf and objects, 30, "box_small on /tf and ~/object_states")
    wait_for(lambda: ("world", "table") in static and ("world", "base_link") in static, 20, "/tf_static")
    img = images[-1]
    assert (img.width, img.height, img.encoding) == (480, 360, "rgb8") and len(img.data) == 480 * 360 * 3
    stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in images]
    assert all(s % 200_000_000 == 0 for s in stamps), stamps  # due on whole periods of simulated time
    assert stamps == sorted(set(stamps)), stamps
    assert infos and infos[-1].width == 480
    names = {o.name for o in objects[-1].objects}
    assert {"box_small", "box_medium", "box_large"} <= names and "table" not in names  # free objects only
    z = box_tf[-1].transform.translation.z
    assert 0.2 < z < 0.3, z  # resting on the table top (0.2 m) in the world frame
    # ~/set_object_state teleports the box (between two control cycles); /tf follows; bad requests are refused
    from robot_core_interfaces.srv import SetObjectState

    client = node.create_client(SetObjectState, "/controller_manager/set_object_state")
    assert client.wait_for_service(timeout_sec=20)

    def request(name: str, w: float = 1.0) -> SetObjectState.Request:
        req = SetObjectState.Request(name=name)
        req.pose.position.x, req.pose.position.y, req.pose.position.z = 0.3, 0.4, 0.5
        req.pose.orientation.w = w
        return req

    for bad, said in ((request("no_such_box"), "no_such_box"), (request("box_small", 0.5), "unit")):
        res = wait_future(client.call_async(bad), 20, "refusal")
        assert not res.success and said in res.message, res.message
    res = wait_future(client.call_async(request("box_small")), 20, "set_object_state")
    assert res.success, res.message
    moved = lambda: box_tf and abs(box_tf[-1].transform.translation.x - 0.3) < 0.01 and abs(  # noqa: E731
        box_tf[-1].transform.translation.y - 0.4) < 0.01
    wait_for(moved, 20, "box_small on /tf at its new place")


def test_embedded_laser_scan_arrives_at_its_rate_and_reads_the_wall(ros, processes, tmp_path):
    """The embedded manager publishes a Gazebo-described laser (urdf/sensor_bot.urdf, TurtleBot3's layout) as the
    simulator node does (test_simulator_sensors.py): 10 Hz of simulated time, the wall ahead where it is."""
    from sensor_msgs.msg import LaserScan
    from test_simulator_sensors import LASER_RATE, SCAN_X, WALL_X, WORLD

    world = tmp_path / "wall.yaml"
    world.write_text(WORLD)
    start_controller_manager(processes, "hardware_mode:=embedded",
                             f"robot_description_file:={REPO / 'urdf' / 'sensor_bot.urdf'}", f"world:={world}",
                             "cameras:=false", "real_time_factor:=0.5")
    node = ros.node("embedded_scan_client")
    scans: list[LaserScan] = []
    node.create_subscription(LaserScan, "/lidar/scan", scans.append, 10)

    def stamps() -> list[float]:
        return sorted({m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in list(scans)})

    span = 2.0  # s of simulated time
    wait_for(lambda: len(s := stamps()) > 2 and s[-1] - s[0] >= span, 90, f"{span} s of simulated time of scans")
    s = stamps()
    rate = (len(s) - 1) / (s[-1] - s[0])
    scan = scans[-1]
    print(f"\nembedded scan {rate:.2f} Hz of simulated time, straight ahead {scan.ranges[0]:.4f} m (wall at "
          f"{WALL_X - SCAN_X:.4f} m)")
    # due on whole periods of simulated time (100 ms), and (a scan a loaded subscriber missed aside) every one
    assert all(abs(t * LASER_RATE - round(t * LASER_RATE)) < 1e-6 for t in s), s
    assert rate >= 0.9 * LASER_RATE and rate == pytest.approx(LASER_RATE, rel=0.1)
    assert scan.header.frame_id == "base_scan" and len(scan.ranges) == 360
    assert scan.ranges[0] == pytest.approx(WALL_X - SCAN_X, abs=0.01)
