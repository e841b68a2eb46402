"""Checkpoints: a directory of safetensors and JSON files, written atomically, never pickled.

A checkpoint directory holds:
  ``model.safetensors``: the weights (`InverseDynamicsModel.state_dict`).
  ``config.json``: the `Config` (`Config.to_json`).
  ``norm_stats.json``: the normalisation statistics (`NormStats.to_dict`).
  ``metrics.json``: validation metrics and the training history.
  ``spec.json``: what the model's inputs and outputs are (`DataSpec`: the training dataset's
    state and action names, frame rate and source), when it was trained on a dataset.
and, for resuming an unfinished run:
  ``optimizer.safetensors``: the optimiser's per-parameter state tensors, keyed
    ``"<parameter index>.<name>"`` (AdamW's ``step``, ``exp_avg``, ``exp_avg_sq``).
  ``train_state.json``: the epoch reached, the optimiser's parameter groups and the rest of
    the loop's state (`invdyn.learn.train` reseeds every epoch from the seed and the epoch
    number, so no random generator state needs saving), and what the run was trained on:
    the split of its episodes and fingerprints of its data and of each episode.

`save_checkpoint` writes into a temporary sibling directory and renames it into place, so a
reader sees the old checkpoint or the new one, never half of one. `load_checkpoint` raises
`invdyn.DataError` naming the file that is missing or corrupt.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import math
import os
import shutil
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from invdyn._files import (
    IDENTIFICATION,
    INFO_PATH,
    MODEL_FILE,
    output_mode,
    sync_directory,
    sync_tree,
    write_json,
)
from invdyn.errors import DataError, InputError, InvdynError, warn
from invdyn.learn.config import Config
from invdyn.learn.keys import ACTION, OBS_IMAGE_PREFIX, OBS_STATE
from invdyn.learn.models import InverseDynamicsModel, NormStats

CONFIG_FILE = "config.json"
NORM_STATS_FILE = "norm_stats.json"
METRICS_FILE = "metrics.json"
OPTIMIZER_FILE = "optimizer.safetensors"
TRAIN_STATE_FILE = "train_state.json"
SPEC_FILE = "spec.json"
# every file a checkpoint directory may hold
CHECKPOINT_FILES = frozenset(
    (
        MODEL_FILE,
        CONFIG_FILE,
        NORM_STATS_FILE,
        METRICS_FILE,
        OPTIMIZER_FILE,
        TRAIN_STATE_FILE,
        SPEC_FILE,
    )
)
# the checkpoint's directory inside a run directory of `invdyn.learn.train.train`
RUN_CHECKPOINT = "checkpoint"
# the dataset sources of simulated robots (`invdyn.sim.collect`): invdyn's own, a model's, a
# gymnasium environment's
SIMULATED = ("invdyn:", "model:", "gym:")


@dataclasses.dataclass(frozen=True)
class DataSpec:
    """What a model's inputs and outputs are: the spec of the dataset it was trained on.

    Attributes:
      state_names: name of each entry of the state (``observation.state``).
      action_names: name of each entry of the action.
      fps: frames per second.
      source: the robot or simulator of the training data (informative: a model trained in
        simulation may label data of the real robot).
      videos: the (h, w, 3) frame shape of each video feature (``observation.images.<camera>``).
    """

    state_names: tuple[str, ...]
    action_names: tuple[str, ...]
    fps: float
    source: str = ""
    videos: Mapping[str, tuple[int, ...]] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, info: Any) -> DataSpec:
        """The spec of a dataset with actions, from its `invdyn.learn.datasets.DatasetInfo`."""
        videos = {key: tuple(shape) for key, shape in info.videos.items()}
        return cls(
            tuple(info.state_names), tuple(info.action_names), float(info.fps), info.source, videos
        )

    def to_dict(self) -> dict[str, Any]:
        """As JSON data."""
        return dataclasses.asdict(self) | {
            "state_names": list(self.state_names),
            "action_names": list(self.action_names),
            "videos": {key: list(shape) for key, shape in self.videos.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DataSpec:
        """The spec of `to_dict`'s output; ValueError or TypeError if it is malformed."""
        names = {key: data[key] for key in ("state_names", "action_names")}
        for key, value in names.items():
            if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
                raise TypeError(f"{key} must be a list of strings")
        fps = data["fps"]
        if isinstance(fps, bool) or not isinstance(fps, int | float) or not fps > 0:
            raise ValueError(f"fps must be a number > 0, got {fps!r}")
        source = data.get("source", "")
        if not isinstance(source, str):
            raise TypeError("source must be a string")
        videos = data.get("videos", {})
        if not isinstance(videos, Mapping) or not all(
            isinstance(shape, list) and all(isinstance(n, int) for n in shape)
            for shape in videos.values()
        ):
            raise TypeError("videos must map feature keys to lists of integers")
        shapes = {str(key): tuple(shape) for key, shape in videos.items()}
        return cls(
            tuple(names["state_names"]), tuple(names["action_names"]), float(fps), source, shapes
        )

    def check(
        self,
        info: Any,
        where: str,
        *,
        actions: bool,
        state: bool = True,
        cameras: Sequence[str] = (),
    ) -> None:
        """Raise `InputError` unless the dataset of `info` (`invdyn.learn.datasets.DatasetInfo`)
        fits the model: the same frame rate, with `state` the same state names, for each of
        the `cameras` (names) a video of the training frames' shape, and with `actions` the
        same action names (a dataset without actions passes; names that info.json does
        not give, ``observation.state.0`` ..., match any). Warns when the dataset and the
        training data come from two different simulated robots (`SIMULATED`), which may share
        joint names (a model trained in simulation may well label the real robot's data)."""
        simulated = [s for s in (info.source, self.source) if s.startswith(SIMULATED)]
        if len(simulated) == 2 and info.source != self.source:
            warn(
                f"{where}: the data comes from {info.source!r}, but the model was trained on "
                f"data of another simulated robot, {self.source!r}"
            )
        for name in cameras:
            key = OBS_IMAGE_PREFIX + name
            if key not in info.videos:
                raise InputError(
                    f"{where}: has no camera {name!r}, which the model sees; its cameras are "
                    f"{info.cameras}"
                )
            trained = self.videos.get(key)
            if trained is not None and tuple(info.videos[key]) != tuple(trained):
                raise InputError(
                    f"{where}: {key} frames are {tuple(info.videos[key])}, but the model was "
                    f"trained on {tuple(trained)} (h, w, channels)"
                )
        if state and _names_differ(info.state_names, self.state_names, OBS_STATE):
            raise InputError(
                f"{where}: state names {list(info.state_names)} differ from those the model was "
                f"trained on: {list(self.state_names)}"
            )
        if not math.isclose(info.fps, self.fps, rel_tol=1e-9):
            raise InputError(
                f"{where}: fps {info.fps:g} differs from the {self.fps:g} the model was trained at"
            )
        if actions and info.action_names is not None:
            if _names_differ(info.action_names, self.action_names, ACTION):
                raise InputError(
                    f"{where}: action names {list(info.action_names)} differ from those the "
                    f"model was trained on: {list(self.action_names)}"
                )


