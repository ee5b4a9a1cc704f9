"""Goals of an instance process, served by the coupler's process: the channel between the two.

Why: the action server of a reacher that runs as a process lives in the coupler's process, so it outlives the
reacher. A reacher killed mid-goal (SIGKILL, a crash) gets its goal answered ABORTED with the reason (the
process and its signal) instead of the client seeing the server vanish.

The process keeps the instance (goals start, run and end there, between two steps); the coupler's side holds a
:class:`GoalProxy` that offers the action server the calls an in-process instance offers (``start_goal``,
``status``, ``cancel``, ``label``). They talk over a socket pair, one JSON object per line:

* coupler -> process: ``{"op": "goal", "req": n, "goal": {"cls": "module:Class", "fields": {...}}}`` (a core goal
  dataclass such as JointGoal), ``{"op": "cancel", "gid": g}``; ``{"op": "inputs", "inputs": [...]}``: the
  shared-output blocks the process may read now (robot_core.rbc.shared_table), sent whenever an extender with
  shared outputs comes or goes, so a process also reads extenders created after it;
* process -> coupler: ``{"op": "reply", "req": n, "gid": g}`` or ``{"op": "reply", "req": n, "error": "..."}``
  (the goal's start, or why it was rejected); ``{"op": "status", "gid": g, "state": ..., "message": ...,
  "feedback": {...}, "result": {...}}`` after a step when the goal's state changed, and at most once per
  ``feedback_period`` when only its feedback did (:class:`GoalHost`).

End of file on the coupler's side means the process is gone: a running goal then aborts, naming the process's
exit (``exit_reason``) once it is known. ROS-free.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from robot_core.rbc.errors import RbcError, RbcGoalError
from robot_core.rbc.instance import ABORTED, ACTIVE, CANCELED, GoalStatus, RbcInstance

REPLY_TIMEOUT = 10.0  # s the process has to answer a goal (it does so between two steps)
EXIT_WAIT = 1.0  # s a goal waits, after the channel closed, for the process's exit status to name in its abort


def encode_goal(goal: Any) -> dict[str, Any]:
    """A core goal dataclass as JSON-able data naming its class."""
    if not dataclasses.is_dataclass(goal) or isinstance(goal, type):
        raise TypeError(f"goal {type(goal).__name__} is not a dataclass instance")
    cls = type(goal)
    return {"cls": f"{cls.__module__}:{cls.__qualname__}", "fields": plain(dataclasses.asdict(goal))}


def decode_goal(data: dict[str, Any]) -> Any:
    """The goal :func:`encode_goal` wrote; ValueError when its class is not a dataclass."""
    module, _, name = str(data["cls"]).partition(":")
    cls = getattr(importlib.import_module(module), name)
    if not dataclasses.is_dataclass(cls):
        raise ValueError(f"goal class '{data['cls']}' is not a dataclass")
    return cls(**data["fields"])


def plain(value: Any) -> Any:
    """JSON-able copy (numpy arrays and scalars become lists and floats; tuples become lists)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value


class _Lines:
    """Newline-delimited JSON over a stream socket: ``send`` whole objects, ``receive`` complete ones."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self._buf = b""
        self._send_lock = threading.Lock()

    def send(self, obj: dict[str, Any]) -> bool:
        data = json.dumps(obj).encode() + b"\n"
        with self._send_lock:
            try:
                self.sock.sendall(data)
            except OSError:
                return False
        return True

    def receive(self) -> list[dict[str, Any]] | None:
        """Complete messages now readable (blocking until some bytes come); None at end of file."""
        try:
            data = self.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return []
        except OSError:
            return None
        if not data:
            return None
        self._buf += data
        *lines, self._buf = self._buf.split(b"\n")
        return [json.loads(line) for line in lines if line.strip()]


class GoalProxy:
    """The coupler's stand-in for an instance in a process: what the action server calls, over the channel.

    ``exit_reason`` gives the process's exit ("signal SIGKILL") once known; ``label`` names it in messages.
    A reader thread takes the process's replies and status messages.
    """

    def __init__(self, sock: socket.socket, name: str, type_name: str, kind: str,
                 label: Callable[[], str], exit_reason: Callable[[], str | None]):
        self.name = name
        self.TYPE_NAME = type_name
        self.KIND = kind
        self._label = label
        self._exit_reason = exit_reason
        self._lines = _Lines(sock)
        self._cond = threading.Condition()
        self._replies: dict[int, dict[str, Any]] = {}
        self._next_req = 1
        self._status = GoalStatus()
        self._closed_at: float | None = None  # when end of file came
        self._lost = ""  # why a running goal aborted when the process went
        self._thread = threading.Thread(target=self._read, name=f"rbc-goals-{name}", daemon=True)
        self._thread.start()

    def label(self) -> str:
        return self._label()

    @property
    def closed(self) -> bool:
        return self._closed_at is not None

    def _read(self) -> None:
        while True:
            messages = self._lines.receive()
            with self._cond:
                if messages is None:
                    self._closed_at = time.monotonic()
                    self._cond.notify_all()
                    return
                for m in messages:
                    if m.get("op") == "reply":
                        self._replies[int(m["req"])] = m
                    elif m.get("op") == "status" and int(m["gid"]) >= self._status.goal_id:
                        self._status = GoalStatus(state=str(m["state"]), goal_id=int(m["gid"]),
                                                  message=str(m["message"]), feedback=dict(m["feedback"]),
                                                  result=dict(m["result"]))
                self._cond.notify_all()

    def start_goal(self, goal: Any, timeout: float = REPLY_TIMEOUT) -> int:
        """Start ``goal`` in the process; RbcGoalError with its reason when it rejects it or is gone."""
        with self._cond:
            if self.closed:
                raise RbcGoalError(f"{self.label()} is gone; no goals taken")
            req = self._next_req
            self._next_req += 1
        if not self._lines.send({"op": "goal", "req": req, "goal": encode_goal(goal)}):
            raise RbcGoalError(f"{self.label()} is gone; no goals taken")
        deadline = time.monotonic() + timeout
        with self._cond:
            while req not in self._replies:
                left = deadline - time.monotonic()
                if self.closed or left <= 0:
                    why = "is gone" if self.closed else f"did not answer within {timeout:g} s"
                    raise RbcGoalError(f"{self.label()} {why}; goal not started")
                self._cond.wait(left)
            reply = self._replies.pop(req)
            if "error" in reply:
                raise RbcGoalError(str(reply["error"]))
            gid = int(reply["gid"])
            if gid > self._status.goal_id:  # its first status comes after the process's next step
                if self._status.state == ACTIVE:
                    self._status.state, self._status.message = ABORTED, "preempted by a new goal"
                self._status = GoalStatus(state=ACTIVE, goal_id=gid)
            return gid

    def status(self) -> GoalStatus:
        """The latest status the process sent; once the process is gone a running goal reads ABORTED, naming
        the process's exit (known at once after a kill, or after EXIT_WAIT s)."""
        with self._cond:
            st = self._status
            if st.state != ACTIVE or self._closed_at is None:
                return st
            reason = self._exit_reason()
            if reason is None and time.monotonic() - self._closed_at < EXIT_WAIT:
                return st
            text = f"ended ({reason})" if reason is not None else "closed its goal channel"
            self._status = GoalStatus(state=ABORTED, goal_id=st.goal_id,
                                      message=f"{self.label()} {text} during the goal; the joints it drove hold",
                                      feedback=st.feedback, result=st.result)
            return self._status

    def announce_inputs(self, inputs: list[dict[str, Any]]) -> bool:
        """Tell the process which shared-output blocks it may read now (all of them, not a change)."""
        return self._lines.send({"op": "inputs", "inputs": inputs})

    def cancel(self) -> None:
        """Cancel the running goal in the process (the local status says canceled at once)."""
        with self._cond:
            st = self._status
            if st.state != ACTIVE:
                return
            st.state, st.message = CANCELED, "canceled"
            gid = st.goal_id
        self._lines.send({"op": "cancel", "gid": gid})

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._lines.sock.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=1.0)
        with contextlib.suppress(OSError):
            self._lines.sock.close()


