"""Batched, differentiable rigid-body dynamics on PyTorch tensors: the algorithms of
`invdyn.kernels.cpu` for any device and floating dtype, differentiable by autograd with respect
to the state and to the dynamic parameters.

Every kernel takes states flattened to one batch axis, ``q`` (B, nq), ``v`` and ``a`` (B, nv),
and the dynamic parameters ``params`` (B or 1, 10 nbody + 3 nv) in the order of
`invdyn.model.inertial_parameters`; the public functions of `invdyn.dynamics`,
`invdyn.kinematics` and `invdyn.regressor` check and flatten their arguments and call these when
they are given tensors. Spatial vectors are (..., 6) tensors [angular; linear] as everywhere in
invdyn. The recursions loop over bodies in Python and over the batch in tensor operations, so
one call costs a few operations per body whatever the batch size.

Mass and Coriolis matrices come from body Jacobians in world coordinates,
``M = sum_i J_i^T I_i J_i`` (one contraction over all bodies rather than the composite-inertia
recursion), and forward dynamics solves ``M a = tau - h`` by a Cholesky factorisation; both are
exact, and autograd differentiates them like any other tensor expression.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch
from torch import Tensor
from torch.nn import functional as F

from invdyn.errors import InputError
from invdyn.model import JointType, Model, inertial_parameters


@dataclasses.dataclass(frozen=True)
class Tree:
    """A model's constant arrays as tensors of one dtype and device, and its layout as ints.

    Attributes:
      parent, jtype, qadr, vadr, jnv: (nbody,) per body: parent (-1 for the world), joint type,
        first index in ``q`` and in ``v``, number of velocity coordinates.
      nq, nv, nbody: sizes.
      directions: (start, stop) in ``q`` of each quaternion and (cos θ, sin θ) pair.
      axis: (nbody, 3) joint axes.
      rot: (nbody, 3, 3) joint frame rotations in the parent.
      pos: (nbody, 3) joint frame origins in the parent.
      subspace: (nv, 6) motion of each velocity coordinate in its body's coordinates.
      moves: (nbody, nv) 1 where the dof moves the body (the dof of an ancestor or its own).
      dof_body: (nv,) the body each dof moves with its own joint.
      params: (10 nbody + 3 nv,) the model's dynamic parameters.
      gravity: (3,) gravity in the world frame.
      mass: the moving bodies' total mass.
    """

    parent: tuple[int, ...]
    jtype: tuple[int, ...]
    qadr: tuple[int, ...]
    vadr: tuple[int, ...]
    jnv: tuple[int, ...]
    nq: int
    nv: int
    nbody: int
    directions: tuple[tuple[int, int], ...]
    axis: Tensor
    rot: Tensor
    pos: Tensor
    subspace: Tensor
    moves: Tensor
    dof_body: tuple[int, ...]
    params: Tensor
    gravity: Tensor
    mass: float


def tree(model: Model, dtype: torch.dtype, device: torch.device) -> Tree:
    """The `Tree` of `model` in `dtype` on `device`, built once and cached with the model; by
    an eager call, as torch.compile cannot trace its building (`InputError` in a traced one)."""
    key = (dtype, torch.device(device))
    if torch.compiler.is_compiling() and not model.has_derived(_build_tree, *key):
        raise InputError(
            f"torch.compile: {model.name}'s tensors in {dtype} on {key[1]} are built by a first "
            "call outside the compiled function (a call of any invdyn function on such tensors)"
        )
    return model.derived(_build_tree, *key)


def _build_tree(model: Model, dtype: torch.dtype, device: torch.device) -> Tree:
    # what the frame functions read of the model, built here, eagerly: torch.compile traces
    # the model's integer arrays as tensors and cannot branch on their values
    _ = model.frame_targets

    def tensor(x: np.ndarray) -> Tensor:
        # plain tensors, whatever the first call ran under: the cache outlives an inference
        # mode (whose tensors autograd refuses) and torch.func transforms (whose wrapped
        # tensors fail every later transform)
        with torch.inference_mode(False), torch._C._DisableFuncTorch():
            return torch.tensor(np.asarray(x, dtype=np.float64), dtype=dtype, device=device)

    moves = np.zeros((model.nbody, model.nv))
    for i in range(model.nbody):
        j = i
        while j >= 0:
            start = int(model.jnt_vadr[j])
            moves[i, start : start + int(model.jnt_nv[j])] = 1.0
            j = int(model.body_parent[j])
    return Tree(
        parent=tuple(int(p) for p in model.body_parent),
        jtype=tuple(int(t) for t in model.jnt_type),
        qadr=tuple(int(k) for k in model.jnt_qadr),
        vadr=tuple(int(k) for k in model.jnt_vadr),
        jnv=tuple(int(k) for k in model.jnt_nv),
        nq=model.nq,
        nv=model.nv,
        nbody=model.nbody,
        directions=tuple(
            (int(k) + spec.direction.start, int(k) + spec.direction.stop)
            for k, spec in zip(model.jnt_qadr, model.jnt_spec, strict=True)
            if spec.direction is not None
        ),
        axis=tensor(model.jnt_axis),
        rot=tensor(model.jnt_rot),
        pos=tensor(model.jnt_pos),
        subspace=tensor(model.motion_subspace),
        moves=tensor(moves),
        dof_body=tuple(int(i) for i in model.dof_body),
        params=tensor(inertial_parameters(model)),
        gravity=tensor(model.gravity),
        mass=model.total_mass,
    )


# ----------------------------------------------------------------------------------------------
# spatial algebra on (..., 6) tensors [angular; linear]
# ----------------------------------------------------------------------------------------------


def _cross(x: Tensor, y: Tensor) -> Tensor:
    return torch.linalg.cross(x, y, dim=-1)


def _rotate(rot: Tensor, x: Tensor) -> Tensor:
    """(..., 3) R x for R (..., 3, 3)."""
    return (rot @ x.unsqueeze(-1)).squeeze(-1)


def _rotate_back(rot: Tensor, x: Tensor) -> Tensor:
    """(..., 3) R^T x for R (..., 3, 3)."""
    return (x.unsqueeze(-2) @ rot).squeeze(-2)


def _motion_to_child(rot: Tensor, pos: Tensor, m: Tensor) -> Tensor:
    """A parent's spatial motion m in the coordinates of a child placed at (rot, pos) in it:
    (R^T w, R^T (u + w x p))."""
    w, u = m[..., :3], m[..., 3:]
    return torch.cat([_rotate_back(rot, w), _rotate_back(rot, u + _cross(w, pos))], dim=-1)


def _motion_to_parent(rot: Tensor, pos: Tensor, m: Tensor) -> Tensor:
    """A child's spatial motion m in the coordinates of its parent: (R w, R u + p x R w)."""
    w = _rotate(rot, m[..., :3])
    return torch.cat([w, _rotate(rot, m[..., 3:]) + _cross(pos, w)], dim=-1)


