"""ament_python package definition for robot_core (also used by pip for the venv set-up).

colcon installs the console scripts into lib/robot_core (setup.cfg) and the data files below into
share/; pip's editable install does neither, so scripts/bootstrap.py lays out the same ament prefix
inside the venv (symlinks into the checkout, and lib/robot_core launchers for these entry points).
"""

import os
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "robot_core"


def share(folder: str, pattern: str = "*") -> tuple[str, list[str]]:
    return (f"share/{PACKAGE}/{folder}", [f for f in glob(f"{folder}/{pattern}") if os.path.isfile(f)])


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=["robot_core", "robot_core.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        share("launch", "*.launch.py"),
        share("config", "*"),
        share("config/worlds", "*"),
        share("urdf", "*"),
    ],
    install_requires=["setuptools", "numpy", "PyYAML", "mujoco", "xacro"],
    extras_require={"rl": ["gymnasium"]},
    zip_safe=True,
    maintainer="robot_core developers",
    maintainer_email="robot-core@example.org",
    description="One robot description to a simulated, controllable ROS 2 robot.",
    license="Apache-2.0",
    python_requires=">=3.10",
    entry_points={
        "console_scripts": [
            "simulator = robot_core.nodes.simulator:main",
            "controller_manager = robot_core.nodes.controller_manager:main",
            # upstream's executable name: a launch file starting controller_manager/ros2_control_node needs
            # only package="robot_core"
            "ros2_control_node = robot_core.nodes.controller_manager:main",
            "spawner = robot_core.nodes.spawner:main",
            "unspawner = robot_core.nodes.spawner:unspawner_main",
            "rbc = robot_core.nodes.rbc:main",
            "robot-core = robot_core.cli:main",
        ],
    },
)
