"""Physically consistent identification: every body's pseudo-inertia positive definite.

Least squares on the base parameters (`invdyn.ident.identify`) may return parameters that no
rigid body has (a negative mass, an inertia that breaks the triangle inequality), which
simulators and controllers reject. Here every body's ten inertial parameters are those of its
pseudo-inertia ``J = [[Sigma, h], [h^T, m]]`` (``Sigma = tr(I_o) / 2 1 - I_o``, ``h = m c``),
positive definite exactly when the body is physical (Wensing, Kim and Slotine 2017), written
through its log-Cholesky factor ``J = U U^T``, ``U = e^alpha [[e^d1, s12, s13, t1], [0, e^d2,
s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]]``, so that any ten real numbers give a physical body
(Rucker and Wensing 2022); armature, viscous and Coulomb friction are themselves, bounded
below by zero. The weighted torque residual plus a small pull of those coordinates towards the
prior (the model's own parameters) in the directions the data leave free is minimised by
L-BFGS-B (scipy), its gradient from torch's autograd.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from invdyn.model import Model, inertial_parameters

Float = NDArray[np.float64]

# a prior body with no mass gets this much (kg) and this inertia (kg m^2) to start from
MIN_PRIOR_MASS = 1e-4
MIN_PRIOR_INERTIA = 1e-8
MAX_ITERATIONS = 2000


def pseudo_inertias(params: Float) -> Float:
    """(nbody, 4, 4) pseudo-inertias of the body parameters (nbody, 10) (`inertial_parameters`
    order, inertia about the body origin)."""
    params = np.asarray(params, dtype=np.float64)
    mass, h = params[:, 0], params[:, 1:4]
    six = params[:, 4:10]
    inertia = six[:, [[0, 1, 3], [1, 2, 4], [3, 4, 5]]]
    trace = np.trace(inertia, axis1=-2, axis2=-1)
    sigma = 0.5 * trace[:, None, None] * np.eye(3) - inertia
    out = np.zeros((len(params), 4, 4))
    out[:, :3, :3] = sigma
    out[:, :3, 3] = h
    out[:, 3, :3] = h
    out[:, 3, 3] = mass
    return out


def log_cholesky(pseudo: Float) -> Float:
    """(nbody, 10) log-Cholesky coordinates ``(alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3)`` of
    positive definite pseudo-inertias (nbody, 4, 4)."""
    flip = np.eye(4)[::-1]
    # J = U U^T with U upper triangular: U = P chol(P J P) P for the reversal P
    upper = flip @ np.linalg.cholesky(flip @ pseudo @ flip) @ flip
    scale = upper[:, 3, 3]
    unit = upper / scale[:, None, None]
    return np.stack(
        [
            np.log(scale),
            np.log(unit[:, 0, 0]),
            np.log(unit[:, 1, 1]),
            np.log(unit[:, 2, 2]),
            unit[:, 0, 1],
            unit[:, 1, 2],
            unit[:, 0, 2],
            unit[:, 0, 3],
            unit[:, 1, 3],
            unit[:, 2, 3],
        ],
        axis=1,
    )


def parameters_of_coordinates(phi: Any, torch: Any) -> Any:
    """(nbody, 10) inertial parameters of (nbody, 10) log-Cholesky coordinates (torch)."""
    alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3 = phi.unbind(-1)
    zero, one = torch.zeros_like(alpha), torch.ones_like(alpha)
    rows = [
        torch.stack([torch.exp(d1), s12, s13, t1], -1),
        torch.stack([zero, torch.exp(d2), s23, t2], -1),
        torch.stack([zero, zero, torch.exp(d3), t3], -1),
        torch.stack([zero, zero, zero, one], -1),
    ]
    upper = torch.exp(alpha)[:, None, None] * torch.stack(rows, -2)
    pseudo = upper @ upper.transpose(-1, -2)
    sigma = pseudo[:, :3, :3]
    inertia = (
        torch.diagonal(sigma, dim1=-2, dim2=-1).sum(-1)[:, None, None]
        * torch.eye(3, dtype=phi.dtype)
        - sigma
    )
    six = inertia[:, [0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]]
    return torch.cat([pseudo[:, 3, 3, None], pseudo[:, :3, 3], six], dim=-1)


def prior_coordinates(model: Model) -> tuple[Float, Float]:
    """Starting coordinates from the model's own parameters: (nbody, 10) log-Cholesky
    coordinates of its bodies, each made physical first (eigenvalues of the pseudo-inertia
    raised to a floor), and (3 nv,) its armature, damping and friction (negative ones
    zero)."""
    params = inertial_parameters(model)
    bodies = params[: 10 * model.nbody].reshape(model.nbody, 10).copy()
    bodies[:, 0] = np.maximum(bodies[:, 0], MIN_PRIOR_MASS)
    pseudo = pseudo_inertias(bodies)
    values, vectors = np.linalg.eigh(pseudo)
    floor = np.maximum(MIN_PRIOR_INERTIA, 1e-9 * values[:, -1:])
    pseudo = vectors @ (np.maximum(values, floor)[..., None] * np.swapaxes(vectors, -1, -2))
    joints = np.maximum(params[10 * model.nbody :], 0.0)
    return log_cholesky(pseudo), joints


def fit_consistent(
    model: Model,
    gram: Float,
    moment: Float,
    scale: float,
    *,
    regularisation: float,
    extra: int,
) -> tuple[Float, Float]:
    """Physical parameters minimising ``(x^T G x - 2 b^T x) / scale + lambda |phi - phi_0|^2``.

    Args:
      model: the robot; its parameters are the prior phi_0.
      gram: (P + extra, P + extra) ``G = W^T W`` of the weighted regressor (full parameters,
        then `extra` free unknowns such as torque offsets).
      moment: (P + extra,) ``b = W^T tau`` of the weighted torques.
      scale: ``tau^T tau`` of the weighted torques, to make the residual relative.
      regularisation: lambda.
      extra: number of unconstrained unknowns after the parameters.

    Returns:
      (P,) physically consistent dynamic parameters and (extra,) the free unknowns.
    """
    import torch
    from scipy.optimize import minimize

    bodies0, joints0 = prior_coordinates(model)
    g = torch.tensor(gram)
    b = torch.tensor(moment)
    prior = np.concatenate([bodies0.ravel(), joints0])
    prior_t = torch.tensor(prior)
    nbody, size = model.nbody, len(prior)

    def unknowns(z: Any) -> Any:
        """The (P + extra,) unknowns of the (P + extra,) optimised variables."""
        body = parameters_of_coordinates(z[: 10 * nbody].reshape(nbody, 10), torch)
        return torch.cat([body.reshape(-1), z[10 * nbody :]])

    def loss_and_gradient(z: Float) -> tuple[float, Float]:
        variables = torch.tensor(z, requires_grad=True)
        x = unknowns(variables)
        residual = (x @ g @ x - 2.0 * b @ x) / scale + 1.0
        loss = residual + regularisation * (variables[:size] - prior_t).square().sum()
        loss.backward()
        assert variables.grad is not None
        return float(loss.detach()), variables.grad.numpy()

    # body coordinates and free unknowns unbounded, joint terms (armature, friction) >= 0
    bounds = [(None, None)] * (10 * nbody) + [(0.0, None)] * (3 * model.nv) + [(None, None)] * extra
    result = minimize(
        loss_and_gradient,
        np.concatenate([prior, np.zeros(extra)]),
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"maxiter": MAX_ITERATIONS, "maxcor": 50, "ftol": 1e-15, "gtol": 1e-12},
    )
    with torch.no_grad():
        x = unknowns(torch.tensor(result.x)).numpy()
    return x[:size], x[size:]
