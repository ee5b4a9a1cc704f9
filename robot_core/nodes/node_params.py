"""The parameter tables of the simulator, controller manager and rbc nodes: the one place they are declared.

ROS-free (no rclpy import), so ``scripts/gen_docs.py`` renders the doc pages' tables from these lists and the nodes
declare, describe and validate from the same entries (robot_core.ros.parameters.declare_specs).
"""

from __future__ import annotations

from dataclasses import replace

from robot_core.parameter_spec import ParamSpec as P
from robot_core.ros.realtime import DEFAULT_THREAD_PRIORITY

# The scene around the robot (robot_core.physics.scene): the same names, meaning and checks for the simulator node
# and the controller manager's embedded physics.
SCENE_PARAMS: tuple[P, ...] = (
    P("world", "string", "", "a world file (doc/world.md): YAML (floor, objects, keyframes) or MJCF (.xml); "
      "empty: the robot alone, as before"),
    P("base_pose", "double[]", [], "x y z roll pitch yaw of the robot's root link in the world (fixed base: "
      "where it is welded; free base: where it starts); empty: the origin", unit="m, rad"),
    P("keyframes", "string", "", "a YAML file with a keyframes: section (as in a world file) for ~/reset, "
      "besides the world file's own"),
    P("floor", "bool", False, "a floor plane at z = 0 even without a world (or with one that has none), e.g. for a "
      "mobile base with fixed_base: false"),
    P("cameras", "bool", True, "simulate the description's camera and depth-camera sensors (rendered off-screen; "
      "doc/sensors.md)"),
    P("lasers", "bool", True, "simulate the description's ray/gpu_ray (lidar) sensors as LaserScan topics "
      "(doc/sensors.md)"),
    P("sensors", "string[]", [], "names of the description's cameras and lasers to simulate (others are not); "
      "empty: all of them. A name the description does not have is refused at start"),
    P("mjcf_cameras", "string[]", [], "cameras the MJCF robot or world file defines itself (<camera name=...>) to "
      "publish like the description's camera sensors (<name>/image_raw, camera_info); ['*']: every named one; "
      "empty: none. A name the model does not have is refused at start (doc/sensors.md#mjcf-cameras)"),
    P("mjcf_camera_width", "int", 640, "image width of the mjcf_cameras (MJCF gives no resolution)", minimum=1,
      unit="px"),
    P("mjcf_camera_height", "int", 480, "image height of the mjcf_cameras", minimum=1, unit="px"),
    P("mjcf_camera_rate", "double", 10.0, "rate of the mjcf_cameras, simulated time", minimum=0.0,
      exclusive_min=True, unit="Hz"),
    P("sensor_topics", "string", "name", "topics of the cameras and lasers: 'name' = <sensor>/image_raw, "
      "<sensor>/scan, ...; 'description' = what the description's Gazebo plugin would publish (<ros><namespace>, "
      "<remapping>, <topic>, ROS 1 topicName; doc/sensors.md#topic-names)", choices=("name", "description")),
    P("noise_seed", "int", -1, "seed of the sensors' noise (the description's <noise> and *_noise_stddev params; "
      "doc/sensors.md#noise): the same seed gives the same noise; negative: a fresh seed each run"),
    P("frame_prefix", "string", "", "put before every frame of the robot on /tf, /tf_static and in the sensors' "
      "headers (robot_state_publisher's frame_prefix), e.g. 'arm1/', so two robots' frames do not clash; the world "
      "frame and the world's objects keep their names (doc/namespaces.md)"),
    P("sensor_rates.<sensor>", "double", None, "update rate of a camera or laser instead of the description's "
      "(e.g. a 2448 x 2050 camera at 1 Hz on a machine without GPU); in YAML a map sensor_rates: {cam: 1.0}",
      unit="Hz", family=True),
)

