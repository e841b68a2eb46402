"""Data collection for learned inverse dynamics models: episodes of states and applied actions.

An inverse dynamics model (IDM) predicts the action ``a_t`` taken between observations ``o_t`` and
``o_{t+1}``. Each `CollectedEpisode` holds T observations (``state``), the action applied from
each one to the next (``action``; the last row's action is what the policy chose at the last
observation, never simulated) and their times; a `Collection` holds the episodes with the names
of the state and action entries, the frame rate and the source. Two sources:

- `collect_robot`: an invdyn robot (fixed base; revolute, prismatic and continuous joints)
  simulated in MuJoCo under torque control (`invdyn.sim.rollout`). Each episode tracks a random
  smooth excitation, a Fourier series within the position and velocity limits, with a randomly
  chosen tracking law (computed torque, PD with gravity compensation or inverse-dynamics
  feedforward), random gains and Gaussian torque noise. The state is ``(q, v)`` in invdyn's
  layout, the action the joint forces applied after saturation at the torque limits, held for
  one control period.
- `collect_gym`: a Gymnasium MuJoCo environment (``HalfCheetah-v5``, ``Hopper-v5``,
  ``Reacher-v5``, ...) driven by a random, a smooth random (``"noisy"``, or ``"bounded"`` to
  keep off joint limits) or a scripted policy (reaching for Reacher, a periodic gait elsewhere).
  The state is the environment's observation, the action what was passed to ``env.step``.

Both also record MuJoCo's full state ``(qpos, qvel)`` at every observation (``full_state``), from
which an oracle finds the applied forces by ``mj_inverse`` on finite differences.

Needs the ``sim`` extra (MuJoCo); `collect_gym` needs Gymnasium too
(``pip install "gymnasium[mujoco]"``). Both import them only when called.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import check_count, check_positive, not_a_model
from invdyn._parallel import map_in_shards
from invdyn.configuration import integrate, neutral
from invdyn.control.computed_torque import CONTROLLERS, Gains
from invdyn.control.trajectories import JointTrajectory, fourier
from invdyn.dynamics import mass_matrix, require_regular
from invdyn.errors import InputError, InvdynError
from invdyn.io.mujoco_state import to_mujoco_state
from invdyn.model import JointType, Model
from invdyn.sim.mujoco_model import build_mujoco, checked_plant
from invdyn.sim.plant import Plant, plant_record
from invdyn.sim.rollout import csv_columns, rollout

Float = NDArray[np.float64]
Policy = Literal["random", "noisy", "bounded", "scripted"]

POLICIES: tuple[str, ...] = ("random", "noisy", "bounded", "scripted")
"""Policies of `collect_gym`."""

# the tracking laws of `collect_robot`, one drawn per episode
ROBOT_LAWS: tuple[str, ...] = ("computed_torque", "pd_gravity", "feedforward")

# the excitation: harmonics, base frequency (Hz), distance from the position limits (share of
# the range), amplitude about the mean (share of the room left, and at most MAX_AMPLITUDE rad
# or m), share of the velocity limit, and a bound on the reference acceleration (rad/s^2, m/s^2)
HARMONICS = 4
BASE_FREQUENCY = (0.1, 0.3)
LIMIT_MARGIN = 0.1
AMPLITUDE_SHARE = (0.3, 1.0)
MAX_AMPLITUDE = 1.5
SPEED_SHARE = 0.7
MAX_ACCELERATION = 10.0
# the tracking loop: natural frequency (rad/s) and damping ratio of each joint's gains, the
# natural frequency at most MAX_BANDWIDTH_STEP times the control rate (rad/s per Hz) so that
# holding the torque for a control period leaves the loop well damped; the samples of the
# excitation at which the effective inertias that scale torque-unit gains and the noise are
# taken; and the torque noise's standard deviation, in joint accelerations (rad/s^2)
BANDWIDTH = (8.0, 20.0)
DAMPING_RATIO = (0.7, 1.3)
MAX_BANDWIDTH_STEP = 0.15
INERTIA_SAMPLES = 32
TORQUE_NOISE = (0.5, 5.0)

# the "noisy" gym policy: an AR(1) (discrete Ornstein-Uhlenbeck) process in units of the action
# half-range, with a random correlation time (s) and stationary standard deviation per episode
NOISE_TIME = (0.05, 0.5)
NOISE_STD = (0.3, 0.8)
# "bounded" pushes a limited joint away from a limit (see `_limit_steering`) once the joint's
# position LIMIT_LOOKAHEAD seconds ahead is within LIMIT_MARGIN of its range of it, by up to
# LIMIT_PUSH
LIMIT_LOOKAHEAD = 0.1
LIMIT_MARGIN = 0.1
LIMIT_PUSH = 2.0
# the scripted Reacher: task-space stiffness (action per metre), joint damping (action s/rad)
# and action noise, drawn per episode; with the gear of 200 and a step of 0.02 s a damping
# above about 0.5 is unstable
REACHER_KP = (30.0, 100.0)
REACHER_KD = (0.05, 0.2)
REACHER_NOISE = (0.02, 0.1)
# the scripted gait of the other environments: every action dimension a sinusoid about the
# middle of its range, of one frequency (Hz) and an amplitude (in units of the half-range)
# drawn per episode, a random phase per dimension, plus action noise
GAIT_FREQUENCY = (0.5, 3.0)
GAIT_AMPLITUDE = (0.3, 1.0)
GAIT_NOISE = 0.05
# gym episodes that end before this many steps are discarded; an episode is drawn again at
# most this many times (a gym episode too short, a robot episode off its position limits)
MIN_STEPS = 2
MAX_DISCARDS = 100


@dataclasses.dataclass(frozen=True, eq=False)
class CollectedEpisode:
    """One episode: T observations, the action taken at each, and their times.

    Attributes:
      state: (T, n_state) observations.
      action: (T, n_action) actions; ``action[t]`` acts from ``timestamp[t]`` to
        ``timestamp[t + 1]``, and the last row is what the policy chose at the last observation.
      timestamp: (T,) times in seconds from the episode's start.
      full_state: (T, nq + nv) MuJoCo's ``qpos`` and ``qvel`` at each observation (the whole
        simulated system, parts the observation leaves out included), or None.
    """

    state: Float
    action: Float
    timestamp: Float
    full_state: Float | None = None

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is None and field.name == "full_state":
                continue
            array = np.array(value, dtype=np.float64)
            array.setflags(write=False)
            object.__setattr__(self, field.name, array)
        if self.timestamp.ndim != 1:
            raise InputError(
                f"CollectedEpisode.timestamp has shape {self.timestamp.shape}, expected (T,)"
            )
        count = len(self.timestamp)
        for name in ("state", "action", "full_state"):
            array = getattr(self, name)
            if array is not None and (array.ndim != 2 or len(array) != count):
                raise InputError(
                    f"CollectedEpisode.{name} has shape {array.shape}, expected ({count}, n)"
                )

    def __len__(self) -> int:
        return int(self.timestamp.shape[0])


@dataclasses.dataclass(frozen=True, eq=False)
class Collection:
    """Episodes from one source, with the names of their columns.

    Attributes:
      episodes: the episodes, in order.
      state_names: (n_state) name of each state entry.
      action_names: (n_action) name of each action entry.
      fps: observations per second.
      source: what produced the data: ``"invdyn:<robot>"`` (`robot_source`), ``"model:<name>"``
        or ``"gym:<env id>"``.
      full_state_names: (nq + nv) names of the ``full_state`` entries, ``qpos.<joint>`` and
        ``qvel.<joint>`` with a suffix for joints of several coordinates, or None.
      metadata: how the data was collected (seed, policy, rates), as plain JSON data.
    """

    episodes: tuple[CollectedEpisode, ...]
    state_names: tuple[str, ...]
    action_names: tuple[str, ...]
    fps: float
    source: str
    full_state_names: tuple[str, ...] | None = None
    metadata: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        set_field = object.__setattr__
        set_field(self, "episodes", tuple(self.episodes))
        set_field(self, "state_names", tuple(self.state_names))
        set_field(self, "action_names", tuple(self.action_names))
        if self.full_state_names is not None:
            set_field(self, "full_state_names", tuple(self.full_state_names))
        set_field(self, "fps", check_positive("Collection.fps", self.fps))
        set_field(self, "metadata", MappingProxyType(dict(self.metadata)))
        for k, episode in enumerate(self.episodes):
            if not isinstance(episode, CollectedEpisode):
                raise InputError(
                    f"Collection.episodes[{k}] is a {type(episode).__name__}, "
                    "expected a CollectedEpisode"
                )
            for name, names in (
                ("state", self.state_names),
                ("action", self.action_names),
                ("full_state", self.full_state_names),
            ):
                array = getattr(episode, name)
                if array is not None and names is not None and array.shape[1] != len(names):
                    raise InputError(
                        f"Collection.episodes[{k}].{name} has {array.shape[1]} columns, but "
                        f"{len(names)} {name}_names"
                    )

    def __len__(self) -> int:
        return len(self.episodes)

    @property
    def num_frames(self) -> int:
        """Observations over all episodes."""
        return sum(len(episode) for episode in self.episodes)


def collect_robot(
    model: Model,
    *,
    episodes: int,
    duration: float = 5.0,
    control_rate: float = 100.0,
    seed: int = 0,
    plant: Plant | None = None,
    workers: int = 1,
    progress: bool = False,
) -> Collection:
    """Episodes of an invdyn robot tracking random excitations under noisy torque control.

    Each episode draws (from ``numpy.random.SeedSequence(seed, spawn_key=(episode, attempt))``,
    so an episode does not depend on how many are collected):

    - an excitation: a Fourier series of `HARMONICS` harmonics of a base frequency in
      `BASE_FREQUENCY`, about a random mean configuration, that keeps `LIMIT_MARGIN` of the
      range from finite position limits, within `SPEED_SHARE` of the velocity limits and
      below `MAX_ACCELERATION` (bounds by the triangle inequality on the harmonics, checked by
      `invdyn.control.fourier`); a continuous joint oscillates about a random angle;
    - a tracking law from `ROBOT_LAWS`, with gains per joint of natural frequency in
      `BANDWIDTH` (at most `MAX_BANDWIDTH_STEP` times the control rate) and damping ratio in
      `DAMPING_RATIO`; the laws in torque units scale them by the joint's smallest effective
      inertia ``1 / (M^-1)_ii`` along the excitation, which keeps the loop stable when the
      torque is held for a control period;
    - Gaussian torque noise, white at the control rate, of standard deviation ``s`` times that
      inertia, with s in `TORQUE_NOISE` (rad/s^2).

    The run starts on the excitation, at its first point and velocity, and is simulated by
    `invdyn.sim.rollout`: the action is the force applied after saturation at the plant's torque
    limits (`invdyn.sim.torque_limits`), held for one control period of whole physics steps. A
    run that leaves the position limits (where MuJoCo's limit constraint adds a force the action
    does not show: on the Panda, its 4 cm fingers lag behind under PD with gravity compensation)
    is discarded and drawn again; ``metadata["discarded"]`` counts them.

    Args:
      model: the robot, fixed base, with revolute, prismatic and continuous joints only.
      episodes: number of episodes, >= 1.
      duration: length of each episode in seconds; ``ceil(duration * control_rate) + 1``
        observations from t = 0.
      control_rate: controller calls and observations per second; ``1 / control_rate`` must be a
        whole number of ``plant.timestep`` (1 ms by default).
      seed: seed of everything random; the plant's sensor noise, when it has a seed, is seeded
        per episode from it too.
      plant: the simulated plant (payload, friction, sensor noise, ...); None for `Plant()`,
        the exact model. The controller always uses `model`.
      workers: processes that simulate episodes in parallel (`collect_in_parallel`); the
        episodes are the same for any number.
      progress: show a progress bar over episodes.

    Returns:
      The episodes; states ``(q, v)`` named ``q.<joint>`` and ``v.<joint>`` (``.cos``/``.sin``
      for continuous joints), actions named ``tau.<joint>``, source `robot_source`.

    Raises:
      InputError: a bad argument, or a joint that is not revolute, prismatic or continuous.
      ModelError: joints that move no mass or inertia (a singular mass matrix).
      InvdynError: the simulation diverged, or `MAX_DISCARDS` + 1 draws of an episode all
        left the position limits.
    """
    if not isinstance(model, Model):
        raise not_a_model(model)
    for name, jtype, spec in zip(model.jnt_name, model.jnt_type, model.jnt_spec, strict=True):
        if not spec.axial:
            raise InputError(
                f"collect_robot needs a fixed-base robot with revolute, prismatic and continuous "
                f"joints; joint {name!r} of {model.name!r} is {JointType(jtype).name.lower()}"
            )
    if model.nv == 0:
        raise InputError(f"collect_robot: model {model.name!r} has no joint to move")
    require_regular(model, neutral(model), "collect_robot")
    count = check_count("episodes", episodes)
    duration = check_positive("duration", duration)
    rate = check_positive("control_rate", control_rate)
    seed = check_count("seed", seed, minimum=0)
    plant = checked_plant(plant)

    columns = csv_columns(model)
    state_names = tuple(c for c in columns if c.startswith(("q.", "v.")))
    action_names = tuple(f"tau.{name}" for name in model.joint_names)
    sim = build_mujoco(model, plant=plant)
    draw = functools.partial(_robot_episodes, model, duration, rate, plant, seed)
    collected, discarded = collect_in_parallel(
        draw, count, workers, progress=progress, desc=f"collect {model.name}"
    )
    return Collection(
        episodes=tuple(collected),
        state_names=state_names,
        action_names=action_names,
        fps=rate,
        source=robot_source(model),
        full_state_names=_mujoco_state_names(sim),
        metadata={
            "collector": "collect_robot",
            "robot": model.name,
            "episodes": count,
            "duration": duration,
            "control_rate": rate,
            "seed": seed,
            "physics_timestep": plant.timestep,
            "integrator": plant.integrator,
            "plant": plant_record(plant),
            "laws": list(ROBOT_LAWS),
            "discarded": discarded,
        },
    )


def robot_source(model: Model) -> str:
    """The source a dataset of `model` records, from which `load_robot_source` loads the same
    model again.

    Returns:
      ``"invdyn:<name>"`` for a built-in robot, ``"invdyn:<absolute path>"`` for a robot loaded
      from a file (as `invdyn.io.load_simulated` loads it with a fixed base: an MJCF file's
      joint damping and friction read), and ``"model:<name>"`` for a model that neither
      reproduces (built or changed in memory): later commands then know its name but do not
      assume its physics.
    """
    from invdyn.io import load_simulated

    candidates = [model.name]
    if model.source and Path(model.source).is_file():
        candidates.append(str(Path(model.source).resolve()))
    for candidate in candidates:
        try:
            with warnings.catch_warnings():
                # the user saw the description's warnings when loading it
                warnings.simplefilter("ignore")
                again = load_simulated(candidate, floating_base=False)
        except (InvdynError, OSError, ValueError):
            continue
        if _same_model(again, model):
            return f"invdyn:{candidate}"
    return f"model:{model.name}"


def load_robot_source(source: str) -> Model:
    """The robot of a dataset's source ``"invdyn:<name or path>"`` (`robot_source`).

    Raises:
      InputError: the source is not an invdyn robot, or its robot cannot be loaded.
    """
    if not source.startswith("invdyn:"):
        raise InputError(f"source {source!r} is not an invdyn robot ('invdyn:<robot>')")
    from invdyn.io import load_simulated

    robot = source.removeprefix("invdyn:")
    try:
        return load_simulated(robot, floating_base=False)
    except (InvdynError, OSError, ValueError) as exc:
        raise InputError(f"robot {robot!r} of source {source!r} cannot be loaded: {exc}") from None


def _same_model(a: Model, b: Model) -> bool:
    """Whether two models have the same joints, parameters and frames (names of the robot and
    of its source aside)."""
    for field in dataclasses.fields(Model):
        if field.name in ("name", "source"):
            continue
        x, y = getattr(a, field.name), getattr(b, field.name)
        if not (np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y):
            return False
    return True


def collect_gym(
    env_id: str,
    *,
    episodes: int,
    steps_per_episode: int | None = None,
    policy: Policy = "random",
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
) -> Collection:
    """Episodes of a Gymnasium MuJoCo environment driven by a random or scripted policy.

    Policies:

    - ``"random"``: uniform in the action space (``action_space.sample()``, seeded).
    - ``"noisy"``: smooth random actions, an AR(1) (discrete Ornstein-Uhlenbeck) process
      ``x_{k+1} = ρ x_k + sqrt(1 - ρ²) σ ε``, ``ρ = exp(-dt / τ)``, in units of the action
      half-range about its centre, clipped to the bounds; per episode a correlation time τ in
      `NOISE_TIME` seconds and a stationary standard deviation σ in `NOISE_STD`.
    - ``"bounded"``: ``"noisy"`` plus a soft wall that pushes limited joints away from their
      limits (`_limit_steering`); the exploration policy for inverse dynamics from motion,
      which cannot tell the action of a joint held at its limit.
    - ``"scripted"``: for ``Reacher``, a task-space PD law that drives the fingertip to the
      target (``ctrl = J^T (kp e) - kd qdot`` with random gains per episode, plus a little
      noise); for every other environment an open-loop periodic gait, each action dimension
      ``centre + half A sin(2 pi f t + phi_j)`` with a frequency f in `GAIT_FREQUENCY` Hz and
      an amplitude A in `GAIT_AMPLITUDE` per episode, a random phase per dimension and
      Gaussian noise of `GAIT_NOISE`, clipped to the bounds.

    Episode k is reset, and its policy seeded, from ``numpy.random.SeedSequence(seed,
    spawn_key=(k, attempt))``, so it does not depend on how many are collected. An episode
    ends at termination (a Hopper or Walker falls) or truncation (`steps_per_episode`); one
    that ends before `MIN_STEPS` steps is discarded and drawn again. N steps give N + 1
    observations, the action of the last one chosen but not taken.

    Args:
      env_id: a Gymnasium id of a MuJoCo environment, such as ``"HalfCheetah-v5"``.
      episodes: number of episodes to return, >= 1.
      steps_per_episode: steps before truncation, >= `MIN_STEPS`; None for the environment's
        own limit (1000 for HalfCheetah, 50 for Reacher).
      policy: one of `POLICIES`.
      seed: seed of the resets and of the policy.
      workers: processes that run episodes in parallel, each with its own environment
        (`collect_in_parallel`); the episodes are the same for any number.
      progress: show a progress bar over episodes.

    Returns:
      The episodes; states are observations named ``obs.<i>``, actions named
      ``act.<actuator or joint>``, ``fps = 1 / env.unwrapped.dt``, source ``"gym:<env_id>"``.

    Raises:
      InputError: an unknown or non-MuJoCo environment id, or another bad argument.
      InvdynError: `MAX_DISCARDS` episodes in a row ended before `MIN_STEPS` steps.
    """
    gym = import_gymnasium()
    count = check_count("episodes", episodes)
    steps = (
        None
        if steps_per_episode is None
        else check_count("steps_per_episode", steps_per_episode, minimum=MIN_STEPS)
    )
    if policy not in POLICIES:
        raise InputError(f"unknown policy {policy!r}; expected one of {', '.join(POLICIES)}")
    seed = check_count("seed", seed, minimum=0)
    env = make_env(gym, env_id, steps)
    try:
        draw = functools.partial(_gym_episodes, env_id, steps, policy, seed)
        collected, discarded = collect_in_parallel(
            draw, count, workers, progress=progress, desc=f"collect {env_id}"
        )
        return _gym_collection(env, env_id, collected, discarded, count, policy, seed)
    finally:
        env.close()


def collect_in_parallel(
    draw: Callable[..., list[tuple[CollectedEpisode, int]]],
    count: int,
    workers: int,
    *,
    progress: bool = False,
    desc: str = "collect",
) -> tuple[list[CollectedEpisode], int]:
    """Episodes ``0 .. count - 1`` from ``draw(indices, done=None)``, and how many draws were
    discarded.

    `draw` returns each index's episode and discarded draws, calling ``done()`` after each
    when given. Each episode is seeded by its index alone, so the result does not depend on
    `workers`: with more than one, `draw` runs on shards of the indices in a pool of processes
    (`invdyn._parallel.map_in_shards`; a script that calls this must do so under
    ``if __name__ == "__main__":``).
    """
    drawn = map_in_shards(draw, range(count), workers, progress=progress, desc=desc)
    return [episode for episode, _ in drawn], sum(discards for _, discards in drawn)


def _robot_episodes(
    model: Model,
    duration: float,
    rate: float,
    plant: Plant,
    seed: int,
    indices: Iterable[int],
    done: Callable[[], Any] | None = None,
) -> list[tuple[CollectedEpisode, int]]:
    """`collect_robot`'s episodes of `indices`, each with its discarded draws."""
    sim = build_mujoco(model, plant=plant)
    drawn = []
    for k in indices:
        for attempt in range(MAX_DISCARDS + 1):
            episode = _robot_episode(model, sim, duration, rate, plant, (seed, k, attempt))
            if episode is not None:
                break
        else:
            raise InvdynError(
                f"collect_robot: {MAX_DISCARDS + 1} draws of episode {k} of {model.name!r} all "
                "left the position limits; check the plant and the control rate"
            )
        drawn.append((episode, attempt))
        if done is not None:
            done()
    return drawn


