"""Centre of mass and centroidal momentum: what whole-body control of legged robots tracks.

The centroidal momentum ``h_G = A_G(q) v`` is the robot's spatial momentum about its centre of
mass ``G``, in world axes, ordered [angular; linear] like every spatial vector of
`invdyn.spatial` (Pinocchio orders it [linear; angular]); its linear part is ``m c_dot``. Body
``i`` (mass ``m_i``, centre of mass ``c_i``, rotational inertia ``I_i`` about it in world axes,
angular velocity ``omega_i``) contributes ``I_i omega_i + m_i (c_i - G) x c_dot_i`` and
``m_i c_dot_i`` (Orin, Goswami and Lee 2013). Its rate adds, per body,
``I_i alpha_i + omega_i x I_i omega_i + m_i (c_i - G) x c_ddot_i`` and ``m_i c_ddot_i``, from
the bodies' motions (`invdyn.kinematics.body_motions`). Functions take numpy arrays (not torch
tensors) with any leading batch dimensions, and need a robot with mass.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import as_float_array, not_a_model
from invdyn.errors import ModelError
from invdyn.kinematics import (
    body_motions,
    forward_kinematics,
    point_acceleration,
    point_columns,
    support_matrix,
    world_columns,
)
from invdyn.model import Model
from invdyn.spatial import cross

Array = NDArray[np.float64]


def center_of_mass(model: Model, q: Array) -> Array:
    """(..., 3) world position of the robot's centre of mass ``sum_i m_i c_i / m``.

    Args:
      model: the robot.
      q: (..., nq) joint positions.
    """
    rotations, origins = forward_kinematics(model, _positions(model, q))
    return _center(model, body_centers(model, rotations, origins))


def center_of_mass_jacobian(model: Model, q: Array) -> Array:
    """(..., 3, nv) Jacobian of the centre of mass, ``c_dot = J_c(q) v``, world axes.

    Args:
      model: the robot.
      q: (..., nq) joint positions.
    """
    rotations, origins = forward_kinematics(model, _positions(model, q))
    centers = body_centers(model, rotations, origins)
    _, linear = _body_columns(model, rotations, origins, centers)
    momentum = (model.body_mass[:, None, None] * linear).sum(-3)
    return np.swapaxes(momentum, -1, -2) / _total_mass(model)


def centroidal_momentum_matrix(model: Model, q: Array) -> Array:
    """(..., 6, nv) centroidal momentum matrix ``A_G``: ``h_G = A_G(q) v``, [angular; linear],
    about the centre of mass in world axes.

    Args:
      model: the robot.
      q: (..., nq) joint positions.
    """
    rotations, origins = forward_kinematics(model, _positions(model, q))
    centers = body_centers(model, rotations, origins)
    offsets = centers - _center(model, centers)[..., None, :]
    angular, linear = _body_columns(model, rotations, origins, centers)
    mass = model.body_mass[:, None, None]
    spin = np.einsum("...bij,...bkj->...bki", _world_inertias(model, rotations), angular)
    orbit = mass * cross(offsets[..., None, :], linear)
    matrix = np.concatenate([(spin + orbit).sum(-3), (mass * linear).sum(-3)], axis=-1)
    return np.swapaxes(matrix, -1, -2)


def _body_columns(
    model: Model, rotations: Array, origins: Array, centers: Array
) -> tuple[Array, Array]:
    """(..., nbody, nv, 3) each body's angular velocity and centre-of-mass velocity per unit
    velocity of each coordinate, world axes, from the world placements (..., nbody, 3, 3),
    (..., nbody, 3) and the (..., nbody, 3) body centres of mass."""
    columns = (
        world_columns(model, rotations, origins)[..., None, :, :] * support_matrix(model)[..., None]
    )
    return columns[..., :3], point_columns(columns, centers[..., None, :])


def centroidal_momentum_rate(model: Model, q: Array, v: Array, a: Array) -> Array:
    """(..., 6) rate of the centroidal momentum, ``A_G a + A_G_dot v``, [angular; linear]; with
    ``a = 0``, the drift that momentum and centre-of-mass tasks need (``c_ddot`` is the linear
    part over the total mass).

    Args:
      model: the robot.
      q: (..., nq) joint positions.
      v: (..., nv) joint velocities.
      a: (..., nv) joint accelerations.
    """
    rotations, origins, velocity, acceleration = body_motions(model, q, v, a)
    centers = body_centers(model, rotations, origins)
    offsets = centers - _center(model, centers)[..., None, :]
    omega, alpha = velocity[..., :3], acceleration[..., :3]
    center_acceleration = point_acceleration(velocity, acceleration, centers)
    inertias = _world_inertias(model, rotations)
    spin = np.einsum("...bij,...bj->...bi", inertias, alpha) + cross(
        omega, np.einsum("...bij,...bj->...bi", inertias, omega)
    )
    mass = model.body_mass[:, None]
    orbit = mass * cross(offsets, center_acceleration)
    return np.concatenate([(spin + orbit).sum(-2), (mass * center_acceleration).sum(-2)], axis=-1)


def body_centers(model: Model, rotations: Array, origins: Array) -> Array:
    """(..., nbody, 3) world positions of the bodies' centres of mass."""
    return origins + np.einsum("...bij,bj->...bi", rotations, model.body_com)


def _center(model: Model, centers: Array) -> Array:
    """(..., 3) the mass-weighted mean of (..., nbody, 3) body centres."""
    return np.einsum("b,...bi->...i", model.body_mass, centers) / _total_mass(model)


def _positions(model: Model, q: Array) -> Array:
    """`q` as a (..., nq) float64 array of `model`; `InputError` for a non-model, a tensor or
    another shape."""
    if not isinstance(model, Model):
        raise not_a_model(model)
    return as_float_array("q", q, model.nq)


def _total_mass(model: Model) -> float:
    """The robot's mass, or `ModelError` when it has none (no centre of mass then)."""
    if not model.total_mass > 0:
        raise ModelError(
            f"{model.name}: the moving bodies have no mass, so there is no centre of mass"
        )
    return float(model.total_mass)


def _world_inertias(model: Model, rotations: Array) -> Array:
    """(..., nbody, 3, 3) rotational inertias about the bodies' centres, world axes."""
    return rotations @ model.body_inertia @ np.swapaxes(rotations, -1, -2)
