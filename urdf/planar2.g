# planar2: a 2-DOF arm moving in the vertical x-z plane -- the rai .g twin of planar2.urdf.
#
# Both joints turn about y, so gravity loads them; at q = 0 the arm is stretched horizontally
# along +x. Links are solid shapes: only the masses are given, the centres of mass and inertias
# are computed from the shapes (uniform density), which gives exactly the numbers planar2.urdf
# lists. q: is the home pose (q1 = -0.4, q2 = 0.8), ctrl_limits is [velocity -1 effort].
# damping/friction are robot_core extensions that rai ignores.

base_link { mass: 3.0 }
pedestal (base_link) { Q: <t(0 0 0.25)>, shape: box, size: [0.1 0.1 0.5], color: [0.35 0.36 0.38] }

# joint1 written frame by frame: a fixed origin frame, the joint frame, then the moving link.
joint1_origin (base_link) { Q: <t(0 0 0.5)> }
joint1 (joint1_origin) {
  joint: hingeY, limits: [-3 3], ctrl_limits: [3 -1 30], q: -0.4,
  damping: 0.1, friction: 0.05
}
link1 (joint1) { mass: 1.0 }
link1_body (link1) { Q: <t(0.25 0 0) d(90 0 1 0)>, shape: cylinder, size: [0.5 0.03], color: [0.15 0.35 0.8] }

# joint2 written with the shorthand: A is the joint origin on link1, link2 hangs at B = identity.
link2 { mass: 0.8 }
link2_body (link2) { Q: <t(0.2 0 0) d(90 0 1 0)>, shape: cylinder, size: [0.4 0.025], color: [0.95 0.45 0.1] }
joint2 (link1 link2) {
  joint: hingeY, A: <t(0.5 0 0)>, limits: [-2.6 2.6], ctrl_limits: [3 -1 15], q: 0.8,
  damping: 0.1, friction: 0.05
}

# The tip: a massless frame at the end of link2 (a link of its own, on fixed joint tip_joint).
tip (link2) { Q: <t(0.4 0 0)> }
