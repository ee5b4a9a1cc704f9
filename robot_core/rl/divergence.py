"""A diverged simulation in an env: how every env of ``robot_core.rl`` finds it and what it returns then.

When a state value turns non-finite or huge (beyond ``mjMAXVAL``), MuJoCo's ``mj_step`` warns, resets that
``MjData`` to the model's defaults itself and steps on; in the batched path (``mujoco.batch``) that happens in one
row while the others go on. The only trace is the warning counters (``mjWARN_BADQPOS``, ``mjWARN_BADQVEL``,
``mjWARN_BADQACC``: MuJoCo bumps them after its reset), which the envs compare against zero after each step: a
bytes comparison of a live view, well under a microsecond, so the check costs nothing measurable on the hot path.

What an env does then is the same in the single envs and the batched path: a learner should go on, not crash, so
the episode ends **truncated** (the physics did not reach a terminal state; the policy may have caused it, but
the state that followed is not the task's) with ``info["diverged"]`` true, and the step returns the env's last
good observation, reward and info (those of the state before the step that diverged: the physics state after it
is MuJoCo's reset state, which belongs to no episode). One warning is logged per occurrence, naming the env.
The next ``reset()`` (or, in a vector env, the next step's autoreset) starts a fresh episode.
"""

from __future__ import annotations

import logging

import mujoco
import numpy as np

log = logging.getLogger("robot_core.rl")

_FIRST, _LAST = int(mujoco.mjtWarning.mjWARN_BADQPOS), int(mujoco.mjtWarning.mjWARN_BADQACC)
if _LAST - _FIRST != 2:  # (MuJoCo's order: position, velocity, acceleration, side by side)
    raise ImportError(f"mujoco {mujoco.__version__}: mjWARN_BADQPOS..mjWARN_BADQACC are not 3 adjacent warnings")
DIVERGENCE_WARNINGS = slice(_FIRST, _LAST + 1)
"""The warning counters of a diverged state (position, velocity, acceleration), a slice so that views stay live."""

_KINDS = ("position", "velocity", "acceleration")


def counters_clear(counts: np.ndarray, zeros: bytes) -> bool:
    """True while no divergence counter of the live view ``counts`` rose (``zeros``: ``bytes(counts.nbytes)``).

    ``tobytes`` and a comparison take ~0.1 µs (one env) to ~0.5 µs (32 envs); ``counts.any()`` takes 1-1.5 µs."""
    return counts.tobytes() == zeros


def describe(numbers: np.ndarray, lastinfo: np.ndarray, model: mujoco.MjModel | None = None) -> str:
    """What MuJoCo found, from one env's three counters and their ``lastinfo`` (the qpos index or dof), with the
    joint it belongs to when ``model`` is given."""
    parts = []
    for kind, n, info in zip(_KINDS, numbers, lastinfo, strict=True):
        if n:
            where = f"{'qpos index' if kind == 'position' else 'dof'} {int(info)}"
            joint = _joint_name(model, kind, int(info)) if model is not None else ""
            parts.append(f"non-finite or huge {kind} at {where}" + (f", joint '{joint}'" if joint else ""))
    return "; ".join(parts) or "no divergence counter set"


def _joint_name(model: mujoco.MjModel, kind: str, index: int) -> str:
    if kind == "position":
        if not 0 <= index < model.nq or model.njnt == 0:
            return ""
        joint = int(np.searchsorted(model.jnt_qposadr, index, side="right")) - 1
    else:
        if not 0 <= index < model.nv:
            return ""
        joint = int(model.dof_jntid[index])
    return model.joint(joint).name if joint >= 0 else ""
