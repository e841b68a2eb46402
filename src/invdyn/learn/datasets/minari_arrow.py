"""Minari datasets in the arrow layout: ``data/metadata.json`` and ``data/<N>/*.arrow``.

Minari's arrow storage writes each episode as a folder of the data folder, named by the
episode's id, of Arrow IPC files (a pyarrow dataset partitioned by ``episode_id``, which the
files therefore do not hold) and a ``metadata.json`` (``id``, ``total_steps``, ``seed``). The
data folder's ``metadata.json`` says ``"data_format": "arrow"``, counts ``total_episodes`` and
``total_steps``, and may hold the ``dataset_id`` and the serialised ``observation_space`` and
``action_space``. Every column of an episode has T + 1 rows: the observations before each of
the T actions and after the last one; actions, rewards, terminations and truncations end with
a row of padding. A space is stored as its kind dictates: Box (and MultiBinary,
MultiDiscrete) as a fixed-size list of its flattened values, Discrete as int32, Dict and
Tuple as a struct of their subspaces (a Tuple's fields named ``0``, ``1`` ...), Text as
strings.

The episodes read as Minari's HDF5 layout does (`invdyn.learn.datasets.minari`): the state is
the observations without the last, a dictionary flattened with its keys sorted and without
what is not low-dimensional numbers (images, by their Box shape; text), which a warning names;
entries named ``observation.<i>``, ``<key>.<i>`` in a dictionary, ``action.<i>``; frame k at
``k / fps``; the task the ``dataset_id``. Read with pyarrow alone, without Minari.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
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
from invdyn.learn.datasets.lerobot import load_pyarrow
from invdyn.learn.datasets.minari import (
    MINARI_FOLDER,
    MINARI_FPS,
    listed,
    note_left_out,
    warn_of_left_out,
)
from invdyn.learn.datasets.mp4 import check_fps

ARROW_FORMAT = "arrow"
"""The ``data_format`` of a Minari dataset in this layout."""
METADATA_FILE = "metadata.json"
"""The metadata of the data folder, and of each episode's folder."""
# the files of an episode's folder that are not its data, as Minari leaves them out
_NOT_DATA = ["_", ".", METADATA_FILE]


def read_minari_arrow(path: str | os.PathLike[str], *, fps: float = MINARI_FPS) -> Imported:
    """Episodes of a Minari dataset in the arrow layout (see the module's docstring).

    Args:
      path: the dataset folder (holding ``data/metadata.json``), or its data folder.
      fps: steps per second of the environment (1 makes timestamps count steps).

    Returns:
      The episodes in the order of their ids, the entries' names, and `fps`.

    Raises:
      DataError: no metadata or another ``data_format``, episode folders that the metadata
        does not count, an unreadable arrow file, a missing or null column, observations of no
        low-dimensional numbers, entries that differ between episodes, an episode without a
        step, or values that are not finite; the message names the folder.
    """
    rate = check_fps(fps)
    folder = _data_folder(Path(path))
    metadata = _metadata(folder)
    spaces = {key: _space(metadata.get(f"{key}_space")) for key in ("observation", "action")}
    task = str(metadata.get("dataset_id") or "")
    episodes = _episode_folders(folder)
    total = metadata.get("total_episodes")
    if isinstance(total, int) and total != len(episodes):
        raise DataError(
            f"{folder / METADATA_FILE}: total_episodes is {total}, but {folder} holds "
            f"{len(episodes)} episode folders"
        )
    read: list[NamedEpisode] = []
    skipped: dict[str, str] = {}
    for episode in episodes:
        table = _episode_table(episode)
        steps = table.num_rows - 1
        _check_steps(episode, steps)
        where = str(episode)
        observation = spaces["observation"]
        state, state_names = _flattened(
            table, "observations", observation, where, "observation", steps, skipped
        )
        action, action_names = _flattened(
            table, "actions", spaces["action"], where, "action", steps
        )
        episode_read = episode_at_rate(where, state, action, rate, task)
        read.append(NamedEpisode(where, episode_read, state_names, action_names))
    warn_of_left_out(folder, skipped)
    return joined(read, rate)


