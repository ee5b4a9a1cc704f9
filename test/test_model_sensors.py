"""Gazebo ``<sensor>`` blocks -> ``RobotModel.sensors``: classic and gz forms, xacro, third-party robots, and the
errors and warnings that name the file and line at fault."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from robot_files import ERD_ROBOTS, erd_robot

from robot_core.model import RobotModelError, RobotModelWarning, load_robot
from robot_core.model.sensors import select_sensors, sensors_of

LINKS = """
  <link name="base_link"/>
  <link name="base_scan"/>
  <link name="camera_link"/>
  <link name="arm"/>
  <joint name="scan_joint" type="fixed"><parent link="base_link"/><child link="base_scan"/>
    <origin xyz="-0.03 0 0.17"/></joint>
  <joint name="camera_joint" type="fixed"><parent link="base_link"/><child link="camera_link"/>
    <origin xyz="0.07 0 0.1"/></joint>
  <joint name="wrist" type="revolute"><parent link="base_link"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
"""

# TurtleBot3 (Gazebo classic, ROS 2 gazebo_ros plugins) style.
CLASSIC = """
  <gazebo reference="base_scan">
    <sensor type="ray" name="hls_lfcd_lds">
      <always_on>true</always_on>
      <visualize>false</visualize>
      <pose>-0.064 0 0.121 0 0 0</pose>
      <update_rate>5</update_rate>
      <ray>
        <scan><horizontal><samples>360</samples><resolution>1.000000</resolution>
          <min_angle>0.000000</min_angle><max_angle>6.280000</max_angle></horizontal></scan>
        <range><min>0.120000</min><max>3.5</max><resolution>0.015000</resolution></range>
      </ray>
      <plugin name="turtlebot3_laserscan" filename="libgazebo_ros_ray_sensor.so">
        <ros><remapping>~/out:=scan</remapping></ros>
        <output_type>sensor_msgs/LaserScan</output_type>
        <frame_name>base_scan</frame_name>
      </plugin>
    </sensor>
  </gazebo>
  <gazebo reference="camera_link">
    <sensor type="camera" name="camera">
      <update_rate>30</update_rate>
      <pose degrees="true">0 0 0 0 0 90</pose>
      <camera name="picam">
        <horizontal_fov>1.085595</horizontal_fov>
        <image><width>640</width><height>480</height><format>R8G8B8</format></image>
        <clip><near>0.03</near><far>100</far></clip>
      </camera>
      <plugin name="camera_driver" filename="libgazebo_ros_camera.so">
        <frameName>camera_rgb_optical_frame</frameName>
      </plugin>
    </sensor>
  </gazebo>
  <gazebo reference="wrist">
    <sensor type="force_torque" name="wrist_ft">
      <update_rate>100</update_rate>
      <force_torque><frame>child</frame><measure_direction>child_to_parent</measure_direction></force_torque>
    </sensor>
  </gazebo>
"""

# gz sim (Harmonic) style.
GZ = """
  <gazebo reference="base_scan">
    <sensor name="lidar" type="gpu_lidar">
      <topic>scan</topic>
      <gz_frame_id>base_scan</gz_frame_id>
      <update_rate>10</update_rate>
      <lidar>
        <scan><horizontal><samples>720</samples><resolution>1</resolution>
          <min_angle>-3.14159</min_angle><max_angle>3.14159</max_angle></horizontal>
          <vertical><samples>1</samples><min_angle>0</min_angle><max_angle>0</max_angle></vertical></scan>
        <range><min>0.1</min><max>12.0</max><resolution>0.01</resolution></range>
      </lidar>
    </sensor>
    <sensor name="imu" type="imu"><update_rate>200</update_rate><topic>imu</topic></sensor>
  </gazebo>
  <gazebo reference="camera_link">
    <sensor name="depth" type="depth_camera">
      <update_rate>15</update_rate>
      <camera><horizontal_fov>1.2</horizontal_fov><image><width>320</width><height>240</height></image>
        <clip><near>0.2</near><far>8</far></clip><optical_frame_id>camera_depth_optical</optical_frame_id></camera>
    </sensor>
  </gazebo>
