"""Compiled CPU kernels: RNEA, CRBA, ABA, kinematics, regressor, Coriolis matrix, centroidal
quantities and the analytic derivatives of inverse and forward dynamics.

The kernels are C++ (``src/invdyn/kernels/cxx``), compiled into `invdyn.kernels._cpu` when the
package is built, so that a fresh install answers its first call at once. Each works on one
state, or with the ``*_batch`` variants on a leading batch axis shared among the threads of a
pool (``INVDYN_NUM_THREADS`` of them, else one per core this process may run on); batched rnea,
the hot path of learning and control, runs LANES states at a time through SIMD loops. The
model reaches the kernels packed by `pack_model` into two arrays, so a call unboxes few
arguments:

* ``ints`` (nbody, 5): parent, joint type, first index in ``q``, first index in ``v``, and the
  coordinate axis (0, 1, 2) a revolute joint turns about, or -1 for any other axis.
* ``reals`` (nbody + nv + 1, 28): per body, the joint axis (3), joint rotation in the parent,
  row-major (9), joint origin in the parent (3), mass (1), first mass moment ``m c`` (3) and
  rotational inertia about the body origin, row-major (9), all in body coordinates; then
  ``dofs = reals[nbody:]``: armature, viscous and Coulomb friction per degree of freedom in its
  first three columns, and a last row with gravity, ``nq`` and whether any of those terms is
  non-zero.

Spatial vectors are [angular; linear] (see `invdyn.spatial`). A kernel returns a status: 0 when
every input was finite, else the position of the first non-finite argument (1 for ``q``, ...),
OVERFLOW when finite inputs gave a non-finite result, SINGULAR when forward dynamics met a joint
whose subtree has no mass. The ``*_vector`` kernels serve calls of one state from Python: they
return -1 when a size is wrong, so that the caller's checks cost nothing on the fast path and
its general path explains the error. Any argument of another type raises TypeError.
"""

from __future__ import annotations

import numpy as np

from invdyn.kernels._cpu import (
    CONTINUOUS,
    FREE,
    JACOBIAN_LOCAL,
    JACOBIAN_LOCAL_WORLD_ALIGNED,
    JACOBIAN_WORLD,
    LANES,
    OVERFLOW,
    PARALLEL_FROM,
    PRISMATIC,
    REVOLUTE,
    SIN_COS_RANGE,
    SINGULAR,
    SPHERICAL,
    aba_batch,
    aba_derivatives_batch,
    aba_vector,
    center_of_mass_batch,
    center_of_mass_vector,
    centroidal_matrix_batch,
    centroidal_matrix_vector,
    centroidal_rate_batch,
    centroidal_rate_vector,
    coriolis_batch,
    crba_batch,
    crba_vector,
    forward_kinematics_batch,
    forward_kinematics_vector,
    frame_jacobian_batch,
    frame_jacobian_vector,
    frame_motion_batch,
    frame_motion_vector,
    frame_placement_batch,
    frame_placement_vector,
    lane_sin_cos,
    num_threads,
    regressor_batch,
    rnea_batch,
    rnea_derivatives_batch,
    rnea_derivatives_vector,
    rnea_vector,
)
from invdyn.model import Model

__all__ = [
    "CONTINUOUS",
    "FREE",
    "JACOBIAN_LOCAL",
    "JACOBIAN_LOCAL_WORLD_ALIGNED",
    "JACOBIAN_WORLD",
    "LANES",
    "OVERFLOW",
    "PARALLEL_FROM",
    "PRISMATIC",
    "REVOLUTE",
    "SINGULAR",
    "SIN_COS_RANGE",
    "SPHERICAL",
    "aba_batch",
    "aba_derivatives_batch",
    "aba_vector",
    "center_of_mass_batch",
    "center_of_mass_vector",
    "centroidal_matrix_batch",
    "centroidal_matrix_vector",
    "centroidal_rate_batch",
    "centroidal_rate_vector",
    "coriolis_batch",
    "crba_batch",
    "crba_vector",
    "forward_kinematics_batch",
    "forward_kinematics_vector",
    "frame_jacobian_batch",
    "frame_jacobian_vector",
    "frame_motion_batch",
    "frame_motion_vector",
    "frame_placement_batch",
    "frame_placement_vector",
    "lane_sin_cos",
    "num_threads",
    "pack_model",
    "regressor_batch",
    "rnea_batch",
    "rnea_derivatives_batch",
    "rnea_derivatives_vector",
    "rnea_vector",
]


def pack_model(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """Pack `model` into the (ints, reals) arrays that the kernels read."""
    nbody = model.nbody
    # revolute axes along a coordinate axis (most robots) take a cheaper rotation
    aligned = np.full(nbody, -1)
    for i, axis in enumerate(model.jnt_axis):
        if model.jnt_type[i] in (REVOLUTE, CONTINUOUS) and np.count_nonzero(axis) == 1:
            k = int(np.flatnonzero(axis)[0])
            aligned[i] = k if axis[k] == 1.0 else -1
    ints = np.stack(
        [model.body_parent, model.jnt_type, model.jnt_qadr, model.jnt_vadr, aligned], axis=1
    )
    mass = model.body_mass
    first_moment = mass[:, None] * model.body_com
    # rotational inertia about the body origin: I_c + m (|c|^2 1 - c c^T)
    c = model.body_com
    shift = (c * c).sum(-1)[:, None, None] * np.eye(3) - c[:, :, None] * c[:, None, :]
    inertia_origin = model.body_inertia + mass[:, None, None] * shift
    reals = np.concatenate(
        [
            model.jnt_axis,
            model.jnt_rot.reshape(nbody, 9),
            model.jnt_pos,
            mass[:, None],
            first_moment,
            inertia_origin.reshape(nbody, 9),
        ],
        axis=1,
    )
    # the rows after the bodies: armature, damping, friction per dof, then gravity and nq
    dofs = np.zeros((model.nv + 1, reals.shape[1]))
    dofs[:-1, 0] = model.dof_armature
    dofs[:-1, 1] = model.dof_damping
    dofs[:-1, 2] = model.dof_friction
    dofs[-1, :3] = model.gravity
    dofs[-1, 3] = model.nq
    dofs[-1, 4] = float(np.any(dofs[:-1, :3] != 0.0))
    packed = (
        np.ascontiguousarray(ints, dtype=np.int64),
        np.ascontiguousarray(np.concatenate([reals, dofs]), dtype=np.float64),
    )
    # read-only: batches read them on other threads, without the GIL
    for array in packed:
        array.setflags(write=False)
    return packed