def _force_to_parent(rot: Tensor, pos: Tensor, f: Tensor) -> Tensor:
    """A child's spatial force f in the coordinates of its parent: (R n + p x R f, R f)."""
    linear = _rotate(rot, f[..., 3:])
    return torch.cat([_rotate(rot, f[..., :3]) + _cross(pos, linear), linear], dim=-1)


def _cross_motion(v: Tensor, m: Tensor) -> Tensor:
    """v x m: (w x a, w x b + u x a)."""
    w, u, a, b = v[..., :3], v[..., 3:], m[..., :3], m[..., 3:]
    return torch.cat([_cross(w, a), _cross(w, b) + _cross(u, a)], dim=-1)


def _cross_force(v: Tensor, f: Tensor) -> Tensor:
    """v x* f: (w x n + u x f, w x f)."""
    w, u, n, g = v[..., :3], v[..., 3:], f[..., :3], f[..., 3:]
    return torch.cat([_cross(w, n) + _cross(u, g), _cross(w, g)], dim=-1)


def _skew(x: Tensor) -> Tensor:
    """(..., 3, 3) [x]_x."""
    zero = torch.zeros_like(x[..., 0])
    rows = [
        torch.stack([zero, -x[..., 2], x[..., 1]], dim=-1),
        torch.stack([x[..., 2], zero, -x[..., 0]], dim=-1),
        torch.stack([-x[..., 1], x[..., 0], zero], dim=-1),
    ]
    return torch.stack(rows, dim=-2)


def spatial_inertia(params: Tensor) -> Tensor:
    """(..., 6, 6) spatial inertias about the body origin of (..., 10) inertial parameters
    ``[m, h_x, h_y, h_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]`` (``h = m c``)."""
    mass, h = params[..., 0], params[..., 1:4]
    ixx, ixy, iyy, ixz, iyz, izz = params[..., 4:10].unbind(-1)
    rotational = torch.stack(
        [
            torch.stack([ixx, ixy, ixz], dim=-1),
            torch.stack([ixy, iyy, iyz], dim=-1),
            torch.stack([ixz, iyz, izz], dim=-1),
        ],
        dim=-2,
    )
    hx = _skew(h)
    eye = torch.eye(3, dtype=params.dtype, device=params.device)
    top = torch.cat([rotational, hx], dim=-1)
    bottom = torch.cat([hx.transpose(-1, -2), mass[..., None, None] * eye], dim=-1)
    return torch.cat([top, bottom], dim=-2)


def _motion_transform(rot: Tensor, pos: Tensor) -> Tensor:
    """(..., 6, 6) matrix X with X m = `_motion_to_parent(rot, pos, m)`."""
    zero = torch.zeros_like(rot)
    top = torch.cat([rot, zero], dim=-1)
    bottom = torch.cat([_skew(pos) @ rot, rot], dim=-1)
    return torch.cat([top, bottom], dim=-2)


# ----------------------------------------------------------------------------------------------
# joints
# ----------------------------------------------------------------------------------------------


