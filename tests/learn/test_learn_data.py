"""Datasets on disk: LeRobot v3 round trips, atomic writes, corruption, and foreign formats."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from invdyn.errors import DataError, InputError
from invdyn.learn import datasets as data
from invdyn.learn import keys
from invdyn.learn.datasets import Episode, Layout, read_dataset, write_dataset

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

STATE_NAMES = ["q0", "q1", "v0", "v1"]
ACTION_NAMES = ["tau0", "tau1"]
DATA_FILE = "data/chunk-000/file-000.parquet"
EPISODES_FILE = "meta/episodes/chunk-000/file-000.parquet"


def episodes(
    count: int = 3, *, dtype: type = np.float64, actions: bool = True, seed: int = 0
) -> list[Episode]:
    """`count` random episodes of different lengths, two tasks."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        length = 5 + 3 * k
        out.append(
            Episode(
                state=rng.normal(size=(length, 4)).astype(dtype),
                action=rng.normal(size=(length, 2)).astype(dtype) if actions else None,
                timestamp=(np.arange(length) / 100.0).astype(dtype),
                task=f"task {k % 2}",
            )
        )
    return out


def write(path: Path, items: list[Episode] | None = None, **options: object) -> Path:
    """Write `items` (default: three episodes with actions) with the test names."""
    items = episodes() if items is None else items
    options = {
        "fps": 100,
        "state_names": STATE_NAMES,
        "action_names": ACTION_NAMES if items[0].action is not None else None,
        **options,
    }
    return write_dataset(path, items, **options)  # type: ignore[arg-type]


def assert_same(read: list[Episode], written: list[Episode]) -> None:
    """Episodes equal bit for bit, with the same dtypes."""
    assert len(read) == len(written)
    for a, b in zip(read, written):
        assert a.state.dtype == b.state.dtype
        np.testing.assert_array_equal(a.state, b.state)
        if b.action is None:
            assert a.action is None
        else:
            assert a.action is not None and a.action.dtype == b.action.dtype
            np.testing.assert_array_equal(a.action, b.action)
        np.testing.assert_array_equal(a.timestamp, b.timestamp)
        assert a.task == b.task


# round trips


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_trip_is_exact_and_keeps_the_dtype(tmp_path: Path, dtype: type) -> None:
    written = episodes(dtype=dtype)
    path = write(tmp_path / "ds", written, source="panda")
    dataset = read_dataset(path)
    assert_same(list(dataset), written)
    info = dataset.info
    assert (info.total_episodes, info.total_frames) == (3, 5 + 8 + 11)
    assert info.state_names == tuple(STATE_NAMES) and info.action_names == tuple(ACTION_NAMES)
    assert info.state_dtype == np.dtype(dtype).name == info.action_dtype
    assert (info.fps, info.source, info.tasks) == (100.0, "panda", ("task 0", "task 1"))
    assert (info.n_state, info.n_action) == (4, 2)
    assert len(dataset) == 3
    assert_same([dataset.episode(-1)], written[-1:])
    with pytest.raises(IndexError):
        dataset.episode(3)


def test_files_follow_lerobot_v3(tmp_path: Path) -> None:
    written = episodes()
    path = write(tmp_path / "ds", written)
    info = json.loads((path / "meta/info.json").read_text())
    assert info["codebase_version"] == "v3.0"
    # as a directory that mkdir makes, not private as a temporary one: the umask decides
    mask = os.umask(0o027)
    try:
        private = write(tmp_path / "private", written)
    finally:
        os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o777 & ~mask
    assert private.stat().st_mode & 0o777 == 0o750
    assert (private / "meta/info.json").stat().st_mode & 0o777 == 0o640
    assert info["data_path"] == "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
    assert info["splits"] == {"train": "0:3"} and info["total_tasks"] == 2
    assert info["features"][keys.OBS_STATE] == {
        "dtype": "float64",
        "shape": [4],
        "names": STATE_NAMES,
    }
    assert set(info["features"]) == {
        keys.OBS_STATE,
        keys.ACTION,
        keys.TIMESTAMP,
        keys.FRAME_INDEX,
        keys.EPISODE_INDEX,
        keys.INDEX,
        keys.TASK_INDEX,
    }
    # frames: vectors as lists, bookkeeping columns as integers
    table = pq.read_table(path / DATA_FILE)
    assert table.column_names == list(info["features"])
    assert table.column(keys.INDEX).to_pylist() == list(range(24))
    # episodes metadata, with per-episode statistics
    meta = pq.read_table(path / EPISODES_FILE).to_pydict()
    assert meta["length"] == [5, 8, 11] and meta["tasks"] == [["task 0"], ["task 1"], ["task 0"]]
    assert meta["dataset_from_index"] == [0, 5, 13] and meta["dataset_to_index"] == [5, 13, 24]
    action = np.concatenate([e.action for e in written if e.action is not None])
    np.testing.assert_allclose(meta["stats/action/mean"][1], action[5:13].mean(axis=0))
    assert meta["stats/observation.state/count"] == [[5], [8], [11]]
    # global statistics
    stats = json.loads((path / "meta/stats.json").read_text())
    state = np.concatenate([e.state for e in written])
    for name, value in [("mean", state.mean(0)), ("std", state.std(0)), ("min", state.min(0))]:
        np.testing.assert_allclose(stats[keys.OBS_STATE][name], value)
    np.testing.assert_allclose(stats[keys.OBS_STATE]["q99"], np.quantile(state, 0.99, axis=0))
    assert stats[keys.ACTION]["count"] == [24]
    np.testing.assert_allclose(read_dataset(path).stats[keys.OBS_STATE]["max"], state.max(0))
    # tasks: the task is pandas' index, as LeRobot writes it
    tasks = pq.read_table(path / "meta/tasks.parquet")
    assert tasks.to_pydict() == {"task_index": [0, 1], "task": ["task 0", "task 1"]}
    assert json.loads(tasks.schema.metadata[b"pandas"])["index_columns"] == ["task"]


