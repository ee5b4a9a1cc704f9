"""Reachers and extenders as processes: the coupler's handle on one (RemoteInstance) and the loop inside it
(InstanceRunner).

Why processes: a reacher's Python work (Jacobians, fields) then runs on another core, beside the coupler's
cycle instead of inside it, and a reacher that crashes takes only itself down.

How they talk (no ROS between them):

* the coupler owns every shared-memory block (:mod:`robot_core.rbc.shared_table`): the state block it writes
  each cycle and one outputs block per process; it unlinks them, whatever happens to the processes;
* the process's stdin is a pipe from the coupler: one byte per coupler cycle says "new state". The process
  blocks on it (no polling), steps its instance once however many bytes are waiting, and writes its outputs.
  End of file (the coupler destroyed the instance, or died) ends the process;
* the coupler checks each cycle whether a process has exited (``Popen.poll``). A process that died (e.g.
  SIGKILL) is dropped at once: from that cycle on it contributes nothing, so position references hold and
  velocity-like vars go to zero, and ``list_re`` no longer shows it. Its last outputs are used for at most
  MAX_OUTPUT_AGE s without a newer step (on a loaded machine the kernel may take longer than that to finish a
  killed process), so the robot holds within that time even before the exit is seen; a process that steps
  late is held the same way until it steps again, and reported once it was quiet for ``hang_timeout`` s.

The process itself is started from an argv the caller gives (the rbc node passes its instance-node
programme, which serves the instance's action and parameters), with the JSON spec appended. ROS-free.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from robot_core.model.robot_model import RobotModel
from robot_core.rbc.context import POSITION_MODE, RbcContext
from robot_core.rbc.goal_channel import GoalHost, GoalProxy
from robot_core.rbc.instance import ABORTED, ACTIVE, RbcInstance, UpdateResult
from robot_core.rbc.registry import register, resolve_type
from robot_core.rbc.shared_table import SharedOutputs, SharedState, cmd_keys
from robot_core.rbc.shared_vector import TornReadError
from robot_core.rbc.var_table import VarTable, VarView

TORN_READ_WAIT = 0.002  # s the coupler waits for a process caught mid-write of its outputs before going on
HANG_TIMEOUT = 0.25  # s without a step after which a process is reported quiet
MAX_OUTPUT_AGE = 0.05  # s an output is used for without a newer step: then the robot holds (a killed process
# stops stepping at once, but the kernel may take a while to finish it where the coupler can see it exited)
STOP_GRACE = 2.0  # s a process has after end of file before it is killed


def exit_text(code: int) -> str:
    """'exit code 3' or 'signal SIGKILL', for messages."""
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


class RemoteInstance:
    """The coupler's side of one instance process: its outputs, liveness and the tick pipe."""

    def __init__(self, name: str, cls: type[RbcInstance], outputs: SharedOutputs, proc: subprocess.Popen,
                 goal_sock: socket.socket | None = None):
        self.name = name
        self.cls = cls
        self.type_key = cls.TYPE_NAME  # the type name create_re was given (the coupler sets it)
        self.TYPE_NAME = cls.TYPE_NAME
        self.KIND = cls.KIND
        self.outputs = outputs
        self.proc = proc
        assert proc.stdin is not None
        self._fd: int | None = proc.stdin.fileno()
        os.set_blocking(self._fd, False)
        self._last_beat = 0
        self._beat_time = time.monotonic()
        self.quiet = False  # no step for HANG_TIMEOUT s (reported once per quiet spell)
        # The instance's goals, started from the coupler's process (robot_core.rbc.goal_channel).
        self.goals = None if goal_sock is None else GoalProxy(goal_sock, name, cls.TYPE_NAME, cls.KIND, self.label,
                                                              self.exit_reason)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def label(self) -> str:
        return f"{self.TYPE_NAME} '{self.name}' (process {self.pid})"

    @property
    def ready(self) -> bool:
        """The process has set itself up (its ROS node exists) and stepped at least once."""
        out = self._read_outputs()
        return out is not None and out[0] >= 1

    def _read_outputs(self) -> tuple[int, float, np.ndarray] | None:
        """The latest outputs, or None while the process is caught mid-write (preempted, stopped, or killed
        there): the coupler's cycle must not wait on it, and no new step counts as none."""
        try:
            return self.outputs.read(timeout=TORN_READ_WAIT)
        except TornReadError:
            return None

    def exit_reason(self) -> str | None:
        code = self.proc.poll()
        return None if code is None else exit_text(code)

    def tick(self) -> None:
        """Tell the process a new state is there; a full pipe (the process lags) or a closed one is fine."""
        if self._fd is None:
            return
        with contextlib.suppress(BlockingIOError, BrokenPipeError, OSError):
            os.write(self._fd, b"\0")

    def contribution(self, now: float, hang_timeout: float = HANG_TIMEOUT,
                     max_age: float = MAX_OUTPUT_AGE) -> tuple[float, np.ndarray] | None:
        """(weight, rates) of the latest step, or None when it is older than ``max_age`` s or not ready."""
        out = self._read_outputs()
        beat, weight, rates = out if out is not None else (self._last_beat, math.nan, None)
        if beat < 1:  # still starting up
            self._beat_time = now
            return None
        if beat != self._last_beat:
            self._last_beat, self._beat_time, self.quiet = beat, now, False
        elif now - self._beat_time > hang_timeout:
            self.quiet = True
        if self.quiet or now - self._beat_time > max_age or rates is None:
            return None
        return weight, rates

    def stop(self) -> None:
        """End of file on the tick pipe: the process closes its node (running goals abort) and exits."""
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        self._fd = None

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5.0)

    def close(self) -> None:
        self.outputs.close()
        if self.goals is not None:
            self.goals.close()


