"""Every command block of the RBC's own documentation, typed as written, works against robot_core's rbc over DDS.

The blocks below are the documentation's, word for word; only their indentation is restored (the copy we have
lost leading spaces, which makes its YAML invalid for any tool). Each is split into words by bash, parsed as the
ros2 command line parses it and sent through rclpy with the same YAML payload (test/ros2_cli.py). The robot is
rc_arm renamed to the documentation's names: root link ``robot-base``, joints 1-3 ``aplator_j0..2``, tool frame
``wessling-hand1-finger4_distal_link``; the simulator closes the loop. One test per block; a test replays the
blocks before its own first when it runs alone.

Oracles: joint positions from the simulator's own /robot_joint_states, the tool pose from Pinocchio on the URDF.
"""

from __future__ import annotations

import json
import math
import threading
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import ros2_cli
from rbc_helpers import TEST_STALE_TIMEOUT, Services, arm_urdf, pin_fk, rotation_angle, start, warm_goal_service
from ros_harness import wait_for, wait_future

pytest.importorskip("rclpy")
pytest.importorskip("rbc_msgs_srvs")
pytest.importorskip("rbc_actions")
pytestmark = pytest.mark.ros

RENAME = {"base_link": "robot-base", "joint1": "aplator_j0", "joint2": "aplator_j1", "joint3": "aplator_j2",
          "tcp": "wessling-hand1-finger4_distal_link"}
ARM = ["aplator_j0", "aplator_j1", "aplator_j2", "joint4", "joint5", "joint6", "joint7"]

VF_CREATE = '''ros2 service call /rbc_l2_ctrl rbc_msgs_srvs/srv/RbcL2Ctrl "cmd: 'create_re'
data: 'VF'
name: 'VF0'"'''
VF_CHAIN = '''ros2 param set --no-daemon /VF0 base_link "robot-base"
ros2 param set --no-daemon /VF0 end_link "wessling-hand1-finger4_distal_link"'''
VF_WEIGHT = '''ros2 param set --no-daemon /VF0 weight 1.0'''
VF_GOAL = '''ros2 action send_goal /VF0/action rbc_actions/action/VF "goal:
  position:
    x: 0.18
    y: 0.19
    z: 0.82
  orientation:
    x: 0.0
    y: 0.7
    z: 0.0
    w: 0.7
precision:
  linear:
    x: 0.0
    y: 0.0
    z: 0.0
  angular:
    x: 0.0
    y: 0.0
    z: 0.0
timeout:
  sec: 0
  nanosec: 0"'''
JR_CREATE = '''ros2 service call /rbc_l2_ctrl rbc_msgs_srvs/srv/RbcL2Ctrl "cmd: 'create_re'
data: 'JR'
name: 'JR0'"'''
JR_WEIGHT = '''ros2 param set --no-daemon /JR0 weight 1.0'''
JR_JOINTS = '''ros2 param set /JR0 joints --no-daemon "\\
- aplator_j0
- aplator_j1
- aplator_j2
"'''
JR_GOAL = '''ros2 action send_goal /JR0/action rbc_actions/action/JointReacher "\\
goal:
- joint: "aplator_j0"
  value: 0.0
- joint: "aplator_j1"
  value: 1.0
- joint: "aplator_j2"
  value: 0.7
"'''
# ContactSimulation and TouchContact: the documentation's usage examples say "TODO"; these are the blocks of
# doc/nodes/rbc.md, written for the interface robot_core takes (test_doc_blocks_are_the_tests_blocks).
TC_CREATE = '''ros2 service call /rbc_l2_ctrl rbc_msgs_srvs/srv/RbcL2Ctrl "cmd: 'create_re'
data: 'TC'
name: 'TC0'"'''
TC_CHAIN = '''ros2 param set --no-daemon /TC0 base_link "robot-base"
ros2 param set --no-daemon /TC0 end_link "wessling-hand1-finger4_distal_link"
ros2 param set --no-daemon /TC0 point "[0.0, 0.0, 0.05]"'''
CS_CREATE = '''ros2 service call /rbc_l2_ctrl rbc_msgs_srvs/srv/RbcL2Ctrl "cmd: 'create_re'
data: 'CS'
name: 'CS0'"'''
CS_CONTACT = '''ros2 param set --no-daemon /CS0 base_link "robot-base"
ros2 param set --no-daemon /CS0 link "wessling-hand1-finger4_distal_link"
ros2 param set --no-daemon /CS0 point "[0.0, 0.0, 0.05]"'''
CS_GOAL = '''ros2 action send_goal /CS0/apply robot_core_interfaces/action/ApplyContact "wrench:
  force:
    x: 0.0
    y: 0.0
    z: -5.0
duration: 6.0"'''
TC_ECHO = '''ros2 topic echo --once /TC0/wrench_base geometry_msgs/msg/WrenchStamped'''
BLOCKS = [VF_CREATE, VF_CHAIN, VF_WEIGHT, VF_GOAL, JR_CREATE, JR_WEIGHT, JR_JOINTS, JR_GOAL,
          TC_CREATE, TC_CHAIN, CS_CREATE, CS_CONTACT, CS_GOAL, TC_ECHO]


