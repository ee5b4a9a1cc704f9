"""How robot_core says in standard URDF what plain URDF cannot, so that written files load everywhere.

The URDF writer must produce files that urdfdom (ROS, Pinocchio, MoveIt) accepts, yet ``write -> read`` must
give back the same RobotModel. Two RobotModel features have no URDF spelling:

- **Unbounded revolute/prismatic joints** (a rai ``transX`` without ``limits``, or a bound given as None in
  code). urdfdom rejects revolute and prismatic joints without ``<limit>``, and ``<limit>`` has no "none".
  The writer puts ``lower="-1e+16"`` / ``upper="1e+16"`` (:data:`UNBOUNDED_LIMIT`, far beyond any real joint
  travel, still finite for every consumer). The reader takes any bound at or beyond it (including ``inf``)
  as "no bound"; a ``<limit>`` that then says nothing at all (no bounds, effort and velocity 0) is read as no
  limit, exactly what was written.
- **Capsules** (rai ``shape: capsule``). URDF has no capsule. The writer writes ``<cylinder>`` with the same
  radius and length (length = the straight part between the two hemisphere centres) and the attribute
  ``robot_core_shape="capsule"``, which other readers ignore: they see the capsule's cylindrical part, we read
  a capsule back. A non-standard ``<capsule radius length>`` element (written by some tools) is read as well.
"""

from __future__ import annotations

UNBOUNDED_LIMIT = 1e16
SHAPE_ATTRIBUTE = "robot_core_shape"
# Shapes written as a standard stand-in element plus SHAPE_ATTRIBUTE: model kind -> URDF element.
STAND_IN_ELEMENT = {"capsule": "cylinder"}


def bound_from_urdf(value: float, upper: bool) -> float | None:
    """A <limit> lower/upper as read; None when it is the writer's (or any larger) 'no bound' value."""
    if upper:
        return None if value >= UNBOUNDED_LIMIT else value
    return None if value <= -UNBOUNDED_LIMIT else value


def bound_to_urdf(value: float | None, upper: bool) -> float:
    """A RobotModel bound as written: None becomes +-UNBOUNDED_LIMIT."""
    if value is None:
        return UNBOUNDED_LIMIT if upper else -UNBOUNDED_LIMIT
    return value
