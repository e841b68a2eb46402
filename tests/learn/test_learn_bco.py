"""Behavioural cloning from observation on Reacher-v5: returns, IDM accuracy, repeatability.

Measured on seeds 0-4 with the settings below (100 random exploration episodes, 30 state-only
demonstrations, 20 evaluation episodes): the IDM's labelling R^2 0.983-0.993, BCO's normalised
score (bco - random) / (expert - random) 0.97-1.08 and BC on the true actions 0.97-1.05 (the
cloned policies average out the scripted expert's action noise, so they can beat it). The
bounds below leave a margin for other platforms' floating point.
"""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("mujoco")
pytest.importorskip("gymnasium")

from invdyn import InputError  # noqa: E402
from invdyn.learn.bco import BCOResult, BCOSettings, bco, evaluate_policy  # noqa: E402

SETTINGS = BCOSettings(num_threads=1, policy_epochs=100, eval_episodes=20)
SIZES = {"expert_episodes": 30, "exploration_episodes": 100}


@pytest.fixture(scope="module")
def result() -> BCOResult:
    return bco("Reacher-v5", seed=0, settings=SETTINGS, **SIZES)


def test_bco_reaches_the_expert(result: BCOResult) -> None:
    # the scripted expert is far above the random policy; Reacher's returns are negative
    assert result.random_return < -35.0
    assert -15.0 < result.expert_return < 0.0
    assert result.idm_r2 > 0.95
    assert result.idm_train_r2 > 0.9
    # the acceptance metric: BCO reaches at least 80 % of the expert's (normalised) return
    assert result.normalised_score >= 0.8
    # behavioural cloning on the true actions is close to the expert
    assert result.bc_normalised_score >= 0.9
    assert abs(result.bc_return - result.expert_return) < 3.0
    span = result.expert_return - result.random_return
    assert math.isclose(result.normalised_score, (result.bco_return - result.random_return) / span)
    assert math.isclose(result.return_ratio, result.bco_return / result.expert_return)


def test_result_json(result: BCOResult) -> None:
    data = json.loads(result.to_json())
    assert data["normalised_score"] == result.normalised_score
    assert data["settings"]["expert_episodes"] == 30
    assert data["settings"]["bco"]["policy_hidden"] == list(SETTINGS.policy_hidden)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.bco_return = 0.0  # type: ignore[misc]


def test_bco_repeats_with_the_same_seed(result: BCOResult) -> None:
    again = bco("Reacher-v5", seed=0, settings=SETTINGS, **SIZES)
    assert again.to_dict() == result.to_dict()


def test_evaluation_is_seeded() -> None:
    first = evaluate_policy("Reacher-v5", "random", episodes=3, seed=5)
    assert evaluate_policy("Reacher-v5", "random", episodes=3, seed=5) == first
    assert evaluate_policy("Reacher-v5", "random", episodes=3, seed=6) != first
    # a callable policy; zero action costs nothing, so only the distance is paid
    zero = evaluate_policy("Reacher-v5", lambda obs: [0.0, 0.0], episodes=3, seed=5)
    assert zero < 0.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"env_id": "NoSuchEnv-v0"}, "unknown Gymnasium environment"),
        ({"env_id": "HalfCheetah-v5"}, "scripted expert"),
        ({"expert_episodes": 0}, "expert_episodes"),
        ({"exploration_episodes": 0}, "exploration_episodes"),
        ({"exploration_episodes": 1}, "exploration_episodes"),
        ({"seed": -1}, "seed"),
        ({"idm_config": "small"}, "idm_config"),
        ({"settings": {"eval_episodes": 1}}, "settings"),
    ],
)
def test_bad_input(kwargs: dict[str, object], match: str) -> None:
    arguments: dict[str, object] = {"env_id": "Reacher-v5", **SIZES} | kwargs
    with pytest.raises(InputError, match=match):
        bco(**arguments)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("exploration", "scripted"),
        ("eval_episodes", 0),
        ("steps_per_episode", 0),
        ("policy_hidden", (0,)),
        ("policy_activation", "sigmoid"),
        ("policy_epochs", 0),
        ("policy_batch_size", 0),
        ("policy_lr", 0.0),
        ("policy_lr", math.nan),
        ("num_threads", -1),
    ],
)
def test_bad_settings(field: str, value: object) -> None:
    with pytest.raises(InputError, match=field):
        BCOSettings(**{field: value})  # type: ignore[arg-type]


def test_evaluate_policy_bad_input() -> None:
    with pytest.raises(InputError, match="episodes"):
        evaluate_policy("Reacher-v5", "random", episodes=0)
    with pytest.raises(InputError, match="policy"):
        evaluate_policy("Reacher-v5", 3, episodes=1)
