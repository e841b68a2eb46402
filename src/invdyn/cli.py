"""The ``invdyn`` command: demo, track, collect, import, train, evaluate, label, follow, ident,
wbc, info, robots.

Each subcommand parses its arguments, calls the library and prints; user errors (an unknown
robot, a malformed description, a missing file, an optional extra not installed) print
``invdyn: error: <message>`` and exit with status 2, as argparse does for bad arguments.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

import invdyn
from invdyn._arrays import check_count, repeated
from invdyn._files import (
    is_stream,
    json_text,
    output_set,
    remove_stale,
    unmakeable,
    write_json,
)
from invdyn._waits import announced, on_stderr
from invdyn.control.computed_torque import CONTROLLERS
from invdyn.control.trajectories import LIMIT_CHECK_HINT, from_csv
from invdyn.errors import InputError, InvdynError, warn
from invdyn.experiments.balance import SCENARIOS, STANCES, STANDING
from invdyn.experiments.tracking import DEFAULT_BANDWIDTH
from invdyn.extras import require_extras
from invdyn.io import names_a_file, robots
from invdyn.learn.data import MINARI_FPS, ROBOMIMIC_FPS, TABLE_SUFFIXES, Episode, Imported
from invdyn.learn.video import check_fps
from invdyn.model import JointType, Model
from invdyn.sim.collect import POLICIES
from invdyn.sim.plant import Plant

Array = NDArray[np.float64]

STANDARD_OUTPUT = Path("/dev/stdout")
"""--json's path for ``-``: standard output then carries the JSON alone."""
DEMO_ROBOT = "panda"
DEMO_FALLBACK = "double_pendulum"
DEMO_PAYLOAD = 2.0
"""kg carried by the demo's perturbed plant at the end effector."""
DEMO_MASS_ERROR = 0.2
"""The demo's perturbed plant has links this much heavier than the model's."""
DEMO_RATE = 1000.0
"""The demo's control rate, Hz."""
PAYLOAD_LEVER = 1e-9
"""m/s of the payload's point per unit joint velocity below which no joint moves it."""
STATE_ERROR = (
    "the norm of the difference from the recorded state, over every entry of the state "
    "alike (positions and velocities in their own units)"
)
"""What `invdyn follow` reports as a run's state error."""
MARGIN_RESOLUTION = 1e-6
"""N or N m: `invdyn wbc` prints a margin closer to zero than this, the QP's round-off, as 0."""
TRACK_DURATION = 5.0
"""s, `invdyn track`'s minimum_jerk duration (a CSV trajectory sets its own)."""

COLLECT_DEFAULTS: dict[str, Any] = {
    "duration": 5.0,
    "rate": 100.0,
    "policy": "random",
    "size": "64x64",
}
"""`invdyn collect`'s defaults of the options that apply to robots, environments or
cameras alone (an option given where it does not apply is refused)."""
_ROBOT_OPTIONS = (
    "duration",
    "rate",
    "meshes",
    "payload",
    "payload_frame",
    "mass_error",
    "damping",
    "friction",
    "sensor_noise",
    "timestep",
)
_GYM_OPTIONS = ("steps", "policy")
IMPORT_OPTIONS = {
    "robomimic": ("obs_keys", "filter_key"),
    "minari": (),
    "table": ("obs_keys", "action_keys", "episode_key"),
    "video": ("camera", "size"),
}
"""The options of `invdyn import` that apply to each format, besides --fps (an option given
for another format is refused)."""

_TYPE_NAMES = {t: t.name.lower() for t in JointType}


# set for the processes that ``invdyn train --nproc`` starts (`_stopped`)
_LAUNCHED = "INVDYN_TRAIN_NPROC"


class _Terminated(KeyboardInterrupt):
    """SIGTERM (a scheduler's stop, ``kill``), raised where the command is, so that it unwinds
    as on Ctrl-C: temporary files removed, resumable work kept."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``invdyn`` command line and return its exit status."""
    stdout = sys.stdout
    if stdout is not None:
        sys.stdout = _ReaderMayLeave(stdout)
    try:
        return _run(argv)
    finally:
        # what is still buffered, through the wrapper: a reader gone by now costs nothing
        if sys.stdout is not None:
            sys.stdout.flush()
        sys.stdout = stdout


def _run(argv: Sequence[str] | None) -> int:
    """`main`, its standard output wrapped."""
    args, unrecognized = _parser().parse_known_args(argv)
    if unrecognized:
        # with the command's own usage, which lists the options it has
        args.command_parser.error(f"unrecognized arguments: {' '.join(unrecognized)}")
    if getattr(args, "no_progress", True) is False and not sys.stderr.isatty():
        # into a log file, bars that redraw their line are noise; train prints epoch lines
        args.no_progress = True
    command: Callable[[argparse.Namespace], int] = args.command
    extras: Callable[[argparse.Namespace], tuple[str, ...]] = args.extras
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if in_main_thread else None
    try:
        require_extras(*extras(args), purpose=args.command_parser.prog)
        json_path = getattr(args, "json", None)
        _check_json_path(json_path)
        _check_json_apart_from_out(json_path, getattr(args, "out", None))
        # with --json - standard output carries the JSON alone, for a program to read, and
        # what is printed for a person goes to standard error
        args.json_stream = sys.stdout if json_path == STANDARD_OUTPUT else None
        printed = sys.stderr if args.json_stream is not None else sys.stdout
        with (
            warnings.catch_warnings(),
            contextlib.redirect_stdout(printed),
            # the processes of a distributed run after the first say what the first says
            on_stderr(quiet=_repeats_the_first_process()),
        ):
            warnings.showwarning = _show_warning
            if _uses_torch(args):
                _load_torch()
            return command(args)
    except _Terminated:
        return _stopped(terminated=True)
    except SystemExit as stop:
        # Ray's own handler of SIGTERM, which ray.init installs, exits with status 15
        if stop.code != signal.SIGTERM:
            raise
        return _stopped(terminated=True)
    except (InvdynError, OSError, ImportError) as error:
        # a stop that came while a module loaded may reach here as that import's failure
        interruption = _interruption(error)
        if interruption is not None:
            return _stopped(terminated=isinstance(interruption, _Terminated))
        if not (isinstance(error, InvdynError) and _repeats_the_first_process()):
            print(f"invdyn: error: {_describe(error)}", file=sys.stderr)
        return 2
    except MemoryError as error:
        print(
            f"invdyn: error: out of memory: {error or 'an allocation failed'} (a shorter "
            "--duration, fewer episodes or smaller batches need less)",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        return _stopped(terminated=False)
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous or signal.SIG_DFL)


