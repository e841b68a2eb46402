"""Learned inverse dynamics: windows, heads, training, evaluation, checkpoints and resuming.

The data come from a known system, two uncoupled damped pendulums on springs driven by random
torques, so the inverse dynamics is exactly recoverable from ``o_t`` and ``o_{t+1}`` and a small
MLP must learn it to a tight held-out bound.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
import warnings
from typing import ClassVar

import numpy as np
import pytest

from conftest import driven_pendulums

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from invdyn import DataError, InputError  # noqa: E402
from invdyn.learn.checkpoint import load_checkpoint, load_model, save_checkpoint  # noqa: E402
from invdyn.learn.config import PRESETS, Config, ModelConfig, TrainConfig, preset  # noqa: E402
from invdyn.learn.heads import HEADS, Head, register_head  # noqa: E402
from invdyn.learn.keys import ACTION, OBS_STATE  # noqa: E402
from invdyn.learn.models import (  # noqa: E402
    InverseDynamicsModel,
    NormStats,
    compute_norm_stats,
    episode_arrays,
    make_windows,
    window_starts,
)
from invdyn.learn.train import evaluate, split_episodes, train  # noqa: E402

DT = 0.02


@dataclasses.dataclass
class Episode:
    state: np.ndarray
    action: np.ndarray


def simulate(n_episodes: int, steps: int, seed: int) -> list[Episode]:
    """`driven_pendulums` episodes."""
    return [Episode(s, a) for s, a in driven_pendulums(n_episodes, steps, seed, DT)]


@pytest.fixture(scope="module")
def episodes() -> list[Episode]:
    return simulate(24, 100, seed=0)


@pytest.fixture(scope="module")
def held_out() -> list[Episode]:
    return simulate(6, 100, seed=1)


def small(epochs: int = 3, **model: object) -> Config:
    """The small preset with `model` overrides, `epochs` epochs, no intermediate checkpoints.

    One CPU thread: these networks are too small to gain from more, and spinning threads of a
    busy machine slow them down many times.
    """
    base = preset("small")
    return Config(
        model=dataclasses.replace(base.model, **model),  # type: ignore[arg-type]
        train=dataclasses.replace(base.train, epochs=epochs, checkpoint_every=100, num_threads=1),
    )


# -- learning -------------------------------------------------------------------------------


def test_small_mlp_learns_held_out_inverse_dynamics(episodes, held_out, tmp_path):
    result = train(episodes, small(epochs=10), tmp_path, progress=True)
    metrics = evaluate(result.model, held_out)
    assert metrics["r2_mean"] > 0.98, metrics
    assert metrics["nmse_mean"] == pytest.approx(1 - metrics["r2_mean"])
    assert result.metrics["r2_mean"] > 0.98
    assert set(metrics) >= {"r2/0", "r2/1", "nmse/1", "mae/0", "mae_mean", "n_windows"}
    assert metrics["n_windows"] == 6 * 99
    # the loss fell
    assert result.history[-1]["train_loss"] < 0.2 * result.history[0]["train_loss"]
    assert len(result.history) == 10
    assert set(result.history[0]) == {
        "epoch",
        "lr",
        "train_loss",
        "train_mse",
        "val_loss",
        "val_mse",
    }


@pytest.mark.parametrize(
    ("head", "options", "epochs", "min_r2"),
    [
        ("regression", {"loss": "mse"}, 6, 0.98),
        ("regression", {"loss": "l1"}, 6, 0.98),
        ("mixture", {"decode": "mean"}, 6, 0.98),
        ("mixture", {"decode": "argmax", "n_components": 3}, 6, 0.98),
        # classification over bins learns more slowly than regression on this smooth target
        ("bins", {"decode": "mean"}, 12, 0.9),
        ("bins", {"decode": "argmax", "n_bins": 32}, 12, 0.85),
    ],
)
def test_every_head_trains_and_predicts(
    episodes, held_out, tmp_path, head, options, epochs, min_r2
):
    config = small(epochs=epochs, head=head, **options)
    result = train(episodes, config, tmp_path, progress=False)
    windows = make_windows(episode_arrays(held_out), result.model.config)
    batch = windows.batch(slice(0, 17))
    prediction = result.model.predict(batch)
    assert prediction.shape == (17, 2)
    assert torch.isfinite(prediction).all()
    loss, metrics = result.model.loss(batch)
    assert loss.ndim == 0 and np.isfinite(metrics["loss"]) and metrics["mse"] >= 0
    assert evaluate(result.model, held_out)["r2_mean"] > min_r2


@pytest.fixture
def heads_restored():
    """The registry of heads, restored after the test."""
    registered = dict(HEADS)
    yield
    HEADS.clear()
    HEADS.update(registered)


def test_a_registered_head_trains_predicts_and_loads(episodes, held_out, tmp_path, heads_restored):
    @register_head
    @dataclasses.dataclass(frozen=True)
    class Huber(Head):
        name: ClassVar[str] = "huber"

        def n_outputs(self, dim):
            return dim

        def objective(self, out, y):
            return torch.nn.functional.huber_loss(out, y.expand_as(out))

        def point(self, out):
            return out

    result = train(episodes, small(epochs=6, head="huber"), tmp_path, progress=False)
    assert isinstance(result.model.head, Huber)
    assert evaluate(result.model, held_out)["r2_mean"] > 0.98
    with pytest.warns(UserWarning, match="has no spec.json"):
        loaded = load_model(result.checkpoint)
    batch = make_windows(episode_arrays(held_out), loaded.config).batch(slice(0, 17))
    torch.testing.assert_close(loaded.predict(batch), result.model.predict(batch))
    with pytest.raises(ValueError, match="a head named 'huber' is registered already"):
        register_head(Huber)


def test_an_unregistered_head_is_refused_with_the_registered_ones():
    with pytest.raises(
        InputError,
        match=r"model.head must be one of \['regression', 'bins', 'mixture'\], got 'huber'",
    ):
        ModelConfig(head="huber")


def test_chunked_predictions_with_horizon(episodes, tmp_path):
    config = small(epochs=2, horizon=3, chunk=True, context=1)
    result = train(episodes, config, tmp_path, progress=False)
    windows = make_windows(episode_arrays(episodes[:2]), config.model)
    batch = windows.batch(slice(0, 5))
    assert batch[OBS_STATE].shape == (5, 3, 4)
    assert batch[ACTION].shape == (5, 3, 2)
    assert result.model.predict(batch).shape == (5, 3, 2)
    mean, std = result.model.predict_with_uncertainty(batch)
    assert mean.shape == std.shape == (5, 3, 2)
    assert torch.all(std == 0)  # one member: no epistemic spread
    # the first window of an episode: o_1, o_2 (t = context = 1) and o_4; actions a_1 .. a_3
    state, action = episode_arrays(episodes[:1])[0]
    np.testing.assert_array_equal(batch[OBS_STATE][0], state[[0, 1, 4]])
    np.testing.assert_array_equal(batch[ACTION][0], action[1:4])


@pytest.mark.parametrize("future", [0, 2])
def test_windows_never_cross_episode_boundaries(future):
    lengths = [5, 7, 6, 3, 1, 9]
    context, horizon = 2, 3
    episodes = []
    for i, n in enumerate(lengths):
        # the state encodes (episode, step) so every window can be checked
        state = np.stack([np.full(n, i), np.arange(n)], axis=1).astype(float)
        episodes.append((state, np.arange(n, dtype=float)[:, None] + 100 * i))
    config = ModelConfig(context=context, horizon=horizon, future=future, chunk=True)
    windows = make_windows(episode_arrays(episodes), config)
    # brute force: every t with t - context >= 0 and t + horizon + future < T
    ahead = horizon + future
    expected = [(i, t) for i, n in enumerate(lengths) for t in range(context, n - ahead)]
    assert len(windows) == len(expected) == sum(max(n - context - ahead, 0) for n in lengths)
    batch = windows.batch()
    for k, (i, t) in enumerate(expected):
        np.testing.assert_array_equal(batch[OBS_STATE][k, :, 0], i)
        steps = [t - 2, t - 1, t, *range(t + 3, t + 4 + future)]
        np.testing.assert_array_equal(batch[OBS_STATE][k, :, 1], steps)
        np.testing.assert_array_equal(batch[ACTION][k, :, 0], 100 * i + np.arange(t, t + 3))
        assert windows.episode[k] == i
    t, episode = window_starts([0, 4], context=0, ahead=1)
    np.testing.assert_array_equal(t, [0, 1, 2])
    np.testing.assert_array_equal(episode, [1, 1, 1])


def test_ensemble_gives_positive_uncertainty(episodes, held_out, tmp_path):
    result = train(episodes, small(epochs=2, ensemble=3), tmp_path, progress=False)
    model = result.model
    assert len(model.members) == 3
    batch = make_windows(episode_arrays(held_out), model.config).batch(slice(0, 32))
    mean, std = model.predict_with_uncertainty(batch)
    assert mean.shape == std.shape == (32, 2)
    assert torch.all(std > 0)
    torch.testing.assert_close(model.predict(batch), mean)
    # members were initialised independently
    first = [m[0].weight for m in model.members]
    assert not torch.equal(first[0], first[1])
    assert evaluate(model, held_out)["uncertainty_mean"] > 0


def test_norm_stats_come_from_the_training_split_only(tmp_path):
    # episodes offset from each other, so any validation episode would move the statistics
    episodes = simulate(8, 40, seed=3)
    for i, episode in enumerate(episodes):
        episode.state = episode.state + i
        episode.action = episode.action * (1 + i)
    config = dataclasses.replace(
        small(epochs=1), train=TrainConfig(epochs=1, val_fraction=0.25, num_threads=1)
    )
    result = train(episodes, config, tmp_path, progress=False)
    assert len(result.val_episodes) == 2 and len(result.train_episodes) == 6
    assert not set(result.val_episodes) & set(result.train_episodes)
    arrays = episode_arrays(episodes)
    train_arrays = [arrays[i] for i in result.train_episodes]
    train_stats = compute_norm_stats(make_windows(train_arrays, config.model))
    all_stats = compute_norm_stats(make_windows(arrays, config.model))
    for name in ("state_mean", "state_std", "delta_mean", "action_mean", "action_std"):
        np.testing.assert_array_equal(getattr(result.model.stats, name), getattr(train_stats, name))
        assert not np.allclose(getattr(result.model.stats, name), getattr(all_stats, name))


def test_states_far_from_zero_keep_their_changes(episodes):
    """A model reads states offset by 1e6 (GPS coordinates, long odometry) as it reads them
    at zero, its statistics offset alike: the offset is taken away in float64, where float32
    would round steps of 1e-3 to multiples of 0.06."""
    config = small(delta=True)
    windows = make_windows(episode_arrays(episodes), config.model)
    stats = compute_norm_stats(windows)
    torch.manual_seed(0)
    model = InverseDynamicsModel(config.model, stats).eval()
    offset = 1e6
    shifted = InverseDynamicsModel(
        config.model, dataclasses.replace(stats, state_mean=stats.state_mean + offset)
    ).eval()
    shifted.load_state_dict(model.state_dict())
    batch = windows.batch(np.arange(64))
    far = {OBS_STATE: batch[OBS_STATE] + offset}
    np.testing.assert_allclose(
        shifted.predict(far).numpy(), model.predict(batch).numpy(), rtol=1e-5, atol=1e-5
    )


def test_split_is_seeded_and_by_episode():
    train_idx, val_idx = split_episodes(10, 0.3, seed=0)
    assert sorted(train_idx + val_idx) == list(range(10)) and len(val_idx) == 3
    assert split_episodes(10, 0.3, seed=0) == (train_idx, val_idx)
    assert split_episodes(10, 0.3, seed=1) != (train_idx, val_idx)
    assert split_episodes(1, 0.5, seed=0) == ([0], [])
    assert split_episodes(4, 0.0, seed=0) == ([0, 1, 2, 3], [])
    train_idx, val_idx = split_episodes(10, 0.5, seed=0, usable=[2, 5, 7])
    assert len(val_idx) == 2 and set(val_idx) <= {2, 5, 7}
    assert sorted(train_idx + val_idx) == list(range(10))


def test_a_validation_split_of_one_window_says_why_r2_is_nan(tmp_path):
    config = small(epochs=1)
    span = config.model.context + config.model.offsets[-1]
    rng = np.random.default_rng(0)
    long = (rng.normal(size=(60, 2)), rng.normal(size=(60, 1)))
    short = (rng.normal(size=(span + 1, 2)), rng.normal(size=(span + 1, 1)))
    _, (held,) = split_episodes(4, 0.25, seed=0)
    episodes = [short if k == held else long for k in range(4)]
    config = dataclasses.replace(
        config, train=dataclasses.replace(config.train, val_fraction=0.25, seed=0)
    )
    with pytest.warns(UserWarning, match="validation episodes hold one window: R\\^2"):
        result = train(episodes, config, tmp_path, progress=False)
    assert math.isnan(result.metrics["r2_mean"])


def test_one_episode_is_all_training_and_says_so(episodes, tmp_path):
    with pytest.warns(UserWarning, match="one episode is all training: none is held out"):
        result = train(episodes[:1], small(epochs=1), tmp_path, progress=False)
    assert result.val_episodes == [] and result.metrics == {}


# -- checkpoints and resuming ---------------------------------------------------------------


def _umask() -> int:
    """The process's umask."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_checkpoint_round_trip_gives_identical_predictions(
    episodes, held_out, tmp_path, monkeypatch
):
    config = small(epochs=2, head="mixture", context=1)
    result = train(episodes, config, tmp_path, progress=False)
    # trained on bare arrays: no dataset spec to keep
    files = {p.name for p in result.checkpoint.iterdir()}
    assert files == {
        "model.safetensors",
        "config.json",
        "norm_stats.json",
        "metrics.json",
        "optimizer.safetensors",
        "train_state.json",
    }
    # every file as open() makes it, the umask deciding (a checkpoint shared with a group)
    modes = {p.stat().st_mode & 0o777 for p in result.checkpoint.iterdir()}
    assert modes == {0o666 & ~_umask()}
    checkpoint = load_checkpoint(result.checkpoint)
    assert checkpoint.config == config
    assert checkpoint.metrics["validation"] == result.metrics
    assert checkpoint.metrics["history"] == result.history
    batch = make_windows(episode_arrays(held_out), config.model).batch()
    assert torch.equal(checkpoint.model.predict(batch), result.model.predict(batch))
    assert torch.equal(load_model(result.checkpoint).predict(batch), result.model.predict(batch))
    # the run directory stands for its checkpoint
    run = result.checkpoint.parent
    assert torch.equal(load_model(run).predict(batch), result.model.predict(batch))
    # a save killed between its two renames leaves the previous checkpoint aside: still read
    result.checkpoint.rename(run / ".checkpoint.old")
    assert torch.equal(load_model(run).predict(batch), result.model.predict(batch))
    # and the next save keeps it until its own checkpoint is in place
    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", _failing_rename_of(os.replace, result.checkpoint))
        with pytest.raises(OSError, match="power cut"):
            save_checkpoint(result.checkpoint, model=result.model, config=config, metrics={})
    assert torch.equal(load_model(run).predict(batch), result.model.predict(batch))
    (run / ".checkpoint.old").rename(result.checkpoint)
    for name, value in dataclasses.asdict(result.model.stats).items():
        np.testing.assert_array_equal(getattr(checkpoint.model.stats, name), value)


