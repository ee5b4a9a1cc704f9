"""Laser scanners by mj_multiRay: a wall at a known distance reads that distance, the scanner's own body does not
block it, and out-of-range rays follow REP 117 (+inf beyond range_max, -inf nearer than range_min)."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from robot_core.model import load_robot
from robot_core.physics.engine import PhysicsEngine
from robot_core.physics.laser import LaserScanner, ScanGeometry
from robot_core.physics.world import Pose, World, make_object, scene_hook

URDF = """<robot name="scanner">
  <link name="base"><collision><geometry><box size="0.3 0.3 0.1"/></geometry></collision></link>
  <link name="base_scan"><collision><geometry><cylinder radius="0.05" length="0.05"/></geometry></collision></link>
  <joint name="scan_joint" type="fixed"><parent link="base"/><child link="base_scan"/>
    <origin xyz="0.05 0 0.2" rpy="0 0 {yaw}"/></joint>
  <gazebo reference="base_scan">
    <sensor type="ray" name="lidar">
      <pose>0.01 0 0.02 0 0 0</pose>
      <ray><scan><horizontal><samples>{samples}</samples><resolution>1</resolution>
        <min_angle>{lo}</min_angle><max_angle>{hi}</max_angle></horizontal></scan>
        <range><min>{rmin}</min><max>3.5</max><resolution>0.01</resolution></range></ray>
    </sensor>
  </gazebo>
</robot>"""

WALL_X = 1.7  # the wall's near face, world x (the scanner sits at x = 0.06)
WALL_WIDTH = 1.0  # along y, centred on the scanner


def _scanner(yaw: float = 0.0, samples: int = 360, lo: float = -math.pi, hi: float = math.pi * (179 / 180),
             rmin: float = 0.12, objects: tuple = ()) -> tuple[PhysicsEngine, LaserScanner]:
    robot = load_robot(URDF.format(yaw=yaw, samples=samples, lo=lo, hi=hi, rmin=rmin))
    wall = make_object("wall", "box", (0.2, WALL_WIDTH, 1.0), pose=Pose((WALL_X + 0.1, 0.0, 0.5)), fixed=True)
    engine = PhysicsEngine(robot, scene=scene_hook(World(floor=False, objects=(wall, *objects))),
                           include_visuals=False)
    return engine, LaserScanner(robot.sensors[0], engine.model)


def test_wall_at_known_distance_reads_it_within_a_centimetre():
    engine, scanner = _scanner()
    ranges = scanner.scan(engine.model, engine.data)
    geo = scanner.geometry
    angles = geo.angles()
    origin, _ = scanner.origin(engine.data)
    np.testing.assert_allclose(origin, [0.06, 0.0, 0.22])
    ahead = int(np.argmin(np.abs(angles)))
    expected = WALL_X - origin[0]
    error = abs(ranges[ahead] - expected)
    print(f"straight ahead: {ranges[ahead]:.4f} m, wall at {expected:.4f} m, error {error * 1e3:.2f} mm")
    assert ranges[ahead] == pytest.approx(expected, abs=0.01)
    # every ray that reaches the wall's plane within range reads distance / cos(angle)
    hits = np.abs(np.tan(angles)) * expected < WALL_WIDTH / 2 - 0.01
    hits &= np.abs(angles) < math.pi / 2
    worst = float(np.max(np.abs(ranges[hits] - expected / np.cos(angles[hits]))))
    print(f"{hits.sum()} rays on the wall, worst error {worst * 1e3:.3f} mm")
    assert worst < 0.01
    # past the wall's edges, beside and behind: nothing within 3.5 m (the scanner's own housing is skipped; the
    # base lies below the fan)
    assert np.all(np.isposinf(ranges[np.abs(np.tan(angles)) * expected > WALL_WIDTH / 2 + 0.01]))
    assert np.all(np.isposinf(ranges[np.abs(angles) > math.pi / 2]))
    assert geo.angle_increment == pytest.approx(2 * math.pi / 360)


def test_scanner_turned_on_its_link_scans_in_its_own_frame():
    """The link is yawed by 90 degrees: the wall (world +x) is at the scan's -90 degrees."""
    engine, scanner = _scanner(yaw=math.pi / 2)
    ranges = scanner.scan(engine.model, engine.data)
    angles = scanner.geometry.angles()
    right = int(np.argmin(np.abs(angles + math.pi / 2)))
    origin, _ = scanner.origin(engine.data)
    assert ranges[right] == pytest.approx(WALL_X - origin[0], abs=0.01)
    assert np.isposinf(ranges[int(np.argmin(np.abs(angles)))])


