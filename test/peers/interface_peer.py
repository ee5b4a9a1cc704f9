"""A separate-process ROS 2 peer for the foundation tests: it serves and echoes our interfaces.

- action  /peer/follow_joint_trajectory  (control_msgs/action/FollowJointTrajectory): "executes"
  each trajectory point for 50 ms, publishing feedback for it every 10 ms (a late-matching
  feedback subscription still sees every point), then succeeds with error_code SUCCESSFUL; goals
  whose trajectory has no points are rejected.
- service /peer/switch_controller (controller_manager_msgs/srv/SwitchController): ok when the
  activate and deactivate lists do not overlap, message says what it did.
- topic   /peer/tf_in -> /peer/tf_out (tf2_msgs/msg/TFMessage): every transform echoed with the
  child frame renamed "<child>_echo".
- service /peer/step (robot_core_interfaces/srv/StepSimulation): counts steps.
"""

import time

import rclpy
from control_msgs.action import FollowJointTrajectory
from controller_manager_msgs.srv import SwitchController
from rclpy.action import ActionServer, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from robot_core_interfaces.srv import StepSimulation
from tf2_msgs.msg import TFMessage


class InterfacePeer(Node):
    def __init__(self) -> None:
        super().__init__("interface_peer")
        group = ReentrantCallbackGroup()
        self.steps = 0
        self._action = ActionServer(self, FollowJointTrajectory, "/peer/follow_joint_trajectory",
                                    execute_callback=self.execute, goal_callback=self.check_goal,
                                    callback_group=group)
        self.create_service(SwitchController, "/peer/switch_controller", self.switch)
        self.create_service(StepSimulation, "/peer/step", self.step)
        self.tf_out = self.create_publisher(TFMessage, "/peer/tf_out", 10)
        self.create_subscription(TFMessage, "/peer/tf_in", self.echo_tf, 10)
        self.get_logger().info("interface peer ready")

    def check_goal(self, goal: FollowJointTrajectory.Goal) -> GoalResponse:
        return GoalResponse.ACCEPT if goal.trajectory.points else GoalResponse.REJECT

    def execute(self, handle):
        points = handle.request.trajectory.points
        for i, point in enumerate(points):
            fb = FollowJointTrajectory.Feedback()
            fb.joint_names = list(handle.request.trajectory.joint_names)
            fb.desired = point
            fb.index = i
            for _ in range(5):
                handle.publish_feedback(fb)
                time.sleep(0.01)
        handle.succeed()
        result = FollowJointTrajectory.Result()
        result.error_code = FollowJointTrajectory.Result.SUCCESSFUL
        result.error_string = f"followed {len(points)} points"
        return result

    def switch(self, req: SwitchController.Request, res: SwitchController.Response) -> SwitchController.Response:
        overlap = set(req.activate_controllers) & set(req.deactivate_controllers)
        res.ok = not overlap and req.strictness in (SwitchController.Request.BEST_EFFORT,
                                                    SwitchController.Request.STRICT)
        res.message = (f"activate {list(req.activate_controllers)} deactivate {list(req.deactivate_controllers)}"
                       if res.ok else f"refused: overlap {sorted(overlap)} or strictness {req.strictness}")
        return res

    def step(self, req: StepSimulation.Request, res: StepSimulation.Response) -> StepSimulation.Response:
        self.steps += req.steps
        res.success = True
        res.step_count = self.steps
        res.sim_time.sec = self.steps // 1000
        res.sim_time.nanosec = (self.steps % 1000) * 1_000_000
        return res

    def echo_tf(self, msg: TFMessage) -> None:
        for t in msg.transforms:
            t.child_frame_id = t.child_frame_id + "_echo"
        self.tf_out.publish(msg)


def main() -> None:
    rclpy.init()
    node = InterfacePeer()
    executor = MultiThreadedExecutor()
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
