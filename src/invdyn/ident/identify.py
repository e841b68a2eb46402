"""Least-squares identification of the dynamic parameters from measured torques.

The model ``tau = Y_b(q, v, a) theta_b + offset`` is linear in the base parameters
(`invdyn.ident.parameters`) and in an optional constant torque offset per joint (sensor bias,
not part of the rigid-body model). Ordinary least squares stacks every sample; weighted least
squares (Gautier and Khalil 1990) then weighs each joint's equations by the inverse of the
standard deviation of its OLS residual, so that joints measured with different noise (or
modelled with different error) count alike. Standard deviations of the estimates come from
the residual variance and ``(W^T W)^-1``. The physically consistent fit
(`invdyn.ident.consistent`) minimises the same weighted residual over parameters that every
body can have, and returns them all, not only their base combinations.
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import as_float_array, batch_shape, flatten, not_a_model
from invdyn._files import atomic_open
from invdyn.errors import DataError, InputError, warn
from invdyn.ident.consistent import fit_consistent
from invdyn.ident.parameters import BaseParameters, base_parameters
from invdyn.model import Model
from invdyn.regressor import joint_torque_regressor

Float = NDArray[np.float64]
Method = Literal["ols", "wls", "consistent"]
METHODS = ("ols", "wls", "consistent")
# the consistent fit's pull towards the prior, relative to the weighted torques' energy
REGULARISATION = 1e-8
# fewer equations than this for each unknown are warned of
EQUATIONS_PER_UNKNOWN = 10


@dataclasses.dataclass(frozen=True, eq=False)
class Identification:
    """Identified base parameters and what they predict.

    Attributes:
      base: the base parameters the estimate is of.
      estimate: (nb,) identified base parameters.
      std: (nb,) their standard deviations; for "consistent", those of the weighted least
        squares estimate (the consistent fit has no closed form for them). They take the
        samples' residuals as independent noise: a lower bound where samples are correlated
        (filtered, sampled faster than the torques change) or where the model cannot express
        the plant (friction of another law, say), whose estimate is then biased by more.
      offsets: (nv,) identified torque offsets, zeros when not fitted.
      joint_std: (nv,) standard deviation of each joint's residual torque.
      method: "ols", "wls" or "consistent".
      params: (10 nbody + 3 nv,) every dynamic parameter, physically consistent, for
        "consistent"; None otherwise (least squares determines only the base combinations).
    """

    base: BaseParameters
    estimate: Float
    std: Float
    offsets: Float
    joint_std: Float
    method: str
    params: Float | None = None

    def predict(self, model: Model, q: Float, v: Float, a: Float) -> Float:
        """(..., nv) torques of the identified model at states (..., nq), (..., nv), (..., nv).

        Raises:
          InputError: `model` is not the robot identified (its parameters or joints differ).
        """
        _check_robot(self.base, model, joints=len(self.offsets))
        regressor = self.base.regressor(joint_torque_regressor(model, q, v, a))
        return regressor @ self.estimate + self.offsets

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the identification to `path` (an ``.npz`` archive, atomically); return the
        absolute path. `load_identification` reads it back."""
        arrays = {field: getattr(self, field) for field in _SAVED_ARRAYS}
        arrays["independent"], arrays["projection"] = self.base.independent, self.base.projection
        arrays["names"], arrays["method"] = np.array(self.base.names), np.array(self.method)
        if self.params is not None:
            arrays["params"] = self.params
        with atomic_open(path, "wb") as out:
            np.savez(out, **arrays)
        return Path(path).absolute()


_SAVED_ARRAYS = ("estimate", "std", "offsets", "joint_std")


def load_identification(path: str | os.PathLike[str], model: Model) -> Identification:
    """The identification `Identification.save` wrote to `path`, checked against `model`.

    Raises:
      DataError: `path` is missing, not such an archive, or of another robot (its parameters
        or joints are not `model`'s).
    """
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
        base = BaseParameters(
            independent=arrays["independent"].astype(np.int64),
            projection=arrays["projection"].astype(np.float64),
            names=tuple(str(name) for name in arrays["names"]),
        )
        found = Identification(
            base=base,
            **{field: arrays[field].astype(np.float64) for field in _SAVED_ARRAYS},
            method=str(arrays["method"]),
            params=arrays.get("params"),
        )
    except (OSError, KeyError, ValueError) as exc:
        raise DataError(f"{path}: not an identification written by invdyn ident ({exc})") from None
    try:
        _check_robot(base, model, joints=len(found.offsets))
    except InputError as error:
        raise DataError(f"{path}: {error}") from None
    return found


