"""Centre of mass and centroidal momentum: what whole-body control of legged robots tracks.

The centroidal momentum ``h_G = A_G(q) v`` is the robot's spatial momentum about its centre of
mass ``G``, in world axes, ordered [angular; linear] like every spatial vector of
`invdyn.spatial` (Pinocchio orders it [linear; angular]); its linear part is ``m c_dot``. Body
``i`` (mass ``m_i``, centre of mass ``c_i``, rotational inertia ``I_i`` about it in world axes,
angular velocity ``omega_i``) contributes ``I_i omega_i + m_i (c_i - G) x c_dot_i`` and
``m_i c_dot_i`` (Orin, Goswami and Lee 2013). Its rate adds, per body,
``I_i alpha_i + omega_i x I_i omega_i + m_i (c_i - G) x c_ddot_i`` and ``m_i c_ddot_i``. The
compiled kernels of `invdyn.kernels.cpu` sum these as spatial quantities: column k of ``A_G``
is the momentum of the composite inertia that dof k moves, and the rate the sum of the bodies'
inertial forces, both taken about ``G``; those of `invdyn.kernels.torch` the same, for torch
tensors (differentiable, on any device). Functions take numpy arrays or tensors with any
leading batch dimensions, and need a robot with mass.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import (
    any_tensor,
    as_float_array,
    batch_shape,
    flatten,
    packed,
    raise_for_status,
)
from invdyn.errors import ModelError
from invdyn.kernels import cpu
from invdyn.model import Model

Array = NDArray[np.float64]

# bound once: module attribute lookups are a visible share of a single call
_empty = np.empty
_ndarray = np.ndarray
_center_of_mass_vector = cpu.center_of_mass_vector
_centroidal_matrix_vector = cpu.centroidal_matrix_vector
_centroidal_rate_vector = cpu.centroidal_rate_vector


def center_of_mass(model: Model, q: Array) -> Array:
    """(..., 3) world position of the robot's centre of mass ``sum_i m_i c_i / m``.

    Args:
      model: the robot.
      q: (..., nq) joint positions.
    """
    ints, reals = packed(model)
    out = _empty(3)
    if _single(_center_of_mass_vector, ints, reals, q, out=out) == 0:
        return out
    if any_tensor(q):
        return _on_tensors(model, "center_of_mass", (3,), q=q)
    (q,), lead = _states(model, q=q)
    out = np.empty((q.shape[0], 3))
    raise_for_status(cpu.center_of_mass_batch(ints, reals, q, out), ("q",))
    return out.reshape((*lead, 3))


def center_of_mass_jacobian(model: Model, q: Array) -> Array:
    """(..., 3, nv) Jacobian of the centre of mass, ``c_dot = J_c(q) v``, world axes: the linear
    rows of the centroidal momentum matrix over the mass.

    Args:
      model: the robot.
      q: (..., nq) joint positions.
    """
    return _momentum_rows(model, q, 3)


def centroidal_momentum_matrix(model: Model, q: Array) -> Array:
    """(..., 6, nv) centroidal momentum matrix ``A_G``: ``h_G = A_G(q) v``, [angular; linear],
    about the centre of mass in world axes.

    Args:
      model: the robot.
      q: (..., nq) joint positions.
    """
    return _momentum_rows(model, q, 6)


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
    ints, reals = packed(model)
    out = _empty(6)
    if _single(_centroidal_rate_vector, ints, reals, q, v, a, out=out) == 0:
        return out
    if any_tensor(q, v, a):
        return _on_tensors(model, "centroidal_rate", (6,), q=q, v=v, a=a)
    (q, v, a), lead = _states(model, q=q, v=v, a=a)
    out = np.empty((q.shape[0], 6))
    raise_for_status(cpu.centroidal_rate_batch(ints, reals, q, v, a, out), ("q", "v", "a"))
    return out.reshape((*lead, 6))


def _momentum_rows(model: Model, q: Array, rows: int) -> Array:
    """(..., rows, nv) the centroidal momentum matrix (6 rows), or its linear rows over the mass
    (3 rows), the Jacobian of the centre of mass."""
    ints, reals = packed(model)
    out = _empty((rows, model.nv))
    if _single(_centroidal_matrix_vector, ints, reals, q, out=out) == 0:
        return out
    if any_tensor(q):
        return _on_tensors(model, "centroidal_matrix", (rows, model.nv), rows, q=q)
    (q,), lead = _states(model, q=q)
    out = np.empty((q.shape[0], rows, model.nv))
    raise_for_status(cpu.centroidal_matrix_batch(ints, reals, q, out), ("q",))
    return out.reshape((*lead, rows, model.nv))


def _single(kernel: Any, ints: Any, reals: Any, *arrays: object, out: Array) -> int:
    """The status of the ``*_vector`` `kernel` of `invdyn.kernels.cpu` on one state `arrays`,
    its result written into `out`, or -1 when they are not float64 vectors: this path checks
    nothing in Python, and any status but 0 sends the caller to the general path, which
    explains the error."""
    first = arrays[0]
    if type(first) is not _ndarray or first.ndim != 1:
        # tensors never reach the kernels, and batches take the general path
        return -1
    try:
        status: int = kernel(ints, reals, *arrays, out)
    except TypeError:
        return -1
    return status


def _states(model: Model, **named: Array) -> tuple[list[Array], tuple[int, ...]]:
    """The (..., nq) q and (..., nv) velocity-like arrays `named` as float64 (B, nq) and (B, nv)
    arrays over their common batch shape (...), and that shape; `InputError` for another shape
    or batches that do not broadcast, `ModelError` for a robot without mass (no centre of mass
    then)."""
    arrays = {
        name: as_float_array(name, x, model.nq if name == "q" else model.nv)
        for name, x in named.items()
    }
    lead = batch_shape({name: (x, 1) for name, x in arrays.items()})
    _check_mass(model, model.total_mass)
    return [flatten(x, lead, 1) for x in arrays.values()], lead


def _on_tensors(model: Model, kernel: str, core: tuple[int, ...], *extra: int, **named: Any) -> Any:
    """``kernel(tree, *named tensors, *extra)`` of `invdyn.kernels.torch` on the tensors or
    arrays `named` (q (..., nq) and velocity-like (..., nv)): a (..., *core) tensor."""
    from invdyn._tensors import finish, prepare_states
    from invdyn.kernels import torch as kernels

    prepared, flat = prepare_states(model, **named)
    _check_mass(model, prepared.tree.mass)  # the tree's: torch.compile traces the model's arrays
    return finish(getattr(kernels, kernel)(prepared.tree, *flat, *extra), prepared, core)


def _check_mass(model: Model, mass: float) -> None:
    """`ModelError` for a robot without `mass` (its total), which has no centre of mass."""
    if not mass > 0:
        raise ModelError(
            f"{model.name}: the moving bodies have no mass, so there is no centre of mass"
        )
