"""Compiled CPU kernels: RNEA, CRBA, ABA, kinematics, regressor, Coriolis matrix, centroidal
quantities and the analytic derivatives of inverse and forward dynamics.

The kernels are C++ (``src/invdyn/kernels/cxx``), compiled into `invdyn.kernels._cpu` when the
package is built, so that a fresh install answers its first call at once. Each works on one
state, or with the ``*_batch`` variants on a leading batch axis shared among the threads of a
pool (``INVDYN_NUM_THREADS`` of them, else one per core this process may run on); batched rnea,
the hot path of learning and control, runs LANES states at a time through SIMD loops. The
model reaches the kernels packed into two arrays, `invdyn.model.Model.kernel_data`, so a call
unboxes few arguments; a joint type's code there is its `invdyn.model.JointType` value, which
REVOLUTE ... FREE here are.

Spatial vectors are [angular; linear] (see `invdyn.spatial`). A kernel returns a status: 0 when
every input was finite, else the position of the first non-finite argument (1 for ``q``, ...),
OVERFLOW when finite inputs gave a non-finite result, SINGULAR when forward dynamics met a joint
whose subtree has no mass. The ``*_vector`` kernels serve calls of one state from Python: they
return -1 when a size is wrong, so that the caller's checks cost nothing on the fast path and
its general path explains the error. Any argument of another type raises TypeError.
"""

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
    "regressor_batch",
    "rnea_batch",
    "rnea_derivatives_batch",
    "rnea_derivatives_vector",
    "rnea_vector",
]