def _axis_rotation(axis: Tensor, c: Tensor, s: Tensor) -> Tensor:
    """(B, 3, 3) rotations of cosine c and sine s (B,) about the unit axis (3,):
    c 1 + s [u]_x + (1 - c) u u^T."""
    eye = torch.eye(3, dtype=axis.dtype, device=axis.device)
    outer = axis[:, None] * axis[None, :]
    c, s = c[:, None, None], s[:, None, None]
    return c * eye + s * _skew(axis) + (1.0 - c) * outer


def _unit(x: Tensor) -> Tensor:
    """(B, n) quaternions (n = 4) or (cos θ, sin θ) pairs (n = 2) scaled to unit norm, a zero
    one taken as no rotation, as the CPU kernels read them (their derivatives finite there)."""
    square = (x * x).sum(-1, keepdim=True)
    turned = square != 0  # NaN stays NaN
    scaled = x * torch.rsqrt(torch.where(turned, square, torch.ones_like(square)))
    # no rotation: [0, 0, 0, 1] for a quaternion [x, y, z, w], (1, 0) for a pair
    one = torch.ones_like(x[:, :1])
    no_turn = F.pad(one, (3, 0)) if x.shape[-1] == 4 else F.pad(one, (0, 1))
    return torch.where(turned, scaled, no_turn)


def unit_rotations(t: Tree, q: Tensor) -> Tensor:
    """(B, nq) `q` with each quaternion and (cos θ, sin θ) pair scaled to unit norm
    (`_unit`): the rotations the kernels read from q of any norm."""
    pieces, start = [], 0
    for first, stop in t.directions:
        pieces += [q[:, start:first], _unit(q[:, first:stop])]
        start = stop
    return torch.cat([*pieces, q[:, start:]], dim=-1) if pieces else q


def _quaternion_rotation(quat: Tensor) -> Tensor:
    """(B, 3, 3) rotations of the unit quaternions (B, 4) [x, y, z, w]."""
    x, y, z, w = quat.unbind(-1)
    rows = [
        torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        torch.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        torch.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
    ]
    return torch.stack(rows, dim=-2)


def joint_placements(t: Tree, q: Tensor) -> list[tuple[Tensor, Tensor]]:
    """Each body's placement (R (B, 3, 3), p (B, 3)) in its parent at q (B, nq):
    R = R0 R_j(q), p = p0 + R0 p_j(q), quaternions and (cos θ, sin θ) pairs of any norm
    (`unit_rotations`)."""
    q = unit_rotations(t, q)
    placements = []
    for i in range(t.nbody):
        k, jtype = t.qadr[i], t.jtype[i]
        if jtype == JointType.REVOLUTE:
            motion = _axis_rotation(t.axis[i], torch.cos(q[:, k]), torch.sin(q[:, k]))
            shift = None
        elif jtype == JointType.CONTINUOUS:
            motion, shift = _axis_rotation(t.axis[i], q[:, k], q[:, k + 1]), None
        elif jtype == JointType.PRISMATIC:
            motion, shift = None, q[:, k, None] * t.axis[i]
        elif jtype == JointType.SPHERICAL:
            motion, shift = _quaternion_rotation(q[:, k : k + 4]), None
        else:
            motion, shift = _quaternion_rotation(q[:, k + 3 : k + 7]), q[:, k : k + 3]
        rot = t.rot[i].expand(q.shape[0], 3, 3) if motion is None else t.rot[i] @ motion
        pos = t.pos[i].expand(q.shape[0], 3)
        if shift is not None:
            pos = pos + _rotate(t.rot[i], shift)
        placements.append((rot, pos))
    return placements


def _joint_motion(t: Tree, i: int, x: Tensor) -> Tensor:
    """(B, 6) S_i x_i: the spatial motion of body i's velocity coordinates in x (B, nv)."""
    start = t.vadr[i]
    return x[:, start : start + t.jnv[i]] @ t.subspace[start : start + t.jnv[i]]


def _joint_forces(t: Tree, i: int, f: Tensor) -> Tensor:
    """(..., nv_i) S_i^T f: the joint forces of body i's spatial forces f (..., 6)."""
    start = t.vadr[i]
    return f @ t.subspace[start : start + t.jnv[i]].T


def _joint_terms(t: Tree, params: Tensor, v: Tensor, a: Tensor) -> Tensor:
    """(B, nv) armature, viscous and Coulomb friction forces: armature a + damping v +
    friction sign(v)."""
    dofs = params[:, 10 * t.nbody :]
    armature, damping, friction = dofs[:, : t.nv], dofs[:, t.nv : 2 * t.nv], dofs[:, 2 * t.nv :]
    return armature * a + damping * v + friction * torch.sign(v)


def _body_inertias(t: Tree, params: Tensor) -> Tensor:
    """(B or 1, nbody, 6, 6) spatial inertias of the bodies in their own coordinates."""
    return spatial_inertia(params[:, : 10 * t.nbody].reshape(params.shape[0], t.nbody, 10))


