"""Text helpers for messages: names that come from requests, commands or files are user input."""

from __future__ import annotations

from collections.abc import Iterable

CLIP = 80


def clip(name: object, limit: int = CLIP) -> str:
    """``name`` as it may appear in an error or log message: at most ``limit`` characters of it, then how long
    it really was. A 100 KB joint name in a command would otherwise be echoed in full into every log line."""
    text = str(name)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}...({len(text)} chars)"


def clip_all(names: Iterable[object], limit: int = CLIP, count: int = 20) -> str:
    """A list of names for a message: each clipped, at most ``count`` of them."""
    items = [clip(n, limit) for n in names]
    more = f", ... ({len(items)} in all)" if len(items) > count else ""
    return "[" + ", ".join(repr(i) for i in items[:count]) + more + "]"