def _check_robot(base: BaseParameters, model: Model, *, joints: int | None = None) -> None:
    """`InputError` unless base parameters (of a robot of `joints` dofs, where given) can be
    `model`'s."""
    parameters = 10 * model.nbody + 3 * model.nv
    if joints is None:
        if base.projection.shape[1] != parameters:
            raise InputError(
                f"base: of a robot with {base.projection.shape[1]} parameters, not "
                f"{model.name} ({parameters})"
            )
    elif base.projection.shape[1] != parameters or joints != model.nv:
        raise InputError(
            f"identified for a robot with {base.projection.shape[1]} parameters and {joints} "
            f"joints, not {model.name} ({parameters} and {model.nv})"
        )


def identify(
    model: Model,
    q: Float,
    v: Float,
    a: Float,
    tau: Float,
    *,
    method: Method = "wls",
    offset: bool = False,
    base: BaseParameters | None = None,
) -> Identification:
    """Base parameters that best explain the torques `tau` at the states (q, v, a).

    Args:
      model: the robot: its kinematics and which parameters exist (their values are unused).
      q: (N, nq) joint positions.
      v: (N, nv) joint velocities.
      a: (N, nv) joint accelerations.
      tau: (N, nv) measured joint torques.
      method: "ols" (ordinary least squares), "wls" (weighted by each joint's OLS residual) or
        "consistent" (weighted, over physically consistent parameters; see
        `invdyn.ident.consistent`).
      offset: also fit a constant torque offset per joint.
      base: the base parameters to identify (default: `base_parameters(model)`).

    Returns:
      The estimate, its standard deviations and the residual of every joint.

    Raises:
      InputError: bad shapes, non-finite values, torques zero everywhere, an unknown method,
        base parameters of another robot, or too few samples for the parameters (or samples
        that do not excite them: a rank-deficient regressor).
    """
    if not isinstance(model, Model):
        raise not_a_model(model)
    if method not in METHODS:
        raise InputError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    q, v, a, tau = _samples(model, q, v, a, tau)
    _check_torques(model, tau)
    base = base or base_parameters(model)
    _check_robot(base, model)
    # (N nv, nb [+ nv]) equations, joint-major within each sample
    full = joint_torque_regressor(model, q, v, a)
    regressor = base.regressor(full)
    if offset:
        regressor = _with_offsets(regressor)
    columns = regressor.shape[-1]
    if len(q) * model.nv <= columns:
        raise InputError(
            f"{len(q)} samples give {len(q) * model.nv} equations for {columns} unknowns; "
            "record more samples"
        )
    if len(q) * model.nv < EQUATIONS_PER_UNKNOWN * columns:
        warn(
            f"{len(q)} samples give {len(q) * model.nv} equations for {columns} unknowns, "
            f"fewer than {EQUATIONS_PER_UNKNOWN} each: the estimate fits their noise; record "
            "more samples"
        )
    solution, joint_std = _weighted_solution(regressor, tau, np.ones(model.nv))
    weights = np.ones(model.nv)
    if method != "ols":
        weights = 1.0 / joint_std
        solution, joint_std = _weighted_solution(regressor, tau, weights)
    std = _standard_deviations(regressor, tau, solution, weights)
    nb = len(base)
    params = None
    if method == "consistent":
        params, offsets = _consistent(model, full, tau, weights, offset=offset)
        solution = np.concatenate([base.of(params), offsets if offset else []])
        joint_std = np.sqrt(np.mean((tau - regressor @ solution) ** 2, axis=0))
    return Identification(
        base=base,
        estimate=solution[:nb],
        std=std[:nb],
        offsets=solution[nb:] if offset else np.zeros(model.nv),
        joint_std=joint_std,
        method=method,
        params=params,
    )


