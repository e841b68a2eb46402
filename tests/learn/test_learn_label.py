"""Labelling action-free datasets with a trained model: accuracy, flags, spec checks, resuming.

The data come from two uncoupled damped pendulums on springs driven by random torques (as in
test_learn_models.py), so a small MLP recovers the torques from consecutive states.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import driven_pendulums

torch = pytest.importorskip("torch")
pytest.importorskip("pyarrow")

from invdyn import DataError, InputError  # noqa: E402
from invdyn.learn import label, units  # noqa: E402
from invdyn.learn.checkpoint import load_checkpoint, load_model  # noqa: E402
from invdyn.learn.config import Config, preset  # noqa: E402
from invdyn.learn.datasets import (  # noqa: E402
    Episode,
    FrameFeature,
    read_dataset,
    read_extra_features,
    read_frame_columns,
    write_dataset,
)
from invdyn.learn.keys import OBS_STATE  # noqa: E402
from invdyn.learn.label import (  # noqa: E402
    ACTION_STD,
    IS_LABELLED,
    label_dataset,
    label_states,
    read_labels,
)
from invdyn.learn.models import episode_arrays, make_windows  # noqa: E402
from invdyn.learn.train import train  # noqa: E402

DT = 0.02
FPS = 1 / DT
STATE_NAMES = ("q0", "q1", "v0", "v1")
ACTION_NAMES = ("tau0", "tau1")


def simulate(n_episodes: int, steps: int, seed: int) -> list[Episode]:
    """`driven_pendulums` episodes, timed."""
    return [
        Episode(s, a, np.arange(steps) * DT, task="swing")
        for s, a in driven_pendulums(n_episodes, steps, seed, DT)
    ]


def action_free(episodes: list[Episode]) -> list[Episode]:
    return [Episode(e.state, None, e.timestamp, e.task) for e in episodes]


def write(path: Path, episodes: list[Episode], **options: object) -> Path:
    has_action = episodes[0].action is not None
    n_state = episodes[0].state.shape[1]
    names = STATE_NAMES if n_state == 4 else tuple(f"s{i}" for i in range(n_state))
    return write_dataset(
        path,
        episodes,
        fps=options.pop("fps", FPS),  # type: ignore[arg-type]
        state_names=options.pop("state_names", names),  # type: ignore[arg-type]
        action_names=ACTION_NAMES if has_action else None,
        source="pendulums",
    )


def trained(root: Path, **model: object) -> Path:
    """A checkpoint of the small preset with `model` overrides, trained on a dataset on disk."""
    data = write(root / "train_data", simulate(24, 100, seed=0))
    base = preset("small")
    config = Config(
        model=dataclasses.replace(base.model, **model),  # type: ignore[arg-type]
        train=dataclasses.replace(base.train, epochs=8, checkpoint_every=100, num_threads=1),
        dataset=str(data),
    )
    return train(read_dataset(data), config, root / "run", progress=False).checkpoint


@pytest.fixture(scope="module")
def ensemble(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # context 1: the first frame of each episode has no window
    return trained(tmp_path_factory.mktemp("ensemble"), ensemble=2, context=1)


@pytest.fixture(scope="module")
def chunked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return trained(tmp_path_factory.mktemp("chunked"), horizon=2, chunk=True)


@pytest.fixture(scope="module")
def held_out() -> list[Episode]:
    return simulate(4, 100, seed=1)


@pytest.fixture()
def unlabelled(held_out: list[Episode], tmp_path: Path) -> Path:
    return write(tmp_path / "unlabelled", action_free(held_out))


def counted_predictions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of episodes of each unit that labelling predicts from now on."""
    predict = units.predict
    predicted: list[int] = []

    def counting(model: object, inputs: units.Inputs, batch_size: int) -> object:
        predicted.append(len(inputs.lengths))
        return predict(model, inputs, batch_size)  # type: ignore[arg-type]

    monkeypatch.setattr(units, "predict", counting)
    return predicted


