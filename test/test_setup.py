"""Set-up script: idempotence, clear messages for the failures a new user meets, and a venv that is verified
(robot_core importable, console scripts, the ament layout that `ros2 run` / `ros2 launch` use) and repaired
rather than trusted from stamps."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = {"simulator": "robot_core.nodes.simulator:main",
           "ros2_control_node": "robot_core.nodes.controller_manager:main"}


def venv_checkout() -> Path | None:
    """The checkout the venv running the tests imports robot_core from, with no PYTHONPATH (None: none)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "_ROS_WHEELS_BOOTSTRAP_COMPLETE")}
    proc = subprocess.run([sys.executable, "-c", "import robot_core; print(robot_core.__file__)"], cwd="/",
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        return None
    return Path(proc.stdout.strip().splitlines()[-1]).resolve().parent.parent


def _own_venv_or_skip() -> None:
    """Running the set-up on a venv made by another checkout (a git worktree sharing the main one's venv) would
    repoint that venv at this checkout, under everyone using it."""
    owner = venv_checkout()
    if owner != REPO.resolve():
        pytest.skip(f"the venv {sys.prefix} belongs to the checkout {owner}, not {REPO}: not re-running its set-up")


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


def _run_setup() -> tuple[subprocess.CompletedProcess[str], float]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "_ROS_WHEELS_BOOTSTRAP_COMPLETE")}
    env["ROBOT_CORE_VENV"] = sys.prefix
    t0 = time.monotonic()
    proc = subprocess.run(["sh", str(REPO / "scripts" / "setup.sh")], capture_output=True, text=True, timeout=300,
                          env=env)
    return proc, time.monotonic() - t0


def test_second_run_is_up_to_date():
    """The venv running this test was made by the set-up; running it again changes nothing."""
    _own_venv_or_skip()
    _run_setup()  # whatever an earlier test left behind is repaired here
    proc, seconds = _run_setup()
    print(f"no-change `make setup` (scripts/setup.sh): {seconds:.2f} s")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "up to date" in proc.stdout
    assert "built in" not in proc.stdout and "repaired" not in proc.stdout and "reinstalling" not in proc.stdout


def test_setup_restores_a_deleted_launcher_on_the_real_venv():
    """A stamp says "done" but a generated file went missing: the set-up notices and puts it back.

    The one repair done on the real venv, on a launcher no test runs from there (bring-ups would fall back to
    bin/, robot_core.bringup.plan.executable). Reinstalling robot_core (a console script or the editable hook gone)
    would take every console script away for seconds, so that repair is unit-tested against a temporary prefix.
    """
    from ros_harness import venv_layout

    _own_venv_or_skip()
    launcher = Path(sys.prefix) / "lib" / "robot_core" / "unspawner"  # run from there by no test
    with venv_layout(exclusive=True):  # test_ros_package checks every launcher
        assert launcher.is_file(), f"{launcher} should exist after the set-up"
        launcher.unlink()
        proc, seconds = _run_setup()
    print(f"`make setup` repairing {launcher}: {seconds:.2f} s")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert launcher.is_file() and os.access(launcher, os.X_OK), proc.stdout
    assert "repaired 1 path(s)" in proc.stdout and str(launcher) in proc.stdout