"""


def _write(tmp_path: Path, body: str, name: str = "robot.urdf") -> Path:
    path = tmp_path / name
    path.write_text(f'<?xml version="1.0"?>\n<robot name="r">{LINKS}{body}\n</robot>\n')
    return path


def _load(path: Path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = load_robot(path)
    return model, [str(w.message) for w in caught if issubclass(w.category, RobotModelWarning)]


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_classic_laser_camera_and_joint_referenced_force_torque(tmp_path):
    path = _write(tmp_path, CLASSIC)
    model, warned = _load(path)
    assert warned == []
    laser, camera, ft = model.sensors
    assert (laser.name, laser.kind, laser.gazebo_type, laser.link) == ("hls_lfcd_lds", "ray", "ray", "base_scan")
    np.testing.assert_allclose(laser.pose.xyz, [-0.064, 0, 0.121])
    assert laser.update_rate == 5.0 and laser.always_on and laser.frame_id == "base_scan"
    assert laser.params == {"plugin": "libgazebo_ros_ray_sensor.so", "samples": 360, "resolution": 1.0,
                            "min_angle": 0.0, "max_angle": 6.28, "range_min": 0.12, "range_max": 3.5,
                            "range_resolution": 0.015, "plugin_name": "turtlebot3_laserscan",
                            "ros_remappings": ["~/out:=scan"]}  # what description_topics reads
    assert laser.source.line == _line_of(path, 'name="hls_lfcd_lds"')
    assert camera.kind == "camera" and camera.link == "camera_link" and camera.update_rate == 30.0
    np.testing.assert_allclose(camera.pose.rpy, [0, 0, math.pi / 2])  # degrees="true"
    assert camera.frame_id == "camera_rgb_optical_frame"  # ROS 1 spelling frameName
    assert {k: camera.params[k] for k in ("width", "height", "format", "near", "far")} == {
        "width": 640, "height": 480, "format": "R8G8B8", "near": 0.03, "far": 100.0}
    assert camera.params["horizontal_fov"] == pytest.approx(1.085595)
    assert (ft.kind, ft.link, ft.params["joint"]) == ("force_torque", "arm", "wrist")
    assert ft.params["force_torque/frame"] == "child"
    assert ft.params["force_torque/measure_direction"] == "child_to_parent"
    assert [s.name for s in sensors_of(model, ("camera", "depth"))] == ["camera"]


def test_gz_lidar_depth_camera_and_two_sensors_in_one_gazebo_block(tmp_path):
    model, warned = _load(_write(tmp_path, GZ))
    assert warned == []
    lidar, imu, depth = model.sensors
    assert (lidar.kind, lidar.gazebo_type, lidar.topic, lidar.frame_id) == ("ray", "gpu_lidar", "scan", "base_scan")
    assert lidar.params["samples"] == 720 and lidar.params["range_max"] == 12.0
    assert lidar.params["vertical_samples"] == 1
    assert (imu.kind, imu.link, imu.update_rate, imu.topic) == ("imu", "base_scan", 200.0, "imu")
    assert (depth.kind, depth.frame_id, depth.params["width"], depth.params["far"]) == (
        "depth", "camera_depth_optical", 320, 8.0)
    assert lidar.update_rate == 10.0 and depth.update_rate == 15.0


def test_xacro_robot_carries_its_sensors(tmp_path):
    path = tmp_path / "robot.urdf.xacro"
    path.write_text('<?xml version="1.0"?>\n<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
                    '<xacro:property name="samples" value="180"/>\n'
                    f'{LINKS}{CLASSIC.replace("<samples>360</samples>", "<samples>${samples}</samples>")}'
                    '\n</robot>\n')
    model, _ = _load(path)
    assert model.sensors[0].params["samples"] == 180


def test_unknown_sensor_type_warns_with_file_and_line_and_the_robot_loads(tmp_path):
    body = '<gazebo reference="base_link">\n<sensor type="sonar" name="bumper_sonar"/>\n</gazebo>' + CLASSIC
    path = _write(tmp_path, body)
    model, warned = _load(path)
    line = _line_of(path, "bumper_sonar")
    assert len(warned) == 1 and f"{path}:{line}" in warned[0] and "'sonar'" in warned[0], warned
    assert [s.name for s in model.sensors] == ["hls_lfcd_lds", "camera", "wrist_ft"]


# The PR2's pre-SDF form (Gazebo 0.x), element for element as example-robot-data's pr2.urdf writes it.
PRE_SDF = """
  <gazebo reference="base_scan">
    <sensor:ray name="base_laser">
      <rayCount>640</rayCount>
      <rangeCount>640</rangeCount>
      <laserCount>1</laserCount>
      <origin>0.0 0.0 0.05</origin>
      <displayRays>false</displayRays>
      <minAngle>-129.998394137</minAngle>
      <maxAngle>129.998394137</maxAngle>
      <minRange>0.05</minRange>
      <maxRange>10.0</maxRange>
      <resRange>0.01</resRange>
      <updateRate>20</updateRate>
      <controller:gazebo_ros_laser name="base_laser_controller" plugin="libgazebo_ros_laser.so">
        <gaussianNoise>0.005</gaussianNoise>
        <alwaysOn>true</alwaysOn>
        <updateRate>20</updateRate>
        <topicName>base_scan</topicName>
        <frameName>base_laser_link</frameName>
        <interface:laser name="base_laser_iface"/>
      </controller:gazebo_ros_laser>
    </sensor:ray>
  </gazebo>
  <gazebo reference="camera_link">
    <sensor:camera name="wide_stereo_l">
      <imageSize>640 480</imageSize>
      <imageFormat>BAYER_BGGR8</imageFormat>
      <hfov>90</hfov>
      <nearClip>0.1</nearClip>
      <farClip>100</farClip>
      <updateRate>25.0</updateRate>
      <controller:gazebo_ros_camera name="wide_stereo_l_controller" plugin="libgazebo_ros_camera.so">
        <alwaysOn>true</alwaysOn>
        <imageTopicName>wide_stereo/left/image_raw</imageTopicName>
        <frameName>wide_stereo_optical_frame</frameName>
      </controller:gazebo_ros_camera>
    </sensor:camera>
    <turnGravityOff>true</turnGravityOff>
  </gazebo>
  <gazebo reference="base_link">
    <sensor:contact name="base_contact_sensor">
      <geom>base_link_collision</geom>
      <updateRate>100.0</updateRate>
    </sensor:contact>
  </gazebo>
