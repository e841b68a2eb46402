"""Compiled CPU kernels (numba) of the analytic derivatives of inverse dynamics.

``rnea_derivatives`` writes the partial derivatives of ``tau = rnea(q, v, a, f_ext)`` with
respect to ``q`` (in the tangent space: the joint's own motion, as ``v`` moves it, so a free
flyer or a ball joint is perturbed in its body frame as `invdyn.configuration.integrate` does),
``v`` and ``a`` (the mass matrix), by the algorithm of Carpentier and Mansard (2018, "Analytical
Derivatives of Rigid Body Dynamics Algorithms", RSS): one forward pass that carries, in world
coordinates, each dof's motion column ``J``, its time derivative ``v_i x J`` and the
derivatives of body velocities and accelerations with respect to the dof (``dV/dq``,
``dA/dq``, ``dA/dv``); one backward pass that accumulates composite inertias ``Y``, their time
derivatives ``dY`` and the subtree forces, and projects them on the joints. Conventions,
packing and statuses are those of `invdyn.kernels.cpu`.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from invdyn.kernels.compiler import jit
from invdyn.kernels.cpu import (
    _A,
    _F,
    _FAST,
    _INTS,
    _REALS,
    _V,
    _VEC,
    SINGULAR,
    WORK_COLUMNS,
    _add_cross_force,
    _add_inertia_to_parent,
    _check,
    _column,
    _composite_matrix,
    _cross_motion,
    _forward_pass,
    _joint_nv,
    _motion_to_world,
    _new_work,
    _put,
    _sizes_ok,
    _status_of_result,
    _vec,
    _world_placements,
    aba,
    single_call,
    state_forces,
    worst_status,
)


@jit(fastmath=_FAST, inline="always")
def _add_skew(out, row, col, x0, x1, x2, scale):
    """Add scale [x]_x to the 3x3 block of out at (row, col)."""
    out[row, col + 1] -= scale * x2
    out[row, col + 2] += scale * x1
    out[row + 1, col] += scale * x2
    out[row + 1, col + 2] -= scale * x0
    out[row + 2, col] -= scale * x1
    out[row + 2, col + 1] += scale * x0


@jit(fastmath=_FAST, inline="always")
def _cross(m, n, out):
    """Write m x n (spatial motion cross product of two motions) into out (6,)."""
    _put(out, _cross_motion(_vec(m), _vec(n)))


@jit(fastmath=_FAST, inline="always")
def _matvec(m, x, out, transpose):
    """out (6,) = m x, or m^T x when `transpose`, for m (6, 6)."""
    for r in range(6):
        acc = 0.0
        for c in range(6):
            acc += (m[c, r] if transpose else m[r, c]) * x[c]
        out[r] = acc


@jit(fastmath=_FAST, inline="always")
def _add_matvec(m, x, out):
    """out (6,) += m x for m (6, 6)."""
    for r in range(6):
        acc = 0.0
        for c in range(6):
            acc += m[r, c] * x[c]
        out[r] += acc


@jit(fastmath=_FAST, inline="always")
def _force_to_world(world, i, f, out):
    """Write body i's spatial force f (6,) in world coordinates into out (6,):
    (R n + p x R g, R g)."""
    for r in range(3):
        out[r] = world[i, 3 * r] * f[0] + world[i, 3 * r + 1] * f[1] + world[i, 3 * r + 2] * f[2]
        out[3 + r] = (
            world[i, 3 * r] * f[3] + world[i, 3 * r + 1] * f[4] + world[i, 3 * r + 2] * f[5]
        )
    p0, p1, p2 = world[i, 9], world[i, 10], world[i, 11]
    out[0] += p1 * out[5] - p2 * out[4]
    out[1] += p2 * out[3] - p0 * out[5]
    out[2] += p0 * out[4] - p1 * out[3]


@jit(fastmath=_FAST, inline="always")
def _dot(x, y):
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3] + x[4] * y[4] + x[5] * y[5]


@jit(fastmath=_FAST, inline="always")
def _inertia_rate(inertia, vel, out):
    """Write into out the (6, 6) matrix dY of a body of world inertia Y moving at vel: the time
    derivative of Y, v x* Y - Y v x, plus the matrix of m -> m x* (Y v), so that
    d(Y a + v x* Y v) along a motion m of the body is dY m plus the terms of a.

    With Y = [[I, [c]x], [[c]x^T, m 1]] (c the first mass moment), v = (w, u) and
    Y v = (n, g), g = m u - c x w, the blocks are: [w]x I - I [w]x - (c u^T + u c^T)
    + 2 (u . c) 1 - [n]x on the top left, -2 [g]x on the bottom left, zero on the right.
    """
    w0, w1, w2, u0, u1, u2 = vel[0], vel[1], vel[2], vel[3], vel[4], vel[5]
    mass = inertia[3, 3]
    c0, c1, c2 = inertia[2, 4], inertia[0, 5], inertia[1, 3]
    # n = I w + c x u, g = m u - c x w
    n0 = inertia[0, 0] * w0 + inertia[0, 1] * w1 + inertia[0, 2] * w2 + c1 * u2 - c2 * u1
    n1 = inertia[1, 0] * w0 + inertia[1, 1] * w1 + inertia[1, 2] * w2 + c2 * u0 - c0 * u2
    n2 = inertia[2, 0] * w0 + inertia[2, 1] * w1 + inertia[2, 2] * w2 + c0 * u1 - c1 * u0
    g0 = mass * u0 - (c1 * w2 - c2 * w1)
    g1 = mass * u1 - (c2 * w0 - c0 * w2)
    g2 = mass * u2 - (c0 * w1 - c1 * w0)
    out[:, :] = 0.0
    skew_w = ((0.0, -w2, w1), (w2, 0.0, -w0), (-w1, w0, 0.0))
    u = (u0, u1, u2)
    c = (c0, c1, c2)
    dot = 2.0 * (u0 * c0 + u1 * c1 + u2 * c2)
    for r in range(3):
        for k in range(3):
            value = -(c[r] * u[k] + u[r] * c[k])
            for j in range(3):
                value += skew_w[r][j] * inertia[j, k] - inertia[r, j] * skew_w[j][k]
            out[r, k] = value + (dot if r == k else 0.0)
    _add_skew(out, 0, 0, n0, n1, n2, -1.0)
    _add_skew(out, 3, 0, g0, g1, g2, -2.0)


@jit(fastmath=_FAST)
def rnea_derivatives(ints, reals, q, v, a, fext, dq, dv, da):
    """Write d tau / dq, d tau / dv and d tau / da (nv, nv each) of rnea at (q, v, a, fext);
    return a status."""
    status = _check(q, v, a, fext)
    if status != 0:
        return status
    nbody = ints.shape[0]
    dofs = reals[nbody:]
    nv = dofs.shape[0] - 1
    w = _new_work(ints, dofs)
    _forward_pass(ints, reals, q, v, a, w)
    world = np.empty((nbody, 12))
    _world_placements(ints, reals, q, w, world, False)
    # per body, world coordinates: velocity, acceleration (gravity in), force, inertia and its rate
    motions = np.empty((3, nbody, 6))
    vel, acc, force = motions[0], motions[1], motions[2]
    matrices = np.empty((2, nbody, 6, 6))
    inertia, rate = matrices[0], matrices[1]
    # per dof, world coordinates: its column J and the derivatives of its body's motion; then,
    # for the backward pass, Y J, dY^T J and the force derivatives dF/dq, dF/dv of its subtree
    columns = np.empty((8, nv, 6))
    jac, dvdq, dadq, dadv = columns[0], columns[1], columns[2], columns[3]
    dfda, dytj, dfdq, dfdv = columns[4], columns[5], columns[6], columns[7]
    dvdq[:, :] = 0.0
    # scratch: the inertia's move to world coordinates, motions
    placement = np.zeros((2, WORK_COLUMNS))
    comp = np.empty((2, 13))
    small = np.zeros((3, 12))
    local, world_acc, moved = small[0, :6], small[1, :6], small[2]
    for k in range(3):
        world_acc[3 + k] = w[nbody, _A + 3 + k]
    for i in range(nbody):
        # forward: the body's state in world coordinates
        _motion_to_world(world, i, w[i, _V : _V + 6], vel[i])
        _motion_to_world(world, i, w[i, _A : _A + 6], acc[i])
        for k in range(6):
            local[k] = w[i, _F + k] - (fext[i, k] if fext.shape[0] > 0 else 0.0)
        _force_to_world(world, i, local, force[i])
        for k in range(12):
            placement[0, k] = world[i, k]
        for k in range(13):
            comp[0, k] = reals[i, 15 + k]
            comp[1, k] = 0.0
        _add_inertia_to_parent(placement, 0, comp, 1, moved)
        _composite_matrix(comp, 1, inertia[i])
        _inertia_rate(inertia[i], vel[i], rate[i])
        # each dof's column and the derivatives of the body's motion along it
        parent = ints[i, 0]
        for k in range(_joint_nv(ints, i)):
            d = ints[i, 3] + k
            _put(local, _column(ints, reals, i, k))
            _motion_to_world(world, i, local, jac[d])
            # dA/dv = v_i x J (+ dV/dq), dV/dq = v_parent x J,
            # dA/dq = a_parent x J + v_parent x dV/dq
            _cross(vel[i], jac[d], dadv[d])
            if parent < 0:
                _cross(world_acc, jac[d], dadq[d])
                continue
            _cross(vel[parent], jac[d], dvdq[d])
            _cross(acc[parent], jac[d], dadq[d])
            _cross(vel[parent], dvdq[d], local)
            for r in range(6):
                dadq[d, r] += local[r]
                dadv[d, r] += dvdq[d, r]
    # which bodies each body's subtree holds (parents come first, in any order of branches),
    # and the body of each dof
    inside = np.zeros((nbody, nbody), dtype=np.bool_)
    owner = np.empty(nv, dtype=np.int64)
    for j in range(nbody):
        for k in range(_joint_nv(ints, j)):
            owner[ints[j, 3] + k] = j
        k = j
        while k >= 0:
            inside[k, j] = True
            k = ints[k, 0]
    dq[:, :] = 0.0
    dv[:, :] = 0.0
    da[:, :] = 0.0
    for i in range(nbody - 1, -1, -1):
        # backward: Y, dY and the force are those of the subtree of body i
        first, last = ints[i, 3], ints[i, 3] + _joint_nv(ints, i)
        for d in range(first, last):
            _matvec(inertia[i], jac[d], dfda[d], False)
            _matvec(rate[i], jac[d], dytj[d], True)
            _matvec(rate[i], dvdq[d], dfdq[d], False)
            _add_matvec(inertia[i], dadq[d], dfdq[d])
            _matvec(rate[i], jac[d], dfdv[d], False)
            _add_matvec(inertia[i], dadv[d], dfdv[d])
        # rows of the dofs below body i, columns of its own
        for r in range(last, nv):
            if not inside[i, owner[r]]:
                continue
            for d in range(first, last):
                dq[r, d] = _dot(dfda[r], dadq[d]) + _dot(dytj[r], dvdq[d])
                dv[r, d] = _dot(dfda[r], dadv[d]) + _dot(dytj[r], jac[d])
        # rows of its own dofs, columns of its subtree
        for c in range(first, nv):
            if not inside[i, owner[c]]:
                continue
            for r in range(first, last):
                da[r, c] = _dot(jac[r], dfda[c])
                da[c, r] = da[r, c]
                dq[r, c] = _dot(jac[r], dfdq[c])
                dv[r, c] = _dot(jac[r], dfdv[c])
        # the force of the subtree turns with the dof: J x* f, for the rows above
        for d in range(first, last):
            _add_cross_force(jac[d], force[i], dfdq[d])
        p = ints[i, 0]
        if p >= 0:
            for r in range(6):
                force[p, r] += force[i, r]
                for c in range(6):
                    inertia[p, r, c] += inertia[i, r, c]
                    rate[p, r, c] += rate[i, r, c]
    # joint terms: armature on the mass matrix, viscous friction on dtau/dv
    for k in range(nv):
        da[k, k] += dofs[k, 0]
        dv[k, k] += dofs[k, 1]
    status = _status_of_result(dq)
    if status == 0:
        status = _status_of_result(dv)
    return status


@jit(fastmath=_FAST)
def aba_derivatives(ints, reals, q, v, tau, fext, dq, dv, dtau):
    """Write d qdd / dq, d qdd / dv and d qdd / dtau = M^-1 (nv, nv each) of aba at
    (q, v, tau, fext); return a status.

    With qdd = aba(q, v, tau), rnea(q, v, qdd) = tau holds identically, so
    d qdd / dx = -M^-1 d rnea / dx at (q, v, qdd) for x = q, v, and d qdd / dtau = M^-1.
    """
    nv = reals.shape[0] - ints.shape[0] - 1
    qdd = np.empty(nv)
    status = aba(ints, reals, q, v, tau, fext, qdd)
    if status != 0:
        return status
    mass = np.empty((nv, nv))
    drnea_dq = np.empty((nv, nv))
    drnea_dv = np.empty((nv, nv))
    status = rnea_derivatives(ints, reals, q, v, qdd, fext, drnea_dq, drnea_dv, mass)
    if status != 0:
        return status
    # M^-1 by its Cholesky factor L (M = L L^T): dtau = L^-T L^-1
    for j in range(nv):
        diagonal = mass[j, j]
        for k in range(j):
            diagonal -= mass[j, k] * mass[j, k]
        if not diagonal > 0.0:
            return SINGULAR
        mass[j, j] = np.sqrt(diagonal)
        for r in range(j + 1, nv):
            value = mass[r, j]
            for k in range(j):
                value -= mass[r, k] * mass[j, k]
            mass[r, j] = value / mass[j, j]
    for c in range(nv):
        # column c of M^-1: solve L y = e_c, then L^T x = y
        for r in range(nv):
            value = 1.0 if r == c else 0.0
            for k in range(r):
                value -= mass[r, k] * dtau[k, c]
            dtau[r, c] = value / mass[r, r]
        for r in range(nv - 1, -1, -1):
            value = dtau[r, c]
            for k in range(r + 1, nv):
                value -= mass[k, r] * dtau[k, c]
            dtau[r, c] = value / mass[r, r]
    for r in range(nv):
        for c in range(nv):
            acc_q = 0.0
            acc_v = 0.0
            for k in range(nv):
                acc_q -= dtau[r, k] * drnea_dq[k, c]
                acc_v -= dtau[r, k] * drnea_dv[k, c]
            dq[r, c] = acc_q
            dv[r, c] = acc_v
    return _status_of_result(dq)


@jit(parallel=True)
def aba_derivatives_batch(ints, reals, q, v, tau, fext, dq, dv, dtau, parallel_from):
    """`aba_derivatives` over the leading axis, as `rnea_derivatives_batch`."""
    status = np.empty(q.shape[0], dtype=np.int64)
    if q.shape[0] < parallel_from:
        for b in range(q.shape[0]):
            fb = state_forces(fext, b)
            status[b] = aba_derivatives(ints, reals, q[b], v[b], tau[b], fb, dq[b], dv[b], dtau[b])
    else:
        for b in prange(q.shape[0]):
            fb = state_forces(fext, b)
            status[b] = aba_derivatives(ints, reals, q[b], v[b], tau[b], fb, dq[b], dv[b], dtau[b])
    return worst_status(status)


@jit(parallel=True)
def rnea_derivatives_batch(ints, reals, q, v, a, fext, dq, dv, da, parallel_from):
    """`rnea_derivatives` over the leading axis: q (B, nq), v, a (B, nv), fext (B or 1, nbody or
    0, 6), dq, dv, da (B, nv, nv)."""
    status = np.empty(q.shape[0], dtype=np.int64)
    if q.shape[0] < parallel_from:
        for b in range(q.shape[0]):
            fb = state_forces(fext, b)
            status[b] = rnea_derivatives(ints, reals, q[b], v[b], a[b], fb, dq[b], dv[b], da[b])
    else:
        for b in prange(q.shape[0]):
            fb = state_forces(fext, b)
            status[b] = rnea_derivatives(ints, reals, q[b], v[b], a[b], fb, dq[b], dv[b], da[b])
    return worst_status(status)


@single_call(f"int64({_INTS}, {_REALS}, {_VEC}, {_VEC}, {_VEC}, float64[:, :, ::1])")
def rnea_derivatives_vector(ints, reals, q, v, a, out):
    """`rnea_derivatives` of one state without external forces into out (3, nv, nv): d tau / dq,
    d tau / dv, M; -1 when a size is wrong."""
    dofs = reals[ints.shape[0] :]
    nv = dofs.shape[0] - 1
    if not _sizes_ok(dofs, q, (v.shape[0], a.shape[0])) or out.shape != (3, nv, nv):
        return -1
    return rnea_derivatives(ints, reals, q, v, a, np.zeros((0, 6)), out[0], out[1], out[2])
