"""Base parameters: the combinations of dynamic parameters that torques can identify.

rnea is linear in the dynamic parameters, ``tau = Y(q, v, a) theta`` (`invdyn.regressor`), but
not every parameter moves a torque: a link's mass about an axis it only turns around, the
inertia of a body seen only through its children, parameters that always appear together.
The base parameters are the largest set of independent combinations ``theta_b = B theta``
with ``Y theta = Y_b theta_b`` for every state (Gautier 1990): a QR factorisation of the
regressor stacked over many random states finds the independent columns (those whose
diagonal entry of R is not negligible, in column order) and expresses the others through them,
``theta_b = theta_1 + R_1^-1 R_2 theta_2``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import check_count
from invdyn.configuration import random_configuration
from invdyn.errors import InputError
from invdyn.model import Model
from invdyn.regressor import joint_torque_regressor

Float = NDArray[np.float64]
Int = NDArray[np.int64]

# a column no torque sees: its norm is below this fraction of the largest column's
ZERO_TOLERANCE = 1e-8
# a column is dependent when its diagonal entry of R (columns of unit norm) is below this
# fraction of the largest. On the built-in robots the diagonals are above 0.1, or below 1e-5:
# combinations that only rounding in a URDF's angles (1.5708 for pi / 2) sets apart, which
# torques could only tell with noise a million times below them
RANK_TOLERANCE = 1e-4
BODY_PARAMETER_NAMES = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
JOINT_PARAMETER_NAMES = ("armature", "damping", "friction")


@dataclasses.dataclass(frozen=True, eq=False)
class BaseParameters:
    """The base parameters of a model: ``theta_b = projection @ theta``.

    Attributes:
      independent: (nb,) indices of the parameters (columns of the regressor) that the base
        parameters are built on, in increasing order.
      projection: (nb, P) map from the P dynamic parameters to the nb base parameters.
      names: (nb,) readable names, ``"panda_link2.Izz + 0.16 panda_link3.m + ..."``.
    """

    independent: Int
    projection: Float
    names: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.independent)

    def of(self, params: Float) -> Float:
        """(..., nb) base parameters of (..., P) dynamic parameters."""
        return np.asarray(params, dtype=np.float64) @ self.projection.T

    def regressor(self, full: Float) -> Float:
        """(..., nb) columns of the base regressor from the (..., P) full regressor."""
        return np.asarray(full)[..., self.independent]


def parameter_names(model: Model) -> tuple[str, ...]:
    """(10 nbody + 3 nv,) names of the dynamic parameters, ``"<body>.<m|mcx|...|Izz>"`` then
    ``"<dof>.<armature|damping|friction>"`` (`Model.dof_names`), in
    `invdyn.inertial_parameters`' order."""
    bodies = [f"{body}.{p}" for body in model.body_name for p in BODY_PARAMETER_NAMES]
    dofs = [
        f"{model.jnt_name[int(model.dof_body[k])]}{_dof_suffix(model, k)}.{p}"
        for p in JOINT_PARAMETER_NAMES
        for k in range(model.nv)
    ]
    return (*bodies, *dofs)


def _dof_suffix(model: Model, k: int) -> str:
    """ "" for a joint of one dof, else "[i]" for its i-th dof."""
    body = int(model.dof_body[k])
    if model.jnt_nv[body] == 1:
        return ""
    return f"[{k - int(model.jnt_vadr[body])}]"


def base_parameters(
    model: Model, *, samples: int = 64, rng: int | np.random.Generator = 0
) -> BaseParameters:
    """The base parameters of `model`, from its regressor at `samples` random states.

    Args:
      model: the robot.
      samples: random states (q within the joint limits, v and a standard normal) stacked.
      rng: seed or generator of the states.

    Returns:
      The independent columns and the projection onto them.
    """
    samples = check_count("samples", samples)
    if model.nv == 0:
        raise InputError(f"{model.name} has no moving joint: no parameter moves a torque")
    rng = np.random.default_rng(rng)
    q = random_configuration(model, rng=rng, shape=samples)
    v = rng.normal(size=(samples, model.nv))
    a = rng.normal(size=(samples, model.nv))
    stacked = joint_torque_regressor(model, q, v, a).reshape(samples * model.nv, -1)
    if stacked.shape[0] < stacked.shape[1]:
        raise InputError(
            f"samples: {samples} states give {stacked.shape[0]} equations for "
            f"{stacked.shape[1]} parameters; use at least {-(-stacked.shape[1] // model.nv)}"
        )
    # columns scaled to unit norm, so that the rank test does not depend on units; columns that
    # are zero up to rounding (parameters no torque sees) stay zero
    norms = np.linalg.norm(stacked, axis=0)
    significant = norms > ZERO_TOLERANCE * norms.max()
    scaled = np.where(significant, stacked / np.where(significant, norms, 1.0), 0.0)
    r = np.linalg.qr(scaled, mode="r")
    diagonal = np.abs(np.diag(r))
    independent = np.flatnonzero((diagonal > RANK_TOLERANCE * diagonal.max()) & significant)
    dependent = np.setdiff1d(np.arange(stacked.shape[1]), independent)
    # theta_b = theta_1 + beta theta_2 with W_2 = W_1 beta (least squares: exact for the base)
    beta = np.linalg.lstsq(stacked[:, independent], stacked[:, dependent], rcond=None)[0]
    beta[np.abs(beta) < 1e-10 * max(1.0, float(np.abs(beta).max(initial=0.0)))] = 0.0
    projection = np.zeros((len(independent), stacked.shape[1]))
    projection[np.arange(len(independent)), independent] = 1.0
    projection[:, dependent] = beta
    names = parameter_names(model)
    return BaseParameters(
        independent=independent,
        projection=projection,
        names=tuple(_combination_name(row, names) for row in projection),
    )


def _combination_name(row: Float, names: tuple[str, ...]) -> str:
    """`row`'s combination of parameters as text: ``"a.m + 0.316 b.m - c.mcz"``."""
    text = ""
    for k in np.flatnonzero(row):
        magnitude = f"{abs(row[k]):.4g}"
        term = names[k] if magnitude == "1" else f"{magnitude} {names[k]}"
        if not text:
            text = term if row[k] > 0 else f"-{term}"
        else:
            text += f" {'+' if row[k] > 0 else '-'} {term}"
    return text