def _gym_episodes(
    env_id: str,
    steps: int | None,
    policy: str,
    seed: int,
    indices: Iterable[int],
    done: Callable[[], Any] | None = None,
) -> list[tuple[CollectedEpisode, int]]:
    """`collect_gym`'s episodes of `indices`, each with its discarded draws."""
    env = make_env(import_gymnasium(), env_id, steps)
    drawn = []
    try:
        for k in indices:
            for attempt in range(MAX_DISCARDS + 1):
                child = np.random.SeedSequence(seed, spawn_key=(k, attempt))
                episode = _gym_episode(env, policy, child)
                if episode is not None:
                    break
            else:
                raise InvdynError(
                    f"{env_id}: {MAX_DISCARDS + 1} draws of episode {k} all ended before "
                    f"{MIN_STEPS} steps; the environment terminates at once"
                )
            drawn.append((episode, attempt))
            if done is not None:
                done()
    finally:
        env.close()
    return drawn


def _gym_collection(
    env: Any,
    env_id: str,
    collected: list[CollectedEpisode],
    discarded: int,
    count: int,
    policy: str,
    seed: int,
) -> Collection:
    """`collect_gym`'s collection of the drawn episodes, described by the made `env`."""
    base = env.unwrapped
    space = env.action_space
    dt = float(base.dt)
    n_state = collected[0].state.shape[1]
    return Collection(
        episodes=tuple(collected),
        state_names=tuple(f"obs.{i}" for i in range(n_state)),
        action_names=_action_names(base.model, int(np.prod(space.shape))),
        fps=1.0 / dt,
        source=f"gym:{env_id}",
        full_state_names=_mujoco_state_names(base.model),
        metadata={
            "collector": "collect_gym",
            "env_id": env_id,
            "episodes": count,
            "max_episode_steps": env.spec.max_episode_steps if env.spec else None,
            "policy": policy,
            "seed": seed,
            "discarded": discarded,
            # the physics the frames span, for MuJoCo's inverse dynamics in evaluation
            "frame_skip": int(getattr(base, "frame_skip", 1)),
            "physics_timestep": float(base.model.opt.timestep),
            "integrator": integrator_name(base.model.opt.integrator),
        },
    )


