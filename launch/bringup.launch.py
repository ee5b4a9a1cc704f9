"""The whole graph: simulator (mode:=topic), controller manager with its spawners, Robot Body Coupler.

    ros2 launch robot_core bringup.launch.py [robot:=FILE] [controllers:=YAML] [use_sim_time:=true]
                                             [mode:=topic|embedded] [headless:=true] [rbc:=true]
                                             [world:=YAML] [namespace:=NS] [robots:=FILE]

The same nodes with the same parameters as sim.launch.py + control.launch.py + rbc.launch.py, and as
``robot-core bringup`` on machines without ``ros2 launch`` (both read robot_core.bringup.plan). In embedded
mode robot_state_publisher is added when installed, so /tf and /robot_description exist in both modes.
``robots:=FILE`` starts a robot group: one simulator and per robot its controller manager, spawners and RBC
under its namespace (doc/namespaces.md).
"""

from robot_core.bringup.launch import bringup_part, launch_description


def generate_launch_description():
    return launch_description(bringup_part)