def _data_folder(path: Path) -> Path:
    """The data folder of the dataset at `path` (the folder of `METADATA_FILE`): `path`
    itself or its ``data`` folder."""
    for folder in (path / "data", path):
        if (folder / METADATA_FILE).is_file():
            return folder
    raise DataError(
        f"{path}: no data/{METADATA_FILE} (not a Minari dataset folder, nor its data folder)"
    )


def _metadata(folder: Path) -> dict[str, Any]:
    """The data folder's metadata, checked to be an object of the arrow layout."""
    file = folder / METADATA_FILE
    metadata = _read_json(file)
    if not isinstance(metadata, dict):
        raise DataError(f"{file}: expected a JSON object, got {type(metadata).__name__}")
    found = metadata.get("data_format")
    if found != ARROW_FORMAT:
        raise DataError(
            f"{file}: data_format is {found!r}, not {ARROW_FORMAT!r} (an HDF5 Minari dataset "
            "reads as the format minari)"
        )
    return metadata


def _read_json(file: Path) -> Any:
    """The JSON content of `file`, or `DataError` naming it."""
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DataError(f"{file}: not valid JSON: {error}") from None


def _space(serialised: object) -> dict[str, Any] | None:
    """A space as Minari serialises it (JSON text, or its object), or None where there is
    none or it is not one (a space only tells images apart)."""
    if isinstance(serialised, str):
        try:
            serialised = json.loads(serialised)
        except json.JSONDecodeError:
            return None
    return serialised if isinstance(serialised, dict) else None


def _episode_folders(folder: Path) -> list[Path]:
    """The episodes' folders of the data folder, by their ids (whole numbers)."""
    found = sorted(
        (int(entry.name), entry)
        for entry in folder.iterdir()
        if entry.name.isdigit() and entry.is_dir()
    )
    if not found:
        raise DataError(f"{folder}: no episode folders (0, 1, ...)")
    return [entry for _, entry in found]


def _episode_table(episode: Path) -> Any:
    """The rows of an episode's arrow files, as Minari reads them."""
    pa, _ = load_pyarrow()
    import pyarrow.dataset

    try:
        dataset = pyarrow.dataset.dataset(episode, format="arrow", ignore_prefixes=_NOT_DATA)
        table = dataset.to_table()
    except (pa.ArrowException, OSError, ValueError) as error:
        raise DataError(f"{episode}: not readable arrow files: {error}") from None
    if not dataset.files:
        raise DataError(f"{episode}: holds no arrow file")
    return table


def _check_steps(episode: Path, steps: int) -> None:
    """`DataError` unless the episode's metadata, where it has one, counts `steps` steps."""
    file = episode / METADATA_FILE
    if not file.is_file():
        return
    metadata = _read_json(file)
    counted = metadata.get("total_steps") if isinstance(metadata, dict) else None
    if counted is not None and counted != steps:
        raise DataError(f"{file}: total_steps is {counted}, but the files hold {steps} steps")


def _flattened(
    table: Any,
    column: str,
    space: dict[str, Any] | None,
    where: str,
    name: str,
    steps: int,
    skipped: dict[str, str] | None = None,
) -> tuple[np.ndarray, tuple[str, ...]]:
    """(steps, n) values of the first `steps` rows of `column`, and the name of each of their
    n entries: a plain column's are those of `name` (`entry_names`); a struct (a Dict or
    Tuple space) concatenates its fields, names sorted at each level, each named after its
    path (``goal.x.0``). With `skipped`, the fields that are not low-dimensional numbers are
    left out, and added to it (name -> what it holds)."""
    pa, _ = load_pyarrow()
    if column not in table.column_names:
        raise DataError(f"{where}: no column {column!r}; columns: {', '.join(table.column_names)}")
    values = table.column(column).combine_chunks().slice(0, steps)
    if not pa.types.is_struct(values.type):
        kept, what = _numbers(pa, values, space)
        if kept is None:
            raise DataError(
                f"{where}/{column}: {what} is not low-dimensional numbers (images? text?); a "
                "frame's values must be a vector"
            )
        _check_nulls(pa, values, f"{where}/{column}")
        return kept, entry_names(name, kept.shape[1])
    blocks: list[np.ndarray] = []
    names: list[str] = []
    left_out: dict[str, str] = {}
    for path, leaf, leaf_space in _leaves(pa, values, "", space):
        numbers, what = _numbers(pa, leaf, leaf_space)
        if numbers is None:
            left_out[path] = what
            continue
        _check_nulls(pa, leaf, f"{where}/{column}/{path.replace('.', '/')}")
        blocks.append(numbers)
        names += entry_names(path, numbers.shape[1])
    if left_out and skipped is None:
        raise DataError(f"{where}/{column}: {listed(left_out)}: not low-dimensional numbers")
    note_left_out(f"{where}/{column}", left_out, kept=len(blocks), skipped=skipped)
    return np.concatenate(blocks, axis=1), tuple(names)


