"""One reacher/extender of the ``rbc`` node as its own process (``create_re`` with ``data: "JR process"``, or
``instance_processes: true``).

Started by the rbc node on ``create_re`` with ``PROCESS_ARGV`` and a JSON spec (robot_core.rbc.instance_process):
the instance steps on the shared-memory var table once per coupler cycle (``InstanceRunner``) and serves, on its
own ROS node named after it, the same parameters, parameter topics and ``~/status`` as in-process
(robot_core.nodes.rbc_instance_node.InstanceNode, the same class). Its actions are served by the rbc node, which
outlives it, and reach the instance over the goal channel (robot_core.rbc.goal_channel). Contact types publish
their wrenches and their contact frame on ``/tf`` from here, and ContactSimulation in mode ``service`` calls the
simulator's apply-wrench service from here (robot_core.ros.apply_wrench_caller). It ends on end of file from the
coupler (``destroy_re``, rbc shutdown). Exit code 2 when it cannot start (the coupler then answers
``create_re`` with the reason).
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
import time
from typing import Any

PROCESS_ARGV = ["-c", "import sys; from robot_core.nodes.rbc_instance_process import main; sys.exit(main())"]
EXIT_START_FAILED = 2


def main(argv: list[str] | None = None) -> int:
    import rclpy
    import rclpy.signals
    from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

    from robot_core.nodes.rbc_instance_node import InstanceNode
    from robot_core.rbc.instance_process import InstanceRunner, load_model, set_parent_death_signal
    from robot_core.ros.apply_wrench_caller import ApplyWrenchCaller
    from robot_core.ros.stack_dumps import enable_stack_dumps

    args = sys.argv[1:] if argv is None else argv
    spec = json.loads(args[-1])
    set_parent_death_signal()
    name = str(spec.get("name", "?"))
    # Ctrl-C (SIGINT to the whole process group) is the rbc node's to handle: it ends its instances through the
    # tick pipe after its last cycle. Here it only raised KeyboardInterrupt mid-step.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    enable_stack_dumps()
    rclpy.init(args=[], signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    log = rclpy.logging.get_logger(f"rbc.{name}")
    try:
        runner = InstanceRunner(load_model(spec), spec, log=log.error)
        inst = runner.inst
        if inst.TYPE_NAME == "CS":  # the tags' external-torque var (the rbc node found it), or the service
            torque_var = spec.get("cs_torque_var")
            inst.configure({"mode": "service"} if not torque_var else {"torque_var": str(torque_var)})
        node = InstanceNode(inst, runner.lock, runner.derived, namespace=str(spec.get("namespace", "")),
                            feedback_period=float(spec.get("feedback_period", 0.05)),
                            use_sim_time=bool(spec.get("use_sim_time", False)),
                            frame_prefix=str(spec.get("frame_prefix", "")), serve_actions=False)
        if runner.goals is not None:
            runner.goals.on_reject = node.set_rejection
    except Exception as exc:
        log.fatal(f"instance '{name}' ({spec.get('type')}) cannot start: {type(exc).__name__}: {exc}")
        rclpy.try_shutdown()
        return EXIT_START_FAILED
    from tf2_msgs.msg import TFMessage

    tf_pub = node.create_publisher(TFMessage, "/tf", QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                                                                reliability=ReliabilityPolicy.RELIABLE))
    executor = MultiThreadedExecutor(num_threads=int(spec.get("threads", 4)))
    executor.add_node(node)

    def spin() -> None:
        with contextlib.suppress(ExternalShutdownException):
            executor.spin()

    thread = threading.Thread(target=spin, name=f"rbc-{name}", daemon=True)
    thread.start()
    output_period = 1.0 / float(spec.get("output_rate", 50.0))
    next_output = [0.0]
    caller: list[ApplyWrenchCaller] = []

    def abort(goal_id: int, reason: str) -> None:
        with runner.lock:
            inst.abort(goal_id, reason)

    def outputs(result: Any) -> None:
        """The simulator call of every apply-wrench request; wrenches and the contact frame at output_rate."""
        request = result.derived.get("apply_wrench_request")
        if request is not None:
            if not caller:
                caller.append(ApplyWrenchCaller(node, str(spec.get("apply_wrench_service", "simulator/apply_wrench"))))
            with runner.lock:
                goal_id = inst.status().goal_id
            caller[0].call(name, request, lambda reason, gid=goal_id: abort(gid, reason))
        now = time.monotonic()
        if not result.derived or now < next_output[0]:
            return
        next_output[0] = now + output_period
        try:
            t = node.publish_derived(result.derived, node.get_clock().now().to_msg())
            if t is not None:
                tf_pub.publish(TFMessage(transforms=[t]))
        except Exception as exc:
            log.warning(f"outputs of '{name}' not published: {exc}", throttle_duration_sec=5.0)

    reason = "shut down"
    try:
        runner.mark_ready()
        log.info(f"{inst.label()} runs as process on the shared var table")
        reason = runner.serve(alive=rclpy.ok, after_step=outputs)
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
        log.error(f"'{name}' stopped: {reason}")
    finally:
        node.close()
        if caller:
            caller[0].close()
        time.sleep(0.2)  # let the last outputs and calls go out
        executor.shutdown(timeout_sec=1.0)
        thread.join(timeout=2.0)  # a spin thread still in rcl at exit aborts the process (std::terminate)
        node.destroy_node()
        runner.close()
        rclpy.try_shutdown()
    log.info(f"'{name}' ended: {reason}")
    return 0
