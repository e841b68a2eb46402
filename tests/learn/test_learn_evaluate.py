"""Held-out evaluation of a checkpoint against the linear and physics-oracle baselines.

A double pendulum collected at 1000 Hz, the physics timestep, so that every frame is one
MuJoCo semi-implicit Euler step and ``rnea(q_t, v_t, (v_{t+1} - v_t) * fps)`` gives the applied
torque to rounding; a small MLP learns it well, a linear map from the same window cannot
(the torque is M(q) a + h(q, v), products and sines of the state).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import shutil
import warnings

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("safetensors")
pytest.importorskip("pyarrow")
pytest.importorskip("mujoco")

from test_learn_models import train_killed_after

import invdyn
from conftest import written_like
from invdyn import InputError
from invdyn.learn.checkpoint import load_checkpoint
from invdyn.learn.config import Config, preset
from invdyn.learn.datasets import (
    EPISODE_FINGERPRINTS,
    Episode,
    read_dataset,
    write_collection,
    write_dataset,
)
from invdyn.learn.evaluate import (
    EvaluationReport,
    evaluate_checkpoint,
    save_evaluation,
)
from invdyn.learn.train import INHERITED, train
from invdyn.sim.collect import CollectedEpisode, Collection, collect_gym, collect_robot
from invdyn.viz.plots import plot_predictions

requires_gym = pytest.mark.skipif(
    importlib.util.find_spec("gymnasium") is None, reason="gymnasium is not installed"
)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def write(collection: Collection, path) -> object:
    episodes = [
        Episode(state=e.state, action=e.action, timestamp=e.timestamp) for e in collection.episodes
    ]
    return write_dataset(
        path,
        episodes,
        fps=collection.fps,
        state_names=collection.state_names,
        action_names=collection.action_names,
        source=collection.source,
    )


def small_config(epochs: int) -> Config:
    """The small preset, one CPU thread (tiny networks gain nothing from more), 20% held out."""
    base = preset("small")
    return Config(
        model=base.model,
        train=dataclasses.replace(
            base.train,
            epochs=epochs,
            batch_size=256,
            val_fraction=0.2,
            checkpoint_every=100,
            num_threads=1,
        ),
    )


@pytest.fixture(scope="module")
def robot(tmp_path_factory):
    """(dataset, checkpoint directory, train result) of a double pendulum at 1000 Hz.

    Many short episodes: each covers a small patch of the configuration space, and a model
    generalises to held-out episodes only as far as the training ones cover it.
    """
    root = tmp_path_factory.mktemp("evaluate")
    model = invdyn.load("double_pendulum")
    collection = collect_robot(model, episodes=120, duration=0.2, control_rate=1000.0, seed=0)
    dataset = read_dataset(write(collection, root / "robot"))
    result = train(dataset, small_config(epochs=20), root / "run", progress=False)
    return dataset, result.checkpoint, result


@pytest.fixture(scope="module")
def report(robot) -> EvaluationReport:
    dataset, checkpoint, _ = robot
    return evaluate_checkpoint(checkpoint, dataset)


def test_validation_episodes_by_default(robot, report):
    dataset, _, result = robot
    assert report.selection == "validation"
    assert list(report.episodes) == result.val_episodes
    assert report.n_episodes == 24
    # an episode of T frames gives T - 1 windows (context 0, horizon 1)
    assert report.n_windows == sum(len(dataset.episode(i)) - 1 for i in report.episodes)
    assert report.action_names == ("tau.joint1", "tau.joint2")
    # the same numbers as training's own validation metrics
    assert report.model.r2_mean == pytest.approx(result.metrics["r2_mean"], rel=1e-6)


def test_a_float32_copy_of_the_training_data_is_the_training_data(robot, tmp_path):
    """LeRobot's datasets hold float32: a copy in float32 is still scored on its validation
    episodes, not on all (the training ones among them)."""
    dataset, checkpoint, result = robot
    copy = written_like(dataset, list(dataset), tmp_path / "float32", np.float32)
    report = evaluate_checkpoint(checkpoint, copy)
    assert report.selection == "validation" and list(report.episodes) == result.val_episodes
    # a model that held nothing out, scored on its own training data, says so
    config = small_config(epochs=1)
    config = dataclasses.replace(config, train=dataclasses.replace(config.train, val_fraction=0))
    run = train(read_dataset(copy), config, tmp_path / "run", progress=False)
    with pytest.warns(UserWarning, match="every episode of .* the model was trained on"):
        assert evaluate_checkpoint(run.checkpoint, copy).selection == "all"
    # a run stopped before its last epoch is scored, and said to be unfinished
    config = dataclasses.replace(
        config,
        train=dataclasses.replace(config.train, epochs=3, val_fraction=0.2, checkpoint_every=1),
    )
    train_killed_after(1, read_dataset(copy), config, tmp_path / "killed")
    with pytest.warns(UserWarning, match=r"checkpoint of epoch 1 of 3: its training has not"):
        evaluate_checkpoint(tmp_path / "killed", copy)


def test_a_float16_copy_and_a_fine_tuned_run_know_the_training_episodes(robot, tmp_path):
    """The training data rounded to float16 is still the training data; a run started from
    the checkpoint (train.init) on other data counts its training episodes as trained on."""
    dataset, checkpoint, result = robot
    copy = written_like(dataset, list(dataset), tmp_path / "float16", np.float16)
    report = evaluate_checkpoint(checkpoint, copy)
    assert report.selection == "validation" and list(report.episodes) == result.val_episodes
    other = collect_robot(
        invdyn.load("double_pendulum"), episodes=5, duration=0.2, control_rate=1000.0, seed=9
    )
    config = small_config(epochs=1)
    config = dataclasses.replace(
        config, train=dataclasses.replace(config.train, init=str(checkpoint))
    )
    other_data = read_dataset(write(other, tmp_path / "other"))
    tuned = train(other_data, config, tmp_path / "tuned", progress=False)
    with pytest.warns(UserWarning, match="96 of the 120 episodes .* the model was trained on"):
        report = evaluate_checkpoint(tuned.checkpoint, dataset)
    assert report.selection == "held out" and list(report.episodes) == result.val_episodes


def test_the_linear_baseline_is_not_fitted_on_a_few_training_episodes(robot, tmp_path):
    """A dataset of 20 new episodes and 2 the model trained on: the linear baseline is
    cross-fitted on the new ones (16 episodes a fit) rather than fitted on those two."""
    dataset, checkpoint, result = robot
    model = invdyn.load("double_pendulum")
    fresh = collect_robot(model, episodes=20, duration=0.2, control_rate=1000.0, seed=1)
    episodes = [dataset.episode(i) for i in result.train_episodes[:2]] + [
        Episode(state=e.state, action=e.action, timestamp=e.timestamp) for e in fresh.episodes
    ]
    info = dataset.info
    mixed = write_dataset(
        tmp_path / "mixed", episodes, fps=info.fps, state_names=info.state_names,
        action_names=info.action_names, source=info.source,
    )  # fmt: skip
    with pytest.warns(UserWarning, match="2 of the 22 episodes .* the model was trained on"):
        report = evaluate_checkpoint(checkpoint, mixed)
    assert list(report.episodes) == list(range(2, 22))
    assert "cross-fitted over 5 folds" in report.linear_note, report.linear_note
    assert "at least 16 episodes: more than the 2 other episodes known" in report.linear_note


def test_the_oracle_says_what_a_model_of_a_longer_horizon_does_not_see(robot, tmp_path):
    dataset, _, _ = robot
    config = small_config(epochs=1)
    config = dataclasses.replace(config, model=dataclasses.replace(config.model, horizon=3))
    run = train(dataset, config, tmp_path / "run", progress=False)
    report = evaluate_checkpoint(run.checkpoint, dataset)
    assert report.oracle is not None
    assert report.oracle_note.endswith(
        "it knows each action's next frame, which a model of horizon 3 does not see (it sees "
        "o_t and o_(t+3))"
    )


def test_model_beats_linear_and_oracle_is_exact(report):
    model, linear, oracle = report.model, report.linear, report.oracle
    assert linear is not None and oracle is not None
    # measured: model r2 = (0.94, 0.67), mean 0.80; linear (0.07, 0.12)
    assert model.r2_mean > 0.7, model.r2
    assert linear.r2_mean < model.r2_mean - 0.4, (linear.r2, model.r2)
    assert np.all(linear.nmse > model.nmse)
    # one Euler step per frame: exact to rounding (measured nmse ~ 1e-28)
    assert np.all(oracle.r2 > 0.999), oracle.r2
    assert oracle.nmse_mean < 1e-12
    assert "checkpoint's training episodes" in report.linear_note
    assert "rnea" in report.oracle_note
    for metrics in (model, linear, oracle):
        assert metrics.r2.shape == metrics.nmse.shape == metrics.mae.shape == (2,)
        np.testing.assert_allclose(metrics.r2, 1.0 - metrics.nmse)
        assert metrics.mae_mean == pytest.approx(metrics.mae.mean())


def test_json_and_files(report, tmp_path):
    data = json.loads(report.to_json())
    assert data["r2_mean"] == pytest.approx(report.model.r2_mean)
    assert data["nmse_mean"] == pytest.approx(report.model.nmse_mean)
    assert {"mae_mean", "per_dimension", "baselines", "n_windows", "episodes"} <= set(data)
    assert set(data["per_dimension"]) == {"tau.joint1", "tau.joint2"}
    assert set(data["per_dimension"]["tau.joint2"]) == {"r2", "nmse", "mae"}
    assert data["baselines"]["linear"]["r2_mean"] == pytest.approx(report.linear.r2_mean)
    assert data["baselines"]["oracle"]["available"] is True
    assert data["baselines"]["oracle"]["r2_mean"] > 0.999

    written = save_evaluation(report, tmp_path / "eval")
    assert [p.name for p in written] == ["metrics.json", "predictions.png"]
    assert json.loads(written[0].read_text()) == data
    assert written[1].read_bytes()[:8] == PNG_MAGIC
    # nothing temporary left behind
    assert sorted(p.name for p in (tmp_path / "eval").iterdir()) == [
        "metrics.json",
        "predictions.png",
    ]


def test_given_episodes_and_another_dataset(robot, tmp_path):
    dataset, checkpoint, result = robot
    # named episodes: the training ones fit well; the linear map fits on the other training ones
    given = evaluate_checkpoint(checkpoint, dataset, episodes=result.train_episodes[:4])
    assert given.selection == "given" and list(given.episodes) == result.train_episodes[:4]
    assert given.model.r2_mean > 0.95
    assert given.linear is not None and given.linear_note.endswith(
        f"training episodes ({len(result.train_episodes) - 4})"
    )
    # another dataset of the same robot: all its episodes, the linear map cross-fitted
    other = collect_robot(
        invdyn.load("double_pendulum"), episodes=3, duration=0.3, control_rate=1000.0, seed=7
    )
    path = write(other, tmp_path / "other")
    fresh = evaluate_checkpoint(checkpoint, path)
    assert fresh.selection == "all" and fresh.episodes == (0, 1, 2)
    assert fresh.linear is not None and "cross-fitted" in fresh.linear_note
    assert fresh.oracle is not None and fresh.oracle.r2_mean > 0.999
    with pytest.raises(InputError, match="out of range"):
        evaluate_checkpoint(checkpoint, path, episodes=[3])


def test_an_action_that_does_not_vary_is_named_and_left_out_of_the_means(robot, tmp_path):
    dataset, checkpoint, _ = robot
    info = dataset.info
    held = [
        Episode(state=e.state, action=np.c_[e.action[:, :1], np.full(len(e), 1.5)],
                timestamp=e.timestamp)
        for e in dataset
    ]  # fmt: skip
    path = write_dataset(
        tmp_path / "held", held, fps=info.fps, state_names=info.state_names,
        action_names=info.action_names, source=info.source,
    )  # fmt: skip
    with pytest.warns(UserWarning, match=rf"recorded {info.action_names[1]} do not vary .*\(NaN\)"):
        report = evaluate_checkpoint(checkpoint, path)
    assert np.isnan(report.model.r2[1]) and report.model.r2_mean == report.model.r2[0]


def _with_extra_episodes(dataset, path, *, first: bool, single: bool = False):
    """The dataset's episodes and 3 new ones of its robot, these `first` or last, written to
    `path` (in float32 if `single`)."""
    extra = collect_robot(
        invdyn.load("double_pendulum"), episodes=3, duration=0.3, control_rate=1000.0, seed=7
    )
    new = [Episode(e.state, e.action, e.timestamp) for e in extra.episodes]
    episodes = new + list(dataset) if first else list(dataset) + new
    return written_like(dataset, episodes, path, np.float32 if single else None)


def _titles(monkeypatch) -> list[str]:
    """The titles of the plots that `save_evaluation` makes from now on."""
    import invdyn.viz.plots

    titles: list[str] = []
    plot = invdyn.viz.plots.plot_predictions

    def recording(*args, title: str, **kwargs):
        titles.append(title)
        return plot(*args, title=title, **kwargs)

    monkeypatch.setattr(invdyn.viz.plots, "plot_predictions", recording)
    return titles


def test_training_episodes_inside_a_larger_dataset_are_left_out(robot, tmp_path, monkeypatch):
    """The training data with more episodes (before it, in float32): its training episodes
    are recognised by their fingerprints and left out, its validation episodes and the new
    ones evaluated; the linear map fits on the training episodes."""
    dataset, checkpoint, result = robot
    path = _with_extra_episodes(dataset, tmp_path / "more", first=True, single=True)
    with pytest.warns(UserWarning, match=r"96 of the 123 episodes .* trained on .* other 27"):
        report = evaluate_checkpoint(checkpoint, path)
    assert report.selection == "held out"
    assert list(report.episodes) == [0, 1, 2] + [i + 3 for i in result.val_episodes]
    assert report.trained_episodes == tuple(i + 3 for i in result.train_episodes)
    assert report.n_trained_evaluated == 0
    assert report.linear_note.endswith("training episodes (96)")
    data = json.loads(report.to_json())
    assert data["trained_episodes"] == list(report.trained_episodes)
    assert data["n_trained_evaluated"] == 0
    titles = _titles(monkeypatch)
    save_evaluation(report, tmp_path / "eval")
    assert titles[-1].endswith("over 27 held-out episodes")
    # training episodes named by the caller are scored, and not called held out
    given = evaluate_checkpoint(checkpoint, path, episodes=[3 + result.train_episodes[0], 0])
    assert given.n_trained_evaluated == 1
    save_evaluation(given, tmp_path / "given")
    assert titles[-1].endswith("over 2 episodes, 1 of them trained on")


def test_no_windows_once_the_training_episodes_are_left_out_says_so(robot, tmp_path):
    """The training episodes and a one-frame episode: the training ones are left out, and
    the message says so rather than call the (long) episodes short."""
    dataset, checkpoint, result = robot
    trained = [dataset.episode(i) for i in result.train_episodes]
    one_frame = Episode(trained[0].state[:1], trained[0].action[:1], trained[0].timestamp[:1])
    info = dataset.info
    path = write_dataset(
        tmp_path / "trained", [*trained, one_frame], fps=info.fps,
        state_names=info.state_names, action_names=info.action_names, source=info.source,
    )  # fmt: skip
    count = len(trained)
    message = (
        rf"no windows to evaluate: {count} of the {count + 1} episodes of .*trained are ones "
        r"the model was trained on, left out, and the 1 left is shorter than .* = 2 steps"
    )
    with pytest.warns(UserWarning, match="left out"), pytest.raises(InputError, match=message):
        evaluate_checkpoint(checkpoint, path)


def test_a_checkpoint_without_episode_fingerprints_recognises_its_data_first(robot, tmp_path):
    """A checkpoint of an earlier version keeps the fingerprint of its whole training data
    only: it recognises that data at the start of a dataset, not elsewhere, and says so."""
    import shutil

    dataset, checkpoint, result = robot
    old = shutil.copytree(checkpoint, tmp_path / "old")
    state_file = old / "train_state.json"
    state = json.loads(state_file.read_text())
    for key in [*EPISODE_FINGERPRINTS, INHERITED]:
        del state[key]
    state_file.write_text(json.dumps(state))
    after = _with_extra_episodes(dataset, tmp_path / "after", first=False)
    with pytest.warns(UserWarning, match="96 of the 123 episodes"):
        report = evaluate_checkpoint(old, after)
    assert report.selection == "held out"
    assert list(report.episodes) == [*result.val_episodes, 120, 121, 122]
    # elsewhere, nothing is known: every episode is evaluated, not called held out, and a
    # warning says the checkpoint cannot tell
    before = _with_extra_episodes(dataset, tmp_path / "before", first=True)
    with pytest.warns(UserWarning, match="of an earlier version.* cannot tell whether"):
        report = evaluate_checkpoint(old, before)
    assert report.selection == "all" and report.n_episodes == 123
    assert report.trained_episodes is None and report.n_trained_evaluated is None


def test_a_feature_constant_to_rounding_is_left_out_of_the_linear_fit():
    """A feature constant within the fitted episodes (Reacher's target position), for which
    np.std gives rounding (~1e-17) rather than 0, is left out of the fit: divided by its
    rounding, another episode's value of it made predictions of ~1e14."""
    from invdyn.learn.evaluate import _apply_linear, _fit_linear

    rng = np.random.default_rng(0)

    def episode(target: float) -> tuple[np.ndarray, np.ndarray]:
        moving = rng.normal(size=(300, 2))
        action = moving @ np.array([[1.0], [-2.0]]) + 0.5
        return np.column_stack([moving, np.full(300, target)]), action

    x_fit, y_fit = episode(-0.15063557)
    x_other, y_other = episode(0.18527348)
    assert 0.0 < x_fit[:, 2].std() < 1e-15  # the rounding of a constant, not 0
    prediction = _apply_linear(_fit_linear(x_fit, y_fit), x_other)
    np.testing.assert_allclose(prediction, y_other, atol=1e-6)  # the ridge bias aside


def test_no_linear_baseline_without_states():
    """Frames alone (a labelled video): no state, so no features for a linear map, which
    would be the mean action; it is left out, and the note says why."""
    from invdyn.learn.evaluate import _linear_baseline
    from invdyn.learn.models import make_windows

    rng = np.random.default_rng(0)
    arrays = [(np.zeros((30, 0)), rng.normal(size=(30, 2))) for _ in range(3)]
    config = preset("small").model
    prediction, note = _linear_baseline(
        arrays, [0, 1, 2], None, make_windows(arrays, config), config
    )
    assert prediction is None
    assert "no state" in note and "mean action" in note


def test_mismatched_dataset_is_refused(robot, tmp_path):
    _, checkpoint, _ = robot
    rng = np.random.default_rng(0)
    episodes = [
        Episode(
            state=rng.normal(size=(20, 6)),
            action=rng.normal(size=(20, 2)),
            timestamp=np.arange(20) / 100.0,
        )
    ]
    path = write_dataset(
        tmp_path / "wide",
        episodes,
        fps=100.0,
        state_names=[f"s{i}" for i in range(6)],
        action_names=["a0", "a1"],
    )
    with pytest.raises(InputError, match="its state has 6 entries, the model reads 4"):
        evaluate_checkpoint(checkpoint, path)


def test_dataset_of_another_spec_is_refused(robot, tmp_path):
    """The checkpoint keeps the training data's names and rate (spec.json): a dataset of the
    same sizes that means something else is refused, the training dataset gone or not."""
    dataset, checkpoint, _ = robot
    spec = load_checkpoint(checkpoint).spec
    assert spec is not None and spec.state_names == dataset.info.state_names
    assert spec.action_names == dataset.info.action_names and spec.fps == dataset.info.fps
    episodes = [dataset.episode(i) for i in range(3)]
    info = dataset.info
    cases = {
        "state names": {"state_names": [f"s{i}" for i in range(info.n_state)]},
        "action names": {"action_names": ["a0", "a1"]},
        "fps 500 differs": {"fps": 500.0},
    }
    for message, change in cases.items():
        options = {
            "fps": info.fps,
            "state_names": info.state_names,
            "action_names": info.action_names,
        } | change
        # the frames retimed to the rate claimed
        scale = info.fps / options["fps"]
        retimed = [dataclasses.replace(e, timestamp=e.timestamp * scale) for e in episodes]
        path = write_dataset(tmp_path / message.replace(" ", "_"), retimed, **options)
        with pytest.raises(InputError, match=message):
            evaluate_checkpoint(checkpoint, path)
    # a checkpoint copied without its spec cannot check: it says so; nor does evaluation need
    # the optimiser's state, which only resuming reads
    copy = tmp_path / "copied"
    shutil.copytree(checkpoint, copy)
    (copy / "spec.json").unlink()
    (copy / "optimizer.safetensors").unlink()
    with pytest.warns(UserWarning, match="has no spec.json: .* no data given to it is checked"):
        evaluate_checkpoint(copy, path)


def test_data_of_another_simulated_robot_with_the_same_names_warns(robot, tmp_path):
    """Two simulated robots may name their joints alike: the model's source tells them apart
    (a real robot's data, of another source, passes quietly: sim-to-real labelling)."""
    dataset, checkpoint, _ = robot
    info = dataset.info
    episodes = [dataset.episode(i) for i in range(3)]
    options = {
        "fps": info.fps,
        "state_names": info.state_names,
        "action_names": info.action_names,
    }
    other = write_dataset(tmp_path / "other", episodes, source="invdyn:planar_2r", **options)
    with pytest.warns(UserWarning, match=r"'invdyn:planar_2r'.*another simulated robot"):
        evaluate_checkpoint(checkpoint, other)
    real = write_dataset(tmp_path / "real", episodes, source="lab double pendulum", **options)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        evaluate_checkpoint(checkpoint, real)


@requires_gym
def test_gym_dataset_has_no_oracle(tmp_path):
    collection = collect_gym("HalfCheetah-v5", episodes=3, steps_per_episode=100, seed=0)
    path = write(collection, tmp_path / "cheetah")
    result = train(read_dataset(path), small_config(epochs=2), tmp_path / "run", progress=False)
    report = evaluate_checkpoint(result.checkpoint, path)
    assert report.selection == "validation" and report.n_episodes == 1
    assert report.oracle is None
    assert "full state" in report.oracle_note
    assert report.linear is not None and math.isfinite(report.linear.r2_mean)
    data = json.loads(report.to_json())
    assert data["baselines"]["oracle"] == {"available": False, "reason": report.oracle_note}
    assert math.isfinite(data["r2_mean"])
    written = save_evaluation(report, tmp_path / "eval")
    assert written[1].read_bytes()[:8] == PNG_MAGIC


def test_plot_predictions_groups_many_dimensions(tmp_path):
    from invdyn.viz.plots import save_figure

    t = np.linspace(0.0, 1.0, 50)
    recorded = np.sin(t[:, None] * np.arange(1, 15))
    labels = [f"a{i}" for i in range(14)]
    figure = plot_predictions(
        t, recorded, recorded + 0.1, labels=labels, title="x", baselines={"linear": 0 * recorded}
    )
    assert len([ax for ax in figure.axes if ax.get_visible()]) == 7
    assert save_figure(figure, tmp_path / "p.png").read_bytes()[:8] == PNG_MAGIC
    with pytest.raises(InputError, match="labels"):
        plot_predictions(t, recorded, recorded, labels=labels[:3])


def test_every_bottom_plot_of_an_odd_grid_shows_its_times():
    """Seven dimensions in two columns: the last of the second column, above an empty cell,
    shows its time tick labels as the bottom row does."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    t = np.linspace(0.0, 1.0, 50)
    recorded = np.sin(t[:, None] * np.arange(1, 8))
    figure = plot_predictions(t, recorded, recorded + 0.1, labels=[f"a{i}" for i in range(7)])
    FigureCanvasAgg(figure).draw()
    labelled = [ax for ax in figure.axes if ax.get_visible() and ax.get_xlabel()]
    assert len(labelled) == 2
    for ax in labelled:
        assert any(label.get_visible() and label.get_text() for label in ax.get_xticklabels())


def _euler_collection(env_id: str, steps: int, seed: int = 0) -> Collection:
    """`env_id` at one semi-implicit Euler step per frame (frame_skip 1), random actions."""
    import gymnasium

    env = gymnasium.make(env_id, frame_skip=1)
    base = env.unwrapped
    base.model.opt.integrator = 0  # mjINT_EULER
    observation, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    states, actions, full = [], [], []
    for _ in range(steps + 1):
        action = env.action_space.sample()
        states.append(np.asarray(observation, dtype=np.float64))
        actions.append(np.asarray(action, dtype=np.float64))
        full.append(np.concatenate([base.data.qpos, base.data.qvel]))
        observation, *_ = env.step(action)
    env.close()
    episode = CollectedEpisode(
        state=np.array(states),
        action=np.array(actions),
        timestamp=np.arange(steps + 1) * base.dt,
        full_state=np.array(full),
    )
    return Collection(
        episodes=(episode,),
        state_names=tuple(f"obs.{i}" for i in range(len(states[0]))),
        action_names=tuple(f"act.{i}" for i in range(len(actions[0]))),
        fps=1.0 / base.dt,
        source=f"gym:{env_id}",
        metadata={"env_id": env_id, "frame_skip": 1, "integrator": "Euler"},
    )


@pytest.fixture(scope="module")
def cheetah(tmp_path_factory):
    """(dataset path, checkpoint) of HalfCheetah written with MuJoCo's full state."""
    root = tmp_path_factory.mktemp("cheetah")
    collection = collect_gym(
        "HalfCheetah-v5", episodes=3, steps_per_episode=100, policy="noisy", seed=0
    )
    path = write_collection(collection, root / "cheetah")
    result = train(read_dataset(path), small_config(epochs=2), root / "run", progress=False)
    return path, result.checkpoint


@requires_gym
def test_gym_oracle_from_the_full_state(cheetah):
    path, checkpoint = cheetah
    report = evaluate_checkpoint(checkpoint, path)
    oracle = report.oracle
    assert oracle is not None, report.oracle_note
    # five Euler steps per frame: the finite difference averages the acceleration (r2_mean
    # 0.62 on this validation episode), shooting through the frame's steps finds the ctrl
    # far better (measured: 0.94; contacts keep it from exact)
    assert oracle.r2_mean > 0.85, oracle.r2
    assert "5 euler physics steps" in report.oracle_note
    assert "Gauss-Newton steps of mujoco.rollout" in report.oracle_note
    data = json.loads(report.to_json())
    assert data["baselines"]["oracle"]["available"] is True
    assert data["baselines"]["oracle"]["r2_mean"] == pytest.approx(oracle.r2_mean)


@requires_gym
def test_gym_oracle_is_exact_for_one_euler_step_per_frame(tmp_path):
    path = write_collection(_euler_collection("HalfCheetah-v5", 200), tmp_path / "euler")
    # a model of this data's spec (one frame per physics step), only for the oracle beside it
    result = train(read_dataset(path), small_config(epochs=1), tmp_path / "run", progress=False)
    with pytest.warns(
        UserWarning, match="trained on, as none of the training data was held out"
    ):  # one episode
        report = evaluate_checkpoint(result.checkpoint, path)
    oracle = report.oracle
    assert oracle is not None, report.oracle_note
    # measured nmse ~ 1e-26: exact to rounding, contacts included
    assert np.all(oracle.r2 > 0.9999), oracle.r2
    assert oracle.nmse_mean < 1e-12
    assert "1 euler physics step of" in report.oracle_note and "exact" in report.oracle_note


def test_metrics_keep_diverged_predictions_in_the_means():
    """A prediction that diverged (inf) makes the mean error infinite; only a constant target
    is left out of the means."""
    from invdyn.learn.evaluate import _metrics

    rng = np.random.default_rng(0)
    target = rng.normal(size=(50, 1, 3))
    target[:, :, 2] = 1.0  # constant: no R^2
    prediction = target + 0.1 * rng.normal(size=target.shape)
    prediction[3, 0, 1] = np.inf
    metrics = _metrics(prediction, target)
    assert np.isnan(metrics.nmse[2]) and np.isinf(metrics.nmse[1])
    assert np.isinf(metrics.nmse_mean) and np.isinf(metrics.r2_mean)


def test_a_target_in_small_units_is_scored():
    """Whether a target varies does not depend on its units: an action of micro-units is
    scored, a constant of any size left out (rounding aside)."""
    from invdyn.learn.evaluate import _metrics

    rng = np.random.default_rng(0)
    target = rng.normal(size=(50, 1, 3))
    target[:, :, 0] *= 1e-8  # variance 1e-16: once taken for a constant
    target[:, :, 1] = np.float32(1e6 / 3)  # constant, as float32 stores it
    target[:, :, 2] = 1e3 * (1.0 + 1e-16 * np.arange(50)[:, None])  # constant, rounded
    prediction = target + 0.1 * np.abs(target) * rng.normal(size=target.shape)
    metrics = _metrics(prediction, target)
    assert 0.9 < metrics.r2[0] < 1.0
    assert np.isnan(metrics.nmse[1:]).all()
    assert metrics.r2_mean == metrics.r2[0]
