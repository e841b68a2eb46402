"""Data collection for inverse dynamics models: robot episodes in MuJoCo and Gymnasium episodes.

Physics check: at a 1 kHz control rate with the 1 ms physics step the action is held for exactly
one step, and MuJoCo's integrator (implicitfast, no damping: semi-implicit Euler) gives
``v[t+1] = v[t] + dt * aba(q[t], v[t], action[t])``, so ``rnea(q[t], v[t], (v[t+1] - v[t]) / dt)``
returns ``action[t]`` up to rounding (measured: at most 5e-13 N m on the double pendulum and the
Panda; bound 1e-6).
"""

from __future__ import annotations

import importlib.util
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import invdyn
from conftest import load_quietly, requires_erd
from invdyn.model import Model

pytest.importorskip("mujoco")

from invdyn.io.robots import robot_path
from invdyn.sim import CollectedEpisode, Collection, collect_gym, collect_robot
from invdyn.sim.collect import load_robot_source, robot_source

requires_gym = pytest.mark.skipif(
    importlib.util.find_spec("gymnasium") is None, reason="gymnasium is not installed"
)

# N m: rnea of the finite-differenced states against the recorded action (measured <= 5e-13)
PHYSICS_TOLERANCE = 1e-6


pytestmark = pytest.mark.usefixtures("mujoco_log_elsewhere")


def _check_robot(model: Model, collection: Collection, episodes: int, frames: int) -> None:
    """Shapes, names, limits and the physics of a robot collection at 1 kHz."""
    assert isinstance(collection, Collection) and len(collection) == episodes
    assert collection.fps == 1000.0 and collection.source == f"invdyn:{model.name}"
    assert len(collection.state_names) == model.nq + model.nv
    assert collection.state_names[0] == f"q.{model.joint_names[0]}"
    assert collection.action_names == tuple(f"tau.{j}" for j in model.joint_names)
    limit = np.where(model.dof_effort_limit > 0.0, model.dof_effort_limit, np.inf)
    for episode in collection.episodes:
        assert isinstance(episode, CollectedEpisode) and len(episode) == frames
        assert episode.state.shape == (frames, model.nq + model.nv)
        assert episode.action.shape == (frames, model.nv)
        assert episode.full_state is not None and episode.full_state.shape[0] == frames
        assert not episode.state.flags.writeable
        np.testing.assert_allclose(episode.timestamp, np.arange(frames) / 1000.0)
        q, v = episode.state[:, : model.nq], episode.state[:, model.nq :]
        assert np.all(q >= model.q_lower) and np.all(q <= model.q_upper)
        assert np.all(np.abs(episode.action) <= limit)
        assert np.ptp(episode.action, axis=0).min() > 0.0
        # the recorded action is the force that produced the recorded motion
        a = np.diff(v, axis=0) * 1000.0
        error = np.abs(invdyn.rnea(model, q[:-1], v[:-1], a) - episode.action[:-1]).max(axis=1)
        assert np.mean(error < PHYSICS_TOLERANCE) >= 0.99, f"max error {error.max():.3e}"


def test_robot_double_pendulum():
    model = load_quietly("double_pendulum")
    collection = collect_robot(model, episodes=2, duration=0.5, control_rate=1000.0, seed=3)
    _check_robot(model, collection, 2, 501)
    first = collection.episodes[0]
    # the same seed reproduces exactly, another seed differs, episodes differ
    again = collect_robot(model, episodes=1, duration=0.5, control_rate=1000.0, seed=3)
    np.testing.assert_array_equal(again.episodes[0].state, first.state)
    np.testing.assert_array_equal(again.episodes[0].action, first.action)
    other = collect_robot(model, episodes=1, duration=0.5, control_rate=1000.0, seed=4)
    assert not np.allclose(other.episodes[0].state, first.state)
    assert not np.allclose(collection.episodes[1].state, first.state)


def test_robot_default_rate_holds_the_action():
    model = load_quietly("double_pendulum")
    collection = collect_robot(model, episodes=1, duration=1.0)
    assert collection.fps == 100.0 and len(collection.episodes[0]) == 101
    assert collection.metadata["control_rate"] == 100.0
    names = collection.full_state_names
    assert names is not None and names[0] == "qpos.joint1" and len(names) == 4


@requires_erd
def test_robot_panda():
    model = load_quietly("panda")
    collection = collect_robot(model, episodes=2, duration=0.5, control_rate=1000.0, seed=0)
    _check_robot(model, collection, 2, 501)
    again = collect_robot(model, episodes=2, duration=0.5, control_rate=1000.0, seed=0)
    for a, b in zip(collection.episodes, again.episodes):
        np.testing.assert_array_equal(a.state, b.state)
        np.testing.assert_array_equal(a.action, b.action)