def _failing_rename_of(rename, target):
    """`rename` that fails when it would make `target`."""

    def failing(source, destination):
        if os.fspath(destination) == os.fspath(target):
            raise OSError("power cut")
        return rename(source, destination)

    return failing


class Interrupt(Exception):
    pass


def train_killed_after(epoch: int, episodes: list[Episode], config: Config, out) -> None:
    """Train into `out` and stop, as a kill would, once `epoch` epochs are done."""

    def stop(done: int, entry: dict[str, float]) -> None:
        if done == epoch:
            raise Interrupt

    with pytest.raises(Interrupt):
        train(episodes, config, out, progress=False, callback=stop)


def test_resume_after_interruption_is_bitwise_identical(episodes, tmp_path):
    config = small(epochs=5)
    config = dataclasses.replace(
        config, train=dataclasses.replace(config.train, checkpoint_every=2)
    )
    reference = train(episodes, config, tmp_path / "straight", progress=False)

    train_killed_after(3, episodes, config, tmp_path / "broken")
    # killed after epoch 3: the last checkpoint is epoch 2's, and the run replays epoch 3
    assert load_checkpoint(tmp_path / "broken" / "checkpoint").train_state["epoch"] == 2
    resumed = train(episodes, config, tmp_path / "broken", progress=False)
    assert resumed.resumed_from == 2
    state, expected = resumed.model.state_dict(), reference.model.state_dict()
    assert state.keys() == expected.keys()
    for key in state:
        assert torch.equal(state[key], expected[key]), key
    assert resumed.history == reference.history
    assert resumed.metrics == reference.metrics
    # a finished run is returned as it is
    again = train(episodes, config, tmp_path / "broken", progress=False)
    assert again.resumed_from == 5 and torch.equal(
        again.model.members[0][0].weight, reference.model.members[0][0].weight
    )


