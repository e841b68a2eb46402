"""Type stubs of the compiled kernels (src/invdyn/kernels/cxx/module.cpp, whose docstrings
give each kernel's arguments)."""

from typing import Protocol

import numpy as np
from numpy.typing import NDArray

class _Kernel(Protocol):
    """The packed model (ints, reals), then C-contiguous float64 arrays and int body indices
    and frame codes, as the kernel declares; returns a status."""

    def __call__(
        self,
        ints: NDArray[np.int64],
        reals: NDArray[np.float64],
        /,
        *args: NDArray[np.float64] | int,
    ) -> int: ...

REVOLUTE: int
CONTINUOUS: int
PRISMATIC: int
SPHERICAL: int
FREE: int
SINGULAR: int
OVERFLOW: int
JACOBIAN_LOCAL: int
JACOBIAN_WORLD: int
JACOBIAN_LOCAL_WORLD_ALIGNED: int
PARALLEL_FROM: int
LANES: int
SIN_COS_RANGE: float

rnea_vector: _Kernel
aba_vector: _Kernel
crba_vector: _Kernel
forward_kinematics_vector: _Kernel
frame_placement_vector: _Kernel
frame_jacobian_vector: _Kernel
frame_motion_vector: _Kernel
center_of_mass_vector: _Kernel
centroidal_matrix_vector: _Kernel
centroidal_rate_vector: _Kernel
rnea_derivatives_vector: _Kernel
rnea_batch: _Kernel
aba_batch: _Kernel
crba_batch: _Kernel
forward_kinematics_batch: _Kernel
frame_placement_batch: _Kernel
frame_jacobian_batch: _Kernel
frame_motion_batch: _Kernel
regressor_batch: _Kernel
coriolis_batch: _Kernel
center_of_mass_batch: _Kernel
centroidal_matrix_batch: _Kernel
centroidal_rate_batch: _Kernel
rnea_derivatives_batch: _Kernel
aba_derivatives_batch: _Kernel

def lane_sin_cos(x: float, /) -> tuple[float, float]: ...
def num_threads() -> int: ...
