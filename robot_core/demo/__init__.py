"""Demo scenarios over the real graph: ``make demo`` = ``python -m robot_core.demo`` = ``robot-core demo``.

* ``scenarios/``: one file per scenario (what to bring up, which goals to send, how to judge them); today the
  arm demo (``scenarios/arm.py``). A new scenario is a new file there, registered in ``scenarios/__init__.py``.
* ``runner``: brings the graph up through :mod:`robot_core.bringup.run`, runs a scenario, writes the outputs.
* ``client``: the demo's own rclpy node (service calls, parameters, action goals with progress lines).
* ``report``: the record and results without ROS (tracking log, plot, summary files).
* ``pose_render``: the offscreen picture of the final pose.

The top layer with the command line: nothing in robot_core imports it. Empty on purpose, so that
``python -m robot_core.demo.pose_render`` (run in a child process per OpenGL backend) stays light.
"""
