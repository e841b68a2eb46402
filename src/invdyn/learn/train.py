"""Training and evaluation of inverse dynamics models: a plain, seeded, resumable PyTorch loop.

`train` splits the episodes into training and validation sets (whole episodes, drawn by the
seed), computes the normalisation statistics on the training split, and fits an
`InverseDynamicsModel` with AdamW under a cosine or constant learning rate. It writes a
checkpoint (`invdyn.learn.checkpoint`) to ``out_dir/checkpoint`` every
``checkpoint_every`` epochs and at the end, with the validation metrics of `evaluate`.

Runs are reproducible: the split and the initialisation come from the seed, each epoch's
shuffle and random augmentations from ``(seed, epoch)``, and torch runs with deterministic
algorithms. A run that finds
a checkpoint of an unfinished run with the same configuration and data in ``out_dir``
continues from it, and on the CPU ends with exactly the weights of an uninterrupted run.

`evaluate` measures a model on episodes: per action dimension the coefficient of
determination ``R^2``, the normalised mean squared error (MSE over the target's variance, so
``R^2 = 1 - NMSE``) and the mean absolute error, and their means over the dimensions.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from invdyn._waits import announced
from invdyn.errors import InputError, warn
from invdyn.learn import distributed
from invdyn.learn.checkpoint import (
    RUN_CHECKPOINT,
    DataSpec,
    check_replaceable,
    checkpoint_in,
    load_checkpoint,
    resolve_device,
    save_checkpoint,
)
from invdyn.learn.config import Config, TrainConfig
from invdyn.learn.datasets import EPISODE_FINGERPRINTS, episode_fingerprints, hashed_episodes
from invdyn.learn.keys import ACTION
from invdyn.learn.models import (
    Float,
    FrameEncoder,
    InverseDynamicsModel,
    Windows,
    compute_norm_stats,
    episode_arrays,
    select_windows,
    window_inputs,
)
from invdyn.metrics import ONE_SAMPLE, Metrics

# windows per forward pass when evaluating, for models of states and of frames
EVAL_BATCH = 8192
IMAGE_EVAL_BATCH = 256
# a model of frames trains on batches of runs of this many consecutive windows, which share
# most of their frames, each encoded once
FRAME_RUN = 16
# a validation nMSE above this (predicting the actions' mean scores 1) is a diverged training
DIVERGED_NMSE = 10.0
# config fields that may change between an interrupted run and its resumption
_RESUMABLE_CHANGES = ("device", "num_threads", "checkpoint_every", "compile")

Callback = Callable[[int, dict[str, float]], None]


@dataclasses.dataclass
class TrainResult:
    """The outcome of `train`.

    Attributes:
      model: the trained model, in eval mode, on the training device.
      metrics: `evaluate`'s metrics on the validation episodes (empty without any).
      history: one dict per epoch: ``epoch``, ``lr``, ``train_loss``, ``train_mse`` and, with
        validation episodes, ``val_loss`` and ``val_mse`` (losses in normalised units); for a
        model that estimates states from frames (`ModelConfig.state_weight`), also
        ``train_state_mse`` and ``val_state_mse``, the mean squared error of the normalised
        states it estimates.
      checkpoint: the final checkpoint directory.
      train_episodes: indices of the training episodes.
      val_episodes: indices of the validation episodes.
      resumed_from: the epoch the run continued from, or None for a fresh run.
    """

    model: InverseDynamicsModel
    metrics: dict[str, float]
    history: list[dict[str, float]]
    checkpoint: Path
    train_episodes: list[int]
    val_episodes: list[int]
    resumed_from: int | None = None


def split_episodes(
    n: int, val_fraction: float, seed: int, *, usable: Sequence[int] | None = None
) -> tuple[list[int], list[int]]:
    """Indices of the training and validation episodes, a seeded split of whole episodes.

    Only the `usable` episodes (those long enough for a window; default all) are split: at
    least one is held out when `val_fraction` > 0 and at least one is kept for training, and a
    single one is all training. The others go with training, where they add nothing.
    """
    candidates = np.arange(n) if usable is None else np.asarray(sorted(usable), dtype=np.int64)
    count = len(candidates)
    n_val = 0 if val_fraction == 0 else min(max(1, round(val_fraction * count)), count - 1)
    held = candidates[np.random.default_rng(seed).permutation(count)[:n_val]]
    return sorted(set(range(n)) - set(held.tolist())), sorted(held.tolist())


def _one_usable(n_episodes: int) -> str:
    """How the warning about a single usable episode of `n_episodes` starts."""
    if n_episodes == 1:
        return "one episode is"
    return f"of {n_episodes} episodes only one is long enough for a window, and it is"


def train(
    episodes: Iterable[Any],
    config: Config,
    out_dir: str | os.PathLike[str],
    *,
    progress: bool = True,
    resume: bool = True,
    callback: Callback | None = None,
) -> TrainResult:
    """Fit an inverse dynamics model to episodes, checkpointing into `out_dir`.

    Args:
      episodes: the episodes (see `invdyn.learn.models.episode_arrays` for the forms taken).
        From an `invdyn.learn.datasets.Dataset`, its spec (state and action names, fps) is saved
        with the checkpoint, and labelling, evaluation and following check data against it.
      config: the model and its training.
      out_dir: the run directory; the checkpoint is ``out_dir/checkpoint``.
      progress: show a progress bar.
      resume: continue from the checkpoint in `out_dir` if it is of an unfinished run with this
        configuration and data (a finished one is returned as is); False starts afresh and
        overwrites it.
      callback: called as ``callback(epoch, history_entry)`` after every epoch (and its
        checkpoint, if any); an exception it raises stops training.

    In a process group (`invdyn.learn.distributed`: ``invdyn train --nproc N``, torchrun),
    every process calls this; each trains on its share of every batch, the first alone
    computes the validation metrics, writes checkpoints and calls `callback`, and the others
    return their model and a history without validation entries.

    Raises:
      InputError: bad episodes, no training windows, or `out_dir` holds a checkpoint of a
        different configuration or dataset (pass ``resume=False`` to overwrite it).
      DataError: the checkpoint to resume from is corrupt.
    """
    if not isinstance(config, Config):
        raise InputError(f"config must be a Config, got {type(config).__name__}")
    tc = config.train
    spec = _spec(episodes)
    _check_dataset_actions(episodes)
    arrays = episode_arrays(episodes)
    span = config.model.context + config.model.offsets[-1]
    usable = [i for i, (state, _) in enumerate(arrays) if state.shape[0] > span]
    train_idx, val_idx = split_episodes(len(arrays), tc.val_fraction, tc.seed, usable=usable)
    if tc.val_fraction > 0 and not val_idx and usable:
        warn(
            f"{_one_usable(len(arrays))} all training: none is held out for "
            f"validation (train.val_fraction = {tc.val_fraction:g}), so the run reports no "
            "validation metrics"
        )
    train_w = select_windows(arrays, episodes, train_idx, config.model)
    val_w = select_windows(arrays, episodes, val_idx, config.model) if val_idx else None
    if len(train_w) == 0:
        raise InputError(
            "no training windows: episodes need more than context + horizon + future = "
            f"{span} steps"
        )
    if val_w is not None and len(val_w) == 1:
        warn(
            f"the validation episodes hold one window: {ONE_SAMPLE}; hold out more or longer "
            "episodes"
        )
    device = distributed.local_device(resolve_device(tc.device))
    if device.type == "cuda":
        # deterministic cuBLAS needs a fixed workspace, set before its first use in the process
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    ckpt_dir = Path(out_dir) / RUN_CHECKPOINT
    check_replaceable(ckpt_dir)
    identity = {"config": _resume_key(config), "data": data_fingerprint(arrays)}
    single_precision = data_fingerprint(arrays, single=True)
    episode_prints = episode_fingerprints(arrays)

    # a previous run in out_dir: check it is this run, return it if finished
    previous = None
    if resume and (ckpt_dir.exists() or ckpt_dir.with_name(f".{ckpt_dir.name}.old").exists()):
        previous = load_checkpoint(ckpt_dir, device=device, optimizer=True)
        state = previous.train_state or {}
        differences = _run_differences(state.get("identity"), identity)
        if differences:
            raise InputError(
                f"{ckpt_dir} holds a checkpoint of another configuration or dataset (it differs "
                f"in {', '.join(differences)}); use another out_dir, or resume=False (--restart "
                "on the command line) to start afresh there"
            )
        if state.get("epoch") == tc.epochs:
            return TrainResult(
                model=previous.model,
                metrics=previous.metrics.get("validation", {}),
                history=previous.metrics.get("history", []),
                checkpoint=ckpt_dir,
                train_episodes=train_idx,
                val_episodes=val_idx,
                resumed_from=tc.epochs,
            )

    with deterministic(tc.num_threads):
        # the model: from the checkpoint, or initialised from the seed with stats of the train split
        inherited: dict[str, list[str]] = {}
        if previous is not None:
            model = previous.model
            history: list[dict[str, float]] = list(previous.metrics.get("history", []))
            start = int((previous.train_state or {})["epoch"])
            inherited = (previous.train_state or {}).get(INHERITED, {})
        elif tc.init:
            model, inherited = _initial_model(tc.init, config, episodes, train_w)
            history, start = [], 0
        else:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(tc.seed)
                model = InverseDynamicsModel(config.model, compute_norm_stats(train_w))
            history, start = [], 0
        model.to(device)
        if tc.compile:
            _compile_encoders(model)
        step = _training_step(model, device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=tc.lr, weight_decay=tc.weight_decay)
        if previous is not None and previous.optimizer_state is not None:
            optimizer.load_state_dict(previous.optimizer_state)

        data = _DeviceWindows(train_w, device)
        n_batches = math.ceil(len(train_w) / tc.batch_size)
        total = tc.epochs * n_batches
        world, rank = distributed.world_size(), distributed.rank()
        main = rank == 0
        bar = tqdm(
            total=total, initial=start * n_batches, disable=not (progress and main), unit="batch"
        )
        metrics: dict[str, float] = {}
        try:
            for epoch in range(start, tc.epochs):
                bar.set_description(f"epoch {epoch + 1}/{tc.epochs}")
                model.train()
                # this epoch's shuffle depends on (seed, epoch) only, so resuming replays it
                generator = torch.Generator().manual_seed(_epoch_seed(tc.seed, epoch))
                run = FRAME_RUN if config.model.camera_names else 1
                order = _shuffle(len(train_w), run, generator).to(device)
                sums = dict.fromkeys(_logged_metrics(model), 0.0)
                lr = tc.lr
                # this epoch's augmentations too: drawn from (seed, epoch) alone
                with _augmentation_rng(tc.seed, epoch, device):
                    for b in range(n_batches):
                        lr = _learning_rate(tc.lr, tc.schedule, epoch * n_batches + b, total)
                        for group in optimizer.param_groups:
                            group["lr"] = lr
                        rows = order[b * tc.batch_size : (b + 1) * tc.batch_size]
                        # this process's share of the batch, weighted so that the gradients that
                        # the processes average are the whole batch's
                        local, weight = distributed.share(rows)
                        # a compiled model's first step compiles it: up to a minute
                        first = tc.compile and epoch == start and b == 0
                        with announced("compiling the frame encoders", when=first):
                            loss, batch_metrics = step(data.batch(local))
                            optimizer.zero_grad(set_to_none=True)
                            (loss * weight).backward()
                        if tc.grad_clip > 0:
                            torch.nn.utils.clip_grad_norm_(model.parameters(), tc.grad_clip)
                        optimizer.step()
                        for key in sums:
                            sums[key] += batch_metrics[key] * len(rows) * weight / world
                        bar.update(1)
                sums = distributed.total(sums, device)
                _check_converging(sums, epoch, tc)
                entry = {"epoch": float(epoch + 1), "lr": lr}
                entry |= {f"train_{k}": v / len(train_w) for k, v in sums.items()}
                if val_w is not None and main:
                    entry |= {f"val_{k}": v for k, v in _validation_loss(model, val_w).items()}
                history.append(entry)
                bar.set_postfix({k: f"{v:.4g}" for k, v in entry.items() if "_" in k})

                # checkpoint every `checkpoint_every` epochs and at the end, by the first process
                done = epoch + 1 == tc.epochs
                if main and (done or (epoch + 1) % tc.checkpoint_every == 0):
                    metrics = _evaluate_windows(model, val_w) if val_w is not None else {}
                    save_checkpoint(
                        ckpt_dir,
                        model=model,
                        config=config,
                        metrics={"epoch": epoch + 1, "validation": metrics, "history": history},
                        optimizer=optimizer,
                        spec=spec,
                        train_state={
                            "epoch": epoch + 1,
                            "finished": done,
                            "identity": identity,
                            "data_float32": single_precision,
                            **episode_prints,
                            INHERITED: inherited,
                            "train_episodes": train_idx,
                            "val_episodes": val_idx,
                        },
                    )
                distributed.barrier()
                if callback is not None and main:
                    callback(epoch + 1, entry)
        finally:
            bar.close()
    model.eval()
    _warn_of_divergence(metrics, tc)
    return TrainResult(
        model=model,
        metrics=metrics,
        history=history,
        checkpoint=ckpt_dir,
        train_episodes=train_idx,
        val_episodes=val_idx,
        resumed_from=start if previous is not None else None,
    )


class _Loss(torch.nn.Module):
    """A model's training loss as a module's forward pass, as DistributedDataParallel wants."""

    def __init__(self, model: InverseDynamicsModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, float]]:
        return self.model.loss(batch)


def _compile_encoders(model: InverseDynamicsModel) -> None:
    """Compile the convolutions of every frame encoder of `model` in place (``torch.compile``
    with a dynamic number of frames; parameters and checkpoints are unchanged)."""
    for encoders in model.encoders:
        assert isinstance(encoders, torch.nn.ModuleDict)
        for encoder in encoders.values():
            assert isinstance(encoder, FrameEncoder)
            encoder.keypoints.compile(dynamic=True)


def _training_step(model: InverseDynamicsModel, device: torch.device) -> torch.nn.Module:
    """The module whose forward pass is the loss: wrapped in DistributedDataParallel when this
    process is one of several (`invdyn.learn.distributed`), so that backward passes average
    the gradients of all processes."""
    step = _Loss(model)
    if distributed.world_size() == 1:
        return step
    ids = [device.index] if device.type == "cuda" else None
    return torch.nn.parallel.DistributedDataParallel(step, device_ids=ids)


def evaluate(
    model: InverseDynamicsModel, episodes: Iterable[Any], *, batch_size: int | None = None
) -> dict[str, float]:
    """Accuracy of `model` on the windows of `episodes` (a dataset with videos for a model
    of frames), `batch_size` windows at a time (None: `eval_batch`).

    Returns:
      ``r2/<j>``, ``nmse/<j>``, ``mae/<j>`` for each action dimension ``j`` (chunked
      predictions pool the ``H`` steps), their means ``r2_mean``, ``nmse_mean``, ``mae_mean``
      (over dimensions whose target varies), ``n_windows`` and, for ensembles,
      ``uncertainty_mean`` (the mean standard deviation across members).

    Raises:
      InputError: bad episodes, or none long enough for a window.
    """
    arrays = episode_arrays(episodes)
    windows = select_windows(arrays, episodes, range(len(arrays)), model.config)
    if len(windows) == 0:
        raise InputError("no windows: the episodes are shorter than context + horizon + future + 1")
    return _evaluate_windows(model, windows, batch_size=batch_size)


def eval_batch(model: InverseDynamicsModel) -> int:
    """Windows per forward pass of `model` when evaluating: fewer when it sees frames."""
    return IMAGE_EVAL_BATCH if model.config.camera_names else EVAL_BATCH


def eval_batches(
    model: InverseDynamicsModel, windows: Windows, batch_size: int | None = None
) -> Iterator[dict[str, Any]]:
    """The batches of `windows`, in order, `batch_size` windows each (None: `eval_batch`)."""
    size = batch_size or eval_batch(model)
    for start in range(0, len(windows), size):
        yield windows.batch(slice(start, start + size))


def _evaluate_windows(
    model: InverseDynamicsModel, windows: Windows, *, batch_size: int | None = None
) -> dict[str, float]:
    was_training = model.training
    model.eval()
    means, stds = [], []
    for batch in eval_batches(model, windows, batch_size):
        mean, std = model.predict_with_uncertainty(batch)
        means.append(mean.double().cpu().numpy())
        stds.append(std.double().cpu().numpy())
    model.train(was_training)
    n_action = model.n_action
    prediction = np.concatenate(means).reshape(-1, n_action)
    target = windows.batch()[ACTION].reshape(-1, n_action)
    # a constant target has no R^2: NaN, left out of the means
    scores = Metrics.of(prediction, target)
    r2, nmse, mae = scores.r2, scores.nmse, scores.mae
    out: dict[str, float] = {
        "r2_mean": scores.r2_mean,
        "nmse_mean": scores.nmse_mean,
        "mae_mean": scores.mae_mean,
        "n_windows": float(len(windows)),
    }
    if model.config.ensemble > 1:
        out["uncertainty_mean"] = float(np.concatenate(stds).mean())
    for j in range(n_action):
        out |= {f"r2/{j}": float(r2[j]), f"nmse/{j}": float(nmse[j]), f"mae/{j}": float(mae[j])}
    return out


@torch.no_grad()
def _validation_loss(model: InverseDynamicsModel, windows: Windows) -> dict[str, float]:
    """`_logged_metrics` on `windows`, averaged over windows, with the model in evaluation mode
    (no dropout, no augmentation: the same figures whenever they are computed)."""
    sums = dict.fromkeys(_logged_metrics(model), 0.0)
    was_training = model.training
    model.eval()
    for batch in eval_batches(model, windows):
        _, metrics = model.loss(batch)
        n = len(batch[ACTION])
        for key in sums:
            sums[key] += metrics[key] * n
    model.train(was_training)
    return {k: v / len(windows) for k, v in sums.items()}


def _check_converging(sums: dict[str, float], epoch: int, tc: TrainConfig) -> None:
    """`InputError` when an epoch's training loss is not finite (the weights are then lost),
    before anything of that epoch is saved."""
    if math.isfinite(sums["loss"]):
        return
    raise InputError(
        f"training diverged in epoch {epoch + 1}: its loss is {sums['loss']}; the checkpoint "
        f"stays as last saved; lower train.lr (now {tc.lr:g}) or set train.grad_clip (now "
        f"{tc.grad_clip:g})"
    )


def _warn_of_divergence(metrics: dict[str, float], tc: TrainConfig) -> None:
    """A warning when the trained model's validation error is more than `DIVERGED_NMSE` times
    the actions' variance: far worse than predicting their mean, which a loss that grew
    without becoming infinite leaves (`_check_converging` stops one that did)."""
    nmse = metrics.get("nmse_mean", math.nan)
    if nmse > DIVERGED_NMSE:
        warn(
            f"the model's validation error is {nmse:.3g} times the actions' variance, far worse "
            f"than predicting their mean: training diverged; lower train.lr (now {tc.lr:g}) or "
            f"set train.grad_clip (now {tc.grad_clip:g})"
        )


def _logged_metrics(model: InverseDynamicsModel) -> tuple[str, ...]:
    """The metrics of `InverseDynamicsModel.loss` that the history keeps: the loss, the
    normalised MSE and, for a model that estimates states from frames, their MSE."""
    return ("loss", "mse", "state_mse") if model.state_estimators else ("loss", "mse")


class _DeviceWindows:
    """Windows with their arrays on the training device; batches gathered there."""

    def __init__(self, windows: Windows, device: torch.device) -> None:
        # float64: the model centres states in it (`InverseDynamicsModel.features`)
        self.states = torch.as_tensor(windows.states, dtype=torch.float64, device=device)
        self.actions = torch.as_tensor(windows.actions, dtype=torch.float32, device=device)
        self.obs_index = torch.as_tensor(windows.obs_index, device=device)
        self.action_index = torch.as_tensor(windows.action_index, device=device)
        self.chunk = windows.chunk
        self.images = {
            key: torch.as_tensor(frames, device=device) for key, frames in windows.images.items()
        }

    def batch(self, rows: torch.Tensor) -> dict[str, torch.Tensor]:
        """As `Windows.batch`, each frame once."""
        action = self.actions[self.action_index[rows]]
        inputs = window_inputs(self.obs_index[rows], self.states, self.images)
        return inputs | {ACTION: action if self.chunk else action[:, 0]}


def _initial_model(
    init: str, config: Config, episodes: Iterable[Any], windows: Windows
) -> tuple[InverseDynamicsModel, dict[str, list[str]]]:
    """The model of the checkpoint `init` (`TrainConfig.init`) that a run starts from,
    checked against the run: the same model configuration, a data spec that fits the
    training dataset's, and the same numbers of state and action entries as its `windows`;
    and the fingerprints of the episodes it was trained on (`trained_fingerprints`)."""
    from invdyn.learn.datasets import DatasetInfo

    where = f"train.init {init}"
    start = load_checkpoint(checkpoint_in(init))
    differ = [
        f"model.{field.name}"
        for field in dataclasses.fields(config.model)
        if getattr(config.model, field.name) != getattr(start.config.model, field.name)
    ]
    if differ:
        raise InputError(
            f"{where}: its model differs from this run's in {', '.join(differ)}; "
            "a run starting from it must set them as it does"
        )
    info = getattr(episodes, "info", None)
    if start.spec is not None and isinstance(info, DatasetInfo):
        data = str(getattr(episodes, "path", "the training data"))
        start.spec.check(
            info, f"{data} (training from {where})", actions=True, cameras=config.model.camera_names
        )
    shapes = (windows.states.shape[1], windows.actions.shape[1])
    if shapes != (start.model.n_state, start.model.n_action):
        raise InputError(
            f"{where}: its model takes {start.model.n_state} state and {start.model.n_action} "
            f"action entries, the training data has {shapes[0]} and {shapes[1]}"
        )
    return start.model, trained_fingerprints(start.train_state or {})


def _spec(episodes: Iterable[Any]) -> DataSpec | None:
    """The spec of a dataset with actions (`invdyn.learn.datasets.Dataset`), else None."""
    from invdyn.learn.datasets import DatasetInfo

    info = getattr(episodes, "info", None)
    if isinstance(info, DatasetInfo) and info.action_names is not None:
        return DataSpec.of(info)
    return None


def _check_dataset_actions(episodes: Iterable[Any]) -> None:
    """When the episodes are a dataset: `InputError` when it has no actions, and a warning
    when a model predicted them (`invdyn label`)."""
    from invdyn.learn.datasets import Dataset, read_metadata

    if not isinstance(episodes, Dataset):
        return
    if episodes.info.action_names is None:
        raise InputError(
            f"dataset {episodes.path} has no actions to train on; a dataset without them is "
            "labelled by a model trained on one with them (invdyn label RUN DATA --out ...)"
        )
    labeller = read_metadata(episodes.path).get("labelled_by")
    if labeller:
        warn(
            f"the actions of {episodes.path} were predicted by the model {labeller}, not "
            "recorded: this model learns "
            "its labels, and those of the frames at the episodes' ends are copies of their "
            "neighbours' (action.is_labelled False)"
        )


def _shuffle(count: int, run: int, generator: torch.Generator) -> torch.Tensor:
    """A random order of `count` windows in runs of `run` consecutive ones (the last run
    shorter), the runs in random order."""
    runs = torch.randperm(math.ceil(count / run), generator=generator)
    order = (runs[:, None] * run + torch.arange(run)).flatten()
    return order[order < count]


@contextlib.contextmanager
def _augmentation_rng(seed: int, epoch: int, device: torch.device) -> Iterator[None]:
    """torch's random state seeded from (seed, epoch) inside the block, and the caller's
    restored after: the random shifts and colours of an epoch are those of an uninterrupted
    run when a run resumes, and every process of a distributed run draws for its share of a
    batch what one process draws for the batch."""
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        torch.manual_seed(_epoch_seed(seed, epoch) ^ 0x5EED)
        yield


def _learning_rate(peak: float, schedule: str, step: int, total: int) -> float:
    if schedule == "constant":
        return peak
    return peak * 0.5 * (1.0 + math.cos(math.pi * step / total))


def _epoch_seed(seed: int, epoch: int) -> int:
    return int(np.random.SeedSequence([seed, epoch]).generate_state(1, np.uint64)[0] >> 1)


def _resume_key(config: Config) -> dict[str, Any]:
    """What of `config` a resumed run must share: all but the fields that may change on
    resuming, and the dataset's name (the data's own fingerprint stands for it, however its
    path is spelled)."""
    data = config.to_dict()
    for name in _RESUMABLE_CHANGES:
        del data["train"][name]
    del data["dataset"]
    return data


def _run_differences(stored: Any, identity: dict[str, Any]) -> list[str]:
    """What differs between a checkpoint's stored identity and this run's `identity` (the
    config fields, ``the data``), [] for the same run. A config stored by a version that had
    fewer fields counts with those fields at their defaults."""
    try:
        config = _resume_key(Config.from_dict(stored["config"]))
        data = stored["data"]
    except (InputError, KeyError, TypeError):
        return ["a record of its run that cannot be read"]
    differences = [
        f"{section}.{name}"
        for section in ("model", "train")
        for name in config[section]
        if config[section][name] != identity["config"][section].get(name)
    ]
    return differences + (["the data"] if data != identity["data"] else [])


INHERITED = "inherited_fingerprints"
"""The key of ``train_state.json`` that holds, by key of `EPISODE_FINGERPRINTS`, the
fingerprints of the episodes that the checkpoint a run started from (`TrainConfig.init`), and
the ones it started from in turn, trained on (`trained_fingerprints`)."""


def data_fingerprint(arrays: Sequence[tuple[Float, Float]], *, single: bool = False) -> str:
    """A hash of the episodes, so that a run resumes only on the data it started with; with
    `single`, of their values in float32, whatever precision holds them (a float32 copy of a
    dataset is the same data to `invdyn.learn.evaluate`)."""
    return hashed_episodes(arrays, np.float32 if single else None)


def trained_fingerprints(state: Mapping[str, Any]) -> dict[str, list[str]]:
    """By key of `EPISODE_FINGERPRINTS`, the fingerprints of the episodes that the run of
    ``train_state.json`` `state` trained on, its `INHERITED` ones included."""
    inherited = state.get(INHERITED)
    inherited = inherited if isinstance(inherited, dict) else {}
    trained = state.get("train_episodes")
    prints: dict[str, list[str]] = {}
    for key in EPISODE_FINGERPRINTS:
        stored, earlier = state.get(key), inherited.get(key)
        own = (
            [stored[i] for i in trained if isinstance(i, int) and 0 <= i < len(stored)]
            if isinstance(stored, list) and isinstance(trained, list)
            else []
        )
        prints[key] = sorted({*own, *(earlier if isinstance(earlier, list) else [])})
    return prints


@contextlib.contextmanager
def deterministic(num_threads: int) -> Iterator[None]:
    """Deterministic torch algorithms (and `num_threads` CPU threads) inside the block."""
    enabled = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    threads = torch.get_num_threads()
    torch.use_deterministic_algorithms(True, warn_only=True)
    if num_threads:
        torch.set_num_threads(num_threads)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)
        torch.set_num_threads(threads)
