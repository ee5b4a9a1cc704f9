"""The anchor of the simulator node's rows (issue #21): raw ``mj_step`` plus a bare rclpy node publishing the same
messages at the same rates, as fast as possible.

Run as its own process by ``bench/simulator_node.py`` (``python bench/_bare_sim_node.py URDF STATES_HZ TF_HZ
CLOCK_HZ``); ``bench/simulator_node.py --tick-breakdown`` also times :meth:`BareSimAnchor.step` in its own
process beside the node's tick. The model is the simulator's (``bench/_raw_model.py``: compiled from the engine's
spec with its servo gains and hold command, as ``bench/simulator.py``'s raw row); the loop has no robot_core code
in it: ``mujoco.mj_step`` once per step, then, when due, a ``JointState`` of every scalar joint (position,
velocity, actuator force), a ``Clock`` and a ``TFMessage`` with one transform per moving body (its world pose),
each filled into a message object made once and handed to ``publish`` -- what a straightforward rclpy node does.
Same topics and QoS as the node, and a ``SimulatorStatus`` on ``/simulator/status`` at 10 Hz wall time, so the
benchmark measures both the same way.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _raw_model import raw_model_of


class BareSimAnchor:
    """The bare loop on ``node`` (an rclpy node): :meth:`step` is one physics step and what is due after it."""

    def __init__(self, node: Any, urdf: str, states_hz: float, tf_hz: float, clock_hz: float):
        import mujoco
        from geometry_msgs.msg import TransformStamped
        from robot_core_interfaces.msg import SimulatorStatus
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState
        from tf2_msgs.msg import TFMessage

        from robot_core.nodes.simulator import CLOCK_QOS, STATE_QOS, TF_QOS

        self.m, self.d = raw_model_of(urdf)
        m = self.m
        scalar = [j for j in range(m.njnt)
                  if m.jnt_type[j] in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)]
        self.qadr, self.vadr = m.jnt_qposadr[scalar], m.jnt_dofadr[scalar]
        self.moving = sorted({int(m.jnt_bodyid[j]) for j in range(m.njnt)})
        self.js_pub = node.create_publisher(JointState, "/robot_joint_states", STATE_QOS)
        self.clock_pub = node.create_publisher(Clock, "/clock", CLOCK_QOS)
        self.tf_pub = node.create_publisher(TFMessage, "/tf", TF_QOS)
        self.status_pub = node.create_publisher(SimulatorStatus, "/simulator/status", 10)
        self.js = JointState(name=[m.joint(j).name for j in scalar])
        self.clock = Clock()
        self.tfs = []
        for b in self.moving:
            tf = TransformStamped()
            tf.header.frame_id = m.body(int(m.body_parentid[b])).name or "world"
            tf.child_frame_id = m.body(b).name
            self.tfs.append(tf)
        self.tf_msg = TFMessage(transforms=self.tfs)
        self.status = SimulatorStatus()
        self.dt_ns = round(m.opt.timestep * 1e9)
        self.every = {k: max(1, round(1.0 / (hz * m.opt.timestep))) for k, hz in
                      (("states", states_hz), ("tf", tf_hz), ("clock", clock_hz))}
        self.count = 0
        self.next_status = time.monotonic()
        self._mj_step = mujoco.mj_step

    def step(self) -> None:
        m, d = self.m, self.d
        self._mj_step(m, d)
        self.count = count = self.count + 1
        sec, nanosec = divmod(count * self.dt_ns, 1_000_000_000)
        every = self.every
        if count % every["clock"] == 0:
            self.clock.clock.sec, self.clock.clock.nanosec = sec, nanosec
            self.clock_pub.publish(self.clock)
        if count % every["states"] == 0:
            js = self.js
            js.header.stamp.sec, js.header.stamp.nanosec = sec, nanosec
            js.position = d.qpos[self.qadr].tolist()
            js.velocity = d.qvel[self.vadr].tolist()
            js.effort = d.qfrc_actuator[self.vadr].tolist()
            self.js_pub.publish(js)
        if count % every["tf"] == 0:
            for tf, b in zip(self.tfs, self.moving, strict=True):
                tf.header.stamp.sec, tf.header.stamp.nanosec = sec, nanosec
                t, r = tf.transform.translation, tf.transform.rotation
                t.x, t.y, t.z = d.xpos[b].tolist()
                r.w, r.x, r.y, r.z = d.xquat[b].tolist()
            self.tf_pub.publish(self.tf_msg)
        if count % 100 == 0 and time.monotonic() >= self.next_status:
            self.next_status += 0.1
            status = self.status
            status.sim_time.sec, status.sim_time.nanosec = sec, nanosec
            status.step_count = count
            self.status_pub.publish(status)


def main() -> int:
    urdf, states_hz, tf_hz, clock_hz = sys.argv[1], *(float(a) for a in sys.argv[2:5])
    import rclpy

    rclpy.init()
    node = rclpy.create_node("bare_sim_anchor")
    anchor = BareSimAnchor(node, urdf, states_hz, tf_hz, clock_hz)
    print("bare anchor ready", flush=True)
    step = anchor.step
    try:
        while True:  # until SIGINT (KeyboardInterrupt)
            step()
    except KeyboardInterrupt:
        pass
    finally:
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