def test_several_files_and_chunks(tmp_path: Path) -> None:
    written = episodes(5)
    # 4 + 2 + 1 + 4 values of 8 bytes a frame, about 5 frames to a file of 400 bytes
    path = write(tmp_path / "ds", written, layout=Layout(chunks_size=2, file_size_mb=4e-4))
    found = sorted(p.relative_to(path).as_posix() for p in path.glob("data/*/*.parquet"))
    assert found == [
        "data/chunk-000/file-000.parquet",
        "data/chunk-000/file-001.parquet",
        "data/chunk-001/file-000.parquet",
        "data/chunk-001/file-001.parquet",
        "data/chunk-002/file-000.parquet",
    ]
    meta = pq.read_table(path / EPISODES_FILE).to_pydict()
    assert meta["data/chunk_index"] == [0, 0, 1, 1, 2] and meta["data/file_index"] == [
        0,
        1,
        0,
        1,
        0,
    ]
    dataset = read_dataset(path)
    assert_same(list(dataset), written)
    state, action, episode = dataset.arrays()
    np.testing.assert_array_equal(state, np.concatenate([e.state for e in written]))
    assert action is not None
    np.testing.assert_array_equal(action, np.concatenate([e.action for e in written]))
    np.testing.assert_array_equal(episode, np.repeat(np.arange(5), [len(e) for e in written]))


def test_action_free_episodes(tmp_path: Path) -> None:
    written = episodes(actions=False)
    dataset = read_dataset(write(tmp_path / "ds", written))
    assert_same(list(dataset), written)
    assert dataset.info.action_names is None and dataset.info.n_action == 0
    assert dataset.arrays().action is None
    features = json.loads((tmp_path / "ds/meta/info.json").read_text())["features"]
    assert keys.ACTION not in features


def state_free(dtype: type = np.float64, *, actions: bool = True) -> list[Episode]:
    """The test episodes without their state (and without actions unless `actions`)."""
    return [
        Episode(None, e.action if actions else None, e.timestamp, e.task)
        for e in episodes(dtype=dtype)
    ]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_state_free_episodes(tmp_path: Path, dtype: type) -> None:
    written = state_free(dtype)
    path = write_dataset(tmp_path / "ds", written, fps=100, action_names=ACTION_NAMES)
    dataset = read_dataset(path)
    for read, expected in zip(dataset, written):
        assert read.state is None and read.action is not None
        assert read.action.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(read.action, expected.action)
        np.testing.assert_array_equal(read.timestamp, expected.timestamp)
    info = dataset.info
    assert (info.state_names, info.n_state, info.state_dtype) == ((), 0, None)
    assert info.action_dtype == np.dtype(dtype).name and info.n_action == 2
    assert data.read_info(path) == info
    state, action, episode = dataset.arrays()
    assert state is None and action is not None and len(action) == len(episode) == 24
    assert "n_state=0, n_action=2" in repr(dataset)
    features = json.loads((path / "meta/info.json").read_text())["features"]
    stats = json.loads((path / "meta/stats.json").read_text())
    assert keys.OBS_STATE not in features and keys.OBS_STATE not in stats
    assert keys.OBS_STATE not in pq.read_table(path / DATA_FILE).column_names
    columns = data.read_frame_columns(path, [keys.ACTION, keys.TIMESTAMP])
    np.testing.assert_array_equal(columns[keys.ACTION], action)
    # () names no state, as None does
    again = write_dataset(
        tmp_path / "again", written, fps=100, state_names=(), action_names=ACTION_NAMES
    )
    assert read_dataset(again).info == dataclasses.replace(info)


def test_state_free_episode_rules() -> None:
    t = np.arange(4) / 10
    assert len(Episode(None, None, t)) == 4
    assert len(Episode(np.zeros((4, 1)), None, t)) == 4
    cases = [
        (dict(state=None, action=None, timestamp=None), "Episode.timestamp is None"),
        (dict(state=np.zeros((4, 1)), action=None, timestamp=None), "Episode.timestamp is None"),
        (dict(state=None, action=None, timestamp=t[:0]), "Episode.timestamp is empty"),
        (dict(state=None, action=np.zeros((3, 1)), timestamp=t), r"expected \(4, n\) as timestamp"),
        (dict(state=None, action=None, timestamp=t[::-1]), "increase strictly"),
    ]
    for fields, message in cases:
        with pytest.raises(DataError, match=message):
            Episode(**fields)  # type: ignore[arg-type]


def test_state_free_bad_arguments(tmp_path: Path) -> None:
    with_state, without = episodes(2), state_free()[:2]
    target = tmp_path / "ds"
    cases: list[tuple[Callable[[], object], str]] = [
        (
            lambda: write(target, [with_state[0], without[1]]),
            r"episodes\[1\] has no state, unlike episodes\[0\]: all episodes need states",
        ),
        (
            lambda: write(target, [without[0], with_state[1]]),
            r"episodes\[1\] has state, unlike episodes\[0\]",
        ),
        (lambda: write(target, without), "state_names given, but the episodes have no state"),
        (
            lambda: write_dataset(target, with_state, fps=10, action_names=ACTION_NAMES),
            "the episodes have states: give their state_names",
        ),
        (
            lambda: write_dataset(target, state_free(actions=False), fps=10),
            "neither state nor action, and there are no videos: nothing to store",
        ),
    ]
    for call, message in cases:
        with pytest.raises(InputError, match=message):
            call()
    assert list(tmp_path.iterdir()) == []


def test_reads_lerobot_variants(tmp_path: Path) -> None:
    """Names as {"motors": [...]}, variable-size lists, an unnamed task index, a feature of
    shape [1] as plain values."""
    written = episodes(2, dtype=np.float32)
    path = write(tmp_path / "ds", written)
    info = json.loads((path / "meta/info.json").read_text())
    info["features"][keys.OBS_STATE]["names"] = {"motors": STATE_NAMES}
    info["features"][keys.ACTION]["names"] = None
    (path / "meta/info.json").write_text(json.dumps(info))
    table = pq.read_table(path / DATA_FILE)
    for name in (keys.OBS_STATE, keys.ACTION):
        column = table.column(name).cast(pa.list_(pa.float32()))
        table = table.set_column(table.column_names.index(name), name, column)
    pq.write_table(table, path / DATA_FILE)
    pq.write_table(
        pa.table({"task_index": [0, 1], "__index_level_0__": ["task 0", "task 1"]}),
        path / "meta/tasks.parquet",
    )
    dataset = read_dataset(path)
    assert_same(list(dataset), written)
    assert dataset.info.state_names == tuple(STATE_NAMES)
    assert dataset.info.action_names == ("action.0", "action.1")
    # LeRobot reads a feature of shape [1] as plain values, and can read no other: a
    # one-joint robot's action is written so, and read back
    one = [dataclasses.replace(e, action=e.action[:, :1]) for e in written]
    path = write(tmp_path / "one", one, action_names=["tau"])
    column = pq.read_table(path / DATA_FILE).column(keys.ACTION)
    assert column.type == pa.float32(), column.type
    assert json.loads((path / "meta/info.json").read_text())["features"][keys.ACTION] == {
        "dtype": "float32",
        "shape": [1],
        "names": ["tau"],
    }
    assert_same(list(read_dataset(path)), one)
    # and so is one written as a list of one, as earlier versions wrote it
    table = pq.read_table(path / DATA_FILE)
    listed = pa.FixedSizeListArray.from_arrays(column.combine_chunks(), 1)
    table = table.set_column(table.column_names.index(keys.ACTION), keys.ACTION, listed)
    pq.write_table(table, path / DATA_FILE)
    assert_same(list(read_dataset(path)), one)


