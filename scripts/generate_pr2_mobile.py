#!/usr/bin/env python3
"""Regenerate urdf/pr2_mobile.urdf from example-robot-data's PR2 (pr2_description/urdf/pr2.urdf).

example-robot-data's PR2 cannot drive: its four caster rotation joints and eight wheel joints are ``fixed`` and its
wheels have no collision geometry (visual meshes only). The variant changes exactly that and nothing else:

* the caster rotation joints (``*_caster_rotation_joint``) and the wheel joints (``*_caster_{l,r}_wheel_joint``)
  become ``continuous`` (their axes, limits and transmissions are the file's own);
* each wheel link gets a collision cylinder of the wheel mesh's radius (0.0792 m, measured from
  meshes/base_v0/wheel.stl; with it the wheels touch the floor with base_footprint at z = 0), a thin disk
  (2 mm): MuJoCo touches a cylinder lying on a plane at both ends of its lowest line, and the friction at those
  two points resists every turn of the caster about the vertical (with 4 cm wide wheels the base commanded
  (0.3, 0.2, 0.5) made only (0.27, 0.17, 0.44)); a thin disk touches the floor at about one point, as a tyre's
  small patch does. Spheres would do too, but the two wheels of a caster (0.098 m apart) would collide.

Meshes stay ``package://example-robot-data/...``: robot_core resolves them from the installed example-robot-data
(``robot-core bringup --robot pr2`` passes its folder as ``package_dirs``). Line numbers of the source are kept
(the new elements are written on the lines they extend), so a message about the variant points at the same line
of either file.

Usage: .venv/bin/python scripts/generate_pr2_mobile.py [--check]
--check exits 1 if the committed file differs from a fresh conversion instead of writing it.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from robot_core.bringup.plan import example_robot_data  # noqa: E402

SOURCE = "pr2_description/urdf/pr2.urdf"
TARGET = ROOT / "urdf" / "pr2_mobile.urdf"
WHEEL_RADIUS = 0.0792  # m, wheel.stl's extent in x and z
WHEEL_WIDTH = 0.002  # m: a thin disk, one contact line (see the docstring)
MOVABLE = re.compile(r'(<joint name="[a-z]{2}_caster_(?:rotation|[lr]_wheel)_joint" type=")fixed(")')
WHEEL_LINK = re.compile(r'(<link name="[a-z]{2}_caster_[lr]_wheel_link">)')
HEADER = ("<!-- Generated from example-robot-data's {source} by scripts/generate_pr2_mobile.py: the caster rotation "
          "and wheel joints continuous, collision cylinders on the wheels (r {radius} m); edit the script, not "
          "this file. -->")
COLLISION = ('<collision name="{name}_collision"><origin rpy="1.5707963267948966 0 0" xyz="0 0 0"/><geometry>'
             f'<cylinder radius="{WHEEL_RADIUS}" length="{WHEEL_WIDTH}"/></geometry></collision>')


def convert(text: str) -> str:
    """The variant's text: 12 joints made continuous, 8 wheel collisions added, a header on the first line."""
    text, joints = MOVABLE.subn(r"\1continuous\2", text)
    if joints != 12:
        raise SystemExit(f"{SOURCE}: expected 12 fixed caster rotation / wheel joints, found {joints}")

    def add_collision(match: re.Match[str]) -> str:
        name = match.group(1).split('"')[1]
        return match.group(1) + COLLISION.format(name=name)

    text, wheels = WHEEL_LINK.subn(add_collision, text)
    if wheels != 8:
        raise SystemExit(f"{SOURCE}: expected 8 wheel links, found {wheels}")
    first, _, rest = text.partition("\n")  # keep <?xml ...?> first and the line count unchanged
    return first + HEADER.format(source=SOURCE, radius=WHEEL_RADIUS) + "\n" + rest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare, do not write")
    args = parser.parse_args(argv)
    robots = example_robot_data()
    if robots is None:
        print("example-robot-data is not installed (pip install example-robot-data)", file=sys.stderr)
        return 2
    text = convert((robots / SOURCE).read_text(encoding="utf-8"))
    if args.check:
        if not TARGET.is_file() or TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET.relative_to(ROOT)} is out of date; run scripts/generate_pr2_mobile.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
