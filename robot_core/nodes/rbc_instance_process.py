"""One reacher/extender of the ``rbc`` node as its own process (``instance_processes: true``).

Started by the rbc node on ``create_re`` with ``PROCESS_ARGV`` and a JSON spec (robot_core.rbc.instance_process):
the instance steps on the shared-memory var table once per coupler cycle (``InstanceRunner``) and serves, on its
own ROS node named after it, the same action, parameters, parameter topics and ``~/status`` as in-process
(robot_core.nodes.rbc_instance_node.InstanceNode, the same class). Contact types publish their wrenches and their
contact frame on ``/tf`` from here. It ends on end of file from the coupler (``destroy_re``, rbc shutdown):
running goals abort ("destroyed") and their results go out first. Exit code 2 when it cannot start (the
coupler then answers ``create_re`` with the reason).
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from typing import Any

PROCESS_ARGV = ["-c", "import sys; from robot_core.nodes.rbc_instance_process import main; sys.exit(main())"]
EXIT_START_FAILED = 2


def main(argv: list[str] | None = None) -> int:
    import rclpy
    from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

    from robot_core.nodes.rbc_instance_node import InstanceNode
    from robot_core.rbc.instance_process import InstanceRunner, load_model, set_parent_death_signal

    args = sys.argv[1:] if argv is None else argv
    spec = json.loads(args[-1])
    set_parent_death_signal()
    name = str(spec.get("name", "?"))
    rclpy.init(args=[])
    log = rclpy.logging.get_logger(f"rbc.{name}")
    try:
        runner = InstanceRunner(load_model(spec), spec, log=log.error)
        inst = runner.inst
        if inst.TYPE_NAME == "CS" and spec.get("cs_service_mode"):
            inst.configure({"mode": "service"})
        node = InstanceNode(inst, runner.lock, runner.derived, namespace=str(spec.get("namespace", "")),
                            feedback_period=float(spec.get("feedback_period", 0.05)),
                            use_sim_time=bool(spec.get("use_sim_time", False)),
                            frame_prefix=str(spec.get("frame_prefix", "")))
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
    warned: set[str] = set()

    def outputs(result: Any) -> None:
        """Wrenches and the contact frame at output_rate; what only the rbc process can do is reported once."""
        now = time.monotonic()
        if not result.derived or now < next_output[0]:
            return
        next_output[0] = now + output_period
        if "apply_wrench_request" in result.derived and "apply" not in warned:
            warned.add("apply")
            log.error(f"'{name}': ContactSimulation in mode 'service' calls the simulator from the rbc process "
                      f"only; as a process it applies nothing (use instance_processes: false)")
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
        node.close()  # running goals abort with "destroyed"; let their results go out
        deadline = time.monotonic() + 2.0
        while node.executing and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()
        runner.close()
        rclpy.try_shutdown()
    log.info(f"'{name}' ended: {reason}")
    return 0
