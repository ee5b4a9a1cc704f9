"""rai .g files as rai itself reads them: long ``limits``, punctuation in names, unnamed frames, the Edit /
Prefix / Include directives, ``pose`` (whose meaning changed in rai), and rai-robotModels-style files."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from robot_core.model import load_robot
from robot_core.model.rai_reader import read_g
from robot_core.model.rai_writer import write_g
from robot_core.model.robot_model import RobotModelError, RobotModelWarning

RAI_MODELS = Path(__file__).resolve().parent / "data" / "g" / "rai_models"


def read_quiet(text: str, name: str = "t.g", **options):
    """Read and return (model, warning messages)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = read_g(text, name, **options)
    return model, [str(w.message) for w in caught if issubclass(w.category, RobotModelWarning)]


def rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


ARM = "base { }\nj (base) { joint: hingeZ, limits: %s%s }\nlink (j) { mass: 1, shape: sphere, size: [.1] }\n"


# ---------------------------------------------------------------- limits
@pytest.mark.parametrize(("limits", "ctrl", "expected", "warned"), [
    ("[-1 1]", "", (-1, 1, 0, 0), []),
    ("[-1 1 2]", "", (-1, 1, 0, 2), []),                                  # [lo hi vel]
    ("[-1 1 2 -1 30]", "", (-1, 1, 30, 2), []),                           # [lo hi vel acc effort]
    ("[-1 1 2 5 30]", "", (-1, 1, 30, 2), ["acceleration limit is ignored"]),
    ("[-1 1 2 -1 30 7 8]", "", (-1, 1, 30, 2), ["2 entries after [lo hi velocity acceleration effort]"]),
    ("[-1 1]", ", ctrl_limits: [3 -1 40]", (-1, 1, 40, 3), []),
    ("[-1 1 2 -1 30]", ", ctrl_limits: [3 -1 -1]", (-1, 1, 30, 3), ["velocity limit 3.0 differs from 2.0"]),
    ("[-1 1 2 -1 30]", ", ctrl_limits: [-1 -1 -1]", (-1, 1, 30, 2), []),    # -1 = none: limits' own values stay
    ("[0 0 0 100 -1 100]", ", ctrl_limits: [100 -1 100]", (None, None, 100, 100), ["read as no position limits"]),
])
def test_one_dof_limits_take_velocity_and_effort_as_rai_defines_them(limits, ctrl, expected, warned):
    model, msgs = read_quiet(ARM % (limits, ctrl))
    j = model.joints["j"]
    lo, hi, eff, vel = expected
    assert (j.limit.lower, j.limit.upper, j.limit.effort, j.limit.velocity) == (lo, hi, eff, vel)
    assert j.type == ("continuous" if lo is None else "revolute")
    for w in warned:
        assert any(w in m and "t.g:2: frame 'j' attribute" in m for m in msgs), msgs
    if not warned:
        assert not msgs, msgs


def test_multi_dof_limits_use_current_rai_layout_and_fall_back_to_the_older_one():
    text = "base { }\nj (base) { joint: transXYPhi, limits: %s }\nl (j) { mass: 1, shape: sphere, size: [.1] }\n"
    model, msgs = read_quiet(text % "[-10, -9, -6, 10, 9, 6]")  # pr2.g: [lo lo lo hi hi hi]
    got = [(model.joints[f"j_{s}"].limit.lower, model.joints[f"j_{s}"].limit.upper) for s in ("x", "y", "phi")]
    assert got == [(-10, 10), (-9, 9), (-6, 6)] and not msgs
    model, msgs = read_quiet(text % "[-1 1 -2 2 -3 3]")  # older rai: pairs; as rows a lower limit is above its upper
    got = [(model.joints[f"j_{s}"].limit.lower, model.joints[f"j_{s}"].limit.upper) for s in ("x", "y", "phi")]
    assert got == [(-1, 1), (-2, 2), (-3, 3)]
    assert len(msgs) == 1 and "t.g:2: frame 'j' attribute 'limits': read as [lo1 hi1 lo2 hi2 ..]" in msgs[0]
    model, msgs = read_quiet(text % "[-1 -2 -3 1 2 3 0.5 0.5]")
    assert model.joints["j_y"].limit.upper == 2 and any("2 entries after the 6 position limits" in m for m in msgs)
    with pytest.raises(RobotModelError, match=r"t.g:2: frame 'j' attribute 'limits': limits needs at least 6"):
        read_g(text % "[-1 1 -2 2]", "t.g")
    with pytest.raises(RobotModelError, match=r"lower limit 3\.0 is above upper limit -3\.0"):
        read_g(text % "[3 -1 -2 -3 1 2]", "t.g")