def _gym_episode(env: Any, policy: str, key: np.random.SeedSequence) -> CollectedEpisode | None:
    """One episode of `collect_gym`, or None if it ended before `MIN_STEPS` steps."""
    base, space = env.unwrapped, env.action_space
    episode_seed = int(key.generate_state(1)[0] & 0x7FFFFFFF)
    rng = np.random.default_rng(key)
    space.seed(episode_seed)
    act = named_policy(policy, env, rng)
    observation, _ = env.reset(seed=episode_seed)
    states, actions, full = [], [], []
    done = False
    while True:
        # record the observation, the full state and the action chosen there
        action = np.asarray(act(observation), dtype=space.dtype)
        states.append(np.asarray(observation, dtype=np.float64).ravel())
        actions.append(action.astype(np.float64))
        full.append(np.concatenate([base.data.qpos, base.data.qvel]))
        if done:
            break
        observation, _, terminated, truncated, _ = env.step(action)
        done = bool(terminated or truncated)
    if len(states) - 1 < MIN_STEPS:
        return None
    return CollectedEpisode(
        state=np.array(states),
        action=np.array(actions),
        timestamp=np.arange(len(states), dtype=np.float64) * float(base.dt),
        full_state=np.array(full),
    )


# the robot source


def _robot_episode(
    model: Model,
    sim: Any,
    duration: float,
    rate: float,
    plant: Plant,
    key: tuple[int, int, int],
) -> CollectedEpisode | None:
    """One draw of an episode of `collect_robot`, or None if it left the position limits.

    Args:
      model: the robot.
      sim: its MuJoCo model, for the full state.
      duration: seconds.
      rate: control rate in Hz.
      plant: the plant.
      key: (seed, episode, attempt), the draw's place in the seed tree.
    """
    seed, episode, attempt = key
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(episode, attempt)))
    trajectory = _excitation(model, duration, rng)
    controller = _noisy_controller(model, trajectory, rate, rng)
    if plant.seed is not None:
        plant = dataclasses.replace(plant, seed=int(rng.integers(2**31)))
    q0, v0, _ = trajectory(0.0)
    run = rollout(
        model, controller, q0=q0, v0=v0, duration=duration, control_rate=rate, plant=plant
    )
    # a joint at its limit feels the limit's constraint force, which the action does not show
    if np.any(run.q < model.q_lower) or np.any(run.q > model.q_upper):
        return None
    qpos, qvel = to_mujoco_state(model, sim, run.q, run.v)
    return CollectedEpisode(
        state=np.concatenate([run.q, run.v], axis=1),
        action=run.tau_applied,
        timestamp=run.time,
        full_state=np.concatenate([qpos, qvel], axis=1),
    )


