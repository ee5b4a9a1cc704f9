"""One robot's tf frame names under a prefix, so two robots' ``/tf`` trees do not clash.

``/tf`` and ``/tf_static`` are global topics (tf2 listens on them whatever its namespace), so two robots with a
``base_link`` each must name their frames apart: robot_state_publisher's ``frame_prefix`` (and ros2_control's
``tf_prefix``) put a prefix such as ``arm1/`` in front of every frame of the robot. The frames that are not the
robot's -- the world frame and the world's objects, which several robots share -- keep their names, so the robots
hang below one common ``world``.
"""

from __future__ import annotations

from collections.abc import Iterable


class FramePrefix:
    """``prefix + frame`` for the robot's frames; the ``shared`` ones (world frame, world objects) unchanged."""

    def __init__(self, prefix: str = "", shared: Iterable[str] = ()):
        prefix = str(prefix).strip()
        if prefix.startswith("/"):
            raise ValueError(f"parameter frame_prefix '{prefix}': a tf frame name does not start with '/' "
                             "(tf2 refuses it); e.g. 'arm1/'")
        if any(c.isspace() for c in prefix):
            raise ValueError(f"parameter frame_prefix '{prefix}' contains white space")
        self.prefix = prefix
        self.shared = frozenset(shared)

    def __bool__(self) -> bool:
        return bool(self.prefix)

    def __call__(self, frame: str) -> str:
        if not self.prefix or not frame or frame in self.shared:
            return frame
        return self.prefix + frame

    def edges(self, edges: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        """(parent, child) pairs with both names mapped."""
        return [(self(parent), self(child)) for parent, child in edges]

    def apply(self, transforms: Iterable[object]) -> list[object]:
        """Rename the frames of TransformStamped-like objects in place (``header.frame_id``, ``child_frame_id``)."""
        out = list(transforms)
        if self.prefix:
            for tf in out:
                tf.header.frame_id = self(tf.header.frame_id)  # type: ignore[attr-defined]
                tf.child_frame_id = self(tf.child_frame_id)  # type: ignore[attr-defined]
        return out


def frame_prefix_for_namespace(namespace: str) -> str:
    """The prefix a namespaced bringup gives a robot's frames: ``/arm1`` -> ``arm1/``, ``/`` or '' -> ''."""
    ns = str(namespace).strip().strip("/")
    return f"{ns}/" if ns else ""
