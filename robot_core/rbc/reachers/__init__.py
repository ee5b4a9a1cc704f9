"""Reachers: instances that command the robot through cmd vars ("reach a new state")."""
