"""What the default graph runs: nodes, their parameters and the spawner calls, as plain data (no ROS).

Both ways of starting robot_core read this one plan, so `ros2 launch robot_core bringup.launch.py` and
`robot-core bringup` start the same nodes with the same parameters from the same YAML files:

* ``topic`` mode: ``simulator`` (MuJoCo, publishes ``/clock``, ``/robot_description``, ``/tf``) and
  ``controller_manager`` (topic-based hardware over ``/robot_joint_states`` / ``/robot_joint_commands``,
  following ``/clock``) in two processes;
* ``embedded`` mode: ``controller_manager`` with the physics engine in-process (it publishes ``/clock``, and with
  a world the objects and the description's cameras and lasers); the simulator settings of ``simulator.yaml``
  that apply (timestep, real-time factor, start paused, fixed_base, initial_positions, gains, contacts_rate, and
  the scene's: sensors, sensor_rates, cameras, lasers, base_pose, keyframes, floor, tf_rate, world_frame) are
  passed on;
* ``rbc`` (optional) reading the ``<rbc>`` tags of the same robot file; in embedded mode nobody publishes the
  raw ``/robot_joint_states``, so its state vars are remapped onto the broadcaster's ``/joint_states`` (the
  coupler matches JointState entries by joint name);
* the spawner runs of ``controllers.yaml``'s ``robot_core_bringup`` section: active ones, then ``--inactive``
  (none with ``spawn=False``: the manager starts with no controller loaded, for users who run the upstream
  spawner themselves).

With a ``namespace`` (``--namespace arm1``, ``namespace:=arm1``) every node runs under it (``-r __ns:=/arm1``, as
upstream ros2_control), so its relative topics, services and actions do too; the robot's tf frames get the prefix
``arm1/`` (``frame_prefix``) and, since each such bringup runs its own simulated time, ``/clock`` is remapped to
``/arm1/clock`` for the nodes that make or follow it; the absolute topics of the ``<rbc>`` tags are remapped into
the namespace for the RBC (doc/namespaces.md).

With a robots file (``--robots FILE``, ``robots:=FILE``; :func:`make_plans`) one plan per robot of the group: the
group's one simulator (parameter ``robots``, in the root namespace, publishing ``/clock`` for all) rides in the
first plan, and each plan runs that robot's controller manager (+ spawners of its own controllers YAML) and RBC
under the robot's namespace, as a ``--namespace`` bringup does but on the shared ``/clock``.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from robot_core.physics.frame_prefix import frame_prefix_for_namespace
from robot_core.yaml_guard import YamlLimitError, safe_load_checked

PACKAGE = "robot_core"
MODES = ("topic", "embedded")
DEFAULT_ROBOT = "urdf/rc_arm.urdf"
DEFAULT_CONTROLLERS = "config/controllers.yaml"
SIMULATOR_CONFIG = "config/simulator.yaml"
RBC_CONFIG = "config/rbc.yaml"
RVIZ_CONFIG = "config/robot_core.rviz"
BRINGUP_SECTION = "robot_core_bringup"
# simulator.yaml keys the embedded controller manager understands, under its own names.
EMBEDDED_SIM_PARAMS = {"timestep": "sim_timestep", "real_time_factor": "real_time_factor",
                       "start_paused": "start_paused", "world": "world", "keyframes": "keyframes",
                       "base_pose": "base_pose", "floor": "floor", "cameras": "cameras", "lasers": "lasers",
                       "sensors": "sensors", "sensor_rates": "sensor_rates", "tf_rate": "tf_rate",
                       "world_frame": "world_frame", "noise_seed": "noise_seed", "mjcf_cameras": "mjcf_cameras",
                       "mjcf_camera_width": "mjcf_camera_width", "mjcf_camera_height": "mjcf_camera_height",
                       "mjcf_camera_rate": "mjcf_camera_rate", "sensor_topics": "sensor_topics",
                       "fixed_base": "fixed_base", "contacts_rate": "contacts_rate",
                       "initial_positions": "initial_positions", "gains": "gains"}
RAW_STATES_TOPIC = "robot_joint_states"  # relative: under the bringup's namespace
BROADCAST_STATES_TOPIC = "joint_states"
CLOCK_TOPIC = "/clock"
_NAME_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class BringupConfigError(ValueError):
    """A bringup input (file, mode, YAML section) is wrong; the message names the file and entry."""


# --robot names that are not files: robots of example-robot-data (the pip package ships the descriptions and their
# meshes), each with the description (in robot_core's share/, its meshes from example-robot-data), controllers YAML
# and simulator YAML written for it. The PR2's description is example-robot-data's with its base made drivable
# (urdf/pr2_mobile.urdf, scripts/generate_pr2_mobile.py).
NAMED_ROBOTS: dict[str, tuple[str, str, str]] = {
    "pr2": ("urdf/pr2_mobile.urdf", "config/pr2_controllers.yaml", "config/pr2_simulator.yaml"),
}
ERD_PACKAGE = "example-robot-data"


def example_robot_data() -> Path | None:
    """example-robot-data's ``robots`` folder: the pip (cmeel) install in this Python's site-packages, else the
    ROS package's share folder; None when neither is installed."""
    import site

    roots = [*site.getsitepackages(), site.getusersitepackages()]
    for root in roots:
        cand = Path(root) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if cand.is_dir():
            return cand
    prefix = package_prefix("example-robot-data")
    cand = prefix / "share" / "example-robot-data" / "robots" if prefix is not None else None
    return cand if cand is not None and cand.is_dir() else None


