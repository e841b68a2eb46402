"""`invdyn import` as a library function: a source of any registered format into a dataset.

`import_dataset` takes an `ImportConfig` (the source, the dataset to write, the format or
None to detect it, and the `ImportOptions` of its reader), makes every check the command
makes, writes the episodes as a LeRobot v3 dataset and returns an `ImportResult`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from invdyn.errors import InputError
from invdyn.learn.datasets.episodes import DatasetInfo
from invdyn.learn.datasets.formats import COMMON_OPTIONS, DatasetFormat, ImportOptions
from invdyn.learn.datasets.lerobot_read import read_info
from invdyn.learn.datasets.lerobot_write import check_target, write_dataset
from invdyn.learn.datasets.mp4 import check_fps
from invdyn.learn.datasets.registry import dataset_format, detect_format

IMPORTER = "invdyn import"
"""The ``importer`` that the metadata of an imported dataset names."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ImportConfig:
    """What `import_dataset` reads and writes.

    Attributes:
      source: the file or folder to read.
      out: the dataset directory to write.
      format: the name of a registered format (`invdyn.learn.datasets.registry`) to read
        `source` as, or None to detect it.
      options: what the format's reader takes (`ImportOptions`); those that the format does
        not take must be left unset.
      overwrite: replace an existing dataset at `out`.
    """

    source: Path
    out: Path
    format: str | None = None
    options: ImportOptions = dataclasses.field(default_factory=ImportOptions)
    overwrite: bool = False


@dataclasses.dataclass(frozen=True)
class ImportResult:
    """A dataset written by `import_dataset`.

    Attributes:
      path: the dataset directory.
      format: the name of the format that was read.
      info: what the dataset's ``meta/info.json`` says (`DatasetInfo`).
    """

    path: Path
    format: str
    info: DatasetInfo

    @property
    def summary(self) -> str:
        """``N episodes, M frames at F fps, state S, action A``, and each video's key and
        frame size (``observation.images.video 48x32``)."""
        videos = "".join(f", {key} {w}x{h}" for key, (h, w, _) in self.info.videos.items())
        return self.info.summary + videos


def import_dataset(config: ImportConfig) -> ImportResult:
    """Read a source of a registered format and write its episodes as a LeRobot v3 dataset.

    The dataset's source (``robot_type``) is the format's name, and its metadata
    (`invdyn.learn.datasets.lerobot_read.read_metadata`) names the importer, the format, the
    source and the options given, with what the format adds (a video's
    ``episode_sources``).

    Args:
      config: the source, the dataset, the format and the options.

    Returns:
      The dataset written, its format and info.

    Raises:
      FileExistsError, NotADirectoryError: an occupied or impossible `config.out`
        (`invdyn.learn.datasets.lerobot_write.check_target`), before anything is read.
      InputError: an unknown format, options that the format does not take, a bad fps, or
        what the format's reader raises.
      DataError: a source of no format, or what the format's reader raises.
    """
    out, source, options = Path(config.out), Path(config.source), config.options
    # an occupied out is refused before the source is read, not after
    check_target(out, overwrite=config.overwrite)
    read_as = detect_format(source) if config.format is None else dataset_format(config.format)
    _refuse_options(options, read_as, source)
    if options.fps is not None:
        check_fps(options.fps)
    if read_as.check_out is not None:
        read_as.check_out(source, out)
    imported = read_as.read(source, options)
    given = {
        field.name: value
        for field in dataclasses.fields(options)
        if field.name not in COMMON_OPTIONS and (value := getattr(options, field.name)) is not None
    }
    path = write_dataset(
        out,
        imported.episodes,
        fps=imported.fps,
        state_names=imported.state_names,
        action_names=imported.action_names,
        source=read_as.name,
        overwrite=config.overwrite,
        videos=imported.videos,
        metadata={
            "importer": IMPORTER,
            "format": read_as.name,
            "file": str(source),
            **given,
            **imported.metadata,
        },
    )
    return ImportResult(path, read_as.name, read_info(path))


def _refuse_options(options: ImportOptions, read_as: DatasetFormat, source: Path) -> None:
    """`InputError` naming, as the command's options, the `options` that were given (not
    None) although `read_as` does not take them."""
    taken = {*COMMON_OPTIONS, *read_as.options}
    given = [
        "--" + field.name.replace("_", "-")
        for field in dataclasses.fields(options)
        if field.name not in taken and getattr(options, field.name) is not None
    ]
    if given:
        what = "not an option" if len(given) == 1 else "not options"
        raise InputError(f"{', '.join(given)}: {what} of {read_as.source_noun} ({source})")
