"""``invdyn import``: convert a file of another format (`invdyn.learn.datasets.dataset_formats`)
into a LeRobot v3 dataset (`invdyn.learn.datasets.import_dataset`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from invdyn.cli.options import Commands, add_no_progress, add_out, command, frame_size, names, needs
from invdyn.learn.datasets import MINARI_FPS, ROBOMIMIC_FPS, dataset_formats


def add(commands: Commands) -> None:
    parser = command(
        commands,
        "import",
        _import,
        extras=needs("learn"),
        help="convert a robomimic, Minari or D4RL HDF5 file, a table, or videos into a "
        "LeRobot v3 dataset",
        description="Read SOURCE and write its episodes (observation.state, action, timestamp, "
        "task) as a LeRobot v3 dataset that train, evaluate and label read. The format is "
        "detected from SOURCE, or given by --format: "
        + "; ".join(f"{known.name}: {known.description}" for known in dataset_formats())
        + ". Where the source stores no times, frame k is at k / fps. The state and action "
        "entries are named after the observations or columns they come from: <key>.<i>, or "
        "<key> for one entry; action.<i>.",
    )
    parser.add_argument(
        "source",
        metavar="SOURCE",
        help="an HDF5 file, a Minari dataset directory, a .csv, .npz or .parquet table, a "
        "video file, or a folder of videos and folders of images",
    )
    add_out(parser, "dataset path")
    parser.add_argument(
        "--format",
        choices=tuple(known.name for known in dataset_formats()),
        help="read SOURCE in this format rather than the one detected (minari: Minari or D4RL)",
    )
    parser.add_argument(
        "--fps",
        metavar="HZ",
        type=float,
        help=f"frames per second (default: robomimic {ROBOMIMIC_FPS:g}, minari {MINARI_FPS:g}, "
        "video the files' own; a table and images need it)",
    )
    parser.add_argument(
        "--obs-keys",
        metavar="KEYS",
        help="comma-separated; robomimic: the observations that make the state, in order "
        "(default: every low-dimensional one, sorted); table: the state's columns, each a "
        "column's name or the prefix of columns <name>.*",
    )
    parser.add_argument(
        "--action-keys",
        metavar="KEYS",
        help="table: the action's columns, as --obs-keys (left out: a dataset of states "
        "without actions, for invdyn label)",
    )
    parser.add_argument(
        "--episode-key",
        metavar="COLUMN",
        help="table: the column of episode numbers; a run of rows of one number is an episode "
        "(default: the table is one episode)",
    )
    parser.add_argument(
        "--filter-key",
        metavar="NAME",
        help="robomimic: only the demos listed in mask/NAME (train, valid, ...)",
    )
    parser.add_argument(
        "--camera",
        metavar="NAME",
        help="video: the camera's name, the feature observation.images.NAME (default: video)",
    )
    parser.add_argument(
        "--size",
        metavar="WxH",
        help="video: resize the frames to this size, even numbers (default: as they are, one "
        "size for all)",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing dataset")
    add_no_progress(parser)


def _import(args: argparse.Namespace) -> int:
    from invdyn.learn.datasets import ImportConfig, ImportOptions, import_dataset

    options = ImportOptions(
        fps=args.fps,
        obs_keys=None if args.obs_keys is None else names("--obs-keys", args.obs_keys),
        action_keys=None if args.action_keys is None else names("--action-keys", args.action_keys),
        episode_key=args.episode_key,
        filter_key=args.filter_key,
        camera=args.camera,
        size=None if args.size is None else frame_size(args.size),
        progress=not args.no_progress,
    )
    config = ImportConfig(
        source=Path(args.source),
        out=args.out,
        format=args.format,
        options=options,
        overwrite=args.overwrite,
    )
    result = import_dataset(config)
    print(f"{args.source}: {result.summary}")
    print(f"wrote {result.path}")
    return 0
