"""The parallel gripper action over DDS: the simulator (rc_arm in the table_top world) in one process, the
controller manager (topic-based hardware, sim time) in another, controllers started by the spawner; an rclpy
ActionClient here. A goal outside the finger's range or naming another joint is rejected; a new goal preempts the
running one; a cancel holds the finger; the arm (joint trajectory action to IK poses) takes the small box between
the fingers, the gripper closes on it and stalls with at most the goal's max_effort, and lifting the arm lifts the
box (its pose from /simulator/object_states). The position type (control_msgs/action/GripperCommand) swapped in
for the parallel one takes and rejects goals the same way."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from cm_helpers import (
    DATA,
    RC_ARM,
    CmClient,
    JointStateRecorder,
    run_spawner,
    start_controller_manager,
    start_simulator,
)
from ros_harness import REPO, NodeProcess, answered_eventually, wait_for, wait_future

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

SUCCEEDED, CANCELED, ABORTED = 4, 5, 6  # action_msgs/GoalStatus
ARM = [f"joint{i}" for i in range(1, 8)]
FINGER = "finger_left_joint"
TABLE_TOP = REPO / "config" / "worlds" / "table_top.yaml"
DOWN = np.array([[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]])  # tool z down, fingers along world y


@pytest.fixture(scope="module")
def graph():
    procs: list[NodeProcess] = []
    try:
        start_simulator(procs, f"world:={TABLE_TOP}")
        start_controller_manager(procs, "use_sim_time:=true", yaml=DATA / "gripper_controllers.yaml")
        code, out = run_spawner("joint_state_broadcaster", "joint_trajectory_controller", "gripper_action_controller")
        assert code == 0, out
        yield procs
    finally:
        for p in procs:
            p.stop()


class Clients:
    """Gripper and arm action clients, /joint_states and the world's object states."""

    def __init__(self, ros):
        from control_msgs.action import FollowJointTrajectory, ParallelGripperCommand
        from robot_core_interfaces.msg import ObjectStates

        from robot_core.ros.action_client import ActionClient

        self.node = ros.node("gripper_test_client")
        self.gripper = ActionClient(self.node, ParallelGripperCommand, "/gripper_action_controller/gripper_cmd")
        self.arm = ActionClient(self.node, FollowJointTrajectory,
                                "/joint_trajectory_controller/follow_joint_trajectory")
        for client in (self.gripper, self.arm):
            assert client.wait_for_server(timeout_sec=30), "action server not discovered"
        self.states = JointStateRecorder(self.node)
        self._objects: dict[str, tuple[float, float, float]] = {}
        self._lock = threading.Lock()
        self.node.create_subscription(ObjectStates, "/simulator/object_states", self._on_objects, 10)
        wait_for(lambda: self.states.positions([*ARM, FINGER]) is not None, 30, "/joint_states")
        wait_for(lambda: self.box() is not None, 30, "/simulator/object_states")
        # a goal far outside the finger's range until one is answered: the first goal response of a fresh client
        # can be lost before discovery settles (ros_harness.answered_eventually); the controller refuses these
        answered_eventually(self.gripper.send_goal_async, self.goal(1.0), "an answer from the gripper goal service")
        empty = FollowJointTrajectory.Goal()
        empty.trajectory.joint_names = list(ARM)
        answered_eventually(self.arm.send_goal_async, empty, "an answer from the arm goal service")

    def _on_objects(self, msg) -> None:
        with self._lock:
            for o in msg.objects:
                self._objects[o.name] = (o.pose.position.x, o.pose.position.y, o.pose.position.z)

    def box(self, name: str = "box_small") -> np.ndarray | None:
        with self._lock:
            p = self._objects.get(name)
        return None if p is None else np.array(p)

    @staticmethod
    def goal(position: float, effort: float | None = None, names: tuple[str, ...] = (FINGER,)):
        from control_msgs.action import ParallelGripperCommand

        goal = ParallelGripperCommand.Goal()
        goal.command.name = list(names)
        goal.command.position = [float(position)]
        if effort is not None:
            goal.command.effort = [float(effort)]
        return goal

    def send(self, client, goal):
        return wait_future(client.send_goal_async(goal), 20, "goal response")

    def result(self, handle, timeout: float = 30.0):
        return wait_future(handle.get_result_async(), timeout, "goal result")

    def grip(self, position: float, effort: float | None = None):
        handle = self.send(self.gripper, self.goal(position, effort))
        assert handle.accepted
        return self.result(handle)

    def finger(self, field: str = "position") -> float:
        msg = self.states.latest()
        return float(getattr(msg, field)[list(msg.name).index(FINGER)])

    def move_tool(self, chain, position: np.ndarray, seconds: float = 3.0) -> None:
        from builtin_interfaces.msg import Duration
        from control_msgs.action import FollowJointTrajectory
        from trajectory_msgs.msg import JointTrajectoryPoint

        target = np.eye(4)
        target[:3, :3], target[:3, 3] = DOWN, position
        ik = chain.inverse_kinematics(target, np.array(self.states.positions(ARM)))
        assert ik.status.name == "CONVERGED", f"IK to {position}: {ik.status}"
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = list(ARM)
        goal.trajectory.points.append(JointTrajectoryPoint(positions=[float(v) for v in ik.q],
                                                           time_from_start=Duration(sec=int(seconds))))
        handle = self.send(self.arm, goal)
        assert handle.accepted
        res = self.result(handle, 60.0)
        assert res.status == SUCCEEDED, res.result.error_string


@pytest.fixture
def clients(ros, graph):
    return Clients(ros)


