"""Inverse dynamics from camera frames: a convolutional encoder on the frames of a window.

The data are synthetic and fully visible: two blobs on a 24x24 image, each moved by its action
every frame (x_{t+1} = x_t + 1.5 a_t, reflected at the borders), so the action is in the
displacement between two frames. A small network must read it from the frames alone.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("av")
pytest.importorskip("pyarrow")

from invdyn import DataError, InputError  # noqa: E402
from invdyn.learn.checkpoint import load_checkpoint  # noqa: E402
from invdyn.learn.config import Config, ModelConfig, preset  # noqa: E402
from invdyn.learn.datasets import (  # noqa: E402
    Dataset,
    Episode,
    import_videos,
    read_dataset,
    read_metadata,
    write_dataset,
)
from invdyn.learn.datasets.mp4 import encode_video  # noqa: E402
from invdyn.learn.evaluate import evaluate_checkpoint  # noqa: E402
from invdyn.learn.keys import OBS_IMAGE_PREFIX, OBS_STATE  # noqa: E402
from invdyn.learn.label import label_dataset, label_videos, read_labels  # noqa: E402
from invdyn.learn.models import (  # noqa: E402
    WINDOW_FRAMES,
    InverseDynamicsModel,
    NormStats,
    _random_shift,
    episode_arrays,
    joined_frames,
    make_windows,
    select_windows,
)
from invdyn.learn.train import evaluate, train  # noqa: E402

SIZE = 24
FPS = 10.0


def blobs(count: int, steps: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(positions (steps, 2), actions (steps, 2)) of each episode."""
    rng = np.random.default_rng(seed)
    episodes = []
    for _ in range(count):
        x = rng.uniform(6, SIZE - 6, 2)
        actions = rng.uniform(-1, 1, (steps, 2))
        positions = []
        for action in actions:
            positions.append(x.copy())
            x = x + 1.5 * action
            x = np.where(x < 4, 8 - x, np.where(x > SIZE - 4, 2 * (SIZE - 4) - x, x))
        episodes.append((np.array(positions), actions))
    return episodes


def frames(positions: np.ndarray) -> np.ndarray:
    """(T, SIZE, SIZE, 3) uint8: blob k at column positions[:, k], on its own row and colour."""
    y, x = np.mgrid[0:SIZE, 0:SIZE]
    image = np.zeros((len(positions), SIZE, SIZE, 3))
    for k, row in enumerate((0.3, 0.7)):
        distance = (x[None] - positions[:, k, None, None]) ** 2 + (y[None] - row * SIZE) ** 2
        image[..., k] += 255 * np.exp(-distance / 3.0)
    return np.clip(image, 0, 255).astype(np.uint8)


def dataset(path: Path, count: int, seed: int, *, state: bool = True) -> Dataset:
    data = blobs(count, 50, seed)
    episodes = [Episode(x if state else None, a, np.arange(len(x)) / FPS) for x, a in data]
    written = write_dataset(
        path, episodes, fps=FPS, state_names=["x0", "x1"] if state else None,
        action_names=["a0", "a1"], videos={"cam": [frames(x) for x, _ in data]},
    )  # fmt: skip
    return read_dataset(written)


def config(epochs: int, **model: object) -> Config:
    base = preset("small")
    options = {"cameras": "cam", "state": False, "encoder": (16, 32), "hidden": (64,)}
    return Config(
        model=dataclasses.replace(base.model, **(options | model)),  # type: ignore[arg-type]
        train=dataclasses.replace(
            base.train, epochs=epochs, batch_size=64, num_threads=1, checkpoint_every=1000
        ),
    )


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("frames")
    return dataset(root / "train", 30, 0), dataset(root / "held", 10, 1)


@pytest.fixture(scope="module")
def trained(data, tmp_path_factory):
    train_data, _ = data
    return train(train_data, config(15, augment=0), tmp_path_factory.mktemp("run"), progress=False)