# ----------------------------------------------------------------------------------------------
# algorithms
# ----------------------------------------------------------------------------------------------


def _velocities_and_accelerations(
    t: Tree, placements: list[tuple[Tensor, Tensor]], v: Tensor, a: Tensor, *, gravity: bool = True
) -> tuple[list[Tensor], list[Tensor]]:
    """Each body's spatial velocity and acceleration (B, 6) in its own coordinates, the
    acceleration against gravity (the world accelerates upwards) unless `gravity` is False."""
    batch = v.shape[0]
    lifted = -t.gravity if gravity else torch.zeros_like(t.gravity)
    world_acc = torch.cat([torch.zeros_like(t.gravity), lifted]).expand(batch, 6)
    velocities: list[Tensor] = []
    accelerations: list[Tensor] = []
    for i, (rot, pos) in enumerate(placements):
        parent = t.parent[i]
        # v_i = X v_parent + S qd ;  a_i = X a_parent + S qdd + v_i x S qd
        joint_velocity = _joint_motion(t, i, v)
        if parent < 0:
            vel = joint_velocity
            acc = _motion_to_child(rot, pos, world_acc)
        else:
            vel = _motion_to_child(rot, pos, velocities[parent]) + joint_velocity
            acc = _motion_to_child(rot, pos, accelerations[parent])
        acc = acc + _joint_motion(t, i, a) + _cross_motion(vel, joint_velocity)
        velocities.append(vel)
        accelerations.append(acc)
    return velocities, accelerations


def rnea(t: Tree, q: Tensor, v: Tensor, a: Tensor, f_ext: Tensor | None, params: Tensor) -> Tensor:
    """(B, nv) joint forces by the recursive Newton-Euler algorithm (Featherstone 2008, 5.1).

    Args:
      t: the model.
      q: (B, nq) joint positions.
      v: (B, nv) joint velocities.
      a: (B, nv) joint accelerations.
      f_ext: (B or 1, nbody, 6) external forces in body coordinates, or None.
      params: (B or 1, 10 nbody + 3 nv) dynamic parameters.
    """
    placements = joint_placements(t, q)
    velocities, accelerations = _velocities_and_accelerations(t, placements, v, a)
    inertias = _body_inertias(t, params)
    # forward: f_i = I a_i + v_i x* I v_i - f_ext_i
    forces = []
    for i in range(t.nbody):
        inertia = inertias[:, i]
        vel, acc = velocities[i], accelerations[i]
        force = _rotate(inertia, acc) + _cross_force(vel, _rotate(inertia, vel))
        forces.append(force if f_ext is None else force - f_ext[:, i])
    # backward: tau_i = S^T f_i, then pass f_i to the parent
    backwards = []
    for i in range(t.nbody - 1, -1, -1):
        backwards.append(_joint_forces(t, i, forces[i]))
        parent = t.parent[i]
        if parent >= 0:
            forces[parent] = forces[parent] + _force_to_parent(*placements[i], forces[i])
    tau = torch.cat(backwards[::-1], dim=-1) if t.nbody else v[:, :0]
    return tau + _joint_terms(t, params, v, a)


def forward_kinematics(t: Tree, q: Tensor, *, from_roots: bool = False) -> tuple[Tensor, Tensor]:
    """World placements of every body: (B, nbody, 3, 3) rotations and (B, nbody, 3) origins.

    With `from_roots`, each tree's placements are taken in the frame of its root body instead:
    what does not depend on where a tree is (the mass and Coriolis matrices) then does not
    read its root joint, as the CPU kernels do not (their recursion, their Coriolis matrix's
    frame), so that neither the rounding of the root's placement nor its derivatives enter.
    """
    return _chain(t, joint_placements(t, q), q, from_roots=from_roots)


def _chain(
    t: Tree, placements: list[tuple[Tensor, Tensor]], q: Tensor, *, from_roots: bool = False
) -> tuple[Tensor, Tensor]:
    """`forward_kinematics` from the bodies' `joint_placements` at q."""
    rotations: list[Tensor] = []
    origins: list[Tensor] = []
    for i, (rot, pos) in enumerate(placements):
        parent = t.parent[i]
        if parent < 0 and from_roots:
            rotations.append(torch.eye(3, dtype=q.dtype, device=q.device).expand_as(rot))
            origins.append(torch.zeros_like(pos))
        elif parent < 0:
            rotations.append(rot)
            origins.append(pos)
        else:
            rotations.append(rotations[parent] @ rot)
            origins.append(origins[parent] + _rotate(rotations[parent], pos))
    if not rotations:
        return q.new_zeros((q.shape[0], 0, 3, 3)), q.new_zeros((q.shape[0], 0, 3))
    return torch.stack(rotations, dim=1), torch.stack(origins, dim=1)


