"""`robot-core bringup --world`: the plan hands the world to the simulator (topic mode) or to the embedded controller
manager, and the graph comes
up with the table-top scene: its objects on ~/object_states and /tf_static, the robot in the same tf tree."""

from __future__ import annotations

import signal
import uuid

import pytest
from ros_harness import REPO, NodeProcess, wait_for

from robot_core.bringup.plan import BringupConfigError, BringupOptions, make_plan
from robot_core.bringup.run import READY_PREFIX
from robot_core.bringup.supervisor import MARKER_ENV, processes_with_marker

TABLE_TOP = REPO / "config" / "worlds" / "table_top.yaml"


def test_the_plan_passes_the_world_to_the_simulator():
    plan = make_plan(BringupOptions.create(world="config/worlds/table_top.yaml"))
    assert plan.simulator is not None
    assert plan.simulator.parameters["world"] == str(TABLE_TOP)
    assert f"world:={TABLE_TOP}" in plan.simulator.ros_arguments()
    assert "world" not in make_plan(BringupOptions.create()).simulator.parameters


def test_a_world_in_embedded_mode_goes_to_the_controller_manager_and_must_exist(tmp_path):
    sim_yaml = tmp_path / "sim.yaml"
    sim_yaml.write_text("simulator:\n  ros__parameters:\n    timestep: 0.002\n    sensors: [scene_camera]\n"
                        "    sensor_rates: {scene_camera: 2.0}\n    publish_rate: 100.0\n")
    plan = make_plan(BringupOptions.create(mode="embedded", world="config/worlds/table_top.yaml",
                                           simulator_config=sim_yaml))
    cm = plan.controller_manager.parameters
    assert plan.simulator is None and cm["world"] == str(TABLE_TOP) and cm["sim_timestep"] == 0.002
    # the scene settings of the simulator YAML reach the embedded manager; a map becomes its family's names
    assert cm["sensors"] == ["scene_camera"] and cm["sensor_rates.scene_camera"] == 2.0
    assert "publish_rate" not in cm  # not a setting of the embedded physics
    assert "sensor_rates.scene_camera:=2.0" in plan.controller_manager.ros_arguments()
    with pytest.raises(BringupConfigError, match=r"world file 'nowhere\.yaml' not found"):
        BringupOptions.create(world="nowhere.yaml")


@pytest.mark.ros
@pytest.mark.slow
def test_bringup_with_the_table_top_world(ros, processes):
    pytest.importorskip("rclpy")
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from robot_core_interfaces.msg import ObjectStates
    from tf2_msgs.msg import TFMessage

    marker = f"test-bringup-world-{uuid.uuid4().hex}"
    proc = NodeProcess.console_script("robot-core", "bringup", "--world", "config/worlds/table_top.yaml",
                                      "--no-rbc", "--headless", env={MARKER_ENV: marker}, cwd=REPO)
    processes.append(proc)
    proc.wait_for_output(READY_PREFIX, timeout=150)
    node = ros.node("bringup_world_client")
    objects: list[ObjectStates] = []
    static: dict[tuple[str, str], object] = {}
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(ObjectStates, "/simulator/object_states", objects.append, 10)
    node.create_subscription(TFMessage, "/tf_static", lambda m: static.update(
        {(t.header.frame_id, t.child_frame_id): t for t in m.transforms}), latched)
    wait_for(lambda: objects, 60, "/simulator/object_states")
    assert sorted(o.name for o in objects[-1].objects) == ["box_large", "box_medium", "box_small"]
    wait_for(lambda: ("world", "table") in static and ("world", "base_link") in static, 30,
             "world -> table and world -> base_link on /tf_static")
    assert "objects table, box_small, box_medium, box_large" in proc.output()
    proc.proc.send_signal(signal.SIGINT)
    assert proc.proc.wait(timeout=60) == 0, proc.output()[-3000:]
    wait_for(lambda: not processes_with_marker(marker), 10, "every bringup process to be gone")
