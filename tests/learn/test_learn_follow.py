"""Acting on desired next states: a trained IDM follows a held-out recording in simulation.

A double pendulum collected at 100 Hz (ten physics steps per frame); a small MLP learns its
inverse dynamics (held-out R^2 about 0.999 and 0.992) and then drives the simulator along a
held-out episode, asking at each step for the torque from the simulated state to a desired
state that it can reach on the way back to the recording. With the exact plant the recorded
torques replay the episode exactly; with a payload the recording did not have, the replay
drifts and the model, closing the loop, does not.
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
from invdyn.learn.datasets import Episode, read_dataset, write_collection, write_dataset
from invdyn.learn.follow import Configurations, FollowResult, follow, reachable
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
    # the oracle's mean acceleration over ten physics steps: measured max 1.3e-3
    assert errors["oracle"].max() < 5e-3
    # the model stays near (measured final 0.0013, mean 0.0054; state in rad and rad/s)
    assert result.final_errors["followed"] < 0.02
    assert result.mean_errors["followed"] < 0.02
    # the model's actions are near the recorded ones (measured RMS difference 0.028 std)
    recorded = held.episode(0).action[:n]
    assert np.sqrt(np.mean((result.actions - recorded) ** 2)) < 0.1 * np.std(recorded)


def test_model_closes_the_loop_where_replay_drifts(robot):
    checkpoint, held = robot
    plant = Plant(payload=0.3)
    results = [follow(checkpoint, held, episode=e, plant=plant) for e in range(HELD_OUT)]
    final = {k: np.array([r.final_errors[k] for r in results]) for k in results[0].errors}
    mean = {k: np.array([r.mean_errors[k] for r in results]) for k in results[0].errors}
    # measured final errors: followed (0.0014, 0.0033, 0.0077), open loop (0.31, 3.79, 8.58),
    # oracle (0.0021, 0.0031, 0.0030): at least 5x below the replay in every episode
    assert np.all(5 * final["followed"] < final["open_loop"]), final
    # measured mean errors: followed (0.011, 0.007, 0.011), open loop (0.70, 2.55, 7.24)
    assert np.all(5 * mean["followed"] < mean["open_loop"]), mean
    # the oracle knows the physics but not the payload: close, not exact
    assert np.all(final["oracle"] < 0.05) and np.all(mean["oracle"] < 0.05), final


def test_position_gain_asks_position_errors_back(robot):
    """With gain 0 only the reference's velocities are asked for, so a position error the
    payload causes stays; the default gain asks it back."""
    checkpoint, held = robot
    plant = Plant(payload=0.3)
    n = 2  # the joint positions come first in the state (q, v)
    position = {
        gain: np.abs(follow(checkpoint, held, episode=2, plant=plant, position_gain=gain)
                     .followed[:, :n] - held.episode(2).state[:, :n]).mean()
        for gain in (0.0, 10.0)
    }  # fmt: skip
    assert position[10.0] < 0.5 * position[0.0], position


def test_reachable_states():
    def add(q, dq):
        return q + dq

    def subtract(q0, q1):
        return q1 - q0

    space = Configurations(add, subtract)
    q, v = np.array([0.1, -0.2]), np.array([1.0, 0.5])
    # on the reference: its velocity, reached by a constant acceleration
    state = reachable(q, v, q, np.array([2.0, 0.5]), 0.1, 10.0, space)
    np.testing.assert_allclose(state, [0.1 + 0.15, -0.2 + 0.05, 2.0, 0.5])
    # behind the reference: a faster velocity, by the gain times the position error
    state = reachable(q, v, q + 0.01, v, 0.1, 10.0, space)
    np.testing.assert_allclose(state[2:], v + 0.1)
    np.testing.assert_allclose(state[:2], q + 0.05 * (2 * v + 0.1))


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


def test_a_recording_on_a_changed_plant_is_replayed_on_that_plant(robot, tmp_path):
    """The collection records its plant (damping, payload, torque limits, ...) and follow
    simulates it: the recorded actions replay the episode exactly; a plant given in its
    place is simulated instead."""
    from invdyn.learn.follow import recording_plant
    from invdyn.sim.plant import plant_record, recorded_plant

    checkpoint, _ = robot
    model = invdyn.load("double_pendulum")
    plant = Plant(damping=(0.5, 0.2), payload=0.2, torque_limit=(np.inf, 40.0), seed=3)
    assert recorded_plant(json.loads(json.dumps(plant_record(plant)))) == plant
    changed = collect_robot(model, episodes=1, duration=0.5, plant=plant, seed=2)
    held = read_dataset(write_collection(changed, tmp_path / "changed"))
    assert recording_plant(held.path) == plant
    assert follow(checkpoint, held).errors["open_loop"].max() < 1e-9
    assert follow(checkpoint, held, plant=Plant()).errors["open_loop"][-1] > 1e-3
    with pytest.raises(InputError, match="unknown options gears"):
        recorded_plant({"gears": 2})


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


def test_demonstrations_without_actions_are_followed(robot, tmp_path):
    """A dataset of states alone: the model and the oracle follow it, with no replay run."""
    checkpoint, held = robot
    info = held.info
    bare = write_dataset(
        tmp_path / "demonstrations",
        [Episode(state=e.state, action=None, timestamp=e.timestamp) for e in held],
        fps=info.fps,
        state_names=info.state_names,
        source=info.source,
    )
    result = follow(checkpoint, bare, episode=0, seconds=0.5)
    full = follow(checkpoint, held, episode=0, seconds=0.5)
    assert result.open_loop is None and set(result.errors) == {"followed", "oracle"}
    np.testing.assert_array_equal(result.followed, full.followed)
    assert json.loads(result.to_json())["open_loop"] is None


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
    for gain in (-1.0, float("nan"), float("inf"), True, "10"):
        with pytest.raises(InputError, match="position_gain"):
            follow(checkpoint, held, position_gain=gain)  # type: ignore[arg-type]
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
    with pytest.raises(InputError, match="out of range"):
        follow(checkpoint, full, episode=len(full))


@requires_gym
def test_gym_plant_mismatch_drifts_the_replay(reacher):
    checkpoint, full, _ = reacher
    exact = follow(checkpoint, full, episode=1, seconds=1.0)
    heavy_plant = Plant(mass_scale=3.0, damping=0.5)
    heavy = follow(checkpoint, full, episode=1, seconds=1.0, plant=heavy_plant)
    # the recorded actions no longer reproduce the recording (exact: below 1e-6)
    assert heavy.errors["open_loop"][-1] > 1e-3 > exact.errors["open_loop"][-1]
    # the oracle still inverts the recorded physics, so on the changed plant it tracks worse
    assert heavy.errors["oracle"].mean() > exact.errors["oracle"].mean()


@requires_gym
@pytest.mark.parametrize(
    ("plant", "match"),
    [
        (Plant(payload=1.0), "payload"),
        (Plant(delay=2), "delay"),
        (Plant(timestep=0.005), "timestep"),
        (Plant(damping=(0.1, 0.2, 0.3)), "3 entries"),
        ("heavy", "invdyn.sim.Plant"),
    ],
)
def test_gym_plant_bad_options(reacher, plant, match):
    checkpoint, full, _ = reacher
    with pytest.raises(InputError, match=match):
        follow(checkpoint, full, plant=plant)