def _leaves(pa: ModuleType, values: Any, path: str, space: dict[str, Any] | None) -> list[Any]:
    """(path, values, space) of each field of a struct `values` that is not a struct
    itself, at any depth, names sorted at each level; the path joins names with '.'."""
    if not pa.types.is_struct(values.type):
        return [(path, values, space)]
    subspaces = (space or {}).get("subspaces")
    fields = [values.type.field(i).name for i in range(values.type.num_fields)]
    children = dict(zip(fields, values.flatten(), strict=True))
    leaves = []
    for field in sorted(fields):
        if isinstance(subspaces, Mapping):
            subspace = subspaces.get(field)
        elif isinstance(subspaces, list) and field.isdigit() and int(field) < len(subspaces):
            subspace = subspaces[int(field)]
        else:
            subspace = None
        inner = f"{path}.{field}" if path else field
        leaves += _leaves(pa, children[field], inner, subspace)
    return leaves


def _numbers(pa: ModuleType, values: Any, space: dict[str, Any] | None) -> tuple[Any, str]:
    """((rows, k) numpy values, "") of a column of numbers, or of fixed-size lists of numbers
    that `space` does not say are an image (a Box of more than one dimension); else (None,
    what the column holds)."""
    shape = (space or {}).get("shape")
    if pa.types.is_fixed_size_list(values.type):
        inner = values.type.value_type
        if isinstance(shape, list) and len(shape) > 1:
            return None, f"{inner}, shape {tuple(shape)}"
        if not _numeric(pa, inner):
            return None, str(values.type)
        width = values.type.list_size
        flat = values.flatten().to_numpy(zero_copy_only=False)
        return np.asarray(flat).reshape(len(values), width), ""
    if _numeric(pa, values.type):
        return np.asarray(values.to_numpy(zero_copy_only=False)).reshape(len(values), 1), ""
    return None, str(values.type)


def _numeric(pa: ModuleType, kind: Any) -> bool:
    """Whether the arrow type `kind` is numbers or booleans."""
    return bool(
        pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind)
    )


def _check_nulls(pa: ModuleType, values: Any, where: str) -> None:
    """`DataError` where `values` (or, for lists, the values inside them) hold a null."""
    inner = values.flatten() if pa.types.is_fixed_size_list(values.type) else values
    nulls = values.null_count + inner.null_count
    if nulls:
        raise DataError(f"{where}: holds {nulls} null value(s)")


def _read(path: Path, options: ImportOptions) -> Imported:
    """`read_minari_arrow` of `invdyn import`'s options."""
    return read_minari_arrow(path, fps=MINARI_FPS if options.fps is None else options.fps)


def _detect(path: Path) -> bool:
    """Whether `path` is a Minari dataset folder, or its data folder, whose metadata says the
    arrow layout."""
    if not path.is_dir():
        return False
    for folder in (path / "data", path):
        try:
            metadata = _read_json(folder / METADATA_FILE)
        except DataError:
            continue
        return isinstance(metadata, dict) and metadata.get("data_format") == ARROW_FORMAT
    return False


FORMAT = DatasetFormat(
    name="minari-arrow",
    description="Minari in the arrow layout (a dataset folder of data/metadata.json and "
    "data/<N>/*.arrow, or its data folder)",
    detect=_detect,
    read=_read,
    looks_like=MINARI_FOLDER,
    noun="a minari-arrow folder",
)
