"""Acting on goal frames: a model of frames drives a simulation towards a sequence of images.

A world model predicts what a camera should see next; an inverse dynamics model of frames turns
that prediction into the action that gets there (GR00T's and UniPi's use of an IDM).
`follow_frames` stands in for the world model with one recorded episode of a Gymnasium MuJoCo
environment, the plan, and the model closes the loop from what the simulation shows.

At every step ``k`` (frame ``t = C + k``) the model sees the window it was trained on: the
frames ``t - C .. t`` the simulation showed (the recording's own for ``t < C``, where the run
starts, as `invdyn.learn.follow.follow` does) and goal frames for ``t + H .. t + H + F``; its
action (the first of a chunk) is applied for one frame and the new state rendered from the same
camera at the same size (`invdyn.sim.render.CameraView`, in the scene of
`invdyn.sim.scene.scene_for`). The goal frames are, with `replan` (the default), what a world
model that predicts from the current state and knows the plan would show: the states
`invdyn.learn.follow.reachable` gives from the simulated state towards the recording (its
velocity plus `position_gain` times the position error), rendered. Without `replan` they are
the recording's own frames, a fixed plan that, once the simulation is off it, shows a jump no
training window contains. The run takes ``T - C - H - F`` steps (fewer with `seconds`). The
recorded actions replayed open-loop from the same start are run beside it.

The error at each frame is the largest distance between a body of the simulation and the same
body in the reference (m): for an arm, its distal link's (Reacher's fingertip). A `Plant` may
make the simulated environment differ from the recording (`invdyn.learn.follow`).

`follow_episode`, as ``invdyn follow`` does, follows an episode with either kind of model: a
model of frames towards goal frames here, a model of the state along desired states
(`invdyn.learn.follow.follow`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import check_real
from invdyn.errors import InputError
from invdyn.learn.checkpoint import checkpoint_in, load_checkpoint
from invdyn.learn.datasets import Dataset, read_dataset
from invdyn.learn.follow import (
    POSITION_GAIN,
    FollowConfig,
    FollowResult,
    Runs,
    checked_episode_index,
    episode_full_state,
    follow,
    follow_plant,
    follow_steps,
    mismatch_gym,
    mujoco_configurations,
    reachable,
    recorded_environment,
)
from invdyn.learn.keys import OBS_IMAGE_PREFIX
from invdyn.learn.models import InverseDynamicsModel
from invdyn.sim.plant import Plant

Float = NDArray[np.float64]
Frames = NDArray[np.uint8]


@dataclasses.dataclass(frozen=True, eq=False)
class GoalResult(Runs):
    """A run towards goal frames, and the recorded actions replayed beside it.

    Attributes:
      source: the dataset's source, ``gym:<env id>``.
      episode: the episode whose frames are the goals.
      start: the frame the runs start from (the model's context ``C``).
      time: (n + 1,) time of each frame of the runs, from the recording (s).
      errors: run name (``"followed"``, ``"open_loop"``) -> (n + 1,) the largest distance
        between a body of the run and of the reference at each frame (m).
      actions: (n, n_action) the model's actions.
    """

    source: str
    episode: int
    start: int
    time: Float
    errors: dict[str, Float]
    actions: Float


def follow_episode(config: FollowConfig) -> FollowResult | GoalResult:
    """Follow a recorded episode with a checkpoint's model: towards its frames
    (`follow_frames`, replanned unless `FollowConfig.recorded_goals`) for a model of frames,
    along its states (`invdyn.learn.follow.follow`) otherwise, in the plant of
    `invdyn.learn.follow.follow_plant`.

    Raises:
      InputError: as `follow_plant`, or recorded goals asked of a model of the state.
    """
    plant = follow_plant(config)
    checkpoint = checkpoint_in(config.checkpoint)
    options: dict[str, Any] = {"episode": config.episode, "seconds": config.seconds, "plant": plant}
    if load_checkpoint(checkpoint).model.config.camera_names:
        return follow_frames(
            checkpoint,
            config.dataset,
            replan=not config.recorded_goals,
            position_gain=config.position_gain,
            **options,
        )
    if config.recorded_goals:
        raise InputError("--recorded-goals is for models of frames")
    return follow(checkpoint, config.dataset, position_gain=config.position_gain, **options)


def follow_frames(
    checkpoint_dir: str | os.PathLike[str],
    dataset: str | os.PathLike[str] | Dataset,
    *,
    episode: int = 0,
    seconds: float | None = None,
    plant: Plant | None = None,
    replan: bool = True,
    position_gain: float = POSITION_GAIN,
) -> GoalResult:
    """Drive the simulation of a recorded episode towards its frames with a model of frames.

    See the module docstring.

    Args:
      checkpoint_dir: the checkpoint of a model of one camera's frames alone.
      dataset: a dataset of a Gymnasium MuJoCo environment with that camera's video and
        MuJoCo's full state (`invdyn.sim.collect_gym`, written by `write_collection` with
        videos), or its path.
      episode: the episode whose frames are the goals (negative counts from the end).
      seconds: follow this long (None: as long as the goal frames allow).
      plant: how the simulated environment differs from the recording (mass scale, damping,
        friction); None for the recorded one.
      replan: goal frames of states reachable from the simulated one (see the module
        docstring); False for the recorded frames.
      position_gain: 1/s, of the replanned goals.

    Raises:
      InputError: a model that sees the state or several cameras, a dataset of another source
        or without the camera's video or the full state, an episode too short, or a bad
        argument.
    """
    checkpoint = load_checkpoint(checkpoint_dir)
    model = checkpoint.model
    config = model.config
    if config.state or len(config.camera_names) != 1:
        raise InputError(
            "following takes a model of the state alone, or of one camera's frames alone (its "
            f"goals are that camera's images); this one sees "
            f"{'the state and ' if config.state else ''}the cameras {list(config.camera_names)}"
        )
    data = dataset if isinstance(dataset, Dataset) else read_dataset(dataset)
    info = data.info
    if checkpoint.spec is not None:
        checkpoint.spec.check(
            info, str(data.path), actions=False, state=False, cameras=config.camera_names
        )
    if not info.source.startswith("gym:"):
        raise InputError(
            f"dataset {data.path} has source {info.source!r}: goal frames are followed in "
            "Gymnasium MuJoCo environments ('gym:<env id>')"
        )
    if plant is not None and not isinstance(plant, Plant):
        raise InputError(f"plant must be an invdyn.sim.Plant, got {type(plant).__name__}")
    index = checked_episode_index(episode, len(data))
    recorded = data.episode(index)
    goals = data.frames(config.camera_names[0], index)
    start, ahead = config.context, config.offsets[-1]
    steps = follow_steps(len(goals), index, start, ahead, seconds, info.fps)
    gain = check_real("position_gain (--position-gain)", position_gain, minimum=0.0)
    full = episode_full_state(data, index)
    recorded_actions = np.asarray(recorded.action, dtype=np.float64)
    actions: list[Float] = []

    def act(k: int, seen: list[Frames], upcoming: Callable[[], list[Frames]]) -> Float:
        t = start + k
        action = _predict(model, np.stack([*seen[t - start : t + 1], *upcoming()]))
        actions.append(action)
        return action

    def replay(k: int, seen: list[Frames], upcoming: Callable[[], list[Frames]]) -> Float:
        return recorded_actions[start + k]

    from invdyn.sim.scene import scene_for

    view = (scene_for(info.source), config.camera_names[0])
    errors = {
        name: _run(
            data, view, full, goals, (start, steps), range(config.horizon, ahead + 1), plant,
            policy, gain if replan else None,
        )
        for name, policy in (("followed", act), ("open_loop", replay))
    }  # fmt: skip
    return GoalResult(
        source=info.source,
        episode=index,
        start=start,
        time=np.asarray(recorded.timestamp, dtype=np.float64)[start : start + steps + 1],
        errors=errors,
        actions=np.array(actions).reshape(steps, model.n_action),
    )


def _predict(model: InverseDynamicsModel, window: Frames) -> Float:
    """(n_action,) the model's action for one (W, h, w, 3) window of frames."""
    key = OBS_IMAGE_PREFIX + model.config.camera_names[0]
    action = model.predict({key: window[None]})[0]
    if model.config.chunk:
        action = action[0]
    return action.double().cpu().numpy()


