"""`robot-core bringup --robot pr2`: the whole PR2 (example-robot-data's, its base made drivable:
urdf/pr2_mobile.urdf) comes up in topic mode with every controller of config/pr2_controllers.yaml active, the
actuator interfaces of its transmissions listed, an arm's trajectory goal and a gripper goal succeed, and the base
commanded (0.3, 0.2, 0.5) on /base_controller/cmd_vel moves that way in x, y and yaw: measured from the simulator's
ground truth (its /tf of base_footprint, simulated time) once the casters have turned, printed, within 10 %. Prints the
simulator's achieved real-time factor (the full PR2 costs CPU on a 2-core machine). In embedded mode the base
drives the same way on the manager's own physics.
"""

from __future__ import annotations

import itertools
import math
import signal
import statistics
import threading
import time
import uuid
from pathlib import Path

import pytest
import yaml
from ros_harness import NodeProcess, wait_for, wait_future

from robot_core.bringup.run import READY_PREFIX
from robot_core.bringup.supervisor import MARKER_ENV, processes_with_marker

pytest.importorskip("rclpy")
REPO = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.ros, pytest.mark.slow]

ACTIVE = ["joint_state_broadcaster", "r_arm_controller", "l_arm_controller", "torso_controller", "head_controller",
          "r_gripper_controller", "l_gripper_controller", "base_controller"]
BASE_COMMAND = (0.3, 0.2, 0.5)  # m/s, m/s, rad/s


class GroundTruth:
    """The simulator's pose of base_footprint (its /tf, parent not odom) as (sim time, x, y, yaw) samples."""

    def __init__(self, node) -> None:
        from tf2_msgs.msg import TFMessage

        self.lock = threading.Lock()
        self.samples: list[tuple[float, float, float, float]] = []
        node.create_subscription(TFMessage, "/tf", self._on_tf, 100)

    def _on_tf(self, msg) -> None:
        for tf in msg.transforms:
            if tf.child_frame_id == "base_footprint" and tf.header.frame_id != "odom":
                t, q = tf.transform.translation, tf.transform.rotation
                yaw = math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
                stamp = tf.header.stamp.sec + 1e-9 * tf.header.stamp.nanosec
                with self.lock:
                    self.samples.append((stamp, t.x, t.y, yaw))

    def since(self, start: float) -> list[tuple[float, float, float, float]]:
        with self.lock:
            return [s for s in self.samples if s[0] >= start]


def body_twist(samples: list[tuple[float, float, float, float]]) -> tuple[float, float, float]:
    """Mean body-frame (vx, vy, wz) over the samples: each step's displacement turned into the base frame at its
    mid heading, summed, over the time covered."""
    dx = dy = dyaw = 0.0
    for (_, x0, y0, a0), (_, x1, y1, a1) in itertools.pairwise(samples):
        step = math.remainder(a1 - a0, 2 * math.pi)
        h = a0 + 0.5 * step
        dx += math.cos(h) * (x1 - x0) + math.sin(h) * (y1 - y0)
        dy += -math.sin(h) * (x1 - x0) + math.cos(h) * (y1 - y0)
        dyaw += step
    span = samples[-1][0] - samples[0][0]
    return dx / span, dy / span, dyaw / span


def drive_base(node, what: str, events: list[str] | None = None) -> None:
    """(0.3, 0.2, 0.5) on /base_controller/cmd_vel at 20 Hz: 2 s of simulated time for the casters to turn, then 3 s
    measured on the ground truth (/tf of base_footprint), within 10 %. ``events``: the simulator's ~/events seen
    so far, shown when the twist is off (a base that stopped for a while is short on every axis alike)."""
    from geometry_msgs.msg import TwistStamped

    truth = GroundTruth(node)
    wait_for(lambda: truth.samples, 30, "the ground truth /tf of base_footprint")
    cmd_pub = node.create_publisher(TwistStamped, "/base_controller/cmd_vel", 10)

    sent: list[float] = []

    def send() -> None:
        sent.append(time.monotonic())
        msg = TwistStamped()
        msg.twist.linear.x, msg.twist.linear.y, msg.twist.angular.z = BASE_COMMAND
        cmd_pub.publish(msg)

    timer = node.create_timer(0.05, send)
    start = truth.samples[-1][0]
    wait_for(lambda: truth.samples[-1][0] - start > 5.0, 120, "5 s of simulated time driving the base")
    node.destroy_timer(timer)
    window = truth.since(start + 2.0)
    measured = body_twist(window)
    gap = max(b - a for a, b in itertools.pairwise(sent))
    print(f"PR2 base ({what}) commanded (vx, vy, wz) = {BASE_COMMAND}; ground truth over "
          f"{window[-1][0] - window[0][0]:.2f} s of simulated time: ({measured[0]:.3f} m/s, {measured[1]:.3f} m/s, "
          f"{measured[2]:.3f} rad/s); longest pause between two of this test's commands {gap:.2f} s of wall time")
    for got, want in zip(measured, BASE_COMMAND, strict=True):
        assert abs(got - want) <= 0.1 * abs(want), (measured, BASE_COMMAND, "simulator events:", events)