def test_actions_from_frames_alone(data, trained):
    _, held = data
    # measured: validation R^2 0.955, held-out 0.951; a model that cannot see motion gets 0
    assert trained.metrics["r2_mean"] > 0.85
    assert evaluate(trained.model, held)["r2_mean"] > 0.85


def test_checkpoint_and_evaluation_of_a_frame_model(data, trained):
    _, held = data
    checkpoint = load_checkpoint(trained.checkpoint)
    assert checkpoint.model.config.camera_names == ("cam",)
    windows = select_windows(episode_arrays(held), held, range(len(held)), checkpoint.model.config)
    batch = windows.batch(slice(0, 40))
    assert torch.equal(checkpoint.model.predict(batch), trained.model.predict(batch))
    report = evaluate_checkpoint(trained.checkpoint, held)
    assert report.model.r2_mean == pytest.approx(evaluate(trained.model, held)["r2_mean"])
    # the linear baseline sees the state, the model only the frames
    assert report.linear is not None
    # a model without state_weight estimates no state
    assert report.state_estimate is None and "state_estimate" not in report.to_dict()
    assert checkpoint.model.infer(batch).states is None
    with pytest.raises(InputError, match="does not estimate states"):
        checkpoint.model.estimate_states(batch)
    # frames scaled to [0, 1] would read as black: only uint8 pixels are taken
    key = OBS_IMAGE_PREFIX + "cam"
    scaled = batch | {key: np.asarray(batch[key]) / 255.0}
    with pytest.raises(InputError, match="must hold uint8 pixels .* got torch.float64"):
        checkpoint.model.predict(scaled)


def test_frames_and_actions_without_state(data, tmp_path):
    """Recordings of frames and actions alone (no proprioception) train a model of frames;
    it evaluates on data with or without state, and a model that reads the state refuses
    them."""
    stateless = dataset(tmp_path / "train", 30, 0, state=False)
    held = dataset(tmp_path / "held", 10, 1, state=False)
    assert stateless.info.n_state == 0
    result = train(stateless, config(3, augment=0), tmp_path / "run", progress=False)
    # measured: 0.947 held out after 3 epochs
    report = evaluate_checkpoint(result.checkpoint, held)
    assert report.model.r2_mean > 0.8
    _, held_with_state = data
    again = evaluate_checkpoint(result.checkpoint, held_with_state)
    assert again.model.r2_mean == pytest.approx(report.model.r2_mean, abs=1e-6)
    with pytest.raises(InputError, match="a model of frames alone sets model.state=false"):
        train(stateless, config(1, state=True), tmp_path / "state", progress=False)
    with pytest.raises(InputError, match="state_weight estimates observation.state .* no state"):
        train(stateless, config(1, state_weight=1.0), tmp_path / "estimate", progress=False)


def test_validation_loss_is_that_of_the_model_without_augmentation(data, tmp_path):
    """The logged val_loss is the loss of the model as it predicts: no random shift, no
    colour jitter (which made it differ between a run and the same run resumed)."""
    train_data, _ = data
    result = train(train_data, config(1, augment=4, jitter=0.3), tmp_path, progress=False)
    model = result.model.eval()
    windows = select_windows(
        episode_arrays(train_data), train_data, result.val_episodes, model.config
    )
    with torch.no_grad():
        _, metrics = model.loss(windows.batch())
    assert result.history[-1]["val_loss"] == pytest.approx(metrics["loss"], rel=1e-5)


def test_state_and_frames_together(data, tmp_path):
    train_data, _ = data
    result = train(train_data, config(1, state=True, context=1, ensemble=2), tmp_path)
    assert result.model.encoders is not None and len(result.model.encoders) == 2
    assert np.isfinite(result.metrics["r2_mean"])


