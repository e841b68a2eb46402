"""``invdyn demo``: computed-torque control against PD in MuJoCo (`invdyn.experiments.demo`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from invdyn.cli.options import Commands, add_no_progress, add_out, command, needs
from invdyn.cli.output import print_results
from invdyn.experiments.demo import DEMO_FALLBACK, DEMO_MASS_ERROR, DEMO_PAYLOAD


def add(commands: Commands) -> None:
    parser = command(
        commands,
        "demo",
        run,
        extras=needs("sim"),
        help="computed-torque control against PD in MuJoCo: tables and plots",
        description="Track a minimum-jerk move across the workspace in MuJoCo with PD, PD + "
        "gravity compensation, computed torque and feedforward control, on the exact model and "
        f"with a {DEMO_PAYLOAD:g} kg unmodelled payload and {100 * DEMO_MASS_ERROR:g} % mass "
        "error; print the errors and write plots, CSV logs and metrics. Uses the Panda when "
        f"example-robot-data is installed and the {DEMO_FALLBACK} otherwise; nothing is "
        "downloaded.",
    )
    parser.add_argument("--robot", metavar="NAME", help="built-in name or .urdf/.xml path")
    add_out(
        parser,
        "directory for the plots, CSV logs and metrics.json (default: ./invdyn-demo)",
        default=Path("invdyn-demo"),
    )
    parser.add_argument(
        "--duration",
        metavar="S",
        type=float,
        default=5.0,
        help="duration of the move in seconds (default: 5)",
    )
    add_no_progress(parser)


def run(args: argparse.Namespace) -> int:
    from invdyn.experiments.demo import DemoConfig, run_demo

    config = DemoConfig(
        robot=args.robot, out=args.out, duration=args.duration, progress=not args.no_progress
    )
    demo = run_demo(config, say=print)
    for part in demo.runs:
        print()
        if part.name == "exact":
            print("exact model (the plant is the controller's model):")
        else:
            print(
                f"model error: a {DEMO_PAYLOAD:g} kg payload at {part.plant.payload_frame} and "
                f"{100 * DEMO_MASS_ERROR:g} % heavier links than the controller's model:"
            )
        print_results(demo.model, part.results)
    print(f"wrote {', '.join(demo.written)} in {demo.out.absolute()}")
    return 0
