"""Compiled CPU kernels (numba): RNEA, CRBA, ABA, kinematics, regressor, Coriolis matrix and
centroidal quantities.

Every kernel works on one state and writes into arrays its caller allocated; the ``*_batch``
variants run it over a leading batch axis in parallel on all cores. Batched rnea, the hot path
of learning and control, runs LANES states at a time instead: each block of states is copied
into lane-minor arrays, so that every per-body step is one loop over the lanes that compiles to
SIMD instructions. The model reaches the
kernels packed by `pack_model` into two arrays, so a call from Python unboxes few arguments:

* ``ints`` (nbody, 5): parent, joint type, first index in ``q``, first index in ``v``, and the
  coordinate axis (0, 1, 2) a revolute joint turns about, or -1 for any other axis.
* ``reals`` (nbody + nv + 1, 28): per body, the joint axis (3), joint rotation in the parent,
  row-major (9), joint origin in the parent (3), mass (1), first mass moment ``m c`` (3) and
  rotational inertia about the body origin, row-major (9), all in body coordinates; then
  ``dofs = reals[nbody:]``: armature, viscous and Coulomb friction per degree of freedom in its
  first three columns, and a last row with gravity, ``nq`` and whether any of those terms is
  non-zero.

Spatial vectors are [angular; linear] (see `invdyn.spatial`). Per-body state lives in a work
array of shape (nbody + 1, 30), the last row being the world: rotation to the parent (9),
origin in the parent (3), velocity (6), acceleration (6) and force (6), in body coordinates.
A kernel returns a status: 0 when every input was finite, else the position of the first
non-finite argument (1 for ``q``, ...), or OVERFLOW when finite inputs gave a non-finite result.

The ``*_vector`` kernels serve calls of one state from Python: they take only C-contiguous
float64 vectors (any other argument raises numba's TypeError at once, without compiling),
check the sizes themselves and return -1 when one is wrong, so that the caller's checks cost
nothing on the fast path and the general path explains the error.

No kernel calls a parallel (``*_batch``) one: numba would cache a caller compiled where the
parallel kernel was loaded from the cache without the parallel kernel's code, and every later
process that loads the caller from the cache would crash on calling it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import prange
from numba.core import errors, sigutils, types

from invdyn.kernels.compiler import compile_lock, jit, lock_path
from invdyn.model import Model

# joint type codes, as in invdyn.model.JointType
REVOLUTE, CONTINUOUS, PRISMATIC, SPHERICAL, FREE = 0, 1, 2, 3, 4

# floating-point contraction (fma) only: no assumption about NaN or infinity, which are checked
_FAST = {"contract"}

# statuses beyond the argument positions
SINGULAR, OVERFLOW = 5, 6

# columns of the work array
_R, _P, _V, _A, _F = 0, 9, 12, 18, 24
WORK_COLUMNS = 30


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
    return (
        np.ascontiguousarray(ints, dtype=np.int64),
        np.ascontiguousarray(np.concatenate([reals, dofs]), dtype=np.float64),
    )


@jit(fastmath=_FAST)
def _check(q, v, a, fext):
    # 0 when all are finite, else the position of the first non-finite argument
    for k in range(q.shape[0]):
        if not np.isfinite(q[k]):
            return 1
    for k in range(v.shape[0]):
        if not np.isfinite(v[k]):
            return 2
    for k in range(a.shape[0]):
        if not np.isfinite(a[k]):
            return 3
    for i in range(fext.shape[0]):
        for k in range(6):
            if not np.isfinite(fext[i, k]):
                return 4
    return 0


@jit(fastmath=_FAST, inline="always")
def _status_of_result(x):
    """0 when every entry of the result x is finite, else OVERFLOW (finite inputs too large)."""
    for value in x.flat:
        if not np.isfinite(value):
            return OVERFLOW
    return 0


@jit(fastmath=_FAST, inline="always")
def _axis_rotation(ux, uy, uz, c, s):
    """The rotation (9 values, row-major) by the angle of cosine c and sine s about (ux, uy, uz)."""
    t = 1.0 - c
    return (
        c + t * ux * ux,
        t * ux * uy - s * uz,
        t * ux * uz + s * uy,
        t * ux * uy + s * uz,
        c + t * uy * uy,
        t * uy * uz - s * ux,
        t * ux * uz - s * uy,
        t * uy * uz + s * ux,
        c + t * uz * uz,
    )


@jit(fastmath=_FAST, inline="always")
def _quaternion_rotation(x, y, z, w):
    """The rotation (9 values, row-major) of the quaternion [x, y, z, w] of any norm: that of
    the unit quaternion along it, none for a zero quaternion."""
    n = x * x + y * y + z * z + w * w
    # a NaN stays NaN, for the caller's check of the result to find
    t = 0.0 if n == 0.0 else 2.0 / n
    return (
        1 - t * (y * y + z * z),
        t * (x * y - z * w),
        t * (x * z + y * w),
        t * (x * y + z * w),
        1 - t * (x * x + z * z),
        t * (y * z - x * w),
        t * (x * z - y * w),
        t * (y * z + x * w),
        1 - t * (x * x + y * y),
    )


_IDENTITY = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
# a placement (rotation, origin) that moves nothing
_IDENTITY_PLACEMENT = np.array([*_IDENTITY, 0.0, 0.0, 0.0])


@jit(fastmath=_FAST, inline="always")
def _joint_frame(reals, i):
    """Body i's joint axis (3), then the rotation (9, row-major) and origin (3) of its joint
    frame in the parent: 15 values."""
    return (
        reals[i, 0], reals[i, 1], reals[i, 2], reals[i, 3], reals[i, 4], reals[i, 5],
        reals[i, 6], reals[i, 7], reals[i, 8], reals[i, 9], reals[i, 10], reals[i, 11],
        reals[i, 12], reals[i, 13], reals[i, 14],
    )  # fmt: skip


@jit(fastmath=_FAST, inline="always")
def _joint_coordinates(q, qa):
    """The 7 values q[qa:qa + 7], an index past the end of q reading its last entry: the
    coordinates of a joint of any type at qa (a free flyer has 7), read without a branch."""
    last = q.shape[0] - 1
    return (
        q[qa], q[min(qa + 1, last)], q[min(qa + 2, last)], q[min(qa + 3, last)],
        q[min(qa + 4, last)], q[min(qa + 5, last)], q[min(qa + 6, last)],
    )  # fmt: skip


@jit(fastmath=_FAST, inline="always")
def _compose_row(frame, row, rj, pj):
    """Row `row` of a body's placement in its parent (rotation row, origin entry: 4 values)
    after its joint of `frame` (15 values, `_joint_frame`) moved by the rotation rj (9,
    row-major) and the translation pj (3): R = R0 rj, p = p0 + R0 pj."""
    j00, j01, j02, j10, j11, j12, j20, j21, j22 = rj
    px, py, pz = pj
    a0, a1, a2 = frame[3 + 3 * row], frame[4 + 3 * row], frame[5 + 3 * row]
    return (
        a0 * j00 + a1 * j10 + a2 * j20,
        a0 * j01 + a1 * j11 + a2 * j21,
        a0 * j02 + a1 * j12 + a2 * j22,
        frame[12 + row] + a0 * px + a1 * py + a2 * pz,
    )


@jit(fastmath=_FAST, inline="always")
def _compose(frame, rj, pj):
    """`_compose_row` of every row: the placement (12 values: rotation row-major, origin)."""
    r00, r01, r02, p0 = _compose_row(frame, 0, rj, pj)
    r10, r11, r12, p1 = _compose_row(frame, 1, rj, pj)
    r20, r21, r22, p2 = _compose_row(frame, 2, rj, pj)
    return r00, r01, r02, r10, r11, r12, r20, r21, r22, p0, p1, p2


@jit(fastmath=_FAST, inline="always")
def _turned_row(frame, row, k, c, s):
    """Row `row` of the rotation of a joint `frame` (15 values) after a turn of cosine c and
    sine s about the coordinate axis e_k: columns a = k + 1 and b = k + 2 (mod 3) become
    c a + s b and c b - s a, column k stays."""
    r0, r1, r2 = frame[3 + 3 * row], frame[4 + 3 * row], frame[5 + 3 * row]
    if k == 0:
        return r0, c * r1 + s * r2, c * r2 - s * r1
    if k == 1:
        return c * r0 - s * r2, r1, c * r2 + s * r0
    return c * r0 + s * r1, c * r1 - s * r0, r2


@jit(fastmath=_FAST, inline="always")
def _turned(frame, k, c, s):
    """The placement (12 values) of a revolute joint of `frame` (15 values) about the
    coordinate axis e_k turned by the angle of cosine c and sine s: only two columns of the
    rotation change, the origin does not."""
    r00, r01, r02 = _turned_row(frame, 0, k, c, s)
    r10, r11, r12 = _turned_row(frame, 1, k, c, s)
    r20, r21, r22 = _turned_row(frame, 2, k, c, s)
    return r00, r01, r02, r10, r11, r12, r20, r21, r22, frame[12], frame[13], frame[14]


@jit(fastmath=_FAST, inline="always")
def _moved_placement(jtype, k, c, s, x, frame):
    """A body's placement in its parent (12 values) from its joint's type, coordinate axis k
    (`pack_model`), cosine c and sine s of its angle (revolute and continuous joints), its
    coordinates x (7 values, `_joint_coordinates`) and its `frame` (15, `_joint_frame`)."""
    if jtype == REVOLUTE or jtype == CONTINUOUS:
        if k >= 0:
            return _turned(frame, k, c, s)
        return _compose(frame, _axis_rotation(frame[0], frame[1], frame[2], c, s), (0.0, 0.0, 0.0))
    if jtype == PRISMATIC:
        d = x[0]
        return _compose(frame, _IDENTITY, (frame[0] * d, frame[1] * d, frame[2] * d))
    if jtype == SPHERICAL:
        return _compose(frame, _quaternion_rotation(x[0], x[1], x[2], x[3]), (0.0, 0.0, 0.0))
    # free flyer: translation, then quaternion
    return _compose(frame, _quaternion_rotation(x[3], x[4], x[5], x[6]), (x[0], x[1], x[2]))


@jit(fastmath=_FAST, inline="always")
def _cos_sin(jtype, x):
    """Cosine and sine of the angle of a revolute (x[0]) or continuous joint (x[0], x[1], of
    any norm: the angle they point to, 0 for a zero pair) of coordinates x; (1, 0) for any
    other joint."""
    if jtype == REVOLUTE:
        return np.cos(x[0]), np.sin(x[0])
    if jtype == CONTINUOUS:
        return _unit_pair(x[0], x[1])
    return 1.0, 0.0


@jit(fastmath=_FAST, inline="always")
def _unit_pair(c, s):
    """The (cos θ, sin θ) pair of the angle that (c, s), of any norm, points to; (1, 0) for
    (0, 0)."""
    n = c * c + s * s
    if n == 0.0:
        return 1.0, 0.0
    r = 1.0 / np.sqrt(n)
    return c * r, s * r


@jit(fastmath=_FAST, inline="always")
def _joint_placement(ints, reals, q, i, w):
    """Write body i's rotation and origin in its parent into w[i, 0:12].

    The arrays are read and written in straight-line code, and only scalars reach the branches
    over the joint type: numba pays an atomic reference count increment and decrement on
    every array an inlined function branches with, at every call, more than the arithmetic.
    """
    jtype = ints[i, 1]
    x = _joint_coordinates(q, ints[i, 2])
    c, s = _cos_sin(jtype, x)
    (
        w[i, 0], w[i, 1], w[i, 2], w[i, 3], w[i, 4], w[i, 5],
        w[i, 6], w[i, 7], w[i, 8], w[i, 9], w[i, 10], w[i, 11],
    ) = _moved_placement(jtype, ints[i, 4], c, s, x, _joint_frame(reals, i))  # fmt: skip


@jit(fastmath=_FAST, inline="always")
def _joint_motion(ints, reals, i, x):
    """S x_i: the spatial motion (6 values) of joint i's velocity coordinates in x."""
    jtype = ints[i, 1]
    va = ints[i, 3]
    if jtype == REVOLUTE or jtype == CONTINUOUS:
        d = x[va]
        return reals[i, 0] * d, reals[i, 1] * d, reals[i, 2] * d, 0.0, 0.0, 0.0
    if jtype == PRISMATIC:
        d = x[va]
        return 0.0, 0.0, 0.0, reals[i, 0] * d, reals[i, 1] * d, reals[i, 2] * d
    if jtype == SPHERICAL:
        return x[va], x[va + 1], x[va + 2], 0.0, 0.0, 0.0
    return x[va + 3], x[va + 4], x[va + 5], x[va], x[va + 1], x[va + 2]


