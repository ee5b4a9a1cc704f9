"""The simulator alone: MuJoCo behind the topic-based hardware protocol, publishing /clock, /tf and the robot.

    ros2 launch robot_core sim.launch.py [robot:=FILE] [simulator_config:=YAML] [world:=YAML] [headless:=false]
                                         [namespace:=NS]

Parameters come from config/simulator.yaml; ``robot`` sets its ``urdf_path``, ``world`` its ``world`` (a YAML
world, doc/world.md). rviz2 is started when
``headless:=false`` and it is installed.
"""

from robot_core.bringup.launch import launch_description, sim_part


def generate_launch_description():
    return launch_description(sim_part, ("robot", "simulator_config", "headless", "mode", "world", "namespace",
                                          "robots"))
