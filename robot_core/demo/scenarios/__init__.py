"""Demo scenarios, one file each: what to bring up, which goals to send through the graph, how to judge them.

A scenario module defines a :class:`robot_core.demo.runner.Scenario` named ``SCENARIO`` and is listed here;
the runner does the rest (bring-up, recording, plot, rendering, summary). Pick-and-place and drive go here too.
"""

from __future__ import annotations

from robot_core.demo.runner import Scenario
from robot_core.demo.scenarios import arm

SCENARIOS: dict[str, Scenario] = {s.name: s for s in (arm.SCENARIO,)}
DEFAULT = "arm"
