#!/usr/bin/env python3
"""Regenerate urdf/rc_arm.urdf from urdf/rc_arm.urdf.xacro (run after editing the xacro).

Usage: .venv/bin/python scripts/generate_urdf.py [--check]
--check exits 1 if the committed URDF differs from a fresh expansion instead of writing it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from robot_core.model.xacro_loader import expand_xacro  # noqa: E402

PAIRS = [(ROOT / "urdf" / "rc_arm.urdf.xacro", ROOT / "urdf" / "rc_arm.urdf")]
HEADER = "<!-- Generated from {name} by scripts/generate_urdf.py; edit the xacro, not this file. -->\n"


def render(xacro_path: Path) -> str:
    xml = expand_xacro(xacro_path, package_dirs=[ROOT], banner=False)
    first_newline = xml.index("\n") + 1  # keep the <?xml ...?> declaration first
    lines = [line for line in xml[first_newline:].splitlines() if line.strip()]
    return xml[:first_newline] + HEADER.format(name=xacro_path.name) + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare, do not write")
    args = parser.parse_args(argv)
    status = 0
    for src, dst in PAIRS:
        text = render(src)
        if args.check:
            if not dst.is_file() or dst.read_text() != text:
                print(f"{dst.relative_to(ROOT)} is out of date; run scripts/generate_urdf.py", file=sys.stderr)
                status = 1
        else:
            dst.write_text(text)
            print(f"wrote {dst.relative_to(ROOT)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
