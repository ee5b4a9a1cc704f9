"""A ``sensor_msgs/JointState`` read straight from its serialized bytes, for the simulator's command take.

rclpy's take of a JointState builds the Python message field by field: ~17 us per command on the 2-vCPU VM,
against ~3 us for taking the same message as bytes (doc/benchmarks.md, the round trip's decomposition). The
simulator needs only the names and the three arrays, so it takes the bytes and reads them here: the names as
strings, the arrays as float64 views of the bytes, no message object.

The bytes are what the middleware delivers: an encapsulation header, then classic CDR (XCDR1, what rmw_fastrtps and
rmw_cyclonedds write), every primitive aligned to its size from the start of the payload. Anything else -- another
encapsulation, or bytes that end early -- returns None, and the caller deserializes the message the ordinary
way (which also reports what is wrong with it).
"""

from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np

_HEADER = 4  # encapsulation: 2 bytes kind (0x0000 CDR big-endian, 0x0001 CDR little-endian), 2 bytes options
_EMPTY = np.zeros(0)


class JointStateFields(NamedTuple):
    """The fields of a JointState the simulator reads (the arrays may be read-only views of the bytes)."""

    name: list[str]
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray


_U32 = {"<": struct.Struct("<I").unpack_from, ">": struct.Struct(">I").unpack_from}
_F64 = {"<": np.dtype("<f8"), ">": np.dtype(">f8")}


def read_joint_state(data: bytes) -> JointStateFields | None:
    """The names and arrays of a serialized JointState, or None when the bytes are not classic CDR of one."""
    if len(data) < _HEADER or data[0] != 0 or data[1] > 1:
        return None
    order = "<" if data[1] == 1 else ">"
    u32, f64 = _U32[order], _F64[order]
    try:
        pos = _HEADER + 8  # header.stamp: int32 sec, uint32 nanosec
        (n,) = u32(data, pos)
        pos += 4 + n  # header.frame_id: length (with its NUL), characters
        pos += -(pos - _HEADER) % 4
        (count,) = u32(data, pos)
        pos += 4
        names = []
        for _ in range(count):
            pos += -(pos - _HEADER) % 4
            (n,) = u32(data, pos)
            pos += 4
            if n == 0 or pos + n > len(data):
                return None
            names.append(data[pos:pos + n - 1].decode())
            pos += n
        arrays = []
        for _ in range(3):
            pos += -(pos - _HEADER) % 4
            (count,) = u32(data, pos)
            pos += 4
            if count == 0:
                arrays.append(_EMPTY)
                continue
            pos += -(pos - _HEADER) % 8
            arrays.append(np.frombuffer(data, dtype=f64, count=count, offset=pos))
            pos += 8 * count
    except (struct.error, ValueError, UnicodeDecodeError):
        return None
    return JointStateFields(names, *arrays)
