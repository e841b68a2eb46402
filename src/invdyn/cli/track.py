"""``invdyn track``: closed-loop trajectory tracking in MuJoCo (`invdyn.experiments.track`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from invdyn.cli.options import (
    Commands,
    add_json,
    add_no_progress,
    add_out,
    add_plant,
    command,
    names,
    needs,
    plant_options,
)
from invdyn.cli.output import print_results, write_json_option
from invdyn.control.computed_torque import CONTROLLERS
from invdyn.experiments.track import TRACK_DURATION
from invdyn.experiments.tracking import DEFAULT_BANDWIDTH


def add(commands: Commands) -> None:
    parser = command(
        commands,
        "track",
        run,
        extras=needs("sim"),
        help="closed-loop trajectory tracking in MuJoCo: errors, torques, plot, CSV, JSON",
        description="Simulate a robot in MuJoCo tracking a trajectory under joint-space "
        "control, print the tracking error and torque use per joint, and write a plot, a CSV "
        "log per controller and the metrics. The plant may carry an unmodelled payload and "
        "differ from the controller's model in its masses.",
    )
    parser.add_argument("robot", metavar="ROBOT", help="built-in name or .urdf/.xml path")
    parser.add_argument(
        "--fixed-base",
        action="store_true",
        help="fix a floating-base robot's root link to the world (joint-space tracking needs a "
        "fixed base)",
    )
    parser.add_argument(
        "--no-limit-check",
        action="store_true",
        help="track a CSV trajectory that leaves the joints' position or velocity limits",
    )
    parser.add_argument(
        "--trajectory",
        metavar="SPEC",
        default="minimum_jerk",
        help="'minimum_jerk' (a rest-to-rest move across the workspace, from 20%% to 80%% of "
        "each joint's range, shortened to turn at most pi rad and to keep within 80%% of the "
        "velocity limit) or a CSV file with columns time,<joint names>, in rad or m, a "
        "continuous joint's angle followed as written, through a cubic spline that starts and "
        "ends at rest (default: minimum_jerk)",
    )
    parser.add_argument(
        "--controller",
        metavar="NAMES",
        default="computed_torque",
        help=f"{', '.join(CONTROLLERS)}, a comma-separated list, or 'all' "
        "(default: computed_torque)",
    )
    parser.add_argument(
        "--duration",
        metavar="S",
        type=float,
        default=None,
        help=f"minimum_jerk duration ({TRACK_DURATION:g} s); a CSV file sets its own",
    )
    parser.add_argument(
        "--rate", metavar="HZ", type=float, default=1000.0, help="control rate (1000 Hz)"
    )
    parser.add_argument(
        "--bandwidth",
        metavar="RAD_S",
        type=float,
        default=DEFAULT_BANDWIDTH,
        help="closed-loop natural frequency of every controller's critically damped gains "
        f"(default: {DEFAULT_BANDWIDTH:g} rad/s)",
    )
    add_plant(parser)
    add_out(
        parser,
        "directory for tracking.png, <controller>.csv and metrics.json (default: ./invdyn-track)",
        default=Path("invdyn-track"),
    )
    add_json(parser)
    add_no_progress(parser)


def run(args: argparse.Namespace) -> int:
    from invdyn.experiments.track import TrackConfig, run_track

    controllers = (
        tuple(CONTROLLERS) if args.controller == "all" else names("--controller", args.controller)
    )
    config = TrackConfig(
        robot=args.robot,
        out=args.out,
        trajectory=args.trajectory,
        controllers=controllers,
        duration=args.duration,
        rate=args.rate,
        bandwidth=args.bandwidth,
        plant=plant_options(args),
        fixed_base=args.fixed_base,
        limit_check=not args.no_limit_check,
        progress=not args.no_progress,
    )
    tracked = run_track(config, say=print)
    print_results(tracked.model, tracked.results)
    print(f"wrote {', '.join(tracked.written)} in {tracked.out.absolute()}")
    for path in write_json_option(args, tracked.metrics):
        print(f"wrote {path}")
    return 0
