"""Held-out evaluation of a trained inverse dynamics model, against two baselines on its windows.

`evaluate_checkpoint` measures a checkpoint on the held-out episodes of a dataset:

- which episodes: those of the dataset that the checkpoint was not trained on. Its
  ``train_state.json`` records the split of the training data and the fingerprint of each
  episode's values in float32 and in float16 (`invdyn.learn.data.episode_fingerprints`: a copy
  in lower precision is the same data), and those of the episodes that the checkpoint it started
  from (``train.init``) was trained on, so that its training episodes are recognised in any
  dataset that holds them, and left out, a warning says, when there are others (the training
  data extended with more episodes). On the training data itself these are its validation
  episodes; on a dataset collected apart, every episode. A checkpoint of an earlier version
  records only the fingerprint of the whole training data: its episodes are recognised when they
  are the dataset's first ones; otherwise every episode is evaluated and assumed held out. When
  every episode was trained on (nothing was held out), all are evaluated, with a warning; or the
  episodes the caller names.
- what: per action dimension the coefficient of determination ``R^2``, the normalised mean
  squared error (MSE over the target's variance, ``R^2 = 1 - NMSE``) and the mean absolute
  error, and their means (`Metrics`), as `invdyn.learn.train.evaluate` computes them; a chunked
  model pools its ``H`` steps.
- against:

  * ``linear``: ridge regression (regulariser `RIDGE`, relative to the features' scale, so in
    effect ordinary least squares) from the same window the model sees, ``o_{t-C} .. o_t``,
    ``o_{t+H}`` and ``o_{t+H} - o_t``, to the action(s). It is fitted on the checkpoint's
    training episodes when the dataset holds them; otherwise on the dataset's episodes that
    are not evaluated, if the caller named the evaluated ones; otherwise by cross-fitting over
    the evaluated episodes in `FOLDS` episode folds (each fold predicted by a fit on the other
    ~80%), so that no window is predicted by a fit that saw its episode. A feature constant
    in the fitted windows, to rounding relative to its size (`invdyn.metrics.varies`: a
    target's position in one episode), is left out of the fit. A dataset without states
    (frames alone) has no linear baseline: a map of no features is the mean action, whose
    R^2 is 0 by definition.
  * ``oracle``: the known physics, when there is one. For a dataset collected from an invdyn
    robot (`invdyn.sim.collect_robot`: source ``"invdyn:<robot>"``, state ``(q, v)`` named
    ``q.*`` and ``v.*``), ``tau_t = rnea(model, q_t, v_t, (v_{t+1} - v_t) * fps)``. MuJoCo's
    semi-implicit Euler step is ``v_{t+1} = v_t + dt M(q_t)^-1 (tau_t - h(q_t, v_t))``, so this
    is exact (to rounding) when every frame is one physics step of the exact plant (control
    rate = 1 / timestep, no payload, friction or sensor noise); with several physics steps per
    frame it is the mean acceleration over the frame, an approximation. For a dataset of a
    Gymnasium MuJoCo environment (source ``"gym:<env id>"``) written by
    `invdyn.learn.data.write_collection`, which stores MuJoCo's full state ``(qpos, qvel)`` as
    ``observation.mujoco_state``: the environment's ``MjModel`` is rebuilt
    (``gymnasium.make(env_id).unwrapped.model``; a ``physics_timestep`` or ``integrator`` in
    the dataset's metadata replaces the registered one), ``mj_inverse`` runs at ``qpos_t,
    qvel_t`` with ``qacc = (qvel_{t+1} - qvel_t) * fps`` (discrete-time, mjENBL_INVDISCRETE,
    for the Euler and implicit integrators, which accounts for implicit damping) and gives
    ``qfrc_inverse = qfrc_applied + J^T xfrc_applied + qfrc_actuator``, contact and constraint
    forces accounted for by MuJoCo's inverse constraint model; with no applied forces this is
    ``moment^T (gain * ctrl + bias)`` for affine actuators (gymnasium's motors: gear in the
    moment, gain 1, no bias), solved for ``ctrl`` by least squares over the dofs and clipped to
    ``ctrlrange`` when every recorded action lies in it (MuJoCo clamps ``ctrl`` there). That
    is exact to rounding with one Euler (or implicit) step per frame (``frame_skip = 1``);
    with the registered ``frame_skip`` (5 for HalfCheetah) the finite difference is the mean
    acceleration over the frame's steps, and RK4 (Hopper, Reacher, Ant) differs from the
    one-step model, so the oracle then shoots (`shooting_ctrl`): from that ``ctrl``,
    `SHOOTING_ITERATIONS` Gauss-Newton steps make the frame's physics steps, rolled out as the
    environment steps them (``mujoco.rollout``), end at ``qvel_{t+1}``. Without the full state
    (a Gymnasium observation leaves out part of MuJoCo's state), with actuators that have
    activation dynamics or muscle gains, or for other sources, it is unavailable, with the
    reason.

- and for a model of frames that estimates the states (`ModelConfig.state_weight`): the same
  metrics of its estimate of each window's next state ``o_{t+H}`` against the recorded one,
  per state dimension: where the frames locate the robot poorly (a joint too small in the
  image, hidden from every camera), the actions that depend on it are poorly predicted too.

`save_evaluation` writes the report as ``metrics.json`` and a plot of the predicted and
recorded actions of one evaluated episode.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from invdyn._files import atomic_open, json_text
from invdyn.errors import DataError, InputError, warn
from invdyn.learn.checkpoint import check_sizes, load_checkpoint
from invdyn.learn.data import (
    EPISODE_FINGERPRINTS,
    MUJOCO_STATE,
    Dataset,
    episode_fingerprints,
    matching_episodes,
    read_dataset,
    read_frame_columns,
    read_metadata,
)
from invdyn.learn.models import (
    Float,
    InverseDynamicsModel,
    Windows,
    episode_arrays,
    make_windows,
    select_windows,
)
from invdyn.learn.train import _fingerprint, eval_batches, trained_fingerprints
from invdyn.metrics import ONE_SAMPLE, Metrics, varies

METRICS_FILE = "metrics.json"
PREDICTIONS_FILE = "predictions.png"
# ridge regulariser of the linear baseline, times the mean squared feature (standardised: 1)
RIDGE = 1e-8
# episode folds of the linear baseline's cross-fitting when no training episodes are known
FOLDS = 5
# most steps of the example episode kept for the plot
PLOT_STEPS = 2000
# the Gymnasium oracle's shooting (`shooting_ctrl`): Gauss-Newton steps, forward-difference
# step relative to the ctrl (at least 1), and windows rolled out per batch
SHOOTING_ITERATIONS = 3
SHOOTING_STEP = 1e-6
SHOOTING_CHUNK = 1024


@dataclasses.dataclass(frozen=True, eq=False)
class EpisodePrediction:
    """The recorded and predicted actions along one evaluated episode (for plots).

    Attributes:
      episode: index of the episode in the dataset.
      time: (T,) time of each window's ``o_t``, in seconds from the episode's start.
      recorded: (T, n_action) the recorded action ``a_t``.
      predicted: predictor name (``"model"``, ``"linear"``, ``"oracle"``) -> (T, n_action)
        its prediction of ``a_t`` (the first step of a chunk).
    """

    episode: int
    time: Float
    recorded: Float
    predicted: dict[str, Float]


@dataclasses.dataclass(frozen=True, eq=False)
class EvaluationReport:
    """The accuracy of a checkpoint and of the baselines on the same held-out windows.

    Attributes:
      action_names: (n_action,) name of each action dimension.
      model: the checkpoint's accuracy.
      linear: the linear baseline's, or None when it could not be fitted.
      oracle: the physics oracle's, or None when the physics is not known.
      linear_note: how the linear baseline was fitted, or why it is missing.
      oracle_note: what the oracle computes, or why it is unavailable.
      episodes: indices of the evaluated episodes in the dataset.
      selection: how they were chosen: ``"validation"`` (the checkpoint's validation
        episodes, the dataset's others being its training ones), ``"held out"`` (the dataset's
        episodes that the checkpoint was not trained on, its training ones left out), ``"all"``
        (the whole dataset: none of it trained on, or not known to be, or, with a warning, all
        of it) or ``"given"`` (by the caller).
      n_windows: number of evaluated windows.
      example: the predictions along one evaluated episode, for plots.
      state_names: (n_state,) name of each state dimension.
      state_estimate: for a model of frames that estimates the states, the accuracy of its
        estimate of each window's next state ``o_{t+H}``; else None.
      trained_episodes: indices of the dataset's episodes that the checkpoint was trained on
        (recognised by their fingerprints); None when the checkpoint cannot tell (one of an
        earlier version, on a dataset that does not start with its training data).
    """

    action_names: tuple[str, ...]
    model: Metrics
    linear: Metrics | None
    oracle: Metrics | None
    linear_note: str
    oracle_note: str
    episodes: tuple[int, ...]
    selection: str
    n_windows: int
    example: EpisodePrediction | None = None
    state_names: tuple[str, ...] = ()
    state_estimate: Metrics | None = None
    trained_episodes: tuple[int, ...] | None = None

    @property
    def n_episodes(self) -> int:
        """Number of evaluated episodes."""
        return len(self.episodes)

    @property
    def n_trained_evaluated(self) -> int | None:
        """Number of evaluated episodes that the checkpoint was trained on; None if not known."""
        if self.trained_episodes is None:
            return None
        return len(set(self.episodes) & set(self.trained_episodes))

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON types: the model's metrics at the top level, then
        ``baselines``, ``state_estimate`` (for a model that estimates the states),
        ``episodes``, ``trained_episodes`` (null when not known) and counts, among them
        ``n_trained_evaluated`` (NaN stays NaN here, and is written as null)."""
        out = self.model.to_dict(self.action_names)
        baselines: dict[str, Any] = {}
        for name, metrics, note in (
            ("linear", self.linear, self.linear_note),
            ("oracle", self.oracle, self.oracle_note),
        ):
            if metrics is None:
                baselines[name] = {"available": False, "reason": note}
            else:
                baselines[name] = {"available": True, "method": note}
                baselines[name] |= metrics.to_dict(self.action_names)
        out["baselines"] = baselines
        if self.state_estimate is not None:
            out["state_estimate"] = self.state_estimate.to_dict(self.state_names)
        out |= {
            "action_names": list(self.action_names),
            "selection": self.selection,
            "episodes": list(self.episodes),
            "trained_episodes": None
            if self.trained_episodes is None
            else list(self.trained_episodes),
            "n_episodes": self.n_episodes,
            "n_trained_evaluated": self.n_trained_evaluated,
            "n_windows": self.n_windows,
        }
        return out

    def to_json(self) -> str:
        """`to_dict` as indented, strictly valid JSON text (`invdyn._files.json_text`)."""
        return json_text(self.to_dict())


