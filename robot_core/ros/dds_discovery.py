"""robot_core's Fast DDS discovery profile: fewer discovery timer events, because of a deadlock in Fast DDS.

Why: Fast DDS 3.2.3 (the release the PyPI ROS 2 wheels ship) can freeze a participant for good. A receive thread
that removes a peer's endpoint (the peer left or destroyed a node) holds the discovery (PDP) mutex while it waits
for the participant's event thread to go idle; if that thread is running a discovery timer that needs the same
mutex (an announcement, or a peer's lease check), neither moves again (the family of eProsima/Fast-DDS issue
6502). Such a process is alive and silent: no message in or out, and a Python thread that then touches DDS blocks
while holding the interpreter lock. A process that starts while others leave meets it most: by default its first
half second runs five announcements 100 ms apart (a test bench that starts short-lived nodes beside leaving
ones froze one in about five minutes on a loaded 2-core machine).

``fastdds_discovery.xml`` (next to this file) keeps discovery as fast, with fewer such events: one repeat of the
first announcement instead of five (peers answer a new participant as soon as they hear of it, without waiting
for their next announcement), an announcement every 10 s instead of 3 s, and a lease of 40 s instead of 20 s (each
peer checks our liveliness half as often). The odds drop; the deadlock itself is Fast DDS's. Cost: a process
killed without leaving (SIGKILL, power loss) stays in its peers' graph for up to 40 s.

A user's own Fast DDS configuration wins: nothing is set when ``FASTDDS_DEFAULT_PROFILES_FILE`` (or the older
``FASTRTPS_DEFAULT_PROFILES_FILE``) is set, when the working directory holds ``DEFAULT_FASTDDS_PROFILES.xml``,
when another RMW than Fast DDS is chosen, or when ``ROBOT_CORE_FASTDDS_PROFILE=off``. The choice is made through
the environment, before the process's first participant exists, so the processes it starts inherit it.
"""

from __future__ import annotations

import os
from pathlib import Path

PROFILE = Path(__file__).with_name("fastdds_discovery.xml")
SWITCH_ENV = "ROBOT_CORE_FASTDDS_PROFILE"
PROFILES_ENV = "FASTDDS_DEFAULT_PROFILES_FILE"
_USER_CHOICES = (PROFILES_ENV, "FASTRTPS_DEFAULT_PROFILES_FILE")
_CWD_DEFAULT = "DEFAULT_FASTDDS_PROFILES.xml"


def use_discovery_profile(environ: dict[str, str] | None = None) -> Path | None:
    """Point Fast DDS at robot_core's profile unless the user configured Fast DDS; returns the file now in force
    through this mechanism (the user's, ours) or None. Call before the process's first ``rclpy.init``."""
    env = os.environ if environ is None else environ
    for name in _USER_CHOICES:
        if env.get(name):
            return Path(env[name])
    if env.get(SWITCH_ENV, "").strip().lower() in ("off", "0", "false", "no"):
        return None
    if "fastrtps" not in env.get("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp"):
        return None
    if Path(_CWD_DEFAULT).is_file() or not PROFILE.is_file():
        return None
    env[PROFILES_ENV] = str(PROFILE)
    return PROFILE