@jit(fastmath=_FAST, inline="always")
def _joint_force(ints, reals, i, w, col, tau):
    """Write S^T f, the joint forces of body i's spatial force w[i, col:col+6], into tau."""
    jtype = ints[i, 1]
    va = ints[i, 3]
    if jtype == REVOLUTE or jtype == CONTINUOUS:
        tau[va] = (
            reals[i, 0] * w[i, col] + reals[i, 1] * w[i, col + 1] + reals[i, 2] * w[i, col + 2]
        )
    elif jtype == PRISMATIC:
        tau[va] = (
            reals[i, 0] * w[i, col + 3] + reals[i, 1] * w[i, col + 4] + reals[i, 2] * w[i, col + 5]
        )
    elif jtype == SPHERICAL:
        for k in range(3):
            tau[va + k] = w[i, col + k]
    else:
        for k in range(3):
            tau[va + k] = w[i, col + 3 + k]
            tau[va + 3 + k] = w[i, col + k]


@jit(fastmath=_FAST, inline="always")
def _placement(w, i):
    """Body i's placement in its parent (12 values: rotation row-major, origin) from w."""
    return (
        w[i, 0], w[i, 1], w[i, 2], w[i, 3], w[i, 4], w[i, 5],
        w[i, 6], w[i, 7], w[i, 8], w[i, 9], w[i, 10], w[i, 11],
    )  # fmt: skip


@jit(fastmath=_FAST, inline="always")
def _to_child(placement, m):
    """X m: the parent's spatial motion m (6 values) in the coordinates of the body at
    `placement` (12 values) in that parent."""
    # (R^T ang, R^T (lin + ang x p))
    r00, r01, r02, r10, r11, r12, r20, r21, r22, p0, p1, p2 = placement
    a0, a1, a2, b0, b1, b2 = m
    l0 = b0 + a1 * p2 - a2 * p1
    l1 = b1 + a2 * p0 - a0 * p2
    l2 = b2 + a0 * p1 - a1 * p0
    return (
        r00 * a0 + r10 * a1 + r20 * a2,
        r01 * a0 + r11 * a1 + r21 * a2,
        r02 * a0 + r12 * a1 + r22 * a2,
        r00 * l0 + r10 * l1 + r20 * l2,
        r01 * l0 + r11 * l1 + r21 * l2,
        r02 * l0 + r12 * l1 + r22 * l2,
    )


@jit(fastmath=_FAST, inline="always")
def _row(w, i, col):
    """The 6 values w[i, col:col+6]."""
    return w[i, col], w[i, col + 1], w[i, col + 2], w[i, col + 3], w[i, col + 4], w[i, col + 5]


@jit(fastmath=_FAST, inline="always")
def _store(w, i, col, m):
    """Write the 6 values m to w[i, col:col+6]."""
    for k in range(6):
        w[i, col + k] = m[k]


@jit(fastmath=_FAST, inline="always")
def _vec(x):
    """The 6 values of the vector x (6,)."""
    return x[0], x[1], x[2], x[3], x[4], x[5]


@jit(fastmath=_FAST, inline="always")
def _put(out, m):
    """Write the 6 values m into the vector out (6,)."""
    for k in range(6):
        out[k] = m[k]


@jit(fastmath=_FAST, inline="always")
def _plus(m, n):
    return m[0] + n[0], m[1] + n[1], m[2] + n[2], m[3] + n[3], m[4] + n[4], m[5] + n[5]


@jit(fastmath=_FAST, inline="always")
def _cross_motion(v, m):
    """v x m, the spatial motion cross product (6 values each)."""
    w0, w1, w2, u0, u1, u2 = v
    a0, a1, a2, b0, b1, b2 = m
    return (
        w1 * a2 - w2 * a1,
        w2 * a0 - w0 * a2,
        w0 * a1 - w1 * a0,
        w1 * b2 - w2 * b1 + u1 * a2 - u2 * a1,
        w2 * b0 - w0 * b2 + u2 * a0 - u0 * a2,
        w0 * b1 - w1 * b0 + u0 * a1 - u1 * a0,
    )


@jit(fastmath=_FAST, inline="always")
def _body_inertia(reals, i):
    """Body i's inertia (13 values): mass, first mass moment (3), inertia about the origin (9)."""
    return (
        reals[i, 15], reals[i, 16], reals[i, 17], reals[i, 18], reals[i, 19], reals[i, 20],
        reals[i, 21], reals[i, 22], reals[i, 23], reals[i, 24], reals[i, 25], reals[i, 26],
        reals[i, 27],
    )  # fmt: skip


@jit(fastmath=_FAST, inline="always")
def _inertial_force(inertia, v, acc):
    """I a + v x* (I v): the inertial force of a body of `inertia` (13 values, `_body_inertia`)
    at velocity v and acceleration acc."""
    mass, h0, h1, h2, i00, i01, i02, i10, i11, i12, i20, i21, i22 = inertia
    w0, w1, w2, u0, u1, u2 = v
    b0, b1, b2, c0, c1, c2 = acc
    # momentum I v: n = I_o w + h x u ;  f = mass u - h x w
    n0 = i00 * w0 + i01 * w1 + i02 * w2 + h1 * u2 - h2 * u1
    n1 = i10 * w0 + i11 * w1 + i12 * w2 + h2 * u0 - h0 * u2
    n2 = i20 * w0 + i21 * w1 + i22 * w2 + h0 * u1 - h1 * u0
    f0 = mass * u0 - (h1 * w2 - h2 * w1)
    f1 = mass * u1 - (h2 * w0 - h0 * w2)
    f2 = mass * u2 - (h0 * w1 - h1 * w0)
    # I a
    m0 = i00 * b0 + i01 * b1 + i02 * b2 + h1 * c2 - h2 * c1
    m1 = i10 * b0 + i11 * b1 + i12 * b2 + h2 * c0 - h0 * c2
    m2 = i20 * b0 + i21 * b1 + i22 * b2 + h0 * c1 - h1 * c0
    # plus v x* (I v)
    return (
        m0 + w1 * n2 - w2 * n1 + u1 * f2 - u2 * f1,
        m1 + w2 * n0 - w0 * n2 + u2 * f0 - u0 * f2,
        m2 + w0 * n1 - w1 * n0 + u0 * f1 - u1 * f0,
        mass * c0 - (h1 * b2 - h2 * b1) + w1 * f2 - w2 * f1,
        mass * c1 - (h2 * b0 - h0 * b2) + w2 * f0 - w0 * f2,
        mass * c2 - (h0 * b1 - h1 * b0) + w0 * f1 - w1 * f0,
    )


@jit(fastmath=_FAST, inline="always")
def _new_work(ints, dofs):
    """A work array whose last row is the world: at rest, accelerating against gravity."""
    nbody = ints.shape[0]
    nv = dofs.shape[0] - 1
    w = np.empty((nbody + 1, WORK_COLUMNS))
    for k in range(WORK_COLUMNS):
        w[nbody, k] = 0.0
    for k in range(3):
        w[nbody, _A + 3 + k] = -dofs[nv, k]
    return w


@jit(fastmath=_FAST, inline="always")
def _forward_pass(ints, reals, q, v, a, w):
    """Placements, velocities, accelerations (gravity included) and inertial forces of every
    body, each computed in registers and stored once."""
    for i in range(ints.shape[0]):
        _joint_placement(ints, reals, q, i, w)
        parent = ints[i, 0]  # -1, the last row, is the world
        # v_i = X v_parent + S qd
        joint_velocity = _joint_motion(ints, reals, i, v)
        vel = _plus(_to_child(_placement(w, i), _row(w, parent, _V)), joint_velocity)
        # a_i = X a_parent + S qdd + v_i x S qd
        acc = _plus(
            _to_child(_placement(w, i), _row(w, parent, _A)), _joint_motion(ints, reals, i, a)
        )
        acc = _plus(acc, _cross_motion(vel, joint_velocity))
        # f_i = I a_i + v_i x* I v_i
        _store(w, i, _V, vel)
        _store(w, i, _A, acc)
        _store(w, i, _F, _inertial_force(_body_inertia(reals, i), vel, acc))


@jit(fastmath=_FAST, inline="always")
def _add_joint_terms(dofs, v, a, tau):
    """Add armature, viscous and Coulomb friction forces to tau (when the model has any)."""
    if dofs[dofs.shape[0] - 1, 4] == 0.0:
        return
    for k in range(tau.shape[0]):
        tau[k] += dofs[k, 0] * a[k] + dofs[k, 1] * v[k] + dofs[k, 2] * np.sign(v[k])


@jit(fastmath=_FAST)
def rnea(ints, reals, q, v, a, fext, tau):
    """Recursive Newton-Euler: write the joint forces of (q, v, a) into tau; return a status."""
    dofs = reals[ints.shape[0] :]
    return _rnea_in(ints, reals, dofs, q, v, a, fext, tau, _new_work(ints, dofs))


@jit(fastmath=_FAST, inline="always")
def _rnea_in(ints, reals, dofs, q, v, a, fext, tau, w):
    """`rnea` in the work array w of `_new_work` (its world row is kept, the rest rewritten)."""
    nbody = ints.shape[0]
    _forward_pass(ints, reals, q, v, a, w)
    # f_i = I a_i + v_i x* I v_i - f_ext_i
    if fext.shape[0] > 0:
        for i in range(nbody):
            for k in range(6):
                w[i, _F + k] -= fext[i, k]
    # backward: tau_i = S^T f_i, then pass f_i to the parent
    for i in range(nbody - 1, -1, -1):
        _joint_force(ints, reals, i, w, _F, tau)
        parent = ints[i, 0]
        if parent >= 0:
            _store(
                w,
                parent,
                _F,
                _plus(_row(w, parent, _F), _force_up(_placement(w, i), _row(w, i, _F))),
            )
    _add_joint_terms(dofs, v, a, tau)
    return _rnea_status(q, v, a, fext, tau)


@jit(fastmath=_FAST, inline="always")
def _rnea_status(q, v, a, fext, tau):
    """The status of an rnea result tau: its inputs are checked only when it is not finite, as
    every entry of q, v, a and f_ext reaches tau through products and sums."""
    status = _status_of_result(tau)
    if status != 0:
        culprit = _check(q, v, a, fext)
        return culprit if culprit != 0 else status
    return 0


@jit(fastmath=_FAST, inline="always")
def _joint_nv(ints, i):
    jtype = ints[i, 1]
    if jtype == SPHERICAL:
        return 3
    if jtype == FREE:
        return 6
    return 1


@jit(fastmath=_FAST, inline="always")
def _add_cross_force(v, h, out):
    """Add v x* h (spatial force cross product) to out (6,)."""
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    n0, n1, n2, f0, f1, f2 = h[0], h[1], h[2], h[3], h[4], h[5]
    out[0] += w1 * n2 - w2 * n1 + u1 * f2 - u2 * f1
    out[1] += w2 * n0 - w0 * n2 + u2 * f0 - u0 * f2
    out[2] += w0 * n1 - w1 * n0 + u0 * f1 - u1 * f0
    out[3] += w1 * f2 - w2 * f1
    out[4] += w2 * f0 - w0 * f2
    out[5] += w0 * f1 - w1 * f0


