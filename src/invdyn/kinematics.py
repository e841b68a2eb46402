"""Forward kinematics: world placements of bodies and frames, frame Jacobians, velocities and
accelerations.

Jacobian rows follow the spatial convention of `invdyn.spatial`: [angular; linear]. Like the
functions of `invdyn.dynamics`, placements and Jacobians take numpy arrays or torch tensors
(differentiable, on the tensor's device and dtype, through `invdyn.kernels.torch`); frame
velocities and accelerations take numpy arrays.

A frame's velocity and acceleration come from the forward recursion of `invdyn.kernels.cpu`
(``v_i = X_i v_parent + S_i qd_i``, ``a_i = X_i a_parent + S_i qdd_i + v_i x S_i qd_i``,
Featherstone 2008, table 5.1, the world at rest); `point_jacobian` and `point_motion` give
the same of any point of a body, one state at a time, for contacts and tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import (
    any_tensor,
    as_finite_array,
    as_float_array,
    batch_shape,
    flatten,
    not_a_model,
    packed,
    raise_for_status,
)
from invdyn.errors import InputError
from invdyn.kernels import cpu
from invdyn.model import Model
from invdyn.spatial import cross

Array = NDArray[np.float64]
Reference = Literal["local", "world", "local_world_aligned"]
# bound once: module attribute lookups are a visible share of a single call
_empty = np.empty
_ndarray = np.ndarray
# the inputs of the frame motion kernels, in the order of their status codes
_MOTION = ("q", "v", "a")
# the joint accelerations of `frame_velocity`, which does not depend on them: none
_AT_REST = np.zeros(0)


def forward_kinematics(model: Model, q: Array) -> tuple[Array, Array]:
    """World placements of every body.

    Args:
      model: the robot.
      q: (..., nq) joint positions.

    Returns:
      (..., nbody, 3, 3) body rotations and (..., nbody, 3) body origins, in the world frame.
    """
    ints, reals = packed(model)  # a model, or the error that says what was passed
    if type(q) is _ndarray and q.ndim == 1:
        # one float64 configuration takes the compiled path directly
        placements = _empty((model.nbody, 12))
        if _single(cpu.forward_kinematics_vector, ints, reals, q, placements):
            return placements[:, :9].reshape(model.nbody, 3, 3), placements[:, 9:]
    if any_tensor(q):
        return _tensor_forward_kinematics(model, q)
    world, lead = _world_placements(model, q)
    world = world.reshape((*lead, model.nbody, 12))
    return world[..., :9].reshape((*lead, model.nbody, 3, 3)), world[..., 9:]


def _world_placements(model: Model, q: Array) -> tuple[Array, tuple[int, ...]]:
    """(B, nbody, 12) the bodies' world rotations (row-major) and origins at the B states of
    numpy `q` (..., nq), and the states' leading shape (...)."""
    ints, reals = packed(model)
    q = as_float_array("q", q, model.nq)
    lead = q.shape[:-1]
    world = np.empty((int(np.prod(lead)), model.nbody, 12))
    flat = q.reshape(world.shape[0], model.nq)
    raise_for_status(cpu.forward_kinematics_batch(ints, reals, flat, world), ("q",))
    return world, lead


def _single(kernel: Any, *args: Any, names: tuple[str, ...] = ("q",)) -> bool:
    """Whether `kernel` (one of the ``*_vector`` kernels, its arguments `args`) ran on a
    plain state: False when the arguments are of other types or sizes (the general path then
    checks them and says what is wrong); raises for a non-finite input (`names` in the order
    of the kernel's status codes) or result."""
    try:
        status = kernel(*args)
    except TypeError:
        return False
    if status < 0:
        return False
    raise_for_status(status, names)
    return True


