"""The caster base over DDS, topic mode: the simulator (urdf/caster_base.urdf floating on its floor) and the
controller manager as two processes, the spawner starting caster_base_controller from
config/caster_base_controllers.yaml. A TwistStamped (x, y and yaw) on /caster_base_controller/cmd_vel moves the
base that way (the simulator's own /tf of base_footprint), ~/odom reports it, ~/caster_states the casters'
commands, and a NaN command is refused with a warning naming the field."""

from __future__ import annotations

import math
import threading

import pytest
from cm_helpers import run_spawner, start_controller_manager
from ros_harness import REPO, NodeProcess, wait_for

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

URDF = REPO / "urdf" / "caster_base.urdf"
CONFIG = REPO / "config"
CONTROLLER = "caster_base_controller"


class Base:
    """Sends cmd_vel at 20 Hz while ``command`` is set; keeps the latest odom, caster states and the simulator's
    pose of the base (x, y, yaw)."""

    def __init__(self, ros):
        from geometry_msgs.msg import TwistStamped
        from nav_msgs.msg import Odometry
        from sensor_msgs.msg import JointState
        from tf2_msgs.msg import TFMessage

        self.node = ros.node("caster_base_client")
        self.lock = threading.Lock()
        self.command: tuple[float, float, float] | None = None
        self.odom = None
        self.casters = None
        self.truth: tuple[float, float, float] | None = None
        self.pub = self.node.create_publisher(TwistStamped, f"/{CONTROLLER}/cmd_vel", 10)
        self.node.create_subscription(Odometry, f"/{CONTROLLER}/odom", lambda m: setattr(self, "odom", m), 10)
        self.node.create_subscription(JointState, f"/{CONTROLLER}/caster_states",
                                      lambda m: setattr(self, "casters", m), 10)
        self.node.create_subscription(TFMessage, "/tf", self._on_tf, 100)
        self.node.create_timer(0.05, self._send)
        self.msg_type = TwistStamped

    def _send(self) -> None:
        if self.command is not None:
            self.send(*self.command)

    def send(self, vx: float, vy: float, wz: float) -> None:
        msg = self.msg_type()
        msg.twist.linear.x, msg.twist.linear.y, msg.twist.angular.z = vx, vy, wz
        self.pub.publish(msg)

    def _on_tf(self, msg) -> None:
        for tf in msg.transforms:
            if tf.child_frame_id == "base_footprint" and tf.header.frame_id != "odom":
                t, q = tf.transform.translation, tf.transform.rotation
                yaw = math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
                self.truth = (t.x, t.y, yaw)


def test_twist_moves_the_base_in_x_y_and_yaw_and_odom_follows(ros, processes):
    sim = NodeProcess.console_script("simulator", "--ros-args", "--params-file",
                                     str(CONFIG / "caster_base_simulator.yaml"), "-p", f"urdf_path:={URDF}")
    processes.append(sim)
    sim.wait_for_output("simulator ready", timeout=60)
    cm = start_controller_manager(processes, yaml=CONFIG / "caster_base_controllers.yaml")
    code, out = run_spawner("joint_state_broadcaster", CONTROLLER)
    assert code == 0, out

    base = Base(ros)
    wait_for(lambda: base.truth is not None and base.odom is not None, 30, "/tf of base_footprint and ~/odom")
    x0, y0, _ = base.truth
    base.command = (0.0, 0.3, 0.0)  # sideways: only a holonomic base can
    wait_for(lambda: base.truth[1] - y0 > 0.3, 60, "the base driving 0.3 m to its left")
    assert abs(base.truth[0] - x0) < 0.05
    wait_for(lambda: base.odom.twist.twist.linear.y > 0.25, 30, "odometry reporting the sideways speed")
    assert base.odom.header.frame_id == "odom" and base.odom.child_frame_id == "base_footprint"
    assert all(abs(abs(a) - math.pi / 2) < 0.05 for a in base.casters.position[:4])  # steered to +-90 degrees
    base.command = (0.3, 0.2, 0.5)
    yaw0 = base.truth[2]
    wait_for(lambda: math.remainder(base.truth[2] - yaw0, 2 * math.pi) > 0.5, 60, "the base turning left")
    wait_for(lambda: base.odom.twist.twist.angular.z > 0.4, 30, "odometry reporting the turn")

    def settled() -> bool:
        # the casters steer and the wheels speed up from the previous twist: read the odometry once it has settled,
        # not the sample that first crossed 0.4 rad/s
        t = base.odom.twist.twist
        return (t.linear.x, t.linear.y, t.angular.z) == pytest.approx((0.3, 0.2, 0.5), abs=0.05)

    try:
        wait_for(settled, 30, "odometry settled at the commanded twist (0.3, 0.2, 0.5) +- 0.05")
    finally:
        t = base.odom.twist.twist
        print(f"\ncommanded (0.3, 0.2, 0.5); odometry twist ({t.linear.x:.3f}, {t.linear.y:.3f}, {t.angular.z:.3f})")
    base.command = None
    base.send(0.1, math.nan, 0.0)
    wait_for(lambda: "dropped a command on ~/cmd_vel" in cm.output(), 20, "the NaN command refused")
    assert "linear.y = nan is not finite" in cm.output()
