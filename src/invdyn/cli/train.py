"""``invdyn train``: train an inverse dynamics model on a dataset (`invdyn.learn.runs`)."""

from __future__ import annotations

import argparse

from invdyn.cli.options import Commands, add_no_progress, add_out, add_settings, command, needs
from invdyn.cli.output import print_table


def add(commands: Commands) -> None:
    parser = command(
        commands,
        "train",
        run,
        extras=needs("learn"),
        uses_torch=lambda args: True,
        help="train an inverse dynamics model on a dataset",
        description="Train an inverse dynamics model on a LeRobot v3 dataset; the run "
        "directory holds the checkpoint and resumes where a killed run stopped. "
        "--set train.init=RUN starts from the model of another run (fine-tuning: on more "
        "episodes, on data of another instance of the robot).",
    )
    parser.add_argument("dataset", metavar="DATASET", help="LeRobot v3 dataset directory")
    add_out(parser, "run directory")
    parser.add_argument(
        "--preset", default="default", help="configuration preset: default or small"
    )
    add_settings(parser, "override a setting, e.g. --set model.horizon=2 --set train.epochs=50")
    parser.add_argument("--restart", action="store_true", help="start afresh, not resume")
    parser.add_argument(
        "--nproc",
        type=int,
        default=1,
        metavar="N",
        help="train in N processes with DistributedDataParallel (gloo on CPUs, nccl on GPUs)",
    )
    add_no_progress(
        parser, "no progress bar: a line per epoch instead (losses, learning rate, minutes)"
    )


def run(args: argparse.Namespace) -> int:
    from invdyn.learn.runs import TrainRunConfig, train_run

    config = TrainRunConfig(
        dataset=args.dataset,
        out=args.out,
        preset=args.preset,
        overrides=tuple(args.set),
        resume=not args.restart,
        progress=not args.no_progress,
        nproc=args.nproc,
    )
    trained = train_run(config, say=lambda line: print(line, flush=True))
    result = trained.result
    if result is None:
        return trained.status
    epochs, resumed = trained.config.train.epochs, result.resumed_from
    if not trained.trained:
        print(f"{result.checkpoint}: the run had done its {epochs} epochs; nothing to train "
              "(--restart trains it afresh)")  # fmt: skip
    elif resumed is not None:
        print(f"trained epochs {resumed + 1}-{epochs}, resumed from epoch {resumed}")
    rows = [[key, f"{value:.4f}"] for key, value in result.metrics.items() if "/" not in key]
    if rows:
        print(f"validation ({len(result.val_episodes)} episodes):")
        print_table(["metric", "value"], rows)
    if trained.trained:
        print(f"wrote {result.checkpoint}")
    if trained.stale_evaluation is not None:
        print(f"removed {trained.stale_evaluation}: the scores of the checkpoint this run replaced")
    return 0
