"""Reader options applied to a freshly read model: floating base, kinematic-link merge, density-based masses."""

from __future__ import annotations

from robot_core.model import validation
from robot_core.model.mass_properties import link_inertial_from_visuals
from robot_core.model.robot_model import Collision, Pose, RobotModel, RobotModelError, SourceRef, Visual


def _compose(first: Pose, second: Pose) -> Pose:
    return Pose.from_matrix(first.matrix() @ second.matrix())


def merge_massless_fixed_links(model: RobotModel) -> RobotModel:
    """Merge every link without <inertial> that hangs on a fixed joint into its parent, in place.

    The link's visuals and collisions are re-expressed in the parent frame and its child joints re-parented to
    the parent (their origins composed with the removed fixed joint's). Massless links on movable joints stay
    (a physics engine needs them as bodies) and only get a warning.
    """
    changed = True
    while changed:
        changed = False
        for joint in list(model.joints.values()):
            child = model.links[joint.child]
            if joint.type != "fixed" or child.inertial is not None:
                continue
            parent = model.links[joint.parent]
            for vis in child.visuals:
                parent.visuals.append(Visual(vis.geometry, vis.name, _compose(joint.origin, vis.origin), vis.material))
            for col in child.collisions:
                parent.collisions.append(Collision(col.geometry, col.name, _compose(joint.origin, col.origin)))
            for sub in model.joints.values():
                if sub.parent == child.name:
                    sub.parent = parent.name
                    sub.origin = _compose(joint.origin, sub.origin)
            del model.joints[joint.name]
            del model.links[child.name]
            for trans in model.transmissions:
                trans.joints = [tj for tj in trans.joints if tj.name != joint.name]
            changed = True
            break
    for joint in model.joints.values():
        if joint.is_movable and model.links[joint.child].inertial is None:
            validation.warn(f"link '{joint.child}' has no <inertial> but is moved by {joint.type} joint "
                            f"'{joint.name}'; the simulator will give it a tiny mass", joint.source)
    return model


def apply_density(model: RobotModel, density: float) -> RobotModel:
    """Give every link without <inertial> mass properties from its visual shapes at ``density`` (kg/m^3)."""
    if not density > 0.0:
        raise RobotModelError(f"density {density} must be positive", SourceRef(model.source_file))
    for link in model.links.values():
        if link.inertial is None and link.visuals:
            link.inertial = link_inertial_from_visuals(link, density)
    return model


def apply_options(model: RobotModel, *, fixed_base: bool = True, merge_kinematic_links: bool = False,
                  density: float | None = None) -> RobotModel:
    # A description that floats by itself (a .g root with `joint: free`) stays floating.
    model.fixed_base = model.fixed_base and bool(fixed_base)
    if density is not None:
        apply_density(model, float(density))
    if merge_kinematic_links:
        merge_massless_fixed_links(model)
    return model