class _ReaderMayLeave:
    """Standard output that, once its reader has gone (``invdyn track ... | head``), sends
    what is printed to nowhere, so that the command still finishes and writes its files."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._quietly(lambda: self._stream.write(text)) or len(text)

    def flush(self) -> None:
        self._quietly(self._stream.flush)

    def _quietly(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except BrokenPipeError:
            nowhere = os.open(os.devnull, os.O_WRONLY)
            os.dup2(nowhere, self._stream.fileno())
            os.close(nowhere)
            return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _stopped(*, terminated: bool) -> int:
    """Say that a Ctrl-C (or, `terminated`, a SIGTERM) stopped the command, unless this is a
    process of ``invdyn train --nproc``, whose launcher says it; return the exit status."""
    if not (os.environ.get(_LAUNCHED) and int(os.environ.get("WORLD_SIZE", "1")) > 1):
        print(f"invdyn: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
    return 143 if terminated else 130


def _repeats_the_first_process() -> bool:
    """Whether this is a process of a distributed run (torchrun's ``WORLD_SIZE`` > 1) other
    than its first (``RANK`` > 0), which reads the same input and meets the same errors in it
    as the first, which reports them."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1 and int(os.environ.get("RANK", "0")) > 0


def _interruption(error: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C or SIGTERM (`_Terminated`) among the exceptions that `error` was raised
    from or while handling, if any."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def _show_warning(message: Warning | str, *_: object, **__: object) -> None:
    """A warning as a line of its own, ``invdyn: warning: <message>``, without the source line
    Python's default shows."""
    print(f"invdyn: warning: {message}", file=sys.stderr)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="invdyn", description="Inverse dynamics for robots, analytic and learned."
    )
    parser.add_argument("--version", action="version", version=f"invdyn {invdyn.__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)

    demo = commands.add_parser(
        "demo",
        help="computed-torque control against PD in MuJoCo: tables and plots",
        description="Track a minimum-jerk move across the workspace in MuJoCo with PD, PD + "
        "gravity compensation, computed torque and feedforward control, on the exact model and "
        f"with a {DEMO_PAYLOAD:g} kg unmodelled payload and {100 * DEMO_MASS_ERROR:g} % mass "
        "error; print the errors and write plots, CSV logs and metrics. Uses the Panda when "
        f"example-robot-data is installed and the {DEMO_FALLBACK} otherwise; nothing is "
        "downloaded.",
    )
    demo.add_argument("--robot", metavar="NAME", help="built-in name or .urdf/.xml path")
    demo.add_argument(
        "--out",
        metavar="DIR",
        type=_path,
        default=Path("invdyn-demo"),
        help="directory for the plots, CSV logs and metrics.json (default: ./invdyn-demo)",
    )
    demo.add_argument(
        "--duration",
        metavar="S",
        type=float,
        default=5.0,
        help="duration of the move in seconds (default: 5)",
    )
    demo.add_argument("--no-progress", action="store_true", help="no progress bars")
    demo.set_defaults(command=_demo, extras=_needs("sim"))

    track = commands.add_parser(
        "track",
        help="closed-loop trajectory tracking in MuJoCo: errors, torques, plot, CSV, JSON",
        description="Simulate a robot in MuJoCo tracking a trajectory under joint-space "
        "control, print the tracking error and torque use per joint, and write a plot, a CSV "
        "log per controller and the metrics. The plant may carry an unmodelled payload and "
        "differ from the controller's model in its masses.",
    )
    track.add_argument("robot", metavar="ROBOT", help="built-in name or .urdf/.xml path")
    track.add_argument(
        "--fixed-base",
        action="store_true",
        help="fix a floating-base robot's root link to the world (joint-space tracking needs a "
        "fixed base)",
    )
    track.add_argument(
        "--no-limit-check",
        action="store_true",
        help="track a CSV trajectory that leaves the joints' position or velocity limits",
    )
    track.add_argument(
        "--trajectory",
        metavar="SPEC",
        default="minimum_jerk",
        help="'minimum_jerk' (a rest-to-rest move across the workspace, from 20%% to 80%% of "
        "each joint's range, shortened to turn at most pi rad and to keep within 80%% of the "
        "velocity limit) or a CSV file with columns time,<joint names>, in rad or m, a "
        "continuous joint's angle followed as written, through a cubic spline that starts and "
        "ends at rest (default: minimum_jerk)",
    )
    track.add_argument(
        "--controller",
        metavar="NAMES",
        default="computed_torque",
        help=f"{', '.join(CONTROLLERS)}, a comma-separated list, or 'all' "
        "(default: computed_torque)",
    )
    track.add_argument(
        "--duration",
        metavar="S",
        type=float,
        default=None,
        help=f"minimum_jerk duration ({TRACK_DURATION:g} s); a CSV file sets its own",
    )
    track.add_argument(
        "--rate", metavar="HZ", type=float, default=1000.0, help="control rate (1000 Hz)"
    )
    track.add_argument(
        "--bandwidth",
        metavar="RAD_S",
        type=float,
        default=DEFAULT_BANDWIDTH,
        help="closed-loop natural frequency of every controller's critically damped gains "
        f"(default: {DEFAULT_BANDWIDTH:g} rad/s)",
    )
    _add_plant_arguments(track)
    track.add_argument(
        "--out",
        metavar="DIR",
        type=_path,
        default=Path("invdyn-track"),
        help="directory for tracking.png, <controller>.csv and metrics.json "
        "(default: ./invdyn-track)",
    )
    track.add_argument(
        "--json",
        metavar="PATH",
        type=_json_path,
        help="also write the metrics here (-: to stdout, the rest to stderr)",
    )
    track.add_argument("--no-progress", action="store_true", help="no progress bars")
    track.set_defaults(command=_track, extras=_needs("sim"))

    collect = commands.add_parser(
        "collect",
        help="record transitions in MuJoCo into a LeRobot v3 dataset",
        description="Simulate SOURCE and write its episodes (observation.state, action, "
        "timestamp) as a LeRobot v3 dataset. SOURCE is an invdyn robot (torque control "
        "tracking random excitations with a noisy controller) or a Gymnasium MuJoCo "
        "environment id such as HalfCheetah-v5 (random, noisy, bounded or scripted policy). "
        "Rendered episodes are kept in DIR.rendered until the dataset is written, so that "
        "a killed run, started again, renders only what it lacked.",
    )
    collect.add_argument("source", metavar="SOURCE", help="robot name or path, or a gym env id")
    collect.add_argument("--out", metavar="DIR", type=_path, required=True, help="dataset path")
    collect.add_argument(
        "--episodes", metavar="N", type=int, default=10, help="episodes (default: 10)"
    )
    collect.add_argument("--seed", metavar="S", type=int, default=0, help="seed (default: 0)")
    collect.add_argument(
        "--duration",
        metavar="S",
        type=float,
        help=f"robot episodes: seconds ({COLLECT_DEFAULTS['duration']:g})",
    )
    collect.add_argument(
        "--rate",
        metavar="HZ",
        type=float,
        help=f"robot episodes: records and control steps per second ({COLLECT_DEFAULTS['rate']:g})",
    )
    collect.add_argument(
        "--steps", metavar="N", type=int, help="gym episodes: steps (default: the env's limit)"
    )
    collect.add_argument(
        "--policy",
        choices=POLICIES,
        help=f"gym episodes: the policy (default: {COLLECT_DEFAULTS['policy']}; noisy: smooth "
        "random actions; bounded: noisy, kept off joint limits)",
    )
    collect.add_argument(
        "--camera",
        metavar="NAME",
        action="append",
        help="also render this camera into the dataset's videos, repeatable: front, side or "
        "top (added to every scene), for robots hand (follows the hand), for environments "
        "a camera of their own or default (the free camera)",
    )
    collect.add_argument(
        "--meshes",
        action="store_true",
        help="robot episodes: render the URDF's collision meshes (STL, OBJ) rather than a "
        "stick figure",
    )
    collect.add_argument(
        "--size",
        metavar="WxH",
        help="with --camera: rendered frame size in pixels, even numbers (default: "
        f"{COLLECT_DEFAULTS['size']})",
    )
    _add_plant_arguments(collect, prefix="robot episodes: ")
    collect.add_argument(
        "--workers",
        metavar="N",
        type=int,
        default=1,
        help="processes that simulate and render episodes in parallel; the episodes and their "
        "frames do not depend on N (default: 1)",
    )
    collect.add_argument("--overwrite", action="store_true", help="replace an existing dataset")
    collect.add_argument("--no-progress", action="store_true", help="no progress bars")
    collect.set_defaults(command=_collect, extras=_needs("sim", "learn"))

    importer = commands.add_parser(
        "import",
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
    importer.add_argument(
        "source",
        metavar="SOURCE",
        help="an HDF5 file, a Minari dataset directory, a .csv, .npz or .parquet table, a "
        "video file, or a folder of videos and folders of images",
    )
    importer.add_argument("--out", metavar="DIR", type=_path, required=True, help="dataset path")
    importer.add_argument(
        "--format",
        choices=tuple(IMPORT_OPTIONS),
        help="read SOURCE in this format rather than the one detected (minari: Minari or D4RL)",
    )
    importer.add_argument(
        "--fps",
        metavar="HZ",
        type=float,
        help=f"frames per second (default: robomimic {ROBOMIMIC_FPS:g}, minari {MINARI_FPS:g}, "
        "video the files' own; a table and images need it)",
    )
    importer.add_argument(
        "--obs-keys",
        metavar="KEYS",
        help="comma-separated; robomimic: the observations that make the state, in order "
        "(default: every low-dimensional one, sorted); table: the state's columns, each a "
        "column's name or the prefix of columns <name>.*",
    )
    importer.add_argument(
        "--action-keys",
        metavar="KEYS",
        help="table: the action's columns, as --obs-keys (left out: a dataset of states "
        "without actions, for invdyn label)",
    )
    importer.add_argument(
        "--episode-key",
        metavar="COLUMN",
        help="table: the column of episode numbers; a run of rows of one number is an episode "
        "(default: the table is one episode)",
    )
    importer.add_argument(
        "--filter-key",
        metavar="NAME",
        help="robomimic: only the demos listed in mask/NAME (train, valid, ...)",
    )
    importer.add_argument(
        "--camera",
        metavar="NAME",
        help="video: the camera's name, the feature observation.images.NAME (default: video)",
    )
    importer.add_argument(
        "--size",
        metavar="WxH",
        help="video: resize the frames to this size, even numbers (default: as they are, one "
        "size for all)",
    )
    importer.add_argument("--overwrite", action="store_true", help="replace an existing dataset")
    importer.add_argument("--no-progress", action="store_true", help="no progress bars")
    importer.set_defaults(command=_import, extras=_needs("learn"))

    train = commands.add_parser(
        "train",
        help="train an inverse dynamics model on a dataset",
        description="Train an inverse dynamics model on a LeRobot v3 dataset; the run "
        "directory holds the checkpoint and resumes where a killed run stopped. "
        "--set train.init=RUN starts from the model of another run (fine-tuning: on more "
        "episodes, on data of another instance of the robot).",
    )
    train.add_argument("dataset", metavar="DATASET", help="LeRobot v3 dataset directory")
    train.add_argument("--out", metavar="DIR", type=_path, required=True, help="run directory")
    train.add_argument("--preset", default="default", help="configuration preset: default or small")
    train.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="override a setting, e.g. --set model.horizon=2 --set train.epochs=50",
    )
    train.add_argument("--restart", action="store_true", help="start afresh, not resume")
    train.add_argument(
        "--nproc",
        type=int,
        default=1,
        metavar="N",
        help="train in N processes with DistributedDataParallel (gloo on CPUs, nccl on GPUs)",
    )
    train.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar: a line per epoch instead (losses, learning rate, minutes)",
    )
    train.set_defaults(command=_train, extras=_needs("learn"))

    wbc = commands.add_parser(
        "wbc",
        help="whole-body control of a legged robot in MuJoCo: stand, sway, squat, push, lift",
        description="Simulate a legged robot (floating base; point feet named *foot and flat "
        "feet named *sole unless --feet or --soles name them; a standing configuration in its "
        "SRDF or MJCF keyframes unless --pose names one; the built-in "
        f"{', '.join(sorted(STANCES))} have their own) in MuJoCo under whole-body control (a "
        "QP over accelerations and contact forces, friction cones, torque limits), print the "
        "centre of mass error and the friction cone and torque margins, and write a plot and a "
        "report. Exits with status 1 when the robot falls, 2 on an error.",
    )
    wbc.add_argument("robot", metavar="ROBOT", help="built-in name or .urdf/.xml path, e.g. go1")
    wbc.add_argument(
        "--scenario", choices=SCENARIOS, default="stand", help="what to do (default: stand)"
    )
    wbc.add_argument(
        "--duration", metavar="S", type=float, default=10.0, help="seconds (default: 10)"
    )
    wbc.add_argument(
        "--amplitude",
        metavar="M",
        type=float,
        help="sway: how far either way; squat: half how deep, m (default: 0.02)",
    )
    wbc.add_argument("--push", metavar="N", type=float, help="push: its force, N (default: 50)")
    wbc.add_argument(
        "--feet",
        metavar="FRAMES",
        help="comma-separated frames of point feet, each standing on its origin "
        "(default: frames named *foot)",
    )
    wbc.add_argument(
        "--soles",
        metavar="FRAMES",
        help="comma-separated frames of flat feet, each standing on the corners of --sole "
        "(default: frames named *sole or *sole_link)",
    )
    wbc.add_argument(
        "--sole",
        metavar="X0,X1,Y0,Y1,Z",
        help="a flat foot's corners in its frame, m: x from X0 to X1, y from Y0 to Y1, at "
        "height Z (default: -0.1,0.1,-0.065,0.065,0; write --sole=-0.1,... for a value that "
        "starts with a minus sign)",
    )
    wbc.add_argument(
        "--pose",
        metavar="NAME|Q",
        help="the configuration to stand in: an SRDF state, an MJCF keyframe, 'neutral', or "
        "its nq comma-separated values (the base's placed on the ground) (default: the first "
        f"of {', '.join(STANDING)})",
    )
    wbc.add_argument(
        "--out",
        metavar="DIR",
        type=_path,
        default=Path("invdyn-wbc"),
        help="output directory (default: invdyn-wbc)",
    )
    wbc.add_argument("--no-progress", action="store_true", help="no progress bar")
    wbc.set_defaults(command=_wbc, extras=_needs("sim", "control"))

    evaluate = commands.add_parser(
        "evaluate",
        help="held-out accuracy of a trained model, against linear and physics baselines",
        description="Evaluate a checkpoint on a dataset's held-out episodes (its validation "
        "split when the dataset is the one it was trained on, else every episode): R^2, "
        "normalised MSE and MAE per action dimension for the model, a linear model and the "
        "physics oracle where the physics is known; writes metrics.json and a plot. Given the "
        "output directory of 'invdyn ident', scores on every episode of the dataset the "
        "torque nMSE per joint of the nominal and identified models (and of the learned and "
        "hybrid ones, after 'invdyn ident --learn'); writes report.json and nmse.png.",
    )
    evaluate.add_argument(
        "checkpoint",
        metavar="CHECKPOINT",
        help="run or checkpoint directory, or an output directory of 'invdyn ident'",
    )
    evaluate.add_argument("dataset", metavar="DATASET", help="LeRobot v3 dataset directory")
    evaluate.add_argument(
        "--out",
        metavar="DIR",
        type=_path,
        help="directory for the metrics and plots (default: <run>/evaluation, beside the "
        "run's checkpoint)",
    )
    evaluate.add_argument(
        "--json",
        metavar="PATH",
        type=_json_path,
        help="also write the metrics here (-: to stdout, the rest to stderr)",
    )
    evaluate.set_defaults(command=_evaluate, extras=_needs("learn"))

    label = commands.add_parser(
        "label",
        help="add a trained model's actions to a dataset without actions, or to plain videos",
        description="Predict the action between consecutive observations of every episode and "
        "write a labelled copy of the dataset (with the ensemble's spread for ensembles); "
        "resumes a killed run and writes the output atomically. DATA may also be plain "
        "videos for a model of one camera's frames: a folder of mp4 files and image folders, "
        "each an episode.",
    )
    label.add_argument("checkpoint", metavar="CHECKPOINT", help="run or checkpoint directory")
    label.add_argument(
        "dataset", metavar="DATA", help="LeRobot v3 dataset directory, or a folder of videos"
    )
    label.add_argument(
        "--size",
        metavar="WxH",
        help="plain videos: resize the frames to this size (default: the size of the model's "
        "training frames, the only one it takes when its checkpoint records it)",
    )
    label.add_argument("--out", metavar="DIR", type=_path, required=True, help="labelled dataset")
    label.add_argument(
        "--replace", action="store_true", help="replace the actions a dataset already has"
    )
    label.add_argument("--overwrite", action="store_true", help="replace an existing output")
    label.add_argument(
        "--batch-size",
        type=int,
        default=4096,
        metavar="N",
        help="windows per forward pass (the unit of resumed work: at least N windows)",
    )
    label.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="label the episodes' shards on N Ray workers (needs the ray extra)",
    )
    label.add_argument(
        "--address",
        metavar="ADDR",
        help="Ray cluster to join ('auto', 'ray://host:10001'); default: a local instance",
    )
    label.add_argument("--no-progress", action="store_true", help="no progress bars")
    label.set_defaults(command=_label, extras=_label_extras)

    follow = commands.add_parser(
        "follow",
        help="drive the simulation along a recorded episode's states with a trained model",
        description="At every step ask the model for the action from the simulated state to "
        "a desired state it can reach: the episode's reference velocity plus --position-gain "
        "times the position error, and the position a constant acceleration to that velocity "
        "leads to (the recorded next state itself does not follow from the simulated state "
        "once the system is off the reference, and a model asked for it answers with large, "
        "wrong actions). Compare the states reached with replaying the recorded actions "
        "open-loop (where the dataset has actions: a dataset of states alone is followed "
        "too) and with the physics oracle asked for the same desired state. --payload "
        "(robots), --mass-error and --damping make the simulated plant differ from the "
        "recording, which open-loop replay cannot correct. A model of "
        "one camera's frames follows goal frames instead (Gymnasium datasets with video): "
        "frames of the states a world model that knows the episode would predict from the "
        "simulated state, or with --recorded-goals the episode's own frames.",
    )
    follow.add_argument("checkpoint", metavar="CHECKPOINT", help="run or checkpoint directory")
    follow.add_argument("dataset", metavar="DATASET", help="LeRobot v3 dataset directory")
    follow.add_argument("--episode", type=int, default=0, help="the episode to follow (0)")
    follow.add_argument("--seconds", type=float, help="follow this long (default: all of it)")
    follow.add_argument(
        "--payload",
        metavar="KG",
        type=float,
        help="robots: an unmodelled end-effector load (default: none)",
    )
    follow.add_argument(
        "--mass-error",
        metavar="E",
        type=float,
        default=0.0,
        help="the simulated masses and inertias are (1 + E) times the recorded ones (default: 0)",
    )
    follow.add_argument(
        "--damping",
        metavar="D",
        type=float,
        default=0.0,
        help="viscous friction the recording did not have, added at every dof (default: 0)",
    )
    follow.add_argument(
        "--position-gain",
        metavar="RATE",
        type=float,
        help="rate (1/s) at which the desired states ask a position error back (default: "
        "invdyn.learn.follow.POSITION_GAIN, 10)",
    )
    follow.add_argument(
        "--recorded-goals",
        action="store_true",
        help="models of frames: the goal frames are the episode's own, not replanned",
    )
    follow.add_argument(
        "--json",
        metavar="PATH",
        type=_json_path,
        help="write the results here (-: to stdout, the rest to stderr)",
    )
    follow.set_defaults(command=_follow, extras=_needs("learn", "sim"))

    ident = commands.add_parser(
        "ident",
        help="identify a robot's dynamic parameters from a recorded dataset",
        description="Identify the dynamic parameters of a robot from a LeRobot v3 dataset of "
        "its joint positions, velocities and torques (such as 'invdyn collect ROBOT' writes): "
        "accelerations by zero-phase filtering, base parameters by least squares or a "
        "physically consistent fit, scored on held-out episodes against the robot as "
        "described. Writes report.json, identification.npz, nmse.png, held_out.png and, "
        "with the consistent method on a URDF robot, identified.urdf.",
    )
    ident.add_argument(
        "dataset",
        metavar="DATA",
        help="LeRobot v3 dataset directory, or a table (.csv, .npz, .parquet) with columns "
        "q.*, v.*, a.* and tau.* (accelerations as recorded, no filtering)",
    )
    ident.add_argument(
        "--robot",
        metavar="ROBOT",
        help="robot name or URDF (default: the dataset's source, 'invdyn:<robot>')",
    )
    ident.add_argument(
        "--method",
        choices=("consistent", "wls", "ols"),
        default="consistent",
        help="consistent: weighted, every body physical, writes a URDF; wls: weighted least "
        "squares; ols: ordinary (default: consistent)",
    )
    ident.add_argument(
        "--cutoff",
        metavar="HZ",
        help="a dataset's zero-phase low-pass filter of the velocities, accelerations and "
        "torques: its cut-off, or 'none' (default: 10)",
    )
    ident.add_argument(
        "--offset", action="store_true", help="also identify a torque offset per joint"
    )
    ident.add_argument(
        "--learn",
        action="store_true",
        help="also train an inverse dynamics network alone, one per joint on what the "
        "identified model leaves of its torque (hybrid), and rnea with trainable parameters "
        "plus residual networks (end_to_end), and compare all on the held-out episodes",
    )
    ident.add_argument(
        "--preset", help="--learn: the networks' configuration preset (default: default)"
    )
    ident.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="--learn: override a setting of the networks, e.g. --set train.epochs=50",
    )
    ident.add_argument(
        "--restart",
        action="store_true",
        help="--learn: train the networks afresh, not resume those of an earlier run in --out",
    )
    ident.add_argument(
        "--held-out",
        metavar="FRACTION",
        type=float,
        default=0.2,
        help="share of the episodes, the last ones, held out for the report (default: 0.2)",
    )
    ident.add_argument(
        "--out",
        metavar="DIR",
        type=_path,
        default=Path("invdyn-ident"),
        help="output directory (default: ./invdyn-ident)",
    )
    ident.add_argument("--no-progress", action="store_true", help="no progress bars")
    ident.set_defaults(command=_ident, extras=_needs("learn"))

    info = commands.add_parser(
        "info",
        help="kinematic tree, joints, limits and masses of a robot",
        description="Print the kinematic tree, the joints with their limits and the masses of "
        "a robot.",
    )
    info.add_argument("robot", metavar="ROBOT", help="built-in name or .urdf/.xml path")
    base = info.add_mutually_exclusive_group()
    base.add_argument(
        "--floating-base",
        dest="floating_base",
        action="store_const",
        const=True,
        default=None,
        help="attach the root link by a free-flyer joint",
    )
    base.add_argument(
        "--fixed-base",
        dest="floating_base",
        action="store_const",
        const=False,
        help="fix the root link to the world",
    )
    info.set_defaults(command=_info, extras=_needs())

    listing = commands.add_parser(
        "robots",
        help="list the built-in robot names",
        description="List the built-in robot names and whether each is installed.",
    )
    listing.set_defaults(command=_robots, extras=_needs())
    for command_parser in commands.choices.values():
        command_parser.set_defaults(command_parser=command_parser)
    return parser


