"""The pip set-up is a real ROS package: the venv is an ament prefix that holds robot_core as colcon would.

`ros2 run` finds a package's prefix with ament_index_python.get_package_prefix and runs the executable files
under ``<prefix>/lib/<package>``; `ros2 launch` walks ``get_package_share_directory(<package>)`` for the launch
file. ros2cli / launch_ros are not among the PyPI wheels this set-up uses, so these tests do what they do with
ament_index_python, then start the executables found that way and talk to them over DDS.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from ros_harness import NodeProcess, answered_eventually, venv_layout, wait_for, wait_future

from robot_core.bringup.plan import BringupOptions, make_plan, share_dir
from robot_core.bringup.run import READY_PREFIX, configure_cli, plan_from_args
from robot_core.bringup.supervisor import MARKER_ENV, processes_with_marker

pytest.importorskip("rclpy")
pytest.importorskip("ament_index_python")

EXECUTABLES = ["controller_manager", "rbc", "robot-core", "ros2_control_node", "simulator", "spawner", "unspawner"]


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if k not in ("AMENT_PREFIX_PATH", "PYTHONPATH", "_ROS_WHEELS_BOOTSTRAP_COMPLETE")}


def venv_checkout() -> Path:
    """The checkout the venv imports robot_core from when nothing is on PYTHONPATH (the one the set-up ran in)."""
    proc = subprocess.run([sys.executable, "-c", "import robot_core; print(robot_core.__file__)"], cwd="/",
                          capture_output=True, text=True, env=_clean_env(), timeout=120, check=True)
    return Path(proc.stdout.strip().splitlines()[-1]).resolve().parent.parent


def prefix() -> Path:
    """robot_core's install prefix, found as ros2run finds it."""
    from ament_index_python.packages import get_package_prefix

    return Path(get_package_prefix("robot_core"))


def executable(name: str) -> Path:
    """``ros2 run robot_core <name>``: the executable file of that name under <prefix>/lib/robot_core (ros2pkg)."""
    base = prefix() / "lib" / "robot_core"
    found = [Path(d) / f for d, _, files in os.walk(base) for f in files
             if f == name and os.access(Path(d) / f, os.X_OK)]
    assert len(found) == 1, f"ros2 run would find {found} for {name} under {base}"
    return found[0]