SIMULATOR_PARAMS: tuple[P, ...] = (
    P("robot_description", "string", "", "URDF (or xacro, or MJCF) text, as robot_state_publisher takes it"),
    P("urdf_path", "string", "", "a .urdf / .xacro / .g / MJCF file, used when robot_description is empty"),
    P("robots", "string", "", "a robots file (YAML, doc/namespaces.md#several-robots-in-one-simulator): several "
      "robots in this one world, each with its namespace, base pose and topic pair; replaces robot_description and "
      "urdf_path"),
    P("robot_description_topic", "string", "robot_description",
      "no description given: wait for it on this topic (transient local); given: publish it there"),
    P("publish_robot_description", "bool", True, "publish the description we were given (latched)"),
    P("package_dirs", "string[]", [], "extra roots for package:// (besides the ament index, AMENT_PREFIX_PATH "
      "and ROS_PACKAGE_PATH)"),
    P("fixed_base", "bool", True, "weld the root link to the world (false: free base)"),
    P("timestep", "double", 0.001, "physics step", minimum=0.0, exclusive_min=True, unit="s"),
    P("real_time_factor", "double", 1.0, "simulated s per wall s; 0 = as fast as possible",
      read_only=False, minimum=0.0),
    P("publish_rate", "double", 250.0, "joint states rate, simulated time", minimum=0.0, exclusive_min=True,
      unit="Hz"),
    P("clock_rate", "double", 1000.0, "/clock rate, simulated time (at most every step)", minimum=0.0,
      exclusive_min=True, unit="Hz"),
    P("publish_tf", "bool", True, "publish /tf of the moving joints and /tf_static of the fixed ones"),
    P("tf_rate", "double", 100.0, "/tf rate, simulated time", minimum=0.0, exclusive_min=True, unit="Hz"),
    P("world_frame", "string", "world", "parent frame of a floating base's root in /tf"),
    P("status_rate", "double", 10.0, "~/status rate (wall time); also the rate at which clock, states and tf "
      "are repeated while paused", minimum=0.0, exclusive_min=True, unit="Hz"),
    P("joint_states_topic", "string", "robot_joint_states", "joint states out (upstream topic_based's name; relative: "
      "follows the node's namespace, doc/namespaces.md)"),
    P("sensor_states_topic", "string", "robot_sensor_states", "the ros2_control sensors' values out "
      "(control_msgs/DynamicJointState, with the joint states; only for a robot with sensors)"),
    P("joint_commands_topic", "string", "robot_joint_commands", "joint commands in (upstream topic_based's "
      "name; relative: follows the node's namespace)"),
    P("start_paused", "bool", False, "start paused (~/resume or ~/step to run)"),
    P("command_timeout", "double", 0.5, "wall seconds without a command message after which velocity-commanded "
      "joints stop (velocity 0) and effort-commanded ones hold their position; 0 = off", minimum=0.0, unit="s"),
    P("max_step_request", "int", 1_000_000, "most steps one ~/step request may ask for", minimum=1),
    P("contacts_rate", "double", 0.0, "~/contacts rate, simulated time; 0 = off", minimum=0.0, unit="Hz"),
    *SCENE_PARAMS,
    P("initial_positions.<joint>", "double", None, "start (and reset) position of a joint; in YAML a map "
      "initial_positions: {joint1: 0.3}", unit="rad or m", family=True),
    P("gains.<joint>.<kp|kd|kv>", "double", None, "servo gains overriding the engine's tuned ones and those a "
      "MuJoCo description gives (doc/ros2_control_blocks.md)", family=True),
)

