#!/usr/bin/env python3
"""Set up robot_core on a machine with no ROS 2 distribution: one command, idempotent.

Creates .venv (CPython 3.11), installs the pinned ROS 2 Kilted PyPI wheels and robot_core's
Python dependencies, builds the interface packages (robot_core_interfaces, the RBC documentation's
rbc_msgs_srvs and rbc_actions, plus compatible control_msgs / controller_manager_msgs / tf2_msgs
where the environment lacks them) with CMake into the venv prefix, installs robot_core in editable
mode and makes the venv an ament prefix that holds robot_core as a colcon ``--symlink-install``
would: the ament index marker, ``share/robot_core``
(package.xml, launch/, config/, urdf/ as symlinks into this checkout) and ``lib/robot_core/<exe>``
(small scripts running the venv's python on robot_core's entry points), so ``ros2 run`` / ``ros2
launch`` find it; a ``.pth`` puts the venv on ``AMENT_PREFIX_PATH`` for every process of the venv.

Each build step leaves a stamp holding a hash of its inputs, so a second run only re-checks; what
the venv must hold at the end (robot_core importable from outside the checkout, its console scripts,
the ament layout) is verified on every run, not trusted from a stamp, and repaired when missing.

Run with the Python that should own the venv: ``python3.11 scripts/bootstrap.py``.
"""

from __future__ import annotations

import configparser
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("ROBOT_CORE_VENV", ROOT / ".venv"))
STAMPS = VENV / ".robot_core_stamps"
BUILD = ROOT / "build" / "interfaces"
REQUIREMENTS = ROOT / "requirements" / "venv.txt"
FIX_CMAKE = ROOT / "interfaces" / "cmake" / "pip_wheels_fix.cmake"
# Built in this order; compat packages only where the environment does not provide them.
COMPAT = ["tf2_msgs", "controller_manager_msgs", "control_msgs"]
OWN = ["robot_core_interfaces", "rbc_msgs_srvs", "rbc_actions"]
CHECK_IMPORTS = [
    "rclpy",
    "rclpy.action",
    "control_msgs.action",
    "controller_manager_msgs.srv",
    "tf2_msgs.msg",
    "robot_core_interfaces.srv",
    "robot_core_interfaces.action",
    "rbc_msgs_srvs.srv",
    "rbc_actions.action",
    "mujoco",
    "robot_core",
]
TOTAL_STEPS = 8
PACKAGE = "robot_core"
# What share/robot_core holds (symlinks into the checkout); directories get one link per file, because
# `ros2 launch` finds launch files with os.walk, which does not descend into a symlinked directory.
SHARE_FILES = ("package.xml",)
SHARE_DIRS = ("launch", "config", "urdf")
# Executed by site.py at start-up of every venv python: the venv is an ament prefix (the wheels' own
# packages live there too, but nothing else puts it on AMENT_PREFIX_PATH).
AMENT_PTH_NAME = "robot_core_ament_prefix.pth"
AMENT_PTH = ("import os, sys; _p = [x for x in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if x]; "
             "sys.prefix in _p or os.environ.__setitem__('AMENT_PREFIX_PATH', os.pathsep.join([sys.prefix, *_p]))\n")


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


def site_packages(prefix: Path) -> Path:
    return prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"


def entry_points(prefix: Path, package: str = PACKAGE) -> dict[str, str]:
    """Console scripts of ``package`` as pip recorded them in the venv (name -> "module:function")."""
    for info in sorted(site_packages(prefix).glob(f"{package}-*.dist-info")):
        parser = configparser.ConfigParser(delimiters=("=",))
        parser.optionxform = str  # keep the scripts' names as written
        parser.read(info / "entry_points.txt")
        if parser.has_section("console_scripts"):
            return {k.strip(): v.strip() for k, v in parser.items("console_scripts")}
    return {}


def script_problems(prefix: Path, scripts: dict[str, str]) -> list[str]:
    """Files the editable install must have left (cheap: no interpreter started): the import hook's .pth and every
    console script in the venv's bin/."""
    problems = []
    if not scripts:
        problems.append(f"no {PACKAGE} console scripts recorded in {site_packages(prefix)} (no dist-info)")
    if not any(site_packages(prefix).glob(f"__editable__.{PACKAGE}-*.pth")):
        problems.append(f"the editable install's __editable__.{PACKAGE}-*.pth is missing from {site_packages(prefix)}")
    for name in scripts:
        exe = prefix / "bin" / name
        if not (exe.is_file() and os.access(exe, os.X_OK)):
            problems.append(f"console script {exe} is missing")
    return problems


