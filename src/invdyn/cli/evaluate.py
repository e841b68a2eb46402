"""``invdyn evaluate``: held-out accuracy of a trained model (`invdyn.learn.runs`), or of an
identification (`invdyn.ident.run.score_identification`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from invdyn._files import IDENTIFICATION
from invdyn.cli.options import Commands, add_json, add_optional_out, command, needs
from invdyn.cli.output import print_errors, print_table, write_json_option


def add(commands: Commands) -> None:
    parser = command(
        commands,
        "evaluate",
        run,
        extras=needs("learn"),
        uses_torch=lambda args: True,
        help="held-out accuracy of a trained model, against linear and physics baselines",
        description="Evaluate a checkpoint on a dataset's held-out episodes (its validation "
        "split when the dataset is the one it was trained on, else every episode): R^2, "
        "normalised MSE and MAE per action dimension for the model, a linear model and the "
        "physics oracle where the physics is known; writes metrics.json and a plot. Given the "
        "output directory of 'invdyn ident', scores on every episode of the dataset the "
        "torque nMSE per joint of the nominal and identified models (and of the learned and "
        "hybrid ones, after 'invdyn ident --learn'); writes report.json and nmse.png.",
    )
    parser.add_argument(
        "checkpoint",
        metavar="CHECKPOINT",
        help="run or checkpoint directory, or an output directory of 'invdyn ident'",
    )
    parser.add_argument("dataset", metavar="DATASET", help="LeRobot v3 dataset directory")
    add_optional_out(
        parser,
        "directory for the metrics and plots (default: <run>/evaluation, beside the "
        "run's checkpoint)",
    )
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    if (Path(args.checkpoint) / IDENTIFICATION).is_file():
        return _identification(args)
    from invdyn.learn.runs import EvaluateConfig, evaluate_run

    evaluation = evaluate_run(EvaluateConfig(args.checkpoint, args.dataset, out=args.out))
    report = evaluation.report
    # written before anything is printed, so that a reader that stops early loses nothing
    written = [*evaluation.written, *write_json_option(args, report.to_dict())]
    print(f"{report.n_windows} windows of {len(report.episodes)} episodes ({report.selection})")
    predictors = {"model": report.model, "linear": report.linear, "oracle": report.oracle}
    header = ["action"] + [f"{name} R^2" for name, m in predictors.items() if m is not None]
    rows = [
        [action] + [f"{m.r2[k]:.4f}" for m in predictors.values() if m is not None]
        for k, action in enumerate(report.action_names)
    ]
    rows.append(["mean"] + [f"{m.r2_mean:.4f}" for m in predictors.values() if m is not None])
    print_table(header, rows)
    estimate = report.state_estimate
    if estimate is not None:
        print("the model's estimate of the next state o_{t+H}, from its frames:")
        rows = [
            [name, f"{r2:.4f}"] for name, r2 in zip(report.state_names, estimate.r2, strict=True)
        ]
        print_table(["state", "R^2"], [*rows, ["mean", f"{estimate.r2_mean:.4f}"]])
    print(f"linear: {report.linear_note}")
    print(f"oracle: {report.oracle_note}")
    for path in written:
        print(f"wrote {path}")
    return 0


def _identification(args: argparse.Namespace) -> int:
    """`run` for the output directory of ``invdyn ident``."""
    from invdyn.ident.run import score_identification

    scored = score_identification(args.checkpoint, args.dataset, out=args.out)
    scores = scored.scores
    held_out = "" if scores.selection == "all" else " held-out"
    print(
        f"{scored.model.name}: torque nMSE on the {len(scores.episodes)}{held_out} episodes of "
        f"{scored.dataset_size} in {args.dataset}"
    )
    print_errors(scored.model, scores.nmse)
    for path in [*scored.written, *write_json_option(args, scored.report)]:
        print(f"wrote {path}")
    return 0