def test_written_multi_dof_limits_read_back_in_rai_layout(tmp_path):
    text = "base { }\nj (base) { joint: transXY, limits: [-1 -1 1 1] }\nl (j) { mass: 1, shape: sphere, size: [.1] }\n"
    model, _ = read_quiet(text)
    written = write_g(model)
    assert "limits: [-1 -1 1 1]" in written
    again, msgs = read_quiet(written)
    assert [(again.joints[n].limit.lower, again.joints[n].limit.upper) for n in ("j_x", "j_y")] == [(-1, 1), (-1, 1)]
    assert not msgs


# ---------------------------------------------------------------- names
def test_names_may_hold_punctuation_as_in_rai_keys():
    model, msgs = read_quiet("""
        Body_Torso: { mass: 1, shape: box, size: [.1 .1 .1] }
        Body_Torso>HNP (Body_Torso): { Q: "[0.01, 0, 0.2, 0.707107, 0, 0, 0.707107]" }
        HNP (Body_Torso>HNP): { joint: hingeX, limits: [-0.5, 0.5, 1, 10, 1], ctrl_limits: [1, 10, 1] }
        >iiwa_link.1-a/b*c+d@e$f (HNP): { mass: 1, shape: sphere, size: [.1] }
    """)
    j = model.joints["HNP"]
    assert j.parent == "Body_Torso" and j.child == ">iiwa_link.1-a/b*c+d@e$f"
    assert np.allclose(j.origin.xyz, [0.01, 0, 0.2]) and np.allclose(j.origin.rpy, [0, 0, math.pi / 2])
    assert msgs == ["t.g:4: frame 'HNP' attribute 'limits': the acceleration limit is ignored (URDF joints have none)"]
    with pytest.raises(RobotModelError, match=r"t.g:1: syntax: unexpected character '~'"):
        read_g("a~b { }", "t.g")


def test_unnamed_frames_get_rai_names_and_one_warning():
    text = """
        base { mass: 1 }
        (base): { shape: box, size: [.1 .1 .1], Q: "t(0 0 .1)" }
        _1 (base) { Q: "t(1 0 0)" }
        (base) { shape: sphere, size: [.2], contact: 0 }
    """
    model, msgs = read_quiet(text)
    again, _ = read_quiet(text)
    assert [v.name for v in model.links["base"].visuals] == ["_1_", "_3"]  # '_1' is taken by a named frame
    assert [v.name for v in again.links["base"].visuals] == ["_1_", "_3"]
    assert [c.name for c in model.links["base"].collisions] == ["_1_"]
    assert len(msgs) == 1 and msgs[0].startswith("t.g:3: unnamed frame: 2 frame(s) without a name")
    assert "t.g:5 -> '_3'" in msgs[0]


def test_tags_and_keys_without_colon():
    model, msgs = read_quiet("frame base { mass: 1, size[.1 .2 .3], shape: box }\n"
                             "frame tip (base) { Q<t(0 0 1)> }\nbody other (base) { rel: [0 1 0] }\n")
    assert model.links["base"].visuals[0].geometry.size.tolist() == [0.1, 0.2, 0.3]
    assert model.joints["tip_joint"].origin.xyz.tolist() == [0, 0, 1]
    assert model.joints["other_joint"].origin.xyz.tolist() == [0, 1, 0]  # rel: is older rai's Q
    assert msgs == ["t.g:3: frame 'other': the words ['body'] in front of the frame name are ignored "
                    "(rai reads them as tags; only 'Edit' has a meaning for frames)"]


# ---------------------------------------------------------------- Edit, Prefix, Include
def test_edit_merges_attributes_moves_the_frame_and_replaces_its_pose():
    model, msgs = read_quiet("""
        Edit j: { q: 0.5 }
        world { }
        table (world) { Q: [1 0 0], mass: 5, shape: box, size: [1 1 .1] }
        base { X: [0 0 3], mass: 1, shape: sphere, size: [.1] }
        j_origin (base) { Q: [0 0 .2] }
        j (j_origin) { joint: hingeZ, limits: [-1 1], q: 0.1 }
        link (j) { mass: 1, shape: sphere, size: [.1] }
        Edit base (table): { Q: "t(0 0 .05) d(90 0 0 1)", joint: rigid }
        Edit j: { limits: [-2 2] }
    """)
    assert not msgs
    assert model.joints["base_joint"].parent == "table"
    assert np.allclose(model.joints["base_joint"].origin.xyz, [0, 0, 0.05])
    assert np.allclose(model.joints["base_joint"].origin.rpy, [0, 0, math.pi / 2])
    j = model.joints["j"]
    assert (j.initial_position, j.limit.lower, j.limit.upper) == (0.5, -2, 2)


