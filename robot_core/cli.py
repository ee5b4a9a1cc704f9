"""``robot-core`` command line: one function per subcommand, registered in SUBCOMMANDS.

To add a subcommand, write ``configure(parser)`` and ``run(args) -> int`` functions and add them to
SUBCOMMANDS (or call :func:`register`). Bad robot descriptions end in one line on stderr naming
file:line: element: problem, and exit code 2 - never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from robot_core.model.robot_model import RobotModel, RobotModelError, RobotModelWarning
from robot_core.ros.graph_exit import kept_participants
from robot_core.ros.stack_dumps import enable_stack_dumps

EXIT_BAD_INPUT = 2


@dataclass
class Subcommand:
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


SUBCOMMANDS: dict[str, Subcommand] = {}


def register(name: str, help: str, configure: Callable[[argparse.ArgumentParser], None],
             run: Callable[[argparse.Namespace], int]) -> None:
    SUBCOMMANDS[name] = Subcommand(help, configure, run)


# --- shared robot-loading options -----------------------------------------------------------------------------
def add_robot_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--package-dir", action="append", default=[], metavar="DIR",
                        help="where to look for ROS packages (package:// and $(find)); repeatable")
    parser.add_argument("--floating", action="store_true", help="let the root link float instead of fixing it")
    parser.add_argument("--merge-kinematic-links", action="store_true",
                        help="merge links without <inertial> on fixed joints into their parent")
    parser.add_argument("--density", type=float, default=None,
                        help="compute missing mass properties from visual shapes at this density (kg/m^3)")
    parser.add_argument("--arg", action="append", default=[], metavar="NAME:=VALUE", help="xacro argument")


def load_from_args(path: str, args: argparse.Namespace) -> RobotModel:
    from robot_core.model.loader import load_robot

    mappings = {}
    for item in args.arg:
        name, sep, value = item.partition(":=")
        if not sep:
            raise RobotModelError(f"xacro argument '{item}' must look like NAME:=VALUE")
        mappings[name] = value
    return load_robot(path, args.package_dir or None, fixed_base=not args.floating,
                      merge_kinematic_links=args.merge_kinematic_links, density=args.density,
                      mappings=mappings or None)


# --- describe ---------------------------------------------------------------------------------------------------
def _bound(value: float | None, sign: str) -> str:
    return f"{sign}inf" if value is None else f"{value:g}"


def _dof_text(joint) -> str:
    """Axis and range of one movable joint, e.g. "axis (0 0 1) [-1.5, 2.5] rad, effort 40, velocity 1.5"."""
    axis = " ".join(f"{v:g}" for v in joint.axis)
    if joint.type == "floating":
        return "6 DOF (x y z + rotation), unbounded"
    if joint.type == "planar":
        return f"3 DOF in the plane with normal ({axis}), unbounded"
    lim = joint.limit
    unit = "m" if joint.type == "prismatic" else "rad"
    if joint.type == "continuous" or lim is None or (lim.lower is None and lim.upper is None):
        rng = "unbounded"
    else:
        rng = f"[{_bound(lim.lower, '-')}, {_bound(lim.upper, '+')}] {unit}"
    extra = "" if lim is None else f", effort {lim.effort:g}, velocity {lim.velocity:g}"
    return f"axis ({axis}) {rng}{extra}"


def describe(model: RobotModel) -> str:
    """A readable summary: kinematic tree, DOFs with limits, mass, root-to-leaf chains."""
    lines = [f"robot '{model.name}' ({model.source_file})",
             f"  base: {'fixed to the world' if model.fixed_base else 'floating'}",
             f"  links: {len(model.links)}, joints: {len(model.joints)}, total mass: {model.total_mass():.4g} kg",
             "", "tree:"]
    root = model.root_link

    lines.append(f"  {root}")
    # Depth first with an explicit stack, not recursion: a 1000-link chain is deeper than Python's stack.
    stack = [(joint, 1) for joint in reversed(model.child_joints(root))]
    while stack:
        joint, depth = stack.pop()
        tag = f" mimics {joint.mimic.joint}" if joint.mimic else ""
        lines.append(f"{'  ' * depth}  +- [{joint.name}: {joint.type}{tag}] {joint.child}")
        stack.extend((child, depth + 1) for child in reversed(model.child_joints(joint.child)))
    lines += ["", f"degrees of freedom ({len(model.actuated_joint_names())} actuated):"]
    for joint in model.movable_joints():
        mimic = f" (mimic of {joint.mimic.joint} x{joint.mimic.multiplier:g} + {joint.mimic.offset:g})" \
            if joint.mimic else ""
        init = "" if joint.initial_position is None else f", initial {joint.initial_position:g}"
        lines.append(f"  {joint.name:28s} {joint.type:10s} {_dof_text(joint)}{init}{mimic}")
    lines += ["", "chains (root to each leaf):"]
    for leaf in model.leaf_links():
        if leaf == root:
            continue
        chain = model.chain(root, leaf)
        movable = sum(1 for j in chain if j.is_movable)
        lines.append(f"  {root} -> {leaf} ({movable} movable joints): " + " -> ".join(j.name for j in chain))
    if model.ros2_control:
        lines += ["", "ros2_control:"]
        for block in model.ros2_control:
            lines.append(f"  {block.name} ({block.type}, {block.plugin or 'no plugin'}): "
                         f"{', '.join(j.name for j in block.joints)}")
    nodes = model.rbc_nodes()
    if nodes:
        n_vars = sum(len(n.vars) for n in nodes)
        lines += ["", f"rbc: {n_vars} vars in {len(nodes)} <rbc> tags on "
                      f"{len({n.joint for n in nodes})} joints; drivers: {', '.join(sorted({n.node for n in nodes}))}"]
    if model.transmissions:
        lines += ["", f"transmissions: {len(model.transmissions)}"]
    if model.mjcf is not None:
        lines += ["", "MJCF (the simulator runs the file as written, doc/mjcf.md):"]
        for joint, servo in model.mjcf.servos.items():
            gains = ", ".join(f"{k} {v:g}" for k, v in (("kp", servo.kp), ("kd", servo.kd), ("kv", servo.kv))
                              if v is not None)
            lines.append(f"  {joint:28s} {servo.interface} from actuator '{servo.actuator}'"
                         + (f" ({gains})" if gains else ""))
        if model.mjcf.world_bodies:
            lines.append(f"  world bodies (not links): {', '.join(model.mjcf.world_bodies)}")
    return "\n".join(lines)


def _configure_describe(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="robot description (.urdf, .xacro, .urdf.xacro, .g, MJCF .xml/.mjcf)")
    add_robot_options(parser)


def _run_describe(args: argparse.Namespace) -> int:
    print(describe(load_from_args(args.file, args)))
    return 0


# --- convert ----------------------------------------------------------------------------------------------------
def _configure_convert(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="robot description to read (.urdf, .xacro, .urdf.xacro, .g, MJCF .xml/.mjcf)")
    parser.add_argument("output", help="file to write; the format follows the extension (.urdf, .g, MJCF .xml/.mjcf)")
    add_robot_options(parser)


def _run_convert(args: argparse.Namespace) -> int:
    from robot_core.model.loader import save_robot

    model = load_from_args(args.input, args)
    if args.output.lower().endswith((".xml", ".mjcf")):
        from robot_core.physics.mjcf_writer import save_mjcf

        save_mjcf(model, args.output)
    else:
        save_robot(model, args.output)
    print(f"wrote {args.output} ({len(model.links)} links, {len(model.joints)} joints)")
    return 0


register("describe", "summarise a robot description: tree, DOFs, mass, chains", _configure_describe, _run_describe)
register("convert", "convert a robot description between formats (by extension)", _configure_convert, _run_convert)


# --- bringup and demo (robot_core.bringup.run, robot_core.demo.cli) --------------------------------------------
def _lazy(module: str, attr: str) -> Callable[[Any], Any]:
    """Call ``module.attr`` on first use, so other subcommands do not import it."""
    def call(arg: Any) -> Any:
        import importlib

        return getattr(importlib.import_module(module), attr)(arg)
    return call


register("bringup", "start simulator, controller manager (+ spawners) and RBC; Ctrl-C stops all",
         _lazy("robot_core.bringup.run", "configure_cli"), _lazy("robot_core.bringup.run", "run_cli"))
register("record", "record topics into an MCAP file (ROS 2 profile: ros2 bag, Foxglove); Ctrl-C stops",
         _lazy("robot_core.nodes.recorder", "configure_cli"), _lazy("robot_core.nodes.recorder", "run_cli"))
register("play", "republish an MCAP recording with its timing and /clock",
         _lazy("robot_core.nodes.player", "configure_cli"), _lazy("robot_core.nodes.player", "run_cli"))
register("view", "live 3D web view of the graph (viser): robot, frames, cameras, controllers, sliders",
         _lazy("robot_core.nodes.view", "configure_cli"), _lazy("robot_core.nodes.view", "run_cli"))
register("demo", "run a demo scenario headless (arm, pick_place, drive); writes plots and a summary",
         _lazy("robot_core.demo.cli", "configure_cli"), _lazy("robot_core.demo.cli", "run_cli"))
register("run-env", "list, run, record or train (PPO) the RL environments: random, keyboard, heuristic policies",
         _lazy("robot_core.rl.run_env", "configure_cli"), _lazy("robot_core.rl.run_env", "run_cli"))


# --- entry point ------------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robot-core", description="robot_core command line tools")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, cmd in SUBCOMMANDS.items():
        cmd.configure(sub.add_parser(name, help=cmd.help, description=cmd.help))
    return parser


def main(argv: list[str] | None = None) -> int:
    status = _main(argv)
    if kept_participants():  # a DDS participant left unfinalised on purpose (robot_core.ros.graph_exit)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(status)
    return status


def _main(argv: list[str] | None) -> int:
    # A crash in C (rclpy, MuJoCo) prints every thread's Python stack instead of only "exited (-11)", and SIGUSR1
    # prints them on demand (robot_core.ros.stack_dumps)
    enable_stack_dumps()
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RobotModelWarning)
        try:
            status = SUBCOMMANDS[args.command].run(args)
        except RobotModelError as exc:
            status = EXIT_BAD_INPUT
            print(f"error: {exc}", file=sys.stderr)
        except OSError as exc:
            status = EXIT_BAD_INPUT
            print(f"error: {exc}", file=sys.stderr)
        except KeyboardInterrupt:  # Ctrl-C during describe/convert: the usual shell status, no traceback
            print("interrupted", file=sys.stderr)
            return 130
    for w in caught:
        if issubclass(w.category, RobotModelWarning):
            print(f"warning: {w.message}", file=sys.stderr)
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return status


if __name__ == "__main__":
    sys.exit(main())
