"""Text helpers for messages that quote user input.

A name taken from a message or a request (a joint, a link, a controller) may be arbitrarily long: a 100 KB
joint name must not be echoed in full into a log line or a service answer. Quote it through :func:`short`.
"""

from __future__ import annotations

MAX_QUOTED = 64


def short(text: object, limit: int = MAX_QUOTED) -> str:
    """``text`` as a string of at most about ``limit`` characters: longer ones keep their start and say how
    long they were (``'joint_aaaa...' (100000 characters)`` reads better than a cut-off without a note)."""
    s = str(text)
    if len(s) <= limit:
        return s
    return f"{s[:limit]}...({len(s)} characters)"