def test_edit_of_an_unknown_frame_defines_it_with_a_warning():
    model, msgs = read_quiet("base { }\nEdit tip (base): { Q: [0 0 1] }\n")
    assert model.joints["tip_joint"].parent == "base"
    assert msgs == ["t.g:2: frame 'tip': Edit of a frame that does not exist; it defines the frame, as rai does"]


def test_prefix_include_and_edit_like_rai_models_scenarios(tmp_path):
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "finger.g").write_text(
        "finger_base { }\nf1 (finger_base) { joint: hingeY, limits: [-1 1] }\n"
        "l1 (f1) { mass: 1, shape: sphere, size: [.1] }\n"
        "f2 (l1) { joint: hingeY, mimic: f1 }\nl2 (f2) { mass: 1, shape: sphere, size: [.1] }\n"
        "Include: 'tip.g'\n")  # relative to parts/, not to the including file's folder
    (tmp_path / "parts" / "tip.g").write_text("tip (l2) { Q: [0 0 .1] }\n")
    main = tmp_path / "hand.g"
    main.write_text("palm { }\nPrefix: 'a_'\nInclude: <parts/finger.g>\nplain (palm) { }\n"
                    "Prefix: \"b_\", Include: <parts/finger.g>\nPrefix: False\n"
                    "Edit a_finger_base (palm): { Q: [1 0 0] }\nEdit b_finger_base (palm): { Q: [-1 0 0] }\n")
    model = load_robot(main)
    # Prefix applies to the next Include (and rai drops it after that Include), so 'plain' keeps its name.
    assert "plain" in model.links and "a_plain" not in model.links
    for p, x in (("a_", 1), ("b_", -1)):
        # finger_base, moved below palm by the Edit, is folded into f1's origin (a pre frame)
        assert model.joints[f"{p}f1"].parent == "palm" and model.joints[f"{p}f1"].origin.xyz.tolist() == [x, 0, 0]
        assert model.joints[f"{p}f2"].mimic.joint == f"{p}f1"
        assert model.joints[f"{p}tip_joint"].parent == f"{p}l2"


def test_prefix_names_the_frames_that_follow_but_not_their_parents():
    body = "{ mass: 1, shape: sphere, size: [.1] }"
    model, msgs = read_quiet(f"base {body}\nPrefix: 'x_'\narm (base) {body}\nPrefix: false\nhand (x_arm) {body}\n"
                             f"Prefix: [1 2]\nfoot (base) {body}\n")
    assert model.joints["x_arm_joint"].parent == "base" and model.joints["hand_joint"].parent == "x_arm"
    assert "foot" in model.links
    assert msgs == ["t.g:6: Prefix: a Prefix is a string (or False to end it), got array [1.0, 2.0]; "
                    "ignored, as rai does"]


def test_errors_in_edits_and_includes_name_their_own_file_and_line(tmp_path):
    (tmp_path / "arm.g").write_text("base { }\nj (base) { joint: hingeX, limits: [-1 1] }\nl (j) { }\n")
    main = tmp_path / "robot.g"
    main.write_text("Include: 'arm.g'\n\nEdit j: { limits: [1 -1] }\n")
    with pytest.raises(RobotModelError) as err:
        load_robot(main)
    assert str(err.value).startswith(f"{main}:3: frame 'j' attribute 'limits': lower limit 1.0 is above")
    main.write_text("Include: 'arm.yml'\n")
    with pytest.raises(RobotModelError, match=r"robot.g:1: Include: Include of '.*arm.yml': rai's YAML"):
        load_robot(main)


