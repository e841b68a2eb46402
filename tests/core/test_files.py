"""Tests of invdyn._files: JSON that strict parsers read."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from invdyn._files import _host, output_set, staging_directory, unmakeable, write_json


def _strict_load(path: Path) -> object:
    """The JSON of `path`, refusing NaN and Infinity as JavaScript's JSON.parse does."""

    def refuse(token: str) -> None:
        raise ValueError(f"{path}: {token} is not JSON")

    return json.loads(path.read_text(), parse_constant=refuse)


def test_non_finite_numbers_are_written_as_null(tmp_path: Path) -> None:
    """An undefined metric (R^2 of a constant action: NaN) leaves the file valid JSON."""
    metrics = {
        "r2_mean": math.nan,
        "mae_mean": 0.5,
        "per_action": [{"r2": np.float32("nan"), "nmse": np.float64(2.0)}],
        "bounds": (-math.inf, math.inf),
        "curve": np.array([1.0, np.nan]),
        "note": None,
    }
    written = _strict_load(write_json(tmp_path / "metrics.json", metrics))
    assert written == {
        "r2_mean": None,
        "mae_mean": 0.5,
        "per_action": [{"r2": None, "nmse": 2.0}],
        "bounds": [None, None],
        "curve": [1.0, None],
        "note": None,
    }


def test_a_directory_is_unmakeable_below_a_file_or_where_the_system_refuses(
    tmp_path: Path,
) -> None:
    (tmp_path / "file").write_text("")
    assert unmakeable(tmp_path / "new" / "deeper") is None
    assert not (tmp_path / "new").exists() and list(tmp_path.iterdir()) == [tmp_path / "file"]
    assert (
        unmakeable(tmp_path / "file" / "out")
        == f"cannot be made, {tmp_path / 'file'} is not a directory"
    )


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_directory_is_unmakeable_in_proc_even_for_root() -> None:
    reason = unmakeable("/proc/invdyn-out")
    assert reason is not None and reason.startswith("cannot be made"), reason


def test_a_staging_directory_removes_those_that_killed_writers_left(tmp_path: Path) -> None:
    """Left by a process of this machine that no longer runs: removed; by a running one, or by
    another machine's, or for another target: kept."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True)  # fmt: skip
    dead, host = int(done.stdout), _host()
    left = {
        "killed": tmp_path / f".ds.{host}-{dead}.abc123.tmp",
        "running": tmp_path / f".ds.{host}-{os.getppid()}.abc123.tmp",
        "elsewhere": tmp_path / f".ds.other-machine-{dead}.abc123.tmp",
        "other target": tmp_path / f".ds2.{host}-{dead}.abc123.tmp",
    }
    for path in left.values():
        (path / "videos").mkdir(parents=True)
    staging = staging_directory(tmp_path / "ds")
    assert staging.is_dir() and staging.name.startswith(f".ds.{host}-{os.getpid()}.")
    assert not left["killed"].exists()
    assert all(left[name].is_dir() for name in ("running", "elsewhere", "other target"))


def test_a_link_has_its_target_written_and_a_pipe_is_written_into(tmp_path: Path) -> None:
    """A link to a file stays a link, its target replaced; a pipe (or /dev/stdout) is not
    replaced by a file but receives the text."""
    (tmp_path / "real.json").write_text("old")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    write_json(tmp_path / "link.json", {"a": 1})
    assert (tmp_path / "link.json").is_symlink()
    assert json.loads((tmp_path / "real.json").read_text()) == {"a": 1}
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    reader = subprocess.Popen(["cat", str(pipe)], stdout=subprocess.PIPE, text=True)
    write_json(pipe, {"b": 2})
    out, _ = reader.communicate(timeout=30)
    assert json.loads(out) == {"b": 2} and pipe.is_fifo()


def test_an_output_set_that_fails_leaves_its_directory_as_it_found_it(tmp_path: Path) -> None:
    """A failed set of outputs writes nothing; a directory it made is removed again, one
    that was there (with an earlier run's files) stays as it was."""
    made = tmp_path / "new"
    with pytest.raises(KeyboardInterrupt), output_set(made) as staged:
        (staged / "metrics.json").write_text("{}")
        raise KeyboardInterrupt
    assert not made.exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "metrics.json").write_text("earlier")
    with pytest.raises(ValueError), output_set(kept) as staged:
        (staged / "metrics.json").write_text("{}")
        raise ValueError
    assert [p.name for p in kept.iterdir()] == ["metrics.json"]
    assert (kept / "metrics.json").read_text() == "earlier"
    with output_set(made) as staged:
        (staged / "metrics.json").write_text("{}")
    assert (made / "metrics.json").read_text() == "{}"
