"""``robot-core view``: the live web view of a running graph (simulated or real), served by viser on a local port.

What it reads and draws (doc/view.md): the robot's shapes from ``/robot_description`` (or ``--robot``), posed
from ``/tf`` + ``/tf_static`` (or, where no link is on /tf, from ``/joint_states`` through the description's
kinematics); frames on /tf that are not links (sensors, world objects) as labelled axes, and the shapes of rviz
markers (visualization_msgs/MarkerArray, e.g. the simulator's ``~/world_markers``) in their frames; every
``sensor_msgs/Image`` (rgb8/bgr8/mono8) in a Cameras panel; every ``geometry_msgs/WrenchStamped`` as a force arrow
at its frame; the joint trajectory controller's accepted goal (its ``~/accepted_trajectory``; else its sampled
reference) as the goal path and the tool's path as traced. The
panel lists the controllers (``list_controllers`` every 2 s), has pause / resume / step / reset buttons for the
simulator, and sliders for the joints of every active forward position controller (published on its
``~/commands``) and gripper action controller (a goal on its ``~/gripper_cmd``; robot_core.view.sliders). Until
the graph is there it says what it waits for, on the page and on stdout.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from robot_core.ros.middleware_deadlock import middleware_deadlocked

DRAW_PERIOD = 1.0 / 30.0
WAIT_REPORT_PERIOD = 5.0
STEP_SIZE = 10  # steps of the simulator node, control cycles of the embedded controller manager
EMBEDDED_SIM_SERVICES = {"pause": "/controller_manager/pause_simulation",
                         "resume": "/controller_manager/resume_simulation",
                         "step": "/controller_manager/step_simulation", "reset": "/controller_manager/reset"}


class ViewNode:
    """The rclpy side of the view: subscriptions, service clients and the drawing timer around a ViewPage."""

    def __init__(self, context: Any, *, robot: str | None = None, port: int = 8080, host: str = "127.0.0.1",
                 name: str = "robot_core_view", package_dirs: Sequence[str] = ()) -> None:
        import rclpy
        from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String
        from tf2_msgs.msg import TFMessage

        from robot_core.view.markers import MarkerStore
        from robot_core.view.page import ViewPage
        from robot_core.view.transforms import TransformTree

        self.node = rclpy.create_node(name, context=context)
        self.tree = TransformTree()
        self._lock = threading.Lock()
        self.robot = None
        self.engine: Any = None
        self.tool_link: str | None = None
        self.joint_positions: dict[str, float] = {}
        self._joint_stamp = 0.0
        self.controllers: list[Any] = []
        self._slider_key: tuple = ()
        self._slider_groups: dict[str, Any] = {}
        self._pubs: dict[str, Any] = {}
        self._grippers: dict[str, Any] = {}
        self._subs: dict[str, Any] = {}
        self._wrench: dict[str, tuple[str, np.ndarray]] = {}
        self.package_dirs = [str(d) for d in package_dirs]
        self._robot_dir = str(Path(robot).resolve().parent) if robot else None
        self.markers = MarkerStore(self._resolve_mesh)
        self._markers_drawn = 0
        self._reference: list[np.ndarray] = []
        self._goal_topics: set[str] = set()
        self._interpolation: dict[str, str] = {}  # accepted_trajectory topic -> its controller's method
        self._asked: set[str] = set()
        self._param_clients: dict[str, Any] = {}
        self.last_placed = 0
        self.source = "nothing yet"
        self._said_source = ""
        self._said_objects = 0
        self.page = ViewPage([], host=host, port=port, on_sim_button=self._sim_button, on_sliders=self._sliders)
        self.port = self.page.port
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        tf_static = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                               durability=DurabilityPolicy.TRANSIENT_LOCAL)
        n = self.node
        fast = ReentrantCallbackGroup()
        n.create_subscription(TFMessage, "/tf", self._on_tf, 100, callback_group=fast)
        n.create_subscription(TFMessage, "/tf_static", self._on_tf, tf_static, callback_group=fast)
        n.create_subscription(JointState, "/joint_states", self._on_joints, qos_profile_sensor_data,
                              callback_group=fast)
        if robot:
            self._set_robot(robot)
        else:
            n.create_subscription(String, "/robot_description", lambda m: self._set_robot(m.data), latched)
        from controller_manager_msgs.srv import ListControllers
        from robot_core_interfaces.srv import ResetSimulation, StepSimulation
        from std_srvs.srv import Trigger

        services = MutuallyExclusiveCallbackGroup()
        self._list = n.create_client(ListControllers, "/controller_manager/list_controllers",
                                     callback_group=services)
        kinds = {"pause": Trigger, "resume": Trigger, "step": StepSimulation, "reset": ResetSimulation}
        # Each button asks the simulator node; in embedded mode (no simulator node) the controller manager that
        # holds the physics answers the same requests under its own names.
        self._sim = {label: [n.create_client(kind, name, callback_group=services)
                             for name in (f"/simulator/{label}", EMBEDDED_SIM_SERVICES[label])]
                     for label, kind in kinds.items()}
        self._pending_list: Any = None
        self._waiting_since = time.monotonic()
        self._last_wait_report = 0.0
        n.create_timer(DRAW_PERIOD, self.draw, callback_group=MutuallyExclusiveCallbackGroup())
        n.create_timer(1.0, self._discover, callback_group=MutuallyExclusiveCallbackGroup())
        n.create_timer(2.0, self._poll_controllers, callback_group=services)
        print(f"robot_core view: http://{host}:{self.port}/", flush=True)

    # --- inputs ---------------------------------------------------------------------------------------------------
    def _set_robot(self, description: str) -> None:
        from robot_core.model import load_robot
        from robot_core.model.robot_model import RobotModelError
        from robot_core.physics.engine import PhysicsEngine
        from robot_core.view.scene import robot_shapes

        try:
            robot = load_robot(description, self.package_dirs or None)
            shapes = robot_shapes(robot)
            engine = PhysicsEngine(robot)
        except (RobotModelError, OSError, ValueError) as exc:
            self.node.get_logger().error(f"cannot draw the robot description: {exc}")
            self.page.show_status(f"**cannot draw the robot description**: {exc}")
            return
        with self._lock:
            self.robot, self.engine = robot, engine
            leaves = [leaf for leaf in robot.leaf_links() if leaf != robot.root_link]
            self.tool_link = max(leaves, key=lambda leaf: len(robot.chain(robot.root_link, leaf)), default=None)
        self.page.set_shapes(shapes)
        # Frame the links that have a shape (a bare frame such as rc_arm's scene camera, 1.5 m off, would shrink
        # the robot), as final_pose.png does.
        shaped = {shape.link for shape in shapes}
        pts = np.array([p[:3, 3] for n, p in engine.link_poses().items() if n in shaped or not shaped])
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        self.page.look_at((lo + hi) / 2, max(0.8, 1.6 * float(np.linalg.norm(hi - lo))))
        print(f"robot_core view: drawing '{robot.name}' ({len(shapes)} shapes on {len(self.page.links)} links)",
              flush=True)

    def _resolve_mesh(self, uri: str) -> str | None:
        """A marker's mesh as the robot's meshes are found: --package-dirs, AMENT_PREFIX_PATH, ROS_PACKAGE_PATH,
        the ament index, then the folders above the robot file (robot_core.model.package_paths)."""
        from robot_core.model.package_paths import resolve_uri

        return resolve_uri(uri, self.package_dirs, self._robot_dir)

    def _on_tf(self, msg: Any) -> None:
        from robot_core.view.transforms import pose_matrix

        for t in msg.transforms:
            tr, q = t.transform.translation, t.transform.rotation
            self.tree.set(t.header.frame_id, t.child_frame_id, pose_matrix((tr.x, tr.y, tr.z), (q.x, q.y, q.z, q.w)))

    def _on_joints(self, msg: Any) -> None:
        with self._lock:
            for name, q in zip(msg.name, msg.position, strict=False):
                self.joint_positions[name] = float(q)
            self._joint_stamp = time.monotonic()

    def _discover(self) -> None:
        """Subscribe to camera images and wrenches as they appear."""
        from geometry_msgs.msg import WrenchStamped
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import Image

        for topic, types in self.node.get_topic_names_and_types():
            if topic.endswith("/accepted_trajectory") and topic not in self._asked:
                self._ask_interpolation(topic)
            if topic in self._subs:
                continue
            if "sensor_msgs/msg/Image" in types and not topic.endswith("depth/image_raw"):
                self._subs[topic] = self.node.create_subscription(
                    Image, topic, lambda m, t=topic: self._on_image(t, m), qos_profile_sensor_data)
            elif "geometry_msgs/msg/WrenchStamped" in types:
                self._subs[topic] = self.node.create_subscription(
                    WrenchStamped, topic, lambda m, t=topic: self._on_wrench(t, m), 10)
            elif "visualization_msgs/msg/MarkerArray" in types:
                self._subscribe_markers(topic)
            elif topic.endswith("/accepted_trajectory") and "trajectory_msgs/msg/JointTrajectory" in types:
                from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
                from trajectory_msgs.msg import JointTrajectory

                latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
                self._subs[topic] = self.node.create_subscription(
                    JointTrajectory, topic, lambda m, t=topic: self._on_goal(t, m), latched)
            elif topic.endswith("/controller_state") and \
                    "control_msgs/msg/JointTrajectoryControllerState" in types:
                from control_msgs.msg import JointTrajectoryControllerState

                self._subs[topic] = self.node.create_subscription(
                    JointTrajectoryControllerState, topic, self._on_jtc_state, 10)

    def _subscribe_markers(self, topic: str) -> None:
        """A MarkerArray topic (the simulator's latched ~/world_markers): transient local when every publisher
        is, so a view started later still gets the shapes; volatile otherwise (a latched subscription would not
        match a volatile publisher)."""
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

        try:
            from visualization_msgs.msg import MarkerArray
        except ImportError:
            self._subs[topic] = None  # not asked again
            print(f"robot_core view: {topic} not drawn: visualization_msgs is not installed here (make setup)",
                  flush=True)
            return
        infos = self.node.get_publishers_info_by_topic(topic)
        if not infos:
            return  # no publisher yet: its QoS is not known; the next discovery tries again
        latched = all(i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for i in infos)
        reliable = all(i.qos_profile.reliability == ReliabilityPolicy.RELIABLE for i in infos)
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE if reliable else
                         ReliabilityPolicy.BEST_EFFORT,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)
        self._subs[topic] = self.node.create_subscription(MarkerArray, topic,
                                                          lambda m, t=topic: self._on_markers(t, m), qos)

    def _on_markers(self, topic: str, msg: Any) -> None:
        """Add, replace or delete the markers (rviz's actions and lifetimes: robot_core.view.markers), then
        redraw what changed."""
        with self._lock:
            self.markers.apply(topic, [marker_data(m) for m in msg.markers], time.monotonic())
        everything = self._redraw_markers()
        frames = sorted({d.link for d in everything if d.name.startswith(_scene_name(topic))})
        print(f"robot_core view: drawing {len(everything)} marker shapes in {len(frames)} frames from {topic}"
              f" ({', '.join(frames)})", flush=True)

    def _redraw_markers(self) -> list[Any]:
        with self._lock:
            self._markers_drawn = self.markers.version
            everything = self.markers.drawables()
        self.page.set_object_shapes(everything)
        return everything

    def _on_image(self, topic: str, m: Any) -> None:
        if m.encoding not in ("rgb8", "bgr8", "mono8") or m.height < 1 or m.width < 1:
            return
        channels = 1 if m.encoding == "mono8" else 3
        raw = np.frombuffer(bytes(m.data), np.uint8)
        if raw.size < m.height * m.step:
            return
        img = raw[:m.height * m.step].reshape(m.height, m.step)[:, :channels * m.width].reshape(m.height, m.width,
                                                                                               channels)
        img = np.repeat(img, 3, axis=2) if channels == 1 else (img[..., ::-1] if m.encoding == "bgr8" else img)
        self.page.show_image(topic, np.ascontiguousarray(img))

    def _on_wrench(self, topic: str, m: Any) -> None:
        f = m.wrench.force
        self._wrench[topic] = (m.header.frame_id, np.array([f.x, f.y, f.z]))

    def _on_goal(self, topic: str, m: Any) -> None:
        """A joint trajectory controller's ``~/accepted_trajectory``: the whole goal as the tool's path, drawn the
        moment it arrives: the controller's spline (its interpolation method, asked from its parameters) from the
        joints' current positions at rest through every waypoint, sampled by the controller's own code."""
        from robot_core.control.trajectory import JointSample, TrajectoryArrays
        from robot_core.nodes.controllers.joint_trajectory import trajectory_from_msg
        from robot_core.view.trajectory_goal import goal_tool_path

        joints = list(m.joint_names)
        points = []
        for p in m.points:  # a waypoint without all positions (velocity-only) ends the drawn path there
            if len(p.positions) != len(joints):
                break
            points.append(p)
        m.points = points
        with self._lock:
            if self.engine is None or self.tool_link is None or not points or not joints:
                return
            self._goal_topics.add(topic)
            tool = self.tool_link
            start = dict(self.joint_positions)
            method = self._interpolation.get(topic, "splines")
        trajectory = trajectory_from_msg(m)
        trajectory.start_time = 0.0  # drawn from now, whatever its header stamp
        try:
            spline = TrajectoryArrays.of(trajectory, joints).spline(
                0.0, JointSample.at_rest([start.get(j, 0.0) for j in joints]), 0.0, method)
        except ValueError as exc:  # times not increasing: the controller would not have accepted it
            print(f"robot_core view: goal from {topic} not drawn: {exc}", flush=True)
            return
        if spline is None:
            return
        path = spline.path()

        def tool_position(q: dict[str, float]) -> np.ndarray | None:
            pose = self._fk(q).get(tool)
            return None if pose is None else pose[:3, 3].copy()

        with self._lock:
            pts = goal_tool_path(start, joints, path, tool_position)
        if len(pts):
            self.page.show_goal(pts)
            print(f"robot_core view: goal of {len(points)} points from {topic} drawn ({len(pts)} tool positions, "
                  f"{method} interpolation)", flush=True)

    def _ask_interpolation(self, topic: str) -> None:
        """The controller's ``interpolation_method`` parameter (splines or none), asked once per controller: the
        goal path is drawn as the controller interpolates."""
        from rcl_interfaces.srv import GetParameters

        client = self._param_clients.get(topic)
        if client is None:
            controller = topic[:-len("/accepted_trajectory")]
            client = self._param_clients[topic] = self.node.create_client(GetParameters,
                                                                          f"{controller}/get_parameters")
        if not client.service_is_ready():
            return  # not yet: the next discovery asks again
        self._asked.add(topic)

        def done(future: Any) -> None:
            try:
                values = future.result().values
            except Exception:  # the controller went away: keep the default
                return
            if values and values[0].type == 4 and values[0].string_value:  # PARAMETER_STRING
                with self._lock:
                    self._interpolation[topic] = values[0].string_value

        client.call_async(GetParameters.Request(names=["interpolation_method"])).add_done_callback(done)

    def _on_jtc_state(self, m: Any) -> None:
        """Without an ``~/accepted_trajectory`` (upstream's controller has none): the reference (desired) joint
        positions as they are sampled, turned into the tool's desired positions, as the goal path."""
        with self._lock:
            if self.engine is None or self.tool_link is None or not m.reference.positions or self._goal_topics:
                return
            q = dict(zip(m.joint_names, m.reference.positions, strict=False))
            point = self._fk({**self.joint_positions, **q}).get(self.tool_link)
            if point is None:
                return
            self._reference.append(point[:3, 3].copy())
            del self._reference[:-500]
            pts = np.array(self._reference)
        if len(pts) >= 2 and np.linalg.norm(pts[-1] - pts[-2]) > 1e-4:
            self.page.show_goal(pts)

    def _fk(self, positions: dict[str, float]) -> dict[str, np.ndarray]:
        import mujoco

        known = {k: v for k, v in positions.items() if k in self.engine.joint_names}
        self.engine.set_joint_state(known)
        mujoco.mj_kinematics(self.engine.model, self.engine.data)
        return self.engine.link_poses()

    # --- drawing --------------------------------------------------------------------------------------------------
    def draw(self) -> None:
        """Pose every link (from /tf, else from joint states), the other frames, arrows and the tool path."""
        with self._lock:
            self.markers.expire(time.monotonic())
            stale = self.markers.version != self._markers_drawn
        if stale:
            self._redraw_markers()
        links = set(self.page.links)
        poses = self.tree.poses()
        on_tf = links & set(poses)
        if self.robot is not None and self.robot.root_link in poses:
            root = poses[self.robot.root_link]
        else:
            root = None
        if on_tf and root is not None:
            self.source = "/tf"
            missing = links - on_tf
            if missing and self.engine is not None and self.joint_positions:
                # e.g. the embedded controller manager: /tf has the world's frames and the placed root, no
                # robot_state_publisher gives the links; those come from the joint states, placed at the root
                with self._lock:
                    fk = self._fk(dict(self.joint_positions))
                to_root = root @ np.linalg.inv(fk.get(self.robot.root_link, np.eye(4)))
                poses = {**poses, **{k: to_root @ v for k, v in fk.items() if k in missing}}
                self.source = "/tf and /joint_states + the description"
        elif self.engine is not None and self.joint_positions:
            with self._lock:
                fk = self._fk(dict(self.joint_positions))
            placement = root if root is not None else np.eye(4)
            poses = {**poses, **{k: placement @ v for k, v in fk.items()}}
            self.source = "/joint_states + the description"
        else:
            self._report_waiting(links, poses)
            return
        placed = self.page.show_link_poses(poses)
        if (placed, self.source) != (self.last_placed, self._said_source):
            print(f"robot_core view: {placed} of {len(links)} links posed from {self.source}", flush=True)
            self._said_source = self.source
        self.last_placed = placed
        objects = self.page.show_object_poses({**poses, "": np.eye(4)})  # "": a marker without a frame
        objects -= "" in self.page.object_frames
        if objects != self._said_objects:
            print(f"robot_core view: {objects} object frames posed from /tf", flush=True)
            self._said_objects = objects
        others = {f: p for f, p in poses.items() if f not in links and self.robot is not None
                  and f not in self.robot.links}
        if others:
            self.page.show_frames(others)
        for topic, (frame, force) in list(self._wrench.items()):
            if frame in poses:
                m = poses[frame]
                self.page.show_arrow(topic, m[:3, 3], m[:3, :3] @ force, (230, 60, 40))
        if self.tool_link and self.tool_link in poses:
            self.page.trace(poses[self.tool_link][:3, 3])
        self.page.show_status(f"**{self.robot.name if self.robot else 'robot'}**: {self.last_placed} links posed "
                              f"from {self.source}")

    def _report_waiting(self, links: set[str], poses: dict[str, np.ndarray]) -> None:
        missing = []
        if self.robot is None:
            missing.append("/robot_description (or start with --robot FILE)")
        if not poses and not self.joint_positions:
            missing.append("/tf or /joint_states")
        elif self.robot is not None and not (links & set(poses)) and not self.joint_positions:
            missing.append(f"the robot's links on /tf (have {len(poses)} other frames) or /joint_states")
        text = "waiting for " + " and ".join(missing or ["the first poses"])
        self.page.show_status(f"**{text}**")
        now = time.monotonic()
        if now - self._last_wait_report > WAIT_REPORT_PERIOD:
            self._last_wait_report = now
            print(f"robot_core view: {text} ({now - self._waiting_since:.0f} s)", flush=True)

    # --- controllers, simulator, sliders ------------------------------------------------------------------------
    def _poll_controllers(self) -> None:
        from controller_manager_msgs.srv import ListControllers

        if self._pending_list is not None and not self._pending_list.done():
            return
        if not self._list.service_is_ready():
            self.page.show_controllers([])
            return
        self._pending_list = self._list.call_async(ListControllers.Request())
        self._pending_list.add_done_callback(self._on_controllers)

    def _on_controllers(self, future: Any) -> None:
        from robot_core.view.page import SliderJoint
        from robot_core.view.sliders import slider_groups

        try:
            result = future.result()
        except Exception:  # the service went away meanwhile: try again at the next poll
            return
        if result is None:
            return
        self.controllers = list(result.controller)
        self.page.show_controllers([(c.name, c.type, c.state) for c in self.controllers])
        groups = slider_groups((c.name, c.type, c.state,
                                list(c.required_command_interfaces) or list(c.claimed_interfaces))
                               for c in self.controllers)
        key = tuple(groups)
        if key == self._slider_key:
            return
        self._slider_key = key
        self._slider_groups = {g.controller: g for g in groups}
        for g in groups:  # the action clients are made here, in the executor, not in the page's slider thread
            if g.kind == "gripper" and g.controller not in self._grippers:
                self._grippers[g.controller] = self._gripper_client(g)
        sliders = []
        for group in groups:
            controller = group.controller
            for j in group.joints:
                joint = self.robot.joints.get(j) if self.robot is not None else None
                lim = joint.limit if joint is not None else None
                lo = lim.lower if lim is not None and lim.lower is not None else -np.pi
                hi = lim.upper if lim is not None and lim.upper is not None else np.pi
                sliders.append((controller, SliderJoint(j, float(lo), float(hi))))
        self.page.set_sliders(sliders, dict(self.joint_positions))

    def _sliders(self, controller: str, values: list[float]) -> None:
        from std_msgs.msg import Float64MultiArray

        group = self._slider_groups.get(controller)
        if group is not None and group.kind == "gripper":
            self._gripper_goal(group, values[0])
            return
        pub = self._pubs.get(controller)
        if pub is None:
            pub = self._pubs[controller] = self.node.create_publisher(Float64MultiArray, f"/{controller}/commands", 10)
        pub.publish(Float64MultiArray(data=[float(v) for v in values]))

    def _gripper_client(self, group: Any) -> tuple[Any, Any]:
        from control_msgs.action import GripperCommand, ParallelGripperCommand

        from robot_core.ros.action_client import ActionClient

        action = ParallelGripperCommand if group.action == "ParallelGripperCommand" else GripperCommand
        return ActionClient(self.node, action, f"/{group.controller}/gripper_cmd"), action

    def _gripper_goal(self, group: Any, position: float) -> None:
        """A goal to ``position`` with the controller's own max effort; each move preempts the previous goal. A
        rejection (outside the joint's range) is logged by the controller; the page says when no server answers."""
        from control_msgs.action import ParallelGripperCommand

        client, action = self._grippers.get(group.controller, (None, None))
        if client is None or not client.server_is_ready():
            self.page.show_status(f"**{group.controller}**: no action server on /{group.controller}/gripper_cmd")
            return
        goal = action.Goal()
        if action is ParallelGripperCommand:
            goal.command.name, goal.command.position = [group.joints[0]], [float(position)]
        else:
            goal.command.position, goal.command.max_effort = float(position), 0.0
        client.send_goal_async(goal)

    def _sim_button(self, name: str) -> None:
        from robot_core_interfaces.srv import ResetSimulation, StepSimulation
        from std_srvs.srv import Trigger

        client = next((c for c in self._sim[name] if c.service_is_ready()), None)
        if client is None:
            self.page.show_status(f"**{name}**: no simulator answers /simulator/{name} or "
                                  f"{EMBEDDED_SIM_SERVICES[name]} (a real robot?)")
            return
        request = {"step": lambda: StepSimulation.Request(steps=STEP_SIZE),
                   "reset": ResetSimulation.Request}.get(name, Trigger.Request)()
        client.call_async(request)
        if name == "reset":
            self.page.clear_path()


def _scene_name(topic: str) -> str:
    return "".join(c if c.isalnum() or c in "_.:-" else "_" for c in f"{topic}:")


def marker_data(m: Any) -> Any:
    """A visualization_msgs/Marker's fields as robot_core.view.markers.MarkerData (a zero quaternion, which
    rviz warns about and takes as the identity, is the identity here too)."""
    from robot_core.view.markers import MarkerData
    from robot_core.view.transforms import pose_matrix

    p, q = m.pose.position, m.pose.orientation
    quat = (q.x, q.y, q.z, q.w) if (q.x, q.y, q.z, q.w) != (0, 0, 0, 0) else (0.0, 0.0, 0.0, 1.0)
    return MarkerData(
        frame=m.header.frame_id.lstrip("/"), ns=m.ns, id=int(m.id), type=int(m.type), action=int(m.action),
        pose=pose_matrix((p.x, p.y, p.z), quat), scale=(m.scale.x, m.scale.y, m.scale.z),
        color=(m.color.r, m.color.g, m.color.b, m.color.a or 1.0),
        points=np.array([(v.x, v.y, v.z) for v in m.points], float).reshape(-1, 3),
        colors=np.array([(c.r, c.g, c.b, c.a) for c in m.colors], float).reshape(-1, 4), text=m.text,
        mesh_resource=m.mesh_resource, lifetime=m.lifetime.sec + m.lifetime.nanosec * 1e-9)


def configure_cli(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", default=None, metavar="FILE",
                        help="robot description to draw (default: the /robot_description topic)")
    parser.add_argument("--port", type=int, default=8080, help="web server port (default 8080; 0: any free port)")
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1 only)")
    parser.add_argument("--package-dirs", nargs="*", default=[], metavar="DIR",
                        help="folders searched for package:// meshes (the robot's and markers'), before "
                             "AMENT_PREFIX_PATH, ROS_PACKAGE_PATH and the ament index")


def run_cli(args: argparse.Namespace) -> int:
    return serve(robot=args.robot, port=args.port, host=args.host, package_dirs=args.package_dirs)


def serve(*, robot: str | None = None, port: int = 8080, host: str = "127.0.0.1",
          stop: threading.Event | None = None, package_dirs: Sequence[str] = ()) -> int:
    """Serve the view until SIGINT/SIGTERM (or ``stop``)."""
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import MultiThreadedExecutor

    from robot_core.ros.node_main import spin_while

    stop = stop or threading.Event()
    old = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    if robot and not Path(robot).is_file():
        print(f"error: --robot {robot}: no such file", file=sys.stderr)
        return 2
    context = Context()
    rclpy.init(context=context)
    view = spinner = None
    executor = MultiThreadedExecutor(num_threads=3, context=context)
    try:
        view = ViewNode(context, robot=robot, port=port, host=host, package_dirs=package_dirs)
        executor.add_node(view.node)
        # spin_while: an executor thread that lets an exception escape stops serving the page for good
        spinner = threading.Thread(target=spin_while, daemon=True, name="view-executor",
                                   args=(executor, lambda: context.ok() and not stop.is_set(),
                                         view.node.get_logger().error))
        spinner.start()
        # Woken every 0.1 s, as the nodes' main threads are: a SIGINT that the kernel hands to another thread (the
        # executor's, viser's) only marks the handler due, and a main thread blocked in one untimed wait never ran
        # it (the view ignored SIGINT until another signal reached the main thread: 3 of 80 stops, a CI failure).
        while not stop.wait(0.1):
            pass
    finally:
        # The spin thread must have left rclpy before the node and the context go: a thread still inside it at
        # exit aborts the process ("terminate called without an active exception", seen under load).
        executor.shutdown(timeout_sec=5)  # both waits within ViewProcess.stop's 10 s before SIGKILL
        if spinner is not None:
            spinner.join(timeout=3)
        if view is not None:
            view.page.stop()
        if not middleware_deadlocked(rclpy.logging.get_logger("view")):
            if view is not None:
                view.node.destroy_node()
            context.try_shutdown()
        for s, handler in old.items():
            signal.signal(s, handler)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    from robot_core.ros.stack_dumps import enable_stack_dumps

    enable_stack_dumps()  # as `robot-core view`: the child the bring-up starts (child_process.ViewProcess) too
    parser = argparse.ArgumentParser(prog="python -m robot_core.nodes.view", description=__doc__.splitlines()[0])
    configure_cli(parser)
    return run_cli(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