def test_resume_refuses_another_config_or_dataset(episodes, tmp_path):
    train(episodes, small(epochs=1), tmp_path, progress=False)
    with pytest.raises(InputError, match=r"another configuration .* differs in model.horizon\)"):
        train(episodes, small(epochs=1, horizon=2), tmp_path, progress=False)
    with pytest.raises(InputError, match=r"differs in the data\); .* \(--restart on the"):
        train(episodes[:-1], small(epochs=1), tmp_path, progress=False)
    # the dataset's name is not the data: spelt otherwise, the same data resumes
    renamed = dataclasses.replace(small(epochs=1), dataset="./elsewhere/../data")
    assert train(episodes, renamed, tmp_path, progress=False).resumed_from == 1
    result = train(episodes, small(epochs=1, horizon=2), tmp_path, progress=False, resume=False)
    assert load_checkpoint(result.checkpoint).config.model.horizon == 2


def test_a_directory_that_is_not_a_checkpoint_is_never_replaced(episodes, tmp_path):
    """A run's checkpoint directory that holds other files (notes, an earlier model) is refused,
    even when training afresh, before any training; the files stay."""
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    (checkpoint / "notes.md").write_text("keep")
    for resume in (True, False):
        with pytest.raises(InputError, match=r"holds notes.md, which a checkpoint does not"):
            train(episodes, small(epochs=1), tmp_path, progress=False, resume=resume)
    assert (checkpoint / "notes.md").read_text() == "keep"
    (checkpoint / "notes.md").unlink()
    checkpoint.rmdir()
    checkpoint.write_text("a file")
    with pytest.raises(InputError, match="is not a checkpoint directory"):
        train(episodes, small(epochs=1), tmp_path, progress=False, resume=False)


