"""Find ROS packages and resolve ``package://`` / ``file://`` URIs without needing a sourced ROS install.

Robot descriptions name meshes and included files by package. On a ROS machine the ament index answers that;
in a plain venv the caller passes ``package_dirs`` instead. Both paths go through :func:`find_package`, so the
URDF reader and the xacro loader resolve names the same way.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable
from pathlib import Path

_PACKAGE_NAME_RE = re.compile(r"<name>\s*([^<\s]+)\s*</name>")


def _package_xml_name(folder: Path) -> str | None:
    """The <name> declared in folder/package.xml, if there is one."""
    xml = folder / "package.xml"
    if not xml.is_file():
        return None
    try:
        match = _PACKAGE_NAME_RE.search(xml.read_text(errors="replace"))
    except OSError:
        return None
    return match.group(1) if match else None


# How deep below a root the crawl for package.xml goes, and folders it never enters (as rospack/colcon skip).
CRAWL_DEPTH = 8
_IGNORE_MARKERS = ("CATKIN_IGNORE", "COLCON_IGNORE", "AMENT_IGNORE", "rospack_nosubdirs")


@functools.lru_cache(maxsize=64)
def _crawl(root: str, stamp: float) -> dict[str, str]:
    """package name -> folder for every package.xml below ``root``, the first found winning.

    Like rospack, a folder holding a package.xml is a package and is not searched further, hidden folders and
    folders marked with an ignore file are skipped. The folder's own name is an alias, as for Pinocchio's
    package_dirs (example-robot-data's package.xml says ``example_robot_descriptions`` while its URDFs say
    ``package://example-robot-data``). ``stamp`` (the root's mtime) renews the cache.
    """
    found: dict[str, str] = {}
    aliases: dict[str, str] = {}
    base_depth = len(Path(root).parts)
    for folder, dirs, files in os.walk(root, followlinks=True):
        here = Path(folder)
        if any(marker in files for marker in _IGNORE_MARKERS):
            dirs[:] = []
            continue
        if "package.xml" in files:
            name = _package_xml_name(here)
            if name:
                found.setdefault(name, folder)
            aliases.setdefault(here.name, folder)
            dirs[:] = []
            continue
        if len(here.parts) - base_depth >= CRAWL_DEPTH:
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
    return {**aliases, **found}


def _search_root(root: Path, package: str) -> Path | None:
    """A root may be the package itself, a folder holding packages, an install prefix (share/<pkg>), or any
    folder above packages: it is then searched recursively for package.xml, as ROS 1 and rospack do."""
    if not root.is_dir():
        return None
    if root.name == package or _package_xml_name(root) == package:
        return root
    for candidate in (root / package, root / "share" / package):
        if candidate.is_dir():
            return candidate
    resolved = root.resolve()
    folder = _crawl(str(resolved), resolved.stat().st_mtime).get(package)
    return Path(folder) if folder is not None else None


def _env_paths(var: str) -> list[Path]:
    return [Path(p) for p in os.environ.get(var, "").split(os.pathsep) if p]


def find_package(
    package: str, package_dirs: Iterable[str | os.PathLike] | None = None, near: str | os.PathLike | None = None
) -> str | None:
    """Directory of ``package`` (its share dir), or None.

    Search order: ``package_dirs``, ``AMENT_PREFIX_PATH`` (``share/<pkg>``), ``ROS_PACKAGE_PATH``, the ament
    index, then the ancestors of ``near``. A root in ``package_dirs`` or ``ROS_PACKAGE_PATH`` is searched
    recursively for the package.xml naming ``package`` (see :func:`_crawl`). The ancestors of ``near`` (the
    description file) come last: installed layouts such as example-robot-data keep their URDFs inside the
    package they refer to.
    """
    for root in package_dirs or ():
        found = _search_root(Path(root).expanduser(), package)
        if found is not None:
            return str(found.resolve())
    for prefix in _env_paths("AMENT_PREFIX_PATH"):
        candidate = prefix / "share" / package
        if candidate.is_dir():
            return str(candidate.resolve())
    for root in _env_paths("ROS_PACKAGE_PATH"):
        found = _search_root(root, package)
        if found is not None:
            return str(found.resolve())
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError:  # pragma: no cover - ament_index_python ships with the venv
        pass
    else:
        try:
            return get_package_share_directory(package)
        except (PackageNotFoundError, ValueError, LookupError, OSError):
            pass
    if near is not None:
        for ancestor in Path(near).resolve().parents:
            if ancestor.name == package or _package_xml_name(ancestor) == package:
                return str(ancestor)
    return None


def resolve_uri(
    uri: str,
    package_dirs: Iterable[str | os.PathLike] | None = None,
    base_dir: str | os.PathLike | None = None,
) -> str | None:
    """Absolute path of an existing file named by ``package://``, ``file://`` or a (relative) path, else None.

    Relative paths are taken relative to ``base_dir`` (the description file's folder) or the working directory.
    """
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    if uri.startswith("package://"):
        # A third slash (package:///pkg/..., as in Talos's files) is a slip; the package name is still unambiguous.
        rest = uri[len("package://") :].lstrip("/")
        package, _, inner = rest.partition("/")
        if not package:
            return None
        root = find_package(package, package_dirs, near=base)
        if root is None:
            return None
        path = Path(root) / inner
    elif uri.startswith("file://"):
        path = Path(uri[len("file://") :])
        if not path.is_absolute():
            path = base / path
    elif "://" in uri:
        return None
    else:
        path = Path(uri)
        if not path.is_absolute():
            path = base / path
    return str(path.resolve()) if path.exists() else None