# demo and track


def _uses_torch(args: argparse.Namespace) -> bool:
    """Whether the command runs networks (and so imports PyTorch)."""
    return args.command in (_train, _evaluate, _label, _follow) or getattr(args, "learn", False)


def _load_torch() -> None:
    """Import PyTorch, which takes seconds the first time, saying so when it does."""
    with announced("loading PyTorch"):
        import torch  # noqa: F401


def _needs(*extras: str) -> Callable[[argparse.Namespace], tuple[str, ...]]:
    """The extras a command needs whatever its arguments, as a function of them."""
    return lambda args: extras


def _label_extras(args: argparse.Namespace) -> tuple[str, ...]:
    """label runs on Ray with several workers or a cluster's address."""
    on_ray = args.workers > 1 or args.address is not None
    return ("learn", "ray") if on_ray else ("learn",)


def _demo(args: argparse.Namespace) -> int:
    from invdyn.experiments.tracking import workspace_motion
    from invdyn.kinematics import end_effector

    _positive_option("--duration", args.duration)
    _output_directory(args.out)
    name = args.robot
    if name is None:
        name = DEMO_ROBOT
        if not robots.is_installed(DEMO_ROBOT):
            name = DEMO_FALLBACK
            print(
                f"example-robot-data is not installed, so the demo uses the {DEMO_FALLBACK} "
                f"(pip install example-robot-data for the {DEMO_ROBOT})"
            )
    model, scene = _tracked_robot(name)
    _check_trackable(
        model, f"invdyn track {name} --fixed-base welds what free joints move to the world"
    )
    plant = Plant(
        payload=DEMO_PAYLOAD, payload_frame=end_effector(model), mass_scale=1.0 + DEMO_MASS_ERROR
    )
    runs = {
        "exact": (Plant(), tuple(CONTROLLERS)),
        "payload": (plant, ("pd_gravity", "computed_torque", "feedforward")),
    }
    _check_run_length(model, args.duration, DEMO_RATE, sum(len(c) for _, c in runs.values()))
    _announce_the_file_as_plant(scene, name)
    _warn_of_a_payload_that_cannot_move(model, plant, f"invdyn track {name} --payload-frame")
    trajectory = workspace_motion(model, duration=args.duration)
    print(
        f"{model.name}: a {args.duration:g} s minimum-jerk move across the workspace, "
        f"{DEMO_RATE / 1000:g} kHz "
        f"control, every controller at {DEFAULT_BANDWIDTH:g} rad/s bandwidth"
    )
    metrics, written, out = {}, [], Path(args.out)
    with output_set(out) as staged:
        for key, (run_plant, controllers) in runs.items():
            print()
            if key == "exact":
                print("exact model (the plant is the controller's model):")
            else:
                print(
                    f"model error: a {DEMO_PAYLOAD:g} kg payload at {plant.payload_frame} and "
                    f"{100 * DEMO_MASS_ERROR:g} % heavier links than the controller's model:"
                )
            results = _run_tracking(
                model,
                trajectory,
                controllers,
                plant=run_plant,
                control_rate=DEMO_RATE,
                mj_model=scene,
                progress=not args.no_progress,
            )
            suffix = "" if key == "exact" else "-payload"
            written += _write_tracking(model, results, staged, suffix=suffix)
            metrics[key] = _metrics(model, results, _setup(args, run_plant, trajectory))
        write_json(staged / "metrics.json", metrics)
    print(f"wrote {', '.join([*written, 'metrics.json'])} in {out.absolute()}")
    return 0


