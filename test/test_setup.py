"""Set-up script: idempotence and clear messages for the failures a new user meets."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def bootstrap(monkeypatch):
    spec = importlib.util.spec_from_file_location("robot_core_bootstrap", REPO / "scripts" / "bootstrap.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_wrong_python_version_names_the_fix(bootstrap, monkeypatch):
    monkeypatch.setattr(sys, "version_info", (3, 12, 1, "final", 0))
    with pytest.raises(bootstrap.SetupError, match=r"CPython 3\.11.*PYTHON=python3\.11"):
        bootstrap.check_prerequisites()


def test_missing_compiler_names_the_package(bootstrap, monkeypatch):
    monkeypatch.setattr(bootstrap.shutil, "which", lambda name: None)
    with pytest.raises(bootstrap.SetupError, match=r"no C/C\+\+ compiler.*build-essential"):
        bootstrap.check_prerequisites()


def test_failed_wheel_download_says_what_to_do(bootstrap, monkeypatch, tmp_path, capsys):
    reqs = tmp_path / "venv.txt"
    reqs.write_text("ros-rclpy==0.0.0.1\n")  # a version that does not exist on the index
    monkeypatch.setattr(bootstrap, "REQUIREMENTS", reqs)
    monkeypatch.setattr(bootstrap, "VENV", tmp_path / "venv")
    monkeypatch.setattr(bootstrap, "STAMPS", tmp_path / "venv" / ".stamps")
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True)
    monkeypatch.setattr(bootstrap, "run", _no_pip_upgrade(bootstrap.run))
    with pytest.raises(bootstrap.SetupError, match=r"pinned wheel could not be downloaded.*re-run `make setup`"):
        bootstrap.install_requirements()
    assert not (tmp_path / "venv" / ".stamps" / "requirements").exists(), "a failed step must not be stamped"


def _no_pip_upgrade(run):
    """Skip the pip self-upgrade so the test only exercises the failing pinned install."""

    def wrapped(cmd, what, *args, **kwargs):
        if "--upgrade" in cmd and any(c.startswith("pip==") for c in cmd):
            return None
        return run(cmd, what, *args, **kwargs)

    return wrapped


def test_main_reports_failure_without_traceback(bootstrap, monkeypatch, capsys):
    monkeypatch.setattr(sys, "version_info", (3, 10, 0, "final", 0))
    assert bootstrap.main() == 1
    err = capsys.readouterr().err
    assert err.startswith("\nset-up failed:") and "Traceback" not in err


def test_second_run_is_up_to_date():
    """The venv running this test was made by the set-up; running it again changes nothing."""
    proc = subprocess.run(["sh", str(REPO / "scripts" / "setup.sh")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "up to date" in proc.stdout
    assert "built in" not in proc.stdout