"""


def test_pre_sdf_laser_and_camera_are_read_like_the_sdf_form(tmp_path):
    path = _write(tmp_path, PRE_SDF)
    model, warned = _load(path)
    laser, camera = model.sensors
    assert (laser.name, laser.kind, laser.gazebo_type, laser.link) == ("base_laser", "ray", "sensor:ray", "base_scan")
    np.testing.assert_allclose(laser.pose.xyz, [0, 0, 0.05])
    assert laser.update_rate == 20.0 and laser.always_on and laser.frame_id == "base_laser_link"
    assert laser.topic == "base_scan" and laser.source.line == _line_of(path, 'name="base_laser"')
    assert laser.params["samples"] == 640 and laser.params["range_max"] == 10.0
    assert laser.params["range_min"] == 0.05 and laser.params["range_resolution"] == 0.01
    assert laser.params["min_angle"] == pytest.approx(-math.radians(129.998394137))  # degrees in this form
    assert laser.params["max_angle"] == pytest.approx(2.2689, abs=1e-4)
    assert (camera.kind, camera.link, camera.update_rate, camera.frame_id) == (
        "camera", "camera_link", 25.0, "wide_stereo_optical_frame")
    assert camera.topic == "wide_stereo/left/image_raw" and camera.params["plugin"] == "libgazebo_ros_camera.so"
    assert {k: camera.params[k] for k in ("width", "height", "format", "near", "far")} == {
        "width": 640, "height": 480, "format": "BAYER_BGGR8", "near": 0.1, "far": 100.0}
    assert camera.params["horizontal_fov"] == pytest.approx(math.pi / 2)
    # The contact sensor is not simulated: a warning naming its line, and the robot loads.
    # Its BAYER_BGGR8 images are not simulated: a warning naming the <imageFormat> line, and rgb8.
    assert camera.params["encoding"] == "rgb8"
    assert len(warned) == 2 and f":{_line_of(path, 'BAYER_BGGR8')}:" in warned[0] and "'BAYER_BGGR8'" in warned[0]
    warned = warned[1:]
    assert len(warned) == 1 and f":{_line_of(path, 'base_contact_sensor')}:" in warned[0], warned
    assert "'contact'" in warned[0]


@pytest.mark.parametrize("old, new, needle, message", [
    ("<imageSize>640 480</imageSize>", "<imageSize>640</imageSize>", "<imageSize>640<", "two positive whole"),
    ("<hfov>90</hfov>", "<hfov>190</hfov>", "<hfov>190", "(0, 180) degrees"),
    ("<maxRange>10.0</maxRange>", "<maxRange>0.01</maxRange>", 'name="base_laser"', "need 0 <= min < max"),
    ("<minAngle>-129.998394137</minAngle>", "<minAngle>150</minAngle>", 'name="base_laser"', "< minAngle"),
    ("<origin>0.0 0.0 0.05</origin>", "<origin>0 0</origin>", "<origin>0 0<", "3 finite numbers"),
])
def test_invalid_pre_sdf_sensor_is_an_error_naming_file_line_and_element(tmp_path, old, new, needle, message):
    path = _write(tmp_path, PRE_SDF.replace(old, new))
    with pytest.raises(RobotModelError) as err:
        _load(path)
    text = str(err.value)
    assert f"{path}:{_line_of(path, needle)}" in text and message in text and "<sensor:" in text, text


@pytest.mark.parametrize("body, needle, message", [
    ('<gazebo reference="lidar_link">\n<sensor type="ray" name="s"/></gazebo>', 'reference="lidar_link"',
     'names no link (or joint)'),
    ('<gazebo reference="camera_link">\n<sensor type="camera" name="c"><camera><image><width>0</width>'
     '</image></camera></sensor></gazebo>', '<width>0', 'positive whole number'),
    ('<gazebo reference="camera_link">\n<sensor type="camera" name="c"><camera>\n<horizontal_fov>4</horizontal_fov>'
     '</camera></sensor></gazebo>', '<horizontal_fov>4', 'must lie in (0, pi)'),
    ('<gazebo reference="base_scan">\n<sensor type="ray" name="s"><ray><scan><horizontal><samples>10</samples>'
     '</horizontal></scan>\n<range><min>2</min><max>1</max></range></ray></sensor></gazebo>', '<range><min>2',
     'need 0 <= min < max'),
    ('<gazebo reference="base_scan">\n<sensor type="ray" name="s"><ray>\n</ray></sensor></gazebo>', '<ray>',
     'has no <scan><horizontal>'),
    ('<gazebo reference="base_scan">\n<sensor type="ray" name="s">\n<pose>1 2 3</pose></sensor></gazebo>',
     '<pose>1 2 3', 'must be 6 finite numbers'),
    ('<gazebo reference="base_scan">\n<sensor type="imu" name="s">\n<update_rate>-1</update_rate></sensor>'
     '</gazebo>', '<sensor type="imu" name="s">', 'is negative'),
    ('<gazebo reference="camera_link">\n<sensor type="camera" name="c"><camera><noise>\n<stddev>-0.1</stddev>'
     '</noise></camera></sensor></gazebo>', '<stddev>-0.1', '<stddev>-0.1</stddev> must be >= 0'),
    ('<gazebo reference="base_scan">\n<sensor type="ray" name="s"><ray><scan><horizontal><samples>10</samples>'
     '</horizontal></scan><range><max>1</max></range>\n<noise><mean>nan</mean></noise></ray></sensor></gazebo>',
     '<mean>nan', 'is not a finite number'),
])
def test_invalid_sensor_is_an_error_naming_file_line_and_element(tmp_path, body, needle, message):
    path = _write(tmp_path, body)
    with pytest.raises(RobotModelError) as err:
        load_robot(path)
    text = str(err.value)
    assert message in text and f"{path}:{_line_of(path, needle)}:" in text, text
    assert "\n" not in text


def test_a_sensor_name_used_twice_warns_and_the_second_is_skipped(tmp_path):
    """Gazebo scopes sensor names by link (TALOS names two cameras alike); our topics are named after the sensor."""
    path = _write(tmp_path, '<gazebo reference="base_scan">\n<sensor type="imu" name="s"/>\n'
                            '<sensor type="ray" name="s"><ray><scan><horizontal><samples>10</samples></horizontal>'
                            '</scan><range><min>0.1</min><max>5</max></range></ray></sensor></gazebo>')
    model, warned = _load(path)
    assert [(s.name, s.kind) for s in model.sensors] == [("s", "imu")]
    line = _line_of(path, '<sensor type="ray"')
    assert any(f":{line}:" in w and "sensor name 's' is used again" in w for w in warned), warned


@pytest.mark.skipif(ERD_ROBOTS is None, reason="example-robot-data is not installed")
def test_third_party_robots_sensors_are_read():
    """TIAGo Pro (classic: gpu_ray lasers, cameras, a depth camera) and iCub (force-torque on joints)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobotModelWarning)
        tiago = load_robot(erd_robot("tiago_pro_description/robots/tiago_pro.urdf"))
        icub = load_robot(erd_robot("icub_description/robots/icub.urdf"))
    lasers = sensors_of(tiago, "ray")
    assert [s.gazebo_type for s in lasers] == ["gpu_ray", "gpu_ray"]
    assert all(s.params["samples"] == 818 and s.params["range_max"] == 25.0 for s in lasers)
    assert {s.kind for s in tiago.sensors} == {"ray", "camera", "depth", "imu"}
    assert all(s.link in tiago.links for s in tiago.sensors)
    fts = sensors_of(icub, "force_torque")
    assert len(fts) == 6 and all(s.params["joint"] in icub.joints for s in fts)


