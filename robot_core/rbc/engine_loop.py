"""Runs a Coupler against an in-process PhysicsEngine, without ROS, exchanging the real message objects.

It plays the drivers the ``<rbc>`` tags name: every state topic of type sensor_msgs/JointState receives the
engine's joint state (all scalar joints, engine order, names filled), and every cmd topic is applied to the
engine as the controller behind it would: a Float64MultiArray as per-joint position / velocity / effort commands
for a given joint list (what forward_command_controller does), a JointState by name (the topic-based hardware
protocol, non-finite entries skipped). Used by the RBC tests and benchmarks and usable for quick experiments.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sensor_msgs.msg import JointState

from robot_core.rbc.coupler import Coupler

INTERFACES = ("position", "velocity", "effort", "joint_state")
_PLURAL = {"position": "positions", "velocity": "velocities", "effort": "efforts"}


@dataclass(frozen=True)
class CommandRoute:
    """How one cmd topic reaches the engine: ``interface`` for ``joints`` (in the message's array order)."""

    interface: str
    joints: tuple[str, ...] = ()


class EngineLoop:
    """Step engine and coupler in lock-step: state out of the engine, commands into it, every ``period``."""

    def __init__(self, coupler: Coupler, engine: Any, routes: Mapping[str, CommandRoute], *,
                 period_steps: int = 1):
        for topic, route in routes.items():
            if route.interface not in INTERFACES:
                raise ValueError(f"route for '{topic}': interface must be one of {INTERFACES}, got '{route.interface}'")
        self.coupler = coupler
        self.engine = engine
        self.routes = dict(routes)
        self.period_steps = int(period_steps)
        self.published: dict[str, Any] = {}
        self.state_topics = [t for t, cls in coupler.subscriptions() if cls is JointState]

    def joint_state(self) -> JointState:
        e = self.engine
        msg = JointState(name=list(e.joint_names), position=e.positions().tolist(),
                         velocity=e.velocities().tolist(), effort=e.efforts().tolist())
        sec = math.floor(e.time)
        msg.header.stamp.sec = sec
        msg.header.stamp.nanosec = min(round((e.time - sec) * 1e9), 999_999_999)
        return msg

    def publish_state(self) -> None:
        msg = self.joint_state()
        now = self.engine.time
        for topic in self.state_topics:
            self.coupler.on_message(topic, msg, now)

    def apply(self, topic: str, msg: Any) -> None:
        route = self.routes.get(topic)
        if route is None:
            return
        if route.interface == "joint_state":
            self._apply_joint_state(msg)
            return
        values = list(msg.data)
        joints = list(route.joints)
        if len(values) != len(joints):
            raise ValueError(f"'{topic}': {len(values)} values for {len(joints)} joints {joints}")
        self.engine.set_commands(joints, **{_PLURAL[route.interface]: values})

    def _apply_joint_state(self, msg: JointState) -> None:
        for k, name in enumerate(msg.name):
            kw = {}
            for field in ("position", "velocity", "effort"):
                arr = getattr(msg, field)
                if k < len(arr) and math.isfinite(arr[k]):
                    kw[field] = float(arr[k])
            if kw:
                self.engine.set_command(name, **kw)

    def cycle(self) -> dict[str, Any]:
        """One control period: coupler step at the engine time, commands applied, engine stepped, state read."""
        out = self.coupler.step(self.engine.time)
        for topic, msg in out.items():
            self.apply(topic, msg)
        self.published = out
        self.engine.step(self.period_steps)
        self.publish_state()
        return out

    def run_until(self, done: Callable[[], bool], max_time: float,
                  each: Callable[[EngineLoop], None] | None = None) -> bool:
        """Cycle until ``done()`` or ``max_time`` s of simulated time passed; returns done()."""
        end = self.engine.time + max_time
        self.publish_state()
        while not done():
            if self.engine.time >= end:
                return False
            self.cycle()
            if each is not None:
                each(self)
        return True

    def run_for(self, duration: float, each: Callable[[EngineLoop], None] | None = None) -> None:
        self.run_until(lambda: False, duration, each)


def forward_routes(position_topic: str | None, velocity_topic: str | None, joints: Sequence[str],
                   effort_topic: str | None = None) -> dict[str, CommandRoute]:
    """Routes for forward-command controllers on ``joints`` (the rc_arm layout)."""
    out: dict[str, CommandRoute] = {}
    for topic, iface in ((position_topic, "position"), (velocity_topic, "velocity"), (effort_topic, "effort")):
        if topic:
            out[topic] = CommandRoute(iface, tuple(joints))
    return out
