"""Episodes and datasets: the types that every format reads into and the reader returns.

An `Episode` is one trajectory (state, action, timestamps, task); a format's reader returns
its episodes as `Imported` (`invdyn.learn.datasets.formats`), which
`invdyn.learn.datasets.lerobot_write.write_dataset` writes; `Dataset` is a LeRobot v3 dataset
read into memory (`invdyn.learn.datasets.lerobot_read.read_dataset`), with its `DatasetInfo`.
Fingerprints of episodes (`episode_fingerprints`) recognise an episode in any dataset that
holds it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from invdyn._arrays import hash_arrays, repeated
from invdyn._files import INFO_PATH
from invdyn.errors import DataError, InputError
from invdyn.learn.datasets.lerobot import CODEBASE_VERSION, EPISODES_DIR, load_pyarrow
from invdyn.learn.datasets.mp4 import Frames, VideoFrames, VideoSegment
from invdyn.learn.keys import ACTION, EPISODE_INDEX, OBS_IMAGE_PREFIX, OBS_STATE, TIMESTAMP

Float = NDArray[np.floating[Any]]
Int = NDArray[np.int64]


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
    finite = representable(array)
    if not np.all(finite):
        where = tuple(int(i) for i in np.argwhere(~finite)[0])
        raise DataError(f"{name} holds {UNREPRESENTABLE} at {where}: {array[where]}")
    array.setflags(write=False)
    return array


# what `representable` refuses, in words
UNREPRESENTABLE = "a value that is not finite or beyond float32's range (3.4e38)"


def representable(array: np.ndarray) -> NDArray[np.bool_]:
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

    @property
    def summary(self) -> str:
        """``N episodes, M frames at F fps, state S, action A`` (or ``no action``): the
        dataset in a line, as the commands that write one print it."""
        count, frames = self.total_episodes, self.total_frames
        action = "no action" if self.action_names is None else f"action {self.n_action}"
        return (
            f"{count} episode{'' if count == 1 else 's'}, "
            f"{frames} frame{'' if frames == 1 else 's'} at {self.fps:g} fps, "
            f"state {self.n_state}, {action}"
        )


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
        return DatasetVideo(self, self._video_key(key), len(self))

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


class _FramesSource(Protocol):
    def frames(self, key: str, k: int) -> Any: ...


class LazyVideo(Sequence[Any]):
    """One camera's frames of each of `count` episodes, got from `source` when indexed
    (``source.frames(key, k)``: a `Dataset`, or the stream of
    `invdyn.learn.datasets.lerobot_write.stream_videos`)."""

    def __init__(self, source: _FramesSource, key: str, count: int) -> None:
        self._source, self._key, self._count = source, key, count

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, k: int) -> Any:  # type: ignore[override]
        if not -self._count <= k < self._count:  # iteration stops at the end
            raise IndexError(f"episode {k} of {self._count}")
        return self._source.frames(self._key, k % self._count)


class DatasetVideo(LazyVideo):
    """A dataset's video feature, episode by episode (`Dataset.video`): its files can be
    copied into a dataset of the same episodes at the same fps (`write_dataset` does)."""

    def __init__(self, dataset: Dataset, key: str, count: int) -> None:
        super().__init__(dataset, key, count)
        self._dataset, self._key = dataset, key
        height, width = dataset.info.videos[key][:2]
        self.size = (int(height), int(width))
        self.lengths = np.diff(dataset._starts).tolist()
        self.segments: list[VideoSegment] = dataset._segments[key]

    def copyable(self, fps: float) -> bool:
        """Whether a dataset at `fps` can take the files as they are: the same fps, and
        statistics of every episode recorded."""
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
    pa, pq = load_pyarrow()
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


@dataclasses.dataclass(frozen=True)
class Imported:
    """Episodes read from a source of another format (by a format's reader,
    `invdyn.learn.datasets.formats.DatasetFormat`), as `write_dataset` takes them.

    Attributes:
      episodes: the episodes, in order.
      state_names: (n_state,) name of each entry of the state; () for episodes without a
        state.
      action_names: (n_action,) name of each entry of the action; None for episodes without
        actions.
      fps: frames per second of every episode.
      videos: camera name -> each episode's (T, H, W, 3) uint8 frames, as `write_dataset`
        takes them (read when written: `stream_videos`), or None for no videos.
      metadata: what the dataset's metadata (`read_metadata`) records of the source besides
        its format and path, as plain JSON data.
    """

    episodes: list[Episode]
    state_names: tuple[str, ...]
    action_names: tuple[str, ...] | None
    fps: float
    videos: Mapping[str, Sequence[ArrayLike]] | None = None
    metadata: Mapping[str, Any] = dataclasses.field(default_factory=dict)


class NamedEpisode(NamedTuple):
    """An episode read from one place of a source, with the names of its entries
    (`joined`)."""

    where: str
    episode: Episode
    state_names: tuple[str, ...]  # (n_state,)
    action_names: tuple[str, ...]  # (n_action,)


def entry_names(name: str, width: int) -> tuple[str, ...]:
    """The names of the `width` entries of a vector `name`: ``name`` itself for one entry,
    else ``name.0``, ``name.1`` ..."""
    return (name,) if width == 1 else tuple(f"{name}.{i}" for i in range(width))


def check_names(name: str, value: Sequence[str]) -> tuple[str, ...]:
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


def joined(read: Sequence[NamedEpisode], fps: float) -> Imported:
    """The episodes of `read`, at `fps`, with the names they share, or `DataError` naming the
    first place whose state or action entries differ from the first's (a dataset is one
    robot's)."""
    first = read[0]
    for each in read:
        for field in ("state", "action"):
            names, expected = getattr(each, f"{field}_names"), getattr(first, f"{field}_names")
            if len(names) != len(expected):
                raise DataError(
                    f"{each.where}: {field} has {len(names)} entries, but the first episode's has "
                    f"{len(expected)}"
                )
            if names != expected:
                raise DataError(
                    f"{each.where}: {field} entries {list(names)} differ from the first "
                    f"episode's {list(expected)}"
                )
    episodes = [each.episode for each in read]
    return Imported(episodes, first.state_names, first.action_names, fps)


def episode_at_rate(
    where: str, state: np.ndarray, action: np.ndarray, rate: float, task: str
) -> Episode:
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