def r2(prediction: np.ndarray, target: np.ndarray) -> float:
    return float(np.mean(1 - ((prediction - target) ** 2).mean(0) / target.var(0)))


def test_labels_recover_the_true_actions(ensemble, held_out, unlabelled, tmp_path):
    short = Episode(np.zeros((2, 4)), None, np.array([0.0, DT]), task="still")
    source = write(tmp_path / "with_short", [*action_free(held_out), short])
    with pytest.warns(UserWarning, match="1 episode"):
        out = label_dataset(ensemble, source, tmp_path / "labelled", batch_size=64, progress=True)
    assert out == tmp_path / "labelled"
    assert not (tmp_path / "labelled.partial").exists()

    # the same frames, states, times and tasks; actions named as in the training dataset
    dataset = read_dataset(out)
    assert dataset.info.action_names == ACTION_NAMES
    assert dataset.info.state_names == STATE_NAMES
    assert dataset.info.fps == FPS
    assert dataset.info.tasks == ("swing", "still")
    originals = read_dataset(source)
    for got, want in zip(dataset, originals):
        assert np.array_equal(got.state, want.state)
        assert np.array_equal(got.timestamp, want.timestamp)
        assert got.task == want.task

    labels = read_labels(out)
    n = 4 * 100 + 2
    assert labels.action.shape == (n, 2) and labels.action.dtype == np.float32
    assert labels.std is not None and labels.std.shape == (n, 2)
    assert labels.is_labelled.shape == (n,) and labels.is_labelled.dtype == bool
    info = json.loads((out / "meta/info.json").read_text())
    assert info["features"][IS_LABELLED] == {"dtype": "bool", "shape": [1], "names": None}
    assert info["features"][ACTION_STD]["names"] == list(ACTION_NAMES)
    assert set(json.loads((out / "meta/stats.json").read_text())) >= {IS_LABELLED, ACTION_STD}

    # context 1, horizon 1: frames 1 .. 98 of each episode are labelled; the rest copy
    action = labels.action[:400].reshape(4, 100, 2)
    flags = labels.is_labelled[:400].reshape(4, 100)
    assert not flags[:, 0].any() and not flags[:, 99].any() and flags[:, 1:99].all()
    assert np.array_equal(action[:, 0], action[:, 1])
    assert np.array_equal(action[:, 99], action[:, 98])
    # the short episode has no window: the training mean, unlabelled
    stats = load_model(ensemble).stats
    assert not labels.is_labelled[400:].any()
    assert np.array_equal(
        labels.action[400:], np.tile(stats.action_mean.astype(np.float32), (2, 1))
    )
    assert np.array_equal(labels.std[400:], np.tile(stats.action_std.astype(np.float32), (2, 1)))

    # accuracy on the labelled frames (measured: R^2 = 0.998)
    truth = np.stack([e.action for e in held_out])[:, 1:99].reshape(-1, 2)
    assert r2(action[:, 1:99].reshape(-1, 2), truth) > 0.98
    # the members disagree a little
    std = labels.std[:400].reshape(4, 100, 2)[:, 1:99]
    assert np.all(std >= 0) and std.mean() > 0


def test_single_model_labels_have_no_deviation(chunked, held_out, unlabelled, tmp_path):
    out = label_dataset(chunked, unlabelled, tmp_path / "labelled")
    labels = read_labels(out)
    assert labels.std is None
    info = json.loads((out / "meta/info.json").read_text())
    assert ACTION_STD not in info["features"]
    # horizon 2: the last two frames of each episode have no window
    flags = labels.is_labelled.reshape(4, 100)
    assert flags[:, :98].all() and not flags[:, 98:].any()
    # a labelled frame's action is the first step of its window's chunk
    model = load_model(chunked)
    windows = make_windows(episode_arrays(held_out), model.config)
    chunks = model.predict({OBS_STATE: windows.batch()[OBS_STATE]}).numpy()
    assert chunks.shape == (4 * 98, 2, 2)
    action = labels.action.reshape(4, 100, 2)
    np.testing.assert_allclose(action[:, :98].reshape(-1, 2), chunks[:, 0], rtol=1e-6, atol=1e-6)
    # o_t and o_{t+2} determine a_t only through a badly conditioned difference, which this
    # small model learns poorly (measured: R^2 about 0.47, as `evaluate` says)
    truth = np.stack([e.action for e in held_out])
    assert r2(action[:, :98].reshape(-1, 2), truth[:, :98].reshape(-1, 2)) > 0.35