def test_robot_bad_input():
    model = load_quietly("double_pendulum")
    with pytest.raises(invdyn.InputError, match="model must be an invdyn.Model"):
        collect_robot("double_pendulum", episodes=1)  # type: ignore[arg-type]
    with pytest.raises(invdyn.InputError, match="episodes"):
        collect_robot(model, episodes=0)
    with pytest.raises(invdyn.InputError, match="duration"):
        collect_robot(model, episodes=1, duration=-1.0)
    with pytest.raises(invdyn.InputError, match="seed"):
        collect_robot(model, episodes=1, seed=-1)
    with pytest.raises(invdyn.InputError, match="whole multiple"):
        collect_robot(model, episodes=1, duration=0.1, control_rate=300.0)
    with pytest.raises(invdyn.InputError, match="plant"):
        collect_robot(model, episodes=1, plant="exact")  # type: ignore[arg-type]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", invdyn.ModelWarning)
        floating = invdyn.load("pendulum", floating_base=True)
    with pytest.raises(invdyn.InputError, match="fixed-base"):
        collect_robot(floating, episodes=1)
    # a link of no mass or inertia at the end of the chain: no torque tracks its joint
    massless = model.replace(
        body_mass=np.array([model.body_mass[0], 0.0]),
        body_inertia=model.body_inertia * [[[1]], [[0]]],
    )
    with pytest.raises(invdyn.ModelError, match=r"singular: joints 'joint2' together move no"):
        collect_robot(massless, episodes=1)


def test_the_source_loads_the_robot_that_was_collected(tmp_path):
    builtin = load_quietly("double_pendulum")
    assert robot_source(builtin) == "invdyn:double_pendulum"
    # a copy of the built-in's URDF, its masses doubled, keeps the built-in's robot name
    text = Path(robot_path("double_pendulum")).read_text()
    heavier = re.sub(r'<mass value="([^"]+)"', lambda m: f'<mass value="{2 * float(m[1])!r}"', text)
    assert heavier != text
    path = tmp_path / "heavier.urdf"
    path.write_text(heavier)
    model = load_quietly(str(path))
    assert model.name == builtin.name
    collection = collect_robot(model, episodes=1, duration=0.1, control_rate=100.0, seed=0)
    assert collection.source == f"invdyn:{path.resolve()}"
    again = load_robot_source(collection.source)
    np.testing.assert_array_equal(again.body_mass, 2 * builtin.body_mass)
    # a model changed in memory cannot be loaded again: its source names it, no more
    changed = model.replace(body_mass=3 * builtin.body_mass)
    assert robot_source(changed) == f"model:{model.name}"
    with pytest.raises(invdyn.InputError, match="not an invdyn robot"):
        load_robot_source(robot_source(changed))
    path.unlink()
    with pytest.raises(invdyn.InputError, match="cannot be loaded"):
        load_robot_source(collection.source)


# gymnasium


@requires_gym
@pytest.mark.parametrize("policy", ["random", "noisy", "bounded", "scripted"])
@pytest.mark.parametrize(
    "env_id",
    [
        "HalfCheetah-v5",
        "Hopper-v5",
        "Walker2d-v5",
        "Ant-v5",
        "Reacher-v5",
        "Pusher-v5",
        "InvertedDoublePendulum-v5",
    ],
)
def test_gym(env_id, policy):
    import gymnasium as gym

    steps = 40
    collection = collect_gym(env_id, episodes=2, steps_per_episode=steps, policy=policy, seed=1)
    env = gym.make(env_id)
    low, high = env.action_space.low, env.action_space.high
    n_obs, n_act = env.observation_space.shape[0], env.action_space.shape[0]
    model = env.unwrapped.model
    assert collection.fps == pytest.approx(1.0 / env.unwrapped.dt)
    env.close()
    assert collection.source == f"gym:{env_id}" and len(collection) == 2
    assert len(collection.state_names) == n_obs and len(collection.action_names) == n_act
    assert collection.metadata["policy"] == policy
    for episode in collection.episodes:
        # a falling Hopper, Walker, Ant or pendulum ends its episode early
        n = len(episode.state)
        assert 3 <= n <= steps + 1
        assert episode.state.shape == (n, n_obs) and episode.action.shape == (n, n_act)
        assert episode.full_state is not None
        assert episode.full_state.shape == (n, model.nq + model.nv)
        assert np.all(episode.action >= low) and np.all(episode.action <= high)
    actions = np.concatenate([episode.action for episode in collection.episodes])
    assert np.ptp(actions, axis=0).min() > 0.0
    # reproducible with a seed, different with another
    again = collect_gym(env_id, episodes=2, steps_per_episode=steps, policy=policy, seed=1)
    for a, b in zip(collection.episodes, again.episodes):
        np.testing.assert_array_equal(a.state, b.state)
        np.testing.assert_array_equal(a.action, b.action)
    other = collect_gym(env_id, episodes=1, steps_per_episode=steps, policy=policy, seed=2)
    assert not np.array_equal(other.episodes[0].action, collection.episodes[0].action)


