#!/usr/bin/env python3
"""Set up robot_core on a machine with no ROS 2 distribution: one command, idempotent.

Creates .venv (CPython 3.11), installs the pinned ROS 2 Kilted PyPI wheels and robot_core's
Python dependencies, builds the interface packages (robot_core_interfaces, plus compatible
control_msgs / controller_manager_msgs / tf2_msgs where the environment lacks them) with CMake
into the venv prefix, and installs robot_core in editable mode. Each step leaves a stamp holding
a hash of its inputs, so a second run only re-checks and finishes in seconds.

Run with the Python that should own the venv: ``python3.11 scripts/bootstrap.py``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("ROBOT_CORE_VENV", ROOT / ".venv"))
STAMPS = VENV / ".robot_core_stamps"
BUILD = ROOT / "build" / "interfaces"
REQUIREMENTS = ROOT / "requirements" / "venv.txt"
FIX_CMAKE = ROOT / "interfaces" / "cmake" / "pip_wheels_fix.cmake"
# Built in this order; compat packages only where the environment does not provide them.
COMPAT = ["tf2_msgs", "controller_manager_msgs", "control_msgs"]
OWN = ["robot_core_interfaces"]
CHECK_IMPORTS = [
    "rclpy",
    "rclpy.action",
    "control_msgs.action",
    "controller_manager_msgs.srv",
    "tf2_msgs.msg",
    "robot_core_interfaces.srv",
    "robot_core_interfaces.action",
    "mujoco",
    "robot_core",
]
TOTAL_STEPS = 6


class SetupError(RuntimeError):
    """A set-up step failed; the message says which and what to do."""


def step(n: int, text: str) -> None:
    print(f"[{n}/{TOTAL_STEPS}] {text}", flush=True)


def venv_python() -> Path:
    return VENV / "bin" / "python"


def digest(*paths: Path, extra: str = "") -> str:
    h = hashlib.sha256(extra.encode())
    for path in paths:
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for f in files:
            h.update(str(f.relative_to(ROOT) if f.is_relative_to(ROOT) else f).encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def stamp_ok(name: str, value: str) -> bool:
    f = STAMPS / name
    return f.is_file() and f.read_text() == value


def write_stamp(name: str, value: str) -> None:
    STAMPS.mkdir(parents=True, exist_ok=True)
    (STAMPS / name).write_text(value)


def run(cmd: list[str], what: str, log: Path | None = None, env: dict[str, str] | None = None) -> None:
    """Run a command; on failure show the tail of its output and name the step."""
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("w") as out:
            proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, check=False)
        if proc.returncode != 0:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
            raise SetupError(f"{what} failed (exit {proc.returncode}); last lines of {log}:\n{tail}")
    else:
        proc = subprocess.run(cmd, env=env, check=False)
        if proc.returncode != 0:
            raise SetupError(f"{what} failed (exit {proc.returncode}); see the output above")


def check_prerequisites() -> None:
    step(1, "checking prerequisites (Python 3.11, C/C++ compiler, Python headers)")
    if sys.version_info[:2] != (3, 11):
        raise SetupError(
            f"this is Python {sys.version.split()[0]} at {sys.executable}; the ROS 2 Kilted PyPI wheels are built "
            "for CPython 3.11. Install it (Debian/Ubuntu: apt-get install python3.11 python3.11-venv python3.11-dev, "
            "or pyenv) and run: make setup PYTHON=python3.11"
        )
    compilers = {"cc": "gcc", "c++": "g++"}
    missing = [c for c, alt in compilers.items() if shutil.which(c) is None and shutil.which(alt) is None]
    if missing:
        raise SetupError(
            f"no C/C++ compiler found ({', '.join(missing)} missing); the interface packages are compiled. "
            "Debian/Ubuntu: apt-get install build-essential"
        )
    include = Path(sysconfig.get_paths()["include"])
    if not (include / "Python.h").is_file():
        raise SetupError(
            f"Python headers are missing ({include}/Python.h). Debian/Ubuntu: apt-get install python3.11-dev")
    try:
        import ensurepip  # noqa: F401
        import venv  # noqa: F401
    except ImportError as err:
        raise SetupError(
            "the venv/ensurepip modules are missing. Debian/Ubuntu: apt-get install python3.11-venv") from err


def create_venv() -> None:
    step(2, f"virtual environment {VENV}")
    py = venv_python()
    if py.exists():
        ver = subprocess.run([str(py), "-c", "import sys; print(sys.version_info[:2] == (3, 11))"],
                             capture_output=True, text=True, check=False).stdout.strip()
        if ver == "True":
            print("      exists (Python 3.11)")
            return
        print("      exists but is not Python 3.11: recreating")
        shutil.rmtree(VENV)
    run([sys.executable, "-m", "venv", str(VENV)], "creating the virtual environment")


def install_requirements() -> None:
    step(3, "pinned PyPI packages (ROS 2 Kilted wheels with an RMW, MuJoCo, build and test tools)")
    key = digest(REQUIREMENTS)
    if stamp_ok("requirements", key):
        print("      up to date")
        return
    t0 = time.monotonic()
    py = str(venv_python())
    run([py, "-m", "pip", "install", "--quiet", "--upgrade", "pip==26.3"], "upgrading pip in the venv")
    try:
        run([py, "-m", "pip", "install", "--progress-bar", "on", "-r", str(REQUIREMENTS)], "pip install")
    except SetupError as err:
        raise SetupError(
            f"{err}\nA pinned wheel could not be downloaded or installed. Check that PyPI is reachable "
            "(proxy settings: PIP_INDEX_URL / HTTPS_PROXY) and re-run `make setup`; nothing is lost by re-running."
        ) from err
    write_stamp("requirements", key)
    print(f"      done in {time.monotonic() - t0:.0f} s")


def provided_elsewhere(pkg: str) -> bool:
    """True if the venv can import pkg and it was not built by us (a distro or another wheel owns it)."""
    if (STAMPS / f"iface-{pkg}").exists():
        return False
    proc = subprocess.run([str(venv_python()), "-c", f"import {pkg}.msg"], capture_output=True, check=False)
    return proc.returncode == 0


def build_interfaces() -> None:
    step(4, "interface packages (CMake + rosidl against the wheels, installed into the venv)")
    prefix = str(VENV)
    env = dict(os.environ)
    env["PATH"] = f"{VENV / 'bin'}:{env.get('PATH', '')}"
    env["CMAKE_PREFIX_PATH"] = prefix
    env["AMENT_PREFIX_PATH"] = prefix
    env["LD_LIBRARY_PATH"] = f"{VENV / 'lib'}:{env.get('LD_LIBRARY_PATH', '')}"
    env["_ROS_WHEELS_BOOTSTRAP_COMPLETE"] = "1"  # the generators must not re-exec themselves
    cmake = str(VENV / "bin" / "cmake")
    wheels_key = digest(REQUIREMENTS, FIX_CMAKE)
    for pkg in COMPAT + OWN:
        src = ROOT / "interfaces" / ("compat" if pkg in COMPAT else "") / pkg
        if pkg in COMPAT and provided_elsewhere(pkg):
            print(f"      {pkg}: provided by the environment, not built")
            continue
        key = digest(src, extra=wheels_key)
        if stamp_ok(f"iface-{pkg}", key):
            print(f"      {pkg}: up to date")
            continue
        t0 = time.monotonic()
        build = BUILD / pkg
        print(f"      {pkg}: configuring ...", flush=True)
        run([cmake, "-S", str(src), "-B", str(build), "-G", "Ninja", f"-DCMAKE_INSTALL_PREFIX={prefix}",
             "-DCMAKE_BUILD_TYPE=Release", f"-DPython3_EXECUTABLE={venv_python()}", "-DBUILD_TESTING=OFF",
             f"-DCMAKE_PROJECT_INCLUDE={FIX_CMAKE}"], f"configuring {pkg}", BUILD / f"{pkg}.configure.log", env)
        print(f"      {pkg}: compiling ...", flush=True)
        run([cmake, "--build", str(build), "-j", str(os.cpu_count() or 2)], f"compiling {pkg}",
            BUILD / f"{pkg}.build.log", env)
        run([cmake, "--install", str(build)], f"installing {pkg}", BUILD / f"{pkg}.install.log", env)
        write_stamp(f"iface-{pkg}", key)
        print(f"      {pkg}: built in {time.monotonic() - t0:.0f} s")


def install_robot_core() -> None:
    step(5, "robot_core (editable)")
    key = digest(ROOT / "setup.py", ROOT / "setup.cfg", ROOT / "package.xml")
    if stamp_ok("robot_core", key):
        print("      up to date")
        return
    run([str(venv_python()), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "-e", str(ROOT)],
        "installing robot_core")
    write_stamp("robot_core", key)


def verify() -> None:
    step(6, "checking imports in the venv")
    code = f"import importlib\nfor m in {CHECK_IMPORTS!r}: importlib.import_module(m)\n"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "_ROS_WHEELS_BOOTSTRAP_COMPLETE")}
    proc = subprocess.run([str(venv_python()), "-c", code], capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SetupError(f"the venv cannot import everything it needs:\n{proc.stderr[-2000:]}")
    print("      rclpy, control_msgs, controller_manager_msgs, tf2_msgs, robot_core_interfaces, mujoco: ok")


def main() -> int:
    t0 = time.monotonic()
    try:
        check_prerequisites()
        create_venv()
        install_requirements()
        build_interfaces()
        install_robot_core()
        verify()
    except SetupError as err:
        print(f"\nset-up failed: {err}", file=sys.stderr)
        return 1
    print(f"set-up complete in {time.monotonic() - t0:.0f} s: use {venv_python()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