def _track(args: argparse.Namespace) -> int:
    from invdyn.experiments.tracking import workspace_motion

    controllers = _controller_names(args.controller)
    _output_directory(args.out)
    model, scene = _tracked_robot(args.robot, floating_base=False if args.fixed_base else None)
    _check_trackable(model, "pass --fixed-base to weld what free joints move to the world")
    _announce_the_file_as_plant(scene, args.robot)
    _positive_option("--rate", args.rate)
    _positive_option("--bandwidth", args.bandwidth)
    if args.trajectory == "minimum_jerk":
        if args.no_limit_check:
            raise InputError("--no-limit-check applies to a --trajectory CSV file")
        duration = TRACK_DURATION if args.duration is None else args.duration
        _positive_option("--duration", duration)
        _check_run_length(model, duration, args.rate, len(controllers))
        trajectory = workspace_motion(model, duration=duration)
    else:
        if args.duration is not None:
            raise InputError(
                f"--duration applies to the minimum_jerk trajectory; {args.trajectory} sets its own"
            )
        if not (Path(args.trajectory).suffix or Path(args.trajectory).exists()):
            raise InputError(
                f"--trajectory {args.trajectory}: neither 'minimum_jerk' nor a CSV file"
            )
        try:
            trajectory = from_csv(model, args.trajectory, check_limits=not args.no_limit_check)
        except InputError as error:
            skip = "; pass --no-limit-check to skip this check"
            message = str(error).replace(LIMIT_CHECK_HINT, skip)
            named = message.startswith(args.trajectory)
            raise InputError(message if named else f"{args.trajectory}: {message}") from None
    plant = _plant(args, model)
    results = _run_tracking(
        model,
        trajectory,
        controllers,
        plant=plant,
        bandwidth=args.bandwidth,
        control_rate=args.rate,
        mj_model=scene,
        progress=not args.no_progress,
    )
    out = Path(args.out)
    metrics = _metrics(model, results, _setup(args, plant, trajectory))
    earlier = _earlier_controllers(out)
    with output_set(out) as staged:
        written = _write_tracking(model, results, staged)
        write_json(staged / "metrics.json", metrics)
    # the logs of controllers that the run before left out would pass for this run's
    remove_stale(out, [f"{name}.csv" for name in sorted(earlier - set(results))])
    print(f"wrote {', '.join([*written, 'metrics.json'])} in {out.absolute()}")
    for path in _write_json_option(args, metrics):
        print(f"wrote {path}")
    return 0


def _tracked_robot(robot: str, *, floating_base: bool | None = None) -> tuple[Model, Any]:
    """The model of `robot` and the MuJoCo model to simulate it in: for an MJCF file, the file
    as it is written (tendons, equality constraints, contacts and springs included), compiled
    once for both, the model with the file's joint damping and friction; None for a plant
    built from the model."""
    from invdyn.io import is_mjcf
    from invdyn.io.mjcf import compile_mjcf, from_mujoco

    if not is_mjcf(robot):
        return _load(robot, floating_base=floating_base), None
    scene = compile_mjcf(robot, floating_base=floating_base)
    return from_mujoco(scene, source=robot, friction=True), scene


def _run_tracking(
    model: Model,
    trajectory: Any,
    controllers: Sequence[str],
    *,
    bandwidth: float = DEFAULT_BANDWIDTH,
    **options: Any,
) -> dict[str, Any]:
    """Track with each controller, then print a summary and a per-joint table of each."""
    from invdyn.experiments.tracking import compare

    # without progress bars (--no-progress, or output into a file) the wait says what it is
    simulating = f"simulating {model.name} under {', '.join(controllers)}"
    with announced(simulating, when=not options.get("progress")):
        results = compare(model, trajectory, controllers, bandwidth=bandwidth, **options)
    rows = []
    for name, result in results.items():
        torques = [joint.rms_torque for joint in result.joints]
        saturated = max(joint.saturated for joint in result.joints)
        rows.append(
            [
                name,
                f"{result.rms_error:.3e}",
                f"{result.max_error:.3e}",
                f"{max(torques):.2f}",
                f"{100 * saturated:.1f}%",
            ]
        )
    _print_table(["controller", "RMS error", "max error", "max RMS effort", "saturated"], rows)
    units = model.dof_force_units
    for name, result in results.items():
        print(f"\n  {name}, per joint (errors in rad or m, efforts in N·m or N):")
        limits = model.dof_effort_limit
        _print_table(
            ["joint", "RMS error", "max error", "RMS effort", "max effort", "limit", "saturated"],
            [
                [
                    joint.name,
                    f"{joint.rms_error:.3e}",
                    f"{joint.max_error:.3e}",
                    f"{joint.rms_torque:.3f}",
                    f"{joint.max_torque:.3f}",
                    f"{limits[k]:g} {units[k]}" if limits[k] > 0 else "-",
                    f"{100 * joint.saturated:.1f}%",
                ]
                for k, joint in enumerate(result.joints)
            ],
        )
    return results


def _write_tracking(
    model: Model, results: dict[str, Any], out: Path, suffix: str = ""
) -> list[str]:
    """The figure and a CSV log per controller, into `out`: the names of the files written."""
    from invdyn.sim import save_csv
    from invdyn.viz.plots import plot_tracking, save_figure

    figure = plot_tracking(
        results,
        labels=list(model.dof_names),
        title=f"{model.name}: tracking in MuJoCo{' with model error' if suffix else ''}",
        colour_order=list(CONTROLLERS),
    )
    save_figure(figure, out / f"tracking{suffix}.png")
    for name, result in results.items():
        save_csv(result.rollout, model, out / f"{name}{suffix}.csv")
    return [f"tracking{suffix}.png", *(f"{name}{suffix}.csv" for name in results)]


def _earlier_controllers(out: Path) -> set[str]:
    """The controllers whose logs an earlier ``invdyn track`` wrote in `out`, as its
    metrics.json lists them; none where there is no such file (files of the same names that
    no run of the command wrote are the user's)."""
    try:
        earlier = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    controllers = earlier.get("controllers") if isinstance(earlier, dict) else None
    return set(controllers) & set(CONTROLLERS) if isinstance(controllers, dict) else set()


def _metrics(model: Model, results: dict[str, Any], setup: dict[str, Any]) -> dict[str, Any]:
    """JSON metrics: the robot, the run's setup, and each controller's under "controllers",
    however many there are."""
    entries = {name: result.metrics() for name, result in results.items()}
    return {"robot": model.name, "setup": setup, "controllers": entries}


def _setup(args: argparse.Namespace, plant: Any, trajectory: Any) -> dict[str, Any]:
    """The run's settings, saved with its metrics."""
    return {
        "trajectory": str(getattr(args, "trajectory", "minimum_jerk")),
        "duration": float(trajectory.duration),
        "control_rate": getattr(args, "rate", DEMO_RATE),
        "bandwidth": getattr(args, "bandwidth", DEFAULT_BANDWIDTH),
        "payload": plant.payload,
        "payload_frame": plant.payload_frame,
        "mass_scale": plant.mass_scale,
        "damping": plant.damping,
        "friction": plant.friction,
        "sensor_noise": plant.sensor_noise,
        "physics_timestep": plant.timestep,
    }


def _controller_names(spec: str) -> tuple[str, ...]:
    """`--controller`: a name, a comma-separated list or 'all'."""
    if spec == "all":
        return tuple(CONTROLLERS)
    names = _names("--controller", spec)
    unknown = [name for name in names if name not in CONTROLLERS]
    if unknown:
        raise InputError(
            f"unknown controller {', '.join(map(repr, unknown)) or repr(spec)}; expected "
            f"{', '.join(CONTROLLERS)}, a comma-separated list of them, or 'all'"
        )
    return names


def _names(option: str, spec: str) -> tuple[str, ...]:
    """A comma-separated list of distinct names, or `InputError` naming `option` when it has
    none or repeats one."""
    names = tuple(name.strip() for name in spec.split(",") if name.strip())
    if not names:
        raise InputError(f"{option} {spec!r}: expected comma-separated names")
    twice = sorted(repeated(names))
    if twice:
        raise InputError(f"{option} {spec!r}: names {', '.join(twice)} more than once")
    return names


def _numbers(option: str, spec: str, count: int) -> tuple[float, ...]:
    """`count` comma-separated numbers, or `InputError` naming `option`."""
    try:
        numbers = tuple(float(part) for part in spec.split(","))
    except ValueError:
        numbers = ()
    if len(numbers) != count:
        raise InputError(f"{option} {spec!r}: expected {count} comma-separated numbers")
    return numbers


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


def _check_json_path(path: Path | None) -> None:
    """`InputError`, before any work, when --json names a directory, a file inside a dataset
    or a checkpoint, a stream that cannot be written, or a file that cannot be written (in a
    directory that cannot be made or written)."""
    if path is None:
        return
    if path.is_dir():
        raise InputError(f"--json {path}: is a directory; give a file path")
    if is_stream(path):
        if not os.access(path, os.W_OK):
            raise InputError(f"--json {path}: cannot be written")
        return
    _check_apart_from_inputs("--json", path, path.parent)
    problem = unmakeable(path.parent)
    if problem is None and path.parent.exists():
        try:  # the file is written next to it and renamed over it
            with tempfile.TemporaryFile(dir=path.parent):
                pass
        except OSError as error:
            problem = f"cannot be written in {path.parent} ({error.strerror})"
    if problem is not None:
        raise InputError(f"--json {path}: {problem}")


