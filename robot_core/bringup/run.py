"""``robot-core bringup``: the launch files' graph on machines without ``ros2 launch``.

Runs the plan of :mod:`robot_core.bringup.plan` (the launch files read the same plan) as **child processes**,
one per node, each the node's own console script in its own process group under a
:class:`robot_core.bringup.supervisor.Supervisor`; then runs the spawner for the active and the ``--inactive``
controllers, waits until the graph answers over DDS (controllers in the expected states, ``/joint_states``
flowing, the RBC's ``~/l2_ctrl`` service up), prints one ``robot_core bringup ready: ...`` line and keeps
running until Ctrl-C / SIGTERM, when every child is stopped (SIGINT, then SIGTERM, then SIGKILL). Separate
processes rather than one executor: the nodes are exactly those ``ros2 launch`` starts, a crashing node cannot
take the others with it, and the controller manager's update loop does not share a GIL with the simulator.

With ``--robots FILE`` it runs the plans of a robot group (:func:`robot_core.bringup.plan.make_plans`): the
group's one simulator, then per robot its controller manager, spawners and RBC under the robot's namespace; the
children are named ``<namespace>.<node>``.

:class:`Bringup` is the same thing as a context manager for programs (the demo uses it).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robot_core.bringup.plan import (
    CLOCK_TOPIC,
    MODES,
    NAMED_ROBOTS,
    RVIZ_CONFIG,
    BringupConfigError,
    BringupOptions,
    BringupPlan,
    NodeSpec,
    executable,
    make_plans,
    package_executable,
    robot_urdf_text,
    share_dir,
    with_namespaced_parameter_files,
)
from robot_core.bringup.supervisor import MARKER_ENV, Child, LineSink, Supervisor
from robot_core.ros.graph_exit import leave_graph

READY_PREFIX = "robot_core bringup ready:"
CLI_SCRIPT = "robot-core"  # the console script whose process robot_core.cli ends


class BringupError(RuntimeError):
    """The graph did not come up; the message says which step and shows what the failing process said."""


@dataclass
class BringupReport:
    """What runs once the bringup is ready."""

    mode: str
    robot: Path
    pids: dict[str, int]
    active: list[str]
    inactive: list[str]
    marker: str
    rbc: bool
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def ready_line(self) -> str:
        nodes = " ".join(f"{name}[pid {pid}]" for name, pid in self.pids.items())
        return (f"{READY_PREFIX} mode={self.mode} robot={self.robot.name} | nodes: {nodes} | "
                f"active: {', '.join(self.active) or '-'} | inactive: {', '.join(self.inactive) or '-'} | "
                f"{MARKER_ENV}={self.marker} | up in {self.seconds:.1f} s")


def rbc_available() -> bool:
    """The RBC node module is part of this installation."""
    return importlib.util.find_spec("robot_core.nodes.rbc") is not None


class Bringup:
    """Start the plan's nodes and spawners, wait for readiness, stop everything on exit."""

    def __init__(self, plan: BringupPlan | Sequence[BringupPlan], *, sink: LineSink | None = None,
                 log_dir: Path | None = None,
                 ready_timeout: float = 120.0, stop: threading.Event | None = None,
                 progress: Callable[[str], None] | None = None):
        self._tmp = tempfile.TemporaryDirectory(prefix="robot_core_bringup_")
        plans = [plan] if isinstance(plan, BringupPlan) else list(plan)
        self.plans = [with_namespaced_parameter_files(p, Path(self._tmp.name)) for p in plans]
        self.plan = self.plans[0]  # the one robot's (a group: the first robot's, with the simulator)
        self.supervisor = Supervisor(sink=sink, log_dir=log_dir)
        self.ready_timeout = ready_timeout
        self.stop_event = stop or threading.Event()
        self.progress = progress or (lambda _msg: None)
        self.report: BringupReport | None = None

    # --- context manager ------------------------------------------------------------------------------------
    def __enter__(self) -> Bringup:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # --- start ----------------------------------------------------------------------------------------------
    def _child_name(self, plan: BringupPlan, name: str) -> str:
        """A node's child name: its own, or ``arm1.controller_manager`` for a robot of a group."""
        group = len(self.plans) > 1 and plan.options.namespace
        return f"{plan.options.namespace.strip('/').replace('/', '.')}.{name}" if group else name

    def start(self) -> BringupReport:
        t0 = time.monotonic()
        plans, notes = self.plans, []
        if any(p.rbc is not None for p in plans) and not rbc_available():
            notes.append("RBC not available (robot_core.nodes.rbc is not installed): started without it")
            for p in plans:
                p.rbc = None
        deadline = t0 + self.ready_timeout
        viewers = self._viewer_nodes(notes)
        if not any(p.spawns for p in plans):
            notes.append("no spawner run (--no-spawn): load controllers with the spawner, e.g. "
                         "`spawner joint_state_broadcaster` (robot_core's or upstream's)")
        if any(v.name == "robot_state_publisher" for v in viewers):
            self.plan.with_state_publisher()
        for plan in plans:
            for node in plan.nodes():
                name = node.name if node is plan.simulator else self._child_name(plan, node.name)
                self.progress(f"starting {name}")
                self.supervisor.start(name, [executable(node.executable), *node.arguments, *node.ros_arguments()])
        for spec in viewers:
            self.supervisor.start(spec.name, [spec.executable, *spec.arguments, *spec.ros_arguments()])
        with GraphProbe(plans) as probe:
            self._start_controllers(probe, deadline)
        return self._report(t0, notes)

    def _start_controllers(self, probe: GraphProbe, deadline: float) -> None:
        """Wait for the simulator's states, run the spawners, wait until the graph answers."""
        plans = self.plans
        for plan in plans:
            if plan.spawns and plan.options.mode == "topic":
                # A controller activated before the simulator's first states would hold the manager's placeholders
                # (the description's initial values, not the simulator's start pose), e.g. the PR2's lowered arms.
                self.progress(f"waiting for the simulator's first message on {plan.raw_states_topic()}")
                probe.wait_for_robot_states(plan, deadline, self.stop_event, self._check_children)
        for plan in plans:
            # One spawner after the other: run side by side (as the launch file starts them) they saved seconds per
            # bring-up, but in 1 of 7 A/B runs at load 30 the active one never discovered one of the manager's
            # services (111 s) while the other finished in 5 s; doc/testing.md, Not done yet.
            for step in plan.spawns:
                what = "inactive" if step.inactive else "active"
                self.progress(f"spawning {what}: {', '.join(step.controllers)} on {plan.options.manager}")
                timeout = max(5.0, deadline - time.monotonic())
                (child,) = self._run_watched([(self._child_name(plan, f"spawner_{what}"), [
                    executable("spawner"), *step.arguments(plan.options.manager, timeout)])], timeout)
                if child.popen.returncode != 0:
                    raise BringupError(f"spawner for {', '.join(step.controllers)} failed (exit code "
                                       f"{child.popen.returncode}):\n{_tail(child.output())}{self._node_logs()}")
        self.progress("waiting for the graph to answer over DDS")
        for plan in plans:
            probe.wait_until_ready(plan, deadline, self.stop_event, self._check_children)

    def _report(self, t0: float, notes: list[str]) -> BringupReport:
        plans, o = self.plans, self.plan.options
        group = len(plans) > 1

        def named(plan: BringupPlan, controllers: list[str]) -> list[str]:
            return [f"{plan.options.namespace.strip('/')}/{c}" if group else c for c in controllers]

        self.report = BringupReport(o.mode, o.robots or o.robot, self.supervisor.pids(),
                                    [c for p in plans for c in named(p, p.active_controllers())],
                                    [c for p in plans for c in named(p, p.inactive_controllers())],
                                    self.supervisor.marker, any(p.rbc is not None for p in plans), notes,
                                    time.monotonic() - t0)
        return self.report

    def _run_watched(self, commands: list[tuple[str, list[str]]], timeout: float) -> list[Child]:
        """Run one-shot ``(name, argv)`` commands side by side until all have exited, while the nodes stay up."""
        children = [self.supervisor.start(name, argv, expected_exit=True) for name, argv in commands]
        end = time.monotonic() + timeout
        while running := [c for c in children if c.alive()]:
            problem = self._check_children(raise_error=False)
            if self.stop_event.is_set() or problem or time.monotonic() > end:
                for child in running:
                    self.supervisor.stop_child(child)
                if self.stop_event.is_set():
                    raise InterruptedError("bringup interrupted")
                raise BringupError(problem or f"{running[0].name} did not finish within {timeout:.0f} s:\n"
                                               f"{_tail(running[0].output())}{self._node_logs()}")
            time.sleep(0.05)
        for child in children:
            if child._reader is not None:
                child._reader.join(timeout=2.0)
        return children

    def _check_children(self, raise_error: bool = True) -> str | None:
        failed = self.supervisor.failed()
        if not failed:
            return None
        c = failed[0]
        msg = f"node {c.name} exited with code {c.popen.returncode}:\n{_tail(c.output())}"
        if raise_error:
            raise BringupError(msg)
        return msg

    def _node_logs(self) -> str:
        return "".join(f"\n--- {c.name} ---\n{_tail(c.output(), 15)}" for c in self.supervisor.children
                       if not c.expected_exit)

    def _viewer_nodes(self, notes: list[str]) -> list[NodeSpec]:
        """robot_state_publisher (embedded mode) and rviz2 (not headless), where installed -- as the launch files."""
        o, specs = self.plan.options, []
        clock = ((CLOCK_TOPIC, o.clock_topic),) if o.clock_topic != CLOCK_TOPIC else ()
        if o.mode == "embedded":
            rsp = _ros_executable("robot_state_publisher")
            if rsp:
                params = Path(self._tmp.name) / "robot_state_publisher.yaml"
                import yaml

                params.write_text(yaml.safe_dump({"robot_state_publisher": {"ros__parameters": {
                    "robot_description": robot_urdf_text(o.robot, o.package_dirs), "use_sim_time": o.use_sim_time,
                    "frame_prefix": o.frame_prefix}}}))
                specs.append(NodeSpec("robot_state_publisher", rsp, (params,), remappings=clock,
                                      namespace=o.namespace))
            else:
                notes.append("robot_state_publisher not installed: no /tf or /robot_description in embedded mode")
        if not o.headless:
            rviz = _ros_executable("rviz2") or shutil.which("rviz2")
            if rviz:
                config = share_dir() / RVIZ_CONFIG
                specs.append(NodeSpec("rviz2", rviz, (), {"use_sim_time": o.use_sim_time}, clock,
                                      arguments=("-d", str(config)) if config.is_file() else ()))
            else:
                notes.append("rviz2 not installed: running headless")
        return specs

    # --- stop -----------------------------------------------------------------------------------------------
    def stop(self, timeout: float = 10.0) -> dict[str, int | None]:
        codes = self.supervisor.stop_all(timeout)
        with contextlib.suppress(OSError):
            self._tmp.cleanup()
        return codes