def _run(
    data: Dataset,
    view: tuple[Any, str],
    full: Float,
    goals: Frames,
    span: tuple[int, int],
    aheads: range,
    plant: Plant | None,
    policy: Callable[[int, list[Frames], Callable[[], list[Frames]]], Float],
    gain: float | None,
) -> Float:
    """(steps + 1,) the largest body distance to the reference at each frame of a run of the
    environment for ``span = (start, steps)`` from the reference's state at `start`. The policy
    gets the step, the frames shown so far (from ``view = (scene, camera)``, at the goals'
    size) and a function that gives the goal frames `aheads` frames ahead, replanned at position
    gain `gain` (None: the recorded `goals`)."""
    start, steps = span
    import mujoco

    from invdyn.sim.render import CameraView

    env = recorded_environment(data, full)
    try:
        base: Any = env.unwrapped
        model = base.model
        if plant is not None:
            mismatch_gym(mujoco, model, plant, data.info.source)
        nq = int(model.nq)
        space: Any = env.action_space
        low, high = np.asarray(space.low), np.asarray(space.high)
        height, width = goals.shape[1:3]
        reference = _body_positions(mujoco, model, full[start : start + steps + 1])
        env.reset(seed=0)
        base.set_state(full[start, :nq], full[start, nq:])
        manifold = mujoco_configurations(mujoco, model)
        fps = data.info.fps
        with CameraView(*view, width, height) as render:

            def goal_frames(t: int, q: Float, v: Float) -> list[Frames]:
                # the goal frames of frame t, the simulation at (q, v)
                if gain is None:
                    return [goals[t + a] for a in aheads]
                q_plan = full[t, :nq]
                return [
                    render(reachable(q, v, q_plan, full[t + a, nq:], a / fps, gain, manifold))
                    for a in aheads
                ]

            seen = [*goals[:start], render(full[start])]
            positions = [_body_positions(mujoco, model, full[start : start + 1])[0]]
            for k in range(steps):
                q, v = base.data.qpos.copy(), base.data.qvel.copy()
                upcoming = functools.partial(goal_frames, start + k, q, v)
                action = np.clip(policy(k, seen, upcoming), low, high)
                base.step(action.astype(space.dtype))
                state = np.concatenate([base.data.qpos, base.data.qvel])
                seen.append(render(state))
                positions.append(base.data.xpos[1:].copy())
    finally:
        env.close()
    return np.linalg.norm(np.array(positions) - reference, axis=-1).max(axis=-1)


def _body_positions(mujoco: Any, model: Any, states: Float) -> Float:
    """(T, n_body - 1, 3) world positions of every body but the world at each full state."""
    data = mujoco.MjData(model)
    out = []
    for state in states:
        data.qpos[:], data.qvel[:] = state[: model.nq], state[model.nq :]
        mujoco.mj_kinematics(model, data)
        out.append(data.xpos[1:].copy())
    return np.array(out)
