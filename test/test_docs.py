"""The node pages (doc/nodes/*.md) against the code: generated tables up to date, every parameter a node declares
documented, nothing documented that the node does not declare, and the descriptors ``ros2 param describe`` shows.

The nodes are started in-process (rclpy, no robot: they wait for a description) and asked what they declared, as
``ros2 param list`` would; the describe check runs over DDS against a simulator process.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import URDF_DIR
from ros_harness import REPO, NodeProcess, RosTestContext, wait_future

from robot_core.nodes.node_params import NODE_PARAMS
from robot_core.parameter_spec import ParamSpec, spec_for

# Declared by rclpy on every node, not ours to document.
BUILTIN = ("use_sim_time", "start_type_description_service")


def _gen_docs() -> Any:
    spec = importlib.util.spec_from_file_location("gen_docs", REPO / "scripts" / "gen_docs.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _documented(node: str) -> list[str]:
    """The parameter names in the page's generated table (first column)."""
    text = (REPO / "doc" / "nodes" / f"{node}.md").read_text(encoding="utf-8")
    table = text.split(f"<!-- params:{node} begin -->")[1].split(f"<!-- params:{node} end -->")[0]
    return [name.replace("\\|", "|") for name in re.findall(r"^\| `([^`]+)` \|", table, flags=re.M)]


def _example_name(spec: ParamSpec) -> str:
    """A concrete name of a family (``initial_positions.<joint>`` -> ``initial_positions.joint1``)."""
    return re.sub(r"<[^>]*>", "x1", spec.name) if spec.family else spec.name


def _example_value(spec: ParamSpec) -> Any:
    from rclpy.parameter import Parameter

    value = {"double": 0.5, "int": 1, "bool": True, "string": "a", "string[]": ["a"], "int|int[]": [0]}[spec.type]
    if spec.choices:
        value = spec.choices[-1]
    return Parameter(_example_name(spec), value=value)


@pytest.mark.parametrize("node", sorted(NODE_PARAMS))
def test_generated_tables_are_up_to_date(node: str):
    gen = _gen_docs()
    path = gen.page_path(node)
    text = path.read_text(encoding="utf-8")
    assert gen.render(text, node) == text, f"{path}: parameter table out of date: run scripts/gen_docs.py"
    assert _documented(node) == [s.name for s in NODE_PARAMS[node]]


def _make(node: str, context: Any, overrides: list[Any]) -> Any:
    kwargs = {"context": context, "parameter_overrides": overrides}
    if node == "simulator":
        from robot_core.nodes.simulator import SimulatorNode

        return SimulatorNode(**kwargs)
    if node == "controller_manager":
        from robot_core.nodes.controller_manager import ControllerManagerNode

        return ControllerManagerNode(controller_args=[], **kwargs)
    from robot_core.nodes.rbc import RbcNode

    return RbcNode(**kwargs)


@pytest.mark.parametrize("given", [False, True], ids=["defaults", "every-optional-given"])
@pytest.mark.parametrize("node", sorted(NODE_PARAMS))
def test_declared_parameters_match_the_page(node: str, given: bool, context: Any):
    """What the node declares (``ros2 param list``) is what its page documents, each with its descriptor."""
    specs = NODE_PARAMS[node]
    documented = set(_documented(node))
    overrides = [_example_value(s) for s in specs if s.optional or s.family] if given else []
    instance = _make(node, context, overrides)
    try:
        names = instance.list_parameters([], 0).names
        descriptors = dict(zip(names, instance.describe_parameters(names), strict=True))
        # a refused set of a read-only parameter says why in our words (rclpy's own text names no cause)
        from rclpy.parameter import Parameter

        first = next(s for s in specs if s.read_only and not s.family and not s.optional)
        refusal = instance.set_parameters([Parameter(first.name, value=first.default)])[0]
        assert not refusal.successful and "read" in refusal.reason and "Trying to set" not in refusal.reason
    finally:
        if hasattr(instance, "shutdown"):
            instance.shutdown()
        instance.destroy_node()
    for name in names:
        if name in BUILTIN or name.startswith("qos_overrides."):
            continue
        spec = spec_for(specs, name)
        assert spec is not None and spec.name in documented, f"{node} declares '{name}', not in its page"
        if not spec.family:
            d = descriptors[name]
            assert d.description.startswith(spec.description), f"{node}: '{name}' declared without its description"
            assert d.read_only == spec.read_only, f"{node}: '{name}' read_only is {d.read_only}"
    expected = {_example_name(s) for s in specs if given or not (s.optional or s.family)}
    missing = sorted(expected - set(names))
    assert not missing, f"{node}: documented but not declared: {missing}"


@pytest.fixture
def simulator() -> Iterator[NodeProcess]:
    proc = NodeProcess.console_script("simulator", "--ros-args", "-p", f"urdf_path:={URDF_DIR / 'planar2.urdf'}")
    try:
        proc.wait_for_output("simulator ready", timeout=60)
        yield proc
    finally:
        proc.stop()


def test_describe_parameters_over_dds(simulator: NodeProcess, ros: RosTestContext):
    """``ros2 param describe /simulator timestep real_time_factor``: read-only with its description, a range."""
    from rclpy.parameter_client import AsyncParameterClient

    client = AsyncParameterClient(ros.node("describer"), "simulator")
    assert client.wait_for_services(timeout_sec=30)
    res = wait_future(client.describe_parameters(["timestep", "real_time_factor"]), 20, "describe_parameters")
    timestep, rtf = res.descriptors
    assert timestep.read_only and timestep.description.startswith("physics step")
    assert timestep.floating_point_range and timestep.floating_point_range[0].from_value == 0.0
    assert not rtf.read_only and rtf.description
    assert rtf.floating_point_range and rtf.floating_point_range[0].from_value == 0.0
    assert rtf.additional_constraints == ">= 0"
    print(f"timestep: {timestep.description!r}, constraints {timestep.additional_constraints!r}")


def test_pages_exist_for_every_node():
    assert sorted(p.stem for p in Path(REPO / "doc" / "nodes").glob("*.md")) == sorted(NODE_PARAMS)
