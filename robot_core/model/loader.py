"""One entry point for every robot description format, so callers never care which file they were given."""

from __future__ import annotations

import os
from pathlib import Path

from robot_core.model.robot_model import RobotModel, RobotModelError, SourceRef

URDF_SUFFIXES = (".urdf", ".xml")
MJCF_SUFFIXES = (".mjcf",)
XACRO_SUFFIXES = (".xacro", ".urdf.xacro")
G_SUFFIXES = (".g",)


def _format_of(path: str) -> str:
    low = path.lower()
    if low.endswith(XACRO_SUFFIXES):
        return "xacro"
    if low.endswith(G_SUFFIXES):
        return "g"
    if low.endswith(MJCF_SUFFIXES):
        return "mjcf"
    if low.endswith(URDF_SUFFIXES):
        from robot_core.model.mjcf_reader import is_mjcf_file

        return "mjcf" if is_mjcf_file(path) else "urdf"
    raise RobotModelError(
        "unknown robot description format (expected .urdf, .xml, .mjcf, .xacro, .urdf.xacro or .g)", SourceRef(path)
    )


def _looks_like_xml(text: str) -> bool:
    return text.lstrip().startswith("<")


def load_robot(
    source: str | os.PathLike,
    package_dirs: list[str | os.PathLike] | None = None,
    *,
    fixed_base: bool = True,
    merge_kinematic_links: bool = False,
    density: float | None = None,
    strict_inertia: bool = False,
    mappings: dict[str, str] | None = None,
    format: str | None = None,
    **options,
) -> RobotModel:
    """Read a URDF, xacro, rai .g or MJCF description (a path or the text itself) into a validated RobotModel.

    Options, mirroring AGX's URDF reader settings:
      fixed_base: weld the root link to the world (True) or let it float (False).
      merge_kinematic_links: merge links without <inertial> that hang on fixed joints into their parent.
      density: give links without <inertial> mass properties from their visual shapes at this density (kg/m^3).
      strict_inertia: a broken inertia triangle inequality is an error instead of a warning.
      mappings: xacro arguments (name -> value).
      format: "urdf", "xacro", "g" or "mjcf" to override detection (by extension; a root element <mujoco> is
        MJCF whatever the extension).
    Other keyword options are passed to the .g reader.
    """
    if package_dirs is not None and isinstance(package_dirs, (str, os.PathLike)):
        package_dirs = [package_dirs]
    text: str | None = None
    path: str | None = None
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
    elif isinstance(source, str) and (_looks_like_xml(source) or "\n" in source):
        text = source
    else:
        path = str(source)
    if path is not None:
        fmt = format or _format_of(path)
        if not Path(path).is_file():
            raise RobotModelError("file not found", SourceRef(path))
    else:
        assert text is not None
        from robot_core.model.mjcf_reader import is_mjcf_text

        fmt = format or ("mjcf" if is_mjcf_text(text) else
                         "xacro" if "xmlns:xacro" in text or "<xacro:" in text else
                         "urdf" if _looks_like_xml(text) else "g")

    if fmt == "urdf":
        from robot_core.model.urdf_reader import read_urdf, read_urdf_file

        if path is not None:
            model = read_urdf_file(path, package_dirs, strict_inertia=strict_inertia)
        else:
            model = read_urdf(text, package_dirs=package_dirs, strict_inertia=strict_inertia)
    elif fmt == "xacro":
        from robot_core.model.urdf_reader import read_urdf
        from robot_core.model.xacro_loader import expand_xacro, expand_xacro_string

        if path is not None:
            xml = expand_xacro(path, package_dirs, mappings)
            model = read_urdf(xml, f"{path} (expanded)", package_dirs, str(Path(path).resolve().parent),
                              strict_inertia=strict_inertia)
            model.source_file = path
        else:
            model = read_urdf(expand_xacro_string(text, package_dirs, mappings), package_dirs=package_dirs,
                              strict_inertia=strict_inertia)
    elif fmt == "g":
        from robot_core.model.rai_reader import read_g

        g_options = dict(options, fixed_base=fixed_base, strict_inertia=strict_inertia)
        if path is not None:
            model = read_g(Path(path).read_text(), source_file=path, **g_options)
        else:
            model = read_g(text, **g_options)
    elif fmt == "mjcf":
        from robot_core.model.mjcf_reader import read_mjcf, read_mjcf_file

        model = read_mjcf_file(path) if path is not None else read_mjcf(text)
    else:
        raise RobotModelError(f"unknown format '{fmt}'", SourceRef(path or "<string>"))

    from robot_core.model.model_options import apply_options

    return apply_options(model, fixed_base=fixed_base, merge_kinematic_links=merge_kinematic_links, density=density)


def warn_not_carried(model: RobotModel, target: str) -> None:
    """One warning listing what of an MJCF robot a URDF or .g file cannot carry (doc/mjcf.md)."""
    if model.mjcf is None:
        return
    from robot_core.model import validation

    lost = ["actuator types, gains, gear and dynamics beyond the ros2_control command interfaces and limits",
            "joint armature, springs and solver parameters", "contact parameters and options",
            *model.mjcf.not_carried]
    if model.mjcf.ball_joints:  # (the same chain the simulator runs, robot_core/model/mjcf_ball.py)
        lost.append(f"ball joint(s) {sorted(model.mjcf.ball_joints)}: written as three revolute joints each, "
                    "'<ball>:x', '<ball>:y', '<ball>:z' (R = Rx Ry Rz, a cone limit as a box)")
    validation.warn(f"{target} cannot carry from the MJCF: {'; '.join(lost)}",
                    SourceRef(model.source_file, None, f"robot '{model.name}'"))


def save_robot(model: RobotModel, path: str | os.PathLike) -> None:
    """Write ``model`` in the format named by the file extension (.urdf or .g).

    MJCF output (.xml, .mjcf) needs the physics builder, a layer above this one:
    :func:`robot_core.physics.mjcf_writer.save_mjcf` (``robot-core convert`` picks it by extension).
    """
    p = os.fspath(path)
    low = p.lower()
    if low.endswith((".xml", ".mjcf")):
        raise RobotModelError("cannot save MJCF here: use robot_core.physics.mjcf_writer.save_mjcf (or robot-core "
                              "convert)", SourceRef(p))
    warn_not_carried(model, "a .urdf" if low.endswith(".urdf") else "a .g file")
    if low.endswith(".urdf"):
        from robot_core.model.urdf_writer import write_urdf

        text = write_urdf(model)
    elif low.endswith(".g"):
        try:
            from robot_core.model.rai_writer import write_g
        except ImportError as exc:
            raise RobotModelError(f"cannot save: the .g writer is not available ({exc})", SourceRef(p)) from None
        text = write_g(model)
    else:
        raise RobotModelError("cannot save: unknown extension (expected .urdf or .g)", SourceRef(p))
    Path(p).write_text(text)
