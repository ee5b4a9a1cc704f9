"""The RBC var table: <rbc> tags -> vars, state input, one message per cmd topic, staleness, tag errors."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest
from geometry_msgs.msg import PoseStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robot_core.model import load_robot
from robot_core.model.robot_model import RbcMsg, RbcNode, RbcVar, SourceRef
from robot_core.rbc.coupler import Coupler
from robot_core.rbc.errors import RbcConfigError, RbcVarError
from robot_core.rbc.var_table import VarTable

ROOT = Path(__file__).resolve().parents[1]
RC_ARM = ROOT / "urdf" / "rc_arm.urdf"
ARM = [f"joint{i}" for i in range(1, 8)]
HAVE_CONTROL_MSGS = importlib.util.find_spec("control_msgs") is not None


def rc_arm_without_unavailable_vars():
    """rc_arm with vars whose message package is not installed removed (control_msgs comes later)."""
    model = load_robot(str(RC_ARM))
    for joint in model.joints.values():
        for node in joint.rbc:
            node.vars = [v for v in node.vars if importlib.util.find_spec(v.msg.type.replace("/", ".").split(".")[0])]
        joint.rbc = [n for n in joint.rbc if n.vars]
    return model


def var(name, topic, kind, type_, field, index=None, init=0.0, line=None):
    return RbcVar(name, topic, kind, RbcMsg(type_, field, index is not None, index or 0), init,
                  SourceRef("test.urdf", line, f"var '{name}'"))


def node(joint, *vars_, driver="drv"):
    return RbcNode(driver, joint, list(vars_))


# --- rc_arm tags --------------------------------------------------------------------------------------


def test_rc_arm_tags_build_the_var_table_with_one_subscription_per_topic():
    table = VarTable(rc_arm_without_unavailable_vars())
    assert table.joints()[:7] == ARM
    for j in ARM:
        for v in ("q", "qd", "tau", "q_ref", "qd_ref"):
            assert table.has(j, v), (j, v)
    # 7 joints x (q, qd, tau) + finger q/qd + right finger q: all from one topic, one subscription.
    subs = dict(table.subscriptions())
    assert list(subs).count("/robot_joint_states") == 1
    assert subs["/robot_joint_states"] is JointState
    assert len(table.state_topics["/robot_joint_states"].entries) == 7 * 3 + 3
    pubs = dict(table.publications())
    assert pubs["/forward_position_controller/commands"] is Float64MultiArray
    assert pubs["/forward_velocity_controller/commands"] is Float64MultiArray
    # joint1's vars come from different topics and drivers.
    drivers = {e.driver for e in table.entries() if e.joint == "joint1"}
    assert {"sim_driver", "position_controller", "velocity_controller"} <= drivers


@pytest.mark.skipif(HAVE_CONTROL_MSGS, reason="control_msgs installed: the nested-field var resolves (tested below)")
def test_rc_arm_nested_var_fails_clearly_while_control_msgs_is_missing():
    with pytest.raises(RbcConfigError) as info:
        Coupler(load_robot(str(RC_ARM)))
    text = str(info.value)
    for fragment in ("joint 'joint1'", "var 'q_desired'", "reference.positions", "control_msgs"):
        assert fragment in text


@pytest.mark.skipif(not HAVE_CONTROL_MSGS, reason="control_msgs not built into the venv yet (lead builds it)")
def test_rc_arm_nested_var_reads_controller_state_reference():
    from control_msgs.msg import JointTrajectoryControllerState
    from trajectory_msgs.msg import JointTrajectoryPoint

    table = VarTable(load_robot(str(RC_ARM)))
    topic = "/joint_trajectory_controller/controller_state"
    msg = JointTrajectoryControllerState(reference=JointTrajectoryPoint(positions=[0.75, 0.1]))
    assert table.on_message(topic, msg, 1.0) == 1
    assert table.get("joint1", "q_desired") == 0.75


def test_joint_state_is_matched_by_name_when_names_are_present():
    table = VarTable(rc_arm_without_unavailable_vars())
    # Subset, shuffled order: names decide.
    msg = JointState(name=["joint3", "joint1"], position=[0.3, 0.1], velocity=[3.0, 1.0], effort=[])
    n = table.on_message("/robot_joint_states", msg, 2.0)
    assert n == 4  # q and qd of two joints; effort is empty
    assert table.get("joint1", "q") == 0.1 and table.get("joint3", "q") == 0.3
    assert table.get("joint3", "qd") == 3.0
    assert table.entry("joint2", "q").stamp is None  # not in the message: untouched
    # The next message orders names differently: still matched by name.
    table.on_message("/robot_joint_states", JointState(name=["joint1", "joint2", "joint3"], position=[1.0, 2.0, 3.0]),
                     2.1)
    assert [table.get(j, "q") for j in ARM[:3]] == [1.0, 2.0, 3.0]
    assert table.get("joint3", "qd") == 3.0  # velocity array empty this time: kept


def test_joint_state_without_names_uses_the_tag_index():
    table = VarTable(rc_arm_without_unavailable_vars())
    msg = JointState(position=[float(i) for i in range(9)])
    table.on_message("/robot_joint_states", msg, 0.0)
    assert [table.get(j, "q") for j in ARM] == [float(i) for i in range(7)]
    assert table.get("finger_left_joint", "q") == 7.0


def test_joint_state_match_index_ignores_names():
    table = VarTable(rc_arm_without_unavailable_vars(), joint_state_match="index")
    msg = JointState(name=["a", "b", "c", "d", "e", "f", "g"], position=[float(i) for i in range(7)])
    table.on_message("/robot_joint_states", msg, 0.0)
    assert table.get("joint7", "q") == 6.0


def test_non_finite_and_short_messages_leave_vars_untouched():
    table = VarTable(rc_arm_without_unavailable_vars())
    table.on_message("/robot_joint_states", JointState(position=[0.5] * 9), 0.0)
    table.on_message("/robot_joint_states", JointState(position=[math.nan, 0.7]), 0.1)
    assert table.get("joint1", "q") == 0.5 and table.entry("joint1", "q").stamp == 0.0
    assert table.get("joint2", "q") == 0.7
    assert table.get("joint5", "q") == 0.5  # message too short for index 4


# --- cmd assembly ----------------------------------------------------------------------------------------


def test_one_message_per_cmd_topic_with_every_index():
    table = VarTable(rc_arm_without_unavailable_vars())
    assert table.build_messages(0.0) == {}  # nothing written yet: nothing is sent
    table.set("joint3", "q_ref", 0.3)
    table.set("joint1", "q_ref", 0.1)
    table.set("joint7", "q_ref", 0.7)
    out = table.build_messages(0.0)
    assert set(out) == {"/forward_position_controller/commands"}
    assert list(out["/forward_position_controller/commands"].data) == [0.1, 0.0, 0.3, 0.0, 0.0, 0.0, 0.7]
    table.set("joint2", "qd_ref", -0.2)
    out = table.build_messages(0.0)
    assert list(out["/forward_velocity_controller/commands"].data) == [0.0, -0.2, 0.0, 0.0, 0.0, 0.0, 0.0]


def test_array_gaps_are_zero_and_reported():
    nodes = [node("a", var("u", "/cmd", "cmd", "std_msgs/msg/Float64MultiArray", "data", 0, init=1.0)),
             node("b", var("u", "/cmd", "cmd", "std_msgs/msg/Float64MultiArray", "data", 3, init=2.0))]
    table = VarTable(rbc_nodes=nodes)
    assert any("indices [1, 2]" in w for w in table.warnings)
    msg = table.build_message("/cmd", 0.0)
    assert list(msg.data) == [1.0, 0.0, 0.0, 2.0]  # init values where vars exist


def test_scalar_and_nested_fields_of_one_cmd_message():
    nodes = [
        node("a", var("x", "/goal", "cmd", "geometry_msgs/msg/PoseStamped", "pose.position.x")),
        node("b", var("x", "/goal", "cmd", "geometry_msgs/PoseStamped", "pose.orientation.w", init=1.0)),
    ]
    table = VarTable(rbc_nodes=nodes)
    table.set("a", "x", 0.25)
    msg = table.build_messages(12.5)["/goal"]
    assert isinstance(msg, PoseStamped)
    assert msg.pose.position.x == 0.25 and msg.pose.orientation.w == 1.0
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (12, 500_000_000)


def test_joint_state_commands_are_keyed_by_name():
    js = "sensor_msgs/msg/JointState"
    nodes = [
        node("j2", var("q_ref", "/cmd", "cmd", js, "position", 1), var("qd_ref", "/cmd", "cmd", js, "velocity", 1)),
        node("j1", var("q_ref", "/cmd", "cmd", js, "position", 0)),
    ]
    table = VarTable(rbc_nodes=nodes)
    table.set("j1", "q_ref", 0.5)
    table.set("j2", "qd_ref", 0.25)
    msg = table.build_messages(0.0)["/cmd"]
    assert list(msg.name) == ["j1", "j2"]
    assert list(msg.position) == [0.5, 0.0]
    assert msg.velocity[1] == 0.25 and math.isnan(msg.velocity[0])  # j1 has no velocity var: NaN = no command
    assert list(msg.effort) == []


def test_set_rules_and_aggregates():
    table = VarTable(rc_arm_without_unavailable_vars())
    with pytest.raises(RbcVarError, match="state var"):
        table.set("joint1", "q", 1.0)
    with pytest.raises(RbcVarError, match="has no var 'nope'"):
        table.set("joint1", "nope", 1.0)
    with pytest.raises(RbcVarError, match="joint 'nope'"):
        table.get("nope", "q")
    with pytest.raises(RbcVarError, match="not finite"):
        table.set("joint1", "q_ref", math.inf)
    # all-or-nothing: the bad name leaves joint1 untouched
    with pytest.raises(RbcVarError):
        table.set_many("q_ref", ["joint1", "jointX"], [0.4, 0.5])
    assert table.get("joint1", "q_ref") == 0.0
    table.set_many("q_ref", ["joint2", "joint1"], [0.2, 0.1], now=3.0)
    view = table.aggregate("q_ref")
    assert view.joints == [*ARM, "finger_left_joint"]
    assert view.values[:2] == [0.1, 0.2] and view.stamps[0] == 3.0
    snap = table.snapshot()
    assert snap["joint2"]["q_ref"] == (0.2, 3.0, False)
    assert set(table.var_names("cmd")) == {"q_ref", "qd_ref"}


# --- staleness -----------------------------------------------------------------------------------------


def test_vars_go_stale_when_their_driver_stops_and_recover():
    table = VarTable(rc_arm_without_unavailable_vars(), stale_timeout=0.5)
    assert all(table.aggregate("q").stale)  # never received
    table.on_message("/robot_joint_states", JointState(name=ARM, position=[0.1] * 7), 1.0)
    table.refresh(1.4)
    assert not any(table.aggregate("q").stale[:7])
    table.on_message("/robot_joint_states", JointState(name=["joint1"], position=[0.2]), 1.4)
    newly = table.refresh(1.6)
    # Only joint1 was refreshed at 1.4; the others are now stale but keep their last value.
    assert {e.joint for e in newly} == set(ARM[1:])
    view = table.aggregate("q")
    assert view.stale[:7] == [False] + [True] * 6
    assert view.values[1] == 0.1
    assert "/robot_joint_states" not in table.stale_topics(1.6)
    assert "/robot_joint_states" in table.stale_topics(2.0)
    table.refresh(2.0)
    assert table.is_stale("joint1", "q")
    table.on_message("/robot_joint_states", JointState(name=ARM, position=[0.3] * 7), 2.1)
    table.refresh(2.1)
    assert not any(table.aggregate("q").stale[:7])


# --- tag errors -----------------------------------------------------------------------------------------


def _problem(nodes) -> str:
    with pytest.raises(RbcConfigError) as info:
        VarTable(rbc_nodes=nodes)
    return str(info.value)


def test_unknown_field_names_joint_var_and_field():
    text = _problem([node("elbow", var("q", "/s", "state", "sensor_msgs/JointState", "positon", 0, line=12))])
    for fragment in ("test.urdf:12", "joint 'elbow'", "var 'q'", "field 'positon'", "has no field 'positon'"):
        assert fragment in text


def test_bad_message_type_names_joint_var_and_field():
    text = _problem([node("elbow", var("q", "/s", "state", "sensor_msgs/msg/JointStat", "position", 0))])
    assert "joint 'elbow'" in text and "var 'q'" in text and "field 'position'" in text and "JointStat" in text


def test_index_out_of_range_names_joint_var_and_field():
    text = _problem([node("elbow", var("cov", "/p", "state", "geometry_msgs/PoseWithCovariance", "covariance", 40))])
    assert "joint 'elbow'" in text and "var 'cov'" in text and "field 'covariance'" in text and "index 40" in text


def test_duplicate_var_unknown_type_missing_topic_and_conflicts_are_all_reported():
    js, fa = "sensor_msgs/JointState", "std_msgs/Float64MultiArray"
    nodes = [
        node("a", var("q", "/s", "state", js, "position", 0)),
        node("a", var("q", "/s", "state", js, "position", 0), driver="other"),  # duplicate var of joint a
        node("b", var("q", "/s", "sideways", js, "position", 1)),  # unknown var type
        node("c", var("q", "", "state", js, "position", 2)),  # missing topic
        node("d", var("q", "/s", "state", fa, "data", 3)),  # /s is JointState elsewhere
        node("e", var("u", "/s", "cmd", js, "position", 4)),  # /s is read elsewhere
        node("f", var("u", "/c", "cmd", fa, "data", 0)),
        node("g", var("u", "/c", "cmd", fa, "data", 0)),  # same index written twice
    ]
    with pytest.raises(RbcConfigError) as info:
        VarTable(rbc_nodes=nodes)
    problems = info.value.problems
    assert len(problems) == 6, problems
    joined = "\n".join(problems)
    assert "joint 'a', var 'q': defined twice (drivers 'drv' and 'other')" in joined
    assert "joint 'b', var 'q': unknown var type 'sideways'" in joined
    assert "joint 'c', var 'q': missing topic" in joined
    assert "joint 'd', var 'q', field 'data': topic '/s' has type std_msgs/msg/Float64MultiArray" in joined
    assert "joint 'e', var 'u', field 'position': topic '/s' is 'cmd' here but 'state'" in joined
    assert "joint 'g', var 'u', field 'data' index 0: joint 'f', var 'u' already writes it" in joined


def test_bad_tag_in_urdf_text_names_file_line_joint_var_and_field(tmp_path):
    text = RC_ARM.read_text().replace('field="velocity" field_array="true" index="1"',
                                      'field="velocty" field_array="true" index="1"', 1)
    path = tmp_path / "bad_arm.urdf"
    path.write_text(text)
    model = load_robot(str(path))
    with pytest.raises(RbcConfigError) as info:
        VarTable(model, rbc_nodes=[n for n in model.rbc_nodes() if "control_msgs" not in n.vars[0].msg.type])
    msg = str(info.value)
    assert "bad_arm.urdf:" in msg and "joint 'joint2'" in msg and "var 'qd'" in msg and "field 'velocty'" in msg


NESTED_MSG_URDF = """<robot name="nested">
  <link name="a"/><link name="b"/>
  <joint name="j" type="revolute">
    <parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
    <rbc node="drv">
      <var init="0.0" name="q" topic="/traj_state" type="state">
        <msg field="points" field_array="true" index="0" type="trajectory_msgs.msg.JointTrajectory">
          <msg field="positions" field_array="true" index="1" index_type="float"
               type="trajectory_msgs.msg.JointTrajectoryPoint"/>
        </msg>
      </var>
      <var init="0.0" name="tau" topic="/wrench" type="state">
        <msg field="wrench" type="geometry_msgs.msg.WrenchStamped">
          <msg field="torque" type="geometry_msgs.msg.Wrench"><msg field="z" type="geometry_msgs.msg.Vector3"/></msg>
        </msg>
      </var>
    </rbc>
  </joint>
