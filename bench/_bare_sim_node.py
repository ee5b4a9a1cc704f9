"""The anchor of the simulator node's rows (issue #21): raw ``mj_step`` plus a bare rclpy node publishing the same
messages at the same rates, as fast as possible.

Run as its own process by ``bench/simulator_node.py`` (``python bench/_bare_sim_node.py URDF STATES_HZ TF_HZ
CLOCK_HZ``). The model is the simulator's (compiled from the engine's spec with its servo gains and hold command,
as ``bench/simulator.py``'s raw row); the loop has no robot_core code in it: ``mujoco.mj_step`` once per step,
then, when due, a ``JointState`` of every scalar joint (position, velocity, actuator force), a ``Clock`` and a
``TFMessage`` with one transform per moving body (its world pose), each filled into a message object made once and
handed to ``publish`` -- what a straightforward rclpy node does. Same topics and QoS as the node, and a
``SimulatorStatus`` on ``/simulator/status`` at 10 Hz wall time, so the benchmark measures both the same way.
"""

from __future__ import annotations

import sys
import time
import warnings


def main() -> int:
    urdf, states_hz, tf_hz, clock_hz = sys.argv[1], *(float(a) for a in sys.argv[2:5])
    import mujoco
    import rclpy
    from geometry_msgs.msg import TransformStamped
    from robot_core_interfaces.msg import SimulatorStatus
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    from robot_core.model import load_robot
    from robot_core.nodes.simulator import CLOCK_QOS, STATE_QOS, TF_QOS
    from robot_core.physics.engine import PhysicsEngine

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eng = PhysicsEngine(load_robot(urdf), timestep=1e-3)
    m = eng.built.spec.compile()
    m.actuator_gainprm[:] = eng.model.actuator_gainprm
    m.actuator_biasprm[:] = eng.model.actuator_biasprm
    m.jnt_limited[:] = eng.model.jnt_limited
    d = mujoco.MjData(m)
    d.qpos[:] = eng.data.qpos
    d.ctrl[:] = eng.data.ctrl
    mujoco.mj_forward(m, d)
    scalar = [j for j in range(m.njnt) if m.jnt_type[j] in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)]
    qadr, vadr = m.jnt_qposadr[scalar], m.jnt_dofadr[scalar]
    moving = sorted({int(m.jnt_bodyid[j]) for j in range(m.njnt)})

    rclpy.init()
    node = rclpy.create_node("bare_sim_anchor")
    js_pub = node.create_publisher(JointState, "/robot_joint_states", STATE_QOS)
    clock_pub = node.create_publisher(Clock, "/clock", CLOCK_QOS)
    tf_pub = node.create_publisher(TFMessage, "/tf", TF_QOS)
    status_pub = node.create_publisher(SimulatorStatus, "/simulator/status", 10)
    js = JointState(name=[m.joint(j).name for j in scalar])
    clock = Clock()
    tfs = []
    for b in moving:
        tf = TransformStamped()
        tf.header.frame_id = m.body(int(m.body_parentid[b])).name or "world"
        tf.child_frame_id = m.body(b).name
        tfs.append(tf)
    tf_msg = TFMessage(transforms=tfs)
    status = SimulatorStatus()
    dt_ns = round(m.opt.timestep * 1e9)
    every = {k: max(1, round(1.0 / (hz * m.opt.timestep))) for k, hz in
             (("states", states_hz), ("tf", tf_hz), ("clock", clock_hz))}
    print("bare anchor ready", flush=True)
    step, count, next_status = mujoco.mj_step, 0, time.monotonic()
    try:
        while True:  # until SIGINT (KeyboardInterrupt)
            step(m, d)
            count += 1
            sec, nanosec = divmod(count * dt_ns, 1_000_000_000)
            if count % every["clock"] == 0:
                clock.clock.sec, clock.clock.nanosec = sec, nanosec
                clock_pub.publish(clock)
            if count % every["states"] == 0:
                js.header.stamp.sec, js.header.stamp.nanosec = sec, nanosec
                js.position = d.qpos[qadr].tolist()
                js.velocity = d.qvel[vadr].tolist()
                js.effort = d.qfrc_actuator[vadr].tolist()
                js_pub.publish(js)
            if count % every["tf"] == 0:
                for tf, b in zip(tfs, moving, strict=True):
                    tf.header.stamp.sec, tf.header.stamp.nanosec = sec, nanosec
                    t, r = tf.transform.translation, tf.transform.rotation
                    t.x, t.y, t.z = d.xpos[b].tolist()
                    r.w, r.x, r.y, r.z = d.xquat[b].tolist()
                tf_pub.publish(tf_msg)
            if count % 100 == 0 and time.monotonic() >= next_status:
                next_status += 0.1
                status.sim_time.sec, status.sim_time.nanosec = sec, nanosec
                status.step_count = count
                status_pub.publish(status)
    except KeyboardInterrupt:
        pass
    finally:
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