CONTROLLER_MANAGER_PARAMS: tuple[P, ...] = (
    P("update_rate", "int", 100, "control loop rate (simulated seconds with use_sim_time)", minimum=1, unit="Hz"),
    P("robot_description", "string", "", "the URDF; empty: the robot_description topic (transient local)"),
    P("robot_description_file", "string", "", "a URDF / xacro / .g / MJCF file instead of robot_description"),
    P("package_dirs", "string[]", [], "extra roots for package:// (besides the ament index, AMENT_PREFIX_PATH "
      "and ROS_PACKAGE_PATH)"),
    P("publish_robot_description", "bool", True, "with robot_description_file: publish the robot as URDF text on "
      "/robot_description (transient local) for rqt, MoveIt, rviz"),
    P("hardware_mode", "string", "", "'' uses each <ros2_control> block's plugin; 'embedded' runs the physics in "
      "this process (lockstep); 'topic' forces the topic-based protocol (case and blanks ignored)",
      choices=("", "topic", "embedded"), fold_case=True),
    P("state_timeout", "double", -1.0, "wall-clock seconds without joint states before a topic-based component "
      "fails (negative, e.g. -1: the hardware parameter state_timeout or 1 s; 0 disables)", unit="s"),
    P("real_time_factor", "double", 1.0, "embedded mode: simulated s per wall s; 0 = as fast as possible",
      minimum=0.0),
    P("start_paused", "bool", False, "embedded mode: start paused"),
    P("publish_clock", "bool", True, "embedded mode: publish /clock"),
    P("sim_timestep", "double", 0.001, "embedded mode: physics step", minimum=0.0, exclusive_min=True, unit="s"),
    *(replace(spec, description=f"embedded mode: {spec.description}") for spec in SCENE_PARAMS
      if spec.name != "keyframes"),
    P("keyframes", "string", "", "embedded mode: a YAML file with a keyframes: section (as in a world file) for "
      "~/reset, besides the world file's own"),
    P("fixed_base", "bool", True, "embedded mode: weld the root link to the world (false: free base, e.g. a mobile "
      "robot on a floor; its pose is on /tf as world_frame -> root)"),
    P("contacts_rate", "double", 0.0, "embedded mode: ~/contacts rate, simulated time (whole control cycles); "
      "0 = off", minimum=0.0, unit="Hz"),
    P("tf_rate", "double", 50.0, "embedded mode: rate of the free objects' and a free base's /tf and of "
      "~/object_states, simulated time (whole control cycles)", minimum=0.0, exclusive_min=True, unit="Hz"),
    P("world_frame", "string", "world", "embedded mode: the world's tf frame (parent of the objects and of a "
      "placed robot's root)"),
    P("initial_positions.<joint>", "double", None, "embedded mode: start (and reset) position of a joint, as the "
      "simulator's; in YAML a map initial_positions: {joint1: 0.3}", unit="rad or m", family=True),
    P("gains.<joint>.<kp|kd|kv>", "double", None, "embedded mode: servo gains overriding the engine's tuned ones, "
      "as the simulator's", family=True),
    P("overrun_report_period", "double", 5.0, "at most one overrun warning per this many seconds",
      read_only=False, minimum=0.0, unit="s"),
    P("publisher_duty_cycle", "double", 0.5, "share of wall time the thread publishing controller outputs and "
      "/clock may use (newest value wins when it cannot keep up); 1.0 = no limit", minimum=0.0,
      exclusive_min=True, maximum=1.0),
    P("thread_priority", "int", DEFAULT_THREAD_PRIORITY, "SCHED_FIFO priority of the update loop thread, as "
      "ros2_control_node; 0 = normal scheduling; outside the system's SCHED_FIFO range (1-99 on Linux) the loop "
      "runs with normal scheduling and a warning"),
    P("cpu_dma_latency", "int", -1, ">= 0 holds a PM QoS request (/dev/cpu_dma_latency) keeping every CPU's "
      "wake-up latency at most this many µs while the manager runs; 0 = idle CPUs poll; -1 = leave the system "
      "as it is (any negative value)", unit="µs"),
    P("cpu_affinity", "int|int[]", None, "CPUs the update loop thread is pinned to (unset: no pinning)",
      minimum=0, optional=True),
    P("lock_memory", "bool", None, "lock the process's memory (unset: true on a PREEMPT_RT kernel)",
      optional=True),
    P("hardware_components_initial_state.unconfigured", "string[]", None,
      "hardware components that start unconfigured instead of active (upstream's parameter)", optional=True),
    P("hardware_components_initial_state.inactive", "string[]", None,
      "hardware components that start inactive instead of active (upstream's parameter)", optional=True),
    P("<controller>.type", "string", None, "a controller's type, as ros2_control (set by spawner -t)",
      family=True),
    P("<controller>.params_file", "string[]", None, "parameter file(s) loaded into the controller's node (set by "
      "spawner -p; a string or a list)", family=True),
    P("<controller>.node_options_args", "string[]", None, "ROS arguments of the controller's node (spawner "
      "--controller-ros-args)", family=True),
)

