"""The package layout holds: no import cycle among robot_core's modules, and no layer imports a higher one.

Every module is parsed with ``ast`` (nothing is imported, so this runs without ROS or MuJoCo). The graph has an
edge for every ``import`` anywhere in a module (function-level and ``TYPE_CHECKING`` ones included: they tie
the files together all the same), relative imports resolved. Importing ``a.b.c`` is an edge to ``a.b.c`` only,
not to the packages ``a`` and ``a.b`` Python initialises on the way (they would make every package that
re-exports its modules look like a cycle).

The layer check also counts *dynamic* imports: a string naming a robot_core module on its own
(``"robot_core.demo.cli"``, ``"robot_core.control.topic_based:TopicBasedComponent"``), as the cli's lazy
subcommands and the plugin tables of hardware components, controllers and adapters use, so a plugin table
cannot reach up a layer. The cycle check does not: a plugin table naming modules that import the table's base
class is the pluginlib pattern (control/hardware.py's components), not a tie between files.

:data:`LAYERS` is the layer table of doc/architecture.md (a test below keeps the two equal).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "robot_core"

# Layer of each unit (a package, or a module at the package root); a module may import its own unit and units
# of *lower* layers only -- not a sibling of the same layer (control, rbc and rl do not know each other).
# A module in no unit fails the test: a new root module or package must be given its layer here and in the doc.
LAYERS: dict[str, int] = {
    "robot_core": 0,  # the package's __init__ only (version)
    "robot_core.text": 0,
    "robot_core.yaml_guard": 0,
    "robot_core.parameter_spec": 0,
    "robot_core.video": 0,
    "robot_core.model": 1,
    "robot_core.physics": 2,
    "robot_core.kinematics": 3,
    "robot_core.control": 4,
    "robot_core.rbc": 4,
    "robot_core.rl": 4,
    "robot_core.view": 4,
    "robot_core.ros": 5,
    "robot_core.nodes": 6,
    "robot_core.bringup": 7,
    "robot_core.demo": 8,
    "robot_core.cli": 9,
}

# Cycles that exist today and are to be untied, each exactly as it is (a cycle with one more module fails).
KNOWN_CYCLES: set[frozenset[str]] = set()

_MODULE_STRING = re.compile(r"(robot_core(?:\.\w+)+)(?::\w+)?")


def module_files(root: Path, package: str = PACKAGE) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package ``__init__``), for every .py file under ``root/package``."""
    modules: dict[str, tuple[Path, bool]] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        modules[".".join(parts)] = (path, is_package)
    return modules


def _resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[:-(level - 1)]
    return ".".join([*base, target] if target else base)


def imports_of(module: str, path: Path, is_package: bool, modules: dict[str, tuple[Path, bool]],
               dynamic: bool = False) -> set[str]:
    """The robot_core modules ``module`` imports, with ``dynamic`` also those named by a string."""
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = (_resolve_relative(module, is_package, node.level, node.module) if node.level
                    else node.module or "")
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                named.add(sub if sub in modules else base)  # `from pkg import module` vs `from module import name`
        elif dynamic and isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = _MODULE_STRING.fullmatch(node.value)
            if match and match.group(1) in modules:
                named.add(match.group(1))
    found: set[str] = set()
    for name in named:
        if name != PACKAGE and not name.startswith(PACKAGE + "."):
            continue
        while name and name not in modules:  # `import robot_core.x.y` of a name inside a module
            name = name.rpartition(".")[0]
        if name and name != module:
            found.add(name)
    return found


def import_graph(root: Path = REPO, package: str = PACKAGE, dynamic: bool = False) -> dict[str, set[str]]:
    modules = module_files(root, package)
    return {name: imports_of(name, path, is_pkg, modules, dynamic) for name, (path, is_pkg) in modules.items()}


