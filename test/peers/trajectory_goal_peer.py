"""A separate-process client for the network-namespace test: one FollowJointTrajectory goal, as `ros2 action
send_goal` would send it, and the arm's answer on /joint_states.

    trajectory_goal_peer.py [--delta RAD] [--timeout S]

Waits for the JTC's action server and the broadcaster's /joint_states, sends joint1 to its current position +
delta in 2 s, waits for the result and for /joint_states to show joint1 there; prints ``GOAL SUCCEEDED joint1 ...``
and exits 0, or prints why not and exits 1.
"""

import argparse
import sys
import time

import rclpy
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionClient
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectoryPoint


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delta", type=float, default=0.3)
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()
    rclpy.init()
    node = rclpy.create_node("trajectory_goal_peer")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    seen: list[JointState] = []
    node.create_subscription(JointState, "/joint_states", seen.append, 10)
    client = ActionClient(node, FollowJointTrajectory, "/joint_trajectory_controller/follow_joint_trajectory")
    end = time.monotonic() + args.timeout

    def spin_until(condition, what: str) -> None:
        while not condition():
            if time.monotonic() > end:
                print(f"TIMEOUT waiting for {what}", flush=True)
                sys.exit(1)
            executor.spin_once(timeout_sec=0.05)

    def joint1() -> float:
        return seen[-1].position[list(seen[-1].name).index("joint1")]

    spin_until(client.server_is_ready, "the follow_joint_trajectory action server")
    spin_until(lambda: seen and "joint1" in seen[-1].name, "/joint_states with joint1")
    target = joint1() + args.delta
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = ["joint1"]
    goal.trajectory.points = [JointTrajectoryPoint(positions=[target], time_from_start=Duration(sec=2))]
    sent = client.send_goal_async(goal)
    spin_until(sent.done, "the goal's acceptance")
    handle = sent.result()
    if not handle.accepted:
        print("GOAL REJECTED", flush=True)
        return 1
    result_future = handle.get_result_async()
    spin_until(result_future.done, "the goal's result")
    result = result_future.result().result
    if result.error_code != FollowJointTrajectory.Result.SUCCESSFUL:
        print(f"GOAL FAILED {result.error_code} {result.error_string}", flush=True)
        return 1
    spin_until(lambda: abs(joint1() - target) < 0.03, "joint1 at the target on /joint_states")
    print(f"GOAL SUCCEEDED joint1 {joint1():.4f} target {target:.4f}", flush=True)
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