@jit(fastmath=_FAST)
def crba(ints, reals, q, mass_matrix):
    """Composite rigid-body algorithm: write M(q) (nv, nv) into mass_matrix; return a status."""
    dofs = reals[ints.shape[0] :]
    for k in range(q.shape[0]):
        if not np.isfinite(q[k]):
            return 1
    nbody = ints.shape[0]
    nv = dofs.shape[0] - 1
    w = _new_work(ints, dofs)
    for i in range(nbody):
        _joint_placement(ints, reals, q, i, w)
    # composite inertias (m, h, I_o) in body coordinates, children folded into parents
    comp = _composite_inertias(ints, reals, w)
    for r in range(nv):
        for c in range(nv):
            mass_matrix[r, c] = 0.0
    for i in range(nbody):
        va = ints[i, 3]
        for k in range(_joint_nv(ints, i)):
            # F = I^c_i S_ik, projected on every joint from i up to the root
            force = _composite_product(comp, i, _column(ints, reals, i, k))
            j = i
            while True:
                vj = ints[j, 3]
                for kk in range(_joint_nv(ints, j)):
                    value = _project(ints, reals, j, kk, force)
                    mass_matrix[vj + kk, va + k] = value
                    mass_matrix[va + k, vj + kk] = value
                parent = ints[j, 0]
                if parent < 0:
                    break
                force = _force_up(_placement(w, j), force)
                j = parent
    for k in range(nv):
        mass_matrix[k, k] += dofs[k, 0]
    return _status_of_result(mass_matrix)


@jit(fastmath=_FAST, inline="always")
def _composite_inertias(ints, reals, w):
    """(nbody, 13) the composite inertia (m, h, I_o) of each body's subtree in its coordinates,
    from the joint placements in w."""
    nbody = ints.shape[0]
    comp = np.empty((nbody, 13))
    for i in range(nbody):
        for k in range(13):
            comp[i, k] = reals[i, 15 + k]
    scratch = np.empty(12)
    for i in range(nbody - 1, -1, -1):
        parent = ints[i, 0]
        if parent >= 0:
            _add_inertia_to_parent(w, i, comp, parent, scratch)
    return comp


@jit(fastmath=_FAST, inline="always")
def _column(ints, reals, i, k):
    """Column k of joint i's motion subspace S (6 values, body coordinates)."""
    jtype = ints[i, 1]
    if jtype == REVOLUTE or jtype == CONTINUOUS:
        return reals[i, 0], reals[i, 1], reals[i, 2], 0.0, 0.0, 0.0
    if jtype == PRISMATIC:
        return 0.0, 0.0, 0.0, reals[i, 0], reals[i, 1], reals[i, 2]
    unit = (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0)
    if jtype == SPHERICAL:
        return unit[0], unit[1], unit[2], 0.0, 0.0, 0.0
    # free flyer: linear coordinates first
    if k < 3:
        return 0.0, 0.0, 0.0, unit[0], unit[1], unit[2]
    return (1.0 if k == 3 else 0.0, 1.0 if k == 4 else 0.0, 1.0 if k == 5 else 0.0, 0.0, 0.0, 0.0)


@jit(fastmath=_FAST, inline="always")
def _composite_product(comp, i, m):
    """The inertia comp[i] (m, h, I_o) times the motion m (6 values)."""
    mass = comp[i, 0]
    h0, h1, h2 = comp[i, 1], comp[i, 2], comp[i, 3]
    w0, w1, w2, u0, u1, u2 = m
    return (
        comp[i, 4] * w0 + comp[i, 5] * w1 + comp[i, 6] * w2 + h1 * u2 - h2 * u1,
        comp[i, 7] * w0 + comp[i, 8] * w1 + comp[i, 9] * w2 + h2 * u0 - h0 * u2,
        comp[i, 10] * w0 + comp[i, 11] * w1 + comp[i, 12] * w2 + h0 * u1 - h1 * u0,
        mass * u0 - (h1 * w2 - h2 * w1),
        mass * u1 - (h2 * w0 - h0 * w2),
        mass * u2 - (h0 * w1 - h1 * w0),
    )


@jit(fastmath=_FAST, inline="always")
def _force_up(placement, f):
    """X^T f: the spatial force f (6 values) of the body at `placement` (12 values) in its
    parent, in the parent's coordinates."""
    r00, r01, r02, r10, r11, r12, r20, r21, r22, p0, p1, p2 = placement
    n0, n1, n2, g0, g1, g2 = f
    rn0 = r00 * n0 + r01 * n1 + r02 * n2
    rn1 = r10 * n0 + r11 * n1 + r12 * n2
    rn2 = r20 * n0 + r21 * n1 + r22 * n2
    rf0 = r00 * g0 + r01 * g1 + r02 * g2
    rf1 = r10 * g0 + r11 * g1 + r12 * g2
    rf2 = r20 * g0 + r21 * g1 + r22 * g2
    return (
        rn0 + p1 * rf2 - p2 * rf1,
        rn1 + p2 * rf0 - p0 * rf2,
        rn2 + p0 * rf1 - p1 * rf0,
        rf0,
        rf1,
        rf2,
    )


@jit(fastmath=_FAST, inline="always")
def _add_inertia_to_parent(w, i, comp, parent, scratch):
    """Add body i's inertia comp[i] (m, h, I_o), moved to the parent's coordinates, to comp[parent].

    scratch is a (12,) work vector.
    """
    # h' = R h + m p ;  I' = R I R^T + (2 p.Rh + m |p|^2) 1 - (Rh p^T + p Rh^T + m p p^T)
    mass = comp[i, 0]
    p0, p1, p2 = w[i, _P], w[i, _P + 1], w[i, _P + 2]
    for a in range(3):
        scratch[a] = (
            w[i, 3 * a] * comp[i, 1] + w[i, 3 * a + 1] * comp[i, 2] + w[i, 3 * a + 2] * comp[i, 3]
        )
        for b in range(3):
            scratch[3 + 3 * a + b] = (
                w[i, 3 * a] * comp[i, 4 + b]
                + w[i, 3 * a + 1] * comp[i, 7 + b]
                + w[i, 3 * a + 2] * comp[i, 10 + b]
            )
    diag = 2.0 * (p0 * scratch[0] + p1 * scratch[1] + p2 * scratch[2]) + mass * (
        p0 * p0 + p1 * p1 + p2 * p2
    )
    pos = (p0, p1, p2)
    comp[parent, 0] += mass
    for a in range(3):
        comp[parent, 1 + a] += scratch[a] + mass * pos[a]
        for b in range(3):
            value = (
                scratch[3 + 3 * a] * w[i, 3 * b]
                + scratch[4 + 3 * a] * w[i, 3 * b + 1]
                + scratch[5 + 3 * a] * w[i, 3 * b + 2]
            )
            value -= scratch[a] * pos[b] + pos[a] * scratch[b] + mass * pos[a] * pos[b]
            if a == b:
                value += diag
            comp[parent, 4 + 3 * a + b] += value


# columns of the ABA work array `s` (nbody, ABA_COLUMNS), one row per body: articulated inertia
# I^A (36, row-major), articulated bias force p^A (6), U = I^A S (6 n: column k at 6 k),
# D^-1 (n x n, row-major with row stride 6), u = tau - S^T p^A (n)
_IA, _PA, _U, _DINV, _UV = 0, 36, 42, 78, 114
ABA_COLUMNS = 120
# offsets in ABA's scratch vector: I^a (36), X^T I^a (36), U D^-1 (36), a Cholesky factor
# (36), p^a (6), the right-hand side of pass 3 (6)
_T_IA, _T_MOVED, _T_GAIN, _T_CHOL, _T_PA, _T_RHS = 0, 36, 72, 108, 144, 150
ABA_SCRATCH = 156


@jit(fastmath=_FAST, inline="always")
def _set_spatial_inertia(reals, i, s):
    """Write body i's (6, 6) spatial inertia [[I_o, h x], [(h x)^T, m 1]] into s[i, _IA:]."""
    mass = reals[i, 15]
    h0, h1, h2 = reals[i, 16], reals[i, 17], reals[i, 18]
    rows = (
        (reals[i, 19], reals[i, 20], reals[i, 21], 0.0, -h2, h1),
        (reals[i, 22], reals[i, 23], reals[i, 24], h2, 0.0, -h0),
        (reals[i, 25], reals[i, 26], reals[i, 27], -h1, h0, 0.0),
        (0.0, h2, -h1, mass, 0.0, 0.0),
        (-h2, 0.0, h0, 0.0, mass, 0.0),
        (h1, -h0, 0.0, 0.0, 0.0, mass),
    )
    for r in range(6):
        for c in range(6):
            s[i, _IA + 6 * r + c] = rows[r][c]


@jit(fastmath=_FAST, inline="always")
def _invert_spd(s, i, n, t):
    """Replace the (n, n) symmetric positive definite matrix in s[i, _DINV:] (row stride 6)
    by its inverse, through its Cholesky factor in t[_T_CHOL:]; False if it is not positive
    definite."""
    if n == 1:
        d = s[i, _DINV]
        if not d > 0.0:
            return False
        s[i, _DINV] = 1.0 / d
        return True
    for r in range(n):
        for c in range(r + 1):
            acc = s[i, _DINV + 6 * r + c]
            for k in range(c):
                acc -= t[_T_CHOL + 6 * r + k] * t[_T_CHOL + 6 * c + k]
            if r == c:
                if not acc > 0.0:
                    return False
                t[_T_CHOL + 6 * r + r] = np.sqrt(acc)
            else:
                t[_T_CHOL + 6 * r + c] = acc / t[_T_CHOL + 6 * c + c]
    # column j of the inverse: solve L y = e_j, then L^T x = y, in place of row j of s
    for j in range(n):
        for r in range(n):
            acc = 1.0 if r == j else 0.0
            for k in range(r):
                acc -= t[_T_CHOL + 6 * r + k] * s[i, _DINV + 6 * j + k]
            s[i, _DINV + 6 * j + r] = acc / t[_T_CHOL + 6 * r + r]
        for r in range(n - 1, -1, -1):
            acc = s[i, _DINV + 6 * j + r]
            for k in range(r + 1, n):
                acc -= t[_T_CHOL + 6 * k + r] * s[i, _DINV + 6 * j + k]
            s[i, _DINV + 6 * j + r] = acc / t[_T_CHOL + 6 * r + r]
    return True


@jit(fastmath=_FAST, inline="always")
def _six(x, start, step):
    """The 6 values x[start + k step], k = 0..5, of the vector x."""
    return (
        x[start], x[start + step], x[start + 2 * step],
        x[start + 3 * step], x[start + 4 * step], x[start + 5 * step],
    )  # fmt: skip


@jit(fastmath=_FAST, inline="always")
def _articulate(ints, reals, dofs, v, tau, i, s, t):
    """Body i's U = I^A S, u = tau - friction - S^T p^A and D^-1 = (S^T U + armature)^-1 into
    s[i]; False if D is singular (the joint moves no mass or inertia)."""
    n = _joint_nv(ints, i)
    va = ints[i, 3]
    for k in range(n):
        col = _column(ints, reals, i, k)
        for r in range(6):
            acc = 0.0
            for c in range(6):
                acc += s[i, _IA + 6 * r + c] * col[c]
            s[i, _U + 6 * k + r] = acc
    for k in range(n):
        col = _column(ints, reals, i, k)
        vk = v[va + k]
        value = tau[va + k] - dofs[va + k, 1] * vk - dofs[va + k, 2] * np.sign(vk)
        for r in range(6):
            value -= col[r] * s[i, _PA + r]
        s[i, _UV + k] = value
        for kk in range(n):
            acc = 0.0
            for r in range(6):
                acc += col[r] * s[i, _U + 6 * kk + r]
            s[i, _DINV + 6 * k + kk] = acc
        s[i, _DINV + 7 * k] += dofs[va + k, 0]
    return _invert_spd(s, i, n, t)