def spawn(argv: list[str], spec: Mapping[str, Any], name: str, cls: type[RbcInstance], keys: list[tuple[str, str]],
          env: Mapping[str, str] | None = None) -> RemoteInstance:
    """Create the outputs block and start ``argv + [spec as JSON]`` with the tick pipe as its stdin and one end of
    the goal channel as file descriptor ``goal_fd``."""
    outputs = SharedOutputs(keys, cls.SHARED_OUTPUTS)
    ours, theirs = socket.socketpair()
    full = dict(spec, outputs_block=outputs.name, parent_pid=os.getpid(), goal_fd=theirs.fileno())
    try:
        proc = subprocess.Popen([*argv, json.dumps(full)], stdin=subprocess.PIPE, close_fds=True,
                                pass_fds=(theirs.fileno(),), env=dict(env) if env is not None else None)
    except OSError:
        outputs.close()
        ours.close()
        raise
    finally:
        theirs.close()
    return RemoteInstance(name, cls, outputs, proc, ours)


# --- inside the process ---------------------------------------------------------------------------------------
class RateContext(RbcContext):
    """The context of an instance in a process: reachers emit rates (velocities), never position increments;
    the coupler integrates them with its own cycle time."""

    emit_rates = True


class InstanceRunner:
    """One instance stepped on the shared state; ``lock`` guards the instance (its ROS node takes it too)."""

    def __init__(self, model: RobotModel, spec: Mapping[str, Any],
                 log: Callable[[str], None] = lambda text: None):
        self.spec = spec
        self.log = log
        self.table = VarTable(model, stale_timeout=float(spec.get("stale_timeout", 0.5)),
                              joint_state_match=str(spec.get("joint_state_match", "auto")))
        self.context = RateContext(model, self.table, dict(spec.get("position_vars", {"q_ref": "q"})))
        cls = _resolve(spec)
        self.inst = cls(str(spec["name"]), self.context)
        if spec.get("params"):
            self.inst.configure(spec["params"])
        self.state = SharedState(self.table, name=str(spec["state_block"]), create=False, untrack=True)
        self.outputs = SharedOutputs(cmd_keys(self.table), cls.SHARED_OUTPUTS, name=str(spec["outputs_block"]),
                                     create=False, untrack=True)
        self.inputs: dict[str, SharedOutputs] = {}
        self._input_blocks: dict[str, str] = {}  # instance -> its block's name
        self.set_inputs(list(spec.get("shared_inputs", [])))
        self.view = VarView(self.table, shared=self.shared_output)
        self.lock = threading.Lock()
        self.derived: dict[str, Any] = {}  # name -> latest derived data (the ROS node's status shows it)
        self._last_now: float | None = None
        fd = spec.get("goal_fd")
        self.goals = None if fd is None else GoalHost(socket.socket(fileno=int(fd)), self.inst, self.lock,
                                                      float(spec.get("feedback_period", 0.05)),
                                                      on_inputs=self.set_inputs)

    def set_inputs(self, inputs: list[dict[str, Any]]) -> None:
        """Read these extenders' shared-output blocks from now on (the coupler's whole list: at the start, then
        whenever one comes or goes); blocks no longer listed are let go. Runs in the stepping thread."""
        wanted = {str(o["name"]): o for o in inputs if str(o["name"]) != self.inst.name}
        for name in [n for n in self.inputs if self._input_blocks[n] != str(wanted.get(n, {}).get("block"))]:
            with contextlib.suppress(Exception):
                self.inputs.pop(name).close()
            del self._input_blocks[name]
        for name, other in wanted.items():
            if name in self.inputs:
                continue
            try:
                block = SharedOutputs(cmd_keys(self.table), _resolve(other).SHARED_OUTPUTS, name=str(other["block"]),
                                      create=False, untrack=True)
            except (OSError, KeyError, ValueError) as exc:  # gone again before we attached: the next list says so
                self.log(f"{self.inst.label()}: cannot read the shared outputs of '{name}': {exc}")
                continue
            self.inputs[name], self._input_blocks[name] = block, str(other["block"])

    def shared_output(self, instance: str, key: str) -> np.ndarray:
        """An extender's shared output; KeyError naming the instances this process can read."""
        block = self.inputs.get(instance)
        if block is None:
            raise KeyError(f"no shared outputs of '{instance}' here (readable: {', '.join(self.inputs) or 'none'})")
        return block.shared(key)

    def step(self) -> UpdateResult:
        """Read the latest state, update the instance once, write its outputs."""
        _, now = self.state.load()
        dt = 0.0 if self._last_now is None else now - self._last_now
        if dt < 0.0 or not math.isfinite(dt):
            dt = 0.0
        self._last_now = now
        inst = self.inst
        with self.lock:
            try:
                result = inst.update(now, dt, self.view)
            except Exception as exc:  # as in-process: the goal aborts, the instance stays
                result = UpdateResult()
                st = inst.status()
                message = f"{inst.label()}: update failed: {type(exc).__name__}: {exc}"
                if st.state == ACTIVE:
                    st.state, st.message = ABORTED, message
                inst.cancel()
                self.log(message)
            self.derived[inst.name] = result.derived
            weight = inst.weight if inst.KIND == "reacher" else 0.0
        commands = result.commands if inst.KIND == "reacher" else {}
        try:
            self.outputs.write(weight, commands, result.derived)
        except KeyError as exc:
            self.log(f"{inst.label()}: outputs dropped: {exc.args[0]}")
            self.outputs.write(0.0, {}, result.derived)
        return result

    def mark_ready(self) -> None:
        """First step: the coupler answers create_re once it sees it."""
        self.step()

    def serve(self, fd: int = 0, alive: Callable[[], bool] = lambda: True,
              after_step: Callable[[UpdateResult], None] | None = None) -> str:
        """Step once per tick from ``fd`` until end of file or ``alive()`` turns False; returns why it ended."""
        parent = self.spec.get("parent_pid")
        watched: list[Any] = [fd] if self.goals is None else [fd, self.goals]
        while alive():
            ready, _, _ = select.select(watched, [], [], 0.2)
            if parent is not None and os.getppid() != parent:
                return "the coupler process is gone"
            if self.goals is not None and self.goals in ready and not self.goals.handle():
                watched = [fd]  # the coupler closed the goal channel; the tick pipe says when to end
            if fd not in ready:
                continue
            try:
                data = os.read(fd, 4096)
            except OSError as exc:
                return f"tick pipe failed: {exc}"
            if not data:
                return "the coupler closed the tick pipe"
            result = self.step()
            if self.goals is not None:
                self.goals.after_step()
            if after_step is not None:
                after_step(result)
        return "shut down"

    def close(self) -> None:
        for block in [self.state, self.outputs, *self.inputs.values()]:
            with contextlib.suppress(Exception):
                block.close()
        if self.goals is not None:
            with contextlib.suppress(OSError):
                self.goals.sock.close()


