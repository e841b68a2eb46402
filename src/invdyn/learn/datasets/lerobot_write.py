"""Writing LeRobot v3 datasets (`invdyn.learn.datasets.lerobot`), atomically.

`write_dataset` writes a temporary sibling directory, syncs it to disk and renames it into
place, so that a reader sees the old dataset or the new one, never a mix. `write_collection`
writes a simulated collection (`invdyn.sim.collect`) the same way, with MuJoCo's full state
as the extra feature ``observation.mujoco_state`` and how the data was collected under the
``"invdyn"`` key of ``info.json`` (`invdyn.learn.datasets.lerobot_read.read_metadata`).

pyarrow loads only when a function needs it: ``pip install 'invdyn[learn]'``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from invdyn._arrays import plain_number
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
from invdyn.errors import InputError
from invdyn.learn.datasets.episodes import (
    DatasetVideo,
    Episode,
    FrameFeature,
    Int,
    LazyVideo,
    check_names,
)
from invdyn.learn.datasets.lerobot import (
    CODEBASE_VERSION,
    DATA_DIR,
    DATA_PATH,
    EPISODES_DIR,
    EPISODES_PATH,
    INDEX_COLUMNS,
    METADATA_KEY,
    MUJOCO_STATE,
    STATS_PATH,
    TASKS_PATH,
    VIDEO_PATH,
    Layout,
    check_camera,
    load_pyarrow,
    off_rate,
)
from invdyn.learn.datasets.lerobot_read import read_info_json
from invdyn.learn.datasets.mp4 import (
    QUANTILES,
    TOLERANCE_S,
    CameraWriter,
    VideoSegment,
    check_fps,
    check_frames,
    frame_histogram,
    histogram_statistics,
    video_info,
)
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
        (`invdyn.learn.datasets.mp4`); the episodes' timestamps must then be ``k / fps``. A
        dataset's video (`Dataset.video`) at this fps has its files copied instead, in the
        chunks and files they had there (`layout` then does not apply to them).
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
    pa, pq = load_pyarrow()
    target = Path(path)
    layout = Layout() if layout is None else layout
    if not isinstance(layout, Layout):
        raise InputError(f"layout must be an invdyn.learn.datasets.Layout, got {layout!r}")
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
    kept_info = {} if keep_from is None else read_info_json(Path(keep_from))
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
    names = None if value is None or _is_empty(value) else check_names(argument, value)
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


def _extra_features(
    features: dict[str, FrameFeature] | None, lengths: list[int]
) -> dict[str, tuple[np.ndarray, tuple[str, ...] | None]]:
    """Each extra feature as (all frames concatenated, names), checked, or `InputError`."""
    reserved = {OBS_STATE, ACTION, TIMESTAMP, *INDEX_COLUMNS}
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
            names = check_names(f"extra feature {key!r} names", feature.names)
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
        if isinstance(per_episode, DatasetVideo) and per_episode.copyable(fps)
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


def _copy_video(root: Path, key: str, video: DatasetVideo, lengths: list[int]) -> _Video:
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
    return {camera: LazyVideo(stream, camera, count) for camera in first}


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
    for key in (TIMESTAMP, *INDEX_COLUMNS):
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
