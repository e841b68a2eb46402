"""HDF5 files, as robomimic, Minari and D4RL write them: what their readers share.

h5py loads only when a file is read: ``pip install 'invdyn[learn]'``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from invdyn.errors import DataError

HDF5_FILE = "an HDF5 file (robomimic, Minari, D4RL)"
"""What an HDF5 source is, as the message for a path of no format names it."""


def load_h5py() -> ModuleType:
    """The ``h5py`` module, or an ImportError saying how to install it."""
    try:
        import h5py
    except ImportError as error:
        raise ImportError("reading HDF5 files needs h5py: pip install 'invdyn[learn]'") from error
    return h5py


def open_hdf5(h5py: ModuleType, file: Path) -> Any:
    """An open, read-only HDF5 file, or `DataError`."""
    if not file.is_file():
        raise DataError(f"{file}: no such file")
    try:
        return h5py.File(file, "r")
    except OSError as error:
        raise DataError(f"{file}: not a readable HDF5 file: {error}") from None


def numbered(names: Iterable[str], prefix: str) -> list[str]:
    """Names ``<prefix>_N``, sorted by N."""
    pattern = re.compile(rf"{prefix}_(\d+)")
    found = [(int(m.group(1)), n) for n in names if (m := pattern.fullmatch(n))]
    return [n for _, n in sorted(found)]


def text(value: Any) -> str:
    """An HDF5 attribute or cell as a string."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, np.ndarray) and value.shape == ():
        return text(value[()])
    return str(value)


def numeric_dataset(h5py: ModuleType, group: Any, key: str, where: str) -> np.ndarray:
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


def low_dimensional(h5py: ModuleType, item: Any) -> bool:
    """Whether `item` is a dataset of numbers with at most one dimension a frame (not an image,
    nor text)."""
    return isinstance(item, h5py.Dataset) and item.ndim <= 2 and item.dtype.kind in "biuf"


def is_hdf5(path: Path) -> bool:
    """Whether `path` is a file in HDF5's format (from its signature)."""
    return path.is_file() and bool(load_h5py().is_hdf5(path))


def has_group(path: Path, name: str) -> bool:
    """Whether the HDF5 file `path` (`is_hdf5`) has a top-level entry `name`."""
    h5py = load_h5py()
    with open_hdf5(h5py, path) as handle:
        return name in handle
