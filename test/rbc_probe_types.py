"""Two tiny extenders for the shared-output tests: ``Probe`` publishes its parameter as a shared output,
``ProbeReader`` reads another instance's shared output and publishes what it saw. Imported by instance processes
through their "module:Class" registration (the test puts this directory on their PYTHONPATH)."""

from __future__ import annotations

from typing import Any, ClassVar

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
    PARAMS = (ParamSpec("source", "str", "P0", "instance whose 'value' is read"),)
    SHARED_OUTPUTS: ClassVar[dict[str, int]] = {"seen": 2}

    def update(self, now: float, dt: float, state: Any) -> UpdateResult:
        return UpdateResult(derived={"seen": state.shared(self.params["source"], "value")})