# writing: arguments and atomicity


def test_bad_episodes_name_the_field() -> None:
    t = np.arange(4) / 10
    cases = [
        (dict(state=np.zeros(4), action=None, timestamp=t), "Episode.state has shape"),
        (dict(state=np.zeros((4, 2)), action=np.zeros((3, 1)), timestamp=t), "Episode.action"),
        (dict(state=np.zeros((4, 2)), action=None, timestamp=t[:3]), "Episode.timestamp"),
        (dict(state=np.full((4, 2), np.nan), action=None, timestamp=t), "Episode.state .*finite"),
        (dict(state=np.full((4, 2), 1e300), action=None, timestamp=t), "beyond float32's range"),
        (dict(state=np.zeros((4, 2)), action=None, timestamp=t[::-1]), "increase strictly"),
        (dict(state=[["a", "b"]] * 4, action=None, timestamp=t), "Episode.state must be"),
        (dict(state=np.zeros((0, 2)), action=None, timestamp=t[:0]), "T, n > 0"),
    ]
    for fields, message in cases:
        with pytest.raises(DataError, match=message):
            Episode(**fields)  # type: ignore[arg-type]
    episode = Episode(np.zeros((4, 2), dtype=np.int32), None, t)
    assert episode.state.dtype == np.float64 and not episode.state.flags.writeable


def test_bad_arguments(tmp_path: Path) -> None:
    good, bare = episodes(2), episodes(2, actions=False)
    target = tmp_path / "ds"
    cases: list[tuple[Callable[[], object], str]] = [
        (lambda: write_dataset(target, [], fps=10, state_names=STATE_NAMES), "empty"),
        (lambda: write(target, good, fps=0), "fps"),
        (
            lambda: write_dataset(target, good, fps=10, state_names=STATE_NAMES[:3]),
            "state_names has 3",
        ),
        (lambda: write_dataset(target, good, fps=10, state_names=STATE_NAMES), "action_names"),
        (lambda: write(target, [good[0], bare[1]]), "all episodes need actions"),
        (
            lambda: write_dataset(
                target, good, fps=10, state_names=["a", "a", "b", "c"], action_names=["x", "y"]
            ),
            "repeats a",
        ),
        (lambda: write(target, good, layout=Layout(file_size_mb=-1)), "file_size_mb"),
        (
            lambda: write_dataset(target, [good[0].state], fps=10, state_names=STATE_NAMES),  # type: ignore[list-item]
            "must be an Episode",
        ),
    ]
    for call, message in cases:
        with pytest.raises(InputError, match=message):
            call()
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_existing_paths(tmp_path: Path) -> None:
    first, second = episodes(seed=1), episodes(2, seed=2)
    path = write(tmp_path / "ds", first)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        write(path, second)
    assert_same(list(read_dataset(path)), first)
    write(path, second, overwrite=True)
    assert_same(list(read_dataset(path)), second)
    # an empty directory is taken; a directory that is not a dataset is never replaced
    (tmp_path / "empty").mkdir()
    write(tmp_path / "empty", first)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="not a dataset"):
        write(other, first, overwrite=True)
    assert (other / "notes.txt").read_text() == "keep me"
    # nor is a file
    with pytest.raises(FileExistsError, match=r"notes.txt is a file, not a dataset directory"):
        write(other / "notes.txt", first, overwrite=True)
    assert (other / "notes.txt").read_text() == "keep me"
    # nor can a dataset be made below one
    with pytest.raises(NotADirectoryError, match=r"ds: cannot be made, .*notes.txt is not a dir"):
        write(other / "notes.txt" / "ds", first)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds", "empty", "other"]


def test_failure_while_writing_keeps_the_old_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = episodes(seed=1)
    path = write(tmp_path / "ds", old)
    import pyarrow.parquet as pq

    real = pq.write_table
    calls = []

    def failing(*args: object) -> None:
        calls.append(args)
        if len(calls) % 2 == 0:
            raise OSError("disk full")
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(pq, "write_table", failing)
    with pytest.raises(OSError, match="disk full"):
        write(path, episodes(seed=2), overwrite=True)
    with pytest.raises(OSError, match="disk full"):
        write(tmp_path / "new", episodes(seed=2))
    monkeypatch.undo()
    assert_same(list(read_dataset(path)), old)
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]


def test_failure_while_swapping_restores_the_old_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = episodes(seed=1)
    path = write(tmp_path / "ds", old)
    real = os.rename

    def failing(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
        if str(source).endswith(".tmp"):
            raise OSError("interrupted")
        real(source, target)

    monkeypatch.setattr(os, "rename", failing)
    with pytest.raises(OSError, match="interrupted"):
        write(path, episodes(seed=2), overwrite=True)
    monkeypatch.undo()
    assert_same(list(read_dataset(path)), old)
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]


# reading: every corruption is a DataError naming the problem


def _edit_info(path: Path, edit: Callable[[dict], object]) -> None:
    info = json.loads((path / "meta/info.json").read_text())
    edit(info)
    (path / "meta/info.json").write_text(json.dumps(info))


