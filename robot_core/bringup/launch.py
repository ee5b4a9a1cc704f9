"""launch_ros glue for ``launch/*.launch.py``: turns the bringup plan into launch actions.

Imported only by launch files (it needs ``launch`` and ``launch_ros``, which a ROS 2 installation has and the
PyPI wheels do not). Every launch file declares the same arguments and builds the same
:class:`robot_core.bringup.plan.BringupPlan` that ``robot-core bringup`` uses, then keeps its own part of it,
so the launch files and the embedded bringup cannot drift apart. With ``robots:=FILE`` the plans are those of a
robot group (one per robot, the group's simulator in the first; :func:`robot_core.bringup.plan.make_plans`) and each
part is taken from every plan.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchContext, LaunchDescription
from robot_core.bringup.plan import (
    CLOCK_TOPIC,
    DEFAULT_CONTROLLERS,
    DEFAULT_ROBOT,
    PACKAGE,
    RBC_CONFIG,
    RVIZ_CONFIG,
    SIMULATOR_CONFIG,
    BringupOptions,
    BringupPlan,
    NodeSpec,
    executable,
    make_plans,
    package_executable,
    package_prefix,
    robot_urdf_text,
    share_dir,
    with_namespaced_parameter_files,
)

ARGUMENTS: dict[str, tuple[str, str]] = {
    "robot": (DEFAULT_ROBOT, "robot description file (.urdf, .urdf.xacro, .g); relative paths: cwd, then share/"
                             "robot_core"),
    "controllers": (DEFAULT_CONTROLLERS, "ros2_control controllers YAML"),
    "use_sim_time": ("true", "controller manager and rbc follow /clock"),
    "mode": ("topic", "topic: simulator in its own process (topic-based hardware); embedded: physics engine "
                      "inside the controller manager"),
    "headless": ("true", "false: also start rviz2 (when installed) showing the robot"),
    "rbc": ("true", "start the Robot Body Coupler"),
    "simulator_config": (SIMULATOR_CONFIG, "simulator parameters YAML"),
    "rbc_config": (RBC_CONFIG, "rbc parameters YAML"),
    "world": ("", "world file for the simulator (embedded mode: the controller manager), YAML or MJCF .xml (e.g. "
                  "config/worlds/table_top.yaml, doc/world.md); empty: the robot alone"),
    "namespace": ("", "run every node of this robot under this namespace (its topics, services, actions, "
                      "<ns>/controller_manager); tf frames get the prefix <ns>/, /clock becomes <ns>/clock "
                      "(doc/namespaces.md); empty: the root namespace"),
    "robots": ("", "a robots file (doc/namespaces.md#several-robots-in-one-simulator): one simulator for the group "
                   "and per robot its controller manager, spawners and RBC under its namespace; replaces robot"),
}
# Spawners wait this long (wall seconds) for the controller manager's services.
MANAGER_TIMEOUT = 60.0


def declare_arguments(names: tuple[str, ...] = tuple(ARGUMENTS)) -> list[DeclareLaunchArgument]:
    return [DeclareLaunchArgument(n, default_value=ARGUMENTS[n][0], description=ARGUMENTS[n][1]) for n in names]


def plans_from_context(context: LaunchContext) -> list[BringupPlan]:
    def arg(name: str) -> str:
        return LaunchConfiguration(name, default=ARGUMENTS[name][0]).perform(context)

    plans = make_plans(BringupOptions.create(
        robot=arg("robot"), controllers=arg("controllers"), mode=arg("mode"), use_sim_time=arg("use_sim_time"),
        rbc=arg("rbc"), headless=arg("headless"), simulator_config=arg("simulator_config"),
        rbc_config=arg("rbc_config"), world=arg("world"), namespace=arg("namespace"), robots=arg("robots")))
    if not any(plan.options.namespace for plan in plans):
        return plans
    # rcl applies a file's `controller_manager:` section in the root namespace only: copies keyed /<ns>/<node>
    directory = Path(tempfile.mkdtemp(prefix="robot_core_launch_"))
    return [with_namespaced_parameter_files(plan, directory) for plan in plans]


def _package_has(package: str, executable: str = "") -> bool:
    if executable:
        return package_executable(package, executable) is not None
    return package_prefix(package) is not None


def _executable_kwargs(name: str) -> dict[str, Any]:
    """``package=robot_core`` on a ROS install; the console script's path in a pip/venv install."""
    if _package_has(PACKAGE, name):
        return {"package": PACKAGE, "executable": name}
    return {"executable": executable(name)}


