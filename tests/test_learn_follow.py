"""Acting on desired next states: a trained IDM follows a held-out recording in simulation.

A double pendulum collected at 100 Hz (ten physics steps per frame); a small MLP learns its
inverse dynamics (held-out R^2 about 0.999 and 0.992) and then drives the simulator along a
held-out episode, asking at each step for the torque from the simulated state to the next
recorded one. With the exact plant the recorded torques replay the episode exactly; with a
payload the recording did not have, the replay drifts and the model, closing the loop, does not.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("safetensors")
pytest.importorskip("pyarrow")
pytest.importorskip("mujoco")

import invdyn
from invdyn import InputError
from invdyn.learn.config import Config, preset
from invdyn.learn.data import Episode, read_dataset, write_collection, write_dataset
from invdyn.learn.follow import FollowResult, follow
from invdyn.learn.train import train
from invdyn.sim.collect import collect_gym, collect_robot
from invdyn.sim.plant import Plant

requires_gym = pytest.mark.skipif(
    importlib.util.find_spec("gymnasium") is None, reason="gymnasium is not installed"
)
HELD_OUT = 3


def config(epochs: int, **model: object) -> Config:
    """The small preset, one CPU thread, 10% held out for validation."""
    base = preset("small")
    return Config(
        model=dataclasses.replace(base.model, **model),
        train=dataclasses.replace(
            base.train,
            epochs=epochs,
            batch_size=256,
            val_fraction=0.1,
            checkpoint_every=1000,
            num_threads=1,
        ),
    )


@pytest.fixture(scope="module")
def robot(tmp_path_factory):
    """(checkpoint, held-out dataset) of a double pendulum at 100 Hz: 60 training episodes of
    2 s (seed 0), 3 held-out ones (seed 1)."""
    root = tmp_path_factory.mktemp("follow")
    model = invdyn.load("double_pendulum")
    collection = collect_robot(model, episodes=60, duration=2.0, control_rate=100.0, seed=0)
    dataset = read_dataset(write_collection(collection, root / "train"))
    held = collect_robot(model, episodes=HELD_OUT, duration=2.0, control_rate=100.0, seed=1)
    result = train(dataset, config(epochs=100), root / "run", progress=False)
    return result.checkpoint, read_dataset(write_collection(held, root / "held"))


def test_exact_plant_replay_is_exact_and_oracle_follows(robot):
    checkpoint, held = robot
    result = follow(checkpoint, held, episode=0)
    assert isinstance(result, FollowResult)
    n = len(held.episode(0)) - 1
    assert result.steps == n and result.start == 0 and result.horizon == 1
    for states in (result.reference, result.followed, result.open_loop, result.oracle):
        assert states is not None and states.shape == (n + 1, 4)
    assert result.actions.shape == (n, 2)
    np.testing.assert_allclose(result.time, held.episode(0).timestamp)
    np.testing.assert_array_equal(result.reference, held.episode(0).state)
    errors = result.errors
    assert set(errors) == {"followed", "open_loop", "oracle"}
    # every run starts on the reference
    assert all(e[0] < 1e-12 for e in errors.values())
    # the simulator is the one that recorded: the replay is exact (measured 0.0)
    assert errors["open_loop"].max() < 1e-9
    # the oracle's mean acceleration over ten physics steps: measured max 7e-4
    assert errors["oracle"].max() < 5e-3
    # the model stays near (measured final 0.05, mean 0.03; state in rad and rad/s)
    assert result.final_errors["followed"] < 0.5
    assert result.mean_errors["followed"] < 0.2
    # the model's actions are near the recorded ones (measured RMS difference 0.18 std)
    recorded = held.episode(0).action[:n]
    assert np.sqrt(np.mean((result.actions - recorded) ** 2)) < 0.3 * np.std(recorded)


def test_model_closes_the_loop_where_replay_drifts(robot):
    checkpoint, held = robot
    plant = Plant(payload=0.3)
    results = [follow(checkpoint, held, episode=e, plant=plant) for e in range(HELD_OUT)]
    final = {k: np.array([r.final_errors[k] for r in results]) for k in results[0].errors}
    mean = {k: np.array([r.mean_errors[k] for r in results]) for k in results[0].errors}
    # measured final errors: followed (0.24, 0.58, 0.75), open loop (0.31, 3.79, 8.58), oracle
    # (0.04, 0.05, 0.05): summed, followed / open loop = 0.12, oracle / open loop = 0.011
    assert final["followed"].sum() < 0.4 * final["open_loop"].sum(), final
    # measured mean errors: followed (0.13, 0.27, 0.22), open loop (0.70, 2.55, 7.24): ratio
    # 0.19, 0.10, 0.03 per episode
    assert np.all(mean["followed"] < 0.5 * mean["open_loop"]), mean
    # the oracle knows the physics but not the payload: close, not exact
    assert np.all(final["oracle"] < 0.2) and np.all(mean["oracle"] < 0.1), final
    assert np.all(final["oracle"] < final["followed"])


def test_seconds_and_json(robot):
    checkpoint, held = robot
    result = follow(checkpoint, held, episode=-1, seconds=0.5)
    assert result.episode == HELD_OUT - 1
    assert result.steps == 50 and result.followed.shape == (51, 4)
    data = json.loads(result.to_json())
    assert data["steps"] == 50 and data["oracle"]["available"]
    assert data["final_errors"] == pytest.approx(result.final_errors)
    assert len(data["errors"]["followed"]) == 51
    assert "rnea" in result.oracle_note


def test_context_and_chunked_horizon(robot, tmp_path):
    """A window of past simulated states and a reference two frames ahead; the first action
    of each chunk is applied."""
    _, held = robot
    run = train(held, config(epochs=2, context=2, horizon=2, chunk=True), tmp_path, progress=False)
    result = follow(run.checkpoint, held, episode=1, seconds=0.3)
    assert (result.start, result.horizon, result.steps) == (2, 2, 30)
    np.testing.assert_array_equal(result.reference, held.episode(1).state[2:33])
    np.testing.assert_allclose(result.time[0], held.episode(1).timestamp[2])
    assert result.open_loop.shape == (31, 4) and result.actions.shape == (30, 2)
    assert result.errors["open_loop"].max() < 1e-9
    assert np.all(np.isfinite(result.errors["followed"]))


def test_bad_input(robot, tmp_path):
    checkpoint, held = robot
    for episode in (HELD_OUT, -HELD_OUT - 1, 1.0, True, "0"):
        with pytest.raises(InputError, match="episode"):
            follow(checkpoint, held, episode=episode)  # type: ignore[arg-type]
    for seconds in (0.0, -1.0, float("nan"), "1"):
        with pytest.raises(InputError, match="seconds"):
            follow(checkpoint, held, seconds=seconds)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="plant"):
        follow(checkpoint, held, plant="heavy")  # type: ignore[arg-type]
    # a source follow cannot simulate
    episodes = [Episode(state=e.state, action=e.action, timestamp=e.timestamp) for e in held]
    info = held.info
    other = write_dataset(
        tmp_path / "other",
        episodes,
        fps=info.fps,
        state_names=info.state_names,
        action_names=info.action_names,
        source="lab:pendulum",
    )
    with pytest.raises(InputError, match="source"):
        follow(checkpoint, other)
    # another robot's names under the same sizes
    renamed = write_dataset(
        tmp_path / "renamed",
        episodes,
        fps=info.fps,
        state_names=[f"x.{i}" for i in range(4)],
        action_names=info.action_names,
        source=info.source,
    )
    with pytest.raises(InputError, match="state names"):
        follow(checkpoint, renamed)


@pytest.fixture(scope="module")
def reacher(tmp_path_factory):
    """(checkpoint, dataset with the full state, dataset without) of Reacher-v5."""
    root = tmp_path_factory.mktemp("follow_gym")
    collection = collect_gym("Reacher-v5", episodes=12, policy="scripted", seed=0)
    full = read_dataset(write_collection(collection, root / "full"))
    episodes = [Episode(state=e.state, action=e.action, timestamp=e.timestamp) for e in full]
    bare = write_dataset(
        root / "bare",
        episodes,
        fps=full.info.fps,
        state_names=full.info.state_names,
        action_names=full.info.action_names,
        source=full.info.source,
    )
    run = train(full, config(epochs=5), root / "run", progress=False)
    return run.checkpoint, full, bare


@requires_gym
def test_gym_follow_runs(reacher):
    checkpoint, full, _ = reacher
    result = follow(checkpoint, full, episode=0, seconds=0.4)
    # Reacher's dt is 0.02 s
    assert result.steps == 20
    assert result.followed.shape == result.open_loop.shape == (21, full.info.n_state)
    for name, error in result.errors.items():
        assert np.all(np.isfinite(error)), name
        # the runs start on the recorded observation
        assert error[0] < 1e-9, name
    # the replay of a deterministic environment from its recorded state: measured max 0.0
    assert result.errors["open_loop"].max() < 1e-6
    assert result.oracle is not None and "mj_inverse" in result.oracle_note
    assert json.loads(result.to_json())["source"] == "gym:Reacher-v5"


@requires_gym
def test_gym_needs_full_state(reacher):
    checkpoint, full, bare = reacher
    with pytest.raises(InputError, match="full state"):
        follow(checkpoint, bare)
    with pytest.raises(InputError, match="plant"):
        follow(checkpoint, full, plant=Plant())
    with pytest.raises(InputError, match="out of range"):
        follow(checkpoint, full, episode=len(full))