@jit(fastmath=_FAST, inline="always")
def _fold_into_parent(w, i, parent, n, s, t):
    """Add body i's articulated inertia I^a = I^A - U D^-1 U^T and bias force
    p^a = p^A + I^a c + U D^-1 u, moved to the parent (X^T I^a X, X^T p^a), to the parent's."""
    for k in range(n):
        for r in range(6):
            acc = 0.0
            for kk in range(n):
                acc += s[i, _U + 6 * kk + r] * s[i, _DINV + 6 * kk + k]
            t[_T_GAIN + 6 * k + r] = acc
    for r in range(6):
        for c in range(6):
            acc = s[i, _IA + 6 * r + c]
            for k in range(n):
                acc -= t[_T_GAIN + 6 * k + r] * s[i, _U + 6 * k + c]
            t[_T_IA + 6 * r + c] = acc
    for r in range(6):
        acc = s[i, _PA + r]
        for c in range(6):
            acc += t[_T_IA + 6 * r + c] * w[i, _A + c]
        for k in range(n):
            acc += t[_T_GAIN + 6 * k + r] * s[i, _UV + k]
        t[_T_PA + r] = acc
    placement = _placement(w, i)
    # X^T I^a X: X^T moves each column, then each row (I^a is symmetric)
    for c in range(6):
        moved = _force_up(placement, _six(t, _T_IA + c, 6))
        for r in range(6):
            t[_T_MOVED + 6 * r + c] = moved[r]
    for r in range(6):
        moved = _force_up(placement, _six(t, _T_MOVED + 6 * r, 1))
        for c in range(6):
            s[parent, _IA + 6 * r + c] += moved[c]
    moved = _force_up(placement, _six(t, _T_PA, 1))
    for r in range(6):
        s[parent, _PA + r] += moved[r]


@jit(fastmath=_FAST)
def aba(ints, reals, q, v, tau, fext, qdd):
    """Articulated-body algorithm: write the accelerations of (q, v, tau) into qdd; return a status.

    Status SINGULAR means a joint's articulated inertia is singular (a massless subtree).
    """
    status = _check(q, v, tau, fext)
    if status != 0:
        return status
    nbody = ints.shape[0]
    dofs = reals[nbody:]
    w = _new_work(ints, dofs)
    s = np.empty((nbody, ABA_COLUMNS))
    t = np.empty(ABA_SCRATCH)
    # pass 1 (root to leaves): velocities, bias accelerations c_i = v_i x S qd (in the A
    # columns), each body's spatial inertia and bias force p_i = v_i x* I v_i - f_ext_i
    for i in range(nbody):
        _joint_placement(ints, reals, q, i, w)
        joint_velocity = _joint_motion(ints, reals, i, v)
        vel = _plus(_to_child(_placement(w, i), _row(w, ints[i, 0], _V)), joint_velocity)
        _store(w, i, _V, vel)
        _store(w, i, _A, _cross_motion(vel, joint_velocity))
        _set_spatial_inertia(reals, i, s)
        bias = _inertial_force(_body_inertia(reals, i), vel, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
        for k in range(6):
            s[i, _PA + k] = bias[k]
        if fext.shape[0] > 0:
            for k in range(6):
                s[i, _PA + k] -= fext[i, k]
    # pass 2 (leaves to root): articulated inertias and bias forces
    for i in range(nbody - 1, -1, -1):
        if not _articulate(ints, reals, dofs, v, tau, i, s, t):
            return SINGULAR
        parent = ints[i, 0]
        if parent >= 0:
            _fold_into_parent(w, i, parent, _joint_nv(ints, i), s, t)
    # pass 3 (root to leaves): a' = X a_parent + c ; qdd = D^-1 (u - U^T a') ; a = a' + S qdd
    for i in range(nbody):
        n = _joint_nv(ints, i)
        va = ints[i, 3]
        parent = ints[i, 0]
        # body accelerations go to the F columns; the world row holds -gravity in A
        if parent >= 0:
            moved = _to_child(_placement(w, i), _row(w, parent, _F))
        else:
            moved = _to_child(_placement(w, i), _row(w, nbody, _A))
        acc = _plus(moved, _row(w, i, _A))
        for k in range(n):
            value = s[i, _UV + k]
            for c in range(6):
                value -= s[i, _U + 6 * k + c] * acc[c]
            t[_T_RHS + k] = value
        for k in range(n):
            value = 0.0
            for kk in range(n):
                value += s[i, _DINV + 6 * k + kk] * t[_T_RHS + kk]
            qdd[va + k] = value
        _store(w, i, _F, _plus(acc, _joint_motion(ints, reals, i, qdd)))
    return _status_of_result(qdd)


@jit(fastmath=_FAST, inline="always")
def _world_placements(ints, reals, q, w, world, from_roots):
    """Write each body's world rotation (9, row-major) and origin (3) into world (nbody, 12).

    With `from_roots`, each tree's placements are taken in the frame of its root body instead:
    what does not depend on where a tree is (the Coriolis matrix) then does not read its root
    joint, whose placement's rounding does not enter (as in the torch path)."""
    for i in range(ints.shape[0]):
        _joint_placement(ints, reals, q, i, w)
        parent = ints[i, 0]
        if parent < 0:
            for k in range(12):
                world[i, k] = _IDENTITY_PLACEMENT[k] if from_roots else w[i, k]
            continue
        for a in range(3):
            for b in range(3):
                acc = 0.0
                for k in range(3):
                    acc += world[parent, 3 * a + k] * w[i, 3 * k + b]
                world[i, 3 * a + b] = acc
            acc = world[parent, 9 + a]
            for k in range(3):
                acc += world[parent, 3 * a + k] * w[i, _P + k]
            world[i, 9 + a] = acc


@jit(fastmath=_FAST)
def forward_kinematics(ints, reals, q, world):
    """Write the world placements of every body, (nbody, 12) rotation then origin, into world."""
    dofs = reals[ints.shape[0] :]
    for k in range(q.shape[0]):
        if not np.isfinite(q[k]):
            return 1
    w = _new_work(ints, dofs)
    _world_placements(ints, reals, q, w, world, False)
    return _status_of_result(world)


@jit(fastmath=_FAST, inline="always")
def _regressor_columns(w, i, y):
    """Write body i's (6, 10) force regressor Y_i (f_i = Y_i pi_i) into y, from its v and a."""
    om = w[i, _V : _V + 3]
    vl = w[i, _V + 3 : _V + 6]
    al_ang = w[i, _A : _A + 3]
    al = w[i, _A + 3 : _A + 6]
    for r in range(6):
        for c in range(10):
            y[r, c] = 0.0
    # mass: f = a_lin + w x v_lin
    y[3, 0] = al[0] + om[1] * vl[2] - om[2] * vl[1]
    y[4, 0] = al[1] + om[2] * vl[0] - om[0] * vl[2]
    y[5, 0] = al[2] + om[0] * vl[1] - om[1] * vl[0]
    e = np.zeros(3)
    t1 = np.empty(3)
    t2 = np.empty(3)
    for k in range(3):
        e[:] = 0.0
        e[k] = 1.0
        # first moment: n = e x a_lin + w x (e x v_lin) - v_lin x (e x w)
        #               f = -e x alpha - w x (e x w)
        _cross(e, al, t1)
        for r in range(3):
            y[r, 1 + k] = t1[r]
        _cross(e, vl, t1)
        _cross(om, t1, t2)
        for r in range(3):
            y[r, 1 + k] += t2[r]
        _cross(e, om, t1)
        _cross(vl, t1, t2)
        for r in range(3):
            y[r, 1 + k] -= t2[r]
        _cross(e, al_ang, t1)
        for r in range(3):
            y[3 + r, 1 + k] = -t1[r]
        _cross(e, om, t1)
        _cross(om, t1, t2)
        for r in range(3):
            y[3 + r, 1 + k] -= t2[r]
    # rotational inertia entries (xx, xy, yy, xz, yz, zz): n = E alpha + w x (E w)
    pairs = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))
    for c in range(6):
        a, b = pairs[c]
        ea = np.zeros(3)
        ew = np.zeros(3)
        ea[a] += al_ang[b]
        ew[a] += om[b]
        if a != b:
            ea[b] += al_ang[a]
            ew[b] += om[a]
        _cross(om, ew, t1)
        for r in range(3):
            y[r, 4 + c] = ea[r] + t1[r]


@jit(fastmath=_FAST, inline="always")
def _cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@jit(fastmath=_FAST, inline="always")
def _project(ints, reals, j, k, f):
    """S_jk^T f: the force of column k of joint j from the spatial force f (6,)."""
    jtype = ints[j, 1]
    if jtype == REVOLUTE or jtype == CONTINUOUS:
        return reals[j, 0] * f[0] + reals[j, 1] * f[1] + reals[j, 2] * f[2]
    if jtype == PRISMATIC:
        return reals[j, 0] * f[3] + reals[j, 1] * f[4] + reals[j, 2] * f[5]
    if jtype == SPHERICAL:
        return f[k]
    return f[3 + k] if k < 3 else f[k - 3]


@jit(fastmath=_FAST)
def regressor(ints, reals, q, v, a, out):
    """Joint-torque regressor: write Y (nv, 10 nbody + 3 nv), rnea = Y @ params, into out."""
    dofs = reals[ints.shape[0] :]
    status = _check(q, v, a, np.zeros((0, 6)))
    if status != 0:
        return status
    nbody = ints.shape[0]
    nv = dofs.shape[0] - 1
    w = _new_work(ints, dofs)
    _forward_pass(ints, reals, q, v, a, w)
    out[:, :] = 0.0
    y = np.empty((6, 10))
    force = np.empty(6)
    for i in range(nbody):
        _regressor_columns(w, i, y)
        for c in range(10):
            # the body's force per unit parameter, projected on every joint up to the root
            for r in range(6):
                force[r] = y[r, c]
            j = i
            while j >= 0:
                vj = ints[j, 3]
                for kk in range(_joint_nv(ints, j)):
                    out[vj + kk, 10 * i + c] = _project(ints, reals, j, kk, force)
                parent = ints[j, 0]
                if parent >= 0:
                    _put(force, _force_up(_placement(w, j), _vec(force)))
                j = parent
    # armature, viscous and Coulomb friction columns
    for k in range(nv):
        out[k, 10 * nbody + k] = a[k]
        out[k, 10 * nbody + nv + k] = v[k]
        out[k, 10 * nbody + 2 * nv + k] = np.sign(v[k])
    return _status_of_result(out)


