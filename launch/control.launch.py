"""The controller manager and the spawner runs of the controllers YAML.

    ros2 launch robot_core control.launch.py [robot:=FILE] [controllers:=YAML] [mode:=topic|embedded]
                                             [use_sim_time:=true] [namespace:=NS]

mode:=topic drives whatever speaks the topic-based protocol (start sim.launch.py, or a real robot / AGX Dynamics
/ Isaac Sim); mode:=embedded runs the physics engine inside the controller manager. The controllers in the
YAML's ``robot_core_bringup`` section are spawned: ``active_controllers`` activated, ``inactive_controllers``
with ``--inactive``.
"""

from robot_core.bringup.launch import control_part, launch_description


def generate_launch_description():
    return launch_description(control_part, ("robot", "controllers", "mode", "use_sim_time", "simulator_config",
                                                     "namespace", "robots"))
