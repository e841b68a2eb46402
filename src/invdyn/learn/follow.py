"""Acting on desired next states: a trained IDM drives the simulated system along a recording.

`follow` takes one recorded episode of a dataset as the reference trajectory ``r_0 .. r_{T-1}``
and simulates the system it was recorded on three times from the same initial state:

- ``followed``: at every step ``k`` the model sees the simulated states ``s_{k-C} .. s_k``
  (context ``C``) and a desired state ``d_{k+H}`` (horizon ``H``) as the window
  ``o_{t-C} .. o_t, o_{t+H}`` it was trained on, and its action (the first of a chunk) is
  applied for one frame; the next step asks again from where the system actually is, so the
  model closes the loop on its own errors.
- ``open_loop``: the recorded actions replayed, ``a_k``, whatever the state; errors of the
  simulator's initial state, of a plant that differs from the recording, and chaos grow
  unchecked. A dataset without actions (demonstrations to follow) has no such run.
- ``oracle``: the known physics asked for the same desired state one frame ahead, when known.
  For an invdyn robot, ``tau_k = rnea(model, q_k, v_k, (v^d_{k+1} - v_k) * fps)`` at the
  simulated state (exact for one semi-implicit Euler step per frame, the mean acceleration over
  the frame otherwise). For a Gymnasium MuJoCo environment, the ``ctrl`` that takes the
  simulated ``(qpos, qvel)`` to ``qvel^d_{k+1}`` over the frame's physics steps, found as
  `invdyn.learn.evaluate`'s oracle finds it (`invdyn.learn.evaluate.gym_inverse_ctrl`). The
  oracle knows the recorded physics, not a changed plant's.

The desired state is one the simulated state can reach (`reachable`), not the reference itself:
once the system is off the reference, ``r_{k+H}`` no longer follows from ``s_k`` (its position
step disagrees with its velocities), a request no recording contains; a model answers it with
large, wrong actions and the loop diverges (measured on the Panda: a 3x256 MLP with a held-out
R^2 of 0.99 leaves the reference by 14 within 0.25 s). So the desired velocity is the
reference's, ``v^r_{k+H}``, plus `position_gain` times the position error ``q^r_k ⊖ q_k``, and
the desired position is where a constant acceleration from ``v_k`` to that velocity leads in
``H`` frames. Positions and velocities are the robot's ``(q, v)``, or MuJoCo's full state of a
Gymnasium environment, whose observation of the desired state the environment computes.

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
  with actions clipped to the action space. A dataset without the full state is refused. A
  `Plant` may scale the environment's masses and add damping or friction the recording did
  not have (`_mismatch_gym`). The observation of a desired state comes from a second instance
  of the environment set to it (``set_state``, then its observation), so parts of an
  observation that depend on forces (contact forces) are those of that state at rest.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import torch

from invdyn._arrays import check_positive, check_real
from invdyn._files import json_text
from invdyn.errors import DataError, InputError
from invdyn.learn.checkpoint import check_sizes, load_checkpoint, require_state_model
from invdyn.learn.data import (
    INFO_PATH,
    METADATA_KEY,
    MUJOCO_STATE,
    Dataset,
    read_dataset,
    read_frame_columns,
    read_metadata,
)
from invdyn.learn.keys import OBS_STATE
from invdyn.learn.models import Float, InverseDynamicsModel
from invdyn.sim.plant import Plant, recorded_plant

# 1/s, the default rate at which a desired state asks a position error back
POSITION_GAIN = 10.0


class _Runs(NamedTuple):
    """(n + 1, n_state) states of the three runs (the oracle's None if unknown), and what the
    oracle computes or why it is missing."""

    followed: Float
    open_loop: Float | None
    oracle: Float | None
    note: str


# ahead -> (nq + nv) the desired full state `ahead` frames after the current one
_Target = Callable[[int], Float]
# (k, (start + k + 1, n_state) the recorded states before the start, then the simulated ones,
# the desired states of step k) -> (n_action,) the action of step k
_Policy = Callable[[int, Float, _Target], Float]


@dataclasses.dataclass(frozen=True)
class _Span:
    """What every source's runs share: the reference, where they start, for how long, and the
    three ways to act (the oracle's is the source's own)."""

    states: Float  # (T, n_state) the episode's recorded states
    start: int
    steps: int
    fps: float
    position_gain: float
    # the IDM: (k, history as in `_Policy`, (n_state,) the desired observation H frames ahead)
    model: Callable[[int, Float, Float], Float]
    replay: _Policy | None  # None when the dataset has no actions


class Runs:
    """What results of runs from a recorded episode share: ``source``, ``episode``, ``start``
    (the frame the runs start from), ``time`` (n + 1,) of each compared frame, ``actions``
    (n, n_action) the model's and ``errors`` run name -> (n + 1,) the error at each frame."""

    source: str
    episode: int
    start: int
    time: Float
    actions: Float
    errors: dict[str, Float]

    @property
    def steps(self) -> int:
        """Number of simulated steps ``n``."""
        return int(self.actions.shape[0])

    @property
    def final_errors(self) -> dict[str, float]:
        """Each run's error at the last frame."""
        return {name: float(e[-1]) for name, e in self.errors.items()}

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON types: summary numbers, then the trajectories."""
        return {
            "source": self.source,
            "episode": self.episode,
            "start": self.start,
            "steps": self.steps,
            "final_errors": self.final_errors,
            "time": self.time.tolist(),
            "errors": {name: e.tolist() for name, e in self.errors.items()},
            "actions": self.actions.tolist(),
        }

    def to_json(self) -> str:
        """`to_dict` as indented, strictly valid JSON text (`invdyn._files.json_text`)."""
        return json_text(self.to_dict())


@dataclasses.dataclass(frozen=True, eq=False)
class FollowResult(Runs):
    """The reference episode and the three runs that try to reproduce it.

    Attributes:
      source: the dataset's source (``"invdyn:<robot>"`` or ``"gym:<env id>"``).
      episode: index of the reference episode in the dataset.
      start: frame of the episode the runs start from (the model's context ``C``).
      horizon: the model's horizon ``H``: the reference it is asked to reach.
      position_gain: the rate (1/s) at which a request asks a position error back.
      time: (n + 1,) time of each compared frame, seconds from the episode's start.
      reference: (n + 1, n_state) the recorded states ``r_start .. r_{start+n}``.
      followed: (n + 1, n_state) the states the model's actions led to.
      open_loop: (n + 1, n_state) the states of the recorded actions replayed, or None for a
        dataset without actions.
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
    position_gain: float
    time: Float
    reference: Float
    followed: Float
    open_loop: Float | None
    oracle: Float | None
    actions: Float
    errors: dict[str, Float]
    oracle_note: str

    @property
    def mean_errors(self) -> dict[str, float]:
        """Each run's error averaged over the frames."""
        return {name: float(e.mean()) for name, e in self.errors.items()}

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON types: `Runs.to_dict`, the settings, then every state."""
        return super().to_dict() | {
            "horizon": self.horizon,
            "position_gain": self.position_gain,
            "mean_errors": self.mean_errors,
            "oracle": {"available": self.oracle is not None, "note": self.oracle_note},
            "reference": self.reference.tolist(),
            "followed": self.followed.tolist(),
            "open_loop": None if self.open_loop is None else self.open_loop.tolist(),
            "oracle_states": None if self.oracle is None else self.oracle.tolist(),
        }


def follow(
    checkpoint_dir: str | os.PathLike[str],
    dataset: Dataset | str | os.PathLike[str],
    *,
    episode: int = 0,
    seconds: float | None = None,
    plant: Plant | None = None,
    position_gain: float = POSITION_GAIN,
) -> FollowResult:
    """Drive the simulated system along a recorded episode with a checkpoint's model.

    See the module docstring for the three runs, the desired states and the sources.

    Args:
      checkpoint_dir: a checkpoint directory (``out_dir/checkpoint`` of a training run).
      dataset: a dataset read by `invdyn.learn.data.read_dataset`, or its directory.
      episode: index of the reference episode (negative counts from the end).
      seconds: follow at most this many seconds of the episode (from frame ``C``); None for
        all of it.
      plant: the simulated plant, where it differs from the recording (a payload, wrong
        masses, friction, damping or sensor noise the recording did not have: the open-loop
        replay drifts, a model that closes the loop corrects); None for the recorded plant
        (`recording_plant`). For an invdyn robot every `Plant` option applies. For a
        Gymnasium source only ``mass_scale``, ``damping`` and ``friction`` do
        (`_mismatch_gym`); the time step and integrator stay the recording's.
      position_gain: rate (1/s, >= 0) at which the desired velocity asks a position error back;
        0 tracks the reference's velocities only.

    Returns:
      The reference, the three runs and their errors.

    Raises:
      InputError: a bad `episode`, `seconds`, `plant` or `position_gain`, an episode shorter
        than ``C + H + 1`` frames, a dataset of another size or spec
        (`invdyn.learn.checkpoint.DataSpec`) than the model's,
        a source that cannot be simulated (not ``invdyn:`` or ``gym:``, a robot whose state
        names differ, a Gymnasium dataset without MuJoCo's full state).
      DataError: the checkpoint or the dataset is missing or corrupt.
      InvdynError: a simulation diverged.
    """
    checkpoint = load_checkpoint(checkpoint_dir)
    require_state_model(checkpoint, "following")
    model = checkpoint.model
    data = dataset if isinstance(dataset, Dataset) else read_dataset(dataset)
    info = data.info
    has_actions = info.action_names is not None
    check_sizes(str(data.path), info, model, state=True, actions=True)
    if checkpoint.spec is not None:
        checkpoint.spec.check(info, str(data.path), actions=has_actions)
    if plant is not None and not isinstance(plant, Plant):
        raise InputError(f"plant must be an invdyn.sim.Plant, got {type(plant).__name__}")
    gain = check_real("position_gain (--position-gain)", position_gain, minimum=0.0)
    index = _episode_index(episode, len(data))
    recorded = data.episode(index)
    states = np.asarray(recorded.state, dtype=np.float64)
    timestamp = np.asarray(recorded.timestamp, dtype=np.float64)

    # the span: from frame C, n steps, each asking for the state H frames ahead
    context, horizon = model.config.context, model.config.horizon
    if model.config.future:
        raise InputError(
            f"the model sees {model.config.future} observation(s) past the desired one "
            "(model.future); following asks for one desired state at a time"
        )
    steps = follow_steps(len(states), index, context, horizon, seconds, info.fps)
    start = context

    chosen: list[Float] = []

    def idm(k: int, history: Float, desired: Float) -> Float:
        # desired: (n_state,) the observation H frames ahead
        window = np.concatenate([history[-(context + 1) :], desired[None]])
        action = _predict(model, window)
        chosen.append(action)
        return action

    replay = None
    if recorded.action is not None:
        actions = np.asarray(recorded.action, dtype=np.float64)

        def replay(k: int, history: Float, target: _Target) -> Float:
            return actions[start + k]

    span = _Span(states, start, steps, info.fps, gain, idm, replay)
    source = info.source
    if source.startswith("invdyn:"):
        runs = _robot_runs(data, span, horizon, plant)
    elif source.startswith("gym:"):
        runs = _gym_runs(data, index, span, horizon, plant)
    else:
        raise InputError(
            f"dataset {data.path} has source {source!r}: follow simulates invdyn robots "
            "('invdyn:<robot>') and Gymnasium MuJoCo environments ('gym:<env id>')"
        )
    reference = states[start : start + steps + 1]
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
        position_gain=gain,
        time=timestamp[start : start + steps + 1],
        reference=reference,
        followed=runs.followed,
        open_loop=runs.open_loop,
        oracle=runs.oracle,
        actions=np.array(chosen[:steps]).reshape(steps, model.n_action),
        errors=errors,
        oracle_note=runs.note,
    )


class Configurations(NamedTuple):
    """Moves on a configuration manifold: ``integrate(q, dq) = q ⊕ dq`` and
    ``difference(q0, q1) = q1 ⊖ q0`` ((nq,) configurations, (nv,) tangent vectors)."""

    integrate: Callable[[Float, Float], Float]
    difference: Callable[[Float, Float], Float]


def mujoco_configurations(mujoco: Any, model: Any) -> Configurations:
    """The configuration manifold of a MuJoCo model (``mj_integratePos``,
    ``mj_differentiatePos``)."""

    def integrate(q: Float, dq: Float) -> Float:
        out = np.array(q)
        mujoco.mj_integratePos(model, out, dq, 1.0)
        return out

    def difference(q0: Float, q1: Float) -> Float:
        out = np.empty(model.nv)
        mujoco.mj_differentiatePos(model, out, 1.0, q0, q1)
        return out

    return Configurations(integrate, difference)


def reachable(
    q: Float,
    v: Float,
    q_reference: Float,
    v_reference: Float,
    seconds: float,
    position_gain: float,
    space: Configurations,
) -> Float:
    """(nq + nv) a state that the system at ``(q, v)`` can reach `seconds` later on the way back
    to a reference.

    Its velocity is ``v_reference + position_gain * (q_reference ⊖ q)``; its position is where a
    constant acceleration from `v` to that velocity leads, ``q ⊕ seconds (v + v_desired) / 2``.

    Args:
      q: (nq,) the current configuration; v: (nv,) the current velocity.
      q_reference: (nq,) the reference configuration now; v_reference: (nv,) the reference
        velocity `seconds` later.
      seconds: the time to the desired state.
      position_gain: 1/s.
      space: the configuration manifold.
    """
    v_desired = v_reference + position_gain * space.difference(q, q_reference)
    return np.concatenate([space.integrate(q, 0.5 * seconds * (v + v_desired)), v_desired])


# checks and the model


def follow_steps(
    length: int, index: int, context: int, ahead: int, seconds: float | None, fps: float
) -> int:
    """The steps of a run from frame `context` of episode `index` (`length` frames) whose steps
    each look `ahead` frames forward: all it has, or `seconds` of them.

    Raises:
      InputError: the episode is too short for one step, or `seconds` is not positive.
    """
    available = length - context - ahead
    if available < 1:
        raise InputError(
            f"episode {index} has {length} frames; following needs more than the model's "
            f"context + horizon (+ future) = {context + ahead}"
        )
    if seconds is None:
        return available
    return min(available, max(1, round(check_positive("seconds (--seconds)", seconds) * fps)))


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


def _model_policy(span: _Span, horizon: int, observe: Callable[[Float], Float]) -> _Policy:
    """The IDM as a policy: the observation (`observe`) of the desired state H frames ahead."""

    def policy(k: int, history: Float, target: _Target) -> Float:
        return span.model(k, history, observe(target(horizon)))

    return policy


def _desired(
    reference: Float,
    nq: int,
    frame: int,
    q: Float,
    v: Float,
    span: _Span,
    space: Configurations,
) -> _Target:
    """The desired states (`reachable`) of the system at ``(q, v)`` at `frame` of the (T, nq + nv)
    reference of full states."""

    def target(ahead: int) -> Float:
        return reachable(
            q,
            v,
            reference[frame, :nq],
            reference[frame + ahead, nq:],
            ahead / span.fps,
            span.position_gain,
            space,
        )

    return target


# invdyn robots


def recording_plant(dataset: str | os.PathLike[str]) -> Plant:
    """The plant that an invdyn robot's dataset was collected on, as its metadata records it
    (`invdyn.sim.plant.plant_record`, written by `invdyn.sim.collect_robot`); for a dataset
    that does not, the exact model at its physics time step.

    Raises:
      DataError: a missing or unreadable dataset, or a record that is not a plant's.
    """
    metadata = read_metadata(dataset)
    if "plant" not in metadata:
        return Plant(timestep=float(metadata.get("physics_timestep", Plant().timestep)))
    try:
        return recorded_plant(metadata["plant"])
    except InputError as error:
        raise DataError(f"{dataset}: {INFO_PATH}: {METADATA_KEY}.plant: {error}") from None


def _robot_runs(data: Dataset, span: _Span, horizon: int, plant: Plant | None) -> _Runs:
    """The three runs of an invdyn robot in `invdyn.sim.rollout`, and the oracle's note."""
    from invdyn.configuration import difference, integrate
    from invdyn.dynamics import rnea
    from invdyn.sim.collect import load_robot_source
    from invdyn.sim.rollout import csv_columns, rollout

    info = data.info
    model = load_robot_source(info.source)
    robot = info.source.removeprefix("invdyn:")
    state_names = tuple(c for c in csv_columns(model) if c.startswith(("q.", "v.")))
    if info.state_names != state_names:
        raise InputError(
            f"the dataset's state names {list(info.state_names)} are not the (q, v) of invdyn's "
            f"{robot!r} ({list(state_names)})"
        )
    if plant is None:
        plant = recording_plant(data.path)
    states, start, steps, fps = span.states, span.start, span.steps, span.fps
    nq = model.nq
    space = Configurations(
        lambda q, dq: integrate(model, q, dq), lambda q0, q1: difference(model, q0, q1)
    )

    def run(policy: _Policy) -> Float:
        # the controller sees the simulated state; past the last step it is not simulated
        simulated = [states[k] for k in range(start)]

        def controller(t: float, q: Float, v: Float) -> Float:
            k = round(t * fps)
            simulated.append(np.concatenate([q, v]))
            if k >= steps:
                return np.zeros(model.nv)

            target = _desired(states, nq, start + k, q, v, span, space)
            return policy(k, np.array(simulated), target)

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

    def oracle(k: int, simulated: Float, target: _Target) -> Float:
        q, v = simulated[-1, :nq], simulated[-1, nq:]
        return np.asarray(rnea(model, q, v, (target(1)[nq:] - v) * fps))

    note = (
        f"rnea({robot}, q_k, v_k, (v_desired_(k+1) - v_k) * fps) at the simulated state, fps = "
        f"{fps:g}, physics timestep {plant.timestep:g} s"
    )
    followed = run(_model_policy(span, horizon, lambda state: state))
    return _Runs(followed, _replayed(run, span), run(oracle), note)


def _replayed(run: Callable[[_Policy], Float], span: _Span) -> Float | None:
    """The states of the recorded actions replayed by `run`, None without actions."""
    return None if span.replay is None else run(span.replay)


# gymnasium environments


def _gym_runs(data: Dataset, index: int, span: _Span, horizon: int, plant: Plant | None) -> _Runs:
    """The three runs of a Gymnasium MuJoCo environment, and the oracle's note."""
    source = data.info.source
    env_id = source.removeprefix("gym:")
    full = episode_full_state(data, index)
    import mujoco

    from invdyn.learn.evaluate import _unsupported_actuators, gym_inverse_ctrl, gym_inverse_note

    states, start, steps, fps = span.states, span.start, span.steps, span.fps
    envs: list[Any] = []
    try:
        # the simulated environment, and one that observes desired states
        for _ in range(2):
            envs.append(recorded_environment(data, full))
        base, probe = envs[0].unwrapped, envs[1].unwrapped
        model = base.model
        nq = int(model.nq)
        # the oracle knows the recorded physics, not the plant's
        recorded = copy.deepcopy(model)
        if plant is not None:
            _mismatch_gym(mujoco, model, plant, source)
        actions: Any = envs[0].action_space
        low = np.asarray(actions.low, dtype=np.float64)
        high = np.asarray(actions.high, dtype=np.float64)

        space = mujoco_configurations(mujoco, recorded)

        def observe(state: Float) -> Float:
            probe.set_state(state[:nq], state[nq:])
            return np.asarray(probe._get_obs(), dtype=np.float64).ravel()

        def run(policy: _Policy) -> Float:
            # reset, then the episode's state at the start frame
            envs[0].reset(seed=0)
            base.set_state(full[start, :nq], full[start, nq:])
            simulated = [states[k] for k in range(start)]
            simulated.append(np.asarray(base._get_obs(), dtype=np.float64).ravel())
            for k in range(steps):
                q, v = base.data.qpos.copy(), base.data.qvel.copy()
                target = _desired(full, nq, start + k, q, v, span, space)
                action = np.clip(policy(k, np.array(simulated), target), low, high)
                observation, *_ = base.step(action.astype(actions.dtype))
                simulated.append(np.asarray(observation, dtype=np.float64).ravel())
            return np.array(simulated[start:])

        def oracle(k: int, simulated: Float, target: _Target) -> Float:
            state = np.concatenate([base.data.qpos, base.data.qvel])[None]
            return gym_inverse_ctrl(mujoco, recorded, state, target(1)[None, nq:], 1 / fps)[0]

        followed = run(_model_policy(span, horizon, observe))
        open_loop = _replayed(run, span)
        unsupported = _unsupported_actuators(mujoco, recorded)
        oracle_run = None
        if unsupported:
            note = f"{source}: the oracle cannot invert actuators {unsupported}"
        else:
            oracle_run = run(oracle)
            how = gym_inverse_note(mujoco, recorded, 1 / fps)
            note = f"{env_id}, at the simulated state toward the desired qvel: {how}"
    finally:
        for env in envs:
            env.close()
    return _Runs(followed, open_loop, oracle_run, note)


def episode_full_state(data: Dataset, index: int) -> Float:
    """(T, nq + nv) MuJoCo's full state at every frame of episode `index` of a Gymnasium
    dataset, or `InputError` if the dataset has none."""
    try:
        full_all = read_frame_columns(data.path, [MUJOCO_STATE])[MUJOCO_STATE]
    except DataError:
        raise InputError(
            f"{data.info.source}: the dataset {data.path} has no MuJoCo full state "
            f"({MUJOCO_STATE}) to start the simulation from; collect with "
            "invdyn.sim.collect_gym and write with invdyn.learn.data.write_collection"
        ) from None
    lengths = [len(data.episode(i)) for i in range(len(data))]
    first = sum(lengths[:index])
    return np.asarray(full_all[first : first + lengths[index]], dtype=np.float64)


def recorded_environment(data: Dataset, full: Float) -> Any:
    """The Gymnasium environment of a dataset's source (``gym:<env id>``) with the physics
    its collection recorded (metadata ``physics_timestep``, ``integrator``); `full` (T,
    nq + nv), the episode's full states, must fit it. The caller closes it.

    Raises:
      InputError: the environment cannot be made, or its state does not fit `full`.
      ImportError: gymnasium or mujoco is missing.
    """
    source = data.info.source
    try:
        import gymnasium
        import mujoco
    except ImportError as exc:
        raise ImportError(f"simulating {source} needs gymnasium and mujoco: {exc}") from exc
    try:
        env = gymnasium.make(source.removeprefix("gym:"))
    except Exception as exc:  # unknown ids, missing dependencies, bad assets
        raise InputError(f"{source}: the environment cannot be made: {exc}") from None
    base: Any = env.unwrapped
    model = base.model
    size = int(model.nq) + int(model.nv)
    if full.ndim != 2 or full.shape[1] != size:
        env.close()
        raise InputError(
            f"{source}: the dataset's {MUJOCO_STATE} has {full.shape[1:]} entries, the "
            f"environment's (qpos, qvel) {size}"
        )
    metadata = read_metadata(data.path)
    if "physics_timestep" in metadata:
        model.opt.timestep = float(metadata["physics_timestep"])
    if metadata.get("integrator") is not None:
        name = f"mjINT_{str(metadata['integrator']).upper()}"
        if hasattr(mujoco.mjtIntegrator, name):
            model.opt.integrator = int(getattr(mujoco.mjtIntegrator, name))
    return env


def _mismatch_gym(mujoco: Any, model: Any, plant: Plant, source: str) -> None:
    """Make an environment's ``MjModel`` the plant `plant`, in place: every body's mass and
    inertia times ``plant.mass_scale``, ``plant.damping`` and ``plant.friction`` (a scalar or
    one per dof) added to ``dof_damping`` and ``dof_frictionloss``.

    Raises:
      InputError: the plant sets an option that has no meaning for an environment (a payload,
        torque limits, sensor noise, delay, or a time step or integrator of its own), or a
        per-dof option has the wrong length.
    """
    default = Plant()
    unsupported = [
        name
        for name in ("payload", "torque_limit", "sensor_noise", "delay", "timestep", "integrator")
        if getattr(plant, name) != getattr(default, name)
    ]
    if unsupported:
        raise InputError(
            f"{source}: the plant sets {', '.join(unsupported)}; a Gymnasium environment takes "
            "only mass_scale, damping and friction (its time step and integrator are the "
            "recording's)"
        )
    nv = int(model.nv)
    for field, name in (("dof_damping", "damping"), ("dof_frictionloss", "friction")):
        values = np.asarray(getattr(plant, name), dtype=np.float64).ravel()
        if values.size not in (1, nv):
            raise InputError(
                f"{source}: Plant.{name} has {values.size} entries; the environment has {nv} dofs"
            )
        getattr(model, field)[:] += values
    model.body_mass[1:] *= plant.mass_scale
    model.body_inertia[1:] *= plant.mass_scale
    mujoco.mj_setConst(model, mujoco.MjData(model))
