"""The code base stays ruff clean (configuration in pyproject.toml)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_ruff_clean():
    ruff = Path(sys.executable).parent / "ruff"
    if not ruff.exists():
        ruff = shutil.which("ruff")
    if not ruff:
        pytest.skip("ruff is not installed in this environment")
    proc = subprocess.run([str(ruff), "check", "--quiet", str(REPO)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