@pytest.fixture
def simulator_config(tmp_path) -> Path:
    """config/pr2_simulator.yaml with the simulator's command watchdog at 10 s of wall time instead of 0.5 s: a
    controller manager that a loaded machine stalls for half a second makes the simulator stop the wheels (their
    velocity commands fall to zero), and the base then comes out short on all three axes alike (64 % once in a
    full CI run). The watchdog has its own tests (test/test_simulator_trust.py)."""
    config = yaml.safe_load((REPO / "config" / "pr2_simulator.yaml").read_text())
    config["simulator"]["ros__parameters"]["command_timeout"] = 10.0
    path = tmp_path / "pr2_simulator.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture
def controllers(tmp_path) -> Path:
    """config/pr2_controllers.yaml with the base's cmd_vel_timeout at 10 s instead of 0.5 s: under a CPU hog this
    test's own 20 Hz sender stalled for 1.4 s of wall time, the base rightly stopped on the stale command and the
    measured speed came out 12 % low. What is measured here is the caster kinematics; the timeout has its own tests
    (test/test_control_caster_base.py)."""
    config = yaml.safe_load((REPO / "config" / "pr2_controllers.yaml").read_text())
    config["base_controller"]["ros__parameters"]["cmd_vel_timeout"] = 10.0
    path = tmp_path / "pr2_controllers.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_pr2_bringup_all_controllers_active_an_arm_goal_succeeds_and_the_base_drives(ros, processes, erd_robots,
                                                                                    controllers, simulator_config):
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from controller_manager_msgs.srv import ListControllers, ListHardwareInterfaces
    from robot_core_interfaces.msg import SimulatorStatus
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectoryPoint

    from robot_core.ros.action_client import ActionClient

    marker = f"test-bringup-pr2-{uuid.uuid4().hex}"
    proc = NodeProcess.console_script("robot-core", "bringup", "--robot", "pr2", "--controllers", controllers,
                                      "--simulator-config", simulator_config, "--no-rbc", "--headless",
                                      env={MARKER_ENV: marker})
    processes.append(proc)
    proc.wait_for_output(READY_PREFIX, timeout=240)
    node = ros.node("pr2_client")
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String

    events: list[str] = []
    node.create_subscription(String, "/simulator/events", lambda m: events.append(m.data),
                             QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                                        durability=DurabilityPolicy.TRANSIENT_LOCAL))

    lister = node.create_client(ListControllers, "/controller_manager/list_controllers")
    assert lister.wait_for_service(timeout_sec=30)
    states = {c.name: c.state for c in wait_future(lister.call_async(ListControllers.Request()), 30).controller}
    assert states == dict.fromkeys(ACTIVE, "active")

    hw = node.create_client(ListHardwareInterfaces, "/controller_manager/list_hardware_interfaces")
    assert hw.wait_for_service(timeout_sec=30)
    reply = wait_future(hw.call_async(ListHardwareInterfaces.Request()), 30)
    commands = {i.name: i.is_claimed for i in reply.command_interfaces}
    assert commands["r_wrist_flex_joint/position"] and not commands["r_wrist_r_motor/position"]
    assert "r_gripper_motor/position" in commands and "l_wrist_l_motor/effort" in {i.name for i in
                                                                                   reply.state_interfaces}

    status: list[SimulatorStatus] = []
    node.create_subscription(SimulatorStatus, "/simulator/status", status.append, 10)
    seen: list[JointState] = []
    node.create_subscription(JointState, "/joint_states", seen.append, 10)
    wait_for(lambda: seen, 30, "/joint_states")
    names = list(seen[-1].name)
    # config/pr2_simulator.yaml starts the arms lowered, where the shoulders' 30 N m hold them
    lift = names.index("r_shoulder_lift_joint")
    assert abs(seen[-1].position[lift] - 1.1) < 0.05, seen[-1].position[lift]
    joint = "r_shoulder_pan_joint"
    start = seen[-1].position[names.index(joint)]
    target = start - 0.4
    client = ActionClient(node, FollowJointTrajectory, "/r_arm_controller/follow_joint_trajectory")
    assert client.wait_for_server(timeout_sec=30)
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = [joint, "r_elbow_flex_joint"]
    goal.trajectory.points = [JointTrajectoryPoint(positions=[target, -0.5], time_from_start=Duration(sec=2))]
    handle = wait_future(client.send_goal_async(goal), 30, "goal acceptance")
    assert handle.accepted
    result = wait_future(handle.get_result_async(), 120, "trajectory result").result
    assert result.error_code == FollowJointTrajectory.Result.SUCCESSFUL, result.error_string
    wait_for(lambda: abs(seen[-1].position[names.index(joint)] - target) < 0.03, 20, f"{joint} at the goal")
    wait_for(lambda: len(status) >= 5, 30, "simulator status")
    rtf = [s.real_time_factor for s in status[-10:]]
    print(f"PR2 topic mode (sim dt 1 ms, manager 100 Hz): achieved real-time factor median "
          f"{statistics.median(rtf):.2f} (min {min(rtf):.2f}, max {max(rtf):.2f}) over {len(rtf)} status messages")

    # the right gripper: a GripperCommand goal opens it through the effort loop (config/pr2_controllers.yaml)
    from action_msgs.msg import GoalStatus
    from control_msgs.action import GripperCommand

    gripper = ActionClient(node, GripperCommand, "/r_gripper_controller/gripper_cmd")
    assert gripper.wait_for_server(timeout_sec=30), "the r_gripper_controller action server"
    goal = GripperCommand.Goal()
    goal.command.position = 0.3  # rad of r_gripper_l_finger_joint, 0 closed .. 0.548 open
    handle = wait_future(gripper.send_goal_async(goal), 30, "gripper goal acceptance")
    assert handle.accepted
    done = wait_future(handle.get_result_async(), 60, "gripper result")
    print(f"PR2 right gripper goal 0.3 rad: status {done.status}, position {done.result.position:.4f} rad, "
          f"reached_goal {done.result.reached_goal}, stalled {done.result.stalled}")
    assert done.status == GoalStatus.STATUS_SUCCEEDED and done.result.reached_goal, done.result
    finger = names.index("r_gripper_l_finger_joint")
    wait_for(lambda: abs(seen[-1].position[finger] - 0.3) < 0.02, 20, "r_gripper_l_finger_joint at 0.3 rad")

    drive_base(node, "topic mode, the simulator's ground truth", events)

    proc.proc.send_signal(signal.SIGINT)
    assert proc.proc.wait(timeout=60) == 0, proc.output()[-3000:]
    wait_for(lambda: not processes_with_marker(marker), 10, "every bringup process to be gone")