def test_resume_of_a_run_saved_before_new_config_fields(episodes, tmp_path):
    base = small(epochs=2)
    config = dataclasses.replace(base, train=dataclasses.replace(base.train, checkpoint_every=1))

    train_killed_after(1, episodes, config, tmp_path)
    # a version without model.future and model.jitter stored the identity without them
    state_file = tmp_path / "checkpoint" / "train_state.json"
    state = json.loads(state_file.read_text())
    for name in ("future", "jitter"):
        del state["identity"]["config"]["model"][name]
    state_file.write_text(json.dumps(state))
    assert train(episodes, config, tmp_path, progress=False).resumed_from == 1


def with_train(config: Config, **train_fields: object) -> Config:
    return dataclasses.replace(config, train=dataclasses.replace(config.train, **train_fields))


def test_a_run_starts_from_the_checkpoint_of_train_init(episodes, held_out, tmp_path):
    first = train(episodes[:12], small(epochs=4), tmp_path / "first", progress=False)
    # a learning rate too small to move the weights: the run returns the init's model,
    # normalisation included (not that of its own episodes)
    still = with_train(small(epochs=1, horizon=1), lr=1e-12, init=str(tmp_path / "first"))
    kept = train(episodes[12:], still, tmp_path / "kept", progress=False)
    for key, value in first.model.state_dict().items():
        torch.testing.assert_close(kept.model.state_dict()[key], value, rtol=0, atol=1e-9)
    for name, value in dataclasses.asdict(first.model.stats).items():
        np.testing.assert_array_equal(getattr(kept.model.stats, name), value)
    # fine-tuning on the other episodes beats the same training from a fresh start
    tuned = with_train(small(epochs=2), init=str(first.checkpoint))
    fine = train(episodes[12:], tuned, tmp_path / "tuned", progress=False)
    fresh = train(episodes[12:], small(epochs=2), tmp_path / "fresh", progress=False)
    before = evaluate(first.model, held_out)["r2_mean"]
    after, scratch = (evaluate(r.model, held_out)["r2_mean"] for r in (fine, fresh))
    assert after > max(before, scratch), (before, after, scratch)
    assert load_checkpoint(fine.checkpoint).config.train.init == str(first.checkpoint)


