"""Camera sensors rendered by MuJoCo off-screen: a coloured box at a known pose lands where CameraInfo's pinhole
puts it, its face reads its known distance in the depth image, and the frame conventions (ROS optical frame vs
MuJoCo's camera) hold for a camera turned on its link."""

from __future__ import annotations

import math
import threading

import mujoco
import numpy as np
import pytest

from robot_core.model import load_robot
from robot_core.physics.camera import (
    OPTICAL_IN_SENSOR,
    CameraFrame,
    CameraIntrinsics,
    CameraRenderer,
    add_cameras,
    linear_depth,
    make_gl_context,
    optical_pose,
)
from robot_core.physics.engine import PhysicsEngine
from robot_core.physics.world import Pose, World, make_object, scene_hook

URDF = """<robot name="cam">
  <link name="base"/><link name="cam_link"/>
  <joint name="mount" type="fixed"><parent link="base"/><child link="cam_link"/>
    <origin xyz="0.2 -0.1 1.0" rpy="0 0 0.3"/></joint>
  <gazebo reference="cam_link">
    <sensor type="{kind}" name="cam">
      <pose>0.1 0 0.05 0.1 0.2 -0.1</pose>
      <camera><horizontal_fov>1.2</horizontal_fov><image><width>{w}</width><height>{h}</height>{image}</image>
        <clip><near>0.05</near><far>20</far></clip>{extra}</camera>
    </sensor>
  </gazebo>
</robot>"""

# The box's front face centre in the optical frame: right, up (y down) and ahead of the camera.
FACE_OPTICAL = np.array([0.35, -0.2, 2.5])
BOX = (0.4, 0.3, 0.02)  # full extents along the optical x, y, z: a thin plate facing the camera


def _gl_available() -> str | None:
    try:
        make_gl_context(16, 16).free()
    except Exception as exc:  # the reason goes into the skip message
        return f"{type(exc).__name__}: {exc}"
    return None


pytestmark = pytest.mark.skipif(_gl_available() is not None, reason=f"no off-screen OpenGL: {_gl_available()}")


def _engine(kind: str = "depth", w: int = 640, h: int = 480, image: str = "",
            extra: str = "") -> tuple[PhysicsEngine, np.ndarray]:
    """The robot with its camera and a red plate whose face centre is at FACE_OPTICAL; returns the engine and the
    optical frame's world pose. ``image``/``extra``: more XML inside the camera's ``<image>`` / ``<camera>``."""
    robot = load_robot(URDF.format(kind=kind, w=w, h=h, image=image, extra=extra))
    sensor = robot.sensors[0]
    link_world = robot.joints["mount"].origin.matrix()
    opt_world = link_world @ optical_pose(sensor)
    centre = opt_world @ np.append(FACE_OPTICAL + np.array([0.0, 0.0, BOX[2] / 2]), 1.0)
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(opt_world[:3, :3]).reshape(9))
    plate = make_object("plate", "box", BOX, pose=Pose(tuple(centre[:3]), tuple(quat)), color=[1, 0, 0, 1],
                        fixed=True)
    world_hook = scene_hook(World(objects=(plate,)))

    def scene(spec: mujoco.MjSpec) -> None:
        world_hook(spec)
        add_cameras(spec, robot.sensors)

    return PhysicsEngine(robot, scene=scene, include_visuals=False), opt_world


def _render(engine: PhysicsEngine, seed: int | None = None) -> CameraFrame:
    frames: list[CameraFrame] = []
    errors: list[str] = []
    done = threading.Event()
    renderer = CameraRenderer(engine.robot.sensors, lambda f: (frames.append(f), done.set()),
                              on_error=lambda e: (errors.append(e), done.set()), seed=seed)
    try:
        renderer.submit(engine.model, engine.data, 123)
        assert done.wait(60.0), "no frame within 60 s"
    finally:
        renderer.stop()
    assert not errors, errors
    return frames[0]


