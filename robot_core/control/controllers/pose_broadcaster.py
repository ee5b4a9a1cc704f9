"""pose_broadcaster/PoseBroadcaster: a pose sensor's seven state interfaces -> geometry_msgs/PoseStamped on
``~/pose`` and, with ``tf.enable``, a transform ``frame_id`` -> ``tf.child_frame_id`` on /tf.

Parameters (upstream names): :attr:`PoseBroadcaster.PARAMS`, rendered in doc/controllers/pose_broadcaster.md.
Reads ``<pose_name>/position.x/y/z`` and ``<pose_name>/orientation.x/y/z/w``. ``tf.publish_rate`` > 0 limits the
transforms to that rate of the control clock (the pose topic keeps the update rate). A pose that is not a
transform (a non-finite value, or an orientation that is not a unit quaternion, e.g. the all-zero reading of a
topic-based sensor that has not reported yet) goes out on ``~/pose`` as it is but never on /tf, where it would
place the child frame somewhere wrong; :attr:`PoseBroadcaster.invalid_transforms` counts those.

Outputs (``emit`` keys): "pose" -> :class:`~robot_core.control.messages.PoseData`; "tf" -> the same, when a
transform is due.
"""

from __future__ import annotations

import numpy as np

from robot_core.control.controller_base import UPDATE_RATE, Deferred
from robot_core.control.controllers.sensor_broadcaster import SensorBroadcaster, frame_id_param
from robot_core.control.messages import PoseData
from robot_core.parameter_spec import ParamSpec as P


class PoseBroadcaster(SensorBroadcaster):
    type_name = "pose_broadcaster/PoseBroadcaster"
    INTERFACES = (*(f"position.{a}" for a in ("x", "y", "z")), *(f"orientation.{a}" for a in ("x", "y", "z", "w")))
    NAME_PARAM = "pose_name"
    OUTPUT = "pose"
    PARAMS = (
        UPDATE_RATE,
        frame_id_param("pose (and the parent frame of its transform)"),
        P("pose_name", "string", "", "the pose whose <pose_name>/position.x ... orientation.w are read (must not be "
          "empty)"),
        P("tf.enable", "bool", True, "also publish the pose as a transform on /tf"),
        P("tf.child_frame_id", "string", "", "child frame of the transform; empty: pose_name"),
        P("tf.publish_rate", "double", 0.0, "largest rate of the transforms; 0: every update", minimum=0.0,
          unit="Hz"),
    )

    def read_more_params(self) -> None:
        p = self.params
        self.tf_enable = p.bool("tf.enable", True)
        self.child_frame_id = p.str("tf.child_frame_id", "") or self.sensor_name
        self.tf_publish_rate = p.float("tf.publish_rate", 0.0, min_value=0.0)
        self._next_tf = -np.inf
        self.invalid_transforms = 0

    def on_activate(self) -> None:
        super().on_activate()
        self._next_tf = -np.inf

    def on_time_jump(self, previous: float, now: float) -> None:
        self._next_tf = -np.inf

    def update(self, time: float, period: float) -> None:
        values = self.state_interfaces.get() if self.state_interfaces is not None else np.full(7, np.nan)
        pose = Deferred(self.build, time, values)
        self.emit("pose", pose)
        if self.tf_enable and time >= self._next_tf:
            if not is_transform(values):
                self.invalid_transforms += 1
                return
            self._next_tf = time + 1.0 / self.tf_publish_rate - 1e-9 if self.tf_publish_rate > 0 else -np.inf
            self.emit("tf", pose)

    def build(self, time: float, values: np.ndarray) -> PoseData:
        v = values.tolist()
        return PoseData(self.frame_id, v[:3], v[3:], self.child_frame_id, time)


def is_transform(values: np.ndarray) -> bool:
    """Whether position + quaternion (x, y, z, qx, qy, qz, qw) is a rigid transform: finite, unit quaternion."""
    return bool(np.all(np.isfinite(values)) and abs(float(np.dot(values[3:], values[3:])) - 1.0) < 1e-3)
