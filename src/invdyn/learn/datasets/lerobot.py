"""LeRobot's v3 dataset layout: paths, columns and the checks its writer and reader share.

A dataset is a directory in LeRobot's ``v3.0`` layout, so that LeRobot reads what invdyn writes
(`invdyn.learn.datasets.lerobot_write`) and invdyn reads the state, action and videos of what
LeRobot writes (`invdyn.learn.datasets.lerobot_read`)::

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
                                                    (`invdyn.learn.datasets.mp4`); the
                                                    episodes' spans in the episodes metadata

Frames of several episodes share a data file; a new file starts when the next episode would
take the current one past `Layout.file_size_mb` (uncompressed), and a new chunk directory after
`Layout.chunks_size` files. An episode never spans two files.

``observation.state`` and ``action`` are each optional: action-free data (demonstrations to
label) has no action, and plain videos imported as episodes
(`invdyn.learn.datasets.videos.import_videos`) have neither, only timestamps and the frames of
a camera. A dataset needs at least one of state, action and video.

Precision: LeRobot stores float32. invdyn keeps the dtype it is given, float32 or float64 (any
other numbers become float64), and records it in ``info.json``'s features, because the exact
joint forces of an analytic model, or the small differences between two models, do not survive
float32 (7 significant digits). A dataset written from float64 arrays reads back bit for bit.

pyarrow loads only when a function needs it: ``pip install 'invdyn[learn]'``.
"""

from __future__ import annotations

import dataclasses
import re
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import check_positive
from invdyn.errors import InputError
from invdyn.learn.datasets.mp4 import TOLERANCE_S
from invdyn.learn.keys import EPISODE_INDEX, FRAME_INDEX, INDEX, TASK_INDEX

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

# bookkeeping columns of every frame, int64
INDEX_COLUMNS = (FRAME_INDEX, EPISODE_INDEX, INDEX, TASK_INDEX)
# the fields that every info.json has
INFO_FIELDS = (
    "codebase_version",
    "fps",
    "total_episodes",
    "total_frames",
    "data_path",
    "features",
)
# the columns of a video feature's segments in the episodes metadata, videos/<key>/<field>
SEGMENT_FIELDS = ("chunk_index", "file_index", "from_timestamp", "to_timestamp")
# the columns of every row of the episodes metadata
EPISODE_COLUMNS = (
    "episode_index",
    "tasks",
    "length",
    "data/chunk_index",
    "data/file_index",
    "dataset_from_index",
    "dataset_to_index",
)


def load_pyarrow() -> tuple[ModuleType, ModuleType]:
    """The ``pyarrow`` and ``pyarrow.parquet`` modules, or an ImportError saying how to install."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as error:
        raise ImportError("datasets need pyarrow: pip install 'invdyn[learn]'") from error
    return pyarrow, pyarrow.parquet


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


def check_camera(camera: object) -> None:
    """`InputError` unless `camera` is a name of letters, digits, '_' and '-'."""
    if not isinstance(camera, str) or not re.fullmatch(r"[A-Za-z0-9_\-]+", camera):
        raise InputError(
            f"camera name {camera!r} must be letters, digits, '_' or '-' (it names files)"
        )


def off_rate(timestamp: NDArray[Any], fps: float) -> NDArray[np.bool_]:
    """(T - 1,) which steps between the (T,) `timestamp` are not 1 / `fps`, to LeRobot's
    `TOLERANCE_S` (or the timestamps' own precision, where float32 holds them coarser)."""
    slack = TOLERANCE_S + 2 * np.spacing(np.abs(timestamp[1:]))
    return np.abs(np.diff(timestamp) - 1.0 / fps) > slack