def test_box_lands_where_the_pinhole_of_camera_info_puts_it_and_depth_reads_its_distance():
    engine, _ = _engine()
    frame = _render(engine)
    intr = CameraIntrinsics.of(engine.robot.sensors[0])
    assert frame.rgb.shape == (480, 640, 3) and frame.depth.shape == (480, 640) and frame.stamp_ns == 123
    rgb = frame.rgb.astype(int)
    red = (rgb[..., 0] > 60) & (rgb[..., 0] > 2 * rgb[..., 1]) & (rgb[..., 0] > 2 * rgb[..., 2])
    face = red & (np.abs(frame.depth - FACE_OPTICAL[2]) < 0.01)
    assert face.sum() > 500, f"plate face not found ({red.sum()} red pixels)"
    rows, cols = np.nonzero(face)
    u, v = intr.project(FACE_OPTICAL)
    err = math.hypot(cols.mean() - u, rows.mean() - v)
    print(f"plate face centre: image ({cols.mean():.2f}, {rows.mean():.2f}) px, pinhole ({u:.2f}, {v:.2f}) px, "
          f"error {err:.2f} px")
    assert err < 2.0
    # its extent too: the plate's 0.4 m width at 2.5 m is fx * 0.4 / 2.5 px wide
    width_px = cols.max() - cols.min() + 1
    print(f"plate width {width_px} px, pinhole {intr.fx * BOX[0] / FACE_OPTICAL[2]:.1f} px")
    assert width_px == pytest.approx(intr.fx * BOX[0] / FACE_OPTICAL[2], abs=2.0)
    centre_depth = float(frame.depth[round(v), round(u)])
    print(f"depth at the face centre {centre_depth:.4f} m, known {FACE_OPTICAL[2]:.4f} m")
    assert centre_depth == pytest.approx(FACE_OPTICAL[2], abs=0.005)
    assert np.isinf(frame.depth[0, 0]) or frame.depth[0, 0] < 20.0  # the sky is +inf, the floor a distance
    assert np.all(frame.depth[np.isfinite(frame.depth)] >= 0.05)


def test_optical_frame_is_z_forward_x_right_y_down():
    """Turn the expectation around: a point right of and below the optical axis is right and below in the image."""
    assert np.allclose(OPTICAL_IN_SENSOR @ [0, 0, 1], [1, 0, 0])  # optical z = sensor x (forward)
    assert np.allclose(OPTICAL_IN_SENSOR @ [1, 0, 0], [0, -1, 0])  # optical x = -sensor y (right)
    assert np.allclose(OPTICAL_IN_SENSOR @ [0, 1, 0], [0, 0, -1])  # optical y = -sensor z (down)
    intr = CameraIntrinsics.from_fov(640, 480, 1.2)
    u, v = intr.project([0.35, -0.2, 2.5])
    assert u > intr.cx and v < intr.cy  # right of centre, above it (y up is negative)


def test_camera_info_intrinsics_follow_the_field_of_view():
    intr = CameraIntrinsics.from_fov(640, 480, 1.2)
    assert intr.fx == pytest.approx(320 / math.tan(0.6))  # horizontal: w / (2 tan(hfov/2))
    assert intr.fy == pytest.approx(480 / (2 * math.tan(intr.fovy / 2)))
    assert (intr.cx, intr.cy) == (319.5, 239.5)
    assert intr.k()[0] == intr.fx and intr.p()[6] == intr.cy


def test_linear_depth_inverts_the_reversed_z_projection():
    near, far = 0.05, 20.0
    z = np.array([0.05, 0.5, 2.5, 19.0, 20.0])
    buffer = (far / (far - near)) * (near / z) - near / (far - near)
    np.testing.assert_allclose(linear_depth(buffer.astype(np.float32), near, far), z, rtol=1e-5)


def test_rgb_only_camera_has_no_depth_and_the_renderer_follows_an_edited_scene():
    engine, _ = _engine(kind="camera", w=160, h=120)
    frames: list[CameraFrame] = []
    renderer = CameraRenderer(engine.robot.sensors, frames.append)
    try:
        renderer.submit(engine.model, engine.data, 1)
        assert renderer.idle(60.0) and renderer.error is None, renderer.error
        # removing an object recompiles the model: the same renderer picks up the new one (the plate is gone)
        engine.edit_scene(lambda spec: spec.delete(spec.body("plate")))
        renderer.submit(engine.model, engine.data, 2)
        assert renderer.idle(60.0) and renderer.error is None, renderer.error
    finally:
        renderer.stop()
    first, second = frames
    assert first.depth is None and first.rgb.shape == (120, 160, 3)

    def red(frame: CameraFrame) -> int:
        rgb = frame.rgb.astype(int)
        return int(((rgb[..., 0] > 60) & (rgb[..., 0] > 2 * rgb[..., 1]) & (rgb[..., 0] > 2 * rgb[..., 2])).sum())

    assert red(first) > 50 and red(second) == 0


