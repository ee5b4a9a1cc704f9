"""Diagnostic for bench/soak.py, never in the nodes: ``malloc_trim(0)`` every 10 s from a daemon thread.

Put this directory first on the nodes' PYTHONPATH (``--node-env PYTHONPATH=bench/malloc_trim_site:.``): with the
free memory handed back to the system every 10 s, RSS growth that remains is memory the process still holds.
"""

import ctypes
import threading
import time

_libc = ctypes.CDLL("libc.so.6")


def _trim() -> None:
    while True:
        time.sleep(10.0)
        _libc.malloc_trim(0)


threading.Thread(target=_trim, name="malloc-trim", daemon=True).start()
