"""The simulator node with a world (config/worlds/table_top.yaml around rc_arm), over DDS: objects on /tf and
~/object_states, the table on /tf_static, ~/contacts, the arm pushing a free box (its /tf follows), and the
services set_object_state, spawn_object, remove_object and reset-to-keyframe, each refusing bad requests with a
clear message while the node stays up."""

from __future__ import annotations

import math
import signal
from collections.abc import Iterator
from typing import Any

import pytest
from robot_files import REPO
from ros_harness import NodeProcess, RosTestContext, answered_eventually, wait_for, wait_future
from sim_helpers import SimClient, sec, start_simulator

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

TABLE_TOP = REPO / "config" / "worlds" / "table_top.yaml"
TABLE_HEIGHT = 0.2
BOXES = ["box_small", "box_medium", "box_large"]


class WorldClient(SimClient):
    """SimClient plus the world's topics and services."""

    def __init__(self, ros: RosTestContext, name: str):
        super().__init__(ros, name)
        from robot_core_interfaces.msg import Contacts, ObjectStates
        from robot_core_interfaces.srv import RemoveObject, SetObjectState, SpawnObject

        self.objects: list[Any] = []
        self.contacts: list[Any] = []
        self.node.create_subscription(ObjectStates, "/simulator/object_states", self._keep(self.objects), 10)
        self.node.create_subscription(Contacts, "/simulator/contacts", self._keep(self.contacts), 10)
        self.world_clients = {
            "set_object_state": self.node.create_client(SetObjectState, "/simulator/set_object_state"),
            "spawn_object": self.node.create_client(SpawnObject, "/simulator/spawn_object"),
            "remove_object": self.node.create_client(RemoveObject, "/simulator/remove_object"),
        }

    def world_call(self, name: str, request: Any, timeout: float = 30.0) -> Any:
        client = self.world_clients[name]
        assert client.wait_for_service(timeout_sec=timeout), f"service /simulator/{name} not available"
        return wait_future(client.call_async(request), timeout, f"/simulator/{name} response")

    def set_object(self, name: str, xyz, quat_xyzw=(0.0, 0.0, 0.0, 1.0), linear=(0.0, 0.0, 0.0)) -> Any:
        from robot_core_interfaces.srv import SetObjectState

        req = SetObjectState.Request(name=name)
        p, q = req.pose.position, req.pose.orientation
        p.x, p.y, p.z = (float(v) for v in xyz)
        q.x, q.y, q.z, q.w = (float(v) for v in quat_xyzw)
        req.twist.linear.x, req.twist.linear.y, req.twist.linear.z = (float(v) for v in linear)
        return self.world_call("set_object_state", req)

    def spawn(self, name: str, shape: str = "box", size=(0.05, 0.05, 0.05), xyz=(0.5, 0.0, 0.5),
              quat_xyzw=(0.0, 0.0, 0.0, 1.0), mass: float = 0.1, **extra: Any) -> Any:
        from robot_core_interfaces.srv import SpawnObject

        req = SpawnObject.Request(name=name, shape=shape, size=[float(v) for v in size], mass=float(mass), **extra)
        p, q = req.pose.position, req.pose.orientation
        p.x, p.y, p.z = (float(v) for v in xyz)
        q.x, q.y, q.z, q.w = (float(v) for v in quat_xyzw)
        return self.world_call("spawn_object", req)

    def remove(self, name: str) -> Any:
        from robot_core_interfaces.srv import RemoveObject

        return self.world_call("remove_object", RemoveObject.Request(name=name))

    def reset_to(self, keyframe: str) -> Any:
        from robot_core_interfaces.srv import ResetSimulation

        return self.call("reset", ResetSimulation.Request(keyframe=keyframe))


@pytest.fixture(scope="class")
def world_sim() -> Iterator[NodeProcess]:
    proc = start_simulator("rc_arm.urdf", f"world:={TABLE_TOP}", "contacts_rate:=20.0")
    try:
        proc.wait_for_output("simulator ready", timeout=90)
        yield proc
    finally:
        code = proc.stop(signal.SIGINT)
        assert code == 0, proc.output()[-3000:]