def documented_urdf(path: Path) -> Path:
    """rc_arm with the test's <rbc> tags (q from the simulator, q_ref into its commands), renamed as documented."""
    arm_urdf(path)
    root = ET.parse(path).getroot()
    for el in root.iter():
        for key, value in el.attrib.items():
            if value in RENAME:
                el.set(key, RENAME[value])
        if el.text and el.text.strip() in RENAME:  # e.g. <param name="frame_id">base_link</param>
            el.text = RENAME[el.text.strip()]
    path.write_text(ET.tostring(root, encoding="unicode"))
    return path


class User:
    """A user at a terminal: runs documented blocks (through ros2_cli) and watches the simulated arm."""

    def __init__(self, ros: Any):
        from sensor_msgs.msg import JointState

        self.node = ros.node(f"rbc_doc_user_{id(self)}")
        self.services = Services(self.node)
        self._lock = threading.Lock()
        self.latest: Any = None
        self._actions: dict[str, Any] = {}
        self.node.create_subscription(JointState, "/robot_joint_states", self._on_states, 10)

    def _on_states(self, msg: Any) -> None:
        if set(ARM) <= set(msg.name):
            with self._lock:
                self.latest = msg

    def q(self, joints: list[str] = ARM) -> np.ndarray:
        wait_for(lambda: self.latest is not None, 30, "joint states of the renamed arm")
        with self._lock:
            msg = self.latest
        return np.array([msg.position[list(msg.name).index(j)] for j in joints])

    def call(self, srv: Any, name: str, request: Any) -> Any:
        return self.services.call(self.services.client(srv, name), request, 30)

    def run(self, block: str, result_timeout: float = 90.0) -> list[Any]:
        """Every command of ``block``, in order; returns what each answered (a response, SetParametersResult or
        (goal handle, result)) and fails on the first refusal, as a user would see it."""
        out = []
        for words in ros2_cli.shell_words(block):
            cmd = ros2_cli.parse(words)
            if cmd.verb == "service call":
                out.append(self.call(_srv_class(cmd.type_name), cmd.name, ros2_cli.request_of(cmd)))
            elif cmd.verb == "param set":
                out.append(self.set_parameter(cmd))
            elif cmd.verb == "topic echo":
                out.append(self.echo(cmd))
            else:
                out.append(self.send_goal(cmd, result_timeout))
        return out

    def set_parameter(self, cmd: Any) -> Any:
        from rcl_interfaces.srv import SetParameters

        req = SetParameters.Request(parameters=[ros2_cli.parameter_of(cmd)])
        return self.call(SetParameters, f"{cmd.name}/set_parameters", req).results[0]

    def echo(self, cmd: Any, timeout: float = 30.0) -> Any:
        """``ros2 topic echo --once``: the first message that arrives after subscribing."""
        assert cmd.once and cmd.type_name, "only 'ros2 topic echo --once <topic> <type>' is replayed"
        got: list[Any] = []
        sub = self.node.create_subscription(_srv_class(cmd.type_name), cmd.name, got.append, 10)
        try:
            wait_for(lambda: got, timeout, f"a message on {cmd.name}")
        finally:
            self.node.destroy_subscription(sub)
        return got[0]

    def send_goal(self, cmd: Any, result_timeout: float, goal: Any = None) -> tuple[Any, Any]:
        from robot_core.ros.action_client import ActionClient

        action_type = _srv_class(cmd.type_name)
        ac = self._actions.get(cmd.name)
        if ac is None:
            ac = self._actions[cmd.name] = ActionClient(self.node, action_type, cmd.name)
            assert ac.wait_for_server(timeout_sec=30), f"action {cmd.name} not available"
            warm_goal_service(ac, action_type, cmd.name)
        goal = ros2_cli.request_of(cmd) if goal is None else goal
        handle = wait_future(ac.send_goal_async(goal), 30, f"acceptance by {cmd.name}")
        if not handle.accepted:
            return handle, None
        return handle, wait_future(handle.get_result_async(), result_timeout, f"result of {cmd.name}").result

    def status(self, instance: str) -> dict[str, Any]:
        from std_srvs.srv import Trigger

        return json.loads(self.call(Trigger, f"/{instance}/status", Trigger.Request()).message)