def _check_json_apart_from_out(path: Path | None, out: Path | None) -> None:
    """`InputError`, before any work, when --json names --out itself or a file in it, where
    the command writes its own files (one of which it would replace, or be replaced by)."""
    if path is None or out is None or is_stream(path):
        return
    if path.absolute() == out.absolute() or out.absolute() in path.absolute().parents:
        raise InputError(
            f"--json {path}: inside --out {out}, where the command writes its own files; give "
            "a path outside it"
        )


def _json_path(text: str) -> Path:
    """A --json value: a path, or ``-`` for standard output (`STANDARD_OUTPUT`)."""
    return STANDARD_OUTPUT if text == "-" else _path(text)


def _write_json_option(args: argparse.Namespace, data: Any) -> list[Path]:
    """Write `data` where --json says: the files written (none for standard output, written
    through `main`'s stream)."""
    if args.json is None:
        return []
    if args.json_stream is not None:
        args.json_stream.write(json_text(data))
        args.json_stream.flush()
        return []
    return [write_json(args.json, data)]


def _path(text: str) -> Path:
    """A path option's value; an empty one (which would be the working directory) refused."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path")
    return Path(text)


def _output_directory(path: str | os.PathLike[str] | None) -> None:
    """`InputError`, before any work, when --out names something other than a directory, a
    dataset's (the results go into one of their own) or one inside a dataset, a checkpoint's,
    or one that cannot be written or made (its nearest existing ancestor a file, or not
    writable)."""
    from invdyn.learn.data import INFO_PATH

    if path is None:
        return
    if Path(path).exists() and not Path(path).is_dir():
        raise InputError(f"--out {path}: exists and is not a directory")
    if (Path(path) / INFO_PATH).is_file():
        raise InputError(f"--out {path}: holds a dataset; give a directory of its own")
    _check_apart_from_inputs("--out", Path(path), Path(path))
    if Path(path).is_dir() and not os.access(path, os.W_OK | os.X_OK):
        raise InputError(f"--out {path}: is not writable")
    reason = unmakeable(path)
    if reason is not None:
        raise InputError(f"--out {path}: {reason}")


def _announce_the_file_as_plant(scene: Any, robot: str) -> None:
    """Say so when MuJoCo simulates the robot's own file (`scene`, an MJCF ``MjModel``; None
    for a plant built from the model), and warn when it drives joints with servos, which
    tracking replaces by torques."""
    from invdyn.io.mjcf import servo_joints

    if scene is None:
        return
    print(f"the plant is {robot} itself, as MuJoCo compiles it")
    servos = servo_joints(scene)
    if servos:
        warn(
            f"{robot} drives {', '.join(servos)} with actuators whose force depends on the "
            "joints' state (position or velocity servos, dampers, muscles); the controllers' "
            "torques act on the joints directly instead, as ideal motors bounded by the "
            "actuators' forcerange where it is set"
        )


def _check_apart_from_inputs(option: str, path: Path, folder: Path) -> None:
    """`InputError` when an output `path`, written into `folder`, would land inside a
    dataset or in a trained model's checkpoint directory, whose files the commands read."""
    from invdyn.learn.keys import MODEL_FILE
    from invdyn.learn.video import enclosing_dataset

    dataset = enclosing_dataset(path)
    if dataset is not None:
        raise InputError(f"{option} {path}: lies inside the dataset {dataset}; write beside it")
    if (folder / MODEL_FILE).is_file():
        raise InputError(
            f"{option} {path}: would write into the checkpoint {folder}; write beside it"
        )


def _check_trackable(model: Model, fixed_base: str) -> None:
    """`InputError` unless joint-space tracking can drive `model`: a fixed base (else the
    error gives the `fixed_base` advice), moving joints and an actuator on each; `ModelError`
    where they move no mass (a singular mass matrix)."""
    from invdyn.configuration import neutral
    from invdyn.control.computed_torque import check_actuated
    from invdyn.dynamics import require_regular

    free = [
        n for n, t in zip(model.joint_names, model.jnt_type, strict=True) if t == JointType.FREE
    ]
    if model.nv == 6 * len(free):
        moves = f" besides {'its free joint' if len(free) == 1 else 'free joints'}" if free else ""
        raise InputError(f"{model.name} has no moving joints{moves}: there is nothing to track")
    if free:
        from invdyn.io import is_mjcf

        what = "a floating base," if model.floating_base else f"a free joint, {free[0]!r},"
        # welding the root leaves a URDF's floating joint below it free; an MJCF file's free
        # joints are all welded
        welds = model.floating_base or is_mjcf(model.source)
        advice = fixed_base if welds else "make it a fixed joint in the description"
        raise InputError(
            f"{model.name} has {what} which joint-space tracking cannot drive; {advice}"
        )
    check_actuated(model)
    require_regular(model, neutral(model), "tracking")


def _positive_option(option: str, value: float) -> None:
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"{option} must be a positive number, got {value}")


def _check_run_length(model: Model, duration: float, rate: float, runs: int) -> None:
    """`InputError`, before anything is planned or simulated, when `runs` closed-loop runs of
    `duration` seconds at `rate` Hz would log more than this machine's memory holds (each
    step's state, reference and torques, in float64)."""
    steps = duration * rate
    needed = runs * steps * 8 * (2 * model.nq + 5 * model.nv + 1)
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if needed > memory:
        raise InputError(
            f"--duration {duration:g} s at {rate:g} Hz is {steps:.3g} control steps, whose logs "
            f"({needed / 2**30:.3g} GiB) exceed this machine's memory ({memory / 2**30:.3g} GiB)"
        )


# collect and train


def _collect(args: argparse.Namespace) -> int:
    from invdyn.learn.data import check_target, write_collection
    from invdyn.sim.collect import MIN_STEPS, collect_gym, collect_robot

    # an occupied --out is refused before the simulation, not after it
    check_target(Path(args.out), overwrite=args.overwrite)
    gym = _is_gym_id(args.source)
    what = "a Gymnasium environment" if gym else "an invdyn robot"
    _refuse_options(args, _ROBOT_OPTIONS if gym else _GYM_OPTIONS, what)
    for option, given in (("--size", args.size is not None), ("--meshes", args.meshes)):
        if given and not args.camera:
            raise InputError(f"{option} applies to rendered frames: pass --camera too")
    for name, value in COLLECT_DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    check_count("--episodes", args.episodes)
    for option in ("--duration", "--rate"):
        _positive_option(option, getattr(args, option[2:]))
    progress = not args.no_progress
    size = _frame_size(args.size)
    robot = None if gym else _load(args.source, floating_base=False)
    if robot is not None and _load(args.source).floating_base:
        warn(f"{robot.name}: its floating base is fixed to the world (collect drives fixed-base "
             "robots); the state is the joints' alone")  # fmt: skip
    scene = None
    # rendered shards are kept here until the dataset is written: a killed run that is
    # started again renders only the rest
    out = Path(args.out).absolute()
    cache = out.with_name(out.name + ".rendered")
    if args.camera:
        # the cameras and the cache checked before the collection, not after
        from invdyn.learn.data import check_camera
        from invdyn.sim.render import camera_ids, robot_scene, scene_for

        if robot is None:
            scene = scene_for(f"gym:{args.source}")
        else:
            scene = robot_scene(robot, meshes=args.meshes)
        camera_ids(scene, args.camera)
        for camera in args.camera:
            check_camera(camera)
        if cache.exists() and not cache.is_dir():
            raise InputError(f"{cache} is a file; collect keeps the rendered episodes there")
    if robot is None:
        if args.steps is not None and args.steps < MIN_STEPS:
            raise InputError(f"--steps must be an integer >= {MIN_STEPS}, got {args.steps}")
        collection = collect_gym(
            args.source,
            episodes=args.episodes,
            steps_per_episode=args.steps,
            policy=args.policy,
            seed=args.seed,
            workers=args.workers,
            progress=progress,
        )
    else:
        collection = collect_robot(
            robot,
            episodes=args.episodes,
            duration=args.duration,
            control_rate=args.rate,
            seed=args.seed,
            plant=_plant(args, robot),
            workers=args.workers,
            progress=progress,
        )
    if scene is None:
        path = write_collection(collection, args.out, overwrite=args.overwrite)
    else:
        path = _write_rendered(args, collection, (scene, size), cache)
    lengths = [len(episode) for episode in collection.episodes]
    summary = _dataset_summary(
        lengths, collection.fps, collection.state_names, collection.action_names
    )
    print(f"{collection.source}: {summary}")
    limit = collection.metadata.get("max_episode_steps") if robot is None else None
    ended = sum(length - 1 < limit for length in lengths) if limit else 0
    if ended:
        redrawn = collection.metadata["discarded"]
        again = f"; {redrawn} shorter than {MIN_STEPS} steps were drawn again" if redrawn else ""
        print(
            f"{ended} of {len(lengths)} episodes ended before {limit} steps: the environment "
            f"terminated them{again}"
        )
    print(f"wrote {path}")
    return 0


def _write_rendered(
    args: argparse.Namespace, collection: Any, view: tuple[Any, tuple[int, int]], cache: Path
) -> Path:
    """Write `collection` with its episodes rendered as they are written, in the scene and
    at the (width, height) of `view`, each shard kept in `cache` until the dataset is
    written."""
    from invdyn.learn.data import stream_videos, write_collection
    from invdyn.sim.render import cached_shards, remove_cache, render_collection

    earlier = cached_shards(cache)
    if earlier:
        print(
            f"{cache} holds {earlier} shards rendered by an earlier run: those of the same "
            "episodes, cameras and size are reused"
        )
    scene, (width, height) = view
    rendered = render_collection(
        collection,
        cameras=args.camera,
        width=width,
        height=height,
        scene=scene,
        workers=args.workers,
        progress=not args.no_progress,
        cache=cache,
    )
    videos = stream_videos(rendered, len(collection.episodes))
    try:
        path = write_collection(collection, args.out, overwrite=args.overwrite, videos=videos)
    except BaseException:
        if cached_shards(cache):
            print(
                f"invdyn: the episodes rendered so far stay in {cache}; the same command, "
                "run again, reuses them",
                file=sys.stderr,
            )
        raise
    remove_cache(cache)
    return path


def _refuse_options(args: argparse.Namespace, names: Sequence[str], source: str) -> None:
    """`InputError` naming the options of `names` that were given (not None, False or 0)
    for a source they do not apply to, `source` saying what it is ("an invdyn robot")."""
    given = ["--" + name.replace("_", "-") for name in names if getattr(args, name)]
    if given:
        what = "not an option" if len(given) == 1 else "not options"
        raise InputError(f"{', '.join(given)}: {what} of {source} ({args.source})")


