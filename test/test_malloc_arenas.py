"""The node processes cap glibc's malloc arenas (robot_core.ros.malloc_arenas): counted with malloc_info.

Each check runs in a fresh interpreter (the cap only works before threads allocate), where eight threads each
allocate and hold a block at once; glibc gives every new allocating thread an arena of its own while under its
limit, so the count of arenas is deterministic: 8 threads + main arena without the cap, at most the cap with it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from robot_core.ros import malloc_arenas
from robot_core.ros.malloc_arenas import CAPPED, DEFAULT_ARENA_MAX, USER_SETTING, cap_malloc_arenas, user_setting

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(malloc_arenas.glibc() is None, reason="malloc arenas are glibc's")

# argv[1]: what to do before the threads start: "none", "cap" (cap_malloc_arenas()) or "node" (be a node
# script: argv[0] named controller_manager, then import robot_core.nodes, as the console script does).
# Prints the cap's outcome (or "-") and the number of arenas malloc_info reports.
COUNT_ARENAS = r"""
import ctypes, re, sys, tempfile, threading
mode = sys.argv[1]
outcome = "-"
if mode == "cap":
    from robot_core.ros.malloc_arenas import cap_malloc_arenas
    outcome = cap_malloc_arenas()
elif mode == "node":
    sys.argv[0] = "/somewhere/lib/robot_core/controller_manager"
    import robot_core.nodes  # noqa: F401
    from robot_core.ros.node_main import MALLOC_CAP
    outcome = MALLOC_CAP
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = (ctypes.c_size_t,)
libc.free.argtypes = (ctypes.c_void_p,)
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = (ctypes.c_char_p, ctypes.c_char_p)
libc.fclose.argtypes = (ctypes.c_void_p,)
libc.malloc_info.argtypes = (ctypes.c_int, ctypes.c_void_p)
all_in = threading.Barrier(9)
counted = threading.Event()
def hold():
    block = libc.malloc(4096)  # this thread's first malloc: glibc picks (or makes) its arena now
    all_in.wait()
    counted.wait()
    libc.free(block)
workers = [threading.Thread(target=hold) for _ in range(8)]
for w in workers:
    w.start()
all_in.wait()
with tempfile.NamedTemporaryFile(suffix=".xml") as f:
    fp = libc.fopen(f.name.encode(), b"w")
    libc.malloc_info(0, fp)
    libc.fclose(fp)
    xml = open(f.name).read()
counted.set()
for w in workers:
    w.join()
print(outcome, len(re.findall(r'<heap nr="\d+">', xml)))
"""


def count_arenas(mode: str, **env: str) -> tuple[str, int]:
    environ = {k: v for k, v in os.environ.items() if k not in ("MALLOC_ARENA_MAX", "GLIBC_TUNABLES")}
    environ.update(env)
    environ["PYTHONPATH"] = os.pathsep.join([str(REPO), environ.get("PYTHONPATH", "")])
    run = subprocess.run([sys.executable, "-c", COUNT_ARENAS, mode], capture_output=True, text=True, env=environ,
                         timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    outcome, count = run.stdout.strip().rsplit(" ", 1)
    return outcome, int(count)


def test_without_the_cap_every_thread_gets_an_arena() -> None:
    # the control: the counting sees glibc's default (one arena per allocating thread, up to 8 per CPU)
    _, count = count_arenas("none")
    assert count >= min(9, 8 * (os.cpu_count() or 1))


def test_the_cap_limits_the_arenas() -> None:
    outcome, count = count_arenas("cap")
    assert outcome == CAPPED
    assert count <= DEFAULT_ARENA_MAX


def test_a_node_script_caps_its_arenas_at_start_up() -> None:
    outcome, count = count_arenas("node")
    assert outcome == CAPPED
    assert count <= DEFAULT_ARENA_MAX


def test_the_users_malloc_arena_max_wins() -> None:
    outcome, count = count_arenas("node", MALLOC_ARENA_MAX="5")
    assert outcome == USER_SETTING
    assert DEFAULT_ARENA_MAX < count <= 5


def test_user_setting_is_read_from_both_variables() -> None:
    assert user_setting({}) is None
    assert user_setting({"MALLOC_ARENA_MAX": "4"}) == "MALLOC_ARENA_MAX=4"
    assert user_setting({"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1:glibc.malloc.arena_max=3"}) \
        == "glibc.malloc.arena_max=3"
    assert user_setting({"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1"}) is None
    assert cap_malloc_arenas(environ={"MALLOC_ARENA_MAX": "4"}) == USER_SETTING


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1, got 0"):
        cap_malloc_arenas(0, environ={})