def _srv_class(type_name: str) -> Any:
    import importlib

    pkg, kind, name = type_name.split("/")
    return getattr(importlib.import_module(f"{pkg}.{kind}"), name)


@pytest.fixture(scope="module", params=[False, True], ids=["in-process", "instance-processes"])
def stack(request, tmp_path_factory):
    """Every block against the rbc node with its instances in its process and, again, as processes
    (instance_processes: true): the documented names and behaviour must not depend on it."""
    urdf = documented_urdf(tmp_path_factory.mktemp("rbcdoc") / "documented_arm.urdf")
    procs = [start("simulator", "-p", f"urdf_path:={urdf}", "-p", "tf_rate:=20.0", "-p", "cameras:=false")]
    try:
        procs.append(start("rbc", "-p", f"urdf_path:={urdf}", "-p", "rate:=100.0", "-p",
                           f"stale_timeout:={TEST_STALE_TIMEOUT}", "-p",
                           f"instance_processes:={str(request.param).lower()}"))
        procs[0].wait_for_output("simulator ready", 60)
        procs[1].wait_for_output("rbc ready", 60)
        yield {"urdf": urdf, "rbc": procs[1], "replayed": set()}
    finally:
        for p in procs:
            p.stop()


@pytest.fixture
def user(ros, stack):
    return User(ros)


def replay(user: User, stack: dict[str, Any], block: str) -> list[Any]:
    """Replay ``block`` after the blocks before it that this module has not replayed yet."""
    for earlier in BLOCKS[:BLOCKS.index(block)]:
        if earlier not in stack["replayed"]:
            replay_one(user, stack, earlier)
    return replay_one(user, stack, block)


def replay_one(user: User, stack: dict[str, Any], block: str) -> list[Any]:
    if block is JR_CREATE and "VF0" in _instances(user):
        # Not a documented step: the JR example of the documentation drives joints the VF above still holds.
        assert _l2(user, "destroy_re", "", "VF0").success
    if block is CS_GOAL:
        # Not a documented step: JR0 holds the whole arm where it is, so the contact does not push it away.
        hold_arm(user)
    out = user.run(block)
    stack["replayed"].add(block)
    return out


def hold_arm(user: User) -> None:
    from rbc_actions.action import JointReacher
    from rbc_actions.msg import JointValue

    (res,) = user.run(f'ros2 param set --no-daemon /JR0 joints "{ARM}"'.replace("'", ""))
    assert res.successful, res.reason
    goal = JointReacher.Goal(goal=[JointValue(joint=j, value=float(v)) for j, v in zip(ARM, user.q(), strict=True)])
    handle, result = user.send_goal(ros2_cli.Command("action send_goal", "/JR0/action",
                                                     "rbc_actions/action/JointReacher"), 60, goal)
    assert handle.accepted and result.success, result