def evaluate_checkpoint(
    checkpoint_dir: str | os.PathLike[str],
    dataset: Dataset | str | os.PathLike[str],
    *,
    episodes: Sequence[int] | None = None,
) -> EvaluationReport:
    """Accuracy of a checkpoint on a dataset's held-out episodes, with the baselines.

    See the module docstring for the choice of episodes and the baselines.

    Args:
      checkpoint_dir: a checkpoint directory (``out_dir/checkpoint`` of a training run).
      dataset: a dataset read by `invdyn.learn.data.read_dataset`, or its directory.
      episodes: indices of the episodes to evaluate; None for those the checkpoint was not
        trained on (see the module docstring).

    Returns:
      The report.

    Raises:
      InputError: the dataset has no actions, its state or action size differs from the
        model's, its state or action names or frame rate from the training data's (the
        checkpoint's `DataSpec`), bad `episodes`, or no window to evaluate.
      DataError: the checkpoint or the dataset is missing or corrupt.
    """
    checkpoint = load_checkpoint(checkpoint_dir)
    model = checkpoint.model
    data = dataset if isinstance(dataset, Dataset) else read_dataset(dataset)
    info = data.info
    if info.action_names is None:
        raise InputError(f"dataset {data.path} has no actions to evaluate against")
    state = checkpoint.train_state or {}
    if state.get("finished") is False:
        warn(
            f"{checkpoint_dir} is the checkpoint of epoch {state.get('epoch')} of "
            f"{checkpoint.config.train.epochs}: its training has not finished"
        )
    labeller = read_metadata(data.path).get("labelled_by")
    if labeller:
        warn(
            f"the actions of {data.path} were predicted by the model {labeller}, not recorded: "
            "these scores measure agreement with it"
        )
    # a model of frames alone reads no state: the dataset may have any, or none
    reads_state = model.config.state or bool(model.state_estimators)
    check_sizes(str(data.path), info, model, state=reads_state, actions=True)
    if checkpoint.spec is not None:
        checkpoint.spec.check(
            info,
            str(data.path),
            actions=True,
            state=reads_state,
            cameras=model.config.camera_names,
        )
    arrays = episode_arrays(data)
    count = len(arrays)

    # the dataset's episodes that the checkpoint was trained on and validated on, if known
    run = _run_episodes(state, arrays)
    train_idx = None if run is None else run[0]
    if episodes is not None:
        eval_idx, selection = _given(episodes, count), "given"
    else:
        eval_idx, selection = _held_out(run, count, str(data.path), state)
    config = model.config
    windows = select_windows(arrays, data, eval_idx, config)
    if len(windows) == 0:
        # the training episodes that the choice of held-out ones left out, if it was made here
        left_out = set(train_idx or ()) - set(eval_idx) if episodes is None else set()
        steps = config.context + config.offsets[-1] + 1
        raise InputError(_no_windows(steps, len(eval_idx), len(left_out), count, str(data.path)))
    target = _targets(windows)
    if len(windows) == 1:
        warn(f"{data.path}: the evaluated episodes hold one window: {ONE_SAMPLE}")
    else:
        still = ~varies(target.reshape(-1, target.shape[-1]))
        if still.any():
            names = ", ".join(n for n, s in zip(info.action_names, still, strict=True) if s)
            warn(
                f"{data.path}: the recorded {names} do not vary over the evaluated windows: "
                "their R^2 and nMSE are undefined (NaN), and the means leave them out"
            )

    # the model
    model_actions, estimated_states = _infer(model, windows)
    predictions = {"model": model_actions}
    results: dict[str, Metrics | None] = {"model": _metrics(predictions["model"], target)}

    # the linear baseline
    linear, linear_note = _linear_baseline(arrays, eval_idx, train_idx, windows, config)
    if linear is not None:
        predictions["linear"] = linear
    results["linear"] = None if linear is None else _metrics(linear, target)

    # the physics oracle
    oracle, oracle_note = _oracle(data, windows, eval_idx)
    if oracle is not None:
        predictions["oracle"] = oracle
        if config.horizon > 1:
            oracle_note += (
                f"; it knows each action's next frame, which a model of horizon "
                f"{config.horizon} does not see (it sees o_t and o_(t+{config.horizon}))"
            )
    results["oracle"] = None if oracle is None else _metrics(oracle, target)

    # the states estimated from frames
    state_estimate = None
    if estimated_states is not None:
        recorded = windows.states[windows.obs_index[:, windows.now + 1]]
        state_estimate = _metrics(estimated_states, recorded)

    model_metrics = results["model"]
    assert model_metrics is not None
    return EvaluationReport(
        action_names=tuple(info.action_names),
        model=model_metrics,
        linear=results["linear"],
        oracle=results["oracle"],
        linear_note=linear_note,
        oracle_note=oracle_note,
        episodes=tuple(eval_idx),
        selection=selection,
        n_windows=len(windows),
        example=_example(data, eval_idx, windows, target, predictions),
        state_names=tuple(info.state_names),
        state_estimate=state_estimate,
        trained_episodes=None if train_idx is None else tuple(train_idx),
    )