def test_a_run_directory_labels_as_its_checkpoint(chunked, unlabelled, tmp_path):
    by_checkpoint = read_labels(label_dataset(chunked, unlabelled, tmp_path / "a"))
    by_run = read_labels(label_dataset(chunked.parent, unlabelled, tmp_path / "b"))
    np.testing.assert_array_equal(by_run.action, by_checkpoint.action)


def test_a_device_that_is_not_here_is_named(chunked):
    for name in ("gpu", "cuda:0"):
        if name == "cuda:0" and torch.cuda.is_available():
            continue
        with pytest.raises(InputError, match=f"'{name}'"):
            load_checkpoint(chunked, device=name)


def test_states_in_memory_are_labelled_as_a_dataset_of_them(
    ensemble, chunked, held_out, unlabelled, tmp_path
):
    short = np.zeros((1, 4))
    for n, checkpoint in enumerate((ensemble, chunked)):
        on_disk = read_labels(label_dataset(checkpoint, unlabelled, tmp_path / f"labelled{n}"))
        model = load_model(checkpoint)
        with pytest.warns(UserWarning, match="1 episode"):
            labels = label_states(model, [*(e.state for e in held_out), short], batch_size=50)
        assert len(labels) == 5
        for k, got in enumerate(labels[:4]):
            rows = slice(100 * k, 100 * (k + 1))
            np.testing.assert_allclose(got.action, on_disk.action[rows], rtol=1e-5, atol=1e-5)
            assert np.array_equal(got.is_labelled, on_disk.is_labelled[rows])
            if on_disk.std is None:
                assert got.std is None
            else:
                np.testing.assert_allclose(got.std, on_disk.std[rows], rtol=1e-4, atol=1e-5)
        assert labels[4].action.shape == (1, 2) and not labels[4].is_labelled.any()
    assert label_states(model, []) == []


def test_label_states_refuses_bad_states(ensemble, held_out):
    model = load_model(ensemble)
    state = held_out[0].state
    nan = state.copy()
    nan[3, 1] = np.nan
    cases = {
        r"shape \(\.\.\., 4\)": [state[:, :3]],
        r"states\[1\] must have shape \(T, 4\)": [state, state[0]],
        "non-finite": [nan],
        "sequence of": state,
        "array of numbers": [[["a"] * 4]],
    }
    for message, states in cases.items():
        with pytest.raises(InputError, match=message):
            label_states(model, states)
    with pytest.raises(InputError, match="InverseDynamicsModel"):
        label_states(ensemble, [state])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="batch_size"):
        label_states(model, [state], batch_size=0)


def test_refuses_a_dataset_of_another_spec(ensemble, held_out, tmp_path):
    free = action_free(held_out)
    wider = [Episode(np.hstack([e.state, e.state[:, :1]]), None, e.timestamp) for e in free]
    cases = {
        "3 entries|5 entries": write(tmp_path / "wider", wider),
        "state names": write(tmp_path / "renamed", free, state_names=("a", "b", "c", "d")),
        "fps": write(
            tmp_path / "slower",
            [Episode(e.state, None, 2 * e.timestamp) for e in free],
            fps=FPS / 2,
        ),
    }
    for message, path in cases.items():
        with pytest.raises(InputError, match=message):
            label_dataset(ensemble, path, tmp_path / "out")
        assert not (tmp_path / "out").exists()
        assert not (tmp_path / "out.partial").exists()