def test_frames_estimate_the_state_for_the_head(data, tmp_path):
    train_data, held = data
    result = train(
        train_data, config(15, augment=0, state_weight=1.0, context=2), tmp_path, progress=False
    )
    model = load_checkpoint(result.checkpoint).model
    assert len(model.state_estimators) == 1
    windows = select_windows(episode_arrays(held), held, range(len(held)), model.config)
    batch = windows.batch(slice(0, 200))
    # measured: normalised MSE of the blobs' positions 0.008 trained, 1.03 at initialisation
    assert model.loss(batch)[1]["state_mse"] < 0.05
    untrained = InverseDynamicsModel(model.config, model.stats).eval()
    assert untrained.loss(batch)[1]["state_mse"] > 0.3
    # the history follows the estimate on the training and validation windows
    first, last = result.history[0], result.history[-1]
    for split in ("train", "val"):
        assert last[f"{split}_state_mse"] < 0.5 * first[f"{split}_state_mse"]
    # predicting needs frames alone
    frames_alone = {k: v for k, v in batch.items() if k != OBS_STATE}
    torch.testing.assert_close(model.predict(frames_alone), model.predict(batch))
    assert evaluate(model, held)["r2_mean"] > 0.85
    # each frame's estimate depends on that frame and the one before only: the windows that
    # share a frame estimate its state alike
    estimates = model.estimate_states(frames_alone)
    assert estimates.shape == (200, model.config.window - 1, 2)
    same_episode = windows.episode[1:200] == windows.episode[:199]
    torch.testing.assert_close(estimates[1:][same_episode, :-1], estimates[:-1][same_episode, 1:])
    # one pass reads the actions and the states alike
    inference = model.infer(frames_alone)
    assert inference.states is not None
    torch.testing.assert_close(inference.states, estimates)
    torch.testing.assert_close(inference.actions, model.predict(frames_alone))
    # the evaluation reports the estimate of each window's next state
    report = evaluate_checkpoint(result.checkpoint, held)
    assert report.state_names == ("x0", "x1")
    assert report.state_estimate is not None and report.state_estimate.r2_mean > 0.95
    per_state = report.to_dict()["state_estimate"]["per_dimension"]
    assert set(per_state) == {"x0", "x1"}
    # in physical units, for every window
    everything = model.estimate_states(windows.batch())[:, windows.now].double().numpy()
    mae = np.abs(everything - windows.states[windows.obs_index[:, windows.now + 1]]).mean(0)
    assert mae == pytest.approx([per_state[name]["mae"] for name in ("x0", "x1")], rel=1e-5)
    no_state = dataclasses.replace(model.stats, state_mean=np.zeros(0), state_std=np.ones(0))
    with pytest.raises(InputError, match="state_weight .* no state"):
        InverseDynamicsModel(model.config, no_state)


