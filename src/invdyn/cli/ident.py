"""``invdyn ident``: identify a robot's dynamic parameters from a recorded dataset
(`invdyn.ident.run.identify_run`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from invdyn.cli.options import Commands, add_no_progress, add_out, add_settings, command, needs
from invdyn.cli.output import print_errors
from invdyn.errors import InputError


def add(commands: Commands) -> None:
    parser = command(
        commands,
        "ident",
        run,
        extras=needs("learn"),
        uses_torch=lambda args: bool(args.learn),
        help="identify a robot's dynamic parameters from a recorded dataset",
        description="Identify the dynamic parameters of a robot from a LeRobot v3 dataset of "
        "its joint positions, velocities and torques (such as 'invdyn collect ROBOT' writes): "
        "accelerations by zero-phase filtering, base parameters by least squares or a "
        "physically consistent fit, scored on held-out episodes against the robot as "
        "described. Writes report.json, identification.npz, nmse.png, held_out.png and, "
        "with the consistent method on a URDF robot, identified.urdf.",
    )
    parser.add_argument(
        "dataset",
        metavar="DATA",
        help="LeRobot v3 dataset directory, or a table (.csv, .npz, .parquet) with columns "
        "q.*, v.*, a.* and tau.* (accelerations as recorded, no filtering)",
    )
    parser.add_argument(
        "--robot",
        metavar="ROBOT",
        help="robot name or URDF (default: the dataset's source, 'invdyn:<robot>')",
    )
    parser.add_argument(
        "--method",
        choices=("consistent", "wls", "ols"),
        default="consistent",
        help="consistent: weighted, every body physical, writes a URDF; wls: weighted least "
        "squares; ols: ordinary (default: consistent)",
    )
    parser.add_argument(
        "--cutoff",
        metavar="HZ",
        help="a dataset's zero-phase low-pass filter of the velocities, accelerations and "
        "torques: its cut-off, or 'none' (default: 10)",
    )
    parser.add_argument(
        "--offset", action="store_true", help="also identify a torque offset per joint"
    )
    parser.add_argument(
        "--learn",
        action="store_true",
        help="also train an inverse dynamics network alone, one per joint on what the "
        "identified model leaves of its torque (hybrid), and rnea with trainable parameters "
        "plus residual networks (end_to_end), and compare all on the held-out episodes",
    )
    parser.add_argument(
        "--preset", help="--learn: the networks' configuration preset (default: default)"
    )
    add_settings(parser, "--learn: override a setting of the networks, e.g. --set train.epochs=50")
    parser.add_argument(
        "--restart",
        action="store_true",
        help="--learn: train the networks afresh, not resume those of an earlier run in --out",
    )
    parser.add_argument(
        "--held-out",
        metavar="FRACTION",
        type=float,
        default=0.2,
        help="share of the episodes, the last ones, held out for the report (default: 0.2)",
    )
    add_out(parser, "output directory (default: ./invdyn-ident)", default=Path("invdyn-ident"))
    add_no_progress(parser)


def run(args: argparse.Namespace) -> int:
    from invdyn.ident.run import IdentConfig, identify_run
    from invdyn.ident.signals import Filter

    config = IdentConfig(
        data=args.dataset,
        out=args.out,
        robot=args.robot,
        method=args.method,
        filtering=None if args.cutoff is None else Filter(cutoff=_cutoff(args.cutoff)),
        offset=args.offset,
        held_out=args.held_out,
        learn=args.learn,
        preset=args.preset,
        overrides=tuple(args.set),
        resume=not args.restart,
        progress=not args.no_progress,
    )
    identified = identify_run(config)
    model, found = identified.model, identified.found
    print(
        f"{model.name}: {len(found.identification.base)} base parameters, {args.method}, "
        f"identified on {found.train_part}, held out {found.held_out_part}"
    )
    if found.learned:
        print(
            "all on the held-out samples that the networks' windows cover (report.json: "
            "held_out_nmse_all; held_out_nmse scores nominal and identified on every one)"
        )
    print_errors(
        model, found.learned or {"nominal": found.nominal_nmse, "identified": found.identified_nmse}
    )
    for path in identified.written:
        print(f"wrote {path}")
    return 0


def _cutoff(text: str) -> float | None:
    """The filter's cut-off in Hz of ``--cutoff``: a number, or None for 'none'."""
    if text.lower() == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise InputError(f"--cutoff must be a number or 'none', got {text!r}") from None