def test_spec_is_kept_in_the_checkpoint(ensemble, held_out, tmp_path):
    """The checks do not need the training dataset: the checkpoint keeps its spec."""
    copy = tmp_path / "checkpoint"
    shutil.copytree(ensemble, copy)
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps(config | {"dataset": str(tmp_path / "gone")}))
    spec = json.loads((copy / "spec.json").read_text())
    assert spec["state_names"] == list(STATE_NAMES) and spec["fps"] == FPS
    renamed = write(tmp_path / "renamed", action_free(held_out), state_names=("a", "b", "c", "d"))
    with pytest.raises(InputError, match="state names"):
        label_dataset(copy, renamed, tmp_path / "out")
    # a dataset whose info.json names no state entries is not told apart by its names
    unnamed = write(tmp_path / "unnamed", action_free(held_out))
    info = json.loads((unnamed / "meta/info.json").read_text())
    info["features"][OBS_STATE]["names"] = None
    (unnamed / "meta/info.json").write_text(json.dumps(info))
    assert read_dataset(unnamed).info.state_names[0] == "observation.state.0"
    label_dataset(copy, unnamed, tmp_path / "unnamed-labelled")
    # and the labels take the training data's action names
    result = label_dataset(copy, write(tmp_path / "free", action_free(held_out)), tmp_path / "ok")
    assert read_dataset(result).info.action_names == ACTION_NAMES
    # a corrupt spec is reported as such
    (copy / "spec.json").write_text('{"state_names": "q0"}')
    with pytest.raises(DataError, match="spec.json"):
        label_dataset(copy, renamed, tmp_path / "out2")