def _excitation(model: Model, duration: float, rng: np.random.Generator) -> JointTrajectory:
    """A random Fourier excitation within the model's position and velocity limits."""
    nv = model.nv
    frequency = rng.uniform(*BASE_FREQUENCY)
    omega = 2.0 * np.pi * frequency * np.arange(1, HARMONICS + 1)
    # random harmonics decaying as 1 / l; each is R_l sin(l ω t + φ_l), R_l = hypot(a_l, b_l)
    sin = rng.normal(size=(HARMONICS, nv)) / np.arange(1, HARMONICS + 1)[:, None]
    cos = rng.normal(size=(HARMONICS, nv)) / np.arange(1, HARMONICS + 1)[:, None]
    radius = np.hypot(sin, cos)
    # the peak of |x|, |x'| and |x''| is at most the sum over harmonics of R_l (l ω)^k
    peak_x = radius.sum(axis=0)
    peak_v = (omega[:, None] * radius).sum(axis=0)
    peak_a = (omega[:, None] ** 2 * radius).sum(axis=0)

    rest = neutral(model)
    offset = np.zeros(nv)
    amplitude = np.zeros(nv)
    share = rng.uniform(*AMPLITUDE_SHARE, size=nv)
    for i, spec in enumerate(model.jnt_spec):
        qa, va = int(model.jnt_qadr[i]), int(model.jnt_vadr[i])
        lower, upper = float(model.q_lower[qa]), float(model.q_upper[qa])
        if spec.bounded and math.isfinite(lower) and math.isfinite(upper):
            # the mean at random where the amplitude fits between the narrowed limits
            margin = LIMIT_MARGIN * (upper - lower)
            low, high = lower + margin, upper - margin
            amplitude[va] = share[va] * min(0.5 * (high - low), MAX_AMPLITUDE)
            mean = rng.uniform(low + amplitude[va], high - amplitude[va])
            offset[va] = mean - rest[qa]
        else:
            # no finite limits: about a random angle, or the neutral position
            amplitude[va] = share[va] * MAX_AMPLITUDE
            if not spec.bounded:
                offset[va] = rng.uniform(-np.pi, np.pi)
        speed = float(model.dof_velocity_limit[va])
        if math.isfinite(speed) and speed > 0.0:
            amplitude[va] = min(amplitude[va], SPEED_SHARE * speed * peak_x[va] / peak_v[va])
        amplitude[va] = min(amplitude[va], MAX_ACCELERATION * peak_x[va] / peak_a[va])
    scale = amplitude / peak_x
    q_mean = integrate(model, rest, offset)
    return fourier(
        model,
        q_mean,
        sin * scale,
        cos * scale,
        base_frequency=frequency,
        duration=duration,
    )


