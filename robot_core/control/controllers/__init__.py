"""The controllers robot_core ships, one module each (type names in robot_core.control.registry)."""