def tied_groups(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Every strongly connected component of more than one module, or a module importing itself: the groups of
    modules that import each other, directly or not (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[frozenset[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    components.append(frozenset(component))
    return components


def new_cycles(graph: dict[str, set[str]], known: set[frozenset[str]]) -> list[str]:
    """One line per tied group that is not exactly a known one: a shortest cycle through its first module, and
    the whole group when it is larger (a known pair joined by a third module is a new tie)."""
    lines = []
    for group in sorted(tied_groups(graph), key=min):
        if group in known:
            continue
        cycle = cycle_through(group, graph)
        extra = f" (tied together: {', '.join(sorted(group))})" if len(group) > len(set(cycle)) else ""
        lines.append(" -> ".join(cycle) + extra)
    return lines


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """A shortest cycle through each tied group, starting at its smallest module."""
    return [cycle_through(group, graph) for group in sorted(tied_groups(graph), key=min)]


def cycle_through(component: frozenset[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest path from the component's smallest module back to itself, inside the component."""
    first = min(component)
    paths = {first: [first]}
    frontier = [first]
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(graph[node] & component):
                if child == first:
                    return [*paths[node], first]
                if child not in paths:
                    paths[child] = [*paths[node], child]
                    nxt.append(child)
        frontier = nxt
    return [first, first]


def unit_of(module: str, layers: dict[str, int] = LAYERS) -> str | None:
    """The LAYERS key a module belongs to: itself, or the longest key that is a dotted prefix of it (the bare
    package name only for its own ``__init__``)."""
    keys = [k for k in layers if module == k or (k != PACKAGE and module.startswith(k + "."))]
    return max(keys, key=len, default=None)


def layer_violations(graph: dict[str, set[str]], layers: dict[str, int] = LAYERS) -> list[str]:
    problems = []
    for module in sorted(graph):
        unit = unit_of(module, layers)
        if unit is None:
            problems.append(f"{module} belongs to no layer: add its package to LAYERS and doc/architecture.md")
            continue
        for target in sorted(graph[module]):
            other = unit_of(target, layers)
            if other is None or other == unit:
                continue
            if layers[other] >= layers[unit]:
                kind = "a sibling" if layers[other] == layers[unit] else "a higher layer"
                problems.append(f"{module} (layer {layers[unit]}, {unit}) imports {target} "
                                f"({kind}: layer {layers[other]}, {other})")
    return problems


# --- the checks on robot_core ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_no_import_cycle_among_robot_core_modules(graph):
    new = new_cycles(graph, KNOWN_CYCLES)
    assert not new, "import cycles:\n" + "\n".join("  " + line for line in new)


def test_the_known_cycles_still_exist(graph):
    """An exception that outlived its cycle would let the same tie come back unnoticed: remove it."""
    found = set(tied_groups(graph))
    gone = [sorted(c) for c in KNOWN_CYCLES if c not in found]
    assert not gone, f"these cycles are untied now, remove them from KNOWN_CYCLES: {gone}"


def test_no_layer_imports_a_higher_one():
    problems = layer_violations(import_graph(dynamic=True))
    assert not problems, "layer violations (table in doc/architecture.md):\n" + "\n".join(problems)


def test_the_layer_table_is_the_one_in_the_architecture_doc():
    """doc/architecture.md's table rows look like ``| 4 | `robot_core.control`, `robot_core.rbc` | ...``."""
    doc = (REPO / "doc" / "architecture.md").read_text()
    documented: dict[str, int] = {}
    for line in doc.splitlines():
        row = re.match(r"\|\s*(\d+)\s*\|([^|]*)\|", line)
        if row:
            for name in re.findall(r"`(robot_core(?:\.\w+)*)`", row.group(2)):
                documented[name] = int(row.group(1))
    assert documented == LAYERS


# --- the checker itself, on small made-up packages -------------------------------------------------------------------
def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_checker_finds_a_cycle_through_a_function_level_relative_import(tmp_path):
    root = _package(tmp_path, {
        "robot_core/__init__.py": "",
        "robot_core/model/__init__.py": "from robot_core.model.a import A\n",
        "robot_core/model/a.py": "from .b import B\nA = 1\n",
        "robot_core/model/b.py": "def f():\n    from . import c\n",
        "robot_core/model/c.py": "import robot_core.model.a\n",
    })
    graph = import_graph(root)
    assert graph["robot_core.model.b"] == {"robot_core.model.c"}
    assert cycles(graph) == [["robot_core.model.a", "robot_core.model.b", "robot_core.model.c", "robot_core.model.a"]]


def test_checker_counts_parent_relative_and_string_imports_and_not_implicit_packages(tmp_path):
    root = _package(tmp_path, {
        "robot_core/__init__.py": "",
        "robot_core/model/__init__.py": "from robot_core.model import a\n",
        "robot_core/model/a.py": "import robot_core.physics.engine\n",
        "robot_core/physics/__init__.py": "",
        "robot_core/physics/engine.py": "from ..model.a import X\nT = {'k': 'robot_core.nodes.sim:Node'}\n",
        "robot_core/nodes/__init__.py": "",
        "robot_core/nodes/sim.py": "'robot_core.nodes.sim is a module docstring, not an import'\n",
    })
    graph = import_graph(root)
    assert graph["robot_core.model"] == {"robot_core.model.a"}
    assert graph["robot_core.physics.engine"] == {"robot_core.model.a"}
    assert cycles(graph) == [["robot_core.model.a", "robot_core.physics.engine", "robot_core.model.a"]]
    graph = import_graph(root, dynamic=True)
    assert graph["robot_core.physics.engine"] == {"robot_core.model.a", "robot_core.nodes.sim"}
    assert graph["robot_core.nodes.sim"] == set()
    problems = layer_violations(graph)
    assert problems == [
        "robot_core.model.a (layer 1, robot_core.model) imports robot_core.physics.engine "
        "(a higher layer: layer 2, robot_core.physics)",
        "robot_core.physics.engine (layer 2, robot_core.physics) imports robot_core.nodes.sim "
        "(a higher layer: layer 6, robot_core.nodes)"]


def test_checker_refuses_sibling_imports_and_modules_in_no_layer(tmp_path):
    root = _package(tmp_path, {
        "robot_core/__init__.py": "",
        "robot_core/rbc/__init__.py": "",
        "robot_core/rbc/x.py": "from robot_core.control import y\n",
        "robot_core/control/__init__.py": "",
        "robot_core/control/y.py": "",
        "robot_core/sensors.py": "",
    })
    problems = layer_violations(import_graph(root))
    assert problems == [
        "robot_core.rbc.x (layer 4, robot_core.rbc) imports robot_core.control.y "
        "(a sibling: layer 4, robot_core.control)",
        "robot_core.sensors belongs to no layer: add its package to LAYERS and doc/architecture.md"]


def test_checker_reports_a_known_pair_joined_by_a_third_module(tmp_path):
    root = _package(tmp_path, {
        "robot_core/__init__.py": "",
        "robot_core/control/__init__.py": "",
        "robot_core/control/a.py": "from robot_core.control import b\n",
        "robot_core/control/b.py": "from robot_core.control import a, c\n",
        "robot_core/control/c.py": "from robot_core.control import a\n",
    })
    graph = import_graph(root)
    known = {frozenset({"robot_core.control.a", "robot_core.control.b"})}
    assert new_cycles(graph, known) == [
        "robot_core.control.a -> robot_core.control.b -> robot_core.control.a (tied together: "
        "robot_core.control.a, robot_core.control.b, robot_core.control.c)"]
    (root / "robot_core/control/c.py").write_text("")
    assert new_cycles(import_graph(root), known) == []
