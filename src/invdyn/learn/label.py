"""Labelling action-free datasets with a trained inverse dynamics model.

`label_dataset` reads a LeRobot v3 dataset, predicts the action of every frame that has a full
window ``o_{t-C}, ..., o_t, o_{t+H}, ..., o_{t+H+F}`` and writes a new dataset with the same
frames, in which ``action`` holds the predictions and two per-frame features say how far to
trust them:

  ``action.is_labelled``: (bool) the frame had a full window, so its action is the model's
    prediction for it. The first ``C`` and the last ``H + F`` frames of each episode have none;
    every frame is kept, and those take the action (and deviation) of the nearest labelled
    frame of their episode, flagged False. An episode of at most ``C + H + F`` frames has no
    window at all: its frames take the training mean of the actions (and, for ensembles, the
    training deviation of the actions as their deviation), all flagged False.
  ``action.std``: (n_action floats) the standard deviation of the ensemble members'
    predictions, for ensembles only (a single model's datasets have no such feature). A chunked
    model labels frame ``t`` with the first step of the chunk of window ``t``.

Predictions are float32, the model's precision. The observation spec must match the model's:
the state size (for a model that sees the state), the cameras and their frame size (for a model
of frames), and, when the checkpoint keeps the training data's spec, the state names and fps
too (its action names then name the labelled actions; otherwise they are ``action.0``,
``action.1``, ...). A dataset that already has actions is refused unless ``replace=True``,
which drops the recorded actions (and the features about them, ``action.*``) for the
predictions. The labelled copy keeps everything else: the states, the other per-frame
features (`invdyn.learn.datasets.read_extra_features`: a MuJoCo state, rewards...; images in the
data files and text are left out with a warning), the videos (their mp4 files copied as they
are, with their statistics, decoding nothing), the dataset's metadata
(`invdyn.learn.datasets.read_metadata`, with the checkpoint as ``labelled_by``), the other keys of
its ``info.json`` and its other files (`invdyn.learn.datasets.write_dataset`'s ``keep_from``).

`label_videos` labels plain videos (video files and folders of images, one episode each) with
a model of one camera's frames, through a dataset of them (`invdyn.learn.datasets.import_videos`,
whose metadata names the file of each episode). `label_states` labels episodes of states held
in memory with a model of the state, as `label_dataset` would, and writes nothing.
`label_data`, as ``invdyn label`` does, labels a dataset or plain videos by what it is given,
after checking that it is one of them and that the options fit it.

Several workers: with ``workers > 1`` (or a Ray ``address``) the units are labelled by Ray
actors (`invdyn.learn.cluster`), each saving its units as below; the output is the same.

Resuming: inference runs over units of consecutive episodes (at least `batch_size` windows
each, or one episode), and each finished unit's predictions are saved into the work directory
``<out>.partial/`` next to the output, with a ``manifest.json`` that identifies the inputs (a
hash of the checkpoint's files, of the episode lengths and what the model sees of them, the
states or the video files, `batch_size`, the device type and torch's version: everything the
bits of a prediction depend on). A run that is
killed and restarted with the same arguments computes only the missing units and writes the
same dataset, bit for bit, as an uninterrupted run. A work directory of other inputs is
refused (`InputError`) unless ``overwrite=True``, which discards it with a warning. The output
is written atomically by `invdyn.learn.datasets.write_dataset` and only then is the work directory
removed, so `out_path` is either absent (or the previous dataset) or complete.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray
from tqdm.auto import tqdm

from invdyn._arrays import as_float_array, check_count, hash_arrays
from invdyn._files import INFO_PATH, MODEL_FILE, write_json
from invdyn.errors import DataError, InputError, warn
from invdyn.learn.checkpoint import (
    CONFIG_FILE,
    NORM_STATS_FILE,
    Checkpoint,
    check_sizes,
    checkpoint_in,
    load_checkpoint,
)
from invdyn.learn.config import ModelConfig
from invdyn.learn.datasets import (
    IMAGE_SUFFIXES,
    VIDEO_SUFFIXES,
    Dataset,
    Episode,
    FrameFeature,
    check_size,
    check_target,
    holds_sources,
    import_videos,
    read_dataset,
    read_extra_features,
    read_frame_columns,
    read_info,
    read_metadata,
    write_dataset,
)
from invdyn.learn.keys import ACTION, OBS_IMAGE_PREFIX
from invdyn.learn.models import InverseDynamicsModel
from invdyn.learn.train import deterministic
from invdyn.learn.units import Float32, Inputs, checkpoint_device, label_unit, load_unit, predict

IS_LABELLED = "action.is_labelled"
"""(...,) bool: the frame's action is the model's prediction for its own window."""

ACTION_STD = "action.std"
"""(..., n_action) standard deviation of the ensemble members' predictions."""

