"""Reading LeRobot v3 datasets (`invdyn.learn.datasets.lerobot`), checked.

`read_dataset` checks everything it reads (files, columns, counts, indices, finiteness) and
raises `DataError` naming the file and the problem rather than return wrong data; `read_info`,
`read_metadata`, `read_frame_columns` and `read_extra_features` read parts of a dataset.

pyarrow loads only when a function needs it: ``pip install 'invdyn[learn]'``.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from invdyn._files import INFO_PATH
from invdyn.errors import DataError, warn
from invdyn.learn.datasets.episodes import (
    UNREPRESENTABLE,
    Dataset,
    DatasetInfo,
    FrameFeature,
    Int,
    representable,
)
from invdyn.learn.datasets.lerobot import (
    DATA_DIR,
    DATA_PATH,
    EPISODE_COLUMNS,
    EPISODES_DIR,
    INDEX_COLUMNS,
    INFO_FIELDS,
    METADATA_KEY,
    SEGMENT_FIELDS,
    STATS_PATH,
    TASKS_PATH,
    VECTOR_STATISTICS,
    load_pyarrow,
    off_rate,
)
from invdyn.learn.datasets.mp4 import VideoSegment
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
    pa, pq = load_pyarrow()
    root = _dataset_root(path)
    info_json = read_info_json(root)
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
    keys = [*vectors, TIMESTAMP, *INDEX_COLUMNS]
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
    pa, pq = load_pyarrow()
    root = _dataset_root(path)
    info_json = read_info_json(root)
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
    metadata = read_info_json(root).get(METADATA_KEY, {})
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
    pa, pq = load_pyarrow()
    root = _dataset_root(path)
    info_json = read_info_json(root)
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
    features = read_info_json(root)["features"]
    standard = {OBS_STATE, ACTION, TIMESTAMP, *INDEX_COLUMNS}
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
    pa, pq = load_pyarrow()
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


def read_info_json(root: Path) -> dict[str, Any]:
    """``meta/info.json``, with its required fields present and a supported version."""
    info = _read_json(root, INFO_PATH)
    file = root / INFO_PATH
    if not isinstance(info, dict):
        raise DataError(f"{file}: expected a JSON object, got {type(info).__name__}")
    missing = [key for key in INFO_FIELDS if key not in info]
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
    names = [f"videos/{key}/{field}" for key in keys for field in SEGMENT_FIELDS]
    tables = [_read_parquet(pa, pq, file, names) for file in files]
    columns = {}
    for name in names:
        parts = [table.column(name) for table in tables]
        if any(part.null_count for part in parts):
            raise DataError(f"{root / EPISODES_DIR}: column {name} holds null values")
        columns[name] = np.concatenate([np.asarray(part.to_numpy()) for part in parts])
    segments = {}
    for key in keys:
        fields = [columns[f"videos/{key}/{field}"] for field in SEGMENT_FIELDS]
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
    columns = [c for c in EPISODE_COLUMNS if c != "tasks"]
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
        finite = representable(frames[key])
        if not np.all(finite):
            row = int(np.argwhere(~finite)[0][0])
            raise DataError(
                f"{where}: {key} of frame {row} (episode {int(episode[row])}, frame "
                f"{row - int(starts[episode[row]])}) holds {UNREPRESENTABLE}: {frames[key][row]}"
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
