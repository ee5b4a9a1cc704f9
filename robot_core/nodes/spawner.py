"""``spawner`` / ``unspawner``: load, configure and activate controllers through a controller manager.

The command line is the one of ros2_control's spawner so launch files written for it work unchanged.
Every step is a plain service call of ``controller_manager_msgs``; the controller manager performs a
switch between two update cycles and answers at once, so nothing here waits on simulated time: a paused
simulator does not stall the spawner (an upstream pain point). Timeouts are wall-clock seconds.

Exit code 0 when every requested step succeeded, 1 otherwise, with the reason printed.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from robot_core.ros.graph_exit import leave_graph
from robot_core.ros.middleware_deadlock import middleware_deadlocked
from robot_core.ros.node_main import SHUTDOWN, finish, is_node_script
from robot_core.yaml_guard import YamlLimitError, safe_load_checked

EXIT_OK = 0
EXIT_FAILURE = 1


class SpawnerError(RuntimeError):
    """A step failed; the message is what the user sees."""


class SpawnerInterruptedError(Exception):
    """SIGINT/SIGTERM arrived while waiting: stop quietly (exit 0, as upstream's spawner on Ctrl-C)."""


def build_parser(unspawner: bool = False) -> argparse.ArgumentParser:
    prog = "unspawner" if unspawner else "spawner"
    parser = argparse.ArgumentParser(prog=prog, description=(
        "Deactivate and unload controllers." if unspawner else
        "Load, configure and activate controllers through a controller manager."))
    parser.add_argument("controller_names", nargs="+", help="names of the controllers")
    parser.add_argument("-c", "--controller-manager", default="controller_manager",
                        help="name of the controller manager node (default: controller_manager)")
    parser.add_argument("--controller-manager-timeout", type=float, default=0.0,
                        help="seconds to wait for the controller manager services (0 = wait forever)")
    parser.add_argument("--service-call-timeout", type=float, default=10.0,
                        help="seconds to wait for each service answer (default 10)")
    parser.add_argument("--switch-timeout", type=float, default=5.0,
                        help="seconds the controller manager may take to switch (default 5)")
    if unspawner:
        return parser
    parser.add_argument("-p", "--param-file", action="append", default=[],
                        help="controller parameter file (repeatable); set as '<name>.params_file' on the manager")
    parser.add_argument("-t", "--controller-type", default=None,
                        help="controller type, if not given in the parameters (e.g. "
                             "joint_trajectory_controller/JointTrajectoryController)")
    parser.add_argument("--controller-ros-args", action="append", default=[],
                        help="ROS arguments for the controller's node, e.g. '-r ~/commands:=/cmd' (repeatable); "
                             "set as '<name>.node_options_args' on the manager")
    parser.add_argument("--load-only", action="store_true", help="only load, do not configure or activate")
    parser.add_argument("--inactive", "--stopped", dest="inactive", action="store_true",
                        help="load and configure but do not activate")
    parser.add_argument("-u", "--unload-on-kill", action="store_true",
                        help="stay alive; on Ctrl-C / SIGTERM deactivate and unload the controllers")
    parser.add_argument("--activate-as-group", action="store_true",
                        help="activate all controllers in one switch (all or none)")
    parser.add_argument("--switch-asap", dest="activate_asap", action="store_true", default=True,
                        help="ask the manager to switch at the next update (default)")
    parser.add_argument("--no-switch-asap", dest="activate_asap", action="store_false")
    parser.add_argument("-n", "--namespace", default=None, help="namespace of the controller manager (deprecated "
                        "upstream; use --ros-args -r __ns:=...)")
    return parser


def resolve_manager_name(name: str, namespace: str) -> str:
    """Absolute node name of the controller manager, relative names resolve in the spawner's namespace."""
    if name.startswith("/"):
        return name.rstrip("/") or "/"
    ns = namespace.rstrip("/")
    return f"{ns}/{name}"


def controller_in_param_file(path: str, controller: str, manager_ns: str = "/") -> dict[str, Any] | None:
    """The ``ros__parameters`` of ``controller`` in a parameter file (node name, absolute name or wildcard).

    Returns None when the file has no section for it. Raises SpawnerError for a missing or broken file.
    """
    file = Path(path)
    if not file.is_file():
        raise SpawnerError(f"parameter file '{path}' does not exist")
    try:
        data = safe_load_checked(file.read_text(), f"parameter file '{path}'") or {}
    except YamlLimitError as exc:
        raise SpawnerError(str(exc)) from None
    except yaml.YAMLError as exc:
        raise SpawnerError(f"parameter file '{path}' is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise SpawnerError(f"parameter file '{path}' must be a mapping of node names to 'ros__parameters'")
    ns = manager_ns.rstrip("/")
    candidates = [controller, f"/{controller}", f"{ns}/{controller}", "/**", f"{ns}/*", "/*"]
    found: dict[str, Any] | None = None
    for key in candidates:
        section = data.get(key)
        if isinstance(section, dict) and isinstance(section.get("ros__parameters"), dict):
            params = section["ros__parameters"]
            if key in ("/**", f"{ns}/*", "/*"):
                found = {**params, **(found or {})}
            else:
                found = {**(found or {}), **params}
    # A namespaced file: {ns: {controller: {ros__parameters: ...}}}
    for section in data.values():
        if isinstance(section, dict) and isinstance(section.get(controller), dict):
            inner = section[controller].get("ros__parameters")
            if isinstance(inner, dict):
                found = {**(found or {}), **inner}
    return found


def _poll(ready: Callable[[], bool], timeout: float, step: float = 0.02) -> bool:
    """``ready()`` checked every ``step`` seconds for up to ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while not ready():
        if time.monotonic() >= end:
            return False
        time.sleep(step)
    return True


class Spawner:
    """Service client side of spawning; one rclpy node spun by a background executor."""

    def __init__(self, node: Any, manager: str, service_timeout: float):
        from controller_manager_msgs import srv
        from rcl_interfaces.srv import SetParameters

        self.node = node
        self.manager = manager
        self.service_timeout = service_timeout
        self.interruptible = True  # False once interrupted: the -u unloading must still be able to finish
        self.manager_timeout = 0.0  # s a service may take to appear (--controller-manager-timeout; 0: forever)
        self.clients = {
            "list_controllers": node.create_client(srv.ListControllers, f"{manager}/list_controllers"),
            "load_controller": node.create_client(srv.LoadController, f"{manager}/load_controller"),
            "configure_controller": node.create_client(srv.ConfigureController, f"{manager}/configure_controller"),
            "switch_controller": node.create_client(srv.SwitchController, f"{manager}/switch_controller"),
            "unload_controller": node.create_client(srv.UnloadController, f"{manager}/unload_controller"),
            "set_parameters": node.create_client(SetParameters, f"{manager}/set_parameters"),
        }

    def wait_for_manager(self, timeout: float) -> None:
        """Wait for the manager's ``list_controllers`` (timeout 0: forever, printing a hint every few seconds); each
        other service is awaited before its first call (:meth:`call`), as upstream's spawner does, so a run does
        not hang on one it never calls (a bring-up's spawners set no parameter: ``set_parameters`` is not theirs
        to wait for)."""
        self.manager_timeout = timeout
        self._await_service("list_controllers")

    def _await_service(self, name: str) -> None:
        client = self.clients[name]
        start = time.monotonic()
        last_hint = start
        # service_is_ready every 20 ms: rclpy's wait_for_service sleeps in steps of 0.25 s, a quarter second lost
        # per spawner run once the manager has been discovered
        while not _poll(client.service_is_ready, 0.2):
            self._check_interrupted(f"waiting for '{self.manager}/{name}'")
            now = time.monotonic()
            if self.manager_timeout > 0 and now - start > self.manager_timeout:
                raise SpawnerError(f"controller manager '{self.manager}' not available: service "
                                   f"'{self.manager}/{name}' did not appear within {self.manager_timeout:g} s")
            if now - last_hint > 5.0:
                self.node.get_logger().info(f"waiting for service '{self.manager}/{name}' ...")
                last_hint = now

    # Requests that change nothing when served twice: sent again while unanswered. Fast DDS drops a response
    # while the server has not yet discovered this client's response reader, which under load lasts seconds
    # after the client saw the server; one such request answered into the void hung a bring-up's spawner for
    # its whole 219 s, silently. The others (load, configure, switch, unload) are sent once.
    RESENT = frozenset({"list_controllers", "set_parameters"})
    RESEND_AFTER = 2.0  # s without an answer

    def call(self, service: str, request: Any) -> Any:
        client = self.clients[service]
        if not client.service_is_ready():
            self._await_service(service)
        futures = [client.call_async(request)]
        done = threading.Event()
        futures[0].add_done_callback(lambda _f: done.set())
        start = time.monotonic()
        deadline = start + self.service_timeout if self.service_timeout > 0 else None
        next_send, next_hint = start + self.RESEND_AFTER, start + 5.0
        while not done.wait(0.05):
            now = time.monotonic()
            if self.interruptible and SHUTDOWN.requested:
                for f in futures:
                    client.remove_pending_request(f)
                self._check_interrupted(f"waiting for '{self.manager}/{service}'")
            if deadline is not None and now > deadline:
                for f in futures:
                    client.remove_pending_request(f)
                raise SpawnerError(f"service '{self.manager}/{service}' did not answer within "
                                   f"{self.service_timeout:g} s")
            if service in self.RESENT and now >= next_send:
                futures.append(client.call_async(request))
                futures[-1].add_done_callback(lambda _f: done.set())
                next_send = now + self.RESEND_AFTER
            if now >= next_hint:
                self.node.get_logger().info(f"no answer yet from '{self.manager}/{service}' after {now - start:.0f} s"
                                            + (f" ({len(futures)} requests sent)" if len(futures) > 1 else ""))
                next_hint = now + 5.0
        future = next(f for f in futures if f.done())
        for f in futures:
            if f is not future and not f.done():
                client.remove_pending_request(f)
        if future.exception() is not None:
            raise SpawnerError(f"service '{self.manager}/{service}' failed: {future.exception()}")
        return future.result()

    def _check_interrupted(self, doing: str) -> None:
        if self.interruptible and SHUTDOWN.requested:
            raise SpawnerInterruptedError(f"interrupted ({SHUTDOWN.describe()}) while {doing}")

    def controllers(self) -> dict[str, Any]:
        from controller_manager_msgs.srv import ListControllers

        return {c.name: c for c in self.call("list_controllers", ListControllers.Request()).controller}

    def set_manager_parameters(self, values: dict[str, Any]) -> None:
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter

        request = SetParameters.Request(parameters=[Parameter(k, value=v).to_parameter_msg()
                                                    for k, v in values.items()])
        results = self.call("set_parameters", request).results
        for (key, _), result in zip(values.items(), results, strict=False):
            if not result.successful:
                raise SpawnerError(f"could not set parameter '{key}' on '{self.manager}': {result.reason}")

    def load(self, name: str) -> None:
        from controller_manager_msgs.srv import LoadController

        if not self.call("load_controller", LoadController.Request(name=name)).ok:
            raise SpawnerError(f"Failed loading controller '{name}' (see the controller manager's log; is "
                               f"'{name}.type' set in its parameters?)")

    def configure(self, name: str) -> None:
        from controller_manager_msgs.srv import ConfigureController

        if not self.call("configure_controller", ConfigureController.Request(name=name)).ok:
            raise SpawnerError(f"Failed to configure controller '{name}' (see the controller manager's log)")

    def switch(self, activate: Sequence[str], deactivate: Sequence[str], switch_timeout: float,
               asap: bool = True) -> None:
        from builtin_interfaces.msg import Duration
        from controller_manager_msgs.srv import SwitchController

        sec = int(switch_timeout)
        request = SwitchController.Request(
            activate_controllers=list(activate), deactivate_controllers=list(deactivate),
            strictness=SwitchController.Request.STRICT, activate_asap=asap,
            timeout=Duration(sec=sec, nanosec=round((switch_timeout - sec) * 1e9)))
        response = self.call("switch_controller", request)
        if not response.ok:
            what = f"activate {list(activate)}" if activate else f"deactivate {list(deactivate)}"
            detail = f": {response.message}" if response.message else ""
            raise SpawnerError(f"Failed to {what}{detail}")

    def unload(self, name: str) -> None:
        from controller_manager_msgs.srv import UnloadController

        if not self.call("unload_controller", UnloadController.Request(name=name)).ok:
            raise SpawnerError(f"Failed to unload controller '{name}' (see the controller manager's log)")


def _spawn(spawner: Spawner, args: argparse.Namespace, manager_ns: str) -> list[str]:
    """Run the steps for every controller; returns the controllers this run activated or loaded."""
    log = spawner.node.get_logger()
    handled: list[str] = []
    for name in args.controller_names:
        loaded = spawner.controllers()
        if name in loaded:
            log.warning(f"Controller '{name}' already loaded ({loaded[name].state}), skipping load_controller")
        else:
            params: dict[str, Any] = {}
            if args.controller_type:
                params[f"{name}.type"] = args.controller_type
            for path in args.param_file:
                section = controller_in_param_file(path, name, manager_ns)
                if section is None:
                    log.warning(f"parameter file '{path}' has no section for controller '{name}'")
                elif "type" in section and not args.controller_type:
                    params[f"{name}.type"] = str(section["type"])
            if args.param_file:
                params[f"{name}.params_file"] = [str(Path(p).resolve()) for p in args.param_file]
            if args.controller_ros_args:
                import shlex

                params[f"{name}.node_options_args"] = [a for text in args.controller_ros_args
                                                       for a in shlex.split(text)]
            if params:
                spawner.set_manager_parameters(params)
            spawner.load(name)
            log.info(f"Loaded {name}")
        handled.append(name)
        if args.load_only:
            continue
        state = spawner.controllers().get(name)
        if state is not None and state.state == "active":
            log.info(f"Controller '{name}' is already active")
            continue
        spawner.configure(name)
        if not args.inactive and not args.activate_as_group:
            spawner.switch([name], [], args.switch_timeout, args.activate_asap)
            log.info(f"Configured and activated {name}")
        else:
            log.info(f"Configured {name}")
    if args.activate_as_group and not args.inactive and not args.load_only:
        to_activate = [n for n in args.controller_names if spawner.controllers()[n].state != "active"]
        if to_activate:
            spawner.switch(to_activate, [], args.switch_timeout, args.activate_asap)
        log.info(f"Activated {args.controller_names} as a group")
    return handled


def _run(argv: Sequence[str] | None, unspawner: bool) -> int:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.utilities import remove_ros_args

    from robot_core.ros.node_main import NodeStartError, init_rclpy, report_startup_failure

    argv = list(sys.argv if argv is None else argv)
    args = build_parser(unspawner).parse_args(remove_ros_args(argv)[1:])
    try:
        init_rclpy(argv)
    except NodeStartError as exc:
        return report_startup_failure("unspawner" if unspawner else "spawner", exc)
    node = rclpy.create_node(("unspawner_" if unspawner else "spawner_") + args.controller_names[0])
    namespace = args.namespace if not unspawner and args.namespace else node.get_namespace()
    manager = resolve_manager_name(args.controller_manager, namespace)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spin = threading.Thread(target=executor.spin, daemon=True)
    spin.start()
    log = node.get_logger()
    code = EXIT_OK
    try:
        spawner = Spawner(node, manager, args.service_call_timeout)
        spawner.wait_for_manager(args.controller_manager_timeout)
        if unspawner:
            spawner.switch([], args.controller_names, args.switch_timeout)
            for name in args.controller_names:
                spawner.unload(name)
                log.info(f"Deactivated and unloaded {name}")
        else:
            handled = _spawn(spawner, args, namespace)
            if args.unload_on_kill:
                log.info("Waiting until interrupted to unload the controllers")
                while not SHUTDOWN.wait(0.5):
                    pass
                spawner.interruptible = False
                log.info("Interrupt captured, deactivating and unloading controllers")
                active = [n for n, c in spawner.controllers().items() if n in handled and c.state == "active"]
                if active:
                    spawner.switch([], active, args.switch_timeout)
                for name in handled:
                    spawner.unload(name)
                log.info(f"Unloaded {handled}")
    except SpawnerError as exc:
        log.error(str(exc))
        print(f"{'unspawner' if unspawner else 'spawner'}: error: {exc}", file=sys.stderr, flush=True)
        code = EXIT_FAILURE
    except SpawnerInterruptedError as exc:
        log.info(f"{exc}: stopping")
    finally:
        # The spinning thread must be out of rcl_wait before its node and context go away (a segfault otherwise);
        # should it hang, the process ends without destroying them (finish() leaves with os._exit).
        executor.shutdown(timeout_sec=5.0)
        spin.join(timeout=5.0)
        if not spin.is_alive() and not middleware_deadlocked(log):
            if is_node_script():  # finish() leaves with os._exit: keep the participant (robot_core.ros.graph_exit)
                leave_graph(node)
            else:
                node.destroy_node()
                rclpy.try_shutdown()
    return code


def main(argv: Sequence[str] | None = None) -> int:
    return finish(_run(argv, unspawner=False))


def unspawner_main(argv: Sequence[str] | None = None) -> int:
    return finish(_run(argv, unspawner=True))


if __name__ == "__main__":
    sys.exit(main())