@pytest.fixture(scope="class")
def world(world_sim: NodeProcess) -> Iterator[WorldClient]:
    ctx = RosTestContext()
    try:
        client = WorldClient(ctx, "world_client")
        client.wait_connected(60)
        wait_for(lambda: client.objects, 30, "~/object_states")
        from robot_core_interfaces.srv import RemoveObject, SetObjectState

        # harmless (refused) first calls: a fresh client's first response can be lost before discovery settles
        for name, req in (("remove_object", RemoveObject.Request(name="nothing")),
                          ("set_object_state", SetObjectState.Request(name="nothing"))):
            cl = client.world_clients[name]
            assert cl.wait_for_service(timeout_sec=30)
            answered_eventually(cl.call_async, req, f"/simulator/{name}")
        assert client.trigger("resume").success
        yield client
    finally:
        ctx.shutdown()


@pytest.fixture
def fresh_world(world: WorldClient, world_sim: NodeProcess) -> WorldClient:
    assert world_sim.alive(), f"the class's simulator exited ({world_sim.proc.returncode})"
    assert world.trigger("resume").success
    res = world.reset_to("")
    assert res.success, res.message
    return world


def xyz(v: Any) -> tuple[float, float, float]:
    return (v.x, v.y, v.z)


def latest_objects(world: WorldClient) -> dict[str, Any]:
    return {o.name: o for o in world.objects[-1].objects}


def paused_objects(world: WorldClient) -> dict[str, Any]:
    """Pause and return the objects of a message published while paused: two messages in a row with the same
    stamp (paused, the simulator repeats its state at status_rate), so nothing moves after it."""
    assert world.trigger("pause").success

    def settled():
        if not (world.status and world.status[-1].paused) or len(world.objects) < 2:
            return None
        a, b = world.objects[-2], world.objects[-1]
        return {o.name: o for o in b.objects} if sec(a.header.stamp) == sec(b.header.stamp) else None

    count = len(world.objects)
    wait_for(lambda: len(world.objects) > count + 1, 20, "object states after the pause")
    return wait_for(settled, 20, "object states repeated while paused")


def wait_objects(world: WorldClient, cond, timeout: float, what: str) -> dict[str, Any]:
    """Newest ~/object_states whose objects (name -> ObjectState) satisfy ``cond``."""
    return wait_for(lambda: (lambda objs: objs if cond(objs) else None)(latest_objects(world)), timeout, what)


