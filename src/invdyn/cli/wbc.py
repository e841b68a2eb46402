"""``invdyn wbc``: whole-body control of a legged robot in MuJoCo (`invdyn.experiments.wbc`)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from invdyn.cli.options import (
    Commands,
    add_no_progress,
    add_out,
    command,
    names,
    needs,
    numbers,
)
from invdyn.errors import InputError
from invdyn.experiments.balance import SCENARIOS, STANCES, STANDING

MARGIN_RESOLUTION = 1e-6
"""N or N m: a margin closer to zero than this, the QP's round-off, is printed as 0."""


def add(commands: Commands) -> None:
    parser = command(
        commands,
        "wbc",
        run,
        extras=needs("sim", "control"),
        help="whole-body control of a legged robot in MuJoCo: stand, sway, squat, push, lift",
        description="Simulate a legged robot (floating base; point feet named *foot and flat "
        "feet named *sole unless --feet or --soles name them; a standing configuration in its "
        "SRDF or MJCF keyframes unless --pose names one; the built-in "
        f"{', '.join(sorted(STANCES))} have their own) in MuJoCo under whole-body control (a "
        "QP over accelerations and contact forces, friction cones, torque limits), print the "
        "centre of mass error and the friction cone and torque margins, and write a plot and a "
        "report. Exits with status 1 when the robot falls, 2 on an error.",
    )
    parser.add_argument("robot", metavar="ROBOT", help="built-in name or .urdf/.xml path, e.g. go1")
    parser.add_argument(
        "--scenario", choices=SCENARIOS, default="stand", help="what to do (default: stand)"
    )
    parser.add_argument(
        "--duration", metavar="S", type=float, default=10.0, help="seconds (default: 10)"
    )
    parser.add_argument(
        "--amplitude",
        metavar="M",
        type=float,
        help="sway: how far either way; squat: half how deep, m (default: 0.02)",
    )
    parser.add_argument("--push", metavar="N", type=float, help="push: its force, N (default: 50)")
    parser.add_argument(
        "--feet",
        metavar="FRAMES",
        help="comma-separated frames of point feet, each standing on its origin "
        "(default: frames named *foot)",
    )
    parser.add_argument(
        "--soles",
        metavar="FRAMES",
        help="comma-separated frames of flat feet, each standing on the corners of --sole "
        "(default: frames named *sole or *sole_link)",
    )
    parser.add_argument(
        "--sole",
        metavar="X0,X1,Y0,Y1,Z",
        help="a flat foot's corners in its frame, m: x from X0 to X1, y from Y0 to Y1, at "
        "height Z (default: -0.1,0.1,-0.065,0.065,0; write --sole=-0.1,... for a value that "
        "starts with a minus sign)",
    )
    parser.add_argument(
        "--pose",
        metavar="NAME|Q",
        help="the configuration to stand in: an SRDF state, an MJCF keyframe, 'neutral', or "
        "its nq comma-separated values (the base's placed on the ground) (default: the first "
        f"of {', '.join(STANDING)})",
    )
    add_out(parser, "output directory (default: invdyn-wbc)", default=Path("invdyn-wbc"))
    add_no_progress(parser, "no progress bar")


def run(args: argparse.Namespace) -> int:
    from invdyn.experiments.wbc import WbcConfig, run_wbc

    config = WbcConfig(
        robot=args.robot,
        scenario=args.scenario,
        duration=args.duration,
        amplitude=args.amplitude,
        push=args.push,
        feet=None if args.feet is None else names("--feet", args.feet),
        soles=None if args.soles is None else names("--soles", args.soles),
        sole=None if args.sole is None else numbers("--sole", args.sole, 5),
        pose=None if args.pose is None else _pose(args.pose),
        out=args.out,
        progress=not args.no_progress,
    )
    done = run_wbc(config, say=print)
    model, balance, scenario = done.model, done.run, done.run.scenario
    ended, outcome = "", "fell" if balance.fell else "stood"
    if balance.fell_at is not None:
        ended = (
            f" (lost its balance at {balance.fell_at:.3f} s, where the run and its measures end)"
        )
    elif balance.unsolved is not None:
        ended, outcome = " (stopped early: its QP had no solution)", "stopped"
    torque = (
        "no torque limits"
        if math.isnan(balance.torque_margin)
        else f"torque margin {_margin(100 * balance.torque_margin)} % of the limit"
    )
    standing = [foot for foot in balance.feet if foot != balance.lifted]
    lift = f" {balance.lifted} by {100 * scenario.lift_height:g} cm"
    raised = "" if balance.lifted is None else lift
    print(
        f"{model.name}, {args.scenario}{raised} for {args.duration:g} s{ended} on "
        f"{', '.join(standing)}: "
        f"centre of mass error {1000 * balance.com_rms:.2f} mm RMS, "
        f"{1000 * done.summary['com_max_error_m']:.2f} mm max; friction cone margin "
        f"{_margin(balance.cone_margin)} N, {torque}; {outcome}"
    )
    for path in done.written:
        print(f"wrote {path}")
    if balance.unsolved is not None:
        print(f"invdyn: error: {balance.unsolved}; the run stopped there", file=sys.stderr)
        return 2
    return 1 if balance.fell else 0


def _margin(value: float) -> str:
    """A margin to print: within the QP's tolerance of zero, 0 (not -1.6e-10)."""
    return "0" if abs(value) < MARGIN_RESOLUTION else f"{value:.3g}"


def _pose(spec: str) -> str | tuple[float, ...]:
    """`--pose`: a configuration's name, or its comma-separated values."""
    if "," not in spec:
        return spec
    try:
        return tuple(float(part) for part in spec.split(","))
    except ValueError:
        raise InputError(f"--pose {spec!r}: expected a name or comma-separated numbers") from None
