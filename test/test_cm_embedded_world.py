"""The embedded controller manager at parity with the simulator node, over DDS: in the table-top world it spawns,
removes and resets to keyframes (the same services, robot_core.ros.sim_world.WorldServices, between two control
cycles), refuses bad requests and stays up, and publishes ~/contacts; the diff-drive robot floats on a floor
(fixed_base: false) and drives: at 0.5 m/s it covers 2 m in 4 s of simulated time (ground truth world ->
base_footprint on /tf, as the simulator node publishes it), its odometry agrees, a NaN cmd_vel is refused and
the last command goes stale and stops the wheels; the parallel gripper action rejects a goal outside the finger's
range and a new goal preempts the running one, as in topic mode (test_gripper_action_node.py)."""

from __future__ import annotations

import math
import threading
from typing import Any

import pytest
from cm_helpers import RC_ARM, run_spawner, start_controller_manager
from ros_harness import REPO, answered_eventually, wait_for, wait_future

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

TABLE_TOP = REPO / "config" / "worlds" / "table_top.yaml"
TABLE_HEIGHT = 0.2
CM = "/controller_manager"


def ns(stamp: Any) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


class World:
    """Client of the embedded manager's world: its topics and services."""

    def __init__(self, ros: Any):
        from robot_core_interfaces.msg import Contacts, ObjectStates
        from robot_core_interfaces.srv import RemoveObject, ResetSimulation, SetObjectState, SpawnObject
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState

        self.node = ros.node("embedded_world_services_client")
        self.lock = threading.Lock()
        self.objects: list[Any] = []
        self.contacts: list[Any] = []
        self.joints: dict[str, float] = {}
        self.clock = 0
        self.node.create_subscription(ObjectStates, f"{CM}/object_states", self.objects.append, 10)
        self.node.create_subscription(Contacts, f"{CM}/contacts", self.contacts.append, 10)
        self.node.create_subscription(JointState, "/joint_states", self._on_joints, 10)
        self.node.create_subscription(Clock, "/clock", lambda m: setattr(self, "clock", ns(m.clock)), 10)
        self.types = {"set_object_state": SetObjectState, "spawn_object": SpawnObject, "remove_object": RemoveObject,
                      "reset": ResetSimulation}
        self.clients = {n: self.node.create_client(t, f"{CM}/{n}") for n, t in self.types.items()}
        for name, client in self.clients.items():
            assert client.wait_for_service(timeout_sec=30), f"{CM}/{name} not available"
            # a refused request first: a fresh client's first answer can be lost while discovery settles
            harmless = {"reset": {"keyframe": "no_such_keyframe"}}.get(name, {"name": "no_such_object"})
            answered_eventually(client.call_async, self.types[name].Request(**harmless), f"{CM}/{name}")

    def _on_joints(self, msg: Any) -> None:
        self.joints = dict(zip(msg.name, msg.position, strict=False))

    def call(self, service: str, **fields: Any) -> Any:
        return wait_future(self.clients[service].call_async(self.types[service].Request(**fields)), 30,
                           f"{CM}/{service}")

    def spawn(self, name: str, shape: str = "box", size=(0.05, 0.05, 0.05), xyz=(0.5, 0.0, 0.5),
              quat_xyzw=(0.0, 0.0, 0.0, 1.0), mass: float = 0.1) -> Any:
        req = self.types["spawn_object"].Request(name=name, shape=shape, size=[float(v) for v in size],
                                                 mass=float(mass))
        p, q = req.pose.position, req.pose.orientation
        p.x, p.y, p.z = (float(v) for v in xyz)
        q.x, q.y, q.z, q.w = (float(v) for v in quat_xyzw)
        return wait_future(self.clients["spawn_object"].call_async(req), 30, f"{CM}/spawn_object")

    def latest(self) -> dict[str, Any]:
        return {o.name: o for o in self.objects[-1].objects} if self.objects else {}

    def wait_objects(self, cond, what: str, timeout: float = 30.0) -> dict[str, Any]:
        return wait_for(lambda: (lambda o: o if o and cond(o) else None)(self.latest()), timeout, what)


