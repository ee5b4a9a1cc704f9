"""Two tiny extenders for the shared-output tests: ``Probe`` publishes its parameter as a shared output,
``ProbeReader`` reads another instance's shared output and publishes what it saw. Imported by instance processes
through their "module:Class" registration (the test puts this directory on their PYTHONPATH)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from robot_core.rbc.extenders.extender import Extender
from robot_core.rbc.instance import ParamSpec, UpdateResult


class Probe(Extender):
    TYPE_NAME = "Probe"
    PARAMS = (ParamSpec("value", "float_list", [1.0, 2.0], "the shared output"),)
    SHARED_OUTPUTS: ClassVar[dict[str, int]] = {"value": 2}

    def update(self, now: float, dt: float, state: Any) -> UpdateResult:
        return UpdateResult(derived={"value": list(self.params["value"])})


class ProbeReader(Extender):
    TYPE_NAME = "ProbeReader"
    PARAMS = (ParamSpec("source", "str", "P0", "instance whose shared output is read"),
              ParamSpec("key", "str", "value", "which of its shared outputs"))
    SHARED_OUTPUTS: ClassVar[dict[str, int]] = {"seen": 6}

    def update(self, now: float, dt: float, state: Any) -> UpdateResult:
        value = np.full(6, np.nan)
        got = state.shared(self.params["source"], self.params["key"])[:6]
        value[:len(got)] = got
        return UpdateResult(derived={"seen": value})
