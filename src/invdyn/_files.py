"""Files: output written atomically, so that nothing the user had is lost to a half-written
file; input files checked to be files before they are opened; and output paths checked, before
any work, to be writable and to stay out of the datasets and checkpoints that commands read."""

from __future__ import annotations

import contextlib
import errno
import glob
import json
import math
import os
import re
import shutil
import socket
import stat
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from invdyn.errors import InputError

INFO_PATH = "meta/info.json"
"""A LeRobot dataset's description, relative to its folder: the file that makes one."""
MODEL_FILE = "model.safetensors"
"""A checkpoint's weights (`invdyn.learn.checkpoint`): the file that makes a directory one."""
IDENTIFICATION = "identification.npz"
"""The identified parameters in the output directory of an identification
(`invdyn.ident.run`), which a checkpoint's loader names when it is given one."""
EVALUATION = "evaluation"
"""The folder of the scores that ``invdyn evaluate`` writes by default: beside a run's
checkpoint, else inside the checkpoint or the identification it scores."""

# what a path that is not a regular file is, by its stat.S_IS* test
_NOT_FILES = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def check_regular_file(path: str | os.PathLike[str], what: str) -> None:
    """`InputError` naming `path` when it exists and is not a regular file (a directory, a
    pipe, a device), which reading could block on or never finish; found by ``stat``, without
    opening it. A missing or unreadable path is left to opening it to report.

    Args:
      path: the file to be read.
      what: what it should hold, as in "not <what>" ("a URDF file").
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _NOT_FILES if test(mode)), "not a regular file")
        raise InputError(f"{os.fsdecode(path)}: {kind}, not {what}")


def enclosing_dataset(path: str | os.PathLike[str]) -> Path | None:
    """The LeRobot dataset that `path` lies inside (the nearest folder above it holding
    `INFO_PATH` and a ``data`` folder), or None."""
    for folder in Path(path).resolve().parents:
        if (folder / INFO_PATH).is_file() and (folder / "data").is_dir():
            return folder
    return None


def check_output_directory(path: str | os.PathLike[str] | None) -> None:
    """`InputError`, before any work, when the output directory `path` (``--out``) is
    something other than a directory, a dataset's (the results go into one of their own) or
    one inside a dataset, a checkpoint's, or one that cannot be written or made (its nearest
    existing ancestor a file, or not writable). None: no output directory, nothing to check."""
    if path is None:
        return
    if Path(path).exists() and not Path(path).is_dir():
        raise InputError(f"--out {path}: exists and is not a directory")
    if (Path(path) / INFO_PATH).is_file():
        raise InputError(f"--out {path}: holds a dataset; give a directory of its own")
    check_apart_from_inputs("--out", Path(path), Path(path))
    if Path(path).is_dir() and not os.access(path, os.W_OK | os.X_OK):
        raise InputError(f"--out {path}: is not writable")
    reason = unmakeable(path)
    if reason is not None:
        raise InputError(f"--out {path}: {reason}")


def check_apart_from_inputs(option: str, path: Path, folder: Path) -> None:
    """`InputError` naming `option` when an output `path`, written into `folder`, would land
    inside a dataset or in a trained model's checkpoint directory, whose files the commands
    read."""
    dataset = enclosing_dataset(path)
    if dataset is not None:
        raise InputError(f"{option} {path}: lies inside the dataset {dataset}; write beside it")
    if (folder / MODEL_FILE).is_file():
        raise InputError(
            f"{option} {path}: would write into the checkpoint {folder}; write beside it"
        )


def check_json_path(path: Path | None, *, out: Path | None = None) -> None:
    """`InputError`, before any work, when the JSON file `path` (``--json``) is a directory,
    a file inside a dataset or a checkpoint, a stream that cannot be written, a file that
    cannot be written (in a directory that cannot be made or written), or lies in the output
    directory `out` (``--out``) itself, where a command writes its own files. None: no JSON
    file, nothing to check."""
    if path is None:
        return
    if path.is_dir():
        raise InputError(f"--json {path}: is a directory; give a file path")
    if is_stream(path):
        if not os.access(path, os.W_OK):
            raise InputError(f"--json {path}: cannot be written")
        return
    check_apart_from_inputs("--json", path, path.parent)
    problem = unmakeable(path.parent)
    if problem is None and path.parent.exists():
        try:  # the file is written next to it and renamed over it
            with tempfile.TemporaryFile(dir=path.parent):
                pass
        except OSError as error:
            problem = f"cannot be written in {path.parent} ({error.strerror})"
    if problem is not None:
        raise InputError(f"--json {path}: {problem}")
    if out is not None and (
        path.absolute() == out.absolute() or out.absolute() in path.absolute().parents
    ):
        raise InputError(
            f"--json {path}: inside --out {out}, where the command writes its own files; give "
            "a path outside it"
        )


def unmakeable(directory: str | os.PathLike[str]) -> str | None:
    """Why the absent `directory` cannot be made: its nearest existing ancestor is not a
    directory, or cannot be written (by permission, or as ``/proc`` or a read-only file system
    refuse even root: a directory made there and removed tells); None when it exists or can
    be made."""
    absolute = Path(directory).absolute()
    existing = next(p for p in (absolute, *absolute.parents) if p.exists())
    if existing == absolute:
        return None
    if not existing.is_dir():
        return f"cannot be made, {existing} is not a directory"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"cannot be made, {existing} is not writable"
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".invdyn-probe.", dir=existing))
    except OSError as error:
        return f"cannot be made in {existing}: {error.strerror}"
    return None


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """A stream that becomes `path` when the block ends without an error.

    It writes a temporary file in the same directory (created if missing), synced to disk and
    then renamed over `path`; an error in the block removes it and leaves `path` as it was.
    A symbolic link has its target replaced (the link stays); a stream (`is_stream`: a pipe,
    a terminal, ``/dev/fd/N``) is written into as it is, and this process's standard output or
    error (``/dev/stdout``, or the file it goes to) through ``sys.stdout`` or ``sys.stderr``.

    Args:
      path: the file to write.
      mode: "w" (text, UTF-8) or "wb".
    """
    path = Path(path).absolute()
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "a directory, not a file to write", str(path))
    text = "b" not in mode
    encoding, newline = ("utf-8", "") if text else (None, None)
    own = _own_stream(path)
    if own is not None:
        # this process's output (--json /dev/stdout, or the file it goes to): written in turn
        yield own if text else own.buffer
        own.flush()
        return
    if is_stream(path):
        with open(path, mode, encoding=encoding, newline=newline) as stream:
            yield stream
        return
    path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file private; give it those of a file that open() creates
        os.chmod(temporary, output_mode(directory=False))
        with os.fdopen(handle, mode, encoding=encoding, newline=newline) as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def staging_directory(target: Path) -> Path:
    """A new private directory beside `target` to write it in before it is renamed into place:
    ``.<name>.<host>-<pid>.<random>.tmp``, named after this machine and process. Those that
    processes of this machine left there and that no longer run (killed while writing) are
    removed first; those of running processes, or of other machines, are left alone."""
    host = _host()
    pattern = re.compile(rf"\.{re.escape(target.name)}\.{re.escape(host)}-(\d+)\..*\.tmp")
    for entry in target.parent.glob(f".{glob.escape(target.name)}.{host}-*.tmp"):
        found = pattern.fullmatch(entry.name)
        if found and entry.is_dir() and not _running(int(found[1])):
            shutil.rmtree(entry, ignore_errors=True)
    owner = f".{target.name}.{host}-{os.getpid()}."
    return Path(tempfile.mkdtemp(prefix=owner, suffix=".tmp", dir=target.parent))


@contextlib.contextmanager
def output_set(directory: Path) -> Iterator[Path]:
    """A private directory to write a set of outputs in, each of whose files is renamed into
    `directory` (made if missing; an earlier run's files of those names replaced) when the
    block ends without an error: an interrupted run leaves the earlier set whole rather than
    mixed with part of its own. The private directory is removed either way (or, after a
    killed process, by the next run: `staging_directory`). A `directory` that the block made
    and that a failed block leaves empty is removed too."""
    made = not directory.exists()
    directory.mkdir(parents=True, exist_ok=True)
    staging = staging_directory(directory / ".outputs")
    failed = True
    try:
        yield staging
        for path in sorted(staging.iterdir()):
            os.replace(path, directory / path.name)
        failed = False
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if failed and made:
            with contextlib.suppress(OSError):
                directory.rmdir()


def _host() -> str:
    """This machine's name, in letters, digits and '-' alone (a file name's part)."""
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname()) or "host"


def _running(pid: int) -> bool:
    """Whether process `pid` of this machine runs (or exists as another user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def output_mode(*, directory: bool) -> int:
    """The permissions that open() (0o666) or mkdir() (0o777) give a new file or directory,
    less the process's umask: what a temporary one renamed into place should have."""
    return (0o777 if directory else 0o666) & ~_umask()


def _umask() -> int:
    """The process's umask, read without changing it where Linux tells it."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def sync_tree(root: Path) -> None:
    """Sync every file and directory under the directory `root`, and `root`, to disk, so that
    what it holds survives a power loss once it is renamed into place."""
    for directory, _, files in os.walk(root, topdown=False):
        for name in files:
            _sync(Path(directory, name))
        _sync(Path(directory))


def sync_directory(directory: Path) -> None:
    """Sync `directory`'s entries (a rename into it) to disk."""
    _sync(directory)


def _sync(path: Path) -> None:
    """fsync the file or directory `path`, where the platform allows it."""
    try:
        handle = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


def _own_stream(path: Path) -> Any:
    """``sys.stdout`` or ``sys.stderr`` where `path` is the file or stream it writes to, else
    None."""
    try:
        target = os.stat(path)
    except OSError:
        return None
    for stream in (sys.stdout, sys.stderr):
        try:
            own = os.fstat(stream.fileno())
        except (AttributeError, OSError, ValueError):
            continue
        if (own.st_dev, own.st_ino) == (target.st_dev, target.st_ino):
            return stream
    return None


def is_stream(path: Path) -> bool:
    """Whether `path` names something to write into rather than a file to replace: a pipe,
    a terminal, or a name of the system's for a stream (``/dev/stdout``, ``/dev/fd/N``,
    ``/proc/self/fd/N``), even where it leads to a file (``> log``)."""
    absolute = Path(path).absolute()
    system = absolute.parts[1:2] in (("dev",), ("proc",))
    return absolute.exists() and (system or not absolute.is_file())


def remove_stale(directory: Path, names: Sequence[str]) -> bool:
    """Remove the files `names` from `directory`, results that no longer describe what is
    beside them, and `directory` itself when that leaves it empty. Returns whether a file was
    removed."""
    removed = False
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            (directory / name).unlink()
            removed = True
    with contextlib.suppress(OSError):
        directory.rmdir()
    return removed


def write_json(path: str | os.PathLike[str], data: Any) -> Path:
    """Write `data` as indented JSON (`json_text`), atomically; return the absolute path."""
    with atomic_open(path) as out:
        out.write(json_text(data))
    return Path(path).absolute()


def json_text(data: Any, *, indent: int = 2) -> str:
    """`data` as indented, strictly valid JSON text (UTF-8 characters as they are), ending in a
    newline: NaN and infinite numbers are written as null (`finite_json`), as JSON has no token
    for them."""
    text = json.dumps(finite_json(data), indent=indent, allow_nan=False, ensure_ascii=False)
    return text + "\n"


def finite_json(data: Any) -> Any:
    """`data` with every NaN or infinite float in it, through dicts, lists, tuples and numpy
    arrays, as None (JSON's null), and numpy arrays and scalars as Python lists and numbers;
    everything else as it is."""
    if isinstance(data, (np.ndarray, np.generic)):
        data = data.tolist()
    if isinstance(data, dict):
        return {key: finite_json(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite_json(value) for value in data]
    if isinstance(data, float) and not math.isfinite(data):
        return None
    return data
