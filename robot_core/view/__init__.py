"""The live web view without ROS: the robot's shapes (``scene``), poses from a transform tree (``transforms``), and
the browser page served by viser (``page``). The rclpy side that feeds it is :mod:`robot_core.nodes.view`."""