def test_a_killed_fine_tuning_run_resumes_from_its_own_checkpoint(episodes, tmp_path):
    train(episodes, small(epochs=1), tmp_path / "first", progress=False)
    config = with_train(small(epochs=3), init=str(tmp_path / "first"), checkpoint_every=1)
    reference = train(episodes, config, tmp_path / "straight", progress=False)

    train_killed_after(2, episodes, config, tmp_path / "broken")
    resumed = train(episodes, config, tmp_path / "broken", progress=False)
    assert resumed.resumed_from == 2
    assert resumed.history == reference.history
    # another starting point is another run
    other = with_train(config, init=str(tmp_path / "straight"))
    with pytest.raises(InputError, match="another configuration or dataset"):
        train(episodes, other, tmp_path / "broken", progress=False)


def test_train_init_must_fit_the_run(episodes, tmp_path):
    train(episodes, small(epochs=1), tmp_path / "first", progress=False)
    init = str(tmp_path / "first")
    with pytest.raises(DataError, match="does not exist"):
        train(episodes, with_train(small(), init=str(tmp_path / "none")), tmp_path / "a")
    with pytest.raises(InputError, match=r"train.init .*model.horizon, model.hidden"):
        other = small(horizon=2, hidden=(8,))
        train(episodes, with_train(other, init=init), tmp_path / "b", progress=False)
    wider = [Episode(np.hstack([e.state, e.state[:, :1]]), e.action) for e in episodes]
    with pytest.raises(InputError, match="takes 4 state and 2 action entries.* 5 and 2"):
        train(wider, with_train(small(), init=init), tmp_path / "c", progress=False)
    with pytest.raises(InputError, match="train.init must be a str"):
        TrainConfig(init=3)  # type: ignore[arg-type]