def test_pr2_embedded_starts_in_its_pose_and_the_base_drives(ros, processes, erd_robots, controllers):
    """`--mode embedded`: the manager's physics floats the base on a floor (fixed_base: false, floor: true of
    config/pr2_simulator.yaml), starts in its start pose (initial_positions) and publishes the base's ground truth
    (world -> base_footprint on /tf), as the simulator node does."""
    from sensor_msgs.msg import JointState

    marker = f"test-bringup-pr2-embedded-{uuid.uuid4().hex}"
    proc = NodeProcess.console_script("robot-core", "bringup", "--robot", "pr2", "--controllers", controllers,
                                      "--mode", "embedded", "--no-rbc", "--headless", env={MARKER_ENV: marker})
    processes.append(proc)
    proc.wait_for_output(READY_PREFIX, timeout=240)
    node = ros.node("pr2_embedded_client")
    seen: list[JointState] = []
    node.create_subscription(JointState, "/joint_states", seen.append, 10)
    wait_for(lambda: seen, 30, "/joint_states")
    names = list(seen[-1].name)
    for joint, start in (("r_shoulder_lift_joint", 1.1), ("torso_lift_joint", 0.2)):
        assert abs(seen[-1].position[names.index(joint)] - start) < 0.05, (joint, seen[-1].position)
    drive_base(node, "embedded mode, the manager's ground truth")
    proc.proc.send_signal(signal.SIGINT)
    assert proc.proc.wait(timeout=60) == 0, proc.output()[-3000:]
    wait_for(lambda: not processes_with_marker(marker), 10, "every bringup process to be gone")