def frame_placement(model: Model, q: Array, frame: str | int) -> tuple[Array, Array]:
    """World placement of a frame.

    Args:
      model: the robot.
      q: (..., nq) joint positions.
      frame: frame name or index (see `Model.frame_name`).

    Returns:
      (..., 3, 3) rotation and (..., 3) origin of the frame in the world frame.
    """
    index, body, frame_data = _frame_target(model, frame)
    ints, reals = model.kernel_data
    if type(q) is _ndarray and q.ndim == 1:
        placed = _empty(12)
        if _single(cpu.frame_placement_vector, ints, reals, q, body, frame_data, placed):
            return placed[:9].reshape(3, 3), placed[9:]
    if any_tensor(q):
        local_rot, local_pos = model.frame_rot[index], model.frame_pos[index]
        return _tensor_frame_placement(model, q, body, local_rot, local_pos)
    q = as_float_array("q", q, model.nq)
    lead = q.shape[:-1]
    flat = flatten(q, lead, 1)
    placed = np.empty((len(flat), 12))
    raise_for_status(
        cpu.frame_placement_batch(ints, reals, flat, body, frame_data, placed),
        ("q",),
    )
    placed = placed.reshape((*lead, 12))
    return placed[..., :9].reshape((*lead, 3, 3)), placed[..., 9:]


def frame_jacobian(
    model: Model, q: Array, frame: str | int, *, reference: Reference = "local_world_aligned"
) -> Array:
    """Jacobian of a frame's spatial velocity with respect to ``v``.

    The reference selects the coordinates, as Pinocchio's ReferenceFrame does: "local" (the
    frame's own axes, at its origin), "local_world_aligned" (world axes, at the frame origin)
    or "world" (world axes, at the world origin).

    Args:
      model: the robot.
      q: (..., nq) joint positions.
      frame: frame name or index.
      reference: one of "local", "world", "local_world_aligned".

    Returns:
      (..., 6, nv) Jacobian, rows [angular; linear].
    """
    _check_reference(reference)
    index, body, frame_data = _frame_target(model, frame)
    ints, reals = model.kernel_data
    ref = _JACOBIAN_REFERENCES[reference]
    if type(q) is _ndarray and q.ndim == 1:
        jacobian = _empty((6, model.nv))
        if _single(cpu.frame_jacobian_vector, ints, reals, q, body, frame_data, ref, jacobian):
            return jacobian
    if any_tensor(q):
        core = (6, model.nv)
        return _tensor_frame_function(model, "frame_jacobian", core, index, body, reference, q=q)
    q = as_float_array("q", q, model.nq)
    lead = q.shape[:-1]
    flat = flatten(q, lead, 1)
    jacobian = np.empty((len(flat), 6, model.nv))
    raise_for_status(
        cpu.frame_jacobian_batch(ints, reals, flat, body, frame_data, ref, jacobian),
        ("q",),
    )
    return jacobian.reshape((*lead, 6, model.nv))


def frame_velocity(
    model: Model,
    q: Array,
    v: Array,
    frame: str | int,
    *,
    reference: Reference = "local_world_aligned",
) -> Array:
    """Spatial velocity of a frame, ``J(q) v``.

    Args:
      model: the robot.
      q: (..., nq) joint positions.
      v: (..., nv) joint velocities.
      frame: frame name or index.
      reference: the coordinates, as `frame_jacobian`'s.

    Returns:
      (..., 6) angular velocity and linear velocity (of the frame origin, or of the point of
      the frame's body at the world origin for "world").
    """
    return _frame_motion(model, q, v, _AT_REST, frame, reference)[..., :6]


def frame_acceleration(
    model: Model,
    q: Array,
    v: Array,
    a: Array,
    frame: str | int,
    *,
    reference: Reference = "local_world_aligned",
) -> Array:
    """Classical acceleration of a frame, ``J(q) a + J_dot(q, v) v``: the angular acceleration
    and the second derivative of the frame origin's position (Pinocchio's classical
    acceleration); with ``a = 0``, the drift ``J_dot v`` that contact and task constraints need.

    ``p'' = w + alpha x p + omega x (u + omega x p)`` for the body's spatial velocity
    ``(omega, u)`` and acceleration ``(alpha, w)`` at its origin, in its coordinates, at the
    frame origin ``p`` (the world origin, a point of the body, for "world").

    Args:
      model: the robot.
      q: (..., nq) joint positions.
      v: (..., nv) joint velocities.
      a: (..., nv) joint accelerations.
      frame: frame name or index.
      reference: the coordinates, as `frame_jacobian`'s.

    Returns:
      (..., 6) angular acceleration and linear acceleration, no gravity.
    """
    return _frame_motion(model, q, v, a, frame, reference)[..., 6:]


