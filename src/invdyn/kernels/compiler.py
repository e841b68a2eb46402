"""numba's ``njit`` made safe for several processes: its on-disk cache for processes that
compile at once, its parallel kernels for processes forked from one that ran them.

numba caches each compiled version of a kernel in a file and lists them in an index, which a
process reads, extends and rewrites without a lock. Two processes that compile versions of
one kernel at the same moment (workers of ``invdyn train --nproc``, Ray or a process pool, on a
fresh install; or several scripts at once) can leave an index that points a version at
another's machine code, and every later process that loads it crashes (numba issue 4807).

It also saves the index entry after the machine code it points at, where numba saves it
before: a process stopped in between (a Ctrl-C during a first call) would leave an entry that
points at whatever that file held before (a version compiled from an older source, say), which
every later process then loads and crashes on.

`jit` takes an exclusive lock on a file of the cache's directory, `LOCK_NAME`, around each
compilation that a call from Python starts: the load from the cache or the compilation and its
saving, and the compilations of the kernels it calls. A process that waits for the lock then
finds the version that the other saved, and loads it rather than compiling it again; processes
of other installs, with caches of their own, do not wait. Where the file cannot be made, or
the platform has no ``fcntl`` (Windows), kernels compile without it.

numba's threads, on Linux those of GNU OpenMP, do not survive a fork: numba terminates a
forked process at its first parallel launch once the parent has started them (a fork-based
``multiprocessing.Pool`` or torch ``DataLoader`` whose parent had run a large batch). A batch
kernel shares its states among the threads only from `parallel_from` states on, which in
such a process is never.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numba
from numba import njit
from numba.core.caching import IndexDataCacheFile

from invdyn.errors import warn

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

#: the lock file in a kernel's cache directory
LOCK_NAME = "invdyn-compile.lock"

#: seconds a process waits for the lock before it says why it waits: processes started
#: together (workers) each hold it briefly to load the cached kernels
QUIET_WAIT_S = 5.0

#: below this many states a batch kernel runs on the calling thread: waking the thread pool
#: costs more than it saves (microseconds), and on a busy machine waits for a descheduled
#: worker (milliseconds)
PARALLEL_FROM = 32

_held = threading.local()
_forked_after_gnu_openmp = False


# the modules whose kernels inline each other's functions: a kernel's cached machine code holds
# code of all of them, so that a change to any one makes every cached kernel stale
KERNEL_MODULES = ("cpu.py", "cpu_derivatives.py")


def _kernel_sources_stamp() -> tuple[tuple[str, float, int], ...]:
    """The name, modification time and size of each of the `KERNEL_MODULES` files."""
    directory = Path(__file__).parent
    stamps = []
    for name in KERNEL_MODULES:
        status = (directory / name).stat()
        stamps.append((name, status.st_mtime, status.st_size))
    return tuple(stamps)


_KERNEL_SOURCES = _kernel_sources_stamp()


def parallel_from() -> int:
    """The fewest states that a batch kernel shares among numba's threads: `PARALLEL_FROM`, or
    none (``sys.maxsize``) in a process forked after GNU OpenMP's threads had started."""
    return sys.maxsize if _forked_after_gnu_openmp else PARALLEL_FROM


def _gnu_openmp_started() -> bool:
    """Whether this process has started numba's threads on GNU OpenMP."""
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel kernel has run
        return False
    openmp = sys.modules.get("numba.np.ufunc.omppool")  # loaded with the "omp" layer
    return layer == "omp" and getattr(openmp, "openmp_vendor", None) == "GNU"


def _note_fork() -> None:
    global _forked_after_gnu_openmp
    _forked_after_gnu_openmp = _forked_after_gnu_openmp or _gnu_openmp_started()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_note_fork)


def jit(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """``njit(cache=True, **options)``, whose compilations hold `compile_lock`, and whose cached
    versions are stale once any of the `KERNEL_MODULES` changes (numba's own stamp is the file
    of the kernel's module alone, blind to the functions it inlines from the others)."""

    def decorate(function: Callable[..., Any]) -> Any:
        kernel = njit(cache=True, **options)(function)
        cache_file = kernel._cache._cache_file
        cache_file.__class__ = DataFirstCacheFile
        cache_file._source_stamp = (cache_file._source_stamp, _KERNEL_SOURCES)
        return locked(kernel)

    return decorate


class DataFirstCacheFile(IndexDataCacheFile):
    """numba's index and data files of a kernel's cache, saving a version's machine code
    before the index entry that points at it."""

    def save(self, key: Any, data: Any) -> None:
        overloads = self._load_index()
        name = overloads.get(key)
        if name is None:
            taken = set(overloads.values())
            name = next(n for n in map(self._data_name, itertools.count(1)) if n not in taken)
        self._save_data(name, data)
        if overloads.get(key) != name:
            self._save_index({**overloads, key: name})


def lock_path(kernel: Any) -> Path | None:
    """The lock file of the numba dispatcher `kernel`'s cache directory; None for a kernel
    without an on-disk cache, which has nothing to guard."""
    directory = getattr(kernel._cache, "_cache_path", None)
    return None if directory is None else Path(directory) / LOCK_NAME


def locked(kernel: Any) -> Any:
    """The numba dispatcher `kernel`, each of whose compilations for a call from Python (its
    ``_compile_for_args``, which numba calls when no compiled version fits the arguments)
    holds `compile_lock` on its `lock_path`."""
    compile_for_args = kernel._compile_for_args
    path = lock_path(kernel)

    def compile_holding_the_lock(*args: Any, **kwargs: Any) -> Any:
        with compile_lock(path):
            return compile_for_args(*args, **kwargs)

    kernel._compile_for_args = compile_holding_the_lock
    return kernel


def _lock_within(descriptor: int, seconds: float) -> bool:
    """Whether the exclusive lock on the open file `descriptor` was taken within `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)


@contextmanager
def compile_lock(path: Path | None) -> Iterator[None]:
    """Hold the exclusive lock on the file `path`, waiting for another process or thread that
    holds it (with a warning after `QUIET_WAIT_S`, which loading cached kernels takes less
    than); a thread that holds a lock already goes on, and so does one that cannot open the
    file (or is given None)."""
    if fcntl is None or path is None or getattr(_held, "depth", 0) > 0:
        yield
        return
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)
    except OSError:
        yield
        return
    try:
        if not _lock_within(descriptor, QUIET_WAIT_S):
            warn(
                f"waiting for another process that compiles invdyn's kernels into "
                f"{path.parent}; this one then loads them from there"
            )
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        _held.depth = 1
        yield
    finally:
        _held.depth = 0
        os.close(descriptor)  # releases the lock