def _consistent(
    model: Model, full: Float, tau: Float, weights: Float, *, offset: bool
) -> tuple[Float, Float]:
    """Physically consistent parameters (P,) and offsets (nv,) of the weighted fit of the
    (N, nv, P) full regressor."""
    if offset:
        full = _with_offsets(full)
    weighted = (full * weights[:, None]).reshape(-1, full.shape[-1])
    torques = (tau * weights).ravel()
    params, offsets = fit_consistent(
        model,
        weighted.T @ weighted,
        weighted.T @ torques,
        float(torques @ torques),
        regularisation=REGULARISATION,
        extra=model.nv if offset else 0,
    )
    return params, offsets if offset else np.zeros(model.nv)


def _with_offsets(regressor: Float) -> Float:
    """(N, nv, columns + nv) the regressor with a unit column per joint's torque offset."""
    count, nv = regressor.shape[:2]
    return np.concatenate([regressor, np.broadcast_to(np.eye(nv), (count, nv, nv))], axis=-1)


def _samples(
    model: Model, q: Float, v: Float, a: Float, tau: Float
) -> tuple[Float, Float, Float, Float]:
    """(q, v, a, tau) checked and flattened to (N, n) each."""
    arrays = {
        "q": as_float_array("q", q, model.nq),
        "v": as_float_array("v", v, model.nv),
        "a": as_float_array("a", a, model.nv),
        "tau": as_float_array("tau", tau, model.nv),
    }
    for name, x in arrays.items():
        if not np.all(np.isfinite(x)):
            raise InputError(f"{name} holds a non-finite value (NaN or inf)")
    lead = batch_shape({name: (x, 1) for name, x in arrays.items()})
    if math.prod(lead) == 0:
        raise InputError(f"q, v, a and tau hold no samples (batch shape {lead})")
    q, v, a, tau = (flatten(x, lead, 1) for x in arrays.values())
    return q, v, a, tau


def _check_torques(model: Model, tau: Float) -> None:
    """`InputError` when the (N, nv) torques are zero everywhere (not recorded, say); a
    warning naming the joints whose torque is zero in every sample."""
    silent = ~np.any(tau != 0.0, axis=0)
    if silent.all():
        raise InputError("tau is zero in every sample: no torque to identify parameters from")
    if silent.any():
        joints = [name for name, zero in zip(model.dof_names, silent, strict=True) if zero]
        warn(
            f"the torque of {', '.join(joints)} is zero in every sample: not recorded, or "
            "a passive joint?"
        )


def _weighted_solution(regressor: Float, tau: Float, weights: Float) -> tuple[Float, Float]:
    """Least-squares solution of ``(w Y) x = w tau`` (joint weights w), and each joint's
    residual standard deviation (of the unweighted residual)."""
    weighted = (regressor * weights[:, None]).reshape(-1, regressor.shape[-1])
    fit, _, rank, _ = np.linalg.lstsq(weighted, (tau * weights).ravel(), rcond=None)
    solution = np.asarray(fit, dtype=np.float64)
    if rank < regressor.shape[-1]:
        raise InputError(
            f"the samples do not excite every base parameter (regressor rank {rank} of "
            f"{regressor.shape[-1]}): record richer motions, such as `invdyn.ident` excitations"
        )
    residual = tau - regressor @ solution
    joint_std = np.sqrt(np.mean(residual**2, axis=0))
    # a joint predicted exactly (noise-free data) keeps a weight that is large but finite
    floor = 1e-12 * max(1.0, float(np.abs(tau).max()))
    return solution, np.asarray(np.maximum(joint_std, floor), dtype=np.float64)


def _standard_deviations(regressor: Float, tau: Float, solution: Float, weights: Float) -> Float:
    """(columns,) standard deviations of the solution: sigma^2 (W^T W)^-1 with sigma^2 the
    weighted residual variance."""
    weighted = (regressor * weights[:, None]).reshape(-1, regressor.shape[-1])
    residual = (tau - regressor @ solution) * weights
    dof = max(weighted.shape[0] - weighted.shape[1], 1)
    variance = float(np.sum(residual**2)) / dof
    covariance = variance * np.linalg.inv(weighted.T @ weighted)
    return np.sqrt(np.maximum(np.diag(covariance), 0.0))
