"""How every robot_core node process starts and stops: one clean shutdown per process, whatever the signals.

A terminal Ctrl-C reaches the whole process group, and ``ros2 launch`` forwards it again, so a node often gets
SIGINT twice within milliseconds, sometimes while it is still importing or already shutting down. rclpy's
default handlers turn each one into a KeyboardInterrupt wherever the main thread happens to be (inside
``rclpy.try_shutdown()``, inside an import), which prints a traceback and exits -2. Here instead:

* SIGINT and SIGTERM only *request* a shutdown (:data:`SHUTDOWN`); the first one counts, later ones are
  ignored while the node shuts down. The node's own shutdown code runs once, in the main thread.
* :func:`guard_start_up` (called when ``robot_core.nodes`` is imported) installs these handlers as soon as a
  node console script starts, before the second-long imports, and unblocks the signals a supervisor may
  have held back (see :mod:`robot_core.bringup.supervisor`), so a signal during start-up is recorded, not raised.
  Being first, it also caps glibc's malloc arenas before any thread exists (:mod:`robot_core.ros.malloc_arenas`).
* :func:`run_node` is the common main loop: build the node, spin it in a thread, wait for the request,
  stop, join, shut rclpy down. :func:`finish` ends a node script with ``os._exit`` after that clean
  shutdown: the middleware's C++ static destructors otherwise run at interpreter exit while one of its
  threads may still be busy, which aborted the controller manager once (``terminate called without an
  active exception``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from robot_core.ros.middleware_deadlock import may_destroy, middleware_deadlocked
from robot_core.ros.stack_dumps import enable_stack_dumps

# Console scripts (and ros2 run executables) whose process is one robot_core node.
NODE_SCRIPTS = frozenset({"simulator", "controller_manager", "ros2_control_node", "rbc", "spawner", "unspawner"})
SHUTDOWN_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# What guard_start_up did about glibc's malloc arenas (robot_core.ros.malloc_arenas); None outside node scripts.
MALLOC_CAP: str | None = None


class ShutdownRequest:
    """Set by the first SIGINT/SIGTERM; every later signal is ignored (the shutdown is already under way)."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signum: int | None = None

    def install(self) -> None:
        """Route SIGINT/SIGTERM here (main thread only, as Python requires); idempotent."""
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in SHUTDOWN_SIGNALS:
            if signal.getsignal(sig) != self._on_signal:
                signal.signal(sig, self._on_signal)

    def _on_signal(self, signum: int, _frame: Any) -> None:
        # Nothing but flag setting here: the handler may interrupt the main thread anywhere, even in a logger.
        if self.signum is None:
            self.signum = signum
        self.event.set()

    @property
    def requested(self) -> bool:
        return self.event.is_set()

    def request(self) -> None:
        """Ask for the shutdown from code (e.g. a node that cannot go on)."""
        self.event.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self.event.wait(timeout)

    def describe(self) -> str:
        return signal.Signals(self.signum).name if self.signum is not None else "request"


SHUTDOWN = ShutdownRequest()


def is_node_script() -> bool:
    """True when this process was started as one of robot_core's node executables."""
    return Path(sys.argv[0] if sys.argv else "").name in NODE_SCRIPTS


def guard_start_up() -> None:
    """Install the shutdown handlers early in a node script (a no-op in any other program, e.g. pytest), and cap
    its malloc arenas while it has no other thread yet (robot_core.ros.malloc_arenas: RSS creep otherwise)."""
    global MALLOC_CAP
    if not is_node_script():
        return
    if MALLOC_CAP is None:
        from robot_core.ros.malloc_arenas import cap_malloc_arenas

        MALLOC_CAP = cap_malloc_arenas()
    SHUTDOWN.install()
    # No node renders, but `import mujoco` loads its default GL backend (glfw), whose import runs a
    # `python -c` probe in our process group: a Ctrl-C at that moment printed that child's traceback.
    os.environ.setdefault("MUJOCO_GL", "disable")
    # A supervisor blocks these signals across its exec shim so none is lost before we get here.
    with contextlib.suppress(AttributeError, OSError, ValueError):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, SHUTDOWN_SIGNALS)


class NodeStartError(Exception):
    """The node cannot start (a parameter file rcl would choke on, rcl refusing the arguments): say why, exit 1."""


def params_files(args: Sequence[str]) -> list[str]:
    """The ``--params-file`` arguments (both spellings) of a command line."""
    out = []
    tokens = list(args)
    for k, tok in enumerate(tokens):
        if tok == "--params-file" and k + 1 < len(tokens):
            out.append(tokens[k + 1])
        elif tok.startswith("--params-file="):
            out.append(tok.split("=", 1)[1])
    return out


def init_rclpy(args: Sequence[str] | None = None) -> None:
    """rclpy.init without rclpy's signal handlers (they raise KeyboardInterrupt anywhere); ours instead.

    Parameter files are checked first (size, alias expansion: robot_core.yaml_guard): rcl's parser expands an
    alias bomb without limit. NodeStartError names the file, or carries rcl's own complaint."""
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    from robot_core.text import clip
    from robot_core.yaml_guard import YamlLimitError, check_yaml_file

    SHUTDOWN.install()
    enable_stack_dumps()  # a crash in C, or SIGUSR1, prints every thread's Python stack (robot_core.ros.stack_dumps)
    argv = list(sys.argv if args is None else args)
    for path in params_files(argv):
        try:
            check_yaml_file(path)
        except YamlLimitError as exc:
            raise NodeStartError(f"parameter file refused: {exc}") from None
        except OSError as exc:
            raise NodeStartError(f"parameter file '{clip(path, 200)}' cannot be read: {exc.strerror}") from None
    try:
        rclpy.init(args=argv, signal_handler_options=SignalHandlerOptions.NO)
    except Exception as exc:  # rclpy's RCLError: a malformed parameter file or argument
        raise NodeStartError(f"ROS could not read the command line: {clip(str(exc).strip(), 600)}") from None


