"""Where the robot descriptions the model/kinematics tests load live: ours (urdf/, test/data/) and the
third-party robots of example-robot-data (Panda, UR5, PR2), which ship with the test-only Pinocchio stack."""

from __future__ import annotations

import site
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
URDF_DIR = REPO / "urdf"
DATA_URDF = REPO / "test" / "data" / "urdf"
DATA_G = REPO / "test" / "data" / "g"
DATA_MJCF = REPO / "test" / "data" / "mjcf"
PACKAGES = REPO / "test" / "data" / "packages"

PANDA = "panda_description/urdf/panda.urdf"
UR5 = "ur_description/urdf/ur5_robot.urdf"
PR2 = "pr2_description/urdf/pr2.urdf"


def _find_erd_robots() -> Path | None:
    for sp in site.getsitepackages():
        candidate = Path(sp) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if candidate.is_dir():
            return candidate
    return None


ERD_ROBOTS = _find_erd_robots()


def erd_robot(rel: str) -> str:
    """Absolute path of an example-robot-data file (e.g. :data:`PANDA`); skips the test when it is missing."""
    if ERD_ROBOTS is None:
        pytest.skip("example-robot-data is not installed in this environment")
    path = ERD_ROBOTS / rel
    if not path.is_file():
        pytest.skip(f"example-robot-data file {rel} not found")
    return str(path)


def own_robot(name: str) -> str:
    """Absolute path of one of our example robots in urdf/."""
    path = URDF_DIR / name
    assert path.is_file(), f"urdf/{name} is missing"
    return str(path)
