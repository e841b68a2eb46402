"""Following goal frames with a model of frames, in a Gymnasium MuJoCo environment (Reacher).

A model trained for one epoch on a few rendered episodes is no good at it; these tests check
the loop itself: windows of what the simulation shows and of the goal frames, the replayed
recording exact, errors measured against the reference, the CLI, and bad input. The accuracy
is measured on a trained model in the README.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("gymnasium")
pytest.importorskip("av")

from invdyn import InputError  # noqa: E402
from invdyn.cli import main  # noqa: E402
from invdyn.learn.config import Config, preset  # noqa: E402
from invdyn.learn.datasets import read_dataset, write_collection  # noqa: E402
from invdyn.learn.goals import follow_frames  # noqa: E402
from invdyn.learn.train import train  # noqa: E402
from invdyn.sim.collect import collect_gym  # noqa: E402
from invdyn.sim.render import render_collection  # noqa: E402


def config(**model: object) -> Config:
    base = preset("small")
    options = {"cameras": "top", "state": False, "context": 1, "future": 1, "encoder": (8,)}
    return Config(
        model=dataclasses.replace(base.model, **(options | model)),  # type: ignore[arg-type]
        train=dataclasses.replace(base.train, epochs=1, num_threads=1),
    )


@pytest.fixture(scope="module")
def reacher(tmp_path_factory):
    """(dataset, frames checkpoint) of six short Reacher episodes seen from the top camera."""
    root = tmp_path_factory.mktemp("goals")
    collection = collect_gym(
        "Reacher-v5", episodes=6, steps_per_episode=12, policy="bounded", seed=0
    )
    frames = list(render_collection(collection, cameras=["top"], width=32, height=32))
    videos = {"top": [episode["top"] for episode in frames]}
    data = read_dataset(write_collection(collection, root / "reacher", videos=videos))
    result = train(data, config(), root / "run", progress=False)
    return data, result.checkpoint


def test_following_goal_frames(reacher):
    data, checkpoint = reacher
    for replan in (True, False):
        result = follow_frames(checkpoint, data, episode=-1, replan=replan)
        # context 1, horizon 1, future 1: 13 frames give 13 - 1 - 2 = 10 steps from frame 1
        assert result.start == 1 and result.steps == 10
        assert result.actions.shape == (10, 2) and np.all(np.isfinite(result.actions))
        for errors in result.errors.values():
            assert errors.shape == (11,) and errors[0] == pytest.approx(0, abs=1e-12)
        # replaying the recording in the recorded physics retraces it, to the precision of the
        # stored start state (measured: 5e-6 m)
        assert np.max(result.errors["open_loop"]) < 1e-4
        assert np.all(result.errors["followed"] < 1.0)  # inside Reacher's arena
    short = follow_frames(checkpoint, data, seconds=0.1)
    assert short.steps == 5


def test_cli_follows_goal_frames(reacher, tmp_path, capsys):
    data, checkpoint = reacher
    out = tmp_path / "goals.json"
    code = main(["follow", str(checkpoint), str(data.path), "--episode", "2", "--json", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "replanned goal frames" in printed and "final body error" in printed
    assert out.is_file()


def test_goal_frames_bad_input(reacher, tmp_path):
    data, _ = reacher
    state_model = train(data, config(state=True), tmp_path / "state", progress=False)
    with pytest.raises(
        InputError, match=r"of one camera's frames alone .*; this one sees the state and"
    ):
        follow_frames(state_model.checkpoint, data)
    _, checkpoint = reacher
    with pytest.raises(InputError, match="out of range"):
        follow_frames(checkpoint, data, episode=6)
    with pytest.raises(InputError, match="seconds"):
        follow_frames(checkpoint, data, seconds=-1.0)
    with pytest.raises(InputError, match="position_gain"):
        follow_frames(checkpoint, data, position_gain=float("nan"))