def _names_differ(found: Sequence[str], trained: Sequence[str], key: str) -> bool:
    """Whether a dataset's names of a feature differ from the training data's, where both
    name its entries (``<key>.<i>`` stands in for names that info.json does not give)."""
    found, trained = tuple(found), tuple(trained)
    if len(found) != len(trained):
        return True
    unnamed = tuple(f"{key}.{i}" for i in range(len(found)))
    return found != trained and unnamed not in (found, trained)


@dataclasses.dataclass
class Checkpoint:
    """A loaded checkpoint.

    Attributes:
      model: the model, on the requested device, in eval mode.
      config: the configuration it was trained with.
      metrics: the contents of ``metrics.json``.
      train_state: the contents of ``train_state.json``, or None if the checkpoint has none.
      optimizer_state: a state dict for ``torch.optim.Optimizer.load_state_dict``, or None.
      spec: the training data's spec, or None if it was trained on bare arrays.
    """

    model: InverseDynamicsModel
    config: Config
    metrics: dict[str, Any]
    train_state: dict[str, Any] | None = None
    optimizer_state: dict[str, Any] | None = None
    spec: DataSpec | None = None


def save_checkpoint(
    path: str | os.PathLike[str],
    *,
    model: InverseDynamicsModel,
    config: Config,
    metrics: Mapping[str, Any],
    optimizer: torch.optim.Optimizer | None = None,
    train_state: Mapping[str, Any] | None = None,
    spec: DataSpec | None = None,
) -> Path:
    """Write a checkpoint directory at `path`, replacing any there, atomically; `InputError`,
    before anything is written, if `path` holds what a checkpoint does not (`check_replaceable`).

    Args:
      path: the checkpoint directory.
      model: the model; its weights and normalisation statistics are saved.
      config: the configuration to save as ``config.json``.
      metrics: JSON-serialisable metrics for ``metrics.json``.
      optimizer: the optimiser, saved for resuming (with `train_state`).
      train_state: JSON-serialisable loop state for ``train_state.json``.
      spec: the training data's spec for ``spec.json``; None writes none.

    Returns:
      the checkpoint directory.
    """
    path = Path(path)
    check_replaceable(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex}")
    tmp.mkdir()
    try:
        # weights and statistics
        weights = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
        _save_tensors(weights, tmp / MODEL_FILE, metadata={"format": "pt"})
        write_json(tmp / CONFIG_FILE, config.to_dict())
        write_json(tmp / NORM_STATS_FILE, model.stats.to_dict())
        write_json(tmp / METRICS_FILE, dict(metrics))
        if spec is not None:
            write_json(tmp / SPEC_FILE, spec.to_dict())
        # the optimiser: tensors to safetensors, hyper-parameters to JSON
        if optimizer is not None or train_state is not None:
            state = dict(train_state or {})
            if optimizer is not None:
                tensors, groups = _split_optimizer_state(optimizer.state_dict())
                _save_tensors(tensors, tmp / OPTIMIZER_FILE)
                state["optimizer_param_groups"] = groups
            write_json(tmp / TRAIN_STATE_FILE, state)
        sync_tree(tmp)
        # swap the directories: the old one out of the way, the new one in, the old one deleted;
        # an `old` left by an interrupted save is kept until a newer checkpoint is in place
        old = path.with_name(f".{path.name}.old")
        if path.exists():
            shutil.rmtree(old, ignore_errors=True)
            os.replace(path, old)
        os.replace(tmp, path)
        sync_directory(path.parent)
        shutil.rmtree(old, ignore_errors=True)
        # what saves killed before their swap left behind
        for stale in path.parent.glob(f".{glob.escape(path.name)}.tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return path


def _save_tensors(
    tensors: dict[str, torch.Tensor], path: Path, metadata: dict[str, str] | None = None
) -> None:
    """``safetensors`` file of `tensors`, with the permissions of the checkpoint's other files
    (safetensors creates its files readable by their owner alone)."""
    save_file(tensors, path, metadata=metadata)
    os.chmod(path, output_mode(directory=False))


def resolve_device(device: str | torch.device) -> torch.device:
    """The torch device of a name such as `TrainConfig.device`'s (``"auto"``: CUDA if
    present), or `InputError` for a name torch does not know or a CUDA device without CUDA."""
    name = str(device)
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(name)
    except RuntimeError:
        raise InputError(f"unknown device {name!r}: expected auto, cpu, cuda or cuda:N") from None
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise InputError(f"device {name!r} requested but CUDA is not available")
    return resolved


def check_replaceable(path: Path) -> None:
    """`InputError` if `path` exists and is not a checkpoint directory that a save may replace:
    a file, or a directory that holds anything but a checkpoint's files (`CHECKPOINT_FILES`),
    which a save would delete."""
    if not path.exists() and not path.is_symlink():
        return
    if not path.is_dir() or path.is_symlink():
        raise InputError(f"{path} is not a checkpoint directory: refusing to replace it")
    foreign = sorted(entry.name for entry in path.iterdir() if entry.name not in CHECKPOINT_FILES)
    if foreign:
        listed = ", ".join(foreign[:3]) + (" ..." if len(foreign) > 3 else "")
        raise InputError(
            f"{path} holds {listed}, which a checkpoint does not: refusing to replace it; move "
            "them, or train into another directory"
        )


def load_checkpoint(
    path: str | os.PathLike[str],
    *,
    device: str | torch.device = "cpu",
    optimizer: bool = False,
) -> Checkpoint:
    """Read a checkpoint directory written by `save_checkpoint`.

    Args:
      path: the checkpoint directory, or a run directory of `invdyn.learn.train.train`
        (`checkpoint_in`).
      device: where to put the model (and the optimiser state).
      optimizer: also read the optimiser's state (``optimizer.safetensors``), which only
        resuming the run needs: a checkpoint shared without it serves everything else.

    Raises:
      DataError: the directory or one of its files is missing or corrupt (the message names
        the file).
      InputError: a `device` that torch does not know or that is not here.
    """
    device = resolve_device(device)
    path = checkpoint_in(path)
    old = path.with_name(f".{path.name}.old")
    # a save interrupted between its two renames leaves only the previous checkpoint
    if not path.exists() and old.is_dir():
        path = old
    if not path.is_dir():
        what = "is a file" if path.exists() else "does not exist"
        raise DataError(f"checkpoint directory {path} {what} (give a run or its checkpoint)")
    _check_is_checkpoint(path)
    config = _parse(path / CONFIG_FILE, lambda: Config.from_dict(_read_json(path / CONFIG_FILE)))
    stats = _parse(
        path / NORM_STATS_FILE, lambda: NormStats.from_dict(_read_json(path / NORM_STATS_FILE))
    )
    metrics = _nan_for_null(_read_json(path / METRICS_FILE))
    model = InverseDynamicsModel(config.model, stats)
    weights = _read_safetensors(path / MODEL_FILE, device="cpu")
    encoder_keys = [k for k in weights if k.startswith("encoders.")]
    if any(".keypoints." not in k and ".temporal." not in k for k in encoder_keys):
        raise DataError(
            f"{path / MODEL_FILE} is a model of frames with the earlier encoder (a window's "
            "frames stacked along the channels), which this version cannot load: train it again"
        )
    estimator = "state_estimators.0.0.weight"
    if estimator in weights and weights[estimator].shape != model.state_dict()[estimator].shape:
        raise DataError(
            f"{path / MODEL_FILE} is a model of frames whose state estimator sees the whole "
            "window at once (an earlier version), which this version cannot load: train it again"
        )
    _parse(path / MODEL_FILE, lambda: model.load_state_dict(weights, strict=True))
    diverged = [k for k, w in weights.items() if w.is_floating_point() and not w.isfinite().all()]
    if diverged:
        raise DataError(
            f"{path / MODEL_FILE} holds weights that are not finite ({', '.join(diverged[:3])}"
            f"{' ...' if len(diverged) > 3 else ''}): a model that predicts nothing; train it again"
        )
    model.to(device).eval()
    checkpoint = Checkpoint(model=model, config=config, metrics=metrics)
    if (path / SPEC_FILE).exists():
        spec = _read_json(path / SPEC_FILE)
        checkpoint.spec = _parse(path / SPEC_FILE, lambda: DataSpec.from_dict(spec))
    else:
        warn(
            f"{path} has no {SPEC_FILE}: the frame rate, names and source of the data the model "
            "was trained on are unknown, so no data given to it is checked against them (copy "
            f"{SPEC_FILE} with the checkpoint)"
        )
    if (path / TRAIN_STATE_FILE).exists():
        state = _read_json(path / TRAIN_STATE_FILE)
        groups = state.pop("optimizer_param_groups", None)
        checkpoint.train_state = state
        if groups is not None and optimizer:
            # on the CPU: load_state_dict moves the moments to their parameters and keeps steps here
            tensors = _read_safetensors(path / OPTIMIZER_FILE, device="cpu")
            checkpoint.optimizer_state = _parse(
                path / OPTIMIZER_FILE, lambda: _join_optimizer_state(tensors, groups)
            )
    return checkpoint


def require_state_model(checkpoint: Checkpoint, task: str) -> None:
    """`InputError` if the checkpoint's model sees camera frames, which `task` cannot give."""
    cameras = checkpoint.model.config.camera_names
    if cameras:
        raise InputError(
            f"{task} takes models of the state; this one sees the cameras {list(cameras)}"
        )


def check_sizes(
    where: str, info: Any, model: InverseDynamicsModel, *, state: bool, actions: bool
) -> None:
    """`InputError` naming each size of a dataset (`where`, its `invdyn.learn.datasets.DatasetInfo`
    `info`) that is not `model`'s: its state's where `state` (the model reads it), its recorded
    actions' where `actions` (and it has some). A dataset without a state is said to have none
    (frames alone, say), not a state of 0 entries."""
    if state and not info.state_names and model.n_state:
        held = f"frames alone ({', '.join(info.cameras)})" if info.cameras else "no frames either"
        raise InputError(
            f"{where} has no state (observation.state), {held}; the model reads a state of "
            f"{model.n_state} entries"
        )
    wrong = []
    if state and info.n_state != model.n_state:
        wrong.append(f"its state has {info.n_state} entries, the model reads {model.n_state}")
    if actions and info.action_names is not None and info.n_action != model.n_action:
        wrong.append(f"its actions have {info.n_action} entries, the model's {model.n_action}")
    if wrong:
        raise InputError(f"dataset {where} does not fit the model: {'; '.join(wrong)}")


def _check_is_checkpoint(path: Path) -> None:
    """`DataError` saying what the directory `path` holds instead of a checkpoint, when it is
    a dataset or the output of an identification; nothing otherwise (a missing file of a
    checkpoint is named where it is read)."""
    if (path / CONFIG_FILE).exists():
        return

    if (path / INFO_PATH).is_file():
        raise DataError(f"{path} is a dataset, not a training run or its checkpoint")
    if (path / IDENTIFICATION).is_file():
        raise DataError(f"{path} holds an identification (invdyn ident), not a trained model")


def checkpoint_in(path: str | os.PathLike[str]) -> Path:
    """The checkpoint directory `path`, or the one inside `path` if it is a run directory
    (which holds one, or the previous one that a save interrupted between its two renames
    left, `load_checkpoint` reads)."""
    inner = Path(path) / RUN_CHECKPOINT
    run = inner.is_dir() or inner.with_name(f".{RUN_CHECKPOINT}.old").is_dir()
    return inner if run else Path(path)


def load_model(
    path: str | os.PathLike[str], *, device: str | torch.device = "cpu"
) -> InverseDynamicsModel:
    """The model of the checkpoint directory `path` (see `load_checkpoint`)."""
    return load_checkpoint(path, device=device).model


def _nan_for_null(data: Any) -> Any:
    """Numbers read back from JSON (`metrics.json`, whose values are all numbers): null, a NaN
    that `invdyn._files.json_text` wrote, as NaN, through dicts and lists."""
    if isinstance(data, dict):
        return {key: _nan_for_null(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_nan_for_null(value) for value in data]
    return math.nan if data is None else data


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise DataError(f"checkpoint file {path} is missing")
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"checkpoint file {path} is corrupt: {exc}") from None
    if not isinstance(data, dict):
        raise DataError(f"checkpoint file {path} is corrupt: not a JSON object")
    return data


def _read_safetensors(path: Path, *, device: str | torch.device) -> dict[str, torch.Tensor]:
    if not path.is_file():
        raise DataError(f"checkpoint file {path} is missing")
    try:
        return load_file(path, device=str(device))
    except Exception as exc:  # safetensors raises its own error type, or OSError
        raise DataError(f"checkpoint file {path} is corrupt: {exc}") from None


def _parse(path: Path, build: Any) -> Any:
    """`build()`, with any error it raises turned into `DataError` naming `path`."""
    try:
        return build()
    except DataError:
        raise
    except (InvdynError, RuntimeError, KeyError, TypeError, ValueError) as exc:
        raise DataError(f"checkpoint file {path} is corrupt: {exc}") from None


def _split_optimizer_state(
    state_dict: dict[str, Any],
) -> tuple[dict[str, torch.Tensor], list[dict[str, Any]]]:
    """An optimiser state dict as (tensors for safetensors, parameter groups for JSON)."""
    tensors = {}
    for index, state in state_dict["state"].items():
        for name, value in state.items():
            if not isinstance(value, torch.Tensor):
                value = torch.tensor(value, dtype=torch.float64)
            tensors[f"{index}.{name}"] = value.detach().cpu().contiguous()
    groups = []
    for group in state_dict["param_groups"]:
        groups.append({k: list(v) if isinstance(v, tuple) else v for k, v in group.items()})
    return tensors, groups


def _join_optimizer_state(
    tensors: Mapping[str, torch.Tensor], groups: list[dict[str, Any]]
) -> dict[str, Any]:
    """The optimiser state dict of `_split_optimizer_state`'s two parts."""
    state: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in tensors.items():
        index, name = key.split(".", 1)
        state.setdefault(int(index), {})[name] = value
    restored = []
    for group in groups:
        if not isinstance(group, dict) or "params" not in group:
            raise ValueError("optimizer parameter group without params")
        restored.append({k: tuple(v) if k == "betas" else v for k, v in group.items()})
    return {"state": state, "param_groups": restored}
