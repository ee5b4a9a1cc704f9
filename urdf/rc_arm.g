# rc_arm: the 7-DOF arm with a parallel gripper -- the rai .g twin of rc_arm.urdf.
#
# Generated from rc_arm.urdf with robot_core.model.rai_writer.write_g (e.g. robot-core convert
# urdf/rc_arm.urdf urdf/rc_arm.g); test_model_rai.py checks that both files describe the same robot.
# Conventions (see rai_writer): <joint>_origin frames hold the joint origins, q: is the home pose,
# ctrl_limits is [velocity -1 effort], shapes sit on child frames named after the URDF visuals,
# contact: 0 marks visual-only shapes. mimic_*/damping/friction are robot_core extensions.
# <ros2_control> and <rbc> have no .g form: load rc_arm.urdf (or rc_arm.urdf.xacro) when you need them.
base_link { mass: 4, com: [0 0 0.05], inertia: [0.009733333333333333 0 0 0.009733333333333333 0 0.0128] }
base_body (base_link) { Q: <t(0 0 0.05)>, shape: cylinder, size: [0.1 0.08], color: [0.35 0.36 0.38] }
joint1_origin (base_link) { Q: <t(0 0 0.1)> }
joint1 (joint1_origin) { joint: hingeZ, limits: [-2.9 2.9], ctrl_limits: [2.175 -1 87], q: 0, damping: 0.5, friction: 0.2 }
link1 (joint1) { mass: 3, com: [0 0 0.11], inertia: [0.014799999999999999 0 0 0.014799999999999999 0 0.005399999999999999] }
link1_body (link1) { Q: <t(0 0 0.11)>, shape: cylinder, size: [0.22 0.06], color: [0.92 0.92 0.9] }
link1_housing (link1) { shape: sphere, size: [0.063], color: [0.35 0.36 0.38], contact: 0 }
joint2_origin (link1) { Q: <t(0 0 0.22)> }
joint2 (joint2_origin) { joint: hingeY, limits: [-1.76 1.76], ctrl_limits: [2.175 -1 87], q: 0.3, damping: 0.5, friction: 0.2 }
link2 (joint2) { mass: 2.8, com: [0 0 0.085], inertia: [0.009263333333333333 0 0 0.009263333333333333 0 0.005039999999999999] }
link2_body (link2) { Q: <t(0 0 0.085)>, shape: cylinder, size: [0.17 0.06], color: [0.92 0.92 0.9] }
link2_housing (link2) { shape: sphere, size: [0.063], color: [0.35 0.36 0.38], contact: 0 }
joint3_origin (link2) { Q: <t(0 0 0.17)> }
joint3 (joint3_origin) { joint: hingeZ, limits: [-2.9 2.9], ctrl_limits: [2.175 -1 87], q: 0, damping: 0.5, friction: 0.2 }
link3 (joint3) { mass: 2.4, com: [0 0 0.085], inertia: [0.007595000000000001 0 0 0.007595000000000001 0 0.00363] }
link3_body (link3) { Q: <t(0 0 0.085)>, shape: cylinder, size: [0.17 0.055], color: [0.95 0.45 0.1] }
link3_housing (link3) { shape: sphere, size: [0.05775], color: [0.35 0.36 0.38], contact: 0 }
joint4_origin (link3) { Q: <t(0 0 0.17)> }
joint4 (joint4_origin) { joint: hingeY, limits: [0.07 3], ctrl_limits: [2.175 -1 87], q: 1.9, damping: 0.5, friction: 0.2 }
link4 (joint4) { mass: 2, com: [0 0 0.08], inertia: [0.005516666666666667 0 0 0.005516666666666667 0 0.0025000000000000005] }
link4_body (link4) { Q: <t(0 0 0.08)>, shape: cylinder, size: [0.16 0.05], color: [0.92 0.92 0.9] }
link4_housing (link4) { shape: sphere, size: [0.052500000000000005], color: [0.35 0.36 0.38], contact: 0 }
joint5_origin (link4) { Q: <t(0 0 0.16)> }
joint5 (joint5_origin) { joint: hingeZ, limits: [-2.9 2.9], ctrl_limits: [2.61 -1 12], q: 0, damping: 0.2, friction: 0.1 }
link5 (joint5) { mass: 1.6, com: [0 0 0.08], inertia: [0.004413333333333334 0 0 0.004413333333333334 0 0.0020000000000000005] }
link5_body (link5) { Q: <t(0 0 0.08)>, shape: cylinder, size: [0.16 0.05], color: [0.95 0.45 0.1] }
link5_housing (link5) { shape: sphere, size: [0.052500000000000005], color: [0.35 0.36 0.38], contact: 0 }
joint6_origin (link5) { Q: <t(0 0 0.16)> }
joint6 (joint6_origin) { joint: hingeY, limits: [-0.5 3.7], ctrl_limits: [2.61 -1 12], q: 0.94, damping: 0.2, friction: 0.1 }
link6 (joint6) { mass: 1, com: [0 0 0.03], inertia: [0.00080625 0 0 0.00080625 0 0.0010125] }
link6_body (link6) { Q: <t(0 0 0.03)>, shape: cylinder, size: [0.06 0.045], color: [0.92 0.92 0.9] }
link6_housing (link6) { shape: sphere, size: [0.04725], color: [0.35 0.36 0.38], contact: 0 }
joint7_origin (link6) { Q: <t(0 0 0.06)> }
joint7 (joint7_origin) { joint: hingeZ, limits: [-2.9 2.9], ctrl_limits: [2.61 -1 12], q: 0, damping: 0.2, friction: 0.1 }
link7 (joint7) { mass: 0.5, com: [0 0 0.0225], inertia: [0.00028437499999999996 0 0 0.00028437499999999996 0 0.0004] }
link7_body (link7) { Q: <t(0 0 0.0225)>, shape: cylinder, size: [0.045 0.04], color: [0.35 0.36 0.38] }
link7_housing (link7) { shape: sphere, size: [0.042], color: [0.35 0.36 0.38], contact: 0 }
hand (link7) { Q: <t(0 0 0.045)>, mass: 0.6, com: [0 0 0.02], inertia: [0.00136 0 0 0.000205 0 0.001405] }
hand_body (hand) { Q: <t(0 0 0.02)>, shape: box, size: [0.05 0.16 0.04], color: [0.1 0.1 0.1] }
finger_left_joint_origin (hand) { Q: <t(0 0 0.04)> }
finger_left_joint (finger_left_joint_origin) { joint: transY, limits: [0 0.04], ctrl_limits: [0.2 -1 20], q: 0.02, damping: 1, friction: 0.1 }
finger_left (finger_left_joint) { mass: 0.05, com: [0 0.006 0.025], inertia: [1.101666666666667e-05 0 0 1.2083333333333335e-05 0 2.266666666666667e-06] }
finger_left_pad (finger_left) { Q: <t(0 0.006 0.025)>, shape: box, size: [0.02 0.012 0.05], color: [0.35 0.36 0.38] }
finger_right_joint_origin (hand) { Q: <t(0 0 0.04) E(0 0 3.141592653589793)> }
finger_right_joint (finger_right_joint_origin) { joint: transY, limits: [0 0.04], ctrl_limits: [0.2 -1 20], mimic: finger_left_joint, damping: 1, friction: 0.1 }
finger_right (finger_right_joint) { Q: <E(0 0 -3.141592653589793)>, mass: 0.05, com: [0 -0.006 0.025], inertia: [1.101666666666667e-05 0 0 1.2083333333333335e-05 0 2.266666666666667e-06] }
finger_right_pad (finger_right) { Q: <t(0 -0.006 0.025)>, shape: box, size: [0.02 0.012 0.05], color: [0.35 0.36 0.38] }
tcp (hand) { Q: <t(0 0 0.075)> }
scene_camera_joint (base_link) { Q: <t(1.25 -0.75 0.95) E(0 0.535 2.389)> }
scene_camera_link (scene_camera_joint) {}