def named_robot(name: str) -> tuple[Path, Path, Path, Path] | None:
    """(description, controllers YAML, simulator YAML, example-robot-data's package folder for the meshes' package://
    URIs) of a --robot name in NAMED_ROBOTS; None for any other value."""
    entry = NAMED_ROBOTS.get(str(name).strip().lower())
    if entry is None:
        return None
    robots = example_robot_data()
    if robots is None:
        raise BringupConfigError(f"robot '{name}' ({entry[0]}) takes its meshes from example-robot-data, which is "
                                 "not installed (pip install example-robot-data)")
    return (resolve_file(entry[0], "robot description"), resolve_file(entry[1], "controllers YAML"),
            resolve_file(entry[2], "simulator YAML"), robots.parent)


# --- locating files and executables -------------------------------------------------------------------------
def package_prefix(package: str) -> Path | None:
    """Install prefix of a ROS package from the ament index; None when it (or the index) is not there."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_prefix
    except ImportError:
        return None
    try:
        return Path(get_package_prefix(package))
    except (PackageNotFoundError, OSError, ValueError):  # OSError: AMENT_PREFIX_PATH not set
        return None


def package_executable(package: str, name: str) -> Path | None:
    """``<prefix>/lib/<package>/<name>`` where ``ros2 run`` finds executables, if installed."""
    prefix = package_prefix(package)
    cand = prefix / "lib" / package / name if prefix is not None else None
    return cand if cand is not None and cand.is_file() else None


def share_dir() -> Path:
    """robot_core's share folder: the checkout this code runs from (editable / PYTHONPATH: its launch/ and
    config/ are the ones being edited), else the ament index's (an installed package)."""
    source = Path(__file__).resolve().parents[2]  # robot_core/bringup/plan.py -> the checkout
    if (source / DEFAULT_CONTROLLERS).is_file():
        return source
    prefix = package_prefix(PACKAGE)
    if prefix is not None and (prefix / "share" / PACKAGE / DEFAULT_CONTROLLERS).is_file():
        return prefix / "share" / PACKAGE
    return source


def resolve_file(value: str | Path, what: str) -> Path:
    """An existing file: as given (absolute or relative to the working directory), else relative to share/."""
    path = Path(value).expanduser()
    for cand in (path, share_dir() / path):
        if cand.is_file():
            return cand.resolve()
    raise BringupConfigError(f"{what} '{value}' not found (looked in {Path.cwd()} and {share_dir()})")


def executable(name: str) -> str:
    """Full path of one of robot_core's console scripts: ROS install (lib/robot_core), this venv, or PATH."""
    installed = package_executable(PACKAGE, name)
    if installed is not None:
        return str(installed)
    cand = Path(sys.executable).parent / name
    if cand.is_file():
        return str(cand)
    found = shutil.which(name)
    if found is None:
        raise BringupConfigError(f"executable '{name}' not found (is robot_core installed in this environment?)")
    return found


