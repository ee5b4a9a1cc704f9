"""Demo scenarios, one file each: what to bring up, which goals to send through the graph, how to judge them.

A scenario module defines a :class:`robot_core.demo.runner.Scenario` named ``SCENARIO`` and is listed here;
the runner does the rest (bring-up, recording, plot, rendering, summary) and writes the scenario's own files
(``Scenario.outputs``). doc/demo.md describes each scenario.
"""

from __future__ import annotations

from robot_core.demo.runner import Scenario
from robot_core.demo.scenarios import arm, drive, pick_place

SCENARIOS: dict[str, Scenario] = {s.name: s for s in (arm.SCENARIO, pick_place.SCENARIO, drive.SCENARIO)}
DEFAULT = "arm"
