"""Limits on the YAML files robot_core reads or hands to rcl (parameter files, controllers YAML).

``yaml.safe_load`` keeps aliases as shared references, so an alias bomb ("billion laughs": nine anchors, each
a list of nine aliases of the previous one) loads at once into a tiny object graph -- and then explodes in
whatever expands it: rcl's parameter parser, a deep copy, a dump. A parameter file is a few kilobytes with a
handful of anchors, so these limits are far above any real one and far below any harm.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

MAX_BYTES = 4 * 1024 * 1024
MAX_ALIASES = 1000
MAX_EXPANDED_NODES = 200_000  # scalars + collections once every alias is expanded
MAX_DEPTH = 200


class YamlLimitError(ValueError):
    """The YAML is too large, too deep or expands too much; the message names the file."""


def check_yaml_text(text: str, source: str) -> None:
    """Raise YamlLimitError when ``text`` exceeds the limits (syntax errors are left to the real parser)."""
    size = len(text.encode("utf-8", errors="replace"))
    if size > MAX_BYTES:
        raise YamlLimitError(f"{source}: YAML file of {size} bytes is larger than the {MAX_BYTES} bytes allowed")
    try:
        roots = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return
    except RecursionError:
        raise YamlLimitError(f"{source}: YAML nested too deeply (more than {MAX_DEPTH} levels)") from None
    aliases = sum(1 for tok in yaml.scan(text, Loader=yaml.SafeLoader) if isinstance(tok, yaml.AliasToken))
    if aliases > MAX_ALIASES:
        raise YamlLimitError(f"{source}: YAML uses {aliases} aliases, more than the {MAX_ALIASES} allowed")
    expanded = sum(_expanded_size(root, source) for root in roots)
    if expanded > MAX_EXPANDED_NODES:
        raise YamlLimitError(f"{source}: YAML aliases expand to more than {MAX_EXPANDED_NODES} values (an alias "
                             f"bomb?); write the values out instead")


def _expanded_size(root: yaml.Node, source: str) -> int:
    """Number of nodes with every alias expanded, counted without expanding (memo per shared node, no recursion).
    A cycle (a recursive alias) counts as too large."""
    memo: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            on_path.discard(key)
            memo[key] = min(MAX_EXPANDED_NODES + 1, 1 + sum(memo[id(c)] for c in children))
            continue
        if key in memo:
            continue
        if key in on_path:
            return MAX_EXPANDED_NODES + 1
        if len(on_path) > MAX_DEPTH:
            raise YamlLimitError(f"{source}: YAML nested deeper than {MAX_DEPTH} levels")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in memo)
    return memo[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def safe_load_checked(text: str, source: str) -> Any:
    """``yaml.safe_load`` after :func:`check_yaml_text`."""
    check_yaml_text(text, source)
    return yaml.safe_load(text)


def check_yaml_file(path: str | Path) -> None:
    """Check a file given to rcl (``--params-file``) before rcl parses it; OSError when it cannot be read."""
    p = Path(path)
    check_yaml_text(p.read_text(encoding="utf-8", errors="replace"), str(p))