@pytest.mark.slow
def test_compiled_encoders_train_as_the_plain_ones(data, tmp_path):
    train_data, _ = data
    plain = config(2, augment=0)
    compiled = dataclasses.replace(plain, train=dataclasses.replace(plain.train, compile=True))
    runs = [train(train_data, c, tmp_path / str(k)) for k, c in enumerate((plain, compiled))]
    encoders = [run.model.encoders[0]["cam"] for run in runs]
    assert getattr(encoders[1].keypoints, "_compiled_call_impl", None) is not None
    # the same parameters, under the same names in the checkpoint
    saved = load_checkpoint(runs[1].checkpoint).model.state_dict()
    assert saved.keys() == runs[0].model.state_dict().keys()
    # measured: training losses agree to 1e-3, validation losses (after chaotic steps) to 1.2%
    for key, tolerance in (("train_loss", 1e-3), ("val_loss", 0.05)):
        losses = [[entry[key] for entry in run.history] for run in runs]
        np.testing.assert_allclose(losses[1], losses[0], rtol=tolerance, err_msg=key)

    # with equal parameters, equal keypoints and gradients, whatever the number of frames
    encoders[1].load_state_dict(encoders[0].state_dict())
    for count in (7, 12):
        images = torch.rand(count, 3, SIZE, SIZE, generator=torch.Generator().manual_seed(count))
        points, grads = [], []
        for encoder in encoders:
            encoder.zero_grad()
            out = encoder.keypoints(images)
            out.square().sum().backward()
            points.append(out.detach())
            grads.append(encoder.keypoints[0].weight.grad.clone())
        torch.testing.assert_close(points[1], points[0], rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(grads[1], grads[0], rtol=1e-3, atol=1e-4)


def test_windows_hold_the_frames_once(data):
    """Reading the windows' frames fills their joined array episode by episode: no copy of
    every frame is made on the way (the per-episode frames, then their concatenation)."""
    import tracemalloc

    train_data, _ = data
    config_ = config(1).model
    arrays = episode_arrays(train_data)
    tracemalloc.start()
    try:
        windows = select_windows(arrays, train_data, range(len(arrays)), config_)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    joined = windows.images["observation.images.cam"]
    episode = train_data.frames("cam", 0)
    np.testing.assert_array_equal(joined[: len(episode)], episode)
    np.testing.assert_array_equal(joined[-len(episode) :], train_data.frames("cam", -1))
    assert peak < joined.nbytes + 8 * episode.nbytes, (peak, joined.nbytes, episode.nbytes)


def test_frames_that_do_not_match_the_steps_are_refused(data):
    train_data, _ = data
    config_ = config(1).model
    arrays = episode_arrays(train_data)[:2]
    images = joined_frames(train_data, config_, [0, 1], [50, 50])
    with pytest.raises(InputError, match="has 100 frames, but the episodes have 99 steps"):
        make_windows([arrays[0], (arrays[1][0][:-1], arrays[1][1][:-1])], config_, images)
    with pytest.raises(DataError, match=r"episode 1 of observation.images.cam has frames"):
        joined_frames(train_data, config_, [0, 1], [50, 49])
    # a dataset's video, decoded an episode at a time
    video = train_data.video("cam")
    assert len(video) == len(train_data)
    np.testing.assert_array_equal(video[3], train_data.frames("cam", 3))
    with pytest.raises(InputError, match=r"no camera 'elsewhere'; its cameras are \['cam'\]"):
        train_data.video("elsewhere")


def test_frame_models_need_frames(data, tmp_path):
    train_data, _ = data
    bare = [Episode(e.state, e.action, e.timestamp) for e in train_data]
    with pytest.raises(InputError, match="give a dataset with videos"):
        train(bare, config(1), tmp_path / "a", progress=False)
    with pytest.raises(InputError, match=r"no camera 'side'; its cameras are \['cam'\]"):
        train(train_data, config(1, cameras="side"), tmp_path / "b", progress=False)
    with pytest.raises(
        InputError,
        match="model.state is False and model.cameras is empty: the model would see nothing",
    ):
        config(1, cameras="")


def test_random_shift_moves_whole_images():
    torch.manual_seed(0)
    x = torch.arange(2 * 3 * 8 * 8, dtype=torch.float32).reshape(2, 3, 8, 8)
    shifted = _random_shift(x, 2)
    assert shifted.shape == x.shape
    for b in range(2):
        # every output pixel is an input pixel of the same channel, the border repeated
        for c in range(3):
            assert set(shifted[b, c].flatten().tolist()) <= set(x[b, c].flatten().tolist())
    assert not torch.equal(shifted, x) or not torch.equal(_random_shift(x, 2), x)


def test_following_refuses_frame_models(data, trained):
    from invdyn.learn.follow import follow

    _, held = data
    with pytest.raises(InputError, match="following takes models of the state"):
        follow(trained.checkpoint, held)


def _labelled_r2(path: Path, actions: list[np.ndarray]) -> float:
    """Mean R^2 of a labelled dataset's labels (frames with a window) against `actions`."""
    labels = read_labels(path)
    target = np.concatenate(actions)
    error = (labels.action - target)[labels.is_labelled]
    return float(np.mean(1 - error.var(0) / target[labels.is_labelled].var(0)))


def test_labelling_a_video_dataset(data, trained, tmp_path):
    _, held = data
    held_out = evaluate(trained.model, held)["r2_mean"]
    out = label_dataset(trained.checkpoint, held.path, tmp_path / "labelled", replace=True)
    labelled = read_dataset(out)
    # the videos come along as they were, file for file, and the labels score as the model
    # did on the same windows
    videos = sorted(held.path.rglob("*.mp4"))
    assert [f.relative_to(held.path) for f in videos] == [
        f.relative_to(out) for f in sorted(out.rglob("*.mp4"))
    ]
    assert all(f.read_bytes() == (out / f.relative_to(held.path)).read_bytes() for f in videos)
    np.testing.assert_array_equal(labelled.frames("cam", 3), held.frames("cam", 3))
    assert labelled.info.videos == held.info.videos
    r2 = _labelled_r2(out, [e.action for e in held])
    assert r2 == pytest.approx(held_out, abs=1e-4)


def test_labelling_plain_videos_recovers_the_hidden_actions(data, trained, tmp_path):
    _, held = data
    folder = tmp_path / "videos"
    folder.mkdir()
    # action-free mp4 files, as a camera would give them; the actions stay hidden
    for i in range(len(held)):
        encode_video(folder / f"clip{i:02d}.mp4", held.frames("cam", i), FPS)
    out = label_videos(trained.checkpoint, folder, tmp_path / "labelled")
    labelled = read_dataset(out)
    assert labelled.info.state_names == () and len(labelled) == len(held)
    # which file each episode came from, and the model that labelled them
    metadata = read_metadata(out)
    clips = [str(folder / f"clip{i:02d}.mp4") for i in range(len(held))]
    assert metadata["episode_sources"] == clips
    assert metadata["labelled_by"] == str(Path(trained.checkpoint).resolve())
    assert not (tmp_path / ".labelled.videos").exists()
    # the import's pass through H.264 costs little: within 0.05 of the held-out R^2
    r2 = _labelled_r2(out, [e.action for e in held])
    assert r2 > evaluate(trained.model, held)["r2_mean"] - 0.05
    encode_video(folder / "clip99.mp4", held.frames("cam", 0), 2 * FPS)
    with pytest.raises(InputError, match="fps"):
        label_videos(trained.checkpoint, folder, tmp_path / "other")
    # the failed run leaves no work folder behind
    assert not (tmp_path / ".other.videos").exists()
    # arguments are checked before any video is read
    height, width = held.info.videos[OBS_IMAGE_PREFIX + "cam"][:2]
    with pytest.raises(InputError, match=rf"size 8x8: .* trained on frames of {width}x{height}"):
        label_videos(trained.checkpoint, folder, tmp_path / "other", size=(8, 8))
    with pytest.raises(InputError, match="batch_size must be an integer >= 1"):
        label_videos(trained.checkpoint, folder, tmp_path / "other", batch_size=0)
    assert not (tmp_path / ".other.videos").exists()


def test_labelling_videos_touches_nothing_of_the_users(data, trained, tmp_path):
    """The work folder of the import is hidden next to the output: sources named like it are
    read and kept, a dataset of the user's in its place is refused and kept, and a folder
    that a killed run left there is replaced, then removed."""
    _, held = data
    folder = tmp_path / "clips.videos"  # the visible name that a work folder once had
    folder.mkdir()
    encode_video(folder / "clip.mp4", held.frames("cam", 0), FPS)
    label_videos(trained.checkpoint, folder, tmp_path / "clips")
    assert [p.name for p in folder.iterdir()] == ["clip.mp4"]
    assert not (tmp_path / ".clips.videos").exists()

    theirs = write_dataset(
        tmp_path / ".mine.videos", [Episode(np.zeros((3, 1)), None, np.arange(3) / FPS)],
        fps=FPS, state_names=["x"],
    )  # fmt: skip
    with pytest.raises(InputError, match=r"\.mine\.videos is in the way"):
        label_videos(trained.checkpoint, folder, tmp_path / "mine")
    assert read_dataset(theirs).info.total_frames == 3
    with pytest.raises(InputError, match="is inside the work folder"):
        label_videos(trained.checkpoint, theirs, tmp_path / "mine")

    left = import_videos(folder, tmp_path / ".again.videos", camera="cam")
    (left / "stale").write_text("from a killed run")
    label_videos(trained.checkpoint, folder, tmp_path / "again")
    assert not left.exists() and read_dataset(tmp_path / "again").info.total_frames == len(
        held.frames("cam", 0)
    )


def frame_model(cameras: str, state: bool) -> InverseDynamicsModel:
    config = ModelConfig(cameras=cameras, state=state, context=1, encoder=(8,), keypoints=4)
    ones, zeros = np.ones(2), np.zeros(2)
    return InverseDynamicsModel(config, NormStats(zeros, ones, zeros, ones, zeros, ones)).eval()


def test_batches_of_window_frames_and_of_shared_frames_agree():
    model = frame_model("a,b", state=True)
    rng = np.random.default_rng(0)
    frames = {k: rng.integers(0, 256, (5, 3, 8, 8, 3), dtype=np.uint8) for k in "ab"}
    state = rng.normal(size=(5, 3, 2))
    per_window = {OBS_STATE: state} | {f"observation.images.{k}": f for k, f in frames.items()}
    shared = {OBS_STATE: state, WINDOW_FRAMES: np.arange(15).reshape(5, 3)} | {
        f"observation.images.{k}": f.reshape(15, 8, 8, 3) for k, f in frames.items()
    }
    torch.testing.assert_close(model.predict(per_window), model.predict(shared))
    bad = [
        ({WINDOW_FRAMES: np.arange(15).reshape(5, 3) - 1}, "must index the batch's 15 frames"),
        ({WINDOW_FRAMES: np.arange(10).reshape(5, 2)}, r"must have shape \(B, 3\)"),
        ({OBS_STATE: state[:4]}, "different numbers of windows"),
        ({"observation.images.b": frames["b"][..., :2]}, r"\(N, h, w, 3\)"),
    ]
    for change, message in bad:
        with pytest.raises(InputError, match=message):
            model.predict(shared | change)


def test_checkpoints_of_the_earlier_frame_encoder_are_refused(trained, tmp_path):
    from safetensors.torch import load_file, save_file

    copy = tmp_path / "checkpoint"
    shutil.copytree(trained.checkpoint, copy)
    weights = load_file(copy / "model.safetensors")
    # the earlier encoder's layers sat directly under the camera
    renamed = {k.replace(".keypoints.", "."): v for k, v in weights.items()}
    save_file(renamed, copy / "model.safetensors")
    with pytest.raises(DataError, match="earlier encoder"):
        load_checkpoint(copy)


def test_checkpoints_of_the_earlier_state_estimator_are_refused(data, tmp_path):
    from safetensors.torch import load_file, save_file

    result = train(
        data[0], config(1, state_weight=1.0, context=2), tmp_path / "run", progress=False
    )
    weights = load_file(result.checkpoint / "model.safetensors")
    # the earlier estimator saw the tracks of the whole window at once
    key = "state_estimators.0.0.weight"
    width, per_frame = weights[key].shape
    weights[key] = torch.zeros(width, (result.model.config.window - 1) * per_frame)
    save_file(weights, result.checkpoint / "model.safetensors")
    with pytest.raises(DataError, match="state estimator sees the whole window"):
        load_checkpoint(result.checkpoint)


def test_plain_videos_need_a_model_of_frames_alone(data, tmp_path):
    train_data, held = data
    result = train(train_data, config(1, state=True), tmp_path / "run", progress=False)
    folder = tmp_path / "videos"
    folder.mkdir()
    encode_video(folder / "clip.mp4", held.frames("cam", 0), FPS)
    with pytest.raises(InputError, match="plain videos give one camera's frames and no state"):
        label_videos(result.checkpoint, folder, tmp_path / "labelled")