@pytest.mark.skipif(ERD_ROBOTS is None, reason="example-robot-data is not installed")
def test_pr2_pre_sdf_lasers_and_cameras_are_read():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pr2 = load_robot(erd_robot("pr2_description/urdf/pr2.urdf"))
    lasers = {s.name: s for s in sensors_of(pr2, "ray")}
    assert set(lasers) == {"base_laser", "laser_tilt"}
    assert lasers["base_laser"].link == "base_laser_link" and lasers["base_laser"].update_rate == 20.0
    assert lasers["laser_tilt"].link == "laser_tilt_link" and lasers["laser_tilt"].update_rate == 40.0
    assert all(s.params["samples"] == 640 and s.params["range_max"] == 10.0 for s in lasers.values())
    assert lasers["laser_tilt"].params["max_angle"] == pytest.approx(math.radians(80.0), abs=1e-6)
    cameras = {s.name: s for s in sensors_of(pr2, "camera")}
    assert len(cameras) == 7 and cameras["high_def_sensor"].params["width"] == 2448  # + stereo pairs, forearms
    assert cameras["r_forearm_cam_sensor"].frame_id == "r_forearm_cam_optical_frame"
    assert all(s.link in pr2.links for s in pr2.sensors)
    skipped = [str(w.message) for w in caught if "'contact'" in str(w.message)]
    assert skipped and all("pr2.urdf:" in m for m in skipped)


