"""The documentation cannot rot silently: links, module paths and examples of README.md and doc/ are checked.

No ROS needed. Three checks:

* every relative link in README.md and doc/**/*.md points at a file or folder that exists (a folder link such as
  ``doc/controllers/`` is fine while the folder exists), and every ``#anchor`` into a Markdown page names one of
  its headings;
* every path in backticks that names a source file or package folder (``nodes/simulator.py``, ``ros/outbox.py``,
  ``robot_core/physics/engine.py``, ``bench/kinematics.py``) exists: relative to the repository when it starts with
  a top-level folder of it, else under ``robot_core/``;
* every ```python block of doc/kinematics.md and doc/rl.md runs, in a fresh interpreter from the repository root.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted([REPO / "README.md", *(REPO / "doc").rglob("*.md")])
RUNNABLE = [REPO / "doc" / "kinematics.md", REPO / "doc" / "rl.md"]
EXAMPLE_TIMEOUT = 120.0

FENCE = re.compile(r"^```.*?^```[ \t]*$", re.S | re.M)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
PYTHON_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
# a source path: segments of identifier characters separated by '/', ending in .py or '/'
SOURCE_PATH = re.compile(r"^[A-Za-z_][\w.]*(?:/[A-Za-z_][\w.]*)*(?:\.py|/)$")


def _rel(path: Path) -> str:
    return str(path.relative_to(REPO))


def _prose(text: str) -> str:
    """The page without its fenced code blocks (their brackets and backticks are code, not links)."""
    return FENCE.sub("", text)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[`*]", "", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_slug(h) for h in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", _prose(page.read_text(encoding="utf-8")),
                                          flags=re.M)}


def _links(page: Path) -> list[str]:
    return LINK.findall(_prose(page.read_text(encoding="utf-8")))


def test_pages_are_found():
    names = {_rel(p) for p in PAGES}
    assert {"README.md", "doc/architecture.md", "doc/topic_protocol.md", "doc/kinematics.md", "doc/rl.md"} <= names
    assert any(n.startswith("doc/nodes/") for n in names)


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_relative_links_point_at_existing_files(page: Path):
    problems = []
    for target in _links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
            continue  # http:, https:, mailto: ...: not ours to check offline
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.exists():
            problems.append(f"{_rel(page)}: link '{target}' points at {dest}, which does not exist")
            continue
        if path_part.endswith("/") and not dest.is_dir():
            problems.append(f"{_rel(page)}: link '{target}' ends in '/' but {dest} is not a folder")
        if anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            problems.append(f"{_rel(page)}: link '{target}': no heading with anchor '#{anchor}' in "
                            f"{dest.relative_to(REPO)} (headings: {sorted(_anchors(dest))})")
    assert not problems, "\n".join(problems)


def _source_paths(page: Path) -> list[str]:
    spans = CODE_SPAN.findall(_prose(page.read_text(encoding="utf-8")))
    return [s for s in spans if SOURCE_PATH.match(s)]


def _resolve(path: str) -> Path:
    """Where a path in backticks points: under robot_core/ unless it starts with a top-level folder of the repo."""
    first = path.split("/", 1)[0]
    if "/" in path.rstrip("/"):
        # robot_core/..., test/..., bench/..., launch/... from the repository; control/..., ros/... in the package
        return REPO / path if (REPO / first).is_dir() else REPO / "robot_core" / path
    # one segment (`model/`, `cli.py`, `setup.py`, `launch/`): the package's entry, else the repository's
    inside = REPO / "robot_core" / path
    return inside if inside.exists() else REPO / path


def test_architecture_names_source_paths():
    """The check below is not vacuous: architecture.md names many modules in backticks."""
    paths = _source_paths(REPO / "doc" / "architecture.md")
    assert "nodes/simulator.py" in paths and "ros/outbox.py" in paths, paths


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_source_paths_in_backticks_exist(page: Path):
    missing = [f"{_rel(page)}: `{p}` -> {_resolve(p).relative_to(REPO)} does not exist"
               for p in _source_paths(page) if not _resolve(p).exists()]
    assert not missing, "\n".join(missing)


def _python_blocks() -> list[tuple[str, str]]:
    blocks = []
    for page in RUNNABLE:
        for k, code in enumerate(PYTHON_BLOCK.findall(page.read_text(encoding="utf-8"))):
            blocks.append((f"{_rel(page)}#{k + 1}", code))
    return blocks


def test_runnable_pages_have_examples():
    counts = {_rel(p): len(PYTHON_BLOCK.findall(p.read_text(encoding="utf-8"))) for p in RUNNABLE}
    assert all(counts.values()), f"pages without a ```python example: {counts}"


@pytest.mark.parametrize(("where", "code"), _python_blocks(), ids=[w for w, _ in _python_blocks()])
def test_python_examples_run(where: str, code: str):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("MUJOCO_GL", "egl")
    try:
        proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=EXAMPLE_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{where}: the example did not finish within {EXAMPLE_TIMEOUT:g} s")
    assert proc.returncode == 0, (f"{where}: the example failed (exit {proc.returncode})\n--- stdout\n"
                                  f"{proc.stdout[-2000:]}\n--- stderr\n{proc.stderr[-4000:]}")