def test_spawn_remove_reset_to_keyframes_refusals_and_contacts(ros, processes):
    cm = start_controller_manager(processes, "hardware_mode:=embedded", f"robot_description_file:={RC_ARM}",
                                  f"world:={TABLE_TOP}", "contacts_rate:=10.0", "real_time_factor:=0.5")
    code, out = run_spawner("joint_state_broadcaster")
    assert code == 0, out
    w = World(ros)
    w.wait_objects(lambda o: {"box_small", "box_medium", "box_large"} <= set(o), "the boxes on ~/object_states")
    wait_for(lambda: "joint4" in w.joints, 30, "/joint_states")
    before = dict(w.joints)

    res = w.spawn("ball", shape="sphere", size=(0.03,), xyz=(0.5, -0.05, 0.5))
    assert res.success, res.message
    w.wait_objects(lambda o: "ball" in o and abs(o["ball"].pose.position.z - (TABLE_HEIGHT + 0.03)) < 3e-3,
                   "the spawned ball resting on the table")
    assert all(abs(w.joints[j] - before[j]) < 1e-3 for j in before), "the arm did not move across the spawn"

    for kwargs, said in ((dict(name="box_large"), "an object named 'box_large' exists already"),
                         (dict(name="link2"), "'link2' is the name of a body of the robot"),
                         (dict(name="n1", xyz=(0.5, math.nan, 0.5)), "position[1] must be finite"),
                         (dict(name="n2", quat_xyzw=(0.0, 0.0, 0.5, 0.5)), "not a unit quaternion"),
                         (dict(name="n3", mass=-1.0), "mass must be positive")):
        res = w.spawn(**kwargs)
        assert not res.success and said in res.message, res.message
    res = w.call("remove_object", name="ghost")
    assert not res.success and "no object named 'ghost'" in res.message, res.message
    res = w.call("reset", keyframe="nowhere")
    assert not res.success and "unknown keyframe 'nowhere' (keyframes: ['home', 'stacked'])" in res.message
    assert set(w.latest()) == {"box_small", "box_medium", "box_large", "ball"}, "a refusal changes nothing"

    # reset to a keyframe: time back to 0, box_small on top of box_large, the spawned ball at its spawn pose
    t = w.clock
    res = w.call("reset", keyframe="stacked")
    assert res.success and "reset to t=0, keyframe 'stacked'" in res.message, res.message
    wait_for(lambda: w.clock < t, 20, "/clock back after the reset")
    w.wait_objects(lambda o: abs(o["box_small"].pose.position.z - (TABLE_HEIGHT + 0.1 + 0.02)) < 3e-3
                   and abs(o["box_small"].pose.position.y - 0.18) < 0.01, "box_small resting on box_large")
    res = w.call("reset", keyframe="home")
    assert res.success, res.message
    wait_for(lambda: abs(w.joints["joint2"] - 0.3) < 1e-3 and abs(w.joints["joint4"] - 1.2) < 1e-3, 30,
             "the arm at the 'home' keyframe (joint2 0.3, joint4 1.2)")

    res = w.call("remove_object", name="box_small")
    assert res.success, res.message
    w.wait_objects(lambda o: "box_small" not in o and "ball" in o, "box_small gone")
    gone_at = ns(w.objects[-1].header.stamp)

    def table_box() -> list[Any] | None:
        # contacts come at 10 Hz, object states faster, and the two resets sent time back to 0, so a stamp alone
        # does not tell a late message of the stacked boxes from a newer one (a hog run read 5.395 N: both boxes'
        # weight): a message after the removal has no box_small contact, and 0.2 s of sim time after the removal
        # lets box_large settle from the lost load
        latest = w.contacts[-1] if w.contacts else None
        if (latest is None or ns(latest.header.stamp) <= gone_at + 200_000_000
                or any("box_small" in (c.body1, c.body2) for c in latest.contacts)):
            return None
        pairs = [c for c in latest.contacts if {c.body1, c.body2} == {"table", "box_large"}]
        return pairs or None

    pairs = wait_for(table_box, 20, "table / box_large contacts on ~/contacts")
    fz = sum(c.force.z if c.body2 == "box_large" else -c.force.z for c in pairs)
    assert fz == pytest.approx(0.5 * 9.81, rel=0.1), "the table holds the 0.5 kg box"
    assert cm.alive()


