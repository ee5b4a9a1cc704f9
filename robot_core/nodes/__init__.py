"""rclpy adapters of robot_core (simulator, controller manager, spawner, rbc)."""

from robot_core.ros.node_main import guard_start_up as _guard_start_up

# First thing a node script imports: from here on a Ctrl-C during its start-up is recorded, not raised.
_guard_start_up()