def _frame_size(text: str) -> tuple[int, int]:
    """``--size WxH`` as (width, height), even and positive."""
    from invdyn.learn.video import check_size

    width, _, height = text.lower().partition("x")
    if not (width.isdigit() and height.isdigit()):
        raise InputError(f"--size must be WIDTHxHEIGHT in pixels, such as 64x64, got {text!r}")
    return check_size((int(width), int(height)))


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
    summary = _dataset_summary([len(e) for e in episodes], fps, state_names, action_names)
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
        size=None if args.size is None else _frame_size(args.size),
        overwrite=args.overwrite,
        progress=not args.no_progress,
    )
    dataset = read_dataset(path)
    (key, (height, width, _)), *_ = dataset.info.videos.items()
    summary = _dataset_summary([len(e) for e in dataset], dataset.info.fps, (), None)
    print(f"{args.source}: {summary}, {key} {width}x{height}")
    print(f"wrote {path}")
    return 0


def _dataset_summary(
    lengths: Sequence[int],
    fps: float,
    state_names: Sequence[str],
    action_names: Sequence[str] | None,
) -> str:
    """``N episodes, M frames at F fps, state S, action A`` of a dataset written."""
    count, frames = len(lengths), sum(lengths)
    action = "no action" if action_names is None else f"action {len(action_names)}"
    return (
        f"{count} episode{'' if count == 1 else 's'}, {frames} frame{'' if frames == 1 else 's'} "
        f"at {fps:g} fps, state {len(state_names)}, {action}"
    )


def _imported_episodes(kind: str, args: argparse.Namespace) -> tuple[Imported, float]:
    """The episodes of `invdyn import`'s SOURCE read as `kind`, with their entries' names,
    and their frame rate."""
    from invdyn.learn.data import read_minari, read_robomimic

    if kind == "robomimic":
        fps = ROBOMIMIC_FPS if args.fps is None else args.fps
        obs_keys = None if args.obs_keys is None else _names("--obs-keys", args.obs_keys)
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

    groups = {"--obs-keys": _names("--obs-keys", args.obs_keys)}
    if args.action_keys is not None:
        groups["--action-keys"] = _names("--action-keys", args.action_keys)
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


def _train(args: argparse.Namespace) -> int:
    from invdyn.learn import distributed
    from invdyn.learn.checkpoint import resolve_device
    from invdyn.learn.data import read_dataset
    from invdyn.learn.train import train

    _output_directory(args.out)
    dataset = read_dataset(args.dataset)
    config = _train_config(args, dataset)
    device = resolve_device(config.train.device)
    # a process of torchrun's joins its group; `--nproc N` starts N such processes
    if not distributed.join(device) and args.nproc != 1:
        distributed.check_gpus(args.nproc, device)
        os.environ[_LAUNCHED] = "1"
        return distributed.launch(args.nproc, _train_argv(args))
    rank = distributed.rank()
    try:
        result = train(
            dataset,
            config,
            args.out,
            progress=not args.no_progress,
            resume=not args.restart,
            callback=_epoch_printer(config.train.epochs) if args.no_progress else None,
        )
    finally:
        distributed.leave()
    if rank != 0:
        return 0
    epochs, resumed = config.train.epochs, result.resumed_from
    if resumed == epochs:
        print(f"{result.checkpoint}: the run had done its {epochs} epochs; nothing to train "
              "(--restart trains it afresh)")  # fmt: skip
    elif resumed is not None:
        print(f"trained epochs {resumed + 1}-{epochs}, resumed from epoch {resumed}")
    rows = [[key, f"{value:.4f}"] for key, value in result.metrics.items() if "/" not in key]
    if rows:
        print(f"validation ({len(result.val_episodes)} episodes):")
        _print_table(["metric", "value"], rows)
    if resumed != epochs:
        print(f"wrote {result.checkpoint}")
        _remove_stale_evaluation(result.checkpoint)
    return 0


def _remove_stale_evaluation(checkpoint: Path) -> None:
    """Remove what `evaluate` wrote by default of a checkpoint that training has since
    replaced, which would pass for its scores."""
    from invdyn.learn.evaluate import METRICS_FILE, PREDICTIONS_FILE

    evaluation = _evaluation_dir(checkpoint)
    if remove_stale(evaluation, (METRICS_FILE, PREDICTIONS_FILE)):
        print(f"removed {evaluation}: the scores of the checkpoint this run replaced")


def _epoch_printer(epochs: int) -> Callable[[int, Mapping[str, float]], None]:
    """A training callback that prints each epoch's history entry on a line, for logs, after a
    line that says where a resumed run started."""
    start = time.monotonic()
    first = True

    def print_epoch(epoch: int, entry: Mapping[str, float]) -> None:
        nonlocal first
        if first and epoch > 1:
            print(f"resuming from epoch {epoch - 1}", flush=True)
        first = False
        values = "  ".join(f"{k} {v:.4g}" for k, v in entry.items() if k != "epoch")
        minutes = (time.monotonic() - start) / 60
        print(f"epoch {epoch}/{epochs}  {values}  ({minutes:.1f} min)", flush=True)

    return print_epoch


def _train_argv(args: argparse.Namespace) -> list[str]:
    """The ``train`` command line of each process of a ``--nproc`` run."""
    argv = ["train", str(args.dataset), "--out", str(args.out), "--preset", args.preset]
    argv += [option for setting in args.set for option in ("--set", setting)]
    return argv + [
        flag for flag in ("--restart", "--no-progress") if getattr(args, flag[2:].replace("-", "_"))
    ]


def _train_config(args: argparse.Namespace, dataset: Any) -> Any:
    """The `invdyn.learn.config.Config` of --preset and --set, for `dataset`."""
    from invdyn.learn.config import preset

    given = [item for item in args.set if item.partition("=")[0].strip() == "dataset"]
    if given:
        raise InputError(
            f"--set {given[0]}: the dataset is the command's first argument, not a setting"
        )
    return preset(args.preset or "default").with_overrides([*args.set, f"dataset={dataset.path}"])


def _wbc(args: argparse.Namespace) -> int:
    from invdyn.experiments.balance import Scenario, run_balance
    from invdyn.viz.plots import plot_balance, save_figure

    _output_directory(args.out)
    options = {"amplitude": ("sway", "squat"), "push": ("push",)}
    given: dict[str, Any] = {
        name: getattr(args, name) for name in options if getattr(args, name) is not None
    }
    for name in given:
        if args.scenario not in options[name]:
            raise InputError(
                f"--{name} sets {' and '.join(options[name])}, not {args.scenario}: "
                f"pass --scenario {options[name][0]}"
            )
    _positive_option("--duration", args.duration)
    if args.amplitude is not None:
        _positive_option("--amplitude", args.amplitude)
    if args.push is not None and not math.isfinite(args.push):
        raise InputError(f"--push must be a finite force, got {args.push}")
    if args.sole is not None:
        given["sole"] = _numbers("--sole", args.sole, 5)
    model = _legged_robot(args.robot)
    if names_a_file(args.robot) and Path(args.robot).suffix.lower() == ".xml":
        print(
            f"the plant is MuJoCo built from the model of {args.robot}, with spheres for feet "
            "on a ground: what the model leaves out of the file is not simulated"
        )
    scenario = Scenario(
        name=args.scenario,
        duration=args.duration,
        feet=None if args.feet is None else _names("--feet", args.feet),
        soles=None if args.soles is None else _names("--soles", args.soles),
        pose=None if args.pose is None else _pose(args.pose),
        **given,
    )
    simulating = f"simulating {model.name}: {scenario.name} for {scenario.duration:g} s"
    with announced(simulating, when=args.no_progress):
        run = run_balance(model, scenario, progress=not args.no_progress)
    summary = run.summary()
    ended, outcome = "", "fell" if run.fell else "stood"
    if run.fell_at is not None:
        ended = f" (lost its balance at {run.fell_at:.3f} s, where the run and its measures end)"
    elif run.unsolved is not None:
        ended, outcome = " (stopped early: its QP had no solution)", "stopped"
    torque = (
        "no torque limits"
        if math.isnan(run.torque_margin)
        else f"torque margin {_margin(100 * run.torque_margin)} % of the limit"
    )
    standing = [foot for foot in run.feet if foot != run.lifted]
    raised = "" if run.lifted is None else f" {run.lifted} by {100 * scenario.lift_height:g} cm"
    print(
        f"{model.name}, {args.scenario}{raised} for {args.duration:g} s{ended} on "
        f"{', '.join(standing)}: "
        f"centre of mass error {1000 * run.com_rms:.2f} mm RMS, "
        f"{1000 * summary['com_max_error_m']:.2f} mm max; friction cone margin "
        f"{_margin(run.cone_margin)} N, {torque}; {outcome}"
    )
    figure = plot_balance(run, f"{model.name}: {args.scenario}")
    for path in (
        save_figure(figure, args.out / "wbc.png"),
        write_json(args.out / "report.json", summary),
    ):
        print(f"wrote {path}")
    if run.unsolved is not None:
        print(f"invdyn: error: {run.unsolved}; the run stopped there", file=sys.stderr)
        return 2
    return 1 if run.fell else 0


def _legged_robot(robot: str) -> Model:
    """The robot `invdyn wbc` balances: as described where it floats (a built-in legged robot,
    a file with a free joint of its own), else a file's root link on a free flyer; `InputError`
    for a built-in robot that stands fixed (an arm, a hand)."""
    model = _load(robot)
    if model.floating_base:
        return model
    if not names_a_file(robot):
        raise InputError(
            f"{robot} is a fixed-base robot; whole-body control balances a legged robot on a "
            f"floating base (run 'invdyn robots' for them; 'invdyn track {robot}' controls it)"
        )
    from invdyn.io import is_mjcf

    if is_mjcf(robot):
        # an MJCF file declares its free joints itself; none is added
        raise InputError(
            f"{robot}: no free joint at its root, and whole-body control balances a robot on a "
            "floating base (add <freejoint/> to its root body)"
        )
    return _load(robot, floating_base=True)


