"""The dataset formats that `invdyn import` reads, in the order it tries them on a source.

A new format is a module that declares a `DatasetFormat` (``FORMAT``), and a line below that
registers it; `registered` adds one for a while (a test, a session), and `register` for good.
`detect_format` gives the first format whose ``detect`` takes a path, and `dataset_format`
the one of a name (``--format``).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

from invdyn.errors import DataError, InputError
from invdyn.learn.datasets import minari, minari_arrow, robomimic, tables, videos
from invdyn.learn.datasets.formats import DatasetFormat

# in the order they are tried: the first whose detect takes a path reads it
_FORMATS: list[DatasetFormat] = [
    robomimic.FORMAT,
    minari.FORMAT,
    minari_arrow.FORMAT,
    tables.FORMAT,
    videos.FORMAT,
]


def dataset_formats() -> tuple[DatasetFormat, ...]:
    """The registered formats, in the order `detect_format` tries them."""
    return tuple(_FORMATS)


def dataset_format(name: str) -> DatasetFormat:
    """The registered format called `name`, or `InputError` listing them."""
    for known in _FORMATS:
        if known.name == name:
            return known
    names = ", ".join(known.name for known in _FORMATS)
    raise InputError(f"unknown dataset format {name!r}; the formats are {names}")


def detect_format(path: Path) -> DatasetFormat:
    """The first registered format whose ``detect`` takes `path`.

    Raises:
      DataError: no such file, or a path of none of the formats; the message names it, what
        a path of each format looks like, and the formats.
      InputError: what a format's ``detect`` raises (a folder inside a LeRobot dataset, say).
    """
    for known in _FORMATS:
        if known.detect(path):
            return known
    if not path.exists():
        raise DataError(f"{path}: no such file")
    phrases = list(dict.fromkeys(known.phrase for known in _FORMATS))
    listed = phrases[0] if len(phrases) == 1 else f"{', '.join(phrases[:-1])} nor {phrases[-1]}"
    names = ", ".join(known.name for known in _FORMATS)
    raise DataError(f"{path}: neither {listed} (the formats {names})")


def register(added: DatasetFormat) -> None:
    """Add a format, tried after those registered before it.

    Raises:
      InputError: a name that is not lowercase letters, digits and '-', or one already
        registered.
    """
    if not isinstance(added, DatasetFormat):
        raise InputError(f"a dataset format must be a DatasetFormat, got {added!r}")
    if not re.fullmatch(r"[a-z0-9][a-z0-9\-]*", added.name):
        raise InputError(
            f"dataset format name {added.name!r} must be lowercase letters, digits and '-'"
        )
    if any(known.name == added.name for known in _FORMATS):
        raise InputError(f"a dataset format {added.name!r} is already registered")
    _FORMATS.append(added)


@contextlib.contextmanager
def registered(added: DatasetFormat) -> Iterator[DatasetFormat]:
    """`added` registered (`register`) inside the block, and no longer after it."""
    register(added)
    try:
        yield added
    finally:
        _FORMATS.remove(added)
