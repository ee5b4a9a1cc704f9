"""The demo's own ROS client: one rclpy node in a private context with a background executor, and the calls a
scenario makes through it (services, parameters of nodes created at run time, action goals with progress lines).

It records the arm's actual positions (``/joint_states``) and the positions commanded to it (the
joint_trajectory_controller's ``~/controller_state`` reference, the forward_position_controller's
``~/commands``) into a :class:`robot_core.demo.report.TrackingLog`, for the tracking plot. Scenario-independent:
a scenario's steps use these classes, the runner creates and stops the node.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from robot_core.demo.report import TrackingLog

# Controllers of config/controllers.yaml whose commands the node records.
JTC = "joint_trajectory_controller"
FPC = "forward_position_controller"


class DemoStepError(RuntimeError):
    """A step could not even be attempted (a service missing, a goal rejected)."""



def progress(msg: str) -> None:
    print(msg, flush=True)


class DemoNode:
    """rclpy context + node + background executor; records /joint_states and the commands sent to the arm."""

    def __init__(self, log: TrackingLog):
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import MultiThreadedExecutor
        from rclpy.parameter import Parameter
        from rclpy.signals import SignalHandlerOptions

        self.log = log
        self.context = Context()
        rclpy.init(context=self.context, signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node("robot_core_demo", context=self.context,
                                      parameter_overrides=[Parameter("use_sim_time", value=True)])
        self.executor = MultiThreadedExecutor(num_threads=4, context=self.context)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True, name="demo-executor")
        self._thread.start()
        self.rtf_samples: list[float] = []
        self._clients: dict[str, Any] = {}
        self.retired: list[Any] = []  # action clients of finished steps, destroyed by shutdown()
        self._subscribe()
        self._make_clients()

    def _make_clients(self) -> None:
        """Service clients made once, at start: a client created just before its call can lose the answer
        (the server may reply before the client's response reader is matched), which a loaded machine hits."""
        from controller_manager_msgs.srv import ListControllers, SwitchController
        from robot_core_interfaces.srv import L2Control

        for srv_type, name in ((ListControllers, "/controller_manager/list_controllers"),
                               (SwitchController, "/controller_manager/switch_controller"),
                               (L2Control, "/rbc/l2_ctrl")):
            self._clients[name] = self.node.create_client(srv_type, name)

    def _spin(self) -> None:
        # Not a bare loop: destroying a step's action client while this thread builds a wait set raises here, and
        # a loop that ended on it left every later call of the demo unanswered (seen under load).
        from robot_core.ros.node_main import spin_while

        spin_while(self.executor, self.context.ok, lambda text: print(f"demo: {text}", file=sys.stderr), 0.05)

    def _subscribe(self) -> None:
        from control_msgs.msg import JointTrajectoryControllerState
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray

        def stamp(msg: Any) -> float:
            return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9

        self.node.create_subscription(JointState, "/joint_states",
                                      lambda m: self.log.add_actual(stamp(m), m.name, m.position), 50)
        self.node.create_subscription(JointTrajectoryControllerState, f"/{JTC}/controller_state",
                                      lambda m: self.log.add_commanded(stamp(m), m.joint_names,
                                                                       m.reference.positions), 50)
        self.node.create_subscription(Float64MultiArray, f"/{FPC}/commands",
                                      lambda m: self.log.add_commanded(self.sim_now(), self.log.joints, m.data), 50)
        try:
            from robot_core_interfaces.msg import ObjectStates

            def objects(m: Any) -> None:
                self.log.add_object_poses(stamp(m), {o.name: (o.pose.position.x, o.pose.position.y,
                                                              o.pose.position.z, o.pose.orientation.w,
                                                              o.pose.orientation.x, o.pose.orientation.y,
                                                              o.pose.orientation.z) for o in m.objects})

            # the simulator's (topic mode) or the embedded controller manager's: the run's video moves the objects
            for topic in ("/simulator/object_states", "/controller_manager/object_states"):
                self.node.create_subscription(ObjectStates, topic, objects, 50)
        except ImportError:
            pass
        try:
            from robot_core_interfaces.msg import SimulatorStatus

            self.node.create_subscription(SimulatorStatus, "/simulator/status",
                                          lambda m: self.rtf_samples.append(m.real_time_factor), 10)
        except ImportError:
            pass

    def sim_now(self) -> float:
        return self.node.get_clock().now().nanoseconds * 1e-9

    def wait(self, future: Any, timeout: float, what: str, tick: Callable[[], None] | None = None) -> Any:
        """Wait for an rclpy future completed by the background executor; ``tick`` runs about once a second."""
        end = time.monotonic() + timeout
        next_tick = time.monotonic() + 1.0
        while not future.done():
            if time.monotonic() > end:
                with contextlib.suppress(Exception):
                    future.cancel()
                raise DemoStepError(f"{what}: no answer within {timeout:.0f} s")
            if tick is not None and time.monotonic() >= next_tick:
                tick()
                next_tick += 1.0
            time.sleep(0.01)
        if future.exception() is not None:
            raise DemoStepError(f"{what}: {future.exception()}")
        return future.result()

    def call(self, name: str, request: Any, timeout: float = 30.0) -> Any:
        client = self._clients[name]
        if not client.wait_for_service(timeout_sec=timeout):
            raise DemoStepError(f"service {name} is not available")
        return self.wait(client.call_async(request), timeout, f"service {name}")

    def set_parameters(self, node_name: str, values: dict[str, Any], timeout: float = 30.0,
                       attempts: int = 3) -> None:
        """Set parameters of a node created at run time (its client is necessarily new: retried, as it is
        idempotent, when the answer does not come)."""
        from rclpy.parameter import Parameter
        from rclpy.parameter_client import AsyncParameterClient

        client = AsyncParameterClient(self.node, node_name)
        if not client.wait_for_services(timeout_sec=timeout):
            raise DemoStepError(f"parameter services of /{node_name} are not available")
        params = [Parameter(k, value=v) for k, v in values.items()]
        for attempt in range(attempts):
            try:
                response = self.wait(client.set_parameters(params), timeout / attempts,
                                     f"setting parameters of /{node_name}")
                break
            except DemoStepError:
                if attempt == attempts - 1:
                    raise
        bad = [f"{p.name}: {r.reason}" for p, r in zip(params, response.results, strict=True) if not r.successful]
        if bad:
            raise DemoStepError(f"/{node_name} refused parameters: {'; '.join(bad)}")

    def shutdown(self) -> None:
        with contextlib.suppress(Exception):
            self.executor.shutdown(timeout_sec=1.0)
        for client in self.retired:  # the steps' action clients (ActionRun.destroy), now that nothing spins
            with contextlib.suppress(Exception):
                client.destroy()
        with contextlib.suppress(Exception):
            self.node.destroy_node()
        with contextlib.suppress(Exception):
            self.context.try_shutdown()
        self._thread.join(timeout=3.0)


class ActionRun:
    """Send one action goal, wait for its result with periodic progress lines."""

    def __init__(self, demo: DemoNode, action_type: Any, name: str):
        from robot_core.ros.action_client import ActionClient

        self.demo = demo
        self.client = ActionClient(demo.node, action_type, name)
        self.name = name
        self.feedback: Any = None

    def run(self, goal: Any, timeout: float, describe: Callable[[Any], str]) -> tuple[Any, int]:
        from action_msgs.msg import GoalStatus

        if not self.client.wait_for_server(timeout_sec=60.0):
            raise DemoStepError(f"action server {self.name} is not available")
        handle = self.demo.wait(self.client.send_goal_async(goal, feedback_callback=self._on_feedback), 60.0,
                                f"sending the goal to {self.name}")
        if not handle.accepted:
            raise DemoStepError(f"{self.name} rejected the goal (see its node's log)")
        t0 = time.monotonic()

        def tick() -> None:
            if self.feedback is not None:
                progress(f"      {time.monotonic() - t0:5.1f} s: {describe(self.feedback)}")

        result = self.demo.wait(handle.get_result_async(), timeout, f"result of {self.name}", tick)
        status = result.status
        if status not in (GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_ABORTED, GoalStatus.STATUS_CANCELED):
            raise DemoStepError(f"{self.name}: goal ended with status {status}")
        return result.result, status

    def _on_feedback(self, msg: Any) -> None:
        self.feedback = msg.feedback

    def destroy(self) -> None:
        """Hand the client to the demo node, which destroys it once its executor stopped: destroyed while the
        executor built a wait set it raised there (rcl_action: "action client pointer is invalid"), and the
        next step's goal then went unanswered (seen once in a quiet full run)."""
        self.demo.retired.append(self.client)


def status_name(status: int) -> str:
    return {4: "SUCCEEDED", 5: "CANCELED", 6: "ABORTED"}.get(status, str(status))


def wait_for(cond: Callable[[], Any], timeout: float, what: str) -> Any:
    end = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > end:
            raise DemoStepError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.02)