def test_select_sensors_keeps_the_named_cameras_and_lasers_at_the_given_rates(tmp_path):
    model, _ = _load(_write(tmp_path, CLASSIC))
    every = select_sensors(model.sensors)
    assert every == model.sensors
    chosen = select_sensors(model.sensors, ["camera"], {"camera": 2.0})
    assert [(s.name, s.update_rate) for s in chosen] == [("camera", 2.0), ("wrist_ft", 100.0)]  # other kinds stay
    assert model.sensors[1].update_rate == 30.0  # the model's own spec is not changed
    with pytest.raises(ValueError, match=r"parameter 'sensors' names 'cam', which .* \(it has: camera, hls_lfcd_lds\)"):
        select_sensors(model.sensors, ["cam"])
    with pytest.raises(ValueError, match=r"parameter 'sensor_rates' names 'wrist_ft'"):
        select_sensors(model.sensors, (), {"wrist_ft": 1.0})
    with pytest.raises(ValueError, match=r"'sensor_rates.camera' = 0.0 must be a positive rate"):
        select_sensors(model.sensors, (), {"camera": 0.0})


def test_camera_and_laser_noise_is_read_and_other_noise_types_are_warned_about(tmp_path):
    """Gazebo's classic ``<noise type="...">`` and SDF 1.6's ``<type>`` child; a type other than gaussian is
    warned about (file, line) and not simulated; gaussian_quantized is simulated as gaussian, with a warning."""
    body = ('<gazebo reference="camera_link"><sensor type="camera" name="c"><camera><noise type="gaussian">'
            '<mean>0.0</mean><stddev>0.007</stddev></noise></camera></sensor></gazebo>\n'
            '<gazebo reference="base_scan"><sensor type="ray" name="s"><ray><scan><horizontal><samples>10</samples>'
            '</horizontal></scan><range><max>3</max></range><noise><type>gaussian_quantized</type><stddev>0.01'
            '</stddev></noise></ray></sensor></gazebo>\n'
            '<gazebo reference="camera_link"><sensor type="camera" name="c2"><camera>\n<noise type="uniform">'
            '<stddev>0.1</stddev></noise></camera></sensor></gazebo>')
    path = _write(tmp_path, body)
    model, warned = _load(path)
    params = {s.name: s.params for s in model.sensors}
    assert params["c"]["noise_stddev"] == 0.007 and params["c"]["noise_mean"] == 0.0
    assert params["s"]["noise_stddev"] == 0.01
    assert "noise_stddev" not in params["c2"]
    assert any("'uniform' is not simulated" in w and f"{path}:{_line_of(path, 'uniform')}" in w for w in warned), warned
    assert any("gaussian_quantized" in w for w in warned), warned