def test_refuses_recorded_actions_unless_replace(ensemble, held_out, tmp_path):
    recorded = write(tmp_path / "recorded", held_out)
    with pytest.raises(InputError, match="replace=True"):
        label_dataset(ensemble, recorded, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    out = label_dataset(ensemble, recorded, tmp_path / "out", replace=True)
    labels = read_labels(out)
    assert not np.array_equal(labels.action, np.concatenate([e.action for e in held_out]))
    # an existing output is replaced only with overwrite
    with pytest.raises(FileExistsError):
        label_dataset(ensemble, recorded, out, replace=True)
    label_dataset(ensemble, recorded, out, replace=True, overwrite=True)


@pytest.mark.parametrize("replace", [[], ["--replace"]])
def test_label_command_checks_data_first(ensemble, held_out, tmp_path, capsys, replace):
    """DATA that is missing, neither a dataset nor videos, or inside a dataset, is named as
    such, before the model (of states, not of plain videos) or --replace are checked against
    it."""
    from invdyn.cli import main

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "readme.txt").write_text("no videos here")
    meta = write(tmp_path / "data", held_out) / "meta"
    expected = {
        tmp_path / "absent": "absent: no such file or directory",
        notes: "notes is neither a dataset (the folder of meta/info.json), a video file",
        meta: f"meta lies inside the LeRobot dataset {meta.parent}, whose video files",
    }
    for data, message in expected.items():
        args = ["label", str(ensemble), str(data), "--out", str(tmp_path / "out"), *replace]
        assert main(args) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_labelling_in_place_keeps_all_but_the_actions(chunked, held_out, tmp_path):
    """Every feature but the recorded actions and those about them stays: other per-frame
    features with their names, and the videos of a dataset labelled by a model of its state;
    and so do the user's other files and the entries of info.json that invdyn does not write."""
    pytest.importorskip("av")
    lengths = [len(e) for e in held_out]
    rng = np.random.default_rng(0)
    extras = {
        "next.reward": FrameFeature([rng.normal(size=n) for n in lengths]),
        "next.done": FrameFeature([np.arange(n) == n - 1 for n in lengths]),
        "observation.contacts": FrameFeature([rng.random((n, 2)) < 0.5 for n in lengths]),
        "observation.mujoco_state": FrameFeature(
            [rng.normal(size=(n, 3)) for n in lengths], names=["qpos", "qvel", "act"]
        ),
        "action.std": FrameFeature([np.ones((n, 2)) for n in lengths]),  # of the old actions
    }
    frames = [np.full((n, 16, 16, 3), 40 * k, dtype=np.uint8) for k, n in enumerate(lengths)]
    path = write_dataset(
        tmp_path / "data", held_out, fps=FPS, state_names=STATE_NAMES, action_names=ACTION_NAMES,
        extra_features=extras, videos={"cam": frames},
    )  # fmt: skip
    video = sorted(path.rglob("*.mp4"))[0].read_bytes()
    decoded = read_dataset(path).frames("cam", 3)
    # a feature that a copy cannot carry (images in the data files) is named, before labelling
    import pyarrow as pa
    import pyarrow.parquet as pq

    info = json.loads((path / "meta/info.json").read_text())
    info["features"]["observation.images.wrist"] = {"dtype": "image", "shape": [8, 8, 3]}
    info["license"] = "apache-2.0"
    (path / "meta/info.json").write_text(json.dumps(info))
    # files of the user's own: a dataset card, git attributes, notes beside the metadata
    others = {
        "README.md": "# a dataset card",
        ".gitattributes": "*.mp4 lfs",
        "meta/notes.json": "{}",
    }
    for name, text in others.items():
        (path / name).write_text(text)
    for file in (path / "data").rglob("*.parquet"):
        table = pq.read_table(file)
        images = pa.array([b"png"] * table.num_rows, type=pa.binary())
        pq.write_table(table.append_column("observation.images.wrist", images), file)
    with pytest.warns(UserWarning, match=r"\['observation.images.wrist'\] are not vectors"):
        label_dataset(chunked, path, path, replace=True, overwrite=True)
    kept = read_extra_features(path)
    carried = ("next.reward", "next.done", "observation.contacts", "observation.mujoco_state")
    assert set(kept) == {*carried, IS_LABELLED}
    for key in carried:
        for got, want in zip(kept[key].values, extras[key].values, strict=True):
            np.testing.assert_array_equal(got, want)
    assert kept["observation.mujoco_state"].names == ["qpos", "qvel", "act"]
    assert sorted(path.rglob("*.mp4"))[0].read_bytes() == video
    np.testing.assert_array_equal(read_dataset(path).frames("cam", 3), decoded)
    assert {name: (path / name).read_text() for name in others} == others
    assert json.loads((path / "meta/info.json").read_text())["license"] == "apache-2.0"