def _noisy_controller(
    model: Model, trajectory: JointTrajectory, rate: float, rng: np.random.Generator
) -> Any:
    """A tracking law drawn from `ROBOT_LAWS` with random gains, plus Gaussian torque noise."""
    law = ROBOT_LAWS[int(rng.integers(len(ROBOT_LAWS)))]
    omega = rng.uniform(*BANDWIDTH, size=model.nv)
    omega = np.minimum(omega, MAX_BANDWIDTH_STEP * rate)
    zeta = rng.uniform(*DAMPING_RATIO, size=model.nv)
    # the inertia each joint moves when the others are free, 1 / (M^-1)_ii, at its smallest
    # along the excitation: diag M overstates it where joints are coupled, and gains in torque
    # units scaled by that go unstable when the torque is held for a control period
    times = np.linspace(0.0, trajectory.duration, INERTIA_SAMPLES)
    inverse = np.linalg.inv(mass_matrix(model, trajectory(times)[0]))
    inertia = 1.0 / np.max(np.diagonal(inverse, axis1=-2, axis2=-1), axis=0)
    scale = np.ones(model.nv) if law == "computed_torque" else inertia
    gains = Gains(kp=scale * omega**2, kd=2.0 * zeta * scale * omega)
    controller = CONTROLLERS[law](model, trajectory, gains)
    noise = rng.uniform(*TORQUE_NOISE) * inertia
    draws = np.random.default_rng(rng.integers(2**63))

    def noisy(t: float, q: Float, v: Float) -> Float:
        return controller(t, q, v) + noise * draws.standard_normal(model.nv)

    return noisy


