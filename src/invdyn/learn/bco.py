"""Behavioural cloning from observation (BCO): imitation from state-only demonstrations.

BCO (Torabi, Warnell and Stone 2018, "Behavioral Cloning from Observation") learns a policy
from demonstrations that show the expert's states but not its actions:

1. explore: run a random (``"random"``) or smooth random (``"noisy"``) policy and fit an inverse
   dynamics model (IDM) ``a_t = f(o_t, o_{t+1})`` on its episodes (`invdyn.learn.train.train`);
2. demonstrate: collect the expert's episodes (`invdyn.sim.collect_gym`, ``"scripted"``) and drop
   their actions;
3. label: the IDM predicts the action of every demonstrated transition, from the states alone,
   as `invdyn.learn.label` does for datasets;
4. clone: fit a policy ``obs -> action`` (a small MLP, mean squared error) on the labelled
   demonstrations.

`bco` does all four on a Gymnasium MuJoCo environment with a scripted expert (``Reacher-v5``)
and measures average undiscounted returns on the same seeded evaluation episodes for the
expert, for behavioural cloning on the true expert actions (the reference BCO tries to reach),
for BCO and for a uniformly random policy; policies' actions are clipped to the action space.

Acceptance metric: Reacher's returns are negative (a distance and a control cost per step), so
``bco / expert`` is above 1 for a worse policy and does not say "fraction of the expert". The
metric is the normalised score ``(bco - random) / (expert - random)``: 0 for the random policy,
1 for the expert (`BCOResult.normalised_score`); "BCO reaches at least 80 % of the expert's
return" means ``normalised_score >= 0.8``. The plain ratio is reported too (`return_ratio`).
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray
from torch import nn
from tqdm.auto import tqdm

from invdyn._arrays import check_count
from invdyn._files import finite_json, json_text
from invdyn.errors import InputError
from invdyn.learn.config import ACTIVATIONS, Config, preset
from invdyn.learn.models import InverseDynamicsModel, mlp, window_starts
from invdyn.learn.train import deterministic, evaluate, train
from invdyn.learn.units import Inputs, predict
from invdyn.sim.collect import (
    collect_gym,
    import_gymnasium,
    make_env,
    named_policy,
    scriptable,
)

Float = NDArray[np.float64]

EXPLORATION_POLICIES = ("random", "noisy")
# windows per forward pass when the IDM labels the demonstrations
LABEL_BATCH = 4096
# the stages' seeds, drawn from SeedSequence(seed): exploration, demonstrations, evaluation,
# IDM training, BC on true actions, BC on IDM labels
_STAGES = 6


@dataclasses.dataclass(frozen=True)
class BCOSettings:
    """Everything of a BCO run beyond its data sizes and seed.

    Attributes:
      exploration: the exploration policy, ``"random"`` or ``"noisy"`` (see `collect_gym`).
      eval_episodes: seeded episodes each policy is evaluated on, >= 1.
      steps_per_episode: steps before truncation of every episode (exploration, demonstrations,
        evaluation); None for the environment's own limit (50 for Reacher).
      policy_hidden: widths of the cloned policy's hidden layers (empty: linear).
      policy_activation: one of `invdyn.learn.config.ACTIVATIONS`.
      policy_epochs: passes of the cloned policies over the demonstrations.
      policy_batch_size: transitions per gradient step.
      policy_lr: Adam's learning rate for the cloned policies.
      num_threads: CPU threads for torch (0: torch's default); also the IDM's unless
        `idm_config` sets its own.
    """

    exploration: str = "random"
    eval_episodes: int = 20
    steps_per_episode: int | None = None
    policy_hidden: tuple[int, ...] = (128, 128)
    policy_activation: str = "relu"
    policy_epochs: int = 100
    policy_batch_size: int = 256
    policy_lr: float = 1e-3
    num_threads: int = 0

    def __post_init__(self) -> None:
        if self.exploration not in EXPLORATION_POLICIES:
            raise InputError(
                f"exploration must be one of {list(EXPLORATION_POLICIES)}, got {self.exploration!r}"
            )
        check_count("eval_episodes", self.eval_episodes)
        if self.steps_per_episode is not None:
            check_count("steps_per_episode", self.steps_per_episode)
        hidden = tuple(self.policy_hidden)
        if not all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in hidden):
            raise InputError(f"policy_hidden widths must be integers >= 1, got {hidden!r}")
        object.__setattr__(self, "policy_hidden", hidden)
        if self.policy_activation not in ACTIVATIONS:
            raise InputError(
                f"policy_activation must be one of {list(ACTIVATIONS)}, "
                f"got {self.policy_activation!r}"
            )
        check_count("policy_epochs", self.policy_epochs)
        check_count("policy_batch_size", self.policy_batch_size)
        if not (isinstance(self.policy_lr, (int, float)) and math.isfinite(self.policy_lr)):
            raise InputError(f"policy_lr must be a finite number > 0, got {self.policy_lr!r}")
        if self.policy_lr <= 0:
            raise InputError(f"policy_lr must be a finite number > 0, got {self.policy_lr!r}")
        check_count("num_threads", self.num_threads, minimum=0)


@dataclasses.dataclass(frozen=True)
class BCOResult:
    """The returns and accuracy of a BCO run.

    Attributes:
      env_id: the environment.
      expert_return: average undiscounted return of the scripted expert.
      bc_return: of behavioural cloning on the expert's true actions (the reference).
      bco_return: of behavioural cloning on the IDM's labels (BCO).
      random_return: of a uniformly random policy.
      idm_r2: the IDM's labelling R^2 on the demonstrations against the dropped true actions,
        averaged over action dimensions.
      idm_train_r2: the IDM's R^2 on its held-out exploration episodes (NaN without any).
      normalised_score: ``(bco - random) / (expert - random)``, the acceptance metric.
      bc_normalised_score: ``(bc - random) / (expert - random)``.
      return_ratio: ``bco / expert`` (above 1 means worse when returns are negative).
      eval_episodes: episodes each return is averaged over.
      settings: the run's seed, sizes and settings, as plain JSON data.
    """

    env_id: str
    expert_return: float
    bc_return: float
    bco_return: float
    random_return: float
    idm_r2: float
    idm_train_r2: float
    normalised_score: float
    bc_normalised_score: float
    return_ratio: float
    eval_episodes: int
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON data (NaN becomes null)."""
        result: dict[str, Any] = finite_json(dataclasses.asdict(self))
        return result

    def to_json(self) -> str:
        """The result as indented, strictly valid JSON text."""
        return json_text(self.to_dict())


def bco(
    env_id: str = "Reacher-v5",
    *,
    expert_episodes: int,
    exploration_episodes: int,
    seed: int = 0,
    idm_config: Config | None = None,
    settings: BCOSettings | None = None,
    progress: bool = False,
) -> BCOResult:
    """Behavioural cloning from observation on a Gymnasium environment with a scripted expert.

    Explore, fit an IDM, label state-only expert demonstrations with it, clone a policy from the
    labels, and evaluate (see the module docstring). Every stage is seeded from
    ``numpy.random.SeedSequence(seed)``, and torch runs deterministically, so a run repeats
    exactly on the same machine.

    Args:
      env_id: a Gymnasium MuJoCo environment with a scripted expert in `collect_gym`
        (a ``Reacher``).
      expert_episodes: demonstrations, >= 1.
      exploration_episodes: episodes of the exploration policy the IDM is fitted on, >= 2
        (one or more are held out for validation by the IDM config's ``val_fraction``).
      seed: seed of everything random, >= 0.
      idm_config: the IDM and its training; None for the ``"small"`` preset with 30 epochs.
        Its ``train.seed`` is replaced by one drawn from `seed`.
      settings: exploration policy, evaluation and cloned-policy settings; None for defaults.
      progress: show progress bars.

    Returns:
      The returns, the IDM's labelling accuracy and the normalised score.

    Raises:
      InputError: an unknown or non-MuJoCo environment, one without a scripted expert, or a
        bad count, seed or config.
    """
    n_expert = check_count("expert_episodes", expert_episodes)
    n_explore = check_count("exploration_episodes", exploration_episodes)
    if n_explore < 2:
        raise InputError(f"exploration_episodes must be >= 2, got {n_explore}")
    seed = check_count("seed", seed, minimum=0)
    settings = BCOSettings() if settings is None else settings
    if not isinstance(settings, BCOSettings):
        raise InputError(f"settings must be a BCOSettings, got {type(settings).__name__}")
    if idm_config is None:
        idm_config = preset("small").with_overrides(["train.epochs=30"])
    if not isinstance(idm_config, Config):
        raise InputError(f"idm_config must be a Config, got {type(idm_config).__name__}")
    low, high = _expert_bounds(env_id)
    seeds = [int(s) for s in np.random.SeedSequence(seed).generate_state(_STAGES) & 0x7FFFFFFF]
    explore_seed, demo_seed, eval_seed, idm_seed, bc_seed, bco_seed = seeds
    steps = settings.steps_per_episode
    threads = settings.num_threads

    # explore, and fit the IDM on the exploration episodes
    exploration = collect_gym(
        env_id,
        episodes=n_explore,
        steps_per_episode=steps,
        policy=settings.exploration,  # type: ignore[arg-type]
        seed=explore_seed,
        progress=progress,
    )
    overrides = [f"train.seed={idm_seed}", "train.checkpoint_every=1000000"]
    if idm_config.train.num_threads == 0 and threads:
        overrides.append(f"train.num_threads={threads}")
    idm_config = idm_config.with_overrides(overrides)
    with tempfile.TemporaryDirectory(prefix="invdyn-bco-") as run_dir:
        fitted = train(exploration.episodes, idm_config, run_dir, progress=progress, resume=False)
    idm = fitted.model.cpu().eval()

    # demonstrate, then label the states alone
    demos = collect_gym(
        env_id, episodes=n_expert, steps_per_episode=steps, policy="scripted", seed=demo_seed
    )
    states = [episode.state for episode in demos.episodes]
    with deterministic(idm_config.train.num_threads):
        labels, rows = _label(idm, states)
        idm_r2 = evaluate(idm, demos.episodes)["r2_mean"]
    labels = np.clip(labels, low, high)
    observations = np.concatenate(states)[rows]
    true_actions = np.concatenate([episode.action for episode in demos.episodes])[rows]

    # clone the expert from its true actions (the reference) and from the labels (BCO)
    with deterministic(threads):
        bc_policy = fit_policy(observations, true_actions, settings, seed=bc_seed)
        bco_policy = fit_policy(observations, labels, settings, seed=bco_seed)

    # evaluate every policy on the same seeded episodes
    returns = {}
    names = ("expert", "bc", "bco", "random")
    policies: tuple[Any, ...] = ("scripted", bc_policy, bco_policy, "random")
    for name, policy in tqdm(
        list(zip(names, policies)), disable=not progress, desc="evaluate", unit="policy"
    ):
        with deterministic(threads):
            returns[name] = evaluate_policy(
                env_id,
                policy,
                episodes=settings.eval_episodes,
                seed=eval_seed,
                steps_per_episode=steps,
            )
    span = returns["expert"] - returns["random"]
    return BCOResult(
        env_id=env_id,
        expert_return=returns["expert"],
        bc_return=returns["bc"],
        bco_return=returns["bco"],
        random_return=returns["random"],
        idm_r2=float(idm_r2),
        idm_train_r2=float(fitted.metrics.get("r2_mean", math.nan)),
        normalised_score=_ratio(returns["bco"] - returns["random"], span),
        bc_normalised_score=_ratio(returns["bc"] - returns["random"], span),
        return_ratio=_ratio(returns["bco"], returns["expert"]),
        eval_episodes=settings.eval_episodes,
        settings={
            "seed": seed,
            "expert_episodes": n_expert,
            "exploration_episodes": n_explore,
            "bco": _plain(dataclasses.asdict(settings)),
            "idm": idm_config.to_dict(),
            "n_transitions": len(rows),
        },
    )


class MLPPolicy(nn.Module):
    """A deterministic policy ``obs -> action``: an MLP on normalised observations.

    Observations are standardised and actions de-standardised by the statistics of the
    training data, held as buffers; `act` takes and returns physical units.
    """

    def __init__(
        self,
        n_obs: int,
        n_action: int,
        hidden: tuple[int, ...],
        activation: str,
        stats: tuple[Float, Float, Float, Float],
    ) -> None:
        super().__init__()
        self.net = mlp(n_obs, hidden, n_action, activation)
        for name, value in zip(("obs_mean", "obs_std", "action_mean", "action_std"), stats):
            self.register_buffer(name, torch.as_tensor(value, dtype=torch.float32))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """(B, n_obs) physical observations -> (B, n_action) normalised actions."""
        return self.net((obs - self.obs_mean) / self.obs_std)  # type: ignore[operator]

    @torch.no_grad()
    def act(self, observation: Any) -> Float:
        """(n_obs) observation -> (n_action) action in physical units."""
        obs = torch.as_tensor(np.asarray(observation, np.float32).reshape(1, -1))
        action = self.forward(obs) * self.action_std + self.action_mean  # type: ignore[operator]
        return action[0].double().numpy()


def fit_policy(
    observations: Float, actions: Float, settings: BCOSettings, *, seed: int
) -> MLPPolicy:
    """Behavioural cloning: an `MLPPolicy` fitted to (observation, action) pairs by MSE.

    Adam at ``settings.policy_lr`` for ``settings.policy_epochs`` seeded shuffles of the pairs,
    on standardised observations and actions.

    Args:
      observations: (N, n_obs) observations.
      actions: (N, n_action) the actions taken there.
      settings: the policy's width, epochs, batch size and learning rate.
      seed: seeds the initialisation and the shuffles.

    Returns:
      The fitted policy, in eval mode, on the CPU.
    """
    obs = np.asarray(observations, np.float64)
    act = np.asarray(actions, np.float64)
    if obs.ndim != 2 or act.ndim != 2 or len(obs) != len(act) or len(obs) == 0:
        raise InputError(
            f"fit_policy needs (N, n_obs) observations and (N, n_action) actions, N >= 1; got "
            f"{obs.shape} and {act.shape}"
        )
    stats = (*_standardise(obs), *_standardise(act))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        policy = MLPPolicy(
            obs.shape[1], act.shape[1], settings.policy_hidden, settings.policy_activation, stats
        )
    x = torch.as_tensor(obs, dtype=torch.float32)
    y = torch.as_tensor((act - stats[2]) / stats[3], dtype=torch.float32)
    optimizer = torch.optim.Adam(policy.parameters(), lr=settings.policy_lr)
    generator = torch.Generator().manual_seed(seed)
    size = settings.policy_batch_size
    policy.train()
    # epochs of seeded shuffles, one Adam step per batch
    for _ in range(settings.policy_epochs):
        order = torch.randperm(len(x), generator=generator)
        for start in range(0, len(x), size):
            rows = order[start : start + size]
            loss = torch.mean((policy(x[rows]) - y[rows]) ** 2)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    return policy.eval()


def evaluate_policy(
    env_id: str,
    policy: Any,
    *,
    episodes: int,
    seed: int = 0,
    steps_per_episode: int | None = None,
) -> float:
    """Average undiscounted return of a policy over seeded episodes.

    Episode k is reset from ``numpy.random.SeedSequence(seed, spawn_key=(k,))``, so policies
    evaluated with the same seed meet the same initial states and targets. Actions are clipped
    to the action space.

    Args:
      env_id: a Gymnasium MuJoCo environment.
      policy: ``"random"`` (uniform in the action space, seeded), ``"scripted"`` or ``"noisy"``
        (`collect_gym`'s policies, seeded per episode), an `MLPPolicy`, or any callable
        ``observation -> action``.
      episodes: number of episodes, >= 1.
      seed: seed of the resets and of random policies.
      steps_per_episode: steps before truncation; None for the environment's own limit.

    Returns:
      The mean over episodes of the sum of rewards.
    """
    count = check_count("episodes", episodes)
    seed = check_count("seed", seed, minimum=0)
    steps = (
        None if steps_per_episode is None else check_count("steps_per_episode", steps_per_episode)
    )
    env = make_env(import_gymnasium(), env_id, steps)
    try:
        space = env.action_space
        low, high = np.asarray(space.low, np.float64), np.asarray(space.high, np.float64)
        total = 0.0
        for k in range(count):
            key = np.random.SeedSequence(seed, spawn_key=(k,))
            episode_seed = int(key.generate_state(1)[0] & 0x7FFFFFFF)
            space.seed(episode_seed)
            if isinstance(policy, str):
                act = named_policy(policy, env, np.random.default_rng(key))
            elif isinstance(policy, MLPPolicy):
                act = policy.act
            elif callable(policy):
                act = policy
            else:
                raise InputError(f"policy must be a name or a callable, got {policy!r}")
            observation, _ = env.reset(seed=episode_seed)
            # one episode, summing the rewards
            done = False
            while not done:
                action = np.clip(np.asarray(act(observation), np.float64), low, high)
                observation, reward, terminated, truncated, _ = env.step(action.astype(space.dtype))
                total += float(reward)
                done = bool(terminated or truncated)
        return total / count
    finally:
        env.close()


def _label(idm: InverseDynamicsModel, states: list[Float]) -> tuple[Float, Any]:
    """(N, n_action) the IDM's action for every window of the state-only episodes `states`, and
    (N,) the row of each window's ``o_t`` in the concatenated states."""
    config = idm.config
    rows, _ = window_starts(
        [len(s) for s in states], context=config.context, ahead=config.offsets[-1]
    )
    labels, _ = predict(idm, Inputs([len(s) for s in states], states, {}), LABEL_BATCH)
    return labels.astype(np.float64), rows


def _expert_bounds(env_id: str) -> tuple[Float, Float]:
    """The action bounds of `env_id`, or `InputError` unless it is a Gymnasium MuJoCo
    environment with a scripted expert."""
    env = make_env(import_gymnasium(), env_id, None)
    try:
        if not scriptable(env.unwrapped):
            raise InputError(
                f"bco needs an environment with a scripted expert (a Reacher); {env_id!r} has none"
            )
        space = env.action_space
        return np.asarray(space.low, np.float64), np.asarray(space.high, np.float64)
    finally:
        env.close()


def _standardise(x: Float) -> tuple[Float, Float]:
    """Mean and standard deviation of each column, a constant column's deviation taken as 1."""
    std = x.std(axis=0)
    return x.mean(axis=0), np.where(std > 1e-8, std, 1.0)


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator != 0 else math.nan


def _plain(value: Any) -> Any:
    """Tuples as lists, for JSON."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
