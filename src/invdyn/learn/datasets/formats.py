"""What a dataset format is: how `invdyn import` recognises a source and reads its episodes.

A format is a `DatasetFormat`: a name, a line that describes it, ``detect(path)`` (whether a
path is of this format, from its name and a glance inside) and ``read(path, options)`` (its
episodes, as `Imported`). Each format module declares one as ``FORMAT``; the registry
(`invdyn.learn.datasets.registry`) lists them in the order they are tried, and
`invdyn.learn.datasets.importing.import_dataset` writes what the detected one reads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from invdyn.learn.datasets.episodes import Imported


@dataclasses.dataclass(frozen=True, kw_only=True)
class ImportOptions:
    """The options of `invdyn import` that a format's reader may take; each format declares
    which of the optional ones it reads (`DatasetFormat.options`), and a source of another
    format refuses them.

    Attributes:
      fps: frames per second, > 0, or None for the format's default (robomimic 20 Hz, Minari
        1 Hz, video files their own; a table needs it). Every format takes it.
      obs_keys: the entries that make the state, in order: robomimic observations, or table
        columns (a column's name, or the prefix of columns ``<name>.*``); None for the
        format's default.
      action_keys: a table's action columns, as `obs_keys`; None for a dataset without
        actions.
      episode_key: a table's column of episode numbers (a run of rows of one number is an
        episode); None for a table of one episode.
      filter_key: robomimic: only the demos listed in ``mask/<filter_key>``.
      camera: videos: the camera's name, the feature ``observation.images.<camera>``; None
        for ``video``.
      size: videos: (width, height), even, to resize the frames to; None to keep them.
      progress: show progress bars. Every format takes it.
    """

    fps: float | None = None
    obs_keys: tuple[str, ...] | None = None
    action_keys: tuple[str, ...] | None = None
    episode_key: str | None = None
    filter_key: str | None = None
    camera: str | None = None
    size: tuple[int, int] | None = None
    progress: bool = False


COMMON_OPTIONS = ("fps", "progress")
"""The fields of `ImportOptions` that every format takes."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class DatasetFormat:
    """A format that `invdyn import` reads (`invdyn.learn.datasets.registry`).

    Attributes:
      name: what ``--format`` calls it: lowercase letters, digits and '-'.
      description: what a source of this format is, in one line (``--help`` lists it).
      detect: whether a path is a source of this format, from its name and a glance inside
        (not a full read); it may raise `InputError` for a path that nothing should read.
      read: the episodes of a source of this format, checked; `DataError` or `InputError`
        naming the file and the problem.
      options: the optional fields of `ImportOptions` (beyond `COMMON_OPTIONS`) that `read`
        takes; a source of this format refuses the others.
      looks_like: what a path of this format looks like, in the words of the message for a
        path of none ("neither <looks_like>, ... nor ..."); formats that share one phrase
        are named once. Empty for `description`.
      noun: what messages call a source of this format ("not an option of <noun>"); empty
        for "a <name> file".
      check_out: checks the dataset's path against the source before anything is read
        (``check_out(source, out)``, raising `InputError`), or None for no check.
    """

    name: str
    description: str
    detect: Callable[[Path], bool]
    read: Callable[[Path, ImportOptions], Imported]
    options: tuple[str, ...] = ()
    looks_like: str = ""
    noun: str = ""
    check_out: Callable[[Path, Path], None] | None = None

    @property
    def phrase(self) -> str:
        """`looks_like`, or the description where it is empty."""
        return self.looks_like or self.description

    @property
    def source_noun(self) -> str:
        """`noun`, or "a <name> file" where it is empty."""
        return self.noun or f"a {self.name} file"
