"""Dynamic parameters and the joint-torque regressor: rnea is linear in the parameters.

The parameter vector holds, in order, 10 inertial parameters per body (Pinocchio's order,
``[m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]`` with the rotational inertia
about the body origin, in body coordinates), then the armature, the viscous friction and the
Coulomb friction of every degree of freedom: ``10 nbody + 3 nv`` values in all, a model's own
given by `invdyn.model.inertial_parameters`. `joint_torque_regressor` takes numpy arrays or
torch tensors, as `invdyn.rnea` does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import (
    any_tensor,
    as_finite_array,
    as_float_array,
    batch_shape,
    flatten,
    packed,
    raise_for_status,
)
from invdyn.errors import InputError
from invdyn.kernels import cpu
from invdyn.model import Model

Array = NDArray[np.float64]


def with_parameters(model: Model, params: Array | None) -> Model:
    """A copy of `model` with the dynamic parameters `params` (`model` itself when None).

    Args:
      model: the robot.
      params: (10 nbody + 3 nv,) body inertial parameters, then armature, viscous and Coulomb
        friction, as `invdyn.model.inertial_parameters` orders them.

    Returns:
      The model whose `invdyn.model.inertial_parameters` are `params`: masses, centres of
      mass ``h / m`` and inertias about them, ``I_o - m (|c|^2 1 - c c^T)``.

    Raises:
      InputError: `params` of another shape, non-finite, a negative mass, armature or friction,
        or a first mass moment on a body without mass.
    """
    if params is None:
        return model
    packed(model)
    params = as_finite_array("params", params, 10 * model.nbody + 3 * model.nv, batch=False)
    bodies = params[: 10 * model.nbody].reshape(model.nbody, 10)
    mass, moment = bodies[:, 0], bodies[:, 1:4]
    for i in np.flatnonzero((mass < 0) | ((mass == 0) & np.any(moment != 0, axis=1))):
        what = "a negative mass" if mass[i] < 0 else "a first mass moment but no mass"
        raise InputError(f"params: body {model.body_name[i]!r} has {what}")
    com = np.divide(moment, mass[:, None], out=np.zeros_like(moment), where=mass[:, None] > 0)
    rows, cols = [0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]
    about_origin = np.zeros((model.nbody, 3, 3))
    about_origin[:, rows, cols] = bodies[:, 4:]
    about_origin[:, cols, rows] = bodies[:, 4:]
    shift = (com * com).sum(-1)[:, None, None] * np.eye(3) - com[:, :, None] * com[:, None, :]
    dofs = params[10 * model.nbody :].reshape(3, model.nv)
    for values, what in zip(dofs, ("armature", "viscous friction", "Coulomb friction")):
        for k in np.flatnonzero(values < 0):
            raise InputError(f"params: {what} of {model.dof_names[k]!r} is {values[k]:g} < 0")
    return model.replace(
        body_mass=mass,
        body_com=com,
        body_inertia=about_origin - mass[:, None, None] * shift,
        dof_armature=dofs[0],
        dof_damping=dofs[1],
        dof_friction=dofs[2],
    )


def joint_torque_regressor(model: Model, q: Array, v: Array, a: Array) -> Array:
    """Matrix Y(q, v, a) with rnea(model, q, v, a) = Y @ inertial_parameters(model).

    Y = [S_j^T X_ji^* Y_i(v_i, a_i)]_{j, i}  (Atkeson, An and Hollerbach 1986), plus the joint
    columns a, v and sign(v) for armature, viscous and Coulomb friction.

    Args:
      model: the robot.
      q: (..., nq) joint positions.
      v: (..., nv) joint velocities.
      a: (..., nv) joint accelerations.

    Returns:
      (..., nv, 10 nbody + 3 nv) regressor.
    """
    ints, reals = packed(model)
    if any_tensor(q, v, a):
        return _tensor_regressor(model, q, v, a)
    q = as_float_array("q", q, model.nq)
    v = as_float_array("v", v, model.nv)
    a = as_float_array("a", a, model.nv)
    lead = batch_shape({"q": (q, 1), "v": (v, 1), "a": (a, 1)})
    qf, vf, af = (flatten(x, lead, 1) for x in (q, v, a))
    columns = 10 * model.nbody + 3 * model.nv
    out = np.empty((qf.shape[0], model.nv, columns))
    raise_for_status(cpu.regressor_batch(ints, reals, qf, vf, af, out), ("q", "v", "a"))
    return out.reshape((*lead, model.nv, columns))


def _tensor_regressor(model: Model, q: Any, v: Any, a: Any) -> Any:
    """`joint_torque_regressor` on tensors (`invdyn.kernels.torch.regressor`)."""
    from invdyn._tensors import finish, prepare_states
    from invdyn.kernels import torch as kernels

    prepared, flat = prepare_states(model, q=q, v=v, a=a)
    out = kernels.regressor(prepared.tree, *flat)
    return finish(out, prepared, (model.nv, 10 * model.nbody + 3 * model.nv))
