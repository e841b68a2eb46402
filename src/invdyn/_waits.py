"""Waits that say what they are: a step that may take a while (compiling a GPU kernel,
importing torch, a fit or a simulation without a progress bar) runs under `announced`, which
logs what it is doing to the ``invdyn`` logger once the step has lasted `SILENT_S`, then how
long it took, and shows both on a terminal where no logging handler takes them. A step that
finishes sooner says nothing; `say` logs a note the same way. The command line sends the
logger's records to standard error (`on_stderr`), so that its messages reach a terminal and a
log file alike.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: seconds a step runs before it says what it is doing
SILENT_S = 2.0

logger = logging.getLogger("invdyn")

Say = Callable[[str], None]
"""Shows a person a line of text (``print``): the notes a long task gives as it goes, such as
what it chose before a wait."""


def say(message: str) -> None:
    """Log `message`, a note for a person (what a step is doing, where an interrupted one
    left its work), at INFO; where no handler takes the ``invdyn`` logger's records (a
    script's or notebook's default), also write it to standard error when that is a
    terminal."""
    logger.info(message)
    stream = sys.stderr
    if not logger.hasHandlers() and stream is not None and stream.isatty():
        print(f"invdyn: {message}", file=stream, flush=True)


@contextmanager
def announced(what: str, *, after: float = SILENT_S, when: bool = True) -> Iterator[None]:
    """Run the block; once it has lasted `after` seconds, say ``what...``, and when it ends
    how long it took; say nothing unless `when` (a step with a progress bar of its own)."""
    if not when:
        yield
        return
    start = time.perf_counter()
    said = threading.Event()

    def say_what() -> None:
        said.set()
        say(f"{what}...")

    timer = threading.Timer(after, say_what)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()
        if said.is_set():
            say(f"{what}: done in {time.perf_counter() - start:.1f} s")


@contextmanager
def on_stderr(*, quiet: bool = False) -> Iterator[None]:
    """Within the block, the ``invdyn`` logger's records of INFO and above go to standard
    error as ``invdyn: <message>`` lines, or nowhere when `quiet`."""
    handler: logging.Handler = logging.NullHandler() if quiet else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("invdyn: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