MANIFEST_FILE = "manifest.json"
# bump when the work files or the labelling change, so that old work directories are refused
_FORMAT = 1


@dataclasses.dataclass(frozen=True)
class Labels:
    """The labels of frames: of a labelled dataset (`read_labels`), every frame, episode
    after episode, or of one episode (`label_states`).

    Attributes:
      action: (N, n_action) the predicted action of each frame.
      std: (N, n_action) the ensemble's standard deviation, or None for a single model.
      is_labelled: (N,) whether the frame's action is the prediction for its own window.
    """

    action: NDArray[Any]
    std: NDArray[Any] | None
    is_labelled: NDArray[np.bool_]


def label_dataset(
    checkpoint_dir: str | os.PathLike[str],
    dataset_path: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    *,
    batch_size: int = 4096,
    progress: bool = False,
    overwrite: bool = False,
    replace: bool = False,
    workers: int = 1,
    address: str | None = None,
) -> Path:
    """Write a copy of a dataset whose ``action`` is predicted by an inverse dynamics model.

    See the module docstring for the frames that get labels, the extra features and resuming.

    Args:
      checkpoint_dir: the model's checkpoint directory, or a run directory of `train`.
      dataset_path: the dataset to label (LeRobot v3).
      out_path: the labelled dataset to write.
      batch_size: windows per forward pass, >= 1 (part of the identity of a resumed run).
      progress: show a progress bar over the episodes.
      overwrite: replace a dataset at `out_path`, and discard a work directory of other inputs.
      replace: label a dataset that has actions, dropping them for the predictions.
      workers: label the units on this many Ray actors (`invdyn.learn.cluster`); 1 labels
        them in this process. The output does not depend on it.
      address: the Ray cluster to label on (``"auto"``, ``"ray://host:port"``); None starts
        a local instance when `workers` > 1.

    Returns:
      The labelled dataset directory.

    Raises:
      InputError: a bad `batch_size`, a dataset whose state size (or state names or fps, when
        known) differ from the model's, a dataset with actions without `replace`, or a work
        directory of other inputs without `overwrite`.
      DataError: an unreadable checkpoint or dataset.
      FileExistsError: `out_path` exists and `overwrite` is False (or it is not a dataset).
    """
    batch_size = check_count("batch_size", batch_size)
    workers = check_count("workers", workers)
    out = Path(out_path)
    check_target(out, overwrite=overwrite)
    checkpoint_dir = checkpoint_in(checkpoint_dir)
    checkpoint = load_checkpoint(checkpoint_dir, device=checkpoint_device(checkpoint_dir))
    dataset = read_dataset(dataset_path)
    action_names = _check_spec(checkpoint, dataset, replace=replace)
    # the dataset's other features, but those of the recorded actions, kept in the copy
    carried = {
        key: feature
        for key, feature in read_extra_features(dataset.path).items()
        if not key.startswith(f"{ACTION}.")
    }
    model = checkpoint.model
    config = model.config
    lengths = [len(episode) for episode in dataset]
    units = _units(lengths, batch_size, context=config.context, ahead=config.offsets[-1])

    # the work directory: this run's, a previous run's of the same inputs, or refused
    work = out.with_name(f"{out.name}.partial")
    identity = {
        "format": _FORMAT,
        "checkpoint": _checkpoint_fingerprint(Path(checkpoint_dir)),
        "dataset": _inputs_fingerprint(dataset, config),
        "batch_size": batch_size,
        "device": next(model.parameters()).device.type,
        "torch": torch.__version__,
    }
    _open_work(work, identity, overwrite=overwrite)

    # predictions, unit by unit, each saved once finished: here or on Ray's workers
    files = [work / f"unit-{k:06d}.npz" for k in range(len(units))]
    counts = [_n_windows(lengths[a:b], config.context, config.offsets[-1]) for a, b in units]
    saved = [load_unit(file, n, model) for file, n in zip(files, counts)]
    missing = [k for k, unit in enumerate(saved) if unit is None]
    bar = tqdm(total=len(lengths), disable=not progress, unit="episode", desc="labelling")
    bar.update(len(lengths) - sum(units[k][1] - units[k][0] for k in missing))
    num_threads = checkpoint.config.train.num_threads or torch.get_num_threads()
    try:
        if workers > 1 or address is not None:
            from invdyn.learn.cluster import label_units

            cuda = next(model.parameters()).device.type == "cuda"
            label_units(
                checkpoint_dir,
                dataset_path,
                [(*units[k], files[k]) for k in missing],
                batch_size=batch_size,
                num_threads=num_threads,
                workers=workers,
                address=address,
                on_done=bar.update,
                cuda=cuda,
            )
            # the workers' units, from their files
            for k in missing:
                saved[k] = load_unit(files[k], counts[k], model)
        else:
            with deterministic(num_threads):
                for k in missing:
                    saved[k] = label_unit(model, dataset, *units[k], files[k], batch_size)
                    bar.update(units[k][1] - units[k][0])
    finally:
        bar.close()
    predictions = []
    for file, unit in zip(files, saved):
        if unit is None:
            raise DataError(f"{file}: the labels of a finished unit are missing or damaged")
        predictions.append(unit)

    # every frame's label, then the dataset, atomically
    action, std, flags = _fill(model, lengths, predictions)
    episodes = [
        Episode(state=e.state, action=a, timestamp=e.timestamp, task=e.task)
        for e, a in zip(dataset, action)
    ]
    extras = dict(carried)
    extras[IS_LABELLED] = FrameFeature(flags)
    if std is not None:
        extras[ACTION_STD] = FrameFeature(std, names=action_names)
    info = dataset.info
    write_dataset(
        out,
        episodes,
        fps=info.fps,
        state_names=info.state_names,
        action_names=action_names,
        source=info.source,
        overwrite=overwrite,
        extra_features=extras,
        videos={key.removeprefix(OBS_IMAGE_PREFIX): dataset.video(key) for key in info.videos},
        metadata=read_metadata(dataset.path) | {"labelled_by": str(Path(checkpoint_dir).resolve())},
        keep_from=dataset.path,
    )
    shutil.rmtree(work, ignore_errors=True)
    return out