# --- the ament layout, against a temporary prefix -------------------------------------------------------------
def _checkout(tmp_path: Path) -> Path:
    """A minimal checkout: the files the layout links to."""
    root = tmp_path / "checkout"
    for rel in ("package.xml", "resource/robot_core", "launch/bringup.launch.py", "launch/sim.launch.py",
                "config/controllers.yaml", "urdf/rc_arm.urdf"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n")
    return root


def test_empty_prefix_reports_every_missing_piece(bootstrap, tmp_path):
    problems = bootstrap.check_ament_layout(tmp_path / "venv", REPO, SCRIPTS)
    text = "\n".join(problems)
    for piece in ("share/ament_index/resource_index/packages/robot_core", "share/robot_core/package.xml",
                  "share/robot_core/launch/bringup.launch.py", "share/robot_core/config/controllers.yaml",
                  "share/robot_core/urdf/rc_arm.urdf", "lib/robot_core/simulator", "lib/robot_core/ros2_control_node",
                  bootstrap.AMENT_PTH_NAME):
        assert piece in text, f"{piece} not reported missing:\n{text}"


def test_installed_layout_is_what_ros2run_and_ros2launch_look_for(bootstrap, tmp_path):
    prefix = tmp_path / "venv"
    bootstrap.install_ament_layout(prefix, REPO, SCRIPTS)
    assert bootstrap.check_ament_layout(prefix, REPO, SCRIPTS) == []
    assert bootstrap.install_ament_layout(prefix, REPO, SCRIPTS) == [], "a second run must write nothing"
    share = prefix / "share" / "robot_core"
    # ros2launch finds launch files with os.walk (no followlinks): the launch folder must be a real folder
    walked = {name for _, _, files in os.walk(share) for name in files}
    assert {"bringup.launch.py", "package.xml", "controllers.yaml", "rc_arm.urdf"} <= walked
    # symlinks into the checkout: an edit there is seen with no new set-up
    assert (share / "launch" / "bringup.launch.py").resolve() == (REPO / "launch" / "bringup.launch.py").resolve()
    # ros2pkg lists executables as the executable files under lib/<package>
    exe = prefix / "lib" / "robot_core" / "ros2_control_node"
    assert os.access(exe, os.X_OK)
    text = exe.read_text()
    assert text.startswith(f"#!{prefix / 'bin' / 'python'}\n")
    assert "from robot_core.nodes.controller_manager import main" in text


def test_only_what_is_missing_is_rewritten(bootstrap, tmp_path):
    prefix = tmp_path / "venv"
    bootstrap.install_ament_layout(prefix, REPO, SCRIPTS)
    (prefix / "lib" / "robot_core" / "simulator").unlink()
    (prefix / "share" / "ament_index" / "resource_index" / "packages" / "robot_core").unlink()
    problems = bootstrap.check_ament_layout(prefix, REPO, SCRIPTS)
    assert len(problems) == 2 and all("is missing" in p for p in problems), problems
    written = bootstrap.install_ament_layout(prefix, REPO, SCRIPTS)
    assert sorted(p.name for p in written) == ["robot_core", "simulator"]
    assert bootstrap.check_ament_layout(prefix, REPO, SCRIPTS) == []


def test_layout_of_another_checkout_is_repointed_and_stale_links_removed(bootstrap, tmp_path):
    other = _checkout(tmp_path)
    (other / "launch" / "old.launch.py").write_text("# gone from this checkout\n")
    prefix = tmp_path / "venv"
    bootstrap.install_ament_layout(prefix, other, SCRIPTS)
    problems = bootstrap.check_ament_layout(prefix, REPO, SCRIPTS)
    assert any("points at" in p and str(other) in p for p in problems), problems
    assert any("old.launch.py is not part of the checkout" in p for p in problems), problems
    bootstrap.install_ament_layout(prefix, REPO, SCRIPTS)
    assert bootstrap.check_ament_layout(prefix, REPO, SCRIPTS) == []
    assert not (prefix / "share" / "robot_core" / "launch" / "old.launch.py").exists()


def test_outdated_or_non_executable_launcher_is_reported(bootstrap, tmp_path):
    prefix = tmp_path / "venv"
    bootstrap.install_ament_layout(prefix, REPO, SCRIPTS)
    exe = prefix / "lib" / "robot_core" / "simulator"
    exe.chmod(0o644)
    assert any("not executable" in p for p in bootstrap.check_ament_layout(prefix, REPO, SCRIPTS))
    exe.write_text("#!/usr/bin/python\n")
    assert any("out of date" in p for p in bootstrap.check_ament_layout(prefix, REPO, SCRIPTS))


def test_entry_points_come_from_the_installed_metadata(bootstrap, tmp_path):
    info = bootstrap.site_packages(tmp_path) / "robot_core-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "entry_points.txt").write_text("[console_scripts]\nrobot-core = robot_core.cli:main\n"
                                           "ros2_control_node = robot_core.nodes.controller_manager:main\n")
    assert bootstrap.entry_points(tmp_path) == {"robot-core": "robot_core.cli:main",
                                                "ros2_control_node": "robot_core.nodes.controller_manager:main"}
    assert bootstrap.entry_points(tmp_path / "nothing") == {}


