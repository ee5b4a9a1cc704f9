# Two arms on a table, as rai-robotModels' scenarios/pandasTable.g builds them: Prefix + Include
# twice, then Edit to place the bases and set initial joint values. Written for robot_core's tests.
world: {}

origin (world): { Q: [0, 0, .6], shape: marker, size: [.03] }
table (origin): { Q: [0, 0, -.05], shape: ssBox, size: [2.3, 1.24, .1, .02], color: [.3, .3, .3], contact, logical:{ } }

## two pandas
Prefix: "l_"
Include: <panda_arm.g>
Prefix: "r_", Include: <panda_arm.g>
Prefix: False

## position them on the table
Edit l_panda_base (origin): { Q: "t(-.4 -.3 .0) d(90 0 0 1)", motors, joint: rigid }
Edit r_panda_base (origin): { Q: "t( .4 -.3 .0) d(90 0 0 1)", motors, joint: rigid }
Edit l_panda_joint2: { q: -.5 }
Edit r_panda_joint2: { q: .5, limits: [-1, 1] }
