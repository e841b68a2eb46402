"""Identification from a recorded dataset to an identified URDF and a report (`invdyn ident`).

A dataset of a robot (LeRobot v3, such as `invdyn collect ROBOT` writes: state ``q.<joint>``
and ``v.<joint>``, action the applied joint torques ``tau.<joint>``) is split by episode into
identification and held-out episodes (the last ones). Accelerations come from the measured
velocities by zero-phase filtering and forward differences (`invdyn.ident.signals`), and
positions and velocities are taken where in each frame its held torque balances the dynamics
(`invdyn.ident.signals.frame_share`, of the physics time step that the dataset's metadata
records; at the samples themselves for a recording that does not say); an episode's last
sample, which has no next one, and the samples within a filter length of its ends, where the
filter has no data on one side, are left out. The base parameters are identified on the first
episodes; on the held-out ones the report compares the normalised MSE of each joint's torque
predicted by the model as described (its URDF) and as identified.

`identify_run` is the work of ``invdyn ident``: its options checked, the robot chosen, the
identification (and with `IdentConfig.learn` the networks of `invdyn.ident.hybrid`) fitted and
written; `score_identification` that of ``invdyn evaluate`` given what it wrote.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import check_real
from invdyn._files import (
    EVALUATION,
    IDENTIFICATION,
    check_output_directory,
    remove_stale,
    write_json,
)
from invdyn._waits import announced
from invdyn.configuration import difference, integrate, neutral
from invdyn.dynamics import mass_matrix, rnea
from invdyn.errors import DataError, InputError, warn
from invdyn.ident.identify import Identification, Method, identify, load_identification
from invdyn.ident.signals import Filter, frame_share, velocity_and_acceleration
from invdyn.io import load_simulated
from invdyn.learn.datasets import (
    TABLE_SUFFIXES,
    episode_fingerprints,
    matching_episodes,
    read_dataset,
)
from invdyn.metrics import normalised_mse, varies, worse_than
from invdyn.model import Model
from invdyn.regressor import with_parameters
from invdyn.sim.collect import load_robot_source, robot_source
from invdyn.sim.rollout import csv_columns

Float = NDArray[np.float64]

# the last this share of the episodes (at least one) is held out
HELD_OUT = 0.2
# a held-out torque error this many times the nominal model's on a joint is worth a warning:
# the fit followed the noise of too few samples (an exact nominal model is matched, not beaten)
WORSE_THAN_NOMINAL = 2.0
# the key of report.json that holds the fingerprints of the episodes identified on
FITTED = "fitted_fingerprints"
# the files of invdyn evaluate's scores of an identification on other data
EVALUATION_FILES = ("report.json", "nmse.png")
# identified armature above this share of a joint's inertia (at the neutral configuration) is
# worth a warning that identified.urdf, which cannot hold it, leaves it out
ARMATURE_SHARE = 0.01


@dataclasses.dataclass(frozen=True)
class Samples:
    """Samples of episodes, one row per frame kept: (N, nq) q, (N, nv) v, a and tau, and the
    (E + 1,) row where each episode starts."""

    q: Float
    v: Float
    a: Float
    tau: Float
    starts: NDArray[np.int64]


@dataclasses.dataclass(frozen=True)
class DatasetIdentification:
    """What `identify_dataset` found.

    Attributes:
      identification: the identified parameters.
      nominal_nmse: (nv,) held-out torque nMSE per joint of the model as described, against
        the torques through the filter (`filtering`), as identified.
      identified_nmse: (nv,) the same of the identified model.
      train_part: what was identified on, in words ("episodes 0-7", "rows 0-7999").
      held_out_part: what was held out, in words.
      filtering: the filter the accelerations came through.
      train: the samples identified on.
      held_out: the held-out samples, for plots.
      learned: held-out nMSE per joint of every predictor of `invdyn.ident.hybrid.compare`
        (nominal, identified, learned, hybrid), when the networks were trained.
      fitted_fingerprints: by key of `invdyn.learn.datasets.EPISODE_FINGERPRINTS`, the
        fingerprints of the episodes identified on, so that `evaluate_identification` leaves
        them out of a dataset that holds them; empty for a table.
    """

    identification: Identification
    nominal_nmse: Float
    identified_nmse: Float
    train_part: str
    held_out_part: str
    filtering: Filter
    train: Samples
    held_out: Samples
    learned: dict[str, Float] | None = None
    fitted_fingerprints: dict[str, list[str]] = dataclasses.field(default_factory=dict)

    def report(self, model: Model) -> dict[str, Any]:
        """The JSON report: settings, per-joint nMSE and the base parameters."""
        result = self.identification
        joints = model.dof_names
        return {
            "robot": model.name,
            "source": str(model.source),
            "method": result.method,
            "filter": dataclasses.asdict(self.filtering),
            "identified_on": self.train_part,
            "held_out": self.held_out_part,
            FITTED: self.fitted_fingerprints,
            "held_out_nmse": {
                "nominal": dict(zip(joints, map(_number, self.nominal_nmse), strict=True)),
                "identified": dict(zip(joints, map(_number, self.identified_nmse), strict=True)),
                "nominal_mean": _finite_mean(self.nominal_nmse),
                "identified_mean": _finite_mean(self.identified_nmse),
            },
            "held_out_nmse_all": None
            if self.learned is None
            else {
                name: dict(zip(joints, map(_number, errors), strict=True))
                for name, errors in self.learned.items()
            },
            "offsets": dict(zip(joints, map(float, result.offsets), strict=True)),
            "joint_residual_std": dict(zip(joints, map(float, result.joint_std), strict=True)),
            "base_parameters": [
                {"name": name, "value": float(value), "std": float(std)}
                for name, value, std in zip(
                    result.base.names, result.estimate, result.std, strict=True
                )
            ],
        }


def identify_dataset(
    dataset: Any,
    model: Model,
    *,
    method: Method = "consistent",
    filtering: Filter | None = None,
    offset: bool = False,
    held_out: float = HELD_OUT,
) -> DatasetIdentification:
    """Identify `model`'s parameters on a dataset's episodes, and score them on held-out ones.

    Args:
      dataset: an `invdyn.learn.datasets.Dataset` with state ``q.<joint>, v.<joint>`` of `model`
        and joint torques as action.
      model: the robot as described (its parameters are the nominal model and the prior of the
        consistent fit).
      method: "ols", "wls" or "consistent" (`invdyn.ident.identify`).
      filtering: the filter for accelerations; default `Filter()` (10 Hz, 4th order).
      offset: also identify a torque offset per joint.
      held_out: share of the episodes (the last ones, at least one) held out, in (0, 1).

    Raises:
      DataError: the dataset's columns are not those of `model`, or it has too few episodes.
    """
    filtering = filtering or Filter()
    held_out = _held_out_share(held_out)
    columns = _state_columns(dataset, model)
    count = len(dataset)
    if count < 2:
        raise DataError(
            f"{dataset.path}: {count} episode; identification needs at least two "
            "(one identified on, one held out)"
        )
    tested = max(1, round(held_out * count))
    if count - tested < 1:
        raise DataError(
            f"{dataset.path}: holding out {held_out:g} of {count} episodes leaves none to "
            "identify on"
        )
    fit, train = _samples(dataset, model, tuple(range(count - tested)), columns, filtering)
    score, test = _samples(dataset, model, tuple(range(count - tested, count)), columns, filtering)
    found = _scored(
        model,
        fit,
        score,
        method=method,
        offset=offset,
        filtering=filtering,
        parts=(_span("episode", train), _span("episode", test)),
    )
    fitted = episode_fingerprints(_episode_pairs(dataset, train))
    return dataclasses.replace(found, fitted_fingerprints=fitted)


def _episode_pairs(dataset: Any, episodes: Iterable[int]) -> list[tuple[Float, Float]]:
    """The (state, action) arrays of `dataset`'s `episodes`, as they are fingerprinted
    (`invdyn.learn.datasets.episode_fingerprints`)."""
    pairs = []
    for i in episodes:
        episode = dataset.episode(i)
        pairs.append(
            (np.asarray(episode.state, np.float64), np.asarray(episode.action, np.float64))
        )
    return pairs


def identify_table(
    path: str | os.PathLike[str],
    model: Model,
    *,
    method: Method = "consistent",
    offset: bool = False,
    held_out: float = HELD_OUT,
) -> DatasetIdentification:
    """Identify `model`'s parameters on the rows of a table of ``(q, v, a) -> tau``, and score
    them on its last rows.

    Args:
      path: a CSV, NPZ or parquet table (`invdyn.learn.datasets.read_table`) with a column per
        coordinate: ``q.<joint>`` (``q.<joint>.cos`` / ``.sin`` for a continuous joint) and
        ``v.<joint>``, as `invdyn.sim.save_csv` names them, ``a.<joint>`` and ``tau.<joint>``
        (a rollout's CSV has no accelerations: record a dataset for `identify_dataset`), in
        any order; accelerations are taken as they are (no filtering).
      model: the robot as described.
      method: "ols", "wls" or "consistent".
      offset: also identify a torque offset per joint.
      held_out: share of the rows, the last ones, held out, in (0, 1).

    Raises:
      DataError: an unreadable table or a missing column (the message lists the table's).
    """
    from invdyn.learn.datasets import read_table

    held_out = _held_out_share(held_out)
    # the columns by name, in the model's order
    names = csv_columns(model)
    q_names = [n for n in names if n.startswith("q.")]
    v_names = [n for n in names if n.startswith("v.")]
    a_names = ["a." + n.removeprefix("v.") for n in v_names]
    tau_names = ["tau." + n.removeprefix("v.") for n in v_names]
    inputs, tau = read_table(path, inputs=[*q_names, *v_names, *a_names], targets=tau_names)
    rows = len(tau)
    tested = max(1, round(held_out * rows))
    if rows - tested < 1:
        raise DataError(f"{path}: {rows} rows; identification needs more")
    q, v, a = np.split(inputs, [model.nq, model.nq + model.nv], axis=1)
    split = rows - tested

    def part(rows: slice) -> Samples:
        return Samples(q[rows], v[rows], a[rows], tau[rows], np.array([0, len(tau[rows])]))

    return _scored(
        model,
        part(slice(0, split)),
        part(slice(split, rows)),
        method=method,
        offset=offset,
        filtering=Filter(cutoff=None),
        parts=(_span("row", tuple(range(split))), _span("row", tuple(range(split, rows)))),
    )


def _scored(
    model: Model,
    fit: Samples,
    score: Samples,
    *,
    method: Method,
    offset: bool,
    filtering: Filter,
    parts: tuple[str, str],
) -> DatasetIdentification:
    """Identify on `fit` and score on `score` (warning of joints whose held-out torque is
    constant, whose nMSE is undefined: NaN)."""
    constant = [
        joint
        for joint, moving in zip(model.dof_names, varies(score.tau), strict=True)
        if not moving
    ]
    if constant:
        warn(
            f"the torques of {', '.join(constant)} are constant in the held-out {parts[1]}: "
            "their nMSE is undefined (NaN); hold out a part that moves them (--held-out)"
        )
    fitting = f"identifying {model.name}'s parameters ({method}) on {len(fit.tau)} samples"
    with announced(fitting):
        result = identify(model, fit.q, fit.v, fit.a, fit.tau, method=method, offset=offset)
    nominal = normalised_mse(rnea(model, score.q, score.v, score.a), score.tau)
    identified = normalised_mse(result.predict(model, score.q, score.v, score.a), score.tau)
    worse = worse_than(model.dof_names, identified, nominal, WORSE_THAN_NOMINAL)
    if worse:
        warn(
            f"on {', '.join(worse)} the identified model's held-out torque error is more than "
            f"{WORSE_THAN_NOMINAL:g} times the nominal model's: {len(fit.tau)} samples "
            f"({parts[0]}) do not pin down its {len(result.base)} base parameters; record "
            "more or more varied motion (invdyn collect --duration, --episodes)"
        )
    return DatasetIdentification(
        identification=result,
        nominal_nmse=nominal,
        identified_nmse=identified,
        train_part=parts[0],
        held_out_part=parts[1],
        filtering=filtering,
        train=fit,
        held_out=score,
    )


def _held_out_share(held_out: float) -> float:
    held_out = check_real("held_out (--held-out)", held_out)
    if not 0.0 < held_out < 1.0:
        raise InputError(f"held_out (--held-out) must be strictly between 0 and 1, got {held_out}")
    return held_out


def _span(kind: str, indices: tuple[int, ...]) -> str:
    """ "episode 4", "episodes 0-3" or "episodes 0-2, 5" of increasing `indices`."""
    runs: list[list[int]] = []
    for index in indices:
        if runs and index == runs[-1][-1] + 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    listed = ", ".join(f"{run[0]}-{run[-1]}" if len(run) > 1 else f"{run[0]}" for run in runs)
    return f"{kind}{'s' if len(indices) > 1 else ''} {listed}"


def urdf_expressible(identified: Model) -> Model:
    """`identified` with what armature URDF can hold moved into the links: the rotor inertia
    J of a revolute joint on the world turns with that joint's body alone, about the joint's
    axis a, so that the body holds it as a rotor would, (J / 2) (E + a a^T) about its centre
    of mass, and the dynamics stay the same. Other armature stays (`_warn_of_armature`)."""
    turning = np.array([spec.turns for spec in identified.jnt_spec], dtype=bool)
    on_world = (identified.body_parent == -1) & turning
    inertia = identified.body_inertia.copy()
    armature = identified.dof_armature.copy()
    for body in np.flatnonzero(on_world):
        dof = int(identified.jnt_vadr[body])
        axis = identified.jnt_axis[body]
        inertia[body] += 0.5 * armature[dof] * (np.eye(3) + np.outer(axis, axis))
        armature[dof] = 0.0
    return identified.replace(body_inertia=inertia, dof_armature=armature)


def _warn_of_armature(identified: Model) -> None:
    """Warn when the identified armature, which URDF cannot hold, is more than
    `ARMATURE_SHARE` of a joint's inertia at the neutral configuration: identified.urdf
    then predicts that joint's torques worse than the identification does."""
    inertia = np.diag(mass_matrix(identified, neutral(identified)))
    large = identified.dof_armature > ARMATURE_SHARE * inertia
    if large.any():
        # a translation's armature is a mass
        listed = ", ".join(
            f"{name} {value:.3g} {'kg' if unit == 'm' else 'kg m^2'}"
            for name, value, unit, shown in zip(
                identified.dof_names,
                identified.dof_armature,
                identified.dof_units,
                large,
                strict=True,
            )
            if shown
        )
        warn(
            f"identified.urdf leaves out the identified armature (rotor inertia), which URDF "
            f"cannot hold: {listed} (identification.npz holds it; add it to the loaded model "
            "with Model.replace(dof_armature=...))"
        )


def write_results(
    found: DatasetIdentification, model: Model, out: str | os.PathLike[str]
) -> list[Path]:
    """Write into `out`: ``report.json``; ``nmse.png``, the held-out nMSE of each joint,
    nominal and identified (and learned and hybrid, when trained); ``held_out.png``, the
    torques of the first held-out episode, recorded and predicted; and, with physically
    consistent parameters of a model loaded from a URDF, ``identified.urdf``. Returns the
    paths written."""
    from invdyn.io.urdf import write_urdf
    from invdyn.viz.plots import plot_error_bars, plot_predictions, save_figure

    out = Path(out)
    report = found.report(model)
    joints = list(model.dof_names)
    written = []
    params = found.identification.params
    urdf = out / "identified.urdf"
    if params is not None and Path(model.source).suffix.lower() == ".urdf":
        identified = urdf_expressible(with_parameters(model, params))
        write_urdf(identified, urdf)
        report["urdf"] = str(urdf.absolute())
        written.append(urdf.absolute())
        _warn_of_armature(identified)
    else:
        # an earlier run's, which these results do not describe
        urdf.unlink(missing_ok=True)
        if params is not None:
            warn(
                f"{model.name} was not loaded from a URDF file ({model.source or 'in memory'}): "
                "no identified.urdf is written (report.json holds the base parameters)"
            )
    errors = found.learned or {"nominal": found.nominal_nmse, "identified": found.identified_nmse}
    bars = plot_error_bars(
        joints,
        errors,
        title=f"{model.name}: held-out torque error ({found.identification.method})",
    )
    written.append(save_figure(bars, out / "nmse.png"))
    samples = found.held_out
    first = slice(int(samples.starts[0]), int(samples.starts[1]))
    q, v, a = samples.q[first], samples.v[first], samples.a[first]
    trace = plot_predictions(
        np.arange(len(q)),
        samples.tau[first],
        found.identification.predict(model, q, v, a),
        labels=[
            f"{joint} [{unit}]" for joint, unit in zip(joints, model.dof_force_units, strict=True)
        ],
        title=f"{model.name}: held out ({found.held_out_part}), torques",
        baselines={"nominal": rnea(model, q, v, a)},
        x_label="sample",
    )
    written.append(save_figure(trace, out / "held_out.png"))
    written.append(found.identification.save(out / IDENTIFICATION))
    written.append(write_json(out / "report.json", report))
    # an earlier identification's scores on other data (invdyn evaluate), which would pass for
    # this one's
    remove_stale(out / EVALUATION, EVALUATION_FILES)
    return written


def read_report(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``report.json`` that `write_results` wrote into `directory`, or `DataError`."""
    path = Path(directory) / "report.json"
    try:
        report = json.loads(path.read_text())
        if not isinstance(report.get("source"), str) or not isinstance(report.get("filter"), dict):
            raise ValueError("no source or filter")
    except (OSError, ValueError, AttributeError) as exc:
        raise DataError(f"{path}: not a report of invdyn ident ({exc})") from None
    return dict(report)


class Scores(NamedTuple):
    """What `evaluate_identification` measured.

    Attributes:
      nmse: predictor name -> (nv,) torque nMSE per joint.
      episodes: the episodes of the dataset scored.
      selection: which those are, in words: "all", or "held out" when the episodes
        identified on were recognised in the dataset and left out.
    """

    nmse: dict[str, Float]
    episodes: tuple[int, ...]
    selection: str


def evaluate_identification(
    directory: str | os.PathLike[str], dataset: Any, model: Model
) -> Scores:
    """Score what `invdyn ident` wrote into `directory` on `dataset` (new trajectories, say),
    its accelerations filtered as at identification.

    The episodes identified on, recognised by their values (in any precision,
    `invdyn.learn.datasets.episode_fingerprints`) wherever they lie in `dataset`, are left out,
    with a warning, unless they are all it holds: then every episode is scored, with a warning
    that the scores are of fitted data.

    Returns:
      the nMSE of the nominal and identified models, and of the learned and hybrid ones when
      the run trained their networks (``--learn``: ``networks/``; then on the frames with a
      full window of the networks), and the episodes scored.

    Raises:
      DataError: `directory` lacks the identification or its report, or `dataset` is not of
        `model`'s joints.
    """
    from invdyn.ident.hybrid import load_networks, predict

    directory = Path(directory)
    identification = load_identification(directory / IDENTIFICATION, model)
    report = read_report(directory)
    filtering = Filter(**report["filter"])
    episodes, selection = _not_fitted(dataset, report)
    samples, scored = _samples(dataset, model, episodes, _state_columns(dataset, model), filtering)
    # networks that the report scored (not those an earlier run left without it)
    if report.get("held_out_nmse_all") is not None:
        learned, residuals = load_networks(directory / "networks", model)
        frames, predictions = predict(model, identification, samples, learned, residuals)
    else:
        frames = np.arange(len(samples.tau))
        q, v, a = samples.q, samples.v, samples.a
        predictions = {
            "nominal": rnea(model, q, v, a),
            "identified": identification.predict(model, q, v, a),
        }
    nmse = {name: normalised_mse(x, samples.tau[frames]) for name, x in predictions.items()}
    return Scores(nmse, scored, selection)


def _not_fitted(dataset: Any, report: dict[str, Any]) -> tuple[tuple[int, ...], str]:
    """The episodes of `dataset` to score, and which those are in words (`Scores.selection`):
    those the identification of `report` was not fitted on."""
    count = len(dataset)
    wanted = report.get(FITTED)
    if not (isinstance(wanted, dict) and wanted):  # a table's, or an earlier version's report
        return tuple(range(count)), "all"
    fitted = matching_episodes(episode_fingerprints(_episode_pairs(dataset, range(count))), wanted)
    if not fitted:
        return tuple(range(count)), "all"
    if len(fitted) == count:
        warn(
            f"every episode of {dataset.path} is one the identification was fitted on: these "
            "scores are of fitted data, not held out"
        )
        return tuple(range(count)), "all"
    kept = tuple(i for i in range(count) if i not in fitted)
    warn(
        f"{len(fitted)} of the {count} episodes of {dataset.path} are episodes the "
        "identification was fitted on (recognised by their values): they are left out, and "
        f"the other {len(kept)} scored"
    )
    return kept, "held out"


class _Columns(NamedTuple):
    """Where a model's q and v are in a dataset's state, and its torques in the action."""

    q: NDArray[np.int64]
    v: NDArray[np.int64]
    tau: NDArray[np.int64]


def _state_columns(dataset: Any, model: Model) -> _Columns:
    """The columns of `model`'s q, v and torques in the dataset, or `DataError`."""
    names = csv_columns(model)
    wanted_q = [n for n in names if n.startswith("q.")]
    wanted_v = [n for n in names if n.startswith("v.")]
    wanted_tau = [f"tau.{n[len('tau_applied.') :]}" for n in names if n.startswith("tau_applied.")]
    state = list(dataset.info.state_names)
    action = list(dataset.info.action_names or [])
    missing = [n for n in wanted_q + wanted_v if n not in state] + [
        n for n in wanted_tau if n not in action
    ]
    if missing:
        raise DataError(
            f"{dataset.path}: not a dataset of {model.name}'s joint positions, velocities and "
            f"torques: it lacks {', '.join(missing[:6])}{', ...' if len(missing) > 6 else ''}"
        )
    return _Columns(
        q=np.array([state.index(n) for n in wanted_q]),
        v=np.array([state.index(n) for n in wanted_v]),
        tau=np.array([action.index(n) for n in wanted_tau]),
    )


def _samples(
    dataset: Any,
    model: Model,
    episodes: tuple[int, ...],
    columns: _Columns,
    filtering: Filter,
) -> tuple[Samples, tuple[int, ...]]:
    """The kept samples of `episodes`, and the episodes they come from: accelerations from
    filtered velocities, positions and velocities where in the frame its held torque balances
    the dynamics, and torques through the same filter, so that both sides of
    ``tau = Y(q, v, a) theta`` lose the same frequencies (parallel filtering). Episodes too
    short for the filter's edges are left out, with a warning."""
    fps = float(dataset.info.fps)
    share = _frame_share(dataset)
    edge = 0 if filtering.cutoff is None else math.ceil(fps / filtering.cutoff)
    parts: dict[str, list[Float]] = {"q": [], "v": [], "a": [], "tau": []}
    starts = [0]
    kept_episodes, left_out = [], []
    for i in episodes:
        episode = dataset.episode(i)
        state = np.asarray(episode.state, dtype=np.float64)
        action = np.asarray(episode.action, dtype=np.float64)
        if len(state) <= 2 * edge + 2:
            left_out.append(i)
            continue
        kept_episodes.append(i)
        v, a = velocity_and_acceleration(state[:, columns.v], fps, filtering, share)
        kept = slice(edge, len(v) - edge)
        q = state[:, columns.q]
        parts["q"].append(integrate(model, q[:-1], difference(model, q[:-1], q[1:]), share)[kept])
        parts["v"].append(v[kept])
        parts["a"].append(a[kept])
        parts["tau"].append(filtering.apply(action[:, columns.tau], fps)[kept])
        starts.append(starts[-1] + len(parts["q"][-1]))
    too_short = (
        f"too short for a filter of {filtering.cutoff} Hz at {fps:g} fps, which needs more "
        f"than {2 * edge + 2} frames"
    )
    if not kept_episodes:
        raise DataError(f"{dataset.path}: {_span('episode', episodes)} {too_short}")
    if left_out:
        warn(f"{dataset.path}: {_span('episode', tuple(left_out))} {too_short}: left out")
    samples = Samples(
        **{name: np.concatenate(values) for name, values in parts.items()},
        starts=np.array(starts),
    )
    return samples, tuple(kept_episodes)


def _frame_share(dataset: Any) -> float:
    """Where in its frames `dataset`'s held torques balance the dynamics (`frame_share`): as
    its metadata records the simulation (`invdyn collect`: the physics time step, the middle
    for Runge-Kutta, a continuous plant); at the sample itself for a recording that does not
    say (measured torques are the state's own)."""
    from invdyn.learn.datasets import read_metadata

    metadata = read_metadata(dataset.path)
    timestep = metadata.get("physics_timestep")
    if not isinstance(timestep, (int, float)) or isinstance(timestep, bool):
        return 0.0
    continuous = metadata.get("integrator") == "rk4"
    return frame_share(float(dataset.info.fps), None if continuous else float(timestep))


def _number(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _finite_mean(x: Float) -> float | None:
    """The mean of the finite entries of `x`; None when it has none."""
    finite = x[np.isfinite(x)]
    return float(finite.mean()) if finite.size else None


@dataclasses.dataclass(frozen=True)
class IdentConfig:
    """An identification of ``invdyn ident``, from a dataset or a table to a folder.

    Attributes:
      data: a LeRobot v3 dataset's folder, or a table (.csv, .npz, .parquet) of ``q.*``,
        ``v.*``, ``a.*`` and ``tau.*`` columns (`identify_table`).
      out: folder for report.json, identification.npz, the plots and identified.urdf.
      robot: built-in name or path; None for the dataset's source (``invdyn:<robot>``).
      method: "consistent", "wls" or "ols" (`invdyn.ident.identify`).
      filtering: a dataset's filter of the velocities, accelerations and torques; None for
        `Filter()` (a table's accelerations are taken as they are, and a filter is refused).
      offset: also identify a torque offset per joint.
      held_out: share of the episodes, the last ones, held out for the report.
      learn: also train networks alone, on the residual and end to end
        (`invdyn.ident.hybrid.compare`), into ``<out>/networks``.
      preset: `learn`: the networks' configuration preset; None for ``"default"``.
      overrides: `learn`: ``"section.field=value"`` settings of the networks.
      resume: `learn`: resume the networks of an earlier run in `out`.
      progress: show progress bars.
    """

    data: str
    out: Path = Path("invdyn-ident")
    robot: str | None = None
    method: Method = "consistent"
    filtering: Filter | None = None
    offset: bool = False
    held_out: float = HELD_OUT
    learn: bool = False
    preset: str | None = None
    overrides: tuple[str, ...] = ()
    resume: bool = True
    progress: bool = True


@dataclasses.dataclass(frozen=True, eq=False)
class Identified:
    """An identification written.

    Attributes:
      model: the robot as described.
      found: what was identified and how it scores.
      written: the files written.
    """

    model: Model
    found: DatasetIdentification
    written: tuple[Path, ...]


def identify_run(config: IdentConfig) -> Identified:
    """Identify a robot from a dataset or a table, score it on held-out data, and write the
    results (`write_results`).

    Raises:
      InputError: an unusable output folder, a table given options that need episodes, a
        robot that is not named where the data does not say it, before any fit.
    """
    from invdyn.learn.runs import run_config

    check_output_directory(config.out)
    table = Path(config.data).is_file()
    if table and Path(config.data).suffix.lower() not in TABLE_SUFFIXES:
        raise InputError(
            f"{config.data}: neither a dataset directory nor a table ({', '.join(TABLE_SUFFIXES)})"
        )
    if table and config.robot is None:
        raise InputError(f"{config.data} is a table: pass --robot")
    if table and (config.filtering is not None or config.learn):
        raise InputError(
            f"{config.data} is a table, whose accelerations are taken as they are: "
            f"{'--cutoff' if config.filtering is not None else '--learn'} needs a dataset of "
            "episodes"
        )
    if not config.learn and (config.preset is not None or config.overrides or not config.resume):
        raise InputError("--preset, --set and --restart are about the networks of --learn")
    dataset = None if table else read_dataset(config.data)
    model = _identified_robot(config.robot, dataset)
    options: dict[str, Any] = {
        "method": config.method,
        "offset": config.offset,
        "held_out": config.held_out,
    }
    # the networks' configuration, checked before identifying
    networks = (
        run_config(config.preset or "default", config.overrides, dataset)
        if config.learn and dataset is not None
        else None
    )
    if dataset is None:
        found = identify_table(config.data, model, **options)
    else:
        found = identify_dataset(dataset, model, filtering=config.filtering or Filter(), **options)
    if networks is not None:
        from invdyn.ident.hybrid import compare

        learned = compare(
            model,
            found.identification,
            found.train,
            found.held_out,
            networks,
            Path(config.out) / "networks",
            progress=config.progress,
            resume=config.resume,
        )
        found = dataclasses.replace(found, learned=learned)
    return Identified(model, found, tuple(write_results(found, model, config.out)))


def _identified_robot(name: str | None, dataset: Any) -> Model:
    """The robot to identify: `name`, else the dataset's source; a `name` other than the
    dataset's source is warned of."""
    source = "" if dataset is None else dataset.info.source
    if name is None:
        if not source.startswith("invdyn:"):
            raise InputError(
                f"{dataset.path}: its source is {source!r}, not an invdyn robot; pass --robot"
            )
        try:
            return load_robot_source(source)
        except InputError as error:
            raise InputError(
                f"{error}; pass --robot to name the robot it was recorded on"
            ) from None
    model = load_simulated(name, floating_base=False)
    _warn_if_recorded_on_another(dataset, model, "identified as {} (--robot)")
    return model


def _warn_if_recorded_on_another(dataset: Any, model: Model, use: str) -> None:
    """Warn when `dataset` says it was recorded on a robot other than `model`; `use` says what
    is done with it, "{}" standing for the model's name."""
    source = "" if dataset is None else dataset.info.source
    if source.startswith("invdyn:") and robot_source(model) != source:
        warn(
            f"{dataset.path} was recorded on {source.removeprefix('invdyn:')}, and is "
            f"{use.format(model.name)}"
        )


@dataclasses.dataclass(frozen=True, eq=False)
class ScoredIdentification:
    """An identification scored on a dataset and written.

    Attributes:
      model: the identified robot as described.
      scores: the torque nMSE per joint of each predictor, and the episodes scored.
      dataset_size: the episodes of the dataset.
      report: the scores written to report.json.
      written: the files written.
    """

    model: Model
    scores: Scores
    dataset_size: int
    report: dict[str, Any]
    written: tuple[Path, ...]


def score_identification(
    directory: str | os.PathLike[str], data: str, *, out: Path | None = None
) -> ScoredIdentification:
    """Score what `identify_run` wrote into `directory` on the dataset `data`
    (`evaluate_identification`), and write the scores and their plot into `out` (None:
    ``<directory>/evaluation``).

    Raises:
      InputError: an unusable output folder.
      DataError: as `evaluate_identification`.
    """
    from invdyn.viz.plots import plot_error_bars, save_figure

    check_output_directory(out)
    directory = Path(directory)
    model = load_simulated(read_report(directory)["source"], floating_base=False)
    dataset = read_dataset(data)
    _warn_if_recorded_on_another(dataset, model, "scored as {}, the identified robot")
    scores = evaluate_identification(directory, dataset, model)
    joints = model.dof_names
    report = {
        "identification": str(directory.absolute()),
        "dataset": str(Path(data).absolute()),
        "episodes": list(scores.episodes),
        "selection": scores.selection,
        "nmse": {
            name: dict(zip(joints, map(float, values), strict=True))
            for name, values in scores.nmse.items()
        },
    }
    bars = plot_error_bars(list(joints), scores.nmse, title=f"{model.name}: torque error, {data}")
    folder = out if out is not None else directory / EVALUATION
    file, figure = (folder / name for name in EVALUATION_FILES)
    written = (write_json(file, report), save_figure(bars, figure))
    return ScoredIdentification(model, scores, len(dataset), report, written)
