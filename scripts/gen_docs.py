#!/usr/bin/env python3
"""Regenerate the parameter tables of doc/nodes/<node>.md from the nodes' ParamSpec tables.

The tables sit between ``<!-- params:<node> begin -->`` and ``<!-- params:<node> end -->``; everything else on the
page is hand-written. ``--check`` changes nothing and exits 1 when a page is out of date (run by test_docs.py),
so the docs cannot drift from what the nodes declare.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from robot_core.nodes.node_params import NODE_PARAMS  # noqa: E402
from robot_core.parameter_spec import markdown_table  # noqa: E402


def page_path(node: str) -> Path:
    return REPO / "doc" / "nodes" / f"{node}.md"


def render(text: str, node: str) -> str:
    """``text`` with the node's table between its markers replaced; ValueError when the markers are missing."""
    begin, end = f"<!-- params:{node} begin -->", f"<!-- params:{node} end -->"
    head, sep, rest = text.partition(begin)
    _, sep2, tail = rest.partition(end)
    if not sep or not sep2:
        raise ValueError(f"doc/nodes/{node}.md: markers '{begin}' ... '{end}' not found")
    return f"{head}{begin}\n{markdown_table(NODE_PARAMS[node])}{end}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is out of date; write nothing")
    args = parser.parse_args(argv)
    stale: list[str] = []
    for node in NODE_PARAMS:
        path = page_path(node)
        old = path.read_text(encoding="utf-8")
        new = render(old, node)
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
