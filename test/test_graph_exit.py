"""robot_core.ros.graph_exit over DDS: a process that leaves the graph that way is gone from its peers' graph at
once (its node and its endpoints, long before the 20 s lease of the participant it keeps), the node that keeps
the participant is hidden, and the process goes on and ends with os._exit, exit code intact."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from ros_harness import NodeProcess, RosTestContext, wait_for

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

LEAVER = textwrap.dedent("""\
    import os, sys, time
    from pathlib import Path
    import rclpy
    from std_msgs.msg import String
    from robot_core.ros.graph_exit import kept_participants, leave_graph

    here = Path(sys.argv[1])
    rclpy.init()
    node = rclpy.create_node("leaver")
    node.create_publisher(String, "/leaver_says", 10)
    print("up", flush=True)
    while not (here / "go").exists():
        time.sleep(0.05)
    leave_graph(node)
    print(f"left, keeping {kept_participants()}", flush=True)
    while not (here / "end").exists():
        time.sleep(0.05)
    os._exit(7)
""")


@pytest.fixture
def ros():
    ctx = RosTestContext()
    yield ctx
    ctx.shutdown()


def test_a_leaving_node_is_gone_from_the_graph_at_once_and_its_process_ends_as_it_says(ros, tmp_path: Path):
    script = tmp_path / "leaver.py"
    script.write_text(LEAVER)
    watcher = ros.node("leaving_watcher")

    def names() -> set[str]:
        return {n for n, _ in watcher.get_node_names_and_namespaces()}

    with NodeProcess.python(script, str(tmp_path)) as proc:
        proc.wait_for_output("up", 60)
        wait_for(lambda: "leaver" in names() and watcher.count_publishers("/leaver_says") == 1, 60,
                 "the leaver and its publisher on the graph")
        (tmp_path / "go").touch()
        proc.wait_for_output("left, keeping 1", 60)
        wait_for(lambda: "leaver" not in names() and watcher.count_publishers("/leaver_says") == 0, 10,
                 "the leaver and its publisher gone (sooner than the participant's 20 s lease)")
        assert {n for n in names() if "leaver" in n} <= {"_leaver_leaving"}  # hidden from `ros2 node list`
        (tmp_path / "end").touch()
        assert proc.proc.wait(timeout=30) == 7