def world_columns(t: Tree, rotations: Tensor, origins: Tensor) -> Tensor:
    """(B, nv, 6) each dof's motion (its column of S) in world coordinates, about the world
    origin, from the world placements of `forward_kinematics`."""
    rot, pos = rotations[:, t.dof_body], origins[:, t.dof_body]
    return _motion_to_parent(rot, pos, t.subspace.expand(rot.shape[0], t.nv, 6))


def _world_inertias(t: Tree, params: Tensor, rotations: Tensor, origins: Tensor) -> Tensor:
    """(B, nbody, 6, 6) body inertias in world coordinates: X^T I X with X = X_{body <- world}."""
    # the inverse placement (R^T, -R^T p)
    to_body = _motion_transform(rotations.transpose(-1, -2), -_rotate_back(rotations, origins))
    return to_body.transpose(-1, -2) @ _body_inertias(t, params) @ to_body


def _composites(t: Tree, per_body: Tensor) -> Tensor:
    """(B, nv, 6, 6) for each dof the sum of (B, nbody, 6, 6) `per_body` over the bodies it
    moves (its body's subtree)."""
    return torch.einsum("kd,bkxy->bdxy", t.moves, per_body)


def _composite_momenta(t: Tree, inertias: Tensor, columns: Tensor) -> Tensor:
    """(B, nv, 6) for each dof the momentum of the bodies it moves (its body's subtree) at
    its unit velocity, ``Ic_k s_k``, from the (B, nbody, 6, 6) world `inertias` and the
    (B, nv, 6) world `columns`."""
    return _apply(_composites(t, inertias), columns)


def _by_depth(t: Tree, deeper_row: Tensor, deeper_column: Tensor) -> Tensor:
    """(B, nv, nv) a matrix whose entry (i, j) couples dof i and dof j through the bodies
    that both move: `deeper_row`'s where dof j moves dof i's body (an ancestor's dof or one
    of the same body), `deeper_column`'s where dof i moves dof j's, zero between branches."""
    below = t.moves[list(t.dof_body)].bool()
    zero = deeper_row.new_zeros(())
    return torch.where(below, deeper_row, torch.where(below.T, deeper_column, zero))


def mass_matrix(t: Tree, q: Tensor, params: Tensor) -> Tensor:
    """(B, nv, nv) joint-space inertia matrix, as the composite rigid-body algorithm forms it
    in world coordinates: ``M_ij = s_i^T Ic_i s_j`` where dof j moves dof i's body (i's
    composite inertia, of its body's subtree), its transpose where i moves j's, zero between
    branches; plus diag(armature). Memory: a few (B, nv, nv) and (B, nv, 6, 6) tensors."""
    rotations, origins = forward_kinematics(t, q, from_roots=True)
    columns = world_columns(t, rotations, origins)
    inertias = _world_inertias(t, params, rotations, origins)
    products = _composite_momenta(t, inertias, columns) @ columns.transpose(-1, -2)
    mass = _by_depth(t, products, products.transpose(-1, -2))
    armature = params[:, 10 * t.nbody : 10 * t.nbody + t.nv]
    return mass + torch.diag_embed(armature.expand(q.shape[0], t.nv))


def coriolis(t: Tree, q: Tensor, v: Tensor, params: Tensor) -> Tensor:
    """(B, nv, nv) Coriolis matrix of the Christoffel symbols of M,
    C = sum_i J_i^T (I_i J_dot_i + B(I_i, v_i) J_i) in world coordinates, with the body
    Coriolis matrix B of the CPU kernel (`invdyn.kernels.cpu.coriolis`), as composites: the
    bodies that both dof i and dof j move are the subtree of the deeper one's body, d, along
    which J_i and J_j are the columns s_i, s_j, so ``C_ij = s_i^T (Ic_d s_dot_j + Bc_d s_j)``
    with the sums Ic, Bc of I and B over that subtree (`mass_matrix`'s form)."""
    rotations, origins = forward_kinematics(t, q, from_roots=True)
    columns = world_columns(t, rotations, origins)
    inertias = _world_inertias(t, params, rotations, origins)
    # body velocities in world coordinates: v_i = J_i v
    body_velocity = torch.einsum("bdx,kd,bd->bkx", columns, t.moves, v)
    # d/dt of a world column: the velocity of its own body crossed with it
    column_rates = _cross_motion(body_velocity[:, t.dof_body], columns)
    composite_inertias = _composites(t, inertias)
    composite_terms = _composites(t, _body_coriolis(inertias, body_velocity))
    # i the deeper: s_i^T Ic_i s_dot_j + s_i^T Bc_i s_j, row by row
    momenta = _apply(composite_inertias, columns)
    pulled = _apply(composite_terms.transpose(-1, -2), columns)
    deeper_i = momenta @ column_rates.transpose(-1, -2) + pulled @ columns.transpose(-1, -2)
    # j the deeper: s_i^T (Ic_j s_dot_j + Bc_j s_j), column by column
    forces = _apply(composite_inertias, column_rates) + _apply(composite_terms, columns)
    deeper_j = columns @ forces.transpose(-1, -2)
    return _by_depth(t, deeper_i, deeper_j)