@jit(fastmath=_FAST)
def coriolis(ints, reals, q, v, out):
    """Coriolis matrix C (nv, nv) of the Christoffel symbols of M: C v the velocity product
    terms, C + C^T = M_dot.

    C = sum_i J_i^T (I_i J_dot_i + B(I_i, v_i) J_i) with the body Coriolis matrix
    B(I, v) = ((v x*) I - I (v x) + (I v) xbar*) / 2, where (f xbar*) m = m x* f (Echeandia
    and Wensing 2021, as Pinocchio's ``computeCoriolisMatrix``), everything in the coordinates
    of each tree's root body (`_world_placements` from roots: any fixed frame gives the same C).
    """
    dofs = reals[ints.shape[0] :]
    status = _check(q, v, v, np.zeros((0, 6)))
    if status != 0:
        return status
    nbody = ints.shape[0]
    nv = dofs.shape[0] - 1
    w = _new_work(ints, dofs)
    zero = np.zeros(nv)
    _forward_pass(ints, reals, q, v, zero, w)
    world = np.empty((nbody, 12))
    _world_placements(ints, reals, q, w, world, True)
    # world velocity of every body, and world columns S and S_dot = v_body x S of every dof
    vel = np.empty((nbody, 6))
    cols = np.empty((nv, 6))
    dcols = np.empty((nv, 6))
    col = np.empty(6)
    for i in range(nbody):
        _motion_to_world(world, i, w[i, _V : _V + 6], vel[i])
        va = ints[i, 3]
        for k in range(_joint_nv(ints, i)):
            _put(col, _column(ints, reals, i, k))
            _motion_to_world(world, i, col, cols[va + k])
            dcols[va + k, :] = 0.0
            _add_cross_motion(vel[i], cols[va + k], dcols[va + k])
    out[:, :] = 0.0
    comp = np.empty((1, 13))
    inertia = np.empty((6, 6))
    chain = np.empty(nv, dtype=np.int64)
    ij = np.empty(6)
    momentum = np.empty(6)
    crossed = np.empty(6)
    turned = np.empty(6)
    term = np.empty((nv, 6))
    for i in range(nbody):
        # body i's inertia in world coordinates
        for k in range(13):
            comp[0, k] = reals[i, 15 + k]
        _inertia_to_world(world, i, comp)
        _composite_matrix(comp, 0, inertia)
        # the dofs that move body i
        count = 0
        j = i
        while j >= 0:
            for k in range(_joint_nv(ints, j)):
                chain[count] = ints[j, 3] + k
                count += 1
            j = ints[j, 0]
        for r in range(6):
            acc = 0.0
            for s in range(6):
                acc += inertia[r, s] * vel[i, s]
            momentum[r] = acc
        for c in range(count):
            d = chain[c]
            # I J_dot + (v x* (I J) - I (v x J) + J x* (I v)) / 2
            turned[:] = 0.0
            _add_cross_motion(vel[i], cols[d], turned)
            crossed[:] = 0.0
            _add_cross_force(cols[d], momentum, crossed)
            for r in range(6):
                acc = 0.0
                acc2 = 0.0
                for s in range(6):
                    acc += inertia[r, s] * (dcols[d, s] - 0.5 * turned[s])
                    acc2 += inertia[r, s] * cols[d, s]
                term[c, r] = acc + 0.5 * crossed[r]
                ij[r] = 0.5 * acc2
            _add_cross_force(vel[i], ij, term[c])
        for r in range(count):
            for c in range(count):
                acc = 0.0
                for s in range(6):
                    acc += cols[chain[r], s] * term[c, s]
                out[chain[r], chain[c]] += acc
    return _status_of_result(out)


@jit(fastmath=_FAST, inline="always")
def _add_cross_motion(v, m, out):
    """Add v x m (spatial motion cross product) to out (6,)."""
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    a0, a1, a2, b0, b1, b2 = m[0], m[1], m[2], m[3], m[4], m[5]
    out[0] += w1 * a2 - w2 * a1
    out[1] += w2 * a0 - w0 * a2
    out[2] += w0 * a1 - w1 * a0
    out[3] += w1 * b2 - w2 * b1 + u1 * a2 - u2 * a1
    out[4] += w2 * b0 - w0 * b2 + u2 * a0 - u0 * a2
    out[5] += w0 * b1 - w1 * b0 + u0 * a1 - u1 * a0


@jit(fastmath=_FAST, inline="always")
def _motion_to_world(world, i, m, out):
    """Write body i's spatial motion m (6,) in world coordinates into out (6,)."""
    # angular R w ; linear R v + p x (R w)
    for a in range(3):
        out[a] = world[i, 3 * a] * m[0] + world[i, 3 * a + 1] * m[1] + world[i, 3 * a + 2] * m[2]
        out[3 + a] = (
            world[i, 3 * a] * m[3] + world[i, 3 * a + 1] * m[4] + world[i, 3 * a + 2] * m[5]
        )
    p0, p1, p2 = world[i, 9], world[i, 10], world[i, 11]
    out[3] += p1 * out[2] - p2 * out[1]
    out[4] += p2 * out[0] - p0 * out[2]
    out[5] += p0 * out[1] - p1 * out[0]


@jit(fastmath=_FAST, inline="always")
def _inertia_to_world(world, i, comp):
    """Move the inertia comp[0] (m, h, I_o) from body i's coordinates to world coordinates."""
    tmp = np.empty((2, WORK_COLUMNS))
    for k in range(12):
        tmp[0, k] = world[i, k]
    both = np.zeros((2, 13))
    both[0, :] = comp[0, :]
    _add_inertia_to_parent(tmp, 0, both, 1, np.empty(12))
    comp[0, :] = both[1, :]


@jit(fastmath=_FAST, inline="always")
def _composite_matrix(comp, i, out):
    """Write the (6, 6) spatial inertia of the parameters comp[i] (m, h, I_o) into out."""
    mass = comp[i, 0]
    h0, h1, h2 = comp[i, 1], comp[i, 2], comp[i, 3]
    hx = ((0.0, -h2, h1), (h2, 0.0, -h0), (-h1, h0, 0.0))
    for a in range(3):
        for b in range(3):
            out[a, b] = comp[i, 4 + 3 * a + b]
            out[3 + a, 3 + b] = mass if a == b else 0.0
            out[a, 3 + b] = hx[a][b]
            out[3 + a, b] = hx[b][a]


@jit(fastmath=_FAST, inline="always")
def _mass_and_center(reals, world):
    """The robot's mass and its world centre of mass (3 values), ``sum_i (m_i p_i + R_i h_i) / m``
    over the body placements world (nbody, 12), h_i the first mass moment in body coordinates."""
    mass, c0, c1, c2 = 0.0, 0.0, 0.0, 0.0
    for i in range(world.shape[0]):
        m, h0, h1, h2 = reals[i, 15], reals[i, 16], reals[i, 17], reals[i, 18]
        mass += m
        c0 += m * world[i, 9] + world[i, 0] * h0 + world[i, 1] * h1 + world[i, 2] * h2
        c1 += m * world[i, 10] + world[i, 3] * h0 + world[i, 4] * h1 + world[i, 5] * h2
        c2 += m * world[i, 11] + world[i, 6] * h0 + world[i, 7] * h1 + world[i, 8] * h2
    return mass, (c0 / mass, c1 / mass, c2 / mass)


@jit(fastmath=_FAST, inline="always")
def _about_point(f, g):
    """The spatial force f (6 values) at the world origin taken about the point g (3 values):
    ``(n - g x f, f)``."""
    n0, n1, n2, f0, f1, f2 = f
    g0, g1, g2 = g
    return (
        n0 - (g1 * f2 - g2 * f1),
        n1 - (g2 * f0 - g0 * f2),
        n2 - (g0 * f1 - g1 * f0),
        f0,
        f1,
        f2,
    )


@jit(fastmath=_FAST)
def center_of_mass(ints, reals, q, out):
    """Write the world centre of mass (3,) at configuration q into out; return a status."""
    world = np.empty((ints.shape[0], 12))
    status = forward_kinematics(ints, reals, q, world)
    if status != 0:
        return status
    out[0], out[1], out[2] = _mass_and_center(reals, world)[1]
    return _status_of_result(out)


@jit(fastmath=_FAST)
def centroidal_matrix(ints, reals, q, out):
    """Write the centroidal momentum matrix A_G (6, nv) at configuration q into out, or into an
    out of 3 rows its linear rows over the mass, the Jacobian of the centre of mass; return a
    status.

    Column k is the momentum of the subtree that dof k moves, ``I^c_i S_ik`` with the composite
    inertia of its body i (as in `crba`), moved to world coordinates and taken about the centre
    of mass G (Orin, Goswami and Lee 2013)."""
    dofs = reals[ints.shape[0] :]
    for k in range(q.shape[0]):
        if not np.isfinite(q[k]):
            return 1
    nbody = ints.shape[0]
    # joint and world placements, centre of mass, composite inertias in body coordinates
    w = _new_work(ints, dofs)
    world = np.empty((nbody, 12))
    _world_placements(ints, reals, q, w, world, False)
    mass, center = _mass_and_center(reals, world)
    comp = _composite_inertias(ints, reals, w)
    rows = out.shape[0]
    scale = 1.0 if rows == 6 else 1.0 / mass
    for i in range(nbody):
        va = ints[i, 3]
        for k in range(_joint_nv(ints, i)):
            # the subtree's momentum I^c_i S_ik, to world coordinates, about the centre of mass
            momentum = _composite_product(comp, i, _column(ints, reals, i, k))
            column = _about_point(_force_up(_placement(world, i), momentum), center)
            for r in range(rows):
                out[r, va + k] = scale * column[6 - rows + r]
    return _status_of_result(out)


@jit(fastmath=_FAST)
def centroidal_rate(ints, reals, q, v, a, out):
    """Write the rate of the centroidal momentum (6,) at (q, v, a) into out; return a status.

    The rate is the sum of the bodies' inertial forces ``I_i a_i + v_i x* I_i v_i`` (the forward
    pass of `rnea` without gravity), moved to world coordinates and taken about the centre of
    mass."""
    status = _check(q, v, a, np.zeros((0, 6)))
    if status != 0:
        return status
    nbody = ints.shape[0]
    w = _new_work(ints, reals[nbody:])
    # the world at rest: no gravity in the accelerations
    for k in range(6):
        w[nbody, _A + k] = 0.0
    # each body's inertial force, in its coordinates
    _forward_pass(ints, reals, q, v, a, w)
    world = np.empty((nbody, 12))
    _world_placements(ints, reals, q, w, world, False)
    # their sum in world coordinates at the world origin, then about the centre of mass
    total = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for i in range(nbody):
        total = _plus(total, _force_up(_placement(world, i), _row(w, i, _F)))
    _put(out, _about_point(total, _mass_and_center(reals, world)[1]))
    return _status_of_result(out)


# each `*_batch` kernel takes last `parallel_from` (`compiler.parallel_from()`): below that many
# states it runs on the calling thread, from it on it shares them among numba's threads. On the
# calling thread it must start no thread at all: numba hands the threads a parallel kernel's
# array expressions too (``np.zeros``, ``status.max()``), not only its ``prange`` loops
# at most this many pieces of a batch for the threads to share: even shares on large machines
CHUNKS = 256


@jit()
def worst_status(status):
    """The largest of the statuses (B,), 0 for none: a loop of its own, which a parallel kernel
    does not hand to the threads as it would ``status.max()``."""
    worst = 0
    for s in status:
        worst = max(worst, s)
    return worst


@jit(inline="always")
def state_forces(fext, b):
    """The (nbody or 0, 6) external forces of state `b` of fext (B or 1, nbody or 0, 6), where
    one set stands for every state."""
    return fext[0] if fext.shape[0] == 1 else fext[b]


# the batched rnea runs LANES states at a time, each per-body step one loop over the lanes that
# the compiler turns into SIMD instructions (a multiple of 8 doubles, the widest vectors)
LANES = 16

# sine and cosine by polynomials (fdlibm's kernels) after Cody-Waite reduction by pi/2: no
# branches, so a loop over them vectorises; within about 2e-16 of the exact values below
# _SIN_COS_RANGE, beyond which the library functions take over
_SIN_COS_RANGE = 1e5
_TWO_OVER_PI = 6.36619772367581382433e-01
# pi / 2 in three parts of 33 bits each, so that k times each is exact for |k| < 2**20
_PIO2 = (1.57079632673412561417e00, 6.07710050630396597660e-11, 2.02226624871116645580e-21)
_SIN = (
    -1.66666666666666324348e-01,
    8.33333333332248946124e-03,
    -1.98412698298579493134e-04,
    2.75573137070700676789e-06,
    -2.50507602534068634195e-08,
    1.58969099521155010221e-10,
)
_COS = (
    4.16666666666666019037e-02,
    -1.38888888888741095749e-03,
    2.48015872894767294178e-05,
    -2.75573143513906633035e-07,
    2.08757232129817482790e-09,
    -1.13596475577881948265e-11,
)