def label_videos(
    checkpoint_dir: str | os.PathLike[str],
    sources: Any,
    out_path: str | os.PathLike[str],
    *,
    size: tuple[int, int] | None = None,
    batch_size: int = 4096,
    progress: bool = False,
    overwrite: bool = False,
    workers: int = 1,
    address: str | None = None,
) -> Path:
    """Label plain videos (mp4 files, folders of images) with a model of one camera's frames.

    The videos become the action-free, state-free episodes of a dataset
    (`invdyn.learn.datasets.import_videos`, at the model's frame rate and camera, in the hidden
    work directory ``.<out>.videos/`` next to the output), which `label_dataset` labels into
    `out_path`, frames included; the work directory is then removed. A killed run resumes as
    `label_dataset`'s.

    Args:
      checkpoint_dir: the checkpoint (or run directory) of a model of frames alone
        (``model.state`` False) and one camera.
      sources: a folder, or a list of mp4 files and image folders (see `import_videos`).
      out_path: the labelled dataset to write.
      size: (width, height) to resize the frames to; None for the size of the model's
        training frames when its checkpoint records it (any other size is refused then),
        else to keep them.
      batch_size, progress, overwrite, workers, address: as `label_dataset`.

    Raises:
      InputError: a model that sees the state or several cameras, videos of another frame
        rate or size than the model's training frames, something other than an earlier
        run's work directory at ``.<out>.videos``, or as `label_dataset` and `import_videos`.
    """
    out = Path(out_path)
    check_target(out, overwrite=overwrite)
    checkpoint_dir = checkpoint_in(checkpoint_dir)
    checkpoint = load_checkpoint(checkpoint_dir)
    config = checkpoint.model.config
    if config.state or len(config.camera_names) != 1:
        raise InputError(
            "plain videos give one camera's frames and no state; the model sees "
            f"{'the state and ' if config.state else ''}cameras {list(config.camera_names)}"
        )
    batch_size = check_count("batch_size", batch_size)
    workers = check_count("workers", workers)
    spec = checkpoint.spec
    trained = None if spec is None else spec.videos.get(OBS_IMAGE_PREFIX + config.camera_names[0])
    if trained is not None:
        trained_size = (int(trained[1]), int(trained[0]))
        if size is not None and check_size(size) != trained_size:
            raise InputError(
                f"size {size[0]}x{size[1]}: the model was trained on frames of "
                f"{trained_size[0]}x{trained_size[1]}, to which the videos are resized"
            )
        size = trained_size
    given = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    imported = _import_folder(out, given)
    try:
        import_videos(
            given,
            imported,
            camera=config.camera_names[0],
            fps=None if spec is None else spec.fps,
            fps_origin="the model was trained at",
            size=size,
            overwrite=True,
            progress=progress,
        )
        return label_dataset(
            checkpoint_dir,
            imported,
            out,
            batch_size=batch_size,
            progress=progress,
            overwrite=overwrite,
            workers=workers,
            address=address,
        )
    finally:
        # imported again by a resumed run; the labels done so far stay in <out>.partial/
        shutil.rmtree(imported, ignore_errors=True)