# ---------------------------------------------------------------- pose
def test_pose_is_absolute_and_warns_exactly_where_newer_rai_reads_it_differently():
    b = "mass: 1, shape: sphere, size: [.1]"
    model, msgs = read_quiet(f"base {{ X: [0 0 1], {b} }}\nat_origin (base) {{ {b} }}\n"
                             f"a (base) {{ pose: [0 0 1.5], {b} }}\nc {{ pose: [1 0 0], {b} }}\n"
                             f"d (at_origin) {{ pose: [0 0 2], {b} }}\n")
    assert np.allclose(model.joints["a_joint"].origin.xyz, [0, 0, 0.5])   # absolute, as X
    # a and d hang below frames at z = 1; the root c reads the same either way
    assert sorted(m.split(":")[1] for m in msgs) == ["3", "5"], msgs
    assert any(m.startswith("t.g:3: frame 'a' attribute 'pose': 'pose' is read as absolute (like X), as rai did "
                            "until April 2025") for m in msgs), msgs
    text = "base {{ }}\nf (base) {{ Q: {}, {} }}\ng (f) {{ pose: {}, {} }}\n"
    model, msgs = read_quiet(text.format("[0 0 1]", b, "[0 0 1]", b))
    assert np.allclose(model.joints["g_joint"].origin.xyz, [0, 0, 0]) and len(msgs) == 1
    _, msgs = read_quiet(text.format("<d(90 0 0 1)>", b, "[0 0 0]", b))
    assert len(msgs) == 1  # a turned parent also makes the readings differ
    _, msgs = read_quiet(text.format("[0 0 0]", b, "[0 0 1]", b))
    assert not msgs
    newer, msgs = read_quiet(text.format("[0 0 1]", b, "[0 0 1]", b), pose_relative=True)
    assert np.allclose(newer.joints["g_joint"].origin.xyz, [0, 0, 1]) and not msgs


# ---------------------------------------------------------------- rai-robotModels-style files
def test_panda_style_arm():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = load_robot(RAI_MODELS / "panda_arm.g")
    msgs = [str(w.message) for w in caught]
    assert len(msgs) == 1 and "2 frame(s) without a name" in msgs[0]
    j1 = model.joints["panda_joint1"]
    assert (j1.limit.lower, j1.limit.upper, j1.limit.velocity, j1.limit.effort) == (-2.8973, 2.8973, 2.175, 87)
    assert np.allclose(j1.origin.xyz, [0, 0, 0.333])
    assert np.allclose(model.joints["panda_joint3"].origin.xyz, [0, -0.316, 0])  # from the quoted 7-vector
    assert [c.name for c in model.links["panda_joint1"].collisions][-1] == "_4"
    assert model.joints["panda_finger_joint2"].mimic.joint == "panda_finger_joint1"


def test_two_pandas_on_a_table():
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        model = load_robot(RAI_MODELS / "two_pandas.g")
    for p, x, q2, hi2 in (("l_", -0.4, -0.5, 1.7628), ("r_", 0.4, 0.5, 1.0)):
        base = model.joints[f"{p}panda_base"]
        assert base.type == "fixed" and base.parent == "origin" and base.child == f"{p}panda_link0"
        assert np.allclose(base.origin.xyz, [x, -0.3, 0]) and np.allclose(base.origin.rpy, [0, 0, math.pi / 2])
        assert model.joints[f"{p}panda_joint2"].initial_position == q2
        assert model.joints[f"{p}panda_joint2"].limit.upper == hi2
        assert model.joints[f"{p}panda_finger_joint2"].mimic.joint == f"{p}panda_finger_joint1"
    assert model.joints["origin_joint"].origin.xyz.tolist() == [0, 0, 0.6]


def test_pr2_style_base():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = load_robot(RAI_MODELS / "pr2_base.g")
    msgs = [str(w.message) for w in caught]
    assert [(model.joints[n].limit.lower, model.joints[n].limit.upper) for n in
            ("worldTranslationRotation_x", "worldTranslationRotation_y", "worldTranslationRotation_phi")] == [
        (-10, 10), (-10, 10), (-6, 6)]
    assert model.joints["worldTranslationRotation_phi"].initial_position == pytest.approx(math.pi / 2)
    caster = model.joints["fl_caster_rotation_joint"]
    assert caster.type == "continuous" and (caster.limit.velocity, caster.limit.effort) == (100, 100)
    torso = model.joints["torso_lift_joint"]
    assert (torso.limit.lower, torso.limit.upper, torso.limit.velocity, torso.limit.effort) == (0, 0.31, 0.013, 1e4)
    assert model.joints["head_pan_joint"].parent == "torso_lift_link"
    assert np.allclose(model.joints["head_pan_joint"].origin.xyz, [-0.017, 0, 0.38])
    assert len(msgs) == 2 and "pr2_base.g:9: frame 'fl_caster_rotation_joint' attribute 'limits'" in msgs[0]
    assert "pr2_base.g:15: frame 'head_pan_joint' attribute 'limits': the acceleration limit" in msgs[1]


# ---------------------------------------------------------------- parent order and cycles
def test_a_parent_may_follow_its_child_as_in_rai():
    model, _ = read_quiet("child (parent) { mass: 1, shape: sphere, size: [.1] }\n"
                          "parent { mass: 1, shape: sphere, size: [.1] }\n")
    assert model.joints["child_joint"].parent == "parent"