def _frame_motion(
    model: Model, q: Array, v: Array, a: Array, frame: str | int, reference: Reference
) -> Array:
    """(..., 12) a frame's spatial velocity and classical acceleration (`cpu.frame_motion`),
    for joint accelerations `a` (`_AT_REST`: zero)."""
    _check_reference(reference)
    index, body, frame_data = _frame_target(model, frame)
    if a is _AT_REST:
        a = np.zeros(model.nv)
    ints, reals = model.kernel_data
    ref = _JACOBIAN_REFERENCES[reference]
    if type(q) is _ndarray and q.ndim == 1:
        motion = _empty(12)
        kernel = cpu.frame_motion_vector
        if _single(kernel, ints, reals, q, v, a, body, frame_data, ref, motion, names=_MOTION):
            return motion
    if any_tensor(q, v, a):
        return _tensor_frame_function(
            model, "frame_motion", (12,), index, body, reference, q=q, v=v, a=a
        )
    q, v, a = _broadcast(model, q=q, v=v, a=a)
    lead = q.shape[:-1]
    qs, vs, accs = (flatten(x, lead, 1) for x in (q, v, a))
    motion = np.empty((len(qs), 12))
    status = cpu.frame_motion_batch(ints, reals, qs, vs, accs, body, frame_data, ref, motion)
    raise_for_status(status, _MOTION)
    return motion.reshape((*lead, 12))


def point_jacobian(model: Model, q: Array, body: int, point: Array) -> Array:
    """(6, nv) Jacobian of the motion of a point fixed to a body, world axes at the point:
    the body's angular velocity, then the point's linear velocity.

    Args:
      model: the robot.
      q: (nq,) one configuration.
      body: the moving body (`frame_point` finds a frame's).
      point: (3,) the point in the body's coordinates.
    """
    ints, reals = model.kernel_data
    jacobian = _empty((6, model.nv))
    target = _point_target(point)
    ref = cpu.JACOBIAN_LOCAL_WORLD_ALIGNED
    if not _single(cpu.frame_jacobian_vector, ints, reals, q, body, target, ref, jacobian):
        raise _not_one_state(model, q=q)
    return jacobian


def point_motion(model: Model, q: Array, v: Array, body: int, point: Array) -> Array:
    """(12,) the angular and linear velocity, then the angular and classical linear
    acceleration at rest (``a = 0``: the drift ``J_dot v``), of a point fixed to a body, in
    world axes: `point_jacobian`'s motion and its rate.

    Args:
      model: the robot.
      q: (nq,) one configuration.
      v: (nv,) its velocity.
      body: the moving body.
      point: (3,) the point in the body's coordinates.
    """
    ints, reals = model.kernel_data
    motion = _empty(12)
    target, rest = _point_target(point), np.zeros(model.nv)
    ref = cpu.JACOBIAN_LOCAL_WORLD_ALIGNED
    kernel = cpu.frame_motion_vector
    if not _single(kernel, ints, reals, q, v, rest, body, target, ref, motion, names=_MOTION):
        raise _not_one_state(model, q=q, v=v)
    return motion


def _not_one_state(model: Model, **given: Any) -> InputError:
    """The error of a point function given other than one state's float64 arrays."""
    sizes = {"q": model.nq, "v": model.nv}
    expected = " and ".join(f"{name} a ({sizes[name]},) float64 array" for name in given)
    got = ", ".join(
        f"{name} {np.shape(x)} {getattr(x, 'dtype', type(x).__name__)}" for name, x in given.items()
    )
    return InputError(f"{model.name}: one state is {expected}; got {got}")


def _point_target(point: Array) -> Array:
    """(12,) the placement of a point in its body, as the frame kernels read a frame's: the
    body's axes, then the point."""
    target = np.zeros(12)
    target[[0, 4, 8]] = 1.0
    target[9:] = point
    return target


