"""Names of the nodes the rbc creates at run time (``l2_ctrl create_re``): one node per name on the graph.

ROS does not stop two nodes from having the same name, but every tool that addresses a node by name
(``ros2 param``, services, the controller manager's controller nodes) then talks to one of them at random.
So a name already on the graph in the rbc's namespace is refused. ROS-free: the node passes the graph in.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from robot_core.text import clip


def _ns(namespace: str) -> str:
    return "/" + namespace.strip("/")


def full_name(name: str, namespace: str) -> str:
    ns = _ns(namespace)
    return f"{ns.rstrip('/')}/{name}"


def graph_count(name: str, namespace: str, graph: Iterable[tuple[str, str]]) -> int:
    """How many nodes named ``name`` the graph lists in ``namespace``."""
    ns = _ns(namespace)
    return sum(1 for other, other_ns in graph if other == name and _ns(other_ns) == ns)


def graph_clash(name: str, namespace: str, graph: Iterable[tuple[str, str]], ours: Collection[str] = ()) -> str | None:
    """Why ``name`` cannot become a new node in ``namespace``, or None.

    ``graph`` is (node name, namespace) as ``Node.get_node_names_and_namespaces()`` returns it; each name in
    ``ours`` is a node this process is about to replace itself (a reacher destroyed just before) and excuses one
    node of that name, not every one: a foreign node of the same name that appeared meanwhile is still a clash.
    """
    if graph_count(name, namespace, graph) > (1 if name in ours else 0):
        return (f"instance name '{clip(name)}' is taken: a node '{clip(full_name(name, namespace))}' is already "
                f"on the ROS graph; choose another name")
    return None
