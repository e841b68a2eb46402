"""The ``invdyn`` command: demo, track, collect, import, train, evaluate, label, follow, ident,
wbc, info, robots.

Each command is a module here that declares its arguments (``add``) and runs (``run``): it
calls the library function that does the command's work, with all of its checks, and prints
what it returns. The options that several commands share are declared once
(`invdyn.cli.options`). `main` parses, checks that the command's extras are installed, loads
PyTorch for the commands that run networks, and ends every way a command can end in an exit
status: user errors (an unknown robot, a malformed description, a missing file, an optional
extra not installed) print ``invdyn: error: <message>`` and exit with status 2, as argparse
does for bad arguments; a Ctrl-C exits 130 and a SIGTERM 143, each with one line.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from importlib.metadata import version
from typing import Any

from invdyn._files import check_json_path
from invdyn._parallel import LAUNCHED
from invdyn._waits import announced, on_stderr
from invdyn.cli import (
    collect,
    demo,
    evaluate,
    follow,
    ident,
    importer,
    info,
    label,
    robots,
    track,
    train,
    wbc,
)
from invdyn.cli.options import STANDARD_OUTPUT
from invdyn.errors import InvdynError
from invdyn.extras import require_extras

COMMANDS = (
    demo,
    track,
    collect,
    importer,
    train,
    wbc,
    evaluate,
    label,
    follow,
    ident,
    info,
    robots,
)
"""The modules of the commands, in the order ``invdyn --help`` lists them."""


class _Terminated(KeyboardInterrupt):
    """SIGTERM (a scheduler's stop, ``kill``), raised where the command is, so that it unwinds
    as on Ctrl-C: temporary files removed, resumable work kept."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``invdyn`` command line and return its exit status."""
    stdout = sys.stdout
    if stdout is not None:
        sys.stdout = _ReaderMayLeave(stdout)
    try:
        return _run(argv)
    except KeyboardInterrupt:
        # outside the command's own handler: while its arguments are parsed
        return _stopped(terminated=False)
    finally:
        # what is still buffered, through the wrapper: a reader gone by now costs nothing
        if sys.stdout is not None:
            sys.stdout.flush()
        sys.stdout = stdout


def _run(argv: Sequence[str] | None) -> int:
    """`main`, its standard output wrapped."""
    args, unrecognized = _parser().parse_known_args(argv)
    if unrecognized:
        # with the command's own usage, which lists the options it has
        args.command_parser.error(f"unrecognized arguments: {' '.join(unrecognized)}")
    if getattr(args, "no_progress", True) is False and not sys.stderr.isatty():
        # into a log file, bars that redraw their line are noise; train prints epoch lines
        args.no_progress = True
    command: Callable[[argparse.Namespace], int] = args.command
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if in_main_thread else None
    try:
        require_extras(*args.extras(args), purpose=args.command_parser.prog)
        json_path = getattr(args, "json", None)
        check_json_path(json_path, out=getattr(args, "out", None))
        # with --json - standard output carries the JSON alone, for a program to read, and
        # what is printed for a person goes to standard error
        args.json_stream = sys.stdout if json_path == STANDARD_OUTPUT else None
        printed = sys.stderr if args.json_stream is not None else sys.stdout
        with (
            warnings.catch_warnings(),
            contextlib.redirect_stdout(printed),
            # the processes of a distributed run after the first say what the first says
            on_stderr(quiet=_repeats_the_first_process()),
        ):
            warnings.showwarning = _show_warning
            if args.uses_torch(args):
                _load_torch()
            return command(args)
    except _Terminated:
        return _stopped(terminated=True)
    except SystemExit as stop:
        # Ray's own handler of SIGTERM, which ray.init installs, exits with status 15
        if stop.code != signal.SIGTERM:
            raise
        return _stopped(terminated=True)
    except (InvdynError, OSError, ImportError) as error:
        # a stop that came while a module loaded may reach here as that import's failure
        interruption = _interruption(error)
        if interruption is not None:
            return _stopped(terminated=isinstance(interruption, _Terminated))
        if not (isinstance(error, InvdynError) and _repeats_the_first_process()):
            print(f"invdyn: error: {_describe(error)}", file=sys.stderr)
        return 2
    except MemoryError as error:
        print(
            f"invdyn: error: out of memory: {error or 'an allocation failed'} (a shorter "
            "--duration, fewer episodes or smaller batches need less)",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        return _stopped(terminated=False)
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous or signal.SIG_DFL)


def _parser() -> argparse.ArgumentParser:
    """The ``invdyn`` parser: a command of each module of `COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="invdyn", description="Inverse dynamics for robots, analytic and learned."
    )
    parser.add_argument("--version", action="version", version=f"invdyn {version('invdyn')}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for module in COMMANDS:
        module.add(commands)
    return parser


def _load_torch() -> None:
    """Import PyTorch, which takes seconds the first time, saying so when it does."""
    with announced("loading PyTorch"):
        import torch  # noqa: F401


class _ReaderMayLeave:
    """Standard output that, once its reader has gone (``invdyn track ... | head``), sends
    what is printed to nowhere, so that the command still finishes and writes its files."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._quietly(lambda: self._stream.write(text)) or len(text)

    def flush(self) -> None:
        self._quietly(self._stream.flush)

    def _quietly(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except BrokenPipeError:
            nowhere = os.open(os.devnull, os.O_WRONLY)
            os.dup2(nowhere, self._stream.fileno())
            os.close(nowhere)
            return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _stopped(*, terminated: bool) -> int:
    """Say that a Ctrl-C (or, `terminated`, a SIGTERM) stopped the command, unless this is a
    process of ``invdyn train --nproc``, whose launcher says it; return the exit status."""
    if not (os.environ.get(LAUNCHED) and int(os.environ.get("WORLD_SIZE", "1")) > 1):
        print(f"invdyn: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
    return 143 if terminated else 130


def _repeats_the_first_process() -> bool:
    """Whether this is a process of a distributed run (torchrun's ``WORLD_SIZE`` > 1) other
    than its first (``RANK`` > 0), which reads the same input and meets the same errors in it
    as the first, which reports them."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1 and int(os.environ.get("RANK", "0")) > 0


def _interruption(error: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C or SIGTERM (`_Terminated`) among the exceptions that `error` was raised
    from or while handling, if any."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def _show_warning(message: Warning | str, *_: object, **__: object) -> None:
    """A warning as a line of its own, ``invdyn: warning: <message>``, without the source line
    Python's default shows."""
    print(f"invdyn: warning: {message}", file=sys.stderr)


def _describe(error: BaseException) -> str:
    """The message of a user error, without the errno noise of OSError."""
    if isinstance(error, OSError) and error.strerror:
        return f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    return str(error)