class GoalHost:
    """The process's side: starts and cancels goals of its instance on the coupler's request, between steps,
    and sends the goal's status after each step (``after_step``). ``on_reject`` gets every rejection's reason
    (the process's ``~/status`` shows the latest); ``on_inputs`` every announcement of readable shared-output
    blocks."""

    def __init__(self, sock: socket.socket, inst: RbcInstance, lock: threading.Lock, feedback_period: float = 0.05,
                 on_reject: Callable[[str], None] = lambda reason: None,
                 on_inputs: Callable[[list[dict[str, Any]]], None] = lambda inputs: None):
        self.sock = sock
        self.on_inputs = on_inputs
        self.inst = inst
        self.lock = lock
        self.feedback_period = feedback_period
        self.on_reject = on_reject
        self._lines = _Lines(sock)
        self._sent: tuple[int, str, str] | None = None
        self._sent_feedback: Any = None
        self._next_feedback = 0.0

    def fileno(self) -> int:
        return self.sock.fileno()

    def handle(self) -> bool:
        """Take the coupler's requests now readable; False at end of file (the coupler is gone)."""
        messages = self._lines.receive()
        if messages is None:
            return False
        for m in messages:
            if m.get("op") == "goal":
                self._lines.send(self._start(m))
            elif m.get("op") == "cancel":
                with self.lock:
                    if self.inst.status().goal_id == int(m["gid"]):
                        self.inst.cancel()
            elif m.get("op") == "inputs":
                self.on_inputs(list(m["inputs"]))
        self.after_step(force=True)
        return True

    def _start(self, m: dict[str, Any]) -> dict[str, Any]:
        try:
            goal = decode_goal(m["goal"])
            with self.lock:
                gid = self.inst.start_goal(goal)
        except (RbcError, ValueError, KeyError, TypeError) as exc:
            reason = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
            self.on_reject(reason)
            return {"op": "reply", "req": m["req"], "error": reason}
        except Exception as exc:  # a core bug rejects the goal, the process stays
            reason = f"{self.inst.label()}: {type(exc).__name__}: {exc}"
            self.on_reject(reason)
            return {"op": "reply", "req": m["req"], "error": reason}
        return {"op": "reply", "req": m["req"], "gid": gid}

    def after_step(self, force: bool = False) -> None:
        """Send the goal's status if its state changed, or its feedback did and a feedback period passed."""
        with self.lock:
            st = self.inst.status()
            key = (st.goal_id, st.state, st.message)
            if st.goal_id == 0:
                return
            now = time.monotonic()
            if key == self._sent and (now < self._next_feedback and not force):
                return
            feedback = plain(st.feedback)
            if key == self._sent and feedback == self._sent_feedback:
                return
            msg = {"op": "status", "gid": st.goal_id, "state": st.state, "message": st.message,
                   "feedback": feedback, "result": plain(st.result)}
            self._sent, self._sent_feedback = key, feedback
            self._next_feedback = now + self.feedback_period
        self._lines.send(msg)  # NaN and infinity travel as Python's json writes and reads them