RBC_PARAMS: tuple[P, ...] = (
    P("robot_description", "string", "", "URDF (or xacro, or MJCF) text"),
    P("urdf_path", "string", "", "URDF / xacro / .g / MJCF file, used when robot_description is empty"),
    P("robot_description_topic", "string", "robot_description",
      "no description given: wait for the URDF on this topic (transient local)"),
    P("package_dirs", "string[]", [], "extra roots for package://"),
    P("rate", "double", 100.0, "coupler cycle, steady (wall) time", minimum=0.0, exclusive_min=True, unit="Hz"),
    P("stale_timeout", "double", 0.5, "seconds without an update after which a state var is stale", minimum=0.0,
      exclusive_min=True, unit="s"),
    P("stale_as_nan", "bool", True, "stale values are NaN in the ~/<var> outputs"),
    P("publish_state_on_message", "bool", True, "publish the ~/<var> outputs fed by a state topic as soon as a "
      "message arrives; the cycle then repeats one only when no message refreshed it for 1/heartbeat_rate s; "
      "false: every output once per cycle"),
    P("heartbeat_rate", "double", 10.0, "see publish_state_on_message", minimum=0.0, exclusive_min=True,
      unit="Hz"),
    P("joint_state_match", "string", "auto", "JointState states by joint name ('index': by tag index)",
      choices=("auto", "index")),
    P("position_vars", "string[]", ["q_ref:q"], "position-reference cmd vars and their measured state var "
      "('cmd:state'); reachers add increments to them"),
    P("max_position_lead", "double", 0.1, "clip of a position reference around the measurement (<= 0: no clip)",
      unit="rad or m"),
    P("output_rate", "double", 50.0, "rate of reacher/extender outputs (wrenches, /tf)", minimum=0.0,
      exclusive_min=True, unit="Hz"),
    P("feedback_rate", "double", 20.0, "rate of action feedback", minimum=0.0, exclusive_min=True, unit="Hz"),
    P("apply_wrench_service", "string", "simulator/apply_wrench", "the service ContactSimulation in mode "
      "'service' calls"),
    P("frame_prefix", "string", "", "put before the robot's frames in the reacher/extender outputs (the contact "
      "frames on /tf, the wrenches' frame ids), as the robot's own tf has them, e.g. 'arm1/'; the bringup sets "
      "<namespace>/"),
    P("instance_threads", "int", 16, "threads of the instance executor (a running goal holds one)", minimum=2),
    P("preload_kinematics", "bool", True, "build the kinematics model at start (in the background) instead of at "
      "the first VF/CS/TC use"),
    P("documented_l2_service", "string", "/rbc_l2_ctrl", "also serve level-2 control here as "
      "rbc_msgs_srvs/srv/RbcL2Ctrl, the name and type of the RBC's own documentation ('' = not served)"),
    P("instance_processes", "bool", False, "the way of a create_re that names none: each reacher/extender as its "
      "own process on the shared-memory var table (false: as a node in the rbc process); 'VF process' / "
      "'VF in-process' choose per instance; see doc/nodes/rbc.md for the measurement behind the default"),
)

NODE_PARAMS: dict[str, tuple[P, ...]] = {
    "simulator": SIMULATOR_PARAMS,
    "controller_manager": CONTROLLER_MANAGER_PARAMS,
    "rbc": RBC_PARAMS,
}
