"""Units of labelling work: runs of consecutive episodes, predicted and saved to a file each.

`invdyn.learn.label` labels a dataset unit by unit in one process, and `invdyn.learn.cluster`
on Ray's workers; both go through `label_unit`, so a unit's file holds the same predictions
wherever it was computed, and a killed run resumes with the units it lacks (`load_unit`).
`predict` is the prediction of every window of some episodes held in memory (`Inputs`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from numpy.typing import NDArray

from invdyn._files import atomic_open
from invdyn.learn.checkpoint import CONFIG_FILE
from invdyn.learn.config import ModelConfig
from invdyn.learn.datasets import Dataset
from invdyn.learn.models import (
    Frames,
    InverseDynamicsModel,
    joined_frames,
    window_inputs,
    window_starts,
)
from invdyn.learn.train import IMAGE_EVAL_BATCH

Float32 = NDArray[np.float32]


def checkpoint_device(checkpoint_dir: str | os.PathLike[str]) -> torch.device:
    """The device the checkpoint was trained for, when present here; else the CPU."""
    try:
        config = json.loads((Path(checkpoint_dir) / CONFIG_FILE).read_text())
        name = str(config.get("train", {}).get("device", "auto"))
    except (OSError, ValueError, AttributeError):
        # load_checkpoint reports the problem
        return torch.device("cpu")
    if name == "cpu" or not torch.cuda.is_available():
        return torch.device("cpu")
    return torch.device("cuda" if name == "auto" else name)


class Inputs(NamedTuple):
    """What a model sees of some episodes.

    Attributes:
      lengths: (n_episodes,) frames of each episode.
      states: (T_i, n_state) states of each episode, or None for a model of frames alone.
      images: feature key (``observation.images.<camera>``) -> (sum of T_i, h, w, 3) frames
        of the episodes end to end, for each camera of the model.
    """

    lengths: list[int]
    states: list[NDArray[Any]] | None
    images: dict[str, Frames]


def episode_inputs(dataset: Dataset, config: ModelConfig, first: int, stop: int) -> Inputs:
    """The `Inputs` of episodes ``first .. stop - 1`` of `dataset` for a model of `config`."""
    episodes = [dataset.episode(i) for i in range(first, stop)]
    states = [e.state for e in episodes] if config.state else None
    lengths = [len(e) for e in episodes]
    images = joined_frames(dataset, config, range(first, stop), lengths)
    return Inputs(lengths, states, images)  # type: ignore[arg-type]


def label_unit(
    model: InverseDynamicsModel,
    dataset: Dataset,
    first: int,
    stop: int,
    file: Path,
    batch_size: int,
) -> tuple[Float32, Float32 | None]:
    """The predictions of episodes ``first .. stop - 1``, saved into `file`."""
    unit = predict(model, episode_inputs(dataset, model.config, first, stop), batch_size)
    save_unit(file, unit)
    return unit


@torch.no_grad()
def predict(
    model: InverseDynamicsModel, inputs: Inputs, batch_size: int
) -> tuple[Float32, Float32 | None]:
    """(n_windows, n_action) predictions, and deviations for ensembles, of every window of
    the episodes of `inputs`, in order, `batch_size` windows per forward pass (a model of
    frames: at most `invdyn.learn.train.IMAGE_EVAL_BATCH`)."""
    config = model.config
    if config.camera_names:
        batch_size = min(batch_size, IMAGE_EVAL_BATCH)
    t, _ = window_starts(inputs.lengths, context=config.context, ahead=config.offsets[-1])
    index = t[:, None] + np.array(config.offsets)
    states = None if inputs.states is None else np.concatenate(inputs.states)
    means, stds = [], []
    for start in range(0, len(t), batch_size):
        batch = window_inputs(index[start : start + batch_size], states, inputs.images)
        mean, std = model.predict_with_uncertainty(batch)
        # a chunk's first step is the action of its own frame
        if config.chunk:
            mean, std = mean[:, 0], std[:, 0]
        means.append(mean.cpu().numpy().astype(np.float32))
        stds.append(std.cpu().numpy().astype(np.float32))
    empty = np.zeros((0, model.n_action), dtype=np.float32)
    action = np.concatenate(means) if means else empty
    spread = np.concatenate(stds) if stds else empty
    return action, (spread if config.ensemble > 1 else None)


def load_unit(
    file: Path, n_windows: int, model: InverseDynamicsModel
) -> tuple[Float32, Float32 | None] | None:
    """A saved unit's predictions, or None if it is missing or not as expected."""
    if not file.is_file():
        return None
    shape = (n_windows, model.n_action)
    try:
        with np.load(file, allow_pickle=False) as archive:
            action = archive["action"]
            std = archive["std"] if model.config.ensemble > 1 else None
    except Exception:  # a damaged file is recomputed
        return None
    if action.shape != shape or (std is not None and std.shape != shape):
        return None
    return action, std


def save_unit(file: Path, unit: tuple[Float32, Float32 | None]) -> None:
    """Save a unit's predictions atomically (through a temporary file of its own: a worker of a
    killed run may still be saving the same unit)."""
    action, std = unit
    arrays: dict[str, Any] = {"action": action} | ({} if std is None else {"std": std})
    with atomic_open(file, "wb") as stream:
        np.savez(stream, **arrays)