def _evaluate(args: argparse.Namespace) -> int:
    from invdyn.learn.evaluate import evaluate_checkpoint, save_evaluation
    from invdyn.learn.keys import IDENTIFICATION

    _output_directory(args.out)
    if (Path(args.checkpoint) / IDENTIFICATION).is_file():
        return _evaluate_identification(args)
    checkpoint = _checkpoint_dir(args.checkpoint)
    report = evaluate_checkpoint(checkpoint, args.dataset)
    # written before anything is printed, so that a reader that stops early loses nothing
    out = args.out if args.out is not None else _evaluation_dir(checkpoint)
    written = save_evaluation(report, out)
    written += _write_json_option(args, report.to_dict())
    print(f"{report.n_windows} windows of {len(report.episodes)} episodes ({report.selection})")
    predictors = {"model": report.model, "linear": report.linear, "oracle": report.oracle}
    header = ["action"] + [f"{name} R^2" for name, m in predictors.items() if m is not None]
    rows = [
        [action] + [f"{m.r2[k]:.4f}" for m in predictors.values() if m is not None]
        for k, action in enumerate(report.action_names)
    ]
    rows.append(["mean"] + [f"{m.r2_mean:.4f}" for m in predictors.values() if m is not None])
    _print_table(header, rows)
    estimate = report.state_estimate
    if estimate is not None:
        print("the model's estimate of the next state o_{t+H}, from its frames:")
        rows = [
            [name, f"{r2:.4f}"] for name, r2 in zip(report.state_names, estimate.r2, strict=True)
        ]
        _print_table(["state", "R^2"], [*rows, ["mean", f"{estimate.r2_mean:.4f}"]])
    print(f"linear: {report.linear_note}")
    print(f"oracle: {report.oracle_note}")
    for path in written:
        print(f"wrote {path}")
    return 0


def _label(args: argparse.Namespace) -> int:
    from invdyn.learn.data import INFO_PATH
    from invdyn.learn.label import label_dataset, label_videos
    from invdyn.learn.video import IMAGE_SUFFIXES, VIDEO_SUFFIXES, holds_sources

    checkpoint = _checkpoint_dir(args.checkpoint)
    options = {
        "progress": not args.no_progress,
        "overwrite": args.overwrite,
        "workers": args.workers,
        "address": args.address,
        "batch_size": args.batch_size,
    }
    data = Path(args.dataset)
    if not data.exists():
        raise InputError(f"{data}: no such file or directory")
    if (data / INFO_PATH).is_file():
        if args.size is not None:
            raise InputError("--size is for plain videos; DATA is a dataset")
        path = label_dataset(checkpoint, args.dataset, args.out, replace=args.replace, **options)
    else:
        if (data / "meta").is_dir():
            raise InputError(f"{data} has meta/ but no {INFO_PATH}: not a readable dataset")
        if not holds_sources(data):
            raise InputError(
                f"{data} is neither a dataset (the folder of {INFO_PATH}), a video file "
                f"({', '.join(VIDEO_SUFFIXES)}) nor a folder holding video files or folders of "
                f"images ({', '.join(IMAGE_SUFFIXES)})"
            )
        if args.replace:
            raise InputError("--replace is for datasets; plain videos have no actions")
        size = None if args.size is None else _frame_size(args.size)
        path = label_videos(checkpoint, args.dataset, args.out, size=size, **options)
    print(f"wrote {path}")
    return 0


def _follow(args: argparse.Namespace) -> int:
    from invdyn.learn.follow import follow

    plant = None
    mass_scale = _mass_scale(args.mass_error)
    if args.payload is not None or mass_scale != 1.0 or args.damping != 0.0:
        from invdyn.kinematics import end_effector
        from invdyn.learn.data import read_info
        from invdyn.learn.follow import recording_plant
        from invdyn.sim.collect import load_robot_source

        source = read_info(args.dataset).source
        robot_source = source.startswith("invdyn:")
        # an invdyn robot's options replace those of the plant it was recorded on
        options: dict[str, Any] = {"mass_scale": mass_scale, "damping": args.damping}
        if args.payload is not None:
            if not robot_source:
                raise InputError(f"--payload needs a dataset of an invdyn robot, not {source!r}")
            robot = load_robot_source(source)
            options.update(payload=args.payload, payload_frame=end_effector(robot))
        plant = _options_plant(recording_plant(args.dataset) if robot_source else None, **options)
    checkpoint = _checkpoint_dir(args.checkpoint)
    gain = {} if args.position_gain is None else {"position_gain": args.position_gain}
    if _sees_frames(checkpoint):
        return _follow_frames(args, checkpoint, plant, gain)
    if args.recorded_goals:
        raise InputError("--recorded-goals is for models of frames")
    result = follow(
        checkpoint, args.dataset, episode=args.episode, seconds=args.seconds, plant=plant, **gain
    )
    print(f"{result.source}, episode {result.episode}: {result.steps} steps")
    final, mean = result.final_errors, result.mean_errors
    _print_table(
        ["run", "final state error", "mean state error"],
        [[run, f"{final[run]:.4g}", f"{mean[run]:.4g}"] for run in final],
    )
    print(f"state error: {STATE_ERROR}")
    print(f"oracle: {result.oracle_note}")
    for path in _write_json_option(args, result.to_dict()):
        print(f"wrote {path}")
    return 0


def _sees_frames(checkpoint: Path) -> bool:
    """Whether the checkpoint's model sees camera frames."""
    from invdyn.learn.checkpoint import load_checkpoint

    return bool(load_checkpoint(checkpoint).model.config.camera_names)


def _follow_frames(
    args: argparse.Namespace, checkpoint: Path, plant: Any, gain: dict[str, float]
) -> int:
    from invdyn.learn.goals import follow_frames

    result = follow_frames(
        checkpoint,
        args.dataset,
        episode=args.episode,
        seconds=args.seconds,
        plant=plant,
        replan=not args.recorded_goals,
        **gain,
    )
    goals = "recorded" if args.recorded_goals else "replanned"
    print(f"{result.source}, episode {result.episode}: {result.steps} steps, {goals} goal frames")
    final = result.final_errors
    _print_table(
        ["run", "final body error (m)", "largest body error (m)"],
        [[run, f"{final[run]:.4g}", f"{result.errors[run].max():.4g}"] for run in final],
    )
    for path in _write_json_option(args, result.to_dict()):
        print(f"wrote {path}")
    return 0


def _add_plant_arguments(parser: argparse.ArgumentParser, *, prefix: str = "") -> None:
    """Options of the simulated plant that the robot's model does not know."""
    parser.add_argument(
        "--payload",
        metavar="KG",
        type=float,
        default=0.0,
        help=f"{prefix}unmodelled point mass at the origin of the --payload-frame (default: 0)",
    )
    parser.add_argument(
        "--payload-frame",
        metavar="NAME",
        help=f"{prefix}frame or body at whose origin the payload sits (default: the body at "
        "the end of the longest chain of turning joints, above any fingers; a frame such as "
        "a tool tip puts it further out)",
    )
    parser.add_argument(
        "--mass-error",
        metavar="E",
        type=float,
        default=0.0,
        help=f"{prefix}the plant's link masses and inertias are (1 + E) times the model's "
        "(default: 0)",
    )
    parser.add_argument(
        "--damping",
        metavar="NMS",
        type=float,
        default=0.0,
        help=f"{prefix}unmodelled viscous friction on every joint, N m s/rad, added to an "
        "MJCF file's own (default: 0)",
    )
    parser.add_argument(
        "--friction",
        metavar="NM",
        type=float,
        default=0.0,
        help=f"{prefix}unmodelled Coulomb friction on every joint, N m, added to an MJCF "
        "file's own (default: 0)",
    )
    parser.add_argument(
        "--sensor-noise",
        metavar="STD",
        type=float,
        default=0.0,
        help=f"{prefix}standard deviation of the noise on measured positions (rad) and "
        "velocities (rad/s) (default: 0)",
    )
    parser.add_argument(
        "--timestep",
        metavar="S",
        type=float,
        default=None,
        help=f"{prefix}MuJoCo's physics time step, of which the control period must be a "
        f"whole number (default: {Plant.timestep:g} s, an MJCF file's own <option> "
        "included)",
    )


def _plant(args: argparse.Namespace, model: Model) -> Any:
    """The `invdyn.sim.Plant` of the plant options."""
    from invdyn.kinematics import end_effector

    if args.payload_frame is not None and not args.payload:
        raise InputError("--payload-frame places the --payload: give a mass too")
    plant = _options_plant(
        payload=args.payload,
        payload_frame=args.payload_frame or (end_effector(model) if args.payload else None),
        mass_scale=_mass_scale(args.mass_error),
        damping=args.damping,
        friction=args.friction,
        sensor_noise=args.sensor_noise,
        **({} if args.timestep is None else {"timestep": args.timestep}),
    )
    if plant.payload:
        _warn_of_a_payload_that_cannot_move(model, plant, "--payload-frame")
    return plant


def _warn_of_a_payload_that_cannot_move(model: Model, plant: Plant, placed_by: str) -> None:
    """A warning when the payload's point lies on the axes of every joint that moves it (at
    random configurations): a point mass there takes no force from them, nor gives any; the
    advice names what places it elsewhere (`placed_by`)."""
    from invdyn.configuration import random_configuration
    from invdyn.kinematics import point_jacobian
    from invdyn.sim.plant import payload_point

    body, point = payload_point(model, plant)
    for q in random_configuration(model, rng=0, shape=3):
        if np.abs(point_jacobian(model, q, body, point)[3:]).max() > PAYLOAD_LEVER:
            return
    warn(
        f"the payload at {plant.payload_frame} lies on the axes of the joints that move it: "
        f"it changes no joint's torque; {placed_by} places it off them (frames of "
        f"{model.name}: {', '.join(model.frame_name)})"
    )


def _options_plant(base: Plant | None = None, /, **fields: Any) -> Any:
    """``invdyn.sim.Plant(**fields)`` of command-line options, or `base` with them replaced,
    its errors naming the option (``--payload``) rather than the field (``Plant.payload``)."""

    try:
        return Plant(**fields) if base is None else dataclasses.replace(base, **fields)
    except InputError as error:
        message = str(error)
        for field in fields:
            message = message.replace(f"Plant.{field} ", f"--{field.replace('_', '-')} ")
        raise InputError(message) from None


