"""A serialized ROS message whose numeric fields are rewritten in place, for publishing at kHz rates from Python.

Converting a Python message to its C form walks every field in Python-object land: ~15 us per
``TransformStamped``, so a robot's /tf costs more than a MuJoCo step. The messages the simulator streams never
change shape (same joints, same frames), only numbers. So the node serializes each one *once* with sentinel
values, this module finds where each sentinel landed in the bytes, and every later message is those bytes with
new numbers written at those places -- one numpy assignment per field group -- handed to
``Publisher.publish(bytes)``. The bytes come from the middleware's own serializer, so the wire format is exactly
what it would produce; only fixed-size numeric fields are patched, never lengths or strings.

ROS-free: it works on bytes; the node does the (de)serialization.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence

import numpy as np

_SENTINEL_SEED = 0x5EED
# CDR aligns every primitive of 4 bytes or more to a multiple of 4 from the start of the payload, which itself
# starts 4 bytes into the buffer (the encapsulation header), so a field can only start at a multiple of 4.
ALIGNMENT = 4


def sentinels(count: int, dtype: str | np.dtype, salt: int = 0) -> np.ndarray:
    """``count`` distinct values of ``dtype`` whose byte patterns are vanishingly unlikely to occur by chance.

    Floats are random finite doubles of large magnitude; integers random in the upper half of their type's
    positive range, so all their bytes are random (a collision with other data is still possible in principle,
    and :meth:`SerializedTemplate.add_field` detects it).
    """
    dt = np.dtype(dtype)
    rng = np.random.default_rng(_SENTINEL_SEED + 7919 * salt)
    if dt.kind == "f":
        values = rng.uniform(1.0, 2.0, count) * 10.0 ** rng.integers(100, 300, count)
        values *= rng.choice([-1.0, 1.0], count)
    else:
        top = int(np.iinfo(dt).max)
        values = rng.integers((top >> 1) + 1, top, size=count, endpoint=True)
    values = values.astype(dt)
    if np.unique(values).size != count:
        raise ValueError(f"sentinel collision; use another salt than {salt}")
    return values


class SerializedTemplate:
    """Serialized message bytes plus named groups of numeric fields located by their sentinel values."""

    def __init__(self, data: bytes):
        self._buf = bytearray(data)
        self._fields: dict[str, tuple[np.ndarray, np.ndarray | slice]] = {}
        self._offsets: dict[str, np.ndarray] = {}  # name -> byte offset of each field

    def add_field(self, name: str, values: Sequence[float] | np.ndarray) -> None:
        """Register the fields that hold ``values`` (the sentinels the template was serialized with, in the
        order later :meth:`set` calls will use). Raises ValueError unless each occurs exactly once."""
        values = np.asarray(values)
        if values.size == 0:
            self._fields[name] = (np.zeros(0, dtype=values.dtype), np.zeros(0, dtype=int))
            self._offsets[name] = np.zeros(0, dtype=int)
            return
        itemsize = values.dtype.itemsize
        raw = bytes(self._buf)
        offsets = []
        for v in values.reshape(-1):
            pattern = v.tobytes()
            hits = []
            at = raw.find(pattern)
            while at >= 0:
                if at % ALIGNMENT == 0:
                    hits.append(at)
                at = raw.find(pattern, at + 1)
            if len(hits) != 1:
                found = "not found" if not hits else "found more than once"
                raise ValueError(f"field group '{name}': sentinel {v!r} {found} in the serialized template")
            offsets.append(hits[0])
        offs = np.array(offsets)
        phase = int(offs[0] % itemsize)
        if np.any(offs % itemsize != phase):
            raise ValueError(f"field group '{name}': fields are not equally aligned")
        count = (len(self._buf) - phase) // itemsize
        view = np.frombuffer(self._buf, dtype=values.dtype, count=count, offset=phase)
        index = (offs - phase) // itemsize
        # A sequence (a JointState's positions) is one run of consecutive fields: a slice writes it ~2x faster
        # than the index array.
        at: np.ndarray | slice = index
        if index.size > 1 and np.array_equal(index, np.arange(index[0], index[0] + index.size)):
            at = slice(int(index[0]), int(index[0]) + index.size)
        self._fields[name] = (view, at)
        self._offsets[name] = offs

    def set(self, name: str, values: np.ndarray | Sequence[float] | float) -> None:
        """Write ``values`` (one per registered field, or a scalar for all) into the group's fields."""
        view, index = self._fields[name]
        view[index] = values

    def setter(self, name: str) -> Callable[[int | float], None]:
        """A function writing one number into the group ``name`` of a single field (a stamp's ``sec``): one
        ``struct.pack_into``, ~20x cheaper than :meth:`set`, for what changes at every step (/clock)."""
        view, _ = self._fields[name]
        offsets = self._offsets[name]
        if offsets.size != 1:
            raise ValueError(f"field group '{name}' has {offsets.size} fields; setter() needs exactly one")
        dt = view.dtype
        code = {"f": {4: "f", 8: "d"}, "i": {1: "b", 2: "h", 4: "i", 8: "q"},
                "u": {1: "B", 2: "H", 4: "I", 8: "Q"}}[dt.kind][dt.itemsize]
        pack = struct.Struct(("<" if dt.byteorder == "<" else ">" if dt.byteorder == ">" else "=") + code).pack_into
        buf, offset = self._buf, int(offsets[0])

        def write(value: int | float) -> None:
            pack(buf, offset, value)

        return write

    def get(self, name: str) -> np.ndarray:
        view, index = self._fields[name]
        return view[index].copy()

    def tobytes(self) -> bytes:
        return bytes(self._buf)