@requires_gym
def test_scripted_gait_is_periodic():
    """Outside Reacher the scripted policy is a gait: one frequency in every action dimension."""
    from invdyn.sim.collect import GAIT_FREQUENCY

    collection = collect_gym("HalfCheetah-v5", episodes=2, steps_per_episode=400, policy="scripted")
    for episode in collection.episodes:
        action = episode.action - episode.action.mean(axis=0)
        spectrum = np.abs(np.fft.rfft(action, axis=0))
        frequency = np.fft.rfftfreq(len(action), d=1.0 / collection.fps)
        peaks = frequency[np.argmax(spectrum[1:], axis=0) + 1]
        # within one frequency bin of each other, and in the drawn range
        assert np.ptp(peaks) <= frequency[1] + 1e-9, peaks
        assert GAIT_FREQUENCY[0] - frequency[1] <= peaks[0] <= GAIT_FREQUENCY[1] + frequency[1]


@requires_gym
def test_bounded_policy_keeps_joints_off_their_limits():
    # Reacher's elbow (qpos[1]) is limited to +-3 rad; smooth random torques pin it there
    def pinned(policy: str) -> float:
        collection = collect_gym("Reacher-v5", episodes=20, policy=policy, seed=3)
        elbow = np.concatenate([e.full_state[:, 1] for e in collection.episodes])
        return float(np.mean(np.abs(elbow) > 2.9))

    # measured: 0.40 (noisy) and 0.004 (bounded)
    assert pinned("noisy") > 0.2
    assert pinned("bounded") < 0.03


@requires_gym
def test_gym_full_state_matches_the_observation():
    # HalfCheetah observes qpos[1:] and qvel
    collection = collect_gym("HalfCheetah-v5", episodes=1, steps_per_episode=20)
    episode = collection.episodes[0]
    assert episode.full_state is not None
    np.testing.assert_array_equal(episode.state, episode.full_state[:, 1:])
    assert collection.full_state_names is not None
    assert collection.full_state_names[0] == "qpos.rootx"
    # the physics a frame spans: 5 Euler steps of 10 ms, HalfCheetah's 20 fps
    metadata = collection.metadata
    assert (metadata["frame_skip"], metadata["integrator"]) == (5, "euler")
    assert metadata["frame_skip"] * metadata["physics_timestep"] == pytest.approx(
        1 / collection.fps
    )


@requires_gym
def test_the_command_says_when_the_environment_ended_episodes_early(tmp_path, capsys):
    """Hopper's scripted gait falls within 30 steps: the summary says so; Reacher, which
    never terminates, runs its steps and says nothing of it."""
    from invdyn.cli import main

    options = ["--steps", "30", "--episodes", "2", "--no-progress"]
    hopper = ["collect", "Hopper-v5", "--policy", "scripted", *options]
    assert main([*hopper, "--out", str(tmp_path / "hopper")]) == 0
    out = capsys.readouterr().out
    assert "2 of 2 episodes ended before 30 steps: the environment terminated them" in out
    assert main(["collect", "Reacher-v5", *options, "--out", str(tmp_path / "reacher")]) == 0
    out = capsys.readouterr().out
    assert "2 episodes, 62 frames" in out and "ended before" not in out


@requires_gym
def test_gym_scripted_reacher_reaches():
    collection = collect_gym("Reacher-v5", episodes=4, policy="scripted", seed=0)
    for episode in collection.episodes:
        # Reacher's default episode is 50 steps; the last 3 observations are tip - target
        assert len(episode) == 51
        distance = np.linalg.norm(episode.state[:, 8:10], axis=1)
        assert distance[-1] < max(0.5 * distance[0], 0.03)


