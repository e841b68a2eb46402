"""Datasets on disk: the LeRobot v3 layout, and readers for the tables and files users have.

A dataset is a directory in LeRobot's ``v3.0`` layout, so that LeRobot reads what invdyn writes
and invdyn reads the state, action and videos of what LeRobot writes::

    meta/info.json                                  fps, features (dtype, shape, names), counts
    meta/stats.json                                 min, max, mean, std, count, q01 ... q99
    meta/tasks.parquet                              task (the pandas index), task_index
    meta/episodes/chunk-000/file-000.parquet        one row per episode: length, data file,
                                                    dataset_from_index, dataset_to_index, stats
    data/chunk-{chunk:03d}/file-{file:03d}.parquet  one row per frame: observation.state,
                                                    action, timestamp, frame_index,
                                                    episode_index, index, task_index
    videos/observation.images.<camera>/chunk-{chunk:03d}/file-{file:03d}.mp4
                                                    a camera's frames, episode after episode
                                                    (`invdyn.learn.video`); the episodes'
                                                    spans in the episodes metadata

Frames of several episodes share a data file; a new file starts when the next episode would
take the current one past `Layout.file_size_mb` (uncompressed), and a new chunk directory after
`Layout.chunks_size` files. An episode never spans two files.

``observation.state`` and ``action`` are each optional: action-free data (demonstrations to
label) has no action, and plain videos imported as episodes (`import_videos`) have neither,
only timestamps and the frames of a camera. A dataset needs at least one of state, action and
video.

Precision: LeRobot stores float32. invdyn keeps the dtype it is given, float32 or float64 (any
other numbers become float64), and records it in ``info.json``'s features, because the exact
joint forces of an analytic model, or the small differences between two models, do not survive
float32 (7 significant digits). A dataset written from float64 arrays reads back bit for bit.

`write_dataset` is atomic: it writes a temporary sibling directory, syncs it to disk and renames
it into place, so that a reader sees the old dataset or the new one, never a mix.
`write_collection` writes a simulated collection (`invdyn.sim.collect`) the same way, with
MuJoCo's full state as the extra feature ``observation.mujoco_state`` and how the data was
collected under the ``"invdyn"`` key of ``info.json`` (`read_metadata`).
`read_dataset` checks everything it reads (files, columns, counts, indices, finiteness) and
raises `DataError` naming the file and the problem rather than return wrong data.

pyarrow (and h5py, for `read_robomimic` and `read_minari`) load only when a function needs them:
``pip install 'invdyn[learn]'``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import itertools
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from invdyn._arrays import check_positive, hash_arrays, plain_number, repeated
from invdyn._files import (
    INFO_PATH,
    enclosing_dataset,
    json_text,
    output_mode,
    staging_directory,
    sync_directory,
    sync_tree,
    unmakeable,
)
from invdyn.errors import DataError, InputError, warn
from invdyn.learn.keys import (
    ACTION,
    EPISODE_INDEX,
    FRAME_INDEX,
    INDEX,
    OBS_IMAGE_PREFIX,
    OBS_STATE,
    TASK_INDEX,
    TIMESTAMP,
)
from invdyn.learn.video import (
    IMAGE_SUFFIXES,
    QUANTILES,
    TOLERANCE_S,
    VIDEO_SUFFIXES,
    CameraWriter,
    Frames,
    Source,
    VideoFrames,
    VideoSegment,
    check_fps,
    check_frames,
    find_sources,
    frame_histogram,
    histogram_statistics,
    holds_sources,
    iter_sources,
    scan_sources,
    video_info,
)

Float = NDArray[np.floating[Any]]
Int = NDArray[np.int64]

CODEBASE_VERSION = "v3.0"
STATS_PATH = "meta/stats.json"
# the statistics of a vector feature that stats.json is checked for where it has them
VECTOR_STATISTICS = ("min", "max", "mean", "std")
TASKS_PATH = "meta/tasks.parquet"
EPISODES_DIR = "meta/episodes"
DATA_DIR = "data"
CHUNK_FILE_PATTERN = "chunk-{chunk_index:03d}/file-{file_index:03d}"
DATA_PATH = DATA_DIR + "/" + CHUNK_FILE_PATTERN + ".parquet"
EPISODES_PATH = EPISODES_DIR + "/" + CHUNK_FILE_PATTERN + ".parquet"
VIDEO_PATH = "videos/{video_key}/" + CHUNK_FILE_PATTERN + ".mp4"

MUJOCO_STATE = "observation.mujoco_state"
"""(..., nq + nv) MuJoCo's full state ``(qpos, qvel)``, an extra feature of `write_collection`."""
METADATA_KEY = "invdyn"
"""Key of ``meta/info.json`` under which `write_collection` stores how the data was collected."""
ROBOMIMIC_FPS = 20.0
"""Hz, `read_robomimic`'s default frame rate: robosuite's control rate."""
MINARI_FPS = 1.0
"""Hz, `read_minari`'s default frame rate: timestamps count steps."""
TABLE_SUFFIXES = (".csv", ".npz", ".parquet", ".pq")
"""The file suffixes `read_columns` reads."""
FILE_FORMATS = ("robomimic", "minari", "table", "video")
"""The formats `file_format` tells apart: those of `read_robomimic`, `read_minari` (Minari and
D4RL), `read_columns` and `import_videos`."""

# bookkeeping columns of every frame, int64
_INDEX_COLUMNS = (FRAME_INDEX, EPISODE_INDEX, INDEX, TASK_INDEX)
_INFO_FIELDS = (
    "codebase_version",
    "fps",
    "total_episodes",
    "total_frames",
    "data_path",
    "features",
)
_SEGMENT_FIELDS = ("chunk_index", "file_index", "from_timestamp", "to_timestamp")
_EPISODE_COLUMNS = (
    "episode_index",
    "tasks",
    "length",
    "data/chunk_index",
    "data/file_index",
    "dataset_from_index",
    "dataset_to_index",
)


