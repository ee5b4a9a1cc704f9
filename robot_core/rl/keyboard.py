"""KeyboardPolicy: drive an environment from the terminal's keys (raw tty input, no display or window needed).

Each action dimension has a pair of keys, (minus, plus): ``a``/``d`` (also the left/right arrows), then
``s``/``w`` (also down/up), ``j``/``l``, ``k``/``i``, ``z``/``x``, ``c``/``v``, ``b``/``n``. A key pressed since
the last step sets its dimension to -1 or +1 for that step (hold it: the terminal repeats it); untouched
dimensions are 0. ``q`` or Esc ends the run. The terminal is put in cbreak mode (no echo, no line buffering)
and restored on exit.
"""

from __future__ import annotations

import os
import select
import sys
import termios
import tty
from typing import Any

import numpy as np

KEY_PAIRS = (("a", "d"), ("s", "w"), ("j", "l"), ("k", "i"), ("z", "x"), ("c", "v"), ("b", "n"))
ARROWS = {"\x1b[D": "a", "\x1b[C": "d", "\x1b[B": "s", "\x1b[A": "w"}
QUIT_KEYS = ("q", "\x1b")


class KeyboardQuit(Exception):  # noqa: N818  (not an error: the user ends the run)
    """The user pressed q or Esc."""


class KeyboardPolicy:
    """Actions from key presses on ``stream`` (a terminal); use as a context manager."""

    def __init__(self, action_dims: int, stream: Any = None):
        self.stream = sys.stdin if stream is None else stream
        if not self.stream.isatty():
            raise ValueError("the keyboard policy needs a terminal on standard input (it is not a tty)")
        if action_dims > len(KEY_PAIRS):
            raise ValueError(f"the keyboard policy drives at most {len(KEY_PAIRS)} action dimensions, "
                             f"this env has {action_dims}")
        self.action_dims = action_dims
        self._fd = self.stream.fileno()
        self._saved: list[Any] | None = None

    def help(self) -> str:
        pairs = ", ".join(f"dim {i}: {lo}/{hi}" for i, (lo, hi) in enumerate(KEY_PAIRS[:self.action_dims]))
        return f"keys (minus/plus): {pairs}; arrows = a/d and s/w; q or Esc quits"

    def __enter__(self) -> KeyboardPolicy:
        self._saved = termios.tcgetattr(self._fd)
        tty.setcbreak(self._fd)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._saved is not None:
            termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved)
            self._saved = None

    def action(self) -> np.ndarray:
        """The action of the keys pressed since the last call; raises :class:`KeyboardQuit` on q / Esc."""
        action = np.zeros(self.action_dims, dtype=np.float32)
        for key in parse_keys(self._read_pending()):
            if key in QUIT_KEYS:
                raise KeyboardQuit
            for dim, (minus, plus) in enumerate(KEY_PAIRS[:self.action_dims]):
                if key == minus:
                    action[dim] = -1.0
                elif key == plus:
                    action[dim] = 1.0
        return action

    def _read_pending(self) -> str:
        chunks = []
        while select.select([self._fd], [], [], 0)[0]:
            data = os.read(self._fd, 64)
            if not data:
                break
            chunks.append(data.decode(errors="ignore"))
        return "".join(chunks)


def parse_keys(text: str) -> list[str]:
    """Split raw terminal input into keys: arrow escape sequences become their letter, a lone Esc stays Esc."""
    keys: list[str] = []
    i = 0
    while i < len(text):
        seq = text[i:i + 3]
        if seq in ARROWS:
            keys.append(ARROWS[seq])
            i += 3
        else:
            keys.append(text[i].lower())
            i += 1
    return keys