@requires_gym
def test_gym_termination():
    collection = collect_gym("Hopper-v5", episodes=3, steps_per_episode=300, seed=0)
    lengths = [len(episode) for episode in collection.episodes]
    # a random Hopper falls well before 300 steps; no episode is shorter than 2 steps
    assert all(3 <= n < 301 for n in lengths), lengths
    for episode in collection.episodes:
        np.testing.assert_allclose(np.diff(episode.timestamp), 1.0 / collection.fps)


@requires_gym
def test_gym_bad_input():
    with pytest.raises(invdyn.InputError, match="unknown Gymnasium environment.*HalfCheetah-v5"):
        collect_gym("HalfCheetah-v9", episodes=1)
    with pytest.raises(invdyn.InputError, match="not a Gymnasium MuJoCo environment"):
        collect_gym("CartPole-v1", episodes=1)
    with pytest.raises(invdyn.InputError, match="mujoco-py"):
        collect_gym("HalfCheetah-v2", episodes=1)
    with pytest.raises(invdyn.InputError, match="env_id"):
        collect_gym(3, episodes=1)  # type: ignore[arg-type]
    with pytest.raises(invdyn.InputError, match="policy"):
        collect_gym("Reacher-v5", episodes=1, policy="expert")  # type: ignore[arg-type]
    with pytest.raises(invdyn.InputError, match="episodes"):
        collect_gym("Reacher-v5", episodes=0)
    for steps in (0, 1):  # a transition needs two frames
        with pytest.raises(invdyn.InputError, match="steps_per_episode must be an integer >= 2"):
            collect_gym("Reacher-v5", episodes=1, steps_per_episode=steps)


def test_collection_checks_columns():
    episode = CollectedEpisode(state=np.zeros((3, 2)), action=np.zeros((3, 1)), timestamp=[0, 1, 2])
    with pytest.raises(invdyn.InputError, match="state has 2 columns"):
        Collection((episode,), state_names=("a",), action_names=("b",), fps=1.0, source="x")
    with pytest.raises(invdyn.InputError, match="expected \\(3, n\\)"):
        CollectedEpisode(state=np.zeros((2, 2)), action=np.zeros((3, 1)), timestamp=[0, 1, 2])


def test_import_is_lazy():
    import subprocess
    import sys

    code = (
        "import sys, invdyn, invdyn.sim; print('gymnasium' in sys.modules, 'mujoco' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def _same_episodes(a: Collection, b: Collection) -> bool:
    return len(a.episodes) == len(b.episodes) and all(
        np.array_equal(x.state, y.state)
        and np.array_equal(x.action, y.action)
        and np.array_equal(x.full_state, y.full_state)
        for x, y in zip(a.episodes, b.episodes, strict=True)
    )


def test_parallel_collection_equals_serial():
    """Two worker processes draw the same episodes as one, for a robot with a noisy plant and
    for a Gymnasium environment."""
    from invdyn.sim import Plant

    model = load_quietly("double_pendulum")
    options = {"episodes": 5, "duration": 0.5, "seed": 4, "plant": Plant(sensor_noise=1e-3)}
    serial, parallel = (collect_robot(model, **options, workers=w) for w in (1, 2))
    assert _same_episodes(serial, parallel) and serial.metadata == parallel.metadata
    if importlib.util.find_spec("gymnasium") is not None:
        options = {"episodes": 3, "steps_per_episode": 20, "seed": 1, "policy": "noisy"}
        serial, parallel = (collect_gym("Reacher-v5", **options, workers=w) for w in (1, 2))
        assert _same_episodes(serial, parallel)
    with pytest.raises(invdyn.InputError, match="workers"):
        collect_robot(model, episodes=1, workers=0)


def test_an_mjcf_robot_is_read_with_its_joint_damping_and_friction(tmp_path: Path) -> None:
    """As MuJoCo simulates the file: the command line's robots and a dataset's source."""
    from invdyn.io import load_simulated

    path = tmp_path / "arm.xml"
    path.write_text(
        '<mujoco model="arm"><worldbody><body name="link" pos="0 0 1">'
        '<joint name="hinge" axis="0 1 0" damping="3" frictionloss="0.5"/>'
        '<geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03"/></body></worldbody></mujoco>'
    )
    for model in (load_simulated(str(path)), load_robot_source(f"invdyn:{path}")):
        assert model.dof_damping.tolist() == [3.0] and model.dof_friction.tolist() == [0.5]
    # a dataset of the file's robot, as the command line loads it, names the file
    assert robot_source(load_simulated(str(path))) == f"invdyn:{path.resolve()}"
