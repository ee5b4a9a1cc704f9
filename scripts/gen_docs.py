#!/usr/bin/env python3
"""Regenerate the parameter tables of doc/nodes/<node>.md and doc/controllers/<module>.md from the ParamSpec tables.

The tables sit between ``<!-- params:<page> begin -->`` and ``<!-- params:<page> end -->``; everything else on the
page is hand-written. ``--check`` changes nothing and exits 1 when a page is out of date (run by test_docs.py and
test_controller_docs.py), so the docs cannot drift from what the nodes and controllers declare.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from robot_core.control.registry import doc_pages, page_params  # noqa: E402
from robot_core.nodes.node_params import NODE_PARAMS  # noqa: E402
from robot_core.parameter_spec import ParamSpec, markdown_table  # noqa: E402


def page_path(node: str) -> Path:
    return REPO / "doc" / "nodes" / f"{node}.md"


def controller_page_path(page: str) -> Path:
    return REPO / "doc" / "controllers" / f"{page}.md"


def render(text: str, node: str, specs: Sequence[ParamSpec] | None = None, where: str = "doc/nodes") -> str:
    """``text`` with the page's table between its markers replaced; ValueError when the markers are missing."""
    begin, end = f"<!-- params:{node} begin -->", f"<!-- params:{node} end -->"
    head, sep, rest = text.partition(begin)
    _, sep2, tail = rest.partition(end)
    if not sep or not sep2:
        raise ValueError(f"{where}/{node}.md: markers '{begin}' ... '{end}' not found")
    table = markdown_table(NODE_PARAMS[node] if specs is None else specs)
    return f"{head}{begin}\n{table}{end}{tail}"


def render_controller(text: str, page: str) -> str:
    """A controller page with its table (the union of the page's controller types' PARAMS) regenerated."""
    return render(text, page, page_params(page), "doc/controllers")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is out of date; write nothing")
    args = parser.parse_args(argv)
    stale: list[str] = []
    jobs = [(page_path(n), lambda t, n=n: render(t, n)) for n in NODE_PARAMS]
    jobs += [(controller_page_path(p), lambda t, p=p: render_controller(t, p)) for p in doc_pages()]
    for path, rerender in jobs:
        old = path.read_text(encoding="utf-8")
        new = rerender(old)
        if new != old:
            stale.append(str(path.relative_to(REPO)))
            if not args.check:
                path.write_text(new, encoding="utf-8")
    if stale:
        verb = "out of date (run scripts/gen_docs.py)" if args.check else "regenerated"
        print(f"{verb}: {', '.join(stale)}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
