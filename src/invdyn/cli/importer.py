"""``invdyn import``: convert a robomimic, Minari or D4RL HDF5 file, a table, or videos into a
LeRobot v3 dataset (`invdyn.learn.data`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

from invdyn.cli.options import Commands, add_no_progress, add_out, command, frame_size, names, needs
from invdyn.cli.output import dataset_summary
from invdyn.errors import InputError, warn
from invdyn.learn.data import MINARI_FPS, ROBOMIMIC_FPS, Episode, Imported
from invdyn.learn.video import check_fps

IMPORT_OPTIONS = {
    "robomimic": ("obs_keys", "filter_key"),
    "minari": (),
    "table": ("obs_keys", "action_keys", "episode_key"),
    "video": ("camera", "size"),
}
"""The options of `invdyn import` that apply to each format, besides --fps (an option given
for another format is refused)."""


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
        "detected from the file: a .csv, .npz or .parquet table; an HDF5 file with a 'data' "
        "group (robomimic: data/demo_N/obs/<key> and actions); another HDF5 file (Minari: "
        "episode_N groups of observations and actions; D4RL: observations, actions, terminals "
        "and timeouts) or a Minari dataset directory. None of them stores times: frame k is "
        "at k / fps. The state and action entries are named after the observations or "
        "columns they come from: <key>.<i>, or <key> for one entry; action.<i>. A video file, "
        "or a folder of video files and folders of images (at any depth), makes episodes of "
        "frames alone, one per video or folder of images, in observation.images.<camera>.",
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
        choices=tuple(IMPORT_OPTIONS),
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
    from invdyn.learn.data import check_target, file_format, write_dataset

    # an occupied --out is refused before the source is read, not after
    check_target(args.out, overwrite=args.overwrite)
    kind = args.format or file_format(args.source)
    options = {name for names in IMPORT_OPTIONS.values() for name in names}
    what = "videos and images" if kind == "video" else f"a {kind} file"
    _refuse_options(args, sorted(options - set(IMPORT_OPTIONS[kind])), what)
    if args.fps is not None:
        check_fps(args.fps)
    if kind == "video":
        return _import_videos(args)
    (episodes, state_names, action_names), fps = _imported_episodes(kind, args)
    given = {name: getattr(args, name) for name in sorted(options) if getattr(args, name)}
    path = write_dataset(
        args.out,
        episodes,
        fps=fps,
        state_names=state_names,
        action_names=action_names,
        source=kind,
        overwrite=args.overwrite,
        metadata={"importer": "invdyn import", "format": kind, "file": args.source, **given},
    )
    summary = dataset_summary([len(e) for e in episodes], fps, state_names, action_names)
    print(f"{args.source}: {summary}")
    print(f"wrote {path}")
    return 0


def _import_videos(args: argparse.Namespace) -> int:
    """`invdyn import` of a video file or a folder of them and of folders of images."""
    from invdyn.learn.data import import_videos, read_dataset

    path = import_videos(
        args.source,
        args.out,
        camera=args.camera or "video",
        fps=args.fps,
        fps_origin="--fps is",
        size=None if args.size is None else frame_size(args.size),
        overwrite=args.overwrite,
        progress=not args.no_progress,
    )
    dataset = read_dataset(path)
    (key, (height, width, _)), *_ = dataset.info.videos.items()
    summary = dataset_summary([len(e) for e in dataset], dataset.info.fps, (), None)
    print(f"{args.source}: {summary}, {key} {width}x{height}")
    print(f"wrote {path}")
    return 0


def _imported_episodes(kind: str, args: argparse.Namespace) -> tuple[Imported, float]:
    """The episodes of `invdyn import`'s SOURCE read as `kind`, with their entries' names,
    and their frame rate."""
    from invdyn.learn.data import read_minari, read_robomimic

    if kind == "robomimic":
        fps = ROBOMIMIC_FPS if args.fps is None else args.fps
        obs_keys = None if args.obs_keys is None else names("--obs-keys", args.obs_keys)
        return read_robomimic(
            args.source, obs_keys=obs_keys, filter_key=args.filter_key, fps=fps
        ), fps
    if kind == "minari":
        fps = MINARI_FPS if args.fps is None else args.fps
        return read_minari(args.source, fps=fps), fps
    if args.fps is None or args.obs_keys is None:
        raise InputError(
            f"{args.source}: a table needs --fps, and --obs-keys naming its state's columns "
            "(and --action-keys its action's, unless it has none)"
        )
    return _table_episodes(args), args.fps


def _table_episodes(args: argparse.Namespace) -> Imported:
    """The episodes of `invdyn import`'s table: its rows split where the --episode-key column
    changes, at ``k / --fps``; the entries named after their columns."""
    from invdyn.learn.data import read_columns

    groups = {"--obs-keys": names("--obs-keys", args.obs_keys)}
    if args.action_keys is not None:
        groups["--action-keys"] = names("--action-keys", args.action_keys)
    if args.episode_key is not None:
        groups["--episode-key"] = (args.episode_key,)
    read = read_columns(args.source, groups)
    state, action = read["--obs-keys"], read.get("--action-keys")
    numbers = read.get("--episode-key")
    if numbers is not None and len(numbers.names) != 1:
        raise InputError(
            f"--episode-key {args.episode_key!r} selects {len(numbers.names)} columns "
            f"({', '.join(numbers.names)}): name one"
        )
    number = np.zeros(len(state.values)) if numbers is None else numbers.values[:, 0]
    starts = np.flatnonzero(np.diff(number)) + 1
    runs = number[np.r_[0, starts]]
    if len(np.unique(runs)) < len(runs):
        again = next(float(x) for k, x in enumerate(runs) if x in runs[:k])
        warn(
            f"{args.source}: --episode-key {args.episode_key!r} comes back to {again:g} after "
            f"other values: each run of rows is an episode of its own ({len(runs)} episodes)"
        )
    actions = [None] * (len(starts) + 1) if action is None else np.split(action.values, starts)
    episodes = [
        Episode(state=s, action=a, timestamp=np.arange(len(s)) / args.fps)
        for s, a in zip(np.split(state.values, starts), actions, strict=True)
    ]
    return Imported(episodes, state.names, None if action is None else action.names)


def _refuse_options(args: argparse.Namespace, names: Sequence[str], source: str) -> None:
    """`InputError` naming the options of `names` that were given (not None, False or 0)
    for a source they do not apply to, `source` saying what it is ("an invdyn robot")."""
    given = ["--" + name.replace("_", "-") for name in names if getattr(args, name)]
    if given:
        what = "not an option" if len(given) == 1 else "not options"
        raise InputError(f"{', '.join(given)}: {what} of {source} ({args.source})")
