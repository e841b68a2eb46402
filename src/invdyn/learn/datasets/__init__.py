"""Datasets on disk: LeRobot v3 datasets, and the formats that `invdyn import` reads.

invdyn writes and reads datasets in LeRobot's v3 layout (`lerobot`: its paths and columns;
`lerobot_write`, `lerobot_read`), so that LeRobot reads what invdyn writes and invdyn reads the
state, action and videos of what LeRobot writes; a camera's frames are mp4 files (`mp4`). The
types every module shares are in `episodes` (`Episode`, `Dataset`, `DatasetInfo`).

Other formats become LeRobot datasets through `import_dataset` (`invdyn import`), one module a
format, each declaring a `DatasetFormat` that the registry (`registry`) lists: `robomimic`,
`minari` (Minari's HDF5 layout and D4RL), `minari_arrow` (Minari's arrow layout), `tables`
(CSV, NPZ and parquet) and `videos` (video files and folders of images). A new format is a
module that declares one, and a line in the registry (or `registered`, for a while).

pyarrow, h5py and PyAV load only when a function needs them: ``pip install 'invdyn[learn]'``.
"""

from invdyn.learn.datasets.episodes import (
    EPISODE_FINGERPRINTS,
    Arrays,
    Dataset,
    DatasetInfo,
    Episode,
    FrameFeature,
    Imported,
    entry_names,
    episode_fingerprints,
    hashed_episodes,
    matching_episodes,
)
from invdyn.learn.datasets.formats import DatasetFormat, ImportOptions
from invdyn.learn.datasets.importing import ImportConfig, ImportResult, import_dataset
from invdyn.learn.datasets.lerobot import METADATA_KEY, MUJOCO_STATE, Layout, check_camera
from invdyn.learn.datasets.lerobot_read import (
    read_dataset,
    read_extra_features,
    read_frame_columns,
    read_info,
    read_metadata,
)
from invdyn.learn.datasets.lerobot_write import (
    check_target,
    stream_videos,
    write_collection,
    write_dataset,
)
from invdyn.learn.datasets.minari import MINARI_FPS, read_minari
from invdyn.learn.datasets.minari_arrow import read_minari_arrow
from invdyn.learn.datasets.mp4 import check_fps, check_frames, check_size
from invdyn.learn.datasets.registry import (
    dataset_format,
    dataset_formats,
    detect_format,
    register,
    registered,
)
from invdyn.learn.datasets.robomimic import ROBOMIMIC_FPS, read_robomimic
from invdyn.learn.datasets.tables import (
    TABLE_SUFFIXES,
    Columns,
    read_columns,
    read_table,
    read_table_episodes,
)
from invdyn.learn.datasets.videos import (
    IMAGE_SUFFIXES,
    VIDEO_SUFFIXES,
    holds_sources,
    import_videos,
    read_videos,
)

__all__ = [
    "EPISODE_FINGERPRINTS",
    "IMAGE_SUFFIXES",
    "METADATA_KEY",
    "MINARI_FPS",
    "MUJOCO_STATE",
    "ROBOMIMIC_FPS",
    "TABLE_SUFFIXES",
    "VIDEO_SUFFIXES",
    "Arrays",
    "Columns",
    "Dataset",
    "DatasetFormat",
    "DatasetInfo",
    "Episode",
    "FrameFeature",
    "ImportConfig",
    "ImportOptions",
    "ImportResult",
    "Imported",
    "Layout",
    "check_camera",
    "check_fps",
    "check_frames",
    "check_size",
    "check_target",
    "dataset_format",
    "dataset_formats",
    "detect_format",
    "entry_names",
    "episode_fingerprints",
    "hashed_episodes",
    "holds_sources",
    "import_dataset",
    "import_videos",
    "matching_episodes",
    "read_columns",
    "read_dataset",
    "read_extra_features",
    "read_frame_columns",
    "read_info",
    "read_metadata",
    "read_minari",
    "read_minari_arrow",
    "read_robomimic",
    "read_table",
    "read_table_episodes",
    "read_videos",
    "register",
    "registered",
    "stream_videos",
    "write_collection",
    "write_dataset",
]
