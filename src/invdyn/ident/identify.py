"""Least-squares identification of the base parameters from measured torques.

The model ``tau = Y_b(q, v, a) theta_b + offset`` is linear in the base parameters
(`invdyn.ident.parameters`) and in an optional constant torque offset per joint (sensor bias,
not part of the rigid-body model). Ordinary least squares stacks every sample; weighted least
squares (Gautier and Khalil 1990) then weighs each joint's equations by the inverse of the
standard deviation of its OLS residual, so that joints measured with different noise (or
modelled with different error) count alike. Standard deviations of the estimates come from
the residual variance and ``(W^T W)^-1``.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import as_float_array, batch_shape, flatten
from invdyn.errors import InputError
from invdyn.ident.parameters import BaseParameters, base_parameters
from invdyn.model import Model
from invdyn.regressor import joint_torque_regressor

Float = NDArray[np.float64]
Method = Literal["ols", "wls"]
METHODS = ("ols", "wls")


@dataclasses.dataclass(frozen=True, eq=False)
class Identification:
    """Identified base parameters and what they predict.

    Attributes:
      base: the base parameters the estimate is of.
      estimate: (nb,) identified base parameters.
      std: (nb,) their standard deviations.
      offsets: (nv,) identified torque offsets, zeros when not fitted.
      joint_std: (nv,) standard deviation of each joint's residual torque.
      method: "ols" or "wls".
    """

    base: BaseParameters
    estimate: Float
    std: Float
    offsets: Float
    joint_std: Float
    method: str

    def predict(self, model: Model, q: Float, v: Float, a: Float) -> Float:
        """(..., nv) torques of the identified model at states (..., nq), (..., nv), (..., nv)."""
        regressor = self.base.regressor(joint_torque_regressor(model, q, v, a))
        return regressor @ self.estimate + self.offsets


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
      method: "ols" (ordinary least squares) or "wls" (weighted by each joint's OLS residual).
      offset: also fit a constant torque offset per joint.
      base: the base parameters to identify (default: `base_parameters(model)`).

    Returns:
      The estimate, its standard deviations and the residual of every joint.

    Raises:
      InputError: bad shapes, non-finite values, an unknown method, or too few samples for the
        parameters (or samples that do not excite them: a rank-deficient regressor).
    """
    if method not in METHODS:
        raise InputError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    q, v, a, tau = _samples(model, q, v, a, tau)
    base = base or base_parameters(model)
    # (N nv, nb [+ nv]) equations, joint-major within each sample
    regressor = base.regressor(joint_torque_regressor(model, q, v, a))
    if offset:
        offsets = np.broadcast_to(np.eye(model.nv), (len(q), model.nv, model.nv))
        regressor = np.concatenate([regressor, offsets], axis=-1)
    columns = regressor.shape[-1]
    if len(q) * model.nv <= columns:
        raise InputError(
            f"{len(q)} samples give {len(q) * model.nv} equations for {columns} unknowns; "
            "record more samples"
        )
    solution, joint_std = _weighted_solution(regressor, tau, np.ones(model.nv))
    if method == "wls":
        solution, joint_std = _weighted_solution(regressor, tau, 1.0 / joint_std)
    weights = 1.0 / joint_std if method == "wls" else np.ones(model.nv)
    std = _standard_deviations(regressor, tau, solution, weights)
    nb = len(base)
    return Identification(
        base=base,
        estimate=solution[:nb],
        std=std[:nb],
        offsets=solution[nb:] if offset else np.zeros(model.nv),
        joint_std=joint_std,
        method=method,
    )


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
    q, v, a, tau = (flatten(x, lead, 1) for x in arrays.values())
    return q, v, a, tau


def _weighted_solution(regressor: Float, tau: Float, weights: Float) -> tuple[Float, Float]:
    """Least-squares solution of ``(w Y) x = w tau`` (joint weights w), and each joint's
    residual standard deviation (of the unweighted residual)."""
    weighted = (regressor * weights[:, None]).reshape(-1, regressor.shape[-1])
    solution, _, rank, _ = np.linalg.lstsq(weighted, (tau * weights).ravel(), rcond=None)
    if rank < regressor.shape[-1]:
        raise InputError(
            f"the samples do not excite every base parameter (regressor rank {rank} of "
            f"{regressor.shape[-1]}): record richer motions, such as `invdyn.ident` excitations"
        )
    residual = tau - regressor @ solution
    joint_std = np.sqrt(np.mean(residual**2, axis=0))
    # a joint predicted exactly (noise-free data) keeps a weight that is large but finite
    floor = 1e-12 * max(1.0, float(np.abs(tau).max()))
    return solution, np.maximum(joint_std, floor)


def _standard_deviations(regressor: Float, tau: Float, solution: Float, weights: Float) -> Float:
    """(columns,) standard deviations of the solution: sigma^2 (W^T W)^-1 with sigma^2 the
    weighted residual variance."""
    weighted = (regressor * weights[:, None]).reshape(-1, regressor.shape[-1])
    residual = (tau - regressor @ solution) * weights
    dof = max(weighted.shape[0] - weighted.shape[1], 1)
    variance = float(np.sum(residual**2)) / dof
    covariance = variance * np.linalg.inv(weighted.T @ weighted)
    return np.sqrt(np.maximum(np.diag(covariance), 0.0))
