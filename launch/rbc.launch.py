"""The Robot Body Coupler for the robot's ``<rbc>`` tags.

    ros2 launch robot_core rbc.launch.py [robot:=FILE] [rbc_config:=YAML] [use_sim_time:=true] [mode:=topic]

With mode:=embedded its raw joint-state vars are remapped onto the broadcaster's /joint_states (no separate
simulator publishes /robot_joint_states then).
"""

from robot_core.bringup.launch import launch_description, rbc_part


def generate_launch_description():
    return launch_description(rbc_part, ("robot", "rbc_config", "use_sim_time", "mode", "rbc", "namespace", "robots"))