def test_goal_outside_the_range_or_for_another_joint_is_rejected(clients, graph):
    cm = graph[1]
    for goal, logged in ((clients.goal(0.05), "outside the range [0.0, 0.04] of joint 'finger_left_joint'"),
                         (clients.goal(0.01, names=("joint1",)), "this controller drives only 'finger_left_joint'"),
                         (clients.goal(0.01, names=()), None)):
        handle = clients.send(clients.gripper, goal)
        if logged is None:  # no name: the controller's joint
            assert handle.accepted
            assert clients.result(handle).status == SUCCEEDED
            continue
        assert not handle.accepted
        wait_for(lambda logged=logged: logged in cm.output(), 20, f"the rejection logged: {logged}")


def test_new_goal_preempts_and_cancel_holds(clients):
    assert clients.grip(0.0).status == SUCCEEDED
    first = clients.send(clients.gripper, clients.goal(0.04))
    assert first.accepted
    second = clients.send(clients.gripper, clients.goal(0.01))
    assert second.accepted
    old, new = clients.result(first), clients.result(second)
    print(f"\npreempted: status {old.status}, {old.result}; newer: status {new.status}, {new.result}")
    assert old.status == ABORTED and not old.result.reached_goal and not old.result.stalled
    assert new.status == SUCCEEDED and new.result.reached_goal
    assert new.result.state.position[0] == pytest.approx(0.01, abs=0.0025)

    # a weak goal (0.2 N against the finger's 0.1 N friction and its damping) opens slowly enough to cancel
    handle = clients.send(clients.gripper, clients.goal(0.04, effort=0.2))
    assert handle.accepted
    wait_for(lambda: clients.finger() > 0.015, 20, "the finger opening")
    cancel = wait_future(handle.cancel_goal_async(), 20, "cancel response")
    assert len(cancel.goals_canceling) == 1
    res = clients.result(handle)
    assert res.status == CANCELED
    held = res.result.state.position[0]
    time.sleep(1.0)
    print(f"canceled at {held:.4f}; a second later {clients.finger():.4f}")
    assert 0.013 < held < 0.038 and clients.finger() == pytest.approx(held, abs=0.003)


def test_grasp_holds_the_box_with_max_effort_and_lifts_it(clients):
    from robot_core.kinematics import SerialKinematicChain
    from robot_core.model import load_robot

    chain = SerialKinematicChain(load_robot(RC_ARM), "base_link", "tcp")
    assert clients.grip(0.035).result.reached_goal
    centre = clients.box()
    clients.move_tool(chain, centre + np.array([0.0, 0.0, 0.12]))
    clients.move_tool(chain, centre)
    max_effort = 1.5
    res = clients.grip(0.0, max_effort)
    print(f"\ngrasp: status {res.status}, {res.result}")
    assert res.status == SUCCEEDED and res.result.stalled and not res.result.reached_goal
    assert 0.015 < res.result.state.position[0] < 0.025  # the 4 cm box between the pads: a gap of 2 q
    assert abs(res.result.state.effort[0]) <= max_effort + 1e-9
    efforts = []
    for _ in range(10):  # measured by the simulator, published by the joint state broadcaster
        efforts.append(abs(clients.finger("effort")))
        time.sleep(0.1)
    print(f"measured finger effort while holding: {min(efforts):.4f} .. {max(efforts):.4f} N")
    assert max(efforts) <= max_effort + 1e-6 and min(efforts) > 0.9 * max_effort
    tool_before = chain.forward_kinematics(np.array(clients.states.positions(ARM)))[:3, 3]
    clients.move_tool(chain, centre + np.array([0.0, 0.0, 0.15]))
    wait_for(lambda: clients.box()[2] > centre[2] + 0.1, 10, "the box lifted")
    time.sleep(0.5)
    lifted = clients.box()
    tool_after = chain.forward_kinematics(np.array(clients.states.positions(ARM)))[:3, 3]
    print(f"box before {centre.round(4)}, after lifting: {lifted.round(4)}; the tool rose "
          f"{tool_after[2] - tool_before[2]:.4f} m, the box {lifted[2] - centre[2]:.4f} m")
    assert lifted[2] - centre[2] > 0.12
    assert lifted - centre == pytest.approx(tool_after - tool_before, abs=0.005)  # the box follows the tool


def test_position_type_takes_gripper_command_goals(ros, clients, graph):
    from control_msgs.action import GripperCommand

    from robot_core.ros.action_client import ActionClient

    cm = CmClient(ros.node("gripper_cm_client"))
    assert cm.switch([], ["gripper_action_controller"]).ok
    try:
        assert cm.load("position_gripper_controller") and cm.configure("position_gripper_controller")
        assert cm.switch(["position_gripper_controller"]).ok
        client = ActionClient(clients.node, GripperCommand, "/position_gripper_controller/gripper_cmd")
        assert client.wait_for_server(timeout_sec=30)

        def goal(position: float, max_effort: float = 2.0):
            g = GripperCommand.Goal()
            g.command.position, g.command.max_effort = position, max_effort
            return g

        answered_eventually(client.send_goal_async, goal(1.0), "an answer from the position type's goal service")
        assert not clients.send(client, goal(-0.01)).accepted
        wait_for(lambda: "outside the range [0.0, 0.04] of joint 'finger_left_joint'" in graph[1].output(), 20,
                 "the rejection logged")
        for target in (0.03, 0.01):
            handle = clients.send(client, goal(target))
            assert handle.accepted
            res = clients.result(handle)
            print(f"\nGripperCommand {target}: status {res.status}, {res.result}")
            assert res.status == SUCCEEDED and res.result.reached_goal and not res.result.stalled
            assert res.result.position == pytest.approx(target, abs=0.0025)
            assert abs(res.result.effort) <= 2.0
    finally:
        cm.switch([], ["position_gripper_controller"])
        cm.unload("position_gripper_controller")
        assert cm.switch(["gripper_action_controller"]).ok