class TestTableTopWorld:
    """Tests sharing one rc_arm simulator with table_top.yaml (torn down before the tests that start their own:
    they would answer on the same service names)."""

    def test_objects_on_tf_object_states_and_the_table_on_tf_static(self, fresh_world: WorldClient,
                                                                     world_sim: NodeProcess):
        w = fresh_world
        objs = wait_objects(w, lambda o: sorted(o) == sorted(BOXES), 20, "the three boxes on ~/object_states")
        assert w.objects[-1].header.frame_id == "world"
        wait_for(lambda: all(("world", b) in w.tf for b in BOXES), 20, "world -> box transforms on /tf")
        wait_for(lambda: ("world", "table") in w.tf_static and ("world", "base_link") in w.tf_static, 20,
                 "world -> table and world -> base_link on /tf_static")
        table = w.tf_static[("world", "table")].transform.translation
        assert (table.x, table.y, table.z) == pytest.approx((0.55, 0.0, 0.1))
        for name in BOXES:
            z = objs[name].pose.position.z
            assert TABLE_HEIGHT < z < TABLE_HEIGHT + 0.06, f"{name} sits on the table (z = {z})"
        assert "objects table, box_small, box_medium, box_large; keyframes home, stacked" in world_sim.output()


    def test_a_box_placed_above_the_table_falls_and_rests_on_it(self, fresh_world: WorldClient, say):
        w = fresh_world
        # Caught in mid-fall deterministically: placed and stepped 0.15 s while paused (z = 0.6 - g t^2 / 2 = 0.49;
        # the paused simulator repeats that pose), where a running fall passes the window in a fraction of a second
        # that a loaded test client's polling can miss.
        assert w.trigger("pause").success
        res = w.set_object("box_medium", (0.52, 0.0, 0.6))
        assert res.success, res.message
        assert w.step(150).success
        key = ("world", "box_medium")
        wait_for(lambda: key in w.tf and 0.45 < w.tf[key].transform.translation.z < 0.52, 20,
                 "box_medium falling on /tf")
        assert w.trigger("resume").success

        def resting(objs):
            o = objs["box_medium"]
            v = o.twist.linear
            return abs(o.pose.position.z - (TABLE_HEIGHT + 0.03)) < 2e-3 and math.hypot(v.x, v.y, v.z) < 1e-3

        objs = wait_objects(w, resting, 30, "box_medium resting on the table")
        stamp = sec(w.objects[-1].header.stamp)
        wait_for(lambda: sec(w.tf[("world", "box_medium")].header.stamp) >= stamp, 20, "a /tf pose as new")
        z_tf = w.tf[("world", "box_medium")].transform.translation.z
        say(f"[world] box_medium settled at z = {z_tf:.5f} m on /tf (table {TABLE_HEIGHT} + half size 0.03), "
            f"{objs['box_medium'].pose.position.z:.5f} m on ~/object_states")
        assert z_tf == pytest.approx(TABLE_HEIGHT + 0.03, abs=2e-3)


    def test_contacts_carry_the_boxes_weight(self, fresh_world: WorldClient):
        w = fresh_world
        n = len(w.contacts)

        def table_box():
            if len(w.contacts) <= n:
                return None
            msg = w.contacts[-1]
            pairs = [c for c in msg.contacts if {c.body1, c.body2} == {"table", "box_large"}]
            return pairs if pairs else None

        pairs = wait_for(table_box, 20, "table / box_large contacts on ~/contacts")
        fz = sum(c.force.z if c.body2 == "box_large" else -c.force.z for c in pairs)
        assert fz == pytest.approx(0.5 * 9.81, rel=0.1), "the table holds the 0.5 kg box"


    def test_the_arm_pushes_a_free_box_and_its_tf_follows(self, fresh_world: WorldClient, say):
        """Issue 16's physics check: the box is put on the circle the hand sweeps when joint1 turns (radius
        0.36 m, 0.4 rad, its top above the fingers' lowest point); turning joint1 to 0.9 rad pushes it, and /tf's
        world -> box_large says where ~/object_states says it is."""
        w = fresh_world
        start = (0.36 * math.cos(0.4), 0.36 * math.sin(0.4), TABLE_HEIGHT + 0.05)
        assert w.set_object("box_large", start, (0.0, 0.0, math.sin(0.2), math.cos(0.2))).success
        wait_objects(w, lambda o: math.dist(xyz(o["box_large"].pose.position), start) < 0.01, 20,
                     "box_large on the hand's circle")
        w.send(["joint1"], position=[0.9])
        w.wait_state(lambda q, _: abs(q["joint1"] - 0.9) < 0.05, 30, "joint1 at 0.9")
        moved = wait_objects(w, lambda o: math.dist(xyz(o["box_large"].pose.position), start) > 0.03, 30,
                             "box_large pushed away by the hand")
        objs = paused_objects(w)  # nothing moves from here: /tf and ~/object_states of the same instant
        box = xyz(objs["box_large"].pose.position)
        stamp = sec(w.objects[-1].header.stamp)
        tf = wait_for(lambda: (lambda t: t if t is not None and sec(t.header.stamp) == stamp else None)(
            w.tf.get(("world", "box_large"))), 20, "world -> box_large on /tf at the paused instant")
        say(f"[world] the hand pushed box_large {math.dist(box, start):.3f} m: from "
            f"({start[0]:.3f}, {start[1]:.3f}) to ({box[0]:.3f}, {box[1]:.3f}); /tf "
            f"({tf.transform.translation.x:.3f}, {tf.transform.translation.y:.3f})")
        assert math.dist(xyz(moved["box_large"].pose.position), start) > 0.03
        assert math.atan2(box[1], box[0]) > 0.4, "pushed the way the hand turns"
        assert xyz(tf.transform.translation) == pytest.approx(box, abs=1e-6)
        assert w.trigger("resume").success

    def test_spawn_and_remove_keep_the_robot_and_the_other_objects(self, fresh_world: WorldClient):
        w = fresh_world
        w.send(["joint1"], position=[0.4])
        w.wait_state(lambda q, _: abs(q["joint1"] - 0.4) < 0.01, 20, "joint1 at 0.4")
        # paused: every repeated message carries the same state, so before and after compare exactly
        objs_before = paused_objects(w)
        stamp = sec(w.objects[-1].header.stamp)
        wait_for(lambda: sec(w.latest().header.stamp) == stamp, 20, "joint states of the paused time")
        q_before = w.positions()
        n = w.state_count
        res = w.spawn("ball", shape="sphere", size=(0.03,), xyz=(0.5, -0.05, 0.5))
        assert res.success, res.message
        objs = wait_objects(w, lambda o: "ball" in o, 20, "the ball on ~/object_states")
        wait_for(lambda: w.state_count > n + 1, 20, "joint states published after the spawn")
        assert w.positions() == q_before
        for name in BOXES:
            assert objs[name].pose == objs_before[name].pose, f"{name} moved across the spawn"
        n = w.state_count
        res = w.remove("box_small")
        assert res.success, res.message
        objs = wait_objects(w, lambda o: "box_small" not in o, 20, "box_small gone")
        wait_for(lambda: w.state_count > n + 1, 20, "joint states published after the removal")
        assert w.positions() == q_before
        assert objs["box_large"].pose == objs_before["box_large"].pose
        assert w.trigger("resume").success
        wait_objects(w, lambda o: abs(o["ball"].pose.position.z - (TABLE_HEIGHT + 0.03)) < 2e-3, 30,
                     "the spawned ball lands on the table")
        # put things back for the other tests
        assert w.remove("ball").success
        res = w.spawn("box_small", size=(0.04, 0.04, 0.04), xyz=(0.45, -0.18, 0.22), mass=0.05)
        assert res.success, res.message


    @pytest.mark.parametrize("service, kwargs, message", [
        ("spawn", dict(name="box_large"), "an object named 'box_large' exists already"),
        ("spawn", dict(name="link2"), "'link2' is the name of a body of the robot"),
        ("spawn", dict(name="n1", xyz=(0.5, math.nan, 0.5)), "position[1] must be finite"),
        ("spawn", dict(name="n2", quat_xyzw=(0.0, 0.0, 0.5, 0.5)), "not a unit quaternion"),
        ("spawn", dict(name="n3", size=(0.05, 0.0, 0.05)), "must be positive"),
        ("spawn", dict(name="n4", size=(-0.05,), shape="sphere"), "must be positive"),
        ("spawn", dict(name="n5", mass=-1.0), "mass must be positive"),
        ("spawn", dict(name="n6", shape="cone"), "shape must be one of box, sphere"),
        ("spawn", dict(name=""), "object name must be a non-empty string"),
        ("remove", dict(name="ghost"), "no object named 'ghost'"),
        ("set", dict(name="ghost", xyz=(0, 0, 1)), "no object named 'ghost'"),
        ("set", dict(name="table", xyz=(0, 0, 1)), "'table' is fixed"),
        ("set", dict(name="box_small", xyz=(0, 0, math.inf)), "must be finite"),
        ("set", dict(name="box_small", xyz=(0, 0, 1), quat_xyzw=(0, 0, 0, 2)), "not a unit quaternion"),
    ])
    def test_bad_requests_are_refused_and_nothing_changes(self, fresh_world: WorldClient, world_sim: NodeProcess,
                                                          service, kwargs, message):
        w = fresh_world
        before = paused_objects(w)
        call = {"spawn": w.spawn, "remove": w.remove, "set": w.set_object}[service]
        if service == "spawn":
            kwargs = {"name": kwargs.pop("name"), **kwargs}
        res = call(**kwargs) if service != "remove" else call(kwargs["name"])
        print(f"\n  [world] {service} {kwargs}: {res.message}")
        assert not res.success
        assert message in res.message
        t = sec(w.status[-1].sim_time)
        count = len(w.objects)
        wait_for(lambda: len(w.objects) > count, 10, "object states still published")
        after = latest_objects(w)
        assert sorted(after) == sorted(before)
        assert all(after[n].pose == before[n].pose for n in before)
        assert world_sim.alive()
        assert w.trigger("resume").success
        wait_for(lambda: sec(w.status[-1].sim_time) > t + 0.05, 20, "the simulation runs on")


    def test_reset_to_a_keyframe_and_unknown_keyframes(self, fresh_world: WorldClient):
        w = fresh_world
        res = w.reset_to("stacked")
        assert res.success, res.message
        assert "keyframe 'stacked'" in res.message
        wait_objects(w, lambda o: abs(o["box_small"].pose.position.z - (TABLE_HEIGHT + 0.1 + 0.02)) < 3e-3
                     and abs(o["box_small"].pose.position.y - 0.18) < 0.01, 30, "box_small resting on box_large")
        res = w.reset_to("home")
        assert res.success, res.message
        w.wait_state(lambda q, _: abs(q["joint2"] - 0.3) < 1e-3 and abs(q["joint4"] - 1.2) < 1e-3, 20, "home keyframe")
        t = sec(w.status[-1].sim_time)
        wait_for(lambda: sec(w.status[-1].sim_time) > t + 0.2, 20, "time going on")
        t = sec(w.status[-1].sim_time)
        res = w.reset_to("nowhere")
        assert not res.success
        assert "unknown keyframe 'nowhere' (keyframes: ['home', 'stacked'])" in res.message
        wait_for(lambda: sec(w.status[-1].sim_time) > t + 0.1, 20, "time going on")
        assert sec(w.status[-1].sim_time) > t, "a refused reset did not reset"


