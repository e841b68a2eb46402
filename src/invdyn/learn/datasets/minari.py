"""Minari datasets in HDF5 (``data/main_data.hdf5``), and D4RL-style HDF5 files.

Minari's arrow layout is read by `invdyn.learn.datasets.minari_arrow`, which shares the naming
of entries and the handling of observations that are not low-dimensional numbers with this
module.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from invdyn.errors import DataError, warn
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

MINARI_FPS = 1.0
"""Hz, the default frame rate of Minari and D4RL data: timestamps count steps."""
MINARI_FOLDER = "a Minari dataset folder (data/main_data.hdf5, or arrow files)"
"""What a Minari dataset folder is, as the message for a path of no format names it."""
# where a Minari dataset folder keeps its HDF5 file, or its data folder alone does
_MAIN_FILES = ("data/main_data.hdf5", "main_data.hdf5")


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
      The episodes in order (Minari: by N), the entries' names, and `fps`.

    Raises:
      DataError: an unreadable file, neither layout, lengths or entries that disagree, an
        empty episode, a dictionary observation of no low-dimensional numbers, or values that
        are not finite; the message names the episode.
    """
    rate = check_fps(fps)
    h5py = load_h5py()
    file = Path(path)
    if file.is_dir():
        candidates = [file / name for name in _MAIN_FILES]
        file = next((c for c in candidates if c.is_file()), candidates[0])
    with open_hdf5(h5py, file) as handle:
        names = numbered(handle.keys(), "episode")
        task = text(handle.attrs.get("dataset_id", ""))
        if names:
            read: list[NamedEpisode] = []
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
                episode = episode_at_rate(where, observations, actions, rate, task)
                read.append(NamedEpisode(where, episode, state_names, action_names))
            warn_of_left_out(file, skipped)
            return joined(read, rate)
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
            flags = numeric_dataset(h5py, handle, key, where).reshape(-1)
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
            episode_at_rate(
                f"{file}: episode {k} (rows {start}-{stop - 1})",
                observations[start:stop],
                actions[start:stop],
                rate,
                "",
            )
        )
        start = stop
    return Imported(episodes, state_names, action_names, rate)


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
        values = numeric_dataset(h5py, group, key, where)
        if values.ndim > 2:
            raise DataError(
                f"{where}/{key}: shape {values.shape} is not low-dimensional (images?); a "
                "frame's values must be a vector"
            )
        values = values.reshape(values.shape[0], -1)
        return values, entry_names(name, values.shape[1])
    where, paths = f"{where}/{key}", _dataset_paths(h5py, item)
    kept = [path for path in paths if skipped is None or low_dimensional(h5py, item[path])]
    left_out = {
        path.replace("/", "."): f"{item[path].dtype}, shape {item[path].shape}"
        for path in paths
        if path not in kept
    }
    note_left_out(where, left_out, kept=len(kept), skipped=skipped)
    leaves = [numeric_dataset(h5py, item, path, where) for path in kept]
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


def listed(described: Mapping[str, str]) -> str:
    """``name (what), ...`` of `described`, in its order."""
    return ", ".join(f"{name} ({what})" for name, what in described.items())


def note_left_out(
    where: str, left_out: Mapping[str, str], *, kept: int, skipped: dict[str, str] | None
) -> None:
    """Add the entries of a dictionary observation at `where` that are `left_out` (name ->
    what it holds: not low-dimensional numbers) to `skipped`, or `DataError` when none of
    them is `kept` (a count)."""
    if not kept:
        raise DataError(
            f"{where}: no low-dimensional numbers, only {listed(left_out)}"
            if left_out
            else f"{where}: an empty group"
        )
    if skipped is not None:
        for entry, what in left_out.items():
            skipped.setdefault(entry, what)


def warn_of_left_out(source: Path, skipped: Mapping[str, str]) -> None:
    """Warn, naming them, of the entries of observations that were left out of the state
    (`skipped`: name -> what it holds), if any."""
    if skipped:
        warn(
            f"{source}: observations {listed(dict(sorted(skipped.items())))}: left out "
            "of the state, which holds low-dimensional numbers (not images, nor text)"
        )


def _read(path: Path, options: ImportOptions) -> Imported:
    """`read_minari` of `invdyn import`'s options."""
    return read_minari(path, fps=MINARI_FPS if options.fps is None else options.fps)


def _detect(path: Path) -> bool:
    """Whether `path` is a Minari dataset folder holding its HDF5 file, or an HDF5 file
    without robomimic's ``data`` group."""
    if path.is_dir():
        return any((path / name).is_file() for name in _MAIN_FILES)
    return is_hdf5(path) and not has_group(path, "data")


FORMAT = DatasetFormat(
    name="minari",
    description="Minari (a dataset folder, or its data/main_data.hdf5: episode_N groups of "
    "observations and actions) or D4RL (an HDF5 file of observations, actions, terminals and "
    "timeouts)",
    detect=_detect,
    read=_read,
    looks_like=HDF5_FILE,
)
