# Every shape type rai has a URDF counterpart for, the size conventions, visual/contact flags,
# shape frames, and the mass/inertia variants.

base { mass: 4, inertia: [0.1 0.2 0.3], com: [0 0 0.05] }        # diagonal inertia, explicit com
box_shape (base) { Q: <t(0 0 0.05)>, shape: box, size: [0.2 0.3 0.1], color: [1 0 0] }
ssbox_shape (base) { Q: <t(0.5 0 0)>, shape: ssBox, size: [0.2 0.2 0.2 0.02], color: [0 1 0 0.5] }
sphere_old (base) { Q: <t(-0.5 0 0)>, shape: sphere, size: [0 0 0 0.05] }    # older 4-vector: radius last
capsule_shape (base) { Q: <t(0 0.5 0)>, shape: capsule, size: [0.3 0.04], contact: 0 }   # visual only
cylinder_old (base) { Q: <t(0 -0.5 0)>, shape: cylinder, size: [0 0 0.2 0.05], visual: false } # collision only
sscyl (base) { Q: <t(0 0 0.5)>, shape: ssCylinder, size: [0.2 0.05 0.01] }
marker (base) { Q: <t(0 0 1)>, shape: marker, size: [0.1] }                  # no geometry: stays a plain frame
mesh_shape (base) { Q: <t(1 0 0)>, shape: mesh, mesh: <meshes/tetra.stl>, meshscale: 0.5, color: [0.2 0.2 0.2] }
cvx_shape (base) { Q: <t(1 1 0)>, shape: ssCvx, mesh: 'meshes/tetra.stl', meshscale: [1 2 3] }

# A full inertia tensor [ixx ixy ixz iyy iyz izz] and a shape on the link frame itself.
arm_origin (base) { Q: <t(0 0 0.2)> }
arm (arm_origin) { joint: hingeZ, limits: [-1 1] }
arm_link (arm) { mass: 1.5, inertia: [0.02 0.001 0 0.03 0 0.04], shape: box, size: [0.3 0.05 0.05] }

# Inertia computed from several shapes (uniform density), centre of mass from their centroid.
two_origin (arm_link) { Q: <t(0.3 0 0)> }
two (two_origin) { joint: hingeZ, limits: [-1 1] }
two_link (two) { mass: 2 }
two_a (two_link) { Q: <t(0.1 0 0)>, shape: box, size: [0.2 0.1 0.1] }
two_b (two_link) { Q: <t(0.3 0 0) d(90 0 1 0)>, shape: cylinder, size: [0.2 0.05] }