# the gym source


def integrator_name(code: int) -> str:
    """The name of MuJoCo's integrator number `code` (``mjtIntegrator``), lower case, as
    `invdyn.sim.Plant.integrator` spells it: "euler", "rk4", "implicit" or "implicitfast"."""
    import mujoco

    return str(mujoco.mjtIntegrator(int(code)).name).removeprefix("mjINT_").lower()


def import_gymnasium() -> ModuleType:
    """The ``gymnasium`` module, or an ImportError that says how to install it."""
    try:
        import gymnasium
    except ImportError as error:
        raise ImportError('collect_gym needs gymnasium: pip install "gymnasium[mujoco]"') from error
    return gymnasium


def make_env(gym: ModuleType, env_id: str, steps: int | None) -> Any:
    """The environment `env_id`, or `InputError` if it is unknown or not a MuJoCo one."""
    if not isinstance(env_id, str):
        raise InputError(f"env_id must be a Gymnasium environment id (str), got {env_id!r}")
    if env_id not in gym.registry:
        close = difflib.get_close_matches(env_id, list(gym.registry), n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise InputError(f"unknown Gymnasium environment {env_id!r}{hint}")
    entry = gym.spec(env_id).entry_point
    if not isinstance(entry, str):
        # gymnasium registers the v2 and v3 MuJoCo environments with an entry point that raises
        raise InputError(
            f"{env_id!r} cannot be made here (the v2 and v3 MuJoCo environments need mujoco-py); "
            "use its v4 or v5 version"
        )
    if not entry.startswith("gymnasium.envs.mujoco"):
        raise InputError(
            f"{env_id!r} is not a Gymnasium MuJoCo environment (its entry point is {entry!r}); "
            "collect_gym needs one such as 'HalfCheetah-v5', 'Hopper-v5' or 'Reacher-v5'"
        )
    options = {} if steps is None else {"max_episode_steps": steps}
    try:
        env = gym.make(env_id, **options)
    except gym.error.DependencyNotInstalled as error:
        raise InputError(
            f"{env_id!r} cannot be made here ({error}); the v4 and v5 MuJoCo environments run "
            "on the mujoco package"
        ) from None
    from gymnasium.envs.mujoco.mujoco_env import MujocoEnv
    from gymnasium.spaces import Box

    if not isinstance(env.unwrapped, MujocoEnv):
        env.close()
        raise InputError(f"{env_id!r} is not a Gymnasium MuJoCo environment")
    if not isinstance(env.action_space, Box) or len(env.action_space.shape) != 1:
        env.close()
        raise InputError(f"{env_id!r} has a {env.action_space} action space, expected a 1-D Box")
    return env


def named_policy(name: str, env: Any, rng: np.random.Generator) -> Any:
    """``act(observation) -> action`` for one episode of the named policy."""
    space = env.action_space
    low, high = np.asarray(space.low, np.float64), np.asarray(space.high, np.float64)
    if name == "random":
        return lambda observation: space.sample()
    centre, half = 0.5 * (high + low), 0.5 * (high - low)
    if name == "scripted" and scriptable(env.unwrapped):
        return _reacher_policy(env.unwrapped, low, high, rng)
    if name == "scripted":
        return _gait_policy(float(env.unwrapped.dt), centre, half, rng)
    rho = math.exp(-float(env.unwrapped.dt) / rng.uniform(*NOISE_TIME))
    sigma = rng.uniform(*NOISE_STD)
    state = {"x": sigma * rng.standard_normal(low.shape)}
    steer = _limit_steering(env.unwrapped) if name == "bounded" else (lambda x: x)

    def noisy(observation: Any) -> Float:
        x = state["x"]
        state["x"] = rho * x + math.sqrt(1.0 - rho**2) * sigma * rng.standard_normal(x.shape)
        return np.clip(centre + half * steer(x), low, high)

    return noisy


def _limit_steering(env: Any) -> Any:
    """``steer(x) -> x'`` for the noisy policy of a MuJoCo environment `env`: `x` plus a soft
    wall that pushes each limited hinge or slide joint driven by an actuator of its own away
    from a limit it is about to reach.

    A joint is about to reach a limit when its position `LIMIT_LOOKAHEAD` seconds ahead, at its
    current velocity, lies within `LIMIT_MARGIN` of its range of that limit; the push grows
    linearly across that margin to `LIMIT_PUSH` (in units of the action half-range). It is a
    continuous function of the state, so the actions stay smooth. Without it random actions
    hold a joint at its limit for long stretches (Reacher's elbow for about 40 % of the
    frames), where the action does not move it and cannot be inferred from the motion.
    """
    model, data = env.model, env.data
    rows = []
    for i in range(model.nu):
        joint = int(model.actuator_trnid[i, 0])
        if (
            int(model.actuator_trntype[i]) != 0  # mjTRN_JOINT
            or joint < 0
            or not model.jnt_limited[joint]
            or int(model.jnt_type[joint]) not in (2, 3)  # mjJNT_SLIDE, mjJNT_HINGE
        ):
            continue
        low, high = (float(r) for r in model.jnt_range[joint])
        margin = LIMIT_MARGIN * (high - low)
        sign = 1.0 if model.actuator_gear[i, 0] >= 0 else -1.0
        qpos, dof = int(model.jnt_qposadr[joint]), int(model.jnt_dofadr[joint])
        rows.append((i, qpos, dof, low + margin, high - margin, margin, sign))

    def steer(x: Float) -> Float:
        x = x.copy()
        for i, qpos, dof, low, high, margin, sign in rows:
            ahead = data.qpos[qpos] + LIMIT_LOOKAHEAD * data.qvel[dof]
            depth = np.clip((ahead - high) / margin, 0.0, 1.0) - np.clip(
                (low - ahead) / margin, 0.0, 1.0
            )
            x[i] -= sign * LIMIT_PUSH * depth
        return x

    return steer


def _gait_policy(dt: float, centre: Float, half: Float, rng: np.random.Generator) -> Any:
    """A periodic gait (see `collect_gym`), one action per call, time advancing by `dt`."""
    frequency, amplitude = rng.uniform(*GAIT_FREQUENCY), rng.uniform(*GAIT_AMPLITUDE)
    phase = rng.uniform(0.0, 2.0 * math.pi, size=centre.shape)
    step = {"k": 0}

    def gait(observation: Any) -> Float:
        t = step["k"] * dt
        step["k"] += 1
        x = amplitude * np.sin(2.0 * math.pi * frequency * t + phase)
        x = x + GAIT_NOISE * rng.standard_normal(centre.shape)
        return np.clip(centre + half * x, centre - half, centre + half)

    return gait


def scriptable(env: Any) -> bool:
    """Whether the scripted policy knows `env` (a Reacher: bodies fingertip and target)."""
    names = {env.model.body(i).name for i in range(env.model.nbody)}
    return {"fingertip", "target"} <= names and type(env).__name__.startswith("Reacher")


def _reacher_policy(env: Any, low: Float, high: Float, rng: np.random.Generator) -> Any:
    """Task-space PD to the target, ``ctrl = J^T kp (target - tip) - kd qdot``, plus noise."""
    import mujoco

    model, data = env.model, env.data
    tip, target = model.body("fingertip").id, model.body("target").id
    dofs = np.array([model.jnt_dofadr[model.actuator_trnid[a, 0]] for a in range(model.nu)])
    kp = rng.uniform(*REACHER_KP)
    kd = rng.uniform(*REACHER_KD)
    noise = rng.uniform(*REACHER_NOISE)
    jacobian = np.zeros((3, model.nv))

    def scripted(observation: Any) -> Float:
        mujoco.mj_jacBody(model, data, jacobian, None, tip)
        error = data.xpos[target] - data.xpos[tip]
        error[2] = 0.0
        ctrl = jacobian[:, dofs].T @ (kp * error) - kd * data.qvel[dofs]
        ctrl += noise * rng.standard_normal(ctrl.shape)
        return np.clip(ctrl, low, high)

    return scripted


def _action_names(model: Any, size: int) -> tuple[str, ...]:
    """``act.<name>`` of each actuator (its joint's name if it has none), or ``act.<i>``."""
    if model.nu != size:
        return tuple(f"act.{i}" for i in range(size))
    names = []
    for a in range(model.nu):
        name = model.actuator(a).name
        if not name and model.actuator_trntype[a] == 0:  # mjTRN_JOINT
            name = model.joint(int(model.actuator_trnid[a, 0])).name
        names.append(f"act.{name or a}")
    return tuple(names)


def _mujoco_state_names(model: Any) -> tuple[str, ...]:
    """Names of ``qpos`` then ``qvel`` of a MuJoCo model, a suffix for multi-coordinate joints."""
    qpos_suffix = {0: ("x", "y", "z", "qw", "qx", "qy", "qz"), 1: ("qw", "qx", "qy", "qz")}
    qvel_suffix = {0: ("vx", "vy", "vz", "wx", "wy", "wz"), 1: ("wx", "wy", "wz")}
    qpos, qvel = [], []
    for j in range(model.njnt):
        name = model.joint(j).name or str(j)
        kind = int(model.jnt_type[j])
        qpos += (
            [f"qpos.{name}.{s}" for s in qpos_suffix[kind]]
            if kind in qpos_suffix
            else [f"qpos.{name}"]
        )
        qvel += (
            [f"qvel.{name}.{s}" for s in qvel_suffix[kind]]
            if kind in qvel_suffix
            else [f"qvel.{name}"]
        )
    return (*qpos, *qvel)


# argument checks
