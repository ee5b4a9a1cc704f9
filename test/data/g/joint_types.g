# Every rai joint type, each on its own branch of a fixed base, most with an initial value.
# Used by test/test_model_rai.py; the expected URDF mapping is documented in robot_core/model/rai_joint_types.py.

base { mass: 2, shape: box, size: [0.4 0.4 0.1], color: [0.5 0.5 0.5] }

# --- one-DOF joints: hingeX/Y/Z -> revolute (continuous without limits), transX/Y/Z -> prismatic
hx_origin (base) { Q: <t(0.1 0 0.2)> }
hx (hx_origin) { joint: hingeX, limits: [-1 1], ctrl_limits: [2 -1 10], q: 0.3 }
hx_link (hx) { mass: 0.5, shape: capsule, size: [0.2 0.02] }

hy_origin (base) { Q: <t(-0.1 0 0.2) d(90 0 0 1)> }
hy (hy_origin) { joint: hingeY, Q: <d(20 0 1 0)> }            # no limits: continuous; initial value from Q
hy_link (hy) { mass: 0.5, shape: cylinder, size: [0.2 0.02] }

hz_origin (base) { Q: <t(0 0.1 0.2)> }
hz (hz_origin) { joint: hingeZ, limits: [-2 2 1.5 -1 7], Q: <r(0.5 0 0 1)> }   # newer rai 5-number limits
hz_link (hz) { mass: 0.5, shape: sphere, size: [0.03] }

tx_origin (base) { Q: <t(0 -0.1 0.2)> }
tx (tx_origin) { joint: transX, limits: [-0.1 0.2], ctrl_limits: [0.5 -1 40], q: 0.05 }
tx_link (tx) { mass: 0.2, shape: box, size: [0.05 0.05 0.05] }

ty_origin (base) { Q: <t(0.2 0.2 0.2)> }
ty (ty_origin) { joint: transY, limits: [-0.1 0.1], Q: [0 0.04 0] }          # 3-vector: a position
ty_link (ty) { mass: 0.2, shape: box, size: [0.05 0.05 0.05] }

tz_origin (base) { Q: <t(0.3 0.3 0.2)> }
tz (tz_origin) { joint: transZ, limits: [0 0.1], X: <t(0.3 0.3 0.25)> }     # absolute pose gives q = 0.05
tz_link (tz) { mass: 0.2, shape: box, size: [0.05 0.05 0.05] }

# --- multi-DOF joints: chains of scalar URDF joints J_<suffix> through massless links J_<suffix>_link;
#     limits are [lo_1 .. lo_n hi_1 .. hi_n], as rai reads them
txy_origin (base) { Q: <t(-0.3 0.3 0.2)> }
txy (txy_origin) { joint: transXY, limits: [-0.1 -0.2 0.1 0.2], q: [0.01 0.02] }
txy_link (txy) { mass: 0.2, shape: box, size: [0.05 0.05 0.05] }

t3_origin (base) { Q: <t(-0.3 -0.3 0.2)> }
t3 (t3_origin) { joint: trans3, limits: [-0.1 0.1], q: [0.01 -0.02 0.03] }
t3_link (t3) { mass: 0.2, shape: box, size: [0.05 0.05 0.05] }

txyphi_origin (base) { Q: <t(0.3 -0.3 0.2)> }
txyphi (txyphi_origin) { joint: transXYPhi, limits: [-1 -1 -3.2 1 1 3.2], q: [0.1 0.2 0.3] }
txyphi_link (txyphi) { mass: 0.2, shape: box, size: [0.05 0.05 0.05] }

phitxy_origin (base) { Q: <t(0.4 0 0.2)> }
phitxy (phitxy_origin) { joint: phiTransXY, Q: <d(30 0 0 1) t(0.1 0.05 0)> }   # unlimited: continuous + prismatic
phitxy_link (phitxy) { mass: 0.2, shape: box, size: [0.05 0.05 0.05] }

univ_origin (base) { Q: <t(-0.4 0 0.2)> }
univ (univ_origin) { joint: universal, limits: [-1 -0.5 1 0.5], q: [0.2 -0.3] }
univ_link (univ) { mass: 0.3, shape: capsule, size: [0.1 0.02] }

ball_origin (base) { Q: <t(0 0.4 0.2)> }
ball (ball_origin) { joint: quatBall, q: [0.9 0.1 0.2 0.3] }                # a quaternion (normalised here)
ball_link (ball) { mass: 0.3, shape: sphere, size: [0.04] }

# --- free / XBall -> floating; rigid -> fixed
free_origin (base) { Q: <t(0 -0.4 0.5)> }
floater (free_origin) { joint: free }
floater_body (floater) { mass: 0.1, shape: sphere, size: [0.02] }

xball_origin (base) { Q: <t(0.1 -0.4 0.5)> }
xball (xball_origin) { joint: XBall }
xball_body (xball) { mass: 0.1, shape: sphere, size: [0.02] }

welded (base) { joint: rigid, Q: <t(0 0 -0.1) E(0 0 0.5)>, mass: 0.4, shape: box, size: [0.1 0.1 0.05] }

# --- the shorthand; B turns the child, so the URDF axis becomes y; and a mimic joint
sh_link { mass: 0.3, shape: box, size: [0.02 0.02 0.2] }
sh (base sh_link) { joint: hingeZ, A: <t(0.45 0.45 0.1)>, q: -0.2, limits: [-1.5 1.5], B: <t(0 0 0.1) d(90 1 0 0)> }

mim_origin (base) { Q: <t(0.1 0 0.3)> }
mim (mim_origin) { joint: hingeX, limits: [-2 2], mimic: hx, mimic_multiplier: 2, mimic_offset: 0.1 }
mim_link (mim) { mass: 0.1, shape: sphere, size: [0.02] }
