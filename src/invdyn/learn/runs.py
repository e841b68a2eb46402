"""Run directories, as ``invdyn train`` and ``invdyn evaluate`` use them: a model trained on a
dataset on disk into ``<run>/checkpoint`` (`train_run`, resuming a killed run, in one process
or several), and its scores written beside it in ``<run>/evaluation`` (`evaluate_run`), which
a new checkpoint makes stale and `train_run` then removes.

Needs the ``learn`` extra (PyTorch).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Mapping
from pathlib import Path

from invdyn._files import EVALUATION, check_output_directory, remove_stale
from invdyn._parallel import LAUNCHED
from invdyn._waits import Say
from invdyn.errors import InputError
from invdyn.learn import distributed
from invdyn.learn.checkpoint import RUN_CHECKPOINT, checkpoint_in, resolve_device
from invdyn.learn.config import Config, preset
from invdyn.learn.datasets import Dataset, read_dataset
from invdyn.learn.evaluate import (
    METRICS_FILE,
    PREDICTIONS_FILE,
    EvaluationReport,
    evaluate_checkpoint,
    save_evaluation,
)
from invdyn.learn.train import Callback, TrainResult, train


@dataclasses.dataclass(frozen=True)
class TrainRunConfig:
    """A training run of ``invdyn train``.

    Attributes:
      dataset: the LeRobot v3 dataset's folder.
      out: the run directory: its checkpoint, and where a killed run resumes from.
      preset: the configuration preset (`invdyn.learn.config.PRESETS`).
      overrides: ``"section.field=value"`` settings over the preset
        (`invdyn.learn.config.Config.with_overrides`); not the dataset, which is `dataset`.
      resume: resume the run in `out`, if any; False starts afresh.
      progress: show a progress bar; without one, `train_run` says a line per epoch.
      nproc: train in this many processes on this machine (DistributedDataParallel).
    """

    dataset: str
    out: Path
    preset: str = "default"
    overrides: tuple[str, ...] = ()
    resume: bool = True
    progress: bool = True
    nproc: int = 1


@dataclasses.dataclass(frozen=True, eq=False)
class TrainRun:
    """What a training run did.

    Attributes:
      config: the model's and its training's configuration.
      result: the training's outcome; None in a process of a distributed run other than the
        first, and in the one that started `TrainRunConfig.nproc` processes.
      status: the exit status of the processes started (0 when they all succeeded); 0 where
        this process trained.
      stale_evaluation: the scores of the checkpoint this run replaced, removed; None when
        there were none.
    """

    config: Config
    result: TrainResult | None = None
    status: int = 0
    stale_evaluation: Path | None = None

    @property
    def trained(self) -> bool:
        """Whether the run trained epochs (not a finished run found as it was)."""
        return self.result is not None and self.result.resumed_from != self.config.train.epochs


def train_run(config: TrainRunConfig, *, say: Say | None = None) -> TrainRun:
    """Train a model on a dataset's episodes into a run directory (see the module docstring).

    In a process of torchrun's (``WORLD_SIZE`` set), the process joins its group and trains
    its share; with `TrainRunConfig.nproc` > 1 otherwise, this process starts that many such
    processes of ``invdyn train`` and waits for them.

    Args:
      config: the run.
      say: called, without a progress bar, with a line per epoch (its losses, learning rate
        and the minutes so far), after a line that says where a resumed run started; None
        says nothing.

    Returns:
      The run.

    Raises:
      InputError: an unusable output directory, dataset, configuration or device.
    """
    check_output_directory(config.out)
    dataset = read_dataset(config.dataset)
    settings = run_config(config.preset, config.overrides, dataset)
    device = resolve_device(settings.train.device)
    # a process of torchrun's joins its group; nproc N starts N such processes
    if not distributed.join(device) and config.nproc != 1:
        distributed.check_gpus(config.nproc, device)
        os.environ[LAUNCHED] = "1"
        return TrainRun(settings, status=distributed.launch(config.nproc, _argv(config)))
    rank = distributed.rank()
    try:
        result = train(
            dataset,
            settings,
            config.out,
            progress=config.progress,
            resume=config.resume,
            callback=None if config.progress or say is None else _epoch_lines(settings, say),
        )
    finally:
        distributed.leave()
    if rank != 0:
        return TrainRun(settings)
    run = TrainRun(settings, result)
    if not run.trained:
        return run
    evaluation = evaluation_dir(result.checkpoint)
    stale = remove_stale(evaluation, (METRICS_FILE, PREDICTIONS_FILE))
    return dataclasses.replace(run, stale_evaluation=evaluation if stale else None)


def _epoch_lines(config: Config, say: Say) -> Callback:
    """A training callback that says each epoch's history entry on a line, for logs, after a
    line that says where a resumed run started."""
    start = time.monotonic()
    first = True

    def say_epoch(epoch: int, entry: Mapping[str, float]) -> None:
        nonlocal first
        if first and epoch > 1:
            say(f"resuming from epoch {epoch - 1}")
        first = False
        values = "  ".join(f"{k} {v:.4g}" for k, v in entry.items() if k != "epoch")
        minutes = (time.monotonic() - start) / 60
        say(f"epoch {epoch}/{config.train.epochs}  {values}  ({minutes:.1f} min)")

    return say_epoch


def run_config(name: str, overrides: tuple[str, ...], dataset: Dataset) -> Config:
    """The `invdyn.learn.config.Config` of preset `name` with `overrides`, for `dataset`;
    `InputError` for an override of the dataset, which is the command's argument."""
    given = [item for item in overrides if item.partition("=")[0].strip() == "dataset"]
    if given:
        raise InputError(
            f"--set {given[0]}: the dataset is the command's first argument, not a setting"
        )
    return preset(name).with_overrides([*overrides, f"dataset={dataset.path}"])