@dataclasses.dataclass(frozen=True)
class LabelConfig:
    """A labelling of ``invdyn label``.

    Attributes:
      checkpoint: the model's checkpoint directory, or a run directory of `train`.
      data: a LeRobot v3 dataset's folder, or plain videos (a video file, or a folder of
        video files and folders of images) for a model of one camera's frames.
      out: the labelled dataset to write.
      size: plain videos: (width, height) to resize the frames to (`label_videos`).
      replace: a dataset: replace the actions it has (`label_dataset`).
      overwrite, batch_size, workers, address: as `label_dataset`.
      progress: show progress bars.
    """

    checkpoint: str
    data: str
    out: Path
    size: tuple[int, int] | None = None
    replace: bool = False
    overwrite: bool = False
    batch_size: int = 4096
    workers: int = 1
    address: str | None = None
    progress: bool = True


def label_data(config: LabelConfig) -> Path:
    """Label a dataset (`label_dataset`) or plain videos (`label_videos`), as `config.data`
    is one or the other; returns the labelled dataset's path.

    Raises:
      InputError: `config.data` is neither, or is given an option of the other.
    """
    options: dict[str, Any] = {
        "progress": config.progress,
        "overwrite": config.overwrite,
        "workers": config.workers,
        "address": config.address,
        "batch_size": config.batch_size,
    }
    data = Path(config.data)
    if not data.exists():
        raise InputError(f"{data}: no such file or directory")
    if (data / INFO_PATH).is_file():
        if config.size is not None:
            raise InputError("--size is for plain videos; DATA is a dataset")
        return label_dataset(
            config.checkpoint, config.data, config.out, replace=config.replace, **options
        )
    if (data / "meta").is_dir():
        raise InputError(f"{data} has meta/ but no {INFO_PATH}: not a readable dataset")
    if not holds_sources(data):
        raise InputError(
            f"{data} is neither a dataset (the folder of {INFO_PATH}), a video file "
            f"({', '.join(VIDEO_SUFFIXES)}) nor a folder holding video files or folders of "
            f"images ({', '.join(IMAGE_SUFFIXES)})"
        )
    if config.replace:
        raise InputError("--replace is for datasets; plain videos have no actions")
    size = None if config.size is None else check_size(config.size)
    return label_videos(config.checkpoint, config.data, config.out, size=size, **options)


def _import_folder(out: Path, sources: list[Any]) -> Path:
    """Where `label_videos` imports the videos for `out`: the hidden folder ``.<out>.videos``
    next to it (which no folder of sources lists), absent or left by a killed run (a dataset
    of `import_videos`, not labelled: replaced); `InputError` for anything else there, or
    sources in it."""
    imported = out.with_name(f".{out.name}.videos")
    for source in sources:
        path = Path(source).resolve()
        if path == imported.resolve() or imported.resolve() in path.parents:
            raise InputError(f"{source} is inside the work folder {imported}: move it")
    if imported.exists() or imported.is_symlink():
        try:
            metadata = read_metadata(imported)
            ours = metadata.get("importer") == "import_videos" and "labelled_by" not in metadata
        except (DataError, InputError, OSError):
            ours = False
        if not ours:
            raise InputError(
                f"{imported} is in the way: labelling imports the videos there, and it is not "
                "a folder that an earlier run left; move it, or choose another out path"
            )
    return imported