def frame_point(
    model: Model, frame: str, point: Sequence[float] = (0.0, 0.0, 0.0)
) -> tuple[int, Array]:
    """The moving body that carries frame `frame`, and the (3,) position in that body of
    `point` (given in the frame's coordinates); `InputError` for an unknown frame or one fixed
    to the world."""
    index, body, _ = _frame_target(model, frame)
    if body < 0:
        raise InputError(f"{model.name}: frame {frame!r} is fixed to the world")
    return body, model.frame_pos[index] + model.frame_rot[index] @ np.asarray(point, float)


def world_columns(model: Model, rotations: Array, origins: Array) -> Array:
    """(..., nv, 6) each dof's motion (`Model.motion_subspace`) in world coordinates at the world
    origin, from (..., nbody, 3, 3) body rotations and (..., nbody, 3) origins."""
    local = model.motion_subspace
    dof_rot = rotations[..., model.dof_body, :, :]
    angular = np.einsum("...kij,kj->...ki", dof_rot, local[:, :3])
    linear = np.einsum("...kij,kj->...ki", dof_rot, local[:, 3:])
    # moved from the body origin p to the world origin: u_O = u_p + p x omega
    linear = linear + cross(origins[..., model.dof_body, :], angular)
    return np.concatenate([angular, linear], axis=-1)


def _broadcast(model: Model, **named: Any) -> list[Array]:
    """q (..., nq) and velocity-like (..., nv) arrays, velocities checked finite, broadcast to
    their common batch shape (q is checked by the kinematics kernel)."""
    arrays = {
        name: as_float_array(name, x, model.nq)
        if name == "q"
        else as_finite_array(name, x, model.nv)
        for name, x in named.items()
    }
    lead = batch_shape({name: (x, 1) for name, x in arrays.items()})
    return [np.broadcast_to(x, (*lead, x.shape[-1])) for x in arrays.values()]


_JACOBIAN_REFERENCES = {
    "local": cpu.JACOBIAN_LOCAL,
    "world": cpu.JACOBIAN_WORLD,
    "local_world_aligned": cpu.JACOBIAN_LOCAL_WORLD_ALIGNED,
}


def _check_reference(reference: object) -> None:
    if not isinstance(reference, str) or reference not in _JACOBIAN_REFERENCES:
        raise InputError(
            f"reference must be 'local', 'world' or 'local_world_aligned', got {reference!r}"
        )


def _tensor_forward_kinematics(model: Model, q: Any) -> tuple[Any, Any]:
    """`forward_kinematics` for a tensor q."""
    from invdyn._tensors import finish, prepare
    from invdyn.kernels import torch as kernels

    prepared = prepare(model, {"q": (q, (model.nq,))})
    rotations, origins = kernels.forward_kinematics(prepared.tree, prepared.tensor("q"))
    return (
        finish(rotations, prepared, (model.nbody, 3, 3)),
        finish(origins, prepared, (model.nbody, 3)),
    )


def _tensor_frame_placement(
    model: Model, q: Any, body: int, local_rot: Array, local_pos: Array
) -> tuple[Any, Any]:
    """`frame_placement` of the frame at (local_rot, local_pos) in `body` for a tensor q."""
    from invdyn._tensors import check_finite, constant_like, prepare

    if body >= 0:
        rotations, origins = _tensor_forward_kinematics(model, q)
        rot = constant_like(rotations, local_rot)
        pos = constant_like(rotations, local_pos)
        world_rot = rotations[..., body, :, :]
        return world_rot @ rot, origins[..., body, :] + world_rot @ pos
    prepared = prepare(model, {"q": (q, (model.nq,))})
    check_finite(prepared)
    rot = constant_like(prepared.params, local_rot)
    pos = constant_like(prepared.params, local_pos)
    return rot.expand(*prepared.lead, 3, 3).clone(), pos.expand(*prepared.lead, 3).clone()