</robot>"""


def test_a_msg_inside_a_msg_reads_a_field_of_the_outer_fields_message():
    """The RBC documentation's "message inside message" as nested <msg> tags: each outer one names the field
    holding the next message (with its index when it is an array); the innermost names the value."""
    from geometry_msgs.msg import WrenchStamped
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from robot_core.model import RobotModelError

    model = load_robot(NESTED_MSG_URDF)
    q, tau = model.joints["j"].rbc[0].vars
    assert (q.msg.type, q.msg.field, q.msg.field_array, q.msg.index) == (
        "trajectory_msgs.msg.JointTrajectory", "points[0].positions", True, 1)
    assert (tau.msg.field, tau.msg.field_array) == ("wrench.torque.z", False)
    table = VarTable(model)
    table.on_message("/traj_state", JointTrajectory(points=[JointTrajectoryPoint(positions=[0.1, 0.7])]), 1.0)
    wrench = WrenchStamped()
    wrench.wrench.torque.z = -2.5
    table.on_message("/wrench", wrench, 1.0)
    assert table.get("j", "q") == 0.7 and table.get("j", "tau") == -2.5
    with pytest.raises(RobotModelError, match=r":8: joint 'j' <rbc node='drv'> var 'q' <msg>: .*needs the field"):
        load_robot(NESTED_MSG_URDF.replace('field="points" field_array', 'field_array'))


def test_movable_joints_without_rbc_tags_are_named_in_a_warning():
    """The RBC documentation: "all joints that are not fixed should have the rbc tag"; one that has none is named."""
    text = NESTED_MSG_URDF.replace("</robot>", """<link name="c"/>
  <joint name="loose" type="revolute"><parent link="b"/><child link="c"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <link name="d"/><joint name="welded" type="fixed"><parent link="c"/><child link="d"/></joint>
</robot>""")
    (warning,) = VarTable(load_robot(text)).warnings
    assert "movable joints without <rbc> tags" in warning and warning.endswith(": loose")
    assert VarTable(load_robot(NESTED_MSG_URDF)).warnings == []
