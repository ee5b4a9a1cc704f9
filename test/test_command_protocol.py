"""The topic-based joint command protocol as the simulator decodes it (no ROS, no physics)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import URDF_DIR

from robot_core.model import load_robot
from robot_core.physics.command_protocol import CommandRejectedError, DropReporter, JointCommandProtocol

NAN = math.nan
ARM = [f"joint{i}" for i in range(1, 8)]


@pytest.fixture(scope="module")
def rc_arm():
    return JointCommandProtocol.for_robot(load_robot(URDF_DIR / "rc_arm.urdf"))


@pytest.fixture
def plain():
    """A robot without a <ros2_control> block: only one value per named joint is understood."""
    return JointCommandProtocol(["a", "b", "c"], mimic=["m"])


def test_position_for_some_joints_velocity_for_others(plain):
    cmd = plain.parse(["a", "b", "c"], [0.1, NAN, NAN], [NAN, 0.5, NAN], [NAN, NAN, 2.0])
    assert cmd.position.names == ("a",)
    assert cmd.position.positions.tolist() == [0.1]
    assert cmd.position.velocities is None  # no feed-forward given: none (the engine clears it, as for zero)
    assert cmd.velocity.names == ("b",)
    assert cmd.velocity.velocities.tolist() == [0.5]
    assert cmd.velocity.positions is None
    assert cmd.effort.names == ("c",)
    assert cmd.effort.efforts.tolist() == [2.0]
    assert cmd.joint_names == ["a", "b", "c"]


def test_position_wins_and_other_values_are_feed_forwards(plain):
    cmd = plain.parse(["b", "a"], [0.3, 0.4], [1.0, 2.0], [5.0, 6.0])
    assert cmd.position.names == ("b", "a")
    assert cmd.position.velocities.tolist() == [1.0, 2.0]
    assert cmd.position.efforts.tolist() == [5.0, 6.0]
    assert not cmd.velocity and not cmd.effort
    cmd = plain.parse(["a"], [], [1.5], [0.7])
    assert cmd.velocity.names == ("a",) and cmd.velocity.efforts.tolist() == [0.7]


def test_subset_and_empty_messages(plain):
    cmd = plain.parse(["c"], [], [], [1.0])
    assert cmd.joint_names == ["c"]
    assert plain.parse([], [], [], []).groups() == []


def test_all_nan_joint_keeps_its_command(plain):
    cmd = plain.parse(["a", "b"], [NAN, 0.2], [NAN, NAN], [])
    assert cmd.joint_names == ["b"]


def test_mimic_joints_are_accepted_and_ignored(plain):
    cmd = plain.parse(["a", "m"], [0.1, 0.9])
    assert cmd.joint_names == ["a"]


@pytest.mark.parametrize(
    ("names", "pos", "vel", "eff", "needle"),
    [
        (["a", "nope"], [0.1, 0.2], [], [], "unknown joint 'nope'"),
        (["a", "a"], [0.1, 0.2], [], [], "joint 'a' is named twice"),
        (["a", "b"], [0.1], [], [], "'position' has 1 values for 2 joints"),
        (["a", "b"], [], [1.0, 2.0, 3.0], [], "'velocity' has 3 values"),
        (["a", "b"], [0.1, math.inf], [], [], "'position' of joint 'b' is inf"),
        (["a", "b"], [], [], [-math.inf, 0.0], "'effort' of joint 'a' is -inf"),
        ([], [0.1], [], [], "'position' has 1 values for 0 joints"),
    ],
)
def test_bad_messages_are_rejected_whole_with_the_reason(plain, names, pos, vel, eff, needle):
    with pytest.raises(CommandRejectedError) as err:
        plain.parse(names, pos, vel, eff)
    assert needle in str(err.value)


def test_unknown_joint_message_lists_the_commandable_joints(plain):
    with pytest.raises(CommandRejectedError, match=r"commandable joints: \[a, b, c\]"):
        plain.parse(["x"], [0.0])


def test_fixed_joint_is_not_commandable(rc_arm):
    with pytest.raises(CommandRejectedError, match="unknown joint 'hand_joint'"):
        rc_arm.parse(["hand_joint"], [0.0])


def test_upstream_packed_layout_from_ros2_control_block(rc_arm):
    """Upstream TopicBasedSystem writes only the interfaces a joint has: the gripper has no velocity command,
    so 'velocity' is one shorter than 'name' and belongs to joint1..7."""
    names = [*ARM, "finger_left_joint"]
    pos = [0.1 * i for i in range(8)]
    vel = [NAN] * 7  # velocity interfaces nobody claimed
    cmd = rc_arm.parse(names, pos, vel, [])
    assert cmd.position.names == tuple(names)
    assert cmd.position.positions.tolist() == pytest.approx(pos)
    # A velocity controller on the arm, the gripper still position-controlled:
    cmd = rc_arm.parse(names, [NAN] * 7 + [0.03], [0.5] * 7, [])
    assert cmd.velocity.names == tuple(ARM)
    assert cmd.velocity.velocities.tolist() == [0.5] * 7
    assert cmd.position.names == ("finger_left_joint",)
    assert cmd.position.positions.tolist() == [0.03]


def test_packed_layout_follows_message_order_not_urdf_order(rc_arm):
    cmd = rc_arm.parse(["finger_left_joint", "joint2", "joint1"], [], [0.2, 0.1], [])
    assert cmd.velocity.names == ("joint2", "joint1")
    assert cmd.velocity.velocities.tolist() == [0.2, 0.1]


def test_packed_layout_wrong_length_names_both_accepted_lengths():
    proto = JointCommandProtocol(["arm", "gripper"], command_interfaces={"arm": ["position", "velocity"],
                                                                         "gripper": ["position"]})
    with pytest.raises(CommandRejectedError) as err:
        proto.parse(["arm", "gripper"], [], [1.0, 2.0, 3.0], [])
    assert "expected 0, 2 (one per joint) or 1 (one per named joint with a velocity interface)" in str(err.value)
    with pytest.raises(CommandRejectedError, match="'effort' has 1 values"):
        proto.parse(["arm", "gripper"], [], [], [1.0])  # nobody declares effort
    cmd = proto.parse(["arm", "gripper"], [0.1, 0.2], [0.5], [])
    assert cmd.position.names == ("arm", "gripper")
    assert cmd.position.velocities.tolist() == [0.5, 0.0]


def test_commands_apply_to_the_engine_by_mode():
    calls = []

    class FakeEngine:
        def set_commands(self, names, positions, velocities, efforts):
            calls.append((names, positions, velocities, efforts))

    proto = JointCommandProtocol(["a", "b"])
    proto.parse(["a", "b"], [1.0, NAN], [NAN, 2.0]).apply(FakeEngine())
    assert [list(c[0]) for c in calls] == [["a"], ["b"]]
    assert calls[0][1].tolist() == [1.0] and calls[1][1] is None and calls[1][2].tolist() == [2.0]


def test_arrays_of_any_float_sequence_type():
    import array

    proto = JointCommandProtocol(["a", "b"])
    cmd = proto.parse(("a", "b"), array.array("d", [0.5, 0.25]), np.array([]), ())
    assert cmd.position.positions.tolist() == [0.5, 0.25]


def test_drop_reporter_throttles_per_reason_but_counts():
    logged: list[str] = []
    now = [0.0]
    rep = DropReporter(logged.append, period=2.0, clock=lambda: now[0])
    assert rep.report("first")
    for k in range(5):
        now[0] = 0.1 * (k + 1)
        assert not rep.report("first")
    assert rep.report("other problem")  # a different reason is not held back
    now[0] = 2.5
    assert rep.report("first")
    assert rep.dropped == 8
    assert logged == ["dropped joint command: first",
                      "dropped joint command: other problem",
                      "dropped joint command: first (5 more dropped for this reason since)"]


def test_planar_joint_coordinates_are_commandable_through_the_engine_names():
    from robot_core.physics.engine import PhysicsEngine

    urdf = """<robot name="slider">
      <link name="base"/>
      <link name="puck"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0"
        iyz="0"/></inertial></link>
      <joint name="plane" type="planar"><parent link="base"/><child link="puck"/><axis xyz="0 0 1"/>
        <limit effort="50" velocity="2"/></joint>
    </robot>"""
    robot = load_robot(urdf)
    engine = PhysicsEngine(robot)
    protocol = JointCommandProtocol.for_robot(robot, engine.actuated_joint_names)
    assert set(protocol.actuated) == {"plane:u", "plane:v", "plane:rot"}
    cmd = protocol.parse(["plane:u", "plane:rot"], position=[0.2, 0.5])
    cmd.apply(engine)
    engine.step(3000)
    q = dict(zip(engine.joint_names, engine.positions(), strict=True))
    assert q["plane:u"] == pytest.approx(0.2, abs=1e-3) and q["plane:rot"] == pytest.approx(0.5, abs=1e-3)
    with pytest.raises(CommandRejectedError, match="unknown joint 'plane'"):
        JointCommandProtocol.for_robot(robot, engine.actuated_joint_names).parse(["plane"], position=[0.1])


MESSAGES = [  # (names, position, velocity, effort): the uniform fast path and the general decoder must agree
    (["a", "b", "c"], [0.1, 0.2, 0.3], [], []),
    (["a", "b", "c"], [0.1, 0.2, 0.3], [1.0, 2.0, 3.0], []),
    (["c", "a"], [NAN, NAN], [0.5, -0.5], [1.0, 2.0]),
    (["a", "b"], [], [], [3.0, 4.0]),
    (["a", "b"], [NAN, NAN], [NAN, NAN], [NAN, NAN]),
    (["a", "b"], [0.1, 0.2], [NAN, NAN], [5.0, 6.0]),
    (["a", "b"], [0.1, NAN], [NAN, 2.0], []),  # mixed modes: only the general decoder
    (["a", "b"], [0.1, 0.2], [1.0, NAN], []),  # a feed-forward for one joint only
]


@pytest.mark.parametrize("msg", MESSAGES)
def test_uniform_fast_path_decodes_like_the_general_path(plain, msg):
    names, pos, vel, eff = msg
    fast = plain.parse(names, pos, vel, eff)
    general = plain._parse_general(list(names), pos, vel, eff)

    def flat(cmd):
        return [(g.names, *[None if a is None else a.tolist() for a in (g.positions, g.velocities, g.efforts)])
                for g in (cmd.position, cmd.velocity, cmd.effort)]

    assert flat(fast) == flat(general)


def test_a_position_stream_without_feed_forward_drives_the_engine_like_zero_feed_forwards():
    """None feed-forwards (what a position-only message decodes to, for the engine's fast path) move the robot
    exactly as zeros would: same state to the bit after a second of streamed targets."""
    import warnings

    from robot_core.physics.engine import PhysicsEngine

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = load_robot(str(URDF_DIR / "rc_arm.urdf"))
        a, b = (PhysicsEngine(robot, timestep=1e-3) for _ in range(2))
    proto = JointCommandProtocol.for_robot(robot, a.actuated_joint_names)
    names = [n for n in a.actuated_joint_names if n.startswith("joint")]
    home = a.positions()[[a.joint_names.index(n) for n in names]]
    zeros = np.zeros(len(names))
    for k in range(1000):
        target = home + 0.3 * np.sin(2 * np.pi * k / 1000)
        cmd = proto.parse(names, target.tolist(), [NAN] * len(names), [])
        assert cmd.position.velocities is None and cmd.position.efforts is None
        cmd.apply(a)
        b.set_commands(names, target, zeros, zeros)
        a.step()
        b.step()
    assert abs(a.positions()[0] - home[0]) > 0.01  # it moved
    np.testing.assert_array_equal(a.positions(), b.positions())
    np.testing.assert_array_equal(a.velocities(), b.velocities())