def report_startup_failure(name: str, exc: NodeStartError) -> int:
    """One line on stderr (rcl logging may not be up yet); exit code 1."""
    print(f"[FATAL] [{name}]: cannot start: {exc}", file=sys.stderr, flush=True)
    return 1


def spin_until_shutdown(node: Any, executor: Any) -> None:
    """Spin ``executor`` until the context shuts down. rclpy can raise InvalidHandle in the waiting thread when
    an entity is destroyed while a wait set is being built (a controller unloaded, a reacher destroyed); that
    entity is gone, so spinning simply resumes."""
    from rclpy.executors import ExternalShutdownException

    while node.context.ok() and not SHUTDOWN.requested:
        try:
            executor.spin()
            return
        except (ExternalShutdownException, KeyboardInterrupt):
            return
        except Exception as exc:
            if SHUTDOWN.requested or not node.context.ok():
                return
            if "destruction was requested" not in str(exc):
                node.get_logger().error(f"executor: {type(exc).__name__}: {exc}")


def spin_while(executor: Any, keep_going: Callable[[], bool], log: Callable[[str], None],
               timeout: float = 0.1) -> None:
    """``executor.spin_once`` while ``keep_going()``, surviving what rclpy raises for entities that change while
    the wait set is built: InvalidHandle for a client, reacher node or controller destroyed from another thread,
    and an ``ActionClient`` met half-built (it joins its node before it has its lock). Either entity is fine at
    the next pass; a thread that let it escape stopped serving everything else, silently."""
    from rclpy.executors import ExternalShutdownException

    while keep_going():
        try:
            executor.spin_once(timeout_sec=timeout)
        except (ExternalShutdownException, KeyboardInterrupt):
            return
        except Exception as exc:
            if not keep_going():
                return
            text = str(exc)
            if "destruction was requested" not in text and "_lock" not in text:
                log(f"executor: {type(exc).__name__}: {exc}")
            # The next pass would fail at once again while the thread changing the entity waits for the GIL;
            # a moment's sleep lets it finish instead of spinning on the same error.
            time.sleep(0.002)


def run_node(name: str, build: Callable[[], Any], *, args: Sequence[str] | None = None, label: str = "",
             make_executor: Callable[[], Any] | None = None, attach: Callable[[Any, Any], None] | None = None,
             stop: Callable[[Any], None] | None = None, failed: Callable[[Any], str | None] | None = None,
             startup_errors: tuple[type[BaseException], ...] = (), before_spin: Callable[[], None] | None = None,
             ) -> int:
    """Build a node, spin it until SIGINT/SIGTERM (or ``failed(node)`` says why it cannot go on), stop it cleanly.

    Returns 0 on a signal, 1 when ``build`` raised one of ``startup_errors`` or the node failed. ``stop`` is
    the node's own shutdown (stop threads, hold the robot); it runs once, with the executor still spinning so
    that last messages and goal results go out.
    """
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    log = rclpy.logging.get_logger(name)
    try:
        init_rclpy(args)
    except NodeStartError as exc:
        return report_startup_failure(name, exc)
    node = None
    code = 0
    executor = None
    spinner: threading.Thread | None = None
    try:
        if SHUTDOWN.requested:
            return 0
        try:
            node = build()
        except startup_errors as exc:
            log.fatal(f"cannot start the {label or name}: {exc}")
            return 1
        except Exception as exc:
            if SHUTDOWN.requested or not rclpy.ok():
                return 0  # interrupted while starting: a normal, quiet exit
            log.fatal(f"cannot start the {label or name}: {type(exc).__name__}: {exc}")
            return 1
        executor = make_executor() if make_executor is not None else SingleThreadedExecutor()
        if attach is not None:
            attach(node, executor)
        else:
            executor.add_node(node)
        if before_spin is not None:
            before_spin()
        spinner = threading.Thread(target=spin_until_shutdown, args=(node, executor), name=f"{name}-spin",
                                   daemon=True)
        spinner.start()
        while not SHUTDOWN.wait(0.1):
            reason = failed(node) if failed is not None else None
            if reason:
                log.fatal(reason)
                code = 1
                break
            if not spinner.is_alive():
                break
        if SHUTDOWN.requested:
            log.info(f"shutting down ({SHUTDOWN.describe()})")
    finally:
        SHUTDOWN.request()  # from here on, signals change nothing
        middleware_deadlocked(log)  # before stop(): it destroys internal nodes too (see may_destroy)
        if node is not None and stop is not None:
            try:
                stop(node)
            except Exception as exc:
                log.error(f"shutdown: {type(exc).__name__}: {exc}")
        if executor is not None:
            with contextlib.suppress(Exception):
                executor.shutdown(timeout_sec=2.0)
        if spinner is not None:
            spinner.join(timeout=5.0)
        # Destroying a node under a thread still inside rcl_wait can crash; a hung spinner is left to os._exit.
        if spinner is not None and spinner.is_alive():
            log.warning("the executor did not stop within 5 s; leaving without destroying the node")
        elif may_destroy():
            if node is not None:
                with contextlib.suppress(Exception):
                    node.destroy_node()
            with contextlib.suppress(Exception):
                rclpy.try_shutdown()
    return code


def finish(code: int) -> int:
    """End a node script: flush and leave at once (see the module docstring); in any other caller, return."""
    if not is_node_script():
        return code
    with contextlib.suppress(Exception):
        logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
