"""Forward kinematics: world placements of bodies and frames, and frame Jacobians.

Jacobian rows follow the spatial convention of `invdyn.spatial`: [angular; linear]. Like the
functions of `invdyn.dynamics`, these take numpy arrays or torch tensors (differentiable, on
the tensor's device and dtype, through `invdyn.kernels.torch`).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import any_tensor, as_float_array, not_a_model, packed, raise_for_status
from invdyn.errors import InputError
from invdyn.kernels import cpu
from invdyn.model import JointType, Model

Array = NDArray[np.float64]
Reference = Literal["local", "world", "local_world_aligned"]


def forward_kinematics(model: Model, q: Array) -> tuple[Array, Array]:
    """World placements of every body.

    Args:
      model: the robot.
      q: (..., nq) joint positions.

    Returns:
      (..., nbody, 3, 3) body rotations and (..., nbody, 3) body origins, in the world frame.
    """
    ints, reals = packed(model)
    if any_tensor(q):
        return _tensor_forward_kinematics(model, q)
    q = as_float_array("q", q, model.nq)
    lead = q.shape[:-1]
    world = np.empty((int(np.prod(lead)), model.nbody, 12))
    raise_for_status(
        cpu.forward_kinematics_batch(ints, reals, q.reshape(world.shape[0], model.nq), world),
        ("q",),
    )
    world = world.reshape((*lead, model.nbody, 12))
    return world[..., :9].reshape((*lead, model.nbody, 3, 3)), world[..., 9:]


def frame_placement(model: Model, q: Array, frame: str | int) -> tuple[Array, Array]:
    """World placement of a frame.

    Args:
      model: the robot.
      q: (..., nq) joint positions.
      frame: frame name or index (see `Model.frame_name`).

    Returns:
      (..., 3, 3) rotation and (..., 3) origin of the frame in the world frame.
    """
    index = _frame_index(model, frame)
    body = int(model.frame_body[index])
    local_rot, local_pos = model.frame_rot[index], model.frame_pos[index]
    if any_tensor(q):
        return _tensor_frame_placement(model, q, body, local_rot, local_pos)
    if body < 0:
        # fixed to the world: q is only checked, and sets the batch shape
        q = as_float_array("q", q, model.nq)
        if not np.all(np.isfinite(q)):
            raise InputError("q holds a non-finite value (NaN or inf)")
        lead = q.shape[:-1]
        return (
            np.broadcast_to(local_rot, (*lead, 3, 3)).copy(),
            np.broadcast_to(local_pos, (*lead, 3)).copy(),
        )
    rotations, origins = forward_kinematics(model, q)
    rot, origin = rotations[..., body, :, :], origins[..., body, :]
    return rot @ local_rot, origin + rot @ local_pos


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
    if not isinstance(reference, str) or reference not in ("local", "world", "local_world_aligned"):
        raise InputError(
            f"reference must be 'local', 'world' or 'local_world_aligned', got {reference!r}"
        )
    index = _frame_index(model, frame)
    if any_tensor(q):
        return _tensor_frame_jacobian(model, q, index, reference)
    rotations, origins = forward_kinematics(model, q)
    frame_rot, frame_pos = frame_placement(model, q, index)
    lead = rotations.shape[:-3]
    jac = np.zeros((*lead, 6, model.nv))
    body = int(model.frame_body[index])
    if body < 0:
        return jac
    # every dof on the path from the frame's body to the root, its column in world axes
    moving = np.isin(model.dof_body, _ancestors(model, body))
    columns = motion_subspace(model)[moving]
    dof_rot = rotations[..., model.dof_body[moving], :, :]
    dof_pos = origins[..., model.dof_body[moving], :]
    angular = np.einsum("...kij,kj->...ki", dof_rot, columns[:, :3])
    linear = np.einsum("...kij,kj->...ki", dof_rot, columns[:, 3:])
    point = np.zeros(3) if reference == "world" else frame_pos
    linear = linear + np.cross(angular, point[..., None, :] - dof_pos)
    if reference == "local":
        angular = np.einsum("...ji,...kj->...ki", frame_rot, angular)
        linear = np.einsum("...ji,...kj->...ki", frame_rot, linear)
    jac[..., :3, moving] = np.swapaxes(angular, -1, -2)
    jac[..., 3:, moving] = np.swapaxes(linear, -1, -2)
    return jac


def _tensor_forward_kinematics(model: Model, q: Any) -> tuple[Any, Any]:
    """`forward_kinematics` for a tensor q."""
    from invdyn import _tensors
    from invdyn.kernels import torch as kernels

    prepared = _tensors.prepare(model, {"q": (q, (model.nq,))})
    rotations, origins = kernels.forward_kinematics(prepared.tree, prepared.tensor("q"))
    return (
        _tensors.finish(rotations, prepared, (model.nbody, 3, 3)),
        _tensors.finish(origins, prepared, (model.nbody, 3)),
    )


def _tensor_frame_placement(
    model: Model, q: Any, body: int, local_rot: Array, local_pos: Array
) -> tuple[Any, Any]:
    """`frame_placement` of the frame at (local_rot, local_pos) in `body` for a tensor q."""
    from invdyn import _tensors

    if body >= 0:
        rotations, origins = _tensor_forward_kinematics(model, q)
        rot, pos = rotations.new_tensor(local_rot), rotations.new_tensor(local_pos)
        world_rot = rotations[..., body, :, :]
        return world_rot @ rot, origins[..., body, :] + world_rot @ pos
    prepared = _tensors.prepare(model, {"q": (q, (model.nq,))})
    _tensors.check_finite(prepared)
    rot, pos = prepared.params.new_tensor(local_rot), prepared.params.new_tensor(local_pos)
    return rot.expand(*prepared.lead, 3, 3).clone(), pos.expand(*prepared.lead, 3).clone()


def _tensor_frame_jacobian(model: Model, q: Any, index: int, reference: Reference) -> Any:
    """`frame_jacobian` of frame `index` for a tensor q."""
    from invdyn import _tensors
    from invdyn.kernels import torch as kernels

    prepared = _tensors.prepare(model, {"q": (q, (model.nq,))})
    body = int(model.frame_body[index])
    t, flat_q = prepared.tree, prepared.tensor("q")
    if body < 0:
        _tensors.check_finite(prepared)
        return flat_q.new_zeros((*prepared.lead, 6, model.nv))
    rot = t.params.new_tensor(model.frame_rot[index])
    pos = t.params.new_tensor(model.frame_pos[index])
    jacobian = kernels.frame_jacobian(t, flat_q, body, rot, pos, reference)
    return _tensors.finish(jacobian, prepared, (6, model.nv))


def motion_subspace(model: Model) -> Array:
    """(nv, 6) motion of each velocity coordinate in its body's coordinates: S, column by dof."""
    columns = np.zeros((model.nv, 6))
    for i, (jtype, start) in enumerate(zip(model.jnt_type, model.jnt_vadr)):
        if jtype in (JointType.REVOLUTE, JointType.CONTINUOUS):
            columns[start, :3] = model.jnt_axis[i]
        elif jtype == JointType.PRISMATIC:
            columns[start, 3:] = model.jnt_axis[i]
        elif jtype == JointType.SPHERICAL:
            columns[start : start + 3, :3] = np.eye(3)
        else:
            columns[start : start + 3, 3:] = np.eye(3)
            columns[start + 3 : start + 6, :3] = np.eye(3)
    return columns


def _ancestors(model: Model, body: int) -> list[int]:
    """Body and all its ancestors, leaf first."""
    chain = []
    while body >= 0:
        chain.append(body)
        body = int(model.body_parent[body])
    return chain


def _frame_index(model: Model, frame: str | int) -> int:
    if not isinstance(model, Model):
        raise not_a_model(model)
    if isinstance(frame, str):
        try:
            return model.frame_name.index(frame)
        except ValueError:
            raise InputError(f"{model.name} has no frame named {frame!r}") from None
    is_index = isinstance(frame, (int, np.integer)) and not isinstance(frame, (bool, np.bool_))
    if is_index and -len(model.frame_name) <= frame < len(model.frame_name):
        return int(frame) % len(model.frame_name)
    raise InputError(
        f"frame must be a frame name or an index below {len(model.frame_name)}, got {frame!r}"
    )
