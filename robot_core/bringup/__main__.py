"""``python -m robot_core.bringup``: the same as ``robot-core bringup``."""

import sys

from robot_core.bringup.run import main

sys.exit(main())
