"""The embedded physics' world requests without ROS: the in-process simulator hardware component follows a model
rebuilt by a spawn or a removal (its state interfaces read the new model's arrays, the robot does not move) and a
reset to a keyframe (time back to 0, the keyframe's joint positions in the state interfaces at once)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robot_core.control import ControllerManagerCore, Strictness
from robot_core.control.hardware import IN_PROCESS_PLUGIN
from robot_core.model import load_robot
from robot_core.physics.scene import Scene, SceneSettings
from robot_core.physics.world import Pose, make_object

REPO = Path(__file__).resolve().parents[1]
ARM = [f"joint{i}" for i in range(1, 8)]
RATE = 100.0


def embedded_arm() -> tuple[ControllerManagerCore, object, object]:
    """rc_arm in the table-top world, built as the manager builds it (robot_core.nodes.controller_manager)."""
    robot = load_robot(REPO / "urdf" / "rc_arm.urdf")
    scene = Scene(SceneSettings(world=str(REPO / "config" / "worlds" / "table_top.yaml"), cameras=False))
    scene.select_sensors(robot)
    cm = ControllerManagerCore.from_robot(robot, RATE, plugin_override=IN_PROCESS_PLUGIN, component_options={
        "timestep": 0.001, "engine_options": {**scene.engine_options(robot, True), "fixed_base": True}})
    component = cm.simulator()
    world = scene.world_sim(component.engine)
    return cm, component, world


def positions(cm: ControllerManagerCore) -> np.ndarray:
    return np.array([cm.rm.read_state(f"{j}/position") for j in ARM])


def run(cm: ControllerManagerCore, component, cycles: int) -> None:
    for _ in range(cycles):
        cm.update(component.sim_time, 1.0 / RATE)


def test_state_interfaces_follow_a_rebuilt_model_and_a_reset():
    cm, component, world = embedded_arm()
    cm.load_controller("fp", "position_controllers/JointGroupPositionController", {"joints": ARM})
    cm.configure_controller("fp")
    assert cm.switch_controller(["fp"], [], Strictness.STRICT).ok
    target = [0.4, 0.5, 0.0, 1.5, 0.0, 1.0, 0.0]
    cm.controller("fp").set_command(target)
    run(cm, component, 100)
    engine = component.engine
    arm = [engine.joint_names.index(j) for j in ARM]
    before = engine.positions()[arm].copy()  # after the last step (the state interfaces lag one cycle behind)
    assert before == pytest.approx(target, abs=0.02)

    world.spawn(make_object("ball", "sphere", [0.03], pose=Pose((0.5, -0.05, 0.5)), mass=0.1))
    component.on_engine_changed("model")
    assert positions(cm).tolist() == before.tolist(), "a spawn moves nothing; the states are read from the new model"
    run(cm, component, 50)  # 0.5 s: the ball falls onto the table
    cm.read(component.sim_time, 0.0)
    assert positions(cm).tolist() == engine.positions()[arm].tolist(), "the states follow the new model's arrays"
    ball = {s.name: s for s in world.states()}["ball"]
    assert ball.pose.position[2] == pytest.approx(0.2 + 0.03, abs=3e-3), "the spawned ball rests on the table"

    world.remove("box_small")
    component.on_engine_changed("model")
    run(cm, component, 10)
    assert "box_small" not in world.objects
    assert positions(cm) == pytest.approx(target, abs=0.02)

    # a reset to a keyframe: time 0, the keyframe's joints in the state interfaces before the next cycle
    assert world.reset("home").startswith("keyframe 'home'")
    component.on_engine_changed("reset")
    assert component.sim_time == 0.0
    q = dict(zip(ARM, positions(cm), strict=True))
    assert (q["joint2"], q["joint4"]) == pytest.approx((0.3, 1.2))
    run(cm, component, 3)
    assert component.sim_time == pytest.approx(0.03)


def test_a_reset_under_an_active_trajectory_controller_holds_the_keyframe_pose():
    """The reset puts time back to 0; the manager sees the jump (as after a simulator reset in topic mode) and the
    trajectory controller holds the pose after the reset instead of pulling the arm back."""
    cm, component, world = embedded_arm()
    cm.load_controller("jtc", "joint_trajectory_controller/JointTrajectoryController", {
        "joints": ARM, "command_interfaces": ["position"], "state_interfaces": ["position", "velocity"]})
    cm.configure_controller("jtc")
    assert cm.switch_controller(["jtc"], [], Strictness.STRICT).ok
    run(cm, component, 50)
    assert positions(cm)[3] == pytest.approx(1.9, abs=0.01)  # rc_arm's start pose
    world.reset("home")
    component.on_engine_changed("reset")
    run(cm, component, 100)
    q = dict(zip(ARM, positions(cm), strict=True))
    assert (q["joint2"], q["joint4"]) == pytest.approx((0.3, 1.2), abs=2e-3)
    assert component.sim_time == pytest.approx(1.0)