def test_corrupt_or_missing_checkpoint_raises_data_error(episodes, tmp_path):
    result = train(episodes, small(epochs=1), tmp_path / "run", progress=False)
    with pytest.raises(DataError, match="does not exist"):
        load_checkpoint(tmp_path / "nowhere")
    # a checkpoint's file, a dataset or an identification is not a checkpoint, and says so
    with pytest.raises(DataError, match=r"model.safetensors is a file \(give a run or its"):
        load_checkpoint(result.checkpoint / "model.safetensors")
    (tmp_path / "data" / "meta").mkdir(parents=True)
    (tmp_path / "data" / "meta" / "info.json").write_text("{}")
    with pytest.raises(DataError, match=r"data is a dataset, not a training run"):
        load_checkpoint(tmp_path / "data")
    (tmp_path / "ident").mkdir()
    (tmp_path / "ident" / "identification.npz").write_bytes(b"")
    with pytest.raises(DataError, match=r"ident holds an identification \(invdyn ident\)"):
        load_checkpoint(tmp_path / "ident")
    cases = {
        "model.safetensors": lambda p: p.write_bytes(p.read_bytes()[:100]),
        "norm_stats.json": lambda p: p.unlink(),
        "config.json": lambda p: p.write_text('{"model": {"horizon": 0}}'),
        "metrics.json": lambda p: p.write_text("{not json"),
        "optimizer.safetensors": lambda p: p.write_bytes(b"\x00" * 16),
    }
    for name, corrupt in cases.items():
        broken = tmp_path / f"broken-{name}"
        subprocess.run(["cp", "-r", str(result.checkpoint), str(broken)], check=True)
        corrupt(broken / name)
        with pytest.raises(DataError, match=name.replace(".", r"\.")):
            load_checkpoint(broken, optimizer=True)
    # the optimiser's state is read only for resuming
    assert load_checkpoint(broken).optimizer_state is None
    # weights of the wrong shape
    other = train(episodes, small(epochs=1, hidden=(8,)), tmp_path / "other", progress=False)
    broken = tmp_path / "mixed"
    subprocess.run(["cp", "-r", str(result.checkpoint), str(broken)], check=True)
    (broken / "model.safetensors").write_bytes(
        (other.checkpoint / "model.safetensors").read_bytes()
    )
    with pytest.raises(DataError, match=r"model\.safetensors"):
        load_checkpoint(broken)
    # weights of a run that diverged
    from safetensors.torch import load_file, save_file

    weights = load_file(result.checkpoint / "model.safetensors")
    first = next(iter(weights))
    weights[first] = torch.full_like(weights[first], float("nan"))
    save_file(weights, broken / "model.safetensors")
    with pytest.raises(DataError, match=rf"holds weights that are not finite \({first}\)"):
        load_checkpoint(broken)