def test_missing_console_script_and_editable_hook_are_problems(bootstrap, tmp_path):
    site = bootstrap.site_packages(tmp_path)
    site.mkdir(parents=True)
    (tmp_path / "bin").mkdir()
    problems = bootstrap.script_problems(tmp_path, {"simulator": SCRIPTS["simulator"]})
    assert any("__editable__.robot_core-*.pth is missing" in p for p in problems), problems
    assert any(f"console script {tmp_path / 'bin' / 'simulator'} is missing" in p for p in problems), problems
    (site / "__editable__.robot_core-0.1.0.pth").write_text("")
    (tmp_path / "bin" / "simulator").write_text("#!/bin/sh\n")
    (tmp_path / "bin" / "simulator").chmod(0o755)
    assert bootstrap.script_problems(tmp_path, {"simulator": SCRIPTS["simulator"]}) == []


def test_stamped_install_with_a_script_gone_is_reinstalled(bootstrap, tmp_path, monkeypatch, capsys):
    """The robot_core stamp is current, yet a console script is missing: pip runs again (its stamp is not trusted)."""
    venv = tmp_path / "venv"
    monkeypatch.setattr(bootstrap, "VENV", venv)
    monkeypatch.setattr(bootstrap, "STAMPS", venv / ".stamps")
    site = bootstrap.site_packages(venv)
    (site / "robot_core-0.1.0.dist-info").mkdir(parents=True)
    (site / "robot_core-0.1.0.dist-info" / "entry_points.txt").write_text(
        "[console_scripts]\nsimulator = robot_core.nodes.simulator:main\n")
    (site / "__editable__.robot_core-0.1.0.pth").write_text("")
    (venv / "bin").mkdir()
    bootstrap.write_stamp("robot_core", bootstrap.digest(REPO / "setup.py", REPO / "setup.cfg", REPO / "package.xml"))
    calls = []

    def fake_pip(cmd, what, *args, **kwargs):
        calls.append(cmd)
        (venv / "bin" / "simulator").write_text("#!/bin/sh\n")
        (venv / "bin" / "simulator").chmod(0o755)

    monkeypatch.setattr(bootstrap, "run", fake_pip)
    bootstrap.install_robot_core()
    assert len(calls) == 1 and calls[0][-2:] == ["-e", str(bootstrap.ROOT)]
    assert f"console script {venv / 'bin' / 'simulator'} is missing: reinstalling" in capsys.readouterr().out
    bootstrap.install_robot_core()
    assert len(calls) == 1, "complete and stamped: no second pip run"


def test_import_check_names_what_fails_and_where_robot_core_comes_from(bootstrap, tmp_path):
    """Run against the venv running the tests (read only): robot_core imports, but not from a checkout at tmp_path."""
    problems = bootstrap.import_problems(Path(sys.prefix), tmp_path / "elsewhere",
                                         ["json", "no_such_module_xyz", "robot_core"])
    assert any(p.startswith("cannot import no_such_module_xyz: ModuleNotFoundError") for p in problems), problems
    assert any(p.startswith("robot_core is imported from") and "not from this checkout" in p for p in problems)
    assert not any("json" in p for p in problems)


def test_pth_puts_the_prefix_first_on_ament_prefix_path_once(bootstrap, tmp_path):
    line = bootstrap.AMENT_PTH.strip()
    code = f"{line}\nprint(os.environ['AMENT_PREFIX_PATH'])"
    env = {**os.environ, "AMENT_PREFIX_PATH": "/opt/ros/x"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.strip() == os.pathsep.join([sys.prefix, "/opt/ros/x"])
    env["AMENT_PREFIX_PATH"] = os.pathsep.join(["/opt/ros/x", sys.prefix])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.strip() == env["AMENT_PREFIX_PATH"], "already there: unchanged"