def test_a_venv_python_finds_robot_core_in_the_ament_index_with_no_environment_set():
    """Nothing to source: every python of the venv has the venv on AMENT_PREFIX_PATH (the wheels' packages and
    robot_core are indexed there), and keeps what the user had after it."""
    code = ("import os\nfrom ament_index_python.packages import get_package_prefix\n"
            "print(os.environ['AMENT_PREFIX_PATH']); print(get_package_prefix('robot_core'))")
    env = _clean_env()
    proc = subprocess.run([sys.executable, "-c", code], cwd="/", capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    path, found = proc.stdout.strip().splitlines()[-2:]
    assert Path(found) == Path(sys.prefix) and path == sys.prefix
    env["AMENT_PREFIX_PATH"] = "/opt/ros/kilted"
    proc = subprocess.run([sys.executable, "-c", code], cwd="/", capture_output=True, text=True, env=env,
                          timeout=120, check=True)
    assert proc.stdout.strip().splitlines()[-2] == os.pathsep.join([sys.prefix, "/opt/ros/kilted"])


def test_share_dir_and_executables_resolve_as_ros2run_and_ros2launch_do():
    from ament_index_python.packages import get_package_share_directory

    share = Path(get_package_share_directory("robot_core"))
    assert share == prefix() / "share" / "robot_core"
    assert "<name>robot_core</name>" in (share / "package.xml").read_text()
    # ros2launch: os.walk of the share dir (symlinked folders are not followed), exactly one match
    launch = [Path(d) / f for d, _, files in os.walk(share) for f in files if f == "bringup.launch.py"]
    assert launch == [share / "launch" / "bringup.launch.py"]
    # symlinks into the checkout the set-up ran in: an edit there is seen without re-running it
    checkout = venv_checkout()
    assert launch[0].resolve() == checkout / "launch" / "bringup.launch.py"
    for rel in ("config/controllers.yaml", "config/simulator.yaml", "urdf/rc_arm.urdf", "urdf/rc_arm.urdf.xacro"):
        assert (share / rel).resolve() == checkout / rel, rel
    with venv_layout():  # test_setup deletes and repairs one of them
        for name in EXECUTABLES:
            text = executable(name).read_text()
            assert text.startswith("#!") and "import" in text, name


def test_no_spawn_plan_starts_the_same_nodes_and_runs_no_spawner():
    full, bare = make_plan(BringupOptions.create()), make_plan(BringupOptions.create(spawn=False))
    assert full.spawns and bare.spawns == []
    assert [n.name for n in bare.nodes()] == [n.name for n in full.nodes()]
    parser = argparse.ArgumentParser()
    configure_cli(parser)
    assert plan_from_args(parser.parse_args(["--no-spawn"])).spawns == []
    assert plan_from_args(parser.parse_args([])).spawns == full.spawns


def test_share_dir_is_the_checkout_the_code_runs_from():
    """Editable / PYTHONPATH: the launch and YAML files being edited, not those the venv's index links to."""
    assert share_dir() == Path(__file__).resolve().parent.parent


@pytest.mark.ros
def test_lib_robot_core_simulator_and_ros2_control_node_bring_a_robot_up(ros, processes):
    """As after a colcon build: `ros2 run robot_core simulator` with the share dir's URDF, `ros2 run robot_core
    ros2_control_node` with the share dir's YAML (the robot from /robot_description), then the spawner."""
    from controller_manager_msgs.srv import ListControllers
    from robot_core_interfaces.msg import SimulatorStatus
    from sensor_msgs.msg import JointState

    share = prefix() / "share" / "robot_core"
    node = ros.node("ros_package_probe")
    status: list[SimulatorStatus] = []
    states: list[JointState] = []
    node.create_subscription(SimulatorStatus, "/simulator/status", status.append, 10)
    node.create_subscription(JointState, "/joint_states", states.append, 10)

    sim = NodeProcess([str(executable("simulator")), "--ros-args", "-p", f"urdf_path:={share / 'urdf/rc_arm.urdf'}"],
                      name="ros2run_simulator")
    processes.append(sim)
    wait_for(lambda: status or not sim.alive(), 90, "a status message from the simulator started from lib/robot_core")
    assert sim.alive(), sim.output()[-3000:]

    cm = NodeProcess([str(executable("ros2_control_node")), "--ros-args", "--params-file",
                      str(share / "config" / "controllers.yaml")], name="ros2run_ros2_control_node")
    processes.append(cm)
    lister = node.create_client(ListControllers, "/controller_manager/list_controllers")
    answered_eventually(lister.call_async, ListControllers.Request(), "list_controllers of ros2_control_node", 90)
    assert cm.alive(), cm.output()[-3000:]
    assert list(wait_future(lister.call_async(ListControllers.Request()), 30).controller) == []

    spawner = NodeProcess([str(executable("spawner")), "joint_state_broadcaster", "--controller-manager-timeout",
                           "60"], name="ros2run_spawner")
    processes.append(spawner)
    wait_for(lambda: not spawner.alive(), 90, "the spawner from lib/robot_core to finish")
    assert spawner.proc.returncode == 0, spawner.output()[-3000:]
    wait_for(lambda: states and "joint1" in states[-1].name, 60, "/joint_states from the broadcaster")


@pytest.mark.ros
@pytest.mark.slow
def test_bringup_no_spawn_starts_the_graph_and_leaves_spawning_to_the_user(ros, processes):
    """`robot-core bringup --no-spawn`: nodes up, no controller loaded; the user's own spawner run then works."""
    from controller_manager_msgs.srv import ListControllers
    from sensor_msgs.msg import JointState

    marker = f"test-no-spawn-{uuid.uuid4().hex}"
    proc = NodeProcess.console_script("robot-core", "bringup", "--no-spawn", "--mode", "embedded", "--no-rbc",
                                      "--headless", "--quiet", env={MARKER_ENV: marker})
    processes.append(proc)
    proc.wait_for_output(READY_PREFIX, timeout=150)
    ready = next(line for line in proc.output().splitlines() if line.startswith(READY_PREFIX))
    assert "active: - | inactive: -" in ready, ready
    assert "no spawner run (--no-spawn)" in proc.output()

    node = ros.node("no_spawn_probe")
    lister = node.create_client(ListControllers, "/controller_manager/list_controllers")
    answered_eventually(lister.call_async, ListControllers.Request(), "list_controllers", 60)
    assert list(wait_future(lister.call_async(ListControllers.Request()), 30).controller) == []

    states: list[JointState] = []
    node.create_subscription(JointState, "/joint_states", states.append, 10)
    spawner = NodeProcess.console_script("spawner", "joint_state_broadcaster", "--controller-manager-timeout", "60")
    processes.append(spawner)
    wait_for(lambda: not spawner.alive(), 90, "the user's spawner to finish")
    assert spawner.proc.returncode == 0, spawner.output()[-3000:]
    wait_for(lambda: states and "joint1" in states[-1].name, 60, "/joint_states after the user's spawner")

    proc.proc.send_signal(signal.SIGINT)
    assert proc.proc.wait(timeout=60) == 0, proc.output()[-3000:]
    wait_for(lambda: not processes_with_marker(marker), 10, "every bringup process to be gone")
