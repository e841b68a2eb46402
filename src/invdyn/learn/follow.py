"""Acting on desired next states: a trained IDM drives the simulated system along a recording.

`follow` takes one recorded episode of a dataset as the reference trajectory ``r_0 .. r_{T-1}``
and simulates the system it was recorded on three times from the same initial state:

- ``followed``: at every step ``k`` the model sees the simulated states ``s_{k-C} .. s_k``
  (context ``C``) and the reference ``r_{k+H}`` (horizon ``H``) as the window
  ``o_{t-C} .. o_t, o_{t+H}`` it was trained on, and its action (the first of a chunk) is
  applied for one frame; the next step asks again from where the system actually is, so the
  model closes the loop on its own errors.
- ``open_loop``: the recorded actions replayed, ``a_k``, whatever the state; errors of the
  simulator's initial state and chaos grow unchecked.
- ``oracle``: the known physics acting on the same desired next state, when known. For an invdyn
  robot, ``tau_k = rnea(model, q_k, v_k, (v^r_{k+1} - v_k) * fps)`` at the simulated state (exact
  for one semi-implicit Euler step per frame, the mean acceleration over the frame otherwise).
  For a Gymnasium MuJoCo environment, ``mj_inverse`` at the simulated ``(qpos, qvel)`` with
  ``qacc = (qvel^r_{k+1} - qvel_k) * fps``, solved for ``ctrl`` as `invdyn.learn.evaluate`'s
  oracle does (approximate with several or RK4 steps per frame).

The run starts at frame ``C`` of the episode, so that the first window's context is the
recording's own history, and takes ``T - C - H`` steps (fewer with `seconds`). The error of
each run at each frame is the Euclidean norm over the state of ``s_k - r_k``, in the state's
units (the observation vector for Gymnasium).

Sources:

- ``"invdyn:<robot>"`` (`invdyn.sim.collect_robot`, state ``(q, v)``): `invdyn.sim.rollout` at
  ``control_rate = fps`` from the episode's state at frame ``C``; the plant is the exact one at
  the dataset's physics timestep (metadata ``physics_timestep``), or the caller's `Plant`: a
  payload, friction or damping the recording did not have makes the open-loop replay drift,
  which a model that closes the loop corrects (without one, the replay is exact).
- ``"gym:<env id>"`` (`invdyn.sim.collect_gym` written by `write_collection`): the environment
  is made and reset, MuJoCo's full state set from the dataset's `MUJOCO_STATE`
  (``env.unwrapped.set_state``), and stepped (``env.unwrapped.step``, terminations ignored)
  with actions clipped to the action space. A dataset without the full state is refused.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import torch

from invdyn.errors import DataError, InputError, InvdynError
from invdyn.learn.checkpoint import load_checkpoint
from invdyn.learn.data import (
    MUJOCO_STATE,
    Dataset,
    read_dataset,
    read_frame_columns,
    read_metadata,
)
from invdyn.learn.keys import OBS_STATE
from invdyn.learn.models import Float, InverseDynamicsModel
from invdyn.sim.plant import Plant


class _Runs(NamedTuple):
    """(n + 1, n_state) states of the three runs (the oracle's None if unknown), and what the
    oracle computes or why it is missing."""

    followed: Float
    open_loop: Float
    oracle: Float | None
    note: str


# (k, (start + k + 1, n_state) the recorded states before the start, then the simulated ones)
# -> (n_action,) the action of step k
_Policy = Callable[[int, Float], Float]


@dataclasses.dataclass(frozen=True, eq=False)
class FollowResult:
    """The reference episode and the three runs that try to reproduce it.

    Attributes:
      source: the dataset's source (``"invdyn:<robot>"`` or ``"gym:<env id>"``).
      episode: index of the reference episode in the dataset.
      start: frame of the episode the runs start from (the model's context ``C``).
      horizon: the model's horizon ``H``: the reference it is asked to reach.
      time: (n + 1,) time of each compared frame, seconds from the episode's start.
      reference: (n + 1, n_state) the recorded states ``r_start .. r_{start+n}``.
      followed: (n + 1, n_state) the states the model's actions led to.
      open_loop: (n + 1, n_state) the states of the recorded actions replayed.
      oracle: (n + 1, n_state) the states of the physics oracle's actions, or None.
      actions: (n, n_action) the model's actions.
      errors: run name (``"followed"``, ``"open_loop"``, ``"oracle"``) -> (n + 1,) the norm over
        the state of its error against the reference at each frame.
      oracle_note: what the oracle computes, or why it is missing.
    """

    source: str
    episode: int
    start: int
    horizon: int
    time: Float
    reference: Float
    followed: Float
    open_loop: Float
    oracle: Float | None
    actions: Float
    errors: dict[str, Float]
    oracle_note: str

    @property
    def steps(self) -> int:
        """Number of simulated steps ``n``."""
        return int(self.actions.shape[0])

    @property
    def final_errors(self) -> dict[str, float]:
        """Each run's error at the last frame."""
        return {name: float(e[-1]) for name, e in self.errors.items()}

    @property
    def mean_errors(self) -> dict[str, float]:
        """Each run's error averaged over the frames."""
        return {name: float(e.mean()) for name, e in self.errors.items()}

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON types: summary numbers, then every trajectory."""
        return {
            "source": self.source,
            "episode": self.episode,
            "start": self.start,
            "horizon": self.horizon,
            "steps": self.steps,
            "final_errors": self.final_errors,
            "mean_errors": self.mean_errors,
            "oracle": {"available": self.oracle is not None, "note": self.oracle_note},
            "time": self.time.tolist(),
            "errors": {name: e.tolist() for name, e in self.errors.items()},
            "reference": self.reference.tolist(),
            "followed": self.followed.tolist(),
            "open_loop": self.open_loop.tolist(),
            "oracle_states": None if self.oracle is None else self.oracle.tolist(),
            "actions": self.actions.tolist(),
        }

    def to_json(self) -> str:
        """`to_dict` as indented JSON text."""
        return json.dumps(self.to_dict(), indent=2, allow_nan=True) + "\n"


def follow(
    checkpoint_dir: str | os.PathLike[str],
    dataset: Dataset | str | os.PathLike[str],
    *,
    episode: int = 0,
    seconds: float | None = None,
    plant: Plant | None = None,
) -> FollowResult:
    """Drive the simulated system along a recorded episode with a checkpoint's model.

    See the module docstring for the three runs and the sources.

    Args:
      checkpoint_dir: a checkpoint directory (``out_dir/checkpoint`` of a training run).
      dataset: a dataset read by `invdyn.learn.data.read_dataset`, or its directory.
      episode: index of the reference episode (negative counts from the end).
      seconds: follow at most this many seconds of the episode (from frame ``C``); None for
        all of it.
      plant: for an invdyn robot, the simulated plant (a payload, friction, damping or sensor
        noise the recording did not have: the open-loop replay drifts, a model that closes the
        loop corrects); None for the exact plant at the dataset's physics timestep. Not taken
        for Gymnasium sources.

    Returns:
      The reference, the three runs and their errors.

    Raises:
      InputError: a bad `episode` or `seconds`, an episode shorter than ``C + H + 1`` frames,
        a dataset without actions or of another size than the model, a source that cannot be
        simulated (not ``invdyn:`` or ``gym:``, a robot whose state names differ, a Gymnasium
        dataset without MuJoCo's full state).
      DataError: the checkpoint or the dataset is missing or corrupt.
      InvdynError: a simulation diverged.
    """
    model = load_checkpoint(checkpoint_dir).model
    data = dataset if isinstance(dataset, Dataset) else read_dataset(dataset)
    info = data.info
    if info.action_names is None:
        raise InputError(f"dataset {data.path} has no actions to replay")
    if (info.n_state, info.n_action) != (model.n_state, model.n_action):
        raise InputError(
            f"dataset {data.path} has n_state, n_action = {info.n_state}, {info.n_action}; "
            f"the checkpoint's model takes {model.n_state}, {model.n_action}"
        )
    index = _episode_index(episode, len(data))
    recorded = data.episode(index)
    states = np.asarray(recorded.state, dtype=np.float64)
    actions = np.asarray(recorded.action, dtype=np.float64)
    timestamp = np.asarray(recorded.timestamp, dtype=np.float64)

    # the span: from frame C, n steps, each asking for the reference H frames ahead
    context, horizon = model.config.context, model.config.horizon
    available = len(states) - context - horizon
    if available < 1:
        raise InputError(
            f"episode {index} has {len(states)} frames; following needs more than context + "
            f"horizon = {context + horizon}"
        )
    steps = available
    if seconds is not None:
        if isinstance(seconds, bool) or not isinstance(seconds, int | float | np.floating):
            raise InputError(f"seconds must be a number, got {seconds!r}")
        if not math.isfinite(seconds) or seconds <= 0:
            raise InputError(f"seconds must be > 0, got {seconds}")
        steps = min(available, max(1, round(seconds * info.fps)))
    start = context
    reference = states[start : start + steps + 1]

    # the model's policy: the simulated history and the reference H frames ahead
    chosen: list[Float] = []

    def idm(k: int, history: Float) -> Float:
        window = np.concatenate([history[-(context + 1) :], states[None, start + k + horizon]])
        action = _predict(model, window)
        chosen.append(action)
        return action

    def replay(k: int, history: Float) -> Float:
        return actions[start + k]

    source = info.source
    if plant is not None and not source.startswith("invdyn:"):
        raise InputError(f"plant is for invdyn robots; dataset {data.path} is of {source!r}")
    if source.startswith("invdyn:"):
        runs = _robot_runs(data, states, start, steps, idm, replay, plant)
    elif source.startswith("gym:"):
        runs = _gym_runs(data, index, states, start, steps, idm, replay)
    else:
        raise InputError(
            f"dataset {data.path} has source {source!r}: follow simulates invdyn robots "
            "('invdyn:<robot>') and Gymnasium MuJoCo environments ('gym:<env id>')"
        )
    named = {"followed": runs.followed, "open_loop": runs.open_loop, "oracle": runs.oracle}
    errors = {
        name: np.linalg.norm(run - reference, axis=1)
        for name, run in named.items()
        if run is not None
    }
    return FollowResult(
        source=source,
        episode=index,
        start=start,
        horizon=horizon,
        time=timestamp[start : start + steps + 1],
        reference=reference,
        followed=runs.followed,
        open_loop=runs.open_loop,
        oracle=runs.oracle,
        actions=np.array(chosen[:steps]).reshape(steps, info.n_action),
        errors=errors,
        oracle_note=runs.note,
    )


# checks and the model


def _episode_index(episode: Any, count: int) -> int:
    """The episode index, checked; negative ones count from the end."""
    if isinstance(episode, bool | np.bool_) or not isinstance(episode, int | np.integer):
        raise InputError(f"episode must be an integer index, got {episode!r}")
    if not -count <= episode < count:
        raise InputError(f"episode {episode} out of range: the dataset has {count} episodes")
    return int(episode) % count


@torch.no_grad()
def _predict(model: InverseDynamicsModel, window: Float) -> Float:
    """(n_action,) the model's action (the first of a chunk) for one (C + 2, n_state) window."""
    mean, _ = model.predict_with_uncertainty({OBS_STATE: window[None]})
    return mean.double().cpu().numpy().reshape(-1, model.n_action)[0]


# invdyn robots


def _robot_runs(
    data: Dataset,
    states: Float,
    start: int,
    steps: int,
    idm: _Policy,
    replay: _Policy,
    plant: Plant | None,
) -> _Runs:
    """The three runs of an invdyn robot in `invdyn.sim.rollout`, and the oracle's note."""
    import invdyn
    from invdyn.sim.rollout import csv_columns, rollout

    info = data.info
    robot = info.source.removeprefix("invdyn:")
    try:
        model = invdyn.load(robot)
    except (InvdynError, OSError, ValueError) as exc:
        raise InputError(
            f"robot {robot!r} of source {info.source!r} cannot be loaded: {exc}"
        ) from None
    state_names = tuple(c for c in csv_columns(model) if c.startswith(("q.", "v.")))
    if info.state_names != state_names:
        raise InputError(
            f"the dataset's state names {list(info.state_names)} are not the (q, v) of invdyn's "
            f"{robot!r} ({list(state_names)})"
        )
    if plant is None:
        metadata = read_metadata(data.path)
        plant = Plant(timestep=float(metadata.get("physics_timestep", Plant().timestep)))
    elif not isinstance(plant, Plant):
        raise InputError(f"plant must be an invdyn.sim.Plant, got {type(plant).__name__}")
    timestep = plant.timestep
    nq, fps = model.nq, info.fps
    history = [states[k] for k in range(start)]

    def run(policy: _Policy) -> Float:
        # the controller sees the simulated state; past the last step it is not simulated
        simulated = list(history)

        def controller(t: float, q: Float, v: Float) -> Float:
            k = round(t * fps)
            simulated.append(np.concatenate([q, v]))
            if k >= steps:
                return np.zeros(model.nv)
            return policy(k, np.array(simulated))

        out = rollout(
            model,
            controller,
            q0=states[start, :nq],
            v0=states[start, nq:],
            duration=steps / fps,
            control_rate=fps,
            plant=plant,
        )
        return np.concatenate([out.q, out.v], axis=1)[: steps + 1]

    def oracle(k: int, simulated: Float) -> Float:
        q, v = simulated[-1, :nq], simulated[-1, nq:]
        v_next = states[start + k + 1, nq:]
        return np.asarray(invdyn.rnea(model, q, v, (v_next - v) * fps))

    note = (
        f"rnea({robot}, q_k, v_k, (v_ref_(k+1) - v_k) * fps) at the simulated state, fps = "
        f"{fps:g}, physics timestep {timestep:g} s"
    )
    return _Runs(run(idm), run(replay), run(oracle), note)


# gymnasium environments


def _gym_runs(
    data: Dataset,
    index: int,
    states: Float,
    start: int,
    steps: int,
    idm: _Policy,
    replay: _Policy,
) -> _Runs:
    """The three runs of a Gymnasium MuJoCo environment, and the oracle's note."""
    source = data.info.source
    env_id = source.removeprefix("gym:")
    try:
        full_all = read_frame_columns(data.path, [MUJOCO_STATE])[MUJOCO_STATE]
    except DataError:
        raise InputError(
            f"{source}: the dataset {data.path} has no MuJoCo full state ({MUJOCO_STATE}) to "
            "start the simulation from; collect with invdyn.sim.collect_gym and write with "
            "invdyn.learn.data.write_collection"
        ) from None
    metadata = read_metadata(data.path)
    try:
        import gymnasium
        import mujoco
    except ImportError as exc:
        raise ImportError(f"following {source} needs gymnasium and mujoco: {exc}") from exc
    from invdyn.learn.evaluate import _inverse_ctrl, _unsupported_actuators

    # the episode's full states
    lengths = [len(data.episode(i)) for i in range(len(data))]
    first = sum(lengths[:index])
    full = np.asarray(full_all[first : first + lengths[index]], dtype=np.float64)
    try:
        env = gymnasium.make(env_id)
    except Exception as exc:  # unknown ids, missing dependencies, bad assets
        raise InputError(f"{source}: the environment cannot be made: {exc}") from None
    try:
        base: Any = env.unwrapped
        model = base.model
        nq, nv = int(model.nq), int(model.nv)
        if full.ndim != 2 or full.shape[1] != nq + nv:
            raise InputError(
                f"{source}: the dataset's {MUJOCO_STATE} has {full.shape[1:]} entries, the "
                f"environment's (qpos, qvel) {nq + nv}"
            )
        # the physics the collection recorded in place of the registered one
        if "physics_timestep" in metadata:
            model.opt.timestep = float(metadata["physics_timestep"])
        if metadata.get("integrator") is not None:
            name = f"mjINT_{str(metadata['integrator']).upper()}"
            if hasattr(mujoco.mjtIntegrator, name):
                model.opt.integrator = int(getattr(mujoco.mjtIntegrator, name))
        space: Any = env.action_space
        low = np.asarray(space.low, dtype=np.float64)
        high = np.asarray(space.high, dtype=np.float64)
        period = 1.0 / data.info.fps

        def run(policy: _Policy) -> Float:
            # reset, then the episode's state at the start frame
            env.reset(seed=0)
            base.set_state(full[start, :nq], full[start, nq:])
            simulated = [states[k] for k in range(start)]
            simulated.append(np.asarray(base._get_obs(), dtype=np.float64).ravel())
            for k in range(steps):
                action = np.clip(policy(k, np.array(simulated)), low, high)
                observation, *_ = base.step(action.astype(space.dtype))
                simulated.append(np.asarray(observation, dtype=np.float64).ravel())
            return np.array(simulated[start:])

        def oracle(k: int, simulated: Float) -> Float:
            state = np.concatenate([base.data.qpos, base.data.qvel])[None]
            qvel_next = full[start + k + 1, nq:][None]
            return _inverse_ctrl(mujoco, model, state, qvel_next, period)[0]

        followed, open_loop = run(idm), run(replay)
        unsupported = _unsupported_actuators(mujoco, model)
        oracle_run = None
        if unsupported:
            note = f"{source}: the oracle cannot invert actuators {unsupported}"
        else:
            oracle_run = run(oracle)
            note = (
                f"mujoco.mj_inverse({env_id}) at the simulated (qpos_k, qvel_k) with qacc = "
                "(qvel_ref_(k+1) - qvel_k) * fps, solved for ctrl by least squares: exact only "
                "with one Euler (or implicit) step per frame"
            )
    finally:
        env.close()
    return _Runs(followed, open_loop, oracle_run, note)
