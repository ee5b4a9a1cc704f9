"""robot_core: one robot description to a simulated, controllable ROS 2 robot."""

__version__ = "0.1.0"
