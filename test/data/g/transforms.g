# Every pose notation. Each frame here is a massless leaf, so it becomes its own link on a fixed
# joint whose origin is the frame's pose relative to its parent. Expected matrices are in the test.

base { mass: 1, shape: sphere, size: [0.1] }

f_t (base) { Q: <t(1 2 3)> }
f_q (base) { Q: <q(1 0 1 0)> }                       # quaternion w x y z, normalised: 90 deg about y
f_r (base) { Q: <r(1.5707963267948966 0 0 1)> }     # radians about an axis
f_d (base) { Q: <d(90 1 1 0)> }                      # degrees about an axis (normalised)
f_E (base) { Q: <E(0.1 0.2 0.3)> }                   # roll pitch yaw
f_chain (base) { Q: <t(0 0 .5) d(90 1 0 0) t(0 0 .2) E(0 0 1) q(1 0 0 1)> }   # composed left to right
f_seven (base) { Q: [1 2 3 0.5 0.5 0.5 0.5] }         # x y z qw qx qy qz
f_three (base) { Q: [0.1, 0.2, 0.3] }                 # position only (commas allowed)
f_four (base) { Q: [0 0 0 1] }                        # orientation only: 180 deg about z
f_string (base) { Q: "t(0 1 0) d(45 0 0 1)" }        # newer rai writes chains as strings
f_T (base) { Q: <T t(1 0 0) d(-90 0 1 0)> }          # older rai marks transforms with T
f_multi (base) { Q: <t(0.1 0.2 0.3)
                     d(30 0 0 1)> }                  # a chain may span lines
f_abs (f_t) { X: <t(1 1 1)> }                        # absolute: relative to f_t it is t(0 -1 -2)
f_pose (f_d) { pose: <t(0 0 1)> }                     # pose: read as X (warns: newer rai reads it as Q)

# X below a joint is taken at the file's initial joint values (here j = 90 deg about z).
j_origin (base) { Q: <t(0 0 1)> }
j (j_origin) { joint: hingeZ, q: 1.5707963267948966 }
j_link (j) { mass: 1, shape: box, size: [0.1 0.1 0.1] }
j_x (j_link) { X: <t(1 0 1)> }                        # relative to j_link: t(0 -1 0)