def test_gazebo_camera_noise_has_its_stddev_and_mean_and_a_seed_repeats_it():
    """``<camera><noise>`` (mean 0.01, stddev 0.02 of the 0..1 intensity, as Gazebo): the noisy image minus the
    noise-free one, on pixels away from 0 and 255 (where clipping cuts the noise), has mean 0.01 x 255 and a sample
    stddev within 10 % of 0.02 x 255; the same seed renders the same image."""
    noise = '<noise type="gaussian"><mean>0.01</mean><stddev>0.02</stddev></noise>'
    clean = _render(_engine(kind="camera", w=160, h=120)[0]).rgb.astype(float)
    engine, _ = _engine(kind="camera", w=160, h=120, extra=noise)
    noisy = _render(engine, seed=3).rgb
    diff = (noisy.astype(float) - clean)[(clean > 30) & (clean < 225)]
    print(f"camera noise: mean {diff.mean():.2f}, stddev {diff.std(ddof=1):.2f} (configured {0.01 * 255:.2f}, "
          f"{0.02 * 255:.2f}) over {diff.size} values")
    assert diff.size > 10000
    assert diff.std(ddof=1) == pytest.approx(0.02 * 255, rel=0.10)
    assert diff.mean() == pytest.approx(0.01 * 255, abs=0.3)
    assert np.array_equal(_render(engine, seed=3).rgb, noisy)
    assert not np.array_equal(_render(engine, seed=4).rgb, noisy)


MJCF_CAMERA_WORLD = """<mujoco model="cam_world">
  <worldbody>
    <light pos="0 0 3" dir="0 0 -1"/>
    <camera name="overview" pos="2.0 -1.0 1.5" xyaxes="0.4472 0.8944 0 -0.4 0.2 0.8944" fovy="50"/>
    <body name="mast" pos="0 1 0"><camera name="on_mast" pos="0 0 1" euler="90 0 0"/></body>
    <geom name="marker" type="sphere" size="0.06" pos="{x} {y} {z}" rgba="1 0 0 1"/>
  </worldbody>
</mujoco>"""


def test_cameras_of_an_mjcf_world_become_camera_sensors_whose_pinhole_matches_the_rendering(tmp_path):
    """``mjcf_cameras``: the world file's own ``<camera>``s get a SensorSpec (size from the parameters, field of
    view from fovy, pose on its body) whose CameraInfo pinhole puts a red ball where MuJoCo renders it (within
    2 px); an unknown name is refused naming the parameter and the model's cameras."""
    from robot_core.physics.camera import CameraIntrinsics, model_cameras
    from robot_core.physics.scene import Scene, SceneSettings

    target = np.array([0.6, 0.3, 0.4])
    world = tmp_path / "cam_world.xml"
    world.write_text(MJCF_CAMERA_WORLD.format(x=target[0], y=target[1], z=target[2]))
    robot = load_robot('<robot name="r"><link name="base"/></robot>')
    scene = Scene(SceneSettings(world=str(world), mjcf_cameras=("overview",), mjcf_camera_size=(320, 240)))
    engine = PhysicsEngine(robot, **scene.engine_options(robot, True))
    scene.add_model_cameras(robot, engine)
    (cam,) = robot.sensors
    assert (cam.name, cam.link, cam.params["width"], cam.params["height"]) == ("overview", "world", 320, 240)
    intr = CameraIntrinsics.of(cam)
    assert math.degrees(intr.fovy) == pytest.approx(50.0)
    opt = optical_pose(cam)
    point = np.linalg.inv(opt) @ np.append(target, 1.0)
    u, v = intr.project(point[:3])
    frame = _render(engine)
    rgb = frame.rgb.astype(int)
    red = (rgb[..., 0] > 40) & (rgb[..., 0] > 2 * rgb[..., 1]) & (rgb[..., 0] > 2 * rgb[..., 2])  # lit or shaded
    rows, cols = np.nonzero(red)
    centre = ((cols.min() + cols.max()) / 2, (rows.min() + rows.max()) / 2)  # of the ball's outline
    print(f"ball at ({centre[0]:.2f}, {centre[1]:.2f}) px, pinhole says ({u:.2f}, {v:.2f}); {red.sum()} px")
    assert red.sum() > 50
    assert abs(centre[0] - u) < 2.0 and abs(centre[1] - v) < 2.0
    on_mast = model_cameras(engine.model, ["*"], 64, 48, 5.0)
    assert {c.name: c.link for c in on_mast} == {"overview": "world", "on_mast": "mast"}
    with pytest.raises(ValueError, match=r"'mjcf_cameras' names 'nope', .* \(it has: on_mast, overview\)"):
        model_cameras(engine.model, ["nope"], 64, 48, 5.0)