def _apply(matrices: Tensor, vectors: Tensor) -> Tensor:
    """(..., n) the (..., n, m) `matrices` times the (..., m) `vectors`."""
    return (matrices @ vectors[..., None]).squeeze(-1)


def _body_coriolis(inertias: Tensor, velocities: Tensor) -> Tensor:
    """(..., 6, 6) the body Coriolis matrices B(I, v) of (..., 6, 6) world `inertias` and
    (..., 6) `velocities`: ``B s = (v x* (I s) - I (v x s) + s x* (I v)) / 2``."""
    crossed = _motion_cross_matrix(velocities)
    momentum = _apply(inertias, velocities)
    # s x* h = -[[n^, f^], [f^, 0]] s for the force h = (n, f)
    n, f = _skew(momentum[..., :3]), _skew(momentum[..., 3:])
    by_momentum = -torch.cat(
        [torch.cat([n, f], dim=-1), torch.cat([f, torch.zeros_like(f)], dim=-1)], dim=-2
    )
    return 0.5 * (-crossed.transpose(-1, -2) @ inertias - inertias @ crossed + by_momentum)


def _motion_cross_matrix(velocities: Tensor) -> Tensor:
    """(..., 6, 6) the matrix [[w^, 0], [u^, w^]] of ``v x`` for (..., 6) motions v = (w, u)."""
    angular, linear = _skew(velocities[..., :3]), _skew(velocities[..., 3:])
    top = torch.cat([angular, torch.zeros_like(angular)], dim=-1)
    return torch.cat([top, torch.cat([linear, angular], dim=-1)], dim=-2)


def regressor(t: Tree, q: Tensor, v: Tensor, a: Tensor) -> Tensor:
    """(B, nv, 10 nbody + 3 nv) joint-torque regressor Y with rnea = Y params.

    Y = [S_j^T X_ji^* Y_i(v_i, a_i)]_{j, i} for every body i and ancestor j (Atkeson, An and
    Hollerbach 1986), then the columns a, v and sign(v) of armature, viscous and Coulomb
    friction.
    """
    placements = joint_placements(t, q)
    velocities, accelerations = _velocities_and_accelerations(t, placements, v, a)
    units = spatial_inertia(torch.eye(10, dtype=q.dtype, device=q.device))
    by_dof = sorted(range(t.nbody), key=lambda k: t.vadr[k])
    columns = []
    for i in range(t.nbody):
        # body i's forces of each unit parameter: I_k a_i + v_i x* I_k v_i, (B, 10, 6)
        vel, acc = velocities[i], accelerations[i]
        forces = torch.einsum("kxy,by->bkx", units, acc) + _cross_force(
            vel[:, None], torch.einsum("kxy,by->bkx", units, vel)
        )
        # carried to the root, projected on every joint on the way: (B, jnv, 10) rows by joint
        rows = {}
        j = i
        while j >= 0:
            rows[j] = _joint_forces(t, j, forces).transpose(1, 2)
            if t.parent[j] >= 0:
                rot, pos = placements[j]
                forces = _force_to_parent(rot[:, None], pos[:, None], forces)
            j = t.parent[j]
        # joined without writing in place, which torch.func.vmap refuses where q is not mapped
        block = [
            rows[k] if k in rows else forces.new_zeros((forces.shape[0], t.jnv[k], 10))
            for k in by_dof
        ]
        columns.append(torch.cat(block, dim=1))
    joint = [torch.diag_embed(x) for x in (a, v, torch.sign(v))]
    return torch.cat([*columns, *joint], dim=-1)


def aba(t: Tree, q: Tensor, v: Tensor, tau: Tensor, f_ext: Tensor | None, params: Tensor) -> Tensor:
    """(B, nv) joint accelerations solving M a = tau - h(q, v, f_ext) by Cholesky, NaN in the
    rows where M is not positive definite."""
    mass = mass_matrix(t, q, params)
    bias = rnea(t, q, v, torch.zeros_like(v), f_ext, params)
    factor, info = torch.linalg.cholesky_ex(mass)
    qdd = torch.cholesky_solve((tau - bias).unsqueeze(-1), factor).squeeze(-1)
    return torch.where((info == 0)[:, None], qdd, torch.nan)


def frame_jacobian(
    t: Tree, q: Tensor, body: int, frame_rot: Tensor, frame_pos: Tensor, reference: str
) -> Tensor:
    """(B, 6, nv) Jacobian of the frame fixed to `body` at (frame_rot, frame_pos) in it.

    Args:
      t: the model.
      q: (B, nq) joint positions.
      body: the frame's body (>= 0).
      frame_rot: (3, 3) frame orientation in the body.
      frame_pos: (3,) frame origin in the body.
      reference: "local", "world" or "local_world_aligned", as `invdyn.frame_jacobian`.
    """
    rotations, origins = forward_kinematics(t, q)
    columns = world_columns(t, rotations, origins) * t.moves[body, None, :, None]
    angular, linear = columns[..., :3], columns[..., 3:]
    rot = rotations[:, body] @ frame_rot
    point = origins[:, body] + _rotate(rotations[:, body], frame_pos)
    if reference != "world":
        # the velocity of the point at the frame's origin rather than at the world's
        linear = linear + _cross(angular, point[:, None, :])
    if reference == "local":
        angular = _rotate_back(rot[:, None], angular)
        linear = _rotate_back(rot[:, None], linear)
    return torch.cat([angular, linear], dim=-1).transpose(-1, -2)


