"""The controller pages (doc/controllers/*.md) against the controllers: one page per controller module covering
every registered type, generated tables up to date, every parameter a controller reads declared in its spec table
(checked by configuring each controller against a real robot and comparing what its Params recorded), nothing
documented that no controller reads, and each page's example YAML loading and running through the manager core.

ROS-free: the node side (descriptors over DDS) is checked in test_controller_manager_node.py.
"""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path
from typing import Any

import pytest

from robot_core.control import ControlError, ControllerManagerCore, Strictness
from robot_core.control.config import parse_config_text
from robot_core.control.controller_base import Controller
from robot_core.control.registry import default_registry, doc_pages, page_params
from robot_core.parameter_spec import ParamSpec, check_table

REPO = Path(__file__).resolve().parents[1]
PAGES = REPO / "doc" / "controllers"
ARM = [f"joint{i}" for i in range(1, 8)]
SIM = "robot_core/InProcessSimulator"
DT = 0.01

# the ROS kinds Params records for a typed read, per spec type
KINDS = {"double": {"double"}, "int": {"integer"}, "bool": {"bool"}, "string": {"string"},
         "string[]": {"string_array"}, "double[]": {"double_array"}, "double|double[]": {"double", "double_array"}}


def _gen_docs() -> Any:
    spec = importlib.util.spec_from_file_location("gen_docs", REPO / "scripts" / "gen_docs.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _page(page: str) -> str:
    return (PAGES / f"{page}.md").read_text(encoding="utf-8")


def _documented(page: str) -> list[str]:
    """The parameter names in the page's generated table (first column)."""
    table = _page(page).split(f"<!-- params:{page} begin -->")[1].split(f"<!-- params:{page} end -->")[0]
    return re.findall(r"^\| `([^`]+)` \|", table, flags=re.M)


def _example(page: str) -> str:
    blocks = re.findall(r"^```yaml\n(.*?)^```", _page(page), flags=re.M | re.S)
    assert len(blocks) == 1, f"doc/controllers/{page}.md: expected one ```yaml example block, found {len(blocks)}"
    return blocks[0]


#: pages whose example runs on another robot than rc_arm (a mobile base has no arm; rc_arm has no range or pose
#: sensor), relative to urdf/ or, with a folder, to the repository
PAGE_ROBOTS = {"diff_drive": "diff_drive.urdf", "caster_base": "caster_base.urdf",
               "range_sensor_broadcaster": "test/data/urdf/sensor_rig.urdf",
               "pose_broadcaster": "test/data/urdf/sensor_rig.urdf"}


def _manager(page: str = "") -> ControllerManagerCore:
    pytest.importorskip("mujoco")
    from robot_core.model import load_robot

    name = PAGE_ROBOTS.get(page, "rc_arm.urdf")
    robot = load_robot(REPO / name if "/" in name else REPO / "urdf" / name)
    return ControllerManagerCore.from_robot(robot, 100.0, plugin_override=SIM, component_options={"timestep": 0.001})


def undeclared_reads(ctrl: Controller) -> list[str]:
    """Names the controller read that its spec table does not declare, or declares with another type."""
    bad = []
    for path, kind in ctrl.params.reads.items():
        spec = ctrl.param_spec(path)
        if spec is None:
            bad.append(f"{path} (not in {type(ctrl).__name__}.PARAMS)")
        elif kind not in KINDS[spec.type]:
            bad.append(f"{path} (read as {kind}, declared {spec.type})")
    return bad


def _run(cm: ControllerManagerCore, names: list[str], cycles: int = 5) -> None:
    """Configure and activate ``names`` against the simulated robot and run a few cycles."""
    for name in names:
        cm.load_controller(name)
        cm.configure_controller(name)
    res = cm.switch_controller(names, [], Strictness.STRICT)
    assert res.ok, res.message
    sim = cm.simulator()
    for _ in range(cycles):
        cm.update(sim.sim_time, DT)
    for name in names:
        assert cm.controller(name).state.name == "ACTIVE", name


# ----------------------------------------------------------------------------- pages and tables
def test_one_page_per_controller_module_covers_every_registered_type():
    pages = doc_pages()
    assert sorted(p.stem for p in PAGES.glob("*.md")) == sorted(pages)
    covered = sorted(t for types in pages.values() for t in types)
    assert covered == default_registry.types()
    for page, types in pages.items():
        text = _page(page)
        for t in types:
            assert f"`{t}`" in text, f"doc/controllers/{page}.md does not name its type '{t}'"


@pytest.mark.parametrize("page", sorted(doc_pages()))
def test_generated_tables_are_up_to_date(page: str):
    gen = _gen_docs()
    text = _page(page)
    assert gen.render_controller(text, page) == text, f"doc/controllers/{page}.md: run scripts/gen_docs.py"
    assert _documented(page) == [s.name for s in page_params(page)]


def test_gen_docs_check_covers_the_controller_pages(tmp_path, monkeypatch):
    """A controller page whose table is stale fails ``gen_docs.py --check`` (and is rewritten without it)."""
    gen = _gen_docs()
    for sub in ("nodes", "controllers"):
        (tmp_path / "doc" / sub).mkdir(parents=True)
        for f in (REPO / "doc" / sub).glob("*.md"):
            (tmp_path / "doc" / sub / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(gen, "REPO", tmp_path)
    assert gen.main(["--check"]) == 0
    page = tmp_path / "doc" / "controllers" / "pid_controller.md"
    page.write_text(page.read_text(encoding="utf-8").replace("proportional gain", "p gain"), encoding="utf-8")
    assert gen.main(["--check"]) == 1
    assert gen.main([]) == 0 and gen.main(["--check"]) == 0


@pytest.mark.parametrize("type_name", default_registry.types())
def test_spec_tables_are_consistent_and_documented(type_name: str):
    cls = default_registry.get(type_name)
    check_table(cls.PARAMS)
    assert cls.PARAMS[0].name == "update_rate", "every table starts with the base class's update_rate"
    page = next(p for p, types in doc_pages().items() if type_name in types)
    documented = set(_documented(page))
    assert {s.name for s in cls.PARAMS} <= documented
    assert cls.read_only_parameters == tuple(s.name for s in cls.PARAMS if s.read_only)


@pytest.mark.parametrize("page", sorted(doc_pages()))
def test_nothing_documented_is_unknown_to_the_controllers(page: str):
    declared = {s.name for t in doc_pages()[page] for s in default_registry.get(t).PARAMS}
    unknown = sorted(set(_documented(page)) - declared)
    assert not unknown, f"doc/controllers/{page}.md documents {unknown}, which no controller of the page declares"


# ----------------------------------------------------------------------------- examples and reads
@pytest.mark.parametrize("page", sorted(doc_pages()))
def test_example_yaml_loads_configures_and_runs(page: str):
    """The page's example, parsed as a ros2_control file, configures against rc_arm and runs; every parameter the
    controllers read is in their tables, and every parameter the example sets is documented."""
    text = _example(page)
    cfg = parse_config_text(text)
    assert cfg.controllers, f"doc/controllers/{page}.md: the example declares no controller"
    for name, c in cfg.controllers.items():
        assert c.type in doc_pages()[page], f"doc/controllers/{page}.md: example '{name}' has type {c.type}"
        for key in _flat(c.params):
            spec = default_registry.get(c.type).param_spec(key)
            assert spec is not None, f"doc/controllers/{page}.md: example sets '{key}', unknown to {c.type}"
    cm = _manager(page)
    cm.apply_config(cfg)
    _run(cm, list(cfg.controllers))
    for name in cfg.controllers:
        ctrl = cm.controller(name)
        assert not undeclared_reads(ctrl), (name, undeclared_reads(ctrl))
        for key in _flat(cfg.controllers[name].params):
            assert key in ctrl.params.reads or key in _node_read(), f"{name}: '{key}' given but never read"


def _node_read() -> set[str]:
    """Parameters only the controller's node reads (not the core)."""
    return {"reject_invalid_goals", "action_monitor_period"}


def _flat(params: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in params.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


# Configurations beyond the examples that take the other branches of each controller's parameter reading.
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("joint_trajectory_controller/JointTrajectoryController",
     {"joints": ARM, "command_interfaces": ["velocity"], "state_interfaces": ["position", "velocity"],
      "reject_invalid_goals": False, "action_monitor_period": 0.1,
      "gains": {j: {"p": 5.0, "i": 0.1, "d": 0.1, "i_clamp": 1.0, "ff_velocity_scale": 1.0} for j in ARM}}),
    ("joint_trajectory_controller/JointTrajectoryController",
     {"joints": ARM, "command_interfaces": ["effort"], "interpolation_method": "none", "state_publish_rate": 50.0,
      "gains": {j: {"p": 50.0, "d": 5.0, "u_clamp_min": -80.0, "u_clamp_max": 80.0, "angle_wraparound": True}
                for j in ARM}}),
    ("pid_controller/PidController",
     {"dof_names": ["joint1", "joint2"], "command_interface": "effort",
      "reference_and_state_interfaces": ["position", "velocity"],
      "gains": {"joint1": {"p": 10.0, "antiwindup": False, "feedforward_gain": 0.5, "angle_wraparound": True,
                           "i_clamp_min": -1.0, "i_clamp_max": 1.0}}}),
    ("pid_controller/PidController",
     {"dof_names": ["joint3"], "use_external_measured_states": True, "gains": {"joint3": {"p": 1.0}}}),
    ("joint_state_broadcaster/JointStateBroadcaster",
     {"joints": ["joint1", "joint2"], "interfaces": ["position", "velocity"], "use_local_topics": True}),
    ("robot_core/GravityCompensationController", {"base_link": "base_link", "tip_link": "link4"}),
    ("robot_core/ComputedTorqueController", {"joints": ARM, "base_link": "", "tip_link": "",
                                             "use_urdf_damping": False}),
    ("position_controllers/JointGroupPositionController", {"joints": ["joint5"], "command_timeout": 1.0}),
    ("effort_controllers/JointGroupEffortController", {"joints": ["joint6"]}),
    ("forward_command_controller/ForwardCommandController",
     {"joints": ["joint7"], "interface_name": "velocity", "update_rate": 50}),
    ("position_controllers/GripperActionController",
     {"joint": "finger_left_joint", "max_effort": 5.0, "action_monitor_rate": 10.0, "stall_velocity_threshold": 0.01}),
]


@pytest.mark.parametrize(("type_name", "params"), VARIANTS, ids=[f"{t.split('/')[1]}-{k}" for k, (t, _) in
                                                                  enumerate(VARIANTS)])
def test_every_parameter_read_is_declared(type_name: str, params: dict[str, Any]):
    cm = _manager()
    cm.load_controller("c", type_name, params)
    cm.configure_controller("c")
    ctrl = cm.controller("c")
    assert not undeclared_reads(ctrl), undeclared_reads(ctrl)
    for key in _flat(params):
        assert key in ctrl.params.reads or key in _node_read(), f"{type_name}: '{key}' given but never read"


def test_an_undeclared_read_is_caught():
    """The check above can fail: a controller reading a name its table lacks, or with another type, is reported."""

    class Sloppy(Controller):
        type_name = "test/Sloppy"
        PARAMS = (*Controller.PARAMS, ParamSpec("gain", "double", 1.0, "a gain", read_only=False))

        def on_configure(self) -> None:
            self.params.float("gain", 1.0)
            self.params.float("secret_gain", 2.0)
            self.params.str("gain_name", "x")

    ctrl = Sloppy("s", {})
    ctrl.on_configure()
    assert undeclared_reads(ctrl) == ["secret_gain (not in Sloppy.PARAMS)", "gain_name (not in Sloppy.PARAMS)"]

    class Mistyped(Sloppy):
        def on_configure(self) -> None:
            self.params.str("gain", "high")

    ctrl = Mistyped("m", {})
    ctrl.on_configure()
    assert undeclared_reads(ctrl) == ["gain (read as string, declared double)"]


# ----------------------------------------------------------------------------- the table validates
@pytest.mark.parametrize(("type_name", "params", "message"), [
    ("joint_trajectory_controller/JointTrajectoryController", {"joints": ARM, "interpolation_method": "cubic"},
     "controller 'c': parameter 'interpolation_method' must be one of ['splines', 'none'], got 'cubic'"),
    ("joint_trajectory_controller/JointTrajectoryController", {"joints": ARM, "constraints": {"goal_time": -1}},
     "controller 'c': parameter 'constraints.goal_time' must be >= 0.0, got -1.0"),
    ("joint_trajectory_controller/JointTrajectoryController",
     {"joints": ARM, "command_interfaces": ["velocity"], "gains": {"joint2": {"p": 1.0, "i_clamp": -0.5}}},
     "controller 'c': parameter 'gains.joint2.i_clamp' must be >= 0.0, got -0.5"),
    ("joint_trajectory_controller/JointTrajectoryController", {"joints": ARM, "constraints": {"goal_time": math.inf}},
     "controller 'c': parameter 'constraints.goal_time' must be finite, got inf"),
    ("robot_core/ComputedTorqueController", {"joints": ARM, "kp": [1, 2, 3, 4, 5, 6, -7]},
     "controller 'c': parameter 'kp' must be >= 0.0, got -7.0"),
    ("robot_core/GravityCompensationController", {"joints": ARM, "damping": -1},
     "controller 'c': parameter 'damping' must be >= 0.0, got -1.0"),
    ("pid_controller/PidController", {"dof_names": ["joint1"], "update_rate": -5},
     "controller 'c': parameter 'update_rate' must be >= 0, got -5"),
])
def test_values_outside_the_table_are_refused_naming_the_parameter(type_name: str, params: dict[str, Any],
                                                                     message: str):
    cm = _manager()
    with pytest.raises(ControlError, match=re.escape(message)):
        cm.load_controller("c", type_name, params)
        cm.configure_controller("c")


def test_read_only_follows_the_table():
    from robot_core.control.controllers.joint_state_broadcaster import JointStateBroadcaster
    from robot_core.control.controllers.joint_trajectory import JointTrajectoryController

    assert JointTrajectoryController.is_read_only("joints")
    assert JointTrajectoryController.is_read_only("command_interfaces")
    assert not JointTrajectoryController.is_read_only("gains.joint1.p")
    assert not JointTrajectoryController.is_read_only("constraints.joint1.goal")
    assert not JointTrajectoryController.is_read_only("not_a_parameter")
    assert JointStateBroadcaster.is_read_only("map_interface_to_joint_state.effort")
