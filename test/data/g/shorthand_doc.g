# The example of rai's .g documentation (seed 004): frames, a joint frame chain, and the joint shorthand.
# (The documentation writes "joint1 (arm1)", a typo: its text says joint1 is a child of joint1_pre.)
stem { X:<t(0 0 .5)>, shape:capsule, mass:1, size:[1 .05] }
joint1_pre (stem) { Q:<t(0 0 .5) d(90 1 0 0)> }
joint1 (joint1_pre) { joint:hingeX, Q:<d(-30 1 0 0)> }
arm1 (joint1) { Q:<t(0 0 .15)>, shape:capsule, mass:1, size:[.3 .05] }
arm2 { shape:capsule, mass:1, size:[.3 .05] }
eff { shape:capsule, mass:1, size:[.3 .05] }
joint2 (arm1 arm2) { joint:hingeX, A:<t(0 0 .15) d(0 0 0 1)>, Q:<d(-10 1 0 0)>, B:<t(0 0 .15) > }
joint3 (arm2 eff ) { joint:hingeX, A:<t(0 0 .15) d(0 0 0 1)>, Q:<d(-10 1 0 0)>, B:<t(0 0 .15) > }
target { X:<t(.0 .2 1.7)>, shape:sphere, mass:.001, size:[0 0 0 .02], color:[0 0 0] }
