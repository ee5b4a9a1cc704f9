"""ROS plumbing the node classes share: start-up and shutdown, parameters, message conversion and templates,
the controller manager's loop, hardware I/O and outbox, real-time thread settings."""