def test_training_on_a_dataset_without_actions_says_to_label_it(unlabelled, tmp_path):
    with pytest.raises(InputError, match=r"unlabelled has no actions to train on; .*invdyn label"):
        train(read_dataset(unlabelled), preset("small"), tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()


def test_labels_used_as_recorded_actions_are_flagged(chunked, unlabelled, tmp_path):
    from invdyn.learn.evaluate import evaluate_checkpoint

    out = label_dataset(chunked, unlabelled, tmp_path / "labelled")
    with pytest.warns(UserWarning, match=r"labelled were predicted by the model .*agreement"):
        evaluate_checkpoint(chunked, out)
    config = Config(model=preset("small").model, train=dataclasses.replace(
        preset("small").train, epochs=1, num_threads=1
    ))  # fmt: skip
    with pytest.warns(UserWarning, match=r"predicted by the model .*action.is_labelled False"):
        train(read_dataset(out), config, tmp_path / "run", progress=False)


def test_resume_after_a_kill_gives_identical_output(ensemble, unlabelled, tmp_path, monkeypatch):
    # 100 windows per episode, batch_size 60: one unit per episode, two forward passes each
    reference = label_dataset(ensemble, unlabelled, tmp_path / "reference", batch_size=60)

    # a run killed after its first unit: no output, one saved unit
    save = units.save_unit
    calls: list[Path] = []

    def killed_after_one(file: Path, unit: object) -> None:
        if calls:
            raise KeyboardInterrupt("killed")
        calls.append(file)
        save(file, unit)  # type: ignore[arg-type]

    monkeypatch.setattr(units, "save_unit", killed_after_one)
    out = tmp_path / "labelled"
    with pytest.raises(KeyboardInterrupt):
        label_dataset(ensemble, unlabelled, out, batch_size=60)
    assert not out.exists()
    work = tmp_path / "labelled.partial"
    assert sorted(p.name for p in work.iterdir()) == ["manifest.json", "unit-000000.npz"]

    # the restart predicts only the three other episodes
    monkeypatch.setattr(units, "save_unit", save)
    predicted = counted_predictions(monkeypatch)
    label_dataset(ensemble, unlabelled, out, batch_size=60)
    assert predicted == [1, 1, 1]
    assert not work.exists()
    keys = ["action", ACTION_STD, IS_LABELLED, "observation.state", "timestamp", "index"]
    got, want = read_frame_columns(out, keys), read_frame_columns(reference, keys)
    for key in keys:
        assert got[key].dtype == want[key].dtype
        assert got[key].tobytes() == want[key].tobytes(), key
    for file in sorted(reference.rglob("*.*")):
        assert (out / file.relative_to(reference)).read_bytes() == file.read_bytes(), file


def test_work_directory_of_other_inputs_is_refused(ensemble, chunked, unlabelled, tmp_path):
    out = tmp_path / "labelled"
    work = tmp_path / "labelled.partial"
    work.mkdir()
    (work / "manifest.json").write_text('{"format": 0}')
    with pytest.raises(InputError, match="partial labels of another"):
        label_dataset(ensemble, unlabelled, out)
    assert not out.exists() and work.exists()
    with pytest.warns(UserWarning, match="discarding"):
        label_dataset(ensemble, unlabelled, out, overwrite=True)
    assert out.exists() and not work.exists()


def test_a_failed_write_leaves_no_output(ensemble, unlabelled, tmp_path, monkeypatch):
    def fail(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(label, "write_dataset", fail)
    with pytest.raises(OSError, match="disk full"):
        label_dataset(ensemble, unlabelled, tmp_path / "labelled", batch_size=1000)
    assert not (tmp_path / "labelled").exists()
    # the predictions are kept for the next run
    assert (tmp_path / "labelled.partial" / "unit-000000.npz").is_file()


def test_bad_batch_size(ensemble, unlabelled, tmp_path):
    for bad in (0, -1, 2.5, True):
        with pytest.raises(InputError, match="batch_size"):
            label_dataset(ensemble, unlabelled, tmp_path / "out", batch_size=bad)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------
# on Ray workers
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def many_unlabelled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """40 action-free episodes: 40 units of work at batch_size 60."""
    root = tmp_path_factory.mktemp("many")
    return write(root / "unlabelled", action_free(simulate(40, 100, seed=5)))


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def same_dataset(got: Path, want: Path) -> None:
    files = sorted(p.relative_to(want) for p in want.rglob("*") if p.is_file())
    assert sorted(p.relative_to(got) for p in got.rglob("*") if p.is_file()) == files
    for file in files:
        assert (got / file).read_bytes() == (want / file).read_bytes(), file


def test_two_ray_workers_label_as_one_process(ensemble, many_unlabelled, local_ray, tmp_path):
    reference = label_dataset(ensemble, many_unlabelled, tmp_path / "one", batch_size=60)
    shared = label_dataset(ensemble, many_unlabelled, tmp_path / "two", batch_size=60, workers=2)
    same_dataset(shared, reference)
    assert not (tmp_path / "two.partial").exists()


def test_a_killed_ray_labelling_resumes_with_the_same_output(
    ensemble, many_unlabelled, local_ray, tmp_path, monkeypatch
):
    reference = label_dataset(ensemble, many_unlabelled, tmp_path / "reference", batch_size=60)

    class KilledAfterOneUnit:
        """A progress bar whose second update (the first finished unit) is a Ctrl-C."""

        def __init__(self, *args: object, **kwargs: object) -> None:
            self.updates = 0

        def update(self, n: int) -> None:
            self.updates += 1
            if self.updates == 2:
                raise KeyboardInterrupt("killed")

        def close(self) -> None:
            pass

    monkeypatch.setattr(label, "tqdm", KilledAfterOneUnit)
    out = tmp_path / "labelled"
    with pytest.raises(KeyboardInterrupt):
        label_dataset(ensemble, many_unlabelled, out, batch_size=60, workers=2)
    saved = list((tmp_path / "labelled.partial").glob("unit-*.npz"))
    assert not out.exists() and 1 <= len(saved) < 40

    monkeypatch.undo()
    # the rest, in this process: only the units the killed run did not save
    predicted = counted_predictions(monkeypatch)
    label_dataset(ensemble, many_unlabelled, out, batch_size=60)
    # (a unit that a killed worker was saving may land after the count: at most one each)
    assert 40 - len(saved) - 2 <= sum(predicted) <= 40 - len(saved)
    same_dataset(out, reference)


def test_label_command_on_ray_workers(ensemble, many_unlabelled, tmp_path):
    pytest.importorskip("ray")
    from invdyn.cli import main

    reference = label_dataset(ensemble, many_unlabelled, tmp_path / "reference", batch_size=60)
    out = tmp_path / "labelled"
    args = ["label", str(ensemble), str(many_unlabelled), "--out", str(out)]
    assert main([*args, "--workers", "2", "--batch-size", "60", "--no-progress"]) == 0
    same_dataset(out, reference)


def test_bad_workers(ensemble, unlabelled, tmp_path):
    for bad in (0, -2, 1.5, True):
        with pytest.raises(InputError, match="workers"):
            label_dataset(ensemble, unlabelled, tmp_path / "out", workers=bad)  # type: ignore[arg-type]


def test_more_workers_than_the_cluster_holds_label_on_its_cpus(
    ensemble, many_unlabelled, local_ray, tmp_path
):
    reference = label_dataset(ensemble, many_unlabelled, tmp_path / "one", batch_size=600)
    with pytest.warns(UserWarning, match="the Ray cluster has 2 CPUs: labelling on 2"):
        out = label_dataset(
            ensemble, many_unlabelled, tmp_path / "three", batch_size=600, workers=3
        )
    same_dataset(out, reference)


def test_gpu_shares_pack_onto_whole_gpus():
    from invdyn.learn.cluster import _gpu_share

    assert _gpu_share(0.0, 3) == 0.0
    assert _gpu_share(2.0, 3) == 0.5  # two actors per GPU, not 2/3 each (only two would fit)
    assert _gpu_share(4.0, 2) == 1.0
    assert _gpu_share(8.0, 64) == 0.125
    assert _gpu_share(0.5, 2) == 0.25


def test_workers_without_ray_say_how_to_install_it(
    ensemble, many_unlabelled, tmp_path, monkeypatch
):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    with pytest.raises(InputError, match=r"pip install 'invdyn\[ray\]'"):
        label_dataset(ensemble, many_unlabelled, tmp_path / "out", batch_size=600, workers=2)
    assert not (tmp_path / "out").exists()


def test_a_dataset_of_frames_alone_is_said_to_have_no_state(ensemble, tmp_path):
    """A model of the state given a dataset of plain video frames: the message says that the
    dataset has no state, not that its state has 0 entries."""
    pytest.importorskip("av")
    from test_learn_video import pattern

    from invdyn.learn.datasets import import_videos
    from invdyn.learn.datasets.mp4 import encode_video

    clip = encode_video(tmp_path / "clip.mp4", pattern(6, 32, 48), 20.0)
    frames = import_videos(clip, tmp_path / "frames")
    message = r"has no state \(observation.state\), frames alone \(video\); the model reads a state"
    with pytest.raises(InputError, match=message):
        label_dataset(ensemble, frames, tmp_path / "out")