def _resolve(spec: Mapping[str, Any]) -> type[RbcInstance]:
    """The class of a spec's type; a user type travels as its "module:Class" and is registered here too."""
    if spec.get("type_target"):
        register(str(spec["type"]), str(spec["type_target"]))
    return resolve_type(str(spec["type"]))


def set_parent_death_signal() -> None:
    """Linux: this process gets SIGKILL when its parent (the coupler) dies, even before it reads the pipe."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def rate_contributions(context: RbcContext, keys: list[tuple[str, str]], weight: float, rates: np.ndarray,
                       dt: float, into: dict[tuple[str, str], float]) -> None:
    """Add ``weight * rate`` (times ``dt`` for position-reference vars) of every non-NaN rate to ``into``."""
    if weight == 0.0:
        return
    for key, v in zip(keys, rates.tolist(), strict=True):
        if v != v:  # NaN: no output
            continue
        c = v * dt if context.var_mode(key[1]) == POSITION_MODE else v
        into[key] = into.get(key, 0.0) + weight * c


def load_model(spec: Mapping[str, Any]) -> RobotModel:
    """The robot of the spec: ``description_file`` holds the description text the coupler was started with."""
    from pathlib import Path

    from robot_core.model import load_robot

    path = Path(str(spec["description_file"]))
    return load_robot(path.read_text(), spec.get("package_dirs") or None)


# argv of the process main() runs in (the spec is appended); -c, not -m: the package imports this module first.
CHILD_ARGV = ["-c", "import sys; from robot_core.rbc.instance_process import main; sys.exit(main())"]


def main(argv: list[str] | None = None) -> int:
    """``python CHILD_ARGV SPEC``: an instance process without ROS (goals and parameters
    only from the spec's ``params`` and ``goal``); used by benchmarks and tests of the shared-memory path."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    spec = json.loads(args[-1])
    set_parent_death_signal()
    runner = InstanceRunner(load_model(spec), spec, log=lambda text: print(text, file=sys.stderr, flush=True))
    goal = spec.get("goal")
    if goal is not None:
        runner.inst.start_goal(goal_from_json(runner.inst, goal))
    runner.mark_ready()
    try:
        runner.serve()
    finally:
        runner.close()
    return 0


def goal_from_json(inst: RbcInstance, goal: Mapping[str, Any]) -> Any:
    """JR: ``{"positions": {joint: value}}``; VF: ``{"position": [x, y, z], "orientation": [x, y, z, w]}``."""
    if inst.TYPE_NAME == "JR":
        from robot_core.rbc.reachers.joint_reacher import JointGoal

        return JointGoal(dict(goal["positions"]), float(goal.get("precision", 0.0)), float(goal.get("timeout", 0.0)))
    if inst.TYPE_NAME == "VF":
        from robot_core.rbc.reachers.vector_field import PoseGoal

        return PoseGoal(np.asarray(goal["position"], dtype=float), np.asarray(goal["orientation"], dtype=float),
                        timeout=float(goal.get("timeout", 0.0)))
    raise ValueError(f"{inst.label()}: no goals from a spec")