def test_base_pose_and_keyframes_parameters_without_a_world(tmp_path):
    """planar2 placed by base_pose, with keyframes from their own file: world -> base_link on /tf_static, and a
    reset to a keyframe of that file."""
    keyframes = tmp_path / "keyframes.yaml"
    keyframes.write_text("keyframes:\n  bent: {joints: {joint1: 0.5, joint2: -0.7}}\n")
    proc = start_simulator("planar2.urdf", "base_pose:=[1.0, 2.0, 0.5, 0.0, 0.0, 1.5707963267948966]",
                           f"keyframes:={keyframes}")
    ctx = RosTestContext()
    try:
        proc.wait_for_output("simulator ready", timeout=60)
        client = SimClient(ctx, "base_pose_client")
        client.wait_connected(60)
        wait_for(lambda: ("world", "base_link") in client.tf_static, 20, "world -> base_link on /tf_static")
        tf = client.tf_static[("world", "base_link")].transform
        assert (tf.translation.x, tf.translation.y, tf.translation.z) == pytest.approx((1.0, 2.0, 0.5))
        assert (tf.rotation.z, tf.rotation.w) == pytest.approx((math.sqrt(0.5), math.sqrt(0.5)))
        from robot_core_interfaces.srv import ResetSimulation

        res = client.call("reset", ResetSimulation.Request(keyframe="bent"))
        assert res.success, res.message
        client.wait_state(lambda q, _: abs(q["joint1"] - 0.5) < 1e-3 and abs(q["joint2"] + 0.7) < 1e-3, 20,
                          "the keyframe's joint positions")
        res = client.call("reset", ResetSimulation.Request(keyframe="straight"))
        assert not res.success and "unknown keyframe 'straight' (keyframes: ['bent'])" in res.message
    finally:
        ctx.shutdown()
        assert proc.stop(signal.SIGINT) == 0, proc.output()[-3000:]