def test_the_diff_drive_robot_drives_embedded(ros, processes):
    from nav_msgs.msg import Odometry
    from test_cm_diff_drive import CONFIG, URDF, Base
    from tf2_msgs.msg import TFMessage

    cm = start_controller_manager(processes, "hardware_mode:=embedded", f"robot_description_file:={URDF}",
                             "fixed_base:=false", "floor:=true", "gains.left_wheel_joint.kv:=10.0",
                             "gains.right_wheel_joint.kv:=10.0", "real_time_factor:=0.5",
                             yaml=CONFIG / "diff_drive_controllers.yaml")
    code, out = run_spawner("joint_state_broadcaster", "diff_drive_controller")
    assert code == 0, out
    base = Base(ros)
    truth: dict[int, float] = {}  # sim time ns -> x of base_footprint in the world (the manager's ground truth)
    odom: dict[int, float] = {}
    base.node.create_subscription(TFMessage, "/tf", lambda m: truth.update(
        {ns(t.header.stamp): t.transform.translation.x for t in m.transforms
         if (t.header.frame_id, t.child_frame_id) == ("world", "base_footprint")}), 100)
    base.node.create_subscription(Odometry, "/diff_drive_controller/odom",
                                  lambda m: odom.update({ns(m.header.stamp): m.pose.pose.position.x}), 100)
    wait_for(lambda: truth and base.odom is not None, 30, "world -> base_footprint on /tf and odometry")
    base.command = (0.5, 0.0)
    wait_for(lambda: base.odom.twist.twist.linear.x > 0.45, 60, "odometry reporting the speed")
    state: list[Odometry] = []
    base.node.create_subscription(Odometry, "/controller_manager/base_state", state.append, 10)
    wait_for(lambda: state and state[-1].twist.twist.linear.x > 0.45, 30,
             "the manager's ~/base_state reporting the speed in the base's frame")
    assert (state[-1].header.frame_id, state[-1].child_frame_id) == ("world", "base_footprint")
    t1 = max(truth) + 500_000_000  # from 0.5 s on, at full speed
    wait_for(lambda: max(truth) >= t1, 30, "ground truth past the window's start")
    # list(): the executor thread adds samples meanwhile; the window starts at the first sample at or after t1,
    # which dropped messages may put later, so its end is waited for from there
    a = min(t for t in list(truth) if t >= t1)
    wait_for(lambda: max(truth) >= a + 4_000_000_000, 60, "4 s of simulated time at 0.5 m/s")
    b = min(t for t in list(truth) if t >= a + 4_000_000_000)
    wait_for(lambda: max(odom) >= b, 30, "odometry past the window's end")
    base.command = None  # nothing renews the last command from here on: it must go stale and stop the wheels
    base.send(math.nan, 0.0)
    # newest-wins drops a few /tf messages when the manager or this client falls behind (0.14 s of sim time was seen
    # at load): the distance is scaled to the window below; a stream that stalls for 0.5 s still fails
    assert b - a <= 4_500_000_000, "the ground truth kept coming (newest-wins drops at most a few)"
    travelled = (truth[b] - truth[a]) * 4e9 / (b - a)
    # odometry over the same window, from its samples nearest to a and b (stamps of both at 50 Hz, maybe offset by a
    # cycle: 10 ms at 0.5 m/s is 5 mm, 0.25 % of the way)
    stamps = list(odom)
    oa, ob = (min(stamps, key=lambda t, at=at: abs(t - at)) for at in (a, b))
    assert abs(oa - a) <= 20_000_000 and abs(ob - b) <= 20_000_000, (oa, a, ob, b)
    by_odom = (odom[ob] - odom[oa]) * 4e9 / (ob - oa)
    print(f"\nembedded diff drive: {travelled:.4f} m in 4 s of simulated time at 0.5 m/s (ground truth world -> "
          f"base_footprint), odometry {by_odom:.4f} m ({100 * (by_odom / travelled - 1):+.2f} %)")
    assert travelled == pytest.approx(2.0, rel=0.02)
    assert by_odom == pytest.approx(travelled, rel=0.02)
    # the NaN command is refused with a warning (the last valid one stays) ...
    wait_for(lambda: "dropped a command on ~/cmd_vel" in cm.output(), 20, "the NaN command refused")
    assert "linear.x = nan is not finite" in cm.output()
    # ... and that one goes stale after cmd_vel_timeout: the wheels stop, the base comes to rest
    wait_for(lambda: base.wheels is not None and max(abs(v) for v in base.wheels) < 0.05, 30, "wheels stopped")
    wait_for(lambda: abs(base.odom.twist.twist.linear.x) < 0.02, 30, "odometry at rest")
    assert all(math.isfinite(v) for v in base.wheels)


def test_the_gripper_action_embedded_rejects_out_of_range_goals_and_preempts(ros, processes):
    """The parallel gripper action in embedded mode, as test_gripper_action_node.py checks it in topic mode."""
    from control_msgs.action import ParallelGripperCommand
    from test_gripper_action_node import ABORTED, FINGER, SUCCEEDED, Clients

    from robot_core.ros.action_client import ActionClient

    cm = start_controller_manager(processes, "hardware_mode:=embedded", f"robot_description_file:={RC_ARM}",
                                  yaml=REPO / "test" / "data" / "cm_node" / "gripper_controllers.yaml")
    code, out = run_spawner("joint_state_broadcaster", "gripper_action_controller")
    assert code == 0, out
    node = ros.node("embedded_gripper_client")
    gripper = ActionClient(node, ParallelGripperCommand, "/gripper_action_controller/gripper_cmd")
    assert gripper.wait_for_server(timeout_sec=30), "gripper action server not discovered"

    def send(position: float):
        return wait_future(gripper.send_goal_async(Clients.goal(position)), 20, "gripper goal response")

    # outside the finger's range [0, 0.04]: rejected (sent until answered: a fresh client's first answer can be lost)
    answered_eventually(gripper.send_goal_async, Clients.goal(1.0), "an answer from the gripper goal service")
    assert not send(0.05).accepted
    wait_for(lambda: f"outside the range [0.0, 0.04] of joint '{FINGER}'" in cm.output(), 20, "the rejection logged")

    closed = send(0.0)
    assert closed.accepted
    assert wait_future(closed.get_result_async(), 30, "closing result").status == SUCCEEDED
    first = send(0.04)
    second = send(0.01)
    assert first.accepted and second.accepted
    old = wait_future(first.get_result_async(), 30, "the preempted goal's result")
    new = wait_future(second.get_result_async(), 30, "the newer goal's result")
    print(f"\nembedded gripper: preempted status {old.status}, newer status {new.status} at "
          f"{new.result.state.position[0]:.4f} m")
    assert old.status == ABORTED and not old.result.reached_goal
    assert new.status == SUCCEEDED and new.result.reached_goal
    assert new.result.state.position[0] == pytest.approx(0.01, abs=0.003)  # goal_tolerance 0.002 + a cycle