def _ident(args: argparse.Namespace) -> int:
    from invdyn.ident.run import identify_dataset, identify_table, write_results
    from invdyn.ident.signals import Filter
    from invdyn.learn.data import read_dataset

    _output_directory(args.out)
    table = Path(args.dataset).is_file()
    if table and Path(args.dataset).suffix.lower() not in TABLE_SUFFIXES:
        raise InputError(
            f"{args.dataset}: neither a dataset directory nor a table ({', '.join(TABLE_SUFFIXES)})"
        )
    if table and args.robot is None:
        raise InputError(f"{args.dataset} is a table: pass --robot")
    if table and (args.cutoff is not None or args.learn):
        raise InputError(
            f"{args.dataset} is a table, whose accelerations are taken as they are: "
            f"{'--cutoff' if args.cutoff is not None else '--learn'} needs a dataset of episodes"
        )
    if not args.learn and (args.preset is not None or args.set or args.restart):
        raise InputError("--preset, --set and --restart are about the networks of --learn")
    dataset = None if table else read_dataset(args.dataset)
    model = _ident_robot(args.robot, dataset)
    options: dict[str, Any] = {
        "method": args.method,
        "offset": args.offset,
        "held_out": args.held_out,
    }
    # the networks' configuration, checked before identifying
    config = _train_config(args, dataset) if args.learn else None
    if dataset is None:
        found = identify_table(args.dataset, model, **options)
    else:
        filtering = Filter(cutoff=_cutoff(args.cutoff))
        found = identify_dataset(dataset, model, filtering=filtering, **options)
    if config is not None:
        from invdyn.ident.hybrid import compare

        learned = compare(
            model,
            found.identification,
            found.train,
            found.held_out,
            config,
            Path(args.out) / "networks",
            progress=not args.no_progress,
            resume=not args.restart,
        )
        found = dataclasses.replace(found, learned=learned)
    print(
        f"{model.name}: {len(found.identification.base)} base parameters, {args.method}, "
        f"identified on {found.train_part}, held out {found.held_out_part}"
    )
    if found.learned:
        print(
            "all on the held-out samples that the networks' windows cover (report.json: "
            "held_out_nmse_all; held_out_nmse scores nominal and identified on every one)"
        )
    _print_errors(
        model, found.learned or {"nominal": found.nominal_nmse, "identified": found.identified_nmse}
    )
    for path in write_results(found, model, args.out):
        print(f"wrote {path}")
    return 0


def _ident_robot(name: str | None, dataset: Any) -> Model:
    """The robot of ``invdyn ident``: --robot, else the dataset's source; a --robot other than
    the dataset's source is warned of."""
    from invdyn.sim.collect import load_robot_source

    source = "" if dataset is None else dataset.info.source
    if name is None:
        if not source.startswith("invdyn:"):
            raise InputError(
                f"{dataset.path}: its source is {source!r}, not an invdyn robot; pass --robot"
            )
        try:
            return load_robot_source(source)
        except InputError as error:
            raise InputError(
                f"{error}; pass --robot to name the robot it was recorded on"
            ) from None
    model = _load(name, floating_base=False)
    _warn_if_recorded_on_another(dataset, model, "identified as {} (--robot)")
    return model


def _warn_if_recorded_on_another(dataset: Any, model: Model, use: str) -> None:
    """Warn when `dataset` says it was recorded on a robot other than `model`; `use` says what
    is done with it, "{}" standing for the model's name."""
    from invdyn.sim.collect import robot_source

    source = "" if dataset is None else dataset.info.source
    if source.startswith("invdyn:") and robot_source(model) != source:
        warn(
            f"{dataset.path} was recorded on {source.removeprefix('invdyn:')}, and is "
            f"{use.format(model.name)}"
        )


def _cutoff(text: str | None) -> float | None:
    """The filter's cut-off in Hz of ``--cutoff`` (default 10; None for 'none')."""
    from invdyn.ident.signals import Filter

    if text is None:
        return Filter().cutoff
    if text.lower() == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise InputError(f"--cutoff must be a number or 'none', got {text!r}") from None


def _evaluate_identification(args: argparse.Namespace) -> int:
    from invdyn.ident.run import (
        EVALUATION,
        EVALUATION_FILES,
        evaluate_identification,
        read_report,
    )
    from invdyn.learn.data import read_dataset
    from invdyn.viz.plots import plot_error_bars, save_figure

    directory = Path(args.checkpoint)
    model = _load(read_report(directory)["source"], floating_base=False)
    dataset = read_dataset(args.dataset)
    _warn_if_recorded_on_another(dataset, model, "scored as {}, the identified robot")
    found = evaluate_identification(directory, dataset, model)
    errors = found.nmse
    held_out = "" if found.selection == "all" else " held-out"
    print(
        f"{model.name}: torque nMSE on the {len(found.episodes)}{held_out} episodes of "
        f"{len(dataset)} in {args.dataset}"
    )
    _print_errors(model, errors)
    out = args.out if args.out is not None else directory / EVALUATION
    joints = model.dof_names
    scores = {
        "identification": str(directory.absolute()),
        "dataset": str(Path(args.dataset).absolute()),
        "episodes": list(found.episodes),
        "selection": found.selection,
        "nmse": {
            name: dict(zip(joints, map(float, values), strict=True))
            for name, values in errors.items()
        },
    }
    bars = plot_error_bars(
        list(joints), errors, title=f"{model.name}: torque error, {args.dataset}"
    )
    report, figure = (out / name for name in EVALUATION_FILES)
    written = [write_json(report, scores), save_figure(bars, figure)]
    written += _write_json_option(args, scores)
    for path in written:
        print(f"wrote {path}")
    return 0


def _print_errors(model: Model, errors: dict[str, Any]) -> None:
    """A table of each joint's nMSE (rows) for each predictor (columns)."""
    rows = [
        [joint, *(f"{errors[name][k]:.3g}" for name in errors)]
        for k, joint in enumerate(model.dof_names)
    ]
    _print_table(["joint", *(f"nMSE {name}" for name in errors)], rows)


def _mass_scale(mass_error: float) -> float:
    """The plant's `Plant.mass_scale` for ``--mass-error``, checked."""
    if not (math.isfinite(mass_error) and mass_error > -1.0):
        raise InputError(f"--mass-error must be a number above -1, got {mass_error}")
    return 1.0 + mass_error


def _checkpoint_dir(path: str) -> Path:
    """A checkpoint directory, or the one inside a run directory of `invdyn train`."""
    from invdyn.learn.checkpoint import checkpoint_in

    return checkpoint_in(path)


def _evaluation_dir(checkpoint: Path) -> Path:
    """Where `evaluate` writes by default: beside a run's checkpoint (``<run>/evaluation``),
    which training replaces whole when it saves, else inside the checkpoint directory."""
    from invdyn.learn.checkpoint import RUN_CHECKPOINT

    inside = checkpoint.name == RUN_CHECKPOINT
    return checkpoint.parent / "evaluation" if inside else checkpoint / "evaluation"


def _is_gym_id(source: str) -> bool:
    """Whether `source` names a Gymnasium environment (``Name-vN``) rather than a robot."""
    stem, _, version = source.rpartition("-v")
    return bool(stem) and version.isdigit() and not Path(source).suffix


# info


def _info(args: argparse.Namespace) -> int:
    model = _load(args.robot, floating_base=args.floating_base)
    base = "floating base" if model.floating_base else "fixed base"
    print(f"{model.name} ({model.source or args.robot})")
    print(
        f"nq {model.nq}, nv {model.nv}, nbody {model.nbody}, frames {len(model.frame_name)}, "
        f"{base}, gravity {_vector(model.gravity)} m/s^2"
    )

    print("\nkinematic tree (body [joint, type])")
    print("  world")
    depth = np.zeros(model.nbody, dtype=np.int64)
    for i in range(model.nbody):
        parent = int(model.body_parent[i])
        depth[i] = 0 if parent < 0 else depth[parent] + 1
        joint = f"{model.jnt_name[i]}, {_TYPE_NAMES[JointType(model.jnt_type[i])]}"
        print(f"  {'  ' * (depth[i] + 1)}{model.body_name[i]} [{joint}]")

    print("\njoints")
    rows = []
    for i in range(model.nbody):
        jtype = JointType(model.jnt_type[i])
        qs, vs, nv = model.jnt_qadr[i], model.jnt_vadr[i], model.jnt_nv[i]
        unit = "m" if jtype == JointType.PRISMATIC else "rad"
        if jtype in (JointType.REVOLUTE, JointType.PRISMATIC):
            position = f"[{model.q_lower[qs]:g}, {model.q_upper[qs]:g}] {unit}"
        elif jtype == JointType.CONTINUOUS:
            position = "unbounded"
        else:
            position = "-"
        rows.append(
            [
                model.jnt_name[i],
                _TYPE_NAMES[jtype],
                position,
                _limits(model.dof_velocity_limit[vs : vs + nv]),
                _limits(model.dof_effort_limit[vs : vs + nv])
                if model.dof_actuated[vs : vs + nv].any()
                else "passive",
            ]
        )
    _print_table(
        ["joint", "type", "position", "velocity [rad/s or m/s]", "effort [N m or N]"], rows
    )

    print("\nmasses")
    rows = [[n, f"{m:.4f}"] for n, m in zip(model.body_name, model.body_mass, strict=True)]
    rows.append(["total", f"{model.total_mass:.4f}"])
    _print_table(["body", "mass [kg]"], rows)
    return 0


def _limits(values: Array) -> str:
    """One limit, or one per coordinate, '-' where unknown: infinite, or zero or below as a
    URDF leaves an unset limit (and as the controllers read it)."""
    shown = ["-" if not (np.isfinite(x) and x > 0) else f"{x:g}" for x in values]
    return shown[0] if len(set(shown)) == 1 else ", ".join(shown)


def _vector(values: Array) -> str:
    return "(" + ", ".join(f"{x:g}" for x in values) + ")"


# robots


def _robots(args: argparse.Namespace) -> int:
    del args
    registry = robots.available_robots()
    rows, installed = [], 0
    for name, info in registry.items():
        present = robots.is_installed(name)
        installed += present
        base = "floating" if info.floating_base else "fixed"
        rows.append([name, "yes" if present else "no", base, info.description])
    _print_table(["name", "available", "base", "description"], rows)
    data = robots.example_robot_data_dir()
    where = f"installed at {data}" if data else "not installed (pip install example-robot-data)"
    print(f"\n{installed} of {len(registry)} available; example-robot-data {where}")
    aliases = ", ".join(f"{alias} -> {name}" for alias, name in sorted(robots.ALIASES.items()))
    print(f"aliases: {aliases}")
    return 0


# helpers


def _load(name: str, *, floating_base: bool | None = None) -> Model:
    """`invdyn.io.load_simulated`, imported when a command loads a robot."""
    from invdyn.io import load_simulated

    return load_simulated(name, floating_base=floating_base)


def _print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Print left-aligned text columns, numbers right-aligned."""
    widths = [max(len(str(r[c])) for r in [header, *rows]) for c in range(len(header))]
    numeric = [all(_is_number(r[c]) for r in rows) for c in range(len(header))]
    for row in [header, *rows]:
        cells = [
            str(x).rjust(w) if num else str(x).ljust(w)
            for x, w, num in zip(row, widths, numeric, strict=True)
        ]
        print("  " + "  ".join(cells).rstrip())


def _is_number(text: str) -> bool:
    try:
        float(text.rstrip("%"))
    except ValueError:
        return text == "-"
    return True


def _describe(error: BaseException) -> str:
    """The message of a user error, without the errno noise of OSError."""
    if isinstance(error, OSError) and error.strerror:
        return f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    return str(error)


if __name__ == "__main__":
    raise SystemExit(main())