def test_beyond_range_max_is_inf_and_nearer_than_range_min_is_minus_inf():
    post = make_object("post", "box", (0.04, 0.04, 1.0), pose=Pose((0.06, 0.2, 0.5)), fixed=True)
    engine, scanner = _scanner(lo=-0.2, hi=math.pi / 2, samples=3, rmin=0.3, objects=(post,))
    ranges = scanner.scan(engine.model, engine.data)
    print("ranges at -0.2, 0.685, 1.571 rad:", ranges)
    # -0.2 rad: the wall; 0.685 rad: nothing within 3.5 m; +90 degrees: the post 0.18 m away, nearer than 0.3
    assert np.isfinite(ranges[0]) and np.isposinf(ranges[1]) and np.isneginf(ranges[2])


def test_scan_follows_a_moved_wall_and_rebinds_after_a_recompile():
    engine, scanner = _scanner()
    engine.edit_scene(lambda spec: setattr(spec.body("wall"), "pos", [WALL_X + 0.6, 0.0, 0.5]))
    scanner.rebind(engine.model)
    mujoco.mj_forward(engine.model, engine.data)
    ranges = scanner.scan(engine.model, engine.data)
    ahead = int(np.argmin(np.abs(scanner.geometry.angles())))
    assert ranges[ahead] == pytest.approx(WALL_X + 0.5 - 0.06, abs=0.01)


def test_scan_geometry_matches_the_description():
    robot = load_robot(URDF.format(yaw=0, samples=5, lo=-1, hi=1, rmin=0.1))
    geo = ScanGeometry.of(robot.sensors[0])
    np.testing.assert_allclose(geo.angles(), [-1, -0.5, 0, 0.5, 1])
    assert (geo.range_min, geo.range_max, geo.samples) == (0.1, 3.5, 5)


def test_gazebo_ray_noise_is_added_to_the_hits_with_its_mean_and_stddev_and_a_seed_repeats_it():
    """``<ray><noise type="gaussian">`` (mean 5 mm, stddev 1 cm) on the wall's hits: over 200 scans the error of the
    ray straight ahead has that mean and a sample stddev within 10 % of it; misses stay +inf; the same seed gives the
    same scans."""
    text = URDF.format(yaw=0.0, samples=90, lo=-math.pi / 4, hi=math.pi / 4, rmin=0.12).replace(
        "</ray>", "<noise type=\"gaussian\"><mean>0.005</mean><stddev>0.01</stddev></noise></ray>")
    robot = load_robot(text)
    assert robot.sensors[0].params["noise_stddev"] == 0.01 and robot.sensors[0].params["noise_mean"] == 0.005
    wall = make_object("wall", "box", (0.2, WALL_WIDTH, 1.0), pose=Pose((WALL_X + 0.1, 0.0, 0.5)), fixed=True)
    engine = PhysicsEngine(robot, scene=scene_hook(World(floor=False, objects=(wall,))), include_visuals=False)
    scanner = LaserScanner(robot.sensors[0], engine.model, seed=5)
    ahead = int(np.argmin(np.abs(scanner.geometry.angles())))
    expected = WALL_X - scanner.origin(engine.data)[0][0]
    scans = np.array([scanner.scan(engine.model, engine.data).copy() for _ in range(200)])
    errors = scans[:, ahead] - expected
    print(f"ray ahead: error mean {errors.mean() * 1e3:.2f} mm, stddev {errors.std(ddof=1) * 1e3:.2f} mm "
          "(configured 5 mm, 10 mm)")
    assert errors.std(ddof=1) == pytest.approx(0.01, rel=0.10)
    assert errors.mean() == pytest.approx(0.005, abs=0.003)
    assert np.isposinf(scans[:, 0]).all()  # at -45 degrees the ray passes the wall's edge: no noise on a miss
    replay = LaserScanner(robot.sensors[0], engine.model, seed=5)
    assert np.array_equal(replay.scan(engine.model, engine.data), scans[0])
