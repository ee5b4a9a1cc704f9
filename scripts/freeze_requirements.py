"""Regenerate requirements/venv.txt from the current .venv (run with .venv/bin/python).

Only distributions that pip itself installed are listed: the ROS wheels also carry the
egg-info of the ROS packages inside them (action_msgs, rclpy, ...), which are not separate
PyPI projects and must not be pinned.
"""

from importlib import metadata
from pathlib import Path

HEADER = """\
# Pinned environment for robot_core on a machine with no ROS 2 distribution (CPython 3.11):
# ROS 2 Kilted PyPI wheels (rclpy + Fast DDS RMW + message packages + rosidl generators),
# MuJoCo, build tools, the test tools (Pinocchio and example-robot-data are test oracles) and the RL training
# stack (stable-baselines3, torch 2.13.0 CPU, imageio + imageio-ffmpeg).
# Regenerate with: .venv/bin/python scripts/freeze_requirements.py
"""
SKIP = {"pip", "robot-core", "robot_core"}
# The optional Ray RLlib packages (make setup-rllib) have their own list and stay out of venv.txt.
OPTIONAL = Path(__file__).resolve().parent.parent / "requirements" / "rllib.txt"
SKIP |= {line.split("==")[0].strip().lower() for line in OPTIONAL.read_text().splitlines()
         if line.strip() and not line.startswith("#")} if OPTIONAL.is_file() else set()

pins = set()
for dist in metadata.distributions():
    name = dist.metadata["Name"]
    if name is None or name.lower() in SKIP or (dist.read_text("INSTALLER") or "").strip() != "pip":
        continue
    if (dist.read_text("direct_url.json") or "").find('"editable": true') >= 0:
        continue
    pins.add(f"{name}=={dist.version}")
out = Path(__file__).resolve().parent.parent / "requirements" / "venv.txt"
out.write_text(HEADER + "".join(f"{p}\n" for p in sorted(pins, key=str.lower)))
print(f"wrote {len(pins)} pins to {out}")
