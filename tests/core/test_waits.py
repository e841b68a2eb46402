"""Waits that say what they are, once they last."""

from __future__ import annotations

import io
import logging
import time

import pytest

from invdyn._waits import announced, on_stderr


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_long_step_says_what_it_does_and_how_long_it_took(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="invdyn"), announced("compiling x", after=0.05):
        time.sleep(0.3)
    assert caplog.records[0].getMessage() == "compiling x..."
    assert caplog.records[1].getMessage().startswith("compiling x: done in 0.")


def test_without_a_logging_handler_a_terminal_shows_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # as in a script: no handler above the invdyn logger (pytest's own are on the root)
    monkeypatch.setattr(logging.getLogger("invdyn"), "propagate", False)
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    with announced("compiling x", after=0.05):
        time.sleep(0.3)
    assert terminal.getvalue().startswith("invdyn: compiling x...\ninvdyn: compiling x: done in")


def test_the_command_line_sends_the_lines_to_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    with on_stderr(), announced("loading y", after=0.01):
        time.sleep(0.1)
    with on_stderr(quiet=True), announced("loading z", after=0.01):
        time.sleep(0.1)
    said = stream.getvalue().splitlines()
    assert said[0] == "invdyn: loading y..." and said[1].startswith("invdyn: loading y: done in")
    assert len(said) == 2


@pytest.mark.parametrize(("after", "pause", "records"), [(5.0, 0.0, 0), (0.01, 0.1, 2)])
def test_a_short_step_says_nothing_and_a_handled_one_nothing_of_its_own(
    after: float,
    pause: float,
    records: int,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A step shorter than `after` says nothing; a longer one, whose lines a logging handler
    takes (pytest's here), writes nothing to the terminal itself."""
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    with caplog.at_level(logging.INFO, logger="invdyn"), announced("loading y", after=after):
        time.sleep(pause)
    assert len(caplog.records) == records and not terminal.getvalue()


def test_a_step_with_a_bar_of_its_own_says_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logging.getLogger("invdyn"), "propagate", False)
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    with announced("compiling x", after=0.01, when=False):
        time.sleep(0.1)
    assert not terminal.getvalue()


def test_an_error_in_the_step_passes_through() -> None:
    with pytest.raises(ValueError, match="bad"), announced("z", after=5.0):
        raise ValueError("bad")
