"""The simulated scene of one run: the robot placed in its world, with the description's cameras, as engine options
and the objects' run-time state.

Why a module of its own: both ways of simulating (the simulator node, and the controller manager's embedded
physics, robot_core.control.in_process_simulator) read the same ``world``, ``keyframes``, ``base_pose``, ``floor``,
``cameras``, ``sensors`` and ``sensor_rates`` settings and must build the same MuJoCo model from them; this is the
one place that turns those settings into :class:`robot_core.physics.engine.PhysicsEngine` arguments and a
:class:`robot_core.physics.world.WorldSim` (doc/world.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from robot_core.model.robot_model import RobotModel
from robot_core.model.sensors import select_sensors
from robot_core.physics.camera import model_cameras, with_cameras
from robot_core.physics.mjcf_world import load_mjcf_world, with_robot_file_objects
from robot_core.physics.world import (
    Keyframe,
    World,
    WorldSim,
    base_pose_quaternion,
    load_keyframes,
    load_world,
    scene_hook,
)

if TYPE_CHECKING:
    from robot_core.physics.engine import PhysicsEngine


@dataclass(frozen=True)
class SceneSettings:
    """The scene parameters the simulator node and the embedded controller manager share (same names)."""

    world: str = ""  # a YAML or MJCF (.xml) world file; empty: the robot alone
    keyframes: str = ""  # a YAML file with a keyframes: section
    base_pose: Sequence[float] = ()  # x y z roll pitch yaw of the root link; empty: the origin
    floor: bool = False  # a floor even without a world
    cameras: bool = True  # the description's cameras get MuJoCo cameras (rendered by robot_core.physics.camera)
    sensors: Sequence[str] = ()  # cameras and lasers to simulate by name; empty: all
    sensor_rates: Mapping[str, float] = field(default_factory=dict)  # name -> Hz instead of the description's
    noise_seed: int = -1  # seed of every sensor's noise (robot_core.physics.noise); negative: fresh each run
    mjcf_cameras: Sequence[str] = ()  # the MuJoCo model's own cameras to publish; ("*",): all
    mjcf_camera_size: tuple[int, int] = (640, 480)
    mjcf_camera_rate: float = 10.0
    sensor_topics: str = "name"  # the cameras' and lasers' topics: name or description (robot_core.ros.sim_sensors)

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> SceneSettings:
        """From a node's parameters under these names (missing ones: the defaults)."""
        d = cls()
        return cls(world=str(params.get("world", d.world) or ""), keyframes=str(params.get("keyframes", "") or ""),
                   base_pose=tuple(float(v) for v in params.get("base_pose", ()) or ()),
                   floor=bool(params.get("floor", d.floor)), cameras=bool(params.get("cameras", d.cameras)),
                   sensors=tuple(str(n) for n in params.get("sensors", ()) or ()),
                   sensor_rates=dict(params.get("sensor_rates", {}) or {}),
                   noise_seed=int(params.get("noise_seed", d.noise_seed)),
                   mjcf_cameras=tuple(str(n) for n in params.get("mjcf_cameras", ()) or ()),
                   mjcf_camera_size=(int(params.get("mjcf_camera_width", d.mjcf_camera_size[0])),
                                     int(params.get("mjcf_camera_height", d.mjcf_camera_size[1]))),
                   mjcf_camera_rate=float(params.get("mjcf_camera_rate", d.mjcf_camera_rate)),
                   sensor_topics=str(params.get("sensor_topics", d.sensor_topics)).strip().lower())


class Scene:
    """Settings read and checked (files parsed) before the engine exists; then :meth:`engine_options` for the
    engine and :meth:`world_sim` on it. Errors: RobotModelError naming the file, line and element (a world or
    keyframes file), ValueError naming the parameter (``base_pose``, ``sensors``, ``sensor_rates``). Warnings of
    the files are issued as RobotModelWarning; the caller routes them to its log."""

    def __init__(self, settings: SceneSettings):
        s = self.settings = settings
        self.world: World | None = None
        if s.world:
            self.world = load_mjcf_world(s.world) if s.world.lower().endswith(".xml") else load_world(s.world)
        self.keyframes: dict[str, Keyframe] | None = load_keyframes(s.keyframes) if s.keyframes else None
        self.base: np.ndarray | None = base_pose_quaternion(s.base_pose) if len(s.base_pose) else None

    @property
    def placed(self) -> bool:
        """The robot's root gets a frame in the world (world_frame -> root on /tf_static)."""
        return self.world is not None or self.base is not None

    def select_sensors(self, robot: RobotModel) -> None:
        """Keep the cameras and lasers ``sensors`` names, at the ``sensor_rates`` (robot.sensors is replaced)."""
        robot.sensors = select_sensors(robot.sensors, list(self.settings.sensors), dict(self.settings.sensor_rates))

    def engine_options(self, robot: RobotModel, fixed: bool) -> dict[str, Any]:
        """PhysicsEngine keyword arguments: the scene hook (floor, objects, placed base, cameras), the start pose of
        a free base, and no visual geoms (cameras show the collision shapes, as the simulator always did).
        ``fixed``: whether the engine welds the root."""
        s = self.settings
        hook = with_cameras(scene_hook(self.world, robot.root_link, self.base, floor=s.floor),
                            robot.sensors if s.cameras else [])
        return {"scene": hook, "include_visuals": False, "initial_base_pose": None if fixed else self.base,
                "sensor_seed": self.seed}

    @property
    def seed(self) -> int | None:
        """The sensors' noise seed; None: unrepeatable."""
        return self.settings.noise_seed if self.settings.noise_seed >= 0 else None

    def add_model_cameras(self, robot: RobotModel, engine: PhysicsEngine, world_frame: str = "world") -> None:
        """Append the ``mjcf_cameras`` (cameras the MJCF robot or world defines itself) to ``robot.sensors`` as
        camera sensors (robot_core.physics.camera.model_cameras); call before the sensors' publishers are made."""
        s = self.settings
        if s.mjcf_cameras and s.cameras:
            robot.sensors = [*robot.sensors, *model_cameras(engine.model, list(s.mjcf_cameras), *s.mjcf_camera_size,
                                                            s.mjcf_camera_rate, world_frame)]

    def world_sim(self, engine: PhysicsEngine) -> WorldSim:
        """The objects' run-time state on ``engine`` (with an MJCF robot file's own scenery)."""
        return WorldSim(engine, with_robot_file_objects(self.world, engine), self.keyframes)