def _l2(user: User, cmd: str, data: str, name: str) -> Any:
    from rbc_msgs_srvs.srv import RbcL2Ctrl

    return user.call(RbcL2Ctrl, "/rbc_l2_ctrl", RbcL2Ctrl.Request(cmd=cmd, data=data, name=name))


def _instances(user: User) -> list[str]:
    return list(_l2(user, "list_re", "", "").names)


# --- the command line as a terminal and ros2 see it (no DDS) -----------------------------------------------------
def test_blocks_split_and_parse_as_a_terminal_would():
    (words,) = ros2_cli.shell_words(JR_GOAL)
    cmd = ros2_cli.parse(words)
    assert (cmd.verb, cmd.name, cmd.type_name) == ("action send_goal", "/JR0/action", "rbc_actions/action/JointReacher")
    assert cmd.yaml_text.startswith("goal:\n- joint: aplator_j0\n")  # the shell ate the inner quotes and the \
    goal = ros2_cli.request_of(cmd)
    assert [(g.joint, g.value) for g in goal.goal] == [("aplator_j0", 0.0), ("aplator_j1", 1.0), ("aplator_j2", 0.7)]
    (words,) = ros2_cli.shell_words(JR_JOINTS)
    cmd = ros2_cli.parse(words)
    assert (cmd.name, cmd.parameter, cmd.no_daemon) == ("/JR0", "joints", True)  # option after the positionals
    assert list(ros2_cli.parameter_of(cmd).value.string_array_value) == ["aplator_j0", "aplator_j1", "aplator_j2"]
    weight = ros2_cli.parameter_of(ros2_cli.parse(ros2_cli.shell_words(VF_WEIGHT)[0]))
    assert weight.value.double_value == 1.0
    (words,) = ros2_cli.shell_words(VF_GOAL)
    goal = ros2_cli.request_of(ros2_cli.parse(words))
    assert (goal.goal.position.z, goal.goal.orientation.y, goal.timeout.sec) == (0.82, 0.7, 0)
    assert len(ros2_cli.shell_words(VF_CHAIN)) == 2


def test_payload_errors_name_the_field():
    from rbc_msgs_srvs.srv import RbcL2Ctrl

    with pytest.raises(AttributeError, match="no field 'comand'"):
        ros2_cli.fill_message(RbcL2Ctrl.Request(), {"comand": "create_re"})
    with pytest.raises(ValueError, match="dictionary in YAML"):
        ros2_cli.payload("- create_re")


def test_doc_blocks_are_the_tests_blocks():
    """The ContactSimulation and TouchContact blocks replayed here are those doc/nodes/rbc.md shows, verbatim."""
    doc = (Path(__file__).resolve().parent.parent / "doc" / "nodes" / "rbc.md").read_text()
    for block in (TC_CREATE, TC_CHAIN, CS_CREATE, CS_CONTACT, CS_GOAL, TC_ECHO):
        assert f"```sh\n{block}\n```" in doc, block


# --- one test per documented block ------------------------------------------------------------------------------
def test_block_create_vf(user, stack):
    (res,) = replay(user, stack, VF_CREATE)
    assert res.success, res.message
    assert list(res.names) == ["VF0"] and list(res.types) == ["VF"]


def test_block_vf_chain_params(user, stack):
    results = replay(user, stack, VF_CHAIN)
    assert [r.successful for r in results] == [True, True], [r.reason for r in results]
    params = user.status("VF0")["params"]
    assert (params["base_link"], params["end_link"]) == ("robot-base", "wessling-hand1-finger4_distal_link")


def test_block_vf_weight(user, stack):
    (res,) = replay(user, stack, VF_WEIGHT)
    assert res.successful, res.reason
    assert user.status("VF0")["params"]["weight"] == 1.0


