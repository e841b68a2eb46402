"""Rigid-body dynamics: inverse dynamics, mass matrix, forward dynamics and their parts.

numpy in gives numpy out through the compiled CPU kernels of `invdyn.kernels.cpu`, which run
batches in parallel on all cores; a ``torch.Tensor`` in gives a tensor out, on the tensor's
device and in its floating dtype, through `invdyn.kernels.torch`, differentiable by autograd
with respect to every argument. Every function accepts any leading batch dimensions (broadcast
between arguments). Joint armature, viscous and Coulomb friction of the model are part of the
dynamics: ``tau = M(q) a + C(q, v) v + g(q) + damping v + friction sign(v) - J^T f_ext`` with the
armature on the diagonal of ``M``.

``params`` (..., 10 nbody + 3 nv), in the order of `invdyn.inertial_parameters`, replaces the
model's dynamic parameters for one call: with tensors, a batch of parameter sets, or one set to
fit by gradient descent; with numpy arrays, one set (see `invdyn.with_parameters`).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import (
    F64,
    NO_FORCES,
    any_tensor,
    as_float_array,
    batch_shape,
    flatten,
    not_a_model,
    packed,
    raise_for_status,
)
from invdyn.errors import InputError, ModelError
from invdyn.kernels import cpu
from invdyn.kinematics import forward_kinematics, world_columns
from invdyn.model import Model
from invdyn.regressor import with_parameters
from invdyn.spatial import skew

Array = NDArray[np.float64]

_STATE_NAMES = ("q", "v", "a", "f_ext")
_ABA_NAMES = ("q", "v", "tau", "f_ext")
# bound once: module attribute lookups are a visible share of a single call
_empty = np.empty
_ndarray = np.ndarray
_rnea_vector = cpu.rnea_vector
_crba_vector = cpu.crba_vector
_aba_vector = cpu.aba_vector
_rnea_derivatives_vector = cpu.rnea_derivatives_vector
_NO_FORCES_BATCH = NO_FORCES[None]


def rnea(
    model: Model,
    q: Array,
    v: Array,
    a: Array,
    *,
    f_ext: Array | None = None,
    params: Array | None = None,
) -> Array:
    """Joint forces that produce acceleration `a`, by the recursive Newton-Euler algorithm.

    tau = M(q) a + C(q, v) v + g(q) - sum_i J_i(q)^T f_ext_i  (Featherstone 2008, table 5.1).

    Args:
      model: the robot.
      q: (..., nq) joint positions.
      v: (..., nv) joint velocities.
      a: (..., nv) joint accelerations.
      f_ext: (..., nbody, 6) external spatial forces [torque; force] on each body, about the
        body origin in body coordinates.
      params: (..., 10 nbody + 3 nv) dynamic parameters in place of the model's.

    Returns:
      (..., nv) joint forces and torques.
    """
    try:
        ints, reals = model.kernel_data
        nv = model.nv
    except AttributeError:
        raise not_a_model(model) from None
    plain = f_ext is None and params is None and type(q) is _ndarray
    if plain and q.ndim == 1:
        # plain float64 vectors take the compiled path directly; anything else is checked
        # below (tensors never reach the kernels: torch.compile cannot trace them)
        try:
            tau = _empty(nv)
            status = _rnea_vector(ints, reals, q, v, a, tau)
        except (TypeError, AttributeError):
            status = -1
        if status == 0:
            return tau
        raise_for_status(max(status, 0), _STATE_NAMES)
    if plain and q.ndim == 2 and _plain_batch(q, model.nq, v, a, nv):
        # and plain matrices, which need no conversion
        q, v, a, forces, lead = q, v, a, _NO_FORCES_BATCH, q.shape[:1]
    elif params is not None or any_tensor(q, v, a, f_ext):
        return _dispatch(rnea, model, {"q": q, "v": v, "a": a, "f_ext": f_ext}, params)
    else:
        q, v, a, forces, lead = _states(model, q, v, a, f_ext)
    tau = np.empty((q.shape[0], nv))
    raise_for_status(cpu.rnea_batch(ints, reals, q, v, a, forces, tau), _STATE_NAMES)
    return tau.reshape((*lead, nv))


def mass_matrix(model: Model, q: Array, *, params: Array | None = None) -> Array:
    """Joint-space inertia matrix, by the composite rigid-body algorithm (Featherstone 2008, 6.2).

    Args:
      model: the robot.
      q: (..., nq) joint positions.
      params: (..., 10 nbody + 3 nv) dynamic parameters in place of the model's.

    Returns:
      (..., nv, nv) symmetric positive definite mass matrix, joint armature on the diagonal.
    """
    try:
        ints, reals = model.kernel_data
        nv = model.nv
    except AttributeError:
        raise not_a_model(model) from None
    out = _empty((nv, nv))
    try:
        fast = type(q) is _ndarray and q.ndim == 1 and params is None
        status = _crba_vector(ints, reals, q, out) if fast else -1
    except (TypeError, AttributeError):
        status = -1
    if status == 0:
        return out
    raise_for_status(max(status, 0), _STATE_NAMES)
    if params is not None or any_tensor(q):
        return _dispatch(mass_matrix, model, {"q": q}, params)
    q = as_float_array("q", q, model.nq)
    lead = q.shape[:-1]
    out = np.empty((int(np.prod(lead)), nv, nv))
    raise_for_status(
        cpu.crba_batch(ints, reals, q.reshape(out.shape[0], model.nq), out),
        _STATE_NAMES,
    )
    return out.reshape((*lead, nv, nv))


def aba(
    model: Model,
    q: Array,
    v: Array,
    tau: Array,
    *,
    f_ext: Array | None = None,
    params: Array | None = None,
) -> Array:
    """Joint accelerations under forces `tau`, by the articulated-body algorithm.

    a = M(q)^-1 (tau - C(q, v) v - g(q) + sum_i J_i(q)^T f_ext_i)  (Featherstone 2008, table 7.1).

    Args:
      model: the robot.
      q: (..., nq) joint positions.
      v: (..., nv) joint velocities.
      tau: (..., nv) joint forces and torques.
      f_ext: (..., nbody, 6) external spatial forces on each body, as in `rnea`.
      params: (..., 10 nbody + 3 nv) dynamic parameters in place of the model's.

    Returns:
      (..., nv) joint accelerations.
    """
    try:
        ints, reals = model.kernel_data
        nv = model.nv
    except AttributeError:
        raise not_a_model(model) from None
    if f_ext is None and params is None and type(q) is _ndarray:
        qdd = _empty(nv)
        try:
            status = _aba_vector(ints, reals, q, v, tau, qdd) if q.ndim == 1 else -1
        except (TypeError, AttributeError):
            status = -1
        if status == 0:
            return qdd
        _check_aba(model, max(status, 0))
    if params is not None or any_tensor(q, v, tau, f_ext):
        return _dispatch(aba, model, {"q": q, "v": v, "tau": tau, "f_ext": f_ext}, params)
    q, v, tau, forces, lead = _states(model, q, v, tau, f_ext, names=_ABA_NAMES)
    qdd = np.empty((q.shape[0], nv))
    _check_aba(model, cpu.aba_batch(ints, reals, q, v, tau, forces, qdd))
    return qdd.reshape((*lead, nv))


def gravity(model: Model, q: Array, *, params: Array | None = None) -> Array:
    """Generalised gravity forces g(q) = rnea(q, 0, 0).

    Args:
      model: the robot.
      q: (..., nq) joint positions.
      params: (..., 10 nbody + 3 nv) dynamic parameters in place of the model's.

    Returns:
      (..., nv) joint forces that hold the robot still against gravity.
    """
    packed(model)
    zeros = np.zeros(model.nv)
    return rnea(model, q, zeros, zeros, params=params)


def bias(model: Model, q: Array, v: Array, *, params: Array | None = None) -> Array:
    """Non-linear effects h(q, v) = C(q, v) v + g(q) + friction = rnea(q, v, 0).

    Args:
      model: the robot.
      q: (..., nq) joint positions.
      v: (..., nv) joint velocities.
      params: (..., 10 nbody + 3 nv) dynamic parameters in place of the model's.

    Returns:
      (..., nv) joint forces at zero acceleration.
    """
    packed(model)
    return rnea(model, q, v, np.zeros(model.nv), params=params)


def coriolis(model: Model, q: Array, v: Array, *, params: Array | None = None) -> Array:
    """Coriolis matrix C(q, v) of the Christoffel symbols of M: C v the velocity-product forces,
    C + C^T = M_dot (so M_dot - 2 C is skew-symmetric: passivity).

    Of the many C with the same C v, the one of the Christoffel symbols of the first kind,
    ``C_ij = sum_k (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) v_k / 2``, as Pinocchio's
    ``computeCoriolisMatrix``, by C = sum_i J_i^T (I_i J_dot_i + B(I_i, v_i) J_i) in world
    coordinates (Echeandia and Wensing 2021; `invdyn.kernels.cpu.coriolis`).

    Args:
      model: the robot.
      q: (..., nq) joint positions.
      v: (..., nv) joint velocities.
      params: (..., 10 nbody + 3 nv) dynamic parameters in place of the model's.

    Returns:
      (..., nv, nv) Coriolis matrix.
    """
    if params is not None or any_tensor(q, v):
        return _dispatch(coriolis, model, {"q": q, "v": v}, params)
    ints, reals = packed(model)
    q = as_float_array("q", q, model.nq)
    v = as_float_array("v", v, model.nv)
    lead = batch_shape({"q": (q, 1), "v": (v, 1)})
    qf, vf = flatten(q, lead, 1), flatten(v, lead, 1)
    out = np.empty((qf.shape[0], model.nv, model.nv))
    raise_for_status(cpu.coriolis_batch(ints, reals, qf, vf, out), _STATE_NAMES)
    return out.reshape((*lead, model.nv, model.nv))


def rnea_derivatives(
    model: Model,
    q: Array,
    v: Array,
    a: Array,
    *,
    f_ext: Array | None = None,
    params: Array | None = None,
) -> tuple[Array, Array, Array]:
    """Partial derivatives of `rnea` with respect to q, v and a, by the analytic algorithm of
    Carpentier and Mansard (2018, "Analytical Derivatives of Rigid Body Dynamics Algorithms").

    The derivative with respect to q is taken in the tangent space, along the joint motions
    that v describes (``d/de rnea(integrate(q, e))`` at e = 0), so it is (nv, nv) for floating
    bases and ball joints too, as in Pinocchio's ``computeRNEADerivatives``. Coulomb friction
    adds nothing (the derivative of sign(v) is zero wherever v is not).

    Args:
      model: the robot.
      q: (..., nq) joint positions.
      v: (..., nv) joint velocities.
      a: (..., nv) joint accelerations.
      f_ext: (..., nbody, 6) external spatial forces on each body, as in `rnea` (fixed in the
        bodies: they turn with them).
      params: (..., 10 nbody + 3 nv) dynamic parameters in place of the model's.

    Returns:
      (..., nv, nv) d tau / dq, d tau / dv and d tau / da (the mass matrix). Tensors in give
      tensors out, by forward-mode automatic differentiation of the torch path.
    """
    ints, reals = packed(model)
    nv = model.nv
    if f_ext is None and params is None:
        # one plain float64 state takes the compiled path directly, as in `rnea`
        single = _empty((3, nv, nv))
        try:
            plain = type(q) is _ndarray and q.ndim == 1
            status = _rnea_derivatives_vector(ints, reals, q, v, a, single) if plain else -1
        except (TypeError, AttributeError):
            status = -1
        if status == 0:
            return single[0], single[1], single[2]
        raise_for_status(max(status, 0), _STATE_NAMES)
    if params is not None or any_tensor(q, v, a, f_ext):
        named = {"q": q, "v": v, "a": a, "f_ext": f_ext}
        return _three(_dispatch(rnea_derivatives, model, named, params))
    q, v, a, forces, lead = _states(model, q, v, a, f_ext)
    out = np.empty((3, q.shape[0], nv, nv))
    status = cpu.rnea_derivatives_batch(ints, reals, q, v, a, forces, *out)
    raise_for_status(status, _STATE_NAMES)
    dq, dv, da = (x.reshape((*lead, nv, nv)) for x in out)
    return dq, dv, da


def aba_derivatives(
    model: Model,
    q: Array,
    v: Array,
    tau: Array,
    *,
    f_ext: Array | None = None,
    params: Array | None = None,
) -> tuple[Array, Array, Array]:
    """Partial derivatives of `aba` with respect to q, v and tau, from those of rnea:
    ``d a / dx = -M^-1 d rnea / dx`` at ``a = aba(q, v, tau)`` for x = q, v, and
    ``d a / d tau = M^-1`` (Carpentier and Mansard 2018).

    Args:
      model: the robot.
      q: (..., nq) joint positions.
      v: (..., nv) joint velocities.
      tau: (..., nv) joint forces and torques.
      f_ext: (..., nbody, 6) external spatial forces on each body, as in `rnea`.
      params: (..., 10 nbody + 3 nv) dynamic parameters in place of the model's.

    Returns:
      (..., nv, nv) d a / dq (tangent space, as in `rnea_derivatives`), d a / dv and
      d a / d tau (the inverse mass matrix). Tensors in give tensors out.
    """
    ints, reals = packed(model)
    if params is not None or any_tensor(q, v, tau, f_ext):
        named = {"q": q, "v": v, "tau": tau, "f_ext": f_ext}
        return _three(_dispatch(aba_derivatives, model, named, params))
    q, v, tau, forces, lead = _states(model, q, v, tau, f_ext, names=_ABA_NAMES)
    nv = model.nv
    out = np.empty((3, q.shape[0], nv, nv))
    status = cpu.aba_derivatives_batch(ints, reals, q, v, tau, forces, *out)
    _check_aba(model, status)
    dq, dv, dtau = (x.reshape((*lead, nv, nv)) for x in out)
    return dq, dv, dtau


# trailing shape of each argument and result, by the model attributes that size it
_CORES = {
    "q": ("nq",),
    "v": ("nv",),
    "a": ("nv",),
    "tau": ("nv",),
    "f_ext": ("nbody", 6),
    "rnea": ("nv",),
    "aba": ("nv",),
    "mass_matrix": ("nv", "nv"),
    "coriolis": ("nv", "nv"),
    "rnea_derivatives": (3, "nv", "nv"),
    "aba_derivatives": (3, "nv", "nv"),
}


def singular_joints(model: Model, q: Array, *, ratio: float = 1e-8) -> tuple[str, ...]:
    """The joints that together move no mass or inertia at configuration `q`: no torque
    controls that motion, no simulation follows it; empty when the mass matrix is regular.

    The test is the tree's factorisation of the mass matrix from the leaves to the root,
    ``M = L^T D L`` (Featherstone 2008, 6.4), found in O(nbody): its pivots are the joints'
    articulated inertias (a joint's inertia with the joints below it free), and M is singular
    where one is zero. A pivot is taken as zero at most `ratio` times the same joint's inertia
    with its children's joints locked (and those further down free), of which it is what the
    children take away: each joint on its own scale, which no length of chain or spread of
    masses makes small (an eigenvalue ratio of the whole matrix falls below 1e-14 on a chain
    of 3000 links). Each zero pivot is a motion of its joint, with the joints below it
    following it free of torque, that moves nothing: the joints that take more than a tenth
    of it are named.

    Args:
      model: the robot.
      q: (nq,) one configuration.
      ratio: the pivot to locked-children ratio at or below which a joint's motion moves
        nothing; the default lies well above round-off and the ~1e-11 of joints whose axes
        meet a point mass only to the digits a URDF file gives (iCub's neck), and well below
        the >1e-4 of every regular robot of example-robot-data.
    """
    q = as_float_array("q", q, model.nq)
    if q.ndim != 1:
        raise InputError(f"q must be one configuration, shape ({model.nq},), got {q.shape}")
    if model.nv == 0:
        return ()
    rotations, origins = forward_kinematics(model, q)
    columns = world_columns(model, rotations, origins)
    pivots = _articulated_pivots(model, _world_inertias(model, rotations, origins), columns, ratio)
    moving: dict[str, None] = {}
    for body, directions in enumerate(pivots.null):
        for direction in directions.T:
            motion = _following_motion(model, columns, pivots, body, direction)
            share = np.abs(motion) / np.linalg.norm(motion)
            moving |= dict.fromkeys(
                model.jnt_name[int(model.dof_body[k])] for k in np.flatnonzero(share > 0.1)
            )
    return tuple(moving)


def require_regular(model: Model, q: Array, what: str) -> None:
    """`ModelError` naming the joints (`singular_joints`) when the mass matrix of `model` is
    singular at `q`: `what` (a command, a function) cannot track their motion."""
    still = singular_joints(model, q)
    if still:
        raise ModelError(
            f"{what}: the mass matrix of {model.name!r} is singular: joints "
            f"{', '.join(map(repr, still))} together move no mass or inertia, so no torque "
            "tracks their motion (give their links inertia, or the model armature: "
            "Model.replace(dof_armature=...))"
        )


def _world_inertias(model: Model, rotations: Array, origins: Array) -> Array:
    """(nbody, 6, 6) each body's spatial inertia in world coordinates at the world origin, for
    motions (angular, linear) as `world_columns` gives them, from (nbody, 3, 3) rotations and
    (nbody, 3) origins."""
    com = origins + np.einsum("bij,bj->bi", rotations, model.body_com)
    rotational = rotations @ model.body_inertia @ rotations.transpose(0, 2, 1)
    mass = model.body_mass[:, None, None]
    arm = skew(com)
    out = np.empty((model.nbody, 6, 6))
    out[:, :3, :3] = rotational - mass * arm @ arm
    out[:, :3, 3:] = mass * arm
    out[:, 3:, :3] = -mass * arm
    out[:, 3:, 3:] = mass * np.eye(3)
    return out


class _Pivots(NamedTuple):
    """The leaf-to-root factorisation of a mass matrix, body by body.

    Attributes:
      coupling: (nbody, 6, n_i) each joint's ``U = I^A S``, the force its motion takes.
      inverse: (nbody, n_i, n_i) the pseudo-inverse of its pivot block ``D = S^T I^A S``
        (plus armature), its null directions left out.
      null: (nbody,) (n_i, k) each joint's null directions: the motions of its own dofs
        that, with the joints below free, move nothing (k = 0 for most).
    """

    coupling: list[Array]
    inverse: list[Array]
    null: list[Array]


def _articulated_pivots(model: Model, inertias: Array, columns: Array, ratio: float) -> _Pivots:
    """`_Pivots` of the bodies' (nbody, 6, 6) world `inertias` and the dofs' (nv, 6) world
    `columns`: a direction of a joint's pivot block is null where, scaled by the diagonal of
    the block with the children's joints locked, its eigenvalue is at most `ratio`."""
    articulated = inertias.copy()
    # each body's inertia with the joints below it locked, those further down free
    locked = inertias.copy()
    out = _Pivots([], [], [])
    for i in range(model.nbody - 1, -1, -1):
        dofs = slice(int(model.jnt_vadr[i]), int(model.jnt_vadr[i] + model.jnt_nv[i]))
        s = columns[dofs].T
        armature = model.dof_armature[dofs]
        coupling = articulated[i] @ s
        block = s.T @ coupling + np.diag(armature)
        # zero only where the block is zero too; an inertia that is not positive
        # semi-definite (loaded as written, with a warning) scales by its magnitude
        scale = np.sqrt(np.abs(np.einsum("ji,jk,ki->i", s, locked[i], s) + armature))
        scale[scale == 0.0] = 1.0
        values, vectors = np.linalg.eigh(block / np.outer(scale, scale))
        kept = values > ratio
        scaled = vectors[:, kept] / scale[:, None]
        inverse = scaled @ np.diag(1.0 / values[kept]) @ scaled.T
        out.coupling.append(coupling)
        out.inverse.append(inverse)
        out.null.append(vectors[:, ~kept] / scale[:, None])
        parent = int(model.body_parent[i])
        if parent >= 0:
            locked[parent] += articulated[i]
            articulated[parent] += articulated[i] - coupling @ inverse @ coupling.T
    for part in out:
        part.reverse()
    return out


def _following_motion(
    model: Model, columns: Array, pivots: _Pivots, body: int, direction: Array
) -> Array:
    """(nv,) the motion of body `body`'s joint along `direction` (n_i,), with each joint
    below it following as it does free of torque (``v_j = -D_j^+ U_j^T V_parent``, V the
    bodies' world motions), zero elsewhere."""
    motion = np.zeros(model.nv)
    velocity = np.zeros((model.nbody, 6))
    inside = np.zeros(model.nbody, dtype=bool)
    for i in range(body, model.nbody):
        parent = int(model.body_parent[i])
        if i != body and (parent < 0 or not inside[parent]):
            continue
        dofs = slice(int(model.jnt_vadr[i]), int(model.jnt_vadr[i] + model.jnt_nv[i]))
        if i == body:
            motion[dofs] = direction
        else:
            motion[dofs] = -pivots.inverse[i] @ pivots.coupling[i].T @ velocity[parent]
        velocity[i] = (velocity[parent] if i != body else 0.0) + columns[dofs].T @ motion[dofs]
        inside[i] = True
    return motion


def _dispatch(function: Any, model: Model, named: dict[str, Any], params: Any) -> Any:
    """`function` of `named` arguments with `params`: on tensors when any argument is one
    (`invdyn.kernels.torch`), else on numpy arrays with the model's parameters replaced."""
    packed(model)
    if not any_tensor(params, *named.values()):
        return function(with_parameters(model, params), **named)
    from invdyn._tensors import call

    failure = None
    if function in (aba, aba_derivatives):
        # the tensors compute in float32 when none is float64
        dtypes = {str(getattr(x, "dtype", "")) for x in named.values()}
        single = "torch.float32" in dtypes and "torch.float64" not in dtypes
        precision = (
            "; or, in float32, the mass matrix is too ill-conditioned: try float64"
            if single
            else ""
        )
        failure = ModelError(
            f"{model.name}: forward dynamics is undefined: {_SINGULAR}, or the arguments are "
            f"too large{precision}"
        )
    cores = {name: (x, _core(model, name)) for name, x in named.items()}
    kernel = function.__name__
    return call(kernel, model, cores, params, _core(model, kernel), failure)


def _three(out: Any) -> Any:
    """The three matrices of derivatives: a tuple as it is, a tensor (..., 3, nv, nv) split."""
    if isinstance(out, tuple):
        return out
    return out[..., 0, :, :], out[..., 1, :, :], out[..., 2, :, :]


def _core(model: Model, name: str) -> tuple[int, ...]:
    """The trailing shape of argument or result `name` for `model`."""
    return tuple(getattr(model, n) if isinstance(n, str) else n for n in _CORES[name])


def _states(
    model: Model,
    q: Array,
    v: Array,
    x: Array,
    f_ext: Array | None,
    *,
    names: tuple[str, ...] = _STATE_NAMES,
) -> tuple[Array, Array, Array, Array, tuple[int, ...]]:
    """Validate (q, v, x, f_ext) and flatten them to a common batch (B, ...)."""
    if f_ext is None and _plain_batch(q, model.nq, v, x, model.nv):
        lead = q.shape[:-1]
        batch = math.prod(lead)
        return (
            q.reshape(batch, model.nq),
            v.reshape(batch, model.nv),
            x.reshape(batch, model.nv),
            _NO_FORCES_BATCH,
            lead,
        )
    q = as_float_array(names[0], q, model.nq)
    v = as_float_array(names[1], v, model.nv)
    x = as_float_array(names[2], x, model.nv)
    named = {names[0]: (q, 1), names[1]: (v, 1), names[2]: (x, 1)}
    if f_ext is not None:
        forces = as_float_array(names[3], f_ext, (model.nbody, 6))
        named[names[3]] = (forces, 2)
    lead = batch_shape(named)
    flat = [flatten(array, lead, core) for array, core in named.values()]
    if f_ext is None:
        flat.append(NO_FORCES[None])
    return flat[0], flat[1], flat[2], flat[3], lead


def _plain_batch(q: object, nq: int, v: object, x: object, nv: int) -> bool:
    """Whether q (B..., nq), v and x (B..., nv) are C-contiguous, aligned float64 arrays with
    one batch shape: the common case, which needs no conversion, broadcast or copy."""
    if not (isinstance(q, np.ndarray) and isinstance(v, np.ndarray) and isinstance(x, np.ndarray)):
        return False
    if q.ndim < 1 or q.shape[-1] != nq or v.shape != (*q.shape[:-1], nv) or x.shape != v.shape:
        return False
    return all(
        a.dtype == F64 and a.flags.c_contiguous and a.flags.aligned and type(a) is np.ndarray
        for a in (q, v, x)
    )


_SINGULAR = (
    "the mass matrix is singular or not positive definite (a joint moves a subtree with no mass "
    "or inertia, a free joint floats a body with none, or an inertia is not physical)"
)


def _check_aba(model: Model, status: int) -> None:
    if status == cpu.SINGULAR:
        raise ModelError(f"{model.name}: {_SINGULAR}, so forward dynamics is undefined")
    raise_for_status(status, _ABA_NAMES)