def label_states(
    model: InverseDynamicsModel, states: Sequence[ArrayLike], *, batch_size: int = 4096
) -> list[Labels]:
    """The labels of action-free episodes of states held in memory, as `label_dataset` gives
    them for a dataset's (to float32 rounding: the batches differ; see the module docstring
    for the frames that get labels).

    Args:
      model: a trained model that sees the state and no camera (`invdyn.learn.train.train`'s,
        or `invdyn.learn.checkpoint.load_model`'s); a model of frames labels datasets
        (`label_dataset`) or plain videos (`label_videos`).
      states: (T_i, n_state) the states of each episode, in the training data's units and
        order, at its rate.
      batch_size: windows per forward pass, >= 1.

    Returns:
      one `Labels` per episode: (T_i, n_action) actions, their (T_i, n_action) ensemble
      deviations (None for a single model) and (T_i,) flags.

    Raises:
      InputError: `model` is not a model of the state alone, or an episode is not a finite
        (T, n_state) array of the model's state size.
    """
    batch_size = check_count("batch_size", batch_size)
    if not isinstance(model, InverseDynamicsModel):
        raise InputError(f"model must be an InverseDynamicsModel, got {type(model).__name__}")
    if model.config.camera_names or not model.config.state:
        raise InputError(
            f"the model sees cameras {list(model.config.camera_names)}; label its frames in a "
            "dataset (label_dataset) or in videos (label_videos)"
        )
    episodes = _episode_states(states, model.n_state)
    if not episodes:
        return []
    lengths = [len(episode) for episode in episodes]
    predictions = predict(model, Inputs(lengths, episodes, {}), batch_size)
    actions, stds, flags = _fill(model, lengths, [predictions])
    return [
        Labels(action, None if stds is None else stds[i], flags[i])
        for i, action in enumerate(actions)
    ]


def _episode_states(states: Sequence[ArrayLike], n_state: int) -> list[NDArray[np.float64]]:
    """Each (T_i, n_state) episode of `states` as a float64 array, or `InputError` naming it."""
    if isinstance(states, np.ndarray | Mapping | str | bytes):
        raise InputError(
            f"states must be a sequence of (T, {n_state}) episodes, got {type(states).__name__} "
            "(one episode: [states])"
        )
    episodes = []
    for i, episode in enumerate(states):
        name = f"states[{i}]"
        array = as_float_array(name, episode, n_state)
        if array.ndim != 2:
            raise InputError(f"{name} must have shape (T, {n_state}), got {array.shape}")
        if not np.all(np.isfinite(array)):
            raise InputError(f"{name} has non-finite values")
        episodes.append(array)
    return episodes


def read_labels(path: str | os.PathLike[str]) -> Labels:
    """The labels of a dataset written by `label_dataset`.

    Raises:
      DataError: the dataset is unreadable or has no ``action`` or ``action.is_labelled``.
    """
    info = read_info(path)
    if info.action_names is None:
        raise DataError(f"{path}: has no {ACTION!r}: not a labelled dataset")
    info_json = json.loads((Path(path) / "meta" / "info.json").read_text())
    if IS_LABELLED not in info_json["features"]:
        raise DataError(f"{path}: has no {IS_LABELLED!r}: not written by label_dataset")
    keys = [ACTION, IS_LABELLED] + ([ACTION_STD] if ACTION_STD in info_json["features"] else [])
    columns = read_frame_columns(path, keys)
    return Labels(
        action=columns[ACTION],
        std=columns.get(ACTION_STD),
        is_labelled=columns[IS_LABELLED].astype(bool),
    )


def _check_spec(checkpoint: Checkpoint, dataset: Dataset, *, replace: bool) -> tuple[str, ...]:
    """The action names of the labels, or `InputError` if the dataset does not fit the model."""
    model = checkpoint.model
    config = model.config
    info = dataset.info
    where = str(dataset.path)
    check_sizes(where, info, model, state=config.state, actions=False)
    if info.action_names is not None and not replace:
        raise InputError(
            f"{where} already has actions; pass replace=True (invdyn label --replace) to "
            "replace them with predictions"
        )
    spec = checkpoint.spec
    if spec is None:
        return tuple(f"{ACTION}.{j}" for j in range(model.n_action))
    spec.check(info, where, actions=False, state=config.state, cameras=config.camera_names)
    return spec.action_names