def node_action(spec: NodeSpec) -> Node:
    params: list[Any] = [*(str(f) for f in spec.param_files), dict(spec.parameters)]
    return Node(output="screen", parameters=params, remappings=list(spec.remappings),
                arguments=list(spec.arguments), namespace=spec.namespace or None,
                **_executable_kwargs(spec.executable))


def spawner_actions(plan: BringupPlan) -> list[Node]:
    return [Node(output="screen", arguments=step.arguments(plan.options.manager, MANAGER_TIMEOUT),
                 namespace=plan.options.namespace or None,
                 name=f"spawner_{'inactive' if step.inactive else 'active'}", **_executable_kwargs("spawner"))
            for step in plan.spawns]


def viewer_actions(plan: BringupPlan, embedded_state_publisher: bool = True) -> list[Any]:
    """robot_state_publisher in embedded mode (only the simulator publishes /tf and /robot_description) and
    rviz2 unless headless; each only where the package is installed."""
    actions: list[Any] = []
    o = plan.options
    clock = [(CLOCK_TOPIC, o.clock_topic)] if o.clock_topic != CLOCK_TOPIC else []
    if embedded_state_publisher and plan.options.mode == "embedded":
        if _package_has("robot_state_publisher"):
            description = robot_urdf_text(plan.options.robot, plan.options.package_dirs)
            actions.append(Node(package="robot_state_publisher", executable="robot_state_publisher",
                                output="screen", namespace=o.namespace or None, remappings=clock,
                                parameters=[{"robot_description": description, "frame_prefix": o.frame_prefix,
                                             "use_sim_time": plan.options.use_sim_time}]))
        else:
            actions.append(LogInfo(msg="robot_state_publisher is not installed: no /tf in embedded mode"))
    if not plan.options.headless:
        if _package_has("rviz2"):
            config = share_dir() / RVIZ_CONFIG
            actions.append(Node(package="rviz2", executable="rviz2", output="screen", remappings=clock,
                                arguments=["-d", str(config)] if config.is_file() else [],
                                parameters=[{"use_sim_time": plan.options.use_sim_time}]))
        else:
            actions.append(LogInfo(msg="rviz2 is not installed: running headless"))
    return actions


def launch_description(part: Callable[[BringupPlan], list[Any]],
                       arguments: tuple[str, ...] = tuple(ARGUMENTS)) -> LaunchDescription:
    """Declared arguments + the actions ``part`` picks from the plan, evaluated when the launch runs."""
    return LaunchDescription([*declare_arguments(arguments),
                              OpaqueFunction(function=lambda context: [
                                  action for plan in plans_from_context(context) for action in part(plan)])])


# --- the parts each launch file starts ------------------------------------------------------------------------
def _leads(plan: BringupPlan) -> bool:
    """The plan that starts the shared parts: the only one, or the robot group's first (holding the simulator)."""
    return plan.options.robots is None or plan.simulator is not None


def sim_part(plan: BringupPlan) -> list[Any]:
    if plan.simulator is None and plan.options.robots is not None:
        return []  # another robot of the group: the group's simulator is started with the first
    if plan.simulator is None:
        return [LogInfo(msg="mode:=embedded: the simulator runs inside the controller manager (control.launch.py)")]
    return [node_action(plan.simulator), *viewer_actions(plan, embedded_state_publisher=False)]


def control_part(plan: BringupPlan) -> list[Any]:
    return [node_action(plan.controller_manager), *spawner_actions(plan)]


def rbc_part(plan: BringupPlan) -> list[Any]:
    if plan.rbc is None:
        return [LogInfo(msg="rbc:=false: the Robot Body Coupler is not started")]
    return [node_action(plan.rbc)]


def bringup_part(plan: BringupPlan) -> list[Any]:
    if plan.options.mode == "embedded" and _package_has("robot_state_publisher"):
        plan.with_state_publisher()
    sim = [node_action(plan.simulator)] if plan.simulator is not None else []
    rbc = [node_action(plan.rbc)] if plan.rbc is not None else []
    return [*sim, *control_part(plan), *rbc, *(viewer_actions(plan) if _leads(plan) else [])]
