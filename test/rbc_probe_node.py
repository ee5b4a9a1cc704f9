"""The rbc node with the test's Probe / ProbeReader types registered (test/rbc_probe_types.py), so a DDS test can
create extenders that share outputs and read each other's; the instance processes it starts register them again
from their "module:Class" (this directory must be on their PYTHONPATH)."""

from __future__ import annotations

import sys

from robot_core.nodes.rbc import main
from robot_core.rbc import registry

if __name__ == "__main__":
    registry.register("Probe", "rbc_probe_types:Probe")
    registry.register("ProbeReader", "rbc_probe_types:ProbeReader")
    sys.exit(main())
