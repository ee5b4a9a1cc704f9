"""The simulator node against the faults of issue 13, over DDS: huge finite commands and wrenches, divergence
reports on ~/events, the command watchdog, and unbounded / uninterruptible ~/step requests.

One planar2 simulator for the module, started in an empty working directory (MuJoCo must not write
MUJOCO_LOG.TXT there); each test starts from a reset, running.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import PlanarSimSetup
from ros_harness import NodeProcess, RosTestContext, wait_for, wait_future
from sim_helpers import HOME, SimClient, near, sec

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros

NAN = math.nan


class TrustClient(SimClient):
    """SimClient plus the simulator's ~/events (latched)."""

    def __init__(self, ros: RosTestContext, name: str):
        super().__init__(ros, name)
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from std_msgs.msg import String

        self.events: list[str] = []
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.node.create_subscription(String, "/simulator/events", lambda m: self.events.append(m.data), qos)

    def stream_until(self, cond, what: str, timeout: float = 15.0, **command: Any) -> None:
        """Send a command again and again (as a controller does every cycle) until cond() holds."""
        names = command.pop("names")

        def sent_and_done() -> bool:
            self.send(names, **command)
            return bool(cond())

        wait_for(lambda: sent_and_done() or (time.sleep(0.01) and False), timeout, what)


@pytest.fixture(scope="module")
def sim_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("simulator_cwd")


@pytest.fixture(scope="module")
def planar_sim_setup(sim_dir: Path) -> PlanarSimSetup:
    """conftest's shared planar2 simulator, with a short command watchdog, in an empty working directory, watched
    by a TrustClient."""
    return PlanarSimSetup(params=("command_timeout:=0.5",), cwd=sim_dir, client=TrustClient,
                          client_name="trust_client")


@pytest.fixture
def sim(fresh: TrustClient) -> TrustClient:
    """conftest's ``fresh`` (the shared simulator, running, reset), under the name these tests use."""
    return fresh


