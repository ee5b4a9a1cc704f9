"""``/rbc/l2_ctrl create_re`` refuses a name that would make a second node of that name (issue 13, fault 7)."""

from __future__ import annotations

import pytest
from rbc_helpers import Client, arm_urdf, start
from ros_harness import wait_for

from robot_core.rbc.naming import full_name, graph_clash, graph_count


# ------------------------------------------------------------------------------------------------ ROS-free
def test_graph_clash_is_per_namespace_and_ignores_our_own_retiring_nodes():
    graph = [("controller_manager", "/"), ("rbc", "/"), ("JR0", "/robot2")]
    why = graph_clash("controller_manager", "/", graph)
    assert why is not None and "'/controller_manager' is already on the ROS graph" in why
    assert graph_clash("rbc", "", graph) is not None  # "" and "/" are the same root namespace
    assert graph_clash("JR0", "/", graph) is None  # same name, other namespace: a different node
    assert graph_clash("JR0", "/robot2/", graph) is not None
    assert graph_clash("JR0", "/robot2", graph, ours={"JR0"}) is None  # re-created right after destroy_re
    # our own retiring node excuses itself only: a foreign node of that name that came meanwhile is a clash
    assert graph_clash("JR0", "/robot2", [*graph, ("JR0", "/robot2")], ours={"JR0"}) is not None
    assert graph_count("JR0", "/robot2/", [*graph, ("JR0", "/robot2")]) == 2
    assert full_name("JR0", "/robot2") == "/robot2/JR0" and full_name("JR0", "/") == "/JR0"


def test_graph_clash_message_clips_a_huge_name():
    name = "n" * 100_000
    why = graph_clash(name, "/", [(name, "/")])
    assert why is not None and len(why) < 400 and "(100000 chars)" in why


# --------------------------------------------------------------------------------------------------- DDS
@pytest.mark.ros
def test_create_re_refuses_names_on_the_graph_and_invalid_names(ros, processes, tmp_path):
    # A node named like the controller manager, on the graph before the rbc starts (so the rbc's discovery
    # of our participant brings it along).
    taken = ros.node("controller_manager")
    rbc = start("rbc", "-p", f"urdf_path:={arm_urdf(tmp_path / 'arm.urdf')}")
    processes.append(rbc)
    rbc.wait_for_output("rbc ready", timeout=90)
    client = Client(ros)
    client.l2_ctrl("list_re")  # answered: the rbc has discovered this process
    wait_for(lambda: "rbc" in taken.get_node_names(), 30, "the rbc node on the graph")

    # Node names travel on their own discovery topic (ros_discovery_info), which can reach the rbc after our
    # service requests do: until it has, the rbc cannot know the name is taken. Ask until it refuses (a reacher
    # made in the meantime is destroyed again); a coupler that never checks the graph fails at the deadline.
    answers = []

    def refused() -> bool:
        res = client.l2_ctrl("create_re", "JR", "controller_manager")
        answers.append(res)
        if res.success:
            assert client.l2_ctrl("destroy_re", name="controller_manager").success
        return not res.success

    wait_for(refused, 30, "the rbc refusing a second node named controller_manager", poll=0.2)
    res = answers[-1]
    print(f"refused after {len(answers)} request(s): {res.message}")
    assert "'/controller_manager' is already on the ROS graph" in res.message, res.message
    res = client.l2_ctrl("create_re", "VF", "rbc")  # the coupler's own node
    assert not res.success and "'/rbc' is already on the ROS graph" in res.message, res.message

    for bad in ("bad name", "9lives", "a/b", ""):
        res = client.l2_ctrl("create_re", "JR", bad)
        assert not res.success, f"invalid node name {bad!r} accepted"
    res = client.l2_ctrl("create_re", "JR", "x" * 100_000)
    assert not res.success and len(res.message) < 600, len(res.message)

    client.create("JR", "JR0")
    res = client.l2_ctrl("create_re", "VF", "JR0")  # an existing reacher
    assert not res.success and "already exists" in res.message, res.message
    # destroyed and created again at once: our own node going away is not a clash
    assert client.l2_ctrl("destroy_re", name="JR0").success
    client.create("JR", "JR0")
    assert list(client.l2_ctrl("list_re").names) == ["JR0"]
    wait_for(lambda: [n for n, ns in taken.get_node_names_and_namespaces() if ns == "/"].count("JR0") == 1, 30,
             "JR0 once on the graph")
    assert "x" * 200 not in rbc.output(), "the 100 000-character name was echoed into the log"