@jit(fastmath=_FAST, inline="always")
def _sin_cos(x):
    """(sin x, cos x), branch free, for |x| below _SIN_COS_RANGE; NaN for non-finite x."""
    # x = k pi/2 + r with |r| <= pi/4, then the quadrant k mod 4 picks and signs the kernels
    k = np.rint(x * _TWO_OVER_PI)
    r = ((x - k * _PIO2[0]) - k * _PIO2[1]) - k * _PIO2[2]
    z = r * r
    s = r + r * z * (
        _SIN[0] + z * (_SIN[1] + z * (_SIN[2] + z * (_SIN[3] + z * (_SIN[4] + z * _SIN[5]))))
    )
    c = (
        1.0
        - 0.5 * z
        + z
        * z
        * (_COS[0] + z * (_COS[1] + z * (_COS[2] + z * (_COS[3] + z * (_COS[4] + z * _COS[5])))))
    )
    quadrant = np.int64(k) & 3 if np.isfinite(k) else 0
    sine = c if quadrant & 1 else s
    cosine = s if quadrant & 1 else c
    sine = -sine if quadrant & 2 else sine
    cosine = -cosine if (quadrant + 1) & 2 else cosine
    return sine, cosine


@jit(fastmath=_FAST, inline="always")
def _lane_angles(ints, q, cs):
    """Cosine and sine of each revolute and continuous joint's angle in the lane configurations
    q (nq, LANES), into cs (2, nbody, LANES)."""
    for i in range(ints.shape[0]):
        jtype, qa = ints[i, 1], ints[i, 2]
        if jtype == REVOLUTE:
            for lane in range(LANES):
                cs[1, i, lane], cs[0, i, lane] = _sin_cos(q[qa, lane])
            for lane in range(LANES):
                if abs(q[qa, lane]) > _SIN_COS_RANGE:
                    cs[0, i, lane], cs[1, i, lane] = np.cos(q[qa, lane]), np.sin(q[qa, lane])
        elif jtype == CONTINUOUS:
            for lane in range(LANES):
                cs[0, i, lane], cs[1, i, lane] = _unit_pair(q[qa, lane], q[qa + 1, lane])


@jit(fastmath=_FAST, inline="always")
def _lane_row(x, i, col, lane):
    """The 6 values x[i, col:col+6, lane] of a lane array."""
    return (
        x[i, col, lane], x[i, col + 1, lane], x[i, col + 2, lane],
        x[i, col + 3, lane], x[i, col + 4, lane], x[i, col + 5, lane],
    )  # fmt: skip


@jit(fastmath=_FAST, inline="always")
def _lane_store(x, i, col, lane, values):
    """Write `values` to x[i, col:col+len(values), lane]."""
    for k in range(len(values)):
        x[i, col + k, lane] = values[k]


@jit(fastmath=_FAST, inline="always")
def _lane_placement(w, i, lane):
    """`_placement` of body i in one lane of a lane work array."""
    return (
        w[i, 0, lane], w[i, 1, lane], w[i, 2, lane], w[i, 3, lane], w[i, 4, lane],
        w[i, 5, lane], w[i, 6, lane], w[i, 7, lane], w[i, 8, lane], w[i, 9, lane],
        w[i, 10, lane], w[i, 11, lane],
    )  # fmt: skip


@jit(fastmath=_FAST, inline="always")
def _lane_coordinates(q, qa, lane):
    """`_joint_coordinates` of one lane of q (nq, LANES)."""
    last = q.shape[0] - 1
    return (
        q[qa, lane], q[min(qa + 1, last), lane], q[min(qa + 2, last), lane],
        q[min(qa + 3, last), lane], q[min(qa + 4, last), lane], q[min(qa + 5, last), lane],
        q[min(qa + 6, last), lane],
    )  # fmt: skip


@jit(fastmath=_FAST, inline="always")
def _lane_joint_placement(ints, reals, i, q, cs, w):
    """`_joint_placement` in every lane: q (nq, LANES), cs of `_lane_angles`, w (nbody + 1,
    WORK_COLUMNS, LANES)."""
    jtype, qa, k = ints[i, 1], ints[i, 2], ints[i, 4]
    frame = _joint_frame(reals, i)
    for lane in range(LANES):
        x = _lane_coordinates(q, qa, lane)
        placement = _moved_placement(jtype, k, cs[0, i, lane], cs[1, i, lane], x, frame)
        _lane_store(w, i, 0, lane, placement)


@jit(fastmath=_FAST, inline="always")
def _lane_joint_motion(ints, reals, i, x, out):
    """`_joint_motion` in every lane: S x of x (nv, LANES) into out (1, 6, LANES)."""
    jtype, va = ints[i, 1], ints[i, 3]
    ux, uy, uz = reals[i, 0], reals[i, 1], reals[i, 2]
    if jtype == REVOLUTE or jtype == CONTINUOUS:
        for lane in range(LANES):
            d = x[va, lane]
            _lane_store(out, 0, 0, lane, (ux * d, uy * d, uz * d, 0.0, 0.0, 0.0))
    elif jtype == PRISMATIC:
        for lane in range(LANES):
            d = x[va, lane]
            _lane_store(out, 0, 0, lane, (0.0, 0.0, 0.0, ux * d, uy * d, uz * d))
    elif jtype == SPHERICAL:
        for lane in range(LANES):
            _lane_store(
                out, 0, 0, lane, (x[va, lane], x[va + 1, lane], x[va + 2, lane], 0.0, 0.0, 0.0)
            )
    else:
        # free flyer: [linear, angular] in v, [angular; linear] in spatial motion
        for k in range(3):
            for lane in range(LANES):
                out[0, k, lane] = x[va + 3 + k, lane]
                out[0, 3 + k, lane] = x[va + k, lane]


@jit(fastmath=_FAST, inline="always")
def _lane_joint_force(ints, reals, i, w, tau):
    """`_joint_force` in every lane: S^T f of body i's force into tau (nv, LANES)."""
    jtype, va = ints[i, 1], ints[i, 3]
    ux, uy, uz = reals[i, 0], reals[i, 1], reals[i, 2]
    if jtype == REVOLUTE or jtype == CONTINUOUS:
        for lane in range(LANES):
            tau[va, lane] = ux * w[i, _F, lane] + uy * w[i, _F + 1, lane] + uz * w[i, _F + 2, lane]
    elif jtype == PRISMATIC:
        for lane in range(LANES):
            tau[va, lane] = (
                ux * w[i, _F + 3, lane] + uy * w[i, _F + 4, lane] + uz * w[i, _F + 5, lane]
            )
    elif jtype == SPHERICAL:
        for k in range(3):
            for lane in range(LANES):
                tau[va + k, lane] = w[i, _F + k, lane]
    else:
        for k in range(3):
            for lane in range(LANES):
                tau[va + k, lane] = w[i, _F + 3 + k, lane]
                tau[va + 3 + k, lane] = w[i, _F + k, lane]


@jit(fastmath=_FAST, inline="always")
def _lane_forward_pass(ints, reals, q, v, a, w, angles, scratch):
    """`_forward_pass` of LANES states at once: q (nq, LANES), v, a (nv, LANES), w (nbody + 1,
    WORK_COLUMNS, LANES) with its world row set; angles (2, nbody, LANES) and scratch (4, 6,
    LANES) rewritten.

    Each loop over the lanes reads other arrays than it writes, so that it vectorises.
    """
    nbody = ints.shape[0]
    joint_v, joint_a, parent_v, parent_a = scratch[0:1], scratch[1:2], scratch[2:3], scratch[3:4]
    _lane_angles(ints, q, angles)
    # forward: placements, velocities, accelerations and inertial forces
    for i in range(nbody):
        _lane_joint_placement(ints, reals, i, q, angles, w)
        _lane_joint_motion(ints, reals, i, v, joint_v)
        _lane_joint_motion(ints, reals, i, a, joint_a)
        parent = ints[i, 0]
        p = parent if parent >= 0 else nbody
        for k in range(6):
            for lane in range(LANES):
                parent_v[0, k, lane] = w[p, _V + k, lane]
                parent_a[0, k, lane] = w[p, _A + k, lane]
        inertia = _body_inertia(reals, i)
        for lane in range(LANES):
            placement = _lane_placement(w, i, lane)
            jv = _lane_row(joint_v, 0, 0, lane)
            vel = _plus(_to_child(placement, _lane_row(parent_v, 0, 0, lane)), jv)
            acc = _plus(
                _to_child(placement, _lane_row(parent_a, 0, 0, lane)),
                _lane_row(joint_a, 0, 0, lane),
            )
            acc = _plus(acc, _cross_motion(vel, jv))
            _lane_store(w, i, _V, lane, vel)
            _lane_store(w, i, _A, lane, acc)
            _lane_store(w, i, _F, lane, _inertial_force(inertia, vel, acc))


@jit(fastmath=_FAST, inline="always")
def _lane_backward_pass(ints, reals, w, tau, scratch):
    """The backward pass of `rnea` in every lane: tau_i = S^T f_i, then f_i to the parent;
    tau (nv, LANES), w and scratch as in `_lane_forward_pass`."""
    force_up = scratch[0:1]
    for i in range(ints.shape[0] - 1, -1, -1):
        _lane_joint_force(ints, reals, i, w, tau)
        parent = ints[i, 0]
        if parent < 0:
            continue
        for lane in range(LANES):
            _lane_store(
                force_up,
                0,
                0,
                lane,
                _force_up(_lane_placement(w, i, lane), _lane_row(w, i, _F, lane)),
            )
        for k in range(6):
            for lane in range(LANES):
                w[parent, _F + k, lane] += force_up[0, k, lane]


# compiled on its own rather than inlined into rnea_batch: numba's inlining of this much code
# into a parallel kernel made the first batched call compile for 89-94 s on a 2-core machine,
# against 20-23 s so; the batches run about 10% slower for the Panda, 3% for TALOS (one thread)
@jit(fastmath=_FAST)
def _rnea_lanes(ints, reals, q, v, a, fext, tau, start, stop):
    """`rnea` of states start..stop, LANES at a time; the worst status.

    Each block of states is copied into lane arrays (a short block repeats its last state),
    run through the lane passes and copied back.
    """
    nbody, nq, nv = ints.shape[0], q.shape[1], v.shape[1]
    dofs = reals[nbody:]
    # the world row: at rest, accelerating against gravity
    w = np.empty((nbody + 1, WORK_COLUMNS, LANES))
    for k in range(WORK_COLUMNS):
        for lane in range(LANES):
            w[nbody, k, lane] = -dofs[nv, k - _A - 3] if _A + 3 <= k < _A + 6 else 0.0
    angles = np.empty((2, nbody, LANES))
    scratch = np.empty((4, 6, LANES))
    lane_q, lane_v = np.empty((nq, LANES)), np.empty((nv, LANES))
    lane_a, lane_tau = np.empty((nv, LANES)), np.empty((nv, LANES))
    status = 0
    for first in range(start, stop, LANES):
        count = min(LANES, stop - first)
        for lane in range(LANES):
            b = first + min(lane, count - 1)
            for k in range(nq):
                lane_q[k, lane] = q[b, k]
            for k in range(nv):
                lane_v[k, lane] = v[b, k]
                lane_a[k, lane] = a[b, k]
        _lane_forward_pass(ints, reals, lane_q, lane_v, lane_a, w, angles, scratch)
        # f_i = I a_i + v_i x* I v_i - f_ext_i
        if fext.shape[1] > 0:
            for lane in range(count):
                fb = state_forces(fext, first + lane)
                for i in range(nbody):
                    for k in range(6):
                        w[i, _F + k, lane] -= fb[i, k]
        _lane_backward_pass(ints, reals, w, lane_tau, scratch)
        for lane in range(count):
            b = first + lane
            for k in range(nv):
                tau[b, k] = lane_tau[k, lane]
            _add_joint_terms(dofs, v[b], a[b], tau[b])
            fb = state_forces(fext, b)
            status = max(status, _rnea_status(q[b], v[b], a[b], fb, tau[b]))
    return status