@pytest.mark.parametrize(("text", "line", "frame", "cycle"), [
    ("a (c) { }\nb (a) { }\nc (b) { }\n", 1, "a", "a -> b -> c -> a"),
    ("a (a) { }\n", 1, "a", "a -> a"),
    ("a { }\nb (a) { }\nc (b) { }\n\nEdit a (c): { }\n", 5, "a", "a -> b -> c -> a"),  # the Edit closes it
])
def test_kinematic_cycle_is_one_line_naming_where_it_closes(text, line, frame, cycle):
    with pytest.raises(RobotModelError) as err:
        read_g(text, "c.g")
    expected = f"c.g:{line}: frame '{frame}': kinematic cycle: {cycle} (each frame is the parent of the next)"
    assert str(err.value) == expected


def test_unknown_parent_given_by_an_edit_in_another_file_names_that_file(tmp_path):
    (tmp_path / "arm.g").write_text("base { }\narm (base) { }\n")
    main = tmp_path / "robot.g"
    main.write_text("Include: 'arm.g'\nEdit arm (tabel): { }\n")
    with pytest.raises(RobotModelError) as err:
        load_robot(main)
    assert str(err.value).startswith(f"{main}:2: frame 'arm': unknown parent frame 'tabel'")


# ---------------------------------------------------------------- smaller rai habits
def test_false_flags_duplicates_delete_none_joints_and_a_on_joint_frames():
    model, msgs = read_quiet("""
        base { mass: 1, mass: 2, shape: box, size: [.1 .1 .1], contact! }
        gone (base) { shape: sphere, size: [.1] }
        Delete: gone
        Delete: never_there
        Prefix!
        j1 (base) { joint: hingeX, A: "t(0 0 1) d(90 1 0 0)", limits: [-2 2] }
        arm1 (j1) { mass: 1, shape: capsule, Q: [], size: [.4 .1] }
        j2 (arm1) { joint: none, Q: "t(0 0 .2)" }
    """)
    base = model.links["base"]
    assert base.inertial.mass == 1 and not base.collisions and len(base.visuals) == 1  # contact! = contact: false
    assert "gone" not in model.links
    j1 = model.joints["j1"]
    assert j1.parent == "base" and np.allclose(j1.origin.xyz, [0, 0, 1])  # j1_origin folded into the origin
    assert np.allclose(j1.origin.rpy, [math.pi / 2, 0, 0])
    assert model.joints["j2_joint"].type == "fixed"
    assert len(msgs) == 2, msgs
    assert any(m.startswith("t.g:2: frame 'base' attribute 'mass': given twice (first on line 2); the first is used")
               for m in msgs), msgs
    assert any(m.startswith("t.g:5: Delete: no frame 'never_there' to delete") for m in msgs), msgs


def test_a_outside_a_joint_frame_is_still_an_error():
    with pytest.raises(RobotModelError, match=r"t.g:2: frame 'j' attribute 'pre': 'pre:' belongs to a joint frame"):
        read_g("base { }\nj (base) { joint: none, pre: [0 0 1] }\n", "t.g")


def test_include_without_colon_and_syntax_errors_of_unnamed_frames(tmp_path):
    (tmp_path / "arm.g").write_text("arm (base) { mass: 1, shape: sphere, size: [.1] }\n")
    main = tmp_path / "robot.g"
    main.write_text("base { }\nInclude <arm.g>\n")
    assert load_robot(main).joints["arm_joint"].parent == "base"
    with pytest.raises(RobotModelError) as err:
        read_g("base { }\n(base) [1 2]\n", "t.g")
    assert str(err.value) == "t.g:2: unnamed frame: expected '{' to open the attributes of unnamed frame (found '[')"
    with pytest.raises(RobotModelError) as err:
        read_g("base { }\n(base) {\n  shape: box\n", "t.g")
    assert str(err.value) == "t.g:2: unnamed frame: '{' is not closed by a matching '}' (reached the end of the file)"


def test_quat_ball_limits_are_ignored_with_a_warning():
    # rai-robotModels' pandaFloatingGripper.g: bounds on the four quaternion components
    model, msgs = read_quiet("base { }\nb (base) { joint: quatBall, limits: [-1 -1 -1 -1 1 1 1 1] }\n"
                             "l (b) { mass: 1, shape: sphere, size: [.1] }\n")
    assert all(model.joints[f"b_{s}"].type == "continuous" for s in "xyz")
    assert msgs == ["t.g:2: frame 'b' attribute 'limits': ignored: a quatBall joint's limits bound quaternion "
                    "components, which its three URDF revolute joints cannot express"]
