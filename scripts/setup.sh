#!/bin/sh
# Find a CPython 3.11 and hand over to scripts/bootstrap.py (which does the real work).
# Override the interpreter with PYTHON=/path/to/python3.11.
set -e
cd "$(dirname "$0")/.."
for cand in "${PYTHON:-}" python3.11 python3; do
  [ -n "$cand" ] || continue
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
    exec "$cand" scripts/bootstrap.py "$@"
  fi
done
echo "set-up failed: no Python 3.11 found (tried: ${PYTHON:-} python3.11 python3)." >&2
echo "The ROS 2 Kilted PyPI wheels robot_core uses are built for CPython 3.11." >&2
echo "Debian/Ubuntu: apt-get install python3.11 python3.11-venv python3.11-dev (or use pyenv), then re-run, e.g.:" >&2
echo "  make setup PYTHON=/usr/bin/python3.11" >&2
exit 1