def test_norm_stats_name_the_lists_that_disagree():
    good = {
        "state_mean": [0.0] * 3,
        "state_std": [1.0] * 3,
        "delta_mean": [0.0] * 3,
        "delta_std": [1.0] * 3,
        "action_mean": [0.0],
        "action_std": [1.0],
    }
    assert NormStats.from_dict(good).state_mean.shape == (3,)
    cases = {
        "state_mean": ([0.0] * 2, r"one length: state_mean \(2,\), state_std \(3,\)"),
        "action_std": ([1.0, 1.0], r"action_mean \(1,\), action_std \(2,\)"),
        "delta_std": ([1.0, 0.0, 1.0], "delta_std must be positive"),
        "state_std": ([1.0, float("nan"), 1.0], "state_std must be finite"),
    }
    for key, (value, message) in cases.items():
        with pytest.raises(InputError, match=message):
            NormStats.from_dict(good | {key: value})


# -- configuration and bad input ------------------------------------------------------------


def test_config_json_round_trip_and_overrides():
    for config in PRESETS.values():
        assert Config.from_json(config.to_json()) == config
    config = preset("small").with_overrides(
        ["model.horizon=4", "chunk=true", "train.lr=1", "model.hidden=32,16", "dataset=demo"]
    )
    assert config.model.horizon == 4 and config.model.chunk is True
    assert config.train.lr == 1.0 and isinstance(config.train.lr, float)
    assert config.model.hidden == (32, 16) and config.dataset == "demo"
    assert preset("small").with_overrides(["hidden="]).model.hidden == ()
    assert Config.from_json(config.to_json()) == config
    assert json.loads(config.to_json())["model"]["hidden"] == [32, 16]


@pytest.mark.parametrize(
    "make",
    [
        lambda: Config.from_json('{"model": {"horizn": 2}}'),
        lambda: Config.from_json('{"optimizer": {}}'),
        lambda: Config.from_json('{"model": {"horizon": "2"}}'),
        lambda: Config.from_json('{"model": {"chunk": 1}}'),
        lambda: Config.from_json('{"train": {"epochs": 2.5}}'),
        lambda: Config.from_json("[1, 2]"),
        lambda: Config.from_json("{nope"),
        lambda: ModelConfig(horizon=0),
        lambda: ModelConfig(head="transformer"),
        lambda: ModelConfig(hidden=(64, 0)),
        lambda: ModelConfig(state_weight=1.0),
        lambda: ModelConfig(cameras="front", state_weight=-1.0),
        lambda: ModelConfig(cameras="front", state_weight=float("nan")),
        lambda: TrainConfig(val_fraction=1.0),
        lambda: TrainConfig(device="tpu"),
        lambda: TrainConfig(lr=float("inf")),
        lambda: TrainConfig(grad_clip=float("inf")),
        lambda: TrainConfig(weight_decay=float("nan")),
        lambda: Config().with_overrides(["model.jitter=nan"]),
        lambda: preset("huge"),
        lambda: Config().with_overrides(["model.horizon=two"]),
        lambda: Config().with_overrides(["model.nothing=1"]),
        lambda: Config().with_overrides(["horizon"]),
        lambda: Config().with_overrides(["chunk=maybe"]),
    ],
)
def test_bad_config_raises_input_error(make):
    with pytest.raises(InputError):
        make()


def test_every_number_of_a_config_must_be_finite():
    """A non-finite number would train to NaN or be written as null in config.json."""
    with pytest.raises(InputError, match=r"model.bin_range must be a finite number, got inf"):
        Config().with_overrides(["model.bin_range=inf"])


def test_episodes_too_short_for_a_window_are_never_held_out(episodes, tmp_path):
    config = small(epochs=1)
    _, first_choice = split_episodes(len(episodes), config.train.val_fraction, config.train.seed)
    short = [
        Episode(e.state[:1], e.action[:1]) if k in first_choice else e
        for k, e in enumerate(episodes)
    ]
    result = train(short, config, tmp_path, progress=False)
    assert result.val_episodes and not set(result.val_episodes) & set(first_choice)
    assert np.isfinite(result.metrics["r2_mean"])


def test_the_only_long_episode_is_kept_for_training(episodes, tmp_path):
    config = small(epochs=1)
    short = [Episode(e.state[:1], e.action[:1]) for e in episodes[1:]]
    with pytest.warns(UserWarning, match="only one is long enough for a window, and it is all"):
        result = train([*short, episodes[0]], config, tmp_path, progress=False)
    assert result.train_episodes == list(range(len(episodes)))
    assert result.val_episodes == [] and result.metrics == {}