def save_evaluation(report: EvaluationReport, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``metrics.json`` (atomically) and the plot of the example episode into `out_dir`.

    Returns:
      The files written: ``metrics.json`` and, when the report has an example episode,
      ``predictions.png``.
    """
    from invdyn.viz.plots import plot_predictions, save_figure

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [_write_text(out / METRICS_FILE, report.to_json())]
    example = report.example
    if example is not None:
        others = {k: v for k, v in example.predicted.items() if k != "model"}
        figure = plot_predictions(
            example.time,
            example.recorded,
            example.predicted["model"],
            labels=report.action_names,
            title=(
                f"episode {example.episode}: model R^2 = {report.model.r2_mean:.4f} "
                f"over {_evaluated_in_words(report)}"
            ),
            baselines=others,
        )
        written.append(save_figure(figure, out / PREDICTIONS_FILE))
    return written


def _evaluated_in_words(report: EvaluationReport) -> str:
    """The evaluated episodes, in words: held out only when known to be."""
    trained = report.n_trained_evaluated
    if trained is None:
        return f"{report.n_episodes} episodes"
    if trained == 0:
        return f"{report.n_episodes} held-out episodes"
    return f"{report.n_episodes} episodes, {trained} of them trained on"


# episodes


def _run_episodes(
    state: dict[str, Any], arrays: Sequence[tuple[Float, Float]]
) -> tuple[list[int], list[int]] | None:
    """The dataset's episodes (indices into `arrays`) that the checkpoint's run trained on,
    and those it held out for validation; None when its `state` (``train_state.json``)
    cannot tell.

    An episode is recognised by the fingerprint of its values in float32 or in float16, which
    training stores for each episode (`episode_fingerprints`), wherever it lies in the dataset;
    so are those that the checkpoint the run started from was trained on (`TrainConfig.init`,
    `trained_fingerprints`). A checkpoint of an earlier version stores only the fingerprint of
    its whole training data (in its precision and in float32): the dataset's first episodes
    must be that data.
    """
    train_stored, val_stored = state.get("train_episodes"), state.get("val_episodes")
    if not isinstance(train_stored, list) or not isinstance(val_stored, list):
        return None
    size = len(train_stored) + len(val_stored)
    train_run, val_run = _indices(train_stored, size), _indices(val_stored, size)
    if train_run is None or val_run is None:
        return None
    stored = {
        key: state[key]
        for key in EPISODE_FINGERPRINTS
        if isinstance(state.get(key), list) and len(state[key]) == size
    }
    if stored:
        inherited = trained_fingerprints(state)
        trained = {key: inherited[key] for key in stored}
        validated = {
            key: {prints[i] for i in val_run} - set(trained[key]) for key, prints in stored.items()
        }
        prints = episode_fingerprints(arrays)
        trained_here = matching_episodes(prints, trained)
        return sorted(trained_here), sorted(matching_episodes(prints, validated) - trained_here)
    first = arrays[:size]
    identity = state.get("identity")
    if len(first) == size and (
        (isinstance(identity, dict) and identity.get("data") == _fingerprint(first))
        or state.get("data_float32") == _fingerprint(first, single=True)
    ):
        return train_run, val_run
    return None


def _held_out(
    run: tuple[list[int], list[int]] | None, count: int, path: str, state: dict[str, Any]
) -> tuple[list[int], str]:
    """The episodes to evaluate, of `count`, when the caller names none, and the selection
    (`EvaluationReport.selection`): those not trained on, given `run` (`_run_episodes`) and
    the checkpoint's `state`. Warns when it leaves training episodes out of a dataset that
    holds more than the run's validation episodes besides (the training data extended), when
    every episode was trained on (all are then evaluated), and when a checkpoint that records
    its split cannot tell its training episodes in the dataset."""
    if run is None:
        if isinstance(state.get("train_episodes"), list):
            warn(
                f"the model's checkpoint (of an earlier version) cannot tell whether {path} "
                "holds episodes it was trained on, unless they are its first: every episode "
                "is evaluated as held out; train again to have them recognised"
            )
        return list(range(count)), "all"
    trained, validated = run
    held_out = sorted(set(range(count)) - set(trained))
    if not held_out:
        reason = (
            "none of the training data was held out (train.val_fraction)"
            if state.get("val_episodes") == []
            else "it holds none of the episodes the run held out"
        )
        warn(
            f"every episode of {path} is one the model was trained on, as {reason}: these "
            "scores are of training episodes"
        )
        return list(range(count)), "all"
    if held_out == validated:
        return held_out, "validation"
    if not trained:
        return held_out, "all"
    warn(
        f"{len(trained)} of the {count} episodes of {path} are episodes the model was trained "
        f"on (recognised by their values): they are left out, and the other {len(held_out)} "
        f"evaluated ({len(validated)} of them its validation episodes)"
    )
    return held_out, "held out"


def _no_windows(steps: int, evaluated: int, left_out: int, count: int, path: str) -> str:
    """Why the `evaluated` episodes of the `count` in `path` hold no window of `steps` steps:
    they are shorter, once `left_out` training episodes were left out."""
    short = f"shorter than context + horizon + future + 1 = {steps} steps"
    if not left_out:
        return f"no windows to evaluate: the episodes are {short}"
    return (
        f"no windows to evaluate: {left_out} of the {count} episodes of {path} are ones the "
        f"model was trained on, left out, and the {evaluated} left "
        f"{'is' if evaluated == 1 else 'are'} {short}"
    )


def _indices(value: Any, count: int) -> list[int] | None:
    """A stored list of episode indices, or None if it is not one valid for `count` episodes."""
    if not isinstance(value, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) and 0 <= i < count for i in value
    ):
        return None
    return sorted(set(value))


def _given(episodes: Sequence[int], count: int) -> list[int]:
    """The caller's episode indices, checked; negative ones count from the end."""
    if isinstance(episodes, str | bytes) or not isinstance(episodes, Sequence | np.ndarray):
        raise InputError(f"episodes must be a sequence of indices, got {episodes!r}")
    out = []
    for i in episodes:
        if isinstance(i, bool | np.bool_) or not isinstance(i, int | np.integer):
            raise InputError(f"episode indices must be integers, got {i!r}")
        if not -count <= i < count:
            raise InputError(f"episode {i} out of range: the dataset has {count} episodes")
        out.append(int(i) % count)
    if not out:
        raise InputError("episodes must name at least one episode")
    return sorted(set(out))


# predictions and metrics


def _targets(windows: Windows) -> Float:
    """(N, n_out, n_action) the recorded actions of each window."""
    return windows.actions[windows.action_index]


def _infer(model: InverseDynamicsModel, windows: Windows) -> tuple[Float, Float | None]:
    """(N, n_out, n_action) the model's actions for every window and, for a model that
    estimates states from frames, (N, n_state) its estimate of every window's next state
    ``o_{t+H}`` (else None): one pass over the windows."""
    actions, states = [], []
    for batch in eval_batches(model, windows):
        inference = model.infer(batch)
        mean = inference.actions.double().cpu().numpy()
        actions.append(mean.reshape(len(mean), -1, model.n_action))
        if inference.states is not None:
            # the estimates start at the window's second observation
            states.append(inference.states[:, windows.now].double().cpu().numpy())
    return np.concatenate(actions), np.concatenate(states) if states else None


def _metrics(prediction: Float, target: Float) -> Metrics:
    """Metrics of (N, n_out, n) predictions (or (N, n)), the steps of a chunk pooled."""
    n_action = target.shape[-1]
    return Metrics.of(prediction.reshape(-1, n_action), target.reshape(-1, n_action))


# the linear baseline


def _features(windows: Windows) -> Float:
    """(N, n_features) the window the model sees: ``o_{t-C} .. o_t, o_{t+H}`` and the change."""
    obs = windows.states[windows.obs_index]
    delta = obs[:, -1] - obs[:, -2]
    return np.concatenate([obs.reshape(len(obs), -1), delta], axis=1)


def _fit_linear(x: Float, y: Float) -> tuple[Float, Float, Float]:
    """Ridge regression of (N, d_out) `y` on (N, d_in) `x`, on standardised features.

    A feature constant to rounding in `x` (`invdyn.metrics.varies`, relative to its size) is
    left out: standardising would divide by its rounding error, and another value of it where
    the fit is applied (another episode's) would come out huge.

    Returns:
      the (d_in,) feature means and scales (inf for a feature left out, which `_standardised`
      makes 0), and the (d_in + 1, d_out) weights, the bias last.
    """
    mean = x.mean(axis=0)
    scale: Float = np.where(varies(x), x.std(axis=0), np.inf)
    z = _standardised(x, mean, scale)
    gram = z.T @ z
    # the regulariser spares the bias
    penalty = RIDGE * len(x) * np.eye(z.shape[1])
    penalty[-1, -1] = 0.0
    weights = np.linalg.solve(gram + penalty, z.T @ y)
    return mean, scale, weights.astype(np.float64, copy=False)


def _standardised(x: Float, mean: Float, scale: Float) -> Float:
    """(N, d_in + 1) the (N, d_in) features `x` standardised, then a column of ones (the bias)."""
    return np.concatenate([(x - mean) / scale, np.ones((len(x), 1))], axis=1)


def _apply_linear(fit: tuple[Float, Float, Float], x: Float) -> Float:
    """(N, d_out) the predictions of `_fit_linear`'s `fit` for (N, d_in) features `x`."""
    mean, scale, weights = fit
    return _standardised(x, mean, scale) @ weights


def _linear_baseline(
    arrays: list[tuple[Float, Float]],
    eval_idx: list[int],
    train_idx: list[int] | None,
    windows: Windows,
    config: Any,
) -> tuple[Float | None, str]:
    """(N, n_out, n_action) the linear baseline's actions for `windows`, and how it was fitted."""
    shape = (*windows.action_index.shape, windows.actions.shape[1])
    x_eval = _features(windows)
    if x_eval.shape[1] == 0:
        return None, (
            "none: the dataset has no state (frames alone), and a linear map of no features "
            "would be the mean action, whose R^2 is 0 by definition"
        )
    # training episodes: the checkpoint's, else those not evaluated; cross-fitting instead
    # where its every fit sees more episodes than they are
    fit_idx = [i for i in (train_idx or []) if i not in eval_idx]
    note = "ridge regression on the checkpoint's training episodes"
    if not fit_idx:
        fit_idx = [i for i in range(len(arrays)) if i not in eval_idx]
        note = "ridge regression on the dataset's episodes not evaluated"
    folds = min(FOLDS, len(eval_idx))
    cross_fitted = len(eval_idx) - math.ceil(len(eval_idx) / folds) if folds >= 2 else 0
    if fit_idx and len(fit_idx) >= cross_fitted:
        fit_w = make_windows([arrays[i] for i in fit_idx], config)
        if len(fit_w) > 0:
            fit = _fit_linear(_features(fit_w), _targets(fit_w).reshape(len(fit_w), -1))
            return _apply_linear(fit, x_eval).reshape(shape), f"{note} ({len(fit_idx)})"
    # cross-fitting: each fold of evaluated episodes predicted by a fit on the others
    if folds < 2:
        return None, "no training episodes known and a single evaluated episode to fit on"
    order = np.random.default_rng(0).permutation(len(eval_idx))
    fold_of = np.empty(len(eval_idx), dtype=np.int64)
    fold_of[order] = np.arange(len(eval_idx)) % folds
    window_fold = fold_of[windows.episode]
    y = _targets(windows).reshape(len(windows), -1)
    prediction = np.empty_like(y)
    for k in range(folds):
        held = window_fold == k
        if held.any() and (~held).any():
            fit = _fit_linear(x_eval[~held], y[~held])
            prediction[held] = _apply_linear(fit, x_eval[held])
        elif held.any():
            return None, "cross-fitting found no windows to fit on"
    known = (
        f"more than the {len(fit_idx)} other episodes known"
        if fit_idx
        else "no training episodes known"
    )
    note = (
        f"ridge regression cross-fitted over {folds} folds of the evaluated episodes (each "
        f"predicted by a fit on the others, at least {cross_fitted} episodes: {known})"
    )
    return prediction.reshape(shape), note


# the physics oracle


def _oracle(data: Dataset, windows: Windows, eval_idx: list[int]) -> tuple[Float | None, str]:
    """(N, n_out, n_action) the oracle's actions for `windows`, and what it is (or why not)."""
    info = data.info
    source = info.source
    if source.startswith("gym:"):
        return _gym_oracle(data, windows, eval_idx)
    if not source.startswith("invdyn:"):
        return None, f"the physics of source {source!r} is not known"
    from invdyn.dynamics import rnea
    from invdyn.sim.collect import load_robot_source
    from invdyn.sim.rollout import csv_columns

    try:
        model = load_robot_source(source)
    except InputError as exc:
        return None, str(exc)
    robot = source.removeprefix("invdyn:")
    state_names = tuple(c for c in csv_columns(model) if c.startswith(("q.", "v.")))
    action_names = tuple(f"tau.{name}" for name in model.joint_names)
    if info.state_names != state_names or info.action_names != action_names:
        return None, (
            f"the dataset's state and action names are not those of invdyn's {robot!r} "
            f"({list(state_names)}, {list(action_names)})"
        )
    # tau_t = rnea(q_t, v_t, (v_{t+1} - v_t) fps) for each target row t
    rows = windows.action_index.reshape(-1)
    states = windows.states
    q, v = states[rows, : model.nq], states[rows, model.nq :]
    v_next = states[rows + 1, model.nq :]
    tau = rnea(model, q, v, (v_next - v) * info.fps)
    note = (
        f"rnea({robot}, q_t, v_t, (v_(t+1) - v_t) * fps) at fps = {info.fps:g}: exact for one "
        "MuJoCo semi-implicit Euler step per frame of the exact plant, approximate otherwise"
    )
    return np.asarray(tau).reshape((*windows.action_index.shape, model.nv)), note


def _gym_oracle(data: Dataset, windows: Windows, eval_idx: list[int]) -> tuple[Float | None, str]:
    """The oracle of a Gymnasium MuJoCo dataset: ``mj_inverse`` on its stored full state.

    ctrl_t solves ``moment^T (gain * ctrl + bias) = qfrc_inverse`` (least squares over the
    actuated dofs) at ``qpos_t, qvel_t`` and ``qacc = (qvel_{t+1} - qvel_t) * fps``; see the
    module docstring.
    """
    source = data.info.source
    env_id = source.removeprefix("gym:")
    try:
        full = read_frame_columns(data.path, [MUJOCO_STATE])[MUJOCO_STATE]
        metadata = read_metadata(data.path)
    except DataError:
        return None, (
            f"{source}: the dataset stores the environment's observation, not MuJoCo's full "
            f"state (qpos, qvel) that inverse dynamics needs ({MUJOCO_STATE}; collect with "
            "invdyn.sim.collect_gym and write with invdyn.learn.data.write_collection)"
        )
    try:
        import gymnasium
        import mujoco
    except ImportError as exc:
        return None, f"{source}: the oracle needs gymnasium and mujoco ({exc})"
    try:
        env = gymnasium.make(env_id)
    except Exception as exc:  # unknown ids, missing dependencies, bad assets
        return None, f"{source}: the environment cannot be made: {exc}"
    try:
        base: Any = env.unwrapped
        model = base.model
    except AttributeError:
        return None, f"{source}: not a Gymnasium MuJoCo environment (no model)"
    finally:
        env.close()
    nq, nv, nu = int(model.nq), int(model.nv), int(model.nu)
    full = np.asarray(full, dtype=np.float64)
    if full.ndim != 2 or full.shape[1] != nq + nv or nu != windows.actions.shape[1]:
        return None, (
            f"{source}: the dataset's {MUJOCO_STATE} ({full.shape[1:]}) and action "
            f"({windows.actions.shape[1]}) do not fit the environment's model (nq + nv = "
            f"{nq + nv}, nu = {nu})"
        )
    unsupported = _unsupported_actuators(mujoco, model)
    if unsupported:
        return None, f"{source}: the oracle cannot invert actuators {unsupported}"
    # physics settings the collection recorded in place of the registered environment's
    if "physics_timestep" in metadata:
        model.opt.timestep = float(metadata["physics_timestep"])
    integrator = metadata.get("integrator")
    if integrator is not None:
        try:
            code = getattr(mujoco.mjtIntegrator, f"mjINT_{str(integrator).upper()}")
            model.opt.integrator = int(code)
        except AttributeError:
            return None, f"{source}: unknown integrator {integrator!r} in the dataset's metadata"

    # full states of the evaluated episodes, end to end, as windows.states
    lengths = np.array([len(data.episode(i)) for i in range(len(data))], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)])
    full = np.concatenate([full[starts[i] : starts[i + 1]] for i in eval_idx])
    rows, inverse = np.unique(windows.action_index.reshape(-1), return_inverse=True)
    period = 1.0 / data.info.fps
    ctrl = gym_inverse_ctrl(mujoco, model, full[rows], full[rows + 1, nq:], period)

    # mujoco clamps ctrl to ctrlrange: so does the oracle, if the recorded actions respect it
    limited = model.actuator_ctrllimited.astype(bool)
    low, high = model.actuator_ctrlrange[:, 0], model.actuator_ctrlrange[:, 1]
    recorded = windows.actions
    inside = (recorded[:, limited] >= low[limited]) & (recorded[:, limited] <= high[limited])
    clipped = bool(limited.any()) and bool(np.all(inside))
    if clipped:
        ctrl[:, limited] = np.clip(ctrl[:, limited], low[limited], high[limited])

    how = gym_inverse_note(mujoco, model, period)
    note = f"{env_id}: {how}{', clipped to ctrlrange' if clipped else ''}"
    return ctrl[inverse].reshape((*windows.action_index.shape, nu)), note


