"""spawner / unspawner: upstream's command line, against a controller manager over DDS.

The simulator runs paused and the manager follows its clock (use_sim_time), so no control cycle happens
during these tests: spawning must not depend on simulated time advancing (an upstream pain point).
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from cm_helpers import DATA, CmClient, start_controller_manager, start_simulator
from ros_harness import NodeProcess, wait_for

from robot_core.nodes.spawner import SpawnerError, build_parser, controller_in_param_file, resolve_manager_name

EXTRA = DATA / "extra_controller.yaml"


# ---------------------------------------------------------------------------------------------- command line
def test_parser_has_upstream_options_and_defaults():
    args = build_parser().parse_args(["a", "b"])
    assert args.controller_names == ["a", "b"]
    assert args.controller_manager == "controller_manager"
    assert (args.controller_manager_timeout, args.service_call_timeout, args.switch_timeout) == (0.0, 10.0, 5.0)
    assert not (args.load_only or args.inactive or args.unload_on_kill or args.activate_as_group)
    args = build_parser().parse_args(["x", "-c", "/ns/cm", "-p", "one.yaml", "--param-file", "two.yaml",
                                      "--load-only", "--inactive", "-u", "--controller-manager-timeout", "3",
                                      "--switch-timeout", "2", "--service-call-timeout", "4",
                                      "--activate-as-group", "-t", "pkg/Type"])
    assert args.controller_manager == "/ns/cm" and args.param_file == ["one.yaml", "two.yaml"]
    assert args.load_only and args.inactive and args.unload_on_kill and args.activate_as_group
    assert (args.controller_manager_timeout, args.switch_timeout, args.service_call_timeout) == (3.0, 2.0, 4.0)
    assert args.controller_type == "pkg/Type"
    assert build_parser().parse_args(["x", "--stopped"]).inactive
    with pytest.raises(SystemExit):
        build_parser().parse_args([])


def test_manager_name_resolution():
    assert resolve_manager_name("controller_manager", "/") == "/controller_manager"
    assert resolve_manager_name("controller_manager", "/robot1") == "/robot1/controller_manager"
    assert resolve_manager_name("/other/cm", "/robot1") == "/other/cm"


def test_param_file_sections(tmp_path: Path):
    assert controller_in_param_file(str(EXTRA), "extra_position_controller") == {
        "type": "position_controllers/JointGroupPositionController", "joints": ["joint2"], "some_shared_value": 3}
    assert controller_in_param_file(str(EXTRA), "anyone") == {"some_shared_value": 3}
    only = tmp_path / "only.yaml"
    only.write_text("/jtc:\n  ros__parameters:\n    joints: [a]\n")
    assert controller_in_param_file(str(only), "jtc") == {"joints": ["a"]}
    assert controller_in_param_file(str(only), "other") is None
    with pytest.raises(SpawnerError, match="does not exist"):
        controller_in_param_file(str(tmp_path / "missing.yaml"), "jtc")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a list\n")
    with pytest.raises(SpawnerError, match="mapping"):
        controller_in_param_file(str(bad), "jtc")


# ---------------------------------------------------------------------------------------------- over DDS
@pytest.fixture(scope="module")
def paused_graph():
    pytest.importorskip("rclpy")
    procs: list[NodeProcess] = []
    try:
        start_simulator(procs, "start_paused:=true")
        yield start_controller_manager(procs, "use_sim_time:=true")
    finally:
        for p in procs:
            p.stop()


@pytest.fixture
def cm(ros, paused_graph):
    client = CmClient(ros.node("spawner_test_client"))
    yield client
    client.remove_all()


def spawner(*args: str, script: str = "spawner") -> NodeProcess:
    return NodeProcess.console_script(script, *args, "--controller-manager-timeout", "30")


def finish(proc: NodeProcess, timeout: float = 60.0) -> tuple[int, str]:
    try:
        wait_for(lambda: not proc.alive(), timeout, f"{proc.name} to exit")
        return proc.proc.returncode, proc.output()
    finally:
        proc.stop()


@pytest.mark.ros
def test_spawner_loads_configures_and_activates_from_yaml_while_paused(cm):
    code, out = finish(spawner("joint_state_broadcaster", "extra_position_controller", "-p", str(EXTRA)))
    assert code == 0, out
    ctrls = cm.controllers()
    assert ctrls["joint_state_broadcaster"].state == "active"
    extra = ctrls["extra_position_controller"]
    assert extra.state == "active"
    assert extra.type == "position_controllers/JointGroupPositionController"
    assert list(extra.claimed_interfaces) == ["joint2/position"], "joints came from the spawner's file"
    import json

    cycles = json.loads(cm.call("loop_statistics").message)["cycles"]
    assert cycles <= 1, "simulated time stood still: no control cycle was needed to spawn"


@pytest.mark.ros
def test_spawner_fails_clearly_for_an_unknown_controller(cm):
    code, out = finish(spawner("no_such_controller"))
    assert code == 1
    assert "Failed loading controller 'no_such_controller'" in out
    assert "no_such_controller" not in cm.controllers()


@pytest.mark.ros
def test_spawner_fails_when_the_manager_is_missing():
    code, out = finish(NodeProcess.console_script("spawner", "jsb", "-c", "/nobody_here",
                                                  "--controller-manager-timeout", "1"))
    assert code == 1
    assert "'/nobody_here' not available" in out


@pytest.mark.ros
def test_load_only_inactive_and_activation_as_group(cm):
    code, out = finish(spawner("forward_position_controller", "--load-only"))
    assert code == 0, out
    assert cm.state("forward_position_controller") == "unconfigured"
    code, out = finish(spawner("joint_state_broadcaster", "--inactive"))
    assert code == 0, out
    assert cm.state("joint_state_broadcaster") == "inactive"
    code, out = finish(spawner("joint_state_broadcaster", "forward_position_controller", "--activate-as-group"))
    assert code == 0, out
    assert cm.state("joint_state_broadcaster") == "active"
    assert cm.state("forward_position_controller") == "active"
    # an activation that conflicts (JTC claims the same joints) fails with a message and a non-zero code
    code, out = finish(spawner("joint_trajectory_controller"))
    assert code == 1
    assert "Failed to activate ['joint_trajectory_controller']" in out
    assert "joint1/position" in out


@pytest.mark.ros
def test_unload_on_kill_and_unspawner(cm):
    proc = spawner("joint_state_broadcaster", "-u")
    try:
        wait_for(lambda: cm.state("joint_state_broadcaster") == "active", 60, "the spawned controller active")
        proc.wait_for_output("Waiting until interrupted", timeout=30)
        proc.proc.send_signal(signal.SIGINT)
        code, out = finish(proc)
    finally:
        proc.stop()
    assert code == 0, out
    assert "joint_state_broadcaster" not in cm.controllers()

    code, out = finish(spawner("forward_velocity_controller"))
    assert code == 0, out
    code, out = finish(spawner("forward_velocity_controller", script="unspawner"))
    assert code == 0, out
    assert "forward_velocity_controller" not in cm.controllers()


@pytest.mark.ros
def test_controller_ros_args_reach_the_controller_node(ros, cm):
    code, out = finish(spawner("forward_position_controller", "--inactive",
                               "--controller-ros-args", "-r ~/commands:=/remapped_commands"))
    assert code == 0, out
    node = ros.node("remap_checker")
    wait_for(lambda: node.count_subscribers("/remapped_commands") > 0, 20, "the remapped subscription")
    assert node.count_subscribers("/forward_position_controller/commands") == 0


@pytest.mark.ros
def test_a_renamed_manager_keeps_its_controllers_names(ros, paused_graph, tmp_path: Path):
    """launch_ros ``Node(name=...)`` remaps ``__node`` for the whole process; as upstream, that must rename the
    manager only, while the YAML still configures the controllers (their sections apply to their own nodes)."""
    from cm_helpers import CONTROLLERS_YAML

    yaml = tmp_path / "renamed.yaml"
    yaml.write_text(CONTROLLERS_YAML.read_text().replace("controller_manager:\n", "renamed_manager:\n", 1))
    procs: list[NodeProcess] = []
    try:
        start_controller_manager(procs, "use_sim_time:=true", yaml=yaml, extra_args=("-r", "__node:=renamed_manager"))
        code, out = finish(spawner("forward_position_controller", "--inactive", "-c", "/renamed_manager"))
        assert code == 0, out
        client = CmClient(ros.node("renamed_client"), manager="/renamed_manager")
        ctrl = client.controllers()["forward_position_controller"]
        assert ctrl.state == "inactive"
        assert list(ctrl.required_command_interfaces) == [f"joint{i}/position" for i in range(1, 8)], \
            "the controller's own YAML section reached its node"
        node = ros.node("renamed_checker")
        wait_for(lambda: node.count_subscribers("/forward_position_controller/commands") == 1, 20,
                 "the controller node under its own name")
        # node names travel apart from the endpoints (each participant's graph message): waited on, not read once
        wait_for(lambda: {"renamed_manager", "forward_position_controller"}
                 <= {n for n, _ in node.get_node_names_and_namespaces()}, 30, "the manager and controller node names")
    finally:
        for p in procs:
            p.stop()


@pytest.mark.ros
def test_an_unanswered_list_request_is_sent_again_and_the_spawn_goes_on(ros):
    """Fast DDS drops a response while the server has not yet discovered the client's response reader (seen under
    load: a bring-up's spawner waited silently for its whole 219 s). Played here by a manager whose first
    list_controllers request is never answered; the spawner sends it again and finishes."""
    import threading

    from controller_manager_msgs import srv
    from rcl_interfaces.srv import SetParameters
    from rclpy.callback_groups import ReentrantCallbackGroup

    node = ros.node("controller_manager", namespace="/lossy")
    group = ReentrantCallbackGroup()
    release = threading.Event()
    lists: list[float] = []

    def list_controllers(_request, response):
        lists.append(time.monotonic())
        if len(lists) == 1:
            release.wait(60)  # this answer is "lost": it comes after the test
        return response

    def ok(_request, response):
        response.ok = True
        return response

    node.create_service(srv.ListControllers, "~/list_controllers", list_controllers, callback_group=group)
    for kind, name in ((srv.LoadController, "load_controller"), (srv.ConfigureController, "configure_controller"),
                       (srv.SwitchController, "switch_controller"), (srv.UnloadController, "unload_controller")):
        node.create_service(kind, f"~/{name}", ok, callback_group=group)
    node.create_service(SetParameters, "~/set_parameters", lambda _q, r: r, callback_group=group)
    try:
        code, out = finish(spawner("some_controller", "-c", "/lossy/controller_manager"))
    finally:
        release.set()
    assert code == 0, out
    assert "Configured and activated some_controller" in out
    assert len(lists) >= 3, "the first list request unanswered, sent again, then the list after loading"
    assert 1.5 <= lists[1] - lists[0] <= 10.0, lists


@pytest.mark.ros
def test_a_service_the_spawner_does_not_call_is_not_waited_for(ros):
    """A manager whose ``set_parameters`` never shows (Fast DDS once missed it for a bring-up's whole 225 s):
    a spawner that sets no parameter needs only the lifecycle services and finishes; one that must set the type
    waits for ``set_parameters`` before that call, and its timeout names the service (each service gets the
    whole ``--controller-manager-timeout``: a first discovery takes seconds under load)."""
    from controller_manager_msgs import srv

    node = ros.node("controller_manager", namespace="/noparams", start_parameter_services=False)

    def ok(_request, response):
        if hasattr(response, "ok"):
            response.ok = True
        return response

    for kind, name in ((srv.ListControllers, "list_controllers"), (srv.LoadController, "load_controller"),
                       (srv.ConfigureController, "configure_controller"),
                       (srv.SwitchController, "switch_controller"), (srv.UnloadController, "unload_controller")):
        node.create_service(kind, f"~/{name}", ok)
    code, out = finish(spawner("some_controller", "-c", "/noparams/controller_manager"))
    assert code == 0, out
    assert "Configured and activated some_controller" in out
    # 30 s: list_controllers must be answered first, and a full run beside two busy loops once took over 10 s
    # to discover this spawner's reply reader (three requests unanswered)
    code, out = finish(NodeProcess.console_script("spawner", "typed_controller", "-c", "/noparams/controller_manager",
                                                  "-t", "some_pkg/SomeType", "--controller-manager-timeout", "30"),
                       timeout=120)
    assert code == 1, out
    assert ("service '/noparams/controller_manager/set_parameters' did not appear within 30 s") in out, out
