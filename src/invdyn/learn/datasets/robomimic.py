"""robomimic's HDF5 files: ``data/demo_N/obs/<key>`` and ``data/demo_N/actions``."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from invdyn.errors import DataError
from invdyn.learn.datasets.episodes import (
    Imported,
    NamedEpisode,
    entry_names,
    episode_at_rate,
    joined,
)
from invdyn.learn.datasets.formats import DatasetFormat, ImportOptions
from invdyn.learn.datasets.hdf5 import (
    HDF5_FILE,
    has_group,
    is_hdf5,
    load_h5py,
    low_dimensional,
    numbered,
    numeric_dataset,
    open_hdf5,
    text,
)
from invdyn.learn.datasets.mp4 import check_fps

ROBOMIMIC_FPS = 20.0
"""Hz, `read_robomimic`'s default frame rate: robosuite's control rate."""


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
      One episode per demo, in the order of N, the entries' names, and `fps`.

    Raises:
      DataError: an unreadable file, a missing group or dataset, an image among `obs_keys`,
        lengths or entries that disagree, or values that are not finite; the message names the
        demo.
    """
    rate = check_fps(fps)
    h5py = load_h5py()
    file = Path(path)
    with open_hdf5(h5py, file) as handle:
        data = handle.get("data")
        if not isinstance(data, h5py.Group):
            raise DataError(f"{file}: no 'data' group (not a robomimic file)")
        demos = numbered(data.keys(), "demo")
        if filter_key is not None:
            mask = handle.get(f"mask/{filter_key}")
            if not isinstance(mask, h5py.Dataset):
                raise DataError(f"{file}: no filter key mask/{filter_key}")
            listed = {text(name) for name in mask[()]}
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
        read: list[NamedEpisode] = []
        for demo in demos:
            where = f"{file}: data/{demo}"
            group = data[demo]
            actions = numeric_dataset(h5py, group, "actions", where)
            count = actions.shape[0]
            obs = group.get("obs")
            if not isinstance(obs, h5py.Group):
                raise DataError(f"{where}: no 'obs' group (extract observations first)")
            blocks: list[np.ndarray] = []
            names: list[str] = []
            for key in keys:
                values = numeric_dataset(h5py, obs, key, f"{where}/obs")
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
            episode = episode_at_rate(where, np.concatenate(blocks, axis=1), action, rate, task)
            action_names = entry_names("action", action.shape[1])
            read.append(NamedEpisode(where, episode, tuple(names), action_names))
    return joined(read, rate)


def _env_name(env_args: Any) -> str:
    """``env_name`` of robomimic's JSON ``env_args`` attribute, or ""."""
    if env_args is None:
        return ""
    try:
        parsed = json.loads(text(env_args))
    except json.JSONDecodeError:
        return ""
    return str(parsed.get("env_name", "")) if isinstance(parsed, dict) else ""


def _low_dim_keys(h5py: ModuleType, file: Path, demo: Any) -> list[str]:
    """Sorted names of the numeric observations of `demo` with at most two dimensions."""
    obs = demo.get("obs")
    if not isinstance(obs, h5py.Group):
        raise DataError(f"{file}: {demo.name} has no 'obs' group (extract observations first)")
    return sorted(key for key, item in obs.items() if low_dimensional(h5py, item))


def _read(path: Path, options: ImportOptions) -> Imported:
    """`read_robomimic` of `invdyn import`'s options."""
    fps = ROBOMIMIC_FPS if options.fps is None else options.fps
    return read_robomimic(path, obs_keys=options.obs_keys, filter_key=options.filter_key, fps=fps)


def _detect(path: Path) -> bool:
    """Whether `path` is an HDF5 file with a ``data`` group."""
    return is_hdf5(path) and has_group(path, "data")


FORMAT = DatasetFormat(
    name="robomimic",
    description="an HDF5 file of data/demo_N/obs/<key> and data/demo_N/actions",
    detect=_detect,
    read=_read,
    options=("obs_keys", "filter_key"),
    looks_like=HDF5_FILE,
)
