"""Dynamic parameters and the joint-torque regressor: rnea is linear in the parameters.

The parameter vector holds, in order, 10 inertial parameters per body (Pinocchio's order,
``[m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]`` with the rotational inertia
about the body origin, in body coordinates), then the armature, the viscous friction and the
Coulomb friction of every degree of freedom: ``10 nbody + 3 nv`` values in all.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import as_float_array, batch_shape, flatten, packed, raise_for_status
from invdyn.kernels import cpu
from invdyn.model import Model

Array = NDArray[np.float64]


def inertial_parameters(model: Model) -> Array:
    """The model's dynamic parameters, in the order of `joint_torque_regressor`'s columns.

    Args:
      model: the robot.

    Returns:
      (10 nbody + 3 nv,) body inertial parameters, then armature, viscous and Coulomb friction.
    """
    bodies = packed(model)[1][: model.nbody]
    inertia = bodies[:, 19:28].reshape(-1, 3, 3)
    rotational = inertia[:, [0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]]
    body_parameters = np.concatenate([bodies[:, 15:19], rotational], axis=1)
    return np.concatenate(
        [body_parameters.ravel(), model.dof_armature, model.dof_damping, model.dof_friction]
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
    q = as_float_array("q", q, model.nq)
    v = as_float_array("v", v, model.nv)
    a = as_float_array("a", a, model.nv)
    lead = batch_shape({"q": (q, 1), "v": (v, 1), "a": (a, 1)})
    qf, vf, af = (flatten(x, lead, 1) for x in (q, v, a))
    columns = 10 * model.nbody + 3 * model.nv
    out = np.empty((qf.shape[0], model.nv, columns))
    raise_for_status(cpu.regressor_batch(ints, reals, qf, vf, af, out), ("q", "v", "a"))
    return out.reshape((*lead, model.nv, columns))
