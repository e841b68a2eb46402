"""Type stubs of the compiled kernels (src/invdyn/kernels/cxx/module.cpp)."""

import numpy as np
from numpy.typing import NDArray

_Ints = NDArray[np.int64]
_Reals = NDArray[np.float64]

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

def rnea_vector(
    ints: _Ints, reals: _Reals, q: _Reals, v: _Reals, a: _Reals, tau: _Reals, /
) -> int: ...
def aba_vector(
    ints: _Ints, reals: _Reals, q: _Reals, v: _Reals, tau: _Reals, qdd: _Reals, /
) -> int: ...
def crba_vector(ints: _Ints, reals: _Reals, q: _Reals, mass_matrix: _Reals, /) -> int: ...
def forward_kinematics_vector(ints: _Ints, reals: _Reals, q: _Reals, world: _Reals, /) -> int: ...
def frame_placement_vector(
    ints: _Ints, reals: _Reals, q: _Reals, body: int, frame: _Reals, out: _Reals, /
) -> int: ...
def frame_jacobian_vector(
    ints: _Ints, reals: _Reals, q: _Reals, body: int, frame: _Reals, ref: int, out: _Reals, /
) -> int: ...
def frame_motion_vector(
    ints: _Ints,
    reals: _Reals,
    q: _Reals,
    v: _Reals,
    a: _Reals,
    body: int,
    frame: _Reals,
    ref: int,
    out: _Reals,
    /,
) -> int: ...
def center_of_mass_vector(ints: _Ints, reals: _Reals, q: _Reals, out: _Reals, /) -> int: ...
def centroidal_matrix_vector(ints: _Ints, reals: _Reals, q: _Reals, out: _Reals, /) -> int: ...
def centroidal_rate_vector(
    ints: _Ints, reals: _Reals, q: _Reals, v: _Reals, a: _Reals, out: _Reals, /
) -> int: ...
def rnea_derivatives_vector(
    ints: _Ints, reals: _Reals, q: _Reals, v: _Reals, a: _Reals, out: _Reals, /
) -> int: ...
def rnea_batch(
    ints: _Ints, reals: _Reals, q: _Reals, v: _Reals, a: _Reals, fext: _Reals, tau: _Reals, /
) -> int: ...
def aba_batch(
    ints: _Ints, reals: _Reals, q: _Reals, v: _Reals, tau: _Reals, fext: _Reals, qdd: _Reals, /
) -> int: ...
def crba_batch(ints: _Ints, reals: _Reals, q: _Reals, mass_matrix: _Reals, /) -> int: ...
def forward_kinematics_batch(ints: _Ints, reals: _Reals, q: _Reals, world: _Reals, /) -> int: ...
def frame_placement_batch(
    ints: _Ints, reals: _Reals, q: _Reals, body: int, frame: _Reals, out: _Reals, /
) -> int: ...
def frame_jacobian_batch(
    ints: _Ints, reals: _Reals, q: _Reals, body: int, frame: _Reals, ref: int, out: _Reals, /
) -> int: ...
def frame_motion_batch(
    ints: _Ints,
    reals: _Reals,
    q: _Reals,
    v: _Reals,
    a: _Reals,
    body: int,
    frame: _Reals,
    ref: int,
    out: _Reals,
    /,
) -> int: ...
def regressor_batch(
    ints: _Ints, reals: _Reals, q: _Reals, v: _Reals, a: _Reals, out: _Reals, /
) -> int: ...
def coriolis_batch(ints: _Ints, reals: _Reals, q: _Reals, v: _Reals, out: _Reals, /) -> int: ...
def center_of_mass_batch(ints: _Ints, reals: _Reals, q: _Reals, out: _Reals, /) -> int: ...
def centroidal_matrix_batch(ints: _Ints, reals: _Reals, q: _Reals, out: _Reals, /) -> int: ...
def centroidal_rate_batch(
    ints: _Ints, reals: _Reals, q: _Reals, v: _Reals, a: _Reals, out: _Reals, /
) -> int: ...
def rnea_derivatives_batch(
    ints: _Ints,
    reals: _Reals,
    q: _Reals,
    v: _Reals,
    a: _Reals,
    fext: _Reals,
    dq: _Reals,
    dv: _Reals,
    da: _Reals,
    /,
) -> int: ...
def aba_derivatives_batch(
    ints: _Ints,
    reals: _Reals,
    q: _Reals,
    v: _Reals,
    tau: _Reals,
    fext: _Reals,
    dq: _Reals,
    dv: _Reals,
    dtau: _Reals,
    /,
) -> int: ...
def lane_sin_cos(x: float, /) -> tuple[float, float]: ...
def num_threads() -> int: ...
