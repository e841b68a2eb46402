"""The registry of dataset formats, `import_dataset`, and Minari's arrow layout.

The Minari datasets are written here with pyarrow in the layout of Minari's arrow storage
(``minari/dataset/_storages/arrow_storage.py``), so that nothing is downloaded and Minari is
not needed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import run
from invdyn.cli import main
from invdyn.errors import DataError, InputError
from invdyn.learn.datasets import (
    DatasetFormat,
    Episode,
    ImportConfig,
    Imported,
    ImportOptions,
    dataset_formats,
    detect_format,
    import_dataset,
    read_dataset,
    read_metadata,
    read_minari_arrow,
    register,
    registered,
)

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyarrow.dataset")
DATASET_ID = "D4RL/pointmaze/umaze-v2"


def _box(values: np.ndarray, pad: int = 0) -> object:
    """A Box space's values (T, *shape) as Minari stores them: fixed-size lists of the
    flattened values, `pad` rows of zeros after them."""
    flat = values.reshape(len(values), -1)
    flat = np.pad(flat, ((0, pad), (0, 0)))
    kind = pa.list_(pa.from_numpy_dtype(flat.dtype), flat.shape[1])
    return pa.FixedSizeListArray.from_arrays(flat.reshape(-1), type=kind)


def _box_space(shape: tuple[int, ...], dtype: str = "float64") -> dict[str, object]:
    return {"type": "Box", "dtype": dtype, "shape": list(shape), "low": 0, "high": 1}


def write_minari_arrow(root: Path, *, images: bool = False) -> list[tuple[np.ndarray, ...]]:
    """A Minari dataset folder at `root` in the arrow layout, of three episodes of a
    dictionary observation (desired_goal, observation; with `images`, an image and a text
    too) and Box actions; each episode's expected state (its observations, keys sorted,
    without the last) and actions."""
    import pyarrow.dataset as ds

    rng = np.random.default_rng(1)
    data = root / "data"
    data.mkdir(parents=True)
    spaces = {"observation": _box_space((4,)), "desired_goal": _box_space((2,))}
    if images:
        spaces |= {"pixels": _box_space((8, 8, 3), "uint8"), "mission": {"type": "Text"}}
    expected = []
    for n, steps in [(0, 3), (1, 5), (2, 4)]:
        observation = rng.normal(size=(steps + 1, 4))
        goal = rng.normal(size=(steps + 1, 2))
        actions = rng.normal(size=(steps, 2)).astype(np.float32)
        # Minari's order of the dictionary's keys: the space's (here not sorted)
        fields = {"observation": _box(observation), "desired_goal": _box(goal)}
        if images:
            pixels = rng.integers(0, 255, size=(steps + 1, 8, 8, 3), dtype=np.uint8)
            fields |= {"pixels": _box(pixels), "mission": pa.array(["go"] * (steps + 1))}
        batch = pa.RecordBatch.from_pydict(
            {
                "episode_id": np.full(steps + 1, n, dtype=np.int32),
                "observations": pa.StructArray.from_arrays(list(fields.values()), list(fields)),
                "actions": _box(actions, pad=1),
                "rewards": np.pad(rng.normal(size=steps), (0, 1)),
                "terminations": np.pad(np.zeros(steps, bool), (0, 1)),
                "truncations": np.pad(np.eye(1, steps, steps - 1, dtype=bool)[0], (0, 1)),
            }
        )
        ds.write_dataset(
            batch,
            data,
            format="arrow",
            partitioning=["episode_id"],
            existing_data_behavior="overwrite_or_ignore",
        )
        (data / str(n) / "metadata.json").write_text(
            json.dumps({"id": n, "total_steps": steps, "seed": n})
        )
        expected.append((np.column_stack([goal, observation])[:steps], actions))
    metadata = {
        "total_episodes": 3,
        "total_steps": 12,
        "data_format": "arrow",
        "observation_space": json.dumps({"type": "Dict", "subspaces": spaces}),
        "action_space": json.dumps(_box_space((2,), "float32")),
        "dataset_id": DATASET_ID,
    }
    (data / "metadata.json").write_text(json.dumps(metadata))
    return expected


def test_read_minari_arrow(tmp_path: Path) -> None:
    root = tmp_path / "pointmaze"
    expected = write_minari_arrow(root)
    imported = read_minari_arrow(root, fps=50)
    assert [len(e) for e in imported.episodes] == [3, 5, 4] and imported.fps == 50
    # a dictionary observation's entries, keys sorted, named after their keys
    goal, observation = ["desired_goal.0", "desired_goal.1"], [f"observation.{i}" for i in range(4)]
    assert imported.state_names == (*goal, *observation)
    assert imported.action_names == ("action.0", "action.1")
    for episode, (state, action) in zip(imported.episodes, expected, strict=True):
        np.testing.assert_array_equal(episode.state, state)
        np.testing.assert_array_equal(episode.action, action)
        assert episode.action.dtype == np.float32
        np.testing.assert_allclose(episode.timestamp, np.arange(len(episode)) / 50)
        assert episode.task == DATASET_ID
    # the data folder reads the same
    again = read_minari_arrow(root / "data", fps=50)
    np.testing.assert_array_equal(again.episodes[2].state, expected[2][0])


def test_read_minari_arrow_leaves_images_and_text_out(tmp_path: Path) -> None:
    root = tmp_path / "minigrid"
    expected = write_minari_arrow(root, images=True)
    with pytest.warns(UserWarning, match=r"observations mission \(string\), pixels \(uint8, "):
        imported = read_minari_arrow(root)
    assert len(imported.state_names) == 6
    for episode, (state, _) in zip(imported.episodes, expected, strict=True):
        np.testing.assert_array_equal(episode.state, state)


def test_minari_arrow_of_plain_spaces(tmp_path: Path) -> None:
    """A Box observation and a Discrete action: one column of lists, one of integers."""
    import pyarrow.dataset as ds

    data = tmp_path / "cartpole" / "data"
    data.mkdir(parents=True)
    observations = np.arange(15.0).reshape(5, 3)
    batch = pa.RecordBatch.from_pydict(
        {
            "episode_id": np.zeros(5, dtype=np.int32),
            "observations": _box(observations),
            "actions": pa.array([1, 0, 1, 1, 0], pa.int32()),
            "rewards": np.ones(5),
        }
    )
    ds.write_dataset(batch, data, format="arrow", partitioning=["episode_id"])
    (data / "metadata.json").write_text(json.dumps({"data_format": "arrow"}))
    imported = read_minari_arrow(tmp_path / "cartpole")
    assert imported.state_names == ("observation.0", "observation.1", "observation.2")
    assert imported.action_names == ("action",)
    (episode,) = imported.episodes
    np.testing.assert_array_equal(episode.state, observations[:4])
    np.testing.assert_array_equal(episode.action, [[1], [0], [1], [1]])
    np.testing.assert_array_equal(episode.timestamp, np.arange(4.0))
    assert episode.task == ""


def test_bad_minari_arrow_datasets_name_the_problem(tmp_path: Path) -> None:
    root = tmp_path / "pointmaze"
    write_minari_arrow(root)
    metadata_file = root / "data" / "metadata.json"
    metadata = json.loads(metadata_file.read_text())
    metadata_file.write_text(json.dumps(metadata | {"total_episodes": 4}))
    with pytest.raises(DataError, match=r"total_episodes is 4, but .*data holds 3 episode"):
        read_minari_arrow(root)
    metadata_file.write_text(json.dumps(metadata | {"data_format": "hdf5"}))
    with pytest.raises(DataError, match="data_format is 'hdf5', not 'arrow'"):
        read_minari_arrow(root)
    metadata_file.write_text(json.dumps(metadata))
    steps = root / "data" / "1" / "metadata.json"
    steps.write_text(json.dumps({"id": 1, "total_steps": 6}))
    with pytest.raises(DataError, match=r"1/metadata.json: total_steps is 6, but the files hold 5"):
        read_minari_arrow(root)
    steps.unlink()
    (root / "data" / "1" / "part-0.arrow").write_bytes(b"not arrow")
    with pytest.raises(DataError, match=r"data/1: not readable arrow files"):
        read_minari_arrow(root)
    with pytest.raises(DataError, match="no data/metadata.json"):
        read_minari_arrow(tmp_path)


def test_invdyn_import_detects_minari_arrow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "pointmaze"
    expected = write_minari_arrow(root)
    for source in (root, root / "data"):
        dataset = tmp_path / f"from-{source.name}"
        status, out, err = run(capsys, "import", str(source), "--out", str(dataset), "--fps", "50")
        assert status == 0, err
        assert f"{source}: 3 episodes, 12 frames at 50 fps, state 6, action 2" in out
        imported = read_dataset(dataset)
        assert imported.info.source == "minari-arrow" and imported.info.fps == 50
        for episode, (state, action) in zip(imported, expected, strict=True):
            np.testing.assert_array_equal(episode.state, state)
            np.testing.assert_array_equal(episode.action, action)
            assert episode.task == DATASET_ID
    status, _, err = run(
        capsys, "import", str(root), "--out", str(tmp_path / "x"), "--obs-keys", "q"
    )
    assert status == 2 and f"--obs-keys: not an option of a minari-arrow folder ({root})" in err


def _read_toy(path: Path, options: ImportOptions) -> Imported:
    """A toy format: numbers, one frame a line, the state of one episode."""
    values = np.loadtxt(path, ndmin=2)
    fps = 10.0 if options.fps is None else options.fps
    episode = Episode(state=values, action=None, timestamp=np.arange(len(values)) / fps)
    return Imported([episode], ("x",), None, fps, metadata={"lines": len(values)})


TOY = DatasetFormat(
    name="toy",
    description="numbers, one frame a line (.toy)",
    detect=lambda path: path.suffix == ".toy",
    read=_read_toy,
)


def test_a_registered_format_is_detected_listed_and_imported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "walk.toy"
    source.write_text("1\n2\n3\n")
    with registered(TOY):
        assert detect_format(source) is TOY
        status, out, err = run(capsys, "import", str(source), "--out", str(tmp_path / "ds"))
        assert status == 0, err
        assert f"{source}: 1 episode, 3 frames at 10 fps, state 1, no action" in out
        dataset = read_dataset(tmp_path / "ds")
        np.testing.assert_array_equal(dataset.episode(0).state, [[1], [2], [3]])
        assert dataset.info.source == "toy"
        assert read_metadata(tmp_path / "ds") == {
            "importer": "invdyn import",
            "format": "toy",
            "file": str(source),
            "lines": 3,
        }
        # listed by the command's help and chosen by --format
        with pytest.raises(SystemExit):
            main(["import", "--help"])
        assert "toy: numbers, one frame a line (.toy)" in " ".join(capsys.readouterr().out.split())
        other = tmp_path / "walk.txt"
        other.write_text("4\n5\n")
        status, _, err = run(capsys, "import", str(other), "--out", str(tmp_path / "two"),
                             "--format", "toy", "--fps", "2")  # fmt: skip
        assert status == 0 and read_dataset(tmp_path / "two").info.fps == 2, err
        # the options it does not take are refused, as the built-in formats refuse them
        status, _, err = run(capsys, "import", str(source), "--out", str(tmp_path / "x"),
                             "--camera", "front")  # fmt: skip
        assert status == 2 and f"--camera: not an option of a toy file ({source})" in err
        with pytest.raises(InputError, match="'toy' is already registered"):
            register(TOY)
    # the registration ends with the block
    assert TOY not in dataset_formats()
    status, _, err = run(capsys, "import", str(source), "--out", str(tmp_path / "after"))
    assert status == 2 and f"{source}: neither an HDF5 file" in err
    assert "(the formats robomimic, minari, minari-arrow, table, video)" in err


def test_a_format_name_is_checked() -> None:
    for name in ("Toy", "", "a b"):
        with pytest.raises(InputError, match="must be lowercase letters, digits and '-'"):
            register(DatasetFormat(name=name, description="", detect=bool, read=_read_toy))


def test_import_dataset_makes_the_checks_of_the_command(tmp_path: Path) -> None:
    """`import_dataset` is `invdyn import` for Python: the same checks, the same dataset."""
    source = tmp_path / "samples.csv"
    source.write_text("run,q,tau\n0,1,2\n0,3,4\n1,5,6\n")
    options = ImportOptions(fps=4, obs_keys=("q",), action_keys=("tau",), episode_key="run")
    result = import_dataset(ImportConfig(source=source, out=tmp_path / "ds", options=options))
    assert result.path == tmp_path / "ds" and result.format == "table"
    assert result.summary == "2 episodes, 3 frames at 4 fps, state 1, action 1"
    assert [len(e) for e in read_dataset(result.path)] == [2, 1]
    assert read_metadata(result.path) == {
        "importer": "invdyn import",
        "format": "table",
        "file": str(source),
        "obs_keys": ["q"],
        "action_keys": ["tau"],
        "episode_key": "run",
    }
    bad = {
        "--camera: not an option of a table file": ImportOptions(fps=4, camera="front"),
        "a table needs --fps, and --obs-keys": ImportOptions(fps=4),
        "fps \\(--fps\\) must be between": ImportOptions(fps=0, obs_keys=("q",)),
    }
    for message, wrong in bad.items():
        with pytest.raises(InputError, match=message):
            import_dataset(ImportConfig(source=source, out=tmp_path / "bad", options=wrong))
    with pytest.raises(InputError, match="unknown dataset format 'excel'; the formats are"):
        import_dataset(ImportConfig(source=source, out=tmp_path / "bad", format="excel"))
    with pytest.raises(FileExistsError, match="exists and is not empty"):
        import_dataset(ImportConfig(source=source, out=tmp_path / "ds", options=options))
    assert not (tmp_path / "bad").exists()