def test_bad_batches_raise_input_error(episodes, tmp_path):
    model = train(episodes, small(epochs=1), tmp_path, progress=False).model
    batch = make_windows(episode_arrays(episodes[:1]), model.config).batch()
    window = batch[OBS_STATE]
    for bad, message in [
        (window, "a batch maps 'observation.state' .* got ndarray"),
        ({}, "batch has no 'observation.state'"),
        ({OBS_STATE: window[:, :, :-1]}, r"observation.state must have shape \(B, 2, 4\)"),
        ({OBS_STATE: np.where(np.arange(4) == 2, np.nan, window)}, "non-finite values"),
        ({OBS_STATE: window + 0j}, "must hold real numbers, got dtype complex128"),
        ({OBS_STATE: torch.as_tensor(window) + 1j}, "must hold real numbers, got dtype torch"),
        ({OBS_STATE: window.astype(object)}, "must hold real numbers, got dtype object"),
        ({OBS_STATE: [[[0.0] * 4] * 2, [[0.0] * 3] * 2]}, "must be an array of numbers"),
    ]:
        with pytest.raises(InputError, match=message):
            model.predict(bad)


def test_a_diverging_run_stops_before_saving_its_weights(episodes, tmp_path):
    wild = Config(
        model=ModelConfig(hidden=(16,)), train=TrainConfig(epochs=3, batch_size=16, lr=1e30)
    )
    with pytest.raises(InputError, match=r"training diverged in epoch \d: its loss is nan"):
        train(episodes, wild, tmp_path / "wild", progress=False)
    assert not (tmp_path / "wild" / "checkpoint").exists()


def test_a_run_whose_loss_grew_without_end_is_named_diverged(episodes, tmp_path):
    """A learning rate that blows the weights up to finite but useless values: the model is
    saved, as trained, and its validation error, far above the actions' variance, named."""
    config = small(epochs=3)
    wild = dataclasses.replace(config, train=dataclasses.replace(config.train, lr=1e3))
    with pytest.warns(UserWarning, match="times the actions' variance, far worse than predict"):
        result = train(episodes, wild, tmp_path / "wild", progress=False)
    assert result.metrics["nmse_mean"] > 10.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        train(episodes, small(epochs=1), tmp_path / "tame", progress=False)


def test_cameras_are_named_not_keyed():
    with pytest.raises(InputError, match=r"names cameras, not their features: 'top' for "):
        ModelConfig(cameras="front,observation.images.top")


def test_bad_episodes_and_batches_raise_input_error(episodes, tmp_path):
    state, action = episode_arrays(episodes[:1])[0]
    bad = [
        [],
        [(state, action[:-1])],
        [(state[:, 0], action)],
        [(np.where(state > 0.5, np.nan, state), action)],
        [(state, action), (state[:, :3], action)],
        [{"state": state}],
        {"state": state, "action": action},
    ]
    for episodes_in in bad:
        with pytest.raises(InputError):
            episode_arrays(episodes_in)
    with pytest.raises(InputError, match="no training windows"):
        train([(state[:2], action[:2])], small(epochs=1, horizon=2), tmp_path, progress=False)
    stats = compute_norm_stats(make_windows([(state, action)], ModelConfig()))
    model = InverseDynamicsModel(ModelConfig(hidden=(8,)), stats)
    with pytest.raises(InputError, match="observation.state"):
        model.predict({OBS_STATE: np.zeros((3, 3, 4))})
    with pytest.raises(InputError, match="action"):
        model.loss({OBS_STATE: np.zeros((3, 2, 4)), ACTION: np.zeros((3, 3))})


def test_importing_invdyn_or_the_config_does_not_import_torch():
    code = (
        "import sys, invdyn, invdyn.learn.config; "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_episodes_may_be_mappings_or_pairs(episodes):
    state, action = episodes[0].state, episodes[0].action
    forms = [[episodes[0]], [(state, action)], [{OBS_STATE: state, ACTION: action}]]
    forms.append(iter([(state, action)]))
    data = pytest.importorskip("invdyn.learn.datasets")
    forms.append([data.Episode(state, action, timestamp=DT * np.arange(len(state)))])
    for form in forms:
        [(s, a)] = episode_arrays(form)
        np.testing.assert_array_equal(s, state)
        np.testing.assert_array_equal(a, action)