def _truncate(file: Path) -> None:
    content = file.read_bytes()
    file.write_bytes(content[: len(content) // 2])


def _rewrite_column(file: Path, name: str, change: Callable[[object], object]) -> None:
    table = pq.read_table(file)
    if name in table.column_names:
        i = table.column_names.index(name)
        column = change(table.column(name))
        table = table.remove_column(i) if column is None else table.set_column(i, name, column)
    pq.write_table(table, file)


def _nan_state(column: object, value: float = float("nan")) -> object:
    values = column.to_pylist()  # type: ignore[attr-defined]
    values[3][1] = value
    return pa.array(values, type=column.type)  # type: ignore[attr-defined]


def _shift(column: object) -> object:
    values = column.to_pylist()  # type: ignore[attr-defined]
    values[2] += 1
    return pa.array(values, type=column.type)  # type: ignore[attr-defined]


CORRUPTIONS: dict[str, tuple[Callable[[Path], object], str]] = {
    "no info": (lambda p: (p / "meta/info.json").unlink(), "info.json: missing"),
    "no tasks": (lambda p: (p / "meta/tasks.parquet").unlink(), "tasks.parquet: missing"),
    "no episodes": (lambda p: (p / EPISODES_FILE).unlink(), "meta/episodes: missing"),
    "no data": (lambda p: (p / DATA_FILE).unlink(), "file-000.parquet: missing"),
    "info not json": (
        lambda p: (p / "meta/info.json").write_text("{'fps': 10"),
        "not valid JSON",
    ),
    "info field": (lambda p: _edit_info(p, lambda i: i.pop("fps")), r"missing field\(s\) fps"),
    "version": (
        lambda p: _edit_info(p, lambda i: i.update(codebase_version="v2.1")),
        "unsupported codebase_version 'v2.1'",
    ),
    "total frames": (
        lambda p: _edit_info(p, lambda i: i.update(total_frames=23)),
        "total_frames is 23, but the episodes .* hold 24",
    ),
    "total episodes": (
        lambda p: _edit_info(p, lambda i: i.update(total_episodes=4)),
        "total_episodes is 4",
    ),
    "vector length": (
        lambda p: _edit_info(p, lambda i: i["features"]["action"].update(shape=[3], names=None)),
        "column action has 2 values in row 0, expected 3",
    ),
    "neither state, action nor video": (
        lambda p: _edit_info(
            p, lambda i: [i["features"].pop(k) for k in ("observation.state", "action")]
        ),
        "features has no 'observation.state', no 'action' and no video .*: nothing to read",
    ),
    "stats": (
        lambda p: (p / "meta/stats.json").write_text('{"observation.state": {"mean": [0]}}'),
        r"stats.json: mean of observation.state must be 4 finite numbers, got \[0.0\]",
    ),
    "truncated data": (lambda p: _truncate(p / DATA_FILE), "file-000.parquet: not a readable"),
    "truncated episodes": (
        lambda p: _truncate(p / EPISODES_FILE),
        "file-000.parquet: not a readable",
    ),
    "truncated tasks": (lambda p: _truncate(p / "meta/tasks.parquet"), "tasks.parquet: not a"),
    "dropped column": (
        lambda p: _rewrite_column(p / DATA_FILE, "action", lambda c: None),
        r"missing column\(s\) action",
    ),
    "dropped meta column": (
        lambda p: _rewrite_column(p / EPISODES_FILE, "length", lambda c: None),
        r"missing column\(s\) length",
    ),
    "nan": (
        lambda p: _rewrite_column(p / DATA_FILE, "observation.state", _nan_state),
        "observation.state of frame 3 .* not finite",
    ),
    "beyond float32": (
        lambda p: _rewrite_column(
            p / DATA_FILE, "observation.state", partial(_nan_state, value=1e300)
        ),
        "observation.state of frame 3 .* beyond float32's range",
    ),
    "frame index": (
        lambda p: _rewrite_column(p / DATA_FILE, "frame_index", _shift),
        "frame_index is not contiguous: frame 2",
    ),
    "global index": (
        lambda p: _rewrite_column(p / DATA_FILE, "index", _shift),
        "index is not contiguous",
    ),
    "episode index": (
        lambda p: _rewrite_column(p / EPISODES_FILE, "episode_index", _shift),
        "episode_index must run 0, 1, ..., 2",
    ),
    "episode offsets": (
        lambda p: _rewrite_column(p / EPISODES_FILE, "dataset_from_index", _shift),
        "episode 2 spans frames",
    ),
    "extra rows": (
        lambda p: pq.write_table(
            pa.concat_tables([pq.read_table(p / DATA_FILE)] * 2), p / DATA_FILE
        ),
        "holds 48 frames, but .* puts 24",
    ),
    "extra file": (
        lambda p: pq.write_table(
            pq.read_table(p / DATA_FILE), p / "data/chunk-000/file-007.parquet"
        ),
        "file-007.parquet: a data file that no episode",
    ),
    "task index": (
        lambda p: _rewrite_column(p / DATA_FILE, "task_index", lambda c: pa.array([7] * 24)),
        "frame 0 has task_index 7, but .*tasks.parquet has 2",
    ),
    "timestamps": (
        lambda p: _rewrite_column(p / DATA_FILE, "timestamp", lambda c: pa.array([0.0] * 24)),
        "timestamps of episode 0 step by 0 s at frame 1, but meta/info.json's fps",
    ),
}


def test_a_dataset_without_statistics_is_read(tmp_path: Path) -> None:
    """meta/stats.json, which LeRobot loads datasets without, is missing: warned of."""
    path = write(tmp_path / "ds")
    (path / "meta/stats.json").unlink()
    with pytest.warns(UserWarning, match="stats.json: missing; the dataset is read without it"):
        dataset = read_dataset(path)
    assert_same(list(dataset), episodes())


def test_a_dataset_with_partial_statistics_is_read(tmp_path: Path) -> None:
    """meta/stats.json without some statistics reads as one that is missing: warned of,
    naming what it lacks, and the statistics it has are kept."""
    path = write(tmp_path / "ds")
    file = path / "meta/stats.json"
    stats = json.loads(file.read_text())
    del stats[keys.ACTION]
    del stats[keys.OBS_STATE]["min"], stats[keys.OBS_STATE]["std"]
    file.write_text(json.dumps(stats))
    lacking = "no min, std of observation.state; no min, max, mean, std of action"
    with pytest.warns(UserWarning, match=f"stats.json: {lacking}; the dataset is read without"):
        dataset = read_dataset(path)
    assert_same(list(dataset), episodes())
    assert dataset.stats[keys.OBS_STATE]["max"].tolist() == stats[keys.OBS_STATE]["max"]


def test_features_that_are_not_read_are_named(tmp_path: Path) -> None:
    """Images in the data files, and state-like features without an observation.state."""
    items = [dataclasses.replace(e, state=None) for e in episodes(actions=True)]
    velocity = data.FrameFeature([np.zeros((len(e.action), 2)) for e in items])
    path = write(
        tmp_path / "ds", items, state_names=None, extra_features={"observation.velocity": velocity}
    )
    info = json.loads((path / "meta/info.json").read_text())
    info["features"]["observation.images.top"] = {"dtype": "image", "shape": [8, 8, 3]}
    (path / "meta/info.json").write_text(json.dumps(info))
    # a feature that info.json lists and the data files lack is a corrupt dataset
    with pytest.raises(DataError, match=r"missing column\(s\) observation.images.top"):
        read_dataset(path)
    table = pq.read_table(path / DATA_FILE)
    images = pa.array([b"png"] * table.num_rows, type=pa.binary())
    pq.write_table(table.append_column("observation.images.top", images), path / DATA_FILE)
    with pytest.warns(UserWarning) as warned:
        read_dataset(path)
    messages = [str(w.message) for w in warned]
    assert any("['observation.images.top'] are images in the data files" in m for m in messages)
    assert any("['observation.velocity'] are not read (write them as one" in m for m in messages)


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_corruption_is_a_data_error(tmp_path: Path, corruption: str) -> None:
    path = write(tmp_path / "ds")
    damage, message = CORRUPTIONS[corruption]
    damage(path)
    with pytest.raises(DataError, match=message):
        read_dataset(path)


def test_frames_are_one_period_apart(tmp_path: Path) -> None:
    """As LeRobot reads them: a dropped frame is refused when writing, and an fps in info.json
    that the timestamps do not keep when reading; float32 times of long episodes pass."""
    dropped = episodes()
    dropped[1] = Episode(
        np.delete(dropped[1].state, 3, 0), None, np.delete(dropped[1].timestamp, 3)
    )
    with pytest.raises(InputError, match=r"episode 1: frames must be 1 / fps = 0.01 s apart"):
        write(tmp_path / "gap", [Episode(e.state, None, e.timestamp) for e in dropped])
    path = write(tmp_path / "ds")
    info = json.loads((path / "meta/info.json").read_text())
    (path / "meta/info.json").write_text(json.dumps(info | {"fps": 7}))
    with pytest.raises(DataError, match=r"step by 0.01 s at frame 1, but .*fps = 7 puts frames"):
        read_dataset(path)
    hour = np.arange(3600 * 30, 3600 * 30 + 50) / 30.0
    long = Episode(np.zeros((50, 4), np.float32), None, hour.astype(np.float32))
    assert len(read_dataset(write(tmp_path / "long", [long], fps=30))) == 1


def test_not_a_dataset(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="absent: missing, not a dataset directory"):
        read_dataset(tmp_path / "absent")
    path = write(tmp_path / "ds", episodes())
    with pytest.raises(DataError, match=r"info.json: a file, not a dataset directory"):
        read_dataset(path / "meta" / "info.json")
    # every episode removed from the metadata and the counts
    import pyarrow.parquet as pq

    for file in (path / "meta" / "episodes").rglob("*.parquet"):
        pq.write_table(pq.read_table(file).slice(0, 0), file)
    info = json.loads((path / "meta" / "info.json").read_text())
    info.update(total_episodes=0, total_frames=0)
    (path / "meta" / "info.json").write_text(json.dumps(info))
    with pytest.raises(DataError, match="ds: the dataset has no episodes"):
        read_dataset(path)


# tables


def test_read_table_csv(tmp_path: Path) -> None:
    file = tmp_path / "samples.csv"
    file.write_text("q.a,q.b,qd,qdd,tau\n1,2,3,4,5\n6,7,8,9,10.5\n")
    x, y = data.read_table(file, inputs=["q", "qd", "qdd"], targets=["tau"])
    np.testing.assert_array_equal(x, [[1, 2, 3, 4], [6, 7, 8, 9]])
    np.testing.assert_array_equal(y, [[5], [10.5]])
    assert x.dtype == y.dtype == np.float64
    with pytest.raises(DataError, match=r"no column 'qddd' \(nor qddd\.\*\); columns: q.a"):
        data.read_table(file, inputs=["qddd"], targets=["tau"])
    file.write_text("q,tau\n1,2\n3,oops\n")
    with pytest.raises(DataError, match="column 'tau', line 3: 'oops' is not a number"):
        data.read_table(file, inputs=["q"], targets=["tau"])
    file.write_text("q,tau\n1,2\n3,\n")
    with pytest.raises(DataError, match="column 'tau', line 3"):
        data.read_table(file, inputs=["q"], targets=["tau"])
    file.write_text("q,tau\n1,inf\n")
    with pytest.raises(DataError, match="column 'tau', line 2: a value that is not finite"):
        data.read_table(file, inputs=["q"], targets=["tau"])
    file.write_text("q,tau\n1,2\n1e300,3\n")
    with pytest.raises(DataError, match=r"column 'q', line 3: .* beyond float32's range"):
        data.read_table(file, inputs=["q"], targets=["tau"])
    with pytest.raises(InputError, match="column 'q' is selected twice, by inputs 'q' and targ"):
        data.read_table(file, inputs=["q"], targets=["q"])


def test_read_columns_names_each_column(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    q, qd, tau = rng.normal(size=(6, 2)), rng.normal(size=(6, 1)), rng.normal(size=6)
    csv = tmp_path / "s.csv"
    rows = np.column_stack([q, qd, tau])
    np.savetxt(csv, rows, delimiter=",", fmt="%.17g", header="q.a,q.b,qd,tau", comments="")
    np.savez(tmp_path / "s.npz", q=q, qd=qd, tau=tau)
    table = pa.table({"q": list(q), "qd": list(qd), "tau": tau})
    pq.write_table(table, tmp_path / "s.parquet")
    for name, q_names in [
        ("s.csv", ("q.a", "q.b")),
        ("s.npz", ("q.0", "q.1")),
        ("s.parquet", ("q.0", "q.1")),
    ]:
        read = data.read_columns(tmp_path / name, {"x": ["tau", "q"], "y": ["qd"]})
        np.testing.assert_array_equal(read["x"].values, np.column_stack([tau, q]))
        np.testing.assert_array_equal(read["y"].values, qd)
        # a column keeps its name, and the k columns of an (N, k) array are <name>.<i>
        assert read["x"].names == ("tau", *q_names)
        assert read["y"].names == ("qd",)
    with pytest.raises(InputError, match="column 'q.b' is selected twice, by x 'q' and y 'q.b'"):
        data.read_columns(csv, {"x": ["q"], "y": ["q.b"]})


def test_read_table_npz_and_parquet(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    q, qd, tau = rng.normal(size=(10, 3)), rng.normal(size=10), rng.normal(size=(10, 3))
    np.savez(tmp_path / "s.npz", q=q, qd=qd, tau=tau)
    x, y = data.read_table(tmp_path / "s.npz", inputs=["q", "qd"], targets=["tau"])
    np.testing.assert_array_equal(x, np.column_stack([q, qd]))
    np.testing.assert_array_equal(y, tau)
    np.savez(tmp_path / "bad.npz", q=q, tau=tau[:5])
    with pytest.raises(DataError, match="different lengths"):
        data.read_table(tmp_path / "bad.npz", inputs=["q"], targets=["tau"])
    (tmp_path / "broken.npz").write_bytes(b"not a zip")
    with pytest.raises(DataError, match="not a readable NPZ"):
        data.read_table(tmp_path / "broken.npz", inputs=["q"], targets=["tau"])
    # a LeRobot data file is a table too
    path = write(tmp_path / "ds")
    x, y = data.read_table(path / DATA_FILE, inputs=[keys.OBS_STATE], targets=[keys.ACTION])
    state, action, _ = read_dataset(path).arrays()
    np.testing.assert_array_equal(x, state)
    np.testing.assert_array_equal(y, action)
    table = pa.table({"q": q[:, 0], "tau": pa.array(["1"] * 9 + ["x"])})
    pq.write_table(table, tmp_path / "t.parquet")
    with pytest.raises(DataError, match="column 'tau', row 9: 'x' is not a number"):
        data.read_table(tmp_path / "t.parquet", inputs=["q"], targets=["tau"])
    pq.write_table(pa.table({"q": q[:, 0], "tau": [1.0] * 9 + [None]}), tmp_path / "n.parquet")
    with pytest.raises(DataError, match="column 'tau', row 9: null is not a number"):
        data.read_table(tmp_path / "n.parquet", inputs=["q"], targets=["tau"])
    (tmp_path / "t.xlsx").write_bytes(b"")
    with pytest.raises(DataError, match="unknown table format"):
        data.read_table(tmp_path / "t.xlsx", inputs=["q"], targets=["tau"])


def test_read_table_of_no_rows(tmp_path: Path) -> None:
    (tmp_path / "header.csv").write_text("q,tau\n")
    np.savez(tmp_path / "empty.npz", q=np.zeros((0, 2)), tau=np.zeros(0))
    table = pa.table({"q": pa.array([], pa.list_(pa.float64())), "tau": pa.array([], pa.float64())})
    pq.write_table(table, tmp_path / "empty.parquet")
    for name in ("header.csv", "empty.npz", "empty.parquet"):
        with pytest.raises(DataError, match=rf"{name}: the table has no rows"):
            data.read_table(tmp_path / name, inputs=["q"], targets=["tau"])


# robomimic and minari


def write_robomimic(file: Path) -> dict[int, tuple[dict[str, np.ndarray], np.ndarray]]:
    """A robomimic file of demos 0, 1 and 10 (env Lift; three low-dimensional observations, an
    image; mask/train: demos 0 and 10); the observations and actions of each demo by N."""
    h5py = pytest.importorskip("h5py")
    rng = np.random.default_rng(0)
    demos = {}
    with h5py.File(file, "w") as f:
        group = f.create_group("data")
        group.attrs["env_args"] = json.dumps({"env_name": "Lift", "type": 1, "env_kwargs": {}})
        for n, length in [(0, 4), (1, 6), (10, 5)]:
            demo = group.create_group(f"demo_{n}")
            demo.attrs["num_samples"] = length
            obs = {
                "robot0_joint_pos": rng.normal(size=(length, 7)),
                "robot0_gripper_qpos": rng.normal(size=(length, 2)),
                "object": rng.normal(size=(length,)),
            }
            for key, value in obs.items():
                demo.create_dataset(f"obs/{key}", data=value)
            demo.create_dataset("obs/agentview_image", data=np.zeros((length, 8, 8, 3), np.uint8))
            demo.create_dataset("actions", data=rng.normal(size=(length, 7)))
            demo.create_dataset("states", data=rng.normal(size=(length, 32)))
            demos[n] = (obs, demo["actions"][()])
        group.attrs["total"] = 15
        f.create_dataset("mask/train", data=np.array([b"demo_0", b"demo_10"]))
    return demos


def test_read_robomimic(tmp_path: Path) -> None:
    h5py = pytest.importorskip("h5py")
    file = tmp_path / "low_dim.hdf5"
    demos = write_robomimic(file)
    imported = data.read_robomimic(file)
    read = imported.episodes
    assert [len(e) for e in read] == [4, 6, 5]
    # named after their observations, one entry of a (T,) or (T, 1) observation by its key
    joints = [f"robot0_joint_pos.{i}" for i in range(7)]
    grippers = ["robot0_gripper_qpos.0", "robot0_gripper_qpos.1"]
    assert imported.state_names == ("object", *grippers, *joints)
    assert imported.action_names == tuple(f"action.{i}" for i in range(7))
    for episode, (obs, actions) in zip(read, demos.values()):
        # low-dimensional keys, sorted: object, robot0_gripper_qpos, robot0_joint_pos
        expected = np.column_stack(
            [obs["object"], obs["robot0_gripper_qpos"], obs["robot0_joint_pos"]]
        )
        np.testing.assert_array_equal(episode.state, expected)
        np.testing.assert_array_equal(episode.action, actions)
        np.testing.assert_allclose(episode.timestamp, np.arange(len(episode)) / 20.0)
        assert episode.task == "Lift"
    chosen = data.read_robomimic(file, obs_keys=["robot0_joint_pos"], filter_key="train", fps=10)
    assert [e.state.shape for e in chosen.episodes] == [(4, 7), (5, 7)]
    assert chosen.state_names == tuple(joints)
    with pytest.raises(DataError, match="agentview_image: shape .* is not low-dimensional"):
        data.read_robomimic(file, obs_keys=["agentview_image"])
    with pytest.raises(DataError, match="no filter key mask/valid"):
        data.read_robomimic(file, filter_key="valid")
    with h5py.File(file, "a") as f:
        f.create_dataset("mask/empty", data=np.array([], dtype="S8"))
    with pytest.raises(DataError, match="low_dim.hdf5: mask/empty lists no demos"):
        data.read_robomimic(file, filter_key="empty")
    with h5py.File(file, "a") as f:
        actions = f["data/demo_10/actions"][()]
        del f["data/demo_10/actions"]
        f.create_dataset("data/demo_10/actions", data=actions[:, :6])
    with pytest.raises(DataError, match="demo_10: action has 6 entries, but the first episode's"):
        data.read_robomimic(file)
    with h5py.File(file, "a") as f:
        del f["data/demo_10/actions"]
        f.create_dataset("data/demo_10/actions", data=actions)
    with h5py.File(file, "a") as f:
        del f["data/demo_1/actions"]
    with pytest.raises(DataError, match="data/demo_1: no dataset 'actions'"):
        data.read_robomimic(file)
    with h5py.File(file, "a") as f:
        f.create_dataset("data/demo_1/actions", data=np.zeros((0, 7)))
    with pytest.raises(DataError, match=r"data/demo_1/actions: holds no frames \(shape \(0, 7\)"):
        data.read_robomimic(file)
    (tmp_path / "junk.hdf5").write_bytes(b"junk")
    with pytest.raises(DataError, match="not a readable HDF5"):
        data.read_robomimic(tmp_path / "junk.hdf5")


def write_minari(root: Path) -> list[tuple[np.ndarray, np.ndarray]]:
    """A Minari dataset directory at `root` of three episodes (dataset_id
    D4RL/pointmaze/umaze-v2; a dictionary observation); each episode's state (its observations,
    keys sorted, without the last) and actions."""
    h5py = pytest.importorskip("h5py")
    rng = np.random.default_rng(0)
    (root / "data").mkdir(parents=True)
    expected = []
    with h5py.File(root / "data/main_data.hdf5", "w") as f:
        f.attrs["dataset_id"] = "D4RL/pointmaze/umaze-v2"
        for n, steps in [(0, 3), (1, 5), (2, 4)]:
            episode = f.create_group(f"episode_{n}")
            episode.attrs.update(id=n, total_steps=steps, seed=n)
            # a dictionary observation: keys sorted, the last observation dropped
            goal = rng.normal(size=(steps + 1, 2))
            observation = rng.normal(size=(steps + 1, 4))
            episode.create_dataset("observations/observation", data=observation)
            episode.create_dataset("observations/desired_goal", data=goal)
            episode.create_dataset("actions", data=rng.normal(size=(steps, 2)))
            episode.create_dataset("rewards", data=rng.normal(size=steps))
            episode.create_dataset("terminations", data=np.zeros(steps, bool))
            episode.create_dataset("truncations", data=np.eye(1, steps, steps - 1, dtype=bool)[0])
            expected.append((np.column_stack([goal, observation])[:steps], episode["actions"][()]))
    return expected


def test_read_minari(tmp_path: Path) -> None:
    h5py = pytest.importorskip("h5py")
    root = tmp_path / "pointmaze"
    expected = write_minari(root)
    imported = data.read_minari(root, fps=50)
    read = imported.episodes
    assert [len(e) for e in read] == [3, 5, 4]
    # a dictionary observation's entries are named after their keys
    goal, observation = ["desired_goal.0", "desired_goal.1"], [f"observation.{i}" for i in range(4)]
    assert imported.state_names == (*goal, *observation)
    assert imported.action_names == ("action.0", "action.1")
    for episode, (state, action) in zip(read, expected):
        np.testing.assert_array_equal(episode.state, state)
        np.testing.assert_array_equal(episode.action, action)
        np.testing.assert_allclose(episode.timestamp, np.arange(len(episode)) / 50)
        assert episode.task == "D4RL/pointmaze/umaze-v2"
    with h5py.File(root / "data/main_data.hdf5", "a") as f:
        f.move("episode_2/observations/desired_goal", "episode_2/observations/goal")
    with pytest.raises(DataError, match=r"episode_2: state entries \['goal.0', .* differ from"):
        data.read_minari(root)
    with h5py.File(root / "data/main_data.hdf5", "a") as f:
        del f["episode_1/observations/desired_goal"]
        f.create_dataset("episode_1/observations/desired_goal", data=np.zeros((2, 2)))
    with pytest.raises(DataError, match="episode_1/observations: entries of different lengths"):
        data.read_minari(root)


def test_read_minari_leaves_images_and_text_out_of_a_dictionary_observation(
    tmp_path: Path,
) -> None:
    h5py = pytest.importorskip("h5py")
    root = tmp_path / "minigrid"
    expected = write_minari(root)
    file = root / "data/main_data.hdf5"
    names = data.read_minari(root).state_names
    with h5py.File(file, "a") as f:
        for n, (state, _) in enumerate(expected):
            shape = (len(state) + 1, 8, 8, 3)
            f.create_dataset(f"episode_{n}/observations/pixels", data=np.zeros(shape, np.uint8))
            f.create_dataset(f"episode_{n}/observations/mission", data=[b"go"] * shape[0])
    with pytest.warns(UserWarning, match=r"observations mission \(.*\), pixels \(.*\): left out"):
        imported = data.read_minari(root)
    assert imported.state_names == names
    for episode, (state, _) in zip(imported.episodes, expected, strict=True):
        np.testing.assert_array_equal(episode.state, state)
    # nothing left of the observation
    with h5py.File(file, "a") as f:
        for n in range(len(expected)):
            del f[f"episode_{n}/observations/desired_goal"]
            del f[f"episode_{n}/observations/observation"]
    with pytest.raises(DataError, match="episode_0/observations: no low-dimensional numbers"):
        data.read_minari(root)


def test_read_d4rl(tmp_path: Path) -> None:
    h5py = pytest.importorskip("h5py")
    rng = np.random.default_rng(0)
    observations, actions = rng.normal(size=(10, 3)), rng.normal(size=(10, 2))
    with h5py.File(tmp_path / "hopper.hdf5", "w") as f:
        f.create_dataset("observations", data=observations)
        f.create_dataset("actions", data=actions)
        f.create_dataset("rewards", data=np.zeros(10))
        f.create_dataset("terminals", data=np.isin(np.arange(10), [2]))
        f.create_dataset("timeouts", data=np.isin(np.arange(10), [6]))
    imported = data.read_minari(tmp_path / "hopper.hdf5")
    read = imported.episodes
    assert [len(e) for e in read] == [3, 4, 3]
    assert imported.state_names == ("observation.0", "observation.1", "observation.2")
    assert imported.action_names == ("action.0", "action.1")
    np.testing.assert_array_equal(np.concatenate([e.state for e in read]), observations)
    np.testing.assert_array_equal(np.concatenate([e.action for e in read]), actions)
    # without terminals or timeouts, one episode, and a word about it
    with h5py.File(tmp_path / "unsplit.hdf5", "w") as f:
        f.create_dataset("observations", data=observations)
        f.create_dataset("actions", data=actions)
    with pytest.warns(UserWarning, match="no terminals or timeouts .* one of 10 steps"):
        assert [len(e) for e in data.read_minari(tmp_path / "unsplit.hdf5").episodes] == [10]
    with h5py.File(tmp_path / "other.hdf5", "w") as f:
        f.create_dataset("x", data=np.zeros(3))
    with pytest.raises(DataError, match="neither Minari .* nor D4RL"):
        data.read_minari(tmp_path / "other.hdf5")
    # images as the observation are not a state
    with h5py.File(tmp_path / "pixels.hdf5", "w") as f:
        f.create_dataset("observations", data=np.zeros((10, 8, 8, 3), dtype=np.uint8))
        f.create_dataset("actions", data=actions)
    with pytest.raises(DataError, match=r"observations: shape \(10, 8, 8, 3\) is not low-dim"):
        data.read_minari(tmp_path / "pixels.hdf5")


def test_import_is_light() -> None:
    code = (
        "import sys, invdyn, invdyn.learn, invdyn.learn.datasets, invdyn.learn.keys\n"
        "heavy = [m for m in ('pyarrow', 'h5py', 'torch') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def _collection(full_state: bool = True, seed: int = 0) -> object:
    """A duck-typed collection (as `invdyn.sim.collect.Collection`) of two episodes."""

    rng = np.random.default_rng(seed)
    items = []
    for length in (6, 9):
        items.append(
            SimpleNamespace(
                state=rng.normal(size=(length, 4)),
                action=rng.normal(size=(length, 2)),
                timestamp=np.arange(length) / 50.0,
                full_state=rng.normal(size=(length, 3)) if full_state else None,
            )
        )
    return SimpleNamespace(
        episodes=tuple(items),
        state_names=tuple(STATE_NAMES),
        action_names=tuple(ACTION_NAMES),
        fps=50.0,
        source="gym:Test-v0",
        full_state_names=("qpos.a", "qpos.b", "qvel.a"),
        metadata={"seed": np.int64(3), "policy": "noisy", "rates": (np.float32(0.5), 2)},
    )


def test_write_collection_stores_the_full_state_and_metadata(tmp_path: Path) -> None:
    collection = _collection()
    path = data.write_collection(collection, tmp_path / "c")
    dataset = read_dataset(path)
    assert dataset.info.source == "gym:Test-v0" and dataset.info.fps == 50.0
    for read, written in zip(dataset, collection.episodes, strict=True):
        np.testing.assert_array_equal(read.state, written.state)
        np.testing.assert_array_equal(read.action, written.action)
    full = data.read_frame_columns(path, [data.MUJOCO_STATE])[data.MUJOCO_STATE]
    np.testing.assert_array_equal(full, np.concatenate([e.full_state for e in collection.episodes]))
    info = json.loads((path / "meta/info.json").read_text())
    assert info["features"][data.MUJOCO_STATE]["names"] == ["qpos.a", "qpos.b", "qvel.a"]
    assert data.read_metadata(path) == {"seed": 3, "policy": "noisy", "rates": [0.5, 2]}
    # no temporary directory left beside it; replacing needs overwrite
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c"]
    with pytest.raises(FileExistsError):
        data.write_collection(collection, path)
    data.write_collection(_collection(full_state=False, seed=1), path, overwrite=True)
    assert data.MUJOCO_STATE not in json.loads((path / "meta/info.json").read_text())["features"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c"]
    # a dataset written otherwise has no metadata
    assert data.read_metadata(write(tmp_path / "plain")) == {}


def test_metadata_is_written_as_strictly_valid_json(tmp_path: Path) -> None:
    """NaN and infinity, which JSON has no token for, become null, so that parsers other than
    Python's read meta/info.json."""
    collection = _collection()
    metadata = {"gain": float("nan"), "limits": np.array([-np.inf, 1.5]), "robot": "Müller"}
    path = data.write_collection(
        SimpleNamespace(**{**vars(collection), "metadata": metadata}), tmp_path / "c"
    )
    strict = json.loads(
        (path / "meta/info.json").read_text(encoding="utf-8"),
        parse_constant=lambda token: pytest.fail(f"info.json holds {token}"),
    )
    assert strict[data.METADATA_KEY] == {"gain": None, "limits": [None, 1.5], "robot": "Müller"}


def test_write_collection_bad_input(tmp_path: Path) -> None:
    mixed = _collection()
    mixed.episodes[1].full_state = None  # type: ignore[attr-defined]
    with pytest.raises(InputError, match="full_state"):
        data.write_collection(mixed, tmp_path / "mixed")
    with pytest.raises(InputError, match="episodes, state_names"):
        data.write_collection(object(), tmp_path / "nothing")
    assert not any(tmp_path.iterdir())


def test_write_collection_of_a_gym_environment(tmp_path: Path) -> None:
    pytest.importorskip("gymnasium")
    pytest.importorskip("mujoco")
    from invdyn.sim.collect import collect_gym

    collection = collect_gym("Reacher-v5", episodes=2, steps_per_episode=30, seed=0)
    path = data.write_collection(collection, tmp_path / "reacher")
    full = data.read_frame_columns(path, [data.MUJOCO_STATE])[data.MUJOCO_STATE]
    expected = np.concatenate([e.full_state for e in collection.episodes])
    np.testing.assert_array_equal(full, expected)
    assert full.dtype == np.float64 and full.shape == (62, 8)
    info = json.loads((path / "meta/info.json").read_text())
    assert info["features"][data.MUJOCO_STATE]["names"] == list(collection.full_state_names)
    metadata = data.read_metadata(path)
    assert metadata["env_id"] == "Reacher-v5" and metadata["seed"] == 0


def test_a_dataset_written_from_another_keeps_its_other_files(tmp_path: Path) -> None:
    """keep_from: a copy takes the source's other files (links as links, a dangling one too)
    and info.json keys, not its repository; a dataset replaced in place keeps its repository
    and files, hard-linked; what the writer writes, and the source's own metadata, are new."""
    source = write(tmp_path / "source", metadata={"seed": 1})
    info = json.loads((source / "meta/info.json").read_text())
    (source / "meta/info.json").write_text(json.dumps(info | {"license": "mit"}))
    (source / "README.md").write_text("card")
    (source / ".git").mkdir()
    (source / ".git" / "config").write_text("[remote]")
    (source / "card.md").symlink_to("README.md")
    (source / "gone.md").symlink_to("nowhere.md")
    os.mkfifo(source / "meta" / "pipe")
    copy = write(tmp_path / "copy", keep_from=source, metadata={"seed": 2})
    assert (copy / "README.md").read_text() == "card" and not (copy / ".git").exists()
    assert os.readlink(copy / "card.md") == "README.md" and (copy / "gone.md").is_symlink()
    assert not (copy / "meta" / "pipe").exists()
    written = json.loads((copy / "meta/info.json").read_text())
    assert written["license"] == "mit" and written["invdyn"] == {"seed": 2}
    assert not (copy / "README.md").samefile(source / "README.md")
    card = (source / "README.md").stat().st_ino
    write(source, keep_from=source, overwrite=True)
    assert (source / ".git" / "config").read_text() == "[remote]"
    assert (source / "README.md").stat().st_ino == card
    assert "invdyn" not in json.loads((source / "meta/info.json").read_text())
