# A three-joint Panda-like arm written the way rai-robotModels' converted files are (panda_clean.g):
# 'name(parent): { ... }', 7-vector and string poses, [lo hi vel acc effort] limits with ctrl_limits,
# and unnamed collision frames. Written for robot_core's tests; the numbers are Panda's.

panda_base: { multibody: true }
panda_link0(panda_base): { shape: capsule, size: [.1, .06], color: [.9 .9 .9], mass: 0.63, contact: -2 }
panda_joint1_origin(panda_link0): { Q: [0, 0, 0.333, 1, 0, 0, 0] }
panda_joint1(panda_joint1_origin): { joint: hingeZ, limits: [-2.8973, 2.8973, 2.175, -1, 87], ctrl_limits: [2.175, -1, 87],
    mass: 4.97, shape: capsule, size: [.2, .06] }
(panda_joint1): { shape: capsule, color: [1.,1.,1.,.1], size: [.2, .08], Q: "t(0 0 -.15)", contact: -2 }
panda_joint2_origin(panda_joint1): { Q: [0, 0, 0, 0.707107, -0.707107, 0, 0] }
panda_joint2(panda_joint2_origin): { joint: hingeZ, limits: [-1.7628, 1.7628, 2.175, -1, 87], ctrl_limits: [2.175, -1, 87],
    mass: 0.65, shape: capsule, size: [.12, .06] }
(panda_joint2): { shape: capsule, color: [1.,1.,1.,.1], size: [.12, .12], Q: "t(0 0 .0)", contact: -2 }
panda_joint3_origin(panda_joint2): { Q: "[0, -0.316, 0, 0.707107, 0.707107, 0, 0]" }
panda_joint3(panda_joint3_origin): { joint: hingeZ, limits: [-2.8973, 2.8973, 2.175, -1, 87], ctrl_limits: [2.175, -1, 87],
    mass: 3.23, shape: capsule, size: [.2, .06] }
panda_hand(panda_joint3): { Q: "t(0 0 .107) d(-45 0 0 1)", shape: ssBox, size: [.05 .2 .06 .01], mass: 0.73 }
panda_finger_joint1_origin(panda_hand): { Q: "t(0 0 .0584)" }
panda_finger_joint1(panda_finger_joint1_origin): { joint: transY, limits: [0, 0.04, 0.2, -1, 20], ctrl_limits: [0.2, -1, 20],
    q: .04, mass: 0.015, shape: box, size: [.02 .01 .05] }
panda_finger_joint2_origin(panda_hand): { Q: "t(0 0 .0584) d(180 0 0 1)" }
panda_finger_joint2(panda_finger_joint2_origin): { joint: transY, mimic: panda_finger_joint1, limits: [0, 0.04],
    mass: 0.015, shape: box, size: [.02 .01 .05] }