def _tensor_frame_function(
    model: Model,
    kernel: str,
    core: tuple[int, ...],
    index: int,
    body: int,
    reference: Reference,
    **named: Any,
) -> Any:
    """The `invdyn.kernels.torch` frame function `kernel` (``frame_jacobian`` or
    ``frame_motion``) of frame `index`, carried by `body`, on the tensors `named` (q, then
    velocity-like arguments): a (..., *core) tensor, zero for a frame fixed to the world."""
    from invdyn._tensors import check_finite, constant_like, finish, prepare_states
    from invdyn.kernels import torch as kernels

    prepared, flat = prepare_states(model, **named)
    if body < 0:
        check_finite(prepared)
        return flat[0].new_zeros((*prepared.lead, *core))
    t = prepared.tree
    rot = constant_like(t.params, model.frame_rot[index])
    pos = constant_like(t.params, model.frame_pos[index])
    out = getattr(kernels, kernel)(t, *flat, body, rot, pos, reference)
    return finish(out, prepared, core)


def _frame_target(model: Model, frame: str | int) -> tuple[int, int, Array]:
    """The index of `frame` (a name or an index), the body that carries it (-1 for the world)
    and its (12,) rotation (row-major) and position in that body, as the frame kernels of
    `invdyn.kernels.cpu` read them."""
    try:
        targets = model.frame_targets
    except AttributeError:
        raise not_a_model(model) from None
    if type(frame) is str or type(frame) is int:
        # names and plain indices from 0 in one lookup; the rest (and errors) by _frame_index
        found = targets.get(frame)
        if found is not None:
            return found
    return targets[_frame_index(model, frame)]


def _frame_index(model: Model, frame: str | int) -> int:
    if not isinstance(model, Model):
        raise not_a_model(model)
    if isinstance(frame, str):
        return model.frame_id(frame)
    is_index = isinstance(frame, (int, np.integer)) and not isinstance(frame, (bool, np.bool_))
    if is_index and -len(model.frame_name) <= frame < len(model.frame_name):
        return int(frame) % len(model.frame_name)
    count = len(model.frame_name)
    raise InputError(
        f"frame must be a frame name or an index from {-count} to {count - 1} (negative ones "
        f"count from the end), got {frame!r}"
    )


# a branch lighter than this share of the subtree where it branches off, and than this
# mass (kg), is a finger
FINGER_SHARE = 0.25
FINGER_MASS = 0.5


def end_effector(model: Model) -> str:
    """The body that carries a payload by default: the end of the longest chain of revolute
    or continuous joints (an arm's, not a wheel's or a head's; the last of equally long ones),
    or, where that chain ends in a finger (a branch lighter than `FINGER_MASS` and than
    `FINGER_SHARE` of the subtree it branches off), the last turning body before the fingers,
    the wrist; the last body when nothing turns. A gripper of one turning jaw, which branches
    off nothing, ends the arm: its jaw carries the payload.

    Raises:
      InputError: the model has no body.
    """
    if model.nbody == 0:
        raise InputError(f"{model.name} has no moving body to carry a payload")
    parent = np.asarray(model.body_parent, dtype=np.int64)
    turning = np.array([spec.turns for spec in model.jnt_spec], dtype=bool)
    if not turning.any():
        return model.body_name[model.nbody - 1]
    # turning joints from the root to each body (parents come before children); each body's
    # subtree's mass and whether it turns (accumulated from the children backwards)
    chain = np.zeros(model.nbody, dtype=np.int64)
    for i in range(model.nbody):
        chain[i] = (chain[parent[i]] if parent[i] >= 0 else 0) + int(turning[i])
    mass = model.subtree_mass
    turns = turning.copy()
    for i in range(model.nbody - 1, -1, -1):
        if parent[i] >= 0:
            turns[parent[i]] |= turns[i]
    end = int(np.flatnonzero(turning & (chain == chain[turning].max()))[-1])
    # up from the end to the first branch: a finger's, or the arm's own
    node = end
    while parent[node] >= 0:
        branch = parent[node]
        others = (parent == branch) & turns
        others[node] = False
        if others.any():
            if mass[node] >= min(FINGER_SHARE * mass[branch], FINGER_MASS):
                break
            wrist = branch
            while wrist >= 0 and not turning[wrist]:
                wrist = parent[wrist]
            return model.body_name[wrist if wrist >= 0 else end]
        node = branch
    return model.body_name[end]