def frame_motion(
    t: Tree,
    q: Tensor,
    v: Tensor,
    a: Tensor,
    body: int,
    frame_rot: Tensor,
    frame_pos: Tensor,
    reference: str,
) -> Tensor:
    """(B, 12) spatial velocity and classical acceleration (no gravity), [angular; linear]
    each, of the frame fixed to `body` (>= 0) at (frame_rot, frame_pos) in it, in the
    coordinates `reference` as `invdyn.frame_velocity` takes them (as
    `invdyn.kernels.cpu.frame_motion`).

    Args:
      t: the model.
      q: (B, nq) joint positions.
      v: (B, nv) joint velocities.
      a: (B, nv) joint accelerations.
      body: the frame's body.
      frame_rot: (3, 3) frame orientation in the body.
      frame_pos: (3,) frame origin in the body.
      reference: "local", "world" or "local_world_aligned".
    """
    placements = joint_placements(t, q)
    velocities, accelerations = _velocities_and_accelerations(t, placements, v, a, gravity=False)
    omega, u = velocities[body][:, :3], velocities[body][:, 3:]
    alpha, w = accelerations[body][:, :3], accelerations[body][:, 3:]
    # at the frame's origin p: velocity u + omega x p, classical acceleration
    # w + alpha x p + omega x (velocity)
    point = frame_pos.expand_as(omega)
    linear = u + _cross(omega, point)
    classical = w + _cross(alpha, point) + _cross(omega, linear)
    vectors = torch.stack([omega, linear, alpha, classical], dim=1)
    if reference == "local":
        return _rotate_back(frame_rot, vectors).flatten(1)
    rotations, origins = _chain(t, placements[: body + 1], q)
    omega, linear, alpha, classical = _rotate(rotations[:, body, None], vectors).unbind(1)
    if reference == "world":
        # from the frame's origin x to the world's: velocity + x x omega, acceleration
        # + x x alpha + omega x (x x omega), the change of the velocity term as the point moves
        x = origins[:, body] + _rotate(rotations[:, body], frame_pos)
        moved = _cross(x, omega)
        linear, classical = linear + moved, classical + _cross(x, alpha) + _cross(omega, moved)
    return torch.cat([omega, linear, alpha, classical], dim=-1)


def _mass_and_center(t: Tree, rotations: Tensor, origins: Tensor) -> tuple[Tensor, Tensor]:
    """The robot's mass () and world centre of mass (B, 3), ``sum_i (m_i p_i + R_i h_i) / m``
    over the world placements of `forward_kinematics`, h_i the first mass moment."""
    bodies = t.params[: 10 * t.nbody].reshape(t.nbody, 10)
    mass, moment = bodies[:, 0], bodies[:, 1:4]
    total = mass.sum()
    return total, (mass[:, None] * origins + _rotate(rotations, moment)).sum(1) / total


def center_of_mass(t: Tree, q: Tensor) -> Tensor:
    """(B, 3) world centre of mass at q (B, nq)."""
    return _mass_and_center(t, *forward_kinematics(t, q))[1]


def centroidal_matrix(t: Tree, q: Tensor, rows: int) -> Tensor:
    """(B, 6, nv) centroidal momentum matrix A_G at q (B, nq), [angular; linear] about the
    centre of mass in world axes; with 3 `rows`, its linear rows over the mass, the Jacobian
    of the centre of mass. Column k: the momentum of the bodies that dof k moves, at the
    dof's unit velocity."""
    rotations, origins = forward_kinematics(t, q)
    columns = world_columns(t, rotations, origins)
    inertias = _world_inertias(t, t.params[None], rotations, origins)
    momentum = _composite_momenta(t, inertias, columns)
    mass, center = _mass_and_center(t, rotations, origins)
    if rows == 3:
        return momentum[..., 3:].transpose(-1, -2) / mass
    return _about_point(momentum, center[:, None]).transpose(-1, -2)


def centroidal_rate(t: Tree, q: Tensor, v: Tensor, a: Tensor) -> Tensor:
    """(B, 6) rate of the centroidal momentum ``A_G a + A_G_dot v``, [angular; linear]: the
    sum of the bodies' net forces ``I_i a_i + v_i x* I_i v_i`` (no gravity) in world
    coordinates, taken about the centre of mass."""
    placements = joint_placements(t, q)
    velocities, accelerations = _velocities_and_accelerations(t, placements, v, a, gravity=False)
    velocity, acceleration = torch.stack(velocities, dim=1), torch.stack(accelerations, dim=1)
    inertias = _body_inertias(t, t.params[None])
    momentum = _rotate(inertias, velocity)
    forces = _rotate(inertias, acceleration) + _cross_force(velocity, momentum)
    rotations, origins = _chain(t, placements, q)
    rate = _force_to_parent(rotations, origins, forces).sum(1)
    return _about_point(rate, _mass_and_center(t, rotations, origins)[1])