def _ros_executable(package: str) -> str | None:
    found = package_executable(package, package)
    return str(found) if found is not None else None


def _tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.splitlines()[-lines:])


# --- readiness over DDS -----------------------------------------------------------------------------------------
class GraphProbe:
    """The bringup's own rclpy context and node, watching the graph come up: first the simulator's raw joint states
    (topic mode), then readiness (controllers in their planned states, ``joint_states`` flowing, the RBC's
    ``l2_ctrl`` service up). Made as the nodes start, so its DDS discovery of them runs beside the spawners instead
    of after them (a new participant's discovery takes seconds on a loaded machine)."""

    def __init__(self, plans: list[BringupPlan]) -> None:
        import rclpy
        from controller_manager_msgs.srv import ListControllers
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.signals import SignalHandlerOptions
        from sensor_msgs.msg import JointState

        self.context = Context()
        rclpy.init(context=self.context, signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node("robot_core_bringup", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._received: dict[str, list[Any]] = {}
        self._listers: dict[str, Any] = {}
        self._l2: dict[str, Any] = {}
        for plan in plans:
            topics = [plan.options.name("joint_states")]
            if plan.spawns and plan.options.mode == "topic":
                topics.append(plan.raw_states_topic())
            for topic in topics:
                if topic not in self._received:
                    got: list[Any] = []
                    self._received[topic] = got
                    self.node.create_subscription(JointState, topic, lambda m, got=got: got.append(1) if not got
                                                  else None, 10)
            lister = plan.options.name("controller_manager/list_controllers")
            self._listers[lister] = self.node.create_client(ListControllers, lister)
            if plan.rbc is not None:
                from robot_core_interfaces.srv import L2Control

                l2 = plan.options.name("rbc/l2_ctrl")
                self._l2[l2] = self.node.create_client(L2Control, l2)

    def __enter__(self) -> GraphProbe:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.executor.shutdown(timeout_sec=1.0)
        if Path(sys.argv[0] if sys.argv else "").name == CLI_SCRIPT:
            # robot_core.cli ends this process with os._exit: the probe's participant is kept, not finalised
            # (a SIGSEGV there, robot_core.ros.graph_exit), and ends with the process
            leave_graph(self.node)
        else:
            self.node.destroy_node()
            self.context.try_shutdown()

    def _spin_until(self, done: Callable[[], bool], deadline: float, stop: threading.Event,
                    check: Callable[[], Any], missing: Callable[[], str]) -> None:
        while not done():
            check()
            if stop.is_set():
                raise InterruptedError("bringup interrupted")
            if time.monotonic() > deadline:
                raise BringupError(f"not ready in time: {missing()}")
            self.executor.spin_once(timeout_sec=0.05)

    def wait_for_robot_states(self, plan: BringupPlan, deadline: float, stop: threading.Event,
                              check: Callable[[], Any] = lambda: None) -> None:
        """Block until a message arrived on the simulator's raw joint states topic of ``plan``."""
        topic = plan.raw_states_topic()
        self._spin_until(lambda: bool(self._received[topic]), deadline, stop, check,
                         lambda: f"no message on {topic} from the simulator")

    def wait_until_ready(self, plan: BringupPlan, deadline: float, stop: threading.Event,
                         check: Callable[[], Any] = lambda: None) -> None:
        """Block until the controllers are in their planned states, joint_states flows and the RBC answers."""
        from controller_manager_msgs.srv import ListControllers

        got_states = self._received[plan.options.name("joint_states")]
        lister = self._listers[plan.options.name("controller_manager/list_controllers")]
        l2 = self._l2.get(plan.options.name("rbc/l2_ctrl")) if plan.rbc is not None else None
        expected = {**{c: "active" for c in plan.active_controllers()},
                    **{c: "inactive" for c in plan.inactive_controllers()}}
        pending: list[Any] = []  # the list_controllers call in flight
        states: dict[str, str] = {}
        controllers_ok = [False]  # one answer at least: the manager is up even with nothing to spawn

        def ready() -> bool:
            nonlocal states
            if not controllers_ok[0] and not pending and lister.service_is_ready():
                pending.append(lister.call_async(ListControllers.Request()))
            if pending and pending[0].done():
                states = {c.name: c.state for c in pending.pop().result().controller}
                controllers_ok[0] = all(states.get(n) == s for n, s in expected.items())
            return controllers_ok[0] and (bool(got_states) or not plan.spawns) and (l2 is None or l2.service_is_ready())

        def missing() -> str:
            parts = []
            if not controllers_ok[0]:
                parts.append(f"controller states {states or '(list_controllers not answering)'}, expected {expected}")
            if not got_states and plan.spawns:
                parts.append(f"no message on {plan.options.name('joint_states')}")
            if l2 is not None and not l2.service_is_ready():
                parts.append(f"{plan.options.name('rbc/l2_ctrl')} service not available")
            return "; ".join(parts)

        self._spin_until(ready, deadline, stop, check, missing)


# --- command line -------------------------------------------------------------------------------------------------
def configure_cli(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", default=None, metavar="FILE",
                        help="robot description (.urdf, .urdf.xacro, .g, MJCF), or a named robot of "
                             f"example-robot-data ({', '.join(NAMED_ROBOTS)}: with its own controllers YAML); "
                             "default share/robot_core/urdf/rc_arm.urdf")
    parser.add_argument("--controllers", default=None, metavar="YAML",
                        help="ros2_control controllers YAML; default share/robot_core/config/controllers.yaml")
    parser.add_argument("--mode", choices=MODES, default="topic",
                        help="topic: simulator in its own process; embedded: physics inside the controller manager")
    parser.add_argument("--no-rbc", dest="rbc", action="store_false", help="do not start the Robot Body Coupler")
    parser.add_argument("--headless", action="store_true", help="never start rviz2 (it is started when installed)")
    parser.add_argument("--no-sim-time", dest="use_sim_time", action="store_false",
                        help="controller manager and rbc use wall-clock time instead of /clock")
    parser.add_argument("--simulator-config", default=None, metavar="YAML", help="simulator parameters YAML")
    parser.add_argument("--rbc-config", default=None, metavar="YAML", help="rbc parameters YAML")
    parser.add_argument("--world", default=None, metavar="YAML",
                        help="a world file for the simulator (embedded mode: the controller manager), YAML or MJCF "
                             ".xml (e.g. config/worlds/table_top.yaml; doc/world.md)")
    parser.add_argument("--namespace", default="", metavar="NS",
                        help="run every node of this robot under NS (-r __ns:=/NS, as upstream ros2_control): its "
                             "topics, services, actions and the controller manager (/NS/controller_manager); tf "
                             "frames get the prefix NS/ and /clock becomes /NS/clock (doc/namespaces.md)")
    parser.add_argument("--robots", default=None, metavar="FILE",
                        help="a robots file (doc/namespaces.md#several-robots-in-one-simulator): one simulator holds "
                             "the group; each robot gets its controller manager (its entry's controllers YAML, "
                             "default --controllers), spawners and RBC under its namespace; replaces --robot")
    parser.add_argument("--no-spawn", dest="spawn", action="store_false",
                        help="run no spawner: the controller manager starts with no controller loaded (for users "
                             "who run the upstream spawner themselves)")
    parser.add_argument("--log-dir", default=None, metavar="DIR",
                        help="also write each node's output to DIR/<node>.log")
    parser.add_argument("--quiet", action="store_true", help="do not echo the nodes' output")
    parser.add_argument("--ready-timeout", type=float, default=120.0, metavar="S",
                        help="seconds to wait for the graph to come up (default 120)")
    parser.add_argument("--record", nargs="?", const="run.mcap", default=None, metavar="FILE",
                        help="record the default topics into FILE (default run.mcap) until Ctrl-C "
                             "(robot-core record; doc/recording.md)")
    parser.add_argument("--view", nargs="?", type=int, const=8080, default=None, metavar="PORT",
                        help="serve the live web view on http://127.0.0.1:PORT/ (default 8080; robot-core view, "
                             "doc/view.md)")


def plans_from_args(args: argparse.Namespace) -> list[BringupPlan]:
    """The plans of the command line: one, or one per robot of ``--robots``."""
    robots = getattr(args, "robots", None)
    if robots and args.robot:
        raise BringupConfigError(f"--robots {robots} names each robot's description; do not give --robot as well")
    return make_plans(BringupOptions.create(
        robot=args.robot, controllers=args.controllers, mode=args.mode, use_sim_time=args.use_sim_time,
        rbc=args.rbc, headless=args.headless, simulator_config=args.simulator_config, rbc_config=args.rbc_config,
        spawn=getattr(args, "spawn", True), world=getattr(args, "world", None),
        namespace=getattr(args, "namespace", ""), robots=robots))


def plan_from_args(args: argparse.Namespace) -> BringupPlan:
    return plans_from_args(args)[0]


HELP_CALLS = """try:
  ros2 control list_controllers            (or: ros2 service call /controller_manager/list_controllers \\
                                                controller_manager_msgs/srv/ListControllers)
  ros2 topic echo /joint_states
  ros2 action send_goal /joint_trajectory_controller/follow_joint_trajectory \\
    control_msgs/action/FollowJointTrajectory \\
    "{trajectory: {joint_names: [joint1], points: [{positions: [0.5], time_from_start: {sec: 2}}]}}"
  ros2 action send_goal /gripper_controller/gripper_cmd control_msgs/action/GripperCommand \\
    "{command: {position: 0.03, max_effort: 5.0}}"
  ros2 service call /rbc/l2_ctrl robot_core_interfaces/srv/L2Control "{cmd: list_re}"
stop with Ctrl-C"""


def help_calls(namespace: str = "", rbc: bool = True, gripper: bool = True) -> str:
    """HELP_CALLS with the names of a namespaced graph (``-c /arm1/controller_manager``, ``/arm1/joint_states``);
    the gripper goal only where a ``gripper_controller`` is spawned active (the default controllers' gripper)."""
    text = HELP_CALLS
    if not gripper:
        lines = text.splitlines()
        at = next(i for i, line in enumerate(lines) if "/gripper_controller/" in line)
        text = "\n".join(lines[:at] + lines[at + 2:])
    if namespace:
        text = text.replace("ros2 control list_controllers  ", f"ros2 control list_controllers -c {namespace}/"
                            "controller_manager").replace(" /controller_manager/", f" {namespace}/controller_manager/")
        text = text.replace(" /joint_states", f" {namespace}/joint_states").replace(
            " /joint_trajectory_controller/", f" {namespace}/joint_trajectory_controller/").replace(
            " /gripper_controller/", f" {namespace}/gripper_controller/").replace(
            " /rbc/", f" {namespace}/rbc/")
    lines = text.splitlines()
    return "\n".join(line for line in lines if rbc or "/rbc/" not in line)


def run_cli(args: argparse.Namespace) -> int:
    try:
        plans = plans_from_args(args)
        if len(plans) > 1 and getattr(args, "view", None) is not None:
            raise BringupConfigError("--view with --robots is not done yet (the view shows one robot)")
    except BringupConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    plan = plans[0]
    stop = threading.Event()
    received: list[int] = []

    def on_signal(signum: int, _frame: Any) -> None:
        received.append(signum)
        stop.set()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    console_lock = threading.Lock()

    def echo(name: str, line: str) -> None:
        with console_lock:
            print(f"[{name}] {line}", flush=True)

    def progress(msg: str) -> None:
        with console_lock:
            print(f"robot_core bringup: {msg}", flush=True)

    bringup = Bringup(plans, sink=None if args.quiet else echo, log_dir=Path(args.log_dir) if args.log_dir else None,
                      ready_timeout=args.ready_timeout, stop=stop, progress=progress)
    code, failure = 0, ""
    recorder = None
    if getattr(args, "record", None):
        from robot_core.nodes.child_process import RecorderProcess

        recorder = RecorderProcess(args.record)
        progress(f"recording the default topics into {Path(args.record).resolve()}")
    viewer = None
    if getattr(args, "view", None) is not None:
        from robot_core.nodes.child_process import ViewProcess

        viewer = ViewProcess(args.view, robot=str(plan.options.robot),  # its file: meshes resolve beside it
                             package_dirs=plan.options.package_dirs)
        progress(f"web view on {viewer.url}")
    try:
        for p in plans:
            progress(f"mode {p.options.mode}, robot {p.options.robot}, controllers {p.options.controllers}"
                     + (f", namespace {p.options.namespace}" if p.options.namespace else ""))
        report = bringup.start()
        for note in report.notes:
            progress(note)
        with console_lock:
            print(report.ready_line(), flush=True)
            print(help_calls(plan.options.namespace, report.rbc,
                             gripper="gripper_controller" in plan.active_controllers()), flush=True)
            if len(plans) > 1:
                print("the other robots: the same calls under "
                      + ", ".join(p.options.namespace for p in plans[1:]), flush=True)
        while not stop.wait(0.25):
            problem = bringup._check_children(raise_error=False)
            if problem:
                progress(f"shutting down: {problem}")
                code = 1
                break
    except InterruptedError:
        pass
    except (BringupError, BringupConfigError, OSError) as exc:
        progress(f"FAILED: {exc}")
        failure = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        code = 1
    finally:
        if received:
            progress(f"received {signal.Signals(received[0]).name}, stopping")
        if recorder is not None:
            progress(f"recording closed (exit {recorder.stop()}): {recorder.output}")
        if viewer is not None:
            viewer.stop()
        codes = bringup.stop()
        progress("stopped (" + ", ".join(f"{n}: {c}" for n, c in codes.items()) + ")")
        if failure:  # again last, where a reader of the output's tail looks (the children's logs came after it)
            progress(f"FAILED: {failure}")
        for s, handler in old.items():
            signal.signal(s, handler)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="robot-core bringup", description=__doc__.splitlines()[0])
    configure_cli(parser)
    return run_cli(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