# --- plan data ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NodeSpec:
    """One node process: console script, parameter files (in order), overrides and remappings.

    ``name`` is the node's default name, which is kept: a ``-r __node:=`` rule would rename every node of
    the process (the controller manager hosts one node per controller).
    """

    name: str
    executable: str
    param_files: tuple[Path, ...] = ()
    parameters: Mapping[str, Any] = field(default_factory=dict)
    remappings: tuple[tuple[str, str], ...] = ()
    arguments: tuple[str, ...] = ()  # program arguments before --ros-args
    namespace: str = ""  # "/arm1": -r __ns:=/arm1 (launch_ros Node(namespace=...)); "": the root namespace

    def ros_arguments(self) -> list[str]:
        """The ``--ros-args`` part of a command line equivalent to what launch_ros passes."""
        args = ["--ros-args"]
        if self.namespace:
            args += ["-r", f"__ns:={self.namespace}"]
        for f in self.param_files:
            args += ["--params-file", str(f)]
        for key, value in self.parameters.items():
            args += ["-p", f"{key}:={_param_text(value)}"]
        for src, dst in self.remappings:
            args += ["-r", f"{src}:={dst}"]
        return args


def normalize_namespace(value: str | None) -> str:
    """``arm1``, ``/arm1``, ``/arm1/`` -> ``/arm1``; empty -> '' (the root namespace). BringupConfigError for a name
    ROS would refuse (each part a letter or ``_`` then letters, digits, ``_``)."""
    text = str(value or "").strip()
    parts = text.strip("/").split("/") if text.strip("/") else []
    bad = [p for p in parts if not _NAME_TOKEN.fullmatch(p)]
    if bad or "//" in text:
        raise BringupConfigError(f"namespace '{text}' is not a valid ROS namespace (parts are a letter or '_' "
                                 "followed by letters, digits or '_', separated by '/'), e.g. arm1 or /lab/arm1")
    return "/" + "/".join(parts) if parts else ""


def in_namespace(namespace: str, name: str) -> str:
    """The absolute name of a relative ``name`` under ``namespace`` (``/arm1``, ``joint_states`` ->
    ``/arm1/joint_states``); an absolute ``name`` is returned unchanged."""
    return name if name.startswith("/") else f"{namespace}/{name}"


@dataclass(frozen=True)
class SpawnStep:
    """One spawner run: these controllers, activated or left inactive."""

    controllers: tuple[str, ...]
    inactive: bool = False

    def arguments(self, manager: str = "controller_manager", manager_timeout: float = 60.0) -> list[str]:
        # Each service call may wait as long as the manager: the launch file runs a plan's spawners side by side, so
        # one's switch can queue behind the other's configure calls, which a loaded machine stretches past 10 s.
        args = [*self.controllers, "--controller-manager", manager, "--controller-manager-timeout",
                f"{manager_timeout:g}", "--service-call-timeout", f"{manager_timeout:g}"]
        if self.inactive:
            args.append("--inactive")
        return args


@dataclass(frozen=True)
class BringupOptions:
    robot: Path
    controllers: Path
    mode: str = "topic"
    use_sim_time: bool = True
    rbc: bool = True
    headless: bool = True
    simulator_config: Path | None = None
    rbc_config: Path | None = None
    spawn: bool = True  # False: no spawner runs (the user runs upstream's, or their own)
    world: Path | None = None  # a world file for the simulator (doc/world.md); None: the robot alone
    package_dirs: tuple[Path, ...] = ()  # extra package:// roots every node loading the robot gets (a named robot's)
    namespace: str = ""  # "/arm1": every node under it, frames prefixed, /clock -> /arm1/clock
    robots: Path | None = None  # a robots file: one simulator for the group, one plan per robot (make_plans)

    @property
    def frame_prefix(self) -> str:
        """The robot's tf frame prefix: ``arm1/`` under ``/arm1``, '' without a namespace."""
        return frame_prefix_for_namespace(self.namespace)

    @property
    def clock_topic(self) -> str:
        """Where this graph's simulated time goes: ``/clock``, or ``/arm1/clock`` under a namespace (a robot group
        shares its simulator's ``/clock``)."""
        return in_namespace(self.namespace, "clock") if self.namespace and self.robots is None else CLOCK_TOPIC

    def name(self, relative: str) -> str:
        """A relative topic, service or node name of this graph as an absolute one."""
        return in_namespace(self.namespace, relative)

    @property
    def manager(self) -> str:
        """The controller manager's full node name, as the spawner's ``-c`` takes it."""
        return self.name("controller_manager")

    @classmethod
    def create(cls, robot: str | Path | None = None, controllers: str | Path | None = None, mode: str = "topic",
               use_sim_time: bool | str = True, rbc: bool | str = True, headless: bool | str = True,
               simulator_config: str | Path | None = None, rbc_config: str | Path | None = None,
               spawn: bool | str = True, world: str | Path | None = None,
               namespace: str | None = None, robots: str | Path | None = None) -> BringupOptions:
        """Options from user input (launch argument strings or CLI values), files resolved and checked."""
        mode = str(mode).strip().lower()
        if mode not in MODES:
            raise BringupConfigError(f"mode must be one of {', '.join(MODES)}, got '{mode}'")
        if robots and mode != "topic":
            raise BringupConfigError(f"robots file '{robots}': a robot group runs in one simulator, which needs mode "
                                     f"topic (got '{mode}')")
        if robots and normalize_namespace(namespace):
            raise BringupConfigError(f"robots file '{robots}': each robot's namespace comes from the file; do not "
                                     f"give a namespace ('{namespace}') as well")
        named = named_robot(str(robot)) if robot else None
        package_dirs: tuple[Path, ...] = ()
        if named is not None:
            robot, controllers, simulator_config = named[0], controllers or named[1], simulator_config or named[2]
            package_dirs = (named[3],)
        return cls(robot=resolve_file(robot or DEFAULT_ROBOT, "robot description"),
                   controllers=resolve_file(controllers or DEFAULT_CONTROLLERS, "controllers YAML"),
                   mode=mode, use_sim_time=as_bool(use_sim_time, "use_sim_time"), rbc=as_bool(rbc, "rbc"),
                   headless=as_bool(headless, "headless"),
                   simulator_config=resolve_file(simulator_config or SIMULATOR_CONFIG, "simulator YAML"),
                   rbc_config=resolve_file(rbc_config or RBC_CONFIG, "rbc YAML"), spawn=as_bool(spawn, "spawn"),
                   world=resolve_file(world, "world file") if world else None, package_dirs=package_dirs,
                   namespace=normalize_namespace(namespace),
                   robots=resolve_file(robots, "robots file") if robots else None)