def test_a_bad_world_file_stops_the_start_naming_file_line_and_object(tmp_path):
    bad = tmp_path / "bad_world.yaml"
    bad.write_text("objects:\n  - {name: crate, shape: box, size: [0.1, 0.1, 0.1]}\n"
                   "  - {name: brick, shape: box, size: [0.1, 0.1, 0.1], mass: 0}\n")
    proc = start_simulator("planar2.urdf", f"world:={bad}")
    try:
        assert proc.proc.wait(timeout=60) == 1, proc.output()[-3000:]
        out = proc.output()
        print(f"\n  [world] {out.strip().splitlines()[-1]}")
        assert f"{bad}:3: object 'brick': mass must be positive (kg), got 0" in out
    finally:
        proc.stop()


def test_an_mjcf_world(tmp_path):
    """config/worlds/room.xml (MuJoCo's XML, attached with MjSpec attach): the crate falls onto the file's floor and
    is on ~/object_states, the shelf on /tf_static; a spawn and a removal work there too."""
    proc = start_simulator("rc_arm.urdf", f"world:={REPO / 'config' / 'worlds' / 'room.xml'}")
    ctx = RosTestContext()
    try:
        proc.wait_for_output("simulator ready", timeout=60)
        w = WorldClient(ctx, "mjcf_world_client")
        w.wait_connected(60)
        wait_for(lambda: ("world", "shelf") in w.tf_static, 20, "world -> shelf on /tf_static")
        wait_for(lambda: w.objects, 20, "~/object_states")
        wait_objects(w, lambda o: list(o) == ["crate"] and abs(o["crate"].pose.position.z - 0.05) < 2e-3, 30,
                     "the crate resting on the floor")
        cl = w.world_clients["remove_object"]
        assert cl.wait_for_service(timeout_sec=30)
        from robot_core_interfaces.srv import RemoveObject

        answered_eventually(cl.call_async, RemoveObject.Request(name="nothing"), "/simulator/remove_object")
        res = w.spawn("ball", shape="sphere", size=(0.04,), xyz=(0.3, -0.4, 0.5))
        assert res.success, res.message
        wait_objects(w, lambda o: "ball" in o and abs(o["ball"].pose.position.z - 0.04) < 2e-3, 30,
                     "the ball on the floor")
        res = w.remove("crate")
        assert res.success, res.message
        wait_objects(w, lambda o: list(o) == ["ball"], 20, "the crate gone")
    finally:
        ctx.shutdown()
        assert proc.stop(signal.SIGINT) == 0, proc.output()[-3000:]