class TestTrust:
    """One planar2 simulator for these tests (conftest's class-scoped ``planar_sim``); each starts from a reset,
    running."""

    # ---------------------------------------------------------------------------------------------- fault 4
    @pytest.mark.parametrize("effort", [1e11, 1e300])
    def test_a_huge_effort_command_is_dropped_and_the_other_servos_hold(self, sim: TrustClient,
                                                                         planar_sim: NodeProcess, sim_dir: Path,
                                                                         effort: float):
        """MuJoCo zeroes every control when one is huge: joint2 (position servoed) would let go and fall."""
        sim.send(["joint1"], effort=[effort])
        planar_sim.wait_for_output(f"effort command {effort:g} for joint 'joint1' is absurd", timeout=15)
        t0 = sim.stamp()
        wait_for(lambda: sim.stamp() > t0 + 0.5, 10, "half a second of simulated time after the command")
        assert near(sim.positions(), HOME, 2e-3), sim.positions()
        assert not (sim_dir / "MUJOCO_LOG.TXT").exists()

    def test_a_large_effort_command_is_clamped_to_the_limit(self, sim: TrustClient, sim_dir: Path):
        """1e5 N m on joint1 (limit 30): a saturating command, applied at the limit.

        "Driven" is judged by how far joint1 went, not by its speed: at 30 N m it reaches its joint limit within a
        fraction of a second and stops there, so a loaded test could miss the moment it was moving.
        """
        sim.stream_until(lambda: abs(sim.latest().effort[0]) > 1.0 and sim.positions()["joint1"] > HOME["joint1"] + 0.1,
                         "joint1 driven by its effort", names=["joint1"], effort=[1e5])
        assert all(abs(e) <= 30.0 + 1e-6 for e in sim.latest().effort[:1]), sim.latest().effort
        assert sim.positions()["joint2"] == pytest.approx(HOME["joint2"], abs=0.1)  # still servoed
        assert not (sim_dir / "MUJOCO_LOG.TXT").exists()

    def test_a_huge_wrench_is_refused_and_a_divergence_is_reported(self, sim: TrustClient, planar_sim: NodeProcess,
                                                                   sim_dir: Path):
        from builtin_interfaces.msg import Duration
        from robot_core_interfaces.srv import ApplyWrench, SetJointState
        from sensor_msgs.msg import JointState

        req = ApplyWrench.Request(link_name="link2", duration=Duration(sec=1))
        req.wrench.force.z = 1e300
        res = sim.call("apply_wrench", req)
        assert not res.success and "beyond the simulator's bound" in res.message, res.message
        # a divergence forced with a finite but absurd speed: reset, logged, and on ~/events
        n = len(sim.events)
        res = sim.call("set_joint_state", SetJointState.Request(state=JointState(name=["joint1"], velocity=[1e6])))
        assert res.success, res.message
        wait_for(lambda: any(e.startswith("diverged at t=") for e in sim.events[n:]), 15, "the divergence on ~/events")
        event = next(e for e in sim.events[n:] if e.startswith("diverged at t="))
        assert "reset to the initial state" in event
        planar_sim.wait_for_output("diverged at t=", timeout=10)
        planar_sim.wait_for_output("MuJoCo: Nan, Inf or huge value in QACC", timeout=10)  # MuJoCo's own warning
        sim.wait_state(lambda q, _: near(q, HOME, 1e-3), 10, "the initial pose after the divergence")
        assert not (sim_dir / "MUJOCO_LOG.TXT").exists()

    def test_a_divergence_is_counted_in_the_status_with_its_time_and_event(self, sim: TrustClient):
        """The status tells a client that never read ~/events that (and when) the simulation was reset."""
        from robot_core_interfaces.srv import SetJointState
        from sensor_msgs.msg import JointState

        # The module's earlier tests may have forced divergences already, and a status may still be on its way
        # from before the last one: start from a status that has caught up with the newest event.
        before = wait_for(lambda: next((m for m in sim.status[-1:] if m.last_event == (sim.events or [""])[-1]), None),
                          10, "a status up to date with ~/events")
        n = before.divergence_count
        if n == 0:
            assert sec(before.last_divergence_time) == 0.0
        res = sim.call("set_joint_state", SetJointState.Request(state=JointState(name=["joint1"], velocity=[1e6])))
        assert res.success, res.message
        st = wait_for(lambda: next((m for m in reversed(sim.status)
                                    if m.divergence_count == n + 1 and "diverged at t=" in m.last_event), None),
                      15, f"a status with divergence_count {n + 1} and the divergence as its last event")
        assert "reset to the initial state" in st.last_event, st.last_event
        # the time in the status is the one the event names (the event rounds it to the millisecond)
        reported = float(st.last_event.split("diverged at t=", 1)[1].split(" s", 1)[0])
        assert sec(st.last_divergence_time) == pytest.approx(reported, abs=1e-3)
        assert sec(st.last_divergence_time) > 0.0  # after the reset that started this test
        wait_for(lambda: st.last_event in sim.events, 10, "the status's last event on ~/events too")
        sim.wait_state(lambda q, _: near(q, HOME, 1e-3), 10, "the initial pose after the divergence")

    # ---------------------------------------------------------------------------------------------- fault 3
    def test_the_command_watchdog_stops_velocity_and_effort_commands(self, sim: TrustClient):
        """A commander that stops sending (a killed controller manager) must not leave the arm running into its
        limit; the next command resumes."""
        n = len(sim.events)
        sim.stream_until(lambda: sim.velocities()["joint1"] > 0.25, "joint1 moving at 0.3 rad/s",
                         names=["joint1"], velocity=[0.3])
        last_command = time.monotonic()
        q = sim.wait_state(lambda _, qd: abs(qd["joint1"]) < 0.02, 10, "joint1 stopped after the commands stopped")
        print(f"velocity command: last command -> joint1 stopped: {time.monotonic() - last_command:.3f} s (wall; "
              "command_timeout 0.5 s)")
        assert q["joint1"] < 2.0  # stopped by the watchdog, not by its limit (3.0)
        wait_for(lambda: any("no command for" in e and "joint1" in e for e in sim.events[n:]), 10,
                 "the watchdog's event")
        # it holds there, and the next command moves it again
        t0, q1 = sim.stamp(), sim.positions()["joint1"]
        wait_for(lambda: sim.stamp() > t0 + 0.5, 10, "time passing")
        assert sim.positions()["joint1"] == pytest.approx(q1, abs=0.01)
        sim.stream_until(lambda: sim.velocities()["joint1"] < -0.25, "joint1 moving again", names=["joint1"],
                         velocity=[-0.3])

        # effort: joint2 driven then left alone: held where it is. Any effort takes it to its 3 rad/s velocity limit
        # at once, so it is driven away from its nearer limit (0.8 -> -2.6 rad, over a second of travel): the
        # watchdog's 0.5 s must stop it well before the limit would.
        n = len(sim.events)
        sim.stream_until(lambda: abs(sim.velocities()["joint2"]) > 0.1, "joint2 driven by an effort",
                         names=["joint1", "joint2"], position=[q1, NAN], effort=[NAN, -3.0])
        last_command = time.monotonic()
        # "Held" is judged by the watchdog's event and a steady position after it, not by one slow sample: against
        # gravity, 3 N m can bring joint2 to a momentary stop on its way, which an earlier check took for the hold.
        wait_for(lambda: any("no command for" in e and "joint2" in e for e in sim.events[n:]), 10,
                 "the watchdog's event for joint2")
        q = sim.wait_state(lambda _, qd: abs(qd["joint2"]) < 0.02, 10, "joint2 held after the commands stopped")
        print(f"effort command: last command -> joint2 held: {time.monotonic() - last_command:.3f} s (wall)")
        assert q["joint2"] > -2.5  # not resting at its limit (-2.6)
        t0, q2 = sim.stamp(), q["joint2"]
        wait_for(lambda: sim.stamp() > t0 + 0.5, 10, "time passing")
        assert sim.positions()["joint2"] == pytest.approx(q2, abs=0.02)

    # ---------------------------------------------------------------------------------------------- fault 6
    def test_step_requests_are_bounded_and_interruptible(self, sim: TrustClient):
        from robot_core_interfaces.srv import StepSimulation

        assert sim.trigger("pause").success
        res = sim.step(4_294_967_295)
        assert not res.success and "at most 1000000" in res.message, res.message
        # a long request runs in slices: other services are answered meanwhile, and a reset interrupts it
        count0 = sim.step(0).step_count
        # The newest status may still be one from before the fixture's reset (the status comes at 10 Hz, and the
        # fixture's reset, this pause and these two steps can all fit between two of them): its count, from the
        # previous test's run, can be far above count0, and a reset sent on its word could reach the simulator
        # before the step request and leave that request running uninterrupted. Statuses arrive in order, so
        # once one from this pause is in, any later count above count0 is the step request's.
        wait_for(lambda: sim.status[-1].paused and sim.status[-1].step_count == count0, 10,
                 "a status from this pause")
        future = sim._clients["step"].call_async(StepSimulation.Request(steps=1_000_000))
        wait_for(lambda: sim.status[-1].step_count > count0 + 2000, 20, "the step request running")
        start = time.monotonic()
        res = sim.reset()
        print(f"reset answered {time.monotonic() - start:.3f} s after the call, during a step request")
        assert res.success, res.message
        res = wait_future(future, 20, "the interrupted step request's answer")
        assert not res.success and "interrupted by reset after" in res.message, res.message
        # ... and so does a pause. Status messages come in order, and the reset sent the count back to 0: once one
        # below 2000 arrived, a later one above it is the new request's.
        wait_for(lambda: sim.status[-1].step_count < 2000, 10, "a status from after the reset")
        future = sim._clients["step"].call_async(StepSimulation.Request(steps=1_000_000))
        wait_for(lambda: sim.status[-1].step_count > 2000, 20, "the second step request running")
        assert sim.trigger("pause").success
        res = wait_future(future, 20, "the interrupted step request's answer")
        assert not res.success and "interrupted by pause after" in res.message, res.message
        assert sim.status[-1].paused
        # an ordinary request still answers with the time reached
        res = sim.step(100)
        assert res.success, res.message
        assert res.step_count == pytest.approx(sec(res.sim_time) / 0.001)