def _argv(config: TrainRunConfig) -> list[str]:
    """The ``invdyn train`` command line of each process of an `nproc` run."""
    argv = ["train", str(config.dataset), "--out", str(config.out), "--preset", config.preset]
    argv += [option for setting in config.overrides for option in ("--set", setting)]
    return argv + ["--restart"] * (not config.resume) + ["--no-progress"] * (not config.progress)


@dataclasses.dataclass(frozen=True)
class EvaluateConfig:
    """An evaluation of ``invdyn evaluate``.

    Attributes:
      checkpoint: a run or checkpoint directory.
      dataset: the LeRobot v3 dataset's folder.
      out: folder for metrics.json and the plot; None for `evaluation_dir`.
    """

    checkpoint: str
    dataset: str
    out: Path | None = None


@dataclasses.dataclass(frozen=True, eq=False)
class Evaluation:
    """An evaluation written.

    Attributes:
      report: the scores.
      written: the files written.
    """

    report: EvaluationReport
    written: tuple[Path, ...]


def evaluate_run(config: EvaluateConfig) -> Evaluation:
    """Score a checkpoint on a dataset's held-out episodes and write the scores
    (`invdyn.learn.evaluate.evaluate_checkpoint`, `save_evaluation`).

    Raises:
      InputError: an unusable output directory, checkpoint or dataset.
    """
    check_output_directory(config.out)
    checkpoint = checkpoint_in(config.checkpoint)
    report = evaluate_checkpoint(checkpoint, config.dataset)
    out = config.out if config.out is not None else evaluation_dir(checkpoint)
    return Evaluation(report, tuple(save_evaluation(report, out)))


def evaluation_dir(checkpoint: Path) -> Path:
    """Where a checkpoint's scores go by default: beside a run's checkpoint
    (``<run>/evaluation``), which training replaces whole when it saves, else inside the
    checkpoint directory."""
    inside = checkpoint.name == RUN_CHECKPOINT
    return checkpoint.parent / EVALUATION if inside else checkpoint / EVALUATION
