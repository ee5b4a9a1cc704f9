"""Structural comparison of RobotModels (they hold numpy arrays, so dataclass ``==`` cannot be used).

Used to check that writers and readers round-trip, ignoring where things came from (source refs, file names,
the original XML text).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

IGNORED_FIELDS = frozenset({"source", "source_file", "urdf_xml"})


def model_differences(a, b, atol: float = 0.0, ignore: frozenset[str] = IGNORED_FIELDS, path: str = "model"
                      ) -> list[str]:
    """Human-readable differences between two models (or any nested dataclass values); empty if equal."""
    out: list[str] = []
    _diff(a, b, atol, ignore, path, out)
    return out


def models_equal(a, b, atol: float = 0.0, ignore: frozenset[str] = IGNORED_FIELDS) -> bool:
    return not model_differences(a, b, atol, ignore)


def _diff(a, b, atol: float, ignore: frozenset[str], path: str, out: list[str]) -> None:
    if dataclasses.is_dataclass(a) and dataclasses.is_dataclass(b):
        if type(a) is not type(b):
            out.append(f"{path}: {type(a).__name__} != {type(b).__name__}")
            return
        for f in dataclasses.fields(a):
            if f.name not in ignore:
                _diff(getattr(a, f.name), getattr(b, f.name), atol, ignore, f"{path}.{f.name}", out)
    elif isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            out.append(f"{path}: keys {list(a)} != {list(b)}")
            return
        for k in a:
            _diff(a[k], b[k], atol, ignore, f"{path}[{k!r}]", out)
    elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            out.append(f"{path}: length {len(a)} != {len(b)}")
            return
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, atol, ignore, f"{path}[{i}]", out)
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if a is None or b is None:
            out.append(f"{path}: {a!r} != {b!r}")
            return
        x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        if x.shape != y.shape or not np.allclose(x, y, rtol=0.0, atol=atol):
            out.append(f"{path}: {x.tolist()} != {y.tolist()}")
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if not (a == b or abs(a - b) <= atol or (math.isnan(a) and math.isnan(b))):
            out.append(f"{path}: {a!r} != {b!r}")
    elif a != b:
        out.append(f"{path}: {a!r} != {b!r}")