def test_block_vf_goal_reached(user, stack):
    (handle, result), = replay(user, stack, VF_GOAL)
    assert handle.accepted, user.status("VF0")["last_rejection"]
    assert result.success, result.message
    # Zero precision = the reacher's defaults (1 mm, 0.01 rad); checked on the simulator's own joint states, as
    # soon as they show it: the result can overtake the states a loaded test process has not taken yet (a hog run
    # read a state 3.2 mm short of the goal the reacher had just reached)
    def tool() -> np.ndarray:
        return pin_fk(stack["urdf"], ARM, user.q(), frame="wessling-hand1-finger4_distal_link")

    wait_for(lambda: np.linalg.norm(tool()[:3, 3] - [0.18, 0.19, 0.82]) <= 0.0015, 10,
             "the tool at the goal in the simulator's joint states")
    pose = tool()
    goal_rot = _quat_matrix([0.0, 0.7, 0.0, 0.7])
    assert np.linalg.norm(pose[:3, 3] - [0.18, 0.19, 0.82]) <= 0.0015, pose[:3, 3]
    assert rotation_angle(pose[:3, :3], goal_rot) <= 0.015
    assert abs(result.pose.position.z - 0.82) <= 0.0015 and math.isfinite(result.error.linear.x)


def test_block_create_jr(user, stack):
    (res,) = replay(user, stack, JR_CREATE)
    assert res.success, res.message
    assert list(res.types) == ["JR"]


def test_block_jr_weight(user, stack):
    (res,) = replay(user, stack, JR_WEIGHT)
    assert res.successful, res.reason


def test_block_jr_joints(user, stack):
    (res,) = replay(user, stack, JR_JOINTS)
    assert res.successful, res.reason
    assert user.status("JR0")["params"]["joints"] == ["aplator_j0", "aplator_j1", "aplator_j2"]


def test_block_jr_goal_reached(user, stack):
    (handle, result), = replay(user, stack, JR_GOAL)
    assert handle.accepted, user.status("JR0")["last_rejection"]
    assert result.success, result.message
    assert [e.joint for e in result.error] == ["aplator_j0", "aplator_j1", "aplator_j2"]
    assert max(abs(e.value) for e in result.error) <= 0.01  # zero precision: the reacher's default 0.01
    q = user.q(["aplator_j0", "aplator_j1", "aplator_j2"])
    assert np.abs(q - [0.0, 1.0, 0.7]).max() <= 0.02, q


def test_block_create_tc(user, stack):
    (res,) = replay(user, stack, TC_CREATE)
    assert res.success, res.message
    assert list(res.names) == ["TC0"] and list(res.types) == ["TC"]


def test_block_tc_chain(user, stack):
    results = replay(user, stack, TC_CHAIN)
    assert [r.successful for r in results] == [True] * 3, [r.reason for r in results]
    params = user.status("TC0")["params"]
    assert (params["base_link"], params["end_link"], params["point"]) == (
        "robot-base", "wessling-hand1-finger4_distal_link", [0.0, 0.0, 0.05])


def test_block_create_cs(user, stack):
    (res,) = replay(user, stack, CS_CREATE)
    assert res.success, res.message
    assert list(res.types) == ["CS"]


def test_block_cs_contact(user, stack):
    results = replay(user, stack, CS_CONTACT)
    assert [r.successful for r in results] == [True] * 3, [r.reason for r in results]
    # rc_arm's tags have no external-torque var: the CS asks the simulator to apply the wrench (mode service)
    assert user.status("CS0")["params"]["mode"] == "service"


def test_block_cs_goal_applied_and_tc_echo_estimates_it(user, stack):
    """The CS goal makes the simulator push the tool down with 5 N for 6 s (a failed call would abort it); the
    documented TC echo, typed while it pushes, shows TouchContact's estimate of that force from the simulated
    joint torques, and about zero once the contact ended."""
    for earlier in BLOCKS[:BLOCKS.index(CS_GOAL)]:
        if earlier not in stack["replayed"]:
            replay_one(user, stack, earlier)
    done: list[Any] = []
    runner = threading.Thread(target=lambda: done.append(replay_one(user, stack, CS_GOAL)), daemon=True)
    runner.start()
    estimates = []

    def pressed() -> bool:
        (msg,) = user.run(TC_ECHO)
        f = msg.wrench.force
        estimates.append((f.x, f.y, f.z))
        return abs(f.z + 5.0) < 1.0 and math.hypot(f.x, f.y) < 1.0

    wait_for(lambda: pressed() or done, 60, "TouchContact's estimate of the applied force")
    runner.join(60)
    (handle, result), = done[0]
    assert handle.accepted, user.status("CS0")["last_rejection"]
    assert result.success, result.message
    f = estimates[-1]
    print(f"TouchContact while CS0 pushed 5 N down: force {np.round(f, 3).tolist()} N ({len(estimates)} echoes)")
    assert abs(f[2] + 5.0) < 1.0 and math.hypot(f[0], f[1]) < 1.0, estimates
    stack["replayed"].add(TC_ECHO)

    def released() -> bool:
        (msg,) = user.run(TC_ECHO)
        return abs(msg.wrench.force.z) < 1.0

    wait_for(released, 30, "the estimate back near zero once the contact ended")


