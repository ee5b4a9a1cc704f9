"""Starting the graph: what runs (``plan``), how it runs without ``ros2 launch`` (``run`` under ``supervisor``)
and how the launch files turn the same plan into launch actions (``launch``).

The top layer: it may import every other robot_core package (it starts their nodes) and nothing imports it
except the demo. Empty on purpose: ``import robot_core.bringup.plan`` must not pull in rclpy or launch_ros.
"""
