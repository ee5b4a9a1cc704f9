"""``python -m robot_core.demo`` (what ``make demo`` runs): the same as ``robot-core demo``."""

import sys

from robot_core.demo.cli import main

sys.exit(main())
