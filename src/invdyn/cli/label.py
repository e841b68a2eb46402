"""``invdyn label``: a trained model's actions added to a dataset or to plain videos
(`invdyn.learn.label.label_data`)."""

from __future__ import annotations

import argparse

from invdyn.cli.options import Commands, add_no_progress, add_out, command, frame_size


def add(commands: Commands) -> None:
    parser = command(
        commands,
        "label",
        run,
        extras=_extras,
        uses_torch=lambda args: True,
        help="add a trained model's actions to a dataset without actions, or to plain videos",
        description="Predict the action between consecutive observations of every episode and "
        "write a labelled copy of the dataset (with the ensemble's spread for ensembles); "
        "resumes a killed run and writes the output atomically. DATA may also be plain "
        "videos for a model of one camera's frames: a folder of mp4 files and image folders, "
        "each an episode.",
    )
    parser.add_argument("checkpoint", metavar="CHECKPOINT", help="run or checkpoint directory")
    parser.add_argument(
        "dataset", metavar="DATA", help="LeRobot v3 dataset directory, or a folder of videos"
    )
    parser.add_argument(
        "--size",
        metavar="WxH",
        help="plain videos: resize the frames to this size (default: the size of the model's "
        "training frames, the only one it takes when its checkpoint records it)",
    )
    add_out(parser, "labelled dataset")
    parser.add_argument(
        "--replace", action="store_true", help="replace the actions a dataset already has"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=4096,
        metavar="N",
        help="windows per forward pass (the unit of resumed work: at least N windows)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="label the episodes' shards on N Ray workers (needs the ray extra)",
    )
    parser.add_argument(
        "--address",
        metavar="ADDR",
        help="Ray cluster to join ('auto', 'ray://host:10001'); default: a local instance",
    )
    add_no_progress(parser)


def _extras(args: argparse.Namespace) -> tuple[str, ...]:
    """label runs on Ray with several workers or a cluster's address."""
    on_ray = args.workers > 1 or args.address is not None
    return ("learn", "ray") if on_ray else ("learn",)


def run(args: argparse.Namespace) -> int:
    from invdyn.learn.label import LabelConfig, label_data

    config = LabelConfig(
        checkpoint=args.checkpoint,
        data=args.dataset,
        out=args.out,
        size=None if args.size is None else frame_size(args.size),
        replace=args.replace,
        overwrite=args.overwrite,
        batch_size=args.batch_size,
        workers=args.workers,
        address=args.address,
        progress=not args.no_progress,
    )
    print(f"wrote {label_data(config)}")
    return 0