# mujoco's integrators (mjtIntegrator) by name; discrete-time inverse dynamics (mj_inverse
# with mjENBL_INVDISCRETE) supports all but RK4


def _unsupported_actuators(mujoco: Any, model: Any) -> list[str]:
    """Actuators whose force is not affine in ctrl given (qpos, qvel): activation dynamics,
    muscle or user gains and biases."""
    gains = {int(mujoco.mjtGain.mjGAIN_FIXED), int(mujoco.mjtGain.mjGAIN_AFFINE)}
    biases = {int(mujoco.mjtBias.mjBIAS_NONE), int(mujoco.mjtBias.mjBIAS_AFFINE)}
    names = []
    for a in range(int(model.nu)):
        if (
            int(model.actuator_dyntype[a]) != int(mujoco.mjtDyn.mjDYN_NONE)
            or int(model.actuator_gaintype[a]) not in gains
            or int(model.actuator_biastype[a]) not in biases
        ):
            names.append(model.actuator(a).name or str(a))
    return names


def _inverse_ctrl(mujoco: Any, model: Any, state: Float, qvel_next: Float, period: float) -> Float:
    """(T, nu) the ctrl that takes each (qpos, qvel) of (T, nq + nv) `state` to (T, nv)
    `qvel_next` in `period` seconds, by MuJoCo's inverse dynamics.

    qfrc_inverse = qfrc_applied + J^T xfrc_applied + qfrc_actuator (MuJoCo's inverse model,
    constraint and contact forces included), the applied forces zero, and the force of an
    affine actuator is gain(l, v) * ctrl + bias(l, v).
    """
    nq, nu = int(model.nq), int(model.nu)
    data = mujoco.MjData(model)
    discrete = int(model.opt.integrator) != int(mujoco.mjtIntegrator.mjINT_RK4)
    if discrete:
        model.opt.enableflags |= int(mujoco.mjtEnableBit.mjENBL_INVDISCRETE)
    gain_affine = model.actuator_gaintype == int(mujoco.mjtGain.mjGAIN_AFFINE)
    bias_affine = model.actuator_biastype == int(mujoco.mjtBias.mjBIAS_AFFINE)
    gainprm, biasprm = model.actuator_gainprm, model.actuator_biasprm
    moment = np.zeros((nu, int(model.nv)))
    ctrl = np.empty((len(state), nu))
    for k in range(len(state)):
        # inverse dynamics at the finite-differenced acceleration
        data.qpos[:] = state[k, :nq]
        data.qvel[:] = state[k, nq:]
        data.qacc[:] = (qvel_next[k] - state[k, nq:]) / period
        mujoco.mj_inverse(model, data)
        # actuator moments (sparse rows) and the affine force law at this state
        moment[:] = 0.0
        for a in range(nu):
            adr, count = data.moment_rowadr[a], data.moment_rownnz[a]
            moment[a, data.moment_colind[adr : adr + count]] = data.actuator_moment[
                adr : adr + count
            ]
        length, velocity = data.actuator_length, data.actuator_velocity
        gain = gainprm[:, 0] + gain_affine * (gainprm[:, 1] * length + gainprm[:, 2] * velocity)
        bias = bias_affine * (biasprm[:, 0] + biasprm[:, 1] * length + biasprm[:, 2] * velocity)
        # moment^T (gain ctrl + bias) = qfrc_inverse, least squares over the dofs
        matrix = moment.T * gain
        ctrl[k] = np.linalg.lstsq(matrix, data.qfrc_inverse - moment.T @ bias, rcond=None)[0]
    return ctrl


