"""launch/*.launch.py: parsable wherever `launch` is importable, and running the graph where `launch_ros` is.

The PyPI ROS 2 wheels have neither `launch` nor `launch_ros` (they come with a ROS 2 installation), so on the
pip-only set-up these tests are skipped with that reason. On a ROS machine (or with ros2/launch and
ros2/launch_ros on PYTHONPATH) they parse every launch file and run bringup.launch.py for real -- through
`ros2 launch` when the ros2 CLI is installed, else through launch.LaunchService -- then make the README's calls.
"""

from __future__ import annotations

import importlib.util
import shutil
import signal
import sys
import textwrap
import uuid

import pytest
from ros_harness import REPO, NodeProcess, wait_for, wait_future

from robot_core.bringup.plan import spawn_plan
from robot_core.bringup.run import rbc_available
from robot_core.bringup.supervisor import processes_with_marker

LAUNCH_FILES = sorted((REPO / "launch").glob("*.launch.py"))
NO_LAUNCH = ("the 'launch' package is not importable: ROS 2 launch is not part of the PyPI wheels this set-up "
             "uses (install a ROS 2 distribution, or put ros2/launch on PYTHONPATH)")
NO_LAUNCH_ROS = ("'launch_ros' is not importable: ROS 2 launch is not part of the PyPI wheels this set-up uses "
                 "(install a ROS 2 distribution, or put ros2/launch_ros on PYTHONPATH)")


def _installed(package: str) -> bool:
    """A real package, not this repository's launch/ folder seen as a namespace package."""
    spec = importlib.util.find_spec(package)
    return spec is not None and spec.origin is not None


HAVE_LAUNCH = _installed("launch")
HAVE_LAUNCH_ROS = HAVE_LAUNCH and _installed("launch_ros")
EXPECTED_ARGS = {
    "bringup.launch.py": {"robot", "controllers", "use_sim_time", "mode", "headless", "rbc"},
    "sim.launch.py": {"robot", "simulator_config", "headless"},
    "control.launch.py": {"robot", "controllers", "mode", "use_sim_time"},
    "rbc.launch.py": {"robot", "rbc_config", "use_sim_time", "mode"},
}
# Runs a launch file with launch.LaunchService (what `ros2 launch` does underneath).
RUNNER = textwrap.dedent("""
    import sys
    from launch import LaunchDescription, LaunchService
    from launch.actions import IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    args = [tuple(a.split(":=", 1)) for a in sys.argv[2:]]
    service = LaunchService()
    service.include_launch_description(LaunchDescription([
        IncludeLaunchDescription(PythonLaunchDescriptionSource(sys.argv[1]), launch_arguments=args)]))
    sys.exit(service.run())
""")


def test_every_expected_launch_file_exists():
    assert {f.name for f in LAUNCH_FILES} == set(EXPECTED_ARGS)


@pytest.mark.skipif(not HAVE_LAUNCH_ROS, reason=NO_LAUNCH_ROS)
@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_parses_and_declares_its_arguments(path):
    from launch.actions import DeclareLaunchArgument

    from launch import LaunchDescription

    spec = importlib.util.spec_from_file_location(path.stem.replace(".", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ld = module.generate_launch_description()
    assert isinstance(ld, LaunchDescription)
    declared = {a.name for a in ld.entities if isinstance(a, DeclareLaunchArgument)}
    assert EXPECTED_ARGS[path.name] <= declared


@pytest.mark.skipif(not HAVE_LAUNCH_ROS, reason=NO_LAUNCH_ROS)
@pytest.mark.parametrize("mode", ["topic", "embedded"])
def test_bringup_launch_file_brings_the_graph_up(ros, processes, mode):
    pytest.importorskip("rclpy")
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from controller_manager_msgs.srv import ListControllers
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectoryPoint

    from robot_core.ros.action_client import ActionClient

    marker = f"test-launch-{mode}-{uuid.uuid4().hex}"
    launch_args = [f"mode:={mode}", "headless:=true"]
    ros2 = shutil.which("ros2")
    if ros2 and importlib.util.find_spec("ros2launch") is not None:
        cmd = [ros2, "launch", str(REPO / "launch" / "bringup.launch.py"), *launch_args]
    else:
        cmd = [sys.executable, "-c", RUNNER, str(REPO / "launch" / "bringup.launch.py"), *launch_args]
    proc = NodeProcess(cmd, name=f"launch_{mode}", env={"ROBOT_CORE_BRINGUP_ID": marker})
    processes.append(proc)

    node = ros.node("launch_client")
    lister = node.create_client(ListControllers, "/controller_manager/list_controllers")
    # what config/controllers.yaml's robot_core_bringup section spawns, active and inactive
    expected = {name: "inactive" if step.inactive else "active"
                for step in spawn_plan(REPO / "config" / "controllers.yaml") for name in step.controllers}

    def controllers_ready() -> bool:
        assert proc.alive(), proc.output()[-3000:]
        if not lister.service_is_ready():
            return False
        got = {c.name: c.state for c in wait_future(lister.call_async(ListControllers.Request()), 30).controller}
        return got == expected

    wait_for(controllers_ready, 150, f"controllers spawned by the launch file; output:\n{proc.output()[-2000:]}",
             poll=0.5)
    seen: list[JointState] = []
    node.create_subscription(JointState, "/joint_states", seen.append, 10)
    wait_for(lambda: seen, 30, "/joint_states")
    client = ActionClient(node, FollowJointTrajectory, "/joint_trajectory_controller/follow_joint_trajectory")
    assert client.wait_for_server(timeout_sec=30)
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = ["joint2"]
    goal.trajectory.points = [JointTrajectoryPoint(positions=[0.5], time_from_start=Duration(sec=2))]
    handle = wait_future(client.send_goal_async(goal), 30)
    assert handle.accepted
    assert wait_future(handle.get_result_async(), 60).result.error_code == 0
    if rbc_available():
        from robot_core_interfaces.srv import L2Control

        l2 = node.create_client(L2Control, "/rbc/l2_ctrl")
        assert l2.wait_for_service(timeout_sec=60)
        assert wait_future(l2.call_async(L2Control.Request(cmd="list_re")), 30).success

    proc.proc.send_signal(signal.SIGINT)  # what Ctrl-C does to `ros2 launch`
    try:
        proc.proc.wait(timeout=60)
    finally:
        proc.stop()
    wait_for(lambda: not processes_with_marker(marker), 15, "every launched process to be gone")


@pytest.mark.skipif(HAVE_LAUNCH, reason="launch is importable here; the parse tests above cover it")
def test_launch_files_are_at_least_valid_python():
    for path in LAUNCH_FILES:
        compile(path.read_text(), str(path), "exec")
        assert "def generate_launch_description" in path.read_text()