# --- bad input: refused with a clear message, nothing moves -----------------------------------------------------
def test_bad_input_is_refused_and_nothing_moves(user, stack):
    replay(user, stack, JR_JOINTS)  # JR0 exists with its joints
    before = user.q()
    res = _l2(user, "start_re", "VF", "X")
    assert not res.success and "unknown cmd 'start_re'" in res.message
    res = _l2(user, "create_re", "Teleporter", "T0")
    assert not res.success and "unknown reacher/extender type 'Teleporter'" in res.message
    assert "T0" not in _instances(user)
    (handle, _), = user.run(JR_GOAL.replace('"aplator_j2"', '"joint5"'))
    assert not handle.accepted
    assert "joint5" in user.status("JR0")["last_rejection"] and "'joints'" in user.status("JR0")["last_rejection"]
    # A VF with an obstacle of negative radius: the parameter is refused, naming it.
    assert _l2(user, "create_re", "VF", "VF1").success
    (res,) = user.run('ros2 param set --no-daemon /VF1 obstacle_spheres "[0.3, 0.0, 0.5, -0.05]"')
    assert not res.successful and "obstacle_spheres" in res.reason and "negative radius" in res.reason
    assert user.status("VF1")["params"]["obstacle_spheres"] == []
    assert _l2(user, "destroy_re", "", "VF1").success
    assert np.abs(user.q() - before).max() < 0.01  # JR0 holds its last target; nothing else moved the arm


def _quat_matrix(xyzw: list[float]) -> np.ndarray:
    from robot_core.rbc.rotations import quat_xyzw_to_matrix

    return quat_xyzw_to_matrix(np.array(xyzw))


def test_obstacles_through_parameters_and_their_topic(user, stack):
    """Not a documented block: a VF's obstacles set with ``ros2 param set`` and on ``~/obstacle_spheres``."""
    from std_msgs.msg import Float64MultiArray

    assert _l2(user, "create_re", "VF", "VF2").success
    try:
        (res,) = user.run('ros2 param set --no-daemon /VF2 obstacle_planes "[0.0, 0.0, 1.0, 0.05]"')
        assert res.successful, res.reason
        pub = user.node.create_publisher(Float64MultiArray, "/VF2/obstacle_spheres", 10)
        wait_for(lambda: pub.get_subscription_count() > 0, 30, "the VF's obstacle topic")

        def spheres() -> list[float]:
            return user.status("VF2")["params"]["obstacle_spheres"]

        wait_for(lambda: (pub.publish(Float64MultiArray(data=[0.3, 0.0, 0.5, 0.05])), spheres())[1], 30,
                 "the sphere from the topic in the parameter")
        assert spheres() == [0.3, 0.0, 0.5, 0.05]
        pub.publish(Float64MultiArray(data=[0.3, 0.0, 0.5, -0.05]))  # refused: the parameter keeps its value
        (res,) = user.run('ros2 param set --no-daemon /VF2 obstacle_spheres "[0.3, 0.0, 0.5, -0.05]"')
        assert not res.successful and "sphere 0" in res.reason and "negative radius" in res.reason
        assert spheres() == [0.3, 0.0, 0.5, 0.05]
    finally:
        assert _l2(user, "destroy_re", "", "VF2").success