def gym_inverse_ctrl(
    mujoco: Any, model: Any, state: Float, qvel_next: Float, period: float
) -> Float:
    """(T, nu) the ctrl that takes each (qpos, qvel) of (T, nq + nv) `state` to (T, nv)
    `qvel_next` in `period` seconds of the environment's physics steps: MuJoCo's inverse
    dynamics at the finite-difference acceleration (`_inverse_ctrl`), exact for one Euler (or
    implicit) step, refined by shooting (`shooting_ctrl`) otherwise; `gym_inverse_note` says
    which, in words."""
    ctrl = _inverse_ctrl(mujoco, model, state, qvel_next, period)
    steps, exact = _frame_steps(mujoco, model, period)
    return ctrl if exact else shooting_ctrl(mujoco, model, state, qvel_next, steps, ctrl)


def gym_inverse_note(mujoco: Any, model: Any, period: float) -> str:
    """How `gym_inverse_ctrl` finds the ctrl of `model` for frames of `period` seconds."""
    from invdyn.sim.collect import integrator_name

    steps, exact = _frame_steps(mujoco, model, period)
    timestep = float(model.opt.timestep)
    name = integrator_name(model.opt.integrator)
    frame = f"{steps} {name} physics step{'s' if steps > 1 else ''} of {timestep:g} s per frame"
    inverse = "mujoco.mj_inverse at (qpos_t, qvel_t) with qacc = (qvel_(t+1) - qvel_t) / period"
    if exact:
        return f"{inverse} ({frame}, discrete-time inverse), solved for ctrl: exact"
    return (
        f"the ctrl that, held for the frame's {frame} from (qpos_t, qvel_t), ends at "
        f"qvel_(t+1): {SHOOTING_ITERATIONS} Gauss-Newton steps of mujoco.rollout from {inverse}"
    )