@jit(parallel=True)
def rnea_batch(ints, reals, q, v, a, fext, tau, parallel_from):
    """`rnea` over the leading axis: q (B, nq), v, a (B, nv), fext (B or 1, nbody or 0, 6).

    The batch runs on this thread below `parallel_from` states (`compiler.parallel_from`),
    else as at most CHUNKS contiguous pieces of whole lane blocks in parallel.
    """
    batch = q.shape[0]
    if batch < parallel_from:
        # an int64, not the literal 0, for which numba would compile a second version
        return _rnea_lanes(ints, reals, q, v, a, fext, tau, np.int64(0), batch)
    blocks = (batch + LANES - 1) // LANES
    chunks = min(blocks, CHUNKS)
    status = np.zeros(chunks, dtype=np.int64)
    for c in prange(chunks):
        start = c * blocks // chunks * LANES
        stop = min(batch, (c + 1) * blocks // chunks * LANES)
        status[c] = _rnea_lanes(ints, reals, q, v, a, fext, tau, start, stop)
    return status.max()


@jit(parallel=True)
def aba_batch(ints, reals, q, v, tau, fext, qdd, parallel_from):
    """`aba` over the leading axis: q (B, nq), v, tau (B, nv), fext (B or 1, nbody or 0, 6)."""
    status = np.empty(q.shape[0], dtype=np.int64)
    if q.shape[0] < parallel_from:
        for b in range(q.shape[0]):
            fb = state_forces(fext, b)
            status[b] = aba(ints, reals, q[b], v[b], tau[b], fb, qdd[b])
    else:
        for b in prange(q.shape[0]):
            fb = state_forces(fext, b)
            status[b] = aba(ints, reals, q[b], v[b], tau[b], fb, qdd[b])
    return worst_status(status)


@jit(parallel=True)
def crba_batch(ints, reals, q, mass_matrix, parallel_from):
    """`crba` over the leading axis: q (B, nq), mass_matrix (B, nv, nv)."""
    status = np.empty(q.shape[0], dtype=np.int64)
    if q.shape[0] < parallel_from:
        for b in range(q.shape[0]):
            status[b] = crba(ints, reals, q[b], mass_matrix[b])
    else:
        for b in prange(q.shape[0]):
            status[b] = crba(ints, reals, q[b], mass_matrix[b])
    return worst_status(status)


@jit(parallel=True)
def forward_kinematics_batch(ints, reals, q, world, parallel_from):
    """`forward_kinematics` over the leading axis: q (B, nq), world (B, nbody, 12)."""
    status = np.empty(q.shape[0], dtype=np.int64)
    if q.shape[0] < parallel_from:
        for b in range(q.shape[0]):
            status[b] = forward_kinematics(ints, reals, q[b], world[b])
    else:
        for b in prange(q.shape[0]):
            status[b] = forward_kinematics(ints, reals, q[b], world[b])
    return worst_status(status)


# the coordinates of a frame Jacobian (`frame_jacobian`), as Pinocchio's ReferenceFrame
JACOBIAN_LOCAL, JACOBIAN_WORLD, JACOBIAN_LOCAL_WORLD_ALIGNED = 0, 1, 2


@jit(fastmath=_FAST, inline="always")
def _frame_in_world(ints, reals, q, body, frame, out):
    """Write the world rotation (9, row-major) and origin (3) of a frame into out (12), the
    frame at `frame` (12: rotation row-major, then position) in `body` (-1: the world); return
    the (body + 1, 12) world placements of the bodies up to `body`."""
    dofs = reals[ints.shape[0] :]
    world = np.empty((body + 1, 12))
    _world_placements(ints[: body + 1], reals, q, _new_work(ints, dofs), world, False)
    if body < 0:
        out[:] = frame
        return world
    place = world[body]
    for r in range(3):
        origin = place[9 + r]
        for c in range(3):
            origin += place[3 * r + c] * frame[9 + c]
            turned = 0.0
            for m in range(3):
                turned += place[3 * r + m] * frame[3 * m + c]
            out[3 * r + c] = turned
        out[9 + r] = origin
    return world


@jit(fastmath=_FAST)
def frame_placement(ints, reals, q, body, frame, out):
    """Write the world rotation (9, row-major) and origin (3) of the frame at `frame` (12:
    rotation row-major, then position) in `body` (-1: the world) into out (12)."""
    for k in range(q.shape[0]):
        if not np.isfinite(q[k]):
            return 1
    _frame_in_world(ints, reals, q, body, frame, out)
    return _status_of_result(out)


@jit(fastmath=_FAST, inline="always")
def _turn(r, x0, x1, x2):
    """R x for R (9 values, row-major) and x (3 values)."""
    return (
        r[0] * x0 + r[1] * x1 + r[2] * x2,
        r[3] * x0 + r[4] * x1 + r[5] * x2,
        r[6] * x0 + r[7] * x1 + r[8] * x2,
    )


@jit(fastmath=_FAST, inline="always")
def _turn_back(r, x0, x1, x2):
    """R^T x for R (9 values, row-major) and x (3 values)."""
    return (
        r[0] * x0 + r[3] * x1 + r[6] * x2,
        r[1] * x0 + r[4] * x1 + r[7] * x2,
        r[2] * x0 + r[5] * x1 + r[8] * x2,
    )


@jit(fastmath=_FAST, inline="always")
def _crossed(x0, x1, x2, y0, y1, y2):
    """x x y of two 3-vectors given by their values."""
    return x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0


@jit(fastmath=_FAST)
def frame_jacobian(ints, reals, q, body, frame, ref, out):
    """Write the Jacobian of a frame's spatial velocity, rows [angular; linear], into out
    (6, nv): the frame at `frame` (12: rotation row-major, then position) in `body` (-1: the
    world), in the JACOBIAN_* coordinates `ref`."""
    for k in range(q.shape[0]):
        if not np.isfinite(q[k]):
            return 1
    placed = np.empty(12)
    world = _frame_in_world(ints, reals, q, body, frame, placed)
    out[:, :] = 0.0
    # each joint on the path from the body to its root moves the frame
    i = body
    while i >= 0:
        joint = world[i]
        for k in range(_joint_nv(ints, i)):
            s = _column(ints, reals, i, k)
            w0, w1, w2 = _turn(joint, s[0], s[1], s[2])
            u0, u1, u2 = _turn(joint, s[3], s[4], s[5])
            # the motion at the world origin, u + o x w, then at the frame's origin, + w x p
            c0, c1, c2 = _crossed(joint[9], joint[10], joint[11], w0, w1, w2)
            u0, u1, u2 = u0 + c0, u1 + c1, u2 + c2
            if ref != JACOBIAN_WORLD:
                c0, c1, c2 = _crossed(w0, w1, w2, placed[9], placed[10], placed[11])
                u0, u1, u2 = u0 + c0, u1 + c1, u2 + c2
            if ref == JACOBIAN_LOCAL:
                # into the frame's axes: F^T w, F^T u
                w0, w1, w2 = _turn_back(placed, w0, w1, w2)
                u0, u1, u2 = _turn_back(placed, u0, u1, u2)
            col = ints[i, 3] + k
            out[0, col], out[1, col], out[2, col] = w0, w1, w2
            out[3, col], out[4, col], out[5, col] = u0, u1, u2
        i = ints[i, 0]
    return _status_of_result(out)


@jit(fastmath=_FAST)
def frame_motion(ints, reals, q, v, a, body, frame, ref, out):
    """Write a frame's spatial velocity and classical acceleration (of its origin: no gravity),
    [angular; linear] each, into out (12), in the JACOBIAN_* coordinates `ref`, for
    JACOBIAN_WORLD of the point of its body at the world origin; the frame at `frame` (12:
    rotation row-major, then position) in `body` (-1: the world, at rest)."""
    status = _check(q, v, a, np.zeros((0, 6)))
    if status != 0:
        return status
    out[:] = 0.0
    if body < 0:
        return 0
    placed = np.empty(12)
    world = _frame_in_world(ints, reals, q, body, frame, placed)
    # the bodies' velocities and accelerations in their own coordinates, the world at rest
    dofs = reals[ints.shape[0] :]
    w = _new_work(ints, dofs)
    for k in range(3):
        w[ints.shape[0], _A + 3 + k] = 0.0
    _forward_pass(ints[: body + 1], reals, q, v, a, w)
    om0, om1, om2, u0, u1, u2 = _row(w, body, _V)
    al0, al1, al2, b0, b1, b2 = _row(w, body, _A)
    # at the frame's origin p: velocity u + om x p, classical acceleration
    # b + al x p + om x (velocity)
    p0, p1, p2 = frame[9], frame[10], frame[11]
    c0, c1, c2 = _crossed(om0, om1, om2, p0, p1, p2)
    s0, s1, s2 = u0 + c0, u1 + c1, u2 + c2
    d0, d1, d2 = _crossed(al0, al1, al2, p0, p1, p2)
    e0, e1, e2 = _crossed(om0, om1, om2, s0, s1, s2)
    g0, g1, g2 = b0 + d0 + e0, b1 + d1 + e1, b2 + d2 + e2
    if ref == JACOBIAN_LOCAL:
        vectors = (
            _turn_back(frame, om0, om1, om2),
            _turn_back(frame, s0, s1, s2),
            _turn_back(frame, al0, al1, al2),
            _turn_back(frame, g0, g1, g2),
        )
    else:
        rotation = world[body]
        vectors = (
            _turn(rotation, om0, om1, om2),
            _turn(rotation, s0, s1, s2),
            _turn(rotation, al0, al1, al2),
            _turn(rotation, g0, g1, g2),
        )
    for m in range(4):
        for k in range(3):
            out[3 * m + k] = vectors[m][k]
    if ref == JACOBIAN_WORLD:
        # from the frame's origin x to the world's: velocity + x x om, acceleration
        # + x x al + om x (x x om), the change of the velocity term as the point moves
        x0, x1, x2 = placed[9], placed[10], placed[11]
        h0, h1, h2 = _crossed(x0, x1, x2, out[0], out[1], out[2])
        k0, k1, k2 = _crossed(x0, x1, x2, out[6], out[7], out[8])
        n0, n1, n2 = _crossed(out[0], out[1], out[2], h0, h1, h2)
        out[3], out[4], out[5] = out[3] + h0, out[4] + h1, out[5] + h2
        out[9], out[10], out[11] = out[9] + k0 + n0, out[10] + k1 + n1, out[11] + k2 + n2
    return _status_of_result(out)


@jit(parallel=True)
def frame_motion_batch(ints, reals, q, v, a, body, frame, ref, out, parallel_from):
    """`frame_motion` over the leading axis: q (B, nq), v, a (B, nv), out (B, 12)."""
    status = np.empty(q.shape[0], dtype=np.int64)
    if q.shape[0] < parallel_from:
        for b in range(q.shape[0]):
            status[b] = frame_motion(ints, reals, q[b], v[b], a[b], body, frame, ref, out[b])
    else:
        for b in prange(q.shape[0]):
            status[b] = frame_motion(ints, reals, q[b], v[b], a[b], body, frame, ref, out[b])
    return worst_status(status)


@jit(parallel=True)
def frame_placement_batch(ints, reals, q, body, frame, out, parallel_from):
    """`frame_placement` over the leading axis: q (B, nq), out (B, 12)."""
    status = np.empty(q.shape[0], dtype=np.int64)
    if q.shape[0] < parallel_from:
        for b in range(q.shape[0]):
            status[b] = frame_placement(ints, reals, q[b], body, frame, out[b])
    else:
        for b in prange(q.shape[0]):
            status[b] = frame_placement(ints, reals, q[b], body, frame, out[b])
    return worst_status(status)


@jit(parallel=True)
def frame_jacobian_batch(ints, reals, q, body, frame, ref, out, parallel_from):
    """`frame_jacobian` over the leading axis: q (B, nq), out (B, 6, nv)."""
    status = np.empty(q.shape[0], dtype=np.int64)
    if q.shape[0] < parallel_from:
        for b in range(q.shape[0]):
            status[b] = frame_jacobian(ints, reals, q[b], body, frame, ref, out[b])
    else:
        for b in prange(q.shape[0]):
            status[b] = frame_jacobian(ints, reals, q[b], body, frame, ref, out[b])
    return worst_status(status)


@jit(parallel=True)
def regressor_batch(ints, reals, q, v, a, out, parallel_from):
    """`regressor` over the leading axis: q (B, nq), v, a (B, nv), out (B, nv, np)."""
    status = np.empty(q.shape[0], dtype=np.int64)
    if q.shape[0] < parallel_from:
        for b in range(q.shape[0]):
            status[b] = regressor(ints, reals, q[b], v[b], a[b], out[b])
    else:
        for b in prange(q.shape[0]):
            status[b] = regressor(ints, reals, q[b], v[b], a[b], out[b])
    return worst_status(status)


@jit(parallel=True)
def coriolis_batch(ints, reals, q, v, out, parallel_from):
    """`coriolis` over the leading axis: q (B, nq), v (B, nv), out (B, nv, nv)."""
    status = np.empty(q.shape[0], dtype=np.int64)
    if q.shape[0] < parallel_from:
        for b in range(q.shape[0]):
            status[b] = coriolis(ints, reals, q[b], v[b], out[b])
    else:
        for b in prange(q.shape[0]):
            status[b] = coriolis(ints, reals, q[b], v[b], out[b])
    return worst_status(status)


@jit(parallel=True)
def center_of_mass_batch(ints, reals, q, out, parallel_from):
    """`center_of_mass` over the leading axis: q (B, nq), out (B, 3)."""
    status = np.empty(q.shape[0], dtype=np.int64)
    if q.shape[0] < parallel_from:
        for b in range(q.shape[0]):
            status[b] = center_of_mass(ints, reals, q[b], out[b])
    else:
        for b in prange(q.shape[0]):
            status[b] = center_of_mass(ints, reals, q[b], out[b])
    return worst_status(status)


@jit(parallel=True)
def centroidal_matrix_batch(ints, reals, q, out, parallel_from):
    """`centroidal_matrix` over the leading axis: q (B, nq), out (B, 6 or 3, nv)."""
    status = np.empty(q.shape[0], dtype=np.int64)
    if q.shape[0] < parallel_from:
        for b in range(q.shape[0]):
            status[b] = centroidal_matrix(ints, reals, q[b], out[b])
    else:
        for b in prange(q.shape[0]):
            status[b] = centroidal_matrix(ints, reals, q[b], out[b])
    return worst_status(status)


@jit(parallel=True)
def centroidal_rate_batch(ints, reals, q, v, a, out, parallel_from):
    """`centroidal_rate` over the leading axis: q (B, nq), v, a (B, nv), out (B, 6)."""
    status = np.empty(q.shape[0], dtype=np.int64)
    if q.shape[0] < parallel_from:
        for b in range(q.shape[0]):
            status[b] = centroidal_rate(ints, reals, q[b], v[b], a[b], out[b])
    else:
        for b in prange(q.shape[0]):
            status[b] = centroidal_rate(ints, reals, q[b], v[b], a[b], out[b])
    return worst_status(status)


# signatures of the single-call kernels: packed model, then C-contiguous float64 vectors
_INTS = "int64[:, ::1]"
_REALS = "float64[:, ::1]"
_VEC = "float64[::1]"
_MAT = "float64[:, ::1]"


def single_call(signature: str) -> Callable[[Callable[..., Any]], Any]:
    """`jit` for a kernel of one call `signature`, compiled (or read from numba's cache) at
    its first call rather than at import, where the first import after installation would
    compile every such kernel (minutes on two cores) whether it is used or not.

    It takes the arrays of `signature`, or read-only ones in their place (the frozen arrays of
    a rollout, say: a version for them compiles at their first call); arguments of other
    types raise TypeError, as those of an eagerly compiled kernel do, and its Python callers
    then take their general path."""
    declared, _ = sigutils.normalize_signature(signature)

    def decorate(function: Callable[..., Any]) -> Any:
        kernel = jit()(function)

        def compile_for_args(*args: Any, **kwargs: Any) -> Any:
            given = tuple(kernel.typeof_pyval(arg) for arg in args)
            fits = len(given) == len(declared) and all(map(_fits, given, declared))
            if kwargs or not fits:
                raise TypeError(f"{function.__name__} takes {signature}, got {given}")
            try:
                with compile_lock(lock_path(kernel)):
                    return kernel.compile(given)
            except errors.TypingError as exc:  # a read-only array that it writes to
                raise TypeError(f"{function.__name__}: {exc}") from None

        # numba's dispatcher calls this when no compiled version fits the arguments, and then
        # calls what it returns (the compiled version) with them
        kernel._compile_for_args = compile_for_args
        return kernel

    return decorate


def _fits(given: Any, declared: Any) -> bool:
    """Whether a numba type `given` is `declared`, or its read-only form."""
    if given == declared:
        return True
    return isinstance(declared, types.Array) and given == declared.copy(readonly=True)


@jit(inline="always")
def _sizes_ok(dofs, q, lengths):
    """Whether q has nq entries and each of `lengths` (a tuple of ints: the vectors' lengths,
    read-only arrays among them making a tuple of the arrays heterogeneous) is nv."""
    nv = dofs.shape[0] - 1
    if q.shape[0] != int(dofs[nv, 3]):
        return False
    for length in lengths:
        if length != nv:
            return False
    return True


@single_call(f"int64({_INTS}, {_REALS}, {_VEC}, {_VEC}, {_VEC}, {_VEC})")
def rnea_vector(ints, reals, q, v, a, tau):
    """`rnea` of one state without external forces; -1 when a size is wrong."""
    dofs = reals[ints.shape[0] :]
    if not _sizes_ok(dofs, q, (v.shape[0], a.shape[0], tau.shape[0])):
        return -1
    return rnea(ints, reals, q, v, a, np.zeros((0, 6)), tau)


@single_call(f"int64({_INTS}, {_REALS}, {_VEC}, {_MAT})")
def forward_kinematics_vector(ints, reals, q, world):
    """`forward_kinematics` of one configuration into world (nbody, 12); -1 when a size is
    wrong."""
    dofs = reals[ints.shape[0] :]
    if q.shape[0] != int(dofs[dofs.shape[0] - 1, 3]) or world.shape != (ints.shape[0], 12):
        return -1
    return forward_kinematics(ints, reals, q, world)


@single_call(f"int64({_INTS}, {_REALS}, {_VEC}, int64, {_VEC}, {_VEC})")
def frame_placement_vector(ints, reals, q, body, frame, out):
    """`frame_placement` of one configuration; -1 when a size is wrong."""
    dofs = reals[ints.shape[0] :]
    if q.shape[0] != int(dofs[dofs.shape[0] - 1, 3]) or out.shape[0] != 12:
        return -1
    return frame_placement(ints, reals, q, body, frame, out)


@single_call(f"int64({_INTS}, {_REALS}, {_VEC}, int64, {_VEC}, int64, {_MAT})")
def frame_jacobian_vector(ints, reals, q, body, frame, ref, out):
    """`frame_jacobian` of one configuration; -1 when a size is wrong."""
    dofs = reals[ints.shape[0] :]
    nv = dofs.shape[0] - 1
    if q.shape[0] != int(dofs[nv, 3]) or out.shape != (6, nv):
        return -1
    return frame_jacobian(ints, reals, q, body, frame, ref, out)


@single_call(f"int64({_INTS}, {_REALS}, {_VEC}, {_VEC}, {_VEC}, int64, {_VEC}, int64, {_VEC})")
def frame_motion_vector(ints, reals, q, v, a, body, frame, ref, out):
    """`frame_motion` of one state; -1 when a size is wrong."""
    dofs = reals[ints.shape[0] :]
    if not _sizes_ok(dofs, q, (v.shape[0], a.shape[0])) or out.shape[0] != 12:
        return -1
    return frame_motion(ints, reals, q, v, a, body, frame, ref, out)


@single_call(f"int64({_INTS}, {_REALS}, {_VEC}, {_VEC}, {_VEC}, {_VEC})")
def aba_vector(ints, reals, q, v, tau, qdd):
    """`aba` of one state without external forces; -1 when a size is wrong."""
    dofs = reals[ints.shape[0] :]
    if not _sizes_ok(dofs, q, (v.shape[0], tau.shape[0], qdd.shape[0])):
        return -1
    return aba(ints, reals, q, v, tau, np.zeros((0, 6)), qdd)


@single_call(f"int64({_INTS}, {_REALS}, {_VEC}, {_MAT})")
def crba_vector(ints, reals, q, mass_matrix):
    """`crba` of one configuration; -1 when a size is wrong."""
    dofs = reals[ints.shape[0] :]
    nv = dofs.shape[0] - 1
    if q.shape[0] != int(dofs[nv, 3]) or mass_matrix.shape != (nv, nv):
        return -1
    return crba(ints, reals, q, mass_matrix)


@jit(inline="always")
def _has_mass(ints, reals):
    """Whether the moving bodies have mass, so that there is a centre of mass."""
    mass = 0.0
    for i in range(ints.shape[0]):
        mass += reals[i, 15]
    return mass > 0.0


@single_call(f"int64({_INTS}, {_REALS}, {_VEC}, {_VEC})")
def center_of_mass_vector(ints, reals, q, out):
    """`center_of_mass` of one configuration; -1 when a size is wrong or the robot has no
    mass."""
    dofs = reals[ints.shape[0] :]
    if q.shape[0] != int(dofs[dofs.shape[0] - 1, 3]) or out.shape[0] != 3:
        return -1
    if not _has_mass(ints, reals):
        return -1
    return center_of_mass(ints, reals, q, out)


@single_call(f"int64({_INTS}, {_REALS}, {_VEC}, {_MAT})")
def centroidal_matrix_vector(ints, reals, q, out):
    """`centroidal_matrix` of one configuration; -1 when a size is wrong or the robot has no
    mass."""
    dofs = reals[ints.shape[0] :]
    nv = dofs.shape[0] - 1
    if q.shape[0] != int(dofs[nv, 3]) or out.shape[1] != nv:
        return -1
    if (out.shape[0] != 6 and out.shape[0] != 3) or not _has_mass(ints, reals):
        return -1
    return centroidal_matrix(ints, reals, q, out)


@single_call(f"int64({_INTS}, {_REALS}, {_VEC}, {_VEC}, {_VEC}, {_VEC})")
def centroidal_rate_vector(ints, reals, q, v, a, out):
    """`centroidal_rate` of one state; -1 when a size is wrong or the robot has no mass."""
    dofs = reals[ints.shape[0] :]
    if (
        not _sizes_ok(dofs, q, (v.shape[0], a.shape[0]))
        or out.shape[0] != 6
        or not _has_mass(ints, reals)
    ):
        return -1
    return centroidal_rate(ints, reals, q, v, a, out)
