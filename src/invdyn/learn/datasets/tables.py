"""Tables of named columns: CSV, NPZ and parquet files, read as columns or as episodes.

`read_columns` reads groups of columns by name (a name selects a column, or the columns
``<name>.*``); `read_table` reads inputs and targets; `read_table_episodes` reads a table's
rows as episodes, split where a column of episode numbers changes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import repeated
from invdyn.errors import DataError, InputError, warn
from invdyn.learn.datasets.episodes import (
    UNREPRESENTABLE,
    Episode,
    Imported,
    check_names,
    entry_names,
    representable,
)
from invdyn.learn.datasets.formats import DatasetFormat, ImportOptions
from invdyn.learn.datasets.lerobot import load_pyarrow
from invdyn.learn.datasets.mp4 import check_fps

TABLE_SUFFIXES = (".csv", ".npz", ".parquet", ".pq")
"""The file suffixes `read_columns` reads."""


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
    wanted = {group: check_names(group, names) for group, names in groups.items()}
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
    return {
        group: _group_columns(file, columns, group, chosen) for group, chosen in selected.items()
    }


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


def _group_columns(file: Path, columns: dict[str, Any], group: str, chosen: list[str]) -> Columns:
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
    finite or beyond float32's range (`representable`; in `column`, what the message calls
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
    finite = representable(array)
    if not np.all(finite):
        row = int(np.argwhere(~finite)[0][0])
        raise DataError(f"{file}: {column}, {row_name(row)}: {UNREPRESENTABLE} ({array[row]})")
    return array


def _csv_columns(file: Path) -> dict[str, _Column]:
    """Columns of a CSV file with a header row."""
    pa, _ = load_pyarrow()
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
    pa, pq = load_pyarrow()
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


def read_table_episodes(
    path: str | os.PathLike[str],
    *,
    fps: float,
    obs_keys: Sequence[str],
    action_keys: Sequence[str] | None = None,
    episode_key: str | None = None,
) -> Imported:
    """A table's rows as episodes: a run of rows of one number in the `episode_key` column is
    an episode (the table is one episode without it), frame k at ``k / fps``.

    Messages name the columns as `invdyn import` does (``--obs-keys 'q'``).

    Args:
      path: a ``.csv``, ``.npz`` or ``.parquet`` table (`read_columns`).
      fps: frames per second (`invdyn.learn.datasets.mp4.check_fps`).
      obs_keys: the state's columns, each a column's name or the prefix of columns
        ``<name>.*``, in order; the entries are named after the columns.
      action_keys: the action's columns, likewise; None for episodes without actions.
      episode_key: the column of episode numbers; None for one episode.

    Returns:
      The episodes in the order of the rows, their entries' names, and `fps`.

    Raises:
      InputError: a bad `fps`, an `episode_key` that selects several columns, or a column
        that two keys select; a warning says when a number comes back after others (its
        runs are episodes of their own).
      DataError: as `read_columns`.
    """
    rate = check_fps(fps)
    groups = {"--obs-keys": tuple(obs_keys)}
    if action_keys is not None:
        groups["--action-keys"] = tuple(action_keys)
    if episode_key is not None:
        groups["--episode-key"] = (episode_key,)
    read = read_columns(path, groups)
    state, action = read["--obs-keys"], read.get("--action-keys")
    numbers = read.get("--episode-key")
    if numbers is not None and len(numbers.names) != 1:
        raise InputError(
            f"--episode-key {episode_key!r} selects {len(numbers.names)} columns "
            f"({', '.join(numbers.names)}): name one"
        )
    number = np.zeros(len(state.values)) if numbers is None else numbers.values[:, 0]
    starts = np.flatnonzero(np.diff(number)) + 1
    runs = number[np.r_[0, starts]]
    if len(np.unique(runs)) < len(runs):
        again = next(float(x) for k, x in enumerate(runs) if x in runs[:k])
        warn(
            f"{path}: --episode-key {episode_key!r} comes back to {again:g} after "
            f"other values: each run of rows is an episode of its own ({len(runs)} episodes)"
        )
    actions = [None] * (len(starts) + 1) if action is None else np.split(action.values, starts)
    episodes = [
        Episode(state=s, action=a, timestamp=np.arange(len(s)) / rate)
        for s, a in zip(np.split(state.values, starts), actions, strict=True)
    ]
    return Imported(episodes, state.names, None if action is None else action.names, rate)


def _read(path: Path, options: ImportOptions) -> Imported:
    """`read_table_episodes` of `invdyn import`'s options, which must give fps and the
    state's columns."""
    if options.fps is None or options.obs_keys is None:
        raise InputError(
            f"{path}: a table needs --fps, and --obs-keys naming its state's columns "
            "(and --action-keys its action's, unless it has none)"
        )
    return read_table_episodes(
        path,
        fps=options.fps,
        obs_keys=options.obs_keys,
        action_keys=options.action_keys,
        episode_key=options.episode_key,
    )


def _detect(path: Path) -> bool:
    """Whether `path` is named as a table (`TABLE_SUFFIXES`)."""
    return path.suffix.lower() in TABLE_SUFFIXES


FORMAT = DatasetFormat(
    name="table",
    description=f"a table ({', '.join(TABLE_SUFFIXES)}) of named columns, its rows the "
    "frames (--obs-keys, --action-keys, --episode-key and --fps name what they are)",
    detect=_detect,
    read=_read,
    options=("obs_keys", "action_keys", "episode_key"),
    looks_like=f"a table ({', '.join(TABLE_SUFFIXES)})",
)
