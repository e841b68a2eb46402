"""Waits that say what they are: a step that may take a while (compiling a GPU kernel,
importing torch, loading a large model) runs under `announced`, which logs what it is doing to
the ``invdyn`` logger and shows it on a terminal once the step has lasted `SILENT_S`, then how
long it took. A step that finishes sooner says nothing.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

#: seconds a step runs before it says what it is doing
SILENT_S = 2.0

logger = logging.getLogger("invdyn")


def _say(message: str) -> None:
    """Log `message` at INFO, and write it to standard error when that is a terminal."""
    logger.info(message)
    stream = sys.stderr
    if stream is not None and stream.isatty():
        print(f"invdyn: {message}", file=stream, flush=True)


@contextmanager
def announced(what: str, *, after: float = SILENT_S) -> Iterator[None]:
    """Run the block; once it has lasted `after` seconds, say ``what...``, and when it ends
    how long it took."""
    start = time.perf_counter()
    said = threading.Event()

    def say() -> None:
        said.set()
        _say(f"{what}...")

    timer = threading.Timer(after, say)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()
        if said.is_set():
            _say(f"{what}: done in {time.perf_counter() - start:.1f} s")