def _pyarrow() -> tuple[ModuleType, ModuleType]:
    """The ``pyarrow`` and ``pyarrow.parquet`` modules, or an ImportError saying how to install."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as error:
        raise ImportError("invdyn.learn.data needs pyarrow: pip install 'invdyn[learn]'") from error
    return pyarrow, pyarrow.parquet


def _h5py() -> ModuleType:
    """The ``h5py`` module, or an ImportError saying how to install it."""
    try:
        import h5py
    except ImportError as error:
        raise ImportError("reading HDF5 files needs h5py: pip install 'invdyn[learn]'") from error
    return h5py


# episodes and datasets


@dataclasses.dataclass(frozen=True, eq=False)
class Episode:
    """One trajectory: a state and an action per frame, either of which may be missing.

    Action-free data (videos of demonstrations, say) has no action; plain videos imported as
    episodes (`import_videos`) have neither state nor action, only timestamps, and their frames
    live in the dataset's videos. The number of frames T is the state's, or the timestamps'
    when there is no state.

    Arrays are stored read-only, in float32 when given float32 and in float64 otherwise.

    Attributes:
      state: (T, n_state) observed state of each frame (``observation.state``), or None for
        data without a state.
      action: (T, n_action) action of each frame (``action``), or None for action-free data.
      timestamp: (T,) time of each frame in seconds, strictly increasing.
      task: what the episode does, in words ("" for none).

    Raises:
      DataError: a field of the wrong shape, not numbers, not finite, no timestamps, or
        timestamps that do not increase; the message names the field.
    """

    state: Float | None
    action: Float | None
    timestamp: Float
    task: str = ""

    def __post_init__(self) -> None:
        if self.timestamp is None:
            raise DataError(
                "Episode.timestamp is None, expected (T,) times in seconds (an episode "
                "without a state takes its number of frames T from them)"
            )
        timestamp = _float_field("Episode.timestamp", self.timestamp, ndim=1)
        # the number of frames: the state's, else the timestamps'
        if self.state is not None:
            state = _float_field("Episode.state", self.state, ndim=2)
            if state.shape[0] == 0 or state.shape[1] == 0:
                raise DataError(
                    f"Episode.state has shape {state.shape}, expected (T, n) with T, n > 0"
                )
            object.__setattr__(self, "state", state)
            count, basis = state.shape[0], "state"
            if timestamp.shape != (count,):
                raise DataError(
                    f"Episode.timestamp has shape {timestamp.shape}, expected ({count},) as state"
                )
        else:
            count, basis = timestamp.shape[0], "timestamp"
            if count == 0:
                raise DataError("Episode.timestamp is empty: an episode needs T > 0 frames")
        if self.action is not None:
            action = _float_field("Episode.action", self.action, ndim=2)
            if action.shape[0] != count or action.shape[1] == 0:
                raise DataError(
                    f"Episode.action has shape {action.shape}, expected ({count}, n) as {basis}"
                )
            object.__setattr__(self, "action", action)
        steps = np.diff(timestamp)
        if np.any(steps <= 0):
            bad = int(np.flatnonzero(steps <= 0)[0]) + 1
            raise DataError(
                f"Episode.timestamp must increase strictly, but timestamp[{bad}] = "
                f"{timestamp[bad]} follows {timestamp[bad - 1]}"
            )
        object.__setattr__(self, "timestamp", timestamp)
        if not isinstance(self.task, str):
            raise DataError(f"Episode.task must be a string, got {type(self.task).__name__}")

    def __len__(self) -> int:
        return int(self.timestamp.shape[0])


def _float_field(name: str, value: ArrayLike, *, ndim: int) -> Float:
    """`value` as a read-only float32 or float64 array of `ndim` dimensions, finite."""
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as error:
        raise DataError(f"{name} must be an array of numbers: {error}") from None
    if array.dtype.kind not in "biuf":
        raise DataError(f"{name} must be an array of numbers, got dtype {array.dtype}")
    dtype = np.float32 if array.dtype == np.float32 else np.float64
    array = np.array(array, dtype=dtype)
    if array.ndim != ndim:
        expected = "(T,)" if ndim == 1 else "(T, n)"
        raise DataError(f"{name} has shape {array.shape}, expected {expected}")
    finite = _representable(array)
    if not np.all(finite):
        where = tuple(int(i) for i in np.argwhere(~finite)[0])
        raise DataError(f"{name} holds {_unrepresentable} at {where}: {array[where]}")
    array.setflags(write=False)
    return array


# what `_representable` refuses, in words
_unrepresentable = "a value that is not finite or beyond float32's range (3.4e38)"


def _representable(array: np.ndarray) -> NDArray[np.bool_]:
    """Whether each value of `array` is finite and within float32's range, in which the models
    compute (a larger one is a corrupt value, not a measurement)."""
    return np.isfinite(array) & (np.abs(array) <= np.finfo(np.float32).max)


@dataclasses.dataclass(frozen=True)
class DatasetInfo:
    """What ``meta/info.json`` says about a dataset.

    Attributes:
      fps: frames per second.
      state_names: name of each entry of the state; () for data without a state.
      action_names: name of each entry of the action, or None for action-free data.
      source: the robot or simulator the data comes from (LeRobot's ``robot_type``).
      total_episodes: number of episodes.
      total_frames: number of frames, all episodes together.
      tasks: the task of each ``task_index``.
      state_dtype: dtype of the state on disk, "float32" or "float64", or None for data
        without a state.
      action_dtype: dtype of the action on disk, or None for action-free data.
      codebase_version: LeRobot's format version, "v3.0".
      videos: the video features, ``observation.images.<camera>``, each with its frame
        shape (H, W, 3).
    """

    fps: float
    state_names: tuple[str, ...]
    action_names: tuple[str, ...] | None
    source: str = ""
    total_episodes: int = 0
    total_frames: int = 0
    tasks: tuple[str, ...] = ()
    state_dtype: str | None = "float64"
    action_dtype: str | None = None
    codebase_version: str = CODEBASE_VERSION
    videos: dict[str, tuple[int, int, int]] = dataclasses.field(default_factory=dict)

    @property
    def n_state(self) -> int:
        """Size of the state, 0 for data without a state."""
        return len(self.state_names)

    @property
    def n_action(self) -> int:
        """Size of the action, 0 for action-free data."""
        return 0 if self.action_names is None else len(self.action_names)

    @property
    def cameras(self) -> list[str]:
        """The names of the cameras of `videos`, sorted."""
        return sorted(key.removeprefix(OBS_IMAGE_PREFIX) for key in self.videos)


@dataclasses.dataclass(frozen=True)
class Layout:
    """How `write_dataset` splits frames into files, as LeRobot's chunks and files.

    Attributes:
      chunks_size: data files per ``chunk-NNN`` directory, >= 1.
      file_size_mb: a data file takes no further episode once that episode would take it past
        this many megabytes (uncompressed; one episode may exceed it alone), > 0.
      video_file_size_mb: a video file takes no further episode once it has passed this many
        megabytes (encoded), > 0.
    """

    chunks_size: int = 1000
    file_size_mb: float = 100.0
    video_file_size_mb: float = 500.0

    def __post_init__(self) -> None:
        if isinstance(self.chunks_size, bool) or not isinstance(self.chunks_size, int):
            raise InputError(f"Layout.chunks_size must be an integer, got {self.chunks_size!r}")
        if self.chunks_size < 1:
            raise InputError(f"Layout.chunks_size must be >= 1, got {self.chunks_size}")
        check_positive("Layout.file_size_mb", self.file_size_mb)
        check_positive("Layout.video_file_size_mb", self.video_file_size_mb)


class Arrays(NamedTuple):
    """All frames of a dataset, episode after episode.

    Attributes:
      state: (N, n_state) state of every frame, or None for data without a state.
      action: (N, n_action) action of every frame, or None for action-free data.
      episode_index: (N,) episode of every frame.
    """

    state: Float | None
    action: Float | None
    episode_index: Int


@dataclasses.dataclass(frozen=True)
class FrameFeature:
    """An extra per-frame feature for `write_dataset`: one array per episode.

    Attributes:
      values: one (T,) or (T, k) array per episode, in the order of the episodes; numbers
        (finite) or booleans. Stored as bool when every array is bool, int64 when every array
        holds integers, float32 when every array is float32, and float64 otherwise.
      names: name of each of the k entries (one for (T,) arrays), or None.
    """

    values: Sequence[ArrayLike]
    names: Sequence[str] | None = None


class Dataset:
    """A dataset read by `read_dataset`: its info, statistics and episodes, held in memory.

    ``len(dataset)`` is the number of episodes; iterating gives them in order.
    """

    def __init__(
        self,
        path: Path,
        info: DatasetInfo,
        stats: dict[str, dict[str, np.ndarray]],
        frames: dict[str, np.ndarray],
        starts: Int,
        episode_tasks: tuple[str, ...],
        segments: dict[str, list[VideoSegment]] | None = None,
        video_path: str | None = None,
    ) -> None:
        self.path = path
        self.info = info
        self.stats = stats
        self._frames = frames
        self._starts = starts
        self._tasks = episode_tasks
        self._segments = segments or {}
        self._file_ends = {key: _file_ends(spans) for key, spans in self._segments.items()}
        self._videos = VideoFrames(path, video_path or "")

    def __len__(self) -> int:
        return self.info.total_episodes

    def __iter__(self) -> Iterator[Episode]:
        return (self.episode(i) for i in range(len(self)))

    def __repr__(self) -> str:
        info = self.info
        return (
            f"Dataset({str(self.path)!r}, episodes={info.total_episodes}, "
            f"frames={info.total_frames}, n_state={info.n_state}, n_action={info.n_action})"
        )

    def episode(self, i: int) -> Episode:
        """Episode `i` (negative counts from the end)."""
        count = len(self)
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise InputError(f"episode index must be an integer, got {i!r}")
        if not -count <= i < count:
            raise IndexError(f"episode {i} out of range: the dataset has {count} episodes")
        i = int(i) % count
        rows = slice(int(self._starts[i]), int(self._starts[i + 1]))
        state, action = self._frames.get(OBS_STATE), self._frames.get(ACTION)
        return Episode(
            state=None if state is None else state[rows],
            action=None if action is None else action[rows],
            timestamp=self._frames[TIMESTAMP][rows],
            task=self._tasks[i],
        )

    def frames(self, key: str, i: int) -> Frames:
        """(T, H, W, 3) uint8 frames of video feature `key` (``observation.images.<camera>``,
        or the camera's name) in episode `i`, decoded from its mp4 file.

        Raises:
          InputError: no such video feature or episode.
          DataError: the video file is missing or corrupt, holds another number of frames in
            the episode's segment than it has rows (`VideoFrames.frames`) or lacks one at a
            row's time, or holds frames of another size than ``meta/info.json`` declares.
        """
        key = self._video_key(key)
        episode = self.episode(i)
        segment = self._segments[key][int(i) % len(self)]
        frames = self._videos.frames(
            key,
            segment,
            episode.timestamp,
            episode=int(i) % len(self),
            last_in_file=segment.to_timestamp == self._file_ends[key][_file_of(segment)],
        )
        declared = self.info.videos[key]
        if frames.shape[1:] != declared:
            raise DataError(
                f"{self._videos.path(key, segment)}: frames are {frames.shape[1:]} (H, W, 3), "
                f"but {self.path / INFO_PATH} declares {key} as {declared}: write the "
                "dataset again, or correct its features' shape"
            )
        return frames

    def video(self, key: str) -> Sequence[Frames]:
        """Video feature `key`'s frames of each episode, each decoded when indexed (as
        `frames`): ``dataset.video(key)[i]`` is ``dataset.frames(key, i)``. `write_dataset`,
        given it for episodes at this dataset's fps, copies its mp4 files as they are, with
        the statistics this dataset records of them, decoding nothing; at another fps, or
        without those statistics, it encodes the frames again.

        Raises:
          InputError: no such video feature.
        """
        return _DatasetVideo(self, self._video_key(key), len(self))

    def _video_key(self, key: str) -> str:
        """The feature key of video `key` (a feature key or a camera's name), checked."""
        if key in self._segments:
            return key
        if OBS_IMAGE_PREFIX + key in self._segments:
            return OBS_IMAGE_PREFIX + key
        camera = key.removeprefix(OBS_IMAGE_PREFIX)
        raise InputError(
            f"dataset {self.path} has no camera {camera!r}; its cameras are {self.info.cameras}"
        )

    def arrays(self) -> Arrays:
        """All frames: state, action and episode index, as read-only arrays (state and action
        None where the dataset has none)."""
        return Arrays(
            state=self._frames.get(OBS_STATE),
            action=self._frames.get(ACTION),
            episode_index=self._frames[EPISODE_INDEX],
        )


EPISODE_FINGERPRINTS: dict[str, type[np.floating]] = {
    "episode_fingerprints": np.float32,
    "episode_fingerprints_float16": np.float16,
}
"""The names under which a run records the fingerprints of the episodes it learnt from (in
``train_state.json``, an identification's ``report.json``), and the precision each is taken
in: a copy of a dataset in lower precision holds the same episodes."""


def hashed_episodes(arrays: Sequence[tuple[Float, Float]], dtype: type[np.floating] | None) -> str:
    """A hash of the (state, action) episodes' values, in precision `dtype` (None: as they
    are)."""
    digest = hashlib.sha256()
    values = (a for pair in arrays for a in pair)
    hash_arrays(digest, values if dtype is None else (a.astype(dtype) for a in values))
    return digest.hexdigest()


def episode_fingerprints(arrays: Sequence[tuple[Float, Float]]) -> dict[str, list[str]]:
    """By key of `EPISODE_FINGERPRINTS`, the fingerprint of each (state, action) episode's
    values in that precision, so that an episode is recognised in any dataset that holds it,
    wherever it lies there and in whatever precision (`matching_episodes`)."""
    return {
        key: [hashed_episodes([pair], dtype) for pair in arrays]
        for key, dtype in EPISODE_FINGERPRINTS.items()
    }


def matching_episodes(
    prints: Mapping[str, Sequence[str]], wanted: Mapping[str, Iterable[str]]
) -> set[int]:
    """The episodes (indices into the lists of `prints`, `episode_fingerprints`) whose
    fingerprint in some precision is among those of `wanted` by the same key."""
    found: set[int] = set()
    for key, fingerprints in prints.items():
        chosen = set(wanted.get(key, ()))
        found |= {i for i, fingerprint in enumerate(fingerprints) if fingerprint in chosen}
    return found


def _file_of(segment: VideoSegment) -> tuple[int, int]:
    """(chunk index, file index) of the video file that holds `segment`."""
    return segment.chunk_index, segment.file_index


def _file_ends(segments: Sequence[VideoSegment]) -> dict[tuple[int, int], float]:
    """The latest ``to_timestamp`` of `segments` in each of their files (`_file_of`)."""
    ends: dict[tuple[int, int], float] = {}
    for segment in segments:
        file = _file_of(segment)
        ends[file] = max(ends.get(file, -math.inf), segment.to_timestamp)
    return ends


# writing


def write_dataset(
    path: str | os.PathLike[str],
    episodes: Iterable[Episode],
    *,
    fps: float,
    state_names: Sequence[str] | None = None,
    action_names: Sequence[str] | None = None,
    source: str = "",
    overwrite: bool = False,
    layout: Layout | None = None,
    extra_features: dict[str, FrameFeature] | None = None,
    videos: Mapping[str, Sequence[ArrayLike]] | None = None,
    metadata: Mapping[str, Any] | None = None,
    keep_from: str | os.PathLike[str] | None = None,
) -> Path:
    """Write episodes as a LeRobot v3 dataset directory, atomically.

    The files are written into a temporary sibling directory, synced to disk and renamed into
    place; an existing dataset is replaced only after the new one is complete, and nothing
    is left behind when writing fails. See the module docstring for the layout.

    Args:
      path: the dataset directory to create.
      episodes: the episodes, at least one; all with a state or all without, all with actions
        or all without. Each feature is stored in float32 when every episode gives float32,
        and in float64 otherwise. Without a state no ``observation.state`` feature is
        written; a dataset needs a state, actions or `videos` (else there is nothing to store).
      fps: frames per second, > 0: each episode's frames must be 1 / fps apart (LeRobot
        checks them so, to `TOLERANCE_S`).
      state_names: name of each entry of the state, ``n_state`` distinct strings; None (or
        empty) when the episodes have no state.
      action_names: name of each entry of the action; None (or empty) when the episodes have
        no action.
      source: the robot or simulator the data comes from (LeRobot's ``robot_type``).
      overwrite: replace an existing dataset (a directory holding ``meta/info.json``).
      layout: how to split frames into files; None for `Layout()` (LeRobot's defaults).
      extra_features: further per-frame features by key (``"action.std"``, say), written as
        columns of the data files with their info.json feature and statistics; `read_dataset`
        ignores them and `read_frame_columns` reads them.
      videos: camera name -> one (T, H, W, 3) uint8 array of frames per episode (one size per
        camera, an even H and W), written as the mp4 videos of ``observation.images.<camera>``
        (`invdyn.learn.video`); the episodes' timestamps must then be ``k / fps``. A dataset's
        video (`Dataset.video`) at this fps has its files copied instead, in the chunks and
        files they had there (`layout` then does not apply to them).
      metadata: how the data came about (seed, policy, sources), plain JSON data, written into
        ``meta/info.json`` under `METADATA_KEY` (`read_metadata`); None for none.
      keep_from: a dataset that the new one derives from (or replaces: it may be `path`),
        whose other contents it keeps: the files that a written dataset does not hold (a
        dataset card, ``.gitattributes``, files of its own under ``meta/``; not the
        ``data/``, ``videos/`` and ``meta/episodes/`` trees, nor, unless it is `path`, its
        ``.git`` and ``.cache``), links as links, and the keys of its ``meta/info.json`` that
        this module does not write (a license, say; `METADATA_KEY` comes from `metadata`).

    Returns:
      The dataset directory.

    Raises:
      InputError: bad arguments: no episodes, frames other than 1 / fps apart, names that do
        not match the arrays, episodes with and without a state (or actions) mixed, neither
        state, actions nor videos, an extra feature with a reserved key or of the wrong
        length, video frames of the wrong shape, length or size; a `path` inside a dataset.
      FileExistsError: `path` exists, is not empty, and `overwrite` is False or it is not a
        dataset.
      DataError: `keep_from` is not a readable dataset.
    """
    pa, pq = _pyarrow()
    target = Path(path)
    layout = Layout() if layout is None else layout
    if not isinstance(layout, Layout):
        raise InputError(f"layout must be an invdyn.learn.data.Layout, got {layout!r}")
    episodes = list(episodes)
    for k, episode in enumerate(episodes):
        if not isinstance(episode, Episode):
            raise InputError(f"episodes[{k}] must be an Episode, got {type(episode).__name__}")
    if not episodes:
        raise InputError("episodes is empty: a dataset needs at least one episode")
    rate = check_fps(fps)
    if not isinstance(source, str):
        raise InputError(f"source must be a string, got {type(source).__name__}")
    states = _vector_names(episodes, "state", "state_names", state_names)
    actions = _vector_names(episodes, "action", "action_names", action_names)
    extras = _extra_features(extra_features, [len(e) for e in episodes])
    cameras = _video_sources(videos, episodes, rate)
    described = _plain_json(dict(metadata or {}))
    if states is None and actions is None and not cameras:
        raise InputError(
            "the episodes have neither state nor action, and there are no videos: nothing to store"
        )
    _check_rate(episodes, rate)
    check_target(target, overwrite=overwrite)
    # the other keys of the dataset kept from, but its own account of how it was made
    kept_info = {} if keep_from is None else _read_info(Path(keep_from))
    kept_info.pop(METADATA_KEY, None)

    target.parent.mkdir(parents=True, exist_ok=True)
    staging = staging_directory(target)
    try:
        # mkdtemp makes the directory private; give it those of a directory that mkdir makes
        os.chmod(staging, output_mode(directory=True))
        encoded = _encode_videos(staging, cameras, [len(e) for e in episodes], rate, layout)
        tables = _tables(
            pa,
            episodes,
            states,
            actions,
            fps=rate,
            source=source,
            layout=layout,
            extras=extras,
            videos={
                key: (video, _first_video_info(staging, key, video))
                for key, video in encoded.items()
            },
        )
        if described:
            tables[INFO_PATH][METADATA_KEY] = described
        tables[INFO_PATH] = kept_info | tables[INFO_PATH]
        for relative, content in tables.items():
            file = staging / relative
            file.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, (dict, list)):
                file.write_text(json_text(content, indent=4), encoding="utf-8")
            else:
                pq.write_table(content, file)
        if keep_from is not None:
            in_place = target.exists() and Path(keep_from).resolve() == target.resolve()
            _copy_other_files(Path(keep_from), staging, in_place=in_place)
        sync_tree(staging)
        _swap(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _check_rate(episodes: list[Episode], fps: float) -> None:
    """`InputError` unless every episode's frames are 1 / fps apart (`off_rate`), as LeRobot
    reads them."""
    for k, episode in enumerate(episodes):
        off = off_rate(episode.timestamp, fps)
        if off.any():
            i = int(np.argmax(off)) + 1
            step = episode.timestamp[i] - episode.timestamp[i - 1]
            raise InputError(
                f"episode {k}: frames must be 1 / fps = {1 / fps:.6g} s apart (LeRobot reads "
                f"them so), but timestamp[{i}] - timestamp[{i - 1}] = {step:.6g} s"
            )


def _vector_names(
    episodes: list[Episode], field: str, argument: str, value: Sequence[str] | None
) -> tuple[str, ...] | None:
    """The names `value` of the episodes' `field` vectors ("state" or "action"), checked to
    match them, or None when the episodes have no such vector; `InputError` otherwise."""
    names = None if value is None or _is_empty(value) else _names(argument, value)
    present = getattr(episodes[0], field) is not None
    for k, episode in enumerate(episodes):
        array = getattr(episode, field)
        if (array is not None) != present:
            raise InputError(
                f"episodes[{k}] {'has' if array is not None else 'has no'} {field}, unlike "
                f"episodes[0]: all episodes need {field}s, or none"
            )
        if array is None:
            continue
        if names is None:
            raise InputError(f"the episodes have {field}s: give their {argument}")
        if array.shape[1] != len(names):
            raise InputError(
                f"episodes[{k}].{field} has {array.shape[1]} entries per frame, but "
                f"{argument} has {len(names)}"
            )
    if names is not None and not present:
        raise InputError(f"{argument} given, but the episodes have no {field}")
    return names


def _is_empty(value: object) -> bool:
    """Whether `value` is an empty sequence (not a string)."""
    return isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 0


def _names(name: str, value: Sequence[str]) -> tuple[str, ...]:
    """`value` as a non-empty tuple of distinct non-empty strings, or `InputError`."""
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InputError(f"{name} must be a sequence of strings, got {value!r}")
    names = tuple(value)
    if not names:
        raise InputError(f"{name} is empty")
    for entry in names:
        if not isinstance(entry, str) or not entry:
            raise InputError(f"{name} must hold non-empty strings, got {entry!r}")
    if len(set(names)) != len(names):
        raise InputError(f"{name} repeats {', '.join(sorted(repeated(names)))}")
    return names


def _extra_features(
    features: dict[str, FrameFeature] | None, lengths: list[int]
) -> dict[str, tuple[np.ndarray, tuple[str, ...] | None]]:
    """Each extra feature as (all frames concatenated, names), checked, or `InputError`."""
    reserved = {OBS_STATE, ACTION, TIMESTAMP, *_INDEX_COLUMNS}
    out: dict[str, tuple[np.ndarray, tuple[str, ...] | None]] = {}
    for key, feature in (features or {}).items():
        if not isinstance(key, str) or not key or key in reserved:
            raise InputError(f"extra feature key {key!r} is empty or reserved ({sorted(reserved)})")
        if not isinstance(feature, FrameFeature):
            raise InputError(f"extra feature {key!r} must be a FrameFeature, got {feature!r}")
        values = [np.asarray(v) for v in feature.values]
        if len(values) != len(lengths):
            raise InputError(
                f"extra feature {key!r} has {len(values)} arrays for {len(lengths)} episodes"
            )
        kinds = {v.dtype.kind for v in values}
        if not kinds <= set("biuf"):
            raise InputError(f"extra feature {key!r} must hold numbers or booleans")
        dtype: Any
        if kinds == {"b"}:
            dtype = np.bool_
        elif kinds <= set("iu"):
            dtype = np.int64
        elif all(v.dtype == np.float32 for v in values):
            dtype = np.float32
        else:
            dtype = np.float64
        ndims = {v.ndim for v in values}
        widths = {v.shape[1] for v in values if v.ndim == 2}
        if not (ndims == {1} or (ndims == {2} and len(widths) == 1 and 0 not in widths)):
            raise InputError(f"extra feature {key!r} needs (T,) or (T, k) arrays of one k")
        for k, (v, n) in enumerate(zip(values, lengths)):
            if v.shape[0] != n:
                raise InputError(
                    f"extra feature {key!r}: episode {k} has {v.shape[0]} frames, expected {n}"
                )
        array = np.concatenate(values).astype(dtype)
        if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
            raise InputError(f"extra feature {key!r} holds a non-finite value")
        names = None
        if feature.names is not None:
            names = _names(f"extra feature {key!r} names", feature.names)
            if len(names) != (1 if array.ndim == 1 else array.shape[1]):
                raise InputError(f"extra feature {key!r} has {len(names)} names for its entries")
        out[key] = (array, names)
    return out


class _Video(NamedTuple):
    """A video feature being written: its (height, width), each episode's length, statistics
    (`histogram_statistics`) and segment, and the statistics of all its frames."""

    size: tuple[int, int]
    lengths: list[int]
    episode_stats: list[dict[str, Any]]
    stats: dict[str, Any]
    segments: list[VideoSegment]


def _encode_videos(
    root: Path,
    cameras: Mapping[str, Sequence[ArrayLike]],
    lengths: list[int],
    fps: float,
    layout: Layout,
) -> dict[str, _Video]:
    """Encode each camera's frames (`_video_sources`) into the videos of the dataset at
    `root`, episode after episode, checking them: each episode's frames are read once and held
    only while they are encoded, so lazily made frames (rendered, say) stream to the files. A
    dataset's video at this fps whose statistics it records (`Dataset.video`) has its files
    copied instead, without decoding them (`_copy_video`)."""
    copied = {
        key: _copy_video(root, key, per_episode, lengths)
        for key, per_episode in cameras.items()
        if isinstance(per_episode, _DatasetVideo) and per_episode.copyable(fps)
    }
    encoded = [key for key in cameras if key not in copied]
    sizes: dict[str, tuple[int, int]] = {}
    histograms: dict[str, list[Int]] = {key: [] for key in encoded}
    segments: dict[str, list[VideoSegment]] = {key: [] for key in encoded}
    with contextlib.ExitStack() as stack:
        writers = {
            key: stack.enter_context(
                CameraWriter(
                    root,
                    VIDEO_PATH,
                    key,
                    fps,
                    chunks_size=layout.chunks_size,
                    file_size_mb=layout.video_file_size_mb,
                )
            )
            for key in encoded
        }
        for k, length in enumerate(lengths if encoded else []):
            for key in encoded:
                name = f"videos[{key.removeprefix(OBS_IMAGE_PREFIX)!r}][{k}]"
                frames = check_frames(name, cameras[key][k])
                size = sizes.setdefault(key, (frames.shape[1], frames.shape[2]))
                if frames.shape[1:3] != size:
                    raise InputError(
                        f"{name} has frames of {frames.shape[1:]}, but episode 0's are "
                        f"{(*size, 3)}: one size per camera"
                    )
                if len(frames) != length:
                    raise InputError(f"{name} has {len(frames)} frames, episode {k} {length}")
                segments[key].append(writers[key].add(frames))
                histograms[key].append(frame_histogram(frames))
    made = {
        key: _Video(
            sizes[key],
            lengths,
            [histogram_statistics(h, n) for h, n in zip(histograms[key], lengths)],
            histogram_statistics(np.sum(histograms[key], axis=0), sum(lengths)),
            segments[key],
        )
        for key in encoded
    }
    return {key: copied[key] if key in copied else made[key] for key in cameras}


def _copy_video(root: Path, key: str, video: _DatasetVideo, lengths: list[int]) -> _Video:
    """A dataset's video feature copied into the dataset at `root` as feature `key`: its mp4
    files as they are, in their chunks and files, its statistics as it records them."""
    if video.lengths != lengths:
        raise InputError(
            f"videos[{key.removeprefix(OBS_IMAGE_PREFIX)!r}]: the episodes of its dataset have "
            f"{video.lengths} frames, these {lengths}"
        )
    statistics = video.statistics
    assert statistics is not None  # copyable
    files = {(s.chunk_index, s.file_index): s for s in video.segments}
    for (chunk, index), segment in sorted(files.items()):
        target = root / VIDEO_PATH.format(video_key=key, chunk_index=chunk, file_index=index)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(video.file(segment), target)
    return _Video(video.size, lengths, statistics[0], statistics[1], video.segments)


def _video_sources(
    videos: Mapping[str, Sequence[ArrayLike]] | None, episodes: list[Episode], fps: float
) -> dict[str, Sequence[ArrayLike]]:
    """`write_dataset`'s `videos` by feature key, checked but for the frames themselves, which
    `_encode_videos` checks as it reads them."""
    if videos is None:
        return {}
    if not isinstance(videos, Mapping):
        raise InputError(f"videos must map camera names to frames, got {type(videos).__name__}")
    out: dict[str, Sequence[ArrayLike]] = {}
    for camera, per_episode in videos.items():
        check_camera(camera)
        if isinstance(per_episode, np.ndarray) or len(per_episode) != len(episodes):
            raise InputError(
                f"videos[{camera!r}] must hold one frame array per episode ({len(episodes)})"
            )
        out[OBS_IMAGE_PREFIX + camera] = per_episode
    for k, episode in enumerate(episodes if out else []):
        # its frames are 1 / fps apart (`_check_rate`), from the start of its video
        if abs(episode.timestamp[0]) > TOLERANCE_S:
            raise InputError(
                f"episode {k} has video, so its timestamps must be k / fps from 0; "
                f"timestamp[0] is {episode.timestamp[0]:.6g} s"
            )
    return out


def stream_videos(
    episodes: Iterable[Mapping[str, ArrayLike]], count: int
) -> dict[str, Sequence[ArrayLike]]:
    """`write_dataset`'s `videos` from `count` episodes' frames by camera, made one episode
    after another (by `invdyn.sim.render.render_collection`, say): `write_dataset` reads each
    episode's once, in order, so that one episode's frames are held at a time.

    Raises:
      InputError: `episodes` is empty or `count` is not positive; reading the videos out of
        order (anything but `write_dataset` reading them) raises it too.
    """
    iterator = iter(episodes)
    first = next(iterator, None)
    if first is None or count < 1:
        raise InputError(f"stream_videos needs at least one episode, got count={count}")
    stream = _EpisodeStream(itertools.chain([first], iterator))
    return {camera: _LazyVideo(stream, camera, count) for camera in first}


class _EpisodeStream:
    """Episodes' frames by camera read from an iterator in order, the latest one kept."""

    def __init__(self, episodes: Iterator[Mapping[str, ArrayLike]]) -> None:
        self._episodes = episodes
        self._index = -1
        self._current: Mapping[str, ArrayLike] = {}

    def frames(self, camera: str, k: int) -> ArrayLike:
        if k == self._index + 1:
            current = next(self._episodes, None)
            if current is None:
                raise InputError(f"the streamed videos end after {k} episodes")
            self._current, self._index = current, k
        elif k != self._index:
            raise InputError(
                f"streamed videos are read once, in order: episode {k} asked after "
                f"episode {self._index}"
            )
        if camera not in self._current:
            raise InputError(f"streamed episode {k} has no frames of camera {camera!r}")
        return self._current[camera]


class _FramesSource(Protocol):
    def frames(self, key: str, k: int) -> Any: ...


class _LazyVideo(Sequence[Any]):
    """One camera's frames of each of `count` episodes, got from `source` when indexed
    (``source.frames(key, k)``: a `Dataset`, an `_EpisodeStream`)."""

    def __init__(self, source: _FramesSource, key: str, count: int) -> None:
        self._source, self._key, self._count = source, key, count

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, k: int) -> Any:  # type: ignore[override]
        if not -self._count <= k < self._count:  # iteration stops at the end
            raise IndexError(f"episode {k} of {self._count}")
        return self._source.frames(self._key, k % self._count)


class _DatasetVideo(_LazyVideo):
    """A dataset's video feature, episode by episode (`Dataset.video`): its files can be
    copied into a dataset of the same episodes at the same fps (`_copy_video`)."""

    def __init__(self, dataset: Dataset, key: str, count: int) -> None:
        super().__init__(dataset, key, count)
        self._dataset, self._key = dataset, key
        height, width = dataset.info.videos[key][:2]
        self.size = (int(height), int(width))
        self.lengths = np.diff(dataset._starts).tolist()
        self.segments: list[VideoSegment] = dataset._segments[key]

    def copyable(self, fps: float) -> bool:
        """Whether a dataset at `fps` can take the files as they are (`_copy_video`): the same
        fps, and statistics of every episode recorded."""
        return self._dataset.info.fps == fps and self.statistics is not None

    def file(self, segment: VideoSegment) -> Path:
        """The dataset's mp4 file that holds `segment`."""
        return self._dataset._videos.path(self._key, segment)

    @functools.cached_property
    def statistics(self) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
        """Each episode's statistics of the feature and those of all its frames, as the
        dataset records them (``meta/episodes``, ``meta/stats.json``), or None where it
        does not record them all; read once."""
        total = self._dataset.stats.get(self._key)
        episodes = _episode_statistics(self._dataset.path, self._key, len(self))
        if total is None or episodes is None:
            return None
        # the count is read as a float, and written as an integer
        return episodes, {
            stat: (value.astype(np.int64) if stat == "count" else value).tolist()
            for stat, value in total.items()
        }


def _episode_statistics(root: Path, key: str, count: int) -> list[dict[str, Any]] | None:
    """Each of `count` episodes' statistics of feature `key` in the episodes metadata (its
    ``stats/<key>/<stat>`` columns), or None where they are missing, null or unreadable."""
    pa, pq = _pyarrow()
    prefix = f"stats/{key}/"
    rows: list[dict[str, Any]] = []
    try:
        for file in sorted((root / EPISODES_DIR).glob("chunk-*/file-*.parquet")):
            names = [n for n in pq.read_schema(file).names if n.startswith(prefix)]
            table = pq.read_table(file, columns=names)
            rows += [{n.removeprefix(prefix): row[n] for n in names} for row in table.to_pylist()]
    except (OSError, pa.ArrowException):
        return None
    complete = all(row and None not in row.values() for row in rows)
    return rows if len(rows) == count and complete else None


def check_camera(camera: object) -> None:
    """`InputError` unless `camera` is a name of letters, digits, '_' and '-'."""
    if not isinstance(camera, str) or not re.fullmatch(r"[A-Za-z0-9_\-]+", camera):
        raise InputError(
            f"camera name {camera!r} must be letters, digits, '_' or '-' (it names files)"
        )


def _first_video_info(root: Path, key: str, video: _Video) -> dict[str, Any]:
    """The ``info`` of a video feature: that of its first file."""
    first = video.segments[0]
    relative = VIDEO_PATH.format(
        video_key=key, chunk_index=first.chunk_index, file_index=first.file_index
    )
    return video_info(root / relative)


def _video_columns(pa: ModuleType, key: str, video: _Video) -> dict[str, Any]:
    """The episodes-metadata columns of a video feature: its file and span, and statistics."""
    segments = video.segments
    columns = {
        f"videos/{key}/chunk_index": pa.array([s.chunk_index for s in segments], pa.int64()),
        f"videos/{key}/file_index": pa.array([s.file_index for s in segments], pa.int64()),
        f"videos/{key}/from_timestamp": pa.array([s.from_timestamp for s in segments]),
        f"videos/{key}/to_timestamp": pa.array([s.to_timestamp for s in segments]),
    }
    for stat in video.episode_stats[0]:
        values = [entry[stat] for entry in video.episode_stats]
        columns[f"stats/{key}/{stat}"] = pa.array(values)
    return columns


def check_target(target: Path, *, overwrite: bool) -> None:
    """`FileExistsError` unless `target` is absent, an empty directory, or (with `overwrite`)
    a dataset to replace, and `NotADirectoryError` when, absent, it cannot be made (below a
    file, or where nothing can be written): what the writers here check first, for a caller
    to check before long work that ends in a write; `InputError` when it lies inside a
    dataset."""
    enclosing = enclosing_dataset(target)
    if enclosing is not None:
        raise InputError(
            f"{target} lies inside the dataset {enclosing}: write a dataset beside it, not in it"
        )
    if not target.exists() and not target.is_symlink():
        reason = unmakeable(target)
        if reason is not None:
            raise NotADirectoryError(f"{target}: {reason}")
        return
    if target.is_symlink():
        raise FileExistsError(f"{target} is a symbolic link; give the path it points to")
    if target.is_dir() and not any(target.iterdir()):
        return
    if not target.is_dir():
        raise FileExistsError(f"{target} is a file, not a dataset directory")
    if not overwrite:
        raise FileExistsError(
            f"{target} exists and is not empty; pass overwrite=True (--overwrite on the command "
            "line) to replace a dataset"
        )
    if not (target / INFO_PATH).is_file():
        raise FileExistsError(f"{target} is not a dataset (no {INFO_PATH}); refusing to replace it")


def _tables(
    pa: ModuleType,
    episodes: list[Episode],
    states: tuple[str, ...] | None,
    actions: tuple[str, ...] | None,
    *,
    fps: float,
    source: str,
    layout: Layout,
    extras: dict[str, tuple[np.ndarray, tuple[str, ...] | None]] | None = None,
    videos: dict[str, tuple[_Video, dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """Every file of the dataset but the videos: relative path -> parquet table or JSON
    content; `videos` gives each video feature's frames, segments and info."""
    time_dtype = np.result_type(*(e.timestamp.dtype for e in episodes))
    tasks = list(dict.fromkeys(e.task for e in episodes))
    task_of = {task: i for i, task in enumerate(tasks)}
    lengths = np.array([len(e) for e in episodes], dtype=np.int64)
    ends = np.cumsum(lengths)
    starts = ends - lengths

    # every frame, concatenated (float32 only when every episode gives float32)
    vectors = {
        key: (field, names)
        for key, field, names in ((OBS_STATE, "state", states), (ACTION, "action", actions))
        if names is not None
    }
    frames: dict[str, np.ndarray] = {
        key: np.concatenate([getattr(e, field) for e in episodes])
        for key, (field, _) in vectors.items()
    }
    extras = extras or {}
    for key, (array, _) in extras.items():
        frames[key] = array
    frames[TIMESTAMP] = np.concatenate([e.timestamp for e in episodes]).astype(time_dtype)
    frames[FRAME_INDEX] = np.concatenate([np.arange(n, dtype=np.int64) for n in lengths])
    frames[EPISODE_INDEX] = np.repeat(np.arange(len(episodes), dtype=np.int64), lengths)
    frames[INDEX] = np.arange(int(ends[-1]), dtype=np.int64)
    frames[TASK_INDEX] = np.repeat(
        np.array([task_of[e.task] for e in episodes], dtype=np.int64), lengths
    )

    # episodes into files: a new file when the next episode would pass the size budget
    frame_bytes = sum(a.itemsize * (a.size // max(a.shape[0], 1)) for a in frames.values())
    budget = layout.file_size_mb * 1024 * 1024
    file_of = np.empty(len(episodes), dtype=np.int64)
    current, used = 0, 0.0
    for k, n in enumerate(lengths):
        size = float(n) * frame_bytes
        if used > 0 and used + size > budget:
            current, used = current + 1, 0.0
        file_of[k] = current
        used += size
    chunk_of, index_of = np.divmod(file_of, layout.chunks_size)

    files: dict[str, Any] = {}
    for f in range(int(file_of[-1]) + 1):
        members = np.flatnonzero(file_of == f)
        rows = slice(int(starts[members[0]]), int(ends[members[-1]]))
        first = int(members[0])
        relative = DATA_PATH.format(chunk_index=chunk_of[first], file_index=index_of[first])
        files[relative] = _frame_table(pa, {key: a[rows] for key, a in frames.items()})

    # per-episode metadata, with per-episode statistics
    columns: dict[str, Any] = {
        "episode_index": pa.array(np.arange(len(episodes), dtype=np.int64)),
        "tasks": pa.array([[e.task] for e in episodes], type=pa.list_(pa.string())),
        "length": pa.array(lengths),
        "data/chunk_index": pa.array(chunk_of),
        "data/file_index": pa.array(index_of),
        "dataset_from_index": pa.array(starts),
        "dataset_to_index": pa.array(ends),
    }
    per_episode = [
        {key: _statistics(a[s:t]) for key, a in frames.items()}
        for s, t in zip(starts.tolist(), ends.tolist())
    ]
    for key in frames:
        for stat in per_episode[0][key]:
            kind = pa.int64() if stat == "count" else pa.float64()
            values = [entry[key][stat] for entry in per_episode]
            columns[f"stats/{key}/{stat}"] = pa.array(values, type=pa.list_(kind))
    videos = videos or {}
    for key, (video, _) in videos.items():
        columns |= _video_columns(pa, key, video)
    zeros = np.zeros(len(episodes), dtype=np.int64)
    columns["meta/episodes/chunk_index"] = pa.array(zeros)
    columns["meta/episodes/file_index"] = pa.array(zeros)
    files[EPISODES_PATH.format(chunk_index=0, file_index=0)] = pa.table(columns)

    # tasks, written as pandas writes a frame indexed by task (LeRobot reads it with pandas)
    files[TASKS_PATH] = _tasks_table(pa, tasks)
    files[STATS_PATH] = {key: _statistics(a) for key, a in frames.items()} | {
        key: video.stats for key, (video, _) in videos.items()
    }

    def feature(array: np.ndarray, names: Sequence[str] | None) -> dict[str, Any]:
        width = 1 if array.ndim == 1 else array.shape[1]
        return {
            "dtype": str(array.dtype),
            "shape": [width],
            "names": None if names is None else list(names),
        }

    features = {key: feature(frames[key], names) for key, (_, names) in vectors.items()}
    for key, (array, names) in extras.items():
        features[key] = feature(array, names)
    for key, (video, info) in videos.items():
        height, width = video.size
        features[key] = {
            "dtype": "video",
            "shape": [height, width, 3],
            "names": ["height", "width", "channels"],
            "info": info,
        }
    for key in (TIMESTAMP, *_INDEX_COLUMNS):
        features[key] = feature(frames[key], None)
    files[INFO_PATH] = {
        "codebase_version": CODEBASE_VERSION,
        "robot_type": source,
        "total_episodes": len(episodes),
        "total_frames": int(ends[-1]),
        "total_tasks": len(tasks),
        "chunks_size": layout.chunks_size,
        "data_files_size_in_mb": plain_number(layout.file_size_mb),
        "video_files_size_in_mb": plain_number(layout.video_file_size_mb),
        "fps": plain_number(fps),
        "splits": {"train": f"0:{len(episodes)}"},
        "data_path": DATA_PATH,
        "video_path": VIDEO_PATH if videos else None,
        "features": features,
    }
    return files


def _frame_table(pa: ModuleType, frames: dict[str, np.ndarray]) -> Any:
    """A parquet table of frames: vectors as fixed-size lists, scalars and vectors of one
    entry as plain columns (LeRobot reads a feature of shape [1] as a column of scalars)."""
    columns = {}
    for key, array in frames.items():
        if array.ndim == 2 and array.shape[1] == 1:
            columns[key] = pa.array(array[:, 0])
        elif array.ndim == 2:
            flat = pa.array(np.ascontiguousarray(array).reshape(-1))
            columns[key] = pa.FixedSizeListArray.from_arrays(flat, array.shape[1])
        else:
            columns[key] = pa.array(array)
    return pa.table(columns)


def _tasks_table(pa: ModuleType, tasks: list[str]) -> Any:
    """``meta/tasks.parquet``: task_index, with the task as the pandas index (as LeRobot)."""
    table = pa.table(
        {
            "task_index": pa.array(np.arange(len(tasks), dtype=np.int64)),
            "task": pa.array(tasks, type=pa.string()),
        }
    )
    pandas_metadata = {
        "index_columns": ["task"],
        "column_indexes": [
            {
                "name": None,
                "field_name": None,
                "pandas_type": "unicode",
                "numpy_type": "object",
                "metadata": {"encoding": "UTF-8"},
            }
        ],
        "columns": [
            {
                "name": "task_index",
                "field_name": "task_index",
                "pandas_type": "int64",
                "numpy_type": "int64",
                "metadata": None,
            },
            {
                "name": "task",
                "field_name": "task",
                "pandas_type": "unicode",
                "numpy_type": "object",
                "metadata": None,
            },
        ],
        "creator": {"library": "pyarrow", "version": pa.__version__},
        "pandas_version": "2.2.3",
    }
    return table.replace_schema_metadata({b"pandas": json.dumps(pandas_metadata).encode()})


def _statistics(array: np.ndarray) -> dict[str, list[float] | list[int]]:
    """min, max, mean, std (population), count and quantiles of (T,) or (T, n) `array`."""
    values = np.asarray(array, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    stats: dict[str, list[float] | list[int]] = {
        "min": values.min(axis=0).tolist(),
        "max": values.max(axis=0).tolist(),
        "mean": values.mean(axis=0).tolist(),
        "std": values.std(axis=0).tolist(),
        "count": [int(values.shape[0])],
    }
    quantiles = np.quantile(values, list(QUANTILES.values()), axis=0)
    for name, row in zip(QUANTILES, quantiles):
        stats[name] = row.tolist()
    return stats


# the trees that a written dataset holds whole: another dataset's files there are not kept
_WRITTEN_TREES = (DATA_DIR, "videos", EPISODES_DIR)
# a dataset's own version control and caches (a Hugging Face clone's), which a copy does not
# take (it would push to the source's repository), and a dataset replaced in place keeps
_REPOSITORY_TREES = (".git", ".cache")


def _copy_other_files(source: Path, staging: Path, *, in_place: bool) -> None:
    """Keep in `staging` the files of the dataset `source` that the dataset written there does
    not hold, outside `_WRITTEN_TREES` (and `_REPOSITORY_TREES` unless `in_place`), at their
    places: links as links, regular files hard-linked where the dataset replaces `source`
    (`in_place`: its old copy is then deleted) and copied otherwise; nothing else (pipes,
    sockets)."""
    skipped = _WRITTEN_TREES if in_place else _WRITTEN_TREES + _REPOSITORY_TREES
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        destination = staging / relative
        if any(relative.is_relative_to(tree) for tree in skipped) or destination.exists():
            continue
        if path.is_symlink():
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.symlink_to(os.readlink(path))
        elif path.is_file():
            destination.parent.mkdir(parents=True, exist_ok=True)
            _link_or_copy(path, destination, link=in_place)


def _link_or_copy(source: Path, destination: Path, *, link: bool) -> None:
    """`destination` as a hard link to `source` when `link` and the file system allows it,
    else as a copy."""
    if link:
        try:
            os.link(source, destination)
            return
        except OSError:
            pass
    shutil.copy2(source, destination)


def _swap(staging: Path, target: Path) -> None:
    """Move the complete `staging` directory to `target`, replacing what is there."""
    if target.is_dir() and not any(target.iterdir()):
        target.rmdir()
    if not target.exists():
        os.rename(staging, target)
        sync_directory(target.parent)
        return
    # set the old dataset aside, move the new one in, and only then delete the old one
    aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    aside.rmdir()
    os.rename(target, aside)
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(aside, target)
        raise
    sync_directory(target.parent)
    shutil.rmtree(aside, ignore_errors=True)


# collections


def write_collection(
    collection: Any,
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    layout: Layout | None = None,
    videos: Mapping[str, Sequence[ArrayLike]] | None = None,
) -> Path:
    """Write a collection of simulated episodes as a dataset, with MuJoCo's full state.

    Like `write_dataset`, atomically, from any object shaped as `invdyn.sim.collect.Collection`:
    ``episodes`` (each with ``state``, ``action``, ``timestamp`` and an optional
    ``full_state``), ``state_names``, ``action_names``, ``fps``, ``source``, and optionally
    ``full_state_names`` and ``metadata``. When every episode has a full state it is stored as
    the extra feature `MUJOCO_STATE` (``observation.mujoco_state``), named by
    ``full_state_names``, from which `invdyn.learn.evaluate`'s physics oracle recovers the
    applied forces; the metadata (seed, policy, environment, rates) goes into
    ``meta/info.json`` under `METADATA_KEY` (``"invdyn"``), read back by `read_metadata`.

    Args:
      collection: the collection.
      path: the dataset directory to create.
      overwrite: replace an existing dataset.
      layout: how to split frames into files; None for `Layout()`.
      videos: camera name -> each episode's frames, as `write_dataset` takes them (from
        `invdyn.sim.render.render_collection`, say).

    Returns:
      The dataset directory.

    Raises:
      InputError: a collection without the fields above, some episodes with a full state and
        others without, or what `write_dataset` raises.
      FileExistsError: as `write_dataset`.
    """
    try:
        items = list(collection.episodes)
        names = (collection.state_names, collection.action_names)
        fps, source = collection.fps, collection.source
    except (AttributeError, TypeError) as error:
        raise InputError(
            f"collection must have episodes, state_names, action_names, fps and source: {error}"
        ) from None
    try:
        episodes = [Episode(state=e.state, action=e.action, timestamp=e.timestamp) for e in items]
    except AttributeError as error:
        raise InputError(f"collection episodes need state, action and timestamp: {error}") from None
    # the full state, as an extra feature, when every episode has one
    full = [getattr(e, "full_state", None) for e in items]
    extras = None
    if full and all(f is not None for f in full):
        full_names = getattr(collection, "full_state_names", None)
        values = [np.asarray(f) for f in full]
        extras = {MUJOCO_STATE: FrameFeature(values=values, names=full_names)}
    elif any(f is not None for f in full):
        raise InputError("some episodes of the collection have a full_state and others not")
    return write_dataset(
        path,
        episodes,
        fps=fps,
        state_names=names[0],
        action_names=names[1],
        source=source,
        overwrite=overwrite,
        layout=layout,
        extra_features=extras,
        videos=videos,
        metadata=getattr(collection, "metadata", None),
    )


def _plain_json(value: Any) -> Any:
    """`value` as plain JSON data: numpy numbers and arrays as numbers and lists, others as text."""
    if isinstance(value, dict):
        return {str(k): _plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_json(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain_json(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


# plain videos


def import_videos(
    sources: Source | Sequence[Source],
    out: str | os.PathLike[str],
    *,
    camera: str = "video",
    fps: float | None = None,
    fps_origin: str = "the fps asked for is",
    size: tuple[int, int] | None = None,
    overwrite: bool = False,
    progress: bool = False,
) -> Path:
    """Write plain videos and folders of images as a dataset: one episode each, frames only.

    The episodes have neither state nor action (`Episode`), timestamps ``k / fps``, no task,
    and their frames in the video feature ``observation.images.<camera>``; the dataset's
    source (``robot_type``) is ``"video"``, and its metadata (`read_metadata`) lists the file
    or folder of each episode as ``episode_sources``. Frames are not resampled in time: video
    files must share one frame rate (`invdyn.learn.video.scan_sources`). The sources are
    counted first, without decoding, then decoded one at a time into the videos (only one
    source's frames, at the output size, are held), and the dataset is written atomically
    by `write_dataset`.

    Args:
      sources: a folder, or a list of paths: video files (one episode each), or folders in
        which every video file and every folder of images (``*.png``, ``*.jpg``, ``*.webp``...
        by name: `invdyn.learn.video.IMAGE_SUFFIXES`), at any depth, is an episode
        (`invdyn.learn.video.find_sources`).
      out: the dataset directory to create.
      camera: the camera's name: letters, digits, '_' or '-'.
      fps: frames per second, > 0; None to take it from the video files (needed for images
        alone). Every video file must have this rate.
      fps_origin: where `fps` comes from, for the message about a video file of another rate
        (`invdyn.learn.video.scan_sources`).
      size: (width, height), both even, to resize every frame to; None to keep the frames as
        they are, which must then all have one size, with an even width and height.
      overwrite: replace an existing dataset at `out`.
      progress: show a progress bar over the sources (tqdm).

    Returns:
      The dataset directory.

    Raises:
      InputError: bad arguments, nothing to import, images without `fps`, a video file of
        another rate, frames of different sizes without `size`, or of an odd size (the
        message names the file); `out` inside a folder of `sources`.
      DataError: a video or image file that is corrupt, or a video of a variable frame rate;
        the message names the file.
      FileExistsError: as `write_dataset`.
    """
    check_camera(camera)
    target = Path(out)
    check_target(target, overwrite=overwrite)
    given = [sources] if isinstance(sources, str | os.PathLike) else list(sources)
    for folder in (Path(s) for s in given if isinstance(s, str | os.PathLike)):
        if folder.is_dir() and target.resolve().is_relative_to(folder.resolve()):
            raise InputError(
                f"{target} lies inside {folder}, the folder of videos it is imported from: "
                "write it beside the folder, where the folder's next import or labelling "
                "does not find it"
            )
    found = find_sources(sources)
    lengths, rate = scan_sources(found, fps=fps, fps_origin=fps_origin)
    episodes = [
        Episode(state=None, action=None, timestamp=np.arange(n, dtype=np.float64) / rate)
        for n in lengths
    ]
    frames = iter_sources(found, size=size, progress=progress)
    videos = stream_videos(({camera: f} for f in frames), len(found))
    return write_dataset(
        target,
        episodes,
        fps=rate,
        source="video",
        overwrite=overwrite,
        videos=videos,
        metadata={"importer": "import_videos", "episode_sources": [str(p) for p in found]},
    )


# reading


def read_dataset(path: str | os.PathLike[str]) -> Dataset:
    """Read a LeRobot v3 dataset directory: state and action (where it has them) in memory,
    videos when asked (`Dataset.frames`), their files checked to exist.

    A dataset needs a state, an action or a video feature; one without ``observation.state``
    (plain videos, `import_videos`) reads with ``info.state_names == ()`` and episodes whose
    state is None.

    Every file is checked before anything is returned: see the raised errors.

    Args:
      path: the dataset directory.

    Returns:
      The dataset, held in memory.

    Raises:
      DataError: naming the file and the problem: a missing directory or meta file,
        ``info.json`` that is not JSON or lacks a field, an unsupported ``codebase_version``,
        features with neither state, action nor video, no episodes, a truncated or corrupt
        parquet file, a missing column, counts that disagree between ``info.json``, the
        episodes metadata and the data files, frame or episode indices that are not
        contiguous, timestamps other than 1 / fps apart within an episode (`off_rate`),
        vectors of the wrong length, or a value that is null, NaN or infinite.
    """
    pa, pq = _pyarrow()
    root = _dataset_root(path)
    info_json = _read_info(root)
    vectors, videos = _features(root, info_json["features"])
    data_path = info_json["data_path"]
    if not isinstance(data_path, str):
        raise DataError(f"{root / INFO_PATH}: data_path must be a string, got {data_path!r}")

    # tasks, episodes, statistics
    tasks = _read_tasks(pa, pq, root)
    if "total_tasks" in info_json and info_json["total_tasks"] != len(tasks):
        raise DataError(
            f"{root / INFO_PATH}: total_tasks is {info_json['total_tasks']}, but "
            f"{TASKS_PATH} lists {len(tasks)} tasks"
        )
    info = _dataset_info(root, info_json, vectors, videos, tasks)
    total_frames, total_episodes = info.total_frames, info.total_episodes
    episodes = _read_episodes(pa, pq, root)
    lengths = episodes["length"]
    if len(lengths) == 0:
        raise DataError(f"{root}: the dataset has no episodes (nothing to read)")
    if len(lengths) != total_episodes:
        raise DataError(
            f"{root / INFO_PATH}: total_episodes is {total_episodes}, but {EPISODES_DIR} "
            f"describes {len(lengths)} episodes"
        )
    if int(lengths.sum()) != total_frames:
        raise DataError(
            f"{root / INFO_PATH}: total_frames is {total_frames}, but the episodes in "
            f"{EPISODES_DIR} hold {int(lengths.sum())} frames"
        )

    # frames, file by file in the order the episodes use them; every feature that info.json
    # lists outside the videos is a column of each file, read or not
    keys = [*vectors, TIMESTAMP, *_INDEX_COLUMNS]
    declared = [key for key in info_json["features"] if key not in videos]
    widths = {key: feature[0] for key, feature in vectors.items()}
    files = list(
        dict.fromkeys(
            zip(episodes["data/chunk_index"].tolist(), episodes["data/file_index"].tolist())
        )
    )
    parts: dict[str, list[np.ndarray]] = {key: [] for key in keys}
    offset = 0
    for chunk, index in files:
        relative = _format_path(root, data_path, chunk, index)
        members = np.flatnonzero(
            (episodes["data/chunk_index"] == chunk) & (episodes["data/file_index"] == index)
        )
        expected = int(lengths[members].sum())
        first = int(episodes["dataset_from_index"][members[0]])
        if first != offset or members[-1] - members[0] + 1 != len(members):
            raise DataError(
                f"{root / EPISODES_DIR}: the episodes of {relative} are not contiguous or not in "
                f"file order (episode {int(members[0])} starts at frame {first}, expected {offset})"
            )
        table = _read_parquet(pa, pq, root / relative, keys, declared)
        if table.num_rows != expected:
            raise DataError(
                f"{root / relative}: holds {table.num_rows} frames, but {EPISODES_DIR} puts "
                f"{expected} frames of episodes {int(members[0])}..{int(members[-1])} in it"
            )
        for key in keys:
            parts[key].append(_column(pa, root / relative, table, key, widths.get(key)))
        offset += expected
    _check_unreferenced(root, data_path, files)
    frames = {key: np.concatenate(parts[key]) for key in keys}

    # dtypes as info.json declares them, then every index and value checked
    for key, feature in vectors.items():
        frames[key] = frames[key].astype(feature[1], copy=False)
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    _check_frames(root, frames, lengths, starts, len(tasks), info.fps)
    for array in frames.values():
        array.setflags(write=False)

    stats = _read_stats(root, widths)
    episode_tasks = tuple(tasks[int(frames[TASK_INDEX][s])] for s in starts[:-1])
    video_path = info_json.get("video_path") if videos else None
    if videos and not isinstance(video_path, str):
        raise DataError(f"{root / INFO_PATH}: has videos, so video_path must be a template string")
    segments = _read_segments(pa, pq, root, list(videos), total_episodes)
    for key, spans in segments.items():
        for file in dict.fromkeys((s.chunk_index, s.file_index) for s in spans):
            relative = str(video_path).format(
                video_key=key, chunk_index=file[0], file_index=file[1]
            )
            if not (root / relative).is_file():
                raise DataError(f"{root / relative}: missing (a video of {key})")
    return Dataset(root, info, stats, frames, starts, episode_tasks, segments, video_path)


def read_info(path: str | os.PathLike[str]) -> DatasetInfo:
    """What a dataset's ``meta/info.json`` (and ``meta/tasks.parquet``) say, without its frames.

    Raises:
      DataError: as `read_dataset`, for these two files.
    """
    pa, pq = _pyarrow()
    root = _dataset_root(path)
    info_json = _read_info(root)
    vectors, videos = _features(root, info_json["features"])
    return _dataset_info(root, info_json, vectors, videos, _read_tasks(pa, pq, root))


_VectorFeature = tuple[int, np.dtype[Any], tuple[str, ...]]
"""(width, dtype, names) of a vector feature of info.json."""


def _features(
    root: Path, features: dict[str, Any]
) -> tuple[dict[str, _VectorFeature], dict[str, tuple[int, int, int]]]:
    """The state and action features of info.json that are present (by key, state first) and
    the video features' frame shapes, or `DataError` when there is none of them."""
    vectors = {
        key: _vector_feature(root, features, key) for key in (OBS_STATE, ACTION) if key in features
    }
    videos = _video_shapes(root, features)
    _warn_of_unread(root, features, state=OBS_STATE in vectors)
    if not vectors and not videos:
        raise DataError(
            f"{root / INFO_PATH}: features has no {OBS_STATE!r}, no {ACTION!r} and no video "
            f"({OBS_IMAGE_PREFIX}<camera>): nothing to read"
        )
    return vectors, videos


def _warn_of_unread(root: Path, features: dict[str, Any], *, state: bool) -> None:
    """Warn of features that a user may take for the state or cameras, which invdyn does not
    read: images in the data files, and without `state` (``observation.state``) other
    ``observation.*`` vectors."""
    images = [
        key
        for key, feature in features.items()
        if isinstance(feature, dict) and feature.get("dtype") == "image"
    ]
    if images:
        warn(
            f"{root / INFO_PATH}: {images} are images in the data files, which are not read: "
            "cameras are read from videos (dtype video)"
        )
    vectors = [
        key
        for key, feature in features.items()
        if key.startswith("observation.") and _is_vector_feature(feature)
    ]
    if not state and vectors:
        warn(
            f"{root / INFO_PATH}: has no {OBS_STATE!r}, the one state feature that is read: "
            f"{vectors} are not read (write them as one {OBS_STATE})"
        )


def _dataset_info(
    root: Path,
    info_json: dict[str, Any],
    vectors: dict[str, _VectorFeature],
    videos: dict[str, tuple[int, int, int]],
    tasks: list[str],
) -> DatasetInfo:
    """The `DatasetInfo` of checked ``info.json`` fields, features (`_features`) and tasks."""
    state, action = vectors.get(OBS_STATE), vectors.get(ACTION)
    return DatasetInfo(
        fps=_info_number(root, info_json, "fps", positive=True),
        state_names=state[2] if state else (),
        action_names=action[2] if action else None,
        source=str(info_json.get("robot_type") or ""),
        total_episodes=int(_info_number(root, info_json, "total_episodes")),
        total_frames=int(_info_number(root, info_json, "total_frames")),
        tasks=tuple(tasks),
        state_dtype=str(state[1]) if state else None,
        action_dtype=str(action[1]) if action else None,
        codebase_version=str(info_json["codebase_version"]),
        videos=videos,
    )


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """How a dataset was collected: the `METADATA_KEY` object of its ``meta/info.json``.

    Returns:
      The object `write_collection` wrote (seed, policy, environment, rates), or an empty
      dict for a dataset written otherwise.

    Raises:
      DataError: a missing directory or an unreadable ``info.json``, or a metadata entry that
        is not an object.
    """
    root = _dataset_root(path)
    metadata = _read_info(root).get(METADATA_KEY, {})
    if not isinstance(metadata, dict):
        raise DataError(f"{root / INFO_PATH}: {METADATA_KEY} must be an object, got {metadata!r}")
    return metadata


def read_frame_columns(path: str | os.PathLike[str], keys: Sequence[str]) -> dict[str, np.ndarray]:
    """Per-frame columns of a dataset, any feature (those of `FrameFeature` too), in frame order.

    Args:
      path: the dataset directory.
      keys: features of info.json to read.

    Returns:
      key -> (N,) or (N, k) array of every frame, episode after episode, in the dtype the
      data files hold.

    Raises:
      DataError: a key that info.json does not list, a missing or corrupt file or column, or
        frame counts that disagree with the episodes metadata.
    """
    pa, pq = _pyarrow()
    root = _dataset_root(path)
    info_json = _read_info(root)
    features = info_json["features"]
    widths: dict[str, int | None] = {}
    for key in keys:
        if key not in features:
            raise DataError(f"{root / INFO_PATH}: features has no {key!r}")
        shape = features[key].get("shape") if isinstance(features[key], dict) else None
        if not isinstance(shape, list) or len(shape) != 1 or not isinstance(shape[0], int):
            raise DataError(f"{root / INFO_PATH}: features[{key!r}].shape must be [n]")
        widths[key] = shape[0]
    episodes = _read_episodes(pa, pq, root)
    files = list(
        dict.fromkeys(
            zip(episodes["data/chunk_index"].tolist(), episodes["data/file_index"].tolist())
        )
    )
    parts: dict[str, list[np.ndarray]] = {key: [] for key in keys}
    for chunk, index in files:
        relative = _format_path(root, str(info_json["data_path"]), chunk, index)
        members = (episodes["data/chunk_index"] == chunk) & (episodes["data/file_index"] == index)
        table = _read_parquet(pa, pq, root / relative, list(keys))
        expected = int(episodes["length"][members].sum())
        if table.num_rows != expected:
            raise DataError(
                f"{root / relative}: holds {table.num_rows} frames, but {EPISODES_DIR} puts "
                f"{expected} in it"
            )
        for key in keys:
            column_type = table.schema.field(key).type
            # features of shape [1] stored as plain values keep that: (N,)
            scalar = not (
                pa.types.is_list(column_type)
                or pa.types.is_large_list(column_type)
                or pa.types.is_fixed_size_list(column_type)
            )
            width = None if scalar else widths[key]
            parts[key].append(_column(pa, root / relative, table, key, width, booleans=True))
    return {key: np.concatenate(parts[key]) for key in keys}


def read_extra_features(path: str | os.PathLike[str]) -> dict[str, FrameFeature]:
    """A dataset's per-frame features beyond its state, action, timestamps, indices and
    videos (a MuJoCo state, rewards, the flags of labels...), as `write_dataset` takes them
    (``extra_features``): one array per episode, with the names info.json gives their
    entries (when it lists one string per entry). Features that `write_dataset` cannot store
    (not vectors of finite numbers or booleans: images in the data files, text, matrices)
    are left out with a warning that names them.

    Raises:
      DataError: as `read_frame_columns`.
    """
    root = _dataset_root(path)
    features = _read_info(root)["features"]
    standard = {OBS_STATE, ACTION, TIMESTAMP, *_INDEX_COLUMNS}
    others = [
        key
        for key, feature in features.items()
        if key not in standard
        and not (isinstance(feature, dict) and feature.get("dtype") == "video")
    ]
    vectors = [key for key in others if _is_vector_feature(features[key])]
    columns = read_frame_columns(root, vectors)
    kept = [key for key in vectors if columns[key].dtype == bool or np.isfinite(columns[key]).all()]
    left_out = [key for key in others if key not in kept]
    if left_out:
        warn(
            f"{root}: features {left_out} are not vectors of finite numbers or booleans, and are "
            "left out"
        )
    pa, pq = _pyarrow()
    bounds = np.cumsum(_read_episodes(pa, pq, root)["length"])[:-1]
    extras = {}
    for key in kept:
        names = features[key].get("names")
        width = 1 if columns[key].ndim == 1 else columns[key].shape[1]
        listed = isinstance(names, list) and all(isinstance(n, str) for n in names)
        extras[key] = FrameFeature(
            np.split(columns[key], bounds), names=names if listed and len(names) == width else None
        )
    return extras


def _is_vector_feature(feature: object) -> bool:
    """Whether an info.json feature is a per-frame vector of numbers or booleans."""
    if not isinstance(feature, dict):
        return False
    shape, dtype = feature.get("shape"), str(feature.get("dtype", ""))
    numeric = dtype == "bool" or dtype.startswith(("float", "int", "uint"))
    return numeric and isinstance(shape, list) and len(shape) == 1 and isinstance(shape[0], int)


def _dataset_root(path: str | os.PathLike[str]) -> Path:
    """`path` as a dataset directory, or `DataError` saying what it is instead."""
    root = Path(path)
    if not root.is_dir():
        what = "a file" if root.is_file() else "missing"
        raise DataError(f"{root}: {what}, not a dataset directory (the folder of meta/info.json)")
    return root


def _read_json(root: Path, relative: str) -> Any:
    """The JSON content of `root / relative`, or `DataError` naming the file."""
    file = root / relative
    if not file.is_file():
        raise DataError(f"{file}: missing (is {root} a LeRobot v3 dataset?)")
    try:
        with open(file, encoding="utf-8") as stream:
            return json.load(stream)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DataError(f"{file}: not valid JSON: {error}") from None


def _read_info(root: Path) -> dict[str, Any]:
    """``meta/info.json``, with its required fields present and a supported version."""
    info = _read_json(root, INFO_PATH)
    file = root / INFO_PATH
    if not isinstance(info, dict):
        raise DataError(f"{file}: expected a JSON object, got {type(info).__name__}")
    missing = [key for key in _INFO_FIELDS if key not in info]
    if missing:
        raise DataError(f"{file}: missing field(s) {', '.join(missing)}")
    version = info["codebase_version"]
    if not isinstance(version, str) or not re.fullmatch(r"v3\.\d+", version):
        raise DataError(
            f"{file}: unsupported codebase_version {version!r}; invdyn reads LeRobot v3.x "
            f"datasets (convert older ones with LeRobot's convert_dataset_v21_to_v30)"
        )
    if not isinstance(info["features"], dict):
        raise DataError(f"{file}: features must be an object, got {info['features']!r}")
    return info


def _info_number(root: Path, info: dict[str, Any], key: str, *, positive: bool = False) -> float:
    """A number field of info.json: a whole number >= 0, or a positive real for `positive`."""
    value = info[key]
    file = root / INFO_PATH
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise DataError(f"{file}: {key} must be a number, got {value!r}")
    if positive and not value > 0:
        raise DataError(f"{file}: {key} must be positive, got {value!r}")
    if not positive and (value < 0 or not float(value).is_integer()):
        raise DataError(f"{file}: {key} must be a whole number >= 0, got {value!r}")
    return float(value)


def _vector_feature(root: Path, features: dict[str, Any], key: str) -> _VectorFeature:
    """(width, dtype, names) of a vector feature of info.json."""
    file = root / INFO_PATH
    if key not in features:
        raise DataError(f"{file}: features has no {key!r}")
    feature = features[key]
    if not isinstance(feature, dict) or "dtype" not in feature or "shape" not in feature:
        raise DataError(f"{file}: features[{key!r}] needs dtype and shape, got {feature!r}")
    shape = feature["shape"]
    if (
        not isinstance(shape, list)
        or len(shape) != 1
        or isinstance(shape[0], bool)
        or not isinstance(shape[0], int)
        or shape[0] < 1
    ):
        raise DataError(f"{file}: features[{key!r}].shape must be [n] with n >= 1, got {shape!r}")
    try:
        dtype = np.dtype(feature["dtype"])
    except TypeError:
        dtype = None
    if dtype is None or dtype.kind not in "biuf":
        raise DataError(f"{file}: features[{key!r}].dtype {feature['dtype']!r} is not numeric")
    if dtype != np.float32:
        dtype = np.dtype(np.float64)
    width = int(shape[0])
    names = feature.get("names")
    # LeRobot also writes names as {"motors": [...]}
    if isinstance(names, dict) and len(names) == 1:
        names = next(iter(names.values()))
    if isinstance(names, list) and len(names) == width and all(isinstance(n, str) for n in names):
        return width, dtype, tuple(names)
    if names is not None and not isinstance(names, dict):
        raise DataError(f"{file}: features[{key!r}].names must list {width} strings, got {names!r}")
    return width, dtype, tuple(f"{key}.{i}" for i in range(width))


def _video_shapes(root: Path, features: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
    """The video features of info.json and their frame shapes (H, W, 3)."""
    shapes = {}
    for key, feature in features.items():
        if not (isinstance(feature, dict) and feature.get("dtype") == "video"):
            continue
        shape, names = feature.get("shape"), feature.get("names")
        if not (
            isinstance(shape, list)
            and len(shape) == 3
            and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in shape)
        ):
            raise DataError(f"{root / INFO_PATH}: features[{key!r}].shape must be 3 sizes")
        # LeRobot writes [height, width, channels]; some datasets [channels, height, width]
        channels_first = isinstance(names, list) and names[:1] in (["channels"], ["channel"], ["c"])
        height, width, channels = shape[1:] + shape[:1] if channels_first else shape
        if channels != 3:
            raise DataError(f"{root / INFO_PATH}: features[{key!r}] must have 3 channels")
        shapes[key] = (height, width, 3)
    return shapes


def _read_segments(
    pa: ModuleType, pq: ModuleType, root: Path, keys: list[str], count: int
) -> dict[str, list[VideoSegment]]:
    """Each video feature's segment of every episode, from the episodes metadata."""
    if not keys:
        return {}
    files = sorted((root / EPISODES_DIR).glob("chunk-*/file-*.parquet"))
    names = [f"videos/{key}/{field}" for key in keys for field in _SEGMENT_FIELDS]
    tables = [_read_parquet(pa, pq, file, names) for file in files]
    columns = {}
    for name in names:
        parts = [table.column(name) for table in tables]
        if any(part.null_count for part in parts):
            raise DataError(f"{root / EPISODES_DIR}: column {name} holds null values")
        columns[name] = np.concatenate([np.asarray(part.to_numpy()) for part in parts])
    segments = {}
    for key in keys:
        fields = [columns[f"videos/{key}/{field}"] for field in _SEGMENT_FIELDS]
        segments[key] = [
            VideoSegment(int(c), int(f), float(start), float(end))
            for c, f, start, end in zip(*fields)
        ]
        if len(segments[key]) != count:
            raise DataError(f"{root / EPISODES_DIR}: {key} has {len(segments[key])} episodes")
    return segments


def _read_parquet(
    pa: ModuleType, pq: ModuleType, file: Path, columns: list[str], declared: Sequence[str] = ()
) -> Any:
    """The given columns of a parquet file, or `DataError` naming the file and the problem: a
    missing column among `columns` or the `declared` ones (features that info.json lists)."""
    if not file.is_file():
        raise DataError(f"{file}: missing")
    try:
        schema = pq.read_schema(file)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise DataError(f"{file}: not a readable parquet file (truncated?): {error}") from None
    missing = [c for c in dict.fromkeys([*columns, *declared]) if c not in schema.names]
    if missing:
        raise DataError(f"{file}: missing column(s) {', '.join(missing)}")
    try:
        return pq.read_table(file, columns=columns)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise DataError(f"{file}: corrupt parquet file: {error}") from None


def _column(
    pa: ModuleType, file: Path, table: Any, key: str, width: int | None, *, booleans: bool = False
) -> np.ndarray:
    """(N,) numpy values of a scalar column (`width` None), or (N, width) of a column of lists
    of `width` values, or of plain values for a `width` of 1 (LeRobot stores features of shape
    [1] so); numbers, or booleans too with `booleans`. `DataError` for nulls, other types or
    wrong sizes."""
    column = table.column(key).combine_chunks()
    if column.null_count:
        raise DataError(f"{file}: column {key} holds {column.null_count} null value(s)")
    expected = "numbers or booleans" if booleans else "numbers"

    def values_of(values: Any, what: str) -> np.ndarray:
        numeric = pa.types.is_integer(values.type) or pa.types.is_floating(values.type)
        if not (numeric or (booleans and pa.types.is_boolean(values.type))):
            raise DataError(f"{file}: column {key} {what} {values.type}, expected {expected}")
        return np.asarray(values.to_numpy(zero_copy_only=False))

    list_like = pa.types.is_list(column.type) or pa.types.is_large_list(column.type)
    if not (list_like or pa.types.is_fixed_size_list(column.type)):
        if width is None:
            return values_of(column, "has type")
        if width == 1:
            return values_of(column, "has type").reshape(len(column), 1)
        raise DataError(f"{file}: column {key} has type {column.type}, expected a list of {width}")
    if width is None:
        raise DataError(f"{file}: column {key} has type {column.type}, expected {expected}")
    sizes = column.value_lengths().to_numpy(zero_copy_only=False)
    if np.any(sizes != width):
        row = int(np.flatnonzero(sizes != width)[0])
        raise DataError(
            f"{file}: column {key} has {int(sizes[row])} values in row {row}, expected {width} "
            f"as info.json says"
        )
    values = column.flatten()
    if values.null_count:
        raise DataError(f"{file}: column {key} holds {values.null_count} null value(s)")
    return values_of(values, "holds").reshape(len(column), width)


def _read_tasks(pa: ModuleType, pq: ModuleType, root: Path) -> list[str]:
    """Task strings by task_index, from ``meta/tasks.parquet``."""
    file = root / TASKS_PATH
    if not file.is_file():
        raise DataError(f"{file}: missing (is {root} a LeRobot v3 dataset?)")
    try:
        schema = pq.read_schema(file)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise DataError(f"{file}: not a readable parquet file (truncated?): {error}") from None
    # the task is pandas' index: a column named "task", or unnamed
    name = next((n for n in ("task", "__index_level_0__") if n in schema.names), None)
    if name is None or TASK_INDEX not in schema.names:
        raise DataError(f"{file}: needs columns task and task_index, has {schema.names}")
    table = _read_parquet(pa, pq, file, [name, TASK_INDEX])
    texts = table.column(name).to_pylist()
    indices = table.column(TASK_INDEX).to_pylist()
    if sorted(i for i in indices if isinstance(i, int)) != list(range(len(indices))):
        raise DataError(f"{file}: task_index must number the tasks 0..{len(indices) - 1}")
    if not all(isinstance(t, str) for t in texts):
        raise DataError(f"{file}: every task must be a string")
    tasks = [""] * len(texts)
    for index, text in zip(indices, texts):
        tasks[index] = text
    return tasks


def _read_episodes(pa: ModuleType, pq: ModuleType, root: Path) -> dict[str, np.ndarray]:
    """The episodes metadata (without statistics), checked to be contiguous."""
    directory = root / EPISODES_DIR
    files = sorted(directory.glob("chunk-*/file-*.parquet"))
    if not files:
        raise DataError(f"{directory}: missing, or holds no chunk-*/file-*.parquet")
    columns = [c for c in _EPISODE_COLUMNS if c != "tasks"]
    tables = [_read_parquet(pa, pq, file, columns) for file in files]
    episodes: dict[str, np.ndarray] = {}
    for key in columns:
        parts = []
        for file, table in zip(files, tables):
            column = table.column(key)
            if column.null_count or not pa.types.is_integer(column.type):
                raise DataError(f"{file}: column {key} must hold integers without nulls")
            parts.append(np.asarray(column.to_numpy(), dtype=np.int64))
        episodes[key] = np.concatenate(parts)
    where = f"{directory}/*/*.parquet"
    count = len(episodes["episode_index"])
    if not np.array_equal(episodes["episode_index"], np.arange(count)):
        raise DataError(f"{where}: episode_index must run 0, 1, ..., {count - 1} in file order")
    lengths = episodes["length"]
    if np.any(lengths < 1):
        bad = int(np.flatnonzero(lengths < 1)[0])
        raise DataError(f"{where}: episode {bad} has length {int(lengths[bad])}")
    ends = np.cumsum(lengths)
    if not (
        np.array_equal(episodes["dataset_from_index"], ends - lengths)
        and np.array_equal(episodes["dataset_to_index"], ends)
    ):
        bad = int(
            np.flatnonzero(
                (episodes["dataset_from_index"] != ends - lengths)
                | (episodes["dataset_to_index"] != ends)
            )[0]
        )
        raise DataError(
            f"{where}: episode {bad} spans frames [{int(episodes['dataset_from_index'][bad])}, "
            f"{int(episodes['dataset_to_index'][bad])}), but the lengths before it put it at "
            f"[{int(ends[bad] - lengths[bad])}, {int(ends[bad])})"
        )
    return episodes


def _read_stats(root: Path, widths: dict[str, int]) -> dict[str, dict[str, np.ndarray]]:
    """``meta/stats.json`` as feature -> statistic -> array, the min, max, mean and std of
    the vector features of `widths` checked to be finite numbers of the right sizes where the
    file has them. Reading needs none of them: a missing file, or statistics missing from
    it, are warned of and the dataset is read without them."""
    file = root / STATS_PATH
    if not file.exists():
        warn(f"{file}: missing; the dataset is read without it")
        return {}
    content = _read_json(root, STATS_PATH)
    if not isinstance(content, dict):
        raise DataError(f"{file}: expected a JSON object, got {type(content).__name__}")
    stats: dict[str, dict[str, np.ndarray]] = {}
    for key, entry in content.items():
        if not isinstance(entry, dict):
            raise DataError(f"{file}: {key} must map statistics to values, got {entry!r}")
        stats[key] = {}
        for stat, value in entry.items():
            try:
                stats[key][stat] = np.asarray(value, dtype=np.float64)
            except (TypeError, ValueError):
                raise DataError(f"{file}: {key}.{stat} is not numbers: {value!r}") from None
    for key, width in widths.items():
        for stat in VECTOR_STATISTICS:
            value = stats.get(key, {}).get(stat)
            if value is not None and (value.shape != (width,) or not np.all(np.isfinite(value))):
                raise DataError(
                    f"{file}: {stat} of {key} must be {width} finite numbers, got {value.tolist()}"
                )
    missing = _missing_statistics(stats, list(widths))
    if missing:
        warn(f"{file}: no {'; no '.join(missing)}; the dataset is read without them")
    return stats


def _missing_statistics(stats: dict[str, dict[str, np.ndarray]], keys: list[str]) -> list[str]:
    """What `stats` lacks of the `VECTOR_STATISTICS` of each feature of `keys`, one text for
    each feature that lacks any ("min, std of action")."""
    missing = []
    for key in keys:
        lacking = [stat for stat in VECTOR_STATISTICS if stat not in stats.get(key, {})]
        if lacking:
            missing.append(f"{', '.join(lacking)} of {key}")
    return missing


def _format_path(root: Path, template: str, chunk: int, index: int) -> str:
    """A data file path from info.json's template, or `DataError` for a bad template."""
    try:
        return template.format(chunk_index=chunk, file_index=index)
    except (KeyError, IndexError, ValueError) as error:
        raise DataError(f"{root / INFO_PATH}: bad data_path {template!r}: {error}") from None


def _check_unreferenced(root: Path, template: str, files: list[tuple[int, int]]) -> None:
    """`DataError` if the data directory holds a file no episode uses (LeRobot would read it)."""
    if template != DATA_PATH:
        return
    used = {root / _format_path(root, template, c, f) for c, f in files}
    extra = sorted(p for p in (root / DATA_DIR).glob("*/*.parquet") if p not in used)
    if extra:
        raise DataError(f"{extra[0]}: a data file that no episode in {EPISODES_DIR} refers to")


def _check_frames(
    root: Path, frames: dict[str, np.ndarray], lengths: Int, starts: Int, n_tasks: int, fps: float
) -> None:
    """`DataError` unless indices are contiguous, values finite and timestamps 1 / fps apart
    within each episode (`off_rate`)."""
    where = root / DATA_DIR
    total = int(starts[-1])
    episode = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    expected = {
        INDEX: np.arange(total, dtype=np.int64),
        EPISODE_INDEX: episode,
        FRAME_INDEX: np.arange(total, dtype=np.int64) - np.repeat(starts[:-1], lengths),
    }
    for key, values in expected.items():
        found = frames[key]
        if not np.array_equal(found, values):
            row = int(np.flatnonzero(found != values)[0])
            raise DataError(
                f"{where}: {key} is not contiguous: frame {row} (episode {int(episode[row])}) "
                f"has {key} {found[row]}, expected {int(values[row])}"
            )
        frames[key] = values
    task = frames[TASK_INDEX]
    if np.any((task < 0) | (task >= n_tasks)):
        row = int(np.flatnonzero((task < 0) | (task >= n_tasks))[0])
        raise DataError(
            f"{where}: frame {row} has task_index {task[row]}, but {TASKS_PATH} has {n_tasks}"
        )
    frames[TASK_INDEX] = task.astype(np.int64)
    for key in (OBS_STATE, ACTION, TIMESTAMP):
        if key not in frames:
            continue
        finite = _representable(frames[key])
        if not np.all(finite):
            row = int(np.argwhere(~finite)[0][0])
            raise DataError(
                f"{where}: {key} of frame {row} (episode {int(episode[row])}, frame "
                f"{row - int(starts[episode[row]])}) holds {_unrepresentable}: {frames[key][row]}"
            )
    frames[TIMESTAMP] = frames[TIMESTAMP].astype(
        np.float32 if frames[TIMESTAMP].dtype == np.float32 else np.float64, copy=False
    )
    times = frames[TIMESTAMP]
    inside = np.ones(max(total - 1, 0), dtype=bool)
    inside[starts[1:-1] - 1] = False
    bad = np.flatnonzero(inside & off_rate(times, fps))
    if bad.size:
        row = int(bad[0]) + 1
        raise DataError(
            f"{where}: timestamps of episode {int(episode[row])} step by "
            f"{times[row] - times[row - 1]:.6g} s at frame {row - int(starts[episode[row]])}, "
            f"but {INFO_PATH}'s fps = {fps:g} puts frames {1 / fps:.6g} s apart (as LeRobot "
            "checks): a wrong fps, or dropped frames"
        )


def off_rate(timestamp: NDArray[Any], fps: float) -> NDArray[np.bool_]:
    """(T - 1,) which steps between the (T,) `timestamp` are not 1 / `fps`, to LeRobot's
    `TOLERANCE_S` (or the timestamps' own precision, where float32 holds them coarser)."""
    slack = TOLERANCE_S + 2 * np.spacing(np.abs(timestamp[1:]))
    return np.abs(np.diff(timestamp) - 1.0 / fps) > slack


# other formats


def file_format(path: str | os.PathLike[str]) -> str:
    """Which of `FILE_FORMATS` the file at `path` is in, from its name and, for HDF5, its top
    level; the reader of that format checks the rest.

    A ``.csv``, ``.npz`` or ``.parquet`` file (`TABLE_SUFFIXES`) is a ``"table"``
    (`read_columns`); an HDF5 file with a ``data`` group is ``"robomimic"`` (`read_robomimic`);
    another HDF5 file, or a directory holding ``main_data.hdf5`` (a Minari dataset's), is
    ``"minari"`` (`read_minari`, which reads the Minari and D4RL layouts); a video file
    (`VIDEO_SUFFIXES`) or another directory, of videos or folders of images, is ``"video"``
    (`import_videos`).

    Raises:
      DataError: no such file, or a file that is none of these; the message names it.
      InputError: a folder that holds a LeRobot dataset or lies inside one (`holds_sources`).
    """
    file = Path(path)
    if file.is_dir():
        if any(p.is_file() for p in (file / "data" / "main_data.hdf5", file / "main_data.hdf5")):
            return "minari"
        if not holds_sources(file):
            raise DataError(
                f"{file}: neither a Minari dataset (data/main_data.hdf5) nor a folder of videos "
                f"({', '.join(VIDEO_SUFFIXES)}) or folders of images ({', '.join(IMAGE_SUFFIXES)})"
            )
        return "video"
    if file.suffix.lower() in TABLE_SUFFIXES:
        return "table"
    if file.suffix.lower() in VIDEO_SUFFIXES:
        return "video"
    h5py = _h5py()
    if file.is_file() and not h5py.is_hdf5(file):
        raise DataError(
            f"{file}: neither an HDF5 file (robomimic, Minari, D4RL), a table "
            f"({', '.join(TABLE_SUFFIXES)}) nor a video ({', '.join(VIDEO_SUFFIXES)})"
        )
    with _open_hdf5(h5py, file) as handle:
        return "robomimic" if "data" in handle else "minari"


def read_table(
    path: str | os.PathLike[str], *, inputs: Sequence[str], targets: Sequence[str]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Input and target arrays from a table with named columns: CSV, NPZ or parquet.

    `read_columns` of the groups ``"inputs"`` and ``"targets"``, without the columns' names.

    Args:
      path: a ``.csv`` file (a header row, then one row per sample), ``.npz`` or ``.parquet``.
      inputs: names of the input columns, in order.
      targets: names of the target columns, in order.

    Returns:
      (N, n_inputs) inputs and (N, n_targets) targets, float64.

    Raises:
      InputError, DataError: as `read_columns`.
    """
    read = read_columns(path, {"inputs": inputs, "targets": targets})
    return read["inputs"].values, read["targets"].values


class Columns(NamedTuple):
    """Columns of a table (`read_columns`), and the name of each."""

    values: NDArray[np.float64]  # (N, k)
    names: tuple[str, ...]  # (k,) a column's name; <name>.<i> for the k of an (N, k) array


def read_columns(
    path: str | os.PathLike[str], groups: Mapping[str, Sequence[str]]
) -> dict[str, Columns]:
    """Groups of columns of a table with named columns: CSV, NPZ or parquet.

    A name selects the column of that name, or else every column named ``<name>.<anything>``
    in file order (so ``"q"`` selects ``q.joint1, q.joint2`` of an `invdyn.sim.save_csv` file).
    An NPZ array, or a parquet list column, of shape (N, k) counts as k columns, named
    ``<name>.0`` ... (`entry_names`).

    Args:
      path: a ``.csv`` file (a header row, then one row per sample), ``.npz`` or ``.parquet``.
      groups: what each group is, as messages name it (``"inputs"``, ``"--obs-keys"``) ->
        the names of its columns, in order.

    Returns:
      Each group's (N, k) float64 values and the names of its k columns.

    Raises:
      InputError: a group without names, a name repeated, or a column that two names select
        (in one group or two).
      DataError: an unknown format, an unreadable file, no rows, a missing column (the message
        lists the file's columns), or a cell that is empty, not a number or not finite (the
        message names the column and the row).
    """
    file = Path(path)
    wanted = {group: _names(group, names) for group, names in groups.items()}
    if not file.is_file():
        raise DataError(f"{file}: no such file")
    suffix = file.suffix.lower()
    if suffix == ".csv":
        columns = _csv_columns(file)
    elif suffix == ".npz":
        columns = _npz_columns(file)
    elif suffix in (".parquet", ".pq"):
        columns = _parquet_columns(file)
    else:
        raise DataError(f"{file}: unknown table format {suffix!r}; use {', '.join(TABLE_SUFFIXES)}")
    lengths = {name: len(column.values) for name, column in columns.items()}
    if len(set(lengths.values())) > 1:
        raise DataError(f"{file}: columns have different lengths: {lengths}")
    if set(lengths.values()) == {0}:
        raise DataError(f"{file}: the table has no rows")
    selected: dict[str, list[str]] = {}
    chooser: dict[str, str] = {}  # column -> the group and name that selected it
    for group, names in wanted.items():
        selected[group] = []
        for name in names:
            for column in _chosen(file, columns, name):
                if column in chooser:
                    raise InputError(
                        f"{file}: column {column!r} is selected twice, by {chooser[column]} "
                        f"and {group} {name!r}"
                    )
                chooser[column] = f"{group} {name!r}"
                selected[group].append(column)
    return {group: _read(file, columns, group, chosen) for group, chosen in selected.items()}


def entry_names(name: str, width: int) -> tuple[str, ...]:
    """The names of the `width` entries of a vector `name`: ``name`` itself for one entry,
    else ``name.0``, ``name.1`` ..."""
    return (name,) if width == 1 else tuple(f"{name}.{i}" for i in range(width))


class _Column(NamedTuple):
    """A column read from a table: its values, and where to find a bad cell."""

    values: Any  # (N,) or (N, k) numbers, or a list of raw cells
    describe: Any  # row -> "line 7" or "row 5"


def _chosen(file: Path, columns: dict[str, Any], name: str) -> list[str]:
    """The columns that `name` selects: that of the name, else every ``<name>.*`` in order."""
    if name in columns:
        return [name]
    chosen = [c for c in columns if c.startswith(name + ".")]
    if not chosen:
        listed = ", ".join(list(columns)[:40]) + (", ..." if len(columns) > 40 else "")
        raise DataError(f"{file}: no column {name!r} (nor {name}.*); columns: {listed}")
    return chosen


def _read(file: Path, columns: dict[str, Any], group: str, chosen: list[str]) -> Columns:
    """The `chosen` columns of `group`: (N, k) float64 values, checked finite, and names."""
    blocks: list[np.ndarray] = []
    names: list[str] = []
    for column in chosen:
        values, row_name = columns[column]
        array = _numbers(file, f"{group} column {column!r}", values, row_name)
        blocks.append(array.reshape(len(array), -1))
        names += entry_names(column, blocks[-1].shape[1])
    return Columns(np.concatenate(blocks, axis=1), tuple(names))


def _numbers(file: Path, column: str, values: Any, row_name: Any) -> NDArray[np.float64]:
    """`values` as float64, or `DataError` naming the first cell that is not a number, not
    finite or beyond float32's range (`_representable`; in `column`, what the message calls
    the column)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
        array = values.astype(np.float64)
    else:
        cells = list(values)
        array = np.empty(len(cells))
        for row, cell in enumerate(cells):
            try:
                array[row] = float(cell)
            except (TypeError, ValueError):
                shown = "null" if cell is None else repr(cell)
                raise DataError(
                    f"{file}: {column}, {row_name(row)}: {shown} is not a number"
                ) from None
    finite = _representable(array)
    if not np.all(finite):
        row = int(np.argwhere(~finite)[0][0])
        raise DataError(f"{file}: {column}, {row_name(row)}: {_unrepresentable} ({array[row]})")
    return array


def _csv_columns(file: Path) -> dict[str, _Column]:
    """Columns of a CSV file with a header row."""
    pa, _ = _pyarrow()
    import pyarrow.csv as pacsv

    try:
        # only empty cells are null: "nan" is read as NaN, and then refused as not finite
        table = pacsv.read_csv(file, convert_options=pacsv.ConvertOptions(null_values=[""]))
    except (pa.ArrowException, OSError, ValueError) as error:
        raise DataError(f"{file}: not a readable CSV file: {error}") from None

    def line(row: int) -> str:
        return f"line {row + 2}"

    _check_unique_columns(file, table.column_names)
    columns = {}
    for name in table.column_names:
        column = table.column(name)
        if (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)) and (
            column.null_count == 0
        ):
            values: Any = np.asarray(column.to_numpy())
        else:
            # strings, or numbers with empty (null) cells: check cell by cell
            values = ["" if v is None else v for v in column.to_pylist()]
        columns[name] = _Column(values, line)
    return columns


def _check_unique_columns(file: Path, names: Sequence[str]) -> None:
    """`DataError` naming the first of `names` that a table holds more than once."""
    twice = repeated(names)
    if twice:
        raise DataError(f"{file}: column {twice[0]!r} appears {names.count(twice[0])} times")


def _row(i: int) -> str:
    """How an NPZ or parquet file's messages name row `i`."""
    return f"row {i}"


def _npz_columns(file: Path) -> dict[str, _Column]:
    """Arrays of an NPZ file, each (N,) or (N, k)."""
    try:
        with np.load(file, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except Exception as error:  # OSError, ValueError, EOFError, zipfile.BadZipFile, ...
        raise DataError(f"{file}: not a readable NPZ file: {error}") from None

    columns = {}
    for name, array in arrays.items():
        if array.ndim not in (1, 2) or array.dtype.kind not in "biuf":
            raise DataError(
                f"{file}: array {name!r} has shape {array.shape} and dtype {array.dtype}; "
                f"expected (N,) or (N, k) numbers"
            )
        columns[name] = _Column(array, _row)
    return columns


def _parquet_columns(file: Path) -> dict[str, _Column]:
    """Columns of a parquet file: numbers, or lists of k numbers as (N, k)."""
    pa, pq = _pyarrow()
    try:
        names = pq.read_schema(file).names
    except (pa.ArrowException, OSError, ValueError) as error:
        raise DataError(f"{file}: not a readable parquet file (truncated?): {error}") from None
    _check_unique_columns(file, names)
    try:
        table = pq.read_table(file)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise DataError(f"{file}: not a readable parquet file (truncated?): {error}") from None

    columns = {}
    for name in table.column_names:
        column = table.column(name).combine_chunks()
        kind = column.type
        if (
            pa.types.is_list(kind)
            or pa.types.is_large_list(kind)
            or pa.types.is_fixed_size_list(kind)
        ):
            sizes = column.value_lengths().to_numpy(zero_copy_only=False)
            flat = column.flatten()
            if column.null_count or flat.null_count or len(set(sizes.tolist())) > 1:
                raise DataError(f"{file}: list column {name!r} has nulls or rows of unequal size")
            if not (pa.types.is_integer(flat.type) or pa.types.is_floating(flat.type)):
                continue
            width = int(sizes[0]) if len(sizes) else 0
            values: Any = np.asarray(flat.to_numpy(zero_copy_only=False))
            values = values.reshape(len(column), width)
        elif (pa.types.is_integer(kind) or pa.types.is_floating(kind)) and not column.null_count:
            values = np.asarray(column.to_numpy(zero_copy_only=False))
        else:
            values = column.to_pylist()
        columns[name] = _Column(values, _row)
    return columns


class Imported(NamedTuple):
    """Episodes read from a file of another format (`read_robomimic`, `read_minari`), and the
    names of their state's and action's entries, as `write_dataset` takes them."""

    episodes: list[Episode]
    state_names: tuple[str, ...]  # (n_state,)
    action_names: tuple[str, ...] | None  # (n_action,); None for episodes without actions


def read_robomimic(
    path: str | os.PathLike[str],
    *,
    obs_keys: Sequence[str] | None = None,
    filter_key: str | None = None,
    fps: float = ROBOMIMIC_FPS,
) -> Imported:
    """Episodes of a robomimic HDF5 file: ``data/demo_N/obs/<key>`` and ``data/demo_N/actions``.

    The state of a frame is the observations `obs_keys` concatenated in that order, each
    flattened (a (T,) observation gives one entry). Its entries are named after their
    observation, ``<key>.<i>`` (``<key>`` for an observation of one entry; `entry_names`), the
    action's ``action.<i>``. robomimic stores no times: frame k is at ``k / fps``. The task is
    the ``env_name`` of ``data``'s ``env_args`` attribute.

    Args:
      path: the ``.hdf5`` file.
      obs_keys: observations that make the state; None for every low-dimensional one (not
        images), sorted by name.
      filter_key: read only the demos listed in ``mask/<filter_key>`` ("train", "valid", ...).
      fps: control rate of the demos (robosuite's default is 20 Hz).

    Returns:
      One episode per demo, in the order of N, and the entries' names.

    Raises:
      DataError: an unreadable file, a missing group or dataset, an image among `obs_keys`,
        lengths or entries that disagree, or values that are not finite; the message names the
        demo.
    """
    rate = check_fps(fps)
    h5py = _h5py()
    file = Path(path)
    with _open_hdf5(h5py, file) as handle:
        data = handle.get("data")
        if not isinstance(data, h5py.Group):
            raise DataError(f"{file}: no 'data' group (not a robomimic file)")
        demos = _numbered(data.keys(), "demo")
        if filter_key is not None:
            mask = handle.get(f"mask/{filter_key}")
            if not isinstance(mask, h5py.Dataset):
                raise DataError(f"{file}: no filter key mask/{filter_key}")
            listed = {_text(name) for name in mask[()]}
            if not listed:
                raise DataError(f"{file}: mask/{filter_key} lists no demos")
            demos = [d for d in demos if d in listed]
            unknown = listed - set(demos)
            if unknown:
                raise DataError(f"{file}: mask/{filter_key} lists unknown demos {sorted(unknown)}")
        if not demos:
            raise DataError(f"{file}: no demo_N group in 'data'")
        task = _env_name(data.attrs.get("env_args"))
        keys = list(obs_keys) if obs_keys is not None else _low_dim_keys(h5py, file, data[demos[0]])
        if not keys:
            raise DataError(f"{file}: {demos[0]} has no low-dimensional observation")
        read: list[tuple[str, Imported]] = []
        for demo in demos:
            where = f"{file}: data/{demo}"
            group = data[demo]
            actions = _dataset(h5py, group, "actions", where)
            count = actions.shape[0]
            obs = group.get("obs")
            if not isinstance(obs, h5py.Group):
                raise DataError(f"{where}: no 'obs' group (extract observations first)")
            blocks: list[np.ndarray] = []
            names: list[str] = []
            for key in keys:
                values = _dataset(h5py, obs, key, f"{where}/obs")
                if values.ndim > 2:
                    raise DataError(
                        f"{where}/obs/{key}: shape {values.shape} is not low-dimensional"
                    )
                if values.shape[0] != count:
                    raise DataError(
                        f"{where}/obs/{key}: {values.shape[0]} frames, but actions has {count}"
                    )
                blocks.append(values.reshape(count, -1))
                names += entry_names(key, blocks[-1].shape[1])
            samples = group.attrs.get("num_samples")
            if samples is not None and int(samples) != count:
                raise DataError(f"{where}: num_samples is {int(samples)}, but actions has {count}")
            action = actions.reshape(count, -1)
            episode = _episode(where, np.concatenate(blocks, axis=1), action, rate, task)
            action_names = entry_names("action", action.shape[1])
            read.append((where, Imported([episode], tuple(names), action_names)))
    return _joined(read)


def read_minari(path: str | os.PathLike[str], *, fps: float = MINARI_FPS) -> Imported:
    """Episodes of a Minari dataset, or of a D4RL-style HDF5 file.

    Minari (``data/main_data.hdf5``): groups ``episode_N`` with ``observations`` (T + 1
    frames: the last, after the last action, is dropped; or T, as some writers store them)
    and ``actions`` (T); a dictionary
    observation (a group) is flattened, its keys sorted, without the entries that are not
    low-dimensional numbers (images, text), which a warning names. D4RL: flat ``observations``,
    ``actions``, and ``terminals`` / ``timeouts`` that end an episode at their true entries.
    Neither stores times: frame k is at ``k / fps``. The state's entries are named
    ``observation.<i>``, or after their key in a dictionary, ``<key>.<i>`` (``<key>`` for one
    entry; `entry_names`); the action's ``action.<i>`` likewise.

    Args:
      path: the ``.hdf5`` file, or a Minari dataset directory holding ``data/main_data.hdf5``.
      fps: steps per second of the environment (1 makes timestamps count steps).

    Returns:
      The episodes in order (Minari: by N), and the entries' names.

    Raises:
      DataError: an unreadable file, neither layout, lengths or entries that disagree, an
        empty episode, a dictionary observation of no low-dimensional numbers, or values that
        are not finite; the message names the episode.
    """
    rate = check_fps(fps)
    h5py = _h5py()
    file = Path(path)
    if file.is_dir():
        candidates = [file / "data" / "main_data.hdf5", file / "main_data.hdf5"]
        file = next((c for c in candidates if c.is_file()), candidates[0])
    with _open_hdf5(h5py, file) as handle:
        names = _numbered(handle.keys(), "episode")
        task = _text(handle.attrs.get("dataset_id", ""))
        if names:
            read: list[tuple[str, Imported]] = []
            skipped: dict[str, str] = {}
            for name in names:
                where = f"{file}: {name}"
                group = handle[name]
                actions, action_names = _flattened(h5py, group, "actions", where, "action")
                observations, state_names = _flattened(
                    h5py, group, "observations", where, "observation", skipped
                )
                count = actions.shape[0]
                if observations.shape[0] == count + 1:
                    observations = observations[:count]
                elif observations.shape[0] != count:
                    raise DataError(
                        f"{where}: {observations.shape[0]} observations for {count} actions "
                        f"(expected {count + 1}, or {count})"
                    )
                steps = group.attrs.get("total_steps")
                if steps is not None and int(steps) != count:
                    raise DataError(
                        f"{where}: total_steps is {int(steps)}, but actions has {count}"
                    )
                episode = _episode(where, observations, actions, rate, task)
                read.append((where, Imported([episode], state_names, action_names)))
            if skipped:
                warn(
                    f"{file}: observations {_listed(dict(sorted(skipped.items())))}: left out "
                    "of the state, which holds low-dimensional numbers (not images, nor text)"
                )
            return _joined(read)
        if "observations" in handle and "actions" in handle:
            return _d4rl(h5py, handle, file, rate)
    raise DataError(f"{file}: neither Minari (episode_N groups) nor D4RL (observations, actions)")


def _d4rl(h5py: ModuleType, handle: Any, file: Path, rate: float) -> Imported:
    """Episodes of a D4RL file, split after each true terminal or timeout."""
    where = str(file)
    observations, state_names = _flattened(h5py, handle, "observations", where, "observation")
    actions, action_names = _flattened(h5py, handle, "actions", where, "action")
    count = observations.shape[0]
    if actions.shape[0] != count:
        raise DataError(f"{file}: {count} observations but {actions.shape[0]} actions")
    ends = np.zeros(count, dtype=bool)
    if "terminals" not in handle and "timeouts" not in handle:
        warn(f"{file}: no terminals or timeouts to end episodes at: read as one of {count} steps")
    for key in ("terminals", "timeouts"):
        if key in handle:
            flags = _dataset(h5py, handle, key, where).reshape(-1)
            if flags.shape[0] != count:
                raise DataError(f"{file}: {key} has {flags.shape[0]} entries, expected {count}")
            ends |= flags.astype(bool)
    stops = np.flatnonzero(ends) + 1
    if not stops.size or stops[-1] != count:
        stops = np.append(stops, count)
    episodes = []
    start = 0
    for k, stop in enumerate(stops.tolist()):
        episodes.append(
            _episode(
                f"{file}: episode {k} (rows {start}-{stop - 1})",
                observations[start:stop],
                actions[start:stop],
                rate,
                "",
            )
        )
        start = stop
    return Imported(episodes, state_names, action_names)


def _open_hdf5(h5py: ModuleType, file: Path) -> Any:
    """An open, read-only HDF5 file, or `DataError`."""
    if not file.is_file():
        raise DataError(f"{file}: no such file")
    try:
        return h5py.File(file, "r")
    except OSError as error:
        raise DataError(f"{file}: not a readable HDF5 file: {error}") from None


def _numbered(names: Iterable[str], prefix: str) -> list[str]:
    """Names ``<prefix>_N``, sorted by N."""
    pattern = re.compile(rf"{prefix}_(\d+)")
    found = [(int(m.group(1)), n) for n in names if (m := pattern.fullmatch(n))]
    return [n for _, n in sorted(found)]


def _text(value: Any) -> str:
    """An HDF5 attribute or cell as a string."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, np.ndarray) and value.shape == ():
        return _text(value[()])
    return str(value)


def _env_name(env_args: Any) -> str:
    """``env_name`` of robomimic's JSON ``env_args`` attribute, or ""."""
    if env_args is None:
        return ""
    try:
        parsed = json.loads(_text(env_args))
    except json.JSONDecodeError:
        return ""
    return str(parsed.get("env_name", "")) if isinstance(parsed, dict) else ""


def _low_dim_keys(h5py: ModuleType, file: Path, demo: Any) -> list[str]:
    """Sorted names of the numeric observations of `demo` with at most two dimensions."""
    obs = demo.get("obs")
    if not isinstance(obs, h5py.Group):
        raise DataError(f"{file}: {demo.name} has no 'obs' group (extract observations first)")
    return sorted(key for key, item in obs.items() if _low_dimensional(h5py, item))


def _dataset(h5py: ModuleType, group: Any, key: str, where: str) -> np.ndarray:
    """The numeric dataset `key` of `group` (of frames along its first axis), read into memory,
    or `DataError`."""
    item = group.get(key)
    if not isinstance(item, h5py.Dataset):
        raise DataError(f"{where}: no dataset {key!r}")
    if item.dtype.kind not in "biuf" or item.ndim == 0:
        raise DataError(f"{where}/{key}: dtype {item.dtype}, shape {item.shape} is not numbers")
    if item.shape[0] == 0:
        raise DataError(f"{where}/{key}: holds no frames (shape {item.shape})")
    return np.asarray(item[()])


def _flattened(
    h5py: ModuleType,
    group: Any,
    key: str,
    where: str,
    name: str,
    skipped: dict[str, str] | None = None,
) -> tuple[np.ndarray, tuple[str, ...]]:
    """(T, n) values of `key` in `group`, and the name of each of their n entries: a dataset's
    are those of `name` (`entry_names`); a group (a dictionary space) concatenates its
    datasets, keys sorted, each named after its path in the group (``goal.x.0``). With
    `skipped`, the group's datasets that are not low-dimensional numbers (images, text) are
    left out, and added to it (name -> what it holds)."""
    item = group.get(key)
    if not isinstance(item, h5py.Group):
        values = _dataset(h5py, group, key, where)
        if values.ndim > 2:
            raise DataError(
                f"{where}/{key}: shape {values.shape} is not low-dimensional (images?); a "
                "frame's values must be a vector"
            )
        values = values.reshape(values.shape[0], -1)
        return values, entry_names(name, values.shape[1])
    where, paths = f"{where}/{key}", _dataset_paths(h5py, item)
    kept = [path for path in paths if skipped is None or _low_dimensional(h5py, item[path])]
    left_out = {
        path.replace("/", "."): f"{item[path].dtype}, shape {item[path].shape}"
        for path in paths
        if path not in kept
    }
    if not kept:
        raise DataError(
            f"{where}: no low-dimensional numbers, only {_listed(left_out)}"
            if left_out
            else f"{where}: an empty group"
        )
    if skipped is not None:
        for entry, what in left_out.items():
            skipped.setdefault(entry, what)
    leaves = [_dataset(h5py, item, path, where) for path in kept]
    sizes = {values.shape[0] for values in leaves}
    if len(sizes) > 1:
        raise DataError(f"{where}: entries of different lengths {sorted(sizes)}")
    blocks = [values.reshape(values.shape[0], -1) for values in leaves]
    names = [
        entry_names(path.replace("/", "."), block.shape[1])
        for path, block in zip(kept, blocks, strict=True)
    ]
    return np.concatenate(blocks, axis=1), tuple(itertools.chain.from_iterable(names))


def _dataset_paths(h5py: ModuleType, group: Any) -> list[str]:
    """Paths of the datasets in `group` and in the groups within, keys sorted at each level."""
    paths = []
    for key in sorted(group.keys()):
        item = group[key]
        if isinstance(item, h5py.Group):
            paths += [f"{key}/{path}" for path in _dataset_paths(h5py, item)]
        else:
            paths.append(key)
    return paths


def _low_dimensional(h5py: ModuleType, item: Any) -> bool:
    """Whether `item` is a dataset of numbers with at most one dimension a frame (not an image,
    nor text)."""
    return isinstance(item, h5py.Dataset) and item.ndim <= 2 and item.dtype.kind in "biuf"


def _listed(described: Mapping[str, str]) -> str:
    """``name (what), ...`` of `described`, in its order."""
    return ", ".join(f"{name} ({what})" for name, what in described.items())


def _joined(read: list[tuple[str, Imported]]) -> Imported:
    """The episodes of `read` (where in the file, what was read there) with the names they
    share, or `DataError` naming the first place whose state or action entries differ from
    the first's (a dataset is one robot's)."""
    first = read[0][1]
    for where, each in read:
        for field in ("state", "action"):
            names, expected = getattr(each, f"{field}_names"), getattr(first, f"{field}_names")
            if len(names) != len(expected):
                raise DataError(
                    f"{where}: {field} has {len(names)} entries, but the first episode's has "
                    f"{len(expected)}"
                )
            if names != expected:
                raise DataError(
                    f"{where}: {field} entries {list(names)} differ from the first "
                    f"episode's {list(expected)}"
                )
    episodes = [episode for _, each in read for episode in each.episodes]
    return Imported(episodes, first.state_names, first.action_names)


def _episode(where: str, state: np.ndarray, action: np.ndarray, rate: float, task: str) -> Episode:
    """An `Episode` with timestamps k / rate, or `DataError` naming `where`."""
    if state.shape[0] == 0:
        raise DataError(f"{where}: an empty episode")
    try:
        return Episode(
            state=state,
            action=action,
            timestamp=np.arange(state.shape[0], dtype=np.float64) / rate,
            task=task,
        )
    except DataError as error:
        raise DataError(f"{where}: {error}") from None
