# A PR2-like base and torso in the style of rai-robotModels' pr2.g / pr2_clean.g (written for
# robot_core's tests): a transXYPhi base with current rai's [lo lo lo hi hi hi] limits, casters whose
# limits rai wrote as zeros followed by ctrl_limits, a 5-number transZ torso, and frame names with
# '>' as rai's URDF converter makes them (hubo_clean.g). The head uses an old 'frame' tag.
world: {}
worldTranslationRotation (world): { joint: transXYPhi, Q: "d(90 0 0 1)", gains: [1, 1], limits: [-10, -10, -6, 10, 10, 6], ctrl_H: 10, base }
base_footprint (worldTranslationRotation): { mass: 50, shape: ssBox, size: [.65 .65 .2 .02], Q: "t(0 0 .1)" }
base>fl_caster (base_footprint): { Q: "[0.2246, 0.2246, 0.0282, 1, 0, 0, 0]" }
fl_caster_rotation_joint (base>fl_caster): { joint: hingeZ, limits: [0, 0, 0, 100, -1, 100], ctrl_limits: [100, -1, 100] }
fl_caster_link (fl_caster_rotation_joint): { mass: 3.5, shape: cylinder, size: [.05 .08] }
base>torso (base_footprint): { Q: [-0.05, 0, 0.739675] }
torso_lift_joint (base>torso): { joint: transZ, limits: [0, 0.31, 0.013, -1, 10000], ctrl_limits: [0.013, -1, 10000] }
torso_lift_link (torso_lift_joint): { mass: 36.4, shape: box, size: [.3 .6 .6] }
frame torso>head (torso_lift_link): { Q: "t(-0.017 0 0.38)" }
frame head_pan_joint (torso>head): { joint: hingeZ, limits: [-3.007, 3.007, 6, 10, 2.645], ctrl_limits: [6, 10, 2.645] }
head_pan_link (head_pan_joint): { mass: 6.3, shape: box, size: [.2 .2 .1] }