def test_description_topics_follow_the_plugins_namespace_remappings_and_topic_names(tmp_path):
    """The topics the description's Gazebo plugins would use (sensor_topics: description): gazebo_ros (ROS 2)
    namespace, camera_name and remappings by either name, a ray sensor's ~/out remapped or not, ROS 1's
    robotNamespace/cameraName/imageTopicName, gz's <topic>, and the default names without any of them."""
    from robot_core.model.sensors import description_topics

    cam = ('<camera><image><width>8</width><height>6</height></image></camera>')
    ray = ('<ray><scan><horizontal><samples>4</samples></horizontal></scan><range><max>3</max></range></ray>')
    body = f"""<gazebo reference="camera_link">
  <sensor type="camera" name="ros2cam">{cam}<plugin name="p" filename="libgazebo_ros_camera.so"><ros>
    <namespace>demo_cam</namespace><remapping>mycam/image_raw:=mycam/image_demo</remapping></ros>
    <camera_name>mycam</camera_name></plugin></sensor>
  <sensor type="depth" name="ros1cam">{cam}<plugin name="q" filename="libgazebo_ros_openni_kinect.so">
    <robotNamespace>/robot</robotNamespace><cameraName>kinect</cameraName><imageTopicName>rgb/image_raw
    </imageTopicName><cameraInfoTopicName>rgb/camera_info</cameraInfoTopicName></plugin></sensor>
  <sensor type="camera" name="gzcam">{cam}<topic>front/image</topic></sensor>
  <sensor type="camera" name="plain">{cam}</sensor>
</gazebo>
<gazebo reference="base_scan">
  <sensor type="ray" name="tb3">{ray}<plugin name="scanner" filename="libgazebo_ros_ray_sensor.so">
    <ros><remapping>~/out:=scan</remapping></ros></plugin></sensor>
  <sensor type="ray" name="bare">{ray}<plugin name="scanner2" filename="libgazebo_ros_ray_sensor.so"/></sensor>
  <sensor type="gpu_ray" name="ros1">{ray}<plugin name="r" filename="libgazebo_ros_gpu_laser.so">
    <topicName>/base/scan</topicName></plugin></sensor>
  <sensor type="ray" name="noplugin">{ray}</sensor>
</gazebo>"""
    model, _ = _load(_write(tmp_path, body))
    topics = {s.name: description_topics(s) for s in model.sensors}
    assert topics["ros2cam"] == {"image": "demo_cam/mycam/image_demo", "info": "demo_cam/mycam/camera_info",
                                 "depth": "demo_cam/mycam/depth/image_raw"}
    assert topics["ros1cam"] == {"image": "/robot/kinect/rgb/image_raw", "info": "/robot/kinect/rgb/camera_info",
                                 "depth": "/robot/kinect/rgb/depth/image_raw"}
    assert topics["gzcam"]["image"] == "front/image" and topics["gzcam"]["info"] == "front/camera_info"
    assert topics["plain"] == {"image": "plain/image_raw", "info": "plain/camera_info",
                               "depth": "plain/depth/image_raw"}
    assert [topics[n]["scan"] for n in ("tb3", "bare", "ros1", "noplugin")] == [
        "scan", "scanner2/out", "/base/scan", "noplugin/scan"]
