"""SharedVector: a reader in another process never sees a half-written vector, and the block goes when closed."""

from __future__ import annotations

import multiprocessing as mp
import time
from typing import Any

import numpy as np
import pytest

from robot_core.rbc.shared_vector import SharedVector


@pytest.fixture(scope="module", autouse=True)
def _resource_tracker():
    """multiprocessing.shared_memory starts a resource-tracker process on first use; end it with the module so no
    process outlives it."""
    yield
    from multiprocessing import resource_tracker

    resource_tracker._resource_tracker._stop()


N = 20_000  # large enough that an unguarded copy is regularly caught half-written


def _writer(name: str, n: int, started: Any, stop: Any) -> None:
    vec = SharedVector(n, name=name, create=False)
    started.set()
    k = 0
    while not stop.is_set():
        k += 1
        vec.write(np.full(n, float(k)))
    vec.close()


def test_reader_never_sees_a_torn_vector():
    vec = SharedVector(N)
    vec.write(np.zeros(N))
    ctx = mp.get_context("spawn")
    started, stop = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_writer, args=(vec.name, N, started, stop))
    proc.start()
    try:
        assert started.wait(60), "writer process did not start"
        seen: set[float] = set()
        torn_raw, out = 0, np.empty(N)
        deadline = time.monotonic() + 60
        while len(seen) < 20 and time.monotonic() < deadline:  # until the reader has overlapped many writes
            v = vec.read(out)
            assert np.all(v == v[0]), f"torn read: {v[0]} ... {v[-1]}"
            seen.add(float(v[0]))
            raw = vec._data.copy()  # the same copy without the sequence check, for contrast
            torn_raw += int(not np.all(raw == raw[0]))
        stop.set()
        proc.join(30)
        assert proc.exitcode == 0
        assert len(seen) >= 20, f"only {len(seen)} distinct vectors in 60 s"
        last = vec.read()
        assert np.all(last == last[0]) and last[0] >= max(seen)
        print(f"{len(seen)} distinct consistent vectors read; unguarded copies torn: {torn_raw}")
    finally:
        if proc.is_alive():
            proc.kill()
        vec.close()


def test_shape_and_lifetime_are_checked():
    vec = SharedVector(3)
    with pytest.raises(ValueError, match="holds 3 values"):
        vec.write([1.0, 2.0])
    other = SharedVector(3, name=vec.name, create=False)
    vec.write([1.0, 2.0, 3.0])
    assert other.read().tolist() == [1.0, 2.0, 3.0] and other.sequence == 2
    other.close()
    vec.close()
    with pytest.raises(FileNotFoundError):
        SharedVector(3, name=vec.name, create=False)