def _frame_steps(mujoco: Any, model: Any, period: float) -> tuple[int, bool]:
    """The physics steps of `model` in a frame of `period` seconds, and whether mj_inverse at
    the finite-difference acceleration is exact for them: one Euler (or implicit) step."""
    steps = max(1, round(period / float(model.opt.timestep)))
    rk4 = int(model.opt.integrator) == int(mujoco.mjtIntegrator.mjINT_RK4)
    return steps, steps == 1 and not rk4


def shooting_ctrl(
    mujoco: Any, model: Any, state: Float, qvel_next: Float, steps: int, ctrl: Float
) -> Float:
    """(T, nu) `ctrl` refined so that, held for `steps` physics steps from each (qpos, qvel)
    of (T, nq + nv) `state`, it ends at (T, nv) `qvel_next`: `SHOOTING_ITERATIONS` Gauss-Newton
    steps on the velocity error, the Jacobian by forward differences of whole rollouts
    (``mujoco.rollout``, as the environment steps: ``ctrl`` set, ``mj_step`` `steps` times),
    each step kept within ``ctrlrange`` for limited actuators (MuJoCo clamps there)."""
    from mujoco import rollout

    nq, nv, nu = int(model.nq), int(model.nv), int(model.nu)
    spec = int(mujoco.mjtState.mjSTATE_FULLPHYSICS)
    data = mujoco.MjData(model)
    initial = np.empty((len(state), mujoco.mj_stateSize(model, spec)))
    for k, row in enumerate(state):
        data.qpos[:], data.qvel[:] = row[:nq], row[nq:]
        mujoco.mj_getState(model, data, initial[k], spec)
    limited = model.actuator_ctrllimited.astype(bool)
    low = np.where(limited, model.actuator_ctrlrange[:, 0], -np.inf)
    high = np.where(limited, model.actuator_ctrlrange[:, 1], np.inf)
    velocity = slice(1 + nq, 1 + nq + nv)  # the full physics state: time, qpos, qvel, ...
    ctrl = np.clip(ctrl, low, high)
    for first in range(0, len(state), SHOOTING_CHUNK):
        rows = slice(first, first + SHOOTING_CHUNK)
        u, target = ctrl[rows], qvel_next[rows]
        starts = np.repeat(initial[rows], nu + 1, axis=0)
        for _ in range(SHOOTING_ITERATIONS):
            # differences inward from a bound, where MuJoCo's clamp would hide the slope
            step = SHOOTING_STEP * np.maximum(1.0, np.abs(u))
            step = np.where(u + step > high, -step, step)
            # each row's ctrl, then each ctrl nudged in turn: (n, nu + 1, nu)
            tried = np.repeat(u[:, None, :], nu + 1, axis=1)
            tried[:, 1:, :] += np.eye(nu) * step[:, None, :]
            controls = np.repeat(tried.reshape(-1, 1, nu), steps, axis=1)
            ends, _ = rollout.rollout(model, data, starts, controls)
            end = ends[:, -1, velocity].reshape(len(u), nu + 1, nv)
            jacobian = (end[:, 1:, :] - end[:, :1, :]).transpose(0, 2, 1) / step[:, None, :]
            error = end[:, 0, :] - target
            for k in range(len(u)):
                u[k] -= np.linalg.lstsq(jacobian[k], error[k], rcond=None)[0]
            u = np.clip(u, low, high)
        ctrl[rows] = u
    return ctrl


# plots and files


def _example(
    data: Dataset,
    eval_idx: list[int],
    windows: Windows,
    target: Float,
    predictions: dict[str, Float],
) -> EpisodePrediction | None:
    """The first step of every prediction along the first evaluated episode with windows."""
    offset = 0
    for local, episode in enumerate(eval_idx):
        timestamp = np.asarray(data.episode(episode).timestamp, dtype=np.float64)
        rows = np.flatnonzero(windows.episode == local)[:PLOT_STEPS]
        if len(rows) == 0:
            offset += len(timestamp)
            continue
        # rows of o_t within the episode
        steps = windows.obs_index[rows, -2] - offset
        return EpisodePrediction(
            episode=episode,
            time=timestamp[steps],
            recorded=target[rows, 0],
            predicted={name: p[rows, 0] for name, p in predictions.items()},
        )
    return None


def _write_text(path: Path, text: str) -> Path:
    """Write `text` to `path` atomically."""
    with atomic_open(path) as stream:
        stream.write(text)
    return path.absolute()