def _about_point(f: Tensor, point: Tensor) -> Tensor:
    """Spatial forces f (..., 6) at the world origin taken about `point` (..., 3):
    ``(n - point x f, f)``."""
    return torch.cat([f[..., :3] - _cross(point, f[..., 3:]), f[..., 3:]], dim=-1)


def tangent_map(t: Tree, q: Tensor) -> Tensor:
    """(B, nq, nv) dq/de: how q moves along each velocity coordinate, q (+) e at e = 0 (as
    `invdyn.configuration.integrate` moves it: ball and free joints in their body frame)."""
    columns = q.new_zeros((q.shape[0], t.nq, t.nv))
    for i in range(t.nbody):
        k, d, jtype = t.qadr[i], t.vadr[i], t.jtype[i]
        if jtype in (JointType.REVOLUTE, JointType.PRISMATIC):
            columns[:, k, d] = 1.0
        elif jtype == JointType.CONTINUOUS:
            # (cos, sin) turns by e: (-sin, cos)
            columns[:, k, d], columns[:, k + 1, d] = -q[:, k + 1], q[:, k]
        else:
            # a quaternion q turned by e in its own frame: q (x) (e / 2, 1)
            quat = q[:, k : k + 4] if jtype == JointType.SPHERICAL else q[:, k + 3 : k + 7]
            rows = k if jtype == JointType.SPHERICAL else k + 3
            turns = d if jtype == JointType.SPHERICAL else d + 3
            vector, scalar = quat[:, :3], quat[:, 3]
            eye = torch.eye(3, dtype=q.dtype, device=q.device)
            columns[:, rows : rows + 3, turns : turns + 3] = 0.5 * (
                scalar[:, None, None] * eye + _skew(vector)
            )
            columns[:, rows + 3, turns : turns + 3] = -0.5 * vector
            if jtype == JointType.FREE:
                # the position moves along the body's axes
                columns[:, k : k + 3, d : d + 3] = _quaternion_rotation(_unit(quat))
    return columns


def rnea_derivatives(
    t: Tree, q: Tensor, v: Tensor, a: Tensor, f_ext: Tensor | None, params: Tensor
) -> Tensor:
    """(B, 3, nv, nv) d tau / dq (tangent space, `tangent_map`), d tau / dv and d tau / da of
    rnea, by forward-mode automatic differentiation along every coordinate at once."""
    # forward mode writes tangents into its primals: a broadcast view (stride 0) cannot take them
    q, v = q.contiguous(), v.contiguous()

    def along(dq: Tensor, dv: Tensor) -> Tensor:
        return torch.func.jvp(lambda q_, v_: rnea(t, q_, v_, a, f_ext, params), (q, v), (dq, dv))[1]

    # tangents (nv, B, n): direction k moves q along its tangent column, or v along e_k
    dq = tangent_map(t, q).permute(2, 0, 1)
    eye = torch.eye(t.nv, dtype=v.dtype, device=v.device)[:, None, :].expand(t.nv, *v.shape)
    derivative = torch.func.vmap(along, in_dims=(0, 0))
    by_q = derivative(dq, torch.zeros_like(eye))
    by_v = derivative(torch.zeros_like(dq), eye)
    mass = mass_matrix(t, q, params)
    return torch.stack([by_q.permute(1, 2, 0), by_v.permute(1, 2, 0), mass], dim=1)


def aba_derivatives(
    t: Tree, q: Tensor, v: Tensor, tau: Tensor, f_ext: Tensor | None, params: Tensor
) -> Tensor:
    """(B, 3, nv, nv) d a / dq, d a / dv and d a / d tau = M^-1 of aba: ``-M^-1 d rnea / dx``
    at ``a = aba(q, v, tau)``; NaN where M is not positive definite."""
    qdd = aba(t, q, v, tau, f_ext, params)
    derivatives = rnea_derivatives(t, q, v, qdd, f_ext, params)
    factor, info = torch.linalg.cholesky_ex(derivatives[:, 2])
    factored = (info == 0)[:, None, None]
    # a failed factor (a zero pivot) is inverted as the identity; cholesky_solve, not
    # cholesky_inverse, whose forward-mode derivative (torch.func.jacfwd) is wrong
    identity = torch.eye(t.nv, dtype=factor.dtype, device=factor.device)
    inverse = torch.cholesky_solve(
        identity.expand_as(factor), torch.where(factored, factor, identity)
    )
    out = torch.stack([-inverse @ derivatives[:, 0], -inverse @ derivatives[:, 1], inverse], 1)
    return torch.where(factored[:, None], out, torch.nan)