@dataclass
class BringupPlan:
    options: BringupOptions
    simulator: NodeSpec | None
    controller_manager: NodeSpec
    rbc: NodeSpec | None
    spawns: list[SpawnStep]
    states_topic: str = ""  # where the simulator publishes this robot's raw states; '' -> robot_joint_states

    def raw_states_topic(self) -> str:
        """The absolute topic of this robot's raw joint states from the simulator (topic mode)."""
        return self.states_topic or self.options.name(RAW_STATES_TOPIC)

    def nodes(self) -> list[NodeSpec]:
        return [n for n in (self.simulator, self.controller_manager, self.rbc) if n is not None]

    def with_state_publisher(self) -> None:
        """A robot_state_publisher will run beside the embedded manager: it publishes /robot_description, so the
        manager does not (one latched publisher, one text, for rviz / MoveIt / rqt)."""
        cm = self.controller_manager
        self.controller_manager = replace(cm, parameters={**cm.parameters, "publish_robot_description": False})

    def active_controllers(self) -> list[str]:
        return [c for s in self.spawns if not s.inactive for c in s.controllers]

    def inactive_controllers(self) -> list[str]:
        return [c for s in self.spawns if s.inactive for c in s.controllers]


def as_bool(value: bool | str, what: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise BringupConfigError(f"{what} must be true or false, got '{value}'")


def _param_text(value: Any) -> str:
    """A value as ``-p name:=value`` text (YAML, as rcl parses it)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_param_text(v) for v in value) + "]"
    if isinstance(value, str):
        return yaml.safe_dump(value, default_style="'").strip() if value == "" or ":" in value else value
    return repr(value) if isinstance(value, float) else str(value)


def _load_yaml(path: Path) -> dict[str, Any]:
    try:
        data = safe_load_checked(path.read_text(encoding="utf-8"), str(path))
    except YamlLimitError as exc:
        raise BringupConfigError(str(exc)) from None
    except (OSError, yaml.YAMLError) as exc:
        raise BringupConfigError(f"{path}: cannot read: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise BringupConfigError(f"{path}: a parameter file must be a mapping of node names")
    return data


def node_parameters(path: Path, node: str) -> dict[str, Any]:
    """The ``ros__parameters`` of ``node`` in a parameter file ({} when it has no section for it)."""
    data = _load_yaml(path)
    section = data.get(node) or data.get(f"/{node}") or {}
    params = section.get("ros__parameters") if isinstance(section, dict) else None
    return dict(params or {})


def spawn_plan(controllers_yaml: Path) -> list[SpawnStep]:
    """Spawner runs from the ``robot_core_bringup`` section; without it every declared controller is activated."""
    data = _load_yaml(controllers_yaml)
    cm = (data.get("controller_manager") or {}).get("ros__parameters") or {}
    declared = [k for k, v in cm.items() if isinstance(v, dict) and "type" in v]
    section = node_parameters(controllers_yaml, BRINGUP_SECTION)
    if not section:
        return [SpawnStep(tuple(declared))] if declared else []
    steps = []
    for key, inactive in (("active_controllers", False), ("inactive_controllers", True)):
        names = section.get(key) or []
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise BringupConfigError(f"{controllers_yaml}: {BRINGUP_SECTION}.{key} must be a list of controller names")
        unknown = [n for n in names if n not in declared]
        if unknown:
            raise BringupConfigError(f"{controllers_yaml}: {BRINGUP_SECTION}.{key} names {unknown}, which are not "
                                     f"declared under controller_manager.ros__parameters (declared: {declared})")
        if names:
            steps.append(SpawnStep(tuple(names), inactive))
    return steps


def _flatten(value: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """A nested YAML map as dotted parameter names: gains: {wheel: {kv: 10}} -> gains.wheel.kv."""
    out: dict[str, Any] = {}
    for k, v in value.items():
        out.update(_flatten(v, f"{prefix}.{k}") if isinstance(v, Mapping) else {f"{prefix}.{k}": v})
    return out


def make_plan(options: BringupOptions) -> BringupPlan:
    """The nodes and spawner runs for ``options`` (see the module docstring)."""
    o = options
    sim_time = {"use_sim_time": o.use_sim_time}
    ns = o.namespace
    prefix = {"frame_prefix": o.frame_prefix} if ns else {}
    clock = ((CLOCK_TOPIC, o.clock_topic),) if o.clock_topic != CLOCK_TOPIC else ()
    simulator = None
    packages = {"package_dirs": [str(d) for d in o.package_dirs]} if o.package_dirs else {}
    cm_params: dict[str, Any] = {"robot_description_file": str(o.robot), "hardware_mode": o.mode, **sim_time,
                                 **packages}
    if o.mode == "topic" and o.robots is not None:  # one of a group: the group's simulator is make_plans'
        cm_params["publish_robot_description"] = False  # the simulator publishes /<ns>/robot_description
    elif o.mode == "topic":
        assert o.simulator_config is not None
        cm_params["publish_robot_description"] = False  # the simulator publishes it
        sim_params = {"urdf_path": str(o.robot), **({"world": str(o.world)} if o.world else {}), **packages, **prefix}
        simulator = NodeSpec("simulator", "simulator", (o.simulator_config,), sim_params, clock, namespace=ns)
    else:
        sim = node_parameters(o.simulator_config, "simulator") if o.simulator_config else {}
        for key, cm_key in EMBEDDED_SIM_PARAMS.items():
            value = sim.get(key)
            if isinstance(value, dict):  # a family such as sensor_rates: {camera: 2.0} -> sensor_rates.camera
                cm_params.update(_flatten(value, cm_key))
            elif key in sim:
                cm_params[cm_key] = value
        if o.world:
            cm_params["world"] = str(o.world)
        cm_params.update(prefix)
    cm = NodeSpec("controller_manager", "controller_manager", (o.controllers,), cm_params, clock, namespace=ns)
    rbc = None
    if o.rbc:
        states = "/" + (BROADCAST_STATES_TOPIC if o.mode == "embedded" else RAW_STATES_TOPIC)
        remap: tuple[tuple[str, str], ...] = ()
        if o.mode == "embedded":
            remap = (("/" + RAW_STATES_TOPIC, in_namespace(ns, states.lstrip("/")) if ns else states),)
        if ns:  # the <rbc> tags name absolute topics (/robot_joint_states, /<controller>/commands): into the namespace
            taken = {src for src, _ in remap}
            remap += tuple((t, ns + t) for t in rbc_topics(o.robot) if t not in taken) + clock
        rbc = NodeSpec("rbc", "rbc", (o.rbc_config,) if o.rbc_config else (),
                       {"urdf_path": str(o.robot), **sim_time, **packages, **prefix}, remap, namespace=ns)
    return BringupPlan(o, simulator, cm, rbc, spawn_plan(o.controllers) if o.spawn else [])


def make_plans(options: BringupOptions) -> list[BringupPlan]:
    """The plans of ``options``: one, or with a robots file one per robot of the group (see the module docstring).

    Each robot's entry gives its ``description`` and, optionally, its ``controllers`` YAML (default: the options'
    controllers); the group's simulator runs in the first plan with the options' simulator YAML and world."""
    o = options
    if o.robots is None:
        return [make_plan(o)]
    from robot_core.model.robot_group import read_robots_file
    from robot_core.model.robot_model import RobotModelError

    try:
        members = read_robots_file(o.robots)
    except RobotModelError as exc:
        raise BringupConfigError(str(exc)) from None
    plans = []
    for m in members:
        controllers = resolve_file(m.controllers, f"controllers YAML of robot '{m.namespace}' in {o.robots}") \
            if m.controllers else o.controllers
        member = replace(o, robot=resolve_file(m.description, f"description of robot '{m.namespace}' in {o.robots}"),
                         controllers=controllers, namespace=normalize_namespace(m.namespace))
        plan = make_plan(member)
        plan.states_topic = m.joint_states_topic
        plans.append(plan)
    packages = {"package_dirs": [str(d) for d in o.package_dirs]} if o.package_dirs else {}
    assert o.simulator_config is not None
    plans[0].simulator = NodeSpec("simulator", "simulator", (o.simulator_config,),
                                  {"robots": str(o.robots), **({"world": str(o.world)} if o.world else {}),
                                   **packages})
    return plans


def rbc_topics(robot_file: Path) -> list[str]:
    """The absolute topics the robot's ``<rbc>`` var tags name, which a namespaced bringup remaps into its
    namespace for the RBC."""
    from robot_core.model import load_robot

    robot = load_robot(str(robot_file))
    return sorted({var.topic for joint in robot.joints.values() for node in joint.rbc for var in node.vars
                   if var.topic.startswith("/")})


def namespaced_parameters(data: Mapping[str, Any], namespace: str) -> dict[str, Any]:
    """A parameter file's mapping with its relative node keys moved under ``namespace``.

    rcl matches a key without a leading ``/`` (``controller_manager``) against the node in the root namespace
    only, so under ``-r __ns:=/arm1`` the file's ``controller_manager:`` section would be ignored silently;
    ``/arm1/controller_manager:`` is what applies there. Absolute and wildcard keys (``/**``, ``/x/node``) stay."""
    if not namespace:
        return dict(data)
    return {(key if str(key).startswith("/") else f"{namespace}/{key}"): value for key, value in data.items()}


def with_namespaced_parameter_files(plan: BringupPlan, directory: Path) -> BringupPlan:
    """The plan with each node's parameter files replaced by copies in ``directory`` whose node keys are under the
    plan's namespace (:func:`namespaced_parameters`); the plan itself when it has no namespace."""
    if not plan.options.namespace:
        return plan
    written: dict[tuple[Path, str], Path] = {}

    def copy(path: Path, ns: str) -> Path:
        if (path, ns) not in written:
            out = Path(directory) / f"{ns.strip('/').replace('/', '_')}_{len(written)}_{path.name}"
            out.write_text(yaml.safe_dump(namespaced_parameters(_load_yaml(path), ns), sort_keys=False),
                           encoding="utf-8")
            written[path, ns] = out
        return written[path, ns]

    def spec(node: NodeSpec | None) -> NodeSpec | None:
        # each node's own namespace: a robot group's simulator stays in the root namespace, its files unchanged
        if node is None or not node.namespace:
            return node
        return replace(node, param_files=tuple(copy(f, node.namespace) for f in node.param_files))

    cm = spec(plan.controller_manager)
    assert cm is not None
    return BringupPlan(plan.options, spec(plan.simulator), cm, spec(plan.rbc), list(plan.spawns), plan.states_topic)


def robot_urdf_text(path: Path, package_dirs: tuple[Path, ...] = ()) -> str:
    """The robot as URDF text (xacro expanded, .g converted), for nodes that only take a robot_description."""
    from robot_core.model import load_robot

    robot = load_robot(str(path), [str(d) for d in package_dirs] or None)
    if robot.urdf_xml:
        return robot.urdf_xml
    from robot_core.model.urdf_writer import write_urdf

    return write_urdf(robot)


def describe_plan(plan: BringupPlan) -> str:
    """Human-readable summary of a plan (what runs and how controllers are spawned)."""
    lines = [f"mode {plan.options.mode}, robot {plan.options.robot}, controllers {plan.options.controllers}"]
    for n in plan.nodes():
        lines.append(f"  node {n.name}: {' '.join([n.executable, *n.arguments, *n.ros_arguments()])}")
    for s in plan.spawns:
        lines.append(f"  spawner {' '.join(s.arguments(plan.options.manager))}")
    return "\n".join(lines)