def _n_windows(lengths: list[int], context: int, ahead: int) -> int:
    return sum(max(n - context - ahead, 0) for n in lengths)


def _units(
    lengths: list[int], batch_size: int, *, context: int, ahead: int
) -> list[tuple[int, int]]:
    """Runs ``[first, stop)`` of consecutive episodes, each of >= batch_size windows or ending
    the dataset: the units of work saved and resumed."""
    units = []
    first, count = 0, 0
    for i, n in enumerate(lengths):
        count += max(n - context - ahead, 0)
        if count >= batch_size:
            units.append((first, i + 1))
            first, count = i + 1, 0
    if first < len(lengths):
        units.append((first, len(lengths)))
    return units


def _fill(
    model: InverseDynamicsModel,
    lengths: list[int],
    predictions: list[tuple[Float32, Float32 | None]],
) -> tuple[list[Float32], list[Float32] | None, list[NDArray[np.bool_]]]:
    """Per-episode (T, n_action) actions, deviations and (T,) flags of the windows'
    predictions, with the frames outside every window given their nearest label."""
    context, ahead = model.config.context, model.config.offsets[-1]
    action_all = np.concatenate([a for a, _ in predictions])
    ensemble = model.config.ensemble > 1
    std_all = np.concatenate([s for _, s in predictions if s is not None]) if ensemble else None
    mean = model.stats.action_mean.astype(np.float32)
    spread = model.stats.action_std.astype(np.float32)
    actions, stds, flags = [], [], []
    offset, unlabelled = 0, 0
    for n in lengths:
        count = max(n - context - ahead, 0)
        flag = np.zeros(n, dtype=bool)
        flag[context : context + count] = True
        if count:
            # a frame outside every window takes the nearest window's frame
            rows = offset + np.clip(np.arange(n) - context, 0, count - 1)
            actions.append(action_all[rows])
            if std_all is not None:
                stds.append(std_all[rows])
        else:
            unlabelled += 1
            actions.append(np.tile(mean, (n, 1)))
            stds.append(np.tile(spread, (n, 1)))
        flags.append(flag)
        offset += count
    if unlabelled:
        warn(
            f"{unlabelled} episode(s) have at most context + horizon + future = {context + ahead} "
            "frames and no window: their actions are the training mean, flagged unlabelled"
        )
    return actions, (stds if ensemble else None), flags


def _checkpoint_fingerprint(path: Path) -> str:
    """A hash of the files that fix the model's predictions."""
    digest = hashlib.sha256()
    # load_checkpoint falls back to the previous checkpoint after an interrupted save
    if not path.exists():
        path = path.with_name(f".{path.name}.old")
    for name in (CONFIG_FILE, NORM_STATS_FILE, MODEL_FILE):
        digest.update(name.encode())
        digest.update((path / name).read_bytes())
    return digest.hexdigest()


def _inputs_fingerprint(dataset: Dataset, config: ModelConfig) -> str:
    """A hash of all that the predictions see of a dataset: the episode lengths, the states
    (when the model sees them) and the video files of the model's cameras."""
    digest = hashlib.sha256()
    for episode in dataset:
        digest.update(f"{len(episode)};".encode())
        if config.state and episode.state is not None:
            hash_arrays(digest, [episode.state])
    root = Path(dataset.path)
    keys = {OBS_IMAGE_PREFIX + name for name in config.camera_names}
    for file in sorted(root.rglob("*.mp4")):
        if keys.intersection(file.relative_to(root).parts):
            digest.update(f"{file.relative_to(root)};".encode())
            with open(file, "rb") as stream:
                for block in iter(lambda: stream.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


def _open_work(work: Path, identity: dict[str, Any], *, overwrite: bool) -> None:
    """Create the work directory, or keep the one there if it is of the same inputs."""
    manifest = work / MANIFEST_FILE
    expected = json.loads(json.dumps(identity))
    if work.exists():
        try:
            found = json.loads(manifest.read_text())
        except (OSError, ValueError):
            found = None
        if found == expected:
            return
        if not overwrite:
            raise InputError(
                f"{work} holds partial labels of another checkpoint, dataset or batch size; "
                "delete it or pass overwrite=True (--overwrite on the command line) to discard it"
            )
        warn(f"discarding {work}: partial labels of other inputs")
        shutil.rmtree(work)
    work.mkdir(parents=True)
    write_json(manifest, expected)
