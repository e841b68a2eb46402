"""``invdyn import``: robomimic, Minari and table files into datasets that train reads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_learn_data import write_minari, write_robomimic

from conftest import run
from invdyn.learn.datasets import read_dataset, read_metadata

pytest.importorskip("pyarrow")
h5py = pytest.importorskip("h5py")


def test_a_robomimic_file_imports_and_trains(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, dataset = tmp_path / "low_dim.hdf5", tmp_path / "lift"
    demos = write_robomimic(source)
    status, out, err = run(capsys, "import", str(source), "--out", str(dataset))
    assert status == 0, err
    assert "3 episodes, 15 frames at 20 fps, state 10, action 7" in out, out
    imported = read_dataset(dataset)
    assert imported.info.fps == 20 and imported.info.source == "robomimic"
    # named after the observations, one entry of a (T,) observation by its key
    joints = [f"robot0_joint_pos.{i}" for i in range(7)]
    grippers = ["robot0_gripper_qpos.0", "robot0_gripper_qpos.1"]
    assert imported.info.state_names == ("object", *grippers, *joints)
    assert imported.info.action_names == tuple(f"action.{i}" for i in range(7))
    for episode, (obs, actions) in zip(imported, demos.values(), strict=True):
        # every low-dimensional observation, sorted by name
        state = np.column_stack([obs[key] for key in sorted(obs)])
        np.testing.assert_array_equal(episode.state, state)
        np.testing.assert_array_equal(episode.action, actions)
        assert episode.task == "Lift"
    assert read_metadata(dataset) == {
        "importer": "invdyn import",
        "format": "robomimic",
        "file": str(source),
    }
    # the options reach the reader
    chosen = tmp_path / "chosen"
    status, out, err = run(
        capsys, "import", str(source), "--out", str(chosen), "--obs-keys",
        "robot0_joint_pos, object", "--filter-key", "train", "--fps", "10",
    )  # fmt: skip
    assert status == 0, err
    imported = read_dataset(chosen)
    assert imported.info.fps == 10 and len(imported) == 2
    for episode, n in zip(imported, (0, 10), strict=True):
        obs, actions = demos[n]
        state = np.column_stack([obs["robot0_joint_pos"], obs["object"]])
        np.testing.assert_array_equal(episode.state, state)
        np.testing.assert_array_equal(episode.action, actions)
    # a tiny training run reads the dataset, and evaluation too
    run_dir = tmp_path / "run"
    status, out, err = run(
        capsys, "train", str(dataset), "--out", str(run_dir), "--preset", "small",
        "--set", "train.epochs=1", "--set", "train.num_threads=1", "--no-progress",
    )  # fmt: skip
    assert status == 0, err
    assert (run_dir / "checkpoint" / "model.safetensors").is_file()
    status, out, err = run(capsys, "evaluate", str(run_dir), str(dataset))
    assert status == 0 and "the physics of source 'robomimic' is not known" in out, err
    # the same observations in another order are not the state the model was trained on
    reordered = tmp_path / "reordered"
    keys = "robot0_joint_pos,robot0_gripper_qpos,object"
    status, _, err = run(capsys, "import", str(source), "--out", str(reordered), "--obs-keys", keys)
    assert status == 0, err
    status, _, err = run(capsys, "evaluate", str(run_dir), str(reordered))
    assert status == 2 and "state names ['robot0_joint_pos.0'" in err, err


def test_a_minari_dataset_imports_from_its_directory_or_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "pointmaze"
    expected = write_minari(root)
    for source in (root, root / "data" / "main_data.hdf5"):
        dataset = tmp_path / f"from-{source.name}"
        status, out, err = run(capsys, "import", str(source), "--out", str(dataset), "--fps", "50")
        assert status == 0 and f"wrote {dataset}" in out, err
        imported = read_dataset(dataset)
        assert imported.info.fps == 50 and imported.info.source == "minari"
        for episode, (state, action) in zip(imported, expected, strict=True):
            np.testing.assert_array_equal(episode.state, state)
            np.testing.assert_array_equal(episode.action, action)
            np.testing.assert_allclose(episode.timestamp, np.arange(len(episode)) / 50)
            assert episode.task == "D4RL/pointmaze/umaze-v2"


def test_a_table_imports_split_into_episodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(0)
    q, tau = rng.normal(size=(7, 2)), rng.normal(size=(7, 1))
    number = np.array([3, 3, 3, 1, 1, 1, 1])
    source = tmp_path / "samples.csv"
    rows = np.column_stack([number, q, tau])
    np.savetxt(source, rows, delimiter=",", fmt="%.17g", header="run,q.a,q.b,tau", comments="")
    options = ["--obs-keys", "q", "--action-keys", "tau", "--fps", "4"]
    status, out, err = run(
        capsys, "import", str(source), "--out", str(tmp_path / "ds"), *options,
        "--episode-key", "run",
    )  # fmt: skip
    assert status == 0 and "2 episodes, 7 frames at 4 fps, state 2, action 1" in out, err
    imported = read_dataset(tmp_path / "ds")
    assert [len(e) for e in imported] == [3, 4]
    assert imported.info.state_names == ("q.a", "q.b")
    assert imported.info.action_names == ("tau",)
    for episode, rows in zip(imported, (slice(0, 3), slice(3, 7)), strict=True):
        np.testing.assert_array_equal(episode.state, q[rows])
        np.testing.assert_array_equal(episode.action, tau[rows])
        np.testing.assert_allclose(episode.timestamp, np.arange(len(episode)) / 4)
    # without --episode-key, the table is one episode
    status, out, err = run(capsys, "import", str(source), "--out", str(tmp_path / "one"), *options)
    assert status == 0 and "samples.csv: 1 episode, 7 frames" in out, err
    assert [len(e) for e in read_dataset(tmp_path / "one")] == [7]
    # a key that comes back after other values starts an episode of its own, with a word
    mixed = tmp_path / "mixed.csv"
    mixed.write_text("run,q\n0,1\n1,2\n0,3\n")
    status, out, err = run(
        capsys, "import", str(mixed), "--out", str(tmp_path / "mixed"), "--obs-keys", "q",
        "--fps", "4", "--episode-key", "run",
    )  # fmt: skip
    assert status == 0 and "3 episodes, 3 frames" in out, err
    assert "'run' comes back to 0 after other values: each run of rows is an episode" in err
    # without --action-keys, states alone: a dataset for invdyn label
    status, out, err = run(
        capsys, "import", str(source), "--out", str(tmp_path / "bare"), "--obs-keys", "q",
        "--fps", "4", "--episode-key", "run",
    )  # fmt: skip
    assert status == 0 and "2 episodes, 7 frames at 4 fps, state 2, no action" in out, err
    bare = read_dataset(tmp_path / "bare")
    assert bare.info.action_names is None and [len(e) for e in bare] == [3, 4]
    assert all(e.action is None for e in bare)
    np.testing.assert_array_equal(np.concatenate([e.state for e in bare]), q)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "{source}: a table needs --fps, and --obs-keys naming its state's columns"),
        (["--fps", "4", "--obs-keys", "q", "--action-keys", "x"], "{source}: no column 'x'"),
        (["--fps", "0", "--obs-keys", "q", "--action-keys", "tau"], "fps (--fps) must be betw"),
        (["--fps", "1e300", "--obs-keys", "q"], "fps (--fps) must be between 1e-06 and 1e+06 Hz"),
        (["--fps", "4", "--obs-keys", " , ", "--action-keys", "tau"], "' , ': expected comma"),
        (["--filter-key", "train"], "--filter-key: not an option of a table file ({source})"),
        # the episode column is neither state nor action, and one column of numbers
        (
            ["--fps", "4", "--obs-keys", "q", "--action-keys", "tau", "--episode-key", "q"],
            "{source}: column 'q' is selected twice, by --obs-keys 'q' and --episode-key 'q'",
        ),
        (
            ["--fps", "4", "--obs-keys", "q", "--action-keys", "tau", "--episode-key", "tau.a"],
            "column 'tau.a' is selected twice, by --action-keys 'tau' and --episode-key 'tau.a'",
        ),
        (
            ["--fps", "4", "--obs-keys", "q", "--action-keys", "tau", "--episode-key", "ep"],
            "--episode-key 'ep' selects 2 columns (ep.a, ep.b): name one",
        ),
        (
            ["--fps", "4", "--obs-keys", "q", "--action-keys", "tau", "--episode-key", "run"],
            "{source}: --episode-key column 'run', line 2: 'a' is not a number",
        ),
    ],
)
def test_bad_table_options(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "samples.csv"
    source.write_text("q,tau.a,tau.b,run,ep.a,ep.b\n1,2,5,a,0,0\n3,4,6,b,0,1\n")
    status, out, err = run(capsys, "import", str(source), "--out", str(tmp_path / "ds"), *argv)
    assert status == 2 and message.format(source=source) in err, err
    assert not out and not (tmp_path / "ds").exists()


def test_a_table_with_a_repeated_column_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    csv = tmp_path / "twice.csv"
    csv.write_text("q,q,tau\n1,2,3\n4,5,6\n")
    parquet = tmp_path / "twice.parquet"
    pq.write_table(pa.table([[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]], names=["q", "q", "tau"]), parquet)
    options = ["--fps", "4", "--obs-keys", "q", "--action-keys", "tau"]
    for source in (csv, parquet):
        status, out, err = run(
            capsys, "import", str(source), "--out", str(tmp_path / "ds"), *options
        )
        assert status == 2 and f"{source}: column 'q' appears 2 times" in err, err
        assert not out and not (tmp_path / "ds").exists()


def test_the_fps_of_an_hdf5_file_is_checked_as_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    robomimic, minari = tmp_path / "low_dim.hdf5", tmp_path / "pointmaze"
    write_robomimic(robomimic)
    write_minari(minari)
    for source in (robomimic, minari):
        status, _, err = run(
            capsys, "import", str(source), "--out", str(tmp_path / "ds"), "--fps", "-5"
        )
        assert status == 2 and "fps (--fps) must be between 1e-06 and 1e+06 Hz, got -5" in err, err


def test_what_is_none_of_the_formats_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "ds"
    junk = tmp_path / "notes.txt"
    junk.write_text("not data\n")
    status, out, err = run(capsys, "import", str(junk), "--out", str(out_dir))
    assert status == 2 and not out
    assert err.startswith(f"invdyn: error: {junk}: neither an HDF5 file (robomimic, Minari")
    assert err.count("\n") == 1 and "a table (.csv, .npz, .parquet, .pq) nor a video (" in err, err
    # HDF5 in none of the layouts
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f.create_dataset("x", data=np.zeros(3))
    status, _, err = run(capsys, "import", str(other), "--out", str(out_dir))
    assert status == 2 and err.count("\n") == 1 and f"{other}: neither Minari" in err, err
    # a forced format reads the file as that format
    robomimic = tmp_path / "low_dim.hdf5"
    write_robomimic(robomimic)
    status, _, err = run(
        capsys, "import", str(robomimic), "--out", str(out_dir), "--format", "minari"
    )
    assert status == 2 and f"{robomimic}: neither Minari" in err, err
    status, _, err = run(
        capsys, "import", str(robomimic), "--out", str(out_dir), "--format", "table"
    )
    assert status == 2 and f"{robomimic}: a table needs --fps" in err, err
    status, _, err = run(capsys, "import", str(tmp_path / "absent.hdf5"), "--out", str(out_dir))
    assert status == 2 and "absent.hdf5: no such file" in err, err
    assert not out_dir.exists()
    # an occupied --out is refused before the source is read
    out_dir.mkdir()
    (out_dir / "mine").write_text("keep")
    status, _, err = run(capsys, "import", str(robomimic), "--out", str(out_dir))
    assert status == 2 and "exists and is not empty" in err, err
    assert [p.name for p in out_dir.iterdir()] == ["mine"]