def import_problems(prefix: Path, root: Path, modules: list[str]) -> list[str]:
    """Import ``modules`` with the venv's python started outside the checkout with no PYTHONPATH, as a user's
    program would; robot_core must come from ``root``. One interpreter for all: this is most of a no-change run."""
    code = ("import importlib, json, sys\nbad = {}\n"
            f"for m in {modules!r}:\n"
            "    try:\n        importlib.import_module(m)\n"
            "    except Exception as exc:\n        bad[m] = f'{type(exc).__name__}: {exc}'\n"
            f"rc = sys.modules.get({PACKAGE!r})\n"
            "print(json.dumps({'bad': bad, 'file': getattr(rc, '__file__', None)}))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "_ROS_WHEELS_BOOTSTRAP_COMPLETE")}
    proc = subprocess.run([str(prefix / "bin" / "python"), "-c", code], capture_output=True, text=True, env=env,
                          cwd="/", check=False)
    lines = proc.stdout.strip().splitlines()
    try:
        report = json.loads(lines[-1])
    except (IndexError, ValueError):
        return [f"{prefix / 'bin' / 'python'} failed (exit {proc.returncode}): {proc.stderr.strip()[-1500:]}"]
    problems = [f"cannot import {m}: {err}" for m, err in report["bad"].items()]
    where = report["file"]
    if PACKAGE in modules and where and not Path(where).resolve().is_relative_to(root.resolve()):
        problems.append(f"{PACKAGE} is imported from {where}, not from this checkout {root}")
    return problems


def install_robot_core(force: bool = False) -> None:
    step(5, "robot_core (editable)")
    key = digest(ROOT / "setup.py", ROOT / "setup.cfg", ROOT / "package.xml")
    if stamp_ok("robot_core", key) and not force:
        problems = script_problems(VENV, entry_points(VENV))
        if not problems:
            print("      up to date")
            return
        print("      stamped, but " + "; ".join(problems) + ": reinstalling")
    run([str(venv_python()), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "-e", str(ROOT)],
        "installing robot_core")
    problems = script_problems(VENV, entry_points(VENV))
    if problems:
        raise SetupError("robot_core was installed but the venv still lacks: " + "; ".join(problems))
    write_stamp("robot_core", key)


# --- the venv as an ament prefix ------------------------------------------------------------------------------
class Item(NamedTuple):
    """One path of the ament layout: a symlink to ``target``, or a file with ``content`` (``mode``)."""

    path: Path
    target: Path | None = None
    content: str | None = None
    mode: int = 0o644


def launcher(python: Path, name: str, entry: str) -> str:
    """``lib/robot_core/<name>``: what ``ros2 run`` starts (colcon installs the console scripts there)."""
    module, _, func = entry.partition(":")
    return (f"#!{python}\n"
            f"# `ros2 run {PACKAGE} {name}`: written by scripts/bootstrap.py (`make setup` rewrites it).\n"
            f"import sys\n\nfrom {module} import {func}\n\nif __name__ == \"__main__\":\n"
            f"    sys.exit({func}())\n")


def ament_layout(prefix: Path, root: Path, scripts: dict[str, str], python: Path | None = None) -> list[Item]:
    """Everything the prefix must hold for robot_core to be an installed ROS package (see the module docstring).

    ``python`` runs the launchers (default: the prefix's own, i.e. the venv's).
    """
    share = prefix / "share" / PACKAGE
    items = [Item(prefix / "share" / "ament_index" / "resource_index" / "packages" / PACKAGE,
                  target=root / "resource" / PACKAGE)]
    items += [Item(share / name, target=root / name) for name in SHARE_FILES]
    for folder in SHARE_DIRS:
        for f in sorted((root / folder).rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                items.append(Item(share / f.relative_to(root), target=f))
    python = python or prefix / "bin" / "python"
    items += [Item(prefix / "lib" / PACKAGE / name, content=launcher(python, name, entry), mode=0o755)
              for name, entry in sorted(scripts.items())]
    items.append(Item(site_packages(prefix) / AMENT_PTH_NAME, content=AMENT_PTH))
    return items


def item_problem(item: Item) -> str | None:
    """Why ``item`` is not as it should be (None: it is)."""
    p = item.path
    if item.target is not None:
        if not p.is_symlink():
            return f"{p} is missing" if not p.exists() else f"{p} is not a symlink into the checkout"
        if Path(os.readlink(p)) != item.target:
            return f"{p} points at {os.readlink(p)}, not at {item.target}"
        if not item.target.exists():
            return f"{p} points at {item.target}, which does not exist"
        return None
    if p.is_symlink() or not p.is_file():
        return f"{p} is missing"
    if p.read_text(errors="replace") != item.content:
        return f"{p} is out of date"
    if item.mode & 0o111 and not os.access(p, os.X_OK):
        return f"{p} is not executable"
    return None


def stale_links(prefix: Path, items: list[Item]) -> list[Path]:
    """Links and launchers under share/robot_core and lib/robot_core that the layout no longer has (a file
    removed or renamed in the checkout): left there, `ros2 launch` would find a dead launch file."""
    wanted = {i.path for i in items}
    found = []
    for folder in (prefix / "share" / PACKAGE, prefix / "lib" / PACKAGE):
        if folder.is_dir():
            found += [p for p in folder.rglob("*") if (p.is_symlink() or p.is_file()) and p not in wanted]
    return sorted(found)


def check_ament_layout(prefix: Path, root: Path, scripts: dict[str, str], python: Path | None = None) -> list[str]:
    """Problems with the ament layout of ``prefix`` for the checkout ``root`` ([] when complete and current)."""
    items = ament_layout(prefix, root, scripts, python)
    problems = [msg for msg in map(item_problem, items) if msg]
    problems += [f"{p} is not part of the checkout any more" for p in stale_links(prefix, items)]
    return problems


def install_ament_layout(prefix: Path, root: Path, scripts: dict[str, str],
                         python: Path | None = None) -> list[Path]:
    """Create or repair the ament layout; returns the paths written (only what was missing or wrong)."""
    items = ament_layout(prefix, root, scripts, python)
    written = []
    for p in stale_links(prefix, items):
        p.unlink()
        written.append(p)
    for item in items:
        if item_problem(item) is None:
            continue
        p = item.path
        p.parent.mkdir(parents=True, exist_ok=True)
        if p.is_symlink() or p.is_file():
            p.unlink()
        elif p.is_dir():
            shutil.rmtree(p)
        if item.target is not None:
            p.symlink_to(item.target)
        else:
            p.write_text(item.content or "")
            p.chmod(item.mode)
        written.append(p)
    return written


def register_ament_package() -> None:
    step(6, "ament index: share/robot_core (symlinks into this checkout), lib/robot_core (ros2 run)")
    scripts = entry_points(VENV)
    problems = check_ament_layout(VENV, ROOT, scripts)
    if not problems:
        print("      up to date")
        return
    first = not (VENV / "share" / PACKAGE).exists()
    written = install_ament_layout(VENV, ROOT, scripts)
    left = check_ament_layout(VENV, ROOT, scripts)
    if left:
        raise SetupError("could not register robot_core in the ament index: " + "; ".join(left))
    if first:
        print(f"      registered: wrote {len(written)} path(s)")
        return
    shown = "; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else "")
    print(f"      repaired {len(written)} path(s): {shown}")


def verify() -> list[str]:
    """Import what the venv must import; returns the problems that reinstalling robot_core can fix."""
    step(7, "checking imports in the venv (from outside the checkout, no PYTHONPATH)")
    problems = import_problems(VENV, ROOT, CHECK_IMPORTS)
    ours = [p for p in problems if PACKAGE in p.split(":")[0].split()]
    if problems and len(ours) < len(problems):
        raise SetupError("the venv cannot import everything it needs:\n" + "\n".join(problems))
    if not problems:
        print("      rclpy, control_msgs, controller_manager_msgs, tf2_msgs, robot_core_interfaces, rbc_msgs_srvs, "
              f"rbc_actions, mujoco, robot_core (from {ROOT}): ok")
    return ours


BROWSER_PACKAGES = ("chromium", "chromium-driver")  # Debian names; the web view's browser test drives them


def ensure_browser() -> None:
    """Headless Chromium and chromedriver for test/test_view_browser.py: apt-installed when missing and this runs
    as root on a Debian-like system. Never fatal: without them the browser test skips, saying why."""
    step(8, "browser for the web view's test (Debian packages " + ", ".join(BROWSER_PACKAGES) + ")")
    if shutil.which("chromium") and shutil.which("chromedriver"):
        print("      chromium and chromedriver found")
        return
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        print("      not installed, and this set-up cannot install them (needs root and apt-get): install "
              f"{' '.join(BROWSER_PACKAGES)} yourself, or test/test_view_browser.py skips")
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    log = STAMPS.parent / "apt-browser.log"
    try:
        run([apt, "update"], "apt-get update", log=log, env=env)
        run([apt, "install", "-y", "--no-install-recommends", *BROWSER_PACKAGES], "apt-get install chromium",
            log=log, env=env)
    except SetupError as err:
        print(f"      could not install {' '.join(BROWSER_PACKAGES)} ({err}); test/test_view_browser.py skips "
              "until they are installed")
        return
    print("      installed " + " ".join(BROWSER_PACKAGES))


def main() -> int:
    t0 = time.monotonic()
    try:
        check_prerequisites()
        create_venv()
        install_requirements()
        build_interfaces()
        install_robot_core()
        register_ament_package()
        problems = verify()
        if problems:  # stamped and its files there, yet not importable from here: install it again
            print("      " + "; ".join(problems) + ": reinstalling robot_core")
            install_robot_core(force=True)
            register_ament_package()
            problems = verify()
            if problems:
                raise SetupError("robot_core is still not importable from this checkout: " + "; ".join(problems))
        ensure_browser()
    except SetupError as err:
        print(f"\nset-up failed: {err}", file=sys.stderr)
        return 1
    print(f"set-up complete in {time.monotonic() - t0:.0f} s: use {venv_python()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
